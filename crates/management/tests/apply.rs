//! Server-side apply through the management-cluster client against the in-memory API
//! server: the client's field manager owns what it applies, a prediction made locally
//! (no request) says whether an apply would change anything, fields another manager
//! owns survive, fields the client stops applying go, and a dry-run client's apply
//! gives what the server gives.

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::{ManagementCluster, crds};

const API: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

/// A CRD with a structural schema: a keyed list, so merging needs the schema.
fn crd() -> Value {
    let mut crd = crds::crd(
        "infrastructure.cluster.x-k8s.io",
        "DockerCluster",
        &["v1beta1"],
    );
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "controlPlaneEndpoint": {
                        "type": "object",
                        "properties": {"host": {"type": "string"}, "port": {"type": "integer"}}
                    },
                    "failureDomains": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "zone": {"type": "string"}}
                        }
                    },
                    "loadBalancer": {"type": "string"}
                }
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    });
    crd
}

fn intent(spec: Value) -> Value {
    json!({
        "apiVersion": API,
        "kind": "DockerCluster",
        "metadata": {"name": "dc", "namespace": "default", "labels": {"topology": "yes"}},
        "spec": spec,
    })
}

async fn setup() -> (RunningServer, ManagementCluster) {
    let server = Server::start(Config {
        seed: vec![crd()],
        ..Config::default()
    })
    .await
    .unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    (server, api)
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    let text = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                    (text("manager"), text("operation"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn apply_owns_what_it_sets_and_predicts_a_converged_object_locally() {
    let (server, api) = setup().await;
    let first =
        intent(json!({"loadBalancer": "lb", "failureDomains": [{"name": "a", "zone": "z1"}]}));
    let stored = api.apply(&first).await.unwrap();
    assert_eq!(managers(&stored), [("topograph".into(), "Apply".into())]);

    // The same intent again: predicted unchanged, with no request, and a real apply
    // indeed changes nothing.
    let before = server.counts();
    let predicted = api.predict_apply(Some(&stored), &first).await.unwrap();
    assert!(!predicted.changed, "{:?}", predicted.object);
    assert_eq!(server.counts().writes(), before.writes());
    let again = api.apply(&first).await.unwrap();
    assert_eq!(
        again["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );

    // A provider sets the endpoint (an Update of its own); the topology's next apply,
    // which does not set it, keeps it and is still a no-op.
    let provider = api.with_field_manager("provider");
    let patched = provider
        .merge_patch(
            &stored,
            &json!({"spec": {"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}}}),
        )
        .await
        .unwrap();
    assert!(
        !api.predict_apply(Some(&patched), &first)
            .await
            .unwrap()
            .changed
    );
    let kept = api.apply(&first).await.unwrap();
    assert_eq!(kept["spec"]["controlPlaneEndpoint"]["host"], "10.0.0.1");

    // A field the topology stops applying goes; a keyed list merges by key.
    let second = intent(json!({"failureDomains": [{"name": "b", "zone": "z2"}]}));
    let predicted = api.predict_apply(Some(&kept), &second).await.unwrap();
    assert!(predicted.changed);
    let applied = api.apply(&second).await.unwrap();
    assert_eq!(applied["spec"].get("loadBalancer"), None, "{applied}");
    assert_eq!(
        applied["spec"]["failureDomains"],
        json!([{"name": "b", "zone": "z2"}])
    );
    // The prediction was exact.
    assert_eq!(predicted.object["spec"], applied["spec"]);
}

#[tokio::test]
async fn a_dry_run_apply_gives_what_the_server_gives() {
    let (_server, api) = setup().await;
    let first = intent(json!({"loadBalancer": "lb", "failureDomains": [{"name": "a"}]}));
    api.apply(&first).await.unwrap();
    let second = intent(json!({"failureDomains": [{"name": "a", "zone": "z"}, {"name": "b"}]}));
    let dry = api.dry_run();
    let planned = dry.apply(&second).await.unwrap();
    // Nothing reached the server.
    let live = api
        .get(API, "DockerCluster", "default", "dc")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live["spec"]["loadBalancer"], "lb");
    let written = api.apply(&second).await.unwrap();
    assert_eq!(planned["spec"], written["spec"]);
    assert_eq!(managers(&planned), managers(&written));
    assert_eq!(
        dry.dry_run_writes().len(),
        1,
        "the dry run recorded the apply"
    );
}

#[tokio::test]
async fn another_field_manager_name_takes_over_with_ownership_intact() {
    let (_server, api) = setup().await;
    // What Cluster API's topology controller left behind.
    let capi = api.with_field_manager("capi-topology");
    let object = intent(json!({"loadBalancer": "lb"}));
    let stored = capi.apply(&object).await.unwrap();
    assert_eq!(
        managers(&stored),
        [("capi-topology".into(), "Apply".into())]
    );
    // topograph as capi-topology: nothing to write.
    let takeover = api.with_field_manager("capi-topology");
    assert!(
        !takeover
            .predict_apply(Some(&stored), &object)
            .await
            .unwrap()
            .changed
    );
    // topograph under its own name would have to take the fields over.
    assert!(
        api.predict_apply(Some(&stored), &object)
            .await
            .unwrap()
            .changed
    );
    assert_eq!(stored.name(), "dc");
}

/// An API server without server-side apply answers 415: the client says so, naming the
/// server and the object, and nothing is written another way.
#[tokio::test]
async fn a_server_without_server_side_apply_is_named_in_a_clear_error() {
    let server = Server::start(Config {
        seed: vec![crd()],
        server_side_apply: false,
        ..Config::default()
    })
    .await
    .unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    let err = api
        .apply(&intent(json!({"loadBalancer": "a"})))
        .await
        .unwrap_err();
    let text = err.to_string();
    let url = format!("http://{}", server.addr());
    assert!(text.starts_with(&format!("the API server {url}")), "{text}");
    assert!(
        text.contains("does not support server-side apply"),
        "{text}"
    );
    assert!(text.contains("DockerCluster default/dc"), "{text}");
    assert!(text.contains("415 Unsupported Media Type"), "{text}");
    assert!(
        api.get(API, "DockerCluster", "default", "dc")
            .await
            .unwrap()
            .is_none(),
        "nothing was written"
    );
    assert_eq!(server.counts().writes(), 1, "the refused apply alone");
}
