//! `valueFrom.variable` paths: `<name>[<i>]?(.<segment>[<i>]?)*`, looked up in the
//! variables a template sees, with Cluster API's error texts.

use serde_json::{Map, Value};
use topograph_gocompat::strconv;

/// Why a path does not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LookupError {
    /// The variable or a segment does not exist.
    NotFound(String),
    /// The path is malformed or does not fit the value.
    Invalid(String),
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupError::NotFound(m) | LookupError::Invalid(m) => f.write_str(m),
        }
    }
}

struct Segment<'a> {
    key: &'a str,
    index: Option<usize>,
}

/// Splits `name[3]` into `name` and `3`; brackets must come as a pair.
fn parse_segment(segment: &str) -> Result<Segment<'_>, String> {
    let q_segment = strconv::quote(segment);
    let (open, close) = (segment.find('['), segment.find(']'));
    match (open, close) {
        (None, None) => Ok(Segment {
            key: segment,
            index: None,
        }),
        (Some(open), Some(close)) if open < close => {
            let digits = &segment[open + 1..close];
            let index = strconv::atoi(digits).map_err(|e| {
                format!("failed to parse array index in path segment {q_segment}: {e}")
            })?;
            let index = usize::try_from(index)
                .map_err(|_| format!("invalid array index {index} in path segment {q_segment}"))?;
            Ok(Segment {
                key: &segment[..open],
                index: Some(index),
            })
        }
        _ => Err(format!("failed to parse path segment {q_segment}")),
    }
}

/// The JSON type name the reference JSON parser reports.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(true) => "true",
        Value::Bool(false) => "false",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn element<'a>(
    value: &'a Value,
    segment: &Segment<'_>,
    full: &str,
) -> Result<&'a Value, LookupError> {
    let Some(index) = segment.index else {
        return Ok(value);
    };
    let q_full = strconv::quote(full);
    let Value::Array(items) = value else {
        return Err(LookupError::Invalid(format!(
            "variable {q_full} is invalid: failed to get array {}: value doesn't contain array; it contains {}",
            strconv::quote(segment.key),
            type_name(value)
        )));
    };
    items.get(index).ok_or_else(|| {
        LookupError::Invalid(format!(
            "variable {q_full} is invalid: array does not have index {index}"
        ))
    })
}

/// A key of an object, or (as the reference parser allows) a decimal index of an array.
fn child<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

/// Resolves `path` in `variables` and returns the value it points at.
pub fn lookup(variables: &Map<String, Value>, path: &str) -> Result<Value, LookupError> {
    let q_path = strconv::quote(path);
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or_default();
    let name = parse_segment(first)
        .map_err(|e| LookupError::Invalid(format!("variable {q_path} is invalid: {e}")))?;
    let q_first = strconv::quote(first);
    let Some(mut value) = variables.get(name.key) else {
        return Err(LookupError::NotFound(format!(
            "variable {q_first} does not exist"
        )));
    };
    value = element(value, &name, path)?;
    for segment in segments {
        let segment = parse_segment(segment).map_err(|e| {
            LookupError::Invalid(format!("variable {q_path} has invalid syntax: {e}"))
        })?;
        value = child(value, segment.key).ok_or_else(|| {
            LookupError::NotFound(format!(
                "variable {q_path} does not exist: failed to lookup segment {}",
                strconv::quote(segment.key)
            ))
        })?;
        value = element(value, &segment, path)?;
    }
    Ok(value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_their_errors() {
        let Value::Object(vars) = json!({
            "myVar": {"field": "f", "a": {"b": 2}, "list": [{"name": "n0"}, {"name": "n1"}]},
            "arr": [10, 11],
            "s": "text",
            "builtin": {"machineDeployment": {"version": "v1.30.0"}}
        }) else {
            unreachable!()
        };
        let cases: &[(&str, Result<Value, &str>)] = &[
            ("myVar.field", Ok(json!("f"))),
            ("myVar.a.b", Ok(json!(2))),
            ("myVar.a", Ok(json!({"b": 2}))),
            ("arr[0]", Ok(json!(10))),
            ("myVar.list[1].name", Ok(json!("n1"))),
            ("builtin.machineDeployment.version", Ok(json!("v1.30.0"))),
            ("nope", Err(r#"variable "nope" does not exist"#)),
            ("nope.x", Err(r#"variable "nope" does not exist"#)),
            (
                "myVar.nope",
                Err(r#"variable "myVar.nope" does not exist: failed to lookup segment "nope""#),
            ),
            (
                "myVar.list[0.name",
                Err(
                    r#"variable "myVar.list[0.name" has invalid syntax: failed to parse path segment "list[0""#,
                ),
            ),
            (
                "arr]0[",
                Err(r#"variable "arr]0[" is invalid: failed to parse path segment "arr]0[""#),
            ),
            (
                "arr[x]",
                Err(
                    r#"variable "arr[x]" is invalid: failed to parse array index in path segment "arr[x]": strconv.Atoi: parsing "x": invalid syntax"#,
                ),
            ),
            (
                "arr[-1]",
                Err(
                    r#"variable "arr[-1]" is invalid: invalid array index -1 in path segment "arr[-1]""#,
                ),
            ),
            (
                "s[0]",
                Err(
                    r#"variable "s[0]" is invalid: failed to get array "s": value doesn't contain array; it contains string"#,
                ),
            ),
            (
                "arr[5]",
                Err(r#"variable "arr[5]" is invalid: array does not have index 5"#),
            ),
        ];
        for (path, want) in cases {
            let got = lookup(&vars, path).map_err(|e| e.to_string());
            assert_eq!(got, want.clone().map_err(str::to_string), "{path}");
        }
    }
}
