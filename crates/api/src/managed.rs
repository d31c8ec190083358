//! Which fields of an object the topology set the last time it wrote it.
//!
//! Cluster API writes topology-owned objects with server-side apply, so a field the
//! topology set once and no longer sets (a class patch disabled, a label dropped from
//! the class, a template field removed) is removed from the object, while fields users
//! or other controllers set stay. Writing without server-side apply, the applier keeps
//! the same record itself: the JSON pointers of the leaves it enforced, in the
//! annotation [`MANAGED_PATHS`], and releases (removes) the ones a later intent no
//! longer sets. Only the topology's own fields are recorded: labels, annotations and
//! `spec`; maps count by entry (an empty map not at all), lists and scalars as one leaf
//! (a list is enforced whole).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::object::{ObjectExt, set_at};

/// The annotation holding the recorded paths: a JSON array of JSON pointers, sorted.
pub const MANAGED_PATHS: &str = "topology.topograph.io/managed-paths";

/// Where the recorded paths live: the only places a record may name.
const ROOTS: [&[&str]; 3] = [
    &["metadata", "labels"],
    &["metadata", "annotations"],
    &["spec"],
];

/// The leaf paths `intent` sets (`null` sets nothing), as JSON pointers.
pub fn paths(intent: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for root in ROOTS {
        if let Some(value) = intent.at(root) {
            leaves(&format!("/{}", root.join("/")), value, &mut out);
        }
    }
    out.remove(&format!("/metadata/annotations/{}", escape(MANAGED_PATHS)));
    out
}

fn leaves(path: &str, value: &Value, out: &mut BTreeSet<String>) {
    match value {
        // An empty map enforces nothing but its own presence (entries others add stay),
        // so it is no leaf: it must not shield entries recorded below it earlier.
        Value::Null => {}
        Value::Object(map) => {
            for (key, child) in map {
                leaves(&format!("{path}/{}", escape(key)), child, out);
            }
        }
        _ => {
            out.insert(path.to_string());
        }
    }
}

/// `intent` with its own paths recorded in [`MANAGED_PATHS`] (an intent that is not
/// an object is returned as it is).
pub fn record(mut intent: Value) -> Value {
    if intent.is_object() {
        let encoded = serde_json::to_string(&paths(&intent)).unwrap_or_else(|_| "[]".to_string());
        set_at(
            &mut intent,
            &["metadata", "annotations", MANAGED_PATHS],
            Value::String(encoded),
        );
    }
    intent
}

/// The paths recorded on `object`; `None` when it has no readable record (an object
/// written before records were kept, or by someone else): nothing is released then.
/// The annotation can be edited by anyone, so only paths under the places the
/// topology records are believed: a record naming `/metadata/finalizers` or `/spec`
/// itself must not make the applier delete them.
pub fn recorded(object: &Value) -> Option<BTreeSet<String>> {
    let text = object
        .at(&["metadata", "annotations", MANAGED_PATHS])?
        .as_str()?;
    let paths: BTreeSet<String> = serde_json::from_str(text).ok()?;
    Some(
        paths
            .into_iter()
            .filter(|path| {
                ROOTS
                    .iter()
                    .any(|root| under(path, &format!("/{}", root.join("/"))))
            })
            .collect(),
    )
}

