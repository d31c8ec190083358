//! End-to-end tests of `topograph-render`: the real binary on a free port, driven by a
//! tonic client with the quick-start example. Every RPC, the error model, the limits,
//! health, reflection, metrics and graceful shutdown.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;
use topograph_api::load::parse_documents;
use topograph_proto::render::v1 as pb;
use topograph_proto::render::v1::render_service_client::RenderServiceClient;
use topograph_tests::{root, run};

const SERVICE: &str = "topograph.render.v1.RenderService";

fn binary() -> PathBuf {
    topograph_tests::binary("topograph-render", "topograph-render")
}

/// A port nothing listens on right now (the server binds it a moment later).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// A running server, killed when dropped.
struct Server {
    child: Child,
    addr: String,
    metrics: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the server with `extra` flags and waits until health says SERVING.
    async fn start(extra: &[&str]) -> (Server, Channel) {
        let (port, metrics_port) = (free_port(), free_port());
        let addr = format!("127.0.0.1:{port}");
        let metrics = format!("127.0.0.1:{metrics_port}");
        let child = Command::new(binary())
            .args(["--listen", &addr, "--metrics-listen", &metrics])
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start topograph-render");
        let server = Server {
            child,
            addr,
            metrics,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(channel) = Channel::from_shared(format!("http://{}", server.addr))
                .expect("endpoint")
                .connect()
                .await
            {
                let status = HealthClient::new(channel.clone())
                    .check(HealthCheckRequest {
                        service: SERVICE.to_string(),
                    })
                    .await;
                if status.is_ok_and(|s| s.into_inner().status == ServingStatus::Serving as i32) {
                    return (server, channel);
                }
            }
            assert!(
                Instant::now() < deadline,
                "the server did not become healthy"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The quick-start example: the class, its templates and the Cluster, as JSON objects.
struct QuickStart {
    class: Value,
    templates: Vec<Value>,
    cluster: Value,
}

fn quick_start() -> QuickStart {
    let mut class = None;
    let mut cluster = None;
    let mut templates = Vec::new();
    for file in ["clusterclass.yaml", "cluster.yaml"] {
        let path = root().join("examples/quick-start").join(file);
        let text = std::fs::read_to_string(&path).expect("read the example");
        let (docs, errors) = parse_documents(file, &text);
        assert!(errors.is_empty(), "{errors:?}");
        for doc in docs {
            match doc.value["kind"].as_str() {
                Some("ClusterClass") => class = Some(doc.value),
                Some("Cluster") => cluster = Some(doc.value),
                _ => templates.push(doc.value),
            }
        }
    }
    QuickStart {
        class: class.expect("a ClusterClass"),
        templates,
        cluster: cluster.expect("a Cluster"),
    }
}

fn bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("encode JSON")
}

fn decode(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("JSON from the server")
}

fn render_request(q: &QuickStart, current: &[Value]) -> pb::RenderRequest {
    pb::RenderRequest {
        cluster_class: bytes(&q.class),
        templates: q.templates.iter().map(bytes).collect(),
        cluster: bytes(&q.cluster),
        current_objects: current.iter().map(bytes).collect(),
        ..pb::RenderRequest::default()
    }
}

/// The field violations of a `google.rpc.BadRequest` detail, as (field, description).
fn violations(status: &Status) -> Vec<(String, String)> {
    status
        .get_details_bad_request()
        .map(|b| {
            b.field_violations
                .into_iter()
                .map(|v| (v.field, v.description))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn render_gives_what_the_cli_prints() {
    let (_server, channel) = Server::start(&[]).await;
    let mut client = RenderServiceClient::new(channel);
    let q = quick_start();
    let response = client
        .render(render_request(&q, &[]))
        .await
        .expect("render")
        .into_inner();
    let objects: Vec<Value> = response.objects.iter().map(|o| decode(o)).collect();

    let output = run(&[
        "render",
        "-f",
        "examples/quick-start/clusterclass.yaml",
        "-f",
        "examples/quick-start/cluster.yaml",
        "-o",
        "json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: Vec<Value> = serde_json::from_slice(&output.stdout).expect("CLI JSON");
    assert_eq!(objects, printed);
    assert!(response.delete.is_empty());
    assert!(
        !response.changes.is_empty(),
        "the quick-start patches change objects"
    );
    assert!(response.changes.iter().any(|c| !c.object_path.is_empty()));

    // Rendered again with its own output as the current state, plus an owned
    // MachineDeployment the topology no longer has: that one is to be deleted.
    let mut stale = objects
        .iter()
        .find(|o| o["kind"] == "MachineDeployment")
        .expect("a MachineDeployment")
        .clone();
    stale["metadata"]["name"] = json!("quick-start-md-gone");
    stale["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"] = json!("md-gone");
    let mut current = objects.clone();
    current.push(stale);
    let again = client
        .render(render_request(&q, &current))
        .await
        .expect("render with current objects")
        .into_inner();
    let names: Vec<&str> = again.delete.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, vec!["quick-start-md-gone"]);
    let again_objects: Vec<Value> = again.objects.iter().map(|o| decode(o)).collect();
    assert_eq!(
        again_objects, objects,
        "names of current objects are reused"
    );
}

#[tokio::test]
async fn validate_default_and_plan() {
    let (_server, channel) = Server::start(&[]).await;
    let mut client = RenderServiceClient::new(channel);
    let q = quick_start();

    // A valid Cluster and class: nothing to report.
    let ok = client
        .validate(pb::ValidateRequest {
            object: bytes(&q.cluster),
            cluster_classes: vec![bytes(&q.class)],
            ..Default::default()
        })
        .await
        .expect("validate")
        .into_inner();
    assert!(ok.violations.is_empty(), "{:?}", ok.violations);
    let class_ok = client
        .validate(pb::ValidateRequest {
            object: bytes(&q.class),
            clusters: vec![bytes(&q.cluster)],
            ..Default::default()
        })
        .await
        .expect("validate the class")
        .into_inner();
    assert!(class_ok.violations.is_empty(), "{:?}", class_ok.violations);

    // A variable of the wrong type: reported with its field path.
    let mut bad = q.cluster.clone();
    bad["spec"]["topology"]["variables"][0]["value"] = json!(42);
    let refused = client
        .validate(pb::ValidateRequest {
            object: bytes(&bad),
            old_object: bytes(&q.cluster),
            cluster_classes: vec![bytes(&q.class)],
            ..Default::default()
        })
        .await
        .expect("validate a bad Cluster")
        .into_inner();
    assert!(
        refused
            .violations
            .iter()
            .any(|v| v.field.starts_with("spec.topology.variables") && !v.message.is_empty()),
        "{:?}",
        refused.violations
    );

    // Default fills the required variables the Cluster left out.
    let mut bare = q.cluster.clone();
    bare["spec"]["topology"]["variables"] = json!([]);
    let defaulted = client
        .default(pb::DefaultRequest {
            cluster: bytes(&bare),
            cluster_class: bytes(&q.class),
        })
        .await
        .expect("default")
        .into_inner();
    let defaulted = decode(&defaulted.cluster);
    let names: Vec<&str> = defaulted["spec"]["topology"]["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for required in ["imageRepository", "etcdImageTag", "coreDNSImageTag"] {
        assert!(
            names.contains(&required),
            "{required} not defaulted: {names:?}"
        );
    }

    // Plan: the desired objects against themselves change nothing; a changed current
    // object gets a patch; a missing one is created.
    let rendered = client
        .render(render_request(&q, &[]))
        .await
        .expect("render")
        .into_inner();
    let desired: Vec<Value> = rendered.objects.iter().map(|o| decode(o)).collect();
    let same = client
        .plan(pb::PlanRequest {
            desired: rendered.objects.clone(),
            current: rendered.objects.clone(),
            ..Default::default()
        })
        .await
        .expect("plan")
        .into_inner();
    assert_eq!(same, pb::PlanResponse::default());

    let mut current = desired.clone();
    let md = current
        .iter_mut()
        .find(|o| o["kind"] == "MachineDeployment")
        .expect("a MachineDeployment");
    let wanted_replicas = md["spec"]["replicas"].clone();
    md["spec"]["replicas"] = json!(99);
    md["status"] = json!({"replicas": 99});
    let removed = current.pop().expect("an object");
    let changed = client
        .plan(pb::PlanRequest {
            desired: rendered.objects.clone(),
            current: current.iter().map(bytes).collect(),
            ..Default::default()
        })
        .await
        .expect("plan against changed objects")
        .into_inner();
    assert_eq!(changed.modified.len(), 1, "{changed:?}");
    let patch = decode(&changed.modified[0].patch);
    assert_eq!(
        patch,
        json!([{"op": "replace", "path": "/spec/replicas", "value": wanted_replicas}])
    );
    assert_eq!(changed.created.len(), 1);
    assert_eq!(decode(&changed.created[0]), removed);
    assert!(changed.deleted.is_empty());

    // Plan from the render inputs: with no current objects, everything is created.
    let fresh = client
        .plan(pb::PlanRequest {
            render: Some(render_request(&q, &[])),
            ..Default::default()
        })
        .await
        .expect("plan from render inputs")
        .into_inner();
    assert_eq!(fresh.created, rendered.objects);
}

#[tokio::test]
async fn invalid_input_is_invalid_argument_with_field_violations() {
    let (_server, channel) = Server::start(&[]).await;
    let mut client = RenderServiceClient::new(channel);
    let q = quick_start();

    let mut request = render_request(&q, &[]);
    request.cluster = b"{not json".to_vec();
    request.templates.push(b"[1, 2]".to_vec());
    let status = client.render(request).await.expect_err("refused");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let fields: Vec<String> = violations(&status).into_iter().map(|(f, _)| f).collect();
    assert_eq!(fields, vec!["cluster".to_string()], "{status:?}");

    // A variable value the class's schema refuses: the path reaches into the Cluster.
    let mut bad = q.cluster.clone();
    bad["spec"]["topology"]["variables"][0]["value"] = json!(42);
    let mut request = render_request(&q, &[]);
    request.cluster = bytes(&bad);
    let status = client.render(request).await.expect_err("refused");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let found = violations(&status);
    assert!(
        found.iter().any(|(field, description)| field
            .starts_with("cluster.spec.topology.variables")
            && !description.is_empty()),
        "{found:?}"
    );

    // A Cluster of another class.
    let mut other = q.cluster.clone();
    other["spec"]["topology"]["class"] = json!("not-this-one");
    let mut request = render_request(&q, &[]);
    request.cluster = bytes(&other);
    let status = client.render(request).await.expect_err("refused");
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(violations(&status)[0].0, "cluster.spec.topology.class");

    for (name, status) in [
        (
            "validate",
            client
                .validate(pb::ValidateRequest::default())
                .await
                .expect_err("refused"),
        ),
        (
            "default",
            client
                .default(pb::DefaultRequest::default())
                .await
                .expect_err("refused"),
        ),
        (
            "plan",
            client
                .plan(pb::PlanRequest {
                    desired: vec![b"nope".to_vec()],
                    ..Default::default()
                })
                .await
                .expect_err("refused"),
        ),
    ] {
        assert_eq!(status.code(), Code::InvalidArgument, "{name}: {status:?}");
        assert!(!violations(&status).is_empty(), "{name}: {status:?}");
    }
}

#[tokio::test]
async fn limits_oversized_messages_and_deadlines() {
    let (_server, channel) = Server::start(&["--max-decoding-message-size", "200000"]).await;
    let mut client = RenderServiceClient::new(channel);
    let q = quick_start();

    let mut big = render_request(&q, &[]);
    big.templates.push(vec![b' '; 300_000]);
    let status = client.render(big).await.expect_err("refused");
    assert!(
        matches!(status.code(), Code::OutOfRange | Code::ResourceExhausted),
        "{status:?}"
    );

    // Many current objects make the request slow to decode; a 1 ms deadline expires.
    let filler: Vec<Value> = (0..1500)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": format!("filler-{i}"), "namespace": "default"},
                   "data": {"k": "v"}})
        })
        .collect();
    let mut request = tonic::Request::new(render_request(&q, &filler));
    request.set_timeout(Duration::from_millis(1));
    let status = client.render(request).await.expect_err("deadline");
    assert!(
        matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{status:?}"
    );

    // The server still answers afterwards.
    client
        .render(render_request(&q, &[]))
        .await
        .expect("render after the refusals");
}

#[tokio::test]
async fn health_reflection_and_metrics_answer() {
    let (server, channel) = Server::start(&[]).await;
    let health = HealthClient::new(channel.clone())
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("overall health")
        .into_inner();
    assert_eq!(health.status, ServingStatus::Serving as i32);

    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let mut reflection = ServerReflectionClient::new(channel.clone());
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses = reflection
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .expect("reflection")
        .into_inner();
    let response = responses
        .next()
        .await
        .expect("a reflection answer")
        .expect("a reflection answer");
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
        panic!("unexpected reflection answer: {response:?}");
    };
    let services: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(services.contains(&SERVICE.to_string()), "{services:?}");
    assert!(
        services.contains(&"grpc.health.v1.Health".to_string()),
        "{services:?}"
    );

    // The same through reflection v1alpha, which older clients ask.
    {
        use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
        use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let response = ServerReflectionClient::new(channel.clone())
            .server_reflection_info(tokio_stream::iter(vec![request]))
            .await
            .expect("reflection v1alpha")
            .into_inner()
            .next()
            .await
            .expect("a v1alpha answer")
            .expect("a v1alpha answer");
        let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
            panic!("unexpected v1alpha answer: {response:?}");
        };
        let services: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
        assert!(services.contains(&SERVICE.to_string()), "{services:?}");
    }

    let q = quick_start();
    RenderServiceClient::new(channel)
        .render(render_request(&q, &[]))
        .await
        .expect("render");
    let text = http_get(&server.metrics, "/metrics");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.contains(
            "topograph_render_grpc_requests_total{method=\"/topograph.render.v1.RenderService/Render\",code=\"OK\"} 1"
        ),
        "{text}"
    );
    assert!(text.contains("topograph_render_grpc_request_duration_seconds_bucket"));
    assert!(http_get(&server.metrics, "/other").starts_with("HTTP/1.1 404"));
}

fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to the metrics endpoint");
    write!(stream, "GET {path} HTTP/1.1\r\nhost: {addr}\r\n\r\n").expect("send");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read");
    text
}

#[tokio::test]
async fn sigterm_lets_in_flight_requests_finish_and_exits_zero() {
    let (mut server, channel) = Server::start(&[]).await;
    let mut client = RenderServiceClient::new(channel);
    let q = quick_start();
    let filler: Vec<Value> = (0..3000)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": format!("filler-{i}"), "namespace": "default"}})
        })
        .collect();
    let request = render_request(&q, &filler);
    let in_flight = tokio::spawn(async move { client.render(request).await });
    tokio::time::sleep(Duration::from_millis(30)).await;
    let killed = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let answer = in_flight.await.expect("the request task");
    assert!(answer.is_ok(), "in-flight request: {answer:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("wait for the server") {
            break status;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");
}

/// `topograph bench render` is a contract: one JSON line with these three numbers.
#[test]
fn bench_render_prints_one_json_line() {
    for mode in ["bytes", "parsed"] {
        let output = run(&[
            "bench",
            "render",
            "-f",
            "examples/quick-start/clusterclass.yaml",
            "-f",
            "examples/quick-start/cluster.yaml",
            "--duration",
            "0.2",
            "--mode",
            mode,
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8_lossy(&output.stdout);
        assert_eq!(text.lines().count(), 1, "{text}");
        let line: Value = serde_json::from_str(text.trim()).expect("a JSON line");
        let renders = line["renders"].as_u64().expect("renders");
        let seconds = line["seconds"].as_f64().expect("seconds");
        let ns = line["ns_per_render"].as_f64().expect("ns_per_render");
        assert!(renders > 0 && seconds >= 0.2, "{line}");
        let expected = seconds * 1e9 / renders as f64;
        assert!((ns - expected).abs() <= expected * 0.01 + 1.0, "{line}");
    }
    let output = run(&[
        "bench",
        "render",
        "-f",
        "examples/quick-start/cluster.yaml",
        "--duration",
        "0.1",
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a Cluster without its class is invalid input"
    );
}

#[tokio::test]
async fn requests_over_the_in_flight_limit_are_shed() {
    let (_server, channel) = Server::start(&["--max-in-flight", "1", "--workers", "1"]).await;
    let q = quick_start();
    let filler: Vec<Value> = (0..1000)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": format!("filler-{i}"), "namespace": "default"}})
        })
        .collect();
    let request = render_request(&q, &filler);
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let mut client = RenderServiceClient::new(channel.clone());
            let request = request.clone();
            tokio::spawn(async move { client.render(request).await })
        })
        .collect();
    let mut codes = Vec::new();
    for call in calls {
        codes.push(match call.await.expect("the request task") {
            Ok(_) => Code::Ok,
            Err(status) => status.code(),
        });
    }
    assert!(codes.contains(&Code::Ok), "{codes:?}");
    assert!(codes.contains(&Code::ResourceExhausted), "{codes:?}");
    assert!(
        codes
            .iter()
            .all(|c| matches!(c, Code::Ok | Code::ResourceExhausted)),
        "{codes:?}"
    );
}
