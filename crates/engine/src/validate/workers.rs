//! The two kinds of worker, MachineDeployments and MachinePools: Cluster API's webhooks
//! apply several rules to both alike, on a class's worker classes and on a topology's
//! workers, with only the list and the word in the message differing. The rules ask
//! [`WorkerKind`] for those, so one rule serves both kinds.

use topograph_api::model::{ClusterClass, Metadata, Topology, Variable};
use topograph_variables::Scope;

/// A kind of worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorkerKind {
    MachineDeployment,
    MachinePool,
}

impl WorkerKind {
    /// Its list under `spec.workers` (and `spec.topology.workers`).
    pub(crate) fn list(self) -> &'static str {
        match self {
            WorkerKind::MachineDeployment => "machineDeployments",
            WorkerKind::MachinePool => "machinePools",
        }
    }

    /// How messages name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            WorkerKind::MachineDeployment => "MachineDeployment",
            WorkerKind::MachinePool => "MachinePool",
        }
    }

    /// The sample name naming templates get for the worker in a Cluster's topology:
    /// `(field, value)`.
    pub(crate) fn sample_topology_name(self) -> (&'static str, &'static str) {
        match self {
            WorkerKind::MachineDeployment => ("machineDeployment.topologyName", "mdtopology"),
            WorkerKind::MachinePool => ("machinePool.topologyName", "mptopology"),
        }
    }

    /// Whether `class` has a worker class of this kind named `name`.
    pub(crate) fn has_class(self, class: &ClusterClass, name: &str) -> bool {
        match self {
            WorkerKind::MachineDeployment => {
                class.machine_deployments.iter().any(|c| c.class == name)
            }
            WorkerKind::MachinePool => class.machine_pools.iter().any(|c| c.class == name),
        }
    }
}

/// A worker of a Cluster's topology, as the rules that treat both kinds alike read it.
pub(crate) struct TopologyWorker<'a> {
    pub kind: WorkerKind,
    /// Its position in its list.
    pub index: usize,
    /// Its name in the topology.
    pub name: &'a str,
    /// The worker class it is made from.
    pub class: &'a str,
    pub metadata: &'a Metadata,
    /// Its variable overrides.
    pub overrides: &'a [Variable],
}

impl<'a> TopologyWorker<'a> {
    /// Its path for the rules about the list (class, name):
    /// `spec.topology.workers.<list>[<index>]`.
    pub(crate) fn indexed(&self) -> String {
        format!("spec.topology.workers.{}[{}]", self.kind.list(), self.index)
    }

    /// Its path for the rules about the one worker: `spec.topology.workers.<list>[<name>]`,
    /// as the webhook keys those.
    pub(crate) fn named(&self) -> String {
        format!("spec.topology.workers.{}[{}]", self.kind.list(), self.name)
    }

    /// The scope of its variable overrides.
    pub(crate) fn scope(&self) -> Scope<'a> {
        match self.kind {
            WorkerKind::MachineDeployment => Scope::MachineDeployment(self.name),
            WorkerKind::MachinePool => Scope::MachinePool(self.name),
        }
    }
}

/// The workers of `topology`: its MachineDeployments, then its MachinePools, each in
/// list order (the order the webhook reports them in).
pub(crate) fn topology_workers(topology: &Topology) -> Vec<TopologyWorker<'_>> {
    // The two topology types have these fields alike but no common trait.
    macro_rules! of {
        ($kind:expr, $list:expr) => {
            $list.iter().enumerate().map(|(index, w)| TopologyWorker {
                kind: $kind,
                index,
                name: &w.name,
                class: &w.class,
                metadata: &w.metadata,
                overrides: &w.variable_overrides,
            })
        };
    }
    of!(WorkerKind::MachineDeployment, topology.machine_deployments)
        .chain(of!(WorkerKind::MachinePool, topology.machine_pools))
        .collect()
}
