//! Kinds resolved through discovery against the in-memory API server: a kind the server
//! does not serve is believed absent only for a while, so a CRD installed after a
//! lookup missed becomes visible without restarting the process.

use std::time::Duration;

use serde_json::json;
use topograph_applier::ManagementCluster;
use topograph_applier::crds;
use topograph_kube::{Config, Server};

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
