//! Custom-resource writes against their CRD's structural schema, as kube-apiserver
//! handles them: the object is first decoded the API server's way (`metadata` coerced
//! to `ObjectMeta`, fields the schema does not know pruned, disallowed nulls dropped,
//! defaults applied), then validated (OpenAPI, then `x-kubernetes-validations`), and a
//! refusal is the 422 `errors.NewInvalid` builds. The schema is the one of the version
//! the object is written in. Kinds without a usable schema (built-ins, CRDs without
//! `openAPIV3Schema`) are left as they are.
//!
//! Fields the schema does not know (and keys `ObjectMeta` does not have) are pruned
//! whatever the request's `fieldValidation` says; it decides whether the write also
//! fails with kube-apiserver's strict decoding error (400, every unknown field named)
//! or earns an `unknown field "<path>"` warning for each (the default). Server-side
//! apply has refused such fields before this module sees the object.
//!
//! The store calls [`on_create`] and [`on_update`] (which patches go through) once the
//! object it is about to store is known, so this module holds the rules and the store
//! only the hook.

use crate::fields::FieldValidation;
use crate::status::{ApiError, Cause};
use crate::store::Sub;
use crate::types::{ResourceType, split_api_version};
use crate::util::json_type;
use serde_json::Value;
use std::sync::Arc;
use topograph_api::field::FieldError;
use topograph_variables::resource::ResourceSchema;

/// The fields of `ObjectMeta`: what survives kube-apiserver's decoding of `metadata`
/// into the Go struct and back.
const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The schema an object of `rt` is checked against: that of the version its
/// `apiVersion` names (the store has set and checked it by now).
fn schema_for(rt: &ResourceType, object: &Value) -> Option<Arc<ResourceSchema>> {
    let api_version = object.get("apiVersion").and_then(Value::as_str)?;
    let (_, version) = split_api_version(api_version);
    rt.schemas.get(version).cloned()
}

/// A new object, as `POST` (and seeding) stores it; `keep_status` is the store's
/// seeding mode, where a status subresource does not drop `status`.
pub(crate) fn on_create(
    rt: &ResourceType,
    name: &str,
    object: &mut Value,
    keep_status: bool,
    field_validation: FieldValidation,
) -> Result<(), ApiError> {
    // Every object's name is a DNS-1123 subdomain (a Namespace's, a label, is left to
    // its own rule), as ValidateObjectMeta requires, schema or not.
    if rt.kind != "Namespace" {
        let problems: Vec<FieldError> = topograph_variables::labels::dns1123_subdomain(name)
            .into_iter()
            .map(|message| FieldError::invalid("metadata.name", name, message))
            .collect();
        refuse(rt, name, problems)?;
    }
    string_maps(rt, object)?;
    refuse(rt, name, label_problems(object))?;
    let Some(schema) = schema_for(rt, object) else {
        return Ok(());
    };
    let unknown = decode(&schema, object);
    unknown_fields(rt, object, &unknown.fields, field_validation)?;
    // kube-apiserver's PrepareForCreate drops a status the status subresource owns
    // before validation, so such a status is never refused; the store drops it too.
    if rt.status_subresource
        && !keep_status
        && let Some(m) = object.as_object_mut()
    {
        m.remove("status");
    }
    if !unknown.checked {
        return Ok(());
    }
    refuse(rt, name, schema.validate(object, None))
}

/// The object an update, a `/status` update or a patch is about to store, and the
/// stored object it replaces (`oldSelf` of transition rules). As kube-apiserver does
/// since Kubernetes 1.30, what the update leaves unchanged is not refused again
/// (validation ratcheting), so an object stored before its CRD tightened a rule can
/// still be written elsewhere, and a status report does not re-check the rest.
pub(crate) fn on_update(
    rt: &ResourceType,
    name: &str,
    object: &mut Value,
    old: &Value,
    sub: Sub,
    field_validation: FieldValidation,
) -> Result<(), ApiError> {
    string_maps(rt, object)?;
    refuse(rt, name, label_problems(object))?;
    let Some(schema) = schema_for(rt, object) else {
        return Ok(());
    };
    let unknown = decode(&schema, object);
    unknown_fields(rt, object, &unknown.fields, field_validation)?;
    if !unknown.checked {
        return Ok(());
    }
    let errors = match sub {
        Sub::Main => schema.validate(object, Some(old)),
        Sub::Status => schema.validate_status(object, old),
    };
    refuse(rt, name, errors)
}

/// `metadata.labels` and `metadata.annotations` decode into Go's `map[string]string`:
/// anything else is refused before validation, with the decoder's words (a `null` value
/// decodes, as Go reads it into ""). Label rules are checked on strings only after this.
fn string_maps(rt: &ResourceType, object: &Value) -> Result<(), ApiError> {
    for field in ["labels", "annotations"] {
        let found = match object.pointer(&format!("/metadata/{field}")) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(map)) => map
                .values()
                .find(|v| !matches!(v, Value::String(_) | Value::Null))
                .map(|v| (v, "string")),
            Some(other) => Some((other, "map[string]string")),
        };
        if let Some((value, go_type)) = found {
            return Err(cannot_be_handled(
                rt,
                object,
                &format!(
                    "json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.{field} of type {go_type}",
                    json_type(value)
                ),
            ));
        }
    }
    Ok(())
}

