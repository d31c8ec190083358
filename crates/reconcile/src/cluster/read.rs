//! Reads what a Cluster's topology consists of now, from the API server (or, for the
//! Cluster's own objects, the owned-object cache of the process watching it): the templates
//! its class references, the objects the Cluster references, its topology-owned
//! MachineDeployments (by label) with their templates and health checks, its
//! topology-owned MachinePools (by label) with their bootstrap config and
//! infrastructure machine pool objects, and its Machines and MachineSets (for upgrade and template-cleanup decisions); and which
//! contract the infrastructure cluster and control plane kinds implement, read from
//! their CRDs and handed to the engine among its inputs.

use std::collections::BTreeMap;

use futures::future::try_join_all;

use serde_json::Value;
use topograph_api::contract::{Contract, Declared};
use topograph_api::model::{Cluster, ClusterClass, ObjectRef};
use topograph_api::object::{ObjectExt, group_of, split_api_version};
use topograph_engine::contract;
use topograph_engine::labels;
use topograph_engine::wire::read_ref;

use crate::class::{API_VERSION, template_refs};
use crate::error::ReconcileError;
use topograph_management::ManagementCluster;
use topograph_management::class_cache::Keep;
use topograph_management::crds::plural;

/// A current MachineDeployment and what belongs to it.
#[derive(Clone, Debug)]
pub(crate) struct CurrentMachineDeployment {
    pub object: Value,
    pub bootstrap_template: Option<Value>,
    pub infrastructure_template: Option<Value>,
    pub health_check: Option<Value>,
}

/// A current MachinePool and the two objects it references.
#[derive(Clone, Debug)]
pub(crate) struct CurrentMachinePool {
    pub object: Value,
    pub bootstrap_object: Option<Value>,
    pub infrastructure_object: Option<Value>,
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
    /// By topology name (the `topology.cluster.x-k8s.io/pool-name` label).
    pub machine_pools: BTreeMap<String, CurrentMachinePool>,
    pub machine_sets: Vec<Value>,
    /// What the engine reads: class templates, current objects and the contract
    /// declarations of the provider kinds.
    pub engine_inputs: Vec<Value>,
    /// What the CRDs of the infrastructure cluster and control plane kinds (desired and
    /// current) declare, by (group, kind).
    pub contracts: BTreeMap<(String, String), Declared>,
}

impl Current {
    /// The contract `object` implements (v1beta1 for a kind nobody declared).
    pub fn contract_of(&self, object: &Value) -> Contract {
        let (group, version) = split_api_version(object.api_version());
        self.contracts
            .get(&(group.to_string(), object.kind().to_string()))
            .map(|declared| declared.for_version(version))
            .unwrap_or_default()
    }
}

/// The kind a class template stamps out: its API version, its kind without `Template`.
fn stamped(template: &ObjectRef) -> (String, String) {
    let kind = template
        .kind
        .strip_suffix("Template")
        .unwrap_or(&template.kind);
    (template.api_version.clone(), kind.to_string())
}

/// A contract-versioned reference (`group/`) given the version of the class template
/// of the same group and kind, else the newest version the kind's CRD lists for the
/// latest contract it declares.
async fn versioned(
    cluster: &ManagementCluster,
    mut r: ObjectRef,
    class_template: Option<&ObjectRef>,
) -> Result<ObjectRef, ReconcileError> {
    if !split_api_version(&r.api_version).1.is_empty() {
        return Ok(r);
    }
    let group = group_of(&r.api_version).to_string();
    if let Some(template) = class_template
        && group_of(&template.api_version) == group
        && template.kind == r.kind
    {
        r.api_version = template.api_version.clone();
        return Ok(r);
    }
    let declared = cluster.declared_contracts(&r.api_version, &r.kind).await?;
    if let Some(version) = declared.newest_version() {
        r.api_version = format!("{group}/{version}");
    }
    Ok(r)
}

