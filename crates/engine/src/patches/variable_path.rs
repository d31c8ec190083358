//! `valueFrom.variable` paths: `<name>[<i>]?(.<segment>[<i>]?)*`, looked up in the
//! variables a template sees, with Cluster API's error texts.

use serde_json::{Map, Value};
use topograph_gocompat::strconv;

use super::builtin;

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
    let q_segment = || strconv::quote(segment);
    let (open, close) = (segment.find('['), segment.find(']'));
    match (open, close) {
        (None, None) => Ok(Segment {
            key: segment,
            index: None,
        }),
        (Some(open), Some(close)) if open < close => {
            let digits = &segment[open + 1..close];
            let index = strconv::atoi(digits).map_err(|e| {
                format!(
                    "failed to parse array index in path segment {}: {e}",
                    q_segment()
                )
            })?;
            let index = usize::try_from(index).map_err(|_| {
                format!(
                    "invalid array index {index} in path segment {}",
                    q_segment()
                )
            })?;
            Ok(Segment {
                key: &segment[..open],
                index: Some(index),
            })
        }
        _ => Err(format!("failed to parse path segment {}", q_segment())),
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
    resolve(|key| variables.get(key).map(Found::One), path)
}

/// The variables an item's own variables do not replace but merge into, field by
/// field: `builtin`, so that an item sees `builtin.cluster` and its own
/// `builtin.<kind>`. Template data is layered by the same list.
pub const MERGED: &[&str] = &[builtin::NAME];

/// The variables a patch item sees: its own over the global ones, the [`MERGED`] ones
/// merged field by field. Read as that merge reads, without building it.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    own: &'a Map<String, Value>,
    globals: &'a Map<String, Value>,
}

impl<'a> Scope<'a> {
    /// The item's `own` variables over `globals`.
    pub fn new(own: &'a Map<String, Value>, globals: &'a Map<String, Value>) -> Scope<'a> {
        Scope { own, globals }
    }

    /// The variable `name` as the merge has it.
    fn get(&self, name: &str) -> Option<Found<'a>> {
        match (self.own.get(name), self.globals.get(name)) {
            (Some(Value::Object(own)), Some(Value::Object(globals))) if MERGED.contains(&name) => {
                Some(Found::Union(own, globals))
            }
            (Some(own), _) => Some(Found::One(own)),
            (None, globals) => globals.map(Found::One),
        }
    }

    /// [`lookup`] in the merged variables.
    pub fn lookup(&self, path: &str) -> Result<Value, LookupError> {
        resolve(|key| self.get(key), path)
    }
}

/// A variable as found: one value, or two maps read as their union (the first's
/// entries winning).
enum Found<'a> {
    One(&'a Value),
    Union(&'a Map<String, Value>, &'a Map<String, Value>),
}

fn union(upper: &Map<String, Value>, lower: &Map<String, Value>) -> Map<String, Value> {
    let mut union = lower.clone();
    union.extend(upper.iter().map(|(k, v)| (k.clone(), v.clone())));
    union
}

/// Resolves `path`, its first segment's key found by `first`.
fn resolve<'a>(
    first: impl FnOnce(&str) -> Option<Found<'a>>,
    path: &str,
) -> Result<Value, LookupError> {
    let mut segments = path.split('.').peekable();
    let first_segment = segments.next().unwrap_or_default();
    let name = parse_segment(first_segment).map_err(|e| {
        LookupError::Invalid(format!("variable {} is invalid: {e}", strconv::quote(path)))
    })?;
    let Some(found) = first(name.key) else {
        return Err(LookupError::NotFound(format!(
            "variable {} does not exist",
            strconv::quote(first_segment)
        )));
    };
    let built;
    let mut value = match found {
        Found::One(value) => element(value, &name, path)?,
        // A segment below a union is found in either map.
        Found::Union(upper, lower) if name.index.is_none() && segments.peek().is_some() => {
            let segment = segments.next().unwrap_or_default();
            let (key, segment) = parse_in(segment, path)?;
            let value = upper.get(key).or_else(|| lower.get(key));
            element(found_child(value, key, path)?, &segment, path)?
        }
        // Read whole or indexed: as the built union reads.
        Found::Union(upper, lower) => {
            built = Value::Object(union(upper, lower));
            element(&built, &name, path)?
        }
    };
    for segment in segments {
        let (key, segment) = parse_in(segment, path)?;
        value = element(found_child(child(value, key), key, path)?, &segment, path)?;
    }
    Ok(value.clone())
}

/// A segment after the first, parsed; its key borrowed from it.
fn parse_in<'s>(segment: &'s str, path: &str) -> Result<(&'s str, Segment<'s>), LookupError> {
    let segment = parse_segment(segment).map_err(|e| {
        LookupError::Invalid(format!(
            "variable {} has invalid syntax: {e}",
            strconv::quote(path)
        ))
    })?;
    Ok((segment.key, segment))
}

/// `value`, or the error for a segment `key` that is not there.
fn found_child<'v>(
    value: Option<&'v Value>,
    key: &str,
    path: &str,
) -> Result<&'v Value, LookupError> {
    value.ok_or_else(|| {
        LookupError::NotFound(format!(
            "variable {} does not exist: failed to lookup segment {}",
            strconv::quote(path),
            strconv::quote(key)
        ))
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

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

    /// The merge a [`Scope`] reads as: globals first, then the item's variables by
    /// name, `builtin` merged field by field.
    fn merge(globals: &Map<String, Value>, own: &Map<String, Value>) -> Map<String, Value> {
        let mut merged = globals.clone();
        for (name, value) in own {
            match (merged.get_mut(name), value) {
                (Some(Value::Object(base)), Value::Object(extra)) if name == builtin::NAME => {
                    base.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                _ => {
                    merged.insert(name.clone(), value.clone());
                }
            }
        }
        merged
    }

    fn tree() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            "[ab]{0,2}".prop_map(Value::from),
            any::<i8>().prop_map(Value::from),
        ];
        leaf.prop_recursive(2, 10, 3, |inner| {
            prop_oneof![
                prop::collection::btree_map("[ab]|builtin", inner.clone(), 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
                prop::collection::vec(inner, 0..3).prop_map(Value::Array),
            ]
        })
    }

    /// Variables, mostly with a `builtin` map (where the two layers merge).
    fn variables() -> impl Strategy<Value = Map<String, Value>> {
        let builtin = prop::collection::btree_map("[ab]", tree(), 0..3);
        (
            prop::collection::btree_map("[ab]|builtin", tree(), 0..4),
            prop::option::weighted(0.8, builtin),
        )
            .prop_map(|(variables, builtin)| {
                let mut variables: Map<String, Value> = variables.into_iter().collect();
                if let Some(builtin) = builtin {
                    variables.insert(
                        "builtin".into(),
                        Value::Object(builtin.into_iter().collect()),
                    );
                }
                variables
            })
    }

    fn path() -> impl Strategy<Value = String> {
        let segment = prop_oneof!["[ab]|builtin", "[ab]\\[[0-2x]\\]", "[ab]\\[0", "[0-1]",];
        prop::collection::vec(segment, 1..4).prop_map(|s| s.join("."))
    }

    proptest! {
        #[test]
        fn a_scope_reads_as_the_merge(
            globals in variables(),
            own in variables(),
            path in path(),
        ) {
            let merged = merge(&globals, &own);
            prop_assert_eq!(
                Scope::new(&own, &globals).lookup(&path),
                lookup(&merged, &path),
                "{}", path
            );
        }
    }
}