/// The 400 kube-apiserver answers when a request's body does not decode into the kind.
fn cannot_be_handled(rt: &ResourceType, object: &Value, why: &str) -> ApiError {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let (_, version) = split_api_version(api_version);
    let kind = &rt.kind;
    ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: {why}"
    ))
}

/// ValidateObjectMeta's label rules, for every kind: keys are qualified names, values
/// label values (63 characters at most), each problem at `metadata.labels`.
fn label_problems(object: &Value) -> Vec<FieldError> {
    let Some(labels) = object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    for (key, value) in labels {
        for message in topograph_variables::labels::qualified_name(key) {
            problems.push(FieldError::invalid("metadata.labels", key, message));
        }
        if let Some(value) = value.as_str() {
            for message in topograph_variables::labels::label_value(value) {
                problems.push(FieldError::invalid("metadata.labels", value, message));
            }
        }
    }
    problems
}

/// What decoding found.
struct Decoded {
    /// The fields it pruned, as kube-apiserver names them (`spec.foo`, `metadata.bar`).
    fields: Vec<String>,
    /// Whether the object is to be validated: false when the schema accepts any object
    /// (the providers' kinds `crds` writes), so there is nothing to default or
    /// validate and the hot path of the embedded server stays a metadata filter.
    checked: bool,
}

/// What kube-apiserver's decoder does to a custom resource before anything else sees
/// it: `metadata` coerced, unknown fields pruned, defaults applied.
fn decode(schema: &ResourceSchema, object: &mut Value) -> Decoded {
    let mut fields = coerce_metadata(object);
    if schema.accepts_anything() {
        return Decoded {
            fields,
            checked: false,
        };
    }
    fields.extend(schema.prune_reporting(object));
    schema.default(object);
    Decoded {
        fields,
        checked: true,
    }
}

/// The request's `fieldValidation` applied to the fields decoding pruned: kube-apiserver's
/// strict decoding error, one warning per field, or nothing.
fn unknown_fields(
    rt: &ResourceType,
    object: &Value,
    fields: &[String],
    field_validation: FieldValidation,
) -> Result<(), ApiError> {
    if fields.is_empty() {
        return Ok(());
    }
    let unknown = fields.iter().map(|f| format!("unknown field \"{f}\""));
    match field_validation {
        FieldValidation::Ignore => Ok(()),
        FieldValidation::Warn => {
            unknown.for_each(crate::warnings::warn);
            Ok(())
        }
        FieldValidation::Strict => Err(cannot_be_handled(
            rt,
            object,
            &format!(
                "strict decoding error: {}",
                unknown.collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// `metadata` as it comes out of a round trip through Go's `ObjectMeta`: unknown keys
/// dropped (and answered, as `metadata.<key>`), and so are the `omitempty` ones that
/// are null or empty ("" strings, zero generation, empty maps and lists).
fn coerce_metadata(object: &mut Value) -> Vec<String> {
    let mut unknown = Vec::new();
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return unknown;
    };
    meta.retain(|k, v| {
        if !OBJECT_META_FIELDS.contains(&k.as_str()) {
            unknown.push(format!("metadata.{k}"));
            return false;
        }
        match v {
            Value::Null => false,
            Value::String(s) => !s.is_empty(),
            Value::Object(m) => !m.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Number(n) => k != "generation" || n.as_i64() != Some(0),
            Value::Bool(_) => true,
        }
    });
    unknown
}

/// The 422 for `errors`, or nothing when there are none.
fn refuse(rt: &ResourceType, name: &str, errors: Vec<FieldError>) -> Result<(), ApiError> {
    if errors.is_empty() {
        return Ok(());
    }
    let causes = errors
        .into_iter()
        .map(|e| {
            let text = e.to_string();
            let message = text
                .strip_prefix(&format!("{}: ", e.path))
                .unwrap_or(&text)
                .to_string();
            let cause = Cause {
                reason: e.error_type.reason().to_string(),
                message,
                field: e.path,
            };
            (cause, text)
        })
        .collect();
    Err(ApiError::invalid_causes(&rt.group, &rt.kind, name, causes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_keeps_what_object_meta_holds() {
        let mut o = json!({"metadata": {"name": "a", "namespace": "", "labels": {}, "annotations": {"x": "y"},
            "finalizers": [], "generation": 0, "deletionTimestamp": null, "bogus": 1, "clusterName": "c"}});
        let unknown = coerce_metadata(&mut o);
        assert_eq!(
            o,
            json!({"metadata": {"name": "a", "annotations": {"x": "y"}}})
        );
        assert_eq!(unknown, ["metadata.bogus", "metadata.clusterName"]);
    }
}
