//! What every topograph service shares for being watched.
//!
//! [`serve_metrics`] answers Prometheus scrapes: `GET /metrics` with the text a callback
//! encodes, anything else 404. A minimal HTTP/1.1 responder is enough for a scrape
//! endpoint and keeps an HTTP server framework out of the services that need none.
//! [`rpc`] holds the gRPC request metrics, per-request deadlines and the shutdown
//! signal that the gRPC services share. [`trace`] sets up logging and OpenTelemetry
//! tracing for every binary and carries W3C trace context over gRPC and queue jobs.
//! [`runner`] is the frame of every service's `main`: runtime, tracing, exit code.

pub mod rpc;
pub mod runner;
pub mod trace;

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Encodes the current metrics in the OpenMetrics text format.
pub type Encode = Arc<dyn Fn() -> String + Send + Sync>;

/// Serves `GET /metrics` until the task is dropped.
pub async fn serve_metrics(listener: TcpListener, encode: Encode) {
    loop {
        let (mut stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let encode = encode.clone();
        tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            // Read the request head only; scrapes carry no body. Bounded so a client
            // cannot make the server buffer without end.
            while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
                match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
                    Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return,
                    Ok(Ok(n)) => request.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&request);
            let line = head.lines().next().unwrap_or_default();
            let (status, content_type, body) = if line.starts_with("GET /metrics ") {
                (
                    "200 OK",
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    encode(),
                )
            } else {
                ("404 Not Found", "text/plain", "not found\n".to_string())
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}
