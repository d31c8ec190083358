//! Rules about a Cluster's workers: each worker's metadata and each MachineDeployment's
//! rollout strategy; then against the class each worker's class and name, and each
//! MachineDeployment's health check; the autoscaler's annotations. MachinePools have
//! no rollout strategy, health check or autoscaler rule in Cluster API's webhooks.

use std::collections::BTreeMap;

use topograph_api::field::{ErrorType, FieldError};
use topograph_api::model::{Cluster, ClusterClass, Topology};

use super::super::cluster_class::strategy;
use super::super::common;
use super::super::names::Names;
use super::super::workers::topology_workers;
use super::topology::health_check_override;

/// Cluster autoscaler bounds; a MachineDeployment with them must leave replicas unset
/// (Cluster API's webhook does not ask this of MachinePools).
const AUTOSCALER_ANNOTATIONS: &[&str] = &[
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
];

/// Path of the MachineDeployment `name` of the topology, for the rules about the one
/// MachineDeployment: Cluster API keys those by the name the topology gives it.
fn machine_deployment_named(name: &str) -> String {
    format!("spec.topology.workers.machineDeployments[{name}]")
}

/// What needs no class: each worker's labels and annotations must be valid
/// (MachineDeployments, then MachinePools), and so must each MachineDeployment's rollout
/// strategy's `maxUnavailable` / `maxSurge`.
pub(super) fn fields(topology: &Topology, names: &Names, errors: &mut Vec<FieldError>) {
    for worker in topology_workers(topology) {
        errors.extend(common::metadata(
            &worker.metadata.labels,
            &worker.metadata.annotations,
            &format!("{}.metadata", worker.named()),
        ));
    }
    for md in &topology.machine_deployments {
        if let Some(s) = &md.strategy {
            strategy(
                s,
                &format!("{}.{}", machine_deployment_named(&md.name), names.strategy),
                errors,
            );
        }
    }
}

/// Against the class, each worker in turn (MachineDeployments, then MachinePools): its
/// worker class must exist in the class, and its name must be set and not given to an
/// earlier worker of its kind. The name identifies the worker (its objects, its
/// variable overrides).
pub(super) fn defined_in_class(
    topology: &Topology,
    class: &ClusterClass,
    errors: &mut Vec<FieldError>,
) {
    let workers = topology_workers(topology);
    for (j, worker) in workers.iter().enumerate() {
        let kind = worker.kind.name();
        let base = worker.indexed();
        if !worker.kind.has_class(class, worker.class) {
            errors.push(FieldError::invalid(
                format!("{base}.class"),
                worker.class,
                format!(
                    "{kind}Class with name {:?} does not exist in ClusterClass {:?}",
                    worker.class, class.name
                ),
            ));
        }
        if worker.name.is_empty() {
            errors.push(FieldError::required(
                format!("{base}.name"),
                "name must not be empty",
            ));
        } else if workers[..j]
            .iter()
            .any(|w| w.kind == worker.kind && w.name == worker.name)
        {
            errors.push(FieldError::invalid(
                format!("{base}.name"),
                worker.name,
                format!(
                    "name must be unique. {kind} with name {:?} is defined more than once",
                    worker.name
                ),
            ));
        }
    }
}

/// Each MachineDeployment's health check override must be valid (MachineDeployments may
/// always override; switching the check on needs a definition here or in the worker
/// class).
pub(super) fn machine_deployment_health_checks(
    topology: &Topology,
    class: &ClusterClass,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    for md in &topology.machine_deployments {
        let md_class = class
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class);
        health_check_override(
            md.health_check.as_ref(),
            md_class.map(|c| c.health_check.is_some()),
            true,
            &format!(
                "{}.{}",
                machine_deployment_named(&md.name),
                names.health_check
            ),
            names,
            errors,
        );
    }
}

/// A MachineDeployment whose replicas are set may not carry the autoscaler's
/// annotations, on its topology or on its class (`class`, when known) (spec 6.2 #10):
/// the autoscaler owns the replicas then, and the topology would keep resetting them.
/// Each place the annotations are found is reported.
pub(crate) fn autoscaler(cluster: &Cluster, class: Option<&ClusterClass>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(topology) = &cluster.topology else {
        return errors;
    };
    let has = |annotations: &BTreeMap<String, String>| {
        AUTOSCALER_ANNOTATIONS
            .iter()
            .any(|a| annotations.contains_key(*a))
    };
    for md in &topology.machine_deployments {
        let Some(replicas) = md.replicas else {
            continue;
        };
        let mut refuse = |source: String| {
            errors.push(FieldError::new(
                format!("{}.replicas", machine_deployment_named(&md.name)),
                ErrorType::Invalid,
                Some(replicas.to_string()),
                format!(
                    "cannot be set for cluster {:?} in namespace {:?} if {source}",
                    cluster.name, cluster.namespace
                ),
            ));
        };
        if has(&md.metadata.annotations) {
            refuse("the same MachineDeploymentTopology has autoscaler annotations".to_string());
        }
        let sources = class
            .iter()
            .flat_map(|c| &c.machine_deployments)
            .filter(|c| c.class == md.class && has(&c.metadata.annotations));
        for _ in sources {
            refuse(format!(
                "the source class {:?} of this MachineDeploymentTopology has autoscaler annotations",
                md.class
            ));
        }
    }
    errors
}
