//! What the gateway needs to know about the objects it handles, read from their JSON:
//! which kind of object it is, which class a Cluster uses, its conditions.

use serde_json::Value;
use topograph_api::object::{ObjectExt, group_of};
use topograph_proto::gateway::v1 as pb;

/// Cluster API's group.
pub const GROUP: &str = "cluster.x-k8s.io";
/// The version the gateway reads and writes Cluster API's kinds in.
pub const API_VERSION: &str = "cluster.x-k8s.io/v1beta1";
/// The label naming the Cluster an object belongs to.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// The label marking objects the topology owns.
pub const OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";

/// What an object in an Apply request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// A provider template a class references (written first).
    Template,
    /// A ClusterClass (written second).
    Class,
    /// A Cluster (written third).
    Cluster,
    /// A class's RolloutPolicy (written last: admission reads the class's Clusters).
    Policy,
}

/// The role of an object, or `None` for kinds Apply does not take.
pub fn role(object: &Value) -> Option<Role> {
    let kind = object.kind();
    match (group_of(object.api_version()), kind) {
        (GROUP, "ClusterClass") => Some(Role::Class),
        (GROUP, "Cluster") => Some(Role::Cluster),
        ("topograph.io", "RolloutPolicy") => Some(Role::Policy),
        (_, k) if k.ends_with("Template") && k.len() > "Template".len() => Some(Role::Template),
        _ => None,
    }
}

/// The `(namespace, name)` of the ClusterClass a Cluster uses (v1beta1 `class` /
/// `classNamespace`, v1beta2 `classRef`), the namespace defaulting to the Cluster's.
pub fn class_of(cluster: &Value) -> Option<(String, String)> {
    let topology = cluster.get("spec")?.get("topology")?;
    let (name, namespace) = match topology.get("classRef") {
        Some(r) => (r.get("name"), r.get("namespace")),
        None => (topology.get("class"), topology.get("classNamespace")),
    };
    let name = name.and_then(Value::as_str).filter(|n| !n.is_empty())?;
    let namespace = namespace
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or(cluster.namespace());
    Some((namespace.to_string(), name.to_string()))
}

/// A Cluster's Kubernetes version.
pub fn version_of(cluster: &Value) -> &str {
    cluster
        .pointer("/spec/topology/version")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn int_at(object: &Value, pointer: &str) -> i64 {
    object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// `metadata.generation`.
pub fn generation(object: &Value) -> i64 {
    int_at(object, "/metadata/generation")
}

/// `status.observedGeneration`.
pub fn observed_generation(object: &Value) -> i64 {
    int_at(object, "/status/observedGeneration")
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// An object's conditions: `status.v1beta2.conditions` (Kubernetes' shape, with
/// observedGeneration) when it has them, else `status.conditions`.
pub fn conditions(object: &Value) -> Vec<pb::Condition> {
    let list = object
        .pointer("/status/v1beta2/conditions")
        .and_then(Value::as_array)
        .or_else(|| {
            object
                .pointer("/status/conditions")
                .and_then(Value::as_array)
        });
    list.map(|list| {
        list.iter()
            .map(|c| pb::Condition {
                r#type: text(c, "type"),
                status: text(c, "status"),
                reason: text(c, "reason"),
                message: text(c, "message"),
                observed_generation: c
                    .get("observedGeneration")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                last_transition_time: text(c, "lastTransitionTime"),
            })
            .collect()
    })
    .unwrap_or_default()
}

/// The state of condition `type_`, empty when the object does not have it.
pub fn condition_state(object: &Value, type_: &str) -> pb::ReconcileState {
    conditions(object)
        .into_iter()
        .find(|c| c.r#type == type_)
        .map(|c| pb::ReconcileState {
            status: c.status,
            reason: c.reason,
            message: c.message,
        })
        .unwrap_or_default()
}

/// Every object reference (`apiVersion`, `kind`, `name`) inside `value`, outermost
/// first: a ClusterClass's template references, wherever its version keeps them.
pub fn references(value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    collect_references(value, true, &mut out);
    out
}

fn collect_references(value: &Value, root: bool, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            if !root
                && let (Some(Value::String(api_version)), Some(Value::String(kind)), Some(_)) =
                    (map.get("apiVersion"), map.get("kind"), map.get("name"))
            {
                let key = (api_version.clone(), kind.clone());
                if !out.contains(&key) {
                    out.push(key);
                }
            }
            for (key, child) in map {
                if key != "metadata" && key != "status" {
                    collect_references(child, false, out);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                collect_references(item, false, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn roles_by_kind() {
        let of =
            |api_version: &str, kind: &str| role(&json!({"apiVersion": api_version, "kind": kind}));
        assert_eq!(
            of("cluster.x-k8s.io/v1beta1", "Cluster"),
            Some(Role::Cluster)
        );
        assert_eq!(
            of("cluster.x-k8s.io/v1beta2", "ClusterClass"),
            Some(Role::Class)
        );
        assert_eq!(
            of(
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "DockerClusterTemplate"
            ),
            Some(Role::Template)
        );
        assert_eq!(
            of("topograph.io/v1alpha1", "RolloutPolicy"),
            Some(Role::Policy)
        );
        assert_eq!(of("v1", "Secret"), None);
        assert_eq!(of("example.com/v1", "Cluster"), None);
        assert_eq!(of("example.com/v1", "Template"), None);
    }

    #[test]
    fn class_references_in_both_versions() {
        let v1beta1 =
            json!({"metadata": {"namespace": "a"}, "spec": {"topology": {"class": "qs"}}});
        assert_eq!(class_of(&v1beta1), Some(("a".into(), "qs".into())));
        let other = json!({"metadata": {"namespace": "a"}, "spec": {"topology": {"class": "qs", "classNamespace": "shared"}}});
        assert_eq!(class_of(&other), Some(("shared".into(), "qs".into())));
        let v1beta2 = json!({"metadata": {"namespace": "a"}, "spec": {"topology": {"classRef": {"name": "qs"}}}});
        assert_eq!(class_of(&v1beta2), Some(("a".into(), "qs".into())));
        assert_eq!(class_of(&json!({"spec": {}})), None);
    }

    #[test]
    fn v1beta2_conditions_win() {
        let cluster = json!({"status": {
            "conditions": [{"type": "TopologyReconciled", "status": "False"}],
            "v1beta2": {"conditions": [{"type": "TopologyReconciled", "status": "True", "reason": "ReconcileSucceeded", "observedGeneration": 3}]}
        }});
        let state = condition_state(&cluster, "TopologyReconciled");
        assert_eq!(state.status, "True");
        assert_eq!(conditions(&cluster)[0].observed_generation, 3);
        assert_eq!(
            condition_state(&json!({}), "X"),
            pb::ReconcileState::default()
        );
    }

    #[test]
    fn references_are_found_wherever_they_are() {
        let class = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
            "metadata": {"name": "x"},
            "spec": {"infrastructure": {"ref": {"apiVersion": "i/v1", "kind": "IT", "name": "a"}},
                     "workers": {"machineDeployments": [{"template": {"bootstrap": {"ref": {"apiVersion": "b/v1", "kind": "BT", "name": "b"}}}}]}}});
        assert_eq!(
            references(&class),
            [
                ("i/v1".to_string(), "IT".to_string()),
                ("b/v1".to_string(), "BT".to_string())
            ]
        );
    }
}
