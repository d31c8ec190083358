//! Runtime SDK lifecycle hooks as the topology reconcile calls them (Cluster API's
//! `BeforeClusterCreate`, `AfterControlPlaneInitialized`, `BeforeClusterDelete`, …).
//!
//! The reconcile only decides *when* a hook is due and what its answer means; who
//! answers is behind [`LifecycleHooks`], which the applier backs with the extensions
//! registered on the management cluster. Without extensions ([`NoHooks`]) Runtime SDK is
//! off, exactly as a Cluster API without the `RuntimeSDK` feature gate: no hook is
//! called and no hook annotation is written, so reconciles without extensions are
//! unchanged.
//!
//! Intent survives process restarts in the Cluster's own annotations, as Cluster API
//! keeps it: `runtime.cluster.x-k8s.io/pending-hooks` lists hooks still to call (a
//! sorted, comma-separated set) and `runtime.cluster.x-k8s.io/ok-to-delete` says
//! `BeforeClusterDelete` let the deletion go. A blocking answer (`retryAfterSeconds`)
//! ends the reconcile with a requeue after that many seconds, through the queue.
//!
//! The same trait hands out the extensions a render calls
//! ([`LifecycleHooks::render_extensions`]): whoever knows the registered extensions for
//! the hooks knows them for external patches, ValidateTopology and DiscoverVariables.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value, json};
use topograph_api::object::ObjectExt;
use topograph_engine::service::RenderExtensions;

/// Hooks still to be called for a Cluster.
pub const PENDING_HOOKS_ANNOTATION: &str = "runtime.cluster.x-k8s.io/pending-hooks";
/// Set once `BeforeClusterDelete` lets the Cluster be deleted.
pub const OK_TO_DELETE_ANNOTATION: &str = "runtime.cluster.x-k8s.io/ok-to-delete";
/// Cluster annotations with this prefix hold an upgrade as a blocking
/// `BeforeClusterUpgrade` would, without asking any extension.
pub const BEFORE_UPGRADE_ANNOTATION_PREFIX: &str = "before-upgrade.hook.cluster.cluster.x-k8s.io";

pub use topograph_engine::service::BoxFuture;

/// The hooks of Runtime SDK's catalog; the reconcile calls the lifecycle ones.
pub use topograph_runtime::catalog::Hook;

/// Whether a hook's answer can hold the reconcile (`retryAfterSeconds`): every
/// lifecycle hook but AfterControlPlaneInitialized and AfterClusterUpgrade.
pub fn can_block(hook: Hook) -> bool {
    !matches!(
        hook,
        Hook::AfterControlPlaneInitialized | Hook::AfterClusterUpgrade
    )
}

/// What every handler of a hook answered, together: the lowest non-zero
/// `retryAfterSeconds` (0: go on) and the handlers' messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookAnswer {
    pub retry_after_seconds: u32,
    pub message: String,
}

/// A hook that could not be called, or whose handler failed (with failure policy
/// `Fail`): the text names the extension and the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookError(pub String);

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who answers lifecycle hooks for one management cluster.
pub trait LifecycleHooks: Send + Sync {
    /// Whether Runtime SDK is on (extensions are registered at all).
    fn enabled(&self) -> bool;

    /// Whether any handler of `hook` applies to the Cluster (namespace selectors).
    fn registered<'a>(
        &'a self,
        hook: Hook,
        cluster: &'a Value,
    ) -> BoxFuture<'a, Result<bool, HookError>>;

    /// Calls every handler of `hook` for the Cluster with the request's own fields
    /// (`cluster`, and `fromKubernetesVersion` and the like); the implementation adds
    /// `apiVersion`, `kind` and each handler's `settings`.
    fn call<'a>(
        &'a self,
        hook: Hook,
        cluster: &'a Value,
        fields: Map<String, Value>,
    ) -> BoxFuture<'a, Result<HookAnswer, HookError>>;

    /// The runtime extensions a render (external patches, ValidateTopology) or a class
    /// reconcile (DiscoverVariables) may call for objects of `namespaces`, their labels
    /// read for the handlers' namespace selectors; `None` with Runtime SDK off, which
    /// leaves a class with external patches refused. The default has none, so
    /// implementations that only answer lifecycle hooks need not care.
    fn render_extensions<'a>(
        &'a self,
        namespaces: &'a [String],
    ) -> BoxFuture<'a, Result<Option<RenderExtensions>, HookError>> {
        let _ = namespaces;
        Box::pin(async { Ok(None) })
    }
}

