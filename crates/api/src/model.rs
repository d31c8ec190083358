//! The version-neutral model the engine works on.
//!
//! Wire formats (`cluster.x-k8s.io/v1beta1` and `v1beta2`) convert into these types, so
//! the engine never depends on one API version's field names: durations are
//! [`Duration`]s, references are [`ObjectRef`]s, health checks are one
//! [`HealthCheck`] type whichever version wrote them. Classes and Clusters remember
//! the [`WireVersion`] they were written in, only so that problems can be reported at
//! the paths the user wrote; nothing else depends on it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::duration::Duration;
use crate::field::FieldError;
use crate::v1beta1;

pub use crate::v1beta1::{ClusterClassPatch as Patch, IntOrString, UnhealthyCondition};

/// The API version a ClusterClass or Cluster was written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WireVersion {
    /// `cluster.x-k8s.io/v1beta1`.
    #[default]
    V1Beta1,
    /// `cluster.x-k8s.io/v1beta2`.
    V1Beta2,
}

/// Labels and annotations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metadata {
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
}

/// A reference to an object: a template of a class, or an object of a Cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// API version. A reference that names only a group (v1beta2's contract-versioned
    /// references) has `group/` here: the version is the one the contract picks.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace; empty means "the namespace of the referring object".
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// Machine settings a class sets and a topology can override.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineSettings {
    /// How long to drain a node before deleting it.
    pub node_drain_timeout: Option<Duration>,
    /// How long to wait for volumes to detach.
    pub node_volume_detach_timeout: Option<Duration>,
    /// How long to wait for the node to be deleted.
    pub node_deletion_timeout: Option<Duration>,
    /// Extra conditions a machine must meet to be ready.
    pub readiness_gates: Option<Vec<Value>>,
}

impl MachineSettings {
    /// Each field of `overrides` that is set wins over this one.
    pub fn overridden_by(&self, overrides: &MachineSettings) -> MachineSettings {
        MachineSettings {
            node_drain_timeout: overrides.node_drain_timeout.or(self.node_drain_timeout),
            node_volume_detach_timeout: overrides
                .node_volume_detach_timeout
                .or(self.node_volume_detach_timeout),
            node_deletion_timeout: overrides
                .node_deletion_timeout
                .or(self.node_deletion_timeout),
            readiness_gates: overrides
                .readiness_gates
                .clone()
                .or_else(|| self.readiness_gates.clone()),
        }
    }
}

/// A MachineHealthCheck definition.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HealthCheck {
    /// Node conditions that make a machine unhealthy.
    pub unhealthy_node_conditions: Option<Vec<UnhealthyCondition>>,
    /// Machine conditions that make a machine unhealthy.
    pub unhealthy_machine_conditions: Option<Vec<UnhealthyCondition>>,
    /// Stop remediating above this many unhealthy machines.
    pub max_unhealthy: Option<IntOrString>,
    /// Remediate only within this range of unhealthy machines.
    pub unhealthy_range: Option<String>,
    /// A machine without a node after this long is unhealthy.
    pub node_startup_timeout: Option<Duration>,
    /// External remediation.
    pub remediation_template: Option<ObjectRef>,
    /// Remediations in flight at once (v1beta2 MachineDeployment classes).
    pub max_in_flight: Option<IntOrString>,
}

impl HealthCheck {
    /// True when nothing is defined: a topology override that only switches the check
    /// on or off does not define one.
    pub fn is_zero(&self) -> bool {
        self == &HealthCheck::default()
    }
}

/// A topology's health check setting: a switch, and optionally its own definition.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HealthCheckOverride {
    /// `Some(false)` turns the check off; `None` and `Some(true)` keep it on.
    pub enabled: Option<bool>,
    /// When not zero, replaces the class's definition as a whole.
    pub check: HealthCheck,
}

