//! The patch request: one item per class template that the Cluster's desired objects
//! come from, in a fixed order (InfrastructureCluster, ControlPlane, its machine
//! template, then each MachineDeployment's bootstrap and infrastructure templates in
//! topology order, then each MachinePool's), each with the variables it sees.
//!
//! Items are copies of the class's templates, not of the desired objects; the desired
//! objects' labels and annotations are synced into them first so that patches see
//! (and may change) what the objects will carry.

use std::rc::Rc;

use serde_json::{Map, Value};
use topograph_api::model::{Cluster, Topology, Variable};
use topograph_api::object::{ObjectExt, object_at_mut};

use super::builtin;
use crate::blueprint::Blueprint;
use crate::contract::ContractFields;
use crate::desired::DesiredState;
use crate::labels;

/// Which desired object an item's template feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The InfrastructureCluster.
    InfrastructureCluster,
    /// The ControlPlane.
    ControlPlane,
    /// The control plane's machine template copy.
    ControlPlaneMachineTemplate,
    /// The bootstrap template copy of the MachineDeployment at this index.
    Bootstrap(usize),
    /// The infrastructure template copy of the MachineDeployment at this index.
    Infrastructure(usize),
    /// The bootstrap config object of the MachinePool at this index.
    PoolBootstrap(usize),
    /// The infrastructure machine pool object of the MachinePool at this index.
    PoolInfrastructure(usize),
}

impl Target {
    /// The item's template becomes an object (its `spec.template` is the object),
    /// rather than a template copy.
    pub fn is_object(self) -> bool {
        matches!(
            self,
            Target::InfrastructureCluster
                | Target::ControlPlane
                | Target::PoolBootstrap(_)
                | Target::PoolInfrastructure(_)
        )
    }
}

/// Where an item's template is referenced from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The holder's apiVersion (Cluster API's kinds as the engine writes them).
    pub api_version: String,
    /// The holder's kind (`Cluster`, the control plane kind, `MachineDeployment`).
    pub kind: String,
    /// The holder's name.
    pub name: String,
    /// The field of the holder that references the template (for the control plane's
    /// machine template, where the control plane's contract puts the reference).
    pub field_path: String,
}

/// One template to patch.
#[derive(Clone, Debug)]
pub struct Item {
    /// Where the template is referenced from.
    pub holder: Holder,
    /// The template, as patches so far left it.
    pub object: Value,
    /// Variables of this item (overrides and builtin), merged over the global ones;
    /// shared by the items of one holder.
    pub variables: Rc<Map<String, Value>>,
    /// The desired object the item feeds.
    pub target: Target,
}

/// Holder field paths, as patches' selectors know them.
pub mod field_path {
    /// Cluster → InfrastructureCluster.
    pub const INFRASTRUCTURE_REF: &str = "spec.infrastructureRef";
    /// Cluster → ControlPlane.
    pub const CONTROL_PLANE_REF: &str = "spec.controlPlaneRef";
    /// ControlPlane → machine template (v1beta1 contract).
    pub const CONTROL_PLANE_MACHINE_TEMPLATE: &str = "spec.machineTemplate.infrastructureRef";
    /// ControlPlane → machine template (v1beta2 contract).
    pub const CONTROL_PLANE_MACHINE_TEMPLATE_V1BETA2: &str =
        "spec.machineTemplate.spec.infrastructureRef";
    /// MachineDeployment → bootstrap template.
    pub const BOOTSTRAP: &str = "spec.template.spec.bootstrap.configRef";
    /// MachineDeployment → infrastructure template.
    pub const INFRASTRUCTURE: &str = "spec.template.spec.infrastructureRef";
}

/// Annotations that never reach a patch.
const STRIPPED_ANNOTATIONS: &[&str] = &[labels::LAST_APPLIED, "cluster.x-k8s.io/conversion-data"];

