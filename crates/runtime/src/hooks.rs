//! `hooks.runtime.cluster.x-k8s.io/v1alpha1`: the requests and responses of every hook,
//! field for field as Cluster API's Go types write and read them (JSON names, what is
//! omitted when empty, `[]byte` as base64), so an extension written for Cluster API
//! understands what topograph sends and the other way round.
//!
//! Responses are decoded leniently, as Go's `encoding/json` does: unknown fields are
//! ignored and missing ones take their zero value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::Hook;

/// The API version of every hook request and response.
pub const API_VERSION: &str = "hooks.runtime.cluster.x-k8s.io/v1alpha1";

/// Handlers' default timeout when discovery does not say (`DefaultHandlersTimeoutSeconds`).
pub const DEFAULT_HANDLERS_TIMEOUT_SECONDS: i32 = 10;

/// `status` of a response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResponseStatus {
    /// `Success`.
    Success,
    /// `Failure`.
    Failure,
    /// Anything else, or no status: Go compares with `Failure` only, so this counts as
    /// a success, as it does there.
    #[default]
    #[serde(other, rename = "")]
    Unset,
}

/// `FailurePolicy` of a handler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailurePolicy {
    /// Errors calling the handler are ignored (a default success response is used).
    Ignore,
    /// Errors calling the handler are errors.
    #[default]
    Fail,
}

/// `metav1.TypeMeta`, inlined in every request and response.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeMeta {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `<Hook>Request` or `<Hook>Response`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
}

impl TypeMeta {
    /// The type meta of a hook's request or response kind.
    pub fn of(kind: &str) -> Self {
        TypeMeta {
            api_version: API_VERSION.to_string(),
            kind: kind.to_string(),
        }
    }
}

/// `CommonResponse`: `status` (always written) and `message` (omitted when empty).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommonResponse {
    /// `Success` or `Failure`.
    #[serde(default)]
    pub status: ResponseStatus,
    /// A human-readable description of the status of the call.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// `CommonRetryResponse`: a [`CommonResponse`] and `retryAfterSeconds` (always written).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommonRetryResponse {
    /// Status and message.
    #[serde(flatten)]
    pub common: CommonResponse,
    /// Non-zero: the hook holds the operation and is called again after this long.
    #[serde(default)]
    pub retry_after_seconds: i32,
}

// ---------------------------------------------------------------------------------
// Discovery.

/// `DiscoveryRequest`: type meta only.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoveryRequest {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
}

/// `DiscoveryResponse`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoveryResponse {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Status and message.
    #[serde(flatten)]
    pub common: CommonResponse,
    /// The handlers the extension serves (written even when empty, as `null` in Go for
    /// a nil list; read as empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub handlers: Vec<ExtensionHandler>,
}

/// A handler in a discovery response.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionHandler {
    /// The handler's name (a DNS-1123 label).
    #[serde(default)]
    pub name: String,
    /// The hook it serves.
    #[serde(default)]
    pub request_hook: GroupVersionHook,
    /// Timeout for calls; 10 when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// `Fail` when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
}

/// The hook a handler serves: `apiVersion` (group/version) and `hook` (its name).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupVersionHook {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// `GeneratePatches`, `BeforeClusterCreate`, ...
    #[serde(default)]
    pub hook: String,
}

// ---------------------------------------------------------------------------------
// Topology mutation.

/// A variable's value (`name`, `value`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Value, any JSON.
    #[serde(default)]
    pub value: Value,
}

/// Where a template is used: the holder object and the field referencing the template.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HolderReference {
    /// The holder's apiVersion.
    #[serde(default)]
    pub api_version: String,
    /// The holder's kind.
    #[serde(default)]
    pub kind: String,
    /// The holder's namespace.
    #[serde(default)]
    pub namespace: String,
    /// The holder's name.
    #[serde(default)]
    pub name: String,
    /// The field of the holder that references the template.
    #[serde(default)]
    pub field_path: String,
}

