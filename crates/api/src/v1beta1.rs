//! The `cluster.x-k8s.io/v1beta1` wire format of ClusterClass and Cluster.
//!
//! These types mirror the documents users write, field for field (Cluster API v1.10's
//! v1beta1, which the seeds' proposal describes). Unknown fields are refused, the way
//! the Kubernetes API server refuses them under strict field validation, so a typo is
//! an error with its path rather than a silently ignored setting. The engine never
//! sees these types: [`crate::model`] converts them into the version-neutral model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::duration::Duration;

/// The API version these types read.
pub const API_VERSION: &str = "cluster.x-k8s.io/v1beta1";

/// A string map as Go decodes one: a `null` value is the empty string (a YAML label
/// written `key:` with nothing after it).
pub(crate) fn string_map<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    let map: Option<BTreeMap<String, Option<String>>> = Option::deserialize(deserializer)?;
    Ok(map.map(|m| {
        m.into_iter()
            .map(|(k, v)| (k, v.unwrap_or_default()))
            .collect()
    }))
}

/// Kubernetes object metadata; only the fields the engine reads are typed, the rest
/// (timestamps, managed fields, ...) are accepted and ignored.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `metadata.name`.
    #[serde(default)]
    pub name: String,
    /// `metadata.namespace`.
    #[serde(default)]
    pub namespace: String,
    /// `metadata.uid`.
    #[serde(default)]
    pub uid: String,
    /// `metadata.generation`.
    #[serde(default)]
    pub generation: Option<i64>,
    /// `metadata.labels`.
    #[serde(default, deserialize_with = "string_map")]
    pub labels: Option<BTreeMap<String, String>>,
    /// `metadata.annotations`.
    #[serde(default, deserialize_with = "string_map")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// Labels and annotations, as the `metadata` of classes and topologies.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelsAndAnnotations {
    /// Labels to apply.
    #[serde(default, deserialize_with = "string_map")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations to apply.
    #[serde(default, deserialize_with = "string_map")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// `corev1.ObjectReference`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectReference {
    /// API version of the referent.
    #[serde(default)]
    pub api_version: String,
    /// Kind of the referent.
    #[serde(default)]
    pub kind: String,
    /// Namespace of the referent.
    #[serde(default)]
    pub namespace: String,
    /// Name of the referent.
    #[serde(default)]
    pub name: String,
    /// UID of the referent.
    #[serde(default)]
    pub uid: String,
    /// Resource version of the referent.
    #[serde(default)]
    pub resource_version: String,
    /// A field within the referent.
    #[serde(default)]
    pub field_path: String,
}

/// A reference to a template.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalObjectTemplate {
    /// The template.
    #[serde(default)]
    pub r#ref: Option<ObjectReference>,
}

/// A Go-template naming strategy.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NamingStrategy {
    /// The name template.
    #[serde(default)]
    pub template: Option<String>,
}

/// A node or machine condition that makes a machine unhealthy after `timeout`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnhealthyCondition {
    /// Condition type.
    pub r#type: String,
    /// Condition status.
    pub status: String,
    /// How long the condition must hold.
    pub timeout: Duration,
}

/// An integer or a percentage string, like `intstr.IntOrString`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum IntOrString {
    /// An integer.
    Int(i64),
    /// A string, usually a percentage.
    String(String),
}

/// `MachineHealthCheckClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineHealthCheckClass {
    /// Node conditions that mark a machine unhealthy.
    #[serde(default)]
    pub unhealthy_conditions: Option<Vec<UnhealthyCondition>>,
    /// Machine conditions that mark a machine unhealthy.
    #[serde(default)]
    pub unhealthy_machine_conditions: Option<Vec<UnhealthyCondition>>,
    /// Remediation stops above this many unhealthy machines.
    #[serde(default)]
    pub max_unhealthy: Option<IntOrString>,
    /// Remediation only within this range of unhealthy machines (`[3-5]`).
    #[serde(default)]
    pub unhealthy_range: Option<String>,
    /// Machines without a node after this long are unhealthy.
    #[serde(default)]
    pub node_startup_timeout: Option<Duration>,
    /// An external remediation template.
    #[serde(default)]
    pub remediation_template: Option<ObjectReference>,
}

