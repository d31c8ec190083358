//! Merge patches of Cluster API's kinds read in `v1beta1` from a server that stores
//! `v1beta2`: sent in `v1beta2` as the difference they make there (as Cluster API's
//! patch helper sends its changes), they leave the object exactly as the same patch
//! sent in `v1beta1` does, and answer it in `v1beta1`; a resourceVersion in the patch
//! stays a precondition.

use serde_json::{Value, json};
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::{Error, ManagementCluster, crds};

const V1BETA1: &str = "cluster.x-k8s.io/v1beta1";
const V1BETA2: &str = "cluster.x-k8s.io/v1beta2";

async fn start() -> (RunningServer, ManagementCluster) {
    let mut seed = crds::cluster_api();
    seed.push(crds::crd(
        "infrastructure.cluster.x-k8s.io",
        "DockerCluster",
        &["v1beta1"],
    ));
    let server = Server::start(Config {
        seed,
        ..Config::default()
    })
    .await
    .unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap()
        .with_field_manager("capi-topology");
    (server, api)
}

fn cluster(name: &str) -> Value {
    json!({"apiVersion": V1BETA1, "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
            "topology": {"class": "quick-start", "version": "v1.31.0",
                "controlPlane": {"replicas": 3, "nodeDeletionTimeout": "10s"},
                "workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0",
                    "replicas": 2, "nodeDrainTimeout": "1m"}]},
                "variables": [{"name": "imageRepository", "value": "kindest"}]}}})
}

/// The same merge patch sent as is, in the version of `of`, to `sub` ("" or "/status").
async fn patch_as_is(api: &ManagementCluster, of: &Value, sub: &str, patch: &Value) -> Value {
    let name = of["metadata"]["name"].as_str().unwrap();
    let request = http::Request::patch(format!(
        "/apis/{V1BETA1}/namespaces/default/clusters/{name}{sub}?fieldManager=capi-topology"
    ))
    .header("content-type", "application/merge-patch+json")
    .body(serde_json::to_vec(patch).unwrap())
    .unwrap();
    api.client().request::<Value>(request).await.unwrap()
}

/// An object without what differs between two objects by name and time.
fn comparable(object: &Value) -> Value {
    let mut object = object.clone();
    let metadata = object["metadata"].as_object_mut().unwrap();
    for field in [
        "name",
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
    ] {
        metadata.remove(field);
    }
    object
}

/// The apiVersions of `capi-topology`'s Update entries for `subresource` ("" for the
/// object): an Update entry is kept per version written in, as kube-apiserver keeps it.
fn update_versions<'a>(object: &'a Value, subresource: &str) -> Vec<&'a str> {
    let entries = object["metadata"]["managedFields"].as_array();
    let mut versions: Vec<&str> = entries
        .into_iter()
        .flatten()
        .filter(|e| {
            e["manager"] == "capi-topology"
                && e["operation"] == "Update"
                && e.get("subresource").and_then(Value::as_str).unwrap_or("") == subresource
        })
        .filter_map(|e| e.get("apiVersion").and_then(Value::as_str))
        .collect();
    versions.sort();
    versions
}

#[tokio::test]
async fn a_v1beta1_patch_sent_as_its_v1beta2_difference_writes_what_it_would_as_is() {
    let (_server, api) = start().await;
    for name in ["a", "b"] {
        api.create(&cluster(name)).await.unwrap();
        // A provider's report in v1beta2 that v1beta1 keeps in its conversion data.
        let stored = api
            .get(V1BETA2, "Cluster", "default", name)
            .await
            .unwrap()
            .unwrap();
        api.merge_patch_status(
            &stored,
            &json!({"status": {"phase": "Provisioning",
            "initialization": {"infrastructureProvisioned": true},
            "conditions": [{"type": "Available", "status": "False", "reason": "Waiting",
                "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
        )
        .await
        .unwrap();
    }
    let read = |name: &'static str| {
        let api = api.clone();
        async move {
            api.get(V1BETA1, "Cluster", "default", name)
                .await
                .unwrap()
                .unwrap()
        }
    };
    let spec_patch = json!({
        "metadata": {"annotations": {"topology.cluster.x-k8s.io/observed": "r1"}},
        "spec": {"infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "DockerCluster", "name": "infra", "namespace": "default"},
            "controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443},
            "topology": {"controlPlane": {"nodeDeletionTimeout": null}}}});
    let status_patch = json!({"status": {
        "conditions": [{"type": "TopologyReconciled", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "v1beta2": {"conditions": [{"type": "TopologyReconciled", "status": "True",
            "reason": "ReconcileSucceeded", "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}});

    let a = api
        .merge_patch(&read("a").await, &spec_patch)
        .await
        .unwrap();
    let b = patch_as_is(&api, &read("b").await, "", &spec_patch).await;
    assert_eq!(a["apiVersion"], V1BETA1, "answered in the version read");
    assert_eq!(comparable(&a), comparable(&b));
    // Written in v1beta2, as Cluster API's controllers write; the create was v1beta1.
    assert_eq!(update_versions(&a, ""), [V1BETA1, V1BETA2]);
    assert_eq!(update_versions(&b, ""), [V1BETA1]);

    let a = api.merge_patch_status(&a, &status_patch).await.unwrap();
    let b = patch_as_is(&api, &b, "/status", &status_patch).await;
    assert_eq!(comparable(&a), comparable(&b));
    assert_eq!(comparable(&read("a").await), comparable(&read("b").await));
    assert_eq!(update_versions(&a, "status"), [V1BETA2]);
    assert_eq!(
        a["status"]["v1beta2"]["conditions"][0]["type"],
        "TopologyReconciled"
    );

    // A patch the object already holds is sent (empty) and answers the object.
    let again = api.merge_patch(&a, &spec_patch).await.unwrap();
    assert_eq!(comparable(&again), comparable(&a));

    // A resourceVersion in the patch is still a precondition.
    let stale = json!({"metadata": {"resourceVersion": "1", "labels": {"x": "y"}}});
    match api.merge_patch(&a, &stale).await {
        Err(Error::Api(kube::Error::Api(status))) => assert_eq!(status.code, 409),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(read("a").await["metadata"].get("labels").is_none());
}
