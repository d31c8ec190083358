//! The rollout driver and the reconcile under a policy, against the in-memory API
//! server (decision 0030): revisions recorded and pruned, a Cluster rendering the
//! revision it is pinned to (not the live class), an invalid policy reported on its
//! status, and a class deleted mid-rollout ending the rollout with a condition.

mod support;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::{Env, NS, V1BETA1};
use topograph_management::crds;
use topograph_reconcile::rollout::controller::{Controller, KEPT_REVISIONS};
use topograph_reconcile::rollout::{self, API_VERSION, POLICY_KIND, REVISION_KIND};

/// The quick-start Env with topograph's CRDs, the class reconciled, and a driver whose
/// queued Clusters are collected.
async fn start() -> (Env, Controller, Arc<Mutex<Vec<(String, String)>>>) {
    let env = Env::quick_start().await;
    for crd in crds::topograph() {
        env.other.create(&crd).await.unwrap();
    }
    topograph_reconcile::class::reconcile_class(&env.api, NS, "quick-start")
        .await
        .unwrap();
    let queued = Arc::new(Mutex::new(Vec::new()));
    let sink = queued.clone();
    let controller = Controller::new(
        env.api.clone(),
        Arc::new(move |keys| sink.lock().unwrap().extend(keys)),
    );
    (env, controller, queued)
}

async fn policy(env: &Env) -> Value {
    env.get(API_VERSION, POLICY_KIND, "quick-start")
        .await
        .unwrap_or_else(|| panic!("no policy"))
}

/// Changes the class (a label on the worker class's machines) and reconciles it.
async fn change_class(env: &Env, label: &str) {
    let mut class = env
        .get(V1BETA1, "ClusterClass", "quick-start")
        .await
        .unwrap();
    class["spec"]["workers"]["machineDeployments"][0]["template"]["metadata"] =
        json!({"labels": {"rollout": label}});
    env.other.replace(&class).await.unwrap();
    topograph_reconcile::class::reconcile_class(&env.api, NS, "quick-start")
        .await
        .unwrap();
}

async fn worker_labels(env: &Env) -> Vec<Value> {
    env.owned(V1BETA1, "MachineDeployment", "dev")
        .await
        .iter()
        .map(|md| md["metadata"]["labels"]["rollout"].clone())
        .collect()
}

