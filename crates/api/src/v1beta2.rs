//! The `cluster.x-k8s.io/v1beta2` wire format of ClusterClass and Cluster.
//!
//! Field for field as Cluster API main defines them (`api/core/v1beta2`): templates
//! are `templateRef`s, health checks are `healthCheck {checks, remediation}`, machine
//! deletion settings sit under `deletion` as integer `*Seconds`, rollout under
//! `rollout`, naming under `naming`, and a Cluster names its class with `classRef` and
//! its objects with contract-versioned references (`apiGroup`, `kind`, `name`).
//! Unknown fields are refused with their path, as strict field validation does, so a
//! v1beta1 field in a v1beta2 document (`ref:`, `machineHealthCheck:`) is an error at
//! its place rather than a silently lost setting. [`crate::model`] converts these
//! types into the version-neutral model.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use crate::v1beta1::IntOrString;

/// The API version these types read.
pub const API_VERSION: &str = "cluster.x-k8s.io/v1beta2";

/// A `*Seconds` field: a non-negative `int32`, as the CRD's `Minimum=0` requires.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Seconds(pub i32);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let n = i32::deserialize(deserializer)?;
        if n < 0 {
            return Err(serde::de::Error::custom(format!(
                "invalid value: {n}, should be greater than or equal to 0"
            )));
        }
        Ok(Seconds(n))
    }
}

/// Object metadata; the fields the engine does not read (timestamps, managed fields,
/// ...) are accepted and ignored, as in v1beta1.
pub type ObjectMeta = crate::v1beta1::ObjectMeta;

/// Labels and annotations (`ObjectMeta` of classes and topologies).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metadata {
    /// Labels.
    #[serde(default, deserialize_with = "crate::v1beta1::string_map")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations.
    #[serde(default, deserialize_with = "crate::v1beta1::string_map")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// `ClusterClassTemplateReference`: a template in the class's namespace.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplateReference {
    /// Kind of the template.
    #[serde(default)]
    pub kind: String,
    /// Name of the template.
    #[serde(default)]
    pub name: String,
    /// API version of the template.
    #[serde(default)]
    pub api_version: String,
}

impl TemplateReference {
    /// Whether any field is set (Cluster API's `IsDefined`).
    pub fn is_defined(&self) -> bool {
        !(self.kind.is_empty() && self.name.is_empty() && self.api_version.is_empty())
    }
}

/// `ContractVersionedObjectReference`: an object whose version the contract decides.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContractVersionedObjectReference {
    /// Kind of the referent.
    #[serde(default)]
    pub kind: String,
    /// Name of the referent.
    #[serde(default)]
    pub name: String,
    /// API group of the referent.
    #[serde(default)]
    pub api_group: String,
}

/// A holder of one `templateRef` (machine infrastructure, bootstrap, infrastructure).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplateHolder {
    /// The template.
    #[serde(default)]
    pub template_ref: TemplateReference,
}

/// A naming spec: one Go template.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Naming {
    /// The name template.
    #[serde(default)]
    pub template: Option<String>,
}

/// `UnhealthyNodeCondition` / `UnhealthyMachineCondition`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnhealthyCondition {
    /// Condition type.
    #[serde(default)]
    pub r#type: String,
    /// Condition status.
    #[serde(default)]
    pub status: String,
    /// How long the condition must hold.
    #[serde(default)]
    pub timeout_seconds: Option<Seconds>,
}

/// `...HealthCheckChecks`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheckChecks {
    /// A machine without a node after this long is unhealthy.
    #[serde(default)]
    pub node_startup_timeout_seconds: Option<Seconds>,
    /// Node conditions that make a machine unhealthy.
    #[serde(default)]
    pub unhealthy_node_conditions: Option<Vec<UnhealthyCondition>>,
    /// Machine conditions that make a machine unhealthy.
    #[serde(default)]
    pub unhealthy_machine_conditions: Option<Vec<UnhealthyCondition>>,
}

/// `...HealthCheckRemediationTriggerIf`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TriggerIf {
    /// Remediate only up to this many unhealthy machines.
    #[serde(default)]
    pub unhealthy_less_than_or_equal_to: Option<IntOrString>,
    /// Remediate only within this range (`[3-5]`).
    #[serde(default)]
    pub unhealthy_in_range: Option<String>,
}

/// `MachineHealthCheckRemediationTemplateReference`.
pub type RemediationTemplateReference = TemplateReference;

