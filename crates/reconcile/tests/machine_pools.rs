//! MachinePools reconciled against the in-memory API server: created after the
//! MachineDeployments (infrastructure machine pool, bootstrap config, then the pool),
//! scaled and edited in place (their objects keep their names: no rotation), upgraded
//! after the control plane one pool at a time, held back while the control plane is
//! not stable, deleted with their objects, cleaned up after a failed creation, and
//! zero writes once converged.

mod support;

use serde_json::{Value, json};
use support::{Env, V1BETA1};
use topograph_api::object::ObjectExt;

const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

/// The quick-start Cluster with these MachinePools beside its MachineDeployments.
fn with_pools(pools: Value) -> (Vec<Value>, Value) {
    let (class, mut cluster) = support::quick_start();
    cluster["spec"]["topology"]["workers"]["machinePools"] = pools;
    (class, cluster)
}

/// The quick-start Cluster with MachinePools only.
fn pools_only(pools: Value) -> (Vec<Value>, Value) {
    let (class, mut cluster) = support::quick_start();
    cluster["spec"]["topology"]["workers"] = json!({ "machinePools": pools });
    (class, cluster)
}

async fn set_pools(env: &Env, pools: Value) {
    let cluster = env.cluster("dev").await;
    env.patch(
        &cluster,
        json!({"spec": {"topology": {"workers": {"machinePools": pools}}}}),
    )
    .await;
}

/// Reports a MachinePool rolled out at its current generation, as Cluster API's
/// MachinePool controller does (v1beta1, with the v1beta2 counters beside).
async fn pool_reports(env: &Env, topology_name: &str) {
    let mp = env.machine_pool("dev", topology_name).await.unwrap();
    let replicas = mp["spec"]["replicas"].clone();
    env.patch_status(
        &mp,
        json!({"observedGeneration": mp["metadata"]["generation"], "replicas": replicas,
               "readyReplicas": replicas, "phase": "Running",
               "v1beta2": {"upToDateReplicas": replicas, "readyReplicas": replicas}}),
    )
    .await;
}

fn pool_version(mp: &Value) -> &str {
    mp["spec"]["template"]["spec"]["version"]
        .as_str()
        .unwrap_or_default()
}

