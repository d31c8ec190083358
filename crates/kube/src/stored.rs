//! An object as the store keeps it: its JSON text in the kind's storage version, and
//! its namespace and name. A `serde_json::Value` of a typical Cluster API object is ten
//! times its JSON (every small map is a B-tree node, and `managedFields` is half of
//! it), so a management cluster of 1,000 Clusters held as values took ≈600 MB. As
//! text, a read in the storage version is answered by copying bytes, and a write
//! parses the one object it changes. The text of managed-fields entries, but for their
//! times, is kept once for all the objects that have it alike (`shared_text`).

use crate::objects::{ObjKey, SharedKey};
use crate::selector::Filter;
use crate::shared_text::{self, Piece};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use topograph_api::object::object_of;

#[derive(Clone)]
pub struct Stored {
    key: SharedKey,
    /// The text but for the shared pieces.
    json: Box<[u8]>,
    /// The shared pieces, in order, with where each goes in `json`.
    shared: Box<[Piece]>,
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("namespace", &self.key.0)
            .field("name", &self.key.1)
            .field("bytes", &self.json_len())
            .finish()
    }
}

/// What the store's indexes and selectors read of an object, parsed without the rest.
#[derive(Deserialize, Default)]
struct Light {
    #[serde(default)]
    metadata: LightMeta,
}

#[derive(Deserialize, Default)]
struct LightMeta {
    #[serde(default)]
    labels: Option<Map<String, Value>>,
    #[serde(default, rename = "ownerReferences")]
    owner_references: Option<Vec<OwnerUid>>,
}

/// An object's uid, parsed without the rest.
#[derive(Deserialize, Default)]
struct Uid {
    #[serde(default)]
    metadata: UidMeta,
}

#[derive(Deserialize, Default)]
struct UidMeta {
    #[serde(default)]
    uid: Option<String>,
}

/// What the simulation reads of an object another one references, parsed without
/// the rest (its spec and managed fields are most of it).
#[derive(Deserialize)]
struct Referenced {
    #[serde(rename = "apiVersion")]
    api_version: Option<Value>,
    kind: Option<Value>,
    metadata: Option<ReferencedMeta>,
    status: Option<Value>,
}

#[derive(Deserialize)]
struct ReferencedMeta {
    name: Option<Value>,
    namespace: Option<Value>,
    uid: Option<Value>,
    #[serde(rename = "ownerReferences")]
    owner_references: Option<Value>,
}

#[derive(Deserialize)]
struct OwnerUid {
    #[serde(default)]
    uid: Option<String>,
}

/// An object's labels and the uids of its owners: its entries in the indexes.
#[derive(Default, PartialEq, Eq)]
pub(crate) struct IndexEntries {
    pub labels: Vec<(String, String)>,
    pub owners: Vec<String>,
}

impl IndexEntries {
    pub fn of(object: &Value) -> Self {
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect();
        let owners = object
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("uid").and_then(Value::as_str))
            .filter(|uid| !uid.is_empty())
            .map(str::to_string)
            .collect();
        IndexEntries { labels, owners }
    }
}

impl Stored {
    pub fn new(key: ObjKey, object: &Value) -> Self {
        Self::with_key(Arc::new(key), object)
    }

    /// Another form of an object whose key is shared already.
    pub(crate) fn with_key(key: SharedKey, object: &Value) -> Self {
        let (json, shared) = shared_text::split(object);
        Stored {
            key,
            json: json.into_boxed_slice(),
            shared: shared.into_boxed_slice(),
        }
    }

    pub(crate) fn key(&self) -> &SharedKey {
        &self.key
    }

    pub fn namespace(&self) -> &str {
        &self.key.0
    }

    pub fn name(&self) -> &str {
        &self.key.1
    }

