//! RFC 6902 JSON patches, applied the way the Go library Cluster API uses does it
//! (evanphx/json-patch v5 with default options): parents are never created, `-` and
//! negative indices address array ends, and the error texts are that library's, so a
//! failing patch reads the same here as on a Cluster's condition.
//!
//! Inline patches produce `add`, `replace` and `remove`; patches from runtime
//! extensions ([`decode`]) may also `move`, `copy` and `test`. Anything else is refused
//! as the library refuses an unknown operation. [`merge_patch`] applies RFC 7386 merge
//! patches, the other kind extensions answer with.

use std::borrow::Cow;

use serde_json::Value;
use topograph_gocompat::strconv;

/// One operation of a JSON patch.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// `add`, `replace` or `remove`.
    pub op: String,
    /// A JSON pointer.
    pub path: String,
    /// The value, for `add`, `replace` and `test`.
    pub value: Option<Value>,
    /// The source, for `move` and `copy`.
    pub from: Option<String>,
}

impl Operation {
    /// The operation as JSON, keys in the order Go's encoder writes a map.
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        map.insert("op".into(), Value::String(self.op.clone()));
        map.insert("path".into(), Value::String(self.path.clone()));
        if let Some(value) = &self.value {
            map.insert("value".into(), value.clone());
        }
        if let Some(from) = &self.from {
            map.insert("from".into(), Value::String(from.clone()));
        }
        Value::Object(map)
    }
}

/// Why a patch could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The patch is malformed (unknown operation, missing value).
    Decode(String),
    /// The patch does not fit the document.
    Apply(String),
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatchError::Decode(m) | PatchError::Apply(m) => f.write_str(m),
        }
    }
}

/// Applies `operations` (as inline patches make them: `add`, `replace`, `remove`) in
/// order to a copy of `doc`; `doc` is untouched on error.
pub fn apply(doc: &Value, operations: &[Operation]) -> Result<Value, PatchError> {
    apply_operations(doc, operations, false)
}

/// Applies a patch document from a runtime extension (every RFC 6902 operation) in
/// order to a copy of `doc`; `doc` is untouched on error.
pub fn apply_document(doc: &Value, operations: &[Operation]) -> Result<Value, PatchError> {
    apply_operations(doc, operations, true)
}

fn apply_operations(
    doc: &Value,
    operations: &[Operation],
    every_operation: bool,
) -> Result<Value, PatchError> {
    for operation in operations {
        decode(operation, every_operation)?;
    }
    let mut out = doc.clone();
    for operation in operations {
        apply_one(&mut out, operation)?;
    }
    Ok(out)
}

/// [`apply`] or [`apply_document`] to `doc` itself, moving the operations' values in
/// rather than copying them (the operations keep their `op` and `path`). No copy is
/// made to fall back on: on error `doc` may be partly patched, so this is for a caller
/// that drops `doc` when the patch fails.
pub fn apply_in_place(
    doc: &mut Value,
    operations: &mut [Operation],
    every_operation: bool,
) -> Result<(), PatchError> {
    for operation in operations.iter() {
        decode(operation, every_operation)?;
    }
    for operation in operations.iter_mut() {
        match operation.op.as_str() {
            "add" | "replace" | "remove" => {
                let value = operation.value.take();
                apply_value(doc, &operation.op, &operation.path, value)?;
            }
            _ => apply_one(doc, operation)?,
        }
    }
    Ok(())
}

fn decode(operation: &Operation, every_operation: bool) -> Result<(), PatchError> {
    let invalid =
        |why: &str| PatchError::Decode(format!("invalid operation {}: {why}", operation.to_json()));
    match operation.op.as_str() {
        "add" | "replace" | "test" if operation.value.is_none() => Err(invalid(
            "failed to decode 'value': operation, missing value field: missing value",
        )),
        "move" | "copy" | "test" if !every_operation => Err(invalid("unsupported operation")),
        "move" | "copy" if operation.from.is_none() => Err(invalid(
            "failed to decode 'from': operation, missing from field: missing value",
        )),
        "add" | "replace" | "remove" | "move" | "copy" | "test" => Ok(()),
        _ => Err(invalid("unsupported operation")),
    }
}