fn ref_name<'a>(mp: &'a Value, path: &str) -> &'a str {
    mp.pointer(&format!("/spec/template/spec/{path}/name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Where the first write creating or changing a `kind` is among `written`.
fn first_write(written: &[(String, &'static str)], kind: &str) -> usize {
    written
        .iter()
        .position(|(k, verb)| k == kind && *verb != "delete")
        .unwrap_or_else(|| panic!("no write of a {kind} in {written:#?}"))
}

#[tokio::test]
async fn pools_are_created_after_the_machine_deployments_then_converge_to_zero_writes() {
    let (class, cluster) = with_pools(json!([
        {"class": "default-worker", "name": "mp-0", "replicas": 2}
    ]));
    let env = Env::start(class, vec![cluster]).await;
    let first = env.reconcile("dev").await.unwrap();
    // The quick-start objects (see reconcile.rs), then the pool and its two objects.
    assert_eq!(first.created, 4 + 3 * 3 + 2 + 1 + 3, "{first:?}");

    let mp = env.machine_pool("dev", "mp-0").await.unwrap();
    assert_eq!(mp["spec"]["replicas"], 2);
    assert_eq!(pool_version(&mp), "v1.30.0");
    assert_eq!(mp.labels()["topology.cluster.x-k8s.io/owned"], "");
    let infra = env.pool_object(&mp, "infrastructureRef").await.unwrap();
    let bootstrap = env.pool_object(&mp, "bootstrap/configRef").await.unwrap();
    assert_eq!(infra.kind(), "DockerMachinePool");
    assert_eq!(bootstrap.kind(), "KubeadmConfig");
    // The class's patch for pools reached the infrastructure object.
    assert_eq!(
        infra["spec"]["template"]["customImage"],
        "kindest/node:v1.30.0"
    );
    for object in [&infra, &bootstrap] {
        assert_eq!(
            object.labels()["topology.cluster.x-k8s.io/pool-name"],
            "mp-0"
        );
        let owners = object["metadata"]["ownerReferences"].as_array().unwrap();
        assert!(
            owners
                .iter()
                .any(|o| o["kind"] == "Cluster" && o["name"] == "dev"),
            "{object}"
        );
    }

    // Cluster API's order: every MachineDeployment first; for the pool, its
    // infrastructure machine pool, its bootstrap config, then the pool.
    let written = env.written();
    let last_md = written
        .iter()
        .rposition(|(kind, verb)| kind == "MachineDeployment" && *verb != "delete")
        .unwrap();
    let infra_at = first_write(&written, "DockerMachinePool");
    let bootstrap_at = first_write(&written, "KubeadmConfig");
    let pool_at = first_write(&written, "MachinePool");
    assert!(
        last_md < infra_at && infra_at < bootstrap_at && bootstrap_at < pool_at,
        "{written:#?}"
    );
    // Fifteen creations recorded on the Cluster (the health checks' on themselves): the
    // tenth and later ones combined into one Event counting six, as Cluster API's
    // recorder combines them.
    let combined: Vec<Value> = env
        .other
        .list("v1", "Event", "default", &[])
        .await
        .unwrap()
        .into_iter()
        .filter(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("(combined from similar events): "))
        })
        .collect();
    assert_eq!(combined.len(), 1, "{combined:#?}");
    assert_eq!(
        combined[0]["message"],
        format!(
            "(combined from similar events): Created MachinePool \"default/{}\"",
            mp.name()
        )
    );
    assert_eq!(combined[0]["count"], 6);
    assert_eq!(combined[0]["involvedObject"]["kind"], "Cluster");

    let before = env.server.counts();
    let again = env.reconcile("dev").await.unwrap();
    assert_eq!(again, topograph_reconcile::Outcome::default());
    assert_eq!(
        env.server.counts().writes(),
        before.writes(),
        "a converged Cluster with a pool costs reads only"
    );
}

#[tokio::test]
async fn scaling_and_template_edits_patch_the_pool_and_its_objects_in_place() {
    let (class, cluster) = with_pools(json!([
        {"class": "default-worker", "name": "mp-0", "replicas": 2}
    ]));
    let env = Env::start(class, vec![cluster]).await;
    env.converge("dev").await;
    let mp = env.machine_pool("dev", "mp-0").await.unwrap();
    let names = (
        ref_name(&mp, "bootstrap/configRef").to_string(),
        ref_name(&mp, "infrastructureRef").to_string(),
    );

    set_pools(
        &env,
        json!([{"class": "default-worker", "name": "mp-0", "replicas": 4}]),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(
        (outcome.created, outcome.updated, outcome.deleted),
        (0, 1, 0),
        "{outcome:?}"
    );
    let scaled = env.machine_pool("dev", "mp-0").await.unwrap();
    assert_eq!(scaled.name(), mp.name());
    assert_eq!(scaled["spec"]["replicas"], 4);
    assert_eq!(ref_name(&scaled, "bootstrap/configRef"), names.0);
    assert_eq!(ref_name(&scaled, "infrastructureRef"), names.1);
    let events = env.events().await;
    assert!(
        events.contains(&format!(
            "TopologyUpdate: Updated MachinePool \"default/{}\"",
            mp.name()
        )),
        "{events:#?}"
    );

    // A class template edit changes the pool's object itself, under its name.
    let template = env
        .get(
            INFRA,
            "DockerMachinePoolTemplate",
            "quick-start-default-worker-machinepooltemplate",
        )
        .await
        .unwrap();
    env.patch(
        &template,
        json!({"spec": {"template": {"spec": {"template": {"preLoadImages": ["busybox"]}}}}}),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(
        (outcome.created, outcome.updated, outcome.deleted),
        (0, 1, 0),
        "{outcome:?}"
    );
    let infra = env.get(INFRA, "DockerMachinePool", &names.1).await.unwrap();
    assert_eq!(infra["spec"]["template"]["preLoadImages"][0], "busybox");
    assert_eq!(
        infra["spec"]["template"]["customImage"],
        "kindest/node:v1.30.0"
    );
    assert_eq!(
        ref_name(
            &env.machine_pool("dev", "mp-0").await.unwrap(),
            "infrastructureRef"
        ),
        names.1,
        "never rotated"
    );
    assert!(env.events().await.contains(&format!(
        "TopologyUpdate: Updated DockerMachinePool \"default/{}\"",
        names.1
    )));
    // Taking the field out of the class template takes it out of the object: the
    // topology set it, so it does not stay behind.
    env.patch(
        &env.get(
            INFRA,
            "DockerMachinePoolTemplate",
            "quick-start-default-worker-machinepooltemplate",
        )
        .await
        .unwrap(),
        json!({"spec": {"template": {"spec": {"template": {"preLoadImages": null}}}}}),
    )
    .await;
    env.reconcile("dev").await.unwrap();
    let infra = env.get(INFRA, "DockerMachinePool", &names.1).await.unwrap();
    assert!(
        infra["spec"]["template"].get("preLoadImages").is_none(),
        "{infra}"
    );
    assert!(env.converge("dev").await.is_empty());
}

#[tokio::test]
async fn pools_upgrade_after_the_control_plane_one_at_a_time() {
    let (class, cluster) = pools_only(json!([
        {"class": "default-worker", "name": "mp-0", "replicas": 1},
        {"class": "default-worker", "name": "mp-1", "replicas": 2}
    ]));
    let env = Env::start(class, vec![cluster]).await;
    env.converge("dev").await;
    env.control_plane_reports().await;
    for mp in ["mp-0", "mp-1"] {
        pool_reports(&env, mp).await;
    }
    env.converge("dev").await;

    let cluster = env.cluster("dev").await;
    env.patch(
        &cluster,
        json!({"spec": {"topology": {"version": "v1.31.0"}}}),
    )
    .await;
    env.reconcile("dev").await.unwrap();
    assert_eq!(env.control_plane("dev").await["spec"]["version"], "v1.31.0");
    let mut names = Vec::new();
    for mp in ["mp-0", "mp-1"] {
        let pool = env.machine_pool("dev", mp).await.unwrap();
        assert_eq!(pool_version(&pool), "v1.30.0", "{mp} waits");
        names.push(pool.name().to_string());
    }
    names.sort();
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "ClusterUpgrading");
    assert_eq!(
        condition["message"].as_str().unwrap(),
        format!(
            "Cluster is upgrading to v1.31.0\n  * KubeadmControlPlane upgrading to version v1.31.0\n  * MachinePools {} pending upgrade to version v1.31.0",
            names.join(", ")
        )
    );
    // While the control plane has not reported the new version, nothing moves.
    env.reconcile("dev").await.unwrap();
    let mp0 = env.machine_pool("dev", "mp-0").await.unwrap();
    assert_eq!(pool_version(&mp0), "v1.30.0");

    env.control_plane_reports().await;
    env.reconcile("dev").await.unwrap();
    let mp0 = env.machine_pool("dev", "mp-0").await.unwrap();
    let mp1 = env.machine_pool("dev", "mp-1").await.unwrap();
    assert_eq!(pool_version(&mp0), "v1.31.0");
    assert_eq!(pool_version(&mp1), "v1.30.0", "one pool at a time");
    // The pool's infrastructure object follows its version (the class's patch reads
    // builtin.machinePool.version); the waiting pool's is left alone.
    let infra0 = env.pool_object(&mp0, "infrastructureRef").await.unwrap();
    let infra1 = env.pool_object(&mp1, "infrastructureRef").await.unwrap();
    assert_eq!(
        infra0["spec"]["template"]["customImage"],
        "kindest/node:v1.31.0"
    );
    assert_eq!(
        infra1["spec"]["template"]["customImage"],
        "kindest/node:v1.30.0"
    );
    let message = env.condition("dev").await["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains(&format!(
            "MachinePool {} upgrading to version v1.31.0",
            mp0.name()
        )),
        "{message}"
    );
    assert!(env.events().await.contains(&format!(
        "TopologyUpdate: Updated MachinePool \"default/{}\" with version change from v1.30.0 to v1.31.0",
        mp0.name()
    )));

    // mp-0 has not observed its new generation: mp-1 still waits.
    env.reconcile("dev").await.unwrap();
    let mp1 = env.machine_pool("dev", "mp-1").await.unwrap();
    assert_eq!(pool_version(&mp1), "v1.30.0");
    pool_reports(&env, "mp-0").await;
    env.reconcile("dev").await.unwrap();
    let mp1 = env.machine_pool("dev", "mp-1").await.unwrap();
    assert_eq!(pool_version(&mp1), "v1.31.0");
    pool_reports(&env, "mp-1").await;
    env.converge("dev").await;
    let condition = env.condition("dev").await;
    assert_eq!(condition["status"], "True", "{condition}");
    assert!(
        !env.cluster("dev")
            .await
            .annotations()
            .contains_key("topology.internal.cluster.x-k8s.io/upgrade-step")
    );
}

#[tokio::test]
async fn new_pools_wait_for_the_control_plane_and_removed_pools_go_with_their_objects() {
    let (class, cluster) = with_pools(json!([
        {"class": "default-worker", "name": "mp-0", "replicas": 1}
    ]));
    let env = Env::start(class, vec![cluster]).await;
    env.converge("dev").await;
    // The control plane has not reported a version yet: a new pool waits.
    let two = json!([
        {"class": "default-worker", "name": "mp-0", "replicas": 1},
        {"class": "default-worker", "name": "mp-1", "replicas": 1}
    ]);
    set_pools(&env, two.clone()).await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(outcome.created, 0, "{outcome:?}");
    assert!(env.machine_pool("dev", "mp-1").await.is_none());
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "ClusterUpgrading");
    assert!(
        condition["message"].as_str().unwrap().ends_with(
            "MachinePool mp-1 creation deferred while control plane upgrade is in progress"
        ),
        "{condition}"
    );
    env.control_plane_reports().await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(outcome.created, 3, "{outcome:?}");
    env.converge("dev").await;

    let mp1 = env.machine_pool("dev", "mp-1").await.unwrap();
    let infra = env.pool_object(&mp1, "infrastructureRef").await.unwrap();
    let bootstrap = env.pool_object(&mp1, "bootstrap/configRef").await.unwrap();
    set_pools(
        &env,
        json!([{"class": "default-worker", "name": "mp-0", "replicas": 1}]),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(
        (outcome.created, outcome.updated, outcome.deleted),
        (0, 0, 3),
        "{outcome:?}"
    );
    assert!(env.machine_pool("dev", "mp-1").await.is_none());
    assert!(
        env.get(INFRA, infra.kind(), infra.name()).await.is_none(),
        "the infrastructure machine pool goes with its pool"
    );
    assert!(
        env.get(bootstrap.api_version(), bootstrap.kind(), bootstrap.name())
            .await
            .is_none(),
        "the bootstrap config goes with its pool"
    );
    assert!(env.machine_pool("dev", "mp-0").await.is_some());
    assert!(env.events().await.contains(&format!(
        "TopologyDelete: Deleted MachinePool \"default/{}\"",
        mp1.name()
    )));
    assert!(env.converge("dev").await.is_empty());
}

#[tokio::test]
async fn a_failed_creation_leaves_no_objects_behind() {
    let (class, cluster) = with_pools(json!([
        {"class": "default-worker", "name": "mp-0", "replicas": 1}
    ]));
    let env = Env::start(class, vec![cluster]).await;
    // The bootstrap provider's kind is not served: the pool's bootstrap config cannot
    // be made, after its infrastructure machine pool was.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                     "metadata": {"name": "kubeadmconfigs.bootstrap.cluster.x-k8s.io"}});
    env.other.delete(&crd).await.unwrap();
    let error = env.reconcile("dev").await.unwrap_err();
    assert!(
        error.starts_with("failed to create MachinePool MachinePool: "),
        "{error}"
    );
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "ReconcileFailed");
    // Made, then cleaned up: the creation itself was recorded among the combined
    // Events.
    let written = env.written();
    let made = first_write(&written, "DockerMachinePool");
    assert!(
        written[made..]
            .iter()
            .any(|(kind, verb)| kind == "DockerMachinePool" && *verb == "delete"),
        "{written:#?}"
    );
    assert!(
        env.events()
            .await
            .iter()
            .any(|e| e.starts_with("TopologyCreate: (combined from similar events): ")),
    );
    assert!(
        env.owned(INFRA, "DockerMachinePool", "dev")
            .await
            .is_empty(),
        "the infrastructure machine pool made for the pool is cleaned up"
    );
    assert!(env.owned(V1BETA1, "MachinePool", "dev").await.is_empty());
    // The MachineDeployments before it were made all the same.
    assert_eq!(
        env.owned(V1BETA1, "MachineDeployment", "dev").await.len(),
        3
    );
}

