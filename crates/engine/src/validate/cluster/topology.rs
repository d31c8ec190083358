//! Rules about a Cluster's topology as a whole: its class and version, the control
//! plane's metadata and health check, and the variables (with every override list)
//! against the class's definitions.

use topograph_api::field::FieldError;
use topograph_api::model::{ClusterClass, HealthCheckOverride, Topology, Variable};
use topograph_variables::{Scope, validate_variables};

use super::super::cluster_class::health_check;
use super::super::common;
use super::super::names::Names;
use super::super::workers::topology_workers;
use super::version;

/// The topology names its class, and its version is `v` and a semantic version (the
/// mutating webhook adds a missing `v`).
pub(super) fn class_and_version(topology: &Topology, names: &Names, errors: &mut Vec<FieldError>) {
    if topology.class.is_empty() {
        errors.push(FieldError::required(
            "spec.topology.class",
            names.class_missing,
        ));
    }
    if !topology.version.starts_with('v') {
        errors.push(FieldError::invalid(
            "spec.topology.version",
            &topology.version,
            "version must start with v",
        ));
    } else if version(&topology.version).is_none() {
        errors.push(FieldError::invalid(
            "spec.topology.version",
            &topology.version,
            "version must be a valid semantic version",
        ));
    }
}

/// The control plane's labels and annotations must be valid.
pub(super) fn control_plane_metadata(topology: &Topology, errors: &mut Vec<FieldError>) {
    errors.extend(common::metadata(
        &topology.control_plane.metadata.labels,
        &topology.control_plane.metadata.annotations,
        "spec.topology.controlPlane.metadata",
    ));
}

/// On create, a class that does not exist (yet) is only a warning: the Cluster is
/// reconciled once the class is created; until then the rest of the topology, which is
/// checked against the class, goes unchecked.
pub(super) fn class_not_found(
    topology: &Topology,
    class_namespace: &str,
    warnings: &mut Vec<String>,
) {
    warnings.push(class_not_found_warning(class_namespace, &topology.class));
}

/// The warning for a Cluster whose class `namespace/name` does not exist.
pub fn class_not_found_warning(namespace: &str, name: &str) -> String {
    format!(
        "Cluster refers to ClusterClass {namespace}/{name}, but this ClusterClass does not exist. Cluster topology has not been fully validated. The ClusterClass must be created to reconcile the Cluster"
    )
}

/// The control plane's health check override: allowed only where the class gives the
/// control plane machines, and see [`health_check_override`].
pub(super) fn control_plane_health_check(
    topology: &Topology,
    class: &ClusterClass,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    health_check_override(
        topology.control_plane.health_check.as_ref(),
        Some(class.control_plane.health_check.is_some()),
        class.control_plane.machine_infrastructure.is_some(),
        &format!("spec.topology.controlPlane.{}", names.health_check),
        names,
        errors,
    );
}

/// A health check override at `path`: forbidden where the class does not allow one
/// (`class_allows`), a valid health check definition, and not switched on without a
/// definition of its own when the class has none to fall back on (`class_defines`;
/// `None` when the worker class is unknown, which is reported on its own).
pub(super) fn health_check_override(
    check: Option<&HealthCheckOverride>,
    class_defines: Option<bool>,
    class_allows: bool,
    path: &str,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    let Some(check) = check else { return };
    if !class_allows {
        errors.push(FieldError::forbidden(
            path,
            "can be only set if spec.controlPlane.machineInfrastructure is set in ClusterClass",
        ));
    }
    health_check(&check.check, path, names, errors);
    if check.enabled == Some(true) && check.check.is_zero() && class_defines == Some(false) {
        errors.push(FieldError::forbidden(
            format!("{path}.enable"),
            format!(
                "cannot be set to true as {} definition is not available in the Cluster topology or the ClusterClass",
                names.health_check_definition
            ),
        ));
    }
}

/// Every variable list must be valid against the class's definitions; the same list of
/// the old Cluster (a MachineDeployment's by its name) is there for transition rules.
pub(super) fn variables(
    topology: &Topology,
    old: Option<&Topology>,
    class: &ClusterClass,
    errors: &mut Vec<FieldError>,
) {
    for (scope, values) in variable_lists(topology) {
        let before = old.and_then(|o| {
            variable_lists(o)
                .find(|(s, _)| *s == scope)
                .map(|(_, values)| values)
        });
        errors.extend(validate_variables(values, before, &class.variables, scope));
    }
}

/// The variable lists that admission checks, with their scopes: the Cluster's, the
/// control plane's overrides, then each worker's overrides (MachineDeployments, then
/// MachinePools).
pub(crate) fn variable_lists(
    topology: &Topology,
) -> impl Iterator<Item = (Scope<'_>, &[Variable])> {
    [
        (Scope::Cluster, topology.variables.as_slice()),
        (
            Scope::ControlPlane,
            topology.control_plane.variable_overrides.as_slice(),
        ),
    ]
    .into_iter()
    .chain(
        topology_workers(topology)
            .into_iter()
            .map(|worker| (worker.scope(), worker.overrides)),
    )
}