/// `MachineHealthCheckTopology`: a class health check plus an on/off switch.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineHealthCheckTopology {
    /// Switches the health check on or off.
    #[serde(default)]
    pub enable: Option<bool>,
    /// See [`MachineHealthCheckClass`].
    #[serde(default)]
    pub unhealthy_conditions: Option<Vec<UnhealthyCondition>>,
    /// See [`MachineHealthCheckClass`].
    #[serde(default)]
    pub unhealthy_machine_conditions: Option<Vec<UnhealthyCondition>>,
    /// See [`MachineHealthCheckClass`].
    #[serde(default)]
    pub max_unhealthy: Option<IntOrString>,
    /// See [`MachineHealthCheckClass`].
    #[serde(default)]
    pub unhealthy_range: Option<String>,
    /// See [`MachineHealthCheckClass`].
    #[serde(default)]
    pub node_startup_timeout: Option<Duration>,
    /// See [`MachineHealthCheckClass`].
    #[serde(default)]
    pub remediation_template: Option<ObjectReference>,
}

/// A ClusterClass document.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClass {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default)]
    pub api_version: String,
    /// `ClusterClass`.
    #[serde(default)]
    pub kind: String,
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The class.
    #[serde(default)]
    pub spec: ClusterClassSpec,
    /// Status, as reported by a controller.
    #[serde(default)]
    pub status: Option<Value>,
}

/// `ClusterClassSpec`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassSpec {
    /// Extra conditions for the Cluster's Available condition.
    #[serde(default)]
    pub availability_gates: Option<Vec<Value>>,
    /// The InfrastructureCluster template (optional).
    #[serde(default)]
    pub infrastructure: Option<LocalObjectTemplate>,
    /// Naming of the InfrastructureCluster.
    #[serde(default)]
    pub infrastructure_naming_strategy: Option<NamingStrategy>,
    /// The control plane.
    #[serde(default)]
    pub control_plane: ControlPlaneClass,
    /// The worker classes.
    #[serde(default)]
    pub workers: Option<WorkersClass>,
    /// Variable definitions.
    #[serde(default)]
    pub variables: Option<Vec<ClusterClassVariable>>,
    /// Patches, applied in order.
    #[serde(default)]
    pub patches: Option<Vec<ClusterClassPatch>>,
}

/// `ControlPlaneClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneClass {
    /// Labels and annotations for the ControlPlane object.
    #[serde(default)]
    pub metadata: Option<LabelsAndAnnotations>,
    /// The ControlPlane template.
    #[serde(default)]
    pub r#ref: Option<ObjectReference>,
    /// The control plane machines' infrastructure template.
    #[serde(default)]
    pub machine_infrastructure: Option<LocalObjectTemplate>,
    /// A MachineHealthCheck for the control plane machines.
    #[serde(default)]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    /// Naming of the ControlPlane.
    #[serde(default)]
    pub naming_strategy: Option<NamingStrategy>,
    /// Node drain timeout of the control plane machines.
    #[serde(default)]
    pub node_drain_timeout: Option<Duration>,
    /// Volume detach timeout.
    #[serde(default)]
    pub node_volume_detach_timeout: Option<Duration>,
    /// Node deletion timeout.
    #[serde(default)]
    pub node_deletion_timeout: Option<Duration>,
    /// Readiness gates of the control plane machines.
    #[serde(default)]
    pub readiness_gates: Option<Vec<Value>>,
}

/// `WorkersClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkersClass {
    /// MachineDeployment classes.
    #[serde(default)]
    pub machine_deployments: Option<Vec<MachineDeploymentClass>>,
    /// MachinePool classes.
    #[serde(default)]
    pub machine_pools: Option<Vec<MachinePoolClass>>,
}

/// The templates of a worker class.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerClassTemplate {
    /// Labels and annotations for the generated object.
    #[serde(default)]
    pub metadata: Option<LabelsAndAnnotations>,
    /// The bootstrap template.
    #[serde(default)]
    pub bootstrap: LocalObjectTemplate,
    /// The infrastructure template.
    #[serde(default)]
    pub infrastructure: LocalObjectTemplate,
}