/// The labels of `namespace`, which the handlers' namespace selectors match (none for a
/// namespace that does not exist), as Cluster API's client reads them.
pub async fn namespace_labels(
    api: &topograph_management::ManagementCluster,
    namespace: &str,
) -> Result<std::collections::BTreeMap<String, String>, HookError> {
    let object = api
        .get("v1", "Namespace", "", namespace)
        .await
        .map_err(|e| HookError(format!("failed to get Namespace {namespace}: {e}")))?;
    Ok(object
        .as_ref()
        .map(|n| n.labels().clone())
        .unwrap_or_default()
        .into_iter()
        .collect())
}

/// Runtime SDK off: no extensions, no hooks.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl LifecycleHooks for NoHooks {
    fn enabled(&self) -> bool {
        false
    }

    fn registered<'a>(&'a self, _: Hook, _: &'a Value) -> BoxFuture<'a, Result<bool, HookError>> {
        Box::pin(async { Ok(false) })
    }

    fn call<'a>(
        &'a self,
        _: Hook,
        _: &'a Value,
        _: Map<String, Value>,
    ) -> BoxFuture<'a, Result<HookAnswer, HookError>> {
        Box::pin(async { Ok(HookAnswer::default()) })
    }
}

/// The answers of one reconcile's hooks, for the condition and the requeue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookResponses {
    answers: Vec<(Hook, HookAnswer)>,
}

impl HookResponses {
    /// Records a hook's answer (a later answer of the same hook replaces it).
    pub fn add(&mut self, hook: Hook, answer: HookAnswer) {
        self.answers.retain(|(h, _)| *h != hook);
        self.answers.push((hook, answer));
    }

    /// The lowest non-zero retry of the hooks that can block; `None` when none blocks.
    pub fn retry_after(&self) -> Option<Duration> {
        self.blocking()
            .map(|(_, a)| a.retry_after_seconds)
            .min()
            .map(|s| Duration::from_secs(u64::from(s)))
    }

