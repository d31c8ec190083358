//! The upgrade lifecycle hooks, laid over the engine's version decisions.
//!
//! The engine decides versions as Cluster API does with Runtime SDK off. Every upgrade
//! hook can only hold back what those decisions let move, so with Runtime SDK on the
//! reconcile asks the hooks at the points Cluster API asks them and holds back what a
//! blocking answer holds (spec §7.2):
//! * the control plane about to take its next version: `AfterWorkersUpgrade` (still
//!   pending from the last step), `BeforeClusterUpgrade` (first step only, or the
//!   `before-upgrade.hook…` annotations), `BeforeControlPlaneUpgrade`; a block keeps the
//!   control plane where it is (pending upgrade: not touched);
//! * a control plane at rest: `AfterControlPlaneUpgrade` and `BeforeWorkersUpgrade`
//!   (while workers must catch up) still pending; a block holds the workers (no upgrade,
//!   no creation) and the control plane's next step;
//! * everything at rest: `AfterClusterUpgrade`, once.
//!
//! Which hooks are still due is kept in the Cluster's pending-hooks annotation, written
//! once per reconcile before any object; the `upgrade-step` annotation follows Cluster
//! API's Runtime-SDK-on rule (present while `AfterClusterUpgrade` is pending).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use topograph_api::object::ObjectExt;
use topograph_engine::DesiredState;
use topograph_engine::upgrade::UpgradeTracker;

use super::Run;
use crate::error::ReconcileError;
use crate::hooks::{self, BEFORE_UPGRADE_ANNOTATION_PREFIX, Hook, HookAnswer};

/// How long annotations hold an upgrade: twice the default sync period, as Cluster API
/// answers for them (their removal is an event that brings the Cluster back anyway).
const ANNOTATION_HOLD_SECONDS: u32 = 20 * 60;

/// One reconcile's pass over the upgrade hooks.
struct Pass<'r, 'a> {
    run: &'r mut Run<'a>,
    /// The pending list as this reconcile leaves it.
    pending: BTreeSet<String>,
    /// The plans every upgrade hook's request carries.
    common: Map<String, Value>,
}

impl Pass<'_, '_> {
    fn is_pending(&self, hook: Hook) -> bool {
        self.pending.contains(hook.name())
    }

    fn mark(&mut self, hook: Hook, pending: bool) {
        if pending {
            self.pending.insert(hook.name().to_string());
        } else {
            self.pending.remove(hook.name());
        }
    }

    /// Asks `hook` with the common fields, the Cluster and `fields`; `true` when it
    /// lets things go on.
    async fn ask(&mut self, hook: Hook, fields: &[(&str, Value)]) -> Result<bool, ReconcileError> {
        let mut request = self.common.clone();
        request.insert(
            "cluster".into(),
            topograph_runtime::hooks::cleanup_cluster(&self.run.cluster),
        );
        for (key, value) in fields {
            request.insert((*key).to_string(), value.clone());
        }
        self.run.ask(hook, request).await
    }

    /// A pending "after" hook: asked, and no longer pending once it lets go.
    async fn ask_pending(
        &mut self,
        hook: Hook,
        fields: &[(&str, Value)],
    ) -> Result<bool, ReconcileError> {
        if !self.is_pending(hook) {
            return Ok(true);
        }
        let go = self.ask(hook, fields).await?;
        if go {
            self.mark(hook, false);
        }
        Ok(go)
    }
}

/// Applies the upgrade hooks to the desired state; the answers go to `run.responses`.
pub(super) async fn apply(
    run: &mut Run<'_>,
    topology_version: &str,
    desired: &mut DesiredState,
) -> Result<(), ReconcileError> {
    if !run.hooks.enabled() {
        return Ok(());
    }
    let before = hooks::pending(&run.cluster);
    let common = plan_fields(&desired.upgrade);
    let mut pass = Pass {
        run,
        pending: before.clone(),
        common,
    };
    decide(&mut pass, topology_version, desired).await?;
    after_cluster_upgrade(&mut pass, topology_version, &desired.upgrade).await?;

    // Cluster API's Runtime-SDK-on rule for the upgrade-step annotation.
    desired.upgrade.upgrade_step = pass
        .is_pending(Hook::AfterClusterUpgrade)
        .then(|| desired.upgrade.control_plane.desired_version.clone());
    if let Some(patch) = hooks::pending_set_patch(&before, &pass.pending) {
        run.cluster = run.api.merge_patch(&run.cluster, &patch).await?;
    }
    Ok(())
}

