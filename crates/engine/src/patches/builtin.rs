//! The `builtin` variable (spec section 3): facts about the Cluster, its control plane
//! and each MachineDeployment, read from the desired objects before any patch runs.
//! Fields Go omits when empty are left out here too, so templates that test
//! `{{ if .builtin.controlPlane.replicas }}` behave the same.

use serde_json::{Map, Value, json};
use topograph_api::model::{Cluster, MachineDeploymentTopology, MachinePoolTopology, Topology};
use topograph_api::object::ObjectExt;

use crate::desired::{DesiredControlPlane, DesiredMachineDeployment, DesiredMachinePool};
use crate::labels;

/// The name of the builtin variable; classes may not define a variable of this name.
pub const NAME: &str = "builtin";

/// Annotations that never reach the builtin metadata.
const HIDDEN_ANNOTATIONS: &[&str] = &[labels::LAST_APPLIED, "cluster.x-k8s.io/conversion-data"];

fn insert_non_empty(map: &mut Map<String, Value>, key: &str, value: Value) {
    let empty = match &value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    if !empty {
        map.insert(key.to_string(), value);
    }
}

/// The string entries of `metadata.<field>` of `object` but the `hidden` ones, copied
/// once (rather than read into a string map first).
fn strings(object: &Value, field: &str, hidden: &[&str]) -> Value {
    Value::Object(
        object
            .at(&["metadata", field])
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .filter(|(key, value)| value.is_string() && !hidden.contains(&key.as_str()))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect()
            })
            .unwrap_or_default(),
    )
}

/// `metadata {labels, annotations}` of an object; `None` when both are empty.
fn metadata(object: &Value) -> Option<Value> {
    let mut map = Map::new();
    insert_non_empty(&mut map, "labels", strings(object, "labels", &[]));
    insert_non_empty(
        &mut map,
        "annotations",
        strings(object, "annotations", HIDDEN_ANNOTATIONS),
    );
    (!map.is_empty()).then_some(Value::Object(map))
}

fn name_ref(name: &str) -> Value {
    json!({ "name": name })
}

/// `builtin.cluster`, from the Cluster and the desired Cluster object.
pub fn cluster(cluster: &Cluster, topology: &Topology, desired_cluster: &Value) -> Value {
    let class_namespace = topology.class_namespace_or(&cluster.namespace).to_string();
    let mut map = Map::new();
    map.insert("name".into(), json!(cluster.name));
    map.insert("namespace".into(), json!(cluster.namespace));
    insert_non_empty(&mut map, "uid", json!(cluster.uid));
    if let Some(metadata) = metadata(desired_cluster) {
        map.insert("metadata".into(), metadata);
    }
    let mut topo = Map::new();
    insert_non_empty(&mut topo, "version", json!(topology.version));
    topo.insert(
        "classRef".into(),
        json!({ "name": topology.class, "namespace": class_namespace }),
    );
    insert_non_empty(&mut topo, "class", json!(topology.class));
    insert_non_empty(&mut topo, "classNamespace", json!(class_namespace));
    map.insert("topology".into(), Value::Object(topo));
    let network = &cluster.network;
    let mut net = Map::new();
    if let Some(domain) = &network.service_domain {
        insert_non_empty(&mut net, "serviceDomain", json!(domain));
    }
    if let Some(services) = &network.services {
        insert_non_empty(&mut net, "services", json!(services));
    }
    if let Some(pods) = &network.pods {
        insert_non_empty(&mut net, "pods", json!(pods));
    }
    insert_non_empty(&mut map, "network", Value::Object(net));
    Value::Object(map)
}

/// `builtin.controlPlane`, from the desired control plane.
pub fn control_plane(topology: &Topology, desired: &DesiredControlPlane) -> Value {
    let object = &desired.object;
    let mut map = Map::new();
    insert_non_empty(
        &mut map,
        "version",
        object.at(&["spec", "version"]).cloned().unwrap_or_default(),
    );
    if let Some(metadata) = metadata(object) {
        map.insert("metadata".into(), metadata);
    }
    map.insert("name".into(), json!(object.name()));
    if topology.control_plane.replicas.is_some()
        && let Some(replicas) = object.at(&["spec", "replicas"])
    {
        map.insert("replicas".into(), replicas.clone());
    }
    if let Some(template) = &desired.machine_template {
        map.insert(
            "machineTemplate".into(),
            json!({ "infrastructureRef": name_ref(template.name()) }),
        );
    }
    Value::Object(map)
}