    /// The object's JSON text, exactly as `serde_json` writes its value.
    pub fn json(&self) -> Cow<'_, [u8]> {
        if self.shared.is_empty() {
            return Cow::Borrowed(&self.json);
        }
        let mut out = Vec::with_capacity(self.json_len());
        self.write_json(&mut out);
        Cow::Owned(out)
    }

    /// Appends the object's JSON text to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        shared_text::join(&self.json, &self.shared, out);
    }

    /// The length of the object's JSON text.
    pub fn json_len(&self) -> usize {
        self.json.len() + self.shared.iter().map(|(_, p)| p.len()).sum::<usize>()
    }

    /// Whether the text is of `api_version` for certain (the field serializes first, as
    /// it sorts first among the fields of any object the store keeps), so it can be
    /// served as it is to a reader of that version. False only costs a parse.
    pub fn is_in(&self, api_version: &str) -> bool {
        let rest = self.json.strip_prefix(b"{\"apiVersion\":\"".as_slice());
        rest.and_then(|r| r.strip_prefix(api_version.as_bytes()))
            .is_some_and(|r| r.first() == Some(&b'"'))
    }

    /// The object, parsed.
    pub fn value(&self) -> Value {
        // The text was written from a `Value` by `Stored::new`, so it parses.
        serde_json::from_slice(&self.json()).unwrap_or(Value::Null)
    }

    /// The object parsed but for `metadata.managedFields`, which is about half of a
    /// typical object's text and nearly all of its parsing: for readers that decide
    /// from the object and write back a patch (the provider simulation). Null when the
    /// text is not an object's.
    pub fn value_without_managed_fields(&self) -> Value {
        // Any other shape (a `metadata` that is not an object) is parsed whole.
        match serde_json::from_slice::<Skimmed>(&self.json()) {
            Ok(Skimmed(value)) => value,
            Err(_) => self.value(),
        }
    }

    /// `metadata.uid`, or "" when the object has none (as `meta_str` reads it).
    pub fn uid(&self) -> String {
        serde_json::from_slice::<Uid>(&self.json())
            .ok()
            .and_then(|u| u.metadata.uid)
            .unwrap_or_default()
    }

    /// The object's `apiVersion`, `kind`, `metadata.{name,namespace,uid,ownerReferences}`
    /// and `status`, without the rest; fields that are null are left out (they read
    /// as absent). None when the text does not have that shape.
    pub fn referenced(&self) -> Option<Value> {
        let r: Referenced = serde_json::from_slice(&self.json()).ok()?;
        let mut out = Map::new();
        let put = |map: &mut Map<String, Value>, key: &str, value: Option<Value>| {
            if let Some(value) = value {
                map.insert(key.to_string(), value);
            }
        };
        put(&mut out, "apiVersion", r.api_version);
        put(&mut out, "kind", r.kind);
        put(&mut out, "status", r.status);
        if let Some(m) = r.metadata {
            let mut meta = Map::new();
            put(&mut meta, "name", m.name);
            put(&mut meta, "namespace", m.namespace);
            put(&mut meta, "uid", m.uid);
            put(&mut meta, "ownerReferences", m.owner_references);
            out.insert("metadata".to_string(), Value::Object(meta));
        }
        Some(Value::Object(out))
    }

    fn light(&self) -> Light {
        serde_json::from_slice(&self.json()).unwrap_or_default()
    }

    pub(crate) fn index_entries(&self) -> IndexEntries {
        let meta = self.light().metadata;
        IndexEntries {
            labels: meta
                .labels
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| match v {
                    Value::String(v) => Some((k, v)),
                    _ => None,
                })
                .collect(),
            owners: meta
                .owner_references
                .into_iter()
                .flatten()
                .filter_map(|r| r.uid)
                .filter(|uid| !uid.is_empty())
                .collect(),
        }
    }

    /// What selectors read of the object: its name, namespace and labels, or the whole
    /// object when `whole` (kinds whose field selectors read other fields).
    pub fn selectable(&self, whole: bool) -> Value {
        if whole {
            return self.value();
        }
        let mut meta = Map::new();
        meta.insert("name".into(), Value::String(self.name().to_string()));
        if !self.namespace().is_empty() {
            meta.insert(
                "namespace".into(),
                Value::String(self.namespace().to_string()),
            );
        }
        if let Some(labels) = self.light().metadata.labels {
            meta.insert("labels".into(), Value::Object(labels));
        }
        object_of([("metadata", Value::Object(meta))])
    }

    /// Whether `filter` selects the object, reading no more of it than it must.
    pub fn matches(&self, filter: &Filter) -> bool {
        if filter.is_empty() {
            return true;
        }
        filter.matches(&self.selectable(!filter.reads_only_metadata()))
    }
}

/// An object parsed in one pass with `metadata.managedFields` skipped, not built.
struct Skimmed(Value);

