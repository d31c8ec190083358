//! What the upgrade decisions of one render found (Cluster API's `UpgradeTracker`): the
//! control plane's state and plan, and which MachineDeployments wait to be created,
//! wait to be upgraded, are deferred by the user or are upgrading. A reconciler reads
//! it to know which objects it must not create or touch this time.

use std::collections::{BTreeMap, BTreeSet};

/// The control plane's side of an upgrade.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ControlPlaneUpgrade {
    /// The current control plane has no observed version yet (first provisioning).
    pub is_provisioning: bool,
    /// The control plane is not at the topology version and does not move this time.
    /// The reconciler must not touch the control plane (nor its machine template), so
    /// that a spec change now and a version change later do not roll it out twice.
    pub is_pending_upgrade: bool,
    /// The control plane picks up a new version in this render.
    pub is_starting_upgrade: bool,
    /// The current control plane is still rolling out a version.
    pub is_upgrading: bool,
    /// The control plane waits for the workers to reach its version before going on.
    pub is_waiting_for_workers: bool,
    /// Versions the control plane still has to go through (empty without an upgrade).
    pub plan: Vec<String>,
    /// The version the desired control plane carries.
    pub desired_version: String,
    /// The current control plane's `spec.version`, when it exists and has one.
    pub current_version: Option<String>,
    /// The control plane's kind, for messages (`KubeadmControlPlane`).
    pub kind: String,
}

impl ControlPlaneUpgrade {
    /// Provisioned, not upgrading, not about to upgrade and not waiting to: new
    /// MachineDeployments may be created.
    pub fn is_stable(&self) -> bool {
        !(self.is_provisioning
            || self.is_upgrading
            || self.is_starting_upgrade
            || self.is_pending_upgrade)
    }

    /// Stable, or pending only because the workers must catch up first: workers may
    /// upgrade.
    pub fn is_stable_or_waiting_for_workers(&self) -> bool {
        !(self.is_provisioning
            || self.is_upgrading
            || self.is_starting_upgrade
            || (self.is_pending_upgrade && !self.is_waiting_for_workers))
    }
}

/// One kind of workers' side of an upgrade (MachineDeployments, or MachinePools: the
/// same rules, kept apart as Cluster API keeps them). Every set holds topology names
/// (`spec.topology.workers.machineDeployments[].name` / `machinePools[].name`);
/// [`Self::object_names`] maps them to object names where those exist.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MachineDeploymentUpgrades {
    /// New MachineDeployments whose creation waits for a stable control plane. Their
    /// desired objects are still rendered; the reconciler must not create them.
    pub pending_create: BTreeSet<String>,
    /// Existing MachineDeployments that are not at the topology version and do not move
    /// this time. Their desired objects keep the current version; the reconciler must
    /// not touch them (nor their templates) at all.
    pub pending_upgrade: BTreeSet<String>,
    /// MachineDeployments held back by `defer-upgrade` / `hold-upgrade-sequence` (also
    /// in `pending_upgrade`).
    pub deferred: BTreeSet<String>,
    /// MachineDeployments rolling out a version now, or picking one up in this render.
    pub upgrading: BTreeSet<String>,
    /// Versions the workers still have to go through (empty without current workers).
    pub plan: Vec<String>,
    /// Object name of each existing MachineDeployment, by topology name.
    pub object_names: BTreeMap<String, String>,
}

impl MachineDeploymentUpgrades {
    /// The reconciler must not create this MachineDeployment yet.
    pub fn is_pending_create(&self, topology_name: &str) -> bool {
        self.pending_create.contains(topology_name)
    }

    /// The reconciler must not update this MachineDeployment this time.
    pub fn is_pending_upgrade(&self, topology_name: &str) -> bool {
        self.pending_upgrade.contains(topology_name)
    }

    /// Any MachineDeployment is upgrading (which holds the control plane back).
    pub fn is_any_upgrading(&self) -> bool {
        !self.upgrading.is_empty()
    }

    /// Any upgrade activity at all on the MachineDeployments' side.
    pub fn is_any_active(&self) -> bool {
        !(self.pending_create.is_empty()
            && self.pending_upgrade.is_empty()
            && self.deferred.is_empty()
            && self.upgrading.is_empty())
    }

    /// The object name of a MachineDeployment, or its topology name when it does not
    /// exist yet.
    pub fn object_name<'a>(&'a self, topology_name: &'a str) -> &'a str {
        self.object_names
            .get(topology_name)
            .map_or(topology_name, String::as_str)
    }
}

/// The MachinePools' side of an upgrade: the same record as MachineDeployments'.
pub type MachinePoolUpgrades = MachineDeploymentUpgrades;

/// Everything the upgrade decisions of one render found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpgradeTracker {
    /// The control plane.
    pub control_plane: ControlPlaneUpgrade,
    /// The MachineDeployments.
    pub machine_deployments: MachineDeploymentUpgrades,
    /// The MachinePools.
    #[serde(default)]
    pub machine_pools: MachinePoolUpgrades,
    /// How many MachineDeployments may upgrade at once (the Cluster's
    /// `topology.cluster.x-k8s.io/upgrade-concurrency`, at least 1).
    pub max_concurrency: usize,
    /// The lowest version among the current MachineDeployments and MachinePools.
    pub min_workers_version: Option<String>,
    /// The value of `topology.internal.cluster.x-k8s.io/upgrade-step` on the desired
    /// Cluster (the desired control plane version while an upgrade plan is non-empty).
    pub upgrade_step: Option<String>,
    /// The current Cluster carries the upgrade-step annotation but the desired one does
    /// not: the reconciler must delete it (a merge patch of the desired Cluster alone
    /// would keep it).
    pub remove_upgrade_step_annotation: bool,
}

impl UpgradeTracker {
    /// Anything upgrading, pending, deferred or waiting to be created: the
    /// `TopologyReconciled` condition reports the upgrade instead of success.
    pub fn is_upgrading_anything(&self) -> bool {
        let cp = &self.control_plane;
        cp.is_pending_upgrade
            || cp.is_starting_upgrade
            || cp.is_upgrading
            || self.machine_deployments.is_any_active()
            || self.machine_pools.is_any_active()
    }

    /// The reconciler must leave the control plane and its machine template alone.
    pub fn must_not_touch_control_plane(&self) -> bool {
        self.control_plane.is_pending_upgrade
    }

    /// The reconciler must not create the MachineDeployment of this topology name.
    pub fn must_not_create_machine_deployment(&self, topology_name: &str) -> bool {
        self.machine_deployments.is_pending_create(topology_name)
    }

    /// The reconciler must not update the MachineDeployment of this topology name (nor
    /// rotate its templates).
    pub fn must_not_update_machine_deployment(&self, topology_name: &str) -> bool {
        self.machine_deployments.is_pending_upgrade(topology_name)
    }
}

impl UpgradeTracker {
    /// The reconciler must not create the MachinePool of this topology name.
    pub fn must_not_create_machine_pool(&self, topology_name: &str) -> bool {
        self.machine_pools.is_pending_create(topology_name)
    }

    /// The reconciler must not update the MachinePool of this topology name (nor its
    /// bootstrap config and infrastructure machine pool).
    pub fn must_not_update_machine_pool(&self, topology_name: &str) -> bool {
        self.machine_pools.is_pending_upgrade(topology_name)
    }
}
