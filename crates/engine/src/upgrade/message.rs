//! The upgrade rows of the Cluster's `TopologyReconciled` condition (spec section 7.5):
//! reason `ClusterUpgrading`, or `MachineDeploymentsUpgradeDeferred` when only deferred
//! MachineDeployments are left, and Cluster API's multi-line message. Runtime SDK hooks
//! and MachinePools are not implemented, so their lines never appear.

use std::collections::BTreeSet;

use super::tracker::UpgradeTracker;

/// The condition's type.
pub const TOPOLOGY_RECONCILED: &str = "TopologyReconciled";
/// Reason while anything is upgrading or waiting to.
pub const REASON_CLUSTER_UPGRADING: &str = "ClusterUpgrading";
/// Reason when the user's defer or hold annotations are all that is left.
pub const REASON_MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED: &str = "MachineDeploymentsUpgradeDeferred";
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
    let mds = &tracker.machine_deployments;
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

    // A name is in one line only: upgrading wins over deferred, deferred over pending.
    let object_names = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter().map(|n| mds.object_name(n).to_string()).collect()
    };
    let upgrading = object_names(&mds.upgrading);
    let deferred: BTreeSet<String> = object_names(&mds.deferred)
        .difference(&upgrading)
        .cloned()
        .collect();
    let pending: BTreeSet<String> = object_names(&mds.pending_upgrade)
        .into_iter()
        .filter(|n| !upgrading.contains(n) && !deferred.contains(n))
        .collect();

    if !upgrading.is_empty() {
        message.push_str(&format!(
            "\n  * {} upgrading to version {cp_version}{}",
            name_list("MachineDeployment", &refs(&upgrading)),
            pending_versions(&mds.plan, cp_version)
        ));
    }
    if !pending.is_empty() && !mds.plan.is_empty() {
        message.push_str(&format!(
            "\n  * {} pending upgrade to version {}",
            name_list("MachineDeployment", &refs(&pending)),
            mds.plan.join(", ")
        ));
    }
    if !deferred.is_empty() {
        message.push_str(&format!(
            "\n  * {} upgrade to version {cp_version} deferred using defer-upgrade or hold-upgrade-sequence annotations",
            name_list("MachineDeployment", &refs(&deferred))
        ));
        if !cp.is_starting_upgrade && !cp.is_upgrading && upgrading.is_empty() && pending.is_empty()
        {
            reason = REASON_MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED;
        }
    }
    if !mds.pending_create.is_empty() {
        message.push_str(&format!(
            "\n  * {} creation deferred while control plane upgrade is in progress",
            name_list("MachineDeployment", &refs(&mds.pending_create))
        ));
    }
    Some(UpgradeCondition { reason, message })
}