/// `MachineDeploymentClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDeploymentClass {
    /// The class name.
    #[serde(default)]
    pub class: String,
    /// Templates.
    #[serde(default)]
    pub template: WorkerClassTemplate,
    /// A MachineHealthCheck per MachineDeployment of this class.
    #[serde(default)]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    /// Failure domain of the machines.
    #[serde(default)]
    pub failure_domain: Option<String>,
    /// Naming of the MachineDeployments.
    #[serde(default)]
    pub naming_strategy: Option<NamingStrategy>,
    /// Node drain timeout.
    #[serde(default)]
    pub node_drain_timeout: Option<Duration>,
    /// Volume detach timeout.
    #[serde(default)]
    pub node_volume_detach_timeout: Option<Duration>,
    /// Node deletion timeout.
    #[serde(default)]
    pub node_deletion_timeout: Option<Duration>,
    /// Minimum ready seconds of new machines.
    #[serde(default)]
    pub min_ready_seconds: Option<i32>,
    /// Readiness gates of the machines.
    #[serde(default)]
    pub readiness_gates: Option<Vec<Value>>,
    /// Rollout strategy.
    #[serde(default)]
    pub strategy: Option<Value>,
}

/// `MachinePoolClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachinePoolClass {
    /// The class name.
    #[serde(default)]
    pub class: String,
    /// Templates.
    #[serde(default)]
    pub template: WorkerClassTemplate,
    /// Failure domains of the machines.
    #[serde(default)]
    pub failure_domains: Option<Vec<String>>,
    /// Naming of the MachinePools.
    #[serde(default)]
    pub naming_strategy: Option<NamingStrategy>,
    /// Node drain timeout.
    #[serde(default)]
    pub node_drain_timeout: Option<Duration>,
    /// Volume detach timeout.
    #[serde(default)]
    pub node_volume_detach_timeout: Option<Duration>,
    /// Node deletion timeout.
    #[serde(default)]
    pub node_deletion_timeout: Option<Duration>,
    /// Minimum ready seconds of new machines.
    #[serde(default)]
    pub min_ready_seconds: Option<i32>,
}

/// `ClusterClassVariable`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassVariable {
    /// Variable name.
    #[serde(default)]
    pub name: String,
    /// Whether Clusters must set it.
    #[serde(default)]
    pub required: bool,
    /// Deprecated metadata of the variable.
    #[serde(default)]
    pub metadata: Option<LabelsAndAnnotations>,
    /// The schema.
    #[serde(default)]
    pub schema: VariableSchema,
}

/// `VariableSchema`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VariableSchema {
    /// The OpenAPI v3 schema, kept as JSON (its keywords are checked by the engine).
    #[serde(rename = "openAPIV3Schema", default)]
    pub open_api_v3_schema: Value,
}

/// `ClusterClassPatch`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassPatch {
    /// Patch name.
    #[serde(default)]
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// A Go template deciding whether the patch applies.
    #[serde(default)]
    pub enabled_if: Option<String>,
    /// Inline definitions.
    #[serde(default)]
    pub definitions: Option<Vec<PatchDefinition>>,
    /// An external (Runtime SDK) patch.
    #[serde(default)]
    pub external: Option<ExternalPatchDefinition>,
}

/// `PatchDefinition`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchDefinition {
    /// Which templates the patch applies to.
    #[serde(default)]
    pub selector: PatchSelector,
    /// The JSON patches.
    #[serde(default)]
    pub json_patches: Vec<JsonPatch>,
}

/// `PatchSelector`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchSelector {
    /// Template apiVersion.
    #[serde(default)]
    pub api_version: String,
    /// Template kind.
    #[serde(default)]
    pub kind: String,
    /// Where the template is referenced.
    #[serde(default)]
    pub match_resources: PatchSelectorMatch,
}

/// `PatchSelectorMatch`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchSelectorMatch {
    /// Control plane templates.
    #[serde(default)]
    pub control_plane: bool,
    /// The InfrastructureCluster template.
    #[serde(default)]
    pub infrastructure_cluster: bool,
    /// Templates of MachineDeployment classes.
    #[serde(default)]
    pub machine_deployment_class: Option<ClassNames>,
    /// Templates of MachinePool classes.
    #[serde(default)]
    pub machine_pool_class: Option<ClassNames>,
}

