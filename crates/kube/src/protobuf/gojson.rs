//! JSON objects read into protobuf fields and written back from them by the rules Go's
//! `encoding/json` applies to the Kubernetes structs: `omitempty` drops zero values,
//! fields without it are always written (nil lists and maps as `null`), pointers are
//! written when set, struct fields always, and a zero `metav1.Time` is `null`. Reading,
//! `null` is a missing field and a value of the wrong type is an error naming its path.
//! Writing from protobuf therefore gives what kube-apiserver would answer in JSON.

use super::time;
use crate::util::json_type;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use k8s_pb::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A field that cannot be converted, with its path from the object's root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CodecError {
    pub path: String,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, CodecError>;

pub fn error(path: &str, message: impl Into<String>) -> CodecError {
    CodecError {
        path: if path.is_empty() {
            ".".into()
        } else {
            path.into()
        },
        message: message.into(),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// One JSON object being read into a message.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    map: Option<&'a Map<String, Value>>,
    path: &'a str,
}

/// Owns the paths of nested readers, so they can borrow them.
pub struct Nested<'a> {
    value: &'a Value,
    path: String,
}

impl<'a> Nested<'a> {
    pub fn reader(&self) -> Result<Reader<'_>> {
        Reader::of(self.value, &self.path)
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn value(&self) -> &'a Value {
        self.value
    }
}

impl<'a> Reader<'a> {
    /// `value` must be an object (or null: an empty one).
    pub fn of(value: &'a Value, path: &'a str) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Reader {
                map: Some(map),
                path,
            }),
            Value::Null => Ok(Reader { map: None, path }),
            other => Err(error(
                path,
                format!("expected an object, found {}", json_type(other)),
            )),
        }
    }

    pub fn path(&self) -> &str {
        self.path
    }

    /// The field's value; `null` counts as missing, as Go's decoder leaves the field zero.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map?.get(key).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, expected: &str, found: &Value) -> CodecError {
        error(
            &join(self.path, key),
            format!("expected {expected}, found {}", json_type(found)),
        )
    }

    pub fn string(&self, key: &str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    pub fn int64(&self, key: &str) -> Result<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.wrong(key, "an integer", v)),
        }
    }

    pub fn int32(&self, key: &str) -> Result<Option<i32>> {
        match self.int64(key)? {
            None => Ok(None),
            Some(n) => i32::try_from(n).map(Some).map_err(|_| {
                error(
                    &join(self.path, key),
                    format!("{n} does not fit a 32-bit integer"),
                )
            }),
        }
    }

    pub fn boolean(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "a boolean", other)),
        }
    }

    pub fn float(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a number", v)),
        }
    }

    /// A nested object, to be read with [`Nested::reader`].
    pub fn object(&self, key: &str) -> Result<Option<Nested<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v @ Value::Object(_)) => Ok(Some(Nested {
                value: v,
                path: join(self.path, key),
            })),
            Some(other) => Err(self.wrong(key, "an object", other)),
        }
    }

    /// The items of an array, each with its path.
    pub fn items(&self, key: &str) -> Result<Vec<Nested<'a>>> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, v)| Nested {
                    value: v,
                    path: format!("{}[{i}]", join(self.path, key)),
                })
                .collect()),
            Some(other) => Err(self.wrong(key, "an array", other)),
        }
    }

    /// The entries of an object used as a map, each with its path.
    pub fn entries(&self, key: &str) -> Result<Vec<(String, Nested<'a>)>> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(map)) => Ok(map
                .iter()
                .map(|(k, v)| {
                    let nested = Nested {
                        value: v,
                        path: format!("{}[{k}]", join(self.path, key)),
                    };
                    (k.clone(), nested)
                })
                .collect()),
            Some(other) => Err(self.wrong(key, "an object", other)),
        }
    }

    pub fn strings(&self, key: &str) -> Result<Vec<String>> {
        self.items(key)?
            .into_iter()
            .map(|item| match item.value {
                Value::String(s) => Ok(s.clone()),
                other => Err(error(
                    &item.path,
                    format!("expected a string, found {}", json_type(other)),
                )),
            })
            .collect()
    }

    pub fn string_map(&self, key: &str) -> Result<BTreeMap<String, String>> {
        self.entries(key)?
            .into_iter()
            .map(|(k, v)| match v.value {
                Value::String(s) => Ok((k, s.clone())),
                other => Err(error(
                    &v.path,
                    format!("expected a string, found {}", json_type(other)),
                )),
            })
            .collect()
    }

    /// Bytes written as standard base64, as Go writes `[]byte`.
    pub fn bytes(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.string(key)? {
            None => Ok(None),
            Some(text) => decode_base64(&text, &join(self.path, key)).map(Some),
        }
    }

    pub fn bytes_map(&self, key: &str) -> Result<BTreeMap<String, Vec<u8>>> {
        self.entries(key)?
            .into_iter()
            .map(|(k, v)| match v.value {
                Value::String(s) => Ok((k, decode_base64(s, &v.path)?)),
                other => Err(error(
                    &v.path,
                    format!("expected a base64 string, found {}", json_type(other)),
                )),
            })
            .collect()
    }

    /// A `metav1.Time`: whole seconds on the wire.
    pub fn time(&self, key: &str) -> Result<Option<Time>> {
        Ok(self.instant(key)?.map(|(seconds, _)| Time {
            seconds: Some(seconds),
            nanos: Some(0),
        }))
    }

    /// A `metav1.MicroTime`: microseconds kept.
    pub fn micro_time(&self, key: &str) -> Result<Option<MicroTime>> {
        Ok(self.instant(key)?.map(|(seconds, nanos)| MicroTime {
            seconds: Some(seconds),
            // Below a microsecond the JSON form cannot say it; the wire keeps only
            // what a read gives back.
            nanos: Some(((nanos / 1_000) * 1_000) as i32),
        }))
    }

    fn instant(&self, key: &str) -> Result<Option<(i64, u32)>> {
        match self.string(key)? {
            None => Ok(None),
            Some(text) => time::parse_rfc3339(&text)
                .map(Some)
                .map_err(|e| error(&join(self.path, key), e)),
        }
    }

    /// Any JSON value, as the raw bytes `apiextensions.JSON` and `FieldsV1` carry.
    pub fn raw(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => serde_json::to_vec(v)
                .map(Some)
                .map_err(|e| error(&join(self.path, key), e.to_string())),
        }
    }
}