/// `GeneratePatchesRequest`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratePatchesRequest {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Settings (the ExtensionConfig's, overridden by the patch's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Variables every template sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
    /// The templates to generate patches for.
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<GeneratePatchesRequestItem>,
}

/// One template of a [`GeneratePatchesRequest`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesRequestItem {
    /// Correlates the template with the patches generated for it.
    #[serde(default)]
    pub uid: String,
    /// Where the template is used.
    #[serde(default)]
    pub holder_reference: HolderReference,
    /// The template.
    #[serde(default)]
    pub object: Value,
    /// Variables of this template (builtin ones for its holder, overrides).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
}

/// `GeneratePatchesResponse`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratePatchesResponse {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Status and message.
    #[serde(flatten)]
    pub common: CommonResponse,
    /// The patches, applied in this order.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub items: Vec<GeneratePatchesResponseItem>,
}

/// `PatchType`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PatchType {
    /// RFC 6902.
    #[default]
    JSONPatch,
    /// RFC 7386.
    JSONMergePatch,
    /// Anything else (kept so the engine can name it in its error).
    #[serde(untagged)]
    Other(String),
}

/// One generated patch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesResponseItem {
    /// The request item it applies to.
    #[serde(default)]
    pub uid: String,
    /// JSONPatch or JSONMergePatch.
    #[serde(default)]
    pub patch_type: PatchType,
    /// The patch document (a Go `[]byte`: base64 in JSON).
    #[serde(default, with = "base64_bytes")]
    pub patch: Vec<u8>,
}

/// `ValidateTopologyRequest`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ValidateTopologyRequest {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Variables every template sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
    /// The patched templates.
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<ValidateTopologyRequestItem>,
}

/// One template of a [`ValidateTopologyRequest`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateTopologyRequestItem {
    /// Where the template is used.
    #[serde(default)]
    pub holder_reference: HolderReference,
    /// The template, patched.
    #[serde(default)]
    pub object: Value,
    /// Variables of this template.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
}

/// `ValidateTopologyResponse`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidateTopologyResponse {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Status and message.
    #[serde(flatten)]
    pub common: CommonResponse,
}

/// `DiscoverVariablesRequest`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoverVariablesRequest {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// `DiscoverVariablesResponse`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiscoverVariablesResponse {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Status and message.
    #[serde(flatten)]
    pub common: CommonResponse,
    /// Variable definitions, as `cluster.x-k8s.io/v1beta1` `ClusterClassVariable`s.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub variables: Vec<ClusterClassVariable>,
}

/// A `cluster.x-k8s.io/v1beta1` `ClusterClassVariable` as the DiscoverVariables hook
/// carries it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterClassVariable {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Whether Clusters must set it (always written, as Go writes a `bool`).
    #[serde(default)]
    pub required: bool,
    /// Deprecated metadata (`labels`, `annotations`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// `{openAPIV3Schema: ...}`.
    #[serde(default)]
    pub schema: VariableSchema,
}

/// `VariableSchema`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VariableSchema {
    /// The OpenAPI v3 schema.
    #[serde(rename = "openAPIV3Schema", default)]
    pub open_api_v3_schema: Value,
}

// ---------------------------------------------------------------------------------
// Lifecycle hooks.

/// `UpgradeStepInfo`: one version step of an upgrade plan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradeStepInfo {
    /// The Kubernetes version of the step.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

macro_rules! lifecycle_request {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty = $json:literal $(, $skip:literal)?;)* }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            /// apiVersion and kind.
            #[serde(flatten)]
            pub type_meta: TypeMeta,
            /// Settings.
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub settings: BTreeMap<String, String>,
            /// The Cluster the hook is called for, as a `cluster.x-k8s.io/v1beta1` object.
            #[serde(default)]
            pub cluster: Value,
            $(
                $(#[$fdoc])*
                #[serde(rename = $json, default $(, skip_serializing_if = $skip)?)]
                pub $field: $ty,
            )*
        }
    };
}