/// A ClusterClass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterClass {
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// UID, when read from a server.
    pub uid: String,
    /// The InfrastructureCluster template; a class without one has no
    /// InfrastructureCluster and relies on the control plane for the endpoint.
    pub infrastructure: Option<InfrastructureClass>,
    /// The control plane.
    pub control_plane: ControlPlaneClass,
    /// MachineDeployment classes, in order.
    pub machine_deployments: Vec<MachineDeploymentClass>,
    /// MachinePool classes, in order.
    pub machine_pools: Vec<MachinePoolClass>,
    /// Variable definitions.
    pub variables: Vec<VariableDefinition>,
    /// Patches, in order.
    pub patches: Vec<Patch>,
    /// The Kubernetes versions Clusters of this class may run, oldest first (empty:
    /// any).
    pub kubernetes_versions: Vec<String>,
    /// The runtime extension that plans upgrades.
    pub upgrade_plan_extension: Option<String>,
    /// The version the class was written in.
    pub wire: WireVersion,
}

/// The InfrastructureCluster part of a class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InfrastructureClass {
    /// The InfrastructureCluster template.
    pub template: ObjectRef,
    /// A Go template for the InfrastructureCluster's name.
    pub naming: Option<String>,
}

/// The control plane part of a class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlPlaneClass {
    /// Labels and annotations for the ControlPlane.
    pub metadata: Metadata,
    /// The ControlPlane template.
    pub template: ObjectRef,
    /// The control plane machines' infrastructure template.
    pub machine_infrastructure: Option<ObjectRef>,
    /// Health check of the control plane machines.
    pub health_check: Option<HealthCheck>,
    /// A Go template for the ControlPlane's name.
    pub naming: Option<String>,
    /// Machine settings.
    pub machine: MachineSettings,
}

/// A MachineDeployment class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineDeploymentClass {
    /// Class name.
    pub class: String,
    /// Labels and annotations for the MachineDeployments.
    pub metadata: Metadata,
    /// Bootstrap template.
    pub bootstrap: ObjectRef,
    /// Infrastructure machine template.
    pub infrastructure: ObjectRef,
    /// Health check per MachineDeployment.
    pub health_check: Option<HealthCheck>,
    /// A Go template for the MachineDeployments' names.
    pub naming: Option<String>,
    /// Failure domain.
    pub failure_domain: Option<String>,
    /// Minimum ready seconds.
    pub min_ready_seconds: Option<i32>,
    /// Rollout strategy, as the wire format writes it.
    pub strategy: Option<Value>,
    /// Which machines go first when scaling down (`Random`, `Newest`, `Oldest`).
    pub deletion_order: Option<String>,
    /// Machine settings.
    pub machine: MachineSettings,
}

/// A MachinePool class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachinePoolClass {
    /// Class name.
    pub class: String,
    /// Labels and annotations for the MachinePools.
    pub metadata: Metadata,
    /// Bootstrap template.
    pub bootstrap: ObjectRef,
    /// Infrastructure machine pool template.
    pub infrastructure: ObjectRef,
    /// A Go template for the MachinePools' names.
    pub naming: Option<String>,
    /// Failure domains.
    pub failure_domains: Option<Vec<String>>,
    /// Minimum ready seconds.
    pub min_ready_seconds: Option<i32>,
    /// Machine settings.
    pub machine: MachineSettings,
}

/// A variable definition of a class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariableDefinition {
    /// Name.
    pub name: String,
    /// Whether Clusters must set it.
    pub required: bool,
    /// OpenAPI v3 schema.
    pub schema: Value,
    /// Deprecated variable metadata.
    pub metadata: Metadata,
}

/// A Cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cluster {
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// UID, when read from a server.
    pub uid: String,
    /// Labels and annotations.
    pub metadata: Metadata,
    /// Reconciliation is paused.
    pub paused: bool,
    /// The InfrastructureCluster, once set.
    pub infrastructure_ref: Option<ObjectRef>,
    /// The ControlPlane, once set.
    pub control_plane_ref: Option<ObjectRef>,
    /// Networking.
    pub network: ClusterNetwork,
    /// The managed topology.
    pub topology: Option<Topology>,
    /// The document as it was given, to write the desired Cluster from.
    pub document: Value,
    /// The version the Cluster was written in.
    pub wire: WireVersion,
}

