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
//! And as Cluster API's server-side apply does, a field the topology set on an earlier
//! write and no longer sets is removed: [`apply`] records what an intent sets on the
//! object and releases what it stopped setting (`topograph_api::managed`).

use serde_json::{Map, Value};
use topograph_api::managed;
use topograph_api::object::group_of;

/// `current` brought to `intent` as a write of the topology: the intent enforced
/// ([`enforce`]), the fields the topology set last time and no longer sets removed,
/// and the fields it sets now recorded on the object.
pub fn apply(current: &Value, intent: &Value) -> Value {
    let intent = managed::record(intent.clone());
    // Released first, then enforced: an (empty) map the intent sets where a released
    // value was is created again, so applying twice gives the same object.
    let mut merged = current.clone();
    managed::release(&mut merged, &intent);
    enforce_into(&mut merged, &intent, &mut Vec::new());
    merged
}

/// The parts of a desired object the topology owns; everything else (status,
/// server-set metadata, copied timestamps) is not sent, as Cluster API's
/// server-side-apply helper does.
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
    Value::Object(out)
}

/// Drops an empty `spec.controlPlaneEndpoint.host` / zero `port` from an intent: the
/// provider fills them in, and enforcing the template's empty values would undo that.
pub fn without_empty_endpoint(mut intent: Value) -> Value {
    if let Some(endpoint) = intent
        .get_mut("spec")
        .and_then(|s| s.get_mut("controlPlaneEndpoint"))
        .and_then(Value::as_object_mut)
    {
        if endpoint.get("host").and_then(Value::as_str) == Some("") {
            endpoint.remove("host");
        }
        if endpoint.get("port").and_then(Value::as_i64) == Some(0) {
            endpoint.remove("port");
        }
        if endpoint.is_empty()
            && let Some(spec) = intent.get_mut("spec").and_then(Value::as_object_mut)
        {
            spec.remove("controlPlaneEndpoint");
        }
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

/// What enforcing an intent changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// Anything differs.
    pub any: bool,
    /// `spec` differs (for templates: a rotation, not an in-place update).
    pub spec: bool,
}

/// Compares an object with the result of enforcing its intent.
pub fn change(current: &Value, merged: &Value) -> Change {
    Change {
        any: current != merged,
        spec: current.get("spec") != merged.get("spec"),
    }
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
        assert_eq!(
            change(&current, &merged),
            Change {
                any: true,
                spec: true
            }
        );
        // Enforcing again changes nothing: the merge is idempotent.
        assert_eq!(enforce(&merged, &intent), merged);
    }

    #[test]
    fn apply_releases_what_the_topology_stopped_setting_and_only_that() {
        let first = json!({"metadata": {"labels": {"mine": "1"}}, "spec": {"a": {"x": 1, "y": 2}, "l": [1]}});
        let created = apply(&json!({}), &first);
        // Others add their own fields.
        let mut current = created.clone();
        current["metadata"]["labels"]["theirs"] = json!("2");
        current["spec"]["a"]["z"] = json!(3);
        current["status"] = json!({"ready": true});
        // The topology drops a label, one map entry and a list.
        let second = json!({"metadata": {"labels": {}}, "spec": {"a": {"x": 1}}});
        let merged = apply(&current, &second);
        assert_eq!(merged["metadata"]["labels"], json!({"theirs": "2"}));
        assert_eq!(merged["spec"], json!({"a": {"x": 1, "z": 3}}));
        assert_eq!(merged["status"], json!({"ready": true}));
        assert_eq!(
            topograph_api::managed::recorded(&merged),
            Some(["/spec/a/x".to_string()].into())
        );
        // Idempotent, and an object without a record loses nothing.
        assert_eq!(apply(&merged, &second), merged);
        let mut unrecorded = current.clone();
        unrecorded["metadata"]["annotations"] = json!({});
        let kept = apply(&unrecorded, &second);
        assert_eq!(kept["spec"]["a"]["y"], 2);
        assert_eq!(kept["spec"]["l"], json!([1]));
    }

    #[test]
    fn metadata_only_changes_are_not_spec_changes() {
        let current = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}});
        let merged = enforce(
            &current,
            &json!({"metadata": {"labels": {"a": "2"}}, "spec": {"x": 1}}),
        );
        assert_eq!(
            change(&current, &merged),
            Change {
                any: true,
                spec: false
            }
        );
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

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use topograph_api::managed;

        /// Small JSON trees over a few keys, so intents and objects overlap often.
        fn tree() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                (0..3i64).prop_map(Value::from),
                prop::collection::vec((0..3i64).prop_map(Value::from), 0..3).prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 16, 3, |inner| {
                prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), inner, 0..3)
                    .prop_map(|m| {
                        Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                    })
            })
        }

        fn object(spec: Value, labels: Value) -> Value {
            serde_json::json!({"metadata": {"name": "o", "labels": labels}, "spec": spec})
        }

        fn labels() -> impl Strategy<Value = Value> {
            prop::collection::btree_map(prop::sample::select(vec!["x", "y"]), "[a-b]", 0..2)
                .prop_map(|m| {
                    Value::Object(
                        m.into_iter()
                            .map(|(k, v)| (k.to_string(), Value::from(v)))
                            .collect(),
                    )
                })
        }

        proptest! {
            /// Applying an intent twice changes nothing the second time, whatever the
            /// object looked like and whatever the topology set before.
            #[test]
            fn apply_is_idempotent(
                before in tree(), first in tree(), second in tree(),
                l0 in labels(), l1 in labels(), l2 in labels(),
            ) {
                let written = apply(&object(before, l0), &object(first, l1));
                let once = apply(&written, &object(second.clone(), l2.clone()));
                prop_assert_eq!(apply(&once, &object(second, l2)), once);
            }

            /// What the topology never recorded is never removed: every leaf of the
            /// object that no recorded path covers is still there afterwards, unless the
            /// new intent itself sets that place.
            #[test]
            fn only_recorded_fields_are_released(
                theirs in tree(), first in tree(), second in tree(),
            ) {
                let ours = apply(&serde_json::json!({"metadata": {"name": "o"}}), &object(first, Value::Null));
                let recorded = managed::recorded(&ours).unwrap_or_default();
                // Others write their fields on top (where the topology records nothing).
                let mut current = ours.clone();
                let mut others = Vec::new();
                if current["spec"].is_null() {
                    current["spec"] = serde_json::json!({});
                }
                prop_assume!(current["spec"].is_object());
                if let Value::Object(map) = &theirs {
                    for (k, v) in map {
                        let path = format!("/spec/other-{k}");
                        if !v.is_null() {
                            current["spec"][format!("other-{k}")] = v.clone();
                            others.push((path, v.clone()));
                        }
                    }
                }
                let intent = object(second, Value::Null);
                let after = apply(&current, &intent);
                let now = managed::paths(&intent);
                for (path, value) in others {
                    prop_assert!(!recorded.iter().any(|r| path.starts_with(r.as_str())));
                    if !now.iter().any(|n| n.starts_with(&path) || path.starts_with(n.as_str())) {
                        prop_assert_eq!(after.pointer(&path), Some(&value), "{} went", path);
                    }
                }
            }
        }
    }
}
