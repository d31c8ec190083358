//! The objects the topology writes for workers and health: MachineDeployment,
//! MachinePool and MachineHealthCheck, with the Machine template spec they share.

use serde_json::Value;

use super::Context;
use super::common::{deletion_timeouts, naming, strategy};
use super::fields::{Object, Result, entry, put, take, with_object};
use super::health;
use super::refs::convert_contract_ref_at;
use super::status;
use super::workers::drop_empty_string;

/// `spec.template.spec`: contract references for bootstrap config and infrastructure,
/// deletion timeouts.
fn machine_spec(spec: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    with_object(spec, "bootstrap", path, |bootstrap, path| {
        convert_contract_ref_at(bootstrap, "configRef", path, ctx)
    })?;
    convert_contract_ref_at(spec, "infrastructureRef", path, ctx)?;
    deletion_timeouts(spec, path, ctx)?;
    if !ctx.to_v1beta2() {
        for key in ["version", "providerID", "failureDomain"] {
            drop_empty_string(spec, key);
        }
        // v1beta1 has no taints; the conversion-data annotation keeps them.
        spec.remove("taints");
    }
    Ok(())
}

/// `spec.minReadySeconds` (v1beta1) against `spec.template.spec.minReadySeconds`.
fn min_ready_seconds(spec: &mut Object, ctx: &Context) {
    if ctx.to_v1beta2() {
        if let Some(value) = take(spec, "minReadySeconds") {
            put(spec, &["template", "spec", "minReadySeconds"], value);
        }
    } else if let Some(Value::Object(template)) = spec.get_mut("template")
        && let Some(Value::Object(machine)) = template.get_mut("spec")
        && let Some(value) = take(machine, "minReadySeconds")
    {
        spec.insert("minReadySeconds".to_string(), value);
    }
}

fn template_spec(spec: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    with_object(spec, "template", path, |template, path| {
        with_object(template, "spec", path, |machine, path| {
            machine_spec(machine, path, ctx)
        })
    })
}

/// Converts a MachineDeployment's `spec` in place.
pub(crate) fn machine_deployment_spec(spec: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    let mut max_in_flight = None;
    if ctx.to_v1beta2() {
        strategy(spec, path, ctx, &mut max_in_flight)?;
        if let Some(max) = max_in_flight {
            put(spec, &["remediation", "maxInFlight"], max);
        }
        if let Some(after) = take(spec, "rolloutAfter") {
            entry(spec, "rollout").insert("after".to_string(), after);
        }
        // Never used by Cluster API, and gone from v1beta2.
        spec.remove("progressDeadlineSeconds");
    } else {
        if let Some(Value::Object(remediation)) = spec.get_mut("remediation") {
            max_in_flight = take(remediation, "maxInFlight");
            if remediation.is_empty() {
                spec.remove("remediation");
            }
        }
        if let Some(Value::Object(rollout)) = spec.get_mut("rollout")
            && let Some(after) = take(rollout, "after")
        {
            if rollout.is_empty() {
                spec.remove("rollout");
            }
            spec.insert("rolloutAfter".to_string(), after);
        }
        strategy(spec, path, ctx, &mut max_in_flight)?;
    }
    naming(spec, path, "machineNamingStrategy", "machineNaming", ctx)?;
    template_spec(spec, path, ctx)?;
    min_ready_seconds(spec, ctx);
    Ok(())
}

/// Converts a MachineDeployment's `status` in place.
pub(crate) fn machine_deployment_status(
    status: &mut Object,
    path: &str,
    ctx: &Context,
) -> Result<()> {
    status::conditions(
        status,
        path,
        ctx,
        &[
            "availableReplicas",
            "unavailableReplicas",
            "updatedReplicas",
            "readyReplicas",
        ],
        &["readyReplicas", "availableReplicas", "upToDateReplicas"],
    )
}

/// Converts a MachinePool's `spec` in place.
pub(crate) fn machine_pool_spec(spec: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    // The template is checked (and converted) first, so that the move below only
    // ever meets objects on its way.
    template_spec(spec, path, ctx)?;
    min_ready_seconds(spec, ctx);
    Ok(())
}

/// Converts a MachinePool's `status` in place.
pub(crate) fn machine_pool_status(status: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    status::conditions(
        status,
        path,
        ctx,
        &[
            "failureReason",
            "failureMessage",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ],
        &["readyReplicas", "availableReplicas", "upToDateReplicas"],
    )?;
    status::initialization(
        status,
        path,
        ctx,
        &[
            ("bootstrapReady", "bootstrapDataSecretCreated"),
            ("infrastructureReady", "infrastructureProvisioned"),
        ],
    )
}

/// Converts a MachineHealthCheck's `spec` in place: its health fields are the same as a
/// class's health check, at the top of the spec.
pub(crate) fn machine_health_check_spec(
    spec: &mut Object,
    path: &str,
    ctx: &Context,
) -> Result<()> {
    let converted = if ctx.to_v1beta2() {
        health::to_v1beta2(spec, path, path)?
    } else {
        health::to_v1beta1(spec, path, ctx)?
    };
    spec.extend(converted);
    Ok(())
}

/// Converts a MachineHealthCheck's `status` in place.
pub(crate) fn machine_health_check_status(
    status: &mut Object,
    path: &str,
    ctx: &Context,
) -> Result<()> {
    status::conditions(status, path, ctx, &[], &[])
}

/// Cluster API restores a Machine template's taints from the conversion-data
/// annotation even when the v1beta1 object changed since.
pub(crate) fn restore(converted: &mut Object, stored: &Object) {
    let taints = stored
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("taints"));
    if let Some(taints) = taints {
        let spec = entry(entry(entry(converted, "spec"), "template"), "spec");
        spec.insert("taints".to_string(), taints.clone());
    }
}