/// `builtin.machineDeployment`, from one desired MachineDeployment.
pub fn machine_deployment(
    topology: &MachineDeploymentTopology,
    desired: &DesiredMachineDeployment,
) -> Value {
    worker(
        &desired.object,
        (&topology.class, &topology.name),
        desired.bootstrap_template.name(),
        desired.infrastructure_template.name(),
    )
}

/// `builtin.machinePool`, from one desired MachinePool.
pub fn machine_pool(topology: &MachinePoolTopology, desired: &DesiredMachinePool) -> Value {
    worker(
        &desired.object,
        (&topology.class, &topology.name),
        desired.bootstrap_object.name(),
        desired.infrastructure_object.name(),
    )
}

/// The builtin of a worker (the same fields for both kinds): from the desired
/// `object`, its topology's `(class, name)` and the names of what it references.
fn worker(
    object: &Value,
    (class, topology_name): (&str, &str),
    bootstrap: &str,
    infrastructure: &str,
) -> Value {
    let mut map = Map::new();
    insert_non_empty(
        &mut map,
        "version",
        object
            .at(&["spec", "template", "spec", "version"])
            .cloned()
            .unwrap_or_default(),
    );
    if let Some(metadata) = metadata(object) {
        map.insert("metadata".into(), metadata);
    }
    map.insert("class".into(), json!(class));
    map.insert("name".into(), json!(object.name()));
    map.insert("topologyName".into(), json!(topology_name));
    if let Some(replicas) = object.at(&["spec", "replicas"]) {
        map.insert("replicas".into(), replicas.clone());
    }
    map.insert(
        "bootstrap".into(),
        json!({ "configRef": name_ref(bootstrap) }),
    );
    map.insert("infrastructureRef".into(), name_ref(infrastructure));
    Value::Object(map)
}

/// The builtin paths `valueFrom.variable` may name (the class webhook's allow-list).
pub fn is_allowed_path(path: &str) -> bool {
    const CLUSTER: &[&str] = &[
        "builtin",
        "builtin.cluster",
        "builtin.cluster.name",
        "builtin.cluster.namespace",
        "builtin.cluster.uid",
        "builtin.cluster.metadata.labels",
        "builtin.cluster.metadata.annotations",
        "builtin.cluster.topology",
        "builtin.cluster.topology.classRef.name",
        "builtin.cluster.topology.classRef.namespace",
        "builtin.cluster.topology.class",
        "builtin.cluster.topology.classNamespace",
        "builtin.cluster.topology.version",
        "builtin.cluster.network",
        "builtin.cluster.network.serviceDomain",
        "builtin.cluster.network.services",
        "builtin.cluster.network.pods",
        "builtin.controlPlane",
        "builtin.controlPlane.name",
        "builtin.controlPlane.replicas",
        "builtin.controlPlane.version",
        "builtin.controlPlane.metadata.labels",
        "builtin.controlPlane.metadata.annotations",
        "builtin.controlPlane.machineTemplate.infrastructureRef.name",
    ];
    const WORKER_FIELDS: &[&str] = &[
        "",
        ".class",
        ".name",
        ".replicas",
        ".topologyName",
        ".version",
        ".metadata.labels",
        ".metadata.annotations",
        ".bootstrap.configRef.name",
        ".infrastructureRef.name",
    ];
    if CLUSTER.contains(&path) {
        return true;
    }
    ["builtin.machineDeployment", "builtin.machinePool"]
        .iter()
        .any(|base| {
            path.strip_prefix(base)
                .is_some_and(|rest| WORKER_FIELDS.contains(&rest))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_is_exact() {
        for ok in [
            "builtin",
            "builtin.cluster.topology.classRef.name",
            "builtin.machineDeployment",
            "builtin.machinePool.bootstrap.configRef.name",
            "builtin.controlPlane.machineTemplate.infrastructureRef.name",
        ] {
            assert!(is_allowed_path(ok), "{ok}");
        }
        for refused in [
            "builtin.cluster.metadata",
            "builtin.controlPlane.machineTemplate",
            "builtin.machineDeployment.bootstrap",
            "builtin.machineDeployment.infrastructureRef",
            "builtin.cluster.metadata.labels.foo",
            "builtin.cluster.network.services[0]",
            "builtin.machineDeploymentx",
        ] {
            assert!(!is_allowed_path(refused), "{refused}");
        }
    }
}
