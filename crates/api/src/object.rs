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

/// The group of an `apiVersion`, or the whole string when it does not parse.
pub fn group_of(api_version: &str) -> &str {
    match api_version.split_once('/') {
        Some((group, _)) => group,
        None => "",
    }
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

/// Identity of an object: what Kubernetes needs to find it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// `apiVersion` as written.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`; empty for cluster-scoped objects.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
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
    /// The object's identity.
    fn key(&self) -> ObjectKey {
        ObjectKey {
            api_version: self.api_version().to_string(),
            kind: self.kind().to_string(),
            namespace: self.namespace().to_string(),
            name: self.name().to_string(),
        }
    }
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