    /// `hook "X" is blocking: message` for each blocking hook, joined with `; ` (in
    /// hook order: Cluster API walks a Go map here, so its order is not fixed).
    pub fn message(&self) -> String {
        let mut blocking: Vec<_> = self.blocking().collect();
        blocking.sort_by_key(|(h, _)| *h);
        blocking
            .iter()
            .map(|(h, a)| format!("hook {:?} is blocking: {}", h.name(), a.message))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn blocking(&self) -> impl Iterator<Item = &(Hook, HookAnswer)> {
        self.answers
            .iter()
            .filter(|(h, a)| can_block(*h) && a.retry_after_seconds != 0)
    }
}

/// The hooks listed in the Cluster's pending-hooks annotation.
pub fn pending(cluster: &Value) -> BTreeSet<String> {
    cluster
        .annotations()
        .get(PENDING_HOOKS_ANNOTATION)
        .map(|list| split(list))
        .unwrap_or_default()
}

/// Whether `hook` is pending on the Cluster.
pub fn is_pending(cluster: &Value, hook: Hook) -> bool {
    pending(cluster).contains(hook.name())
}

/// Whether `BeforeClusterDelete` already let the Cluster go.
pub fn is_ok_to_delete(cluster: &Value) -> bool {
    cluster.annotations().contains_key(OK_TO_DELETE_ANNOTATION)
}

fn split(list: &str) -> BTreeSet<String> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The merge patch that adds (`add`) or removes hooks from the pending list; `None`
/// when the annotation would not change.
pub fn pending_patch(cluster: &Value, hooks: &[Hook], add: bool) -> Option<Value> {
    let before = pending(cluster);
    let mut after = before.clone();
    for hook in hooks {
        if add {
            after.insert(hook.name().to_string());
        } else {
            after.remove(hook.name());
        }
    }
    pending_set_patch(&before, &after)
}

/// The merge patch that takes the pending list from `before` to `after` (the annotation
/// removed when nothing is left); `None` when they are the same.
pub fn pending_set_patch(before: &BTreeSet<String>, after: &BTreeSet<String>) -> Option<Value> {
    if after == before {
        return None;
    }
    let value = if after.is_empty() {
        Value::Null
    } else {
        Value::String(
            after
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(","),
        )
    };
    Some(json!({"metadata": {"annotations": {PENDING_HOOKS_ANNOTATION: value}}}))
}

/// The merge patch that marks the Cluster ok to delete.
pub fn ok_to_delete_patch() -> Value {
    json!({"metadata": {"annotations": {OK_TO_DELETE_ANNOTATION: ""}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(pending: Option<&str>) -> Value {
        let mut c = json!({"metadata": {"name": "c", "namespace": "ns"}});
        if let Some(list) = pending {
            c["metadata"]["annotations"] = json!({PENDING_HOOKS_ANNOTATION: list});
        }
        c
    }

    #[test]
    fn the_pending_list_is_a_sorted_set_and_disappears_when_empty() {
        let add = |c: &Value, hooks: &[Hook]| pending_patch(c, hooks, true);
        // (annotation before, hooks, add?, annotation after; None: no patch)
        type Case<'a> = (Option<&'a str>, &'a [Hook], bool, Option<Value>);
        let cases: [Case<'_>; 6] = [
            (
                None,
                &[Hook::AfterControlPlaneInitialized],
                true,
                Some(json!("AfterControlPlaneInitialized")),
            ),
            (
                Some("AfterControlPlaneUpgrade"),
                &[Hook::AfterClusterUpgrade],
                true,
                Some(json!("AfterClusterUpgrade,AfterControlPlaneUpgrade")),
            ),
            (
                Some("AfterClusterUpgrade"),
                &[Hook::AfterClusterUpgrade],
                true,
                None,
            ),
            (
                Some(",AfterClusterUpgrade,"),
                &[Hook::AfterClusterUpgrade],
                false,
                Some(Value::Null),
            ),
            (
                Some("AfterClusterUpgrade,AfterControlPlaneUpgrade"),
                &[Hook::AfterControlPlaneUpgrade],
                false,
                Some(json!("AfterClusterUpgrade")),
            ),
            (None, &[Hook::AfterClusterUpgrade], false, None),
        ];
        for (before, hooks, adding, after) in cases {
            let c = cluster(before);
            let patch = if adding {
                add(&c, hooks)
            } else {
                pending_patch(&c, hooks, false)
            };
            assert_eq!(
                patch.map(|p| p["metadata"]["annotations"][PENDING_HOOKS_ANNOTATION].clone()),
                after,
                "{before:?} {hooks:?} {adding}"
            );
        }
        assert!(is_pending(
            &cluster(Some("AfterClusterUpgrade,AfterControlPlaneInitialized")),
            Hook::AfterControlPlaneInitialized
        ));
        assert!(!is_pending(&cluster(None), Hook::AfterClusterUpgrade));
    }

    #[test]
    fn blocking_answers_aggregate_to_the_lowest_retry_and_name_their_hooks() {
        let mut responses = HookResponses::default();
        assert_eq!(responses.retry_after(), None);
        assert_eq!(responses.message(), "");
        let answer = |s, m: &str| HookAnswer {
            retry_after_seconds: s,
            message: m.to_string(),
        };
        responses.add(Hook::BeforeClusterUpgrade, answer(0, "go"));
        assert_eq!(responses.retry_after(), None);
        responses.add(Hook::BeforeClusterUpgrade, answer(30, "waiting for backup"));
        responses.add(Hook::BeforeClusterCreate, answer(10, "quota"));
        // Answers of hooks that cannot block never hold anything.
        responses.add(Hook::AfterClusterUpgrade, answer(5, "ignored"));
        assert_eq!(responses.retry_after(), Some(Duration::from_secs(10)));
        assert_eq!(
            responses.message(),
            "hook \"BeforeClusterCreate\" is blocking: quota; hook \"BeforeClusterUpgrade\" is blocking: waiting for backup"
        );
    }
}
