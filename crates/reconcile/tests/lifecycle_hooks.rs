//! Lifecycle hooks in the reconcile, answered by a scripted stand-in for the extensions:
//! when each hook is called, what a blocking answer holds back, the annotations that keep
//! the hooks' state on the Cluster, and failures.

mod support;

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value, json};
use support::{Env, NS};
use topograph_reconcile::hooks::{
    BoxFuture, Hook, HookAnswer, HookError, LifecycleHooks, OK_TO_DELETE_ANNOTATION,
    PENDING_HOOKS_ANNOTATION,
};

/// Extensions whose answers the test sets, recording every request.
#[derive(Default)]
struct Scripted {
    answers: Mutex<HashMap<Hook, Result<HookAnswer, HookError>>>,
    calls: Mutex<Vec<(Hook, Map<String, Value>)>>,
}

impl Scripted {
    fn answer(&self, hook: Hook, answer: Result<HookAnswer, HookError>) {
        self.answers.lock().unwrap().insert(hook, answer);
    }

    fn hold(&self, hook: Hook, seconds: u32, message: &str) {
        self.answer(
            hook,
            Ok(HookAnswer {
                retry_after_seconds: seconds,
                message: message.to_string(),
            }),
        );
    }

    fn go(&self, hook: Hook) {
        self.answer(hook, Ok(HookAnswer::default()));
    }

    fn calls_of(&self, hook: Hook) -> Vec<Map<String, Value>> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(h, _)| *h == hook)
            .map(|(_, f)| f.clone())
            .collect()
    }
}

impl LifecycleHooks for Scripted {
    fn enabled(&self) -> bool {
        true
    }

    fn registered<'a>(
        &'a self,
        hook: Hook,
        _: &'a Value,
    ) -> BoxFuture<'a, Result<bool, HookError>> {
        let known = self.answers.lock().unwrap().contains_key(&hook);
        Box::pin(async move { Ok(known) })
    }

    fn call<'a>(
        &'a self,
        hook: Hook,
        _: &'a Value,
        fields: Map<String, Value>,
    ) -> BoxFuture<'a, Result<HookAnswer, HookError>> {
        self.calls.lock().unwrap().push((hook, fields));
        let answer = self
            .answers
            .lock()
            .unwrap()
            .get(&hook)
            .cloned()
            .unwrap_or_else(|| Ok(HookAnswer::default()));
        Box::pin(async move { answer })
    }
}

fn annotation(cluster: &Value, key: &str) -> Option<String> {
    cluster["metadata"]["annotations"][key]
        .as_str()
        .map(str::to_string)
}

#[tokio::test]
async fn before_cluster_create_holds_the_topology_until_the_extension_says_go() {
    let env = Env::quick_start().await;
    let hooks = Scripted::default();
    hooks.hold(Hook::BeforeClusterCreate, 20, "waiting for the network");

    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 20);
    assert_eq!((outcome.created, outcome.updated), (0, 0));
    let cluster = env.cluster("dev").await;
    assert!(cluster["spec"]["controlPlaneRef"].is_null());
    let condition = env.condition("dev").await;
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "LifecycleHookBlocking");
    assert_eq!(
        condition["message"],
        "hook \"BeforeClusterCreate\" is blocking: waiting for the network"
    );
    // The request carries the Cluster without its status.
    let calls = hooks.calls_of(Hook::BeforeClusterCreate);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["cluster"]["metadata"]["name"], "dev");
    assert!(calls[0]["cluster"].get("status").is_none());

    hooks.go(Hook::BeforeClusterCreate);
    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 0);
    assert!(outcome.created > 0);
    let cluster = env.cluster("dev").await;
    assert!(cluster["spec"]["controlPlaneRef"].is_object());
    // Created now: AfterControlPlaneInitialized is due once the control plane is up.
    assert_eq!(
        annotation(&cluster, PENDING_HOOKS_ANNOTATION).as_deref(),
        Some("AfterControlPlaneInitialized")
    );
    // With references set the topology exists: BeforeClusterCreate is not asked again.
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(hooks.calls_of(Hook::BeforeClusterCreate).len(), 2);
}

#[tokio::test]
async fn after_control_plane_initialized_is_called_once_when_the_control_plane_is_up() {
    let env = Env::quick_start().await;
    let hooks = Scripted::default();
    hooks.go(Hook::AfterControlPlaneInitialized);
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert!(
        hooks
            .calls_of(Hook::AfterControlPlaneInitialized)
            .is_empty()
    );

    let cluster = env.cluster("dev").await;
    env.patch_status(&cluster, json!({"controlPlaneReady": true}))
        .await;
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    let calls = hooks.calls_of(Hook::AfterControlPlaneInitialized);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["cluster"]["status"]["controlPlaneReady"], true);
    let cluster = env.cluster("dev").await;
    assert_eq!(annotation(&cluster, PENDING_HOOKS_ANNOTATION), None);

    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(hooks.calls_of(Hook::AfterControlPlaneInitialized).len(), 1);
}

