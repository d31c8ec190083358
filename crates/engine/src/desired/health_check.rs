//! MachineHealthChecks for the control plane and for MachineDeployments.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use topograph_api::duration::Duration;
use topograph_api::model::{HealthCheck, HealthCheckOverride, IntOrString};
use topograph_api::object::{ObjectExt, object_of, string_map_value};

use super::Scope;
use crate::labels;
use crate::wire::{self, ref_value};

/// What the MachineHealthCheck webhook defaults `nodeStartupTimeout` to; applied here
/// too so the desired object never differs from the stored one by a default.
const DEFAULT_NODE_STARTUP_TIMEOUT_SECS: i64 = 600;
/// What the webhook defaults `maxUnhealthy` to.
const DEFAULT_MAX_UNHEALTHY: &str = "100%";

/// The health check to create, if any: a topology definition replaces the class's as a
/// whole; `enable: false` in the topology turns it off. A definition that only holds
/// the switch does not count as one.
pub(crate) fn effective<'a>(
    class_check: Option<&'a HealthCheck>,
    topology: Option<&'a HealthCheckOverride>,
) -> Option<&'a HealthCheck> {
    if topology.and_then(|t| t.enabled) == Some(false) {
        return None;
    }
    topology
        .map(|t| &t.check)
        .filter(|c| !c.is_zero())
        .or(class_check.filter(|c| !c.is_zero()))
}

/// A MachineHealthCheck named like its target, selecting machines by `selector`.
pub(crate) fn build(
    scope: &Scope<'_>,
    target: &Value,
    selector: BTreeMap<String, String>,
    check: &HealthCheck,
) -> Value {
    let namespace = target.namespace();
    let mut spec = Map::new();
    spec.insert("clusterName".into(), json!(scope.cluster.name));
    spec.insert(
        "selector".into(),
        object_of([("matchLabels", string_map_value(&selector))]),
    );
    for (field, conditions) in [
        ("unhealthyConditions", &check.unhealthy_node_conditions),
        (
            "unhealthyMachineConditions",
            &check.unhealthy_machine_conditions,
        ),
    ] {
        if let Some(conditions) = conditions.as_ref().filter(|c| !c.is_empty()) {
            spec.insert(field.into(), json!(conditions));
        }
    }
    let max_unhealthy = check
        .max_unhealthy
        .clone()
        .unwrap_or_else(|| IntOrString::String(DEFAULT_MAX_UNHEALTHY.to_string()));
    spec.insert("maxUnhealthy".into(), json!(max_unhealthy));
    if let Some(range) = &check.unhealthy_range {
        spec.insert("unhealthyRange".into(), json!(range));
    }
    let startup = check
        .node_startup_timeout
        .unwrap_or_else(|| Duration::from_secs(DEFAULT_NODE_STARTUP_TIMEOUT_SECS));
    spec.insert("nodeStartupTimeout".into(), json!(startup));
    if let Some(template) = &check.remediation_template {
        let mut template = template.clone();
        if template.namespace.is_empty() {
            template.namespace = namespace.to_string();
        }
        spec.insert("remediationTemplate".into(), ref_value(&template));
    }
    let metadata = json!({
        "name": target.name(),
        "namespace": namespace,
        "labels": {
            labels::TOPOLOGY_OWNED: "",
            labels::CLUSTER_NAME: scope.cluster.name,
        },
        "ownerReferences": [wire::cluster_owner_ref(scope.cluster)],
    });
    object_of([
        ("apiVersion", json!(wire::API_VERSION)),
        ("kind", json!("MachineHealthCheck")),
        ("metadata", metadata),
        ("spec", Value::Object(spec)),
    ])
}