/// The reference tokens of a pointer, unescaped (`~1` is `/`, `~0` is `~`); most
/// tokens have no escape and are borrowed.
pub(crate) fn tokens(path: &str) -> Vec<Cow<'_, str>> {
    path.split('/')
        .skip(1)
        .map(|t| {
            if t.contains('~') {
                Cow::Owned(t.replace("~1", "/").replace("~0", "~"))
            } else {
                Cow::Borrowed(t)
            }
        })
        .collect()
}

/// The container holding the last token of `path`, if every step exists.
fn parent_mut<'a>(doc: &'a mut Value, tokens: &[Cow<'_, str>]) -> Option<&'a mut Value> {
    let mut current = doc;
    for token in tokens {
        current = match current {
            Value::Object(map) => map.get_mut(token.as_ref())?,
            Value::Array(items) => {
                let index = strconv::atoi(token).ok()?;
                let len = items.len() as i64;
                let index = if index < 0 { index + len } else { index };
                usize::try_from(index).ok().and_then(|i| items.get_mut(i))?
            }
            _ => return None,
        };
    }
    match current {
        Value::Object(_) | Value::Array(_) => Some(current),
        _ => None,
    }
}

fn invalid_index(op: &str, path: &str, index: &str) -> PatchError {
    PatchError::Apply(format!(
        "error in {op} for path: '{path}': Unable to access invalid index: {index}: invalid index referenced"
    ))
}

/// Reads a JSON patch document (an array of operations), as a runtime extension sends
/// it.
pub fn decode_document(bytes: &[u8]) -> Result<Vec<Operation>, PatchError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| PatchError::Decode(e.to_string()))?;
    let Value::Array(items) = value else {
        return Err(PatchError::Decode(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch".into(),
        ));
    };
    items
        .into_iter()
        .map(|item| {
            let Value::Object(mut map) = item else {
                return Err(PatchError::Decode(
                    "json: cannot unmarshal non-object into Go value of type jsonpatch.Operation"
                        .into(),
                ));
            };
            let text = |map: &mut serde_json::Map<String, Value>, key: &str| match map.remove(key) {
                Some(Value::String(s)) => Ok(Some(s)),
                None | Some(Value::Null) => Ok(None),
                Some(other) => Err(PatchError::Decode(format!(
                    "json: cannot unmarshal {other} into Go value of type string ({key})"
                ))),
            };
            Ok(Operation {
                op: text(&mut map, "op")?.unwrap_or_default(),
                path: text(&mut map, "path")?.unwrap_or_default(),
                from: text(&mut map, "from")?,
                value: map.remove("value"),
            })
        })
        .collect()
}

