//! Worker classes and worker topologies (MachineDeployments and MachinePools), shared by
//! ClusterClass and Cluster.

use serde_json::Value;

use super::Context;
use super::common::{deletion_timeouts, naming, strategy};
use super::fields::{Object, Result, child, put_nonempty, take, take_object};
use super::health;
use super::refs::{ref_to_template_ref, template_ref_to_ref};

/// A worker class's `template` (v1beta1: `metadata`, `bootstrap.ref`,
/// `infrastructure.ref`) against v1beta2's `metadata`, `bootstrap.templateRef` and
/// `infrastructure.templateRef` on the class itself.
fn worker_template(class: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    if ctx.to_v1beta2() {
        let Some(mut template) = take_object(class, "template", path)? else {
            return Ok(());
        };
        let template_path = child(path, "template");
        if let Some(metadata) = take(&mut template, "metadata") {
            class.insert("metadata".to_string(), metadata);
        }
        for key in ["bootstrap", "infrastructure"] {
            if let Some(mut holder) = take_object(&mut template, key, &template_path)? {
                ref_to_template_ref(&mut holder, &child(&template_path, key))?;
                class.insert(key.to_string(), Value::Object(holder));
            }
        }
        // Whatever else the template held stays where it was.
        put_nonempty(class, "template", template);
    } else {
        let mut template = take_object(class, "template", path)?.unwrap_or_default();
        if let Some(metadata) = take(class, "metadata") {
            template.insert("metadata".to_string(), metadata);
        }
        for key in ["bootstrap", "infrastructure"] {
            if let Some(mut holder) = take_object(class, key, path)? {
                template_ref_to_ref(&mut holder, &child(path, key), ctx)?;
                template.insert(key.to_string(), Value::Object(holder));
            }
        }
        put_nonempty(class, "template", template);
    }
    Ok(())
}

/// Strategy and health check of a MachineDeployment class or topology: v1beta2 keeps
/// the strategy's `remediation.maxInFlight` in `healthCheck.remediation`.
fn strategy_and_health(entry: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    let mut max_in_flight = None;
    if ctx.to_v1beta2() {
        strategy(entry, path, ctx, &mut max_in_flight)?;
        health::convert_in(entry, path, ctx, &mut max_in_flight)
    } else {
        health::convert_in(entry, path, ctx, &mut max_in_flight)?;
        strategy(entry, path, ctx, &mut max_in_flight)
    }
}

/// `spec.workers.machineDeployments[i]` of a ClusterClass.
pub(crate) fn machine_deployment_class(
    class: &mut Object,
    path: &str,
    ctx: &Context,
) -> Result<()> {
    worker_template(class, path, ctx)?;
    strategy_and_health(class, path, ctx)?;
    naming(class, path, "namingStrategy", "naming", ctx)?;
    deletion_timeouts(class, path, ctx)?;
    if !ctx.to_v1beta2() {
        drop_empty_string(class, "failureDomain");
    }
    Ok(())
}

/// `spec.workers.machinePools[i]` of a ClusterClass.
pub(crate) fn machine_pool_class(class: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    worker_template(class, path, ctx)?;
    naming(class, path, "namingStrategy", "naming", ctx)?;
    deletion_timeouts(class, path, ctx)
}

/// `spec.topology.workers.machineDeployments[i]` of a Cluster.
pub(crate) fn machine_deployment_topology(
    topology: &mut Object,
    path: &str,
    ctx: &Context,
) -> Result<()> {
    strategy_and_health(topology, path, ctx)?;
    deletion_timeouts(topology, path, ctx)?;
    variable_overrides(topology, path, ctx)?;
    if !ctx.to_v1beta2() {
        drop_empty_string(topology, "failureDomain");
    }
    Ok(())
}

/// `spec.topology.workers.machinePools[i]` of a Cluster.
pub(crate) fn machine_pool_topology(
    topology: &mut Object,
    path: &str,
    ctx: &Context,
) -> Result<()> {
    deletion_timeouts(topology, path, ctx)?;
    variable_overrides(topology, path, ctx)
}

/// `variables.overrides` of a control plane or worker topology.
pub(crate) fn variable_overrides(topology: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    super::fields::with_object(topology, "variables", path, |variables, path| {
        super::fields::with_each(variables, "overrides", path, |variable, path| {
            super::cluster::cluster_variable(variable, path, ctx)
        })
    })
}

/// Removes `key` when it is an empty string, as Cluster API does for optional strings
/// it writes into v1beta1.
pub(crate) fn drop_empty_string(map: &mut Object, key: &str) {
    if map.get(key).and_then(Value::as_str) == Some("") {
        map.remove(key);
    }
}