/// A list of class names or globs.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClassNames {
    /// Names (`*`, `prefix*`, `*suffix` allowed).
    #[serde(default)]
    pub names: Option<Vec<String>>,
}

/// `JSONPatch`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonPatch {
    /// `add`, `replace` or `remove`.
    #[serde(default)]
    pub op: String,
    /// JSON pointer.
    #[serde(default)]
    pub path: String,
    /// A literal value.
    #[serde(default)]
    pub value: Option<Value>,
    /// A computed value.
    #[serde(default)]
    pub value_from: Option<JsonPatchValue>,
}

/// `JSONPatchValue`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonPatchValue {
    /// A variable path.
    #[serde(default)]
    pub variable: Option<String>,
    /// A Go template.
    #[serde(default)]
    pub template: Option<String>,
}

/// `ExternalPatchDefinition`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExternalPatchDefinition {
    /// GeneratePatches extension.
    #[serde(default)]
    pub generate_extension: Option<String>,
    /// ValidateTopology extension.
    #[serde(default)]
    pub validate_extension: Option<String>,
    /// DiscoverVariables extension.
    #[serde(default)]
    pub discover_variables_extension: Option<String>,
    /// Settings passed to the extensions.
    #[serde(default)]
    pub settings: Option<BTreeMap<String, String>>,
}

/// A Cluster document.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cluster {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default)]
    pub api_version: String,
    /// `Cluster`.
    #[serde(default)]
    pub kind: String,
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The Cluster.
    #[serde(default)]
    pub spec: ClusterSpec,
    /// Status, as reported by controllers.
    #[serde(default)]
    pub status: Option<Value>,
}

/// `ClusterSpec`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterSpec {
    /// Stops reconciliation.
    #[serde(default)]
    pub paused: bool,
    /// Networking.
    #[serde(default)]
    pub cluster_network: Option<ClusterNetwork>,
    /// The API endpoint.
    #[serde(default)]
    pub control_plane_endpoint: Option<ApiEndpoint>,
    /// The ControlPlane object.
    #[serde(default)]
    pub control_plane_ref: Option<ObjectReference>,
    /// The InfrastructureCluster object.
    #[serde(default)]
    pub infrastructure_ref: Option<ObjectReference>,
    /// The managed topology.
    #[serde(default)]
    pub topology: Option<Topology>,
    /// Extra conditions for the Available condition.
    #[serde(default)]
    pub availability_gates: Option<Vec<Value>>,
}

/// `ClusterNetwork`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterNetwork {
    /// API server port.
    #[serde(default, rename = "apiServerPort")]
    pub api_server_port: Option<i32>,
    /// Service CIDRs.
    #[serde(default)]
    pub services: Option<NetworkRanges>,
    /// Pod CIDRs.
    #[serde(default)]
    pub pods: Option<NetworkRanges>,
    /// Service DNS domain.
    #[serde(default)]
    pub service_domain: Option<String>,
}

/// `NetworkRanges`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetworkRanges {
    /// CIDR blocks.
    #[serde(default)]
    pub cidr_blocks: Option<Vec<String>>,
}

/// `APIEndpoint`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiEndpoint {
    /// Host.
    #[serde(default)]
    pub host: String,
    /// Port.
    #[serde(default)]
    pub port: i32,
}

/// `Topology`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Topology {
    /// ClusterClass name.
    #[serde(default)]
    pub class: String,
    /// ClusterClass namespace (defaults to the Cluster's).
    #[serde(default)]
    pub class_namespace: Option<String>,
    /// Kubernetes version.
    #[serde(default)]
    pub version: String,
    /// Roll out every machine after this time.
    #[serde(default)]
    pub rollout_after: Option<String>,
    /// The control plane.
    #[serde(default)]
    pub control_plane: ControlPlaneTopology,
    /// Worker pools.
    #[serde(default)]
    pub workers: Option<WorkersTopology>,
    /// Variable values.
    #[serde(default)]
    pub variables: Option<Vec<ClusterVariable>>,
}

