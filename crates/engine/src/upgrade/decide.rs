//! The version decisions of one render (spec section 7.2): Cluster API's
//! `computeControlPlaneVersion`, `computeMachineDeploymentVersion` and
//! `computeMachinePoolVersion` without the Runtime SDK hooks, over plain inputs so that
//! they can be tested and fuzzed without building objects. MachineDeployments and
//! MachinePools follow the same rules, each kind with its own tracker record and its
//! own upgrade concurrency.

use std::collections::BTreeMap;

use super::plan::{self, PlanSource, WorkerVersion};
use super::tracker::{MachineDeploymentUpgrades, UpgradeTracker};
use super::version::Version;

/// The current control plane, as far as versions go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ControlPlaneState {
    /// Its kind (`KubeadmControlPlane`).
    pub kind: String,
    /// `spec.version`.
    pub spec_version: String,
    /// `status.version`: the lowest version its machines run.
    pub status_version: Option<String>,
    /// `status.versions[]` of control planes reporting one entry per version.
    pub status_versions: Vec<String>,
}

/// A current MachineDeployment, as far as versions go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MachineDeploymentState {
    /// Its object name.
    pub object_name: String,
    /// `spec.template.spec.version` ("" when unset).
    pub version: String,
    /// Its machines are still rolling out a version (see `current.rs`).
    pub upgrading: bool,
}

/// A MachineDeployment of the topology, as far as versions go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MachineDeploymentTopologyState {
    /// Its topology name.
    pub name: String,
    /// The topology carries `topology.cluster.x-k8s.io/defer-upgrade`.
    pub defer_upgrade: bool,
    /// The topology carries `topology.cluster.x-k8s.io/hold-upgrade-sequence`.
    pub hold_upgrade_sequence: bool,
}

/// Everything the decisions depend on.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    /// `spec.topology.version`.
    pub topology_version: &'a str,
    /// Where the control plane's plan comes from.
    pub plan_source: PlanSource<'a>,
    /// MachineDeployments allowed to upgrade at once (values below 1 mean 1).
    pub max_concurrency: usize,
    /// The current control plane, when it exists with a `spec.version`.
    pub control_plane: Option<ControlPlaneState>,
    /// Current MachineDeployments by topology name, including those no longer in the
    /// topology (they still count for the lowest worker version and as upgrading).
    pub current_machine_deployments: BTreeMap<String, MachineDeploymentState>,
    /// The topology's MachineDeployments, in `workers.machineDeployments` order.
    pub topology_machine_deployments: Vec<MachineDeploymentTopologyState>,
    /// Current MachinePools by topology name, as for MachineDeployments.
    pub current_machine_pools: BTreeMap<String, MachineDeploymentState>,
    /// The topology's MachinePools, in `workers.machinePools` order.
    pub topology_machine_pools: Vec<MachineDeploymentTopologyState>,
}

/// The two kinds of workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workers {
    /// `workers.machineDeployments`.
    MachineDeployments,
    /// `workers.machinePools`.
    MachinePools,
}

impl Workers {
    fn current<'i>(self, inputs: &'i Inputs<'_>) -> &'i BTreeMap<String, MachineDeploymentState> {
        match self {
            Workers::MachineDeployments => &inputs.current_machine_deployments,
            Workers::MachinePools => &inputs.current_machine_pools,
        }
    }

    fn topology<'i>(self, inputs: &'i Inputs<'_>) -> &'i [MachineDeploymentTopologyState] {
        match self {
            Workers::MachineDeployments => &inputs.topology_machine_deployments,
            Workers::MachinePools => &inputs.topology_machine_pools,
        }
    }

    fn tracked(self, tracker: &mut UpgradeTracker) -> &mut MachineDeploymentUpgrades {
        match self {
            Workers::MachineDeployments => &mut tracker.machine_deployments,
            Workers::MachinePools => &mut tracker.machine_pools,
        }
    }