fn decode_base64(text: &str, path: &str) -> Result<Vec<u8>> {
    // Go's decoder skips line breaks inside base64 text.
    let compact: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    BASE64
        .decode(compact.as_bytes())
        .map_err(|e| error(path, format!("illegal base64 data: {e}")))
}

/// A JSON object being written from a message, field by field in Go's order.
#[derive(Debug, Default)]
pub struct Writer {
    map: Map<String, Value>,
}

impl Writer {
    pub fn new() -> Self {
        Writer::default()
    }

    pub fn done(self) -> Value {
        Value::Object(self.map)
    }

    fn put(&mut self, key: &str, value: Value) -> &mut Self {
        self.map.insert(key.to_string(), value);
        self
    }

    /// A string with `omitempty`.
    pub fn str(&mut self, key: &str, v: Option<String>) -> &mut Self {
        match v {
            Some(s) if !s.is_empty() => self.put(key, Value::String(s)),
            _ => self,
        }
    }

    /// A string without `omitempty`: `""` when unset.
    pub fn str_always(&mut self, key: &str, v: Option<String>) -> &mut Self {
        self.put(key, Value::String(v.unwrap_or_default()))
    }

    /// A `*string`.
    pub fn str_ptr(&mut self, key: &str, v: Option<String>) -> &mut Self {
        match v {
            Some(s) => self.put(key, Value::String(s)),
            None => self,
        }
    }

