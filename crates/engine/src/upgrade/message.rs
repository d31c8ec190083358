//! The upgrade rows of the Cluster's `TopologyReconciled` condition (spec section 7.5):
//! reason `ClusterUpgrading`, or `MachineDeploymentsUpgradeDeferred` /
//! `MachinePoolsUpgradeDeferred` when only deferred workers are left, and Cluster API's
//! multi-line message (control plane, then MachineDeployments, then MachinePools).
//! Runtime SDK hooks are not implemented, so their lines never appear.

use std::collections::BTreeSet;

use super::tracker::{MachineDeploymentUpgrades, UpgradeTracker};

/// The condition's type.
pub const TOPOLOGY_RECONCILED: &str = "TopologyReconciled";
/// Reason while anything is upgrading or waiting to.
pub const REASON_CLUSTER_UPGRADING: &str = "ClusterUpgrading";
/// Reason when the user's defer or hold annotations are all that is left.
pub const REASON_MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED: &str = "MachineDeploymentsUpgradeDeferred";
/// Reason when the defer or hold annotations on MachinePools are all that is left.
pub const REASON_MACHINE_POOLS_UPGRADE_DEFERRED: &str = "MachinePoolsUpgradeDeferred";
/// Reason when nothing is left to do.
pub const REASON_RECONCILE_SUCCEEDED: &str = "ReconcileSucceeded";

/// A `TopologyReconciled` condition reporting an upgrade (its status is always False).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeCondition {
    /// [`REASON_CLUSTER_UPGRADING`] or [`REASON_MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED`]
    /// (the same names serve v1beta1's deprecated conditions).
    pub reason: &'static str,
    /// The message.
    pub message: String,
}

/// `Kind a`, `Kinds a, b, c` or `Kinds a, b, c, ... (N more)`, names sorted.
fn name_list(kind: &str, names: &BTreeSet<&str>) -> String {
    let shown: Vec<&str> = names.iter().take(3).copied().collect();
    match names.len() {
        1 => format!("{kind} {}", shown.join(", ")),
        n if n <= 3 => format!("{kind}s {}", shown.join(", ")),
        n => format!("{kind}s {}, ... ({} more)", shown.join(", "), n - 3),
    }
}

fn refs(set: &BTreeSet<String>) -> BTreeSet<&str> {
    set.iter().map(String::as_str).collect()
}

/// ` (v1, v2 pending)` for the plan's versions other than `version`, or nothing.
fn pending_versions(plan: &[String], version: &str) -> String {
    let rest: Vec<&str> = plan
        .iter()
        .map(String::as_str)
        .filter(|v| *v != version)
        .collect();
    if rest.is_empty() {
        String::new()
    } else {
        format!(" ({} pending)", rest.join(", "))
    }
}

/// The upgrade condition of a render, or `None` when nothing is upgrading, pending,
/// deferred or waiting to be created (the reconciler then reports
/// [`REASON_RECONCILE_SUCCEEDED`], True). `topology_version` is the Cluster's
/// `spec.topology.version`.
pub fn condition(topology_version: &str, tracker: &UpgradeTracker) -> Option<UpgradeCondition> {
    if !tracker.is_upgrading_anything() {
        return None;
    }
    let cp = &tracker.control_plane;
    let cp_version = cp.desired_version.as_str();
    let mut message = format!("Cluster is upgrading to {topology_version}");
    let mut reason = REASON_CLUSTER_UPGRADING;

    if cp.is_starting_upgrade || cp.is_upgrading {
        message.push_str(&format!(
            "\n  * {} upgrading to version {cp_version}{}",
            cp.kind,
            pending_versions(&cp.plan, cp_version)
        ));
    } else if !cp.plan.is_empty() {
        message.push_str(&format!(
            "\n  * {} pending upgrade to version {}",
            cp.kind,
            cp.plan.join(", ")
        ));
    }

    let cp_moving = cp.is_starting_upgrade || cp.is_upgrading;
    let mds = workers(
        &mut message,
        "MachineDeployment",
        &tracker.machine_deployments,
        cp_version,
        "defer-upgrade or hold-upgrade-sequence annotations",
    );
    if mds && !cp_moving {
        reason = REASON_MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED;
    }
    // Cluster API's MachinePool line names the defer annotation in full.
    let mps = workers(
        &mut message,
        "MachinePool",
        &tracker.machine_pools,
        cp_version,
        "topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations",
    );
    if mps && !cp_moving && reason != REASON_MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED {
        reason = REASON_MACHINE_POOLS_UPGRADE_DEFERRED;
    }
    Some(UpgradeCondition { reason, message })
}

/// Appends the lines of one kind of workers; whether deferred workers are all that
/// is left of that kind (none upgrading, none merely pending).
fn workers(
    message: &mut String,
    kind: &str,
    tracked: &MachineDeploymentUpgrades,
    cp_version: &str,
    deferred_by: &str,
) -> bool {
    // A name is in one line only: upgrading wins over deferred, deferred over pending.
    let object_names = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter()
            .map(|n| tracked.object_name(n).to_string())
            .collect()
    };
    let upgrading = object_names(&tracked.upgrading);
    let deferred: BTreeSet<String> = object_names(&tracked.deferred)
        .difference(&upgrading)
        .cloned()
        .collect();
    let pending: BTreeSet<String> = object_names(&tracked.pending_upgrade)
        .into_iter()
        .filter(|n| !upgrading.contains(n) && !deferred.contains(n))
        .collect();

    if !upgrading.is_empty() {
        message.push_str(&format!(
            "\n  * {} upgrading to version {cp_version}{}",
            name_list(kind, &refs(&upgrading)),
            pending_versions(&tracked.plan, cp_version)
        ));
    }
    if !pending.is_empty() && !tracked.plan.is_empty() {
        message.push_str(&format!(
            "\n  * {} pending upgrade to version {}",
            name_list(kind, &refs(&pending)),
            tracked.plan.join(", ")
        ));
    }
    if !deferred.is_empty() {
        message.push_str(&format!(
            "\n  * {} upgrade to version {cp_version} deferred using {deferred_by}",
            name_list(kind, &refs(&deferred))
        ));
    }
    if !tracked.pending_create.is_empty() {
        message.push_str(&format!(
            "\n  * {} creation deferred while control plane upgrade is in progress",
            name_list(kind, &refs(&tracked.pending_create))
        ));
    }
    !deferred.is_empty() && upgrading.is_empty() && pending.is_empty()
}