#[tokio::test]
async fn a_pinned_cluster_renders_its_revision_and_the_driver_moves_it() {
    let (env, mut controller, queued) = start().await;
    env.converge("dev").await;
    let report = controller.tick().await.unwrap();
    assert_eq!(
        report.revisions, 1,
        "the class's revision, without a policy"
    );
    let revisions = env
        .api
        .list(
            API_VERSION,
            REVISION_KIND,
            NS,
            &[(rollout::CLASS_LABEL, "quick-start")],
        )
        .await
        .unwrap();
    assert_eq!(revisions.len(), 1);
    let first = revisions[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();

    env.other
        .create(&json!({"apiVersion": API_VERSION, "kind": POLICY_KIND,
            "metadata": {"name": "quick-start", "namespace": NS},
            "spec": {"waves": [{"name": "all", "percent": 100}]}}))
        .await
        .unwrap();
    controller.tick().await.unwrap();
    let status = policy(&env).await["status"].clone();
    assert_eq!(status["stableRevision"], first.as_str());
    assert_eq!(status["phase"], "Stable");
    let class = env
        .get(V1BETA1, "ClusterClass", "quick-start")
        .await
        .unwrap();
    let healthy = topograph_reconcile::conditions::find(&class, rollout::CONDITION).cloned();
    assert_eq!(healthy.map(|c| c["status"].clone()), Some(json!("True")));

    // The class changes: dev, not moved yet, keeps rendering the stable revision.
    change_class(&env, "two").await;
    // (Its only write: the record that it renders the stable revision now.)
    let writes: u64 = env.converge("dev").await.iter().map(|o| o.writes).sum();
    assert!(writes <= 1, "an unmoved Cluster changed: {writes} writes");
    let dev = env.cluster("dev").await;
    assert_eq!(
        dev["metadata"]["annotations"][rollout::OBSERVED_ANNOTATION],
        first.as_str()
    );
    assert!(worker_labels(&env).await.iter().all(Value::is_null));

    // The driver starts the rollout and moves dev: it renders the new revision, and
    // records it.
    controller.tick().await.unwrap();
    let status = policy(&env).await["status"].clone();
    let target = status["targetRevision"].as_str().unwrap().to_string();
    assert_ne!(target, first);
    assert_eq!(
        queued.lock().unwrap().as_slice(),
        [(NS.to_string(), "dev".to_string())]
    );
    let dev = env.cluster("dev").await;
    assert_eq!(
        dev["metadata"]["annotations"][rollout::PIN_ANNOTATION],
        target.as_str()
    );
    env.converge("dev").await;
    assert!(worker_labels(&env).await.iter().all(|l| l == "two"));
    let dev = env.cluster("dev").await;
    assert_eq!(
        dev["metadata"]["annotations"][rollout::OBSERVED_ANNOTATION],
        target.as_str()
    );
}

#[tokio::test]
async fn revisions_beyond_the_kept_ones_are_pruned_unless_named() {
    let (env, mut controller, _) = start().await;
    controller.tick().await.unwrap();
    let first = env
        .api
        .list(API_VERSION, REVISION_KIND, NS, &[])
        .await
        .unwrap()[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    // dev names the first revision (what it rendered): it stays whatever comes after.
    let dev = env.cluster("dev").await;
    env.other
        .merge_patch(
            &dev,
            &json!({"metadata": {"annotations": {rollout::OBSERVED_ANNOTATION: first}}}),
        )
        .await
        .unwrap();
    for i in 0..KEPT_REVISIONS + 3 {
        change_class(&env, &format!("v{i}")).await;
        // Classes without a policy are looked at every tenth tick.
        for _ in 0..10 {
            controller.tick().await.unwrap();
        }
    }
    let names: Vec<String> = env
        .api
        .list(API_VERSION, REVISION_KIND, NS, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), KEPT_REVISIONS + 1, "{names:?}");
    assert!(
        names.contains(&first),
        "a named revision was pruned: {names:?}"
    );
}

#[tokio::test]
async fn an_invalid_policy_and_a_deleted_class_are_reported_on_the_policy() {
    let (env, mut controller, _) = start().await;
    env.other
        .create(&json!({"apiVersion": API_VERSION, "kind": POLICY_KIND,
            "metadata": {"name": "quick-start", "namespace": NS},
            "spec": {"waves": [{"name": "half", "percent": 50}]}}))
        .await
        .unwrap();
    controller.tick().await.unwrap();
    let condition = |p: &Value| {
        p["status"]["conditions"]
            .as_array()
            .and_then(|l| l.iter().find(|c| c["type"] == rollout::CONDITION))
            .cloned()
            .unwrap_or_default()
    };
    let written = policy(&env).await;
    controller.tick().await.unwrap();
    assert_eq!(
        policy(&env).await["metadata"]["resourceVersion"],
        written["metadata"]["resourceVersion"],
        "an invalid policy is reported once, not at every step"
    );
    let invalid = condition(&written);
    assert_eq!(invalid["status"], "False");
    assert_eq!(invalid["reason"], "InvalidPolicy");
    assert!(
        invalid["message"]
            .as_str()
            .is_some_and(|m| m
                .contains("spec.waves[0]: Invalid value: the last wave must move every Cluster")),
        "{invalid}"
    );

    // Fixed, a rollout in flight, then the class is deleted.
    let mut fixed = policy(&env).await;
    fixed["spec"]["waves"] = json!([{"name": "all", "percent": 100}]);
    fixed["spec"]["paused"] = json!(true);
    env.other.replace(&fixed).await.unwrap();
    controller.tick().await.unwrap();
    change_class(&env, "two").await;
    controller.tick().await.unwrap();
    assert_eq!(policy(&env).await["status"]["phase"], "Paused");
    let class = env
        .get(V1BETA1, "ClusterClass", "quick-start")
        .await
        .unwrap();
    env.other.delete(&class).await.unwrap();
    controller.tick().await.unwrap();
    let ended = policy(&env).await;
    controller.tick().await.unwrap();
    assert_eq!(
        policy(&env).await["metadata"]["resourceVersion"],
        ended["metadata"]["resourceVersion"],
        "the end is reported once"
    );
    assert_eq!(ended["status"]["phase"], "ClassDeleted");
    assert!(ended["status"].get("targetRevision").is_none(), "{ended:#}");
    let deleted = condition(&ended);
    assert_eq!(deleted["reason"], "ClusterClassDeleted");
    assert!(
        deleted["message"]
            .as_str()
            .is_some_and(|m| m.contains("was deleted during the rollout of revision")),
        "{deleted}"
    );
}