/// `ControlPlaneTopology`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneTopology {
    /// Labels and annotations.
    #[serde(default)]
    pub metadata: Option<LabelsAndAnnotations>,
    /// Number of control plane machines.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// Health check override.
    #[serde(default)]
    pub machine_health_check: Option<MachineHealthCheckTopology>,
    /// Node drain timeout.
    #[serde(default)]
    pub node_drain_timeout: Option<Duration>,
    /// Volume detach timeout.
    #[serde(default)]
    pub node_volume_detach_timeout: Option<Duration>,
    /// Node deletion timeout.
    #[serde(default)]
    pub node_deletion_timeout: Option<Duration>,
    /// Readiness gates.
    #[serde(default)]
    pub readiness_gates: Option<Vec<Value>>,
    /// Variable overrides.
    #[serde(default)]
    pub variables: Option<VariableOverrides>,
}

/// `WorkersTopology`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkersTopology {
    /// MachineDeployments.
    #[serde(default)]
    pub machine_deployments: Option<Vec<MachineDeploymentTopology>>,
    /// MachinePools.
    #[serde(default)]
    pub machine_pools: Option<Vec<MachinePoolTopology>>,
}

/// `MachineDeploymentTopology`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDeploymentTopology {
    /// Labels and annotations.
    #[serde(default)]
    pub metadata: Option<LabelsAndAnnotations>,
    /// The MachineDeployment class.
    #[serde(default)]
    pub class: String,
    /// The name of this pool within the topology.
    #[serde(default)]
    pub name: String,
    /// Failure domain.
    #[serde(default)]
    pub failure_domain: Option<String>,
    /// Replicas; unset leaves them to an autoscaler.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// Health check override.
    #[serde(default)]
    pub machine_health_check: Option<MachineHealthCheckTopology>,
    /// Node drain timeout.
    #[serde(default)]
    pub node_drain_timeout: Option<Duration>,
    /// Volume detach timeout.
    #[serde(default)]
    pub node_volume_detach_timeout: Option<Duration>,
    /// Node deletion timeout.
    #[serde(default)]
    pub node_deletion_timeout: Option<Duration>,
    /// Minimum ready seconds.
    #[serde(default)]
    pub min_ready_seconds: Option<i32>,
    /// Readiness gates.
    #[serde(default)]
    pub readiness_gates: Option<Vec<Value>>,
    /// Rollout strategy.
    #[serde(default)]
    pub strategy: Option<Value>,
    /// Variable overrides.
    #[serde(default)]
    pub variables: Option<VariableOverrides>,
}

/// `MachinePoolTopology`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachinePoolTopology {
    /// Labels and annotations.
    #[serde(default)]
    pub metadata: Option<LabelsAndAnnotations>,
    /// The MachinePool class.
    #[serde(default)]
    pub class: String,
    /// The name of this pool within the topology.
    #[serde(default)]
    pub name: String,
    /// Failure domains.
    #[serde(default)]
    pub failure_domains: Option<Vec<String>>,
    /// Node drain timeout.
    #[serde(default)]
    pub node_drain_timeout: Option<Duration>,
    /// Volume detach timeout.
    #[serde(default)]
    pub node_volume_detach_timeout: Option<Duration>,
    /// Node deletion timeout.
    #[serde(default)]
    pub node_deletion_timeout: Option<Duration>,
    /// Minimum ready seconds.
    #[serde(default)]
    pub min_ready_seconds: Option<i32>,
    /// Replicas.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// Variable overrides.
    #[serde(default)]
    pub variables: Option<VariableOverrides>,
}

/// Per-pool variable overrides.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VariableOverrides {
    /// The overriding values.
    #[serde(default)]
    pub overrides: Option<Vec<ClusterVariable>>,
}

/// `ClusterVariable`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterVariable {
    /// Variable name.
    #[serde(default)]
    pub name: String,
    /// Deprecated: which definition the value is for.
    #[serde(default)]
    pub definition_from: Option<String>,
    /// The value.
    #[serde(default)]
    pub value: Value,
}
