//! The ControlPlane, its machines' infrastructure template copy and its health check.

use serde_json::{Map, Value, json};
use topograph_api::object::{ObjectExt, set_at, string_map, string_map_value};

use super::clone::{CloneInput, is_enforced, template_to_object, template_to_template};
use super::{DesiredControlPlane, Scope, health_check, merge_first_wins};
use crate::current::Referenced;
use crate::error::RenderError;
use crate::labels;
use crate::names::{self, NameData};
use crate::wire::{self, control_plane as paths, desired_ref, ref_value};

/// The default naming template.
pub const DEFAULT_NAME_TEMPLATE: &str = "{{ .cluster.name }}-{{ .random }}";

/// Keeps the owner reference to the Cluster's shim Secret that an object created
/// before the Cluster referenced it carries, so applying the desired object does not
/// drop it.
pub(crate) fn carry_over_shim_owner(
    scope: &Scope<'_>,
    current: Option<&Value>,
    desired: &mut Value,
) {
    let shim = format!("{}-shim", scope.cluster.name);
    let Some(owners) = current
        .and_then(|c| c.at(&["metadata", "ownerReferences"]))
        .and_then(Value::as_array)
    else {
        return;
    };
    let shims: Vec<Value> = owners
        .iter()
        .filter(|o| {
            o.get("kind").and_then(Value::as_str) == Some("Secret")
                && o.get("name").and_then(Value::as_str) == Some(shim.as_str())
        })
        .cloned()
        .collect();
    if !shims.is_empty() {
        set_at(
            desired,
            &["metadata", "ownerReferences"],
            Value::Array(shims),
        );
    }
}

/// Gives a template copy a new name when a current copy exists whose spec lacks what
/// the desired spec sets: templates are immutable by convention, so a change means a
/// new template (rotation). The new name hashes the desired spec, so re-rendering the
/// same change gives the same name.
pub(crate) fn rotate_if_changed(
    scope: &Scope<'_>,
    copy: &mut Value,
    current: &Referenced<'_>,
    prefix: &str,
    role: &[&str],
) {
    let Some(current) = current.object else {
        return;
    };
    let null = Value::Null;
    let desired_spec = copy.get("spec").unwrap_or(&null);
    let current_spec = current.get("spec").unwrap_or(&null);
    if is_enforced(desired_spec, current_spec) {
        return;
    }
    let content = desired_spec.to_string();
    let mut parts = role.to_vec();
    parts.push("rotation");
    parts.push(&content);
    let name = names::simple(prefix, &scope.suffix(&parts));
    set_at(copy, &["metadata", "name"], Value::String(name));
}

pub(crate) fn compute(scope: &Scope<'_>) -> Result<DesiredControlPlane, RenderError> {
    let class = &scope.blueprint.class.control_plane;
    let topology = &scope.topology.control_plane;
    let cluster = scope.cluster;

    let mut cp_labels = merge_first_wins(&topology.metadata.labels, &class.metadata.labels);
    cp_labels.insert(labels::CLUSTER_NAME.to_string(), cluster.name.clone());
    cp_labels.insert(labels::TOPOLOGY_OWNED.to_string(), String::new());
    let cp_annotations =
        merge_first_wins(&topology.metadata.annotations, &class.metadata.annotations);

    let name = match scope.current.control_plane.name() {
        Some(name) => name.to_string(),
        None => names::render_template(
            class.naming.as_deref().unwrap_or(DEFAULT_NAME_TEMPLATE),
            &NameData::new(&cluster.name, &scope.suffix(&["ControlPlane"])),
            &scope.suffix(&["ControlPlane", "overflow"]),
        )
        .map_err(|e| RenderError::new(format!("failed to generate name for ControlPlane: {e}")))?,
    };
    let mut object = template_to_object(CloneInput {
        template: scope.blueprint.control_plane_template,
        cloned_from: &class.template,
        namespace: &cluster.namespace,
        cluster_name: &cluster.name,
        labels: cp_labels.clone(),
        annotations: cp_annotations.clone(),
        name,
    });
    carry_over_shim_owner(scope, scope.current.control_plane.object, &mut object);

    let mut machine_template = None;
    if let (Some(template_ref), Some(template)) = (
        class.machine_infrastructure.as_ref(),
        scope.blueprint.control_plane_machine_template,
    ) {
        let current = &scope.current.control_plane_machine_template;
        let prefix = format!("{}-", cluster.name);
        let role = ["ControlPlaneMachineTemplate"];
        let name = match current.name() {
            Some(name) => name.to_string(),
            None => names::simple(&prefix, &scope.suffix(&role)),
        };
        let mut copy = template_to_template(
            CloneInput {
                template,
                cloned_from: template_ref,
                namespace: &cluster.namespace,
                cluster_name: &cluster.name,
                labels: Default::default(),
                annotations: Default::default(),
                name,
            },
            wire::cluster_owner_ref(cluster),
        );
        rotate_if_changed(scope, &mut copy, current, &prefix, &role);
        let reference = desired_ref(current.reference.as_ref(), &copy);
        set_at(
            &mut object,
            paths::INFRASTRUCTURE_REF,
            ref_value(&reference),
        );

        // The ControlPlane's labels and annotations reach its machines too, over what
        // the template sets for them.
        let existing = object.at(paths::MACHINE_METADATA);
        let existing_labels = string_map(existing.and_then(|m| m.get("labels")));
        let existing_annotations = string_map(existing.and_then(|m| m.get("annotations")));
        let mut metadata = Map::new();
        let machine_labels = merge_first_wins(&cp_labels, &existing_labels);
        let machine_annotations = merge_first_wins(&cp_annotations, &existing_annotations);
        if !machine_labels.is_empty() {
            metadata.insert("labels".into(), string_map_value(&machine_labels));
        }
        if !machine_annotations.is_empty() {
            metadata.insert("annotations".into(), string_map_value(&machine_annotations));
        }
        set_at(
            &mut object,
            paths::MACHINE_METADATA,
            Value::Object(metadata),
        );
        machine_template = Some(copy);
    }

    if let Some(replicas) = topology.replicas {
        set_at(&mut object, paths::REPLICAS, json!(replicas));
    }
    let machine = class.machine.overridden_by(&topology.machine);
    for (path, timeout) in [
        (paths::NODE_DRAIN_TIMEOUT, machine.node_drain_timeout),
        (
            paths::NODE_VOLUME_DETACH_TIMEOUT,
            machine.node_volume_detach_timeout,
        ),
        (paths::NODE_DELETION_TIMEOUT, machine.node_deletion_timeout),
    ] {
        if let Some(timeout) = timeout {
            set_at(&mut object, path, json!(timeout));
        }
    }
    if let Some(gates) = machine.readiness_gates {
        set_at(&mut object, paths::READINESS_GATES, Value::Array(gates));
    }
    set_at(&mut object, paths::VERSION, json!(scope.topology.version));

    let health_check = if class.machine_infrastructure.is_some() {
        health_check::effective(class.health_check.as_ref(), topology.health_check.as_ref()).map(
            |check| {
                let selector = [
                    (labels::TOPOLOGY_OWNED.to_string(), String::new()),
                    (labels::CONTROL_PLANE.to_string(), String::new()),
                ]
                .into();
                health_check::build(scope, &object, selector, check)
            },
        )
    } else {
        None
    };
    Ok(DesiredControlPlane {
        object,
        machine_template,
        health_check,
    })
}
