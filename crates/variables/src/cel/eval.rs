//! Evaluation of checked CEL expressions over variable data. Errors are values, as in
//! CEL: `false && error` is `false`, `true || error` is `true`.

use std::collections::BTreeMap;

use super::parse::{Expr, Lit, Macro, Node};
use crate::formats;
use crate::goregex;
use crate::value::go_float;

/// A runtime value.
#[derive(Clone, Debug, PartialEq)]
pub enum CVal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<CVal>),
    Map(Vec<(CVal, CVal)>),
    /// A schema object: only the fields present.
    Obj(BTreeMap<String, CVal>),
    /// Nanoseconds since the Unix epoch.
    Timestamp(i128),
    /// Nanoseconds.
    Duration(i128),
    Type(String),
    Opaque(String),
    Err(String),
}

fn err(msg: impl Into<String>) -> CVal {
    CVal::Err(msg.into())
}

fn no_overload() -> CVal {
    err("no such overload")
}

/// The runtime type name (`type(x)`).
fn type_of(v: &CVal) -> String {
    match v {
        CVal::Null => "null_type",
        CVal::Bool(_) => "bool",
        CVal::Int(_) => "int",
        CVal::Uint(_) => "uint",
        CVal::Double(_) => "double",
        CVal::Str(_) => "string",
        CVal::Bytes(_) => "bytes",
        CVal::List(_) => "list",
        CVal::Map(_) | CVal::Obj(_) => "map",
        CVal::Timestamp(_) => "google.protobuf.Timestamp",
        CVal::Duration(_) => "google.protobuf.Duration",
        CVal::Type(_) => "type",
        CVal::Opaque(_) => "opaque",
        CVal::Err(_) => "error",
    }
    .to_string()
}

/// Parses an RFC 3339 timestamp to nanoseconds since the epoch.
pub fn parse_timestamp(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 59 {
        return None;
    }
    let mut i = 19;
    let mut nanos: i128 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = s.get(start..i)?;
        if frac.is_empty() {
            return None;
        }
        let padded: String = frac.chars().chain(std::iter::repeat('0')).take(9).collect();
        nanos = padded.parse().ok()?;
    }
    let offset: i64 = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            let o = oh * 3600 + om * 60;
            if *sign == b'-' { -o } else { o }
        }
        _ => return None,
    };
    let secs =
        topograph_gocompat::time::days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se
            - offset;
    Some(i128::from(secs) * 1_000_000_000 + nanos)
}

/// Evaluation context: variables by name.
pub struct Activation {
    pub vars: Vec<(String, CVal)>,
}

impl Activation {
    fn lookup(&self, name: &str) -> Option<&CVal> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

fn num_cmp(a: &CVal, b: &CVal) -> Option<std::cmp::Ordering> {
    use CVal::{Double, Int, Uint};
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Uint(x), Uint(y)) => Some(x.cmp(y)),
        (Int(x), Uint(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (Uint(x), Int(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (Double(x), Double(y)) => x.partial_cmp(y),
        (Int(x), Double(y)) => (*x as f64).partial_cmp(y),
        (Double(x), Int(y)) => x.partial_cmp(&(*y as f64)),
        (Uint(x), Double(y)) => (*x as f64).partial_cmp(y),
        (Double(x), Uint(y)) => x.partial_cmp(&(*y as f64)),
        _ => None,
    }
}

/// CEL equality (numbers compare across types).
fn equal(a: &CVal, b: &CVal) -> Result<bool, CVal> {
    match (a, b) {
        (CVal::Err(_), _) => Err(a.clone()),
        (_, CVal::Err(_)) => Err(b.clone()),
        _ => Ok(eq_inner(a, b)),
    }
}

fn eq_inner(a: &CVal, b: &CVal) -> bool {
    if let Some(o) = num_cmp(a, b) {
        return o == std::cmp::Ordering::Equal;
    }
    match (a, b) {
        (CVal::List(x), CVal::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq_inner(p, q))
        }
        (CVal::Map(_) | CVal::Obj(_), CVal::Map(_) | CVal::Obj(_)) => {
            let x = entries(a);
            let y = entries(b);
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| eq_inner(k, k2) && eq_inner(v, v2)))
        }
        _ => a == b,
    }
}

