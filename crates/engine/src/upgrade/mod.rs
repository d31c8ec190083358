//! Upgrade sequencing (spec section 7.2): which version the control plane and each
//! MachineDeployment get in this render, and what a reconciler must hold back.
//!
//! Cluster API never moves everything to `spec.topology.version` at once. The control
//! plane goes first, one step of its [`plan`] at a time, once it is provisioned and
//! stable and no MachineDeployment is upgrading; the MachineDeployments follow, in
//! `workers.machineDeployments` order, at most `upgrade-concurrency` at a time, unless
//! deferred by `defer-upgrade` / `hold-upgrade-sequence` on their topology. New
//! MachineDeployments wait for a stable control plane.
//!
//! [`desired::compute`](crate::desired::compute) runs [`decide::decide`] before it
//! builds the objects, so the desired ControlPlane and MachineDeployments carry the
//! decided versions and patches see them as `builtin.controlPlane.version` and
//! `builtin.machineDeployment.version`. The result is
//! [`DesiredState::upgrade`](crate::DesiredState::upgrade), an [`UpgradeTracker`]. A
//! reconciler uses it like this:
//! * [`UpgradeTracker::must_not_touch_control_plane`]: skip the ControlPlane and its
//!   machine template (its health check is reconciled regardless);
//! * [`UpgradeTracker::must_not_create_machine_deployment`] /
//!   [`UpgradeTracker::must_not_update_machine_deployment`] (by topology name): skip
//!   creating / updating that MachineDeployment and its templates;
//! * [`UpgradeTracker::remove_upgrade_step_annotation`] set: delete
//!   [`UPGRADE_STEP_ANNOTATION`] from the Cluster (the desired Cluster omits it);
//! * [`condition`]: the `TopologyReconciled` reason and message while anything is
//!   upgrading; `None` means `ReconcileSucceeded`.
//!
//! Whether a MachineDeployment is upgrading comes from `current.rs`: its Machines when
//! the inputs have them, else its status (decision 0009); a MachinePool's from its
//! status alone (Cluster API asks the workload cluster's Nodes, which a management
//! cluster does not have). MachinePools follow the same rules as MachineDeployments,
//! with their own record ([`UpgradeTracker::machine_pools`]) and
//! `must_not_create_machine_pool` / `must_not_update_machine_pool`. A class's
//! GenerateUpgradePlan extension plans through the renderer's extensions; the lifecycle
//! hooks are laid over these decisions by the reconcile (decision 0025).

pub mod decide;
pub mod message;
pub mod plan;
pub mod tracker;
pub mod version;

pub use decide::{Decision, Inputs, decide, max_concurrency};
pub use message::{UpgradeCondition, condition};
pub use plan::PlanSource;
pub use tracker::{ControlPlaneUpgrade, MachineDeploymentUpgrades, UpgradeTracker};

use topograph_api::model::{Cluster, ClusterClass, Metadata, Topology};

use crate::current::CurrentState;
use crate::labels;

/// On the Cluster while an upgrade plan is non-empty: the version of the current step
/// (control plane providers let machines of that version be created).
pub const UPGRADE_STEP_ANNOTATION: &str = "topology.internal.cluster.x-k8s.io/upgrade-step";
/// On the Cluster: how many MachineDeployments may upgrade at once (default 1).
pub const UPGRADE_CONCURRENCY_ANNOTATION: &str = "topology.cluster.x-k8s.io/upgrade-concurrency";

/// The decisions for one Cluster, from its topology and current state; `extensions`
/// answer the class's GenerateUpgradePlan extension, if it names one.
pub(crate) fn for_cluster(
    cluster: &Cluster,
    class: &ClusterClass,
    topology: &Topology,
    current: &CurrentState<'_>,
    extensions: Option<&dyn topograph_runtime::Extensions>,
) -> Result<Decision, String> {
    let ask = |desired: &str, control_plane: &str, workers: &str| {
        ask_extension(cluster, class, extensions, desired, control_plane, workers)
    };
    let inputs = Inputs {
        topology_version: &topology.version,
        // Cluster API's precedence: the class's GenerateUpgradePlan extension, then its
        // `kubernetesVersions` (v1beta2), then one minor at a time.
        plan_source: if class.upgrade_plan_extension.is_some() {
            PlanSource::Extension(&ask)
        } else if class.kubernetes_versions.is_empty() {
            PlanSource::OneMinor
        } else {
            PlanSource::Versions(&class.kubernetes_versions)
        },
        max_concurrency: max_concurrency(
            cluster
                .metadata
                .annotations
                .get(UPGRADE_CONCURRENCY_ANNOTATION)
                .map(String::as_str),
        ),
        control_plane: current.control_plane_versions(),
        current_machine_deployments: current
            .machine_deployments
            .iter()
            .map(|(name, md)| (name.clone(), md.versions()))
            .collect(),
        topology_machine_deployments: topology
            .machine_deployments
            .iter()
            .map(|md| worker_topology(&md.name, &md.metadata))
            .collect(),
        current_machine_pools: current
            .machine_pools
            .iter()
            .map(|(name, mp)| (name.clone(), mp.versions()))
            .collect(),
        topology_machine_pools: topology
            .machine_pools
            .iter()
            .map(|mp| worker_topology(&mp.name, &mp.metadata))
            .collect(),
    };
    decide(&inputs)
}

/// Asks the class's GenerateUpgradePlan extension for both plans, with Cluster API's
/// texts when it cannot be used or fails.
fn ask_extension(
    cluster: &Cluster,
    class: &ClusterClass,
    extensions: Option<&dyn topograph_runtime::Extensions>,
    desired: &str,
    control_plane: &str,
    workers: &str,
) -> Result<(Vec<String>, Vec<String>), String> {
    let name = class.upgrade_plan_extension.as_deref().unwrap_or_default();
    let Some(extensions) = extensions else {
        return Err(format!(
            "can not use GenerateUpgradePlan extension {name:?} if RuntimeSDK feature flag is disabled"
        ));
    };
    let request = topograph_runtime::hooks::GenerateUpgradePlanRequest {
        cluster: topograph_runtime::hooks::cleanup_cluster(&cluster.document),
        from_control_plane_kubernetes_version: control_plane.to_string(),
        from_workers_kubernetes_version: workers.to_string(),
        to_kubernetes_version: desired.to_string(),
        ..Default::default()
    };
    let response = extensions
        .generate_upgrade_plan(name, &cluster.namespace, &cluster.name, &request)
        .map_err(|e| format!("failed to get upgrade plan from extension: {e}"))?;
    let steps = |steps: Vec<topograph_runtime::hooks::UpgradeStepInfo>| {
        steps.into_iter().map(|s| s.version).collect::<Vec<_>>()
    };
    Ok((
        steps(response.control_plane_upgrades),
        steps(response.workers_upgrades),
    ))
}

/// A topology worker's name and the sequencing annotations on it.
fn worker_topology(name: &str, metadata: &Metadata) -> decide::MachineDeploymentTopologyState {
    decide::MachineDeploymentTopologyState {
        name: name.to_string(),
        defer_upgrade: metadata.annotations.contains_key(labels::DEFER_UPGRADE),
        hold_upgrade_sequence: metadata
            .annotations
            .contains_key(labels::HOLD_UPGRADE_SEQUENCE),
    }
}