/// A MachineDeployment's `...HealthCheckRemediation`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheckRemediation {
    /// Remediations in flight at once.
    #[serde(default)]
    pub max_in_flight: Option<IntOrString>,
    /// When remediation is triggered.
    #[serde(default)]
    pub trigger_if: Option<TriggerIf>,
    /// External remediation.
    #[serde(default)]
    pub template_ref: Option<RemediationTemplateReference>,
}

/// The control plane's `...HealthCheckRemediation`: no `maxInFlight`, which only a
/// MachineDeployment has.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneHealthCheckRemediation {
    /// When remediation is triggered.
    #[serde(default)]
    pub trigger_if: Option<TriggerIf>,
    /// External remediation.
    #[serde(default)]
    pub template_ref: Option<RemediationTemplateReference>,
}

impl From<&ControlPlaneHealthCheckRemediation> for HealthCheckRemediation {
    fn from(r: &ControlPlaneHealthCheckRemediation) -> Self {
        HealthCheckRemediation {
            max_in_flight: None,
            trigger_if: r.trigger_if.clone(),
            template_ref: r.template_ref.clone(),
        }
    }
}

impl From<&HealthCheckRemediation> for HealthCheckRemediation {
    fn from(r: &HealthCheckRemediation) -> Self {
        r.clone()
    }
}

/// A class's `healthCheck`, with the remediation its kind has (`R`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheck<R = HealthCheckRemediation> {
    /// The checks.
    #[serde(default)]
    pub checks: Option<HealthCheckChecks>,
    /// The remediation.
    #[serde(default = "none")]
    pub remediation: Option<R>,
}

fn none<R>() -> Option<R> {
    None
}

/// A topology's `healthCheck`: a switch and optionally its own definition.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopologyHealthCheck<R = HealthCheckRemediation> {
    /// Switches the health check on or off.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// The checks.
    #[serde(default)]
    pub checks: Option<HealthCheckChecks>,
    /// The remediation.
    #[serde(default = "none")]
    pub remediation: Option<R>,
}

/// A MachineDeployment's `...MachineDeletionSpec`: the timeouts and which machines go
/// first when scaling down.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDeploymentDeletion {
    /// Which machines go first when scaling down.
    #[serde(default)]
    pub order: Option<String>,
    /// How long to drain a node.
    #[serde(default)]
    pub node_drain_timeout_seconds: Option<Seconds>,
    /// How long to wait for volumes to detach.
    #[serde(default)]
    pub node_volume_detach_timeout_seconds: Option<Seconds>,
    /// How long to wait for the node to be deleted.
    #[serde(default)]
    pub node_deletion_timeout_seconds: Option<Seconds>,
}

impl MachineDeploymentDeletion {
    /// The timeouts alone.
    pub fn timeouts(&self) -> Deletion {
        Deletion {
            node_drain_timeout_seconds: self.node_drain_timeout_seconds,
            node_volume_detach_timeout_seconds: self.node_volume_detach_timeout_seconds,
            node_deletion_timeout_seconds: self.node_deletion_timeout_seconds,
        }
    }
}

/// The control plane's and a MachinePool's `...MachineDeletionSpec`: the timeouts.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Deletion {
    /// How long to drain a node.
    #[serde(default)]
    pub node_drain_timeout_seconds: Option<Seconds>,
    /// How long to wait for volumes to detach.
    #[serde(default)]
    pub node_volume_detach_timeout_seconds: Option<Seconds>,
    /// How long to wait for the node to be deleted.
    #[serde(default)]
    pub node_deletion_timeout_seconds: Option<Seconds>,
}

/// `MachineReadinessGate`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadinessGate {
    /// The condition type.
    #[serde(default)]
    pub condition_type: String,
    /// `Positive` or `Negative`.
    #[serde(default)]
    pub polarity: Option<String>,
}

/// `ClusterAvailabilityGate`.
pub type AvailabilityGate = ReadinessGate;

/// A rollout strategy's `rollingUpdate`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollingUpdate {
    /// Machines that may be unavailable during the update.
    #[serde(default)]
    pub max_unavailable: Option<IntOrString>,
    /// Machines that may be created above the desired number.
    #[serde(default)]
    pub max_surge: Option<IntOrString>,
}

/// A rollout strategy.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutStrategy {
    /// `RollingUpdate` or `OnDelete`.
    #[serde(default)]
    pub r#type: Option<String>,
    /// Rolling update settings.
    #[serde(default)]
    pub rolling_update: Option<RollingUpdate>,
}

/// A MachineDeployment class's `rollout`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClassRollout {
    /// The strategy.
    #[serde(default)]
    pub strategy: Option<RolloutStrategy>,
}

