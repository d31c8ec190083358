//! CEL types, the declared type of a schema node (as Kubernetes derives it), and the
//! type checker that turns rule mistakes into cel-go's compile errors.

use std::collections::BTreeMap;

use super::parse::{Expr, Lit, Macro, Node};
use crate::schema::Schema;

/// A CEL type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Int,
    Uint,
    Double,
    Bool,
    String,
    Bytes,
    Null,
    Timestamp,
    Duration,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// A schema object with declared fields.
    Object(BTreeMap<String, Ty>),
    /// Opaque library types (`net.IP`, ...).
    Opaque(&'static str),
    Type(Box<Ty>),
    Dyn,
    /// The type of an expression that already failed to check.
    Error,
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Int => write!(f, "int"),
            Ty::Uint => write!(f, "uint"),
            Ty::Double => write!(f, "double"),
            Ty::Bool => write!(f, "bool"),
            Ty::String => write!(f, "string"),
            Ty::Bytes => write!(f, "bytes"),
            Ty::Null => write!(f, "null_type"),
            Ty::Timestamp => write!(f, "google.protobuf.Timestamp"),
            Ty::Duration => write!(f, "google.protobuf.Duration"),
            Ty::List(e) => write!(f, "list({e})"),
            Ty::Map(k, v) => write!(f, "map({k}, {v})"),
            Ty::Object(_) => write!(f, "object"),
            Ty::Opaque(n) => write!(f, "{n}"),
            Ty::Type(t) => write!(f, "type({t})"),
            Ty::Dyn => write!(f, "dyn"),
            Ty::Error => write!(f, "*error*"),
        }
    }
}

const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL name of a schema property (Kubernetes escapes reserved words and `_ . - /`);
/// `None` when the property cannot be reached from CEL.
pub fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok_first = first.is_ascii_alphabetic() || matches!(first, '_' | '.' | '-' | '/');
    if !ok_first
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    let mut out = String::new();
    let mut rest = name;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = r;
            continue;
        }
        let c = rest.chars().next()?;
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// The declared type of values of a schema node, `dyn` where Kubernetes derives none.
pub fn of_schema(s: &Schema) -> Ty {
    declared(s).unwrap_or(Ty::Dyn)
}

/// The type Kubernetes declares for a schema node's values, or `None` where it
/// declares none: a node without `type` (unless int-or-string, which is `dyn`, as
/// `x-kubernetes-preserve-unknown-fields` data has no schema to type it by), an array
/// whose items have none, a map whose values have none. Object properties without
/// one are left out of the object's fields, so rules can neither read them nor run
/// on them.
pub fn declared(s: &Schema) -> Option<Ty> {
    if s.int_or_string {
        return Some(Ty::Dyn);
    }
    Some(match s.type_.as_str() {
        "integer" => Ty::Int,
        "number" => Ty::Double,
        "boolean" => Ty::Bool,
        "string" => match s.format.as_str() {
            "date-time" | "datetime" => Ty::Timestamp,
            "duration" => Ty::Duration,
            "byte" => Ty::Bytes,
            _ => Ty::String,
        },
        "array" => Ty::List(Box::new(declared(s.items.as_deref()?)?)),
        "object" => match s.additional_schema() {
            Some(a) => Ty::Map(Box::new(Ty::String), Box::new(declared(a)?)),
            None => Ty::Object(
                s.properties
                    .iter()
                    .filter_map(|(k, v)| Some((escape(k)?, declared(v)?)))
                    .collect(),
            ),
        },
        _ => return None,
    })
}

fn is_num(t: &Ty) -> bool {
    matches!(t, Ty::Int | Ty::Uint | Ty::Double)
}

fn soft(t: &Ty) -> bool {
    matches!(t, Ty::Dyn | Ty::Error)
}

/// Whether two types can meet (equal, or one of them dynamic).
fn unify(a: &Ty, b: &Ty) -> bool {
    if soft(a) || soft(b) {
        return true;
    }
    match (a, b) {
        (Ty::List(x), Ty::List(y)) => unify(x, y),
        (Ty::Map(k1, v1), Ty::Map(k2, v2)) => unify(k1, k2) && unify(v1, v2),
        (Ty::Object(_), Ty::Object(_)) => true,
        (Ty::Type(x), Ty::Type(y)) => unify(x, y),
        _ => a == b,
    }
}

/// A function signature: receiver (for member calls), arguments, result.
struct Sig {
    name: &'static str,
    receiver: Option<Pat>,
    args: Vec<Pat>,
    result: Pat,
}

