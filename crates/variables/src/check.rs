//! One variable value against one schema, step by step as Cluster API takes it:
//! read the value, read the schema, OpenAPI validation, the unknown-field check,
//! then CEL. The first step with something to say gives the answer. Also the plain
//! CRD validation and the defaulting of one top-level variable.

use topograph_api::field::{FieldError, go_quote};

use crate::dialect;
use crate::json::Json;
use crate::openapi::Validator;
use crate::prune;
use crate::report::Target;
use crate::schema::Schema;
use crate::value::{self, Numbers, Val};

/// The step that produced errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The value (or the old value) could not be read.
    Value,
    /// The schema could not be converted.
    Schema,
    /// OpenAPI validation.
    OpenApi,
    /// Fields the schema does not know.
    UnknownFields,
    /// `x-kubernetes-validations`.
    Cel,
}

impl Stage {
    /// The stage's name in the oracle's answers.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Value => "value",
            Stage::Schema => "schema",
            Stage::OpenApi => "openapi",
            Stage::UnknownFields => "unknown-fields",
            Stage::Cel => "cel",
        }
    }
}

/// What a check found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Nothing wrong.
    Valid,
    /// Field errors from one step.
    Invalid(Stage, Vec<FieldError>),
    /// The schema is not even a schema of the dialect (Go's decoding error).
    Undecodable(String),
}

/// The variable a check is about and where its errors go.
pub struct Subject<'a> {
    /// Variable name.
    pub name: &'a str,
    /// `<list path>[<name>]`; `None` when the list path is empty.
    pub at: Option<String>,
}

impl<'a> Subject<'a> {
    /// A variable in the list at `list_path` (an empty list path gives Go's nil path).
    pub fn new(list_path: &str, name: &'a str) -> Self {
        Subject {
            name,
            at: (!list_path.is_empty()).then(|| format!("{list_path}[{name}]")),
        }
    }

    fn at(&self) -> String {
        self.at.clone().unwrap_or_else(|| "<nil>".to_string())
    }

    fn value_at(&self) -> String {
        match &self.at {
            Some(a) => format!("{a}.value"),
            None => "value".to_string(),
        }
    }
}

/// Reads a value's JSON text as Kubernetes does; `None` for absent or null.
fn read(text: Option<&Json>) -> Result<Option<Val>, String> {
    match text {
        None | Some(Json::Null) => Ok(None),
        Some(j) => value::decode(j, Numbers::Kubernetes).map(Some),
    }
}

/// The Cluster API check of one value. `value`/`old` are the parsed JSON texts
/// (`None` when absent); `raw` is the value's text as sent (shown as the bad value).
pub fn variable(
    schema: Option<&Json>,
    subject: &Subject<'_>,
    value: Option<&Json>,
    raw: &str,
    old: Option<&Json>,
) -> Verdict {
    variable_read(&dialect::read(schema), subject, value, raw, old)
}

/// [`variable`] with the schema already read.
pub fn variable_read(
    schema: &dialect::Read,
    subject: &Subject<'_>,
    value: Option<&Json>,
    raw: &str,
    old: Option<&Json>,
) -> Verdict {
    let raw = match value {
        None | Some(Json::Null) => "",
        Some(_) => raw.trim(),
    };
    let data = match read(value) {
        Ok(v) => v,
        Err(e) => {
            let msg = format!(
                "variable {} could not be parsed: {e}",
                go_quote(subject.name)
            );
            return Verdict::Invalid(
                Stage::Value,
                vec![FieldError::invalid(subject.value_at(), raw, msg)],
            );
        }
    };
    let schema = match schema {
        Err(e) => return Verdict::Undecodable(e.clone()),
        Ok((_, problems)) if !problems.is_empty() => {
            let msg = format!(
                "failed to convert schema definition for variable {}; ClusterClass should be checked: {}",
                go_quote(subject.name),
                dialect::problem_list(problems)
            );
            return Verdict::Invalid(Stage::Schema, vec![FieldError::internal(subject.at(), msg)]);
        }
        Ok((s, _)) => s,
    };
    let data = data.unwrap_or(Val::Null);
    checked(schema, subject, &data, raw, old)
}

/// The steps after reading, for a schema and value already read.
pub fn checked(
    schema: &Schema,
    subject: &Subject<'_>,
    data: &Val,
    raw: &str,
    old: Option<&Json>,
) -> Verdict {
    let value_at = subject.value_at();
    let found = Validator::new().validate(schema, "", data);
    if !found.errors.is_empty() {
        let target = Target {
            root: Some(&value_at),
            raw_value: Some(raw),
        };
        return Verdict::Invalid(Stage::OpenApi, target.field_errors(&found.errors));
    }
    let unknown = prune::unknown_fields(data, schema);
    if !unknown.is_empty() {
        let msg = format!(
            "failed validation: {} field(s) are not specified in the variable schema of variable {}",
            go_quote(&unknown.join(",")),
            go_quote(subject.name)
        );
        return Verdict::Invalid(
            Stage::UnknownFields,
            vec![FieldError::invalid(subject.at(), raw, msg)],
        );
    }
    if !schema.has_rules() {
        return Verdict::Valid;
    }
    let old_data = match old {
        None | Some(Json::Null) => None,
        Some(j) => match value::decode(j, Numbers::Kubernetes) {
            Ok(v) => Some(v),
            Err(e) => {
                let msg = format!(
                    "old value of variable {} could not be parsed: {e}",
                    go_quote(subject.name)
                );
                return Verdict::Invalid(
                    Stage::Value,
                    vec![FieldError::invalid(value_at, &value::compact(j), msg)],
                );
            }
        },
    };
    let errors = crate::cel::validate(schema, data, old_data.as_ref(), &value_at, raw);
    if errors.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Invalid(Stage::Cel, errors)
    }
}