/// A MachineDeployment topology's `rollout`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopologyRollout {
    /// Roll out every machine after this time.
    #[serde(default)]
    pub after: Option<String>,
    /// The strategy.
    #[serde(default)]
    pub strategy: Option<RolloutStrategy>,
}

/// The control plane topology's `rollout`: only `after` (the strategy is the control
/// plane provider's).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneTopologyRollout {
    /// Roll out every control plane machine after this time.
    #[serde(default)]
    pub after: Option<String>,
}

/// A ClusterClass document.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClass {
    /// `cluster.x-k8s.io/v1beta2`.
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
    pub status: Option<ClusterClassStatus>,
}

/// `ClusterClassSpec`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassSpec {
    /// Extra conditions for the Cluster's Available condition.
    #[serde(default)]
    pub availability_gates: Option<Vec<AvailabilityGate>>,
    /// The InfrastructureCluster.
    #[serde(default)]
    pub infrastructure: InfrastructureClass,
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
    /// Upgrade settings.
    #[serde(default)]
    pub upgrade: Option<ClusterClassUpgrade>,
    /// The Kubernetes versions Clusters of this class may run, oldest first.
    #[serde(default)]
    pub kubernetes_versions: Option<Vec<String>>,
}

/// `InfrastructureClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InfrastructureClass {
    /// The InfrastructureCluster template.
    #[serde(default)]
    pub template_ref: TemplateReference,
    /// Naming of the InfrastructureCluster.
    #[serde(default)]
    pub naming: Option<Naming>,
}

/// `ControlPlaneClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneClass {
    /// Labels and annotations for the ControlPlane.
    #[serde(default)]
    pub metadata: Option<Metadata>,
    /// The ControlPlane template.
    #[serde(default)]
    pub template_ref: TemplateReference,
    /// The control plane machines' infrastructure template.
    #[serde(default)]
    pub machine_infrastructure: Option<TemplateHolder>,
    /// A MachineHealthCheck for the control plane machines.
    #[serde(default)]
    pub health_check: Option<HealthCheck<ControlPlaneHealthCheckRemediation>>,
    /// Naming of the ControlPlane.
    #[serde(default)]
    pub naming: Option<Naming>,
    /// Machine deletion settings.
    #[serde(default)]
    pub deletion: Option<Deletion>,
    /// Taints of the control plane machines' nodes.
    #[serde(default)]
    pub taints: Option<Vec<Value>>,
    /// Readiness gates of the control plane machines.
    #[serde(default)]
    pub readiness_gates: Option<Vec<ReadinessGate>>,
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

/// `MachineDeploymentClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDeploymentClass {
    /// Labels and annotations for the MachineDeployments.
    #[serde(default)]
    pub metadata: Option<Metadata>,
    /// The class name.
    #[serde(default)]
    pub class: String,
    /// The bootstrap template.
    #[serde(default)]
    pub bootstrap: TemplateHolder,
    /// The infrastructure template.
    #[serde(default)]
    pub infrastructure: TemplateHolder,
    /// A MachineHealthCheck per MachineDeployment.
    #[serde(default)]
    pub health_check: Option<HealthCheck>,
    /// Failure domain of the machines.
    #[serde(default)]
    pub failure_domain: Option<String>,
    /// Naming of the MachineDeployments.
    #[serde(default)]
    pub naming: Option<Naming>,
    /// Machine deletion settings.
    #[serde(default)]
    pub deletion: Option<MachineDeploymentDeletion>,
    /// Taints of the machines' nodes.
    #[serde(default)]
    pub taints: Option<Vec<Value>>,
    /// Minimum ready seconds of new machines.
    #[serde(default)]
    pub min_ready_seconds: Option<Seconds>,
    /// Readiness gates of the machines.
    #[serde(default)]
    pub readiness_gates: Option<Vec<ReadinessGate>>,
    /// Rollout settings.
    #[serde(default)]
    pub rollout: Option<ClassRollout>,
}

