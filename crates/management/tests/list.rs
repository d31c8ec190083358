//! Lists by label selector strings against the in-memory API server: across all
//! namespaces or in one, Kubernetes' selector syntax evaluated by the server, malformed
//! selectors refused, and dry-run clients limited to what their overlay can match.

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_kube::{Config, Server};
use topograph_management::{Error, ManagementCluster, crds};

const V1BETA1: &str = "cluster.x-k8s.io/v1beta1";

fn cluster(namespace: &str, name: &str, labels: Value) -> Value {
    json!({
        "apiVersion": V1BETA1,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
    })
}

fn names(objects: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = objects
        .iter()
        .map(|o| format!("{}/{}", o.namespace(), o.name()))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn selector_strings_list_across_namespaces_or_in_one() {
    let server = Server::start(Config {
        seed: crds::cluster_api(),
        ..Config::default()
    })
    .await
    .unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    for namespace in ["a", "b", "c"] {
        api.create(
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        )
        .await
        .unwrap();
    }
    for object in [
        cluster("a", "prod", json!({"env": "prod"})),
        cluster("a", "held", json!({"env": "prod", "hold": ""})),
        cluster("b", "prod", json!({"env": "prod"})),
        cluster("b", "dev", json!({"env": "dev"})),
    ] {
        api.create(&object).await.unwrap();
    }

    let everywhere = api
        .list_selected(V1BETA1, "Cluster", "", "env=prod,!hold")
        .await
        .unwrap();
    assert_eq!(names(&everywhere), ["a/prod", "b/prod"]);
    let in_b = api
        .list_selected(V1BETA1, "Cluster", "b", "env in (prod,dev)")
        .await
        .unwrap();
    assert_eq!(names(&in_b), ["b/dev", "b/prod"]);
    let all = api.list_selected(V1BETA1, "Cluster", "", "").await.unwrap();
    assert_eq!(all.len(), 4);
    // The label-pair list agrees.
    assert_eq!(
        names(
            &api.list(V1BETA1, "Cluster", "", &[("env", "prod")])
                .await
                .unwrap()
        ),
        ["a/held", "a/prod", "b/prod"]
    );
    // A kind the server does not serve has no objects.
    assert!(
        api.list_selected("example.topograph.io/v1", "Widget", "", "a=b")
            .await
            .unwrap()
            .is_empty()
    );

    match api
        .list_selected(V1BETA1, "Cluster", "", "env in prod")
        .await
    {
        Err(Error::Api(kube::Error::Api(status))) => assert_eq!(status.code, 400),
        other => panic!("a malformed selector must be refused by the server: {other:?}"),
    }

    // A dry run sees its own writes with an empty selector, and refuses expressions
    // its overlay cannot evaluate.
    let dry = api.dry_run();
    dry.create(&cluster("c", "staged", json!({"env": "prod"})))
        .await
        .unwrap();
    assert_eq!(
        dry.list_selected(V1BETA1, "Cluster", "c", "")
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        dry.list_selected(V1BETA1, "Cluster", "", "env=prod")
            .await
            .is_err()
    );
}
