//! Whether a variable's schema is a structural schema, as Kubernetes decides it
//! (`ValidateStructural`): every node of the structure has a type, and the
//! alternatives under `allOf`/`anyOf`/`oneOf`/`not` only restrict values — they
//! declare no types, defaults, CEL rules, `additionalProperties` or extensions.
//!
//! Cluster API wraps the variable's schema as property `variableSchema` of an
//! object and reports paths without that wrapper; `at` is the path of the variable's
//! schema itself. Two parts of Kubernetes' check cannot fire on a wrapped variable
//! schema and are left out: the rules for the root object (metadata, `kind`,
//! `apiVersion`, `additionalProperties` at the root) and the completeness check,
//! which only looks at the wrapper's own (empty) value validations.

use topograph_api::field::{ErrorType, FieldError, go_quote};

use crate::schema::Schema;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Item,
    Field,
}

/// The structural problems of `s`, sorted by their text as Kubernetes sorts them.
pub fn validate(s: &Schema, at: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    invariants(s, Level::Field, at, &mut out);
    out.sort_by_key(ToString::to_string);
    out
}

fn invariants(s: &Schema, lvl: Level, at: &str, out: &mut Vec<FieldError>) {
    if s.type_ == "array" && s.items.is_none() {
        out.push(FieldError::required(
            format!("{at}.items"),
            "must be specified",
        ));
    }
    if let Some(i) = s.items.as_deref() {
        invariants(i, Level::Item, &format!("{at}.items"), out);
    }
    for (k, p) in &s.properties {
        invariants(p, Level::Field, &format!("{at}.properties[{k}]"), out);
    }
    if let Some(a) = s.additional_schema() {
        invariants(a, Level::Field, &format!("{at}.additionalProperties"), out);
    }
    if s.int_or_string && s.preserve_unknown {
        out.push(FieldError::new(
            format!("{at}.x-kubernetes-preserve-unknown-fields"),
            ErrorType::Invalid,
            Some("true".to_string()),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(s, any_of_pattern(s), all_of_pattern(s), at, out);
    if s.type_.is_empty() && !s.int_or_string && !s.preserve_unknown {
        let detail = match lvl {
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(FieldError::required(format!("{at}.type"), detail));
    }
}

/// `anyOf: [{type: integer}, {type: string}]` exactly: the int-or-string form.
fn is_int_or_string_pair(list: &[Schema]) -> bool {
    let only = |t: &str| Schema {
        type_: t.to_string(),
        ..Schema::default()
    };
    matches!(list, [a, b] if *a == only("integer") && *b == only("string"))
}

fn any_of_pattern(s: &Schema) -> bool {
    is_int_or_string_pair(&s.any_of)
}

fn all_of_pattern(s: &Schema) -> bool {
    s.all_of
        .first()
        .is_some_and(|f| is_int_or_string_pair(&f.any_of))
}

fn value_validation(
    v: &Schema,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    at: &str,
    out: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (i, x) in v.any_of.iter().enumerate() {
            nested(x, false, &format!("{at}.anyOf[{i}]"), out);
        }
    }
    for (i, x) in v.all_of.iter().enumerate() {
        nested(
            x,
            skip_first_all_of_any_of && i == 0,
            &format!("{at}.allOf[{i}]"),
            out,
        );
    }
    for (i, x) in v.one_of.iter().enumerate() {
        nested(x, false, &format!("{at}.oneOf[{i}]"), out);
    }
    if let Some(x) = v.not.as_deref() {
        nested(x, false, &format!("{at}.not"), out);
    }
    if !v.pattern.is_empty()
        && let Err(e) = crate::goregex::compile(&v.pattern)
    {
        out.push(FieldError::new(
            format!("{at}.pattern"),
            ErrorType::Invalid,
            Some(go_quote(&v.pattern)),
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
}

fn nested(v: &Schema, skip_any_of: bool, at: &str, out: &mut Vec<FieldError>) {
    value_validation(v, skip_any_of, false, at, out);
    if let Some(i) = v.items.as_deref() {
        nested(i, false, &format!("{at}.items"), out);
    }
    for (k, p) in &v.properties {
        nested(p, false, &format!("{at}.properties[{k}]"), out);
    }
    let forbidden =
        |field: &str, detail: &str| FieldError::forbidden(format!("{at}.{field}"), detail);
    if !v.type_.is_empty() {
        out.push(forbidden("type", "must be empty to be structural"));
    }
    if v.additional.is_some() {
        out.push(forbidden(
            "additionalProperties",
            "must be undefined to be structural",
        ));
    }
    if v.default.is_some() {
        out.push(forbidden("default", "must be undefined to be structural"));
    }
    if v.preserve_unknown {
        out.push(forbidden(
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ));
    }
    if v.int_or_string {
        out.push(forbidden(
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ));
    }
    if v.rules.as_ref().is_some_and(|r| !r.is_empty()) {
        out.push(forbidden(
            "x-kubernetes-validations",
            "must be empty to be structural",
        ));
    }
    if v.properties.contains_key("metadata") {
        out.push(forbidden(
            "properties[metadata]",
            "must not be specified in a nested context",
        ));
    }
}
