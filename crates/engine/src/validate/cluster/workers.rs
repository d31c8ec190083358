//! Rules about a Cluster's workers: each MachineDeployment's metadata and rollout
//! strategy, then against the class its worker class, its name, its health check and
//! the autoscaler's annotations; each MachinePool's worker class.

use std::collections::BTreeMap;

use topograph_api::field::{ErrorType, FieldError};
use topograph_api::model::{Cluster, ClusterClass, Topology};

use super::super::cluster_class::strategy;
use super::super::common;
use super::super::names::Names;
use super::topology::health_check_override;

/// Cluster autoscaler bounds; a MachineDeployment with them must leave replicas unset.
const AUTOSCALER_ANNOTATIONS: &[&str] = &[
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
];

/// Path of the `i`th MachineDeployment of the topology.
fn machine_deployment_path(i: usize) -> String {
    format!("spec.topology.workers.machineDeployments[{i}]")
}

/// What needs no class: each MachineDeployment's labels and annotations must be valid,
/// and so must its rollout strategy's `maxUnavailable` / `maxSurge`.
pub(super) fn machine_deployment_fields(
    topology: &Topology,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        let base = machine_deployment_path(i);
        errors.extend(common::metadata(
            &md.metadata.labels,
            &md.metadata.annotations,
            &format!("{base}.metadata"),
        ));
        if let Some(s) = &md.strategy {
            strategy(s, &format!("{base}.{}", names.strategy), errors);
        }
    }
}

/// Each MachineDeployment in turn: its worker class must exist in the class, its name
/// must be set and unique in the topology, and its health check override must be
/// valid (MachineDeployments may always override; switching the check on needs a
/// definition here or in the worker class).
pub(super) fn machine_deployments(
    topology: &Topology,
    class: &ClusterClass,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        let base = machine_deployment_path(i);
        let md_class = class
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class);
        if md_class.is_none() {
            errors.push(unknown_class(
                &format!("{base}.class"),
                "MachineDeployment",
                &md.class,
                class,
            ));
        }
        unique_name(topology, i, &base, errors);
        health_check_override(
            md.health_check.as_ref(),
            md_class.is_some_and(|c| c.health_check.is_some()),
            true,
            &format!("{base}.{}", names.health_check),
            names,
            errors,
        );
    }
}

/// The `i`th MachineDeployment's name must be set, and no earlier one may have it: the
/// name identifies the MachineDeployment (its objects, its variable overrides).
fn unique_name(topology: &Topology, i: usize, base: &str, errors: &mut Vec<FieldError>) {
    let md = &topology.machine_deployments[i];
    if md.name.is_empty() {
        errors.push(FieldError::required(
            format!("{base}.name"),
            "name must not be empty",
        ));
    } else if topology.machine_deployments[..i]
        .iter()
        .any(|m| m.name == md.name)
    {
        errors.push(FieldError::invalid(
            format!("{base}.name"),
            &md.name,
            format!(
                "name must be unique. MachineDeployment with name {:?} is defined more than once",
                md.name
            ),
        ));
    }
}

/// Each MachinePool's worker class must exist in the class.
pub(super) fn machine_pools(
    topology: &Topology,
    class: &ClusterClass,
    errors: &mut Vec<FieldError>,
) {
    for (i, mp) in topology.machine_pools.iter().enumerate() {
        if !class.machine_pools.iter().any(|c| c.class == mp.class) {
            errors.push(unknown_class(
                &format!("spec.topology.workers.machinePools[{i}].class"),
                "MachinePool",
                &mp.class,
                class,
            ));
        }
    }
}

/// The error for a worker (`kind`: `MachineDeployment`, `MachinePool`) at `path` whose
/// worker class `name` the class does not have.
fn unknown_class(path: &str, kind: &str, name: &str, class: &ClusterClass) -> FieldError {
    FieldError::invalid(
        path,
        name,
        format!(
            "{kind}Class with name {name:?} does not exist in ClusterClass {:?}",
            class.name
        ),
    )
}

/// A MachineDeployment whose replicas are set may not carry the autoscaler's
/// annotations, on its topology or on its class (spec 6.2 #10): the autoscaler owns the
/// replicas then, and the topology would keep resetting them.
pub(crate) fn autoscaler(cluster: &Cluster, class: &ClusterClass) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(topology) = &cluster.topology else {
        return errors;
    };
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        let Some(replicas) = md.replicas else {
            continue;
        };
        let md_class = class
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class);
        let has = |annotations: &BTreeMap<String, String>| {
            AUTOSCALER_ANNOTATIONS
                .iter()
                .any(|a| annotations.contains_key(*a))
        };
        let source = if has(&md.metadata.annotations) {
            "the same MachineDeploymentTopology has autoscaler annotations".to_string()
        } else if md_class.is_some_and(|c| has(&c.metadata.annotations)) {
            format!(
                "the source class {:?} of this MachineDeploymentTopology has autoscaler annotations",
                md.class
            )
        } else {
            continue;
        };
        errors.push(FieldError::new(
            format!("{}.replicas", machine_deployment_path(i)),
            ErrorType::Invalid,
            Some(replicas.to_string()),
            format!(
                "cannot be set for cluster {:?} in namespace {:?} if {source}",
                cluster.name, cluster.namespace
            ),
        ));
    }
    errors
}
