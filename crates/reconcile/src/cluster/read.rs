//! Reads what a Cluster's topology consists of now, from the API server: the templates
//! its class references, the objects the Cluster references, its topology-owned
//! MachineDeployments (by label) with their templates and health checks, and its
//! Machines and MachineSets (for upgrade and template-cleanup decisions).

use std::collections::BTreeMap;

use serde_json::Value;
use topograph_api::model::{Cluster, ClusterClass, ObjectRef};
use topograph_api::object::ObjectExt;
use topograph_engine::labels;
use topograph_engine::wire::{self, read_ref};

use crate::class::{API_VERSION, template_refs};
use crate::error::ReconcileError;
use topograph_management::ManagementCluster;

/// A current MachineDeployment and what belongs to it.
#[derive(Clone, Debug)]
pub(crate) struct CurrentMachineDeployment {
    pub object: Value,
    pub bootstrap_template: Option<Value>,
    pub infrastructure_template: Option<Value>,
    pub health_check: Option<Value>,
}

/// Everything read for one reconcile.
#[derive(Clone, Debug, Default)]
pub(crate) struct Current {
    pub infrastructure_cluster: Option<Value>,
    pub control_plane: Option<Value>,
    pub control_plane_template: Option<Value>,
    pub control_plane_health_check: Option<Value>,
    /// By topology name (the `topology.cluster.x-k8s.io/deployment-name` label).
    pub machine_deployments: BTreeMap<String, CurrentMachineDeployment>,
    pub machine_sets: Vec<Value>,
    /// What the engine reads: class templates and current objects.
    pub engine_inputs: Vec<Value>,
}

async fn get_ref(
    cluster: &ManagementCluster,
    r: Option<&ObjectRef>,
    namespace: &str,
) -> Result<Option<Value>, ReconcileError> {
    let Some(r) = r.filter(|r| !r.name.is_empty()) else {
        return Ok(None);
    };
    let namespace = if r.namespace.is_empty() {
        namespace
    } else {
        r.namespace.as_str()
    };
    Ok(cluster
        .get(&r.api_version, &r.kind, namespace, &r.name)
        .await?)
}

async fn health_check(
    cluster: &ManagementCluster,
    target: Option<&Value>,
) -> Result<Option<Value>, ReconcileError> {
    match target {
        Some(t) => Ok(cluster
            .get(API_VERSION, "MachineHealthCheck", t.namespace(), t.name())
            .await?),
        None => Ok(None),
    }
}

/// Reads the current state of `cluster`, whose class is `class`.
pub(crate) async fn read(
    cluster: &ManagementCluster,
    c: &Cluster,
    class: &ClusterClass,
) -> Result<Current, ReconcileError> {
    let ns = c.namespace.as_str();
    let mut current = Current::default();
    let mut inputs = Vec::new();
    // Templates live in the class's namespace; a missing one is left to the engine,
    // which reports every missing template with Cluster API's texts.
    for r in template_refs(class) {
        if let Some(t) = get_ref(cluster, Some(&r), &class.namespace).await? {
            inputs.push(t);
        }
    }
    current.infrastructure_cluster = get_ref(cluster, c.infrastructure_ref.as_ref(), ns).await?;
    current.control_plane = get_ref(cluster, c.control_plane_ref.as_ref(), ns).await?;
    if let Some(cp) = &current.control_plane {
        let template_ref = read_ref(cp, wire::control_plane::INFRASTRUCTURE_REF)
            .or_else(|| read_ref(cp, wire::control_plane::V1BETA2_INFRASTRUCTURE_REF));
        current.control_plane_template = get_ref(cluster, template_ref.as_ref(), ns).await?;
    }
    current.control_plane_health_check =
        health_check(cluster, current.control_plane.as_ref()).await?;

    let owned = [
        (labels::CLUSTER_NAME, c.name.as_str()),
        (labels::TOPOLOGY_OWNED, ""),
    ];
    for md in cluster
        .list(API_VERSION, "MachineDeployment", ns, &owned)
        .await?
    {
        let topology_name = md.labels().get(labels::DEPLOYMENT_NAME).cloned();
        let bootstrap_template = get_ref(
            cluster,
            read_ref(&md, &["spec", "template", "spec", "bootstrap", "configRef"]).as_ref(),
            ns,
        )
        .await?;
        let infrastructure_template = get_ref(
            cluster,
            read_ref(&md, &["spec", "template", "spec", "infrastructureRef"]).as_ref(),
            ns,
        )
        .await?;
        let health_check = health_check(cluster, Some(&md)).await?;
        inputs.extend(bootstrap_template.iter().cloned());
        inputs.extend(infrastructure_template.iter().cloned());
        inputs.push(md.clone());
        // A missing label or a duplicate is reported by the engine, which sees all of them.
        if let Some(topology_name) = topology_name {
            current
                .machine_deployments
                .entry(topology_name)
                .or_insert(CurrentMachineDeployment {
                    object: md,
                    bootstrap_template,
                    infrastructure_template,
                    health_check,
                });
        }
    }
    let of_cluster = [(labels::CLUSTER_NAME, c.name.as_str())];
    inputs.extend(
        cluster
            .list(API_VERSION, "Machine", ns, &of_cluster)
            .await?,
    );
    current.machine_sets = cluster
        .list(API_VERSION, "MachineSet", ns, &of_cluster)
        .await?;
    inputs.extend(current.infrastructure_cluster.iter().cloned());
    inputs.extend(current.control_plane.iter().cloned());
    inputs.extend(current.control_plane_template.iter().cloned());
    current.engine_inputs = inputs;
    Ok(current)
}
