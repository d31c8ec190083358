//! Logging and OpenTelemetry tracing for every topograph binary, and the W3C trace
//! context that ties one Apply to the reconcile, render and writes it causes.
//!
//! [`init`] installs one `tracing` subscriber: the fmt layer on stderr (filtered by
//! `RUST_LOG`, `info` by default) and, only when an OTLP endpoint is configured, a
//! `tracing-opentelemetry` layer exporting spans over OTLP/gRPC in batches. The
//! standard variables configure it, read by the OpenTelemetry SDK itself:
//!
//! * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: export on
//!   (unset: off, and nothing but the fmt layer costs anything);
//! * `OTEL_SDK_DISABLED=true`: off whatever else is set;
//! * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`: the resource (the service name
//!   defaults to the binary's);
//! * `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`: sampling (default: parent based,
//!   always on);
//! * `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`, ...: the batch processor;
//!   `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_EXPORTER_OTLP_HEADERS`: the exporter.
//!
//! Spans leave in batches; [`Tracing::shutdown`] (or dropping the guard) flushes what is
//! left, so the SIGTERM path loses nothing.
//!
//! Propagation is W3C Trace Context (`traceparent`, `tracestate`) always, whatever
//! `OTEL_PROPAGATORS` says: it is what every hop of the fleet speaks. gRPC carries it in
//! metadata ([`inject_metadata`] on the client, [`server_span`] on the server); queue
//! jobs carry it as one string ([`current_context`], [`set_parent`]). With export off
//! the current span has no OpenTelemetry context, so nothing is injected and requests
//! and jobs carry nothing extra.

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tonic::codegen::http;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Longest the final flush may take: a collector that is away must not hold up a
/// shutdown past the orchestrator's grace period.
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(5);

/// Whether the environment asks for OTLP export.
fn export_configured() -> bool {
    export_configured_in(|name| std::env::var(name).ok())
}

fn export_configured_in(var: impl Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| var(name).is_some_and(|v| !v.trim().is_empty());
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

/// The installed tracing set-up: flushes and stops the span exporter when shut down or
/// dropped.
#[derive(Debug, Default)]
#[must_use = "dropping the guard stops span export"]
pub struct Tracing {
    provider: Option<SdkTracerProvider>,
}

impl Tracing {
    /// Exports the spans still buffered and stops the exporter. Call it while the tokio
    /// runtime [`init`] ran in is still alive (the exporter's connection lives there),
    /// and outside its worker threads' async code: it blocks.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(e) = provider.shutdown_with_timeout(SHUTDOWN_FLUSH)
        {
            eprintln!("tracing: flushing spans at shutdown: {e}");
        }
    }
}

impl Drop for Tracing {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Installs the global subscriber for a binary whose service name defaults to
/// `service` (see the module docs). With OTLP export configured it must run inside a
/// tokio runtime (the exporter's gRPC channel is driven there); without one, or when
/// the exporter cannot be built, the process logs why and runs without export.
///
/// Calling it twice keeps the first subscriber (the second returns an idle guard).
pub fn init(service: &str) -> Tracing {
    init_with(service, "info")
}

/// [`init`] with the log's filter when `RUST_LOG` is unset (`warn` for a command a
/// person runs in a terminal, where `info` lines would bury its own output).
pub fn init_with(service: &str, default_filter: &str) -> Tracing {
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal, not in log files and collectors.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter)),
        );
    let (provider, problem) = if export_configured() {
        match provider(service) {
            Ok(provider) => (Some(provider), None),
            Err(e) => (None, Some(e)),
        }
    } else {
        (None, None)
    };
    // The exported spans are the fleet's own (`info` and above), whatever RUST_LOG asks
    // of the log; debug spans of libraries would swamp a trace.
    let otel = provider.as_ref().map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("topograph"))
            .with_tracked_inactivity(false)
            .with_filter(tracing_subscriber::filter::LevelFilter::INFO)
    });
    if tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init()
        .is_err()
    {
        // A subscriber was already installed (tests, an embedding process): keep it.
        return Tracing::default();
    }
    if let Some(problem) = problem {
        tracing::warn!(error = %problem, "OpenTelemetry export is off");
    } else if provider.is_some() {
        tracing::info!("exporting spans over OTLP");
    }
    Tracing { provider }
}

fn provider(service: &str) -> Result<SdkTracerProvider, String> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err("the exporter needs a tokio runtime (set up tracing inside one)".into());
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .build()
        .map_err(|e| format!("the OTLP exporter: {e}"))?;
    // `Resource::builder` reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; the
    // binary's name only fills in when neither names the service.
    let mut resource = Resource::builder();
    let named = Resource::builder()
        .build()
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if !named {
        resource = resource.with_service_name(service.to_string());
    }
    // The provider's default config reads OTEL_TRACES_SAMPLER(_ARG); the batch
    // processor reads OTEL_BSP_*.
    Ok(SdkTracerProvider::builder()
        .with_resource(resource.build())
        .with_batch_exporter(exporter)
        .build())
}