/// Cluster networking, as the builtin variables expose it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterNetwork {
    /// API server port.
    pub api_server_port: Option<i32>,
    /// Service DNS domain.
    pub service_domain: Option<String>,
    /// Service CIDRs.
    pub services: Option<Vec<String>>,
    /// Pod CIDRs.
    pub pods: Option<Vec<String>>,
}

/// A Cluster's managed topology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    /// The class name.
    pub class: String,
    /// The class namespace; empty means the Cluster's.
    pub class_namespace: String,
    /// Kubernetes version.
    pub version: String,
    /// Roll out all machines after this time (RFC 3339).
    pub rollout_after: Option<String>,
    /// The control plane.
    pub control_plane: ControlPlaneTopology,
    /// MachineDeployments, in order.
    pub machine_deployments: Vec<MachineDeploymentTopology>,
    /// MachinePools, in order.
    pub machine_pools: Vec<MachinePoolTopology>,
    /// Variable values.
    pub variables: Vec<Variable>,
}

/// The control plane of a topology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlPlaneTopology {
    /// Labels and annotations.
    pub metadata: Metadata,
    /// Replicas; `None` leaves them to the control plane provider.
    pub replicas: Option<i32>,
    /// Health check setting.
    pub health_check: Option<HealthCheckOverride>,
    /// Machine settings overriding the class's.
    pub machine: MachineSettings,
    /// Roll out the control plane's machines after this time (v1beta2).
    pub rollout_after: Option<String>,
    /// Variable overrides.
    pub variable_overrides: Vec<Variable>,
}

/// One MachineDeployment of a topology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineDeploymentTopology {
    /// Labels and annotations.
    pub metadata: Metadata,
    /// Class name.
    pub class: String,
    /// Name within the topology.
    pub name: String,
    /// Failure domain.
    pub failure_domain: Option<String>,
    /// Replicas; `None` leaves them to an autoscaler.
    pub replicas: Option<i32>,
    /// Health check setting.
    pub health_check: Option<HealthCheckOverride>,
    /// Machine settings overriding the class's.
    pub machine: MachineSettings,
    /// Minimum ready seconds.
    pub min_ready_seconds: Option<i32>,
    /// Rollout strategy.
    pub strategy: Option<Value>,
    /// Which machines go first when scaling down.
    pub deletion_order: Option<String>,
    /// Roll out this MachineDeployment's machines after this time (v1beta2).
    pub rollout_after: Option<String>,
    /// Variable overrides.
    pub variable_overrides: Vec<Variable>,
}

/// One MachinePool of a topology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachinePoolTopology {
    /// Labels and annotations.
    pub metadata: Metadata,
    /// Class name.
    pub class: String,
    /// Name within the topology.
    pub name: String,
    /// Failure domains.
    pub failure_domains: Option<Vec<String>>,
    /// Replicas.
    pub replicas: Option<i32>,
    /// Minimum ready seconds.
    pub min_ready_seconds: Option<i32>,
    /// Machine settings overriding the class's.
    pub machine: MachineSettings,
    /// Variable overrides.
    pub variable_overrides: Vec<Variable>,
}

/// A variable value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Variable {
    /// Name.
    pub name: String,
    /// Deprecated: the definition the value is for.
    pub definition_from: Option<String>,
    /// Value.
    pub value: Value,
}

// ---------------------------------------------------------------------------------
// Conversion from v1beta1.

fn metadata(m: Option<&v1beta1::LabelsAndAnnotations>) -> Metadata {
    match m {
        Some(m) => Metadata {
            labels: m.labels.clone().unwrap_or_default(),
            annotations: m.annotations.clone().unwrap_or_default(),
        },
        None => Metadata::default(),
    }
}