#[derive(Clone, Copy)]
enum Pat {
    T(&'static Ty),
    AnyList,
    AnyMap,
    ListOfString,
    ListOfDyn,
}

static INT: Ty = Ty::Int;
static UINT: Ty = Ty::Uint;
static DOUBLE: Ty = Ty::Double;
static BOOL: Ty = Ty::Bool;
static STRING: Ty = Ty::String;
static BYTES: Ty = Ty::Bytes;
static TIMESTAMP: Ty = Ty::Timestamp;
static DURATION: Ty = Ty::Duration;
static IP: Ty = Ty::Opaque("net.IP");
static CIDR: Ty = Ty::Opaque("net.CIDR");

use Pat::{AnyList, AnyMap, ListOfDyn, ListOfString, T};

macro_rules! sig {
    ($name:expr, $recv:expr, [$($a:expr),*], $res:expr) => {
        Sig { name: $name, receiver: $recv, args: vec![$($a),*], result: $res }
    };
}

fn functions() -> Vec<Sig> {
    vec![
        sig!("size", None, [T(&STRING)], T(&INT)),
        sig!("size", None, [T(&BYTES)], T(&INT)),
        sig!("size", None, [AnyList], T(&INT)),
        sig!("size", None, [AnyMap], T(&INT)),
        sig!("size", Some(T(&STRING)), [], T(&INT)),
        sig!("size", Some(T(&BYTES)), [], T(&INT)),
        sig!("size", Some(AnyList), [], T(&INT)),
        sig!("size", Some(AnyMap), [], T(&INT)),
        sig!("startsWith", Some(T(&STRING)), [T(&STRING)], T(&BOOL)),
        sig!("endsWith", Some(T(&STRING)), [T(&STRING)], T(&BOOL)),
        sig!("contains", Some(T(&STRING)), [T(&STRING)], T(&BOOL)),
        sig!("matches", Some(T(&STRING)), [T(&STRING)], T(&BOOL)),
        sig!("matches", None, [T(&STRING), T(&STRING)], T(&BOOL)),
        sig!("lowerAscii", Some(T(&STRING)), [], T(&STRING)),
        sig!("upperAscii", Some(T(&STRING)), [], T(&STRING)),
        sig!("trim", Some(T(&STRING)), [], T(&STRING)),
        sig!("split", Some(T(&STRING)), [T(&STRING)], ListOfString),
        sig!("join", Some(ListOfString), [], T(&STRING)),
        sig!("join", Some(ListOfString), [T(&STRING)], T(&STRING)),
        sig!(
            "replace",
            Some(T(&STRING)),
            [T(&STRING), T(&STRING)],
            T(&STRING)
        ),
        sig!("indexOf", Some(T(&STRING)), [T(&STRING)], T(&INT)),
        sig!("charAt", Some(T(&STRING)), [T(&INT)], T(&STRING)),
        sig!("substring", Some(T(&STRING)), [T(&INT)], T(&STRING)),
        sig!(
            "substring",
            Some(T(&STRING)),
            [T(&INT), T(&INT)],
            T(&STRING)
        ),
        sig!("format", Some(T(&STRING)), [ListOfDyn], T(&STRING)),
        sig!("int", None, [T(&INT)], T(&INT)),
        sig!("int", None, [T(&UINT)], T(&INT)),
        sig!("int", None, [T(&DOUBLE)], T(&INT)),
        sig!("int", None, [T(&STRING)], T(&INT)),
        sig!("int", None, [T(&TIMESTAMP)], T(&INT)),
        sig!("uint", None, [T(&INT)], T(&UINT)),
        sig!("uint", None, [T(&UINT)], T(&UINT)),
        sig!("uint", None, [T(&DOUBLE)], T(&UINT)),
        sig!("uint", None, [T(&STRING)], T(&UINT)),
        sig!("double", None, [T(&INT)], T(&DOUBLE)),
        sig!("double", None, [T(&UINT)], T(&DOUBLE)),
        sig!("double", None, [T(&DOUBLE)], T(&DOUBLE)),
        sig!("double", None, [T(&STRING)], T(&DOUBLE)),
        sig!("string", None, [T(&INT)], T(&STRING)),
        sig!("string", None, [T(&UINT)], T(&STRING)),
        sig!("string", None, [T(&DOUBLE)], T(&STRING)),
        sig!("string", None, [T(&STRING)], T(&STRING)),
        sig!("string", None, [T(&BOOL)], T(&STRING)),
        sig!("string", None, [T(&BYTES)], T(&STRING)),
        sig!("string", None, [T(&TIMESTAMP)], T(&STRING)),
        sig!("string", None, [T(&DURATION)], T(&STRING)),
        sig!("bool", None, [T(&BOOL)], T(&BOOL)),
        sig!("bool", None, [T(&STRING)], T(&BOOL)),
        sig!("bytes", None, [T(&STRING)], T(&BYTES)),
        sig!("bytes", None, [T(&BYTES)], T(&BYTES)),
        sig!("timestamp", None, [T(&STRING)], T(&TIMESTAMP)),
        sig!("timestamp", None, [T(&TIMESTAMP)], T(&TIMESTAMP)),
        sig!("duration", None, [T(&STRING)], T(&DURATION)),
        sig!("duration", None, [T(&DURATION)], T(&DURATION)),
        sig!("isIP", None, [T(&STRING)], T(&BOOL)),
        sig!("ip", None, [T(&STRING)], T(&IP)),
        sig!("isCIDR", None, [T(&STRING)], T(&BOOL)),
        sig!("cidr", None, [T(&STRING)], T(&CIDR)),
        sig!("isURL", None, [T(&STRING)], T(&BOOL)),
        sig!("family", Some(T(&IP)), [], T(&INT)),
    ]
}

/// Functions of the IP and CIDR libraries, which the compatibility environment
/// for new expressions does not have yet.
const NEWER_LIBRARIES: &[&str] = &["isIP", "ip", "isCIDR", "cidr"];

fn matches_pat(p: Pat, t: &Ty) -> bool {
    if soft(t) {
        return true;
    }
    match p {
        T(want) => unify(want, t),
        AnyList | ListOfDyn => matches!(t, Ty::List(_)),
        ListOfString => matches!(t, Ty::List(e) if unify(e, &Ty::String)),
        AnyMap => matches!(t, Ty::Map(..)),
    }
}

fn pat_ty(p: Pat) -> Ty {
    match p {
        T(t) => t.clone(),
        AnyList | ListOfDyn => Ty::List(Box::new(Ty::Dyn)),
        ListOfString => Ty::List(Box::new(Ty::String)),
        AnyMap => Ty::Map(Box::new(Ty::Dyn), Box::new(Ty::Dyn)),
    }
}

/// Checks expressions against declared variables, collecting cel-go style errors.
pub struct Checker {
    scopes: Vec<(String, Ty)>,
    /// Leave out the libraries newer than the compatibility version (IP, CIDR).
    pub compatible: bool,
    /// `(byte offset, message)` in the order found.
    pub errors: Vec<(usize, String)>,
}

impl Checker {
    /// A checker with the given variables (`self`, `oldSelf`).
    pub fn new(vars: Vec<(String, Ty)>) -> Self {
        Checker {
            scopes: vars,
            compatible: false,
            errors: Vec::new(),
        }
    }

