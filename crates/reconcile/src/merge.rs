//! How an object is brought to its desired state without fighting other writers
//! (the seed's "Notes on template <-> object reconciliation"):
//!
//! * a field the desired state sets is enforced;
//! * in a map, entries the desired state sets are enforced and other entries are kept;
//! * a list is enforced as a whole (extra items are removed);
//! * a field the desired state does not set is left alone.
//!
//! Owner references are the exception to the list rule: they are a list keyed by the
//! owner, and other controllers (Cluster API's core controllers) add their own, so only
//! the desired owners are enforced.
//!
//! Topology-owned objects are written with server-side apply ([`intent`] is what is
//! applied; the API server merges it and removes what the topology stopped setting);
//! [`enforce`] is the same rule for the few writes that are not applies.

use serde_json::{Map, Value};
use topograph_api::object::group_of;

/// The parts of a desired object the topology owns; everything else (status,
/// server-set metadata, copied timestamps) is not sent, as Cluster API's
/// server-side-apply helper does. Objects of Cluster API's own kinds also lose their
/// empty maps and nulls: Cluster API builds them as typed objects, which cannot carry
/// an empty struct or a nil, so an apply of them never sets (nor owns) one.
pub fn intent(desired: &Value) -> Value {
    let mut out = Map::new();
    for key in ["apiVersion", "kind", "spec"] {
        if let Some(v) = desired.get(key) {
            out.insert(key.to_string(), v.clone());
        }
    }
    let mut metadata = Map::new();
    if let Some(m) = desired.get("metadata").and_then(Value::as_object) {
        for key in [
            "name",
            "namespace",
            "labels",
            "annotations",
            "ownerReferences",
        ] {
            if let Some(v) = m.get(key) {
                metadata.insert(key.to_string(), v.clone());
            }
        }
    }
    out.insert("metadata".to_string(), Value::Object(metadata));
    let mut out = Value::Object(out);
    if is_typed(&out) {
        drop_empty_and_null(&mut out);
    }
    out
}

/// Cluster API's own kinds (group `cluster.x-k8s.io` itself, not the provider
/// groups under it).
fn is_typed(object: &Value) -> bool {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    group_of(api_version) == "cluster.x-k8s.io"
}

/// Removes, in maps only (lists are values as a whole), every `{}` and `null`, and a
/// map left empty by those removals.
fn drop_empty_and_null(value: &mut Value) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    map.retain(|_, v| !v.is_null() && !v.as_object().is_some_and(Map::is_empty));
    for v in map.values_mut() {
        drop_empty_and_null(v);
    }
    map.retain(|_, v| !v.as_object().is_some_and(Map::is_empty));
}

/// Drops an empty `spec.controlPlaneEndpoint.host` / zero `port` from an intent (the
/// contract's ignore paths for InfrastructureClusters and control planes): the
/// provider fills them in, and enforcing the template's empty values would undo that.
/// The endpoint goes too when those removals leave it empty; an endpoint the template
/// wrote as `{}` stays, as Cluster API filters only what it removed.
pub fn without_empty_endpoint(mut intent: Value) -> Value {
    let Some(spec) = intent.get_mut("spec").and_then(Value::as_object_mut) else {
        return intent;
    };
    let Some(endpoint) = spec
        .get_mut("controlPlaneEndpoint")
        .and_then(Value::as_object_mut)
    else {
        return intent;
    };
    let mut removed = false;
    if endpoint.get("host").and_then(Value::as_str) == Some("") {
        removed |= endpoint.remove("host").is_some();
    }
    if endpoint.get("port").and_then(Value::as_i64) == Some(0) {
        removed |= endpoint.remove("port").is_some();
    }
    if removed && endpoint.is_empty() {
        spec.remove("controlPlaneEndpoint");
    }
    intent
}

/// `current` with `intent` enforced on it.
pub fn enforce(current: &Value, intent: &Value) -> Value {
    let mut merged = current.clone();
    enforce_into(&mut merged, intent, &mut Vec::new());
    merged
}

fn enforce_into(target: &mut Value, intent: &Value, path: &mut Vec<String>) {
    match intent {
        Value::Object(fields) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let Some(target_map) = target.as_object_mut() else {
                return;
            };
            for (key, value) in fields {
                // null cannot be enforced (the seed: "it won't be possible to enforce
                // field1: null"): it means "not set".
                if value.is_null() {
                    continue;
                }
                path.push(key.clone());
                let slot = target_map.entry(key.clone()).or_insert(Value::Null);
                if is_owner_references(path) {
                    merge_owner_references(slot, value);
                } else {
                    enforce_into(slot, value, path);
                }
                path.pop();
            }
        }
        other => *target = other.clone(),
    }
}

fn is_owner_references(path: &[String]) -> bool {
    path.len() == 2 && path[0] == "metadata" && path[1] == "ownerReferences"
}

