//! Conversion of `cluster.x-k8s.io/v1beta2` ClusterClasses and Clusters into the
//! version-neutral [`crate::model`].
//!
//! Nothing here refuses a document: what v1beta2 makes structurally required (the
//! template references) is checked by admission, which reports it at the paths Cluster
//! API's webhooks use. Integer `*Seconds` become [`Duration`]s, `rollout.strategy`
//! becomes the strategy JSON the engine writes, a contract-versioned reference keeps
//! its group (`group/`, no version), and the external patch's renamed extensions map
//! onto the one patch type the engine reads.

use serde_json::{Map, Value, json};

use crate::duration::Duration;
use crate::model::{
    Cluster, ClusterClass, ClusterNetwork, ControlPlaneClass, ControlPlaneTopology, HealthCheck,
    HealthCheckOverride, InfrastructureClass, MachineDeploymentClass, MachineDeploymentTopology,
    MachinePoolClass, MachinePoolTopology, MachineSettings, Metadata, ObjectRef, Topology,
    UnhealthyCondition, Variable, VariableDefinition, WireVersion,
};
use crate::{v1beta1, v1beta2};

fn metadata(m: Option<&v1beta2::Metadata>) -> Metadata {
    m.map(|m| Metadata {
        labels: m.labels.clone().unwrap_or_default(),
        annotations: m.annotations.clone().unwrap_or_default(),
    })
    .unwrap_or_default()
}

fn template(r: &v1beta2::TemplateReference) -> ObjectRef {
    ObjectRef {
        api_version: r.api_version.clone(),
        kind: r.kind.clone(),
        namespace: String::new(),
        name: r.name.clone(),
    }
}

fn contract_ref(r: &v1beta2::ContractVersionedObjectReference) -> ObjectRef {
    ObjectRef {
        api_version: format!("{}/", r.api_group),
        kind: r.kind.clone(),
        namespace: String::new(),
        name: r.name.clone(),
    }
}

fn seconds(s: Option<v1beta2::Seconds>) -> Option<Duration> {
    s.map(|s| Duration::from_secs(i64::from(s.0)))
}

fn naming(n: Option<&v1beta2::Naming>) -> Option<String> {
    n.and_then(|n| n.template.clone())
}

fn readiness_gates(gates: Option<&Vec<v1beta2::ReadinessGate>>) -> Option<Vec<Value>> {
    gates.map(|gates| {
        gates
            .iter()
            .map(|g| {
                let mut gate = json!({"conditionType": g.condition_type});
                if let Some(polarity) = &g.polarity {
                    gate["polarity"] = json!(polarity);
                }
                gate
            })
            .collect()
    })
}

fn machine(
    deletion: Option<&v1beta2::Deletion>,
    gates: Option<&Vec<v1beta2::ReadinessGate>>,
) -> MachineSettings {
    let d = deletion.cloned().unwrap_or_default();
    MachineSettings {
        node_drain_timeout: seconds(d.node_drain_timeout_seconds),
        node_volume_detach_timeout: seconds(d.node_volume_detach_timeout_seconds),
        node_deletion_timeout: seconds(d.node_deletion_timeout_seconds),
        readiness_gates: readiness_gates(gates),
    }
}

fn conditions(list: Option<&Vec<v1beta2::UnhealthyCondition>>) -> Option<Vec<UnhealthyCondition>> {
    list.map(|list| {
        list.iter()
            .map(|c| UnhealthyCondition {
                r#type: c.r#type.clone(),
                status: c.status.clone(),
                timeout: seconds(c.timeout_seconds).unwrap_or_default(),
            })
            .collect()
    })
}

/// The health check `checks` and `remediation` define; zero when neither says anything.
fn health_check(
    checks: Option<&v1beta2::HealthCheckChecks>,
    remediation: Option<&v1beta2::HealthCheckRemediation>,
) -> HealthCheck {
    let checks = checks.cloned().unwrap_or_default();
    let remediation = remediation.cloned().unwrap_or_default();
    let trigger = remediation.trigger_if.unwrap_or_default();
    HealthCheck {
        unhealthy_node_conditions: conditions(checks.unhealthy_node_conditions.as_ref()),
        unhealthy_machine_conditions: conditions(checks.unhealthy_machine_conditions.as_ref()),
        max_unhealthy: trigger.unhealthy_less_than_or_equal_to,
        unhealthy_range: trigger.unhealthy_in_range,
        node_startup_timeout: seconds(checks.node_startup_timeout_seconds),
        remediation_template: remediation
            .template_ref
            .as_ref()
            .filter(|r| r.is_defined())
            .map(template),
        max_in_flight: remediation.max_in_flight,
    }
}

/// A class's health check, when it defines one (Cluster API's `IsDefined`).
fn class_health_check<R>(h: Option<&v1beta2::HealthCheck<R>>) -> Option<HealthCheck>
where
    for<'r> v1beta2::HealthCheckRemediation: From<&'r R>,
{
    h.map(|h| {
        let remediation = h
            .remediation
            .as_ref()
            .map(v1beta2::HealthCheckRemediation::from);
        health_check(h.checks.as_ref(), remediation.as_ref())
    })
    .filter(|h| !h.is_zero())
}

