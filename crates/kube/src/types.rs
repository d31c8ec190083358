//! The kinds the server serves: the built-in core kinds and those registered by
//! CustomResourceDefinitions, with what discovery and routing need to know about them.

use crate::status::ApiError;
use crate::util::version_priority_cmp;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use topograph_variables::resource::ResourceSchema;

/// One resource (a kind's collection), served under one or more versions of its group.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    pub group: String,
    /// Served versions, highest priority first.
    pub versions: Vec<String>,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub status_subresource: bool,
    /// Each served version's `openAPIV3Schema`, when it has one the validator can use:
    /// writes in that version are pruned, defaulted and validated against it.
    pub schemas: BTreeMap<String, Arc<ResourceSchema>>,
    /// The version objects are stored in.
    pub storage_version: String,
    /// The CRD's `spec.conversion.strategy` is `Webhook`: versions differ in more than
    /// `apiVersion`, and objects are converted between them (see [`crate::conversion`]).
    pub webhook_conversion: bool,
}

pub const CRD_GROUP: &str = "apiextensions.k8s.io";
pub const CRD_PLURAL: &str = "customresourcedefinitions";

impl ResourceType {
    /// The store's key for this collection: "group/plural".
    pub fn key(&self) -> String {
        type_key(&self.group, &self.plural)
    }

    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }

    pub fn is_crd(&self) -> bool {
        self.group == CRD_GROUP && self.plural == CRD_PLURAL
    }

    /// Whether objects of this kind carry `metadata.generation`, as on a real API
    /// server ([`topograph_api::server::tracks_generation`]).
    pub fn tracks_generation(&self) -> bool {
        topograph_api::server::tracks_generation(&self.group, &self.kind)
    }

    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.plural == "namespaces"
    }

    fn builtin(
        group: &str,
        version: &str,
        plural: &str,
        kind: &str,
        namespaced: bool,
        short: &[&str],
        status: bool,
    ) -> Self {
        ResourceType {
            group: group.into(),
            versions: vec![version.into()],
            plural: plural.into(),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            list_kind: format!("{kind}List"),
            namespaced,
            short_names: short.iter().map(|s| s.to_string()).collect(),
            categories: vec![],
            status_subresource: status,
            schemas: BTreeMap::new(),
            storage_version: version.into(),
            webhook_conversion: false,
        }
    }

    /// The kinds present before any CRD is registered.
    pub fn builtins() -> Vec<ResourceType> {
        vec![
            Self::builtin("", "v1", "namespaces", "Namespace", false, &["ns"], true),
            Self::builtin("", "v1", "configmaps", "ConfigMap", true, &["cm"], false),
            Self::builtin("", "v1", "secrets", "Secret", true, &[], false),
            Self::builtin("", "v1", "events", "Event", true, &["ev"], false),
            Self::builtin(
                "events.k8s.io",
                "v1",
                "events",
                "Event",
                true,
                &["ev"],
                false,
            ),
            Self::builtin(
                CRD_GROUP,
                "v1",
                CRD_PLURAL,
                "CustomResourceDefinition",
                false,
                &["crd", "crds"],
                true,
            ),
        ]
    }

    /// Reads the kind a CRD defines; errors are the 422 a real API server would give.
    pub fn from_crd(crd: &Value) -> Result<Self, ApiError> {
        let name = crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let invalid =
            |msg: &str| ApiError::invalid(CRD_GROUP, "CustomResourceDefinition", name, msg);
        let s = |p: &str| {
            crd.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let group = s("/spec/group");
        let plural = s("/spec/names/plural");
        let kind = s("/spec/names/kind");
        if group.is_empty() {
            return Err(invalid("spec.group: Required value"));
        }
        if plural.is_empty() {
            return Err(invalid("spec.names.plural: Required value"));
        }
        if kind.is_empty() {
            return Err(invalid("spec.names.kind: Required value"));
        }
        if name != format!("{plural}.{group}") {
            return Err(invalid(&format!(
                "metadata.name: Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"
            )));
        }
        let namespaced = match s("/spec/scope").as_str() {
            "Namespaced" => true,
            "Cluster" => false,
            other => {
                return Err(invalid(&format!(
                    "spec.scope: Unsupported value: \"{other}\": supported values: \"Cluster\", \"Namespaced\""
                )));
            }
        };
        let versions = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut served: Vec<String> = versions
            .iter()
            .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
            .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
            .collect();
        if versions.is_empty() {
            return Err(invalid(
                "spec.versions: Invalid value: null: must have exactly one version marked as storage version",
            ));
        }
        served.sort_by(|a, b| version_priority_cmp(a, b));
        let storage_version = versions
            .iter()
            .find(|v| v.get("storage").and_then(Value::as_bool).unwrap_or(false))
            .and_then(|v| v.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .or_else(|| served.first().cloned())
            .unwrap_or_default();
        let webhook_conversion = s("/spec/conversion/strategy") == "Webhook";
        let status_subresource = versions
            .iter()
            .any(|v| v.pointer("/subresources/status").is_some());
        // A version without a usable schema is served unchecked, as before schemas were
        // read (kube-apiserver would have refused such a CRD; this server accepts it).
        let schemas = versions
            .iter()
            .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
            .filter_map(|v| {
                let name = v.get("name").and_then(Value::as_str)?;
                let schema = v.pointer("/schema/openAPIV3Schema")?;
                let read = ResourceSchema::read(schema).ok()?;
                Some((name.to_string(), Arc::new(read)))
            })
            .collect();
        let strings = |p: &str| -> Vec<String> {
            crd.pointer(p)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let singular = match s("/spec/names/singular") {
            x if x.is_empty() => kind.to_lowercase(),
            x => x,
        };
        let list_kind = match s("/spec/names/listKind") {
            x if x.is_empty() => format!("{kind}List"),
            x => x,
        };
        Ok(ResourceType {
            group,
            versions: served,
            plural,
            singular,
            kind,
            list_kind,
            namespaced,
            short_names: strings("/spec/names/shortNames"),
            categories: strings("/spec/names/categories"),
            status_subresource,
            schemas,
            storage_version,
            webhook_conversion,
        })
    }

    /// The status the API server gives an accepted CRD: names accepted, established.
    pub fn crd_status(&self, crd: &Value) -> Value {
        let storage: Vec<Value> = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(|vs| {
                vs.iter()
                    .filter(|v| v.get("storage").and_then(Value::as_bool).unwrap_or(false))
                    .filter_map(|v| v.get("name").cloned())
                    .collect()
            })
            .unwrap_or_default();
        let mut accepted = json!({
            "plural": self.plural,
            "singular": self.singular,
            "kind": self.kind,
            "listKind": self.list_kind,
        });
        if !self.short_names.is_empty() {
            accepted["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            accepted["categories"] = json!(self.categories);
        }
        // The transition time is fixed so re-accepting an unchanged CRD is a no-op write.
        let time = crd
            .pointer("/metadata/creationTimestamp")
            .cloned()
            .unwrap_or(Value::Null);
        json!({
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": time},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": time},
            ],
            "acceptedNames": accepted,
            "storedVersions": storage,
        })
    }
}

pub fn type_key(group: &str, plural: &str) -> String {
    format!("{group}/{plural}")
}

pub use topograph_api::object::split_api_version;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_defines_a_kind() {
        let crd = json!({
            "metadata": {"name": "machinedeployments.cluster.x-k8s.io"},
            "spec": {
                "group": "cluster.x-k8s.io", "scope": "Namespaced",
                "names": {"plural": "machinedeployments", "kind": "MachineDeployment", "shortNames": ["md"]},
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false},
                    {"name": "v1beta2", "served": true, "storage": true, "subresources": {"status": {}}},
                    {"name": "v1alpha4", "served": false, "storage": false},
                ],
            }
        });
        let t = ResourceType::from_crd(&crd).unwrap();
        assert_eq!(t.versions, vec!["v1beta2", "v1beta1"]);
        assert_eq!(t.singular, "machinedeployment");
        assert_eq!(t.list_kind, "MachineDeploymentList");
        assert!(t.namespaced && t.status_subresource);
        assert_eq!(t.short_names, vec!["md"]);
        assert_eq!(t.crd_status(&crd)["storedVersions"], json!(["v1beta2"]));
    }

    #[test]
    fn crd_name_must_match_names() {
        let crd = json!({"metadata": {"name": "x.y"}, "spec": {"group": "g.io", "scope": "Cluster",
            "names": {"plural": "foos", "kind": "Foo"}, "versions": [{"name": "v1", "served": true, "storage": true}]}});
        let e = ResourceType::from_crd(&crd).unwrap_err();
        assert_eq!(e.code, 422);
    }
}
