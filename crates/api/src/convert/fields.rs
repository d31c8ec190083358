//! Moving fields of JSON objects between shapes, with the field path of every problem.
//!
//! The conversion works on JSON so that it keeps whatever it does not rename; these
//! helpers take a field out of one object (checking its type) and put it into another.
//! A `null` counts as absent, as it does for Kubernetes' optional fields.

use serde_json::{Map, Number, Value};

use crate::duration::Duration;
use crate::field::{ErrorType, FieldError};

/// A JSON object.
pub(crate) type Object = Map<String, Value>;

/// What the conversion functions return.
pub(crate) type Result<T> = std::result::Result<T, FieldError>;

/// `path.key`, or `key` at the top.
pub(crate) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `path[i]`.
pub(crate) fn item(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// The value as Kubernetes prints a bad value: strings quoted, the rest as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => crate::field::go_quote(s),
        other => other.to_string(),
    }
}

/// A value of the wrong JSON type at `path`.
pub(crate) fn wrong_type(path: &str, value: &Value, expected: &str) -> FieldError {
    FieldError::new(
        path,
        ErrorType::TypeInvalid,
        Some(shown(value)),
        format!("must be {expected}"),
    )
}

/// The object `value` is, or a type error at `path`.
pub(crate) fn object_mut<'a>(value: &'a mut Value, path: &str) -> Result<&'a mut Object> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(wrong_type(path, other, "an object")),
    }
}

/// Removes `key`; `null` reads as absent.
pub(crate) fn take(map: &mut Object, key: &str) -> Option<Value> {
    map.remove(key).filter(|v| !v.is_null())
}

/// Removes the object at `key`.
pub(crate) fn take_object(map: &mut Object, key: &str, path: &str) -> Result<Option<Object>> {
    match take(map, key) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(wrong_type(&child(path, key), &other, "an object")),
    }
}

/// Removes the list at `key`.
pub(crate) fn take_array(map: &mut Object, key: &str, path: &str) -> Result<Option<Vec<Value>>> {
    match take(map, key) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(wrong_type(&child(path, key), &other, "a list")),
    }
}

/// Removes the string at `key`; an empty string reads as absent, as Go's pointer
/// dereferences to `""` and `omitempty` drop it.
pub(crate) fn take_nonempty_string(
    map: &mut Object,
    key: &str,
    path: &str,
) -> Result<Option<String>> {
    match take(map, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok((!s.is_empty()).then_some(s)),
        Some(other) => Err(wrong_type(&child(path, key), &other, "a string")),
    }
}

/// The string at `key`, left in place.
pub(crate) fn get_string<'a>(map: &'a Object, key: &str, path: &str) -> Result<Option<&'a str>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(wrong_type(&child(path, key), other, "a string")),
    }
}

/// The object at `key`, converted in place by `f` when present.
pub(crate) fn with_object(
    map: &mut Object,
    key: &str,
    path: &str,
    f: impl FnOnce(&mut Object, &str) -> Result<()>,
) -> Result<()> {
    match map.get_mut(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(inner)) => f(inner, &child(path, key)),
        Some(other) => Err(wrong_type(&child(path, key), other, "an object")),
    }
}

/// Every object of the list at `key`, converted in place by `f`.
pub(crate) fn with_each(
    map: &mut Object,
    key: &str,
    path: &str,
    mut f: impl FnMut(&mut Object, &str) -> Result<()>,
) -> Result<()> {
    let list_path = child(path, key);
    match map.get_mut(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(items)) => {
            for (i, value) in items.iter_mut().enumerate() {
                let at = item(&list_path, i);
                f(object_mut(value, &at)?, &at)?;
            }
            Ok(())
        }
        Some(other) => Err(wrong_type(&list_path, other, "a list")),
    }
}

/// The object at `key` of `map`, made if missing (a non-object is replaced: callers only
/// ask for objects they build themselves).
pub(crate) fn entry<'a>(map: &'a mut Object, key: &str) -> &'a mut Object {
    let slot = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(inner) => inner,
        _ => unreachable!("made an object just above"),
    }
}

/// Puts `value` at the nested `keys` of `map`, making the objects on the way.
pub(crate) fn put(map: &mut Object, keys: &[&str], value: Value) {
    if let Some((last, parents)) = keys.split_last() {
        let mut target = map;
        for key in parents {
            target = entry(target, key);
        }
        target.insert((*last).to_string(), value);
    }
}

