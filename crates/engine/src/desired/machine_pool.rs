//! A MachinePool per topology entry, with its bootstrap config and infrastructure
//! machine pool. Unlike a MachineDeployment's templates these are objects created from
//! the class's templates, owned by the Cluster and updated in place (never rotated):
//! the MachinePool's controller reconciles them directly.

use serde_json::{Map, Value, json};
use topograph_api::model::MachinePoolTopology;
use topograph_api::object::{ObjectExt, object_of, set_at};

use super::clone::{CloneInput, template_to_object};
use super::reuse::{ObjectNaming, object_name};
use super::{DesiredMachinePool, Scope, worker_machine_spec, worker_metadata};
use crate::current::Referenced;
use crate::error::RenderError;
use crate::labels;
use crate::names;
use crate::wire::{self, desired_ref, ref_to};

/// The default naming template.
pub const DEFAULT_NAME_TEMPLATE: &str =
    "{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}";

pub(crate) fn compute(
    scope: &Scope<'_>,
    index: usize,
    mp: &MachinePoolTopology,
) -> Result<DesiredMachinePool, RenderError> {
    let cluster = scope.cluster;
    let class_name = &scope.blueprint.class.name;
    let Some(blueprint) = scope.blueprint.machine_pools.get(mp.class.as_str()) else {
        return Err(RenderError::new(format!(
            "spec.topology.workers.machinePools[{index}].class: Invalid value: {:?}: MachinePoolClass with name {:?} does not exist in ClusterClass {class_name:?}",
            mp.class, mp.class
        )));
    };
    let class = blueprint.class;
    let class_index = scope
        .blueprint
        .class
        .machine_pools
        .iter()
        .position(|c| c.class == class.class)
        .unwrap_or_default();
    let current = scope.current.machine_pools.get(&mp.name);
    let no_object = Referenced::default();
    let prefix = format!("{}-{}-", cluster.name, mp.name);
    // Each object keeps the name the current pool references; a new one is named
    // `<cluster>-<pool>-<suffix>` like the templates of a MachineDeployment.
    let object = |template: &Value, current: &Referenced<'_>, role: &str| {
        let name = match current.name() {
            Some(name) => name.to_string(),
            None => names::simple(&prefix, &scope.suffix(&[role, mp.name.as_str()])),
        };
        let mut object = template_to_object(CloneInput {
            template,
            // Cluster API records the template itself as the source, whatever
            // apiVersion the class's reference names.
            cloned_from: &ref_to(template),
            namespace: &cluster.namespace,
            cluster_name: &cluster.name,
            labels: [
                (labels::TOPOLOGY_OWNED.to_string(), String::new()),
                (labels::POOL_NAME.to_string(), mp.name.clone()),
            ]
            .into(),
            annotations: Default::default(),
            name,
        });
        // Owned by the Cluster, so that an object whose pool was never created is
        // garbage collected with the Cluster.
        set_at(
            &mut object,
            &["metadata", "ownerReferences"],
            Value::Array(vec![wire::cluster_owner_ref(cluster)]),
        );
        object
    };
    let current_bootstrap = current.map_or(&no_object, |c| &c.bootstrap_object);
    let bootstrap_object = object(
        blueprint.bootstrap_template,
        current_bootstrap,
        "BootstrapConfig",
    );
    let current_infrastructure = current.map_or(&no_object, |c| &c.infrastructure_object);
    let infrastructure_object = object(
        blueprint.infrastructure_template,
        current_infrastructure,
        "InfrastructureMachinePool",
    );

    let name = object_name(
        scope,
        current.map(|c| c.object.name()),
        &ObjectNaming {
            template: class.naming.as_deref(),
            default_template: DEFAULT_NAME_TEMPLATE,
            template_path: format_args!(
                "spec.workers.machinePools[{class_index}].namingStrategy.template"
            ),
            extra: &[("machinePool.topologyName", mp.name.as_str())],
            role: &["MachinePool", mp.name.as_str()],
        },
    )
    .map_err(RenderError::new)?;

    let metadata = worker_metadata(
        &cluster.name,
        (&mp.metadata, &class.metadata),
        (labels::POOL_NAME, &mp.name),
    );
    let machine = class.machine.overridden_by(&mp.machine);
    let bootstrap_ref = desired_ref(current_bootstrap.reference.as_ref(), &bootstrap_object);
    let infrastructure_ref = desired_ref(
        current_infrastructure.reference.as_ref(),
        &infrastructure_object,
    );
    let machine_spec = worker_machine_spec(
        &cluster.name,
        scope.machine_pool_version(index),
        (&bootstrap_ref, &infrastructure_ref),
        &machine,
    );

    let mut spec = Map::new();
    spec.insert("clusterName".into(), json!(cluster.name));
    // Unset replicas leave the pool to an autoscaler (or the provider's default).
    if let Some(replicas) = mp.replicas {
        spec.insert("replicas".into(), json!(replicas));
    }
    if let Some(seconds) = mp.min_ready_seconds.or(class.min_ready_seconds) {
        spec.insert("minReadySeconds".into(), json!(seconds));
    }
    if let Some(domains) = mp
        .failure_domains
        .as_ref()
        .or(class.failure_domains.as_ref())
    {
        spec.insert("failureDomains".into(), json!(domains));
    }
    spec.insert(
        "template".into(),
        object_of([
            ("metadata", Value::Object(metadata.clone())),
            ("spec", Value::Object(machine_spec)),
        ]),
    );
    let mut object = object_of([
        ("apiVersion", json!(wire::API_VERSION)),
        ("kind", json!("MachinePool")),
        ("metadata", Value::Object(metadata)),
        ("spec", Value::Object(spec)),
    ]);
    set_at(&mut object, &["metadata", "name"], json!(name));
    set_at(
        &mut object,
        &["metadata", "namespace"],
        json!(cluster.namespace),
    );
    Ok(DesiredMachinePool {
        topology_name: mp.name.clone(),
        object,
        bootstrap_object,
        infrastructure_object,
    })
}
