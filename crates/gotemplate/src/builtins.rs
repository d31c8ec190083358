//! Go's builtin template functions: comparisons with Go's typing rules, `len`,
//! `index`, `slice`, `not`, the `print` family and the `html`/`js`/`urlquery`
//! escapers. `and`, `or` and `call` need the evaluator and live in `exec`; they
//! are registered here for their signatures.

use std::rc::Rc;

use topograph_gocompat::strconv::is_print;

use crate::fmt::{sprint, sprintf, sprintln};
use crate::funcs::{Ctx, FnError, FnResult, Param, Table, def};
use crate::value::{MapKind, Value};

use Param::{Any, Reflect, Str};

pub(crate) fn register(t: &mut Table) {
    def(t, "and", &[Reflect], Some(Reflect), |_, a| {
        Ok(a.first().cloned().unwrap_or(Value::Invalid))
    });
    def(t, "or", &[Reflect], Some(Reflect), |_, a| {
        Ok(a.first().cloned().unwrap_or(Value::Invalid))
    });
    def(t, "call", &[Reflect], Some(Reflect), |_, _| {
        Err(FnError::Go("call of nil".into()))
    });
    def(t, "not", &[Reflect], None, |_, a| {
        Ok(Value::Bool(!a.first().is_some_and(Value::truth)))
    });
    def(t, "len", &[Reflect], None, |_, a| length(a.first()));
    def(t, "index", &[Reflect], Some(Reflect), |_, a| index(a));
    def(t, "slice", &[Reflect], Some(Reflect), |_, a| slice(a));
    def(t, "print", &[], Some(Any), |c, a| sized(c, sprint(a)));
    def(t, "printf", &[Str], Some(Any), |c, a| {
        let f = a.first().and_then(Value::as_str).unwrap_or("").to_string();
        let s = sprintf(&f, a.get(1..).unwrap_or(&[]));
        sized(c, s)
    });
    def(t, "println", &[], Some(Any), |c, a| sized(c, sprintln(a)));
    def(t, "html", &[], Some(Any), |_, a| {
        Ok(Value::str(html_escape(&eval_args(a))))
    });
    def(t, "js", &[], Some(Any), |_, a| {
        Ok(Value::str(js_escape(&eval_args(a))))
    });
    def(t, "urlquery", &[], Some(Any), |_, a| {
        Ok(Value::str(query_escape(&eval_args(a))))
    });
    def(t, "eq", &[Reflect], Some(Reflect), |_, a| {
        let (first, rest) = a.split_first().ok_or("missing argument for comparison")?;
        eq(first, rest).map(Value::Bool)
    });
    def(t, "ne", &[Reflect, Reflect], None, |_, a| {
        let (x, y) = pair(a)?;
        eq(x, std::slice::from_ref(y)).map(|b| Value::Bool(!b))
    });
    def(t, "lt", &[Reflect, Reflect], None, |_, a| {
        let (x, y) = pair(a)?;
        lt(x, y).map(Value::Bool)
    });
    def(t, "le", &[Reflect, Reflect], None, |_, a| {
        let (x, y) = pair(a)?;
        le(x, y).map(Value::Bool)
    });
    def(t, "gt", &[Reflect, Reflect], None, |_, a| {
        let (x, y) = pair(a)?;
        le(x, y).map(|b| Value::Bool(!b))
    });
    def(t, "ge", &[Reflect, Reflect], None, |_, a| {
        let (x, y) = pair(a)?;
        lt(x, y).map(|b| Value::Bool(!b))
    });
}

fn sized(c: &Ctx, s: String) -> FnResult {
    c.check_size(s.len() as u128)?;
    Ok(Value::str(s))
}

fn pair(a: &[Value]) -> Result<(&Value, &Value), FnError> {
    match a {
        [x, y, ..] => Ok((x, y)),
        _ => Err("missing argument for comparison".into()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Invalid,
    Bool,
    Complex,
    Int,
    Float,
    Str,
    Uint,
}

fn basic_kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::Int64(_) => Kind::Int,
        Value::Uint8(_) | Value::Uint64(_) => Kind::Uint,
        Value::Float64(_) => Kind::Float,
        Value::Complex(..) => Kind::Complex,
        Value::Str(_) => Kind::Str,
        _ => Kind::Invalid,
    }
}

fn as_i(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        _ => 0,
    }
}

fn as_u(v: &Value) -> u64 {
    match v {
        Value::Uint8(b) => *b as u64,
        Value::Uint64(u) => *u,
        _ => 0,
    }
}

fn as_f(v: &Value) -> f64 {
    match v {
        Value::Float64(f) => *f,
        _ => 0.0,
    }
}

/// `indirectInterface`: a nil interface is no value at all, so `Nil` and `Invalid`
/// are treated alike below.
fn indirect_iface(v: &Value) -> &Value {
    v
}

/// Go's reflect kind name, for comparing composite kinds.
fn reflect_kind(v: &Value) -> &'static str {
    v.kind_name()
}