/// The hook points of the control plane's version decision.
async fn decide(
    pass: &mut Pass<'_, '_>,
    topology_version: &str,
    desired: &mut DesiredState,
) -> Result<(), ReconcileError> {
    let cp = desired.upgrade.control_plane.clone();
    let Some(current) = cp.current_version.clone() else {
        return Ok(());
    };
    if cp.is_provisioning || cp.is_upgrading {
        return Ok(());
    }
    let workers_first = workers_plan(&desired.upgrade).first().cloned();
    let version = json!(current);
    if !pass
        .ask_pending(
            Hook::AfterControlPlaneUpgrade,
            &[("kubernetesVersion", version.clone())],
        )
        .await?
    {
        hold_workers(desired);
        hold_control_plane(&mut desired.upgrade, &current);
        return Ok(());
    }
    if workers_first.as_deref() == Some(current.as_str()) {
        let from = desired
            .upgrade
            .min_workers_version
            .clone()
            .unwrap_or_default();
        let fields = [
            ("fromKubernetesVersion", json!(from)),
            ("toKubernetesVersion", version.clone()),
        ];
        if !pass
            .ask_pending(Hook::BeforeWorkersUpgrade, &fields)
            .await?
        {
            hold_workers(desired);
            hold_control_plane(&mut desired.upgrade, &current);
            return Ok(());
        }
    }
    if cp.is_waiting_for_workers {
        return Ok(());
    }
    let workers_moving = !desired.upgrade.machine_deployments.upgrading.is_empty()
        || !desired.upgrade.machine_pools.upgrading.is_empty();
    if !workers_moving
        && !pass
            .ask_pending(
                Hook::AfterWorkersUpgrade,
                &[("kubernetesVersion", version.clone())],
            )
            .await?
    {
        hold_control_plane(&mut desired.upgrade, &current);
        return Ok(());
    }
    if !cp.is_starting_upgrade {
        return Ok(());
    }
    let next = cp.desired_version.clone();
    if !pass.is_pending(Hook::AfterClusterUpgrade) {
        let held_by: Vec<String> = pass
            .run
            .cluster
            .annotations()
            .keys()
            .filter(|k| k.starts_with(BEFORE_UPGRADE_ANNOTATION_PREFIX))
            .cloned()
            .collect();
        let go = if held_by.is_empty() {
            let fields = [
                ("fromKubernetesVersion", version.clone()),
                ("toKubernetesVersion", json!(topology_version)),
            ];
            pass.ask(Hook::BeforeClusterUpgrade, &fields).await?
        } else {
            // Annotations hold the upgrade without asking any extension (keys come
            // sorted from the object's map).
            let message = if held_by.len() == 1 {
                format!("annotation {} is set", held_by[0])
            } else {
                format!("annotations {} are set", held_by.join(", "))
            };
            pass.run.responses.add(
                Hook::BeforeClusterUpgrade,
                HookAnswer {
                    retry_after_seconds: ANNOTATION_HOLD_SECONDS,
                    message,
                },
            );
            false
        };
        if !go {
            hold_control_plane(&mut desired.upgrade, &current);
            return Ok(());
        }
        pass.mark(Hook::AfterClusterUpgrade, true);
    }
    let fields = [
        ("fromKubernetesVersion", version),
        ("toKubernetesVersion", json!(next)),
    ];
    if !pass.ask(Hook::BeforeControlPlaneUpgrade, &fields).await? {
        hold_control_plane(&mut desired.upgrade, &current);
        return Ok(());
    }
    pass.mark(Hook::AfterControlPlaneUpgrade, true);
    if workers_first.as_deref() == Some(next.as_str()) {
        pass.mark(Hook::BeforeWorkersUpgrade, true);
        pass.mark(Hook::AfterWorkersUpgrade, true);
    }
    Ok(())
}

/// `AfterClusterUpgrade`, once the last step is done and everything is at rest.
async fn after_cluster_upgrade(
    pass: &mut Pass<'_, '_>,
    topology_version: &str,
    tracker: &UpgradeTracker,
) -> Result<(), ReconcileError> {
    if !pass.is_pending(Hook::AfterClusterUpgrade)
        || pass.is_pending(Hook::AfterControlPlaneUpgrade)
        || pass.is_pending(Hook::AfterWorkersUpgrade)
        || !tracker.control_plane.is_stable()
        || tracker.machine_deployments.is_any_active()
        || tracker.machine_pools.is_any_active()
    {
        return Ok(());
    }
    pass.ask(
        Hook::AfterClusterUpgrade,
        &[("kubernetesVersion", json!(topology_version))],
    )
    .await?;
    pass.mark(Hook::AfterClusterUpgrade, false);
    Ok(())
}

/// The control plane keeps its version: it is pending upgrade, which the reconcile
/// leaves alone.
fn hold_control_plane(tracker: &mut UpgradeTracker, current: &str) {
    let cp = &mut tracker.control_plane;
    if cp.is_starting_upgrade {
        cp.is_starting_upgrade = false;
        cp.is_pending_upgrade = true;
        cp.desired_version = current.to_string();
    }
}

/// No worker moves: those picking up a version wait, new ones are not created.
fn hold_workers(desired: &mut DesiredState) {
    let new_deployments: Vec<String> = desired
        .machine_deployments
        .iter()
        .map(|md| md.topology_name.clone())
        .collect();
    let new_pools: Vec<String> = desired
        .machine_pools
        .iter()
        .map(|mp| mp.topology_name.clone())
        .collect();
    for (tracked, names) in [
        (&mut desired.upgrade.machine_deployments, new_deployments),
        (&mut desired.upgrade.machine_pools, new_pools),
    ] {
        let upgrading = std::mem::take(&mut tracked.upgrading);
        tracked.pending_upgrade.extend(upgrading);
        for name in names {
            if !tracked.object_names.contains_key(&name) {
                tracked.pending_create.insert(name);
            }
        }
    }
}

/// The workers' plan Cluster API reports: the MachineDeployments', else the
/// MachinePools'.
fn workers_plan(tracker: &UpgradeTracker) -> &[String] {
    if tracker.machine_deployments.plan.is_empty() {
        &tracker.machine_pools.plan
    } else {
        &tracker.machine_deployments.plan
    }
}

/// The plans, as `[{version}]`, every upgrade hook's request carries (the Cluster is
/// added when a hook is asked: most reconciles ask none).
fn plan_fields(tracker: &UpgradeTracker) -> Map<String, Value> {
    let steps = |plan: &[String]| -> Value {
        Value::Array(plan.iter().map(|v| json!({"version": v})).collect())
    };
    let mut fields = Map::new();
    fields.insert(
        "controlPlaneUpgrades".into(),
        steps(&tracker.control_plane.plan),
    );
    fields.insert("workersUpgrades".into(), steps(workers_plan(tracker)));
    fields
}