/// `MachinePoolClass`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachinePoolClass {
    /// Labels and annotations for the MachinePools.
    #[serde(default)]
    pub metadata: Option<Metadata>,
    /// The class name.
    #[serde(default)]
    pub class: String,
    /// The bootstrap template.
    #[serde(default)]
    pub bootstrap: TemplateHolder,
    /// The infrastructure template.
    #[serde(default)]
    pub infrastructure: TemplateHolder,
    /// Failure domains.
    #[serde(default)]
    pub failure_domains: Option<Vec<String>>,
    /// Naming of the MachinePools.
    #[serde(default)]
    pub naming: Option<Naming>,
    /// Machine deletion settings.
    #[serde(default)]
    pub deletion: Option<Deletion>,
    /// Taints of the machines' nodes.
    #[serde(default)]
    pub taints: Option<Vec<Value>>,
    /// Minimum ready seconds.
    #[serde(default)]
    pub min_ready_seconds: Option<Seconds>,
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
    pub required: Option<bool>,
    /// The metadata v1beta1 called `metadata`.
    #[serde(default, rename = "deprecatedV1Beta1Metadata")]
    pub deprecated_v1beta1_metadata: Option<Metadata>,
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
    /// Inline definitions (the same shape as v1beta1's).
    #[serde(default)]
    pub definitions: Option<Vec<crate::v1beta1::PatchDefinition>>,
    /// An external (Runtime SDK) patch.
    #[serde(default)]
    pub external: Option<ExternalPatchDefinition>,
}

/// `ExternalPatchDefinition`: v1beta1's with the extensions renamed.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExternalPatchDefinition {
    /// GeneratePatches extension.
    #[serde(default)]
    pub generate_patches_extension: Option<String>,
    /// ValidateTopology extension.
    #[serde(default)]
    pub validate_topology_extension: Option<String>,
    /// DiscoverVariables extension.
    #[serde(default)]
    pub discover_variables_extension: Option<String>,
    /// Settings passed to the extensions.
    #[serde(default)]
    pub settings: Option<BTreeMap<String, String>>,
}

/// `ClusterClassUpgrade`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassUpgrade {
    /// Runtime extensions for upgrades.
    #[serde(default)]
    pub external: Option<ClusterClassUpgradeExternal>,
}

/// `ClusterClassUpgradeExternal`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassUpgradeExternal {
    /// The extension that plans upgrades.
    #[serde(default)]
    pub generate_upgrade_plan_extension: Option<String>,
}

/// `metav1.Condition`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Condition {
    /// Condition type.
    #[serde(default)]
    pub r#type: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    pub status: String,
    /// The generation the condition was computed for.
    #[serde(default)]
    pub observed_generation: Option<i64>,
    /// When the status last changed.
    #[serde(default)]
    pub last_transition_time: Option<String>,
    /// Why, in CamelCase.
    #[serde(default)]
    pub reason: Option<String>,
    /// Why, for humans.
    #[serde(default)]
    pub message: Option<String>,
}

/// The status fields kept for v1beta1 clients.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeprecatedStatus {
    /// v1beta1's fields.
    #[serde(default)]
    pub v1beta1: Option<V1Beta1Status>,
}

/// v1beta1's status fields: conditions in v1beta1's shape, failure reason and message.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct V1Beta1Status {
    /// Conditions (v1beta1 `Condition`s, with severity).
    #[serde(default)]
    pub conditions: Option<Vec<Value>>,
    /// A terminal problem's reason.
    #[serde(default)]
    pub failure_reason: Option<String>,
    /// A terminal problem's message.
    #[serde(default)]
    pub failure_message: Option<String>,
}

/// `ClusterClassStatus`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterClassStatus {
    /// Conditions.
    #[serde(default)]
    pub conditions: Option<Vec<Condition>>,
    /// The variables, with every definition.
    #[serde(default)]
    pub variables: Option<Vec<Value>>,
    /// The generation the status is for.
    #[serde(default)]
    pub observed_generation: Option<i64>,
    /// Deprecated fields.
    #[serde(default)]
    pub deprecated: Option<DeprecatedStatus>,
}

/// A Cluster document.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cluster {
    /// `cluster.x-k8s.io/v1beta2`.
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
    pub status: Option<ClusterStatus>,
}

/// `ClusterSpec`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterSpec {
    /// Stops reconciliation.
    #[serde(default)]
    pub paused: Option<bool>,
    /// Networking.
    #[serde(default)]
    pub cluster_network: Option<ClusterNetwork>,
    /// The API endpoint.
    #[serde(default)]
    pub control_plane_endpoint: Option<crate::v1beta1::ApiEndpoint>,
    /// The ControlPlane object.
    #[serde(default)]
    pub control_plane_ref: Option<ContractVersionedObjectReference>,
    /// The InfrastructureCluster object.
    #[serde(default)]
    pub infrastructure_ref: Option<ContractVersionedObjectReference>,
    /// The managed topology.
    #[serde(default)]
    pub topology: Option<Topology>,
    /// Extra conditions for the Available condition.
    #[serde(default)]
    pub availability_gates: Option<Vec<AvailabilityGate>>,
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
    pub services: Option<crate::v1beta1::NetworkRanges>,
    /// Pod CIDRs.
    #[serde(default)]
    pub pods: Option<crate::v1beta1::NetworkRanges>,
    /// Service DNS domain.
    #[serde(default)]
    pub service_domain: Option<String>,
}

