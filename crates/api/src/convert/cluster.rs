//! Cluster: contract references, the topology's class reference, health checks,
//! deletion timeouts and rollout strategies of its control plane and workers, and
//! status (conditions, initialization, failure domains).

use serde_json::Value;

use super::Context;
use super::common::deletion_timeouts;
use super::fields::{
    Object, Result, child, item, object_mut, put, take, take_nonempty_string, take_object,
    with_each, with_object, wrong_type,
};
use super::health;
use super::refs::convert_contract_ref_at;
use super::status;
use super::workers::{machine_deployment_topology, machine_pool_topology, variable_overrides};

/// Converts a Cluster's `spec` in place.
pub(crate) fn spec(spec: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    convert_contract_ref_at(spec, "infrastructureRef", path, ctx)?;
    convert_contract_ref_at(spec, "controlPlaneRef", path, ctx)?;
    if !ctx.to_v1beta2()
        && let Some(Value::Object(network)) = spec.get_mut("clusterNetwork")
        && network.get("apiServerPort").and_then(Value::as_i64) == Some(0)
    {
        network.remove("apiServerPort");
    }
    with_object(spec, "topology", path, |topology, path| {
        class_ref(topology, path, ctx)?;
        if ctx.to_v1beta2() {
            // Never implemented, and gone from v1beta2.
            topology.remove("rolloutAfter");
        }
        with_object(topology, "controlPlane", path, |cp, path| {
            health::convert_in(cp, path, ctx, &mut None)?;
            deletion_timeouts(cp, path, ctx)?;
            variable_overrides(cp, path, ctx)
        })?;
        with_object(topology, "workers", path, |workers, path| {
            with_each(workers, "machineDeployments", path, |md, path| {
                machine_deployment_topology(md, path, ctx)
            })?;
            with_each(workers, "machinePools", path, |mp, path| {
                machine_pool_topology(mp, path, ctx)
            })
        })?;
        with_each(topology, "variables", path, |variable, path| {
            cluster_variable(variable, path, ctx)
        })
    })
}

/// `class` / `classNamespace` (v1beta1) against `classRef.name` / `classRef.namespace`.
fn class_ref(topology: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    if ctx.to_v1beta2() {
        for (old, new) in [("class", "name"), ("classNamespace", "namespace")] {
            if let Some(value) = take_nonempty_string(topology, old, path)? {
                put(topology, &["classRef", new], Value::String(value));
            }
        }
    } else if let Some(mut class_ref) = take_object(topology, "classRef", path)? {
        let class_ref_path = child(path, "classRef");
        for (old, new) in [("class", "name"), ("classNamespace", "namespace")] {
            if let Some(value) = take_nonempty_string(&mut class_ref, new, &class_ref_path)? {
                topology.insert(old.to_string(), Value::String(value));
            }
        }
    }
    Ok(())
}

/// A Cluster variable: v1beta2 has no `definitionFrom` (deprecated since v1.8 and
/// refused when set).
pub(crate) fn cluster_variable(variable: &mut Object, _path: &str, ctx: &Context) -> Result<()> {
    if ctx.to_v1beta2() {
        variable.remove("definitionFrom");
    }
    Ok(())
}

/// Converts a Cluster's `status` in place.
pub(crate) fn status(status: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    status::conditions(
        status,
        path,
        ctx,
        &["failureReason", "failureMessage"],
        &["controlPlane", "workers"],
    )?;
    status::initialization(
        status,
        path,
        ctx,
        &[
            ("controlPlaneReady", "controlPlaneInitialized"),
            ("infrastructureReady", "infrastructureProvisioned"),
        ],
    )?;
    failure_domains(status, path, ctx)
}

/// v1beta1's map of failure domains by name against v1beta2's list sorted by name.
fn failure_domains(status: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    let domains_path = child(path, "failureDomains");
    let Some(domains) = take(status, "failureDomains") else {
        return Ok(());
    };
    let converted = if ctx.to_v1beta2() {
        let Value::Object(by_name) = domains else {
            return Err(wrong_type(&domains_path, &domains, "an object"));
        };
        // The map is sorted by name already, as Cluster API sorts the list.
        let mut list = Vec::with_capacity(by_name.len());
        for (name, mut spec) in by_name {
            let at = child(&domains_path, &name);
            let spec_map = object_mut(&mut spec, &at)?;
            let mut domain = Object::new();
            domain.insert("name".to_string(), Value::String(name));
            let control_plane = take(spec_map, "controlPlane").unwrap_or(Value::Bool(false));
            domain.insert("controlPlane".to_string(), control_plane);
            domain.extend(std::mem::take(spec_map));
            list.push(Value::Object(domain));
        }
        Value::Array(list)
    } else {
        let Value::Array(list) = domains else {
            return Err(wrong_type(&domains_path, &domains, "a list"));
        };
        let mut by_name = Object::new();
        for (i, mut domain) in list.into_iter().enumerate() {
            let at = item(&domains_path, i);
            let map = object_mut(&mut domain, &at)?;
            let name = match take(map, "name") {
                Some(Value::String(name)) => name,
                Some(other) => return Err(wrong_type(&child(&at, "name"), &other, "a string")),
                None => String::new(),
            };
            if take(map, "controlPlane") == Some(Value::Bool(true)) {
                map.insert("controlPlane".to_string(), Value::Bool(true));
            }
            by_name.insert(name, domain);
        }
        Value::Object(by_name)
    };
    status.insert("failureDomains".to_string(), converted);
    Ok(())
}