lifecycle_request!(
    /// `BeforeClusterCreateRequest`.
    BeforeClusterCreateRequest {}
);
lifecycle_request!(
    /// `AfterControlPlaneInitializedRequest`.
    AfterControlPlaneInitializedRequest {}
);
lifecycle_request!(
    /// `BeforeClusterUpgradeRequest`.
    BeforeClusterUpgradeRequest {
        /// The Cluster's current version.
        from_kubernetes_version: String = "fromKubernetesVersion";
        /// The version it upgrades to.
        to_kubernetes_version: String = "toKubernetesVersion";
        /// Control plane upgrade steps.
        control_plane_upgrades: Vec<UpgradeStepInfo> = "controlPlaneUpgrades", "Vec::is_empty";
        /// Workers' upgrade steps.
        workers_upgrades: Vec<UpgradeStepInfo> = "workersUpgrades", "Vec::is_empty";
    }
);
lifecycle_request!(
    /// `BeforeControlPlaneUpgradeRequest`.
    BeforeControlPlaneUpgradeRequest {
        /// The control plane's version before the step.
        from_kubernetes_version: String = "fromKubernetesVersion";
        /// The step's version.
        to_kubernetes_version: String = "toKubernetesVersion";
        /// Remaining control plane steps.
        control_plane_upgrades: Vec<UpgradeStepInfo> = "controlPlaneUpgrades", "Vec::is_empty";
        /// Remaining workers' steps.
        workers_upgrades: Vec<UpgradeStepInfo> = "workersUpgrades", "Vec::is_empty";
    }
);
lifecycle_request!(
    /// `AfterControlPlaneUpgradeRequest`.
    AfterControlPlaneUpgradeRequest {
        /// The control plane's version after the step.
        kubernetes_version: String = "kubernetesVersion";
        /// Remaining control plane steps.
        control_plane_upgrades: Vec<UpgradeStepInfo> = "controlPlaneUpgrades", "Vec::is_empty";
        /// Remaining workers' steps.
        workers_upgrades: Vec<UpgradeStepInfo> = "workersUpgrades", "Vec::is_empty";
    }
);
lifecycle_request!(
    /// `BeforeWorkersUpgradeRequest`.
    BeforeWorkersUpgradeRequest {
        /// The workers' version before the step.
        from_kubernetes_version: String = "fromKubernetesVersion";
        /// The step's version.
        to_kubernetes_version: String = "toKubernetesVersion";
        /// Remaining control plane steps.
        control_plane_upgrades: Vec<UpgradeStepInfo> = "controlPlaneUpgrades", "Vec::is_empty";
        /// Remaining workers' steps.
        workers_upgrades: Vec<UpgradeStepInfo> = "workersUpgrades", "Vec::is_empty";
    }
);
lifecycle_request!(
    /// `AfterWorkersUpgradeRequest`.
    AfterWorkersUpgradeRequest {
        /// The workers' version after the step.
        kubernetes_version: String = "kubernetesVersion";
        /// Remaining control plane steps.
        control_plane_upgrades: Vec<UpgradeStepInfo> = "controlPlaneUpgrades", "Vec::is_empty";
        /// Remaining workers' steps.
        workers_upgrades: Vec<UpgradeStepInfo> = "workersUpgrades", "Vec::is_empty";
    }
);
lifecycle_request!(
    /// `AfterClusterUpgradeRequest`.
    AfterClusterUpgradeRequest {
        /// The version the Cluster upgraded to.
        kubernetes_version: String = "kubernetesVersion";
    }
);
lifecycle_request!(
    /// `BeforeClusterDeleteRequest`.
    BeforeClusterDeleteRequest {}
);