/// Plain CRD OpenAPI validation of `value` against an `apiextensions.k8s.io/v1`
/// schema, errors under `path` (`None`: Go's nil path).
pub fn crd(schema: &Schema, value: Option<&Val>, path: Option<&str>) -> Vec<FieldError> {
    crd_update(schema, value, None, path)
}

/// [`crd`] for an update from `old` (when there is one), ratcheted as kube-apiserver
/// ratchets custom-resource updates: nothing the update left unchanged is refused.
pub fn crd_update(
    schema: &Schema,
    value: Option<&Val>,
    old: Option<&Val>,
    path: Option<&str>,
) -> Vec<FieldError> {
    let null = Val::Null;
    let value = value.unwrap_or(&null);
    let validator = Validator::new();
    let found = match old {
        Some(old) => validator.validate_update(schema, "", value, old),
        None => validator.validate(schema, "", value),
    };
    Target {
        root: path,
        raw_value: None,
    }
    .field_errors(&found.errors)
}

/// The result of defaulting one top-level variable.
#[derive(Clone, Debug, PartialEq)]
pub enum Defaulted {
    /// Not set, and no top-level default to create it from.
    Absent,
    /// The defaulted value, as Go's `encoding/json` writes it.
    Value(String),
    /// Field errors (stage name, errors).
    Invalid(Stage, Vec<FieldError>),
    /// The schema is not a schema of the dialect.
    Undecodable(String),
}

/// Defaults one top-level variable (`value` `None`: not set).
pub fn default_variable(
    schema: Option<&Json>,
    subject: &Subject<'_>,
    value: Option<&Json>,
) -> Defaulted {
    default_variable_read(&dialect::read(schema), subject, value)
}

/// [`default_variable`] with the schema already read.
pub fn default_variable_read(
    schema: &dialect::Read,
    subject: &Subject<'_>,
    value: Option<&Json>,
) -> Defaulted {
    let (schema, problems) = match schema {
        Err(e) => return Defaulted::Undecodable(e.clone()),
        Ok((schema, problems)) => (schema, problems),
    };
    if value.is_none() && !has_default_literal(schema, problems) {
        return Defaulted::Absent;
    }
    let problem = |stage, msg: String| {
        Defaulted::Invalid(stage, vec![FieldError::invalid(subject.at(), "", msg)])
    };
    if !problems.is_empty() {
        return problem(
            Stage::Schema,
            format!(
                "invalid schema in ClusterClass for variable {}: error to convert schema {}",
                go_quote(subject.name),
                dialect::problem_list(problems)
            ),
        );
    }
    let data = match value {
        None | Some(Json::Null) => None,
        Some(j) => match value::decode(j, Numbers::Float) {
            Ok(v) => Some(v),
            Err(e) => {
                return problem(
                    Stage::Value,
                    format!(
                        "failed to unmarshal variable {} value {}: {e}",
                        go_quote(subject.name),
                        go_quote(&value::compact(j))
                    ),
                );
            }
        },
    };
    let out = crate::defaulting::apply_top(data, schema);
    Defaulted::Value(value::to_json(&out))
}

/// Whether the schema had a top-level `default` literal (even one that failed to convert).
fn has_default_literal(schema: &Schema, problems: &[dialect::Problem]) -> bool {
    schema.default.is_some() || problems.iter().any(|p| p.path == "schema.default")
}

/// A CRD-mode request: `schema` read as an `apiextensions.k8s.io/v1` schema, then
/// validated under `path` (`None`: Go's nil path). `Err((stage, message))` when the
/// schema cannot be used, in the oracle's words.
pub fn crd_request(
    schema: Option<&Json>,
    value: Option<&Json>,
    path: Option<&str>,
) -> Result<Vec<FieldError>, (&'static str, String)> {
    use crate::crd::Unusable;
    let schema = crate::crd::read(schema).map_err(|u| match u {
        Unusable::Decode(e) => (
            "schema",
            format!("oracle: schema does not decode as apiextensions/v1 JSONSchemaProps: {e}"),
        ),
        Unusable::Conversion(e) => ("schema", format!("oracle: schema conversion failed: {e}")),
        Unusable::BadReference(e) => ("schema", e),
        Unusable::Reference(r) => (
            "panic",
            format!("oracle: panic: schema references not supported: {r}"),
        ),
    })?;
    let data = match value {
        None | Some(Json::Null) => None,
        Some(j) => Some(
            value::decode(j, Numbers::Kubernetes)
                .map_err(|e| ("request", format!("oracle: bad request: {e}")))?,
        ),
    };
    Ok(crd(&schema, data.as_ref(), path))
}