    /// The kind, for messages.
    pub fn kind(self) -> &'static str {
        match self {
            Workers::MachineDeployments => "MachineDeployment",
            Workers::MachinePools => "MachinePool",
        }
    }

    /// Cluster API's words for it in errors (`machine deployment`).
    fn words(self) -> &'static str {
        match self {
            Workers::MachineDeployments => "machine deployment",
            Workers::MachinePools => "machine pool",
        }
    }
}

/// The decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// What was found, for the reconciler and the condition.
    pub tracker: UpgradeTracker,
    /// The desired control plane version.
    pub control_plane_version: String,
    /// The desired version of each topology MachineDeployment, in topology order.
    pub machine_deployment_versions: Vec<String>,
    /// The desired version of each topology MachinePool, in topology order.
    pub machine_pool_versions: Vec<String>,
}

/// Cluster API's `IsUpgrading` contract check: the spec version is above (or, by build
/// metadata, different from) what the machines run.
fn is_control_plane_upgrading(cp: &ControlPlaneState) -> Result<bool, String> {
    let observed: Vec<&String> = match &cp.status_version {
        Some(v) => vec![v],
        None => cp.status_versions.iter().collect(),
    };
    if observed.is_empty() {
        return Ok(false);
    }
    let spec = Version::parse_tolerant(&cp.spec_version)
        .map_err(|e| format!("failed to parse control plane spec version: {e}"))?;
    for status in observed {
        let status = Version::parse_tolerant(status)
            .map_err(|e| format!("failed to parse control plane status version: {e}"))?;
        if spec.compare(&status).greater_or_different() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn control_plane_version(
    inputs: &Inputs<'_>,
    tracker: &mut UpgradeTracker,
) -> Result<String, String> {
    let topology_version = inputs.topology_version;
    let Some(cp) = &inputs.control_plane else {
        return Ok(topology_version.to_string());
    };
    let current = cp.spec_version.clone();
    let state = &mut tracker.control_plane;
    state.is_pending_upgrade = current != topology_version;
    if cp.status_version.is_none() && cp.status_versions.is_empty() {
        state.is_provisioning = true;
        return Ok(current);
    }
    if is_control_plane_upgrading(cp)
        .map_err(|e| format!("failed to check if control plane is upgrading: {e}"))?
    {
        state.is_upgrading = true;
        return Ok(current);
    }
    // Workers must reach the control plane's version before it moves again (skew).
    if tracker.machine_deployments.plan.first() == Some(&current)
        || tracker.machine_pools.plan.first() == Some(&current)
    {
        tracker.control_plane.is_waiting_for_workers = true;
        return Ok(current);
    }
    if tracker.machine_deployments.is_any_upgrading() || tracker.machine_pools.is_any_upgrading() {
        return Ok(current);
    }
    let state = &mut tracker.control_plane;
    if !state.is_pending_upgrade {
        return Ok(current);
    }
    let Some(next) = state.plan.first().cloned() else {
        return Err("cannot compute the control plane version if the control plane is pending upgrade and the upgrade plan is not set".into());
    };
    // Picking the version up now: not pending any more, or the reconciler would hold
    // back the very change that starts the upgrade.
    state.is_starting_upgrade = true;
    state.is_pending_upgrade = false;
    Ok(next)
}

/// Cluster API's `isMachineDeploymentDeferred` / `isMachinePoolDeferred`: the worker's
/// own annotations, or a `hold-upgrade-sequence` on any worker of its kind before it.
fn is_deferred(topologies: &[MachineDeploymentTopologyState], index: usize) -> bool {
    let Some(md) = topologies.get(index) else {
        return false;
    };
    md.defer_upgrade
        || md.hold_upgrade_sequence
        || topologies[..index].iter().any(|t| t.hold_upgrade_sequence)
}

fn worker_version(
    inputs: &Inputs<'_>,
    workers: Workers,
    index: usize,
    tracker: &mut UpgradeTracker,
) -> Result<String, String> {
    let topology_version = inputs.topology_version;
    let topologies = workers.topology(inputs);
    let Some(worker) = topologies.get(index) else {
        return Ok(topology_version.to_string());
    };
    let name = worker.name.as_str();
    let control_plane_stable = tracker.control_plane.is_stable();
    let may_move = tracker.control_plane.is_stable_or_waiting_for_workers();
    let max_concurrency = tracker.max_concurrency;
    let tracked = workers.tracked(tracker);
    let Some(current) = workers.current(inputs).get(name) else {
        // Joining nodes while control plane machines come and go can fail (load
        // balancers lag behind), so creation waits for a stable control plane.
        if !control_plane_stable {
            tracked.pending_create.insert(name.to_string());
        }
        return Ok(topology_version.to_string());
    };
    let current_version = current.version.clone();
    // A worker without a version has nothing to sequence: the topology's version
    // applies (Cluster API would fail here; rendered inputs are often partial).
    if current_version.is_empty() || current_version == topology_version {
        return Ok(topology_version.to_string());
    }
    if is_deferred(topologies, index) {
        tracked.deferred.insert(name.to_string());
        tracked.pending_upgrade.insert(name.to_string());
        return Ok(current_version);
    }
    if tracked.upgrading.len() >= max_concurrency || !may_move {
        tracked.pending_upgrade.insert(name.to_string());
        return Ok(current_version);
    }
    let Some(next) = tracked.plan.first().cloned() else {
        let words = workers.words();
        return Err(format!(
            "cannot compute the {words} version if the {words} is pending upgrade and the upgrade plan is not set"
        ));
    };
    // Already at this step of the plan: it waits for the control plane's next one.
    if next == current_version {
        tracked.pending_upgrade.insert(name.to_string());
        return Ok(current_version);
    }
    tracked.upgrading.insert(name.to_string());
    Ok(next)
}

/// Decides the control plane's and every topology MachineDeployment's version, in
/// Cluster API's order: plans, MachineDeployments already upgrading, the control plane,
/// then the MachineDeployments in topology order.
pub fn decide(inputs: &Inputs<'_>) -> Result<Decision, String> {
    let mut tracker = UpgradeTracker {
        max_concurrency: inputs.max_concurrency.max(1),
        ..UpgradeTracker::default()
    };
    if let Some(cp) = &inputs.control_plane {
        tracker.control_plane.kind = cp.kind.clone();
        tracker.control_plane.current_version = Some(cp.spec_version.clone());
        let workers: Vec<WorkerVersion<'_>> = [Workers::MachineDeployments, Workers::MachinePools]
            .into_iter()
            .flat_map(|w| {
                w.current(inputs).values().map(move |state| WorkerVersion {
                    kind: w.kind(),
                    name: &state.object_name,
                    version: &state.version,
                })
            })
            .collect();
        let plans = plan::compute(
            inputs.plan_source,
            inputs.topology_version,
            &cp.spec_version,
            &workers,
        )
        .map_err(|e| format!("failed to compute upgrade plan: {e}"))?;
        tracker.control_plane.plan = plans.control_plane;
        // Each kind follows the workers' plan only when it has workers to move.
        for w in [Workers::MachineDeployments, Workers::MachinePools] {
            if !w.current(inputs).is_empty() {
                w.tracked(&mut tracker).plan = plans.workers.clone();
            }
        }
        tracker.min_workers_version = plans.min_workers_version;
    }
    for w in [Workers::MachineDeployments, Workers::MachinePools] {
        for (topology_name, state) in w.current(inputs) {
            let tracked = w.tracked(&mut tracker);
            tracked
                .object_names
                .insert(topology_name.clone(), state.object_name.clone());
            if state.upgrading {
                tracked.upgrading.insert(topology_name.clone());
            }
        }
    }

    let control_plane_version = control_plane_version(inputs, &mut tracker).map_err(|e| {
        format!("failed to compute ControlPlane: failed to compute version of ControlPlane: {e}")
    })?;
    tracker.control_plane.desired_version = control_plane_version.clone();

    let mut machine_deployment_versions = Vec::new();
    for (index, md) in inputs.topology_machine_deployments.iter().enumerate() {
        let version = worker_version(inputs, Workers::MachineDeployments, index, &mut tracker)
            .map_err(|e| {
                format!(
                    "failed to compute MachineDeployments: failed to compute MachineDepoyment for topology {:?}: {e}",
                    md.name
                )
            })?;
        machine_deployment_versions.push(version);
    }
    let mut machine_pool_versions = Vec::new();
    for (index, mp) in inputs.topology_machine_pools.iter().enumerate() {
        let version = worker_version(inputs, Workers::MachinePools, index, &mut tracker)
            .map_err(|e| {
                format!(
                    "failed to compute MachinePools: failed to compute MachinePool for topology {:?}: {e}",
                    mp.name
                )
            })?;
        machine_pool_versions.push(version);
    }

    if !tracker.control_plane.plan.is_empty()
        || !tracker.machine_deployments.plan.is_empty()
        || !tracker.machine_pools.plan.is_empty()
    {
        tracker.upgrade_step = Some(control_plane_version.clone());
    }
    Ok(Decision {
        tracker,
        control_plane_version,
        machine_deployment_versions,
        machine_pool_versions,
    })
}

/// The Cluster's `topology.cluster.x-k8s.io/upgrade-concurrency` as Cluster API reads
/// it: `strconv.Atoi`, anything unparsable or below 1 meaning 1.
pub fn max_concurrency(annotation: Option<&str>) -> usize {
    annotation
        .and_then(|v| v.parse::<i64>().ok())
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_annotation() {
        // (annotation, concurrency)
        for (value, want) in [
            (None, 1),
            (Some("3"), 3),
            (Some("+2"), 2),
            (Some("0"), 1),
            (Some("-4"), 1),
            (Some("two"), 1),
            (Some(""), 1),
        ] {
            assert_eq!(max_concurrency(value), want, "{value:?}");
        }
    }

    #[test]
    fn control_plane_upgrading_by_status() {
        // (spec.version, status.version, status.versions, upgrading)
        let cases: [(&str, Option<&str>, &[&str], bool); 7] = [
            ("v1.31.0", None, &[], false),
            ("v1.31.0", Some("v1.30.0"), &[], true),
            ("v1.31.0", Some("v1.31.0"), &[], false),
            ("v1.30.0", Some("v1.31.0"), &[], false),
            // Build metadata that cannot be ordered counts as a change.
            ("v1.31.0+a", Some("v1.31.0+b"), &[], true),
            ("v1.31.0", None, &["v1.31.0", "v1.30.0"], true),
            ("v1.31.0", None, &["v1.31.0"], false),
        ];
        for (spec, status, versions, want) in cases {
            let cp = ControlPlaneState {
                kind: "KubeadmControlPlane".into(),
                spec_version: spec.into(),
                status_version: status.map(str::to_string),
                status_versions: versions.iter().map(ToString::to_string).collect(),
            };
            assert_eq!(
                is_control_plane_upgrading(&cp),
                Ok(want),
                "{spec} {status:?} {versions:?}"
            );
        }
    }

    #[test]
    fn holds_reach_later_machine_deployments_only() {
        let topologies: Vec<MachineDeploymentTopologyState> = [false, true, false]
            .iter()
            .enumerate()
            .map(|(i, hold)| MachineDeploymentTopologyState {
                name: format!("md-{i}"),
                hold_upgrade_sequence: *hold,
                ..MachineDeploymentTopologyState::default()
            })
            .collect();
        let deferred: Vec<bool> = (0..4).map(|i| is_deferred(&topologies, i)).collect();
        assert_eq!(deferred, [false, true, true, false]);
    }
}
