//! The embedded engine and the render service are one engine behind two doors: the
//! same inputs through `topograph_engine::Local` and through `RemoteEngine` against a
//! real render server give the same verdicts, warnings, objects and messages; and one
//! Render request validates the Cluster's variables once.

use std::net::SocketAddr;

use serde_json::{Value, json};
use tokio_stream::wrappers::TcpListenerStream;
use topograph_api::load::parse_documents;
use topograph_api::object::ObjectExt;
use topograph_engine::service::{Engine, RenderFailure, RenderInputs};
use topograph_engine::{Local, admission};
use topograph_proto::remote::RemoteEngine;
use topograph_proto::render::v1 as pb;
use topograph_proto::render::v1::render_service_server::RenderServiceServer;
use topograph_render::{Handlers, RenderServer};

/// The quick-start example: the class, the Cluster and the templates, in `default`.
struct QuickStart {
    class: Value,
    cluster: Value,
    templates: Vec<Value>,
}

fn quick_start() -> QuickStart {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/quick-start/");
    let mut out = QuickStart {
        class: Value::Null,
        cluster: Value::Null,
        templates: Vec::new(),
    };
    for file in ["clusterclass.yaml", "cluster.yaml"] {
        let text = std::fs::read_to_string(format!("{root}{file}")).expect("example");
        let (docs, errors) = parse_documents(file, &text);
        assert!(errors.is_empty(), "{errors:?}");
        for doc in docs {
            let mut value = doc.value;
            if value.namespace().is_empty() {
                value["metadata"]["namespace"] = "default".into();
            }
            match value.kind() {
                "ClusterClass" => out.class = value,
                "Cluster" => out.cluster = value,
                _ => out.templates.push(value),
            }
        }
    }
    out
}

async fn serve() -> RemoteEngine {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let address: SocketAddr = listener.local_addr().expect("bound");
    let server = RenderServer::new(Handlers::new(16, 1 << 20), 2);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(RenderServiceServer::new(server))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    RemoteEngine::connect_lazy(&format!("http://{address}")).expect("address")
}

/// Both engines' verdicts on a class and a Cluster admission.
async fn both_admit(
    local: &Local,
    remote: &RemoteEngine,
    object: &Value,
    old: Option<&Value>,
    others: &[Value],
) -> admission::Verdict {
    let (l, r) = if object.kind() == "ClusterClass" {
        (
            local.admit_class(object, old, others).await,
            remote.admit_class(object, old, others).await,
        )
    } else {
        (
            local.admit_cluster(object, old, others).await,
            remote.admit_cluster(object, old, others).await,
        )
    };
    let (l, r) = (l.expect("local answers"), r.expect("remote answers"));
    assert_eq!(l, r, "local and remote verdicts differ on {object}");
    l
}

async fn both_render(
    local: &Local,
    remote: &RemoteEngine,
    q: &QuickStart,
    cluster_object: &Value,
    class_object: &Value,
) -> Result<topograph_engine::DesiredState, Vec<String>> {
    let cluster = topograph_api::load::decode_cluster(cluster_object.clone()).expect("Cluster");
    let class =
        topograph_api::load::decode_cluster_class(class_object.clone()).expect("ClusterClass");
    let inputs = RenderInputs {
        cluster: &cluster,
        class: &class,
        class_object,
        objects: &q.templates,
        extensions: None,
    };
    let l = local.render(inputs).await;
    let r = remote.render(inputs).await;
    assert_eq!(l, r, "local and remote renders differ");
    // A refusal is a verdict on the inputs, never "the engine is unavailable".
    l.map_err(|failure| match failure {
        RenderFailure::Refused(messages) => messages,
        other => panic!("not a refusal: {other:?}"),
    })
}

