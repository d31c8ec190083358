//! The Cluster-level rules around single values: the index of values (each name
//! once), the index of definitions (no conflicting ones), required variables, and
//! the order in which values are defaulted and created.

use std::collections::BTreeMap;

use serde_json::Value;
use topograph_api::field::{ErrorType, FieldError, go_quote};
use topograph_api::model::{Variable, VariableDefinition};

use crate::Scope;
use crate::check::{self, Defaulted, Subject, Verdict};
use crate::json;
use crate::schema_cache;

/// The reserved name of the builtin variable; a Cluster value of that name is skipped.
pub const BUILTIN: &str = "builtin";

/// Raw JSON text of a value as Cluster API holds it in a Cluster, and so shows it in
/// its errors: written by Go's `encoding/json` (`kubectl` writes YAML input that way,
/// and Cluster API's defaulting writes every value again before validating it), so
/// `<` is `\u003c` and `1e21` is `1e+21`.
pub fn raw_text(v: &Value) -> String {
    crate::value::serde_to_json(v)
}

/// Each name once; errors for repeats.
fn values_index<'a>(
    values: &'a [Variable],
    list_path: &str,
) -> Result<BTreeMap<&'a str, &'a Variable>, Vec<FieldError>> {
    let mut index = BTreeMap::new();
    let mut errors = Vec::new();
    for v in values {
        if v.name == BUILTIN {
            continue;
        }
        if index.insert(v.name.as_str(), v).is_some() {
            errors.push(FieldError::invalid(
                format!("{list_path}[{}]", v.name),
                &raw_text(&v.value),
                format!("variable {} is set more than once", go_quote(&v.name)),
            ));
        }
    }
    if errors.is_empty() {
        Ok(index)
    } else {
        Err(errors)
    }
}

/// Whether two definitions' schemas are the same, as Cluster API compares them: as
/// typed values, where a false flag and an absent one are the same.
pub fn same_schema(a: &Value, b: &Value) -> bool {
    a == b || without_false_flags(a) == without_false_flags(b)
}

/// A schema with its boolean flags that are `false` left out: Cluster API compares
/// definitions as typed values, where a false flag and an absent one are the same.
fn without_false_flags(schema: &Value) -> Value {
    const FLAGS: [&str; 6] = [
        "uniqueItems",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string",
    ];
    // Values (defaults, examples, enums) are data, not schemas: left as they are.
    const DATA: [&str; 3] = ["default", "example", "enum"];
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !(FLAGS.contains(&k.as_str()) && **v == Value::Bool(false)))
                .map(|(k, v)| {
                    let v = if DATA.contains(&k.as_str()) {
                        v.clone()
                    } else {
                        without_false_flags(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_false_flags).collect()),
        other => other.clone(),
    }
}

/// One definition per name; differing definitions of one name conflict.
fn definitions_index<'a>(
    definitions: &'a [VariableDefinition],
    list_path: &str,
) -> Result<BTreeMap<&'a str, &'a VariableDefinition>, Vec<FieldError>> {
    let mut index: BTreeMap<&str, &VariableDefinition> = BTreeMap::new();
    let mut conflicting = Vec::new();
    for d in definitions {
        match index.get(d.name.as_str()) {
            None => {
                index.insert(&d.name, d);
            }
            Some(first) => {
                let same = first.required == d.required
                    && same_schema(&first.schema, &d.schema)
                    && first.metadata == d.metadata;
                if !same && !conflicting.contains(&d.name.as_str()) {
                    conflicting.push(d.name.as_str());
                }
            }
        }
    }
    if conflicting.is_empty() {
        return Ok(index);
    }
    conflicting.sort_unstable();
    // Definitions are shown per variable name, as the ClusterClass status lists them.
    let mut names: Vec<&str> = Vec::new();
    for d in definitions {
        if !names.contains(&d.name.as_str()) {
            names.push(&d.name);
        }
    }
    let listed: Vec<String> = names.iter().map(|n| format!("Name: {n}")).collect();
    let shown = format!("[{}]", listed.join(","));
    Err(conflicting
        .into_iter()
        .map(|name| {
            FieldError::new(
                list_path,
                ErrorType::TypeInvalid,
                Some(go_quote(&shown)),
                format!(
                    "variable definitions in the ClusterClass not valid: variable {} has conflicting definitions",
                    go_quote(name)
                ),
            )
        })
        .collect())
}

fn not_defined(list_path: &str, v: &Variable) -> FieldError {
    FieldError::invalid(
        format!("{list_path}[{}]", v.name),
        &raw_text(&v.value),
        "variable is not defined",
    )
}

