//! Helpers over arbitrary Kubernetes objects held as JSON.
//!
//! Provider templates and objects (InfrastructureCluster templates, ControlPlane
//! templates, machine templates, ...) are of kinds we do not know in advance, so they
//! stay `serde_json::Value` and round-trip losslessly. These helpers read and write the
//! few common fields every object has.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// A group and version, parsed from an `apiVersion` (`group/version`, or just
/// `version` for the core group).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupVersion {
    /// The API group; empty for the core group.
    pub group: String,
    /// The version within the group.
    pub version: String,
}

impl GroupVersion {
    /// Splits an `apiVersion` the way Kubernetes does; more than one `/` is an error.
    pub fn parse(api_version: &str) -> Result<Self, String> {
        let mut parts = api_version.split('/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(version), None, None) => Ok(GroupVersion {
                group: String::new(),
                version: version.to_string(),
            }),
            (Some(group), Some(version), None) => Ok(GroupVersion {
                group: group.to_string(),
                version: version.to_string(),
            }),
            _ => Err(format!("unexpected GroupVersion string: {api_version}")),
        }
    }
}

/// An `apiVersion` split into group (`""` for the core group) and version, without
/// checking it: text with more than one `/`, which Kubernetes refuses
/// ([`GroupVersion::parse`]), splits at the first.
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The group of an `apiVersion` (`""` for the core group), as [`split_api_version`] finds it.
pub fn group_of(api_version: &str) -> &str {
    split_api_version(api_version).0
}

