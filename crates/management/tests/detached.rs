//! Creates sent without waiting (how reconciles record Events): each clone settles its
//! own, a settled create is there and counted, and a failed one is only logged.

use serde_json::json;
use topograph_kube::{Config, Server};
use topograph_management::ManagementCluster;

fn config_map(namespace: &str, name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace}, "data": {"k": "v"}})
}

#[tokio::test]
async fn detached_creates_are_written_and_counted_once_settled() {
    let server = Server::start(Config::default()).await.unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    let reconcile = api.counting_apart();
    for name in ["a", "b", "c"] {
        reconcile.create_detached(config_map("default", name), "a ConfigMap");
    }
    // No such namespace: refused by the server, logged, and settling still ends.
    reconcile.create_detached(config_map("missing", "d"), "a ConfigMap");
    // Another clone's settle does not wait for (or take) these.
    api.counting_apart().settle().await;
    reconcile.settle().await;
    for name in ["a", "b", "c"] {
        let stored = api.get("v1", "ConfigMap", "default", name).await.unwrap();
        assert!(stored.is_some(), "{name} written");
    }
    assert!(
        api.get("v1", "ConfigMap", "missing", "d")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        reconcile.writes().total(),
        4,
        "every create sent is counted"
    );
    // Settling with nothing in flight returns at once.
    reconcile.settle().await;
}
