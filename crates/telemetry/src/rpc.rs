//! gRPC request metrics and the per-request deadline, as one tower layer around every
//! service of a tonic server, and the signal that starts a graceful shutdown.
//!
//! The deadline lives here rather than in tonic's own timeout so an expired request is
//! answered `DEADLINE_EXCEEDED` and still counted: tonic's timeout sits outside the
//! user layers and would drop this layer's future before it could record anything.
//! For a server stream the deadline bounds the call up to the response headers; the
//! stream itself lives as long as the client keeps it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::http;
use tower::{Layer, Service};

/// Labels of the request metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RpcLabels {
    /// `/package.Service/Method`.
    pub method: String,
    /// The gRPC status code name, e.g. `OK`, `INVALID_ARGUMENT`.
    pub code: String,
}

/// A service's request metrics: counts and latency by method and status code.
#[derive(Debug)]
pub struct RpcMetrics {
    requests: Family<RpcLabels, Counter>,
    latency: Family<RpcLabels, Histogram>,
    registry: Registry,
}

impl RpcMetrics {
    /// Registers the metrics under `prefix` (e.g. `topograph_gateway`).
    pub fn new(prefix: &str) -> Self {
        let requests = Family::<RpcLabels, Counter>::default();
        // 100 µs to about 13 s.
        let latency = Family::<RpcLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
                0.0001, 2.0, 18,
            ))
        });
        let mut registry = Registry::with_prefix(prefix);
        registry.register(
            "grpc_requests",
            "gRPC requests by method and status code",
            requests.clone(),
        );
        registry.register(
            "grpc_request_duration_seconds",
            "gRPC request latency by method and status code",
            latency.clone(),
        );
        RpcMetrics {
            requests,
            latency,
            registry,
        }
    }

    /// Counts one request.
    pub fn observe(&self, method: &str, code: tonic::Code, elapsed: Duration) {
        let labels = RpcLabels {
            method: method.to_string(),
            code: code_name(code).to_string(),
        };
        self.requests.get_or_create(&labels).inc();
        self.latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// The registry, to add a service's own metrics next to the request metrics.
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// The Prometheus text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!(error = %e, "encoding metrics");
        }
        out
    }
}

/// The canonical upper-case name of a gRPC code.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Parses a `grpc-timeout` header value (digits and a unit letter).
pub fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// Observes every request and enforces its deadline: the caller's `grpc-timeout`,
/// capped by the server's own limit.
#[derive(Clone, Debug)]
pub struct RpcLayer {
    metrics: Arc<RpcMetrics>,
    max_duration: Duration,
}

impl RpcLayer {
    /// The layer.
    pub fn new(metrics: Arc<RpcMetrics>, max_duration: Duration) -> Self {
        RpcLayer {
            metrics,
            max_duration,
        }
    }
}

impl<S> Layer<S> for RpcLayer {
    type Service = RpcService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RpcService {
            inner,
            metrics: self.metrics.clone(),
            max_duration: self.max_duration,
        }
    }
}

/// See [`RpcLayer`].
#[derive(Clone, Debug)]
pub struct RpcService<S> {
    inner: S,
    metrics: Arc<RpcMetrics>,
    max_duration: Duration,
}

/// The status code of a response: trailers-only answers carry it in the headers; a
/// response that streams a body reports it in the trailers, which for unary methods
/// only happens on success (a stream counts as OK once it started).
fn response_code(response: &http::Response<Body>) -> tonic::Code {
    response
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok())
        .map_or(tonic::Code::Ok, tonic::Code::from_i32)
}

impl<S> Service<http::Request<Body>> for RpcService<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<tower::BoxError>,
{
    type Response = http::Response<Body>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Readiness errors (none from load shedding, which fails in `call`) surface
        // from `call` below, where they become a status.
        match self.inner.poll_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(_) => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The instance that was made ready serves this call; a fresh clone waits for
        // the next one.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let metrics = self.metrics.clone();
        let method = request.uri().path().to_string();
        let deadline = request
            .headers()
            .get("grpc-timeout")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_grpc_timeout)
            .map_or(self.max_duration, |d| d.min(self.max_duration));
        Box::pin(async move {
            let start = Instant::now();
            let response = match tokio::time::timeout(deadline, inner.call(request)).await {
                Ok(Ok(response)) => response,
                Ok(Err(e)) => {
                    let e: tower::BoxError = e.into();
                    let status = if e.is::<tower::load_shed::error::Overloaded>() {
                        Status::resource_exhausted("the server is overloaded; retry later")
                    } else {
                        Status::unavailable(format!("the request could not be served: {e}"))
                    };
                    status.into_http()
                }
                Err(_) => Status::deadline_exceeded(format!(
                    "the request took longer than its deadline of {deadline:?}"
                ))
                .into_http(),
            };
            metrics.observe(&method, response_code(&response), start.elapsed());
            Ok(response)
        })
    }
}

/// Resolves when SIGTERM or SIGINT arrives.
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = interrupt => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; only SIGINT stops the server");
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse() {
        assert_eq!(parse_grpc_timeout("100m"), Some(Duration::from_millis(100)));
        assert_eq!(parse_grpc_timeout("1S"), Some(Duration::from_secs(1)));
        assert_eq!(parse_grpc_timeout("5u"), Some(Duration::from_micros(5)));
        assert_eq!(parse_grpc_timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_grpc_timeout("m"), None);
        assert_eq!(parse_grpc_timeout("10x"), None);
        assert_eq!(parse_grpc_timeout("123456789m"), None);
    }

    #[test]
    fn observations_appear_under_the_prefix() {
        let metrics = RpcMetrics::new("topograph_test");
        metrics.observe(
            "/a.B/C",
            tonic::Code::PermissionDenied,
            Duration::from_millis(2),
        );
        let text = metrics.encode();
        assert!(
            text.contains(
                "topograph_test_grpc_requests_total{method=\"/a.B/C\",code=\"PERMISSION_DENIED\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("topograph_test_grpc_request_duration_seconds_bucket"),
            "{text}"
        );
    }
}
