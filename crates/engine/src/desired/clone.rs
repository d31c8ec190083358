//! Cloning class templates: into objects (`spec.template` becomes the object) and into
//! template copies (the whole template, re-owned by the Cluster).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use topograph_api::model::ObjectRef;
use topograph_api::object::{ObjectExt, group_kind, set_at};

use crate::labels;

/// Metadata fields the API server assigns; never carried into a desired object.
const SERVER_FIELDS: &[&str] = &[
    "resourceVersion",
    "finalizers",
    "uid",
    "selfLink",
    "creationTimestamp",
    "generation",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generateName",
];

/// The template's metadata without the fields the API server assigns and without
/// `set_here` (what the caller sets itself, so copying it would be wasted).
fn kept_metadata(metadata: Option<&Map<String, Value>>, set_here: &[&str]) -> Map<String, Value> {
    metadata
        .into_iter()
        .flatten()
        .filter(|(k, _)| !SERVER_FIELDS.contains(&k.as_str()) && !set_here.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Where a clone comes from and what it is called.
pub struct CloneInput<'a> {
    /// The class template.
    pub template: &'a Value,
    /// The class's reference to it (for the cloned-from annotations).
    pub cloned_from: &'a ObjectRef,
    /// The namespace of the Cluster; every generated object lives there.
    pub namespace: &'a str,
    /// The Cluster's name.
    pub cluster_name: &'a str,
    /// Labels to add (they win over the template's).
    pub labels: BTreeMap<String, String>,
    /// Annotations to add (they win over the template's).
    pub annotations: BTreeMap<String, String>,
    /// The object's name.
    pub name: String,
}

fn insert_cloned_from(annotations: &mut Map<String, Value>, from: &ObjectRef) {
    annotations.insert(
        labels::CLONED_FROM_NAME.to_string(),
        Value::String(from.name.clone()),
    );
    annotations.insert(
        labels::CLONED_FROM_GROUP_KIND.to_string(),
        Value::String(group_kind(&from.api_version, &from.kind)),
    );
}

/// Adds `extra` to a string map, over what it has.
fn extend_strings(map: &mut Map<String, Value>, extra: BTreeMap<String, String>) {
    for (key, value) in extra {
        map.insert(key, Value::String(value));
    }
}

/// A new object from a template: the template's `spec.template` becomes the object, it
/// gets the template's apiVersion and kind (without `Template`), the caller's labels
/// and annotations over its own, the Cluster name label and the cloned-from
/// annotations.
pub fn template_to_object(input: CloneInput<'_>) -> Value {
    let source = match input.template.at(&["spec", "template"]) {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    };
    let mut object: Map<String, Value> = source
        .into_iter()
        .flatten()
        .filter(|(k, _)| *k != "metadata")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let template_metadata = source
        .and_then(|m| m.get("metadata"))
        .and_then(Value::as_object);
    let mut metadata = kept_metadata(
        template_metadata,
        &["labels", "annotations", "name", "namespace"],
    );
    metadata.insert("name".to_string(), Value::String(input.name));
    metadata.insert(
        "namespace".to_string(),
        Value::String(input.namespace.to_string()),
    );
    let mut annotations = string_entries(template_metadata, "annotations");
    extend_strings(&mut annotations, input.annotations);
    insert_cloned_from(&mut annotations, input.cloned_from);
    metadata.insert("annotations".to_string(), Value::Object(annotations));
    let mut object_labels = string_entries(template_metadata, "labels");
    extend_strings(&mut object_labels, input.labels);
    object_labels.insert(
        labels::CLUSTER_NAME.to_string(),
        Value::String(input.cluster_name.to_string()),
    );
    metadata.insert("labels".to_string(), Value::Object(object_labels));
    object.insert("metadata".to_string(), Value::Object(metadata));
    let mut object = Value::Object(object);
    if object.api_version().is_empty() {
        set_at(
            &mut object,
            &["apiVersion"],
            Value::String(input.template.api_version().to_string()),
        );
    }
    if object.kind().is_empty() {
        let kind = input.template.kind();
        let kind = kind.strip_suffix("Template").unwrap_or(kind);
        set_at(&mut object, &["kind"], Value::String(kind.to_string()));
    }
    object
}

/// A copy of a template for one Cluster: the whole template (apiVersion, kind,
/// metadata, spec), the topology labels and cloned-from annotations added, kubectl's
/// last-applied annotation removed, and the Cluster as its only owner.
pub fn template_to_template(input: CloneInput<'_>, owner: Value) -> Value {
    let mut copy = Map::new();
    for field in ["apiVersion", "kind", "spec"] {
        if let Some(value) = input.template.get(field) {
            copy.insert(field.to_string(), value.clone());
        }
    }
    // The metadata is built in one go rather than copied and then rewritten: what is
    // set below (labels and annotations as string maps, owner, name, namespace) is
    // not copied from the template at all.
    let template_metadata = input.template.get("metadata").and_then(Value::as_object);
    let mut metadata = kept_metadata(
        template_metadata,
        &[
            "labels",
            "annotations",
            "ownerReferences",
            "name",
            "namespace",
        ],
    );
    let mut copy_labels = string_entries(template_metadata, "labels");
    extend_strings(&mut copy_labels, input.labels);
    copy_labels.insert(
        labels::CLUSTER_NAME.to_string(),
        Value::String(input.cluster_name.to_string()),
    );
    copy_labels.insert(
        labels::TOPOLOGY_OWNED.to_string(),
        Value::String(String::new()),
    );
    metadata.insert("labels".to_string(), Value::Object(copy_labels));
    let mut annotations = string_entries(template_metadata, "annotations");
    extend_strings(&mut annotations, input.annotations);
    insert_cloned_from(&mut annotations, input.cloned_from);
    annotations.remove(labels::LAST_APPLIED);
    metadata.insert("annotations".to_string(), Value::Object(annotations));
    metadata.insert("ownerReferences".to_string(), Value::Array(vec![owner]));
    metadata.insert("name".to_string(), Value::String(input.name));
    metadata.insert(
        "namespace".to_string(),
        Value::String(input.namespace.to_string()),
    );
    copy.insert("metadata".to_string(), Value::Object(metadata));
    Value::Object(copy)
}

/// The string entries of `metadata.<field>` (a label or annotation map; other values
/// are dropped, as the objects' accessors read them).
fn string_entries(metadata: Option<&Map<String, Value>>, field: &str) -> Map<String, Value> {
    metadata
        .and_then(|m| m.get(field))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(_, v)| v.is_string())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `current` already has every value `desired` sets, by the rules the seed's
/// "template <-> object reconciliation" gives: fields the desired object sets must be
/// equal, extra map entries in the current object are fine, lists must match item for
/// item.
pub fn is_enforced(desired: &Value, current: &Value) -> bool {
    match (desired, current) {
        (Value::Object(d), Value::Object(c)) => d
            .iter()
            .all(|(k, dv)| c.get(k).is_some_and(|cv| is_enforced(dv, cv))),
        (Value::Array(d), Value::Array(c)) => {
            d.len() == c.len() && d.iter().zip(c).all(|(dv, cv)| is_enforced(dv, cv))
        }
        (Value::Number(d), Value::Number(c)) => d.as_f64() == c.as_f64(),
        _ => desired == current,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn enforcement_rules_of_the_seed() {
        // (desired, current, enforced?)
        let cases = [
            (json!({"a": 1}), json!({"a": 1, "b": 2}), true),
            (json!({"a": 1}), json!({"a": 2}), false),
            (
                json!({"m": {"x": "1"}}),
                json!({"m": {"x": "1", "y": "2"}}),
                true,
            ),
            (json!({"l": [1, 2]}), json!({"l": [1, 2, 3]}), false),
            (
                json!({"l": [{"a": 1}]}),
                json!({"l": [{"a": 1, "b": 0}]}),
                true,
            ),
            (json!({"a": 1}), json!({}), false),
            (json!({}), json!({"a": 1}), true),
            (json!(1), json!(1.0), true),
        ];
        for (desired, current, want) in cases {
            assert_eq!(
                is_enforced(&desired, &current),
                want,
                "{desired} vs {current}"
            );
        }
    }
}