fn health_check_override<R>(h: &v1beta2::TopologyHealthCheck<R>) -> HealthCheckOverride
where
    for<'r> v1beta2::HealthCheckRemediation: From<&'r R>,
{
    let remediation = h
        .remediation
        .as_ref()
        .map(v1beta2::HealthCheckRemediation::from);
    HealthCheckOverride {
        enabled: h.enabled,
        check: health_check(h.checks.as_ref(), remediation.as_ref()),
    }
}

/// A rollout strategy as the engine writes it into a MachineDeployment
/// (`{type, rollingUpdate: {maxUnavailable, maxSurge}}`, unset fields left out).
fn strategy(s: Option<&v1beta2::RolloutStrategy>) -> Option<Value> {
    let s = s?;
    let int_or_string = |v: &v1beta1::IntOrString| match v {
        v1beta1::IntOrString::Int(i) => json!(i),
        v1beta1::IntOrString::String(s) => json!(s),
    };
    let mut out = Map::new();
    if let Some(t) = &s.r#type {
        out.insert("type".into(), json!(t));
    }
    if let Some(r) = &s.rolling_update {
        let mut rolling = Map::new();
        if let Some(v) = &r.max_unavailable {
            rolling.insert("maxUnavailable".into(), int_or_string(v));
        }
        if let Some(v) = &r.max_surge {
            rolling.insert("maxSurge".into(), int_or_string(v));
        }
        out.insert("rollingUpdate".into(), Value::Object(rolling));
    }
    Some(Value::Object(out))
}

fn variables(vars: Option<&Vec<v1beta2::ClusterVariable>>) -> Vec<Variable> {
    vars.iter()
        .flat_map(|vars| vars.iter())
        .map(|v| Variable {
            name: v.name.clone(),
            definition_from: None,
            value: v.value.clone(),
        })
        .collect()
}

fn overrides(o: Option<&v1beta2::VariableOverrides>) -> Vec<Variable> {
    variables(o.and_then(|o| o.overrides.as_ref()))
}

fn patch(p: &v1beta2::ClusterClassPatch) -> v1beta1::ClusterClassPatch {
    v1beta1::ClusterClassPatch {
        name: p.name.clone(),
        description: p.description.clone(),
        enabled_if: p.enabled_if.clone(),
        definitions: p.definitions.clone(),
        external: p
            .external
            .as_ref()
            .map(|e| v1beta1::ExternalPatchDefinition {
                generate_extension: e.generate_patches_extension.clone(),
                validate_extension: e.validate_topology_extension.clone(),
                discover_variables_extension: e.discover_variables_extension.clone(),
                settings: e.settings.clone(),
            }),
    }
}

impl ClusterClass {
    /// Converts a v1beta2 ClusterClass. Missing template references become empty
    /// references, which admission refuses with Cluster API's paths and texts.
    pub fn from_v1beta2(cc: &v1beta2::ClusterClass) -> Self {
        let spec = &cc.spec;
        let cp = &spec.control_plane;
        let workers = spec.workers.clone().unwrap_or_default();
        let machine_deployments = workers
            .machine_deployments
            .iter()
            .flatten()
            .map(|md| MachineDeploymentClass {
                class: md.class.clone(),
                metadata: metadata(md.metadata.as_ref()),
                bootstrap: template(&md.bootstrap.template_ref),
                infrastructure: template(&md.infrastructure.template_ref),
                health_check: class_health_check(md.health_check.as_ref()),
                naming: naming(md.naming.as_ref()),
                failure_domain: md.failure_domain.clone(),
                min_ready_seconds: md.min_ready_seconds.map(|s| s.0),
                strategy: strategy(md.rollout.as_ref().and_then(|r| r.strategy.as_ref())),
                deletion_order: md.deletion.as_ref().and_then(|d| d.order.clone()),
                machine: machine(
                    md.deletion.as_ref().map(|d| d.timeouts()).as_ref(),
                    md.readiness_gates.as_ref(),
                ),
            })
            .collect();
        let machine_pools = workers
            .machine_pools
            .iter()
            .flatten()
            .map(|mp| MachinePoolClass {
                class: mp.class.clone(),
                metadata: metadata(mp.metadata.as_ref()),
                bootstrap: template(&mp.bootstrap.template_ref),
                infrastructure: template(&mp.infrastructure.template_ref),
                naming: naming(mp.naming.as_ref()),
                failure_domains: mp.failure_domains.clone(),
                min_ready_seconds: mp.min_ready_seconds.map(|s| s.0),
                machine: machine(mp.deletion.as_ref(), None),
            })
            .collect();
        ClusterClass {
            name: cc.metadata.name.clone(),
            namespace: cc.metadata.namespace.clone(),
            uid: cc.metadata.uid.clone(),
            // v1beta2 requires the InfrastructureCluster template; an empty one is
            // kept so that admission reports it.
            infrastructure: Some(InfrastructureClass {
                template: template(&spec.infrastructure.template_ref),
                naming: naming(spec.infrastructure.naming.as_ref()),
            }),
            control_plane: ControlPlaneClass {
                metadata: metadata(cp.metadata.as_ref()),
                template: template(&cp.template_ref),
                machine_infrastructure: cp
                    .machine_infrastructure
                    .as_ref()
                    .filter(|m| m.template_ref.is_defined())
                    .map(|m| template(&m.template_ref)),
                health_check: class_health_check(cp.health_check.as_ref()),
                naming: naming(cp.naming.as_ref()),
                machine: machine(cp.deletion.as_ref(), cp.readiness_gates.as_ref()),
            },
            machine_deployments,
            machine_pools,
            variables: spec
                .variables
                .iter()
                .flatten()
                .map(|v| VariableDefinition {
                    name: v.name.clone(),
                    required: v.required.unwrap_or(false),
                    schema: v.schema.open_api_v3_schema.clone(),
                    metadata: metadata(v.deprecated_v1beta1_metadata.as_ref()),
                })
                .collect(),
            patches: spec.patches.iter().flatten().map(patch).collect(),
            kubernetes_versions: spec.kubernetes_versions.clone().unwrap_or_default(),
            upgrade_plan_extension: spec
                .upgrade
                .as_ref()
                .and_then(|u| u.external.as_ref())
                .and_then(|e| e.generate_upgrade_plan_extension.clone()),
            wire: WireVersion::V1Beta2,
        }
    }
}