/// Sets `labels` and `annotations` under `at` of `item` from `from`'s metadata (their
/// string entries, as the object's accessors read them).
fn sync_metadata(item: &mut Value, at: &[&str], from: &Value) {
    for (field, stripped) in [("labels", &[][..]), ("annotations", STRIPPED_ANNOTATIONS)] {
        let kept = |(key, value): &(&String, &Value)| {
            value.is_string() && !stripped.contains(&key.as_str())
        };
        let map: Map<String, Value> = match from.at(&["metadata", field]) {
            // Usually every entry is kept, and a map cloned whole costs less than one
            // built entry by entry.
            Some(Value::Object(map)) if map.iter().all(|entry| kept(&entry)) => map.clone(),
            Some(Value::Object(map)) => map
                .iter()
                .filter(kept)
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
            _ => Map::new(),
        };
        // `remove_at` and `set_at` at `at` + `field`, without building that path.
        if map.is_empty() {
            let parent = at
                .iter()
                .try_fold(&mut *item, |value, key| {
                    value.as_object_mut()?.get_mut(*key)
                })
                .and_then(Value::as_object_mut);
            if let Some(parent) = parent {
                parent.remove(field);
            }
        } else {
            object_at_mut(item, at).insert(field.to_string(), Value::Object(map));
        }
    }
}

fn template_item(template: &Value) -> Value {
    let mut item = template.clone();
    let metadata = object_at_mut(&mut item, &["metadata"]);
    metadata.remove("managedFields");
    if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
        for key in STRIPPED_ANNOTATIONS {
            annotations.remove(*key);
        }
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
    }
    item
}

/// User variables that the class defines (inline definitions), as a map.
fn defined(values: &[Variable], class_definitions: &[&str]) -> Map<String, Value> {
    values
        .iter()
        .filter(|v| v.name != builtin::NAME && class_definitions.contains(&v.name.as_str()))
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect()
}

fn with_builtin(mut variables: Map<String, Value>, key: &str, value: Value) -> Map<String, Value> {
    let mut b = Map::new();
    b.insert(key.to_string(), value);
    variables.insert(builtin::NAME.to_string(), Value::Object(b));
    variables
}

/// Variable values after defaulting, per scope.
pub struct Values<'a> {
    /// `spec.topology.variables`.
    pub cluster: &'a [Variable],
    /// Control plane overrides.
    pub control_plane: &'a [Variable],
    /// Overrides per MachineDeployment, in topology order.
    pub machine_deployments: Vec<&'a [Variable]>,
    /// Overrides per MachinePool, in topology order.
    pub machine_pools: Vec<&'a [Variable]>,
}