fn owner_key(owner: &Value) -> (String, String, String) {
    let s = |k: &str| {
        owner
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let group = group_of(&s("apiVersion")).to_string();
    (group, s("kind"), s("name"))
}

fn merge_owner_references(current: &mut Value, desired: &Value) {
    let Some(desired) = desired.as_array() else {
        return;
    };
    let mut owners = current.as_array().cloned().unwrap_or_default();
    for want in desired {
        match owners
            .iter_mut()
            .find(|have| owner_key(have) == owner_key(want))
        {
            // Enforce the fields we set on our entry, keep what others added to it.
            Some(have) => enforce_into(have, want, &mut Vec::new()),
            None => owners.push(want.clone()),
        }
    }
    *current = Value::Array(owners);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn enforces_set_fields_keeps_extra_map_entries_replaces_lists() {
        let current = json!({
            "metadata": {"name": "a", "labels": {"mine": "1", "theirs": "2"}, "resourceVersion": "7"},
            "spec": {"x": 1, "list": [1, 2, 3], "extra": true, "nested": {"a": 1, "b": 2}},
            "status": {"ready": true}
        });
        let intent = json!({
            "metadata": {"name": "a", "labels": {"mine": "9"}},
            "spec": {"x": 2, "list": [1], "nested": {"a": 5}, "unset": null}
        });
        let merged = enforce(&current, &intent);
        assert_eq!(
            merged,
            json!({
                "metadata": {"name": "a", "labels": {"mine": "9", "theirs": "2"}, "resourceVersion": "7"},
                "spec": {"x": 2, "list": [1], "extra": true, "nested": {"a": 5, "b": 2}},
                "status": {"ready": true}
            })
        );
        // Enforcing again changes nothing: the merge is idempotent.
        assert_eq!(enforce(&merged, &intent), merged);
    }

    #[test]
    fn owner_references_of_others_are_kept() {
        let current = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "c", "uid": "1", "controller": true},
            {"apiVersion": "v1", "kind": "Secret", "name": "c-shim", "uid": "2"}
        ]}});
        let intent = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Secret", "name": "c-shim", "uid": "2"},
            {"apiVersion": "x.io/v1", "kind": "Other", "name": "o", "uid": "3"}
        ]}});
        let merged = enforce(&current, &intent);
        let owners = merged["metadata"]["ownerReferences"].as_array().unwrap();
        assert_eq!(owners.len(), 3);
        assert_eq!(owners[0]["controller"], json!(true));
        assert_eq!(owners[2]["name"], json!("o"));
    }

    #[test]
    fn typed_kinds_lose_empty_maps_and_nulls_provider_kinds_keep_them() {
        let spec = json!({"a": {}, "b": null, "c": {"d": {}}, "e": [{}], "f": 0, "g": ""});
        let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
                        "metadata": {"name": "n", "labels": {}}, "spec": spec});
        assert_eq!(
            intent(&md),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
                   "metadata": {"name": "n"}, "spec": {"e": [{}], "f": 0, "g": ""}})
        );
        let provider = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                              "kind": "DockerCluster", "metadata": {"name": "n"}, "spec": spec});
        assert_eq!(intent(&provider)["spec"], spec);
    }

    #[test]
    fn an_endpoint_written_empty_stays_one_emptied_by_the_ignore_paths_goes() {
        let with = |endpoint: Value| json!({"spec": {"controlPlaneEndpoint": endpoint}});
        for (endpoint, want) in [
            (json!({}), with(json!({}))),
            (json!({"host": "", "port": 0}), json!({"spec": {}})),
            (
                json!({"host": "", "port": 6443}),
                with(json!({"port": 6443})),
            ),
            (json!({"host": "h", "port": 0}), with(json!({"host": "h"}))),
            (
                json!({"host": "h", "port": 1}),
                with(json!({"host": "h", "port": 1})),
            ),
        ] {
            assert_eq!(
                without_empty_endpoint(with(endpoint.clone())),
                want,
                "{endpoint}"
            );
        }
    }

    #[test]
    fn intent_keeps_only_owned_paths_and_endpoint_rule() {
        let desired = json!({
            "apiVersion": "x/v1", "kind": "K",
            "metadata": {"name": "n", "namespace": "ns", "uid": "u", "creationTimestamp": "t", "labels": {"a": "b"}},
            "spec": {"controlPlaneEndpoint": {"host": "", "port": 0}, "y": 1},
            "status": {"z": 1}
        });
        let got = without_empty_endpoint(intent(&desired));
        assert_eq!(
            got,
            json!({"apiVersion": "x/v1", "kind": "K",
                   "metadata": {"name": "n", "namespace": "ns", "labels": {"a": "b"}},
                   "spec": {"y": 1}})
        );
    }
}
