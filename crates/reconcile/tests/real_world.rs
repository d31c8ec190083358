//! Cluster API's own published ClusterClasses and Cluster templates (the docker
//! quick-start and the in-memory provider's scale-test class, from
//! `../shared/real-world/`), reconciled on the in-memory API server with simulated
//! providers: each Cluster is provisioned to `TopologyReconciled`, a converged Cluster
//! costs no write, and a version upgrade rolls out control plane first.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Env, NS, V1BETA1};
use topograph_api::object::ObjectExt;

fn real_world() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-world/cluster-api-v1.10.10");
    dir.exists().then_some(dir)
}

/// The documents of `file`, clusterctl's variables substituted, in namespace `NS`.
fn load(dir: &std::path::Path, file: &str) -> Vec<Value> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let values: BTreeMap<String, String> = [
        ("CLUSTER_NAME", "dev"),
        ("NAMESPACE", NS),
        ("KUBERNETES_VERSION", "v1.30.0"),
        ("CONTROL_PLANE_MACHINE_COUNT", "3"),
        ("WORKER_MACHINE_COUNT", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let text = topograph_api::envsubst::substitute(&text, &values)
        .unwrap_or_else(|missing| panic!("{file}: unset variables {missing:?}"));
    let (docs, errors) = topograph_api::load::parse_documents(file, &text);
    assert!(errors.is_empty(), "{file}: {errors:?}");
    docs.into_iter()
        .map(|d| {
            let mut v = d.value;
            v["metadata"]["namespace"] = json!(NS);
            v
        })
        .collect()
}

/// Reconciles until the Cluster's topology is reconciled for its generation and a
/// reconcile writes nothing (providers answer in between).
async fn provisioned(env: &Env, what: &str) {
    for _ in 0..60 {
        let outcome = env
            .reconcile("dev")
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let c = env.cluster("dev").await;
        let condition = env.condition("dev").await;
        if outcome.writes == 0
            && condition["status"] == "True"
            && condition["observedGeneration"] == c["metadata"]["generation"]
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not provisioned: {}", env.condition("dev").await);
}

#[tokio::test]
async fn cluster_api_published_classes_provision_converge_and_upgrade() {
    let Some(dir) = real_world() else {
        eprintln!("skipping: ../shared/real-world is not present");
        return;
    };
    for (class_file, cluster_file) in [
        (
            "clusterclass-quick-start.yaml",
            "cluster-template-development.yaml",
        ),
        (
            "clusterclass-in-memory.yaml",
            "cluster-template-in-memory.yaml",
        ),
    ] {
        let class = load(&dir, class_file);
        let clusters: Vec<Value> = load(&dir, cluster_file)
            .into_iter()
            .filter(|o| o.kind() == "Cluster")
            .collect();
        assert_eq!(clusters.len(), 1, "{cluster_file}");
        let env = Env::start_with(class, clusters, Some(Duration::from_millis(20))).await;
        provisioned(&env, class_file).await;

        let mds = env.owned(V1BETA1, "MachineDeployment", "dev").await;
        assert!(!mds.is_empty(), "{class_file}: no MachineDeployment");
        let cp = env.control_plane("dev").await;
        assert_eq!(cp["spec"]["version"], "v1.30.0", "{class_file}");

        // An upgrade: the control plane moves first, then the workers; in the end
        // everything runs the new version and the topology is reconciled again.
        let cluster = env.cluster("dev").await;
        env.patch(
            &cluster,
            json!({"spec": {"topology": {"version": "v1.31.0"}}}),
        )
        .await;
        env.reconcile("dev").await.unwrap();
        let cp = env.control_plane("dev").await;
        assert_eq!(
            cp["spec"]["version"], "v1.31.0",
            "{class_file}: control plane first"
        );
        for md in env.owned(V1BETA1, "MachineDeployment", "dev").await {
            assert_eq!(
                md["spec"]["template"]["spec"]["version"],
                "v1.30.0",
                "{class_file}: {} moved before the control plane finished",
                md.name()
            );
        }
        provisioned(&env, &format!("{class_file} upgrade")).await;
        for md in env.owned(V1BETA1, "MachineDeployment", "dev").await {
            assert_eq!(
                md["spec"]["template"]["spec"]["version"],
                "v1.31.0",
                "{class_file}: {}",
                md.name()
            );
        }
    }
}

/// Cluster API's own e2e class in v1beta2, whose Cluster has a MachinePool beside its
/// MachineDeployment, on a management cluster whose providers declare the v1beta2
/// contract: provisioned with the pool running, then upgraded, the pool included.
#[tokio::test]
async fn cluster_api_e2e_class_with_a_machine_pool_provisions_and_upgrades() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-world/providers/capi-e2e-quick-start-v1beta2");
    if !dir.exists() {
        eprintln!("skipping: ../shared/real-world/providers is not present");
        return;
    }
    let mut values: BTreeMap<String, String> = std::fs::read_to_string(dir.join("values.env"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect();
    values.insert("CLUSTER_NAME".into(), "dev".into());
    let load = |file: &str| {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let text = topograph_api::envsubst::substitute(&text, &values)
            .unwrap_or_else(|missing| panic!("{file}: unset variables {missing:?}"));
        let (docs, errors) = topograph_api::load::parse_documents(file, &text);
        assert!(errors.is_empty(), "{file}: {errors:?}");
        docs.into_iter()
            .map(|d| {
                let mut v = d.value;
                v["metadata"]["namespace"] = json!(NS);
                v
            })
            .collect::<Vec<Value>>()
    };
    let class = load("clusterclass-quick-start.yaml");
    let clusters: Vec<Value> = load("cluster-template-topology.kustomized.yaml")
        .into_iter()
        .filter(|o| o.kind() == "Cluster")
        .collect();
    let env = Env::start_declaring(
        class,
        clusters,
        Some(Duration::from_millis(20)),
        topograph_api::contract::Contract::V1Beta2,
    )
    .await;
    provisioned(&env, "capi-e2e-quick-start-v1beta2").await;
    let pools = env.owned(V1BETA1, "MachinePool", "dev").await;
    assert_eq!(pools.len(), 1);
    let pool = env.machine_pool("dev", "mp-0").await.unwrap();
    assert_eq!(pool["spec"]["replicas"], 2);
    assert_eq!(pool["spec"]["failureDomains"], json!(["fd4"]));
    for path in ["bootstrap/configRef", "infrastructureRef"] {
        let object = env.pool_object(&pool, path).await.unwrap();
        assert_eq!(
            object.labels()["topology.cluster.x-k8s.io/pool-name"],
            "mp-0",
            "{path}"
        );
    }

    let cluster = env.cluster("dev").await;
    env.patch(
        &cluster,
        json!({"spec": {"topology": {"version": "v1.31.0"}}}),
    )
    .await;
    env.reconcile("dev").await.unwrap();
    assert_eq!(env.control_plane("dev").await["spec"]["version"], "v1.31.0");
    let pool = env.machine_pool("dev", "mp-0").await.unwrap();
    assert_eq!(
        pool["spec"]["template"]["spec"]["version"], "v1.30.0",
        "the pool waits for the control plane"
    );
    provisioned(&env, "capi-e2e-quick-start-v1beta2 upgrade").await;
    let pool = env.machine_pool("dev", "mp-0").await.unwrap();
    assert_eq!(pool["spec"]["template"]["spec"]["version"], "v1.31.0");
}
