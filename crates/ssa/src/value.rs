//! How structured-merge-diff looks at a JSON value: its total order and equality
//! (integers and floats compare by number, so `80` and `80.0` are one key), the text
//! a path shows for a value in a conflict (`fmt`'s `%v`/`%q`), and the compact JSON
//! it writes inside `k:` and `v:` FieldsV1 keys (`encoding/json`'s number and string
//! forms).
//!
//! Kubernetes decodes the numbers of a FieldsV1 key as floats and the numbers of an
//! object as integers, so every comparison here has to treat the two as one number;
//! comparing `serde_json::Value`s with `==` would see `80` and `80.0` as different.

use std::cmp::Ordering;
use std::fmt::Write;

use serde_json::{Number, Value};
use topograph_gocompat::{json as gojson, strconv};

/// A number as Go's unstructured decoding holds it: an `int64`, or a `float64` for
/// everything else (fractions, exponents and integers past `int64`).
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

fn num_cmp(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => a.cmp(&b),
        (Num::Int(a), Num::Float(b)) => float_cmp(a as f64, b),
        (Num::Float(a), Num::Int(b)) => float_cmp(a, b as f64),
        (Num::Float(a), Num::Float(b)) => float_cmp(a, b),
    }
}

/// Rank of a value's kind in structured-merge-diff's order: numbers, strings,
/// booleans, lists, maps, then null.
fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// structured-merge-diff's total order over values, used to sort set items and keys.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(num(x), num(y)),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            // Maps compare as their sorted (key, value) lists (serde_json keeps keys sorted).
            for ((kp, vp), (kq, vq)) in x.iter().zip(y) {
                let c = kp.cmp(kq).then_with(|| compare(vp, vq));
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Equality as structured-merge-diff decides "the same value": numbers by value,
/// lists item by item, maps key by key.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(num(x), num(y)) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// The shortest decimal digits of `f` (no sign) and its decimal exponent, so that
/// `f = 0.d1d2d3… × 10^(exp + 1)`, i.e. `d1.d2d3… × 10^exp`.
fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-tripping digits, which is what Go's
    // `strconv.FormatFloat(f, _, -1, 64)` starts from as well.
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`: `d.ddde±XX`, at least two exponent digits.
fn format_e(f: f64) -> String {
    let (digits, exp) = shortest_digits(f);
    let mut out = String::new();
    if f.is_sign_negative() && f != 0.0 {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let _ = write!(
        out,
        "e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    );
    out
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`: plain decimal, no exponent.
fn format_f(f: f64) -> String {
    let (digits, exp) = shortest_digits(f);
    let mut out = String::new();
    if f.is_sign_negative() && f != 0.0 {
        out.push('-');
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(&digits);
    } else if point as usize >= digits.len() {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', point as usize - digits.len()));
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    if digits == "0" {
        return "0".to_string();
    }
    out
}

/// `fmt`'s `%v` of a float64: `%g` with the shortest digits, exponent form from
/// 1e+06 up and below 1e-04.
fn format_go_v(f: f64) -> String {
    if f == 0.0 {
        return "0".to_string();
    }
    let (_, exp) = shortest_digits(f);
    if !(-4..6).contains(&exp) {
        format_e(f)
    } else {
        format_f(f)
    }
}

/// `encoding/json`'s float64: plain decimal between 1e-6 and 1e21, otherwise the
/// exponent form with `e-07` shortened to `e-7`.
fn format_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format_e(f);
        // Go cleans up a negative two-digit exponent with a leading zero.
        if let Some(pos) = s.find("e-0") {
            let mut t = s.clone();
            t.remove(pos + 2);
            return t;
        }
        s
    } else {
        format_f(f)
    }
}

fn number_text(n: &Number, json: bool) -> String {
    match num(n) {
        Num::Int(i) => i.to_string(),
        Num::Float(f) if json => format_json_float(f),
        Num::Float(f) => format_go_v(f),
    }
}

/// The text structured-merge-diff's `value.ToString` gives a value, as it appears in
/// a printed path: strings quoted as Go's `%q`, lists `[a,b]`, maps `{k=v,…}`.
pub fn go_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_text(n, false),
        Value::String(s) => strconv::quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}={}", go_string(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

/// Writes `v` as compact JSON the way Kubernetes writes the value inside a FieldsV1
/// key: Go's number forms, HTML-escaped strings, map keys sorted.
pub fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n, true)),
        Value::String(s) => gojson::write_string(out, s, true),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gojson::write_string(out, k, true);
                out.push(':');
                write_json(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_across_int_and_float() {
        assert!(equal(&json!(80), &json!(80.0)));
        assert_eq!(compare(&json!(1), &json!(1.5)), Ordering::Less);
        assert_eq!(compare(&json!(2), &json!("a")), Ordering::Less);
        assert_eq!(compare(&json!("a"), &json!(true)), Ordering::Less);
        assert_eq!(compare(&json!({}), &json!(null)), Ordering::Less);
    }

    #[test]
    fn go_v_float_forms() {
        assert_eq!(format_go_v(1.5), "1.5");
        assert_eq!(format_go_v(100000.0), "100000");
        assert_eq!(format_go_v(1000000.0), "1e+06");
        assert_eq!(format_go_v(123456789.0), "1.23456789e+08");
        assert_eq!(format_go_v(0.0001), "0.0001");
        assert_eq!(format_go_v(0.00001), "1e-05");
        assert_eq!(format_go_v(-2.5), "-2.5");
    }

    #[test]
    fn json_float_forms() {
        assert_eq!(format_json_float(1.5), "1.5");
        assert_eq!(format_json_float(1e20), "100000000000000000000");
        assert_eq!(format_json_float(1e21), "1e+21");
        assert_eq!(format_json_float(1e-7), "1e-7");
        assert_eq!(format_json_float(0.000001), "0.000001");
    }

    #[test]
    fn go_strings() {
        assert_eq!(go_string(&json!("nginx")), "\"nginx\"");
        assert_eq!(go_string(&json!(80)), "80");
        assert_eq!(go_string(&json!([1, "a"])), "[1,\"a\"]");
        let mut s = String::new();
        write_json(&mut s, &json!({"b": "<x>", "a": 1.0}));
        assert_eq!(s, r#"{"a":1,"b":"\u003cx\u003e"}"#);
    }
}
