//! The desired state of a Cluster's topology, per the seed's "Basic behaviors":
//! InfrastructureCluster, ControlPlane (and its machine template and health check),
//! one MachineDeployment per topology entry (with template copies and health check),
//! one MachinePool per topology entry (with its bootstrap config and infrastructure
//! machine pool objects), and the Cluster's own references. Versions come from the upgrade decisions
//! ([`crate::upgrade`]), made first. Patches and variables are applied by later stages.

mod clone;
mod cluster;
mod control_plane;
mod health_check;
mod infrastructure;
mod machine_deployment;
mod machine_pool;
mod reuse;
mod rollout;
pub(crate) mod rotation;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use topograph_api::model::{Cluster, MachineSettings, Metadata, ObjectRef, Topology};
use topograph_api::object::{ObjectExt, group_of, object_of, string_map_value};

use crate::blueprint::Blueprint;
use crate::current::CurrentState;
use crate::error::RenderError;
use crate::labels;
use crate::names;
use crate::upgrade::{self, Decision, UpgradeTracker};
use crate::wire::ref_value;

pub use clone::is_enforced;

/// The ControlPlane and what comes with it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DesiredControlPlane {
    /// The ControlPlane object.
    pub object: Value,
    /// The copy of the control plane machines' infrastructure template.
    pub machine_template: Option<Value>,
    /// The control plane MachineHealthCheck.
    pub health_check: Option<Value>,
}

/// One MachineDeployment and what comes with it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DesiredMachineDeployment {
    /// Its name in the topology.
    pub topology_name: String,
    /// The MachineDeployment.
    pub object: Value,
    /// Its bootstrap template copy.
    pub bootstrap_template: Value,
    /// Its infrastructure machine template copy.
    pub infrastructure_template: Value,
    /// Its MachineHealthCheck.
    pub health_check: Option<Value>,
}

/// One MachinePool and what comes with it: its bootstrap config and infrastructure
/// machine pool are objects created from the class's templates (not template copies),
/// updated in place for as long as the pool exists.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DesiredMachinePool {
    /// Its name in the topology.
    pub topology_name: String,
    /// The MachinePool.
    pub object: Value,
    /// Its bootstrap config object.
    pub bootstrap_object: Value,
    /// Its infrastructure machine pool object.
    pub infrastructure_object: Value,
}

/// Every object the topology of one Cluster consists of.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DesiredState {
    /// The Cluster with the fields the topology owns set.
    pub cluster: Value,
    /// The InfrastructureCluster (none when the class has no infrastructure).
    pub infrastructure_cluster: Option<Value>,
    /// The control plane.
    pub control_plane: DesiredControlPlane,
    /// MachineDeployments, in topology order. Those the upgrade tracker marks pending
    /// creation are rendered too; a reconciler must not create them yet.
    pub machine_deployments: Vec<DesiredMachineDeployment>,
    /// MachinePools, in topology order; as with MachineDeployments, those pending
    /// creation are rendered but must not be created yet.
    #[serde(default)]
    pub machine_pools: Vec<DesiredMachinePool>,
    /// The upgrade decisions: what the reconciler must hold back, and the condition.
    pub upgrade: UpgradeTracker,
}

impl DesiredState {
    /// All objects, sorted by apiVersion, kind, namespace and name.
    pub fn objects(&self) -> Vec<&Value> {
        let mut all: Vec<&Value> = vec![&self.cluster, &self.control_plane.object];
        all.extend(&self.infrastructure_cluster);
        all.extend(&self.control_plane.machine_template);
        all.extend(&self.control_plane.health_check);
        for md in &self.machine_deployments {
            all.push(&md.object);
            all.push(&md.bootstrap_template);
            all.push(&md.infrastructure_template);
            all.extend(&md.health_check);
        }
        for mp in &self.machine_pools {
            all.push(&mp.object);
            all.push(&mp.bootstrap_object);
            all.push(&mp.infrastructure_object);
        }
        // The order of `versioned_key` (apiVersion, then group, kind, namespace, name),
        // read in place rather than copied into owned keys; the sort is stable, as the
        // cached-key sort is for equal keys.
        let mut keyed: Vec<_> = all
            .into_iter()
            .map(|o| {
                let api_version = o.api_version();
                let key = (
                    api_version,
                    group_of(api_version),
                    o.kind(),
                    o.namespace(),
                    o.name(),
                );
                (key, o)
            })
            .collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|(_, o)| o).collect()
    }
}

/// Inputs shared by every part of the computation.
pub(crate) struct Scope<'a> {
    pub cluster: &'a Cluster,
    pub topology: &'a Topology,
    pub blueprint: &'a Blueprint<'a>,
    pub current: &'a CurrentState<'a>,
    /// The versions decided for this render.
    pub versions: &'a Decision,
}

impl Scope<'_> {
    /// The decided version of the `index`th topology MachinePool.
    pub fn machine_pool_version(&self, index: usize) -> &str {
        self.versions
            .machine_pool_versions
            .get(index)
            .map_or(self.topology.version.as_str(), String::as_str)
    }

    /// The decided version of the `index`th topology MachineDeployment.
    pub fn machine_deployment_version(&self, index: usize) -> &str {
        self.versions
            .machine_deployment_versions
            .get(index)
            .map_or(self.topology.version.as_str(), String::as_str)
    }
}

impl Scope<'_> {
    /// A name suffix derived from the Cluster's identity and `role`.
    pub fn suffix(&self, role: &[&str]) -> String {
        suffix_of(self.cluster, role)
    }
}

