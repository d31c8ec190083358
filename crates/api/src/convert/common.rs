//! Pieces several kinds share: machine deletion timeouts, naming templates and the
//! MachineDeployment rollout strategy.

use serde_json::Value;

use super::Context;
use super::fields::{
    Object, Result, child, entry, move_duration, move_seconds, put, put_nonempty, take,
    take_nonempty_string, take_object,
};

/// v1beta1's timeouts and the `deletion.*Seconds` fields v1beta2 keeps them in.
const TIMEOUTS: [(&str, &str); 3] = [
    ("nodeDrainTimeout", "nodeDrainTimeoutSeconds"),
    ("nodeVolumeDetachTimeout", "nodeVolumeDetachTimeoutSeconds"),
    ("nodeDeletionTimeout", "nodeDeletionTimeoutSeconds"),
];

/// `nodeDrainTimeout` & co. (durations) against `deletion.nodeDrainTimeoutSeconds` & co.
/// Going down, the rest of `deletion` (its `order`) is the caller's to have taken.
pub(crate) fn deletion_timeouts(map: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    if ctx.to_v1beta2() {
        let deletion_path = child(path, "deletion");
        let mut deletion = take_object(map, "deletion", path)?.unwrap_or_default();
        for (old, new) in TIMEOUTS {
            move_duration(map, old, &mut deletion, new, path, &deletion_path)?;
        }
        put_nonempty(map, "deletion", deletion);
    } else if let Some(mut deletion) = take_object(map, "deletion", path)? {
        let deletion_path = child(path, "deletion");
        for (old, new) in TIMEOUTS {
            move_seconds(&mut deletion, new, map, old, &deletion_path)?;
        }
        put_nonempty(map, "deletion", deletion);
    }
    Ok(())
}

/// `old.template` (v1beta1, a pointer that may be empty) against `new.template`
/// (v1beta2, where an empty template is no naming at all).
pub(crate) fn naming(
    map: &mut Object,
    path: &str,
    old: &str,
    new: &str,
    ctx: &Context,
) -> Result<()> {
    let (from, to) = if ctx.to_v1beta2() {
        (old, new)
    } else {
        (new, old)
    };
    if let Some(mut naming) = take_object(map, from, path)?
        && let Some(template) = take_nonempty_string(&mut naming, "template", &child(path, from))?
    {
        put(map, &[to, "template"], Value::String(template));
    }
    Ok(())
}

/// A MachineDeployment's v1beta1 `strategy` against v1beta2's `rollout.strategy`,
/// `deletion.order` and the remediation's `maxInFlight`, which the caller places (in
/// `healthCheck.remediation` of a class or topology, in `remediation` of the object)
/// and hands back when converting down.
pub(crate) fn strategy(
    map: &mut Object,
    path: &str,
    ctx: &Context,
    max_in_flight: &mut Option<Value>,
) -> Result<()> {
    if ctx.to_v1beta2() {
        let Some(mut strategy) = take_object(map, "strategy", path)? else {
            return Ok(());
        };
        let strategy_path = child(path, "strategy");
        let mut rollout_strategy = Object::new();
        if let Some(kind) = take(&mut strategy, "type") {
            rollout_strategy.insert("type".to_string(), kind);
        }
        if let Some(mut rolling) = take_object(&mut strategy, "rollingUpdate", &strategy_path)? {
            let mut rolling_out = Object::new();
            for key in ["maxUnavailable", "maxSurge"] {
                if let Some(value) = take(&mut rolling, key) {
                    rolling_out.insert(key.to_string(), value);
                }
            }
            put_nonempty(&mut rollout_strategy, "rollingUpdate", rolling_out);
            if let Some(policy) = take(&mut rolling, "deletePolicy") {
                entry(map, "deletion").insert("order".to_string(), policy);
            }
        }
        if let Some(mut remediation) = take_object(&mut strategy, "remediation", &strategy_path)? {
            *max_in_flight = take(&mut remediation, "maxInFlight");
        }
        if !rollout_strategy.is_empty() {
            entry(map, "rollout").insert("strategy".to_string(), Value::Object(rollout_strategy));
        }
    } else {
        let mut strategy = Object::new();
        if let Some(Value::Object(rollout)) = map.get_mut("rollout") {
            let rollout_path = child(path, "rollout");
            if let Some(mut rollout_strategy) = take_object(rollout, "strategy", &rollout_path)? {
                let rollout_strategy_path = child(&rollout_path, "strategy");
                if let Some(kind) = take(&mut rollout_strategy, "type") {
                    strategy.insert("type".to_string(), kind);
                }
                if let Some(rolling) = take_object(
                    &mut rollout_strategy,
                    "rollingUpdate",
                    &rollout_strategy_path,
                )? {
                    put_nonempty(&mut strategy, "rollingUpdate", rolling);
                }
            }
            if rollout.is_empty() {
                map.remove("rollout");
            }
        }
        if let Some(Value::Object(deletion)) = map.get_mut("deletion")
            && let Some(order) = take(deletion, "order")
        {
            put(&mut strategy, &["rollingUpdate", "deletePolicy"], order);
            if deletion.is_empty() {
                map.remove("deletion");
            }
        }
        if let Some(max) = max_in_flight.take() {
            put(&mut strategy, &["remediation", "maxInFlight"], max);
        }
        if !strategy.is_empty() {
            map.insert("strategy".to_string(), Value::Object(strategy));
        }
    }
    Ok(())
}
