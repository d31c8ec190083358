//! Go values made JSON as `sigs.k8s.io/yaml` converts them (map keys become strings or
//! are refused) and `encoding/json` writes them (non-finite floats refused), and Go's
//! `%#v` of them for error texts.

use crate::float::go_float;
use crate::strconv::quote;
use serde_json::Value;

use super::decode::Go;

pub(super) fn to_json(v: &Go) -> Result<Value, String> {
    let converted = convert(v)?;
    if let Some(f) = first_non_finite(&converted) {
        return Err(format!("json: unsupported value: {}", go_float(f)));
    }
    Ok(json_value(&converted))
}

/// A value JSON can hold but for non-finite floats, which `encoding/json` refuses
/// after the conversion.
enum Conv {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Arr(Vec<Conv>),
    /// Sorted by key, as `encoding/json` writes (and walks) maps.
    Obj(Vec<(String, Conv)>),
}

/// `sigs.k8s.io/yaml`'s conversion: map keys become strings (numbers as Go formats
/// them, floats at `float32` precision) or are refused.
fn convert(v: &Go) -> Result<Conv, String> {
    Ok(match v {
        Go::Nil => Conv::Null,
        Go::Bool(b) => Conv::Bool(*b),
        Go::Int(i) => Conv::Int(*i),
        Go::Uint(u) => Conv::Uint(*u),
        Go::Float(f) => Conv::Float(*f),
        Go::Str(s) => Conv::Str(s.clone()),
        Go::Bytes(b) => Conv::Str(go_string(b)),
        Go::Seq(items) => Conv::Arr(items.iter().map(convert).collect::<Result<_, _>>()?),
        Go::Map(entries) => {
            let mut out: Vec<(String, Conv)> = Vec::new();
            for (k, value) in entries {
                let key = match k {
                    Go::Str(s) => s.clone(),
                    Go::Bytes(b) => go_string(b),
                    Go::Int(i) => i.to_string(),
                    Go::Float(f) => float32_key(*f),
                    Go::Bool(b) => b.to_string(),
                    Go::Nil => {
                        return Err(format!(
                            "unsupported map key of type: %!s(<nil>), key: <nil>, value: {}",
                            go_syntax(value, true)
                        ));
                    }
                    other => {
                        return Err(format!(
                            "unsupported map key of type: {}, key: {}, value: {}",
                            go_type(other),
                            go_syntax(other, true),
                            go_syntax(value, true)
                        ));
                    }
                };
                let converted = convert(value)?;
                match out.iter_mut().find(|(existing, _)| *existing == key) {
                    Some(entry) => entry.1 = converted,
                    None => out.push((key, converted)),
                }
            }
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Conv::Obj(out)
        }
    })
}

/// Go's `string(bytes)` as `encoding/json` writes it: each byte that is not part of
/// valid UTF-8 becomes U+FFFD.
fn go_string(b: &[u8]) -> String {
    let mut out = String::new();
    for chunk in b.utf8_chunks() {
        out.push_str(chunk.valid());
        for _ in chunk.invalid() {
            out.push('\u{FFFD}');
        }
    }
    out
}

/// A float map key as `sigs.k8s.io/yaml` spells it: `strconv.FormatFloat(f, 'g', -1,
/// 32)`, with go-yaml's names for infinities and NaN.
fn float32_key(f: f64) -> String {
    let f = f as f32;
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's shortest round-trip digits for an f32, as `d.ddde±x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1;
    let len = digits.len() as i32;
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point >= len {
        format!("{digits}{}", "0".repeat((point - len) as usize))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

fn first_non_finite(v: &Conv) -> Option<f64> {
    match v {
        Conv::Float(f) if !f.is_finite() => Some(*f),
        Conv::Arr(items) => items.iter().find_map(first_non_finite),
        Conv::Obj(members) => members.iter().find_map(|(_, v)| first_non_finite(v)),
        _ => None,
    }
}

fn json_value(v: &Conv) -> Value {
    match v {
        Conv::Null => Value::Null,
        Conv::Bool(b) => Value::Bool(*b),
        Conv::Int(i) => Value::from(*i),
        Conv::Uint(u) => Value::from(*u),
        Conv::Float(f) => float_json(*f),
        Conv::Str(s) => Value::String(s.clone()),
        Conv::Arr(items) => Value::Array(items.iter().map(json_value).collect()),
        Conv::Obj(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), json_value(v)))
                .collect(),
        ),
    }
}

