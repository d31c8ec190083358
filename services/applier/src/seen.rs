//! One watched object as the watchers read it off the wire: the [`Summary`] the index
//! needs and the resourceVersion the kube watcher resumes from, nothing more.
//!
//! The watcher keeps a listing's page (500 objects) while it hands them out, and the
//! channel to the index up to 1,024 changes per management cluster: both hold this,
//! never the object.
//!
//! Most watched objects are a Cluster's own (MachineDeployments, template copies,
//! control planes): the index reads their name, namespace and labels, and a hash of
//! their spec and some metadata ([`crate::watch_index::owned_digest`]). Decoding the
//! whole of each into a `Value` was ≈11 % of the watching applier's CPU while a fleet was
//! stamped out, so an object whose `kind` arrives before its `metadata` (as API servers
//! write objects) and is not one the index reads whole (Cluster, ClusterClass,
//! ExtensionConfig) has only its metadata's names and labels decoded, the hash taken as
//! the rest of its metadata and its spec are read, and its status skipped unread. Any
//! other object is decoded whole, as before.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{DefaultHasher, Hasher};

use kube::api::ObjectMeta;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};
use topograph_api::object::ObjectExt;

use crate::digest::Digest;
use crate::watch_index::{DIGESTED_METADATA, Digests, Summary};

/// A watched object, summarised.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    metadata: ObjectMeta,
    pub(crate) summary: Summary,
}

impl Seen {
    /// The object's resourceVersion, as sent.
    pub(crate) fn resource_version(&self) -> Option<&str> {
        self.metadata.resource_version.as_deref()
    }
}

/// The kinds whose summary reads more than names and labels.
fn read_whole(kind: &str) -> bool {
    matches!(kind, "Cluster" | "ClusterClass" | "ExtensionConfig")
}

/// What the index reads of the metadata of an object it does not read whole.
#[derive(Deserialize)]
struct Names {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    // Values as they come: the index reads string labels only, as when decoded whole.
    labels: Option<BTreeMap<String, Value>>,
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<String>,
    // The rest of `watch_index::DIGESTED_METADATA`.
    #[serde(default)]
    annotations: Option<Value>,
    #[serde(default, rename = "ownerReferences")]
    owner_references: Option<Value>,
    #[serde(default, rename = "deletionTimestamp")]
    deletion_timestamp: Option<Value>,
}

impl<'de> Deserialize<'de> for Seen {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SeenVisitor)
    }
}

struct SeenVisitor;

impl<'de> Visitor<'de> for SeenVisitor {
    type Value = Seen;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Seen, A::Error> {
        let mut object = Map::new();
        // Known once `kind` has been read: whether the rest may be skipped.
        let mut light = false;
        let mut names: Option<Names> = None;
        let mut spec = Hashed::default();
        let mut status = Hashed::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "metadata" if light => names = Some(map.next_value()?),
                "spec" if light => spec.read(&mut map)?,
                "status" if light => status.read(&mut map)?,
                "apiVersion" | "kind" => {
                    let value: Value = map.next_value()?;
                    if key == "kind" {
                        light = value.as_str().is_some_and(|kind| !read_whole(kind));
                    }
                    object.insert(key, value);
                }
                _ if light => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    object.insert(key, map.next_value()?);
                }
            }
        }
        let (resource_version, summary) = match names {
            Some(names) => {
                let mut metadata = json!({"name": names.name, "namespace": names.namespace});
                if let Some(labels) = names.labels {
                    metadata["labels"] = json!(labels);
                }
                let digests = |object: &Value| {
                    Digests::from_parts(
                        [
                            object.at(&["metadata", "labels"]),
                            names.annotations.as_ref(),
                            names.owner_references.as_ref(),
                            names.deletion_timestamp.as_ref(),
                        ],
                        spec.finish(None),
                        status.finish(None),
                    )
                };
                object.insert("metadata".into(), metadata);
                let summary = Summary::read(Value::Object(object), digests);
                (names.resource_version, summary)
            }
            None => {
                let object = Value::Object(object);
                let resource_version = object
                    .get("metadata")
                    .and_then(|m| m.get("resourceVersion"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                // Metadata came before `kind`, so it was read whole; spec and status
                // may still have been hashed as they were read.
                let summary = Summary::read(object, |object| {
                    Digests::from_parts(
                        DIGESTED_METADATA.map(|field| object.at(&["metadata", field])),
                        spec.finish(object.get("spec")),
                        status.finish(object.get("status")),
                    )
                });
                (resource_version, summary)
            }
        };
        Ok(Seen {
            metadata: ObjectMeta {
                resource_version,
                ..ObjectMeta::default()
            },
            summary,
        })
    }
}

