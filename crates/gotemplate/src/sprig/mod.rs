//! Sprig's hermetic function set (`sprig.HermeticTxtFuncMap()`), one module per
//! family, each function registered with its Go signature. The helpers here are
//! the conversions Sprig leans on everywhere (`strval`, `cast.ToInt64`, `empty`,
//! `reflect.DeepEqual`) and Go's runtime panic texts that surface as errors.

mod dicts;
mod encoding;
pub(crate) mod json;
mod lists;
mod math;
mod misc;
mod regex;
mod strings;
mod urls;

use std::rc::Rc;

use crate::funcs::{FnError, Table};
use crate::value::{ListKind, Value};

pub(crate) fn register(t: &mut Table) {
    strings::register(t);
    lists::register(t);
    dicts::register(t);
    math::register(t);
    misc::register(t);
    encoding::register(t);
    regex::register(t);
    urls::register(t);
}

/// Go's message for a method call through a nil interface (`reflect.TypeOf(nil).Kind()`).
pub(crate) const NIL_DEREF: &str =
    "runtime error: invalid memory address or nil pointer dereference";

/// Sprig's `strval`: strings as is, Stringers through `String()`, the rest `%v`.
pub(crate) fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => crate::fmt::sprint_value(other),
    }
}

/// Argument `i` as a string (the table guarantees the Go type).
pub(crate) fn arg_str(a: &[Value], i: usize) -> &str {
    a.get(i).and_then(Value::as_str).unwrap_or("")
}

/// Argument `i` as an integer (`int`/`int64` parameters).
pub(crate) fn arg_int(a: &[Value], i: usize) -> i64 {
    match a.get(i) {
        Some(Value::Int(n) | Value::Int64(n)) => *n,
        _ => 0,
    }
}

/// `strconv.ParseInt(s, 0, 64)` (also used by `cast`).
pub(crate) fn parse_int0(s: &str) -> Option<i64> {
    let n = crate::literal::number(s, crate::lex::ItemType::Number).ok()?;
    if n.is_int && !s.contains(['.', 'e', 'E', 'p', 'P', 'i']) && !s.starts_with('\'') {
        return Some(n.int);
    }
    None
}

/// `cast.ToInt64`: numbers convert (floats truncate), numeric strings parse, bools are
/// 1/0, anything else is 0.
pub(crate) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint8(b) => *b as i64,
        Value::Uint64(u) => *u as i64,
        Value::Float64(f) => {
            if f.is_finite() && f.abs() < 9.2e18 {
                *f as i64
            } else {
                i64::MIN
            }
        }
        Value::Bool(b) => i64::from(*b),
        Value::Str(s) => {
            if s.is_empty() {
                return 0;
            }
            let t = trim_decimal(s);
            parse_int0(&t).unwrap_or(0)
        }
        _ => 0,
    }
}

/// `cast`'s handling of `"12.50"`-style strings before an integer parse.
fn trim_decimal(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let int_end = i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let rest = &s[int_end..];
    let valid = rest.starts_with('.') && rest[1..].bytes().all(|c| c.is_ascii_digit());
    if !valid {
        return s.to_string();
    }
    let head = &s[..int_end];
    match head {
        "" => "0".into(),
        "-" | "+" => format!("{head}0"),
        _ => head.to_string(),
    }
}

