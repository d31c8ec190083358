//! CustomResourceDefinitions for the kinds a topology uses.
//!
//! A real management cluster gets its CRDs from Cluster API and the providers; the
//! in-memory API server and the embedded mode need them too. Cluster API's own kinds
//! get structural schemas per served version ([`schema`]: every field name, type,
//! `required` list, enum, list type and the few defaults Cluster API's CRDs declare), so
//! an API server that validates custom resources (`topograph-kube`) refuses a field a
//! real management cluster would refuse; and Cluster API's `additionalPrinterColumns`
//! per version, so `kubectl get clusters` prints the columns it prints against Cluster
//! API. Providers' kinds accept any content (`x-kubernetes-preserve-unknown-fields`):
//! their schemas are the providers' business.
//! Runtime SDK's `ExtensionConfig` comes with them, as Cluster API's core provider
//! installs it.
//! Every CRD has the status subresource and carries Cluster API's contract label
//! (`cluster.x-k8s.io/<contract>: <versions>`), which is how the topology finds which
//! contract a provider kind implements.

pub mod schema;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use topograph_api::contract::{Contract, Declared};
use topograph_api::object::{GroupVersion, ObjectExt};

/// Cluster API's own kinds the topology reads and writes, all `cluster.x-k8s.io/v1beta1`.
pub const CLUSTER_API_KINDS: &[&str] = &[
    "Cluster",
    "ClusterClass",
    "MachineDeployment",
    "MachineSet",
    "Machine",
    "MachineHealthCheck",
    "MachinePool",
];

/// The plural resource name Kubernetes tooling derives for a kind.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// A CRD serving `kind` of `group` in `versions` (the first is the storage version),
/// declaring that they implement the v1beta1 contract.
pub fn crd(group: &str, kind: &str, versions: &[&str]) -> Value {
    crd_declaring(group, kind, versions, Contract::V1Beta1)
}

/// [`crd`], declaring that `versions` implement `contract`.
pub fn crd_declaring(group: &str, kind: &str, versions: &[&str], contract: Contract) -> Value {
    let plural = plural(kind);
    let served: Vec<Value> = versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            json!({
                "name": v,
                "served": true,
                "storage": i == 0,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}}
            })
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("{plural}.{group}"),
            "labels": Declared::default().with(contract, versions).labels()
        },
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "listKind": format!("{kind}List"),
                "plural": plural,
                "singular": kind.to_lowercase()
            },
            "versions": served
        }
    })
}

/// Runtime SDK's `ExtensionConfig` (`runtime.cluster.x-k8s.io/v1alpha1`, cluster-scoped),
/// which Cluster API's core provider installs beside its own kinds. Its content is
/// read and checked by `topograph-runtime`; the server keeps it as given.
pub fn extension_config() -> Value {
    let mut crd = crd("runtime.cluster.x-k8s.io", "ExtensionConfig", &["v1alpha1"]);
    crd["spec"]["scope"] = json!("Cluster");
    // Not a provider kind: it implements no contract.
    if let Some(metadata) = crd["metadata"].as_object_mut() {
        metadata.remove("labels");
    }
    crd
}

/// topograph's own kinds (decision 0030): `RolloutPolicy` (a class's rollout, its
/// state in status) and `ClusterClassRevision` (a class and its templates as they were),
/// both `topograph.io/v1alpha1`, namespaced. Neither implements a provider contract.
pub fn topograph() -> Vec<Value> {
    let mut policy = crd("topograph.io", "RolloutPolicy", &["v1alpha1"]);
    policy["spec"]["versions"][0]["schema"] = json!({"openAPIV3Schema": policy_schema()});
    policy["spec"]["versions"][0]["additionalPrinterColumns"] = json!([
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Stable", "type": "string", "jsonPath": ".status.stableRevision"},
        {"name": "Target", "type": "string", "jsonPath": ".status.targetRevision"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]);
    let mut revision = crd("topograph.io", "ClusterClassRevision", &["v1alpha1"]);
    revision["spec"]["versions"][0]["additionalPrinterColumns"] = json!([
        {"name": "ClusterClass", "type": "string", "jsonPath": ".spec.clusterClass"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]);
    let mut crds = vec![policy, revision];
    for crd in &mut crds {
        if let Some(metadata) = crd["metadata"].as_object_mut() {
            metadata.remove("labels");
        }
    }
    crds
}

/// The structural schema of `RolloutPolicy`: types and bounds a real API server checks
/// (the rules across fields are the gateway's admission and the driver's); the status
/// is the driver's, kept as written.
fn policy_schema() -> Value {
    let duration = json!({"type": "string", "description": "A Go duration (30s, 10m)."});
    json!({
        "type": "object",
        "description": "How changes of the ClusterClass of the same name and namespace reach its Clusters: in waves.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["waves"],
                "properties": {
                    "waves": {
                        "type": "array",
                        "minItems": 1,
                        "description": "In order; the last one has percent 100 and no selector.",
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string", "minLength": 1, "maxLength": 63},
                                "selector": {
                                    "type": "object",
                                    "description": "Only Clusters with these labels (matchLabels, matchExpressions).",
                                    "x-kubernetes-preserve-unknown-fields": true
                                },
                                "percent": {
                                    "type": "integer", "minimum": 1, "maximum": 100,
                                    "description": "The share of the class's Clusters moved once this wave is done, over all waves so far."
                                }
                            }
                        }
                    },
                    "maxRolling": {"type": "integer", "minimum": 1, "description": "Moved Clusters not yet past their health gate, at most (default 1)."},
                    "soak": duration,
                    "healthDeadline": duration,
                    "paused": {"type": "boolean"},
                    "abortRevision": {"type": "string", "description": "The target revision to abort: the moved Clusters go back to the stable revision."},
                    "resumeAt": {"type": "string", "format": "date-time", "description": "Later than a halt: the rollout goes on."}
                }
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    })
}

