//! One trace across the fleet, end to end: an OTLP receiver (the collector's trace
//! service, served here with tonic) collects the spans of real processes (redis,
//! `topograph-kube` with simulated providers, render, applier, gateway, each exporting
//! with `OTEL_EXPORTER_OTLP_ENDPOINT` and its own `OTEL_SERVICE_NAME`). A Cluster applied
//! through the gateway must show up as one trace: the gateway's Apply, its enqueue, the
//! applier's reconcile (parented through the Redis job), the render call on both sides
//! and the writes to the management cluster, each span's parent the right one.

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use serde_json::json;
use topograph_management::{ManagementCluster, crds};
use topograph_tests::{
    TempDir, admin_tenants, apply_through_gateway, binary, free_port, gateway_command,
    management_cluster, quick_start, redis_without_persistence, small_cluster, spawn_gateway,
    spawn_logged, wait_for_port,
};

const MC: &str = "mgmt-a";
const TOKEN: &str = "token-of-ops";
const NAMESPACE: &str = "team-a";
const CLUSTER: &str = "traced";

/// One received span, flattened.
#[derive(Clone, Debug)]
struct Span {
    service: String,
    name: String,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    parent: Vec<u8>,
    attributes: HashMap<String, String>,
}

impl Span {
    fn attribute(&self, key: &str) -> &str {
        self.attributes.get(key).map_or("", String::as_str)
    }
}

/// The receiver: keeps every span exported to it.
#[derive(Clone, Default)]
struct Receiver {
    spans: Arc<Mutex<Vec<Span>>>,
}

fn text(value: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(n)) => n.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        _ => String::new(),
    }
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut received = Vec::new();
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|kv| kv.key == "service.name")
                .map(|kv| text(&kv.value))
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                for span in scope.spans {
                    received.push(Span {
                        service: service.clone(),
                        name: span.name,
                        trace_id: span.trace_id,
                        span_id: span.span_id,
                        parent: span.parent_span_id,
                        attributes: span
                            .attributes
                            .iter()
                            .map(|kv| (kv.key.clone(), text(&kv.value)))
                            .collect(),
                    });
                }
            }
        }
        self.spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(received);
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// Exports to the receiver at `otlp` as `service`, batches sent every 100 ms.
fn traced(command: &mut Command, otlp: &str, service: &str) {
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp)
        .env("OTEL_SERVICE_NAME", service)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_TRACES_SAMPLER");
}

/// What the assertions look for in the received spans, once it is all there.
struct Found {
    apply: Span,
    enqueue: Span,
    reconcile: Span,
    render_client: Span,
    render_server: Span,
    writes: Vec<Span>,
}

