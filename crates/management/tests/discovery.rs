//! Kinds resolved through discovery against the in-memory API server: a kind the server
//! does not serve is believed absent only for a while, so a CRD installed after a
//! lookup missed becomes visible without restarting the process.

use std::time::Duration;

use serde_json::json;
use topograph_kube::{Config, Server};
use topograph_management::ManagementCluster;
use topograph_management::crds;

const WIDGET: &str = "example.topograph.io/v1alpha1";

#[tokio::test]
async fn a_crd_installed_after_a_miss_becomes_visible_once_the_miss_expires() {
    let server = Server::start(Config::default()).await.unwrap();
    let connect = || async {
        ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
            .await
            .unwrap()
    };
    // Two views of one client (one discovery cache): the default expiry and a short one.
    let long = connect().await;
    let expiry = Duration::from_millis(50);
    let short = long.with_unserved_kind_expiry(expiry);
    // Installs the CRD and an object with a cache of its own.
    let installer = connect().await;

    assert!(
        long.get(WIDGET, "Widget", "default", "one")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        long.list(WIDGET, "Widget", "", &[])
            .await
            .unwrap()
            .is_empty()
    );

    installer
        .create(&crds::crd("example.topograph.io", "Widget", &["v1alpha1"]))
        .await
        .unwrap();
    installer
        .create(&json!({
            "apiVersion": WIDGET,
            "kind": "Widget",
            "metadata": {"name": "one", "namespace": "default"},
        }))
        .await
        .unwrap();

    // The miss is still believed within the default expiry: no discovery request per
    // read of a kind that is not installed.
    assert!(
        long.get(WIDGET, "Widget", "default", "one")
            .await
            .unwrap()
            .is_none()
    );

    tokio::time::sleep(expiry * 2).await;
    let found = short
        .get(WIDGET, "Widget", "default", "one")
        .await
        .unwrap()
        .expect("the Widget once the miss expired");
    assert_eq!(found["metadata"]["name"], "one");
    assert_eq!(
        short.list(WIDGET, "Widget", "", &[]).await.unwrap().len(),
        1
    );
    // The served kind replaced the miss in the shared cache, for every view.
    assert!(
        long.get(WIDGET, "Widget", "default", "one")
            .await
            .unwrap()
            .is_some()
    );
}

/// `serves` asks again before it says no: a CRD installed a moment ago counts at once,
/// while plain reads still believe the miss for its expiry.
#[tokio::test]
async fn serves_checks_a_remembered_miss_again() {
    let server = Server::start(Config::default()).await.unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    let installer = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    assert!(!api.serves(WIDGET, "Widget").await.unwrap());
    installer
        .create(&crds::crd("example.topograph.io", "Widget", &["v1alpha1"]))
        .await
        .unwrap();
    assert!(api.serves(WIDGET, "Widget").await.unwrap());
}

/// A management cluster that accepts connections but never answers fails a request
/// after the request timeout instead of holding it (and a worker) indefinitely.
#[tokio::test]
async fn a_server_that_never_answers_fails_requests_after_the_timeout() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    // Accept and hold every connection, answering nothing.
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user: {{}}\n"
    );
    let api = ManagementCluster::from_kubeconfig_yaml_with_request_timeout(
        &kubeconfig,
        Duration::from_millis(300),
    )
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        api.get("v1", "ConfigMap", "default", "x"),
    )
    .await
    .expect("the request ended by itself");
    assert!(result.is_err(), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    held.abort();
}

/// The version the appliers watch a Cluster's workers in: none before Cluster API is
/// installed, v1beta1 for Cluster API 1.10's CRDs, v1beta2 for today's.
#[tokio::test]
async fn the_preferred_cluster_api_version_follows_the_installed_crds() {
    for (crds, expected) in [
        (Vec::new(), None),
        (
            crds::cluster_api_v1beta1(),
            Some("cluster.x-k8s.io/v1beta1"),
        ),
        (crds::cluster_api(), Some("cluster.x-k8s.io/v1beta2")),
    ] {
        let server = Server::start(Config::default()).await.unwrap();
        let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
            .await
            .unwrap();
        for crd in crds {
            api.create(&crd).await.unwrap();
        }
        assert_eq!(api.preferred_cluster_api_version().await.unwrap(), expected);
    }
}