/// A name suffix derived from `cluster`'s identity and `role` (decision 0001).
pub(crate) fn suffix_of(cluster: &Cluster, role: &[&str]) -> String {
    let mut parts = vec![cluster.namespace.as_str(), cluster.name.as_str()];
    parts.extend_from_slice(role);
    names::suffix(&parts)
}

/// A worker's metadata (a MachineDeployment's or MachinePool's, on the object and its
/// machine template): the topology's labels and annotations over the class's, the
/// Cluster name, owned and topology-name (`name_label`) labels forced, and the
/// upgrade-sequencing annotations left out (they steer the topology, not the worker).
pub(crate) fn worker_metadata(
    cluster_name: &str,
    (topology, class): (&Metadata, &Metadata),
    (name_label, topology_name): (&str, &str),
) -> Map<String, Value> {
    let mut worker_labels = merge_first_wins(&topology.labels, &class.labels);
    worker_labels.insert(labels::CLUSTER_NAME.to_string(), cluster_name.to_string());
    worker_labels.insert(labels::TOPOLOGY_OWNED.to_string(), String::new());
    worker_labels.insert(name_label.to_string(), topology_name.to_string());
    let mut annotations = merge_first_wins(&topology.annotations, &class.annotations);
    annotations.remove(labels::HOLD_UPGRADE_SEQUENCE);
    annotations.remove(labels::DEFER_UPGRADE);
    let mut metadata = Map::new();
    metadata.insert("labels".into(), string_map_value(&worker_labels));
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), string_map_value(&annotations));
    }
    metadata
}

/// The machine spec of a worker's template (v1beta1): Cluster, version, the
/// bootstrap and infrastructure references and the deletion timeouts.
pub(crate) fn worker_machine_spec(
    cluster_name: &str,
    version: &str,
    (bootstrap, infrastructure): (&ObjectRef, &ObjectRef),
    machine: &MachineSettings,
) -> Map<String, Value> {
    let mut spec = Map::new();
    spec.insert("clusterName".into(), json!(cluster_name));
    spec.insert("version".into(), json!(version));
    spec.insert(
        "bootstrap".into(),
        object_of([("configRef", ref_value(bootstrap))]),
    );
    spec.insert("infrastructureRef".into(), ref_value(infrastructure));
    for (field, timeout) in [
        ("nodeDrainTimeout", machine.node_drain_timeout),
        (
            "nodeVolumeDetachTimeout",
            machine.node_volume_detach_timeout,
        ),
        ("nodeDeletionTimeout", machine.node_deletion_timeout),
    ] {
        if let Some(timeout) = timeout {
            spec.insert(field.into(), json!(timeout));
        }
    }
    spec
}

/// Cluster API's `MergeMap`: the first map's values win; empty results are empty maps.
pub(crate) fn merge_first_wins(
    first: &BTreeMap<String, String>,
    second: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut merged = second.clone();
    merged.extend(first.iter().map(|(k, v)| (k.clone(), v.clone())));
    merged
}

/// Computes the desired state of `cluster` from its blueprint and current state.
pub fn compute(
    cluster: &Cluster,
    blueprint: &Blueprint<'_>,
    current: &CurrentState<'_>,
    extensions: Option<&dyn topograph_runtime::Extensions>,
) -> Result<DesiredState, RenderError> {
    let Some(topology) = cluster.topology.as_ref() else {
        return Err(RenderError::new(format!(
            "Cluster {} has no spec.topology",
            cluster.key()
        )));
    };
    let mut errors = RenderError::default();
    let mut versions =
        upgrade::for_cluster(cluster, blueprint.class, topology, current, extensions)
            .unwrap_or_else(|e| {
                errors.push(format!(
                    "error computing the desired state of the Cluster topology: {e}"
                ));
                // Carry on with the topology's version to report every other problem too.
                Decision {
                    tracker: UpgradeTracker::default(),
                    control_plane_version: topology.version.clone(),
                    machine_deployment_versions: Vec::new(),
                    machine_pool_versions: Vec::new(),
                }
            });
    // The tracker goes into the desired state; nothing below reads it from the scope.
    let mut upgrade = std::mem::take(&mut versions.tracker);
    let scope = Scope {
        cluster,
        topology,
        blueprint,
        current,
        versions: &versions,
    };
    let infrastructure_cluster = infrastructure::compute(&scope)
        .map_err(|e| errors.push(e))
        .ok()
        .flatten();
    let control_plane = control_plane::compute(&scope)
        .map_err(|e| errors.extend(e))
        .ok();
    let mut machine_deployments = Vec::new();
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        match machine_deployment::compute(&scope, i, md) {
            Ok(desired) => machine_deployments.push(desired),
            Err(e) => errors.extend(e),
        }
    }
    let mut machine_pools = Vec::new();
    for (i, mp) in topology.machine_pools.iter().enumerate() {
        match machine_pool::compute(&scope, i, mp) {
            Ok(desired) => machine_pools.push(desired),
            Err(e) => errors.extend(e),
        }
    }
    match control_plane {
        Some(control_plane) if errors.is_empty() => {
            let cluster = cluster::compute(
                &scope,
                infrastructure_cluster.as_ref(),
                &control_plane.object,
                &mut upgrade,
            );
            Ok(DesiredState {
                cluster,
                infrastructure_cluster,
                control_plane,
                machine_deployments,
                machine_pools,
                upgrade,
            })
        }
        _ => Err(errors),
    }
}