fn object_ref(r: &v1beta1::ObjectReference) -> ObjectRef {
    ObjectRef {
        api_version: r.api_version.clone(),
        kind: r.kind.clone(),
        namespace: r.namespace.clone(),
        name: r.name.clone(),
    }
}

/// A template reference that must be complete: apiVersion, kind and name.
fn template_ref(
    path: &str,
    r: Option<&v1beta1::ObjectReference>,
    errors: &mut Vec<FieldError>,
) -> ObjectRef {
    let Some(r) = r else {
        errors.push(FieldError::required(
            path,
            "template reference must be defined",
        ));
        return ObjectRef::default();
    };
    // The texts are the class webhook's, which reports the same problems.
    if r.name.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.name"),
            "template name must be defined",
        ));
    }
    if r.kind.is_empty() {
        errors.push(FieldError::invalid(
            format!("{path}.kind"),
            "",
            "template kind must be of form \"<name>Template\"",
        ));
    }
    if r.api_version.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.apiVersion"),
            "template apiVersion must be defined",
        ));
    }
    object_ref(r)
}

fn health_check(h: &v1beta1::MachineHealthCheckClass) -> HealthCheck {
    HealthCheck {
        unhealthy_node_conditions: h.unhealthy_conditions.clone(),
        unhealthy_machine_conditions: h.unhealthy_machine_conditions.clone(),
        max_unhealthy: h.max_unhealthy.clone(),
        unhealthy_range: h.unhealthy_range.clone(),
        node_startup_timeout: h.node_startup_timeout,
        remediation_template: h.remediation_template.as_ref().map(object_ref),
        max_in_flight: None,
    }
}

fn health_check_override(h: &v1beta1::MachineHealthCheckTopology) -> HealthCheckOverride {
    HealthCheckOverride {
        enabled: h.enable,
        check: HealthCheck {
            unhealthy_node_conditions: h.unhealthy_conditions.clone(),
            unhealthy_machine_conditions: h.unhealthy_machine_conditions.clone(),
            max_unhealthy: h.max_unhealthy.clone(),
            unhealthy_range: h.unhealthy_range.clone(),
            node_startup_timeout: h.node_startup_timeout,
            remediation_template: h.remediation_template.as_ref().map(object_ref),
            max_in_flight: None,
        },
    }
}

fn naming(n: Option<&v1beta1::NamingStrategy>) -> Option<String> {
    n.and_then(|n| n.template.clone())
}

fn variables(vars: Option<&Vec<v1beta1::ClusterVariable>>) -> Vec<Variable> {
    vars.map(|vars| {
        vars.iter()
            .map(|v| Variable {
                name: v.name.clone(),
                definition_from: v.definition_from.clone(),
                value: v.value.clone(),
            })
            .collect()
    })
    .unwrap_or_default()
}

fn overrides(o: Option<&v1beta1::VariableOverrides>) -> Vec<Variable> {
    variables(o.and_then(|o| o.overrides.as_ref()))
}