/// CRDs for Cluster API's kinds as today's Cluster API installs them: the kinds the
/// topology reads and writes are served in `v1beta2` (the storage version) and
/// `v1beta1`, converted by Cluster API's conversion webhook (which `topograph-kube`
/// plays); Machines and MachineSets, which the topology only reads, in `v1beta1`.
pub fn cluster_api() -> Vec<Value> {
    CLUSTER_API_KINDS
        .iter()
        .map(|kind| {
            if topograph_api::convert::KINDS.contains(kind) {
                with_webhook_conversion(cluster_api_crd(kind, &["v1beta2", "v1beta1"]))
            } else {
                cluster_api_crd(kind, &["v1beta1"])
            }
        })
        .chain([extension_config()])
        .collect()
}

/// CRDs for Cluster API's kinds as Cluster API v1.10 and earlier install them: `v1beta1`
/// alone.
pub fn cluster_api_v1beta1() -> Vec<Value> {
    CLUSTER_API_KINDS
        .iter()
        .map(|kind| cluster_api_crd(kind, &["v1beta1"]))
        .chain([extension_config()])
        .collect()
}

/// [`crd`] for one of Cluster API's kinds, each version with its structural schema and
/// Cluster API's printer columns.
fn cluster_api_crd(kind: &str, versions: &[&str]) -> Value {
    let mut crd = crd("cluster.x-k8s.io", kind, versions);
    if let Some(served) = crd
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    {
        for version in served {
            let name = version["name"].as_str().unwrap_or_default().to_string();
            if let Some(schema) = schema::open_api_v3_schema(kind, &name) {
                version["schema"] = json!({"openAPIV3Schema": schema});
            }
            let columns = schema::printer_columns(kind, &name);
            if !columns.is_empty() {
                version["additionalPrinterColumns"] = Value::Array(columns.to_vec());
            }
        }
    }
    crd
}

/// `crd` converted between its versions by Cluster API's conversion webhook.
fn with_webhook_conversion(mut crd: Value) -> Value {
    crd["spec"]["conversion"] = json!({
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1", "v1beta1"],
            "clientConfig": {"service": {
                "namespace": "capi-system",
                "name": "capi-webhook-service",
                "path": "/convert"
            }}
        }
    });
    crd
}

/// CRDs for every provider kind `objects` use: each object's own kind and, for a
/// template, the kind it stamps out (`DockerClusterTemplate` also needs `DockerCluster`),
/// each declaring the v1beta1 contract.
pub fn for_objects<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Vec<Value> {
    for_objects_declaring(objects, Contract::V1Beta1)
}

/// [`for_objects`], every kind declaring `contract`: providers of Cluster API v1.11 and
/// later declare the v1beta2 contract.
pub fn for_objects_declaring<'a>(
    objects: impl IntoIterator<Item = &'a Value>,
    contract: Contract,
) -> Vec<Value> {
    let mut kinds = BTreeSet::new();
    for object in objects {
        let Ok(gv) = GroupVersion::parse(object.api_version()) else {
            continue;
        };
        if gv.group.is_empty() || gv.group == "cluster.x-k8s.io" || object.kind().is_empty() {
            continue;
        }
        let kind = object.kind().to_string();
        if let Some(stamped) = kind.strip_suffix("Template")
            && !stamped.is_empty()
        {
            kinds.insert((gv.group.clone(), gv.version.clone(), stamped.to_string()));
        }
        kinds.insert((gv.group, gv.version, kind));
    }
    kinds
        .into_iter()
        .map(|(group, version, kind)| crd_declaring(&group, &kind, &[version.as_str()], contract))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_kubernetes_conventions() {
        for (kind, want) in [
            ("ClusterClass", "clusterclasses"),
            ("MachineDeployment", "machinedeployments"),
            ("KubeadmControlPlane", "kubeadmcontrolplanes"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
        ] {
            assert_eq!(plural(kind), want);
        }
    }

    #[test]
    fn crds_declare_the_contract_asked_for() {
        let objects = [
            json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate", "metadata": {"name": "t"}}),
        ];
        for (crds, label) in [
            (for_objects(&objects), "cluster.x-k8s.io/v1beta1"),
            (
                for_objects_declaring(&objects, Contract::V1Beta2),
                "cluster.x-k8s.io/v1beta2",
            ),
        ] {
            for crd in &crds {
                assert_eq!(
                    crd.labels(),
                    [(label.to_string(), "v1beta2".to_string())].into(),
                    "{}",
                    crd.name()
                );
            }
        }
    }

    #[test]
    fn templates_bring_the_kind_they_stamp_out() {
        let objects = [
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate", "metadata": {"name": "t"}}),
        ];
        let names: Vec<String> = for_objects(&objects)
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "dockerclusters.infrastructure.cluster.x-k8s.io",
                "dockerclustertemplates.infrastructure.cluster.x-k8s.io"
            ]
        );
    }
}