lifecycle_request!(
    /// `GenerateUpgradePlanRequest` (Cluster API main's chained upgrades).
    GenerateUpgradePlanRequest {
        /// The control plane's current version.
        from_control_plane_kubernetes_version: String = "fromControlPlaneKubernetesVersion";
        /// The lowest current version of the workers.
        from_workers_kubernetes_version: String = "fromWorkersKubernetesVersion", "String::is_empty";
        /// The version the Cluster upgrades to.
        to_kubernetes_version: String = "toKubernetesVersion";
    }
);

/// `GenerateUpgradePlanResponse`: the steps of the control plane and, optionally, of
/// the workers (left empty, they are derived from the control plane's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerateUpgradePlanResponse {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Status and message.
    #[serde(flatten)]
    pub common: CommonResponse,
    /// The control plane's steps, ending at the target version.
    #[serde(
        rename = "controlPlaneUpgrades",
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub control_plane_upgrades: Vec<UpgradeStepInfo>,
    /// The workers' steps.
    #[serde(
        rename = "workersUpgrades",
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub workers_upgrades: Vec<UpgradeStepInfo>,
}

macro_rules! retry_response {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct $name {
            /// apiVersion and kind.
            #[serde(flatten)]
            pub type_meta: TypeMeta,
            /// Status, message and retryAfterSeconds.
            #[serde(flatten)]
            pub retry: CommonRetryResponse,
        }
    };
}

retry_response!(
    /// `BeforeClusterCreateResponse`.
    BeforeClusterCreateResponse
);
retry_response!(
    /// `BeforeClusterUpgradeResponse`.
    BeforeClusterUpgradeResponse
);
retry_response!(
    /// `BeforeControlPlaneUpgradeResponse`.
    BeforeControlPlaneUpgradeResponse
);
retry_response!(
    /// `AfterControlPlaneUpgradeResponse`.
    AfterControlPlaneUpgradeResponse
);
retry_response!(
    /// `BeforeWorkersUpgradeResponse`.
    BeforeWorkersUpgradeResponse
);
retry_response!(
    /// `AfterWorkersUpgradeResponse`.
    AfterWorkersUpgradeResponse
);
retry_response!(
    /// `AfterClusterUpgradeResponse` (a retry response since Cluster API 1.11).
    AfterClusterUpgradeResponse
);
retry_response!(
    /// `BeforeClusterDeleteResponse`.
    BeforeClusterDeleteResponse
);

/// `AfterControlPlaneInitializedResponse`: status and message only.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AfterControlPlaneInitializedResponse {
    /// apiVersion and kind.
    #[serde(flatten)]
    pub type_meta: TypeMeta,
    /// Status and message.
    #[serde(flatten)]
    pub common: CommonResponse,
}

// ---------------------------------------------------------------------------------
// What the client needs to know of every request and response.

/// A hook request: which hook it is for, its settings, its type meta.
pub trait HookRequest: Serialize + Clone + Send + Sync + 'static {
    /// The hook.
    const HOOK: Hook;
    /// The response the hook answers with.
    type Response: HookResponse;
    /// The settings to send.
    fn settings_mut(&mut self) -> &mut BTreeMap<String, String>;
    /// The type meta.
    fn type_meta_mut(&mut self) -> &mut TypeMeta;
}

/// A hook response: its status and message, and (for blocking hooks) retryAfterSeconds.
pub trait HookResponse:
    for<'de> Deserialize<'de> + Serialize + Default + Clone + Send + 'static
{
    /// The type meta read.
    fn type_meta(&self) -> &TypeMeta;
    /// Status and message.
    fn common(&self) -> &CommonResponse;
    /// Status and message, to change.
    fn common_mut(&mut self) -> &mut CommonResponse;
    /// `retryAfterSeconds`, for the hooks that have it.
    fn retry_after_seconds(&self) -> Option<i32> {
        None
    }
    /// Sets `retryAfterSeconds`, for the hooks that have it.
    fn set_retry_after_seconds(&mut self, _seconds: i32) {}
}