async fn get_ref(
    cluster: &ManagementCluster,
    r: Option<&ObjectRef>,
    namespace: &str,
) -> Result<Option<Value>, ReconcileError> {
    let Some(r) = r.filter(|r| !r.name.is_empty()) else {
        return Ok(None);
    };
    Ok(cluster
        .get_owned(&r.api_version, &r.kind, namespace_of(r, namespace), &r.name)
        .await?)
}

/// Where `r`'s object is: its own namespace, or the referring object's (`namespace`).
fn namespace_of<'a>(r: &'a ObjectRef, namespace: &'a str) -> &'a str {
    if r.namespace.is_empty() {
        namespace
    } else {
        &r.namespace
    }
}

/// A template the class references, from the class cache when there is one (see
/// `topograph_management::class_cache`: a Cluster's own copies are never kept there).
async fn class_template(
    cluster: &ManagementCluster,
    r: &ObjectRef,
    namespace: &str,
) -> Result<Option<Value>, ReconcileError> {
    if r.name.is_empty() {
        return Ok(None);
    }
    let namespace = namespace_of(r, namespace);
    Ok(cluster
        .get_class_level(&r.api_version, &r.kind, Keep::Unowned, namespace, &r.name)
        .await?)
}

/// The object `object` references at `path` (a contract reference), if any.
async fn referenced(
    cluster: &ManagementCluster,
    object: &Value,
    path: &[&str],
    namespace: &str,
) -> Result<Option<Value>, ReconcileError> {
    get_ref(cluster, read_ref(object, path).as_ref(), namespace).await
}

/// What a MachineDeployment or MachinePool's template references: its bootstrap config
/// (template) and its infrastructure machine (template or pool), read together.
async fn templates_of(
    cluster: &ManagementCluster,
    worker: &Value,
    namespace: &str,
) -> Result<(Option<Value>, Option<Value>), ReconcileError> {
    futures::try_join!(
        referenced(
            cluster,
            worker,
            &["spec", "template", "spec", "bootstrap", "configRef"],
            namespace
        ),
        referenced(
            cluster,
            worker,
            &["spec", "template", "spec", "infrastructureRef"],
            namespace
        ),
    )
}

/// The health check of `target` (named as it is) among the Cluster's health checks.
fn health_check_of(health_checks: &[Value], target: Option<&Value>) -> Option<Value> {
    let target = target?;
    health_checks
        .iter()
        .find(|h| h.name() == target.name() && h.namespace() == target.namespace())
        .cloned()
}

