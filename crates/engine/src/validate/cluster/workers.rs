//! Rules about a Cluster's workers: each MachineDeployment's metadata and rollout
//! strategy, then against the class its worker class, its name and its health check;
//! each MachinePool's worker class; the autoscaler's annotations.

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

/// Path of the `i`th MachineDeployment of the topology, for the rules about the list
/// (its class, its name).
fn machine_deployment_path(i: usize) -> String {
    format!("spec.topology.workers.machineDeployments[{i}]")
}

/// Path of the MachineDeployment `name` of the topology, for the rules about the one
/// MachineDeployment: Cluster API keys those by the name the topology gives it.
fn machine_deployment_named(name: &str) -> String {
    format!("spec.topology.workers.machineDeployments[{name}]")
}

/// What needs no class: each MachineDeployment's labels and annotations must be valid,
/// and so must its rollout strategy's `maxUnavailable` / `maxSurge`.
pub(super) fn machine_deployment_fields(
    topology: &Topology,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    for md in &topology.machine_deployments {
        errors.extend(common::metadata(
            &md.metadata.labels,
            &md.metadata.annotations,
            &format!("{}.metadata", machine_deployment_named(&md.name)),
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

/// Each MachineDeployment's worker class must exist in the class, and its name must be
/// set and unique in the topology.
pub(super) fn machine_deployments(
    topology: &Topology,
    class: &ClusterClass,
    errors: &mut Vec<FieldError>,
) {
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        let base = machine_deployment_path(i);
        if !class
            .machine_deployments
            .iter()
            .any(|c| c.class == md.class)
        {
            errors.push(unknown_class(
                &format!("{base}.class"),
                "MachineDeployment",
                &md.class,
                class,
            ));
        }
        unique_name(topology, i, &base, errors);
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
