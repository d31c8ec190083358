//! Field management on every write, as kube-apiserver keeps it: who wrote a request
//! (the `fieldManager` query parameter, or the User-Agent's product name), whether it
//! is a dry run, the schema a kind's fields merge by, and the `metadata.managedFields`
//! a non-apply write leaves. The merge and ownership rules themselves are
//! `topograph_ssa`'s; this module only wires them to the store's writes.

use crate::status::ApiError;
use crate::types::ResourceType;
use crate::util::json_type;
use serde_json::Value;
use topograph_api::server::Sub;
use topograph_gocompat::time;
use topograph_ssa::{
    ApplyError, Schema, UpdateOptions, reset_fields_main_resource, reset_fields_status_subresource,
    update_in_place, write_managed_fields,
};

/// The manager of writes the server makes itself (seeds, simulated providers,
/// garbage collection), where kube-apiserver would name the controller.
pub const INTERNAL_MANAGER: &str = "topograph-kube";

/// kube-apiserver's limit on a field manager's length (`FieldManagerMaxLength`).
const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// Who makes a write and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// The field manager recorded for the write.
    pub manager: String,
    /// `dryRun=All`: answer as if written, store nothing.
    pub dry_run: bool,
    /// What a create, update or patch does with fields the schema does not know.
    pub field_validation: FieldValidation,
}

/// kube-apiserver's `fieldValidation` for custom resources: fields the CRD's schema
/// does not know are always pruned; the directive says whether the request also fails
/// (400) or earns a warning for each. Server-side apply refuses them whatever it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Pruned silently; the server's own writes, which no request asked for.
    #[default]
    Ignore,
    /// Pruned, each with a `Warning` header: a request that names no directive.
    Warn,
    /// Refused, naming every unknown field.
    Strict,
}

impl FieldValidation {
    /// The directive a request's `fieldValidation` names (absent or empty: `Warn`, as
    /// kube-apiserver defaults it), or what kube-apiserver's option validation says of
    /// another value.
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.unwrap_or("") {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Ignore" => Ok(FieldValidation::Ignore),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(format!(
                "fieldValidation: Unsupported value: {}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                topograph_gocompat::strconv::quote(other)
            )),
        }
    }
}

impl Write {
    /// A write by `manager`, stored.
    pub fn by(manager: impl Into<String>) -> Self {
        Write {
            manager: manager.into(),
            dry_run: false,
            field_validation: FieldValidation::Ignore,
        }
    }

    /// A write the server makes itself.
    pub fn internal() -> Self {
        Self::by(INTERNAL_MANAGER)
    }
}

/// The field manager kube-apiserver derives from a User-Agent when a write names
/// none: the text before the first `/`, without unprintable characters, cut at 128
/// bytes (`prefixFromUserAgent`). No User-Agent gives an empty manager, as there.
pub fn manager_from_user_agent(user_agent: &str) -> String {
    let product = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in product
        .chars()
        .filter(|c| topograph_gocompat::strconv::is_print(*c))
    {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

/// `<kind>.meta.k8s.io "" is invalid: <causes>`: kube-apiserver's 422 for bad write
/// options (`CreateOptions`, `UpdateOptions`, `PatchOptions`: a missing or malformed
/// field manager, `force` on a non-apply patch, an unsupported `dryRun`).
pub fn invalid_options(kind: &str, causes: &str) -> ApiError {
    ApiError {
        code: 422,
        reason: "Invalid",
        message: format!("{kind}.meta.k8s.io \"\" is invalid: {causes}"),
        details: Some(Box::new(crate::status::Details {
            name: String::new(),
            group: "meta.k8s.io".into(),
            kind: kind.into(),
            causes: Vec::new(),
        })),
    }
}

/// What kube-apiserver's `ValidateFieldManager` says about an explicit field manager:
/// at most 128 bytes, every character printable (Go's `unicode.IsPrint`).
pub fn field_manager_problems(manager: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let quoted = topograph_gocompat::strconv::quote(manager);
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        problems.push(format!(
            "fieldManager: Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"
        ));
    }
    for (i, c) in manager.char_indices() {
        if !topograph_gocompat::strconv::is_print(c) {
            problems.push(format!(
                "fieldManager: Invalid value: {quoted}: invalid character U+{:04X} at position {i}",
                c as u32
            ));
        }
    }
    problems
}

/// A boolean query parameter as kube-apiserver reads one: absent, `0` or `false` (any
/// case) is false; anything else, an empty value included, is true.
pub fn query_bool(value: Option<&str>) -> bool {
    value.is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// The schema a kind's objects merge by in `version`: the CRD's `openAPIV3Schema`
/// for custom resources, none (every list atomic) for built-in kinds and CRDs
/// without a usable schema, as kube-apiserver deduces types for those.
pub fn schema_of(crd: Option<&Value>, version: &str) -> Schema {
    crd.and_then(|crd| Schema::from_crd(crd, version).ok())
        .unwrap_or_else(Schema::unknown)
}

/// The subresource name a write through `sub` records.
pub fn subresource(sub: Sub) -> Option<&'static str> {
    match sub {
        Sub::Main => None,
        Sub::Status => Some("status"),
    }
}

/// The fields a write through `sub` does not set (kube-apiserver's reset fields):
/// `status` on the main resource of a kind with a status subresource, `spec` on the
/// status subresource.
pub fn reset_fields(rt: &ResourceType, sub: Sub) -> Option<topograph_ssa::FieldSet> {
    match sub {
        Sub::Main if rt.status_subresource => Some(reset_fields_main_resource()),
        Sub::Main => None,
        Sub::Status => Some(reset_fields_status_subresource()),
    }
}

/// Writes into `new` the managed fields a non-apply write of it over `old` (None for
/// a create) leaves: the manager's `Update` entry takes what changed. A non-empty
/// `metadata.managedFields` in `new` replaces the old entries (clients move
/// ownership that way); `[]` or `[{}]` resets them, as kube-apiserver's
/// `isResetManagedFields` reads a request. Both objects are lent, not changed: their
/// entries are set aside while they are compared, which copies nothing.
pub fn record_update(
    rt: &ResourceType,
    schema: &Schema,
    api_version: &str,
    old: Option<&mut Value>,
    new: &mut Value,
    sub: Sub,
    manager: &str,
) {
    let reset = sub == Sub::Main
        && new
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .is_some_and(|entries| match entries.as_slice() {
                [] => true,
                [only] => only.as_object().is_some_and(|o| o.is_empty()),
                _ => false,
            });
    if reset && let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        // `[{}]` is a request, not an entry to keep.
        meta.insert("managedFields".into(), Value::Array(Vec::new()));
    }
    let mut old_without_entries;
    let old = if reset {
        // Reading the old object's entries is what an empty list must not do.
        old_without_entries = old.map(|o| {
            let mut o = o.clone();
            if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
            o
        });
        old_without_entries.as_mut()
    } else {
        old
    };
    let ignored = reset_fields(rt, sub);
    let now = time::now();
    let entries = update_in_place(
        old,
        new,
        &UpdateOptions {
            manager,
            api_version,
            schema,
            now: &now,
            subresource: subresource(sub),
            ignored: ignored.as_ref(),
        },
    );
    write_managed_fields(new, &entries);
}

