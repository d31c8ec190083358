//! Comparing desired objects with current ones: what to create, what to change (as an
//! RFC 6902 JSON Patch) and which owned objects to delete.
//!
//! Only fields the desired object sets are compared. The current object carries fields
//! the API server and other controllers own (status, uid, resourceVersion, defaults);
//! the topology has no say over them, so they never make an object "modified". The
//! exception is a field the topology set on its last write (recorded on the object,
//! `topograph_api::managed`) and the desired object no longer sets: the applier
//! removes it, so the plan says `remove`.

use std::borrow::Borrow;
use std::collections::HashSet;

use crate::labels::{CLUSTER_NAME, TOPOLOGY_OWNED};
use serde_json::{Map, Value, json};
use topograph_api::ObjectExt;
use topograph_api::managed::{self, escape};
use topograph_api::object::ObjectKey;

/// What to do to reach the desired state.
#[derive(Debug, Default, PartialEq)]
pub struct Plan<'a> {
    /// Desired objects that do not exist.
    pub created: Vec<&'a Value>,
    /// Existing objects that differ, with the patch (a JSON array of operations).
    pub modified: Vec<(&'a Value, Value)>,
    /// Owned objects that are no longer desired.
    pub deleted: Vec<&'a Value>,
}

/// Plans the way from `current` to `desired`.
pub fn plan<'a>(desired: &'a [Value], current: &'a [Value]) -> Plan<'a> {
    let mut out = Plan::default();
    for d in desired {
        let key = ObjectKey::of(d);
        match current.iter().find(|c| ObjectKey::of(c) == key) {
            None => out.created.push(d),
            Some(c) => {
                let mut ops = diff(c, d);
                ops.extend(released(c, d));
                if !ops.is_empty() {
                    out.modified.push((c, Value::Array(ops)));
                }
            }
        }
    }
    out.deleted = to_delete(desired, current);
    out
}

/// Current objects the topology of a desired Cluster owns (MachineDeployments and
/// MachineHealthChecks labelled as topology-owned for that Cluster) that are not desired
/// any more. Templates are not listed: they go with their owners' garbage collection.
pub fn to_delete<'a, D: Borrow<Value>>(
    desired: &[D],
    current: impl IntoIterator<Item = &'a Value>,
) -> Vec<&'a Value> {
    let wanted: HashSet<ObjectKey> = desired.iter().map(|d| ObjectKey::of(d.borrow())).collect();
    let clusters: HashSet<(String, String)> = wanted
        .iter()
        .filter(|id| id.group == "cluster.x-k8s.io" && id.kind == "Cluster")
        .map(|id| (id.namespace.clone(), id.name.clone()))
        .collect();
    current
        .into_iter()
        .filter(|c| {
            let id = ObjectKey::of(c);
            if id.group != "cluster.x-k8s.io"
                || !matches!(id.kind.as_str(), "MachineDeployment" | "MachineHealthCheck")
                || wanted.contains(&id)
            {
                return false;
            }
            let labels = c.labels();
            labels.contains_key(TOPOLOGY_OWNED)
                && labels
                    .get(CLUSTER_NAME)
                    .is_some_and(|cluster| clusters.contains(&(id.namespace, cluster.clone())))
        })
        .collect()
}

/// The field manager whose applied fields a plan releases: the fleet's default
/// (`--field-manager`).
const FIELD_MANAGER: &str = "topograph";

/// The parts of `desired` the topology applies, identified as `current` is.
fn applied_parts(current: &Value, desired: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["apiVersion", "kind"] {
        if let Some(v) = desired.get(key).or_else(|| current.get(key)) {
            out.insert(key.to_string(), v.clone());
        }
    }
    let mut metadata = serde_json::Map::new();
    for key in [
        "name",
        "namespace",
        "labels",
        "annotations",
        "ownerReferences",
    ] {
        if let Some(v) = desired.pointer(&format!("/metadata/{key}")) {
            metadata.insert(key.to_string(), v.clone());
        }
    }
    out.insert("metadata".to_string(), Value::Object(metadata));
    if let Some(spec) = desired.get("spec") {
        out.insert("spec".to_string(), spec.clone());
    }
    Value::Object(out)
}

