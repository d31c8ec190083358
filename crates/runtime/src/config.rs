//! `runtime.cluster.x-k8s.io/v1alpha1` `ExtensionConfig`: where an extension is (URL or
//! Service, CA bundle), which namespaces it serves, its settings, and in its status
//! the handlers discovery found. JSON as Cluster API writes it (`caBundle` is a Go
//! `[]byte`: base64).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooks::FailurePolicy;

/// The API version of ExtensionConfig.
pub const API_VERSION: &str = "runtime.cluster.x-k8s.io/v1alpha1";
/// The kind.
pub const KIND: &str = "ExtensionConfig";

/// An ExtensionConfig.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfig {
    /// `runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// `ExtensionConfig`.
    #[serde(default)]
    pub kind: String,
    /// Object metadata (the name names the handlers).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: ExtensionConfigSpec,
    /// What discovery found.
    #[serde(default)]
    pub status: ExtensionConfigStatus,
}

/// The metadata this crate reads (the name); everything else is kept as it came.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjectMeta {
    /// Name (ExtensionConfigs are cluster-scoped).
    #[serde(default)]
    pub name: String,
    /// Other fields, unchanged.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `ExtensionConfigSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfigSpec {
    /// How to reach the extension.
    #[serde(default)]
    pub client_config: ClientConfig,
    /// Which namespaces' objects the handlers are called for (empty: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Settings passed to every call (a patch's own settings override them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// `ClientConfig`: exactly one of `url` or `service`, and the CA bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfig {
    /// `https://host:port/path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A Kubernetes Service in front of the extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// PEM CA bundle verifying the extension's certificate.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "crate::hooks::base64_bytes"
    )]
    pub ca_bundle: Vec<u8>,
}

/// `ServiceReference`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceReference {
    /// The Service's namespace.
    #[serde(default)]
    pub namespace: String,
    /// The Service's name.
    #[serde(default)]
    pub name: String,
    /// A path prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The port (443 when not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// `metav1.LabelSelector`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must be equal.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Expressions that must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One expression of a [`LabelSelector`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelSelectorRequirement {
    /// The label.
    #[serde(default)]
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[serde(default)]
    pub operator: String,
    /// Values for `In` and `NotIn`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// `ExtensionConfigStatus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtensionConfigStatus {
    /// Handlers found by discovery, named `<handler>.<ExtensionConfig name>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handlers: Vec<ExtensionHandler>,
    /// `cluster.x-k8s.io/v1beta1` conditions (`Discovered`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Value>,
    /// `metav1.Condition`s, under `v1beta2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<Value>,
}

/// A registered handler in an ExtensionConfig's status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionHandler {
    /// `<handler>.<ExtensionConfig name>`.
    #[serde(default)]
    pub name: String,
    /// The hook served.
    #[serde(default)]
    pub request_hook: crate::hooks::GroupVersionHook,
    /// Call timeout (10 s when not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// `Fail` when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
}

impl ExtensionConfig {
    /// An ExtensionConfig for an extension at `url`, verified with `ca_bundle`.
    pub fn for_url(name: &str, url: &str, ca_bundle: Vec<u8>) -> Self {
        ExtensionConfig {
            api_version: API_VERSION.to_string(),
            kind: KIND.to_string(),
            metadata: ObjectMeta {
                name: name.to_string(),
                other: Map::new(),
            },
            spec: ExtensionConfigSpec {
                client_config: ClientConfig {
                    url: Some(url.to_string()),
                    service: None,
                    ca_bundle,
                },
                ..Default::default()
            },
            status: ExtensionConfigStatus::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_cluster_api_json() {
        let config: ExtensionConfig = serde_json::from_value(json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": "k8s-upgrade-with-runtimesdk", "labels": {"a": "b"}},
            "spec": {
                "clientConfig": {
                    "service": {"namespace": "test-extension-system", "name": "test-extension-webhook-service", "port": 443},
                    "caBundle": "LS0tLS1CRUdJTg=="
                },
                "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["default"]}]},
                "settings": {"defaultAllHandlersToBlocking": "true"}
            },
            "status": {"handlers": [{"name": "generate-patches.k8s-upgrade-with-runtimesdk", "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "GeneratePatches"}, "timeoutSeconds": 5, "failurePolicy": "Ignore"}]}
        }))
        .unwrap();
        assert_eq!(config.spec.client_config.ca_bundle, b"-----BEGIN");
        assert_eq!(
            config.status.handlers[0].failure_policy,
            Some(FailurePolicy::Ignore)
        );
        let back = serde_json::to_value(&config).unwrap();
        assert_eq!(back["metadata"]["labels"], json!({"a": "b"}));
        assert_eq!(
            back["spec"]["clientConfig"]["caBundle"],
            json!("LS0tLS1CRUdJTg==")
        );
    }
}