/// An apply's refusal as kube-apiserver answers it: 409 with the conflicts as
/// causes, 400 for a bad configuration, 500 otherwise.
pub fn apply_error(e: ApplyError) -> ApiError {
    match e {
        ApplyError::Conflicts(conflicts) => ApiError {
            code: topograph_ssa::Conflicts::CODE,
            reason: "Conflict",
            message: conflicts.message(),
            details: Some(Box::new(crate::status::Details {
                name: String::new(),
                group: String::new(),
                kind: String::new(),
                causes: conflicts
                    .causes()
                    .into_iter()
                    .map(|c| crate::status::Cause {
                        reason: c.kind,
                        message: c.message,
                        field: c.field,
                    })
                    .collect(),
            })),
        },
        ApplyError::BadRequest(message) => ApiError::bad_request(message),
        other => ApiError::internal(other.to_string()),
    }
}

/// Reads an apply body: JSON, or YAML (kubectl and kube-rs send JSON, the content
/// type says YAML, and JSON is the common case, so it is tried first).
pub fn parse_apply_body(body: &[u8]) -> Result<Value, ApiError> {
    let value = match serde_json::from_slice::<Value>(body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(body).map_err(|e| {
                ApiError::bad_request(format!("error decoding YAML: invalid UTF-8: {e}"))
            })?;
            topograph_gocompat::yaml::yaml_to_json(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
        }
    };
    if !value.is_object() {
        // kube-apiserver decodes the body into a map, so anything else fails there.
        return Err(ApiError::bad_request(format!(
            "error decoding YAML: cannot unmarshal {} into an object",
            json_type(&value)
        )));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn manager_is_the_user_agent_product() {
        assert_eq!(
            manager_from_user_agent("kubectl/v1.20.0 (linux/amd64)"),
            "kubectl"
        );
        assert_eq!(manager_from_user_agent("kube-rs"), "kube-rs");
        assert_eq!(manager_from_user_agent(""), "");
        assert_eq!(manager_from_user_agent("a\u{7}b/1"), "ab");
        assert_eq!(manager_from_user_agent(&"x".repeat(200)).len(), 128);
    }

    #[test]
    fn apply_bodies_are_json_or_yaml_objects() {
        assert_eq!(parse_apply_body(b"{\"a\": 1}").unwrap(), json!({"a": 1}));
        assert_eq!(
            parse_apply_body(b"a: 1\nb: [x]\n").unwrap(),
            json!({"a": 1, "b": ["x"]})
        );
        assert_eq!(parse_apply_body(b"[1]").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(b"a: [").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(b"\xff\xfe").unwrap_err().code, 400);
    }
}