/// Reads the current state of `cluster`, whose class is `class`.
/// `templates`: the class's templates as a revision recorded them (decision 0030);
/// `None` reads them live.
pub(crate) async fn read(
    cluster: &ManagementCluster,
    c: &Cluster,
    class: &ClusterClass,
    templates: Option<&[Value]>,
) -> Result<Current, ReconcileError> {
    let ns = c.namespace.as_str();
    let mut current = Current::default();
    let mut inputs = Vec::new();
    // Reads that do not depend on each other go out together: a reconcile's time is
    // mostly round trips to the API server.
    // Templates live in the class's namespace; a missing one is left to the engine,
    // which reports every missing template with Cluster API's texts.
    let refs = if templates.is_some() {
        Vec::new()
    } else {
        template_refs(class)
    };
    let (live_templates, infrastructure_cluster, control_plane) = futures::try_join!(
        try_join_all(
            refs.iter()
                .map(|r| class_template(cluster, r, &class.namespace))
        ),
        get_ref(cluster, c.infrastructure_ref.as_ref(), ns),
        get_ref(cluster, c.control_plane_ref.as_ref(), ns),
    )?;
    match templates {
        Some(recorded) => inputs.extend(recorded.iter().cloned()),
        None => inputs.extend(live_templates.into_iter().flatten()),
    }
    current.infrastructure_cluster = infrastructure_cluster;
    current.control_plane = control_plane;

    // The contracts of the provider kinds whose contract fields the topology writes or
    // reads: as the class stamps them out, and as they exist.
    let mut kinds: Vec<(String, String)> = Vec::new();
    kinds.extend(class.infrastructure.as_ref().map(|i| stamped(&i.template)));
    kinds.push(stamped(&class.control_plane.template));
    for object in [&current.infrastructure_cluster, &current.control_plane]
        .into_iter()
        .flatten()
    {
        kinds.push((object.api_version().to_string(), object.kind().to_string()));
    }
    for (api_version, kind) in kinds {
        let key = (group_of(&api_version).to_string(), kind.clone());
        if current.contracts.contains_key(&key) {
            continue;
        }
        let declared = cluster.declared_contracts(&api_version, &kind).await?;
        if !declared.is_empty() {
            inputs.push(declared.to_crd(&key.0, &kind, &plural(&kind)));
        }
        current.contracts.insert(key, declared);
    }

    if let Some(cp) = &current.control_plane {
        let template_ref = contract::machine_template_ref(current.contract_of(cp), cp);
        let template_ref = match template_ref {
            Some(r) => Some(
                versioned(
                    cluster,
                    r,
                    class.control_plane.machine_infrastructure.as_ref(),
                )
                .await?,
            ),
            None => None,
        };
        current.control_plane_template = get_ref(cluster, template_ref.as_ref(), ns).await?;
    }

    let owned = [
        (labels::CLUSTER_NAME, c.name.as_str()),
        (labels::TOPOLOGY_OWNED, ""),
    ];
    let of_cluster = [(labels::CLUSTER_NAME, c.name.as_str())];
    // Health checks are named after their target and labelled with the Cluster's name
    // (the topology writes both): one list answers for the control plane and every
    // MachineDeployment, where a read by name each cost a request, most of them
    // "not found" for the MachineDeployment classes without one.
    let (machine_deployments, machines, machine_sets, health_checks) = futures::try_join!(
        cluster.list_owned(API_VERSION, "MachineDeployment", ns, &owned),
        cluster.list_owned(API_VERSION, "Machine", ns, &of_cluster),
        cluster.list_owned(API_VERSION, "MachineSet", ns, &of_cluster),
        cluster.list_owned(API_VERSION, "MachineHealthCheck", ns, &of_cluster),
    )?;
    current.control_plane_health_check =
        health_check_of(&health_checks, current.control_plane.as_ref());
    let belongings = try_join_all(
        machine_deployments
            .iter()
            .map(|md| templates_of(cluster, md, ns)),
    )
    .await?;
    for (md, (bootstrap_template, infrastructure_template)) in
        machine_deployments.into_iter().zip(belongings)
    {
        let health_check = health_check_of(&health_checks, Some(&md));
        let topology_name = md.labels().get(labels::DEPLOYMENT_NAME).cloned();
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
    read_machine_pools(cluster, ns, &owned, &mut current, &mut inputs).await?;
    inputs.extend(machines);
    current.machine_sets = machine_sets;
    inputs.extend(current.infrastructure_cluster.iter().cloned());
    inputs.extend(current.control_plane.iter().cloned());
    inputs.extend(current.control_plane_template.iter().cloned());
    current.engine_inputs = inputs;
    Ok(current)
}

/// The Cluster's topology-owned MachinePools and the objects each references; all of
/// them go to the engine, which reports a missing label or a duplicate.
async fn read_machine_pools(
    cluster: &ManagementCluster,
    ns: &str,
    owned: &[(&str, &str)],
    current: &mut Current,
    inputs: &mut Vec<Value>,
) -> Result<(), ReconcileError> {
    let pools = cluster
        .list_owned(API_VERSION, "MachinePool", ns, owned)
        .await?;
    let referenced = try_join_all(pools.iter().map(|mp| templates_of(cluster, mp, ns))).await?;
    for (mp, (bootstrap_object, infrastructure_object)) in pools.into_iter().zip(referenced) {
        inputs.extend(bootstrap_object.iter().cloned());
        inputs.extend(infrastructure_object.iter().cloned());
        inputs.push(mp.clone());
        if let Some(topology_name) = mp.labels().get(labels::POOL_NAME).cloned() {
            current
                .machine_pools
                .entry(topology_name)
                .or_insert(CurrentMachinePool {
                    object: mp,
                    bootstrap_object,
                    infrastructure_object,
                });
        }
    }
    Ok(())
}
