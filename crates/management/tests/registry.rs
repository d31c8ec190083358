//! The registry's sources against real servers: kubeconfig files in a directory and
//! labelled Secrets in a home cluster (the in-memory API server), with management
//! clusters added, rotated and removed as their source changes.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::ManagementCluster;
use topograph_management::registry::{Changes, Registry, SECRET_LABEL, Source};

async fn server() -> RunningServer {
    Server::start(Config::default()).await.unwrap()
}

async fn client(server: &RunningServer) -> ManagementCluster {
    ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap()
}

fn secret(name: &str, label: &str, key: &str, kubeconfig: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "fleet", "labels": {SECRET_LABEL: label}},
        "data": {key: base64::engine::general_purpose::STANDARD.encode(kubeconfig)},
    })
}

fn changes(added: &[&str], removed: &[&str]) -> Changes {
    Changes {
        added: added.iter().map(|s| s.to_string()).collect(),
        removed: removed.iter().map(|s| s.to_string()).collect(),
    }
}

/// The management cluster `name` answers: it serves the server it should.
async fn reaches(registry: &Registry, name: &str, server: &RunningServer) {
    let api = registry.get(name).unwrap();
    let before = server.counts().reads();
    api.list("v1", "Secret", "default", &[]).await.unwrap();
    assert!(
        server.counts().reads() > before,
        "{name} does not reach its server"
    );
}

#[tokio::test]
async fn secrets_add_rotate_and_remove_management_clusters() {
    let home = server().await;
    let one = server().await;
    let two = server().await;
    let admin = client(&home).await;
    admin
        .create(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fleet"}}))
        .await
        .unwrap();
    // Named by the label; named by the Secret (empty label); the `kubeconfig` key.
    admin
        .create(&secret(
            "a-kubeconfig",
            "mgmt-a",
            "value",
            &one.kubeconfig_yaml(),
        ))
        .await
        .unwrap();
    admin
        .create(&secret("mgmt-b", "", "kubeconfig", &two.kubeconfig_yaml()))
        .await
        .unwrap();
    // No kubeconfig key, and not labelled: neither is a management cluster.
    let mut keyless = secret("c-kubeconfig", "mgmt-c", "value", "");
    keyless["data"] = json!({"other": ""});
    admin.create(&keyless).await.unwrap();
    let mut unlabelled = secret("d-kubeconfig", "", "value", &one.kubeconfig_yaml());
    unlabelled["metadata"]["labels"] = json!({});
    admin.create(&unlabelled).await.unwrap();

    let registry = Registry::with_sources(vec![Source::Secrets {
        home: Arc::new(client(&home).await),
        namespace: "fleet".into(),
    }]);
    assert_eq!(
        registry.refresh().await,
        changes(&["mgmt-a", "mgmt-b"], &[])
    );
    assert_eq!(registry.names(), ["mgmt-a", "mgmt-b"]);
    reaches(&registry, "mgmt-a", &one).await;
    reaches(&registry, "mgmt-b", &two).await;
    assert_eq!(
        registry.refresh().await,
        Changes::default(),
        "nothing changed"
    );

    // Rotated credentials: mgmt-a now points at the other server.
    let mut rotated = admin
        .get("v1", "Secret", "fleet", "a-kubeconfig")
        .await
        .unwrap()
        .unwrap();
    rotated["data"]["value"] =
        json!(base64::engine::general_purpose::STANDARD.encode(two.kubeconfig_yaml()));
    admin.replace(&rotated).await.unwrap();
    assert_eq!(registry.refresh().await, changes(&["mgmt-a"], &[]));
    reaches(&registry, "mgmt-a", &two).await;

    admin.delete(&rotated).await.unwrap();
    assert_eq!(registry.refresh().await, changes(&[], &["mgmt-a"]));
    assert_eq!(registry.names(), ["mgmt-b"]);
}

#[tokio::test]
async fn an_unreachable_source_removes_nothing_and_a_directory_adds_beside_it() {
    let home = server().await;
    let one = server().await;
    let admin = client(&home).await;
    admin
        .create(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fleet"}}))
        .await
        .unwrap();
    admin
        .create(&secret("a", "mgmt-a", "value", &one.kubeconfig_yaml()))
        .await
        .unwrap();
    let dir = std::env::temp_dir().join(format!("topograph-registry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    one.write_kubeconfig(&dir.join("from-file.kubeconfig"))
        .unwrap();
    std::fs::write(dir.join("notes.txt"), "not a kubeconfig").unwrap();

    let registry = Registry::with_sources(vec![
        Source::Directory(dir.clone()),
        Source::Secrets {
            home: Arc::new(client(&home).await),
            namespace: "fleet".into(),
        },
    ]);
    assert_eq!(
        registry.refresh().await,
        changes(&["from-file", "mgmt-a"], &[])
    );
    // The home cluster goes away: its management clusters stay as they were.
    home.shutdown().await;
    std::fs::remove_file(dir.join("from-file.kubeconfig")).unwrap();
    assert_eq!(registry.refresh().await, Changes::default());
    assert_eq!(registry.names(), ["from-file", "mgmt-a"]);
    reaches(&registry, "mgmt-a", &one).await;
    let _ = std::fs::remove_dir_all(&dir);
}
