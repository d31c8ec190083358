//! Copying patched templates back into the desired objects. Only `spec` and the
//! labels and annotations travel; fields the topology itself sets (replicas, version,
//! the machine template reference, the topology's labels) are restored afterwards, so
//! a patch cannot take them over. A field restored this way must have been set in
//! the desired object; a patch may still add one the topology left unset.

use serde_json::Value;
use topograph_api::object::{ObjectExt, set_at};

use super::request::{Item, Target};
use crate::desired::DesiredState;
use crate::labels;

/// Labels a patch can never change.
const PRESERVED_LABELS: &[&str] = &[
    labels::CLUSTER_NAME,
    labels::TOPOLOGY_OWNED,
    labels::DEPLOYMENT_NAME,
    labels::POOL_NAME,
];
/// Annotations a patch can never change.
const PRESERVED_ANNOTATIONS: &[&str] = &[labels::CLONED_FROM_NAME, labels::CLONED_FROM_GROUP_KIND];

/// Control plane fields the topology owns (both contract versions).
pub const CONTROL_PLANE_PRESERVED: &[&[&str]] = &[
    &["spec", "machineTemplate", "metadata"],
    &["spec", "machineTemplate", "spec", "metadata"],
    &["spec", "machineTemplate", "infrastructureRef"],
    &["spec", "machineTemplate", "spec", "infrastructureRef"],
    &["spec", "machineTemplate", "readinessGates"],
    &["spec", "machineTemplate", "spec", "readinessGates"],
    &["spec", "machineTemplate", "taints"],
    &["spec", "machineTemplate", "spec", "taints"],
    &["spec", "machineTemplate", "nodeDrainTimeout"],
    &["spec", "machineTemplate", "nodeVolumeDetachTimeout"],
    &["spec", "machineTemplate", "nodeDeletionTimeout"],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeDrainTimeoutSeconds",
    ],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeVolumeDetachTimeoutSeconds",
    ],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeDeletionTimeoutSeconds",
    ],
    &["spec", "replicas"],
    &["spec", "version"],
    &["spec", "rollout", "after"],
    &["spec", "rolloutAfter"],
];