macro_rules! request_impl {
    ($req:ident, $hook:ident, $resp:ident) => {
        impl HookRequest for $req {
            const HOOK: Hook = Hook::$hook;
            type Response = $resp;
            fn settings_mut(&mut self) -> &mut BTreeMap<String, String> {
                &mut self.settings
            }
            fn type_meta_mut(&mut self) -> &mut TypeMeta {
                &mut self.type_meta
            }
        }
    };
}

macro_rules! common_response_impl {
    ($resp:ident) => {
        impl HookResponse for $resp {
            fn type_meta(&self) -> &TypeMeta {
                &self.type_meta
            }
            fn common(&self) -> &CommonResponse {
                &self.common
            }
            fn common_mut(&mut self) -> &mut CommonResponse {
                &mut self.common
            }
        }
    };
}

macro_rules! retry_response_impl {
    ($resp:ident) => {
        impl HookResponse for $resp {
            fn type_meta(&self) -> &TypeMeta {
                &self.type_meta
            }
            fn common(&self) -> &CommonResponse {
                &self.retry.common
            }
            fn common_mut(&mut self) -> &mut CommonResponse {
                &mut self.retry.common
            }
            fn retry_after_seconds(&self) -> Option<i32> {
                Some(self.retry.retry_after_seconds)
            }
            fn set_retry_after_seconds(&mut self, seconds: i32) {
                self.retry.retry_after_seconds = seconds;
            }
        }
    };
}

request_impl!(
    GeneratePatchesRequest,
    GeneratePatches,
    GeneratePatchesResponse
);
request_impl!(
    ValidateTopologyRequest,
    ValidateTopology,
    ValidateTopologyResponse
);
request_impl!(
    DiscoverVariablesRequest,
    DiscoverVariables,
    DiscoverVariablesResponse
);
request_impl!(
    BeforeClusterCreateRequest,
    BeforeClusterCreate,
    BeforeClusterCreateResponse
);
request_impl!(
    AfterControlPlaneInitializedRequest,
    AfterControlPlaneInitialized,
    AfterControlPlaneInitializedResponse
);
request_impl!(
    BeforeClusterUpgradeRequest,
    BeforeClusterUpgrade,
    BeforeClusterUpgradeResponse
);
request_impl!(
    BeforeControlPlaneUpgradeRequest,
    BeforeControlPlaneUpgrade,
    BeforeControlPlaneUpgradeResponse
);
request_impl!(
    AfterControlPlaneUpgradeRequest,
    AfterControlPlaneUpgrade,
    AfterControlPlaneUpgradeResponse
);
request_impl!(
    BeforeWorkersUpgradeRequest,
    BeforeWorkersUpgrade,
    BeforeWorkersUpgradeResponse
);
request_impl!(
    AfterWorkersUpgradeRequest,
    AfterWorkersUpgrade,
    AfterWorkersUpgradeResponse
);
request_impl!(
    AfterClusterUpgradeRequest,
    AfterClusterUpgrade,
    AfterClusterUpgradeResponse
);
request_impl!(
    BeforeClusterDeleteRequest,
    BeforeClusterDelete,
    BeforeClusterDeleteResponse
);
request_impl!(
    GenerateUpgradePlanRequest,
    GenerateUpgradePlan,
    GenerateUpgradePlanResponse
);

common_response_impl!(DiscoveryResponse);
common_response_impl!(GeneratePatchesResponse);
common_response_impl!(ValidateTopologyResponse);
common_response_impl!(DiscoverVariablesResponse);
common_response_impl!(GenerateUpgradePlanResponse);
common_response_impl!(AfterControlPlaneInitializedResponse);
retry_response_impl!(BeforeClusterCreateResponse);
retry_response_impl!(BeforeClusterUpgradeResponse);
retry_response_impl!(BeforeControlPlaneUpgradeResponse);
retry_response_impl!(AfterControlPlaneUpgradeResponse);
retry_response_impl!(BeforeWorkersUpgradeResponse);
retry_response_impl!(AfterWorkersUpgradeResponse);
retry_response_impl!(AfterClusterUpgradeResponse);
retry_response_impl!(BeforeClusterDeleteResponse);

