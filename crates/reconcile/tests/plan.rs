//! Plans and impact against the in-memory API server: every plan is checked against
//! what the change and a following reconcile then actually do to the server's objects
//! (create, modify and delete cases), and a dry run never writes.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use support::{Env, V1BETA1};
use topograph_api::object::ObjectExt;
use topograph_engine::Local;
use topograph_reconcile::hooks::NoHooks;
use topograph_reconcile::plan::{ImpactItem, Plan, clean, impact, plan_cluster};

type Key = (String, String, String);

fn key(o: &Value) -> Key {
    (
        o.kind().to_string(),
        o.namespace().to_string(),
        o.name().to_string(),
    )
}

/// Created, modified and deleted objects between two snapshots of the server (Events
/// and status-only changes left out, as plans leave them out).
fn actual(before: &[Value], after: &[Value]) -> [BTreeSet<Key>; 3] {
    let index = |objects: &[Value]| -> BTreeMap<Key, Value> {
        objects
            .iter()
            .filter(|o| o.kind() != "Event")
            .map(|o| (key(o), clean(o)))
            .collect()
    };
    let (before, after) = (index(before), index(after));
    let created = after
        .keys()
        .filter(|k| !before.contains_key(*k))
        .cloned()
        .collect();
    let deleted = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .cloned()
        .collect();
    let modified = after
        .iter()
        .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
        .map(|(k, _)| k.clone())
        .collect();
    [created, modified, deleted]
}

fn planned(plan: &Plan) -> [BTreeSet<Key>; 3] {
    let keys = |list: &[topograph_reconcile::plan::PlannedObject]| {
        list.iter()
            .map(|o| (o.kind.clone(), o.namespace.clone(), o.name.clone()))
            .collect()
    };
    [
        keys(&plan.created),
        keys(&plan.modified),
        keys(&plan.deleted),
    ]
}

/// Plans `proposed` for Cluster `name`, checks the dry run wrote nothing, then applies
/// `proposed` for real, reconciles once and checks the plan named exactly what changed.
async fn plan_then_check(env: &Env, proposed: Vec<Value>, name: &str) -> Plan {
    let writes = env.server.counts().writes();
    let plan = plan_cluster(&env.api, &Local, &NoHooks, &proposed, "default", name)
        .await
        .unwrap();
    assert_eq!(
        env.server.counts().writes(),
        writes,
        "a plan writes nothing"
    );
    let before = env.server.snapshot();
    for object in &proposed {
        match env
            .other
            .get(
                object.api_version(),
                object.kind(),
                object.namespace(),
                object.name(),
            )
            .await
            .unwrap()
        {
            None => {
                env.other.create(object).await.unwrap();
            }
            Some(current) => {
                let mut object = object.clone();
                object["metadata"]["resourceVersion"] =
                    current["metadata"]["resourceVersion"].clone();
                env.other.replace(&object).await.unwrap();
            }
        }
    }
    env.reconcile(name).await.unwrap();
    let after = env.server.snapshot();
    let [created, modified, deleted] = actual(&before, &after);
    let [p_created, p_modified, p_deleted] = planned(&plan);
    assert_eq!(p_created, created, "created: plan vs reconcile");
    assert_eq!(p_modified, modified, "modified: plan vs reconcile");
    assert_eq!(p_deleted, deleted, "deleted: plan vs reconcile");
    // The patches say what changed, exactly.
    for object in &plan.modified {
        let was = before
            .iter()
            .find(|o| {
                key(o)
                    == (
                        object.kind.clone(),
                        object.namespace.clone(),
                        object.name.clone(),
                    )
            })
            .unwrap();
        let now = after.iter().find(|o| key(o) == key(was)).unwrap();
        let patch: json_patch::Patch = serde_json::from_value(object.patch.clone()).unwrap();
        let mut patched = clean(was);
        json_patch::patch(&mut patched, &patch).unwrap();
        assert_eq!(patched, clean(now), "{} {}", object.kind, object.name);
        assert!(object.diff.starts_with("--- a/"), "{}", object.diff);
    }
    plan
}