/// `remove` operations for what a server-side apply of `desired` by the topology's
/// field manager would remove from `current`: the fields it applied last time and no
/// longer applies, unless another manager owns something there; each at the highest
/// node that goes, in path order. Objects the topology never applied lose nothing;
/// those written before server-side apply lose what their managed-paths record names.
pub fn released(current: &Value, desired: &Value) -> Vec<Value> {
    let after = if current.annotations().contains_key(managed::MANAGED_PATHS) {
        let mut after = current.clone();
        managed::release(&mut after, desired);
        after
    } else {
        // The entry's time does not matter to what is removed.
        let schema = topograph_ssa::schema::Schema::unknown();
        let intent = applied_parts(current, desired);
        let applied = topograph_ssa::apply(
            Some(current),
            &intent,
            FIELD_MANAGER,
            current.api_version(),
            true,
            &schema,
            "1970-01-01T00:00:00Z",
        );
        match applied {
            Ok(applied) => applied.object,
            Err(_) => return Vec::new(),
        }
    };
    let mut removed = Vec::new();
    for pointer in ["/metadata/labels", "/metadata/annotations", "/spec"] {
        if let Some(before) = current.pointer(pointer) {
            gone(pointer, before, after.pointer(pointer), &mut removed);
        }
    }
    removed.sort();
    removed
        .into_iter()
        .map(|path| json!({"op": "remove", "path": path}))
        .collect()
}