fn find(spans: &[Span]) -> Option<Found> {
    let apply = spans
        .iter()
        .find(|s| s.service == "tg-gateway" && s.name == "apply")?
        .clone();
    let enqueue = spans
        .iter()
        .find(|s| {
            s.service == "tg-gateway"
                && s.name == "enqueue"
                && s.attribute("key") == format!("{MC}/{NAMESPACE}/{CLUSTER}")
        })?
        .clone();
    // The reconcile the gateway's job started (watch-triggered ones start traces of
    // their own).
    let reconcile = spans
        .iter()
        .find(|s| {
            s.service == "tg-applier" && s.name == "reconcile" && s.parent == enqueue.span_id
        })?
        .clone();
    let render_client = spans
        .iter()
        .find(|s| s.service == "tg-applier" && s.name == "render" && s.parent == reconcile.span_id)?
        .clone();
    let render_server = spans
        .iter()
        .find(|s| s.service == "tg-render" && s.parent == render_client.span_id)?
        .clone();
    let writes: Vec<Span> = spans
        .iter()
        .filter(|s| s.service == "tg-applier" && s.name == "write" && s.parent == reconcile.span_id)
        .cloned()
        .collect();
    // The first reconcile creates the MachineDeployment last (a server-side apply).
    writes
        .iter()
        .any(|w| w.attribute("kind") == "MachineDeployment" && w.attribute("verb") == "apply")
        .then_some(Found {
            apply,
            enqueue,
            reconcile,
            render_client,
            render_server,
            writes,
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_from_apply_to_the_management_cluster() {
    let started = Instant::now();
    let dir = TempDir::new("tracing-e2e");
    let clusters_dir = dir.0.join("clusters");
    std::fs::create_dir_all(&clusters_dir).unwrap();
    let log = |name: &str| std::env::temp_dir().join(format!("topograph-tracing-e2e-{name}.log"));
    let mut processes = Vec::new();

    // The OTLP receiver.
    let receiver = Receiver::default();
    let otlp_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let otlp = format!("http://{}", otlp_listener.local_addr().unwrap());
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(receiver.clone()))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(otlp_listener)),
    );

    let redis_port = free_port();
    processes.push(redis_without_persistence(redis_port));

    let kube = management_cluster(
        &clusters_dir,
        MC,
        &["--simulate-providers", "--provider-delay-ms", "200"],
    );
    let kubeconfig = kube.kubeconfig.clone();
    processes.push(kube.process);
    let api = ManagementCluster::from_kubeconfig_yaml(&kubeconfig)
        .await
        .unwrap();
    let mut seed = crds::cluster_api();
    seed.extend(crds::topograph());
    seed.extend(crds::for_objects(&quick_start(
        "clusterclass.yaml",
        NAMESPACE,
    )));
    seed.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}));
    for object in &seed {
        api.create(object).await.unwrap();
    }

    let render_port = free_port();
    let mut render = Command::new(binary("topograph-render", "topograph-render"));
    render.args(["--listen", &format!("127.0.0.1:{render_port}")]);
    traced(&mut render, &otlp, "tg-render");
    processes.push(spawn_logged(&mut render, &log("render")));
    wait_for_port(redis_port, "redis-server");
    wait_for_port(render_port, "topograph-render");
    let redis = format!("redis://127.0.0.1:{redis_port}");
    let render = format!("http://127.0.0.1:{render_port}");

    // A long quiet period: the watcher's own enqueue of the new Cluster comes well after
    // the gateway's, so the first reconcile is the one the Apply queued.
    let mut applier = Command::new(binary("topograph-applier", "topograph-applier"));
    applier
        .args(["--redis", &redis, "--render", &render, "--workers", "2"])
        .args(["--quiet-ms", "3000", "--lease-seconds", "10"])
        .arg("--management-clusters")
        .arg(&clusters_dir);
    traced(&mut applier, &otlp, "tg-applier");
    processes.push(spawn_logged(&mut applier, &log("applier")));

    let tenants = admin_tenants(&dir.0, TOKEN);
    let mut gateway = gateway_command();
    gateway
        .args(["--render", &render, "--redis", &redis])
        .arg("--management-clusters")
        .arg(&clusters_dir)
        .arg("--tenants")
        .arg(&tenants);
    traced(&mut gateway, &otlp, "tg-gateway");
    let (gateway, addr) = spawn_gateway(&mut gateway, &log("gateway"));
    processes.push(gateway);
    // Let the applier's watcher list what exists before the Cluster arrives.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut objects = quick_start("clusterclass.yaml", NAMESPACE);
    objects.push(small_cluster(CLUSTER, NAMESPACE));
    let applied = Instant::now();
    apply_through_gateway(&addr, TOKEN, MC, &objects).await;

    let within = Duration::from_secs(60);
    let found = loop {
        let spans = receiver
            .spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(found) = find(&spans) {
            break found;
        }
        if applied.elapsed() > within {
            let summary: Vec<String> = spans
                .iter()
                .map(|s| {
                    format!(
                        "{} {} trace={} id={} parent={} {:?}",
                        s.service,
                        s.name,
                        hex(&s.trace_id),
                        hex(&s.span_id),
                        hex(&s.parent),
                        s.attributes
                    )
                })
                .collect();
            panic!(
                "the trace was not complete within {within:?} (logs: {}); spans received:\n{}",
                log("*").display(),
                summary.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!(
        "trace complete {:?} after the Apply ({:?} in all)",
        applied.elapsed(),
        started.elapsed()
    );

    // One trace id from the gateway to the management cluster.
    let trace = &found.apply.trace_id;
    assert_eq!(trace.len(), 16);
    for span in [
        &found.enqueue,
        &found.reconcile,
        &found.render_client,
        &found.render_server,
    ]
    .into_iter()
    .chain(&found.writes)
    {
        assert_eq!(
            &span.trace_id, trace,
            "{} {} is in another trace",
            span.service, span.name
        );
    }

    // Parent links: the Apply RPC's server span, apply, enqueue, reconcile (through the
    // Redis job), the render client span, the render service's server span.
    let spans = receiver
        .spans
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let rpc = spans
        .iter()
        .find(|s| s.span_id == found.apply.parent)
        .expect("the apply span's parent was exported");
    assert_eq!(
        (rpc.service.as_str(), rpc.name.as_str()),
        ("tg-gateway", "topograph.gateway.v1.GatewayService/Apply")
    );
    assert!(rpc.parent.is_empty(), "the Apply RPC starts the trace");
    assert_eq!(rpc.attribute("tenant"), "ops");
    assert_eq!(
        rpc.attribute("management_cluster"),
        MC,
        "the RPC span names its management cluster"
    );
    assert_eq!(found.enqueue.parent, found.apply.span_id);
    assert_eq!(found.apply.attribute("management_cluster"), MC);
    assert_eq!(found.apply.attribute("tenant"), "ops");
    assert_eq!(
        found.render_server.name,
        "topograph.render.v1.RenderService/Render"
    );
    // The gateway's admission asked the render service too, inside the same trace.
    let admission: Vec<&Span> = spans
        .iter()
        .filter(|s| {
            s.service == "tg-render"
                && s.name == "topograph.render.v1.RenderService/Validate"
                && &s.trace_id == trace
        })
        .collect();
    assert!(
        !admission.is_empty(),
        "no Validate span of the render service in the Apply's trace"
    );
    for span in admission {
        let parent = spans
            .iter()
            .find(|s| s.span_id == span.parent)
            .expect("the Validate span's parent was exported");
        assert_eq!(parent.service, "tg-gateway", "{parent:?}");
    }

    // The reconcile's attributes: the Cluster, its class and the management cluster.
    assert_eq!(found.reconcile.attribute("management_cluster"), MC);
    assert_eq!(
        found.reconcile.attribute("cluster"),
        format!("{NAMESPACE}/{CLUSTER}")
    );
    assert_eq!(
        found.reconcile.attribute("class"),
        format!("{NAMESPACE}/quick-start")
    );
    assert_eq!(found.reconcile.attribute("outcome"), "ok");
    assert_eq!(
        found.render_client.attribute("class"),
        format!("{NAMESPACE}/quick-start")
    );

    // Each write names what it wrote.
    for write in &found.writes {
        assert!(!write.attribute("kind").is_empty(), "{write:?}");
        assert!(!write.attribute("verb").is_empty(), "{write:?}");
        assert_eq!(write.attribute("namespace"), NAMESPACE, "{write:?}");
        assert_eq!(write.attribute("dry_run"), "false", "{write:?}");
    }

    // The gateway's own writes of the applied objects are in the trace too, under apply.
    assert!(
        spans.iter().any(|s| s.service == "tg-gateway"
            && s.name == "write"
            && s.parent == found.apply.span_id
            && s.attribute("kind") == "Cluster"),
        "the gateway's write of the Cluster under apply"
    );
    // A class change rolled out under a policy: the step that moves the Cluster is a
    // trace of its own (`rollout`), and the reconcile of the moved Cluster continues it
    // through the Redis job.
    let policy = json!({"apiVersion": "topograph.io/v1alpha1", "kind": "RolloutPolicy",
        "metadata": {"name": "quick-start", "namespace": NAMESPACE},
        "spec": {"waves": [{"name": "all", "percent": 100}]}});
    apply_through_gateway(&addr, TOKEN, MC, &[policy]).await;
    let recorded = Instant::now();
    while api
        .get(
            "topograph.io/v1alpha1",
            "RolloutPolicy",
            NAMESPACE,
            "quick-start",
        )
        .await
        .ok()
        .flatten()
        .and_then(|p| p["status"]["stableRevision"].as_str().map(str::to_string))
        .is_none()
    {
        assert!(recorded.elapsed() < within, "no stable revision recorded");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut changed = quick_start("clusterclass.yaml", NAMESPACE);
    for object in &mut changed {
        if object["kind"] == "ClusterClass" {
            object["spec"]["workers"]["machineDeployments"][0]["template"]["metadata"] =
                json!({"labels": {"rollout": "two"}});
        }
    }
    apply_through_gateway(&addr, TOKEN, MC, &changed).await;
    let moved = Instant::now();
    let (step, reconcile) = loop {
        let spans = receiver
            .spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let linked = spans
            .iter()
            .filter(|s| s.service == "tg-applier" && s.name == "rollout" && s.parent.is_empty())
            .find_map(|step| {
                spans
                    .iter()
                    .find(|r| {
                        r.service == "tg-applier"
                            && r.name == "reconcile"
                            && r.parent == step.span_id
                            && r.trace_id == step.trace_id
                    })
                    .map(|r| (step.clone(), r.clone()))
            });
        if let Some(found) = linked {
            break found;
        }
        assert!(
            moved.elapsed() < within,
            "no reconcile in a rollout step's trace; rollout spans: {:?}",
            spans
                .iter()
                .filter(|s| s.name == "rollout")
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(step.attribute("policy"), format!("{NAMESPACE}/quick-start"));
    assert_eq!(step.attribute("pins"), "1");
    assert_eq!(
        reconcile.attribute("cluster"),
        format!("{NAMESPACE}/{CLUSTER}")
    );
    server.abort();
    drop(processes);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Spans still waiting for their batch when SIGTERM arrives are exported before the
/// process exits: a render service whose batches would leave only every 10 minutes
/// answers one health check, is stopped, and its span has arrived by then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_flushed_on_sigterm() {
    let receiver = Receiver::default();
    let otlp_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let otlp = format!("http://{}", otlp_listener.local_addr().unwrap());
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(receiver.clone()))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(otlp_listener)),
    );

    let port = free_port();
    let mut render = Command::new(binary("topograph-render", "topograph-render"));
    render.args(["--listen", &format!("127.0.0.1:{port}")]);
    traced(&mut render, &otlp, "tg-render-flush");
    render.env("OTEL_BSP_SCHEDULE_DELAY", "600000");
    let log = std::env::temp_dir().join("topograph-tracing-flush-render.log");
    let mut render = spawn_logged(&mut render, &log);
    wait_for_port(port, "topograph-render");

    let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    health
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap();
    drop(health);
    assert!(
        receiver.spans.lock().unwrap().is_empty(),
        "nothing is exported before the batch is due"
    );

    let stopped = Command::new("kill")
        .args(["-TERM", &render.0.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let exit = tokio::task::spawn_blocking(move || {
        let status = render.0.wait();
        (status, render)
    })
    .await
    .unwrap()
    .0
    .unwrap();
    assert!(exit.success(), "topograph-render exited with {exit}");
    let spans = receiver.spans.lock().unwrap().clone();
    assert!(
        spans.iter().any(|s| s.service == "tg-render-flush"
            && s.name == "grpc.health.v1.Health/Check"
            && s.parent.is_empty()),
        "the health check's span was not flushed at shutdown: {spans:?}"
    );
    server.abort();
}