#[tokio::test]
async fn before_cluster_delete_marks_the_cluster_ok_to_delete_once_it_lets_go() {
    let env = Env::quick_start().await;
    let hooks = Scripted::default();
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    // A finalizer keeps the deleted Cluster readable, as Cluster API's own does.
    let cluster = env.cluster("dev").await;
    env.patch(&cluster, json!({"metadata": {"finalizers": ["test/hold"]}}))
        .await;
    env.other.delete(&cluster).await.unwrap();

    hooks.hold(Hook::BeforeClusterDelete, 30, "draining workloads");
    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 30);
    let cluster = env.cluster("dev").await;
    assert_eq!(annotation(&cluster, OK_TO_DELETE_ANNOTATION), None);
    assert_eq!(env.condition("dev").await["reason"], "Deleting");
    let calls = hooks.calls_of(Hook::BeforeClusterDelete);
    assert_eq!(calls.len(), 1);
    assert!(calls[0]["cluster"].get("status").is_none());

    hooks.go(Hook::BeforeClusterDelete);
    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 0);
    let cluster = env.cluster("dev").await;
    assert_eq!(
        annotation(&cluster, OK_TO_DELETE_ANNOTATION).as_deref(),
        Some("")
    );
    // Once marked, never asked again.
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(hooks.calls_of(Hook::BeforeClusterDelete).len(), 2);
}

#[tokio::test]
async fn without_an_extension_for_the_hook_deletion_is_let_go_at_once() {
    let env = Env::quick_start().await;
    let hooks = Scripted::default();
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    let cluster = env.cluster("dev").await;
    env.patch(&cluster, json!({"metadata": {"finalizers": ["test/hold"]}}))
        .await;
    env.other.delete(&cluster).await.unwrap();
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    let cluster = env.cluster("dev").await;
    assert_eq!(
        annotation(&cluster, OK_TO_DELETE_ANNOTATION).as_deref(),
        Some("")
    );
    assert!(hooks.calls_of(Hook::BeforeClusterDelete).is_empty());
}

#[tokio::test]
async fn a_failing_hook_fails_the_reconcile_with_its_message_and_writes_nothing() {
    let env = Env::quick_start().await;
    let hooks = Scripted::default();
    let failure = "failed to call extension handlers for hook \"BeforeClusterCreate\": handler before-create.my-extension: context deadline exceeded";
    hooks.answer(
        Hook::BeforeClusterCreate,
        Err(HookError(failure.to_string())),
    );
    let err = env.reconcile_with_hooks("dev", &hooks).await.unwrap_err();
    assert_eq!(err, failure);
    let cluster = env.cluster("dev").await;
    assert!(cluster["spec"]["infrastructureRef"].is_null());
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "ReconcileFailed");
    assert_eq!(condition["message"], failure);
    assert!(
        env.owned(support::V1BETA1, "MachineDeployment", "dev")
            .await
            .is_empty()
    );
    let _ = NS;
}

/// A Cluster provisioned at v1.30.0 with its control plane and MachineDeployments
/// reported done, Runtime SDK on.
async fn settled(hooks: &Scripted) -> Env {
    let env = Env::quick_start().await;
    for _ in 0..3 {
        env.reconcile_with_hooks("dev", hooks).await.unwrap();
    }
    env.control_plane_reports().await;
    for md in ["md-0", "md-1", "md-2"] {
        env.machine_deployment_reports(md).await;
    }
    let cluster = env.cluster("dev").await;
    env.patch_status(&cluster, json!({"controlPlaneReady": true}))
        .await;
    env.reconcile_with_hooks("dev", hooks).await.unwrap();
    assert_eq!(
        annotation(&env.cluster("dev").await, PENDING_HOOKS_ANNOTATION),
        None,
        "AfterControlPlaneInitialized done"
    );
    env
}