/// A map parsed into a `Value`: the root, whose `metadata` is parsed as the other
/// kind, or a `metadata`, whose `managedFields` is read past.
struct MapWithout {
    root: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for MapWithout {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MapWithout {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if !self.root && key == "managedFields" {
                access.next_value::<serde::de::IgnoredAny>()?;
            } else if self.root && key == "metadata" {
                let metadata = access.next_value_seed(MapWithout { root: false })?;
                out.insert(key, metadata);
            } else {
                out.insert(key, access.next_value()?);
            }
        }
        Ok(Value::Object(out))
    }
}

impl<'de> Deserialize<'de> for Skimmed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::DeserializeSeed;
        MapWithout { root: true }.deserialize(d).map(Skimmed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_parses_back_to_the_object_and_selectors_read_it_alike() {
        let object = json!({"apiVersion": "v1", "kind": "Event", "type": "Warning",
            "metadata": {"name": "e", "namespace": "ns", "labels": {"a": "1", "n": 5},
                "ownerReferences": [{"uid": "u1"}, {"uid": ""}, {"name": "x"}]}});
        let stored = Stored::new(("ns".into(), "e".into()), &object);
        assert_eq!(stored.value(), object);
        assert_eq!(stored.value_without_managed_fields(), object);
        assert!(stored.is_in("v1"));
        assert_eq!(stored.uid(), "");
        let referenced = stored.referenced().unwrap();
        for path in [
            "/apiVersion",
            "/kind",
            "/metadata/name",
            "/metadata/namespace",
            "/metadata/ownerReferences",
            "/status",
        ] {
            assert_eq!(referenced.pointer(path), object.pointer(path), "{path}");
        }
        assert!(referenced.get("type").is_none() && referenced["metadata"].get("labels").is_none());
        let with_uid = json!({"metadata": {"name": "x", "uid": "u-1", "labels": {"a": "b"}}});
        assert_eq!(
            Stored::new((String::new(), "x".into()), &with_uid).uid(),
            "u-1"
        );
        assert!(!stored.is_in("v"));
        assert!(!stored.is_in("v1beta1"));
        assert_eq!(
            stored.json().as_ref(),
            serde_json::to_vec(&object).unwrap().as_slice()
        );
        let entries = stored.index_entries();
        let from_value = IndexEntries::of(&object);
        assert_eq!(entries.labels, vec![("a".to_string(), "1".to_string())]);
        assert_eq!(entries.labels, from_value.labels);
        assert_eq!(entries.owners, vec!["u1".to_string()]);
        assert_eq!(entries.owners, from_value.owners);
        for (labels, fields, expected) in [
            ("", "", true),
            ("a=1", "", true),
            ("a=2", "", false),
            ("", "metadata.namespace=ns", true),
            ("a=1", "metadata.name=other", false),
        ] {
            let filter = Filter {
                labels: crate::selector::LabelSelector::parse(labels).unwrap(),
                fields: crate::selector::FieldSelector::parse(fields).unwrap(),
            };
            assert_eq!(stored.matches(&filter), expected, "{labels} {fields}");
            assert_eq!(filter.matches(&object), expected, "{labels} {fields}");
        }
        let events = crate::selector::fields_of("", "Event");
        let filter = Filter {
            labels: Default::default(),
            fields: crate::selector::FieldSelector::parse_for("type=Warning", events).unwrap(),
        };
        assert!(!filter.reads_only_metadata());
        assert!(stored.matches(&filter));
    }

    #[test]
    fn an_object_read_without_its_managed_fields_is_the_rest_of_it() {
        let object = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "md", "namespace": "ns", "generation": 2,
                "managedFields": [{"manager": "capi-topology", "operation": "Apply",
                    "apiVersion": "cluster.x-k8s.io/v1beta1", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}}}, "time": "2026-11-28T10:00:00Z"}],
                "labels": {"a": "b"}},
            "spec": {"replicas": 3, "template": {"metadata": {"managedFields": "not metadata's"}}},
            "status": {"phase": "Running"}});
        let stored = Stored::new(("ns".into(), "md".into()), &object);
        let mut want = object.clone();
        want["metadata"]
            .as_object_mut()
            .map(|m| m.remove("managedFields"));
        assert_eq!(stored.value_without_managed_fields(), want);
        assert_eq!(stored.value(), object);
        for other in [
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}),
            json!({"metadata": null, "spec": {"managedFields": 1}}),
            json!({"metadata": "odd"}),
        ] {
            let stored = Stored::new(("ns".into(), "c".into()), &other);
            assert_eq!(stored.value_without_managed_fields(), other);
        }
    }
}