    /// An integer with `omitempty`.
    pub fn int(&mut self, key: &str, v: Option<impl Into<i64>>) -> &mut Self {
        match v.map(Into::into) {
            Some(n) if n != 0 => self.put(key, Value::from(n)),
            _ => self,
        }
    }

    /// An integer without `omitempty`: `0` when unset.
    pub fn int_always(&mut self, key: &str, v: Option<impl Into<i64>>) -> &mut Self {
        self.put(key, Value::from(v.map_or(0, Into::into)))
    }

    /// A `*int64` or `*int32`.
    pub fn int_ptr(&mut self, key: &str, v: Option<impl Into<i64>>) -> &mut Self {
        match v {
            Some(n) => self.put(key, Value::from(n.into())),
            None => self,
        }
    }

    /// A bool with `omitempty`.
    pub fn bool(&mut self, key: &str, v: Option<bool>) -> &mut Self {
        match v {
            Some(true) => self.put(key, Value::Bool(true)),
            _ => self,
        }
    }

    /// A bool without `omitempty`.
    pub fn bool_always(&mut self, key: &str, v: Option<bool>) -> &mut Self {
        self.put(key, Value::Bool(v.unwrap_or(false)))
    }

    /// A `*bool`.
    pub fn bool_ptr(&mut self, key: &str, v: Option<bool>) -> &mut Self {
        match v {
            Some(b) => self.put(key, Value::Bool(b)),
            None => self,
        }
    }

    /// A `*float64`: integral values as integers, as Go prints them.
    pub fn float_ptr(&mut self, key: &str, v: Option<f64>) -> &mut Self {
        match v {
            Some(f) => self.put(key, float_value(f)),
            None => self,
        }
    }

    /// A `metav1.Time` that is not a pointer: `null` when zero.
    pub fn time(&mut self, key: &str, v: Option<Time>) -> Result<&mut Self> {
        let text = time_text(v, key)?;
        Ok(self.put(key, text.map_or(Value::Null, Value::String)))
    }

    /// A `*metav1.Time`.
    pub fn time_ptr(&mut self, key: &str, v: Option<Time>) -> Result<&mut Self> {
        match v {
            None => Ok(self),
            Some(t) => {
                let text = time_text(Some(t), key)?;
                Ok(self.put(key, text.map_or(Value::Null, Value::String)))
            }
        }
    }

    /// A `metav1.MicroTime` that is not a pointer: `null` when zero.
    pub fn micro_time(&mut self, key: &str, v: Option<MicroTime>) -> Result<&mut Self> {
        let text = match v {
            Some(MicroTime {
                seconds: Some(s),
                nanos,
            }) => Some(
                time::format_micro(s, nanos.unwrap_or(0).clamp(0, 999_999_999) as u32)
                    .map_err(|e| error(key, e))?,
            ),
            _ => None,
        };
        Ok(self.put(key, text.map_or(Value::Null, Value::String)))
    }

    /// A struct field (never omitted, `omitempty` or not).
    pub fn object(&mut self, key: &str, v: Value) -> &mut Self {
        self.put(key, v)
    }

    /// A pointer to a struct.
    pub fn object_ptr(&mut self, key: &str, v: Option<Value>) -> &mut Self {
        match v {
            Some(v) => self.put(key, v),
            None => self,
        }
    }

    /// A list with `omitempty`.
    pub fn list(&mut self, key: &str, v: Vec<Value>) -> &mut Self {
        if v.is_empty() {
            self
        } else {
            self.put(key, Value::Array(v))
        }
    }

    /// A list without `omitempty`: protobuf cannot tell nil from empty, and Go decodes
    /// both to nil, written `null`.
    pub fn list_always(&mut self, key: &str, v: Vec<Value>) -> &mut Self {
        if v.is_empty() {
            self.put(key, Value::Null)
        } else {
            self.put(key, Value::Array(v))
        }
    }