/// The highest paths under `path` that are in `before` and not in `after`.
fn gone(path: &str, before: &Value, after: Option<&Value>, out: &mut Vec<String>) {
    match (before, after) {
        (_, None) => out.push(path.to_string()),
        (Value::Object(before), Some(Value::Object(after))) => {
            for (key, value) in before {
                gone(
                    &format!("{path}/{}", escape(key)),
                    value,
                    after.get(key),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// The operations that give `current` every field `desired` sets, in key order.
pub fn diff(current: &Value, desired: &Value) -> Vec<Value> {
    let mut ops = Vec::new();
    diff_at("", current, desired, &mut ops);
    ops
}

fn diff_at(path: &str, current: &Value, desired: &Value, ops: &mut Vec<Value>) {
    match (current, desired) {
        (Value::Object(c), Value::Object(d)) => diff_maps(path, c, d, ops),
        _ if current == desired => {}
        _ => ops.push(json!({"op": "replace", "path": path, "value": desired})),
    }
}

fn diff_maps(
    path: &str,
    current: &Map<String, Value>,
    desired: &Map<String, Value>,
    ops: &mut Vec<Value>,
) {
    for (key, d) in desired {
        let at = format!("{path}/{}", escape(key));
        match current.get(key) {
            None => ops.push(json!({"op": "add", "path": at, "value": d})),
            Some(c) => diff_at(&at, c, d, ops),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(name: &str, cluster: &str, owned: bool) -> Value {
        let mut labels = json!({ CLUSTER_NAME: cluster });
        if owned {
            labels[TOPOLOGY_OWNED] = json!("");
        }
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "MachineDeployment",
            "metadata": {"name": name, "namespace": "ns", "labels": labels},
            "spec": {"replicas": 1}
        })
    }

    fn cluster(name: &str) -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Cluster",
            "metadata": {"name": name, "namespace": "ns"}
        })
    }

    #[test]
    fn same_objects_plan_nothing() {
        let objects = vec![cluster("c"), md("a", "c", true)];
        assert_eq!(plan(&objects, &objects), Plan::default());
    }

    #[test]
    fn fields_only_the_current_object_has_are_left_alone() {
        let desired = md("a", "c", true);
        let mut current = desired.clone();
        current["status"] = json!({"replicas": 1});
        current["metadata"]["uid"] = json!("1234");
        assert!(diff(&current, &desired).is_empty());
    }

    #[test]
    fn changed_and_missing_fields_give_replace_and_add() {
        let desired = json!({"spec": {"replicas": 3, "a/b": {"x~": 1}, "list": [1, 2]}});
        let current = json!({"spec": {"replicas": 1, "list": [1]}});
        assert_eq!(
            diff(&current, &desired),
            vec![
                json!({"op": "add", "path": "/spec/a~1b", "value": {"x~": 1}}),
                json!({"op": "replace", "path": "/spec/list", "value": [1, 2]}),
                json!({"op": "replace", "path": "/spec/replicas", "value": 3}),
            ]
        );
    }

    #[test]
    fn fields_the_topology_set_last_time_and_no_longer_sets_are_removed() {
        let earlier = json!({"metadata": {"name": "a", "labels": {"tier": "gold"}},
                             "spec": {"a": {"b": {"c": 1}}, "keep": {"x": 1}, "list": [1]}});
        let mut current = managed::record(earlier);
        current["spec"]["keep"]["theirs"] = json!(2);
        current["metadata"]["labels"]["team"] = json!("blue");
        let desired = json!({"metadata": {"name": "a"}, "spec": {"keep": {"x": 1}}});
        let ops = plan(
            std::slice::from_ref(&desired),
            std::slice::from_ref(&current),
        )
        .modified;
        assert_eq!(ops.len(), 1);
        assert_eq!(
            ops[0].1,
            json!([
                {"op": "remove", "path": "/metadata/labels/tier"},
                {"op": "remove", "path": "/spec/a"},
                {"op": "remove", "path": "/spec/list"},
            ])
        );
        // The patch applied gives what the applier leaves: others' fields stay.
        let mut patched = current.clone();
        for op in ops[0].1.as_array().unwrap() {
            managed::remove(&mut patched, op["path"].as_str().unwrap());
        }
        assert_eq!(patched["spec"], json!({"keep": {"x": 1, "theirs": 2}}));
        assert_eq!(patched["metadata"]["labels"], json!({"team": "blue"}));
        // Without a record nothing is removed.
        let mut unrecorded = current.clone();
        unrecorded["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("annotations");
        assert!(released(&unrecorded, &desired).is_empty());
    }

    #[test]
    fn fields_the_topology_applied_and_no_longer_applies_are_removed() {
        let schema = topograph_ssa::schema::Schema::unknown();
        let earlier = json!({"apiVersion": "x.io/v1", "kind": "K",
                             "metadata": {"name": "a", "labels": {"tier": "gold"}},
                             "spec": {"a": {"b": {"c": 1}}, "keep": {"x": 1}, "list": [1]}});
        let at = "2026-01-01T00:00:00Z";
        let applied =
            topograph_ssa::apply(None, &earlier, FIELD_MANAGER, "x.io/v1", true, &schema, at)
                .unwrap()
                .object;
        // Another writer adds fields of its own, recorded as its Update.
        let mut current = applied.clone();
        current["spec"]["keep"]["theirs"] = json!(2);
        current["metadata"]["labels"]["team"] = json!("blue");
        let managed = topograph_ssa::update(
            Some(&applied),
            &current,
            "someone-else",
            "x.io/v1",
            &schema,
            at,
            None,
        );
        topograph_ssa::managed::write_managed_fields(&mut current, &managed);
        let desired = json!({"apiVersion": "x.io/v1", "kind": "K",
                             "metadata": {"name": "a"}, "spec": {"keep": {"x": 1}}});
        let ops = plan(
            std::slice::from_ref(&desired),
            std::slice::from_ref(&current),
        )
        .modified;
        assert_eq!(ops.len(), 1);
        assert_eq!(
            ops[0].1,
            json!([
                {"op": "remove", "path": "/metadata/labels/tier"},
                {"op": "remove", "path": "/spec/a"},
                {"op": "remove", "path": "/spec/list"},
            ])
        );
        // An object the topology never applied loses nothing.
        let mut never = current.clone();
        never["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert!(released(&never, &desired).is_empty());
    }

    #[test]
    fn a_type_change_at_the_top_replaces_the_whole_document() {
        assert_eq!(
            diff(&json!([1]), &json!({"a": 1})),
            vec![json!({"op": "replace", "path": "", "value": {"a": 1}})]
        );
    }

    #[test]
    fn only_owned_objects_of_desired_clusters_are_deleted() {
        let desired = vec![cluster("c"), md("keep", "c", true)];
        let current = vec![
            md("keep", "c", true),
            md("gone", "c", true),
            md("not-owned", "c", false),
            md("other-cluster", "d", true),
        ];
        let deleted: Vec<&str> = to_delete(&desired, &current)
            .iter()
            .map(|o| o.name())
            .collect();
        assert_eq!(deleted, vec!["gone"]);
        let p = plan(&desired, &current);
        assert_eq!(p.created.len(), 1);
        assert!(p.modified.is_empty());
    }
}
