//! ClusterClass: template references, naming, health checks, deletion timeouts,
//! worker classes, variable metadata, external patch extensions and status.

use serde_json::Value;

use super::Context;
use super::common::{deletion_timeouts, naming};
use super::fields::{
    Object, Result, child, entry, put, take, take_nonempty_string, take_object, with_each,
    with_object,
};
use super::health;
use super::refs::{ref_to_template_ref, template_ref_to_ref};
use super::status;
use super::workers::{drop_empty_string, machine_deployment_class, machine_pool_class};

/// Converts a ClusterClass's `spec` in place.
pub(crate) fn spec(spec: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    with_object(spec, "infrastructure", path, |infra, path| {
        if ctx.to_v1beta2() {
            ref_to_template_ref(infra, path)
        } else {
            template_ref_to_ref(infra, path, ctx)
        }
    })?;
    infrastructure_naming(spec, path, ctx)?;
    with_object(spec, "controlPlane", path, |cp, path| {
        if ctx.to_v1beta2() {
            ref_to_template_ref(cp, path)?;
        } else {
            template_ref_to_ref(cp, path, ctx)?;
        }
        with_object(cp, "machineInfrastructure", path, |mi, path| {
            if ctx.to_v1beta2() {
                ref_to_template_ref(mi, path)
            } else {
                template_ref_to_ref(mi, path, ctx)
            }
        })?;
        health::convert_in(cp, path, ctx, &mut None)?;
        naming(cp, path, "namingStrategy", "naming", ctx)?;
        deletion_timeouts(cp, path, ctx)
    })?;
    with_object(spec, "workers", path, |workers, path| {
        with_each(workers, "machineDeployments", path, |class, path| {
            machine_deployment_class(class, path, ctx)
        })?;
        with_each(workers, "machinePools", path, |class, path| {
            machine_pool_class(class, path, ctx)
        })
    })?;
    with_each(spec, "variables", path, |variable, _| {
        rename_metadata(variable, ctx);
        Ok(())
    })?;
    with_each(spec, "patches", path, |patch, path| {
        if !ctx.to_v1beta2() {
            drop_empty_string(patch, "enabledIf");
        }
        with_object(patch, "external", path, |external, path| {
            external_extensions(external, path, ctx)
        })
    })?;
    if !ctx.to_v1beta2() {
        // Fields v1beta1 has no place for; the conversion-data annotation keeps them.
        spec.remove("kubernetesVersions");
        spec.remove("upgrade");
    }
    Ok(())
}

/// `spec.infrastructureNamingStrategy.template` (v1beta1) against
/// `spec.infrastructure.naming.template` (v1beta2).
fn infrastructure_naming(spec: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    if ctx.to_v1beta2() {
        if let Some(mut strategy) = take_object(spec, "infrastructureNamingStrategy", path)?
            && let Some(template) = take_nonempty_string(
                &mut strategy,
                "template",
                &child(path, "infrastructureNamingStrategy"),
            )?
        {
            put(
                spec,
                &["infrastructure", "naming", "template"],
                Value::String(template),
            );
        }
    } else {
        let infra_path = child(path, "infrastructure");
        let mut template = None;
        if let Some(Value::Object(infra)) = spec.get_mut("infrastructure")
            && let Some(mut naming) = take_object(infra, "naming", &infra_path)?
        {
            template =
                take_nonempty_string(&mut naming, "template", &child(&infra_path, "naming"))?;
            // Naming alone made the object: v1beta1 keeps naming beside it.
            if infra.is_empty() {
                spec.remove("infrastructure");
            }
        }
        if let Some(template) = template {
            put(
                spec,
                &["infrastructureNamingStrategy", "template"],
                Value::String(template),
            );
        }
    }
    Ok(())
}

/// `generateExtension` / `validateExtension` (v1beta1) against
/// `generatePatchesExtension` / `validateTopologyExtension` (v1beta2).
fn external_extensions(external: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    for (old, new) in [
        ("generateExtension", "generatePatchesExtension"),
        ("validateExtension", "validateTopologyExtension"),
    ] {
        let (from, to) = if ctx.to_v1beta2() {
            (old, new)
        } else {
            (new, old)
        };
        if let Some(name) = take_nonempty_string(external, from, path)? {
            external.insert(to.to_string(), Value::String(name));
        }
    }
    if !ctx.to_v1beta2() {
        drop_empty_string(external, "discoverVariablesExtension");
    }
    Ok(())
}

/// A variable's `metadata` (v1beta1) is `deprecatedV1Beta1Metadata` in v1beta2.
fn rename_metadata(variable: &mut Object, ctx: &Context) {
    let (from, to) = if ctx.to_v1beta2() {
        ("metadata", "deprecatedV1Beta1Metadata")
    } else {
        ("deprecatedV1Beta1Metadata", "metadata")
    };
    if let Some(metadata) = take(variable, from) {
        variable.insert(to.to_string(), metadata);
    }
}

/// Converts a ClusterClass's `status` in place.
pub(crate) fn status(status: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    with_each(status, "variables", path, |variable, path| {
        with_each(variable, "definitions", path, |definition, _| {
            rename_metadata(definition, ctx);
            Ok(())
        })
    })?;
    status::conditions(status, path, ctx, &[], &[])
}

/// Cluster API restores these v1beta2-only fields from the conversion-data annotation
/// even when the v1beta1 object changed since.
pub(crate) fn restore(converted: &mut Object, stored: &Object) {
    let Some(Value::Object(stored_spec)) = stored.get("spec") else {
        return;
    };
    for key in ["kubernetesVersions", "upgrade"] {
        if let Some(value) = stored_spec.get(key) {
            entry(converted, "spec").insert(key.to_string(), value.clone());
        }
    }
}
