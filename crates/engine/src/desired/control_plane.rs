//! The ControlPlane, its machines' infrastructure template copy and its health check.
//! The ControlPlane's contract fields are written where the contract its kind
//! implements puts them ([`crate::contract`]).

use serde_json::{Map, Value, json};
use topograph_api::object::{ObjectExt, set_at, string_map, string_map_value};

use std::collections::BTreeMap;

use super::clone::{CloneInput, template_to_object};
use super::reuse::{ObjectNaming, TemplateCopy, carry_over_shim_owner, object_name, template_copy};
use super::{DesiredControlPlane, Scope, health_check, merge_first_wins};
use crate::contract::{Contract, ContractFields};
use crate::error::RenderError;
use crate::labels;
use crate::wire::desired_ref;

/// The default naming template.
pub const DEFAULT_NAME_TEMPLATE: &str = "{{ .cluster.name }}-{{ .random }}";

pub(crate) fn compute(scope: &Scope<'_>) -> Result<DesiredControlPlane, RenderError> {
    let class = &scope.blueprint.class.control_plane;
    let topology = &scope.topology.control_plane;
    let cluster = scope.cluster;

    let mut cp_labels = merge_first_wins(&topology.metadata.labels, &class.metadata.labels);
    cp_labels.insert(labels::CLUSTER_NAME.to_string(), cluster.name.clone());
    cp_labels.insert(labels::TOPOLOGY_OWNED.to_string(), String::new());
    let cp_annotations =
        merge_first_wins(&topology.metadata.annotations, &class.metadata.annotations);

    let name = object_name(
        scope,
        scope.current.control_plane.name(),
        &ObjectNaming {
            template: class.naming.as_deref(),
            default_template: DEFAULT_NAME_TEMPLATE,
            template_path: format_args!("spec.controlPlane.namingStrategy.template"),
            extra: &[],
            role: &["ControlPlane"],
        },
    )
    .map_err(RenderError::new)?;
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
    let contract = scope.blueprint.control_plane_contract;
    let paths = contract.control_plane();

    let mut machine_template = None;
    if let (Some(template_ref), Some(template)) = (
        class.machine_infrastructure.as_ref(),
        scope.blueprint.control_plane_machine_template,
    ) {
        let current = &scope.current.control_plane_machine_template;
        let copy = template_copy(
            scope,
            TemplateCopy {
                template,
                cloned_from: template_ref,
                current,
                prefix: &format!("{}-", cluster.name),
                role: &["ControlPlaneMachineTemplate"],
                labels: BTreeMap::new(),
            },
        );
        // Under the v1beta1 contract a version the provider moved the reference to is
        // kept; a contract-versioned reference has no version to keep.
        let current_ref = match contract {
            Contract::V1Beta1 => current.reference.as_ref(),
            Contract::V1Beta2 => None,
        };
        let reference = desired_ref(current_ref, &copy);
        paths.infrastructure_ref.set(&mut object, &reference);

        // The ControlPlane's labels and annotations reach its machines too, over what
        // the template sets for them.
        let existing = object.at(paths.machine_metadata);
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
        set_at(&mut object, paths.machine_metadata, Value::Object(metadata));
        machine_template = Some(copy);
    }

    if let Some(replicas) = topology.replicas {
        set_at(&mut object, paths.replicas, json!(replicas));
    }
    let machine = class.machine.overridden_by(&topology.machine);
    for (field, timeout) in [
        (paths.node_drain_timeout, machine.node_drain_timeout),
        (
            paths.node_volume_detach_timeout,
            machine.node_volume_detach_timeout,
        ),
        (paths.node_deletion_timeout, machine.node_deletion_timeout),
    ] {
        if let Some(timeout) = timeout {
            set_at(&mut object, field.path, field.value(timeout));
        }
    }
    if let Some(gates) = machine.readiness_gates {
        set_at(&mut object, paths.readiness_gates, Value::Array(gates));
    }
    set_at(
        &mut object,
        paths.version,
        json!(scope.versions.control_plane_version),
    );
    super::rollout::control_plane(scope, &mut object);

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