#[tokio::test]
async fn before_cluster_upgrade_holds_an_upgrade_until_the_extension_says_go() {
    let hooks = Scripted::default();
    hooks.hold(Hook::BeforeClusterUpgrade, 45, "backing up etcd");
    let env = settled(&hooks).await;
    env.edit_topology(json!({"version": "v1.31.0"})).await;

    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 45);
    assert_eq!(env.control_plane("dev").await["spec"]["version"], "v1.30.0");
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "LifecycleHookBlocking");
    assert_eq!(
        condition["message"],
        "hook \"BeforeClusterUpgrade\" is blocking: backing up etcd"
    );
    let calls = hooks.calls_of(Hook::BeforeClusterUpgrade);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["fromKubernetesVersion"], "v1.30.0");
    assert_eq!(calls[0]["toKubernetesVersion"], "v1.31.0");
    assert_eq!(
        calls[0]["controlPlaneUpgrades"],
        json!([{"version": "v1.31.0"}])
    );
    assert_eq!(calls[0]["workersUpgrades"], json!([{"version": "v1.31.0"}]));
    // Nothing is pending yet, and no upgrade step is announced while held.
    let cluster = env.cluster("dev").await;
    assert_eq!(annotation(&cluster, PENDING_HOOKS_ANNOTATION), None);
    assert_eq!(
        annotation(&cluster, "topology.internal.cluster.x-k8s.io/upgrade-step"),
        None
    );

    hooks.go(Hook::BeforeClusterUpgrade);
    hooks.go(Hook::AfterControlPlaneUpgrade);
    hooks.go(Hook::AfterClusterUpgrade);
    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 0);
    assert_eq!(env.control_plane("dev").await["spec"]["version"], "v1.31.0");
    let cluster = env.cluster("dev").await;
    assert_eq!(
        annotation(&cluster, PENDING_HOOKS_ANNOTATION).as_deref(),
        Some(
            "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade"
        )
    );
    assert_eq!(
        annotation(&cluster, "topology.internal.cluster.x-k8s.io/upgrade-step").as_deref(),
        Some("v1.31.0")
    );

    // The control plane is done: AfterControlPlaneUpgrade holds the workers.
    env.control_plane_reports().await;
    hooks.hold(
        Hook::AfterControlPlaneUpgrade,
        15,
        "checking the API server",
    );
    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 15);
    assert_eq!(env.md_version("md-0").await, "v1.30.0");
    assert_eq!(
        env.condition("dev").await["message"],
        "hook \"AfterControlPlaneUpgrade\" is blocking: checking the API server"
    );
    assert_eq!(
        hooks.calls_of(Hook::AfterControlPlaneUpgrade)[0]["kubernetesVersion"],
        "v1.31.0"
    );

    // Let go: the workers follow, one at a time; AfterClusterUpgrade comes last, once.
    hooks.go(Hook::AfterControlPlaneUpgrade);
    for md in ["md-0", "md-1", "md-2"] {
        env.reconcile_with_hooks("dev", &hooks).await.unwrap();
        assert_eq!(env.md_version(md).await, "v1.31.0", "{md} upgrades");
        assert!(hooks.calls_of(Hook::AfterClusterUpgrade).is_empty());
        env.machine_deployment_reports(md).await;
    }
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    let after = hooks.calls_of(Hook::AfterClusterUpgrade);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0]["kubernetesVersion"], "v1.31.0");
    let cluster = env.cluster("dev").await;
    assert_eq!(annotation(&cluster, PENDING_HOOKS_ANNOTATION), None);
    assert_eq!(
        annotation(&cluster, "topology.internal.cluster.x-k8s.io/upgrade-step"),
        None
    );
    assert_eq!(env.condition("dev").await["status"], "True");
}

#[tokio::test]
async fn before_upgrade_annotations_hold_an_upgrade_without_asking_extensions() {
    let hooks = Scripted::default();
    let env = settled(&hooks).await;
    let cluster = env.cluster("dev").await;
    env.patch(
        &cluster,
        json!({"metadata": {"annotations": {
            "before-upgrade.hook.cluster.cluster.x-k8s.io/backup": "",
            "before-upgrade.hook.cluster.cluster.x-k8s.io/approval": ""}}}),
    )
    .await;
    env.edit_topology(json!({"version": "v1.31.0"})).await;
    let outcome = env.reconcile_with_hooks("dev", &hooks).await.unwrap();
    assert_eq!(outcome.requeue_after_seconds, 1200);
    assert_eq!(env.control_plane("dev").await["spec"]["version"], "v1.30.0");
    assert_eq!(
        env.condition("dev").await["message"],
        "hook \"BeforeClusterUpgrade\" is blocking: annotations before-upgrade.hook.cluster.cluster.x-k8s.io/approval, before-upgrade.hook.cluster.cluster.x-k8s.io/backup are set"
    );
    assert!(hooks.calls_of(Hook::BeforeClusterUpgrade).is_empty());
}