/// Applies an RFC 7386 merge patch to a copy of `doc`.
pub fn merge_patch(doc: &Value, patch: &[u8]) -> Result<Value, String> {
    let patch: Value =
        serde_json::from_slice(patch).map_err(|_| "Invalid JSON Patch".to_string())?;
    fn merge(target: &mut Value, patch: &Value) {
        let Value::Object(changes) = patch else {
            *target = patch.clone();
            return;
        };
        if !target.is_object() {
            *target = Value::Object(serde_json::Map::new());
        }
        if let Value::Object(map) = target {
            for (key, value) in changes {
                if value.is_null() {
                    map.remove(key);
                } else {
                    merge(map.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
    }
    let mut out = doc.clone();
    merge(&mut out, &patch);
    Ok(out)
}

/// The value at a pointer, if there is one.
fn get(doc: &Value, path: &str) -> Option<Value> {
    if path.is_empty() {
        return Some(doc.clone());
    }
    doc.pointer(path).cloned()
}

fn apply_one(doc: &mut Value, operation: &Operation) -> Result<(), PatchError> {
    match operation.op.as_str() {
        "test" => {
            let want = operation.value.clone().unwrap_or(Value::Null);
            return match get(doc, &operation.path) {
                Some(have) if have == want => Ok(()),
                _ => Err(PatchError::Apply(format!(
                    "testing value {} failed: test failed",
                    operation.path
                ))),
            };
        }
        "copy" | "move" => {
            let from = operation.from.clone().unwrap_or_default();
            let Some(value) = get(doc, &from) else {
                return Err(PatchError::Apply(format!(
                    "error in {} for path: '{}': missing source {from:?}",
                    operation.op, operation.path
                )));
            };
            if operation.op == "move" {
                apply_one(
                    doc,
                    &Operation {
                        op: "remove".into(),
                        path: from,
                        value: None,
                        from: None,
                    },
                )?;
            }
            return apply_one(
                doc,
                &Operation {
                    op: "add".into(),
                    path: operation.path.clone(),
                    value: Some(value),
                    from: None,
                },
            );
        }
        _ => {}
    }
    apply_value(doc, &operation.op, &operation.path, operation.value.clone())
}

/// `add`, `replace` or `remove` of `value` at `path`.
fn apply_value(
    doc: &mut Value,
    op: &str,
    path: &str,
    value: Option<Value>,
) -> Result<(), PatchError> {
    let tokens = tokens(path);
    let missing_path = || {
        let q_path = strconv::quote(path);
        PatchError::Apply(match op {
            "replace" => format!(
                "replace operation does not apply: doc is missing path: {path}: missing value"
            ),
            _ => format!(
                "{op} operation does not apply: doc is missing path: {q_path}: missing value"
            ),
        })
    };
    let Some((last, parents)) = tokens.split_last() else {
        return Err(missing_path());
    };
    let Some(parent) = parent_mut(doc, parents) else {
        return Err(missing_path());
    };
    let value = value.unwrap_or(Value::Null);
    let last = last.as_ref();
    match parent {
        Value::Object(map) => match op {
            "add" => {
                map.insert(last.to_string(), value);
            }
            "replace" => match map.get_mut(last) {
                Some(slot) => *slot = value,
                None => {
                    return Err(PatchError::Apply(format!(
                        "replace operation does not apply: doc is missing key: {path}: missing value"
                    )));
                }
            },
            _ => {
                if map.remove(last).is_none() {
                    return Err(PatchError::Apply(format!(
                        "error in remove for path: '{path}': unable to remove nonexistent key: {last}: missing value"
                    )));
                }
            }
        },
        Value::Array(items) => {
            let len = items.len() as i64;
            match op {
                "add" => {
                    let index = if last == "-" {
                        len
                    } else {
                        strconv::atoi(last).map_err(|e| {
                            PatchError::Apply(format!(
                                "error in add for path: '{path}': value was not a proper array index: '{last}': {e}"
                            ))
                        })?
                    };
                    let at = if index < 0 { index + len + 1 } else { index };
                    match usize::try_from(at) {
                        Ok(at) if at <= items.len() => items.insert(at, value),
                        _ => return Err(invalid_index("add", path, last)),
                    }
                }
                "replace" => {
                    let slot = strconv::atoi(last)
                        .ok()
                        .map(|i| if i < 0 { i + len } else { i })
                        .and_then(|i| usize::try_from(i).ok())
                        .and_then(|i| items.get_mut(i));
                    match slot {
                        Some(slot) => *slot = value,
                        None => {
                            return Err(PatchError::Apply(format!(
                                "replace operation does not apply: doc is missing key: {path}: missing value"
                            )));
                        }
                    }
                }
                _ => {
                    let index = strconv::atoi(last).map_err(|e| {
                        PatchError::Apply(format!("error in remove for path: '{path}': {e}"))
                    })?;
                    let at = if index < 0 { index + len } else { index };
                    match usize::try_from(at) {
                        Ok(at) if at < items.len() => {
                            items.remove(at);
                        }
                        _ => return Err(invalid_index("remove", path, last)),
                    }
                }
            }
        }
        _ => return Err(missing_path()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(op: &str, path: &str, value: Option<Value>) -> Operation {
        Operation {
            op: op.into(),
            path: path.into(),
            value,
            from: None,
        }
    }

    /// Cases and answers from the reference library (see the module doc).
    #[test]
    fn matches_the_reference_library() {
        let doc = json!({"spec": {"a": [1, 2], "m": {"k": 1}, "s": "x"}});
        let cases: Vec<(Operation, Result<Value, &str>)> = vec![
            (
                op("add", "/spec/x/y", Some(json!(1))),
                Err(
                    r#"add operation does not apply: doc is missing path: "/spec/x/y": missing value"#,
                ),
            ),
            (
                op("remove", "/spec/x", None),
                Err(
                    "error in remove for path: '/spec/x': unable to remove nonexistent key: x: missing value",
                ),
            ),
            (
                op("remove", "/spec/x/y", None),
                Err(
                    r#"remove operation does not apply: doc is missing path: "/spec/x/y": missing value"#,
                ),
            ),
            (
                op("replace", "/spec/x", Some(json!(2))),
                Err("replace operation does not apply: doc is missing key: /spec/x: missing value"),
            ),
            (
                op("replace", "/spec/x/y", Some(json!(2))),
                Err(
                    "replace operation does not apply: doc is missing path: /spec/x/y: missing value",
                ),
            ),
            (
                op("add", "/spec/a/5", Some(json!(2))),
                Err(
                    "error in add for path: '/spec/a/5': Unable to access invalid index: 5: invalid index referenced",
                ),
            ),
            (
                op("add", "/spec/a/x", Some(json!(2))),
                Err(
                    r#"error in add for path: '/spec/a/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax"#,
                ),
            ),
            (
                op("remove", "/spec/a/-", None),
                Err(
                    r#"error in remove for path: '/spec/a/-': strconv.Atoi: parsing "-": invalid syntax"#,
                ),
            ),
            (
                op("remove", "/spec/a/2", None),
                Err(
                    "error in remove for path: '/spec/a/2': Unable to access invalid index: 2: invalid index referenced",
                ),
            ),
            (
                op("replace", "/spec/a/2", Some(json!(1))),
                Err(
                    "replace operation does not apply: doc is missing key: /spec/a/2: missing value",
                ),
            ),
            (
                op("add", "/spec/s/b", Some(json!(1))),
                Err(
                    r#"add operation does not apply: doc is missing path: "/spec/s/b": missing value"#,
                ),
            ),
            (
                op("add", "/spec/a/-5", Some(json!(9))),
                Err(
                    "error in add for path: '/spec/a/-5': Unable to access invalid index: -5: invalid index referenced",
                ),
            ),
            (
                op("bogus", "/spec/a", Some(json!(2))),
                Err(
                    r#"invalid operation {"op":"bogus","path":"/spec/a","value":2}: unsupported operation"#,
                ),
            ),
            (
                op("add", "/spec/a", None),
                Err(
                    r#"invalid operation {"op":"add","path":"/spec/a"}: failed to decode 'value': operation, missing value field: missing value"#,
                ),
            ),
            (
                op("add", "/spec/a/-", Some(json!(3))),
                Ok(json!({"spec": {"a": [1, 2, 3], "m": {"k": 1}, "s": "x"}})),
            ),
            (
                op("add", "/spec/a/-1", Some(json!(3))),
                Ok(json!({"spec": {"a": [1, 2, 3], "m": {"k": 1}, "s": "x"}})),
            ),
            (
                op("add", "/spec/a/1", Some(json!(3))),
                Ok(json!({"spec": {"a": [1, 3, 2], "m": {"k": 1}, "s": "x"}})),
            ),
            (
                op("remove", "/spec/a/-1", None),
                Ok(json!({"spec": {"a": [1], "m": {"k": 1}, "s": "x"}})),
            ),
            (
                op("replace", "/spec/m/k", Some(json!({"z": [1]}))),
                Ok(json!({"spec": {"a": [1, 2], "m": {"k": {"z": [1]}}, "s": "x"}})),
            ),
            (op("remove", "/spec", None), Ok(json!({}))),
        ];
        for (operation, want) in cases {
            let got = apply(&doc, std::slice::from_ref(&operation)).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_string), "{operation:?}");
        }
    }

    #[test]
    fn escaped_tokens_and_failed_patches_leave_the_document_alone() {
        let doc = json!({"spec": {"a/b": 1, "c~d": 2}});
        let out = apply(
            &doc,
            &[
                op("replace", "/spec/a~1b", Some(json!(5))),
                op("remove", "/spec/c~0d", None),
            ],
        );
        assert_eq!(out, Ok(json!({"spec": {"a/b": 5}})));
        let failed = apply(
            &doc,
            &[
                op("replace", "/spec/a~1b", Some(json!(5))),
                op("remove", "/spec/nope", None),
            ],
        );
        assert!(failed.is_err());
        assert_eq!(doc, json!({"spec": {"a/b": 1, "c~d": 2}}));
    }
}