/// See [`crate::default_variables`].
pub fn default_variables(
    values: &[Variable],
    definitions: &[VariableDefinition],
    scope: Scope<'_>,
) -> Result<Vec<Variable>, Vec<FieldError>> {
    let list_path = scope.path();
    let index = values_index(values, &list_path)?;
    let defs = definitions_index(definitions, &list_path)?;
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for v in values {
        if v.name == BUILTIN {
            out.push(v.clone());
            continue;
        }
        let Some(def) = defs.get(v.name.as_str()) else {
            errors.push(not_defined(&list_path, v));
            continue;
        };
        let j = json::from_serde(&v.value);
        let subject = Subject::new(&list_path, &v.name);
        let schema = schema_cache::read(&def.schema);
        match check::default_variable_read(&schema, &subject, Some(&j)) {
            Defaulted::Value(text) => out.push(Variable {
                name: v.name.clone(),
                definition_from: v.definition_from.clone(),
                value: serde_json::from_str(&text).unwrap_or(Value::Null),
            }),
            Defaulted::Absent => out.push(v.clone()),
            Defaulted::Invalid(_, errs) => errors.extend(errs),
            Defaulted::Undecodable(e) => errors.push(undecodable(&subject, &e)),
        }
    }
    if scope == Scope::Cluster {
        for (name, def) in &defs {
            if index.contains_key(name) || *name == BUILTIN {
                continue;
            }
            let subject = Subject::new(&list_path, name);
            let schema = schema_cache::read(&def.schema);
            match check::default_variable_read(&schema, &subject, None) {
                Defaulted::Value(text) => out.push(Variable {
                    name: name.to_string(),
                    definition_from: None,
                    value: serde_json::from_str(&text).unwrap_or(Value::Null),
                }),
                Defaulted::Absent => {}
                Defaulted::Invalid(_, errs) => errors.extend(errs),
                Defaulted::Undecodable(e) => errors.push(undecodable(&subject, &e)),
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

pub(crate) fn undecodable(subject: &Subject<'_>, e: &str) -> FieldError {
    FieldError::internal(
        subject.at.clone().unwrap_or_else(|| "<nil>".into()),
        format!(
            "failed to convert schema definition for variable {}; ClusterClass should be checked: {e}",
            go_quote(subject.name)
        ),
    )
}

/// See [`crate::validate_value`].
pub fn validate_value(
    schema: &Value,
    name: &str,
    value: &Value,
    old: Option<&Value>,
    path: &str,
) -> Vec<FieldError> {
    let subject = Subject {
        name,
        at: (!path.is_empty()).then(|| path.to_string()),
    };
    let schema = schema_cache::read(schema);
    let j = json::from_serde(value);
    let raw = raw_text(value);
    let old = old.map(json::from_serde);
    match check::variable_read(&schema, &subject, Some(&j), &raw, old.as_ref()) {
        Verdict::Valid => Vec::new(),
        Verdict::Invalid(_, errors) => errors,
        Verdict::Undecodable(e) => vec![undecodable(&subject, &e)],
    }
}

/// See [`crate::validate_variables`].
pub fn validate_variables(
    values: &[Variable],
    old: Option<&[Variable]>,
    definitions: &[VariableDefinition],
    scope: Scope<'_>,
) -> Vec<FieldError> {
    let list_path = scope.path();
    if let Err(errors) = values_index(values, &list_path) {
        return errors;
    }
    let defs = match definitions_index(definitions, &list_path) {
        Ok(d) => d,
        Err(errors) => return errors,
    };
    let mut errors = Vec::new();
    if scope == Scope::Cluster {
        for (name, def) in &defs {
            if def.required && *name != BUILTIN && !values.iter().any(|v| v.name == *name) {
                errors.push(FieldError::required(
                    list_path.clone(),
                    format!("required variable {} must be set", go_quote(name)),
                ));
            }
        }
    }
    for v in values {
        if v.name == BUILTIN {
            continue;
        }
        let Some(def) = defs.get(v.name.as_str()) else {
            errors.push(not_defined(&list_path, v));
            continue;
        };
        let old_value = old
            .and_then(|o| o.iter().find(|x| x.name == v.name))
            .map(|x| &x.value);
        errors.extend(validate_value(
            &def.schema,
            &v.name,
            &v.value,
            old_value,
            &format!("{list_path}[{}]", v.name),
        ));
    }
    errors
}