#[tokio::test]
async fn a_new_cluster_plans_exactly_the_objects_its_first_reconcile_creates() {
    let (class, cluster) = support::quick_start();
    let env = Env::start(class, vec![]).await;
    let plan = plan_then_check(&env, vec![cluster], "dev").await;
    assert!(plan.errors.is_empty(), "{:?}", plan.errors);
    let kinds: BTreeSet<&str> = plan.created.iter().map(|o| o.kind.as_str()).collect();
    for kind in [
        "Cluster",
        "DockerCluster",
        "KubeadmControlPlane",
        "MachineDeployment",
        "MachineHealthCheck",
    ] {
        assert!(kinds.contains(kind), "{kind} in {kinds:?}");
    }
}

#[tokio::test]
async fn scaling_and_a_variable_change_plan_the_modifications_and_rotations() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let mut cluster = env.cluster("dev").await;
    cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = json!(5);
    cluster["spec"]["topology"]["variables"][0]["value"] = json!("mirror.example.com/k8s");
    let plan = plan_then_check(&env, vec![cluster], "dev").await;
    let md_patch = plan
        .modified
        .iter()
        .filter(|o| o.kind == "MachineDeployment")
        .flat_map(|o| o.patch.as_array().cloned().unwrap_or_default())
        .collect::<Vec<_>>();
    assert!(
        md_patch
            .iter()
            .any(|op| op["path"] == "/spec/replicas" && op["value"] == 5),
        "{md_patch:?}"
    );
    assert!(
        plan.modified
            .iter()
            .any(|o| o.kind == "KubeadmControlPlane")
    );
}

#[tokio::test]
async fn removing_a_pool_plans_its_deletion_with_what_goes_with_it() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let mut cluster = env.cluster("dev").await;
    cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array_mut()
        .unwrap()
        .retain(|md| md["name"] != "md-2");
    let plan = plan_then_check(&env, vec![cluster], "dev").await;
    let deleted: BTreeSet<&str> = plan.deleted.iter().map(|o| o.kind.as_str()).collect();
    assert!(deleted.contains("MachineDeployment"), "{deleted:?}");
    assert!(deleted.contains("MachineHealthCheck"), "{deleted:?}");
}

/// The kinds of a plan's objects in one list.
fn kinds(list: &[topograph_reconcile::plan::PlannedObject]) -> BTreeSet<&str> {
    list.iter().map(|o| o.kind.as_str()).collect()
}

#[tokio::test]
async fn machine_pools_are_planned_like_machine_deployments() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    // A stable control plane, so that a new pool is not held back.
    let cp = env.control_plane("dev").await;
    let version = cp["spec"]["version"].clone();
    env.patch_status(
        &cp,
        json!({"version": version, "ready": true, "initialized": true}),
    )
    .await;
    env.converge("dev").await;

    let mut cluster = env.cluster("dev").await;
    cluster["spec"]["topology"]["workers"]["machinePools"] =
        json!([{"class": "default-worker", "name": "mp-0", "replicas": 1}]);
    let plan = plan_then_check(&env, vec![cluster], "dev").await;
    assert!(plan.errors.is_empty(), "{:?}", plan.errors);
    assert_eq!(
        kinds(&plan.created),
        BTreeSet::from(["DockerMachinePool", "KubeadmConfig", "MachinePool"]),
        "{plan:?}"
    );

    let mut cluster = env.cluster("dev").await;
    cluster["spec"]["topology"]["workers"]["machinePools"][0]["replicas"] = json!(3);
    let plan = plan_then_check(&env, vec![cluster], "dev").await;
    let pool = plan
        .modified
        .iter()
        .find(|o| o.kind == "MachinePool")
        .unwrap_or_else(|| panic!("{plan:?}"));
    assert!(
        pool.patch
            .as_array()
            .unwrap()
            .iter()
            .any(|op| op["path"] == "/spec/replicas" && op["value"] == 3),
        "{}",
        pool.patch
    );
    assert!(plan.created.is_empty(), "in place: {plan:?}");

    let mut cluster = env.cluster("dev").await;
    cluster["spec"]["topology"]["workers"]
        .as_object_mut()
        .unwrap()
        .remove("machinePools");
    let plan = plan_then_check(&env, vec![cluster], "dev").await;
    assert_eq!(
        kinds(&plan.deleted),
        BTreeSet::from(["DockerMachinePool", "KubeadmConfig", "MachinePool"]),
        "{plan:?}"
    );
}