/// `metadata.labels`, `metadata.annotations` as paths under `base`.
fn metadata_paths(base: &[&'static str]) -> [Vec<&'static str>; 2] {
    let mut labels = base.to_vec();
    labels.push("labels");
    let mut annotations = base.to_vec();
    annotations.push("annotations");
    [labels, annotations]
}

/// Copies `from` (a path of `item`) to `to` (a path of `object`); a missing source is
/// an error for `spec`, and leaves the destination alone for metadata.
fn copy(item: &Value, from: &[&str], object: &mut Value, to: &[&str]) -> bool {
    match item.at(from) {
        Some(value) => {
            set_at(object, to, value.clone());
            true
        }
        None => false,
    }
}

fn key(object: &Value) -> String {
    format!("{}/{}", object.namespace(), object.name())
}

/// Overwrites `object` from `item` (spec from `spec_from`, metadata from the
/// `metadata_from` pairs), then restores the preserved fields.
fn patch_object(
    object: &mut Value,
    item: &Value,
    spec: (&[&str], &[&str]),
    metadata: &[(&[&'static str], &[&'static str])],
    preserved: &[&[&str]],
) -> Result<(), String> {
    let saved: Vec<(&[&str], Value)> = preserved
        .iter()
        .filter_map(|path| object.at(path).map(|v| (*path, v.clone())))
        .collect();
    let saved_labels = object.labels();
    let saved_annotations = object.annotations();
    let (spec_from, spec_to) = spec;
    if !copy(item, spec_from, object, spec_to) {
        return Err(format!(
            "failed to apply patch to {}: missing field {:?} in {}",
            key(object),
            spec_from.join("."),
            key(item)
        ));
    }
    for (from_base, to_base) in metadata {
        for (from, to) in metadata_paths(from_base)
            .iter()
            .zip(metadata_paths(to_base))
        {
            copy(item, from, object, &to);
        }
    }
    for (path, value) in saved {
        set_at(object, path, value);
    }
    let mut current = object.labels();
    for key in PRESERVED_LABELS {
        if let Some(value) = saved_labels.get(*key) {
            current.insert(key.to_string(), value.clone());
        }
    }
    if object.at(&["metadata", "labels"]).is_some() || !current.is_empty() {
        topograph_api::object::set_labels(object, &current);
    }
    let mut current = object.annotations();
    for key in PRESERVED_ANNOTATIONS {
        if let Some(value) = saved_annotations.get(*key) {
            current.insert(key.to_string(), value.clone());
        }
    }
    if object.at(&["metadata", "annotations"]).is_some() || !current.is_empty() {
        topograph_api::object::set_annotations(object, &current);
    }
    Ok(())
}

const OBJECT_SPEC: (&[&str], &[&str]) = (&["spec", "template", "spec"], &["spec"]);
const TEMPLATE_SPEC: (&[&str], &[&str]) =
    (&["spec", "template", "spec"], &["spec", "template", "spec"]);
const OBJECT_METADATA: &[(&[&str], &[&str])] =
    &[(&["spec", "template", "metadata"], &["metadata"])];
const TEMPLATE_METADATA: &[(&[&str], &[&str])] = &[
    (&["metadata"], &["metadata"]),
    (
        &["spec", "template", "metadata"],
        &["spec", "template", "metadata"],
    ),
];

/// Copies every patched item into the desired object it feeds.
pub fn apply(items: &[Item], desired: &mut DesiredState) -> Result<(), String> {
    for item in items {
        let patched = &item.object;
        match item.target {
            Target::InfrastructureCluster => {
                if let Some(object) = desired.infrastructure_cluster.as_mut() {
                    patch_object(object, patched, OBJECT_SPEC, OBJECT_METADATA, &[])?;
                }
            }
            Target::ControlPlane => patch_object(
                &mut desired.control_plane.object,
                patched,
                OBJECT_SPEC,
                OBJECT_METADATA,
                CONTROL_PLANE_PRESERVED,
            )?,
            Target::ControlPlaneMachineTemplate => {
                if let Some(copy) = desired.control_plane.machine_template.as_mut() {
                    patch_object(copy, patched, TEMPLATE_SPEC, TEMPLATE_METADATA, &[])?;
                }
            }
            Target::Bootstrap(index) | Target::Infrastructure(index) => {
                if let Some(md) = desired.machine_deployments.get_mut(index) {
                    let copy = if matches!(item.target, Target::Bootstrap(_)) {
                        &mut md.bootstrap_template
                    } else {
                        &mut md.infrastructure_template
                    };
                    patch_object(copy, patched, TEMPLATE_SPEC, TEMPLATE_METADATA, &[])?;
                }
            }
            Target::PoolBootstrap(index) | Target::PoolInfrastructure(index) => {
                if let Some(mp) = desired.machine_pools.get_mut(index) {
                    let object = if matches!(item.target, Target::PoolBootstrap(_)) {
                        &mut mp.bootstrap_object
                    } else {
                        &mut mp.infrastructure_object
                    };
                    patch_object(object, patched, OBJECT_SPEC, OBJECT_METADATA, &[])?;
                }
            }
        }
    }
    Ok(())
}

/// Where a template path lands in the desired object an item feeds, or why it does
/// not land anywhere.
pub fn object_path(target: Target, template_path: &str) -> Result<String, &'static str> {
    let is_object = target.is_object();
    let under = |prefix: &str| {
        template_path == prefix
            || template_path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let landed = if is_object {
        if under("/spec/template/spec") {
            Some(template_path.replacen("/spec/template/spec", "/spec", 1))
        } else if under("/spec/template/metadata/labels")
            || under("/spec/template/metadata/annotations")
        {
            Some(template_path.replacen("/spec/template", "", 1))
        } else {
            None
        }
    } else if under("/spec/template/spec")
        || under("/metadata/labels")
        || under("/metadata/annotations")
        || under("/spec/template/metadata/labels")
        || under("/spec/template/metadata/annotations")
    {
        Some(template_path.to_string())
    } else {
        None
    };
    let Some(landed) = landed else {
        return Err("not copied: only spec.template.spec, labels and annotations reach the object");
    };
    if target == Target::ControlPlane {
        let tokens: Vec<&str> = landed.split('/').skip(1).collect();
        if CONTROL_PLANE_PRESERVED
            .iter()
            .any(|p| tokens.len() >= p.len() && tokens[..p.len()] == p[..])
        {
            return Err("overridden: the topology sets this field");
        }
    }
    Ok(landed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_paths_map_to_object_paths() {
        use Target::*;
        let cases = [
            (
                ControlPlane,
                "/spec/template/spec/kubeadmConfigSpec/files",
                Ok("/spec/kubeadmConfigSpec/files"),
            ),
            (
                ControlPlane,
                "/spec/template/spec/replicas",
                Err("overridden: the topology sets this field"),
            ),
            (
                ControlPlane,
                "/spec/template/spec/version",
                Err("overridden: the topology sets this field"),
            ),
            (
                ControlPlane,
                "/spec/template/spec/versionx",
                Ok("/spec/versionx"),
            ),
            (
                ControlPlane,
                "/spec/template/metadata/labels/a",
                Ok("/metadata/labels/a"),
            ),
            (
                InfrastructureCluster,
                "/metadata/name",
                Err("not copied: only spec.template.spec, labels and annotations reach the object"),
            ),
            (
                Bootstrap(0),
                "/spec/template/spec/joinConfiguration",
                Ok("/spec/template/spec/joinConfiguration"),
            ),
            (
                Infrastructure(1),
                "/metadata/labels/x",
                Ok("/metadata/labels/x"),
            ),
            (
                Infrastructure(1),
                "/spec/other",
                Err("not copied: only spec.template.spec, labels and annotations reach the object"),
            ),
        ];
        for (target, path, want) in cases {
            assert_eq!(
                object_path(target, path),
                want.map(str::to_string),
                "{target:?} {path}"
            );
        }
    }
}
