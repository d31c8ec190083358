//! References, the way each version writes them.
//!
//! v1beta1 uses Kubernetes' `ObjectReference` everywhere. v1beta2 has two narrower
//! shapes: a ClusterClass's templates and a health check's remediation template are
//! `{apiVersion, kind, name}` (the namespace is always the object's own), and the
//! objects a Cluster or Machine points at by contract are `{apiGroup, kind, name}`: the
//! version is whatever the provider's contract says today, looked up when going back.

use serde_json::Value;

use super::Context;
use super::fields::{Object, Result, child, get_string, take_object, wrong_type};
use crate::field::FieldError;
use crate::object::GroupVersion;

const TEMPLATE_REF_KEYS: [&str; 3] = ["apiVersion", "kind", "name"];

/// The `{apiVersion, kind, name}` part of an `ObjectReference` (v1beta1 → v1beta2);
/// its namespace, uid, resourceVersion and fieldPath have no place in v1beta2.
pub(crate) fn to_template_ref(reference: Object, path: &str) -> Result<Object> {
    let mut out = Object::new();
    for key in TEMPLATE_REF_KEYS {
        if let Some(value) = get_string(&reference, key, path)? {
            out.insert(key.to_string(), Value::String(value.to_string()));
        }
    }
    Ok(out)
}

/// A `{apiVersion, kind, name}` reference as an `ObjectReference` in the object's
/// namespace (v1beta2 → v1beta1), as Cluster API fills it in.
pub(crate) fn from_template_ref(reference: Object, path: &str, ctx: &Context) -> Result<Object> {
    let mut out = to_template_ref(reference, path)?;
    if !ctx.namespace.is_empty() {
        out.insert(
            "namespace".to_string(),
            Value::String(ctx.namespace.clone()),
        );
    }
    Ok(out)
}

/// `container.ref` (v1beta1) becomes `container.templateRef` (v1beta2).
pub(crate) fn ref_to_template_ref(container: &mut Object, path: &str) -> Result<()> {
    if let Some(reference) = take_object(container, "ref", path)? {
        let converted = to_template_ref(reference, &child(path, "ref"))?;
        container.insert("templateRef".to_string(), Value::Object(converted));
    }
    Ok(())
}

/// `container.templateRef` (v1beta2) becomes `container.ref` (v1beta1).
pub(crate) fn template_ref_to_ref(container: &mut Object, path: &str, ctx: &Context) -> Result<()> {
    if let Some(reference) = take_object(container, "templateRef", path)? {
        let converted = from_template_ref(reference, &child(path, "templateRef"), ctx)?;
        container.insert("ref".to_string(), Value::Object(converted));
    }
    Ok(())
}

/// An `ObjectReference` as a contract reference `{apiGroup, kind, name}`.
pub(crate) fn to_contract_ref(reference: Object, path: &str) -> Result<Object> {
    let mut out = Object::new();
    if let Some(api_version) = get_string(&reference, "apiVersion", path)? {
        let group_version = GroupVersion::parse(api_version).map_err(|e| {
            FieldError::invalid(
                child(path, "apiVersion"),
                api_version,
                format!("failed to convert object: failed to parse apiVersion: {e}"),
            )
        })?;
        out.insert("apiGroup".to_string(), Value::String(group_version.group));
    }
    for key in ["kind", "name"] {
        if let Some(value) = get_string(&reference, key, path)? {
            out.insert(key.to_string(), Value::String(value.to_string()));
        }
    }
    Ok(out)
}

/// A contract reference as an `ObjectReference`: the apiVersion is the one the
/// context knows for the group and kind (Cluster API asks the CRD's contract label),
/// the namespace the object's own.
pub(crate) fn from_contract_ref(reference: Object, path: &str, ctx: &Context) -> Result<Object> {
    let group = get_string(&reference, "apiGroup", path)?.unwrap_or("");
    let kind = get_string(&reference, "kind", path)?.unwrap_or("");
    let api_version = (ctx.api_version_of)(group, kind).ok_or_else(|| {
        FieldError::invalid(
            path,
            &format!("{kind}.{group}"),
            format!(
                "failed to convert object: the apiVersion of {kind}.{group} is not known (no object of that group and kind among the inputs)"
            ),
        )
    })?;
    let mut out = Object::new();
    out.insert("apiVersion".to_string(), Value::String(api_version));
    out.insert("kind".to_string(), Value::String(kind.to_string()));
    if let Some(name) = get_string(&reference, "name", path)? {
        out.insert("name".to_string(), Value::String(name.to_string()));
    }
    if !ctx.namespace.is_empty() {
        out.insert(
            "namespace".to_string(),
            Value::String(ctx.namespace.clone()),
        );
    }
    Ok(out)
}

/// Converts the contract reference at `key` of `map` in place, one way or the other.
pub(crate) fn convert_contract_ref_at(
    map: &mut Object,
    key: &str,
    path: &str,
    ctx: &Context,
) -> Result<()> {
    let at = child(path, key);
    match map.get_mut(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(reference)) => {
            let reference = std::mem::take(reference);
            let converted = if ctx.to_v1beta2() {
                to_contract_ref(reference, &at)?
            } else if reference.is_empty() {
                // An unset v1beta2 reference is no reference at all in v1beta1.
                map.remove(key);
                return Ok(());
            } else {
                from_contract_ref(reference, &at, ctx)?
            };
            map.insert(key.to_string(), Value::Object(converted));
            Ok(())
        }
        Some(other) => Err(wrong_type(&at, other, "an object")),
    }
}