/// A float as the JSON number `encoding/json` writes and Kubernetes reads back: an
/// integral one below 1e21 is written without a fraction (`1.0` and `1e3` become `1`
/// and `1000`) and so is read as an integer where an `int64` holds it.
fn float_json(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.2e18 {
        return Value::from(f as i64);
    }
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

// Go's `%#v` of decoded values, for error texts.

fn go_type(v: &Go) -> &'static str {
    match v {
        Go::Nil => "<nil>",
        Go::Bool(_) => "bool",
        Go::Int(_) => "int",
        Go::Uint(_) => "uint64",
        Go::Float(_) => "float64",
        Go::Str(_) | Go::Bytes(_) => "string",
        Go::Seq(_) => "[]interface {}",
        Go::Map(_) => "map[interface {}]interface {}",
    }
}

/// `%#v` (`%+#v` is the same for these types). `top` is whether `v` is the operand
/// itself rather than an element held in an `interface{}`: a nil operand prints as
/// `<nil>`, a nil element as `interface {}(nil)`.
pub(super) fn go_syntax(v: &Go, top: bool) -> String {
    match v {
        Go::Nil if top => "<nil>".into(),
        Go::Nil => "interface {}(nil)".into(),
        Go::Bool(b) => b.to_string(),
        Go::Int(i) => i.to_string(),
        Go::Uint(u) => format!("0x{u:x}"),
        Go::Float(f) => go_float(*f),
        Go::Str(s) => quote(s),
        Go::Bytes(b) => quote(&go_string(b)),
        Go::Seq(items) => {
            let inner: Vec<String> = items.iter().map(|i| go_syntax(i, false)).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Go::Map(entries) => {
            let mut sorted: Vec<&(Go, Go)> = entries.iter().collect();
            sorted.sort_by(|a, b| key_order(&a.0, &b.0));
            let inner: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{}", go_syntax(k, false), go_syntax(v, false)))
                .collect();
            format!("map[interface {{}}]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// The order `fmt` prints map keys in: nil first, then by type, then by value.
fn key_order(a: &Go, b: &Go) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let rank = |v: &Go| match v {
        Go::Nil => 0,
        Go::Bool(_) => 1,
        Go::Int(_) => 2,
        Go::Uint(_) => 3,
        Go::Float(_) => 4,
        Go::Str(_) | Go::Bytes(_) => 5,
        Go::Seq(_) | Go::Map(_) => 6,
    };
    match (a, b) {
        (Go::Bool(x), Go::Bool(y)) => x.cmp(y),
        (Go::Int(x), Go::Int(y)) => x.cmp(y),
        (Go::Uint(x), Go::Uint(y)) => x.cmp(y),
        (Go::Float(x), Go::Float(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Go::Str(x), Go::Str(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_have_float32_spelling() {
        assert_eq!(float32_key(1.5), "1.5");
        assert_eq!(float32_key(0.1234567891), "0.12345679");
        assert_eq!(float32_key(1e6), "1e+06");
        assert_eq!(float32_key(1500.0), "1500");
        assert_eq!(float32_key(123456.0), "123456");
        assert_eq!(float32_key(0.0001), "0.0001");
        assert_eq!(float32_key(0.00001), "1e-05");
        assert_eq!(float32_key(-2.5e-7), "-2.5e-07");
        assert_eq!(float32_key(1e39), ".inf");
    }
}