fn topology(t: &v1beta2::Topology) -> Topology {
    let cp = &t.control_plane;
    let workers = t.workers.clone().unwrap_or_default();
    Topology {
        class: t.class_ref.name.clone(),
        class_namespace: t.class_ref.namespace.clone().unwrap_or_default(),
        version: t.version.clone(),
        // v1beta2 moved `rolloutAfter` to the control plane and each MachineDeployment.
        rollout_after: None,
        control_plane: ControlPlaneTopology {
            metadata: metadata(cp.metadata.as_ref()),
            replicas: cp.replicas,
            health_check: cp.health_check.as_ref().map(health_check_override),
            machine: machine(cp.deletion.as_ref(), cp.readiness_gates.as_ref()),
            rollout_after: cp.rollout.as_ref().and_then(|r| r.after.clone()),
            variable_overrides: overrides(cp.variables.as_ref()),
        },
        machine_deployments: workers
            .machine_deployments
            .iter()
            .flatten()
            .map(|md| MachineDeploymentTopology {
                metadata: metadata(md.metadata.as_ref()),
                class: md.class.clone(),
                name: md.name.clone(),
                failure_domain: md.failure_domain.clone(),
                replicas: md.replicas,
                health_check: md.health_check.as_ref().map(health_check_override),
                machine: machine(
                    md.deletion.as_ref().map(|d| d.timeouts()).as_ref(),
                    md.readiness_gates.as_ref(),
                ),
                min_ready_seconds: md.min_ready_seconds.map(|s| s.0),
                strategy: strategy(md.rollout.as_ref().and_then(|r| r.strategy.as_ref())),
                deletion_order: md.deletion.as_ref().and_then(|d| d.order.clone()),
                rollout_after: md.rollout.as_ref().and_then(|r| r.after.clone()),
                variable_overrides: overrides(md.variables.as_ref()),
            })
            .collect(),
        machine_pools: workers
            .machine_pools
            .iter()
            .flatten()
            .map(|mp| MachinePoolTopology {
                metadata: metadata(mp.metadata.as_ref()),
                class: mp.class.clone(),
                name: mp.name.clone(),
                failure_domains: mp.failure_domains.clone(),
                replicas: mp.replicas,
                min_ready_seconds: mp.min_ready_seconds.map(|s| s.0),
                machine: machine(mp.deletion.as_ref(), None),
                variable_overrides: overrides(mp.variables.as_ref()),
            })
            .collect(),
        variables: variables(t.variables.as_ref()),
    }
}

impl Cluster {
    /// Converts a v1beta2 Cluster; `document` is the JSON it was read from.
    pub fn from_v1beta2(c: &v1beta2::Cluster, document: Value) -> Self {
        let spec = &c.spec;
        let network = spec.cluster_network.clone().unwrap_or_default();
        Cluster {
            name: c.metadata.name.clone(),
            namespace: c.metadata.namespace.clone(),
            uid: c.metadata.uid.clone(),
            metadata: Metadata {
                labels: c.metadata.labels.clone().unwrap_or_default(),
                annotations: c.metadata.annotations.clone().unwrap_or_default(),
            },
            paused: spec.paused.unwrap_or(false),
            infrastructure_ref: spec.infrastructure_ref.as_ref().map(contract_ref),
            control_plane_ref: spec.control_plane_ref.as_ref().map(contract_ref),
            network: ClusterNetwork {
                api_server_port: network.api_server_port,
                service_domain: network.service_domain.clone(),
                services: network.services.and_then(|s| s.cidr_blocks),
                pods: network.pods.and_then(|p| p.cidr_blocks),
            },
            topology: spec.topology.as_ref().map(topology),
            document,
            wire: WireVersion::V1Beta2,
        }
    }
}