#[tokio::test]
async fn a_converged_cluster_plans_nothing_and_a_bad_change_reports_the_error() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let plan = plan_cluster(&env.api, &Local, &NoHooks, &[], "default", "dev")
        .await
        .unwrap();
    assert!(plan.is_empty() && plan.errors.is_empty(), "{plan:?}");
    let mut cluster = env.cluster("dev").await;
    cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] = json!("nope");
    let writes = env.server.counts().writes();
    let plan = plan_cluster(&env.api, &Local, &NoHooks, &[cluster], "default", "dev")
        .await
        .unwrap();
    assert_eq!(env.server.counts().writes(), writes);
    assert!(
        plan.errors.iter().any(|e| e.contains("nope")),
        "{:?}",
        plan.errors
    );
}

/// A controller writing the Cluster while it is planned (between the plan's read of it
/// and its dry-run replacement) does not fail the plan: the proposal is staged again
/// over the newer object.
#[tokio::test]
async fn a_plan_survives_the_cluster_being_written_meanwhile() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let mut proposed = env.cluster("dev").await;
    proposed["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    proposed["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = json!(4);
    let writer = {
        let other = env.other.clone();
        let cluster = env.cluster("dev").await;
        tokio::spawn(async move {
            for i in 0.. {
                let patch = json!({"metadata": {"annotations": {"writer/step": i.to_string()}}});
                other.merge_patch(&cluster, &patch).await.unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    for _ in 0..20 {
        let plan = plan_cluster(
            &env.api,
            &Local,
            &NoHooks,
            std::slice::from_ref(&proposed),
            "default",
            "dev",
        )
        .await
        .unwrap();
        assert!(
            plan.modified.iter().any(|o| o.kind == "MachineDeployment"),
            "{plan:?}"
        );
    }
    writer.abort();
}

#[tokio::test]
async fn impact_names_exactly_the_clusters_a_class_change_then_changes() {
    let (mut class, cluster) = support::quick_start();
    // Two pools classes; Clusters 0..6 use only default-worker, 6..10 also "gpu".
    let cc = class
        .iter_mut()
        .find(|o| o.kind() == "ClusterClass")
        .unwrap();
    let mut gpu = cc["spec"]["workers"]["machineDeployments"][0].clone();
    gpu["class"] = json!("gpu");
    cc["spec"]["workers"]["machineDeployments"]
        .as_array_mut()
        .unwrap()
        .push(gpu);
    let clusters: Vec<Value> = (0..10)
        .map(|i| {
            let mut c = cluster.clone();
            c["metadata"]["name"] = json!(format!("c-{i}"));
            let mut mds = vec![json!({"class": "default-worker", "name": "md-0", "replicas": 1})];
            if i >= 6 {
                mds.push(json!({"class": "gpu", "name": "gpu-0", "replicas": 1}));
            }
            c["spec"]["topology"]["workers"]["machineDeployments"] = json!(mds);
            c
        })
        .collect();
    let env = Env::start(class.clone(), clusters).await;
    for i in 0..10 {
        env.converge(&format!("c-{i}")).await;
    }
    // The change: the gpu pools get a different minimum ready time.
    let mut changed = env
        .get(V1BETA1, "ClusterClass", "quick-start")
        .await
        .unwrap();
    changed["spec"]["workers"]["machineDeployments"][1]["minReadySeconds"] = json!(42);
    let proposed = vec![changed.clone()];
    let writes = env.server.counts().writes();
    let mut items: Vec<ImpactItem> = Vec::new();
    let users = impact(
        &env.api,
        &Local,
        &NoHooks,
        &proposed,
        |_| true,
        |item| {
            items.push(item);
            true
        },
    )
    .await
    .unwrap();
    assert_eq!(
        env.server.counts().writes(),
        writes,
        "impact writes nothing"
    );
    assert_eq!(users, 10);
    let changing: BTreeSet<String> = items
        .iter()
        .filter(|i| !i.plan.is_empty())
        .map(|i| i.name.clone())
        .collect();
    assert!(
        items
            .iter()
            .all(|i| i.blocking.is_empty() && i.plan.errors.is_empty())
    );

    // Apply the change for real and reconcile everything: exactly those change.
    let before = env.server.snapshot();
    let mut write = changed.clone();
    write["metadata"]["resourceVersion"] = env
        .get(V1BETA1, "ClusterClass", "quick-start")
        .await
        .unwrap()["metadata"]["resourceVersion"]
        .clone();
    env.other.replace(&write).await.unwrap();
    let after_class = env.server.snapshot();
    for i in 0..10 {
        env.reconcile(&format!("c-{i}")).await.unwrap();
    }
    let after = env.server.snapshot();
    let [created, modified, deleted] = actual(&after_class, &after);
    let mut really: BTreeSet<String> = BTreeSet::new();
    for (_, _, name) in created.iter().chain(&modified).chain(&deleted) {
        if let Some(o) = after.iter().chain(&before).find(|o| o.name() == name)
            && let Some(c) = o.labels().get("cluster.x-k8s.io/cluster-name")
        {
            really.insert(c.clone());
        }
    }
    assert_eq!(changing, really);
    assert_eq!(
        changing,
        (6..10).map(|i| format!("c-{i}")).collect::<BTreeSet<_>>()
    );
}

#[tokio::test]
async fn impact_names_the_clusters_that_block_a_class_change() {
    let (mut class, cluster) = support::quick_start();
    let cc = class
        .iter_mut()
        .find(|o| o.kind() == "ClusterClass")
        .unwrap();
    let mut gpu = cc["spec"]["workers"]["machineDeployments"][0].clone();
    gpu["class"] = json!("gpu");
    cc["spec"]["workers"]["machineDeployments"]
        .as_array_mut()
        .unwrap()
        .push(gpu);
    let mut a = cluster.clone();
    a["metadata"]["name"] = json!("uses-gpu");
    a["spec"]["topology"]["workers"]["machineDeployments"] =
        json!([{"class": "gpu", "name": "g", "replicas": 1}]);
    let mut b = cluster.clone();
    b["metadata"]["name"] = json!("no-gpu");
    let env = Env::start(class, vec![a, b]).await;
    let mut changed = env
        .get(V1BETA1, "ClusterClass", "quick-start")
        .await
        .unwrap();
    changed["spec"]["workers"]["machineDeployments"]
        .as_array_mut()
        .unwrap()
        .truncate(1);
    let mut items = Vec::new();
    impact(
        &env.api,
        &Local,
        &NoHooks,
        &[changed],
        |_| true,
        |item| {
            items.push(item);
            true
        },
    )
    .await
    .unwrap();
    let blocking: BTreeMap<String, Vec<String>> =
        items.into_iter().map(|i| (i.name, i.blocking)).collect();
    assert!(blocking["no-gpu"].is_empty(), "{blocking:?}");
    assert!(
        blocking["uses-gpu"].iter().any(|e| e.contains("gpu")),
        "{blocking:?}"
    );
}
