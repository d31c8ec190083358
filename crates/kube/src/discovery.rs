//! Discovery documents (`/version`, `/api`, `/apis`, group versions) built from the
//! registered kinds, and the minimal OpenAPI document kubectl's client-side validation
//! asks for.

use crate::types::ResourceType;
use crate::util::version_priority_cmp;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0-topograph",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

pub fn core_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"]})
}

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The APIResourceList of one group version; None when nothing is served there.
pub fn resource_list(types: &[Arc<ResourceType>], group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for t in types
        .iter()
        .filter(|t| t.group == group && t.serves(version))
    {
        let mut r = json!({
            "name": t.plural,
            "singularName": t.singular,
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": VERBS,
        });
        if !t.short_names.is_empty() {
            r["shortNames"] = json!(t.short_names);
        }
        if !t.categories.is_empty() {
            r["categories"] = json!(t.categories);
        }
        resources.push(r);
        if t.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", t.plural),
                "singularName": "",
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    if resources.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

/// The APIGroup entries of all named groups, versions by Kubernetes' priority.
fn groups(types: &[Arc<ResourceType>]) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in types.iter().filter(|t| !t.group.is_empty()) {
        let versions = groups.entry(t.group.clone()).or_default();
        for v in &t.versions {
            if !versions.contains(v) {
                versions.push(v.clone());
            }
        }
    }
    for versions in groups.values_mut() {
        versions.sort_by(|a, b| version_priority_cmp(a, b));
    }
    groups
}

fn group_entry(name: &str, versions: &[String]) -> Value {
    let entries: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": entries,
        "preferredVersion": entries.first().cloned().unwrap_or(Value::Null),
    })
}

pub fn group_list(types: &[Arc<ResourceType>]) -> Value {
    let groups: Vec<Value> = groups(types)
        .iter()
        .map(|(n, v)| group_entry(n, v))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(types: &[Arc<ResourceType>], name: &str) -> Option<Value> {
    let groups = groups(types);
    let versions = groups.get(name)?;
    let mut g = group_entry(name, versions);
    g["kind"] = json!("APIGroup");
    g["apiVersion"] = json!("v1");
    Some(g)
}

/// The media type of aggregated discovery (`apidiscovery.k8s.io/v2`).
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether a discovery request accepts the aggregated form (current kubectl and
/// `kube::Discovery::run_aggregated` ask for it; older clients get the legacy lists).
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let params: Vec<&str> = part.split(';').map(str::trim).collect();
        params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// Aggregated discovery of the core group (`core`) or of all named groups: every
/// version with its resources in one document, versions by preference.
pub fn aggregated(types: &[Arc<ResourceType>], core: bool) -> Value {
    let mut groups = groups(types);
    if core {
        groups = BTreeMap::from([(String::new(), vec!["v1".to_string()])]);
    }
    let items: Vec<Value> = groups
        .iter()
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let resources: Vec<Value> = types
                        .iter()
                        .filter(|t| &t.group == group && t.serves(version))
                        .map(|t| {
                            let kind = json!({"group": group, "version": version, "kind": t.kind});
                            let mut r = json!({
                                "resource": t.plural,
                                "responseKind": kind,
                                "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
                                "singularResource": t.singular,
                                "verbs": VERBS,
                            });
                            if !t.short_names.is_empty() {
                                r["shortNames"] = json!(t.short_names);
                            }
                            if !t.categories.is_empty() {
                                r["categories"] = json!(t.categories);
                            }
                            if t.status_subresource {
                                r["subresources"] = json!([{"subresource": "status", "responseKind": kind, "verbs": ["get", "patch", "update"]}]);
                            }
                            r
                        })
                        .collect();
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let metadata = if group.is_empty() { json!({}) } else { json!({"name": group}) };
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}

/// An empty Swagger 2.0 document. kubectl validates client-side against it and skips
/// kinds it does not describe, which is all of them: the server keeps no schemas.
pub fn openapi_v2_json() -> Value {
    json!({"swagger": "2.0", "info": {"title": "topograph-kube", "version": "v0.0.0"}, "paths": {}, "definitions": {}})
}

/// The same document as the protobuf (gnostic `openapi_v2.Document`) that kubectl asks
/// for first: swagger = 1, info = 2 (title = 1, version = 2), paths = 8, definitions = 9.
pub fn openapi_v2_protobuf() -> Vec<u8> {
    fn field(out: &mut Vec<u8>, number: u8, bytes: &[u8]) {
        out.push((number << 3) | 2);
        out.push(bytes.len() as u8);
        out.extend_from_slice(bytes);
    }
    let mut info = Vec::new();
    field(&mut info, 1, b"topograph-kube");
    field(&mut info, 2, b"v0.0.0");
    let mut doc = Vec::new();
    field(&mut doc, 1, b"2.0");
    field(&mut doc, 2, &info);
    field(&mut doc, 8, &[]);
    field(&mut doc, 9, &[]);
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_list_includes_crd_groups_with_preferred_versions() {
        let mut types: Vec<Arc<ResourceType>> =
            ResourceType::builtins().into_iter().map(Arc::new).collect();
        let mut md = ResourceType::builtins()[1].clone();
        md.group = "cluster.x-k8s.io".into();
        md.versions = vec!["v1beta2".into(), "v1beta1".into()];
        md.plural = "machinedeployments".into();
        md.status_subresource = true;
        types.push(Arc::new(md));
        let list = group_list(&types);
        let names: Vec<&str> = list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert_eq!(
            names,
            vec!["apiextensions.k8s.io", "cluster.x-k8s.io", "events.k8s.io"]
        );
        assert_eq!(list["groups"][1]["preferredVersion"]["version"], "v1beta2");
        let rl = resource_list(&types, "cluster.x-k8s.io", "v1beta1").unwrap();
        assert_eq!(rl["resources"][1]["name"], "machinedeployments/status");
        assert!(resource_list(&types, "cluster.x-k8s.io", "v1").is_none());
        assert_eq!(openapi_v2_protobuf()[..5], [0x0a, 3, b'2', b'.', b'0']);
        let agg = aggregated(&types, false);
        assert_eq!(agg["items"][1]["metadata"]["name"], "cluster.x-k8s.io");
        assert_eq!(agg["items"][1]["versions"][0]["version"], "v1beta2");
        assert_eq!(
            agg["items"][1]["versions"][0]["resources"][0]["subresources"][0]["subresource"],
            "status"
        );
        assert_eq!(
            aggregated(&types, true)["items"][0]["versions"][0]["resources"]
                .as_array()
                .map(Vec::len),
            Some(4)
        );
        assert!(wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated("application/json"));
    }
}