fn incompatible(a: &Value, b: &Value) -> FnError {
    FnError::Go(format!(
        "incompatible types for comparison: {} and {}",
        a.type_name(),
        b.type_name()
    ))
}

pub(crate) fn eq(arg1: &Value, rest: &[Value]) -> Result<bool, FnError> {
    let a = indirect_iface(arg1);
    if rest.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = basic_kind(a);
    for arg in rest {
        let b = indirect_iface(arg);
        let k2 = basic_kind(b);
        let truth = if k1 != k2 {
            match (k1, k2) {
                (Kind::Int, Kind::Uint) => as_i(a) >= 0 && as_i(a) as u64 == as_u(b),
                (Kind::Uint, Kind::Int) => as_i(b) >= 0 && as_u(a) == as_i(b) as u64,
                _ => {
                    if !a.is_nil() && !b.is_nil() {
                        return Err(incompatible(a, b));
                    }
                    false
                }
            }
        } else {
            match k1 {
                Kind::Bool => matches!((a, b), (Value::Bool(x), Value::Bool(y)) if x == y),
                Kind::Complex => match (a, b) {
                    (Value::Complex(r1, i1), Value::Complex(r2, i2)) => r1 == r2 && i1 == i2,
                    _ => false,
                },
                Kind::Float => as_f(a) == as_f(b),
                Kind::Int => as_i(a) == as_i(b),
                Kind::Str => a.as_str() == b.as_str(),
                Kind::Uint => as_u(a) == as_u(b),
                Kind::Invalid => {
                    let (ka, kb) = (reflect_kind(a), reflect_kind(b));
                    if ka != kb && ka != "invalid" && kb != "invalid" {
                        return Err(FnError::Go(format!(
                            "non-comparable types {}: {}, {}: {}",
                            sprintf("%s", std::slice::from_ref(a)),
                            a.type_name(),
                            b.type_name(),
                            sprint(std::slice::from_ref(b))
                        )));
                    }
                    if a.is_nil() || b.is_nil() {
                        a.is_nil() == b.is_nil()
                    } else {
                        match (a, b) {
                            (Value::Version(x), Value::Version(y)) => Rc::ptr_eq(x, y),
                            _ => {
                                return Err(FnError::Go(format!(
                                    "non-comparable type {}: {}",
                                    sprintf("%s", std::slice::from_ref(b)),
                                    b.type_name()
                                )));
                            }
                        }
                    }
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

pub(crate) fn lt(arg1: &Value, arg2: &Value) -> Result<bool, FnError> {
    let a = indirect_iface(arg1);
    let b = indirect_iface(arg2);
    let k1 = basic_kind(a);
    let k2 = basic_kind(b);
    if k1 == Kind::Invalid || k2 == Kind::Invalid {
        return Err("invalid type for comparison".into());
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Kind::Int, Kind::Uint) => Ok(as_i(a) < 0 || (as_i(a) as u64) < as_u(b)),
            (Kind::Uint, Kind::Int) => Ok(as_i(b) >= 0 && as_u(a) < as_i(b) as u64),
            _ => Err(incompatible(a, b)),
        };
    }
    Ok(match k1 {
        Kind::Bool | Kind::Complex | Kind::Invalid => {
            return Err("invalid type for comparison".into());
        }
        Kind::Float => as_f(a) < as_f(b),
        Kind::Int => as_i(a) < as_i(b),
        Kind::Str => a.as_str() < b.as_str(),
        Kind::Uint => as_u(a) < as_u(b),
    })
}

pub(crate) fn le(a: &Value, b: &Value) -> Result<bool, FnError> {
    if lt(a, b)? {
        return Ok(true);
    }
    eq(a, std::slice::from_ref(b))
}

const ZERO_VALUE_TYPE: &str = "reflect: call of reflect.Value.Type on zero Value";

fn length(item: Option<&Value>) -> FnResult {
    let Some(item) = item else {
        return Err(ZERO_VALUE_TYPE.into());
    };
    match item {
        Value::Invalid => Err(ZERO_VALUE_TYPE.into()),
        Value::Nil => Err("len of nil pointer".into()),
        Value::Str(s) => Ok(Value::Int(s.len() as i64)),
        Value::List(l, _) => Ok(Value::Int(l.len() as i64)),
        Value::Map(m, _) => Ok(Value::Int(Value::map_len(m) as i64)),
        Value::Version(_) => Err("len of type semver.Version".into()),
        other => Err(FnError::Go(format!("len of type {}", other.type_name()))),
    }
}

fn index_arg(index: &Value, cap: usize) -> Result<usize, FnError> {
    let x: i128 = match indirect_iface(index) {
        Value::Int(i) | Value::Int64(i) => *i as i128,
        Value::Uint8(b) => *b as i128,
        Value::Uint64(u) => *u as i64 as i128,
        Value::Invalid | Value::Nil => return Err("cannot index slice/array with nil".into()),
        other => {
            return Err(FnError::Go(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            )));
        }
    };
    if x < 0 || x > cap as i128 {
        return Err(FnError::Go(format!("index out of range: {x}")));
    }
    Ok(x as usize)
}

fn index(args: &[Value]) -> FnResult {
    let mut it = args.iter().cloned();
    let mut item = match it.next() {
        Some(Value::Nil) | Some(Value::Invalid) | None => {
            return Err("index of untyped nil".into());
        }
        Some(v) => v,
    };
    for idx in it {
        item = match &item {
            Value::Nil | Value::Invalid => return Err("index of nil pointer".into()),
            Value::List(l, _) => {
                let x = index_arg(&idx, l.len())?;
                l.get(x)
                    .cloned()
                    .ok_or("reflect: slice index out of range")?
            }
            Value::Str(s) => {
                let x = index_arg(&idx, s.len())?;
                Value::Uint8(
                    *s.as_bytes()
                        .get(x)
                        .ok_or("reflect: string index out of range")?,
                )
            }
            Value::Map(m, kind) => {
                let key = match indirect_iface(&idx) {
                    Value::Str(k) => k.clone(),
                    Value::Invalid | Value::Nil => {
                        return Err("value is nil; should be of type string".into());
                    }
                    other => {
                        return Err(FnError::Go(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        )));
                    }
                };
                match Value::map_get(m, &key) {
                    Some(v) => v,
                    None if *kind == MapKind::Str => Value::str(""),
                    None => Value::Nil,
                }
            }
            Value::Version(_) => {
                return Err("can't index item of type semver.Version".into());
            }
            other => {
                return Err(FnError::Go(format!(
                    "can't index item of type {}",
                    other.type_name()
                )));
            }
        };
    }
    Ok(item)
}

fn slice(args: &[Value]) -> FnResult {
    let Some((item, idx)) = args.split_first() else {
        return Err("slice of untyped nil".into());
    };
    let item = indirect_iface(item);
    if item.is_nil() {
        return Err("slice of untyped nil".into());
    }
    if idx.len() > 3 {
        return Err(FnError::Go(format!(
            "too many slice indexes: {}",
            idx.len()
        )));
    }
    let len = match item {
        Value::Str(s) => {
            if idx.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        Value::List(l, _) => l.len(),
        Value::Version(_) => return Err("can't slice item of type *semver.Version".into()),
        other => {
            return Err(FnError::Go(format!(
                "can't slice item of type {}",
                other.type_name()
            )));
        }
    };
    let mut bounds = [0usize, len, len];
    for (i, x) in idx.iter().enumerate() {
        bounds[i] = index_arg(x, len)?;
    }
    if bounds[0] > bounds[1] {
        return Err(FnError::Go(format!(
            "invalid slice index: {} > {}",
            bounds[0], bounds[1]
        )));
    }
    if idx.len() == 3 && bounds[1] > bounds[2] {
        return Err(FnError::Go(format!(
            "invalid slice index: {} > {}",
            bounds[1], bounds[2]
        )));
    }
    match item {
        Value::Str(s) => {
            let b = s.as_bytes().get(bounds[0]..bounds[1]).unwrap_or(&[]);
            Ok(Value::str(String::from_utf8_lossy(b).as_ref()))
        }
        Value::List(l, k) => Ok(Value::List(
            Rc::new(l.get(bounds[0]..bounds[1]).unwrap_or(&[]).to_vec()),
            *k,
        )),
        _ => Err("can't slice".into()),
    }
}

/// The escapers' argument handling: one string as is, anything else through `Sprint`
/// (a nil argument prints as `<no value>` there).
fn eval_args(args: &[Value]) -> String {
    if let [Value::Str(s)] = args {
        return s.to_string();
    }
    let mapped: Vec<Value> = args
        .iter()
        .map(|a| {
            if a.is_nil() {
                Value::str("<no value>")
            } else {
                a.clone()
            }
        })
        .collect();
    sprint(&mapped)
}

pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if (c as u32) < 0x80 => out.push(c),
            c if is_print(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out
}

/// `url.QueryEscape`.
pub(crate) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_go_typing() {
        assert!(eq(&Value::Float64(3.0), &[Value::Float64(3.0)]).is_ok_and(|b| b));
        assert!(eq(&Value::Float64(3.0), &[Value::Int(3)]).is_err());
        assert!(eq(&Value::Invalid, &[Value::str("x")]).is_ok_and(|b| !b));
        assert!(lt(&Value::Int(1), &Value::Uint64(2)).is_ok_and(|b| b));
        assert!(lt(&Value::Bool(true), &Value::Bool(false)).is_err());
    }

    #[test]
    fn escapers() {
        assert_eq!(html_escape("<a href='x'>"), "&lt;a href=&#39;x&#39;&gt;");
        assert_eq!(js_escape("a'b=c"), "a\\'b\\u003Dc");
        assert_eq!(query_escape("a b&c"), "a+b%26c");
    }
}