/// `cast.ToFloat64`.
pub(crate) fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint8(b) => *b as f64,
        Value::Uint64(u) => *u as f64,
        Value::Float64(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(s) => parse_go_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// `strconv.ParseFloat(s, 64)`, including Go's `inf`/`nan` spellings.
pub(crate) fn parse_go_float(s: &str) -> Option<f64> {
    let l = s.to_ascii_lowercase();
    let body = l.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity") {
        return Some(if l.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if body == "nan" && l.len() == 3 {
        return Some(f64::NAN);
    }
    crate::literal::parse_float(s)
}

/// Sprig's `empty`.
pub(crate) fn empty(v: &Value) -> bool {
    match v {
        Value::Version(_) => false,
        other => !other.truth(),
    }
}

/// `reflect.DeepEqual` over our values.
pub(crate) fn deep_equal(a: &Value, b: &Value) -> bool {
    deep_equal_at(a, b, 0)
}

fn deep_equal_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > 1000 {
        return false;
    }
    match (a, b) {
        (Value::Invalid | Value::Nil, Value::Invalid | Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
        (Value::Uint8(x), Value::Uint8(y)) => x == y,
        (Value::Uint64(x), Value::Uint64(y)) => x == y,
        (Value::Float64(x), Value::Float64(y)) => x == y,
        (Value::Complex(a1, b1), Value::Complex(a2, b2)) => a1 == a2 && b1 == b2,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Version(x), Value::Version(y)) => Rc::ptr_eq(x, y) || x == y,
        (Value::List(x, kx), Value::List(y, ky)) => {
            kx == ky
                && a.is_nil_list() == b.is_nil_list()
                && x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| deep_equal_at(p, q, depth + 1))
        }
        (Value::Map(x, kx), Value::Map(y, ky)) => {
            if kx != ky {
                return false;
            }
            if Rc::ptr_eq(x, y) {
                return true;
            }
            let (ex, ey) = (Value::entries(x), Value::entries(y));
            ex.len() == ey.len()
                && ex
                    .iter()
                    .zip(ey.iter())
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && deep_equal_at(v1, v2, depth + 1))
        }
        _ => false,
    }
}

/// The slice behind a list argument, or Sprig's error naming the value's kind.
pub(crate) fn list_items(
    v: &Value,
    what: impl FnOnce(&str) -> String,
) -> Result<Rc<Vec<Value>>, FnError> {
    match v {
        Value::List(items, _) => Ok(items.clone()),
        Value::Nil | Value::Invalid => Err(NIL_DEREF.into()),
        other => Err(FnError::Go(what(other.kind_name()))),
    }
}

pub(crate) fn list_of(items: Vec<Value>) -> Value {
    Value::List(Rc::new(items), ListKind::Iface)
}

/// Go's `runtime error: slice bounds out of range` texts for `s[lo:hi]` on a string.
pub(crate) fn slice_str(s: &str, lo: Option<i64>, hi: Option<i64>) -> Result<String, FnError> {
    let len = s.len() as i64;
    let l = lo.unwrap_or(0);
    let h = hi.unwrap_or(len);
    if h < 0 || h > len {
        return Err(FnError::Go(format!(
            "runtime error: slice bounds out of range [:{h}] with length {len}"
        )));
    }
    if l < 0 || l > h {
        return Err(FnError::Go(format!(
            "runtime error: slice bounds out of range [{l}:{h}]"
        )));
    }
    let b = s.as_bytes().get(l as usize..h as usize).unwrap_or(&[]);
    Ok(String::from_utf8_lossy(b).into_owned())
}

/// Go's `unicode.ToUpper`/`ToLower` map one rune to one rune.
pub(crate) fn go_upper(c: char) -> char {
    let mut it = c.to_uppercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

pub(crate) fn go_lower(c: char) -> char {
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Go's `unicode.IsSpace`.
pub(crate) fn is_go_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || ((c as u32) > 0xff && c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_rules() {
        assert_eq!(to_int64(&Value::str("12.50")), 12);
        assert_eq!(to_int64(&Value::str("0x10")), 16);
        assert_eq!(to_int64(&Value::str("abc")), 0);
        assert_eq!(to_int64(&Value::Float64(3.9)), 3);
        assert_eq!(to_float64(&Value::str("1.5")), 1.5);
        assert_eq!(to_float64(&Value::Bool(true)), 1.0);
    }

    #[test]
    fn deep_equal_is_typed() {
        assert!(!deep_equal(&Value::Int(1), &Value::Int64(1)));
        assert!(deep_equal(
            &Value::list(vec![Value::str("a")]),
            &Value::list(vec![Value::str("a")])
        ));
    }
}
