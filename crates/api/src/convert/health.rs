//! Health checks: v1beta1's flat `machineHealthCheck` (and a MachineHealthCheck's spec)
//! against v1beta2's `healthCheck` of `checks` and `remediation`.
//!
//! | v1beta1                      | v1beta2                                          |
//! |------------------------------|--------------------------------------------------|
//! | `enable` (topology)          | `enabled`                                        |
//! | `unhealthyConditions[]`      | `checks.unhealthyNodeConditions[]`               |
//! | `unhealthyMachineConditions` | `checks.unhealthyMachineConditions[]`            |
//! | `…[].timeout` (duration)     | `…[].timeoutSeconds`                             |
//! | `nodeStartupTimeout`         | `checks.nodeStartupTimeoutSeconds`               |
//! | `maxUnhealthy`               | `remediation.triggerIf.unhealthyLessThanOrEqualTo` |
//! | `unhealthyRange`             | `remediation.triggerIf.unhealthyInRange`         |
//! | `remediationTemplate`        | `remediation.templateRef`                        |

use serde_json::Value;

use super::Context;
use super::fields::{
    Object, Result, child, duration_to_seconds, item, object_mut, put_nonempty,
    seconds_to_duration, take, take_array, take_nonempty_string, take_object,
};
use super::refs::{from_template_ref, to_template_ref};

const CONDITION_LISTS: [(&str, &str); 2] = [
    ("unhealthyConditions", "unhealthyNodeConditions"),
    ("unhealthyMachineConditions", "unhealthyMachineConditions"),
];

/// Takes the v1beta1 health check fields out of `src` and returns them in v1beta2's
/// shape (`enabled`, `checks`, `remediation`); fields it does not know stay in `src`.
pub(crate) fn to_v1beta2(src: &mut Object, from: &str, to: &str) -> Result<Object> {
    let mut out = Object::new();
    if let Some(enable) = take(src, "enable") {
        out.insert("enabled".to_string(), enable);
    }
    let checks_path = child(to, "checks");
    let mut checks = Object::new();
    for (old, new) in CONDITION_LISTS {
        if let Some(conditions) = take_array(src, old, from)? {
            let list_from = child(from, old);
            let list_to = child(&checks_path, new);
            let mut converted = Vec::with_capacity(conditions.len());
            for (i, mut condition) in conditions.into_iter().enumerate() {
                let at = item(&list_from, i);
                let map = object_mut(&mut condition, &at)?;
                let timeout = take(map, "timeout").unwrap_or(Value::String("0s".into()));
                let seconds = duration_to_seconds(
                    &timeout,
                    &child(&at, "timeout"),
                    &child(&item(&list_to, i), "timeoutSeconds"),
                )?;
                map.insert("timeoutSeconds".to_string(), seconds);
                converted.push(condition);
            }
            checks.insert(new.to_string(), Value::Array(converted));
        }
    }
    if let Some(timeout) = take(src, "nodeStartupTimeout") {
        let seconds = duration_to_seconds(
            &timeout,
            &child(from, "nodeStartupTimeout"),
            &child(&checks_path, "nodeStartupTimeoutSeconds"),
        )?;
        checks.insert("nodeStartupTimeoutSeconds".to_string(), seconds);
    }
    put_nonempty(&mut out, "checks", checks);

    let mut remediation = Object::new();
    let mut trigger_if = Object::new();
    if let Some(max) = take(src, "maxUnhealthy") {
        trigger_if.insert("unhealthyLessThanOrEqualTo".to_string(), max);
    }
    if let Some(range) = take_nonempty_string(src, "unhealthyRange", from)? {
        trigger_if.insert("unhealthyInRange".to_string(), Value::String(range));
    }
    put_nonempty(&mut remediation, "triggerIf", trigger_if);
    if let Some(template) = take_object(src, "remediationTemplate", from)? {
        let reference = to_template_ref(template, &child(from, "remediationTemplate"))?;
        remediation.insert("templateRef".to_string(), Value::Object(reference));
    }
    put_nonempty(&mut out, "remediation", remediation);
    Ok(out)
}

