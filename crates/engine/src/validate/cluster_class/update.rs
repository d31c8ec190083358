//! What an update of a ClusterClass may not take from the Clusters using it: worker
//! classes and health checks they use, autoscaler-managed replicas, variables they set
//! and schemas their values satisfy.

use std::collections::BTreeMap;

use topograph_api::field::FieldError;
use topograph_api::model::{Cluster, ClusterClass, HealthCheckOverride, Topology, Variable};
use topograph_variables::validate_variables;

use super::super::cluster::{autoscaler, variable_lists};
use super::super::names::Names;
use super::super::workers::{WorkerKind, topology_workers};
use super::{Worker, workers};

/// A worker class may not be removed while a Cluster has a worker made from it (`new`
/// are the worker classes after the update). One error per such worker: for each kind,
/// Cluster by Cluster, in topology order.
pub(super) fn removed_worker_classes(
    old: &ClusterClass,
    new: &[Worker<'_>],
    clusters: &[&Cluster],
    errors: &mut Vec<FieldError>,
) {
    let old = workers(old);
    let removed = |kind: WorkerKind, class: &str| {
        old.iter().any(|o| o.kind == kind && o.class == class)
            && !new.iter().any(|n| n.kind == kind && n.class == class)
    };
    for kind in [WorkerKind::MachineDeployment, WorkerKind::MachinePool] {
        for cluster in clusters {
            let Some(topology) = &cluster.topology else {
                continue;
            };
            for worker in topology_workers(topology) {
                if worker.kind == kind && removed(kind, worker.class) {
                    errors.push(FieldError::forbidden(
                        format!("spec.workers.{}", kind.list()),
                        format!(
                            "{}Class {:?} cannot be deleted because it is used by Cluster {:?}",
                            kind.name(),
                            worker.class,
                            cluster.name
                        ),
                    ));
                }
            }
        }
    }
}

/// A health check (the control plane's, a MachineDeployment class's) may not be removed
/// while a Cluster relies on it (see [`relies_on_class`]).
pub(super) fn removed_health_checks(
    old: &ClusterClass,
    new: &ClusterClass,
    clusters: &[&Cluster],
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    if old.control_plane.health_check.is_some() && new.control_plane.health_check.is_none() {
        health_check_in_use(
            format!("spec.controlPlane.{}", names.health_check),
            names,
            clusters,
            |t| relies_on_class(t.control_plane.health_check.as_ref()),
            errors,
        );
    }
    for md in &new.machine_deployments {
        let Some(old_md) = old.machine_deployments.iter().find(|o| o.class == md.class) else {
            continue;
        };
        if old_md.health_check.is_none() || md.health_check.is_some() {
            continue;
        }
        health_check_in_use(
            format!(
                "spec.workers.machineDeployments[{}].{}",
                md.class, names.health_check
            ),
            names,
            clusters,
            |t| {
                t.machine_deployments
                    .iter()
                    .any(|m| m.class == md.class && relies_on_class(m.health_check.as_ref()))
            },
            errors,
        );
    }
}

/// A Cluster that switches the check on without defining its own relies on the class's.
fn relies_on_class(check: Option<&HealthCheckOverride>) -> bool {
    check.is_some_and(|o| o.enabled == Some(true) && o.check.is_zero())
}

/// The error at `path` for a removed health check, if any of `clusters` still relies on
/// it (`relies`, read on its topology).
fn health_check_in_use(
    path: String,
    names: &Names,
    clusters: &[&Cluster],
    relies: impl Fn(&Topology) -> bool,
    errors: &mut Vec<FieldError>,
) {
    let users: Vec<&str> = clusters
        .iter()
        .filter(|c| c.topology.as_ref().is_some_and(&relies))
        .map(|c| c.name.as_str())
        .collect();
    if !users.is_empty() {
        errors.push(FieldError::forbidden(
            path,
            format!(
                "{} cannot be deleted because it is used by Cluster(s) {:?}",
                names.health_check_definition,
                users.join(",")
            ),
        ));
    }
}

/// Each Cluster must still pass the autoscaler rule (see [`autoscaler`]) against the
/// new class: a worker class may not gain the autoscaler's annotations while a Cluster
/// sets the replicas of a MachineDeployment made from it.
pub(super) fn autoscaler_annotations(
    class: &ClusterClass,
    clusters: &[&Cluster],
    errors: &mut Vec<FieldError>,
) {
    for cluster in clusters {
        errors.extend(autoscaler(cluster, Some(class)));
    }
}

/// A variable definition may not be removed while Clusters set the variable (at top
/// level or in an override); one error per variable, in name order, naming them.
pub(super) fn removed_variables(
    old: &ClusterClass,
    new: &ClusterClass,
    clusters: &[&Cluster],
    errors: &mut Vec<FieldError>,
) {
    let mut removed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for definition in &old.variables {
        if new.variables.iter().any(|d| d.name == definition.name) {
            continue;
        }
        for cluster in clusters {
            let Some(topology) = &cluster.topology else {
                continue;
            };
            let sets = variable_lists(topology)
                .flat_map(|(_, values)| values)
                .any(|v| v.name == definition.name);
            if sets {
                removed
                    .entry(definition.name.as_str())
                    .or_default()
                    .push(cluster.name.as_str());
            }
        }
    }
    for (name, users) in removed {
        errors.push(FieldError::forbidden(
            "spec.variables",
            format!(
                "variable {name:?} cannot be removed because it is used by Cluster(s) {:?}",
                users.join(",")
            ),
        ));
    }
}

/// A changed definition (schema or required) must still accept the values the Clusters
/// set for it, at top level and in every override list.
pub(super) fn changed_variables(
    old: &ClusterClass,
    new: &ClusterClass,
    clusters: &[&Cluster],
    errors: &mut Vec<FieldError>,
) {
    for (i, definition) in new.variables.iter().enumerate() {
        let Some(before) = old.variables.iter().find(|d| d.name == definition.name) else {
            continue;
        };
        if before.schema == definition.schema && before.required == definition.required {
            continue;
        }
        let only = std::slice::from_ref(definition);
        let pick = |values: &[Variable]| -> Vec<Variable> {
            values
                .iter()
                .filter(|v| v.name == definition.name)
                .cloned()
                .collect()
        };
        let invalid_for: Vec<&str> = clusters
            .iter()
            .filter(|cluster| {
                cluster.topology.as_ref().is_some_and(|topology| {
                    variable_lists(topology).any(|(scope, values)| {
                        !validate_variables(&pick(values), None, only, scope).is_empty()
                    })
                })
            })
            .map(|cluster| cluster.name.as_str())
            .collect();
        if !invalid_for.is_empty() {
            errors.push(FieldError::forbidden(
                format!("spec.variables[{i}]"),
                format!(
                    "the changed definition of variable {:?} is not valid for the values of Cluster(s) {:?}",
                    definition.name,
                    invalid_for.join(",")
                ),
            ));
        }
    }
}
