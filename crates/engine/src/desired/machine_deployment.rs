//! A MachineDeployment per topology entry, with its bootstrap and infrastructure
//! template copies and its health check.

use serde_json::{Map, Value, json};
use topograph_api::model::MachineDeploymentTopology;
use topograph_api::object::{ObjectExt, object_of, set_at, string_map_value};

use super::reuse::{ObjectNaming, TemplateCopy, object_name, template_copy};
use super::{DesiredMachineDeployment, Scope, health_check, worker_machine_spec, worker_metadata};
use crate::current::Referenced;
use crate::error::RenderError;
use crate::labels;
use crate::wire::{self, desired_ref};

/// The default naming template.
pub const DEFAULT_NAME_TEMPLATE: &str =
    "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}";

pub(crate) fn compute(
    scope: &Scope<'_>,
    index: usize,
    md: &MachineDeploymentTopology,
) -> Result<DesiredMachineDeployment, RenderError> {
    let cluster = scope.cluster;
    let class_name = &scope.blueprint.class.name;
    let Some(blueprint) = scope.blueprint.machine_deployments.get(md.class.as_str()) else {
        return Err(RenderError::new(format!(
            "spec.topology.workers.machineDeployments[{index}].class: Invalid value: {:?}: MachineDeploymentClass with name {:?} does not exist in ClusterClass {class_name:?}",
            md.class, md.class
        )));
    };
    let class = blueprint.class;
    let class_index = scope
        .blueprint
        .class
        .machine_deployments
        .iter()
        .position(|c| c.class == class.class)
        .unwrap_or_default();
    let current = scope.current.machine_deployments.get(&md.name);
    let no_template = Referenced::default();
    let prefix = format!("{}-{}-", cluster.name, md.name);
    let copy = |template, cloned_from, current, role| {
        template_copy(
            scope,
            TemplateCopy {
                template,
                cloned_from,
                current,
                prefix: &prefix,
                role: &[role, md.name.as_str()],
                labels: [(labels::DEPLOYMENT_NAME.to_string(), md.name.clone())].into(),
            },
        )
    };
    let current_bootstrap = current.map_or(&no_template, |c| &c.bootstrap_template);
    let bootstrap_template = copy(
        blueprint.bootstrap_template,
        &class.bootstrap,
        current_bootstrap,
        "BootstrapTemplate",
    );
    let current_infrastructure = current.map_or(&no_template, |c| &c.infrastructure_template);
    let infrastructure_template = copy(
        blueprint.infrastructure_template,
        &class.infrastructure,
        current_infrastructure,
        "InfrastructureMachineTemplate",
    );

    let name = object_name(
        scope,
        current.map(|c| c.object.name()),
        &ObjectNaming {
            template: class.naming.as_deref(),
            default_template: DEFAULT_NAME_TEMPLATE,
            template_path: format_args!(
                "spec.workers.machineDeployments[{class_index}].namingStrategy.template"
            ),
            extra: &[("machineDeployment.topologyName", md.name.as_str())],
            role: &["MachineDeployment", md.name.as_str()],
        },
    )
    .map_err(RenderError::new)?;

    let metadata = worker_metadata(
        &cluster.name,
        (&md.metadata, &class.metadata),
        (labels::DEPLOYMENT_NAME, &md.name),
    );
    let machine = class.machine.overridden_by(&md.machine);
    let bootstrap_ref = desired_ref(current_bootstrap.reference.as_ref(), &bootstrap_template);
    let infrastructure_ref = desired_ref(
        current_infrastructure.reference.as_ref(),
        &infrastructure_template,
    );
    let mut machine_spec = worker_machine_spec(
        &cluster.name,
        scope.machine_deployment_version(index),
        (&bootstrap_ref, &infrastructure_ref),
        &machine,
    );
    if let Some(domain) = md.failure_domain.as_ref().or(class.failure_domain.as_ref()) {
        machine_spec.insert("failureDomain".into(), json!(domain));
    }
    if let Some(gates) = machine.readiness_gates {
        machine_spec.insert("readinessGates".into(), Value::Array(gates));
    }

    let selector = [
        (labels::CLUSTER_NAME.to_string(), cluster.name.clone()),
        (labels::TOPOLOGY_OWNED.to_string(), String::new()),
        (labels::DEPLOYMENT_NAME.to_string(), md.name.clone()),
    ]
    .into();
    let mut spec = Map::new();
    spec.insert("clusterName".into(), json!(cluster.name));
    if let Some(replicas) = md.replicas {
        spec.insert("replicas".into(), json!(replicas));
    }
    if let Some(seconds) = md.min_ready_seconds.or(class.min_ready_seconds) {
        spec.insert("minReadySeconds".into(), json!(seconds));
    }
    // A topology rollout (v1beta2 `rollout`: strategy or `after`) replaces the class's
    // as a whole, strategy included, as Cluster API does; v1beta1 topologies have no
    // `after`, so this is their strategy-wins rule too.
    let (strategy, rollout_after) = if md.strategy.is_some() || md.rollout_after.is_some() {
        (md.strategy.as_ref(), md.rollout_after.as_ref())
    } else {
        (class.strategy.as_ref(), None)
    };
    let mut strategy = strategy.cloned();
    // v1beta2's `deletion.order` and the health check's `remediation.maxInFlight` (the
    // topology's over the class's) live in the v1beta1 MachineDeployment's strategy.
    if let Some(order) = md.deletion_order.as_ref().or(class.deletion_order.as_ref()) {
        set_at(
            strategy.get_or_insert_with(|| json!({})),
            &["rollingUpdate", "deletePolicy"],
            json!(order),
        );
    }
    let max_in_flight = md
        .health_check
        .as_ref()
        .and_then(|h| h.check.max_in_flight.as_ref())
        .or_else(|| {
            class
                .health_check
                .as_ref()
                .and_then(|h| h.max_in_flight.as_ref())
        });
    if let Some(max) = max_in_flight {
        set_at(
            strategy.get_or_insert_with(|| json!({})),
            &["remediation", "maxInFlight"],
            json!(max),
        );
    }
    if let Some(strategy) = strategy {
        spec.insert("strategy".into(), strategy);
    }
    if let Some(after) = rollout_after {
        spec.insert("rolloutAfter".into(), json!(after));
    }
    spec.insert(
        "selector".into(),
        object_of([("matchLabels", string_map_value(&selector))]),
    );
    spec.insert(
        "template".into(),
        object_of([
            ("metadata", Value::Object(metadata.clone())),
            ("spec", Value::Object(machine_spec)),
        ]),
    );
    let mut object = object_of([
        ("apiVersion", json!(wire::API_VERSION)),
        ("kind", json!("MachineDeployment")),
        ("metadata", Value::Object(metadata)),
        ("spec", Value::Object(spec)),
    ]);
    set_at(&mut object, &["metadata", "name"], json!(name));
    set_at(
        &mut object,
        &["metadata", "namespace"],
        json!(cluster.namespace),
    );
    super::rollout::machine_deployment(scope, current.map(|c| c.object), &mut object);

    let health_check =
        health_check::effective(class.health_check.as_ref(), md.health_check.as_ref()).map(
            |check| {
                let selector = [
                    (labels::TOPOLOGY_OWNED.to_string(), String::new()),
                    (labels::DEPLOYMENT_NAME.to_string(), md.name.clone()),
                ]
                .into();
                health_check::build(scope, &object, selector, check)
            },
        );
    Ok(DesiredMachineDeployment {
        topology_name: md.name.clone(),
        object,
        bootstrap_template,
        infrastructure_template,
        health_check,
    })
}
