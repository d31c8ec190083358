//! The reconcile across Cluster API's versions: a management cluster serving v1beta1
//! and v1beta2 (storing v1beta2, as Cluster API ≥ 1.11 installs it) and one serving
//! v1beta1 alone (Cluster API 1.10), with Clusters and classes written in either
//! version. Every combination creates the topology and converges to zero writes.

mod support;

use serde_json::Value;
use support::{Env, NS};
use topograph_api::convert::{self, Options, Version};
use topograph_api::object::ObjectExt;

fn in_version(objects: &[Value], version: Version) -> Vec<Value> {
    let options = Options {
        conversion_data: false,
        ..Options::default()
    };
    objects
        .iter()
        .map(|o| convert::convert(o, version, &options).unwrap())
        .collect()
}

/// The `apiVersion` of the reconcile's own Apply entry on each MachineDeployment.
async fn applied_in(env: &Env) -> Vec<String> {
    let mut versions = Vec::new();
    for md in ["md-0", "md-1", "md-2"] {
        let md = env.machine_deployment("dev", md).await.unwrap();
        for entry in md["metadata"]["managedFields"].as_array().unwrap() {
            if entry["manager"] == "topograph" && entry["operation"] == "Apply" {
                versions.push(entry["apiVersion"].as_str().unwrap().to_string());
            }
        }
    }
    versions
}

async fn converges(env: &Env) {
    let outcomes = env.converge("dev").await;
    assert!(!outcomes.is_empty(), "the topology was created");
    assert_eq!(env.reconcile("dev").await.unwrap().writes, 0);
    assert_eq!(env.condition("dev").await["status"], "True");
    for md in ["md-0", "md-1", "md-2"] {
        assert!(env.machine_deployment("dev", md).await.is_some(), "{md}");
    }
}

#[tokio::test]
async fn a_v1beta2_cluster_and_class_on_a_v1beta2_management_cluster() {
    let (class, cluster) = support::quick_start();
    let class = in_version(&class, Version::V1Beta2);
    let cluster = in_version(&[cluster], Version::V1Beta2).remove(0);
    assert_eq!(cluster.api_version(), "cluster.x-k8s.io/v1beta2");
    let env = Env::start(class, vec![cluster]).await;
    converges(&env).await;
    let stored = env
        .server
        .store()
        .get_object("cluster.x-k8s.io/v1beta2", "Cluster", NS, "dev")
        .unwrap();
    assert_eq!(
        stored["spec"]["topology"]["classRef"]["name"],
        "quick-start"
    );
    assert_eq!(
        stored["spec"]["controlPlaneRef"]["apiGroup"], "controlplane.cluster.x-k8s.io",
        "the references the topology set, as v1beta2 holds them: {}",
        stored["spec"]
    );
}

#[tokio::test]
async fn a_v1beta1_cluster_on_a_v1beta2_management_cluster() {
    let env = Env::quick_start().await;
    converges(&env).await;
    assert_eq!(
        applied_in(&env).await,
        ["cluster.x-k8s.io/v1beta2"; 3],
        "applied in the version the server prefers, as Cluster API applies"
    );
    // The owner reference to the Cluster names it in that version too.
    let mhc = env
        .owned("cluster.x-k8s.io/v1beta1", "MachineHealthCheck", "dev")
        .await
        .remove(0);
    let owners = mhc["metadata"]["ownerReferences"].as_array().unwrap();
    let cluster_owners: Vec<&Value> = owners.iter().filter(|o| o["kind"] == "Cluster").collect();
    assert_eq!(cluster_owners.len(), 1, "{owners:?}");
    assert_eq!(cluster_owners[0]["apiVersion"], "cluster.x-k8s.io/v1beta2");
    let mds =
        env.server
            .store()
            .list_objects("cluster.x-k8s.io/v1beta2", "MachineDeployment", Some(NS));
    assert_eq!(mds.len(), 3);
    for md in &mds {
        assert!(
            md.pointer("/spec/template/spec/bootstrap/configRef/apiGroup")
                .is_some(),
            "stored in v1beta2: {}",
            md["spec"]
        );
    }
}

#[tokio::test]
async fn a_v1beta1_cluster_on_a_v1beta1_management_cluster() {
    let (class, cluster) = support::quick_start();
    let env = Env::start_v1beta1(class, vec![cluster]).await;
    converges(&env).await;
    assert_eq!(applied_in(&env).await, ["cluster.x-k8s.io/v1beta1"; 3]);
}

/// With providers simulated on a management cluster storing v1beta2, a converged
/// Cluster stays still: nothing (the topology, the providers, Cluster API's core
/// controller) writes a field the version it reads in cannot hold, which would be
/// written again on every pass.
#[tokio::test]
async fn a_converged_cluster_with_providers_stays_still() {
    let (class, cluster) = support::quick_start();
    let delay = std::time::Duration::from_millis(50);
    let env = Env::start_with(class, vec![cluster], Some(delay)).await;
    for _ in 0..8 {
        env.reconcile("dev").await.unwrap();
        tokio::time::sleep(delay * 6).await;
    }
    assert_eq!(env.reconcile("dev").await.unwrap().writes, 0);
    let before = env.server.store().current_rv();
    tokio::time::sleep(delay * 30).await;
    assert_eq!(
        env.server.store().current_rv(),
        before,
        "something kept writing"
    );
    assert_eq!(env.cluster("dev").await["status"]["phase"], "Provisioned");
}