/// `ClusterClassRef`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClassRef {
    /// The class name.
    #[serde(default)]
    pub name: String,
    /// The class namespace (defaults to the Cluster's).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// `Topology`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Topology {
    /// The ClusterClass.
    #[serde(default)]
    pub class_ref: ClassRef,
    /// Kubernetes version.
    #[serde(default)]
    pub version: String,
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
    pub metadata: Option<Metadata>,
    /// Number of control plane machines.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// Rollout settings.
    #[serde(default)]
    pub rollout: Option<ControlPlaneTopologyRollout>,
    /// Health check override.
    #[serde(default)]
    pub health_check: Option<TopologyHealthCheck<ControlPlaneHealthCheckRemediation>>,
    /// Machine deletion settings.
    #[serde(default)]
    pub deletion: Option<Deletion>,
    /// Taints.
    #[serde(default)]
    pub taints: Option<Vec<Value>>,
    /// Readiness gates.
    #[serde(default)]
    pub readiness_gates: Option<Vec<ReadinessGate>>,
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
    pub metadata: Option<Metadata>,
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
    /// Rollout settings.
    #[serde(default)]
    pub rollout: Option<TopologyRollout>,
    /// Health check override.
    #[serde(default)]
    pub health_check: Option<TopologyHealthCheck>,
    /// Machine deletion settings.
    #[serde(default)]
    pub deletion: Option<MachineDeploymentDeletion>,
    /// Taints.
    #[serde(default)]
    pub taints: Option<Vec<Value>>,
    /// Minimum ready seconds.
    #[serde(default)]
    pub min_ready_seconds: Option<Seconds>,
    /// Readiness gates.
    #[serde(default)]
    pub readiness_gates: Option<Vec<ReadinessGate>>,
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
    pub metadata: Option<Metadata>,
    /// The MachinePool class.
    #[serde(default)]
    pub class: String,
    /// The name of this pool within the topology.
    #[serde(default)]
    pub name: String,
    /// Failure domains.
    #[serde(default)]
    pub failure_domains: Option<Vec<String>>,
    /// Machine deletion settings.
    #[serde(default)]
    pub deletion: Option<Deletion>,
    /// Taints.
    #[serde(default)]
    pub taints: Option<Vec<Value>>,
    /// Minimum ready seconds.
    #[serde(default)]
    pub min_ready_seconds: Option<Seconds>,
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

/// `ClusterVariable` (v1beta2 dropped `definitionFrom`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterVariable {
    /// Variable name.
    #[serde(default)]
    pub name: String,
    /// The value.
    #[serde(default)]
    pub value: Value,
}

/// `ClusterInitializationStatus`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterInitialization {
    /// The infrastructure is provisioned.
    #[serde(default)]
    pub infrastructure_provisioned: Option<bool>,
    /// The control plane is initialized.
    #[serde(default)]
    pub control_plane_initialized: Option<bool>,
}

/// Replica counts of the control plane or the workers.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplicaStatus {
    /// Desired replicas.
    #[serde(default)]
    pub desired_replicas: Option<i32>,
    /// Existing replicas.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// Up-to-date replicas.
    #[serde(default)]
    pub up_to_date_replicas: Option<i32>,
    /// Ready replicas.
    #[serde(default)]
    pub ready_replicas: Option<i32>,
    /// Available replicas.
    #[serde(default)]
    pub available_replicas: Option<i32>,
}

/// `ClusterStatus`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterStatus {
    /// Conditions.
    #[serde(default)]
    pub conditions: Option<Vec<Condition>>,
    /// Initial provisioning.
    #[serde(default)]
    pub initialization: Option<ClusterInitialization>,
    /// The control plane's replicas.
    #[serde(default)]
    pub control_plane: Option<ReplicaStatus>,
    /// The workers' replicas.
    #[serde(default)]
    pub workers: Option<ReplicaStatus>,
    /// Failure domains from the infrastructure provider.
    #[serde(default)]
    pub failure_domains: Option<Vec<Value>>,
    /// The phase.
    #[serde(default)]
    pub phase: Option<String>,
    /// The generation the status is for.
    #[serde(default)]
    pub observed_generation: Option<i64>,
    /// Deprecated fields.
    #[serde(default)]
    pub deprecated: Option<DeprecatedStatus>,
}