/// A part of an object hashed as it is read ([`crate::digest`]), if it was.
#[derive(Default)]
struct Hashed {
    hasher: DefaultHasher,
    read: bool,
}

impl Hashed {
    fn read<'de, A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error> {
        map.next_value_seed(Digest(&mut self.hasher))?;
        self.read = true;
        Ok(())
    }

    /// The hash of the part, `decoded` when it was not hashed while read (`null` when
    /// the object has none).
    fn finish(&self, decoded: Option<&Value>) -> u64 {
        if self.read {
            return self.hasher.finish();
        }
        crate::digest::of(decoded)
    }
}

topograph_management::dynamic_resource!(Seen);

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(text: &str) -> Seen {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// Every object summarised the same way whether it is skimmed or read whole.
    #[test]
    fn skimmed_objects_summarise_as_whole_ones() {
        let objects = [
            // A Cluster's own object: skimmed.
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                "metadata": {"name": "dev-md-0-x", "namespace": "ns", "resourceVersion": "42",
                    "labels": {"cluster.x-k8s.io/cluster-name": "dev", "a": "b"},
                    "annotations": {"x": "y"},
                    "ownerReferences": [{"kind": "Cluster", "name": "dev", "uid": "u"}],
                    "managedFields": [{"manager": "topograph", "fieldsV1": {"f:spec": {}}}]},
                "spec": {"replicas": 3, "template": {"spec": {"version": "v1.31.0"}}},
                "status": {"readyReplicas": 3}}),
            // A class template: skimmed, its key is its summary.
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate",
                "metadata": {"name": "t", "namespace": "ns", "resourceVersion": "7"},
                "spec": {"template": {"spec": {}}}}),
            // Read whole.
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
                "metadata": {"name": "dev", "namespace": "ns", "resourceVersion": "9"},
                "spec": {"topology": {"class": "cc", "version": "v1.31.0"}},
                "status": {"phase": "Provisioned"}}),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
                "metadata": {"name": "cc", "namespace": "ns", "resourceVersion": "3"},
                "spec": {"controlPlane": {"ref": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "name": "cp"}}}}),
            json!({"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig",
                "metadata": {"name": "ext", "resourceVersion": "5"}, "spec": {}}),
            // No namespace, no labels.
            json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "n"}}),
        ];
        for object in objects {
            let text = object.to_string();
            let got = seen(&text);
            assert_eq!(got.summary, Summary::of(object.clone()), "{text}");
            assert_eq!(
                got.metadata.resource_version.as_deref(),
                object
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str),
                "{text}"
            );
        }
    }

    #[test]
    fn metadata_before_kind_is_read_whole() {
        let text = r#"{"metadata":{"name":"m","namespace":"ns","labels":{"cluster.x-k8s.io/cluster-name":"dev"},"resourceVersion":"8"},"kind":"MachineDeployment","apiVersion":"cluster.x-k8s.io/v1beta1","spec":{}}"#;
        let object: Value = serde_json::from_str(text).unwrap_or_default();
        let got = seen(text);
        assert_eq!(got.summary, Summary::of(object));
        assert_eq!(got.metadata.resource_version.as_deref(), Some("8"));
    }

    #[test]
    fn odd_objects_decode_without_panicking() {
        // Not an object, or metadata of the wrong shape: an error for the watcher.
        for text in ["[]", "3", r#"{"kind":"MachineDeployment","metadata":3}"#] {
            assert!(serde_json::from_str::<Seen>(text).is_err(), "{text}");
        }
        // A label that is not a string is read as whole decoding reads it.
        let text = r#"{"kind":"MachineDeployment","metadata":{"name":"m","labels":{"a":1}}}"#;
        let object: Value = serde_json::from_str(text).unwrap_or_default();
        assert_eq!(seen(text).summary, Summary::of(object));
    }
}