impl ClusterClass {
    /// Converts a v1beta1 ClusterClass. The errors are those without which no
    /// topology can be computed (missing template references), with their paths.
    pub fn from_v1beta1(cc: &v1beta1::ClusterClass) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let spec = &cc.spec;
        let infrastructure = spec.infrastructure.as_ref().and_then(|infra| {
            infra.r#ref.as_ref().map(|r| InfrastructureClass {
                template: template_ref("spec.infrastructure.ref", Some(r), &mut errors),
                naming: naming(spec.infrastructure_naming_strategy.as_ref()),
            })
        });
        let cp = &spec.control_plane;
        let control_plane = ControlPlaneClass {
            metadata: metadata(cp.metadata.as_ref()),
            template: template_ref("spec.controlPlane.ref", cp.r#ref.as_ref(), &mut errors),
            machine_infrastructure: cp.machine_infrastructure.as_ref().map(|mi| {
                template_ref(
                    "spec.controlPlane.machineInfrastructure.ref",
                    mi.r#ref.as_ref(),
                    &mut errors,
                )
            }),
            health_check: cp.machine_health_check.as_ref().map(health_check),
            naming: naming(cp.naming_strategy.as_ref()),
            machine: MachineSettings {
                node_drain_timeout: cp.node_drain_timeout,
                node_volume_detach_timeout: cp.node_volume_detach_timeout,
                node_deletion_timeout: cp.node_deletion_timeout,
                readiness_gates: cp.readiness_gates.clone(),
            },
        };
        let workers = spec.workers.clone().unwrap_or_default();
        let machine_deployments = workers
            .machine_deployments
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, md)| {
                let base = format!("spec.workers.machineDeployments[{i}].template");
                MachineDeploymentClass {
                    class: md.class.clone(),
                    metadata: metadata(md.template.metadata.as_ref()),
                    bootstrap: template_ref(
                        &format!("{base}.bootstrap.ref"),
                        md.template.bootstrap.r#ref.as_ref(),
                        &mut errors,
                    ),
                    infrastructure: template_ref(
                        &format!("{base}.infrastructure.ref"),
                        md.template.infrastructure.r#ref.as_ref(),
                        &mut errors,
                    ),
                    health_check: md.machine_health_check.as_ref().map(health_check),
                    naming: naming(md.naming_strategy.as_ref()),
                    failure_domain: md.failure_domain.clone(),
                    min_ready_seconds: md.min_ready_seconds,
                    strategy: md.strategy.clone(),
                    deletion_order: None,
                    machine: MachineSettings {
                        node_drain_timeout: md.node_drain_timeout,
                        node_volume_detach_timeout: md.node_volume_detach_timeout,
                        node_deletion_timeout: md.node_deletion_timeout,
                        readiness_gates: md.readiness_gates.clone(),
                    },
                }
            })
            .collect();
        let machine_pools = workers
            .machine_pools
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, mp)| {
                let base = format!("spec.workers.machinePools[{i}].template");
                MachinePoolClass {
                    class: mp.class.clone(),
                    metadata: metadata(mp.template.metadata.as_ref()),
                    bootstrap: template_ref(
                        &format!("{base}.bootstrap.ref"),
                        mp.template.bootstrap.r#ref.as_ref(),
                        &mut errors,
                    ),
                    infrastructure: template_ref(
                        &format!("{base}.infrastructure.ref"),
                        mp.template.infrastructure.r#ref.as_ref(),
                        &mut errors,
                    ),
                    naming: naming(mp.naming_strategy.as_ref()),
                    failure_domains: mp.failure_domains.clone(),
                    min_ready_seconds: mp.min_ready_seconds,
                    machine: MachineSettings {
                        node_drain_timeout: mp.node_drain_timeout,
                        node_volume_detach_timeout: mp.node_volume_detach_timeout,
                        node_deletion_timeout: mp.node_deletion_timeout,
                        readiness_gates: None,
                    },
                }
            })
            .collect();
        let variables = spec
            .variables
            .iter()
            .flatten()
            .map(|v| VariableDefinition {
                name: v.name.clone(),
                required: v.required,
                schema: v.schema.open_api_v3_schema.clone(),
                metadata: metadata(v.metadata.as_ref()),
            })
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ClusterClass {
            name: cc.metadata.name.clone(),
            namespace: cc.metadata.namespace.clone(),
            uid: cc.metadata.uid.clone(),
            infrastructure,
            control_plane,
            machine_deployments,
            machine_pools,
            variables,
            patches: spec.patches.clone().unwrap_or_default(),
            kubernetes_versions: Vec::new(),
            upgrade_plan_extension: None,
            wire: WireVersion::V1Beta1,
        })
    }
}