/// `Kind.group`, the way Go prints a `schema.GroupKind` (`Kind` alone for the core group).
pub fn group_kind(api_version: &str, kind: &str) -> String {
    let group = group_of(api_version);
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

/// Identity of an object whatever version it is read in, as the API server stores it:
/// group, kind, namespace, name. An `apiVersion` as written is not part of it; callers
/// that must tell versions apart keep it beside the key ([`versioned_key`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// API group; empty for the core group.
    pub group: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`; empty for cluster-scoped objects.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectKey {
    /// The key of the object `kind` `namespace/name` in `api_version`.
    pub fn new(api_version: &str, kind: &str, namespace: &str, name: &str) -> Self {
        ObjectKey {
            group: group_of(api_version).to_string(),
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    /// The key of `object`.
    pub fn of(object: &Value) -> Self {
        Self::new(
            object.api_version(),
            object.kind(),
            object.namespace(),
            object.name(),
        )
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// The `apiVersion` as written and the key: what tells two versions of one object apart
/// among inputs, and the order rendered objects are printed in (by `apiVersion`, then
/// kind, namespace and name).
pub fn versioned_key(object: &Value) -> (String, ObjectKey) {
    (object.api_version().to_string(), ObjectKey::of(object))
}

/// Read access to the common fields of a JSON object.
pub trait ObjectExt {
    /// `apiVersion`, or "" when absent.
    fn api_version(&self) -> &str;
    /// `kind`, or "" when absent.
    fn kind(&self) -> &str;
    /// `metadata.name`, or "" when absent.
    fn name(&self) -> &str;
    /// `metadata.namespace`, or "" when absent.
    fn namespace(&self) -> &str;
    /// `metadata.labels` as a map; non-string values are skipped.
    fn labels(&self) -> BTreeMap<String, String>;
    /// `metadata.annotations` as a map; non-string values are skipped.
    fn annotations(&self) -> BTreeMap<String, String>;
    /// The value at a dotted path of object keys (`spec.template.spec`).
    fn at(&self, path: &[&str]) -> Option<&Value>;
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    value.at(path).and_then(Value::as_str).unwrap_or("")
}

/// A JSON object of strings as a map; non-string values are skipped.
pub fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

impl ObjectExt for Value {
    fn api_version(&self) -> &str {
        str_at(self, &["apiVersion"])
    }
    fn kind(&self) -> &str {
        str_at(self, &["kind"])
    }
    fn name(&self) -> &str {
        str_at(self, &["metadata", "name"])
    }
    fn namespace(&self) -> &str {
        str_at(self, &["metadata", "namespace"])
    }
    fn labels(&self) -> BTreeMap<String, String> {
        string_map(self.at(&["metadata", "labels"]))
    }
    fn annotations(&self) -> BTreeMap<String, String> {
        string_map(self.at(&["metadata", "annotations"]))
    }
    fn at(&self, path: &[&str]) -> Option<&Value> {
        path.iter()
            .try_fold(self, |v, key| v.as_object()?.get(*key))
    }
}

/// The object map at `path`, created (replacing any non-object on the way) if missing.
pub fn object_at_mut<'a>(value: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut current = value;
    for key in path {
        if !current.is_object() {
            *current = Value::Object(Map::new());
        }
        current = match current {
            Value::Object(map) => map
                .entry((*key).to_string())
                .or_insert_with(|| Value::Object(Map::new())),
            _ => unreachable!("made an object just above"),
        };
    }
    if !current.is_object() {
        *current = Value::Object(Map::new());
    }
    match current {
        Value::Object(map) => map,
        _ => unreachable!("made an object just above"),
    }
}

/// `metadata` of an object, made an (empty) object when missing or not one; `None`
/// when the object itself is not a JSON object.
pub fn metadata_mut(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let metadata = object
        .as_object_mut()?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    metadata.as_object_mut()
}

/// Sets `value` at `path` (the last element is the key), creating parents.
pub fn set_at(object: &mut Value, path: &[&str], value: Value) {
    if let Some((last, parents)) = path.split_last() {
        object_at_mut(object, parents).insert((*last).to_string(), value);
    }
}

/// Removes the key at `path`, if present.
pub fn remove_at(object: &mut Value, path: &[&str]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    let mut current = object;
    for key in parents {
        current = current.as_object_mut()?.get_mut(*key)?;
    }
    current.as_object_mut()?.remove(*last)
}

/// A JSON object from entries, moving the values in. Unlike `serde_json::json!`, which
/// re-serializes every `Value` it embeds, this does not copy the trees it is given.
pub fn object_of<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// A string map as a JSON object.
pub fn string_map_value(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// Sets `metadata.labels`; an empty map removes the field, as Go's `SetLabels(nil)` would.
pub fn set_labels(object: &mut Value, labels: &BTreeMap<String, String>) {
    set_string_map(object, "labels", labels);
}

/// Sets `metadata.annotations`; an empty map removes the field.
pub fn set_annotations(object: &mut Value, annotations: &BTreeMap<String, String>) {
    set_string_map(object, "annotations", annotations);
}

fn set_string_map(object: &mut Value, field: &str, map: &BTreeMap<String, String>) {
    if map.is_empty() {
        remove_at(object, &["metadata", field]);
    } else {
        set_at(object, &["metadata", field], string_map_value(map));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn group_kind_prints_like_go() {
        assert_eq!(
            group_kind(
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "DockerClusterTemplate"
            ),
            "DockerClusterTemplate.infrastructure.cluster.x-k8s.io"
        );
        assert_eq!(group_kind("v1", "Secret"), "Secret");
    }

    #[test]
    fn keys_are_by_group_whatever_the_version() {
        let md = |api_version: &str| {
            json!({"apiVersion": api_version, "kind": "MachineDeployment",
                "metadata": {"name": "md", "namespace": "ns"}})
        };
        let key = ObjectKey::of(&md("cluster.x-k8s.io/v1beta1"));
        assert_eq!(key, ObjectKey::of(&md("cluster.x-k8s.io/v1beta2")));
        assert_eq!(key.group, "cluster.x-k8s.io");
        assert_eq!(key.to_string(), "MachineDeployment ns/md");
        assert_ne!(
            versioned_key(&md("cluster.x-k8s.io/v1beta1")),
            versioned_key(&md("cluster.x-k8s.io/v1beta2"))
        );
        assert_eq!(
            ObjectKey::new("v1", "Secret", "", "s").to_string(),
            "Secret s"
        );
        assert_eq!(split_api_version("v1"), ("", "v1"));
        assert_eq!(group_of("apps/v1"), "apps");
    }

    #[test]
    fn group_version_parse() {
        assert_eq!(
            GroupVersion::parse("a.b/v1").unwrap(),
            GroupVersion {
                group: "a.b".into(),
                version: "v1".into()
            }
        );
        assert_eq!(GroupVersion::parse("v1").unwrap().group, "");
        assert!(GroupVersion::parse("a/b/c").is_err());
    }

    #[test]
    fn set_and_remove_paths() {
        let mut v = json!({"spec": 3});
        set_at(&mut v, &["spec", "a", "b"], json!(1));
        assert_eq!(v, json!({"spec": {"a": {"b": 1}}}));
        assert_eq!(remove_at(&mut v, &["spec", "a", "b"]), Some(json!(1)));
        assert_eq!(v, json!({"spec": {"a": {}}}));
        set_labels(&mut v, &BTreeMap::new());
        assert!(v.at(&["metadata", "labels"]).is_none());
    }
}