/// Puts `object` at `key` unless it is empty: v1beta2's structs are `omitzero`, v1beta1's
/// pointers are nil when nothing is set.
pub(crate) fn put_nonempty(map: &mut Object, key: &str, object: Object) {
    if !object.is_empty() {
        map.insert(key.to_string(), Value::Object(object));
    }
}

/// Moves `from` (a Go duration) of `src` to `to` (whole seconds) of `dst`. `from_path`
/// and `to_path` name the two fields: a duration that seconds cannot hold exactly is
/// refused, naming both, rather than rounded.
pub(crate) fn move_duration(
    src: &mut Object,
    from: &str,
    dst: &mut Object,
    to: &str,
    from_path: &str,
    to_path: &str,
) -> Result<()> {
    if let Some(value) = take(src, from) {
        let seconds = duration_to_seconds(&value, &child(from_path, from), &child(to_path, to))?;
        dst.insert(to.to_string(), seconds);
    }
    Ok(())
}

/// Moves `from` (whole seconds) of `src` to `to` (a Go duration) of `dst`.
pub(crate) fn move_seconds(
    src: &mut Object,
    from: &str,
    dst: &mut Object,
    to: &str,
    from_path: &str,
) -> Result<()> {
    if let Some(value) = take(src, from) {
        let duration = seconds_to_duration(&value, &child(from_path, from))?;
        dst.insert(to.to_string(), duration);
    }
    Ok(())
}

/// A Go duration string as whole seconds (an int32, as v1beta2's `*Seconds` fields are).
pub(crate) fn duration_to_seconds(value: &Value, from_path: &str, to_path: &str) -> Result<Value> {
    let Value::String(text) = value else {
        return Err(wrong_type(from_path, value, "a duration string"));
    };
    let duration =
        Duration::parse(text).map_err(|e| FieldError::invalid(from_path, text, e.to_string()))?;
    let nanos = duration.as_nanos();
    if nanos % 1_000_000_000 != 0 {
        return Err(FieldError::invalid(
            from_path,
            text,
            format!(
                "{to_path} holds whole seconds and this duration is not a whole number of seconds"
            ),
        ));
    }
    let seconds = duration.as_secs();
    if i32::try_from(seconds).is_err() {
        return Err(FieldError::invalid(
            from_path,
            text,
            format!("{to_path} holds at most {} seconds", i32::MAX),
        ));
    }
    Ok(Value::Number(Number::from(seconds)))
}

/// Whole seconds (an int32) as the Go duration string v1beta1 writes (`300` is `5m0s`).
pub(crate) fn seconds_to_duration(value: &Value, path: &str) -> Result<Value> {
    let seconds = value
        .as_i64()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| wrong_type(path, value, "an integer number of seconds (int32)"))?;
    Ok(Value::String(
        Duration::from_secs(i64::from(seconds)).to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_convert_exactly_or_not_at_all() {
        let ok = |s: &str| duration_to_seconds(&json!(s), "a", "b").unwrap();
        assert_eq!(ok("300s"), json!(300));
        assert_eq!(ok("5m"), json!(300));
        assert_eq!(ok("1h0m0s"), json!(3600));
        assert_eq!(ok("0"), json!(0));
        let err = duration_to_seconds(&json!("1500ms"), "spec.x.timeout", "spec.y.timeoutSeconds")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "spec.x.timeout: Invalid value: \"1500ms\": spec.y.timeoutSeconds holds whole seconds and this duration is not a whole number of seconds"
        );
        let err = duration_to_seconds(&json!(5), "p", "q")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "p: Invalid value: 5: must be a duration string");
        assert!(duration_to_seconds(&json!("1000000h"), "p", "q").is_err());
        assert_eq!(
            seconds_to_duration(&json!(300), "p").unwrap(),
            json!("5m0s")
        );
        assert_eq!(seconds_to_duration(&json!(0), "p").unwrap(), json!("0s"));
        assert!(seconds_to_duration(&json!(1.5), "p").is_err());
        assert!(seconds_to_duration(&json!(4_000_000_000i64), "p").is_err());
    }
}