/// Takes v1beta2's `enabled`, `checks` and `remediation` out of `src` and returns them
/// in v1beta1's flat shape. `remediation.maxInFlight` is the caller's to take first
/// (a MachineDeployment keeps it in its strategy).
pub(crate) fn to_v1beta1(src: &mut Object, from: &str, ctx: &Context) -> Result<Object> {
    let mut out = Object::new();
    if let Some(enabled) = take(src, "enabled") {
        out.insert("enable".to_string(), enabled);
    }
    if let Some(mut checks) = take_object(src, "checks", from)? {
        let checks_path = child(from, "checks");
        for (old, new) in CONDITION_LISTS {
            if let Some(conditions) = take_array(&mut checks, new, &checks_path)? {
                let list_from = child(&checks_path, new);
                let mut converted = Vec::with_capacity(conditions.len());
                for (i, mut condition) in conditions.into_iter().enumerate() {
                    let at = item(&list_from, i);
                    let map = object_mut(&mut condition, &at)?;
                    let seconds = take(map, "timeoutSeconds").unwrap_or(Value::from(0));
                    let timeout = seconds_to_duration(&seconds, &child(&at, "timeoutSeconds"))?;
                    map.insert("timeout".to_string(), timeout);
                    converted.push(condition);
                }
                out.insert(old.to_string(), Value::Array(converted));
            }
        }
        if let Some(seconds) = take(&mut checks, "nodeStartupTimeoutSeconds") {
            let timeout =
                seconds_to_duration(&seconds, &child(&checks_path, "nodeStartupTimeoutSeconds"))?;
            out.insert("nodeStartupTimeout".to_string(), timeout);
        }
    }
    if let Some(mut remediation) = take_object(src, "remediation", from)? {
        let remediation_path = child(from, "remediation");
        if let Some(mut trigger_if) = take_object(&mut remediation, "triggerIf", &remediation_path)?
        {
            let trigger_path = child(&remediation_path, "triggerIf");
            if let Some(max) = take(&mut trigger_if, "unhealthyLessThanOrEqualTo") {
                out.insert("maxUnhealthy".to_string(), max);
            }
            if let Some(range) =
                take_nonempty_string(&mut trigger_if, "unhealthyInRange", &trigger_path)?
            {
                out.insert("unhealthyRange".to_string(), Value::String(range));
            }
        }
        if let Some(template) = take_object(&mut remediation, "templateRef", &remediation_path)?
            && !template.is_empty()
        {
            let reference =
                from_template_ref(template, &child(&remediation_path, "templateRef"), ctx)?;
            out.insert("remediationTemplate".to_string(), Value::Object(reference));
        }
    }
    Ok(out)
}

/// Converts the health check at `old_key` (v1beta1) / `new_key` (v1beta2) of a class or
/// topology entry in place. `max_in_flight` receives v1beta2's
/// `healthCheck.remediation.maxInFlight` (MachineDeployments keep it in their strategy
/// in v1beta1) and is put there when converting up.
pub(crate) fn convert_in(
    entry: &mut Object,
    path: &str,
    ctx: &Context,
    max_in_flight: &mut Option<Value>,
) -> Result<()> {
    if ctx.to_v1beta2() {
        let mut health = Object::new();
        if let Some(mut mhc) = take_object(entry, "machineHealthCheck", path)? {
            health = to_v1beta2(
                &mut mhc,
                &child(path, "machineHealthCheck"),
                &child(path, "healthCheck"),
            )?;
            // Fields neither version names move along unchanged.
            health.extend(mhc);
        }
        if let Some(max) = max_in_flight.take() {
            super::fields::put(&mut health, &["remediation", "maxInFlight"], max);
        }
        put_nonempty(entry, "healthCheck", health);
    } else if let Some(mut health) = take_object(entry, "healthCheck", path)? {
        let health_path = child(path, "healthCheck");
        if let Some(Value::Object(remediation)) = health.get_mut("remediation") {
            *max_in_flight = take(remediation, "maxInFlight");
        }
        let mut mhc = to_v1beta1(&mut health, &health_path, ctx)?;
        mhc.extend(health);
        put_nonempty(entry, "machineHealthCheck", mhc);
    }
    Ok(())
}
