//! Whether a ClusterClass may replace another under existing Clusters (spec 6.3): the
//! API group and kind of the templates that Clusters' objects are cloned from may not
//! change, or existing objects would no longer match their class. Versions and names
//! may change (that is how templates are rotated).

use topograph_api::field::FieldError;
use topograph_api::model::{ClusterClass, ObjectRef};
use topograph_api::object::group_of;

use super::names::{Names, names};

fn same_group_kind(
    old: &ObjectRef,
    new: &ObjectRef,
    path: &str,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    let (old_group, new_group) = (group_of(&old.api_version), group_of(&new.api_version));
    let reference = names.compatibility_ref;
    if old_group != new_group {
        errors.push(FieldError::forbidden(
            format!("{path}.{reference}.apiVersion"),
            format!(
                "group of apiVersion cannot be changed from {old_group:?} to {new_group:?} to prevent incompatible changes in the Clusters"
            ),
        ));
    }
    if old.kind != new.kind {
        errors.push(FieldError::forbidden(
            format!("{path}.{reference}.kind"),
            format!(
                "kind cannot be changed from {:?} to {:?} to prevent incompatible changes in the Clusters",
                old.kind, new.kind
            ),
        ));
    }
}

/// Problems with replacing `old` by `new`.
pub fn check_compatibility(old: &ClusterClass, new: &ClusterClass) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let names = names(new.wire);
    let none = ObjectRef::default();
    let infra = |c: &ClusterClass| c.infrastructure.as_ref().map(|i| i.template.clone());
    if let (o, n) = (infra(old), infra(new))
        && (o.is_some() || n.is_some())
    {
        same_group_kind(
            o.as_ref().unwrap_or(&none),
            n.as_ref().unwrap_or(&none),
            "spec.infrastructure",
            names,
            &mut errors,
        );
    }
    same_group_kind(
        &old.control_plane.template,
        &new.control_plane.template,
        "spec.controlPlane",
        names,
        &mut errors,
    );
    let (o, n) = (
        old.control_plane.machine_infrastructure.as_ref(),
        new.control_plane.machine_infrastructure.as_ref(),
    );
    if o.is_some() || n.is_some() {
        same_group_kind(
            o.unwrap_or(&none),
            n.unwrap_or(&none),
            "spec.controlPlane.machineInfrastructure",
            names,
            &mut errors,
        );
    }
    for (i, md) in new.machine_deployments.iter().enumerate() {
        if let Some(old_md) = old.machine_deployments.iter().find(|o| o.class == md.class) {
            same_group_kind(
                &old_md.infrastructure,
                &md.infrastructure,
                &format!(
                    "spec.workers.machineDeployments[{i}].{}",
                    names.worker_infrastructure
                ),
                names,
                &mut errors,
            );
        }
    }
    for (i, mp) in new.machine_pools.iter().enumerate() {
        if let Some(old_mp) = old.machine_pools.iter().find(|o| o.class == mp.class) {
            same_group_kind(
                &old_mp.infrastructure,
                &mp.infrastructure,
                &format!(
                    "spec.workers.machinePools[{i}].{}",
                    names.worker_infrastructure
                ),
                names,
                &mut errors,
            );
        }
    }
    errors
}