async fn reconcile_until(env: &Env, what: &str, mut done: impl AsyncFnMut(&Env) -> bool) {
    for _ in 0..100 {
        env.reconcile("dev").await.unwrap();
        if done(env).await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    }
    panic!(
        "{what}: not reached; condition {}",
        env.condition("dev").await
    );
}

/// With providers simulated (the MachinePool controller's status included), pools come
/// up, follow an upgrade once the control plane is done, and then everything stays
/// still: no status the simulated controller writes fails to read back the same.
async fn simulated_pools_upgrade_and_settle(contract: topograph_api::contract::Contract) {
    let (class, cluster) = with_pools(json!([
        {"class": "default-worker", "name": "mp-0", "replicas": 2},
        {"class": "default-worker", "name": "mp-1"}
    ]));
    let delay = std::time::Duration::from_millis(50);
    let env = Env::start_declaring(class, vec![cluster], Some(delay), contract).await;
    reconcile_until(&env, "pools running", async |env| {
        let mut running = 0;
        for mp in ["mp-0", "mp-1"] {
            if let Some(pool) = env.machine_pool("dev", mp).await {
                running += usize::from(pool["status"]["phase"] == "Running");
            }
        }
        running == 2 && env.condition("dev").await["status"] == "True"
    })
    .await;
    let mp0 = env.machine_pool("dev", "mp-0").await.unwrap();
    assert_eq!(mp0["status"]["v1beta2"]["upToDateReplicas"], 2, "{mp0}");
    assert_eq!(mp0["status"]["infrastructureReady"], true, "{mp0}");
    let mp1 = env.machine_pool("dev", "mp-1").await.unwrap();
    assert!(
        mp1["spec"].get("replicas").is_none(),
        "left to an autoscaler"
    );
    assert_eq!(mp1["status"]["replicas"], 1, "{mp1}");

    let cluster = env.cluster("dev").await;
    env.patch(
        &cluster,
        json!({"spec": {"topology": {"version": "v1.31.0"}}}),
    )
    .await;
    let mut seen_cp_first = false;
    reconcile_until(&env, "upgraded", async |env| {
        let cp = env.control_plane("dev").await;
        let mut old = 0;
        for mp in ["mp-0", "mp-1"] {
            let pool = env.machine_pool("dev", mp).await.unwrap();
            old += usize::from(pool_version(&pool) == "v1.30.0");
        }
        if cp["spec"]["version"] == "v1.31.0" && old == 2 {
            seen_cp_first = true;
        }
        old == 0 && env.condition("dev").await["status"] == "True"
    })
    .await;
    assert!(seen_cp_first, "the control plane moved first");
    for mp in ["mp-0", "mp-1"] {
        let pool = env.machine_pool("dev", mp).await.unwrap();
        let infra = env.pool_object(&pool, "infrastructureRef").await.unwrap();
        assert_eq!(
            infra["spec"]["template"]["customImage"],
            "kindest/node:v1.31.0"
        );
    }

    for _ in 0..4 {
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
}

#[tokio::test]
async fn simulated_v1beta1_contract_pools_upgrade_and_settle() {
    simulated_pools_upgrade_and_settle(topograph_api::contract::Contract::V1Beta1).await;
}

#[tokio::test]
async fn simulated_v1beta2_contract_pools_upgrade_and_settle() {
    simulated_pools_upgrade_and_settle(topograph_api::contract::Contract::V1Beta2).await;
}
