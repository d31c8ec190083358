//! A minimal HTTPS server for extensions written here (the example extension, tests):
//! TLS with rustls, HTTP/1.1 with hyper, each request handed to a [`Handler`] as its
//! path and body. A handler's panic or a broken connection ends that connection only.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// The largest request body read (Cluster API's requests are a Cluster's templates).
pub const MAX_BODY: usize = 32 * 1024 * 1024;

/// An answer: status code and JSON body.
pub type Answer = (u16, Vec<u8>);

/// What answers requests.
pub trait Handler: Send + Sync + 'static {
    /// Answers a POST to `path` with `body`.
    fn handle(&self, path: String, body: Bytes) -> Pin<Box<dyn Future<Output = Answer> + Send>>;
}

/// Serves HTTPS on `listener` until the task is dropped or aborted.
pub async fn serve(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    handler: Arc<dyn Handler>,
) {
    let acceptor = TlsAcceptor::from(tls);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let handler = handler.clone();
        tokio::spawn(async move {
            // A client that fails the handshake (it does not trust us) is its problem.
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let handler = handler.clone();
                async move {
                    let path = request.uri().path().to_string();
                    let answer = match Limited::new(request.into_body(), MAX_BODY).collect().await {
                        Ok(body) => handler.handle(path, body.to_bytes()).await,
                        Err(e) => (
                            400,
                            format!("failed to read request body: {e}").into_bytes(),
                        ),
                    };
                    let response = hyper::Response::builder()
                        .status(answer.0)
                        .header(http::header::CONTENT_TYPE, "application/json")
                        .body(Full::new(Bytes::from(answer.1)));
                    Ok::<_, http::Error>(response.unwrap_or_else(|_| {
                        hyper::Response::new(Full::new(Bytes::from_static(b"")))
                    }))
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