    fn error(&mut self, pos: usize, msg: String) -> Ty {
        self.errors.push((pos, msg));
        Ty::Error
    }

    fn no_overload(&mut self, pos: usize, func: &str, receiver: Option<&Ty>, args: &[Ty]) -> Ty {
        let list: Vec<String> = args.iter().map(ToString::to_string).collect();
        let shown = match receiver {
            Some(r) => format!("{r}.({})", list.join(", ")),
            None => format!("({})", list.join(", ")),
        };
        self.error(
            pos,
            format!("found no matching overload for '{func}' applied to '{shown}'"),
        )
    }

    /// The type of `n`.
    pub fn check(&mut self, n: &Node) -> Ty {
        match &n.expr {
            Expr::Lit(l) => match l {
                Lit::Null => Ty::Null,
                Lit::Bool(_) => Ty::Bool,
                Lit::Int(_) => Ty::Int,
                Lit::Uint(_) => Ty::Uint,
                Lit::Double(_) => Ty::Double,
                Lit::Str(_) => Ty::String,
                Lit::Bytes(_) => Ty::Bytes,
            },
            Expr::Ident(name) => {
                if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
                    return t.clone();
                }
                if let Some(t) = type_name(name) {
                    return Ty::Type(Box::new(t));
                }
                self.error(
                    n.pos,
                    format!("undeclared reference to '{name}' (in container '')"),
                )
            }
            Expr::Select {
                operand,
                field,
                test,
            } => {
                let t = self.check(operand);
                let ft = match &t {
                    Ty::Object(fields) => match fields.get(field) {
                        Some(f) => f.clone(),
                        None => self.error(n.pos, format!("undefined field '{field}'")),
                    },
                    Ty::Map(_, v) => (**v).clone(),
                    Ty::Dyn | Ty::Error => t.clone(),
                    other => self.error(
                        n.pos,
                        format!("type '{other}' does not support field selection"),
                    ),
                };
                if *test && ft != Ty::Error {
                    Ty::Bool
                } else {
                    ft
                }
            }
            Expr::List(items) => {
                let types: Vec<Ty> = items.iter().map(|i| self.check(i)).collect();
                let elem = match types.first() {
                    Some(f) if types.iter().all(|t| t == f) => f.clone(),
                    _ => Ty::Dyn,
                };
                Ty::List(Box::new(elem))
            }
            Expr::Map(entries) => {
                let mut ks = Vec::new();
                let mut vs = Vec::new();
                for (k, v) in entries {
                    ks.push(self.check(k));
                    vs.push(self.check(v));
                }
                let same = |ts: &[Ty]| match ts.first() {
                    Some(f) if ts.iter().all(|t| t == f) => f.clone(),
                    _ => Ty::Dyn,
                };
                Ty::Map(Box::new(same(&ks)), Box::new(same(&vs)))
            }
            Expr::Comprehension {
                kind,
                target,
                var,
                filter,
                body,
            } => {
                let t = self.check(target);
                let var_ty = match &t {
                    Ty::List(e) => (**e).clone(),
                    Ty::Map(k, _) => (**k).clone(),
                    Ty::Dyn | Ty::Error => Ty::Dyn,
                    other => {
                        let other = other.clone();
                        return self.error(
                            target.pos,
                            format!(
                                "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                            ),
                        );
                    }
                };
                self.scopes.push((var.clone(), var_ty.clone()));
                if let Some(f) = filter {
                    self.check(f);
                }
                let b = self.check(body);
                self.scopes.pop();
                match kind {
                    Macro::All | Macro::Exists | Macro::ExistsOne => Ty::Bool,
                    Macro::Map => Ty::List(Box::new(b)),
                    Macro::Filter => Ty::List(Box::new(var_ty)),
                }
            }
            Expr::Call { target, func, args } => self.call(n.pos, target.as_deref(), func, args),
        }
    }

