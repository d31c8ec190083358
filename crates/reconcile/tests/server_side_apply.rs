//! The reconcile writes the way Cluster API writes: server-side applies as its field
//! manager. What providers set stays theirs, Cluster API's own objects are taken over
//! by using its manager name, and objects written by earlier versions lose their
//! private record of managed paths on their next write.

mod support;

use serde_json::{Value, json};
use support::{Env, NS};
use topograph_api::object::ObjectExt;
use topograph_engine::Local;
use topograph_management::ManagementCluster;
use topograph_reconcile::reconcile_cluster;

const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

async fn docker_cluster(env: &Env) -> Value {
    let cluster = env.cluster("dev").await;
    let name = cluster["spec"]["infrastructureRef"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    env.get(INFRA, "DockerCluster", &name).await.unwrap()
}

/// A typed provider webhook adds a zero `controlPlaneEndpoint` to its templates; once the
/// provider has set the real endpoint, the topology must leave it alone (Cluster API's
/// ignore paths) and converge.
#[tokio::test]
async fn an_endpoint_the_provider_set_survives() {
    let (mut class, cluster) = support::quick_start();
    let template = class
        .iter_mut()
        .find(|o| o.kind() == "DockerClusterTemplate")
        .unwrap();
    template["spec"]["template"]["spec"]["controlPlaneEndpoint"] =
        json!({"host": "", "port": 6443});
    let env = Env::start(class, vec![cluster]).await;
    env.converge("dev").await;

    let dc = docker_cluster(&env).await;
    env.patch(
        &dc,
        json!({"spec": {"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}}}),
    )
    .await;
    // Reconciles after the provider's write never take its endpoint back (before server-
    // side apply, the first of them removed the host the topology had once written). The
    // first may carry the endpoint over to the Cluster; the second writes nothing.
    let mut writes = Vec::new();
    for _ in 0..2 {
        writes.push(env.reconcile("dev").await.unwrap().writes);
        let dc = docker_cluster(&env).await;
        assert_eq!(dc["spec"]["controlPlaneEndpoint"]["host"], "10.0.0.1");
        assert_eq!(dc["spec"]["controlPlaneEndpoint"]["port"], 6443);
        let owners: Vec<&str> = dc["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e.pointer("/fieldsV1/f:spec/f:controlPlaneEndpoint/f:host")
                    .is_some()
            })
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(owners, ["someone-else"], "the provider owns the host");
    }
    assert_eq!(writes[1], 0, "converged: {writes:?}");
}

/// Objects Cluster API's topology controller wrote (field manager `capi-topology`) are
/// taken over with `--field-manager capi-topology` at no cost; under another name the
/// fields are taken over by one apply each, after which the topology converges again.
#[tokio::test]
async fn capi_topology_objects_are_taken_over_with_its_manager_name() {
    let env = Env::quick_start().await;
    let capi = env.api.with_field_manager("capi-topology");
    for _ in 0..5 {
        let outcome = reconcile_cluster(&capi, &Local, NS, "dev").await.unwrap();
        if outcome.writes == 0 {
            break;
        }
    }
    let dc = docker_cluster(&env).await;
    let managers: Vec<&str> = dc["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["operation"] == "Apply")
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["capi-topology"]);

    let takeover = ManagementCluster::from_kubeconfig_yaml(&env.server.kubeconfig_yaml())
        .await
        .unwrap()
        .with_field_manager("capi-topology");
    let outcome = reconcile_cluster(&takeover, &Local, NS, "dev")
        .await
        .unwrap();
    assert_eq!(outcome.writes, 0, "same manager, same fields: {outcome:?}");

    let own = ManagementCluster::from_kubeconfig_yaml(&env.server.kubeconfig_yaml())
        .await
        .unwrap()
        .with_field_manager("topograph");
    let first = reconcile_cluster(&own, &Local, NS, "dev").await.unwrap();
    assert!(
        first.writes > 0,
        "another name has to take the fields: {first:?}"
    );
    let again = reconcile_cluster(&own, &Local, NS, "dev").await.unwrap();
    assert_eq!(again.writes, 0, "{again:?}");
}

/// An object carrying the managed-paths annotation of earlier versions loses it on its
/// next write; after that the topology converges.
#[tokio::test]
async fn the_legacy_managed_paths_record_is_dropped() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let dc = docker_cluster(&env).await;
    env.patch(
        &dc,
        json!({"metadata": {"annotations": {"topology.topograph.io/managed-paths": "[\"/spec/failureDomains\"]"}}}),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert!(outcome.writes > 0, "{outcome:?}");
    let dc = docker_cluster(&env).await;
    assert!(
        !dc.annotations()
            .contains_key("topology.topograph.io/managed-paths"),
        "{:?}",
        dc.annotations()
    );
    assert_eq!(env.reconcile("dev").await.unwrap().writes, 0);
}

/// Applies `spec` to `object` as another field manager (with force, as controllers do).
async fn apply_as(env: &Env, manager: &str, object: &Value, spec: Value) -> Value {
    let intent = json!({
        "apiVersion": object.api_version(),
        "kind": object.kind(),
        "metadata": {"name": object.name(), "namespace": object.namespace()},
        "spec": spec,
    });
    env.other
        .with_field_manager(manager)
        .apply(&intent)
        .await
        .unwrap()
}

/// The quick-start with `md-1`'s replicas left to others (an autoscaler).
fn quick_start_with_free_replicas() -> (Vec<Value>, Value) {
    let (class, mut cluster) = support::quick_start();
    let mds = cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array_mut()
        .unwrap();
    let md1 = mds.iter_mut().find(|md| md["name"] == "md-1").unwrap();
    md1.as_object_mut().unwrap().remove("replicas");
    (class, cluster)
}

/// A field the topology leaves unset belongs to whoever sets it: an autoscaler's
/// replicas stay, and the topology does not even write.
#[tokio::test]
async fn replicas_an_autoscaler_owns_stay_when_the_topology_leaves_them_unset() {
    let (class, cluster) = quick_start_with_free_replicas();
    let env = Env::start(class, vec![cluster]).await;
    env.converge("dev").await;
    let md = env.machine_deployment("dev", "md-1").await.unwrap();
    apply_as(&env, "cluster-autoscaler", &md, json!({"replicas": 5})).await;

    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(outcome.writes, 0, "{outcome:?}");
    let md = env.machine_deployment("dev", "md-1").await.unwrap();
    assert_eq!(md["spec"]["replicas"], 5);
}

/// A field the topology set and another manager then took by force is taken back by
/// force, and the Event names the field and the manager it was taken from.
#[tokio::test]
async fn a_conflicting_manager_is_overridden_and_the_event_says_so() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let md = env.machine_deployment("dev", "md-0").await.unwrap();
    apply_as(&env, "cluster-autoscaler", &md, json!({"replicas": 7})).await;

    let outcome = env.reconcile("dev").await.unwrap();
    assert!(outcome.writes > 0, "{outcome:?}");
    let md = env.machine_deployment("dev", "md-0").await.unwrap();
    assert_eq!(md["spec"]["replicas"], 2, "the topology's value again");
    let owners: Vec<&str> = md["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.pointer("/fieldsV1/f:spec/f:replicas").is_some())
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["topograph"]);
    let want = format!(
        "TopologyUpdate: Updated MachineDeployment \"{NS}/{}\" by force over 1 conflict: conflict with \"cluster-autoscaler\": .spec.replicas",
        md.name()
    );
    let events = env.events().await;
    assert!(events.contains(&want), "{want}\nnot in {events:#?}");
    assert_eq!(env.reconcile("dev").await.unwrap().writes, 0);
}

/// What the class stops setting is removed from the objects (the topology released
/// it, and nobody else owns it), while the rest stays.
#[tokio::test]
async fn a_field_the_class_stops_setting_is_removed() {
    let env = Env::quick_start().await;
    let class = || async {
        env.get(support::V1BETA1, "ClusterClass", "quick-start")
            .await
            .unwrap()
    };
    let set_label = |mut workers: Value, label: Option<&str>| {
        let metadata = &mut workers["machineDeployments"][0]["template"]["metadata"];
        match label {
            Some(value) => *metadata = json!({"labels": {"team": value}}),
            None => *metadata = json!({}),
        }
        json!({"spec": {"workers": workers}})
    };
    let labels = |md: &Value| md["spec"]["template"]["metadata"]["labels"].clone();

    let cc = class().await;
    env.patch(&cc, set_label(cc["spec"]["workers"].clone(), Some("a")))
        .await;
    env.converge("dev").await;
    let md = env.machine_deployment("dev", "md-0").await.unwrap();
    assert_eq!(labels(&md)["team"], "a");

    let cc = class().await;
    env.patch(&cc, set_label(cc["spec"]["workers"].clone(), None))
        .await;
    env.converge("dev").await;
    let md = env.machine_deployment("dev", "md-0").await.unwrap();
    assert!(labels(&md).get("team").is_none(), "{}", labels(&md));
    assert_eq!(
        labels(&md)["topology.cluster.x-k8s.io/deployment-name"],
        "md-0"
    );
}
