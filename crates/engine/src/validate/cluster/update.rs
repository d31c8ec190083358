//! The changes an update may make to a Cluster: what may not be removed, which class
//! changes are allowed, and how the version may move.

use topograph_api::field::{ErrorType, FieldError};
use topograph_api::model::{Cluster, ClusterClass, Topology};

use super::super::compatibility::check_compatibility;
use super::{SKIP_CLASS_CHECK, SKIP_VERSION_CHECK, find, version};

/// The infrastructure and control plane references and the topology may not be
/// removed once set.
pub(super) fn removals(cluster: &Cluster, old: &Cluster, errors: &mut Vec<FieldError>) {
    if old.infrastructure_ref.is_some() && cluster.infrastructure_ref.is_none() {
        errors.push(FieldError::forbidden(
            "spec.infrastructureRef",
            "cannot be removed",
        ));
    }
    if old.control_plane_ref.is_some() && cluster.control_plane_ref.is_none() {
        errors.push(FieldError::forbidden(
            "spec.controlPlaneRef",
            "cannot be removed",
        ));
    }
    if old.topology.is_some() && cluster.topology.is_none() {
        errors.push(FieldError::forbidden(
            "spec.topology",
            "cannot be removed from an existing Cluster",
        ));
    }
}

/// On update a missing class is an error (on create only a warning): the changes cannot
/// be checked against it.
pub(super) fn class_exists(
    topology: &Topology,
    class_namespace: &str,
    class: Option<&ClusterClass>,
    errors: &mut Vec<FieldError>,
) {
    if class.is_none() {
        errors.push(FieldError::new(
            "spec.topology.class",
            ErrorType::Internal,
            None,
            format!(
                "ClusterClass {class_namespace}/{} not found",
                topology.class
            ),
        ));
    }
}

/// A Cluster may move to another class (`class`, in `class_namespace`) only if that
/// class is compatible with its old one, which must therefore still exist.
pub(super) fn class_change(
    old: &Cluster,
    topology: &Topology,
    class_namespace: &str,
    class: Option<&ClusterClass>,
    classes: &[&ClusterClass],
    errors: &mut Vec<FieldError>,
) {
    let Some(old_topology) = &old.topology else {
        return;
    };
    let old_namespace = old_topology.class_namespace_or(&old.namespace);
    if (old_topology.class.as_str(), old_namespace) == (topology.class.as_str(), class_namespace) {
        return;
    }
    match (find(classes, old_namespace, &old_topology.class), class) {
        (Some(old_class), Some(new_class)) => {
            errors.extend(check_compatibility(old_class, new_class));
        }
        // A missing new class is reported by `class_exists`.
        (Some(_), None) => {}
        (None, _) => errors.push(FieldError::forbidden(
            "spec.topology.class",
            format!(
                "valid ClusterClass with name {:?} could not be retrieved, change from class {:?} to class {:?} cannot be validated. Error: ClusterClass {old_namespace}/{} not found",
                old_topology.class, old_topology.class, topology.class, old_topology.class
            ),
        )),
    }
}

/// The version may not go down, nor up by more than one minor version at a time (as
/// Kubernetes upgrades) unless the class plans multi-minor upgrades (its
/// `kubernetesVersions` or a GenerateUpgradePlan extension); the
/// [`SKIP_VERSION_CHECK`] annotation skips this, with a warning. Versions that do not
/// parse are reported elsewhere.
pub(super) fn version_change(
    cluster: &Cluster,
    class: Option<&ClusterClass>,
    topology: &Topology,
    old_topology: &Topology,
    errors: &mut Vec<FieldError>,
    warnings: &mut Vec<String>,
) {
    if cluster
        .metadata
        .annotations
        .contains_key(SKIP_VERSION_CHECK)
    {
        warnings.push(format!(
            "Skipping version validation for Cluster because annotation {SKIP_VERSION_CHECK:?} is set."
        ));
        return;
    }
    let (Some(from), Some(to)) = (version(&old_topology.version), version(&topology.version))
    else {
        return;
    };
    let text = |(a, b, c): (u64, u64, u64)| format!("{a}.{b}.{c}");
    let plans_upgrades = class
        .is_some_and(|c| !c.kubernetes_versions.is_empty() || c.upgrade_plan_extension.is_some());
    let direction = if to < from {
        "decreased"
    } else if to >= (from.0, from.1 + 2, 0) && !plans_upgrades {
        "increased"
    } else {
        return;
    };
    errors.push(FieldError::invalid(
        "spec.topology.version",
        &topology.version,
        format!(
            "version cannot be {direction} from {:?} to {:?}",
            text(from),
            text(to)
        ),
    ));
}

/// A Cluster made without a topology may not be given a class later, unless the
/// [`SKIP_CLASS_CHECK`] annotation allows it.
pub(super) fn class_set(cluster: &Cluster, errors: &mut Vec<FieldError>) {
    if !cluster.metadata.annotations.contains_key(SKIP_CLASS_CHECK) {
        errors.push(FieldError::forbidden(
            "spec.topology.class",
            super::super::names::names(cluster.wire).class_set_on_existing,
        ));
    }
}