    fn call(&mut self, pos: usize, target: Option<&Node>, func: &str, args: &[Node]) -> Ty {
        let recv = target.map(|t| self.check(t));
        let ts: Vec<Ty> = args.iter().map(|a| self.check(a)).collect();
        if recv.as_ref().is_some_and(|r| *r == Ty::Error) || ts.contains(&Ty::Error) {
            return Ty::Error;
        }
        let two = |ts: &[Ty]| -> (Ty, Ty) {
            (
                ts.first().cloned().unwrap_or(Ty::Dyn),
                ts.get(1).cloned().unwrap_or(Ty::Dyn),
            )
        };
        match func {
            "_&&_" | "_||_" => {
                if ts.iter().all(|t| matches!(t, Ty::Bool | Ty::Dyn)) {
                    Ty::Bool
                } else {
                    self.no_overload(pos, func, None, &ts)
                }
            }
            "!_" => {
                if ts.iter().all(|t| matches!(t, Ty::Bool | Ty::Dyn)) {
                    Ty::Bool
                } else {
                    self.no_overload(pos, func, None, &ts)
                }
            }
            "-_" => match ts.first() {
                Some(t @ (Ty::Int | Ty::Double | Ty::Duration | Ty::Dyn)) => t.clone(),
                _ => self.no_overload(pos, func, None, &ts),
            },
            "_?_:_" => {
                let c = ts.first().cloned().unwrap_or(Ty::Dyn);
                let a = ts.get(1).cloned().unwrap_or(Ty::Dyn);
                let b = ts.get(2).cloned().unwrap_or(Ty::Dyn);
                if !matches!(c, Ty::Bool | Ty::Dyn) || !unify(&a, &b) {
                    return self.no_overload(pos, func, None, &ts);
                }
                if a == b {
                    a
                } else if soft(&a) {
                    b
                } else {
                    a
                }
            }
            "_==_" | "_!=_" => {
                let (a, b) = two(&ts);
                if unify(&a, &b) || a == Ty::Null || b == Ty::Null {
                    Ty::Bool
                } else {
                    self.no_overload(pos, func, None, &ts)
                }
            }
            "_<_" | "_<=_" | "_>_" | "_>=_" => {
                let (a, b) = two(&ts);
                let ordered = |t: &Ty| {
                    matches!(
                        t,
                        Ty::Int
                            | Ty::Uint
                            | Ty::Double
                            | Ty::String
                            | Ty::Bytes
                            | Ty::Bool
                            | Ty::Timestamp
                            | Ty::Duration
                    )
                };
                let ok = (soft(&a) && (soft(&b) || ordered(&b)))
                    || (soft(&b) && ordered(&a))
                    || (ordered(&a) && a == b)
                    || (is_num(&a) && is_num(&b));
                if ok {
                    Ty::Bool
                } else {
                    self.no_overload(pos, func, None, &ts)
                }
            }
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => {
                let (a, b) = two(&ts);
                if soft(&a) || soft(&b) {
                    return if soft(&a) { b } else { a };
                }
                let r = match (func, &a, &b) {
                    (_, x, y) if x == y && is_num(x) && (func != "_%_" || *x != Ty::Double) => {
                        Some(x.clone())
                    }
                    ("_+_", Ty::String, Ty::String) | ("_+_", Ty::Bytes, Ty::Bytes) => {
                        Some(a.clone())
                    }
                    ("_+_", Ty::List(x), Ty::List(y)) if unify(x, y) => Some(a.clone()),
                    ("_+_", Ty::Timestamp, Ty::Duration) | ("_+_", Ty::Duration, Ty::Timestamp) => {
                        Some(Ty::Timestamp)
                    }
                    ("_+_" | "_-_", Ty::Duration, Ty::Duration) => Some(Ty::Duration),
                    ("_-_", Ty::Timestamp, Ty::Timestamp) => Some(Ty::Duration),
                    ("_-_", Ty::Timestamp, Ty::Duration) => Some(Ty::Timestamp),
                    _ => None,
                };
                match r {
                    Some(t) => t,
                    None => self.no_overload(pos, func, None, &ts),
                }
            }
            "_[_]" => {
                let (a, b) = two(&ts);
                match (&a, &b) {
                    (Ty::List(e), Ty::Int | Ty::Uint | Ty::Dyn) => (**e).clone(),
                    (Ty::Map(k, v), i) if unify(k, i) => (**v).clone(),
                    (Ty::Dyn, _) => Ty::Dyn,
                    _ => self.no_overload(pos, func, None, &ts),
                }
            }
            "@in" => {
                let (a, b) = two(&ts);
                let ok = match &b {
                    Ty::List(e) => unify(e, &a),
                    Ty::Map(k, _) => unify(k, &a),
                    Ty::Dyn => true,
                    _ => false,
                };
                if ok {
                    Ty::Bool
                } else {
                    self.no_overload(pos, func, None, &ts)
                }
            }
            "type" if recv.is_none() && ts.len() == 1 => Ty::Type(Box::new(ts[0].clone())),
            "dyn" if recv.is_none() && ts.len() == 1 => Ty::Dyn,
            _ => {
                let sigs = functions();
                let newer = self.compatible && NEWER_LIBRARIES.contains(&func);
                let named: Vec<&Sig> = sigs.iter().filter(|s| s.name == func && !newer).collect();
                if named.is_empty() {
                    let target_pos = pos;
                    return self.error(
                        target_pos,
                        format!("undeclared reference to '{func}' (in container '')"),
                    );
                }
                let found: Vec<&&Sig> = named
                    .iter()
                    .filter(|s| {
                        s.args.len() == ts.len()
                            && match (&s.receiver, &recv) {
                                (None, None) => true,
                                (Some(p), Some(r)) => matches_pat(*p, r),
                                _ => false,
                            }
                            && s.args.iter().zip(&ts).all(|(p, t)| matches_pat(*p, t))
                    })
                    .collect();
                match found.as_slice() {
                    [] => self.no_overload(pos, func, recv.as_ref(), &ts),
                    [one] => pat_ty(one.result),
                    many => {
                        let first = pat_ty(many[0].result);
                        if many.iter().all(|s| pat_ty(s.result) == first) {
                            first
                        } else {
                            Ty::Dyn
                        }
                    }
                }
            }
        }
    }
}

/// Type identifiers usable as values (`type(self) == int`).
pub fn type_name(name: &str) -> Option<Ty> {
    Some(match name {
        "int" => Ty::Int,
        "uint" => Ty::Uint,
        "double" => Ty::Double,
        "bool" => Ty::Bool,
        "string" => Ty::String,
        "bytes" => Ty::Bytes,
        "null_type" => Ty::Null,
        "list" => Ty::List(Box::new(Ty::Dyn)),
        "map" => Ty::Map(Box::new(Ty::Dyn), Box::new(Ty::Dyn)),
        "type" => Ty::Type(Box::new(Ty::Dyn)),
        _ => return None,
    })
}
