//! Variable values as Go sees them after decoding: the number kinds Kubernetes'
//! decoder produces (integers that fit `int64` stay integers, everything else is a
//! `float64`), Go's equality, and Go's ways of printing numbers and JSON.

use std::collections::BTreeMap;

pub use topograph_gocompat::float::{go_float, json_float};
use topograph_gocompat::json::write_string;

use crate::json::Json;

/// A decoded value. Objects are Go maps: one entry per key (a repeated key keeps its
/// last value) and no order of their own, so they are kept sorted.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// JSON `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer (Kubernetes' decoder keeps integral literals that fit `int64`).
    Int(i64),
    /// Any other number.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Val>),
    /// An object.
    Obj(BTreeMap<String, Val>),
}

/// How numbers are decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbers {
    /// `k8s.io/apimachinery/pkg/util/json`: integral literals that fit `int64` stay integers.
    Kubernetes,
    /// Go's `encoding/json` into `interface{}`: every number is a `float64`.
    Float,
}

/// Decodes `j` the way Go does; the error is Go's message for the first number that
/// does not fit a `float64`.
pub fn decode(j: &Json, numbers: Numbers) -> Result<Val, String> {
    let mut first_error = None;
    let v = decode_inner(j, numbers, &mut first_error);
    match first_error {
        Some(e) => Err(e),
        None => Ok(v),
    }
}

fn decode_inner(j: &Json, numbers: Numbers, err: &mut Option<String>) -> Val {
    match j {
        Json::Null => Val::Null,
        Json::Bool(b) => Val::Bool(*b),
        Json::Str(s) => Val::Str(s.clone()),
        Json::Num(lit) => match number(lit, numbers) {
            Ok(v) => v,
            Err(e) => {
                if err.is_none() {
                    *err = Some(e);
                }
                Val::Null
            }
        },
        Json::Arr(items) => Val::Arr(
            items
                .iter()
                .map(|i| decode_inner(i, numbers, err))
                .collect(),
        ),
        Json::Obj(members) => {
            let mut m = BTreeMap::new();
            for (k, v) in members {
                m.insert(k.clone(), decode_inner(v, numbers, err));
            }
            Val::Obj(m)
        }
    }
}

/// Whether a literal is written as an integer (no fraction, no exponent).
pub fn is_integer_literal(lit: &str) -> bool {
    !lit.contains(['.', 'e', 'E'])
}

/// Parses a float literal like Go's `strconv.ParseFloat`; `None` when out of range.
pub fn parse_float(lit: &str) -> Option<f64> {
    let f: f64 = lit.parse().ok()?;
    f.is_finite().then_some(f)
}

fn number(lit: &str, numbers: Numbers) -> Result<Val, String> {
    if numbers == Numbers::Kubernetes
        && is_integer_literal(lit)
        && let Ok(i) = lit.parse::<i64>()
    {
        return Ok(Val::Int(i));
    }
    match parse_float(lit) {
        Some(f) => Ok(Val::Float(f)),
        None => Err(format!(
            "json: cannot unmarshal number {lit} into Go value of type float64"
        )),
    }
}

/// Converts a `serde_json` value (integers that fit `i64` stay integers).
pub fn from_serde(v: &serde_json::Value) -> Val {
    match v {
        serde_json::Value::Null => Val::Null,
        serde_json::Value::Bool(b) => Val::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Val::Int(i),
            None => Val::Float(n.as_f64().unwrap_or(0.0)),
        },
        serde_json::Value::String(s) => Val::Str(s.clone()),
        serde_json::Value::Array(a) => Val::Arr(a.iter().map(from_serde).collect()),
        serde_json::Value::Object(o) => {
            Val::Obj(o.iter().map(|(k, v)| (k.clone(), from_serde(v))).collect())
        }
    }
}

/// Converts to a `serde_json` value.
pub fn to_serde(v: &Val) -> serde_json::Value {
    match v {
        Val::Null => serde_json::Value::Null,
        Val::Bool(b) => serde_json::Value::Bool(*b),
        Val::Int(i) => serde_json::Value::from(*i),
        Val::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        Val::Str(s) => serde_json::Value::String(s.clone()),
        Val::Arr(a) => serde_json::Value::Array(a.iter().map(to_serde).collect()),
        Val::Obj(o) => {
            serde_json::Value::Object(o.iter().map(|(k, v)| (k.clone(), to_serde(v))).collect())
        }
    }
}

impl Val {
    /// The JSON type name kube-openapi infers for a decoded value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Int(_) => "integer",
            Val::Float(_) => "number",
            Val::Str(_) => "string",
            Val::Arr(_) => "array",
            Val::Obj(_) => "object",
        }
    }

    /// The value as a `float64`, as Go's numeric helpers read it.
    pub fn as_f64(&self) -> f64 {
        match self {
            Val::Int(i) => *i as f64,
            Val::Float(f) => *f,
            _ => 0.0,
        }
    }
}