impl Cluster {
    /// Converts a v1beta1 Cluster; `document` is the JSON it was read from.
    pub fn from_v1beta1(c: &v1beta1::Cluster, document: Value) -> Self {
        let spec = &c.spec;
        let network = spec.cluster_network.clone().unwrap_or_default();
        let topology = spec.topology.as_ref().map(|t| {
            let cp = &t.control_plane;
            let workers = t.workers.clone().unwrap_or_default();
            Topology {
                class: t.class.clone(),
                class_namespace: t.class_namespace.clone().unwrap_or_default(),
                version: t.version.clone(),
                rollout_after: t.rollout_after.clone(),
                control_plane: ControlPlaneTopology {
                    metadata: metadata(cp.metadata.as_ref()),
                    replicas: cp.replicas,
                    health_check: cp.machine_health_check.as_ref().map(health_check_override),
                    machine: MachineSettings {
                        node_drain_timeout: cp.node_drain_timeout,
                        node_volume_detach_timeout: cp.node_volume_detach_timeout,
                        node_deletion_timeout: cp.node_deletion_timeout,
                        readiness_gates: cp.readiness_gates.clone(),
                    },
                    rollout_after: None,
                    variable_overrides: overrides(cp.variables.as_ref()),
                },
                machine_deployments: workers
                    .machine_deployments
                    .unwrap_or_default()
                    .iter()
                    .map(|md| MachineDeploymentTopology {
                        metadata: metadata(md.metadata.as_ref()),
                        class: md.class.clone(),
                        name: md.name.clone(),
                        failure_domain: md.failure_domain.clone(),
                        replicas: md.replicas,
                        health_check: md.machine_health_check.as_ref().map(health_check_override),
                        machine: MachineSettings {
                            node_drain_timeout: md.node_drain_timeout,
                            node_volume_detach_timeout: md.node_volume_detach_timeout,
                            node_deletion_timeout: md.node_deletion_timeout,
                            readiness_gates: md.readiness_gates.clone(),
                        },
                        min_ready_seconds: md.min_ready_seconds,
                        strategy: md.strategy.clone(),
                        deletion_order: None,
                        rollout_after: None,
                        variable_overrides: overrides(md.variables.as_ref()),
                    })
                    .collect(),
                machine_pools: workers
                    .machine_pools
                    .unwrap_or_default()
                    .iter()
                    .map(|mp| MachinePoolTopology {
                        metadata: metadata(mp.metadata.as_ref()),
                        class: mp.class.clone(),
                        name: mp.name.clone(),
                        failure_domains: mp.failure_domains.clone(),
                        replicas: mp.replicas,
                        min_ready_seconds: mp.min_ready_seconds,
                        machine: MachineSettings {
                            node_drain_timeout: mp.node_drain_timeout,
                            node_volume_detach_timeout: mp.node_volume_detach_timeout,
                            node_deletion_timeout: mp.node_deletion_timeout,
                            readiness_gates: None,
                        },
                        variable_overrides: overrides(mp.variables.as_ref()),
                    })
                    .collect(),
                variables: variables(t.variables.as_ref()),
            }
        });
        Cluster {
            name: c.metadata.name.clone(),
            namespace: c.metadata.namespace.clone(),
            uid: c.metadata.uid.clone(),
            metadata: Metadata {
                labels: c.metadata.labels.clone().unwrap_or_default(),
                annotations: c.metadata.annotations.clone().unwrap_or_default(),
            },
            paused: spec.paused,
            infrastructure_ref: spec.infrastructure_ref.as_ref().map(object_ref),
            control_plane_ref: spec.control_plane_ref.as_ref().map(object_ref),
            network: ClusterNetwork {
                api_server_port: network.api_server_port,
                service_domain: network.service_domain.clone(),
                services: network.services.and_then(|s| s.cidr_blocks),
                pods: network.pods.and_then(|p| p.cidr_blocks),
            },
            topology,
            document,
            wire: WireVersion::V1Beta1,
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

impl Topology {
    /// The namespace of the class: `classNamespace`, or the Cluster's.
    pub fn class_namespace_or<'a>(&'a self, cluster_namespace: &'a str) -> &'a str {
        if self.class_namespace.is_empty() {
            cluster_namespace
        } else {
            &self.class_namespace
        }
    }
}