/// Go writes a nil slice as `null`; read it as empty.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// The Cluster as Cluster API puts it in hook requests (its `cleanupCluster`): without
/// status, managed fields, the last-applied configuration and conversion data.
pub fn cleanup_cluster(cluster: &Value) -> Value {
    let mut cluster = cluster.clone();
    if let Some(object) = cluster.as_object_mut() {
        object.remove("status");
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("managedFields");
            if let Some(annotations) = metadata
                .get_mut("annotations")
                .and_then(Value::as_object_mut)
            {
                annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
                annotations.remove("cluster.x-k8s.io/conversion-data");
            }
        }
    }
    cluster
}

/// Go's `[]byte` in JSON: standard base64 with padding, `null` for nil.
pub mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes base64.
    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// Reads base64 (or `null`).
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let Some(text) = Option::<String>::deserialize(deserializer)? else {
            return Ok(Vec::new());
        };
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("illegal base64 data: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generate_patches_response_reads_go_json() {
        let text = r#"{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"GeneratePatchesResponse","status":"Success","items":[{"uid":"1","patchType":"JSONPatch","patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMiLCJ2YWx1ZSI6e319XQ=="}]}"#;
        let response: GeneratePatchesResponse = serde_json::from_str(text).unwrap();
        assert_eq!(response.common.status, ResponseStatus::Success);
        assert_eq!(
            response.items[0].patch,
            br#"[{"op":"add","path":"/spec","value":{}}]"#
        );
        assert_eq!(
            serde_json::to_value(&response).unwrap()["items"][0]["patch"],
            json!("W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMiLCJ2YWx1ZSI6e319XQ==")
        );
    }

    #[test]
    fn retry_response_writes_every_required_field() {
        let response = BeforeClusterUpgradeResponse {
            type_meta: TypeMeta::of("BeforeClusterUpgradeResponse"),
            retry: CommonRetryResponse {
                common: CommonResponse {
                    status: ResponseStatus::Success,
                    message: String::new(),
                },
                retry_after_seconds: 0,
            },
        };
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({
                "apiVersion": API_VERSION,
                "kind": "BeforeClusterUpgradeResponse",
                "status": "Success",
                "retryAfterSeconds": 0
            })
        );
    }

    #[test]
    fn missing_or_unknown_status_is_not_a_failure() {
        let r: ValidateTopologyResponse = serde_json::from_str("{}").unwrap();
        assert_eq!(r.common.status, ResponseStatus::Unset);
        let r: ValidateTopologyResponse = serde_json::from_str(r#"{"status":"Maybe"}"#).unwrap();
        assert_eq!(r.common.status, ResponseStatus::Unset);
    }

    #[test]
    fn lifecycle_request_shape() {
        let request = BeforeClusterUpgradeRequest {
            type_meta: TypeMeta::of("BeforeClusterUpgradeRequest"),
            cluster: json!({"kind": "Cluster"}),
            from_kubernetes_version: "v1.30.0".into(),
            to_kubernetes_version: "v1.31.0".into(),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({
                "apiVersion": API_VERSION,
                "kind": "BeforeClusterUpgradeRequest",
                "cluster": {"kind": "Cluster"},
                "fromKubernetesVersion": "v1.30.0",
                "toKubernetesVersion": "v1.31.0"
            })
        );
    }

    #[test]
    fn hook_requests_carry_the_cluster_without_status_or_bookkeeping() {
        let c = json!({
            "metadata": {"name": "c", "managedFields": [{}], "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
                "cluster.x-k8s.io/conversion-data": "{}",
                "keep": "me"}},
            "spec": {"topology": {}},
            "status": {"phase": "Provisioned"}
        });
        assert_eq!(
            cleanup_cluster(&c),
            json!({"metadata": {"name": "c", "annotations": {"keep": "me"}}, "spec": {"topology": {}}})
        );
    }
}