#[tokio::test]
async fn the_embedded_engine_and_the_render_service_agree() {
    let q = quick_start();
    let remote = serve().await;
    let local = Local;

    // A valid class and Cluster: admitted, the Cluster defaulted the same way.
    let verdict = both_admit(&local, &remote, &q.class, None, &[]).await;
    assert!(verdict.violations.is_empty(), "{verdict:?}");
    let verdict = both_admit(
        &local,
        &remote,
        &q.cluster,
        None,
        std::slice::from_ref(&q.class),
    )
    .await;
    assert!(verdict.violations.is_empty(), "{verdict:?}");
    assert_ne!(
        verdict.object, q.cluster,
        "the Cluster comes back defaulted"
    );

    // An unreadable stored object (the old version of the Cluster has a field the API
    // does not know) is a warning on both doors, not a refusal on one.
    let mut unreadable = q.cluster.clone();
    unreadable["spec"]["notAField"] = json!(true);
    let verdict = both_admit(
        &local,
        &remote,
        &q.cluster,
        Some(&unreadable),
        std::slice::from_ref(&q.class),
    )
    .await;
    assert!(verdict.violations.is_empty(), "{verdict:?}");
    assert_eq!(verdict.warnings.len(), 1, "{verdict:?}");
    assert!(
        verdict.warnings[0].contains("is not readable"),
        "{verdict:?}"
    );

    // A variable value the schema refuses, and an object that is no Cluster at all.
    let mut bad = q.cluster.clone();
    bad["spec"]["topology"]["variables"][0]["value"] = json!(42);
    let verdict = both_admit(&local, &remote, &bad, None, std::slice::from_ref(&q.class)).await;
    assert!(!verdict.violations.is_empty());
    assert!(!verdict.errors.is_empty());
    let mut unknown_field = q.cluster.clone();
    unknown_field["spec"]["bogus"] = json!(1);
    let verdict = both_admit(
        &local,
        &remote,
        &unknown_field,
        None,
        std::slice::from_ref(&q.class),
    )
    .await;
    assert!(!verdict.violations.is_empty());
    // The path of the unknown field, not only a message about it.
    assert_eq!(verdict.violations[0].field, "spec.bogus", "{verdict:?}");
    assert!(
        verdict.violations[0].description.contains("bogus"),
        "{verdict:?}"
    );

    // A class refused by admission.
    let mut bad_class = q.class.clone();
    bad_class["spec"]["workers"]["machineDeployments"][0]["class"] = json!("");
    let verdict = both_admit(&local, &remote, &bad_class, None, &[]).await;
    assert!(!verdict.violations.is_empty());

    // Renders: the same desired state; the same messages for a refused Cluster and a
    // refused class.
    let desired = both_render(&local, &remote, &q, &q.cluster, &q.class)
        .await
        .expect("renders");
    assert!(!desired.machine_deployments.is_empty());
    let messages = both_render(&local, &remote, &q, &bad, &q.class)
        .await
        .expect_err("refused");
    assert!(!messages.is_empty());
    let messages = both_render(&local, &remote, &q, &q.cluster, &bad_class)
        .await
        .expect_err("refused");
    assert!(
        messages
            .iter()
            .all(|m| m.starts_with("ClusterClass default/")),
        "{messages:?}"
    );

    // Plans: the same operations.
    let current: Vec<Value> = desired.objects().into_iter().cloned().collect();
    let mut changed = current.clone();
    changed[0]["metadata"]["labels"]["extra"] = json!("yes");
    let l = local.plan(&changed, &current).await.expect("local plan");
    let r = remote.plan(&changed, &current).await.expect("remote plan");
    assert_eq!(l, r);
    assert_eq!(l.modified.len(), 1);
}

fn bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("JSON")
}

#[test]
fn one_render_request_validates_the_variables_once() {
    let q = quick_start();
    let handlers = Handlers::new(16, 0);
    let request = pb::RenderRequest {
        cluster_class: bytes(&q.class),
        templates: q.templates.iter().map(bytes).collect(),
        cluster: bytes(&q.cluster),
        current_objects: Vec::new(),
        ..pb::RenderRequest::default()
    };
    // What one admission of this Cluster validates, on this thread.
    let cluster = topograph_api::load::decode_cluster(q.cluster.clone()).expect("Cluster");
    let class = topograph_api::load::decode_cluster_class(q.class.clone()).expect("class");
    let before = topograph_variables::validations_on_this_thread();
    let admitted = admission::admit_cluster(&cluster, None, &[&class]);
    assert!(admitted.admitted.is_some(), "{:?}", admitted.errors);
    let per_admission = topograph_variables::validations_on_this_thread() - before;
    assert!(per_admission > 0, "admission validates the variables");

    let before = topograph_variables::validations_on_this_thread();
    handlers.render(&request).expect("renders");
    let per_render = topograph_variables::validations_on_this_thread() - before;
    assert_eq!(
        per_render, per_admission,
        "a Render validates the Cluster's variables once, in admission"
    );
}

/// A render service that cannot be reached gives no verdict on the Cluster: the
/// failure says the engine is unavailable, not that the inputs are refused.
#[tokio::test]
async fn an_unreachable_render_service_is_unavailable_not_a_refusal() {
    let q = quick_start();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let remote = RemoteEngine::connect_lazy(&format!("http://127.0.0.1:{port}")).expect("address");
    let cluster = topograph_api::load::decode_cluster(q.cluster.clone()).expect("Cluster");
    let class = topograph_api::load::decode_cluster_class(q.class.clone()).expect("class");
    let failure = remote
        .render(RenderInputs {
            cluster: &cluster,
            class: &class,
            class_object: &q.class,
            objects: &q.templates,
            extensions: None,
        })
        .await
        .expect_err("nobody answers");
    assert!(
        matches!(failure, RenderFailure::Unavailable(_)),
        "{failure:?}"
    );
}