/// Whether `path` lies strictly below `of`.
fn under(path: &str, of: &str) -> bool {
    path.strip_prefix(of)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// The paths recorded earlier that `now` no longer sets. A path `now` sets below or
/// above is not released: the enforced value already replaced it.
pub fn released(earlier: &BTreeSet<String>, now: &BTreeSet<String>) -> Vec<String> {
    earlier
        .iter()
        .filter(|path| {
            !now.contains(*path) && !now.iter().any(|n| under(n, path) || under(path, n))
        })
        .cloned()
        .collect()
}

/// Removes from `object` what its record names and `intent` no longer sets; the paths
/// released. The applier's merge and the render service's plan both start here.
pub fn release(object: &mut Value, intent: &Value) -> Vec<String> {
    let Some(earlier) = recorded(object) else {
        return Vec::new();
    };
    let released = released(&earlier, &paths(intent));
    for path in &released {
        remove(object, path);
    }
    released
}

/// Removes the field at `pointer` from `value`, and then every map on its way up that
/// this left empty (below the top-level `metadata` or `spec` map). `false` when there
/// was nothing there.
pub fn remove(value: &mut Value, pointer: &str) -> bool {
    let segments: Vec<String> = pointer.split('/').skip(1).map(unescape).collect();
    remove_at(value, &segments, 0)
}

fn remove_at(value: &mut Value, segments: &[String], depth: usize) -> bool {
    let Some(key) = segments.get(depth) else {
        return false;
    };
    let Some(map) = value.as_object_mut() else {
        return false;
    };
    if depth + 1 == segments.len() {
        return map.remove(key).is_some();
    }
    let Some(child) = map.get_mut(key) else {
        return false;
    };
    let removed = remove_at(child, segments, depth + 1);
    // The top-level maps stay, and so do `metadata.labels` / `metadata.annotations`.
    let kept = depth == 0 || (depth == 1 && segments[0] == "metadata");
    if removed && !kept && child.as_object().is_some_and(Map::is_empty) {
        map.remove(key);
    }
    removed
}

/// RFC 6901 escaping of one path segment.
pub fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_are_the_leaves_of_labels_annotations_and_spec() {
        let intent = json!({
            "apiVersion": "x/v1", "kind": "K",
            "metadata": {"name": "n", "labels": {"a/b": "1"}, "annotations": {MANAGED_PATHS: "[]", "c": "2"},
                         "ownerReferences": [{"name": "o"}]},
            "spec": {"list": [1, 2], "nested": {"x": 1, "empty": {}, "unset": null}, "s~": "v"},
            "status": {"ignored": true}
        });
        let got: Vec<String> = paths(&intent).into_iter().collect();
        assert_eq!(
            got,
            vec![
                "/metadata/annotations/c",
                "/metadata/labels/a~1b",
                "/spec/list",
                "/spec/nested/x",
                "/spec/s~0",
            ]
        );
    }

    #[test]
    fn recorded_paths_round_trip_through_the_annotation() {
        let intent = record(json!({"metadata": {"name": "n"}, "spec": {"a": {"b": 1}}}));
        assert_eq!(
            intent["metadata"]["annotations"][MANAGED_PATHS],
            json!("[\"/spec/a/b\"]")
        );
        assert_eq!(recorded(&intent), Some(["/spec/a/b".to_string()].into()));
        assert_eq!(recorded(&json!({"metadata": {}})), None);
        let garbled = json!({"metadata": {"annotations": {MANAGED_PATHS: "not json"}}});
        assert_eq!(recorded(&garbled), None);
        // An edited record is believed only under labels, annotations and spec.
        let tampered = json!({"metadata": {"annotations": {MANAGED_PATHS:
            "[\"/metadata/finalizers\", \"/spec\", \"/metadata/labels\", \"/specx/a\", \"/spec/a\"]"}}});
        assert_eq!(recorded(&tampered), Some(["/spec/a".to_string()].into()));
    }

    #[test]
    fn only_paths_no_longer_set_nor_replaced_are_released() {
        let earlier: BTreeSet<String> = ["/spec/a", "/spec/b/c", "/spec/d", "/spec/e/f"]
            .map(String::from)
            .into();
        // `/spec/a` is now a map (replaced by its new value), `/spec/e` a scalar
        // (replaced too), `/spec/d` still set; `/spec/b/c` is gone.
        let now: BTreeSet<String> = ["/spec/a/x", "/spec/d", "/spec/e"].map(String::from).into();
        assert_eq!(released(&earlier, &now), vec!["/spec/b/c".to_string()]);
    }

    #[test]
    fn removing_prunes_maps_it_empties_below_the_top() {
        let mut object = json!({
            "metadata": {"labels": {"only": "1"}},
            "spec": {"a": {"b": {"c": 1}}, "keep": {"x": 1, "y": 2}}
        });
        assert!(remove(&mut object, "/spec/a/b/c"));
        assert!(remove(&mut object, "/spec/keep/x"));
        assert!(remove(&mut object, "/metadata/labels/only"));
        assert!(!remove(&mut object, "/spec/missing/z"));
        assert!(!remove(&mut object, "/spec/keep/y/deeper"));
        assert_eq!(
            object,
            json!({"metadata": {"labels": {}}, "spec": {"keep": {"y": 2}}})
        );
    }
}