// ---------------------------------------------------------------------------------------
// Propagation.

struct MetadataInjector<'a>(&'a mut tonic::metadata::MetadataMap);

impl Injector for MetadataInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        // Both names and values of W3C trace context are ASCII; anything else is dropped
        // rather than failing the request.
        if let (Ok(key), Ok(value)) = (
            tonic::metadata::MetadataKey::from_bytes(key.as_bytes()),
            tonic::metadata::MetadataValue::try_from(value.as_str()),
        ) {
            self.0.insert(key, value);
        }
    }
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Puts the current span's trace context into outgoing gRPC metadata (nothing when the
/// current span is not exported).
pub fn inject_metadata(metadata: &mut tonic::metadata::MetadataMap) {
    let context = Span::current().context();
    if context.span().span_context().is_valid() {
        TraceContextPropagator::new().inject_context(&context, &mut MetadataInjector(metadata));
    }
}

/// Makes `span` a child of the trace context in `headers` (a gRPC request's), if they
/// carry a valid one.
fn set_parent_from_headers(span: &Span, headers: &http::HeaderMap) {
    if headers.contains_key("traceparent") {
        let context = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
        if context.span().span_context().is_valid() {
            // Fails only when the span is not exported; then there is nothing to link.
            let _ = span.set_parent(context);
        }
    }
}

/// The server span of a gRPC request (for tonic's `Server::trace_fn`): named after the
/// method, a child of the caller's span when the request carries a trace context.
/// `tenant`, `management_cluster` and `object` are left for handlers to record.
pub fn server_span(request: &http::Request<()>) -> Span {
    let method = request.uri().path();
    let span = tracing::info_span!(
        "rpc",
        otel.name = method.trim_start_matches('/'),
        otel.kind = "server",
        rpc.system = "grpc",
        method = %method,
        tenant = tracing::field::Empty,
        management_cluster = tracing::field::Empty,
        object = tracing::field::Empty,
    );
    set_parent_from_headers(&span, request.headers());
    span
}

/// The current span's trace context as one string, for a queue job: the `traceparent`
/// value, then a newline and the `tracestate` value when there is one. `None` when the
/// current span is not exported.
pub fn current_context() -> Option<String> {
    let context = Span::current().context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    let parent = carrier.remove("traceparent")?;
    Some(match carrier.remove("tracestate") {
        Some(state) if !state.is_empty() => format!("{parent}\n{state}"),
        _ => parent,
    })
}

/// Makes `span` a child of a context string from [`current_context`]. A malformed string
/// (the queue is shared; anyone can write to it) is ignored: the span stays a root.
pub fn set_parent(span: &Span, context: &str) {
    let (parent, state) = context.split_once('\n').unwrap_or((context, ""));
    let mut carrier = HashMap::new();
    carrier.insert("traceparent".to_string(), parent.trim().to_string());
    if !state.is_empty() {
        carrier.insert("tracestate".to_string(), state.trim().to_string());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    if context.span().span_context().is_valid() {
        let _ = span.set_parent(context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_needs_an_endpoint_and_no_disable() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(!export_configured_in(env(&[])));
        assert!(!export_configured_in(env(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            " "
        )])));
        assert!(export_configured_in(env(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:4317"
        )])));
        assert!(export_configured_in(env(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://127.0.0.1:4317"
        )])));
        assert!(!export_configured_in(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_SDK_DISABLED", "TRUE"),
        ])));
        assert!(export_configured_in(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_SDK_DISABLED", "false"),
        ])));
    }

    #[test]
    fn contexts_round_trip_through_strings_and_metadata() {
        let provider = SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::with_default(subscriber, || {
            let parent = tracing::info_span!("parent");
            let (text, metadata) = parent.in_scope(|| {
                let mut metadata = tonic::metadata::MetadataMap::new();
                inject_metadata(&mut metadata);
                (current_context(), metadata)
            });
            let text = text.expect("an exported span has a context");
            let parent_id = parent.context().span().span_context().span_id();
            let trace_id = parent.context().span().span_context().trace_id();
            assert!(text.starts_with("00-"), "{text}");
            assert!(text.contains(&format!("{trace_id}")), "{text}");
            assert!(metadata.get("traceparent").is_some());

            let child = tracing::info_span!("child");
            set_parent(&child, &text);
            assert_eq!(child.context().span().span_context().trace_id(), trace_id);

            let request = {
                let mut request = http::Request::new(());
                *request.headers_mut() = metadata.into_headers();
                request
            };
            let server = server_span(&request);
            assert_eq!(server.context().span().span_context().trace_id(), trace_id);
            assert_ne!(server.context().span().span_context().span_id(), parent_id);

            // Garbage leaves a root.
            let root = tracing::info_span!("root");
            set_parent(&root, "not a traceparent");
            assert_ne!(root.context().span().span_context().trace_id(), trace_id);
        });
        // Without the layer nothing is exported and nothing is injected.
        let span = tracing::info_span!("plain");
        assert_eq!(span.in_scope(current_context), None);
    }
}