/// The global variables and the items of the request.
pub fn build(
    cluster: &Cluster,
    topology: &Topology,
    blueprint: &Blueprint<'_>,
    desired: &DesiredState,
    values: &Values<'_>,
) -> (Map<String, Value>, Vec<Item>) {
    let definitions: Vec<&str> = blueprint
        .class
        .variables
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let globals = with_builtin(
        defined(values.cluster, &definitions),
        "cluster",
        builtin::cluster(cluster, topology, &desired.cluster),
    );
    let cluster_holder = |field_path: &str| Holder {
        api_version: crate::wire::API_VERSION.to_string(),
        kind: "Cluster".to_string(),
        name: cluster.name.clone(),
        field_path: field_path.to_string(),
    };
    let mut items = Vec::new();
    if let (Some(template), Some(object)) = (
        blueprint.infrastructure_cluster_template,
        desired.infrastructure_cluster.as_ref(),
    ) {
        let mut item = template_item(template);
        sync_metadata(&mut item, &["spec", "template", "metadata"], object);
        items.push(Item {
            holder: cluster_holder(field_path::INFRASTRUCTURE_REF),
            object: item,
            variables: Rc::new(Map::new()),
            target: Target::InfrastructureCluster,
        });
    }
    let cp = &desired.control_plane;
    let cp_variables = Rc::new(with_builtin(
        defined(values.control_plane, &definitions),
        "controlPlane",
        builtin::control_plane(topology, cp),
    ));
    let mut item = template_item(blueprint.control_plane_template);
    sync_metadata(&mut item, &["spec", "template", "metadata"], &cp.object);
    items.push(Item {
        holder: cluster_holder(field_path::CONTROL_PLANE_REF),
        object: item,
        variables: Rc::clone(&cp_variables),
        target: Target::ControlPlane,
    });
    if let (Some(template), Some(copy)) = (
        blueprint.control_plane_machine_template,
        cp.machine_template.as_ref(),
    ) {
        let mut item = template_item(template);
        sync_metadata(&mut item, &["metadata"], copy);
        items.push(Item {
            holder: Holder {
                api_version: cp.object.api_version().to_string(),
                kind: cp.object.kind().to_string(),
                name: cp.object.name().to_string(),
                field_path: blueprint
                    .control_plane_contract
                    .control_plane()
                    .infrastructure_ref
                    .field_path(),
            },
            object: item,
            variables: cp_variables,
            target: Target::ControlPlaneMachineTemplate,
        });
    }
    for (index, md) in desired.machine_deployments.iter().enumerate() {
        let Some(md_topology) = topology
            .machine_deployments
            .iter()
            .find(|t| t.name == md.topology_name)
        else {
            continue;
        };
        let Some(md_blueprint) = blueprint
            .machine_deployments
            .get(md_topology.class.as_str())
        else {
            continue;
        };
        let overrides = values
            .machine_deployments
            .get(index)
            .copied()
            .unwrap_or(&[]);
        let variables = Rc::new(with_builtin(
            defined(overrides, &definitions),
            "machineDeployment",
            builtin::machine_deployment(md_topology, md),
        ));
        let holder = |field_path: &str| Holder {
            api_version: crate::wire::API_VERSION.to_string(),
            kind: "MachineDeployment".to_string(),
            name: md.object.name().to_string(),
            field_path: field_path.to_string(),
        };
        for (template, copy, field, target) in [
            (
                md_blueprint.bootstrap_template,
                &md.bootstrap_template,
                field_path::BOOTSTRAP,
                Target::Bootstrap(index),
            ),
            (
                md_blueprint.infrastructure_template,
                &md.infrastructure_template,
                field_path::INFRASTRUCTURE,
                Target::Infrastructure(index),
            ),
        ] {
            let mut item = template_item(template);
            sync_metadata(&mut item, &["metadata"], copy);
            items.push(Item {
                holder: holder(field),
                object: item,
                variables: Rc::clone(&variables),
                target,
            });
        }
    }
    for (index, mp) in desired.machine_pools.iter().enumerate() {
        let Some(mp_topology) = topology
            .machine_pools
            .iter()
            .find(|t| t.name == mp.topology_name)
        else {
            continue;
        };
        let Some(mp_blueprint) = blueprint.machine_pools.get(mp_topology.class.as_str()) else {
            continue;
        };
        let overrides = values.machine_pools.get(index).copied().unwrap_or(&[]);
        let variables = Rc::new(with_builtin(
            defined(overrides, &definitions),
            "machinePool",
            builtin::machine_pool(mp_topology, mp),
        ));
        let holder = |field_path: &str| Holder {
            api_version: crate::wire::API_VERSION.to_string(),
            kind: "MachinePool".to_string(),
            name: mp.object.name().to_string(),
            field_path: field_path.to_string(),
        };
        // The pool's bootstrap config and infrastructure machine pool are objects, so
        // their metadata is synced where an object's comes from in its template.
        for (template, object, field, target) in [
            (
                mp_blueprint.bootstrap_template,
                &mp.bootstrap_object,
                field_path::BOOTSTRAP,
                Target::PoolBootstrap(index),
            ),
            (
                mp_blueprint.infrastructure_template,
                &mp.infrastructure_object,
                field_path::INFRASTRUCTURE,
                Target::PoolInfrastructure(index),
            ),
        ] {
            let mut item = template_item(template);
            sync_metadata(&mut item, &["spec", "template", "metadata"], object);
            items.push(Item {
                holder: holder(field),
                object: item,
                variables: Rc::clone(&variables),
                target,
            });
        }
    }
    (globals, items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn synced_metadata_keeps_string_entries_without_the_stripped_annotations() {
        let last_applied = labels::LAST_APPLIED;
        // (the object's metadata, what the item gets under `at`)
        let cases = [
            (
                json!({"labels": {"a": "1", "b": "2"}, "annotations": {"x": "y"}}),
                json!({"labels": {"a": "1", "b": "2"}, "annotations": {"x": "y"}}),
            ),
            (
                json!({"labels": {"a": "1", "n": 3}, "annotations": {"x": "y", last_applied: "{}"}}),
                json!({"labels": {"a": "1"}, "annotations": {"x": "y"}}),
            ),
            (
                json!({"labels": {"n": 3}, "annotations": {"cluster.x-k8s.io/conversion-data": "{}"}}),
                json!({}),
            ),
            (json!({}), json!({})),
        ];
        for (metadata, want) in cases {
            let object = json!({"metadata": metadata});
            let mut item = json!({"spec": {"template": {"metadata": {
                "labels": {"old": "1"}, "annotations": {"old": "1"}, "name": "kept"
            }}}});
            sync_metadata(&mut item, &["spec", "template", "metadata"], &object);
            let mut want = want;
            want["name"] = json!("kept");
            assert_eq!(item["spec"]["template"]["metadata"], want, "{metadata}");
        }
    }
}