fn entries(v: &CVal) -> Vec<(CVal, CVal)> {
    match v {
        CVal::Map(m) => m.clone(),
        CVal::Obj(o) => o
            .iter()
            .map(|(k, v)| (CVal::Str(k.clone()), v.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

fn to_string(v: &CVal) -> CVal {
    match v {
        CVal::Str(s) => CVal::Str(s.clone()),
        CVal::Int(i) => CVal::Str(i.to_string()),
        CVal::Uint(u) => CVal::Str(u.to_string()),
        CVal::Double(d) => CVal::Str(go_float(*d)),
        CVal::Bool(b) => CVal::Str(b.to_string()),
        CVal::Bytes(b) => match String::from_utf8(b.clone()) {
            Ok(s) => CVal::Str(s),
            Err(_) => err("invalid UTF-8"),
        },
        CVal::Duration(n) => CVal::Str(format!("{}s", go_float(*n as f64 / 1e9))),
        CVal::Err(_) => v.clone(),
        _ => no_overload(),
    }
}

fn format_string(fmt: &str, args: &[CVal]) -> CVal {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    let mut n = 0;
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(verb) = it.next() else {
            return err("unexpected end of format string");
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(n) else {
            return err(format!("index {n} out of range"));
        };
        n += 1;
        let text = match (verb, arg) {
            ('d', CVal::Int(i)) => i.to_string(),
            ('d', CVal::Uint(u)) => u.to_string(),
            ('s', v) => match to_string(v) {
                CVal::Str(s) => s,
                other => return other,
            },
            ('f', CVal::Double(d)) => format!("{d:.6}"),
            ('f', CVal::Int(i)) => format!("{:.6}", *i as f64),
            _ => {
                return err(format!(
                    "error during formatting: unrecognized formatting clause \"{verb}\""
                ));
            }
        };
        out.push_str(&text);
    }
    CVal::Str(out)
}

/// Evaluates `n`.
pub fn eval(n: &Node, act: &mut Activation) -> CVal {
    match &n.expr {
        Expr::Lit(l) => match l {
            Lit::Null => CVal::Null,
            Lit::Bool(b) => CVal::Bool(*b),
            Lit::Int(i) => CVal::Int(*i),
            Lit::Uint(u) => CVal::Uint(*u),
            Lit::Double(d) => CVal::Double(*d),
            Lit::Str(s) => CVal::Str(s.clone()),
            Lit::Bytes(b) => CVal::Bytes(b.clone()),
        },
        Expr::Ident(name) => match act.lookup(name) {
            Some(v) => v.clone(),
            None => match super::types::type_name(name) {
                Some(_) => CVal::Type(name.clone()),
                None => err(format!("no such attribute: {name}")),
            },
        },
        Expr::Select {
            operand,
            field,
            test,
        } => {
            let o = eval(operand, act);
            let found = match &o {
                CVal::Err(_) => return o,
                CVal::Obj(m) => m.get(field).cloned(),
                CVal::Map(m) => m
                    .iter()
                    .find(|(k, _)| *k == CVal::Str(field.clone()))
                    .map(|(_, v)| v.clone()),
                _ => return no_overload(),
            };
            match (found, test) {
                (Some(_), true) => CVal::Bool(true),
                (None, true) => CVal::Bool(false),
                (Some(v), false) => v,
                (None, false) => err(format!("no such key: {field}")),
            }
        }
        Expr::List(items) => {
            let mut out = Vec::new();
            for i in items {
                let v = eval(i, act);
                if let CVal::Err(_) = v {
                    return v;
                }
                out.push(v);
            }
            CVal::List(out)
        }
        Expr::Map(entries) => {
            let mut out = Vec::new();
            for (k, v) in entries {
                let k = eval(k, act);
                let v = eval(v, act);
                for x in [&k, &v] {
                    if let CVal::Err(_) = x {
                        return x.clone();
                    }
                }
                out.push((k, v));
            }
            CVal::Map(out)
        }
        Expr::Comprehension {
            kind,
            target,
            var,
            filter,
            body,
        } => comprehension(*kind, target, var, filter.as_deref(), body, act),
        Expr::Call { target, func, args } => call(target.as_deref(), func, args, act),
    }
}

fn comprehension(
    kind: Macro,
    target: &Node,
    var: &str,
    filter: Option<&Node>,
    body: &Node,
    act: &mut Activation,
) -> CVal {
    let range = eval(target, act);
    let items: Vec<CVal> = match &range {
        CVal::Err(_) => return range,
        CVal::List(l) => l.clone(),
        CVal::Map(_) | CVal::Obj(_) => entries(&range).into_iter().map(|(k, _)| k).collect(),
        _ => return no_overload(),
    };
    let mut first_err: Option<CVal> = None;
    let mut count = 0;
    let mut mapped = Vec::new();
    for item in items {
        act.vars.push((var.to_string(), item.clone()));
        let keep = match filter {
            Some(f) => eval(f, act),
            None => CVal::Bool(true),
        };
        let v = if keep == CVal::Bool(true) {
            Some(eval(body, act))
        } else {
            None
        };
        act.vars.pop();
        if let CVal::Err(_) = keep {
            return keep;
        }
        let Some(v) = v else {
            continue;
        };
        match kind {
            Macro::All => match v {
                CVal::Bool(false) => return CVal::Bool(false),
                CVal::Bool(true) => {}
                CVal::Err(_) => first_err = first_err.or(Some(v)),
                _ => first_err = first_err.or(Some(no_overload())),
            },
            Macro::Exists => match v {
                CVal::Bool(true) => return CVal::Bool(true),
                CVal::Bool(false) => {}
                CVal::Err(_) => first_err = first_err.or(Some(v)),
                _ => first_err = first_err.or(Some(no_overload())),
            },
            Macro::ExistsOne => match v {
                CVal::Bool(true) => count += 1,
                CVal::Bool(false) => {}
                CVal::Err(_) => return v,
                _ => return no_overload(),
            },
            Macro::Map => match v {
                CVal::Err(_) => return v,
                v => mapped.push(v),
            },
            Macro::Filter => match v {
                CVal::Bool(true) => mapped.push(item),
                CVal::Bool(false) => {}
                CVal::Err(_) => return v,
                _ => return no_overload(),
            },
        }
    }
    match kind {
        Macro::All => first_err.unwrap_or(CVal::Bool(true)),
        Macro::Exists => first_err.unwrap_or(CVal::Bool(false)),
        Macro::ExistsOne => CVal::Bool(count == 1),
        Macro::Map | Macro::Filter => CVal::List(mapped),
    }
}

fn arith(func: &str, a: &CVal, b: &CVal) -> CVal {
    use CVal::{Double, Duration, Int, Timestamp, Uint};
    let overflow = || err("integer overflow");
    match (func, a, b) {
        ("_+_", Int(x), Int(y)) => x.checked_add(*y).map_or_else(overflow, Int),
        ("_-_", Int(x), Int(y)) => x.checked_sub(*y).map_or_else(overflow, Int),
        ("_*_", Int(x), Int(y)) => x.checked_mul(*y).map_or_else(overflow, Int),
        ("_/_", Int(_), Int(0)) => err("division by zero"),
        ("_/_", Int(x), Int(y)) => x.checked_div(*y).map_or_else(overflow, Int),
        ("_%_", Int(_), Int(0)) => err("modulus by zero"),
        ("_%_", Int(x), Int(y)) => x.checked_rem(*y).map_or_else(overflow, Int),
        ("_+_", Uint(x), Uint(y)) => x
            .checked_add(*y)
            .map_or_else(|| err("unsigned integer overflow"), Uint),
        ("_-_", Uint(x), Uint(y)) => x
            .checked_sub(*y)
            .map_or_else(|| err("unsigned integer overflow"), Uint),
        ("_*_", Uint(x), Uint(y)) => x
            .checked_mul(*y)
            .map_or_else(|| err("unsigned integer overflow"), Uint),
        ("_/_", Uint(_), Uint(0)) => err("division by zero"),
        ("_/_", Uint(x), Uint(y)) => Uint(x / y),
        ("_%_", Uint(_), Uint(0)) => err("modulus by zero"),
        ("_%_", Uint(x), Uint(y)) => Uint(x % y),
        ("_+_", Double(x), Double(y)) => Double(x + y),
        ("_-_", Double(x), Double(y)) => Double(x - y),
        ("_*_", Double(x), Double(y)) => Double(x * y),
        ("_/_", Double(x), Double(y)) => Double(x / y),
        ("_+_", CVal::Str(x), CVal::Str(y)) => CVal::Str(format!("{x}{y}")),
        ("_+_", CVal::Bytes(x), CVal::Bytes(y)) => CVal::Bytes([x.clone(), y.clone()].concat()),
        ("_+_", CVal::List(x), CVal::List(y)) => CVal::List([x.clone(), y.clone()].concat()),
        ("_+_", Timestamp(t), Duration(d)) | ("_+_", Duration(d), Timestamp(t)) => Timestamp(t + d),
        ("_-_", Timestamp(t), Duration(d)) => Timestamp(t - d),
        ("_-_", Timestamp(t), Timestamp(u)) => Duration(t - u),
        ("_+_", Duration(x), Duration(y)) => Duration(x + y),
        ("_-_", Duration(x), Duration(y)) => Duration(x - y),
        _ => no_overload(),
    }
}

fn compare(func: &str, a: &CVal, b: &CVal) -> CVal {
    let ord = match (a, b) {
        (CVal::Str(x), CVal::Str(y)) => Some(x.cmp(y)),
        (CVal::Bool(x), CVal::Bool(y)) => Some(x.cmp(y)),
        (CVal::Bytes(x), CVal::Bytes(y)) => Some(x.cmp(y)),
        (CVal::Timestamp(x), CVal::Timestamp(y)) | (CVal::Duration(x), CVal::Duration(y)) => {
            Some(x.cmp(y))
        }
        _ => num_cmp(a, b),
    };
    let Some(o) = ord else {
        return no_overload();
    };
    use std::cmp::Ordering::{Equal, Greater, Less};
    CVal::Bool(match func {
        "_<_" => o == Less,
        "_<=_" => o != Greater,
        "_>_" => o == Greater,
        _ => o != Less || o == Equal,
    })
}

fn call(target: Option<&Node>, func: &str, args: &[Node], act: &mut Activation) -> CVal {
    // Logical operators and the conditional evaluate lazily.
    match func {
        "_&&_" | "_||_" => {
            let short = func == "_||_";
            let a = args.first().map_or(CVal::Null, |x| eval(x, act));
            if a == CVal::Bool(short) {
                return a;
            }
            let b = args.get(1).map_or(CVal::Null, |x| eval(x, act));
            if b == CVal::Bool(short) {
                return b;
            }
            return match (&a, &b) {
                (CVal::Err(_), _) => a,
                (_, CVal::Err(_)) => b,
                (CVal::Bool(_), CVal::Bool(_)) => CVal::Bool(!short),
                _ => no_overload(),
            };
        }
        "_?_:_" => {
            let c = args.first().map_or(CVal::Null, |x| eval(x, act));
            return match c {
                CVal::Bool(true) => args.get(1).map_or(CVal::Null, |x| eval(x, act)),
                CVal::Bool(false) => args.get(2).map_or(CVal::Null, |x| eval(x, act)),
                CVal::Err(_) => c,
                _ => no_overload(),
            };
        }
        _ => {}
    }
    let recv = target.map(|t| eval(t, act));
    let vals: Vec<CVal> = args.iter().map(|a| eval(a, act)).collect();
    if let Some(e @ CVal::Err(_)) = &recv {
        return e.clone();
    }
    if let Some(e) = vals.iter().find(|v| matches!(v, CVal::Err(_))) {
        return e.clone();
    }
    let a = vals.first().cloned().unwrap_or(CVal::Null);
    let b = vals.get(1).cloned().unwrap_or(CVal::Null);
    match (func, &recv) {
        ("!_", None) => match a {
            CVal::Bool(x) => CVal::Bool(!x),
            _ => no_overload(),
        },
        ("-_", None) => match a {
            CVal::Int(x) => x
                .checked_neg()
                .map_or_else(|| err("integer overflow"), CVal::Int),
            CVal::Double(x) => CVal::Double(-x),
            CVal::Duration(x) => CVal::Duration(-x),
            _ => no_overload(),
        },
        ("_==_", None) => equal(&a, &b).map_or_else(|e| e, CVal::Bool),
        ("_!=_", None) => equal(&a, &b).map_or_else(|e| e, |x| CVal::Bool(!x)),
        ("_<_" | "_<=_" | "_>_" | "_>=_", None) => compare(func, &a, &b),
        ("_+_" | "_-_" | "_*_" | "_/_" | "_%_", None) => arith(func, &a, &b),
        ("_[_]", None) => match (&a, &b) {
            (CVal::List(l), CVal::Int(i)) => usize::try_from(*i)
                .ok()
                .and_then(|i| l.get(i).cloned())
                .unwrap_or_else(|| err(format!("index out of bounds: {i}"))),
            (CVal::Map(_) | CVal::Obj(_), k) => entries(&a)
                .into_iter()
                .find(|(x, _)| eq_inner(x, k))
                .map(|(_, v)| v)
                .unwrap_or_else(|| match k {
                    CVal::Str(s) => err(format!("no such key: {s}")),
                    other => err(format!("no such key: {other:?}")),
                }),
            _ => no_overload(),
        },
        ("@in", None) => match &b {
            CVal::List(l) => CVal::Bool(l.iter().any(|x| eq_inner(x, &a))),
            CVal::Map(_) | CVal::Obj(_) => {
                CVal::Bool(entries(&b).iter().any(|(k, _)| eq_inner(k, &a)))
            }
            _ => no_overload(),
        },
        ("size", r) => {
            let x = r.as_ref().unwrap_or(&a);
            match x {
                CVal::Str(s) => CVal::Int(s.chars().count() as i64),
                CVal::Bytes(b) => CVal::Int(b.len() as i64),
                CVal::List(l) => CVal::Int(l.len() as i64),
                CVal::Map(_) | CVal::Obj(_) => CVal::Int(entries(x).len() as i64),
                _ => no_overload(),
            }
        }
        ("type", None) => CVal::Type(type_of(&a)),
        ("dyn", None) => a,
        ("string", None) => to_string(&a),
        ("int", None) => match a {
            CVal::Int(i) => CVal::Int(i),
            CVal::Uint(u) => i64::try_from(u).map_or_else(|_| err("integer overflow"), CVal::Int),
            CVal::Double(d)
                if d.is_finite()
                    && d > -9.223_372_036_854_776e18
                    && d < 9.223_372_036_854_776e18 =>
            {
                CVal::Int(d as i64)
            }
            CVal::Double(_) => err("integer overflow"),
            CVal::Str(s) => s
                .parse()
                .map_or_else(|_| err(format!("cannot convert {s:?} to int")), CVal::Int),
            CVal::Timestamp(t) => CVal::Int((t.div_euclid(1_000_000_000)) as i64),
            _ => no_overload(),
        },
        ("uint", None) => match a {
            CVal::Uint(u) => CVal::Uint(u),
            CVal::Int(i) => {
                u64::try_from(i).map_or_else(|_| err("unsigned integer overflow"), CVal::Uint)
            }
            CVal::Double(d) if d.is_finite() && (0.0..1.8446744073709552e19).contains(&d) => {
                CVal::Uint(d as u64)
            }
            CVal::Str(s) => s.parse().map_or_else(|_| err("invalid uint"), CVal::Uint),
            _ => no_overload(),
        },
        ("double", None) => match a {
            CVal::Double(d) => CVal::Double(d),
            CVal::Int(i) => CVal::Double(i as f64),
            CVal::Uint(u) => CVal::Double(u as f64),
            CVal::Str(s) => s
                .parse()
                .map_or_else(|_| err("invalid double"), CVal::Double),
            _ => no_overload(),
        },
        ("bool", None) => match a {
            CVal::Bool(x) => CVal::Bool(x),
            CVal::Str(s) => match s.as_str() {
                "1" | "t" | "true" | "TRUE" | "True" => CVal::Bool(true),
                "0" | "f" | "false" | "FALSE" | "False" => CVal::Bool(false),
                _ => err("type conversion error from 'string' to 'bool'".to_string()),
            },
            _ => no_overload(),
        },
        ("bytes", None) => match a {
            CVal::Str(s) => CVal::Bytes(s.into_bytes()),
            CVal::Bytes(b) => CVal::Bytes(b),
            _ => no_overload(),
        },
        ("timestamp", None) => match a {
            CVal::Str(s) => parse_timestamp(&s)
                .map_or_else(|| err(format!("invalid timestamp {s:?}")), CVal::Timestamp),
            t @ CVal::Timestamp(_) => t,
            _ => no_overload(),
        },
        ("duration", None) => match a {
            CVal::Str(s) => formats::go_parse_duration(&s)
                .map_or_else(|| err(format!("invalid duration {s:?}")), CVal::Duration),
            d @ CVal::Duration(_) => d,
            _ => no_overload(),
        },
        ("isIP", None) => match a {
            CVal::Str(s) => CVal::Bool(formats::validates("k8s-ip-sloppy", &s) && !s.contains('%')),
            _ => no_overload(),
        },
        ("ip", None) => match a {
            CVal::Str(s) if formats::validates("k8s-ip-sloppy", &s) => CVal::Opaque(s),
            CVal::Str(s) => err(format!(
                "IP Address {s:?} parse error during conversion from string: ParseAddr({s:?}): unable to parse IP"
            )),
            _ => no_overload(),
        },
        ("isCIDR", None) => match a {
            CVal::Str(s) => CVal::Bool(formats::validates("cidr", &s)),
            _ => no_overload(),
        },
        ("cidr", None) => match a {
            CVal::Str(s) if formats::validates("cidr", &s) => CVal::Opaque(s),
            CVal::Str(s) => err(format!(
                "network address parse error during conversion from string: {s}"
            )),
            _ => no_overload(),
        },
        ("family", Some(CVal::Opaque(ip))) => CVal::Int(if ip.contains(':') { 6 } else { 4 }),
        ("isURL", None) => match a {
            CVal::Str(s) => CVal::Bool(formats::validates("uri", &s)),
            _ => no_overload(),
        },
        ("matches", r) => {
            let (s, p) = match r {
                Some(s) => (s.clone(), a),
                None => (a, b),
            };
            match (s, p) {
                (CVal::Str(s), CVal::Str(p)) => match goregex::compile(&p) {
                    Ok(re) => CVal::Bool(re.is_match(&s)),
                    Err(e) => err(e),
                },
                _ => no_overload(),
            }
        }
        (m, Some(CVal::Str(s))) => string_method(m, s, &vals),
        ("join", Some(CVal::List(l))) => {
            let sep = match a {
                CVal::Str(s) => s,
                CVal::Null => String::new(),
                _ => return no_overload(),
            };
            let mut parts = Vec::new();
            for x in l {
                match x {
                    CVal::Str(s) => parts.push(s.clone()),
                    _ => return no_overload(),
                }
            }
            CVal::Str(parts.join(&sep))
        }
        _ => no_overload(),
    }
}

fn string_method(m: &str, s: &str, args: &[CVal]) -> CVal {
    let arg = |i: usize| args.get(i).cloned().unwrap_or(CVal::Null);
    match (m, arg(0), arg(1)) {
        ("startsWith", CVal::Str(p), _) => CVal::Bool(s.starts_with(&p)),
        ("endsWith", CVal::Str(p), _) => CVal::Bool(s.ends_with(&p)),
        ("contains", CVal::Str(p), _) => CVal::Bool(s.contains(&p)),
        ("lowerAscii", _, _) => CVal::Str(s.to_ascii_lowercase()),
        ("upperAscii", _, _) => CVal::Str(s.to_ascii_uppercase()),
        ("trim", _, _) => CVal::Str(s.trim().to_string()),
        ("split", CVal::Str(p), _) => CVal::List(
            s.split(p.as_str())
                .map(|x| CVal::Str(x.to_string()))
                .collect(),
        ),
        ("replace", CVal::Str(a), CVal::Str(b)) => CVal::Str(s.replace(&a, &b)),
        ("indexOf", CVal::Str(p), _) => match s.find(&p) {
            Some(i) => CVal::Int(s[..i].chars().count() as i64),
            None => CVal::Int(-1),
        },
        ("charAt", CVal::Int(i), _) => {
            let chars: Vec<char> = s.chars().collect();
            match usize::try_from(i) {
                Ok(i) if i < chars.len() => CVal::Str(chars[i].to_string()),
                Ok(i) if i == chars.len() => CVal::Str(String::new()),
                _ => err(format!("index out of range: {i}")),
            }
        }
        ("substring", CVal::Int(a), end) => {
            let chars: Vec<char> = s.chars().collect();
            let b = match end {
                CVal::Int(b) => b,
                _ => chars.len() as i64,
            };
            if a < 0 || b < a || b as usize > chars.len() {
                return err(format!("index out of range: {a}"));
            }
            CVal::Str(chars[a as usize..b as usize].iter().collect())
        }
        ("format", CVal::List(l), _) => format_string(s, &l),
        _ => no_overload(),
    }
}