/// Go's `reflect.DeepEqual` on decoded values: an integer never equals a float.
pub fn deep_equal(a: &Val, b: &Val) -> bool {
    a == b
}

// ---------------------------------------------------------------------------------
// Number printing.

/// How a Kubernetes field error shows a decoded bad value: strings quoted, numbers
/// and booleans plain, `null` for nothing, anything else as JSON.
pub fn go_print(v: &Val) -> String {
    match v {
        Val::Null => "null".to_string(),
        Val::Bool(b) => b.to_string(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) => go_float(*f),
        Val::Str(s) => topograph_api::field::go_quote(s),
        other => to_json(other),
    }
}

// ---------------------------------------------------------------------------------
// JSON output.

/// Go's `json.Marshal` of a decoded value: compact, object keys sorted.
pub fn to_json(v: &Val) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Val, out: &mut String) {
    match v {
        Val::Null => out.push_str("null"),
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::Int(i) => out.push_str(&i.to_string()),
        Val::Float(f) => out.push_str(&json_float(*f)),
        Val::Str(s) => write_string(out, s, true),
        Val::Arr(a) => write_list(out, ['[', ']'], a, write_json),
        Val::Obj(m) => write_object(out, m.iter().map(|(k, v)| (k.as_str(), v)), write_json),
    }
}

/// Go's `json.Marshal` of a `serde_json` value: compact, object keys sorted, strings
/// escaped as Go escapes them (`<`, `>`, `&`, U+2028 and U+2029 too), floats in Go's
/// format (`1e+21`, `1e-7`, `10` for `10.0`); integers exactly as held.
pub fn serde_to_json(v: &serde_json::Value) -> String {
    let mut out = String::new();
    write_serde(v, &mut out);
    out
}

fn write_serde(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::Null => out.push_str("null"),
        serde_json::Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) => out.push_str(&json_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        serde_json::Value::String(s) => write_string(out, s, true),
        serde_json::Value::Array(a) => write_list(out, ['[', ']'], a, write_serde),
        serde_json::Value::Object(o) => {
            let mut members: Vec<(&str, &serde_json::Value)> =
                o.iter().map(|(k, v)| (k.as_str(), v)).collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            write_object(out, members, write_serde);
        }
    }
}

/// Compact JSON text of a parsed (not decoded) value, as Go's `json.Compact` leaves it:
/// literals are kept as written.
pub fn compact(j: &Json) -> String {
    let mut out = String::new();
    write_compact(j, &mut out);
    out
}

fn write_compact(j: &Json, out: &mut String) {
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Num(n) => out.push_str(n),
        Json::Str(s) => write_string(out, s, true),
        Json::Arr(a) => write_list(out, ['[', ']'], a, write_compact),
        Json::Obj(m) => write_object(out, m.iter().map(|(k, v)| (k.as_str(), v)), write_compact),
    }
}

/// Items between `brackets`, comma-separated with no spaces, as Go's compact output
/// writes arrays and objects alike.
fn write_list<I: IntoIterator>(
    out: &mut String,
    [open, close]: [char; 2],
    items: I,
    mut write: impl FnMut(I::Item, &mut String),
) {
    out.push(open);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(item, out);
    }
    out.push(close);
}

fn write_object<'a, T: 'a>(
    out: &mut String,
    members: impl IntoIterator<Item = (&'a str, &'a T)>,
    write: fn(&T, &mut String),
) {
    write_list(out, ['{', '}'], members, |(k, v), out| {
        write_string(out, k, true);
        out.push(':');
        write(v, out);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_number_printing() {
        assert_eq!(go_float(1e20), "1e+20");
        assert_eq!(go_float(10.0), "10");
        assert_eq!(go_float(0.5), "0.5");
        assert_eq!(go_float(1.2345678901234567e19), "1.2345678901234567e+19");
        assert_eq!(go_float(-9.223372036854776e18), "-9.223372036854776e+18");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(json_float(1.2345678901234567e19), "12345678901234567000");
        assert_eq!(json_float(1e21), "1e+21");
        assert_eq!(json_float(1e-7), "1e-7");
        assert_eq!(json_float(100.0), "100");
    }

    #[test]
    fn kubernetes_numbers() {
        let j = crate::json::parse("[1, 1.0, -0, 1e2, 12345678901234567890]").unwrap();
        let v = decode(&j, Numbers::Kubernetes).unwrap();
        assert_eq!(
            v,
            Val::Arr(vec![
                Val::Int(1),
                Val::Float(1.0),
                Val::Int(0),
                Val::Float(100.0),
                Val::Float(1.2345678901234567e19)
            ])
        );
        let j = crate::json::parse("[1e400]").unwrap();
        assert_eq!(
            decode(&j, Numbers::Float).unwrap_err(),
            "json: cannot unmarshal number 1e400 into Go value of type float64"
        );
    }
}
