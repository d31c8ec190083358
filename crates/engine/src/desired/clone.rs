//! Cloning class templates: into objects (`spec.template` becomes the object) and into
//! template copies (the whole template, re-owned by the Cluster).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use topograph_api::model::ObjectRef;
use topograph_api::object::{
    ObjectExt, group_kind, object_at_mut, set_annotations, set_at, set_labels,
};

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

fn strip_server_fields(object: &mut Value) {
    let metadata = object_at_mut(object, &["metadata"]);
    for field in SERVER_FIELDS {
        metadata.remove(*field);
    }
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

fn cloned_from_annotations(annotations: &mut BTreeMap<String, String>, from: &ObjectRef) {
    annotations.insert(labels::CLONED_FROM_NAME.to_string(), from.name.clone());
    annotations.insert(
        labels::CLONED_FROM_GROUP_KIND.to_string(),
        group_kind(&from.api_version, &from.kind),
    );
}

/// A new object from a template: the template's `spec.template` becomes the object, it
/// gets the template's apiVersion and kind (without `Template`), the caller's labels
/// and annotations over its own, the Cluster name label and the cloned-from
/// annotations.
pub fn template_to_object(input: CloneInput<'_>) -> Value {
    let mut object = match input.template.at(&["spec", "template"]) {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        _ => Value::Object(Map::new()),
    };
    strip_server_fields(&mut object);
    set_at(
        &mut object,
        &["metadata", "name"],
        Value::String(input.name),
    );
    set_at(
        &mut object,
        &["metadata", "namespace"],
        Value::String(input.namespace.to_string()),
    );
    let mut annotations = object.annotations();
    annotations.extend(input.annotations);
    cloned_from_annotations(&mut annotations, input.cloned_from);
    set_annotations(&mut object, &annotations);
    let mut object_labels = object.labels();
    object_labels.extend(input.labels);
    object_labels.insert(
        labels::CLUSTER_NAME.to_string(),
        input.cluster_name.to_string(),
    );
    set_labels(&mut object, &object_labels);
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
    for field in ["apiVersion", "kind", "metadata", "spec"] {
        if let Some(value) = input.template.get(field) {
            copy.insert(field.to_string(), value.clone());
        }
    }
    let mut copy = Value::Object(copy);
    strip_server_fields(&mut copy);
    let mut copy_labels = copy.labels();
    copy_labels.extend(input.labels);
    copy_labels.insert(
        labels::CLUSTER_NAME.to_string(),
        input.cluster_name.to_string(),
    );
    copy_labels.insert(labels::TOPOLOGY_OWNED.to_string(), String::new());
    set_labels(&mut copy, &copy_labels);
    let mut annotations = copy.annotations();
    annotations.extend(input.annotations);
    cloned_from_annotations(&mut annotations, input.cloned_from);
    annotations.remove(labels::LAST_APPLIED);
    set_annotations(&mut copy, &annotations);
    set_at(
        &mut copy,
        &["metadata", "ownerReferences"],
        Value::Array(vec![owner]),
    );
    set_at(&mut copy, &["metadata", "name"], Value::String(input.name));
    set_at(
        &mut copy,
        &["metadata", "namespace"],
        Value::String(input.namespace.to_string()),
    );
    copy
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