    pub fn strings(&mut self, key: &str, v: Vec<String>) -> &mut Self {
        self.list(key, v.into_iter().map(Value::String).collect())
    }

    pub fn strings_always(&mut self, key: &str, v: Vec<String>) -> &mut Self {
        self.list_always(key, v.into_iter().map(Value::String).collect())
    }

    /// A map with `omitempty`.
    pub fn map(&mut self, key: &str, v: impl IntoIterator<Item = (String, Value)>) -> &mut Self {
        let map: Map<String, Value> = v.into_iter().collect();
        if map.is_empty() {
            self
        } else {
            self.put(key, Value::Object(map))
        }
    }

    pub fn string_map(&mut self, key: &str, v: BTreeMap<String, String>) -> &mut Self {
        self.map(key, v.into_iter().map(|(k, s)| (k, Value::String(s))))
    }

    pub fn bytes_map(&mut self, key: &str, v: BTreeMap<String, Vec<u8>>) -> &mut Self {
        self.map(
            key,
            v.into_iter()
                .map(|(k, b)| (k, Value::String(BASE64.encode(b)))),
        )
    }

    /// `[]byte` with `omitempty`.
    pub fn bytes(&mut self, key: &str, v: Option<Vec<u8>>) -> &mut Self {
        match v {
            Some(b) if !b.is_empty() => self.put(key, Value::String(BASE64.encode(b))),
            _ => self,
        }
    }

    /// Raw JSON carried as bytes (`apiextensions.JSON`, `FieldsV1`) behind a pointer.
    pub fn raw_ptr(&mut self, key: &str, v: Option<Vec<u8>>) -> Result<&mut Self> {
        match v {
            None => Ok(self),
            Some(raw) => {
                let value = raw_value(&raw, key)?;
                Ok(self.put(key, value))
            }
        }
    }
}

/// Raw JSON bytes as a value; empty bytes are `null`, as Go marshals an empty `Raw`.
pub fn raw_value(raw: &[u8], path: &str) -> Result<Value> {
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(raw).map_err(|e| error(path, format!("raw JSON: {e}")))
}

fn time_text(v: Option<Time>, key: &str) -> Result<Option<String>> {
    match v {
        // An empty message is Go's zero time: protobuf writes nothing for it.
        Some(Time {
            seconds: Some(s), ..
        }) => time::format_seconds(s).map(Some).map_err(|e| error(key, e)),
        _ => Ok(None),
    }
}

/// A float as Go's `encoding/json` prints it: integral values without a fraction.
pub fn float_value(f: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if f.fract() == 0.0 && f.abs() < EXACT {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_with_paths() {
        let v = json!({"a": {"b": [1, "x"]}, "n": null, "s": "t", "bad": "%%%"});
        let r = Reader::of(&v, "").unwrap();
        assert_eq!(r.string("n"), Ok(None));
        assert_eq!(r.string("s"), Ok(Some("t".into())));
        let a = r.object("a").unwrap().unwrap();
        let e = a.reader().unwrap().strings("b").unwrap_err();
        assert_eq!(e.to_string(), "a.b[0]: expected a string, found number");
        assert_eq!(
            r.int64("s").unwrap_err().to_string(),
            "s: expected an integer, found string"
        );
        assert!(
            r.bytes("bad")
                .unwrap_err()
                .message
                .starts_with("illegal base64")
        );
        assert!(Reader::of(&json!([]), "spec").is_err());
    }

    #[test]
    fn writes_as_go_does() {
        let mut w = Writer::new();
        w.str("empty", Some(String::new()))
            .str_always("always", None)
            .int("zero", Some(0))
            .int_ptr("ptr", Some(0))
            .bool("no", Some(false))
            .float_ptr("f", Some(2.0))
            .float_ptr("g", Some(0.5))
            .list_always("items", vec![]);
        w.time("t", None).unwrap();
        assert_eq!(
            w.done(),
            json!({"always": "", "ptr": 0, "f": 2, "g": 0.5, "items": null, "t": null})
        );
    }
}
