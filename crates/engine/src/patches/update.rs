//! Copying patched templates back into the desired objects. Only `spec` and the
//! labels and annotations travel; fields the topology itself sets (replicas, version,
//! the machine template reference, the topology's labels) are restored afterwards, so
//! a patch cannot take them over. A field restored this way must have been set in
//! the desired object; a patch may still add one the topology left unset.

use serde_json::Value;
use topograph_api::object::{ObjectExt, object_at_mut, remove_at, set_at};

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

/// Moves `from` (a path of `item`) to `to` (a path of `object`); a missing source is
/// an error for `spec`, and leaves the destination alone for metadata.
fn copy(item: &mut Value, from: &[&str], object: &mut Value, to: &[&str]) -> bool {
    match remove_at(item, from) {
        Some(value) => {
            set_at(object, to, value);
            true
        }
        None => false,
    }
}

fn key(object: &Value) -> String {
    format!("{}/{}", object.namespace(), object.name())
}

/// The string values of `keys` in `metadata.<field>` of `object`.
fn saved_strings(
    object: &Value,
    field: &str,
    keys: &[&'static str],
) -> Vec<(&'static str, String)> {
    let Some(map) = object.at(&["metadata", field]).and_then(Value::as_object) else {
        return Vec::new();
    };
    keys.iter()
        .filter_map(|key| Some((*key, map.get(*key)?.as_str()?.to_string())))
        .collect()
}

/// Leaves `metadata.<field>` a map of strings (other values dropped) with the `saved`
/// entries put back, or no field when that map is empty.
fn restore_strings(object: &mut Value, field: &str, saved: Vec<(&'static str, String)>) {
    let path = ["metadata", field];
    match object
        .as_object_mut()
        .and_then(|o| o.get_mut("metadata"))
        .and_then(Value::as_object_mut)
        .and_then(|m| m.get_mut(field))
    {
        Some(Value::Object(map)) => {
            map.retain(|_, value| value.is_string());
            for (key, value) in saved {
                // Usually the entry is still there as it was: no need to replace it.
                if map.get(key).and_then(Value::as_str) != Some(value.as_str()) {
                    map.insert(key.to_string(), Value::String(value));
                }
            }
            if map.is_empty() {
                remove_at(object, &path);
            }
        }
        present => {
            if saved.is_empty() {
                if present.is_some() {
                    remove_at(object, &path);
                }
            } else {
                let map = saved
                    .into_iter()
                    .map(|(key, value)| (key.to_string(), Value::String(value)))
                    .collect();
                set_at(object, &path, Value::Object(map));
            }
        }
    }
}

/// Overwrites `object` from `item` (spec from `spec_from`, metadata from the
/// `metadata_from` pairs), then restores the preserved fields. What is copied is moved
/// out of `item`.
fn patch_object(
    object: &mut Value,
    item: &mut Value,
    spec: (&[&str], &[&str]),
    metadata: &[(&[&'static str], &[&'static str])],
    preserved: &[&[&str]],
) -> Result<(), String> {
    let saved: Vec<(&[&str], Value)> = preserved
        .iter()
        .filter_map(|path| object.at(path).map(|v| (*path, v.clone())))
        .collect();
    let saved_labels = saved_strings(object, "labels", PRESERVED_LABELS);
    let saved_annotations = saved_strings(object, "annotations", PRESERVED_ANNOTATIONS);
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
        for field in ["labels", "annotations"] {
            // `copy` with the field under both bases, without joining the paths.
            let moved = from_base
                .iter()
                .try_fold(&mut *item, |v, key| v.as_object_mut()?.get_mut(*key))
                .and_then(|from| from.as_object_mut()?.remove(field));
            if let Some(value) = moved {
                object_at_mut(object, to_base).insert(field.to_string(), value);
            }
        }
    }
    for (path, value) in saved {
        set_at(object, path, value);
    }
    restore_strings(object, "labels", saved_labels);
    restore_strings(object, "annotations", saved_annotations);
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

/// Moves every patched item into the desired object it feeds.
pub fn apply(items: Vec<Item>, desired: &mut DesiredState) -> Result<(), String> {
    for mut item in items {
        let patched = &mut item.object;
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
