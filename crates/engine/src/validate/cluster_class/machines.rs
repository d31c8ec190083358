//! Rules about how a ClusterClass's machines are rolled out and remediated: rollout
//! strategies and health checks. The definitions' rules are shared with the Cluster's
//! overrides.

use topograph_api::field::FieldError;
use topograph_api::model::{ClusterClass, HealthCheck};

use super::super::common;
use super::super::names::Names;

/// Each MachineDeployment class's rollout strategy must be valid (see [`strategy`]).
pub(super) fn rollout_strategies(
    class: &ClusterClass,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    for md in &class.machine_deployments {
        if let Some(s) = &md.strategy {
            strategy(
                s,
                &format!(
                    "spec.workers.machineDeployments[{}].{}",
                    md.class, names.strategy
                ),
                errors,
            );
        }
    }
}

/// The control plane's health check needs the class to give the control plane machines
/// (`machineInfrastructure`): it checks machines. It and each MachineDeployment class's
/// must be valid (see [`health_check`]).
pub(super) fn health_checks(class: &ClusterClass, names: &Names, errors: &mut Vec<FieldError>) {
    let cp = &class.control_plane;
    if let Some(check) = &cp.health_check {
        let path = format!("spec.controlPlane.{}", names.health_check);
        if cp.machine_infrastructure.is_none() {
            errors.push(FieldError::forbidden(
                &path,
                "can be only set if spec.controlPlane.machineInfrastructure is set",
            ));
        }
        health_check(check, &path, names, errors);
    }
    for md in &class.machine_deployments {
        if let Some(check) = &md.health_check {
            health_check(
                check,
                &format!(
                    "spec.workers.machineDeployments[{}].{}",
                    md.class, names.health_check
                ),
                names,
                errors,
            );
        }
    }
}

/// A health check definition at `path`: a node startup timeout, when set and not zero,
/// of at least 30s; `maxUnhealthy` an int or a percentage.
pub(crate) fn health_check(
    check: &HealthCheck,
    path: &str,
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    if let Some(timeout) = check.node_startup_timeout
        && timeout.as_nanos() != 0
        && timeout.as_secs() < 30
    {
        errors.push(FieldError::new(
            format!("{path}.{}", names.node_startup_timeout),
            topograph_api::ErrorType::Invalid,
            Some((names.node_startup_timeout_value)(timeout)),
            "must be at least 30s",
        ));
    }
    let limits = [
        (names.max_unhealthy, &check.max_unhealthy),
        ("remediation.maxInFlight", &check.max_in_flight),
    ];
    for (field, limit) in limits {
        if let Some(max) = limit
            && let Err(e) = common::int_or_percent(max)
        {
            let shown = match max {
                topograph_api::model::IntOrString::Int(i) => i.to_string(),
                topograph_api::model::IntOrString::String(s) => s.clone(),
            };
            errors.push(FieldError::invalid(
                format!("{path}.{field}"),
                &shown,
                format!("must be either an int or a percentage: {e}"),
            ));
        }
    }
}

/// A rollout strategy's `rollingUpdate.maxUnavailable` / `maxSurge`: each an int or a
/// percentage.
pub(crate) fn strategy(strategy: &serde_json::Value, path: &str, errors: &mut Vec<FieldError>) {
    for field in ["maxUnavailable", "maxSurge"] {
        if let Some(value) = strategy.get("rollingUpdate").and_then(|r| r.get(field))
            && let Err(e) = common::int_or_percent_json(value)
        {
            let shown = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            errors.push(FieldError::invalid(
                format!("{path}.rollingUpdate.{field}"),
                &shown,
                format!("must be either an int or a percentage: {e}"),
            ));
        }
    }
}
