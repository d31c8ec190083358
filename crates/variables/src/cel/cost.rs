//! A static worst-case cost estimate for CEL expressions, after the one cel-go's
//! checker makes and Kubernetes bounds rules with (`StaticEstimatedCostLimit`).
//!
//! It is an approximation: it follows cel-go's cost model where it matters for the
//! budget — identifiers and field selections cost 1, literals 0, calls 1 plus their
//! arguments, string and list traversals 0.1 per element (`contains` and `matches`
//! multiply the sizes of both sides), comprehensions their range size times their
//! body — and takes sizes from the schema as Kubernetes declares them (`maxLength`
//! times 4 bytes, `maxItems`, `maxProperties`, otherwise what fits in a 3 MiB
//! request). Sizes it cannot know are unbounded, as in cel-go. Where cel-go has a
//! dedicated estimate for a library function this crate does not model, the call is
//! taken as cost 1 plus its arguments, so costs can come out lower than Kubernetes'.

use super::parse::{Expr, Lit, Macro, Node};
use super::types::escape;
use crate::schema::Schema;

/// The largest request the API server accepts; sizes without a declared bound are
/// derived from it.
pub const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;
/// The largest estimated cost one expression may have (`StaticEstimatedCostLimit`).
pub const PER_EXPRESSION_LIMIT: u64 = 10_000_000;
/// The largest estimated total of a schema's expressions (`StaticEstimatedCRDCostLimit`).
pub const TOTAL_LIMIT: u64 = 100_000_000;

/// The fewest bytes a serialized value of `s` takes.
pub fn min_serialized_size(s: &Schema) -> u64 {
    if s.int_or_string {
        return 1;
    }
    match s.type_.as_str() {
        "integer" | "number" => 1,
        "boolean" => 4,
        "string" => match s.format.as_str() {
            "duration" => 4,
            "date" => 12,
            "date-time" | "datetime" => 21,
            _ => 2,
        },
        "array" | "object" => 2,
        _ => 1,
    }
}

/// How often values of `s` can occur in one request when nothing bounds it.
pub fn unbounded_cardinality(s: &Schema) -> u64 {
    MAX_REQUEST_BYTES / (min_serialized_size(s) + 1)
}

/// The most elements (bytes of a string, items of a list, entries of a map) a value
/// of `s` can have.
fn max_elements(s: &Schema) -> u64 {
    let non_negative = |n: i64| u64::try_from(n).unwrap_or(0);
    if s.int_or_string {
        return MAX_REQUEST_BYTES - 2;
    }
    match s.type_.as_str() {
        "string" => match s.format.as_str() {
            "duration" | "date" | "date-time" | "datetime" => 1,
            _ => {
                if let Some(max) = s.max_length {
                    // maxLength counts code points, which take up to 4 bytes each.
                    non_negative(max).saturating_mul(4)
                } else if !s.enum_.is_empty() {
                    s.enum_
                        .iter()
                        .map(|v| match v {
                            crate::value::Val::Str(t) => t.len() as u64,
                            _ => 0,
                        })
                        .max()
                        .unwrap_or(0)
                } else {
                    MAX_REQUEST_BYTES - 2
                }
            }
        },
        "array" => match s.max_items {
            Some(max) => non_negative(max),
            None => {
                let item = s.items.as_deref().map_or(1, min_serialized_size);
                (MAX_REQUEST_BYTES - 2) / (item + 1)
            }
        },
        "object" => match s.additional_schema() {
            Some(a) => match s.max_properties {
                Some(max) => non_negative(max),
                None => (MAX_REQUEST_BYTES - 2) / (min_serialized_size(a) + 6),
            },
            None => s.properties.len() as u64,
        },
        "" => u64::MAX,
        _ => 1,
    }
}

/// What the estimate knows about an expression's value.
#[derive(Clone, Copy)]
struct Est<'a> {
    cost: u64,
    /// The most elements the value can have (1 for scalars).
    size: u64,
    /// The schema node the value comes from, when it is data.
    schema: Option<&'a Schema>,
}

impl<'a> Est<'a> {
    fn scalar(cost: u64) -> Self {
        Est {
            cost,
            size: 1,
            schema: None,
        }
    }

    fn unknown(cost: u64) -> Self {
        Est {
            cost,
            size: u64::MAX,
            schema: None,
        }
    }

    fn of(cost: u64, schema: Option<&'a Schema>) -> Self {
        Est {
            cost,
            size: schema.map_or(u64::MAX, max_elements),
            schema,
        }
    }
}

/// `ceil(n * factor)`, saturating like cel-go's cost arithmetic.
fn factor(n: u64, f: f64) -> u64 {
    let x = (n as f64) * f;
    if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.ceil() as u64
    }
}

/// The worst-case cost of one evaluation of `node` on a value of `schema`.
pub fn estimate(node: &Node, schema: &Schema) -> u64 {
    let mut scope = vec![
        ("self".to_string(), Some(schema), max_elements(schema)),
        ("oldSelf".to_string(), Some(schema), max_elements(schema)),
    ];
    est(node, &mut scope, 0).cost
}

type Scope<'a> = Vec<(String, Option<&'a Schema>, u64)>;

/// Deep expressions are cut off rather than risking the stack; the parser already
/// bounds nesting, this is a second guard.
const MAX_DEPTH: usize = 200;

fn property<'a>(s: &'a Schema, field: &str) -> Option<&'a Schema> {
    s.properties
        .iter()
        .find(|(k, _)| escape(k).as_deref() == Some(field))
        .map(|(_, v)| v)
        .or_else(|| s.additional_schema())
}

fn est<'a>(n: &Node, scope: &mut Scope<'a>, depth: usize) -> Est<'a> {
    if depth > MAX_DEPTH {
        return Est::unknown(u64::MAX);
    }
    let d = depth + 1;
    match &n.expr {
        Expr::Lit(l) => match l {
            Lit::Str(s) => Est {
                cost: 0,
                size: s.len() as u64,
                schema: None,
            },
            Lit::Bytes(b) => Est {
                cost: 0,
                size: b.len() as u64,
                schema: None,
            },
            _ => Est::scalar(0),
        },
        Expr::Ident(name) => match scope.iter().rev().find(|(v, _, _)| v == name) {
            Some((_, schema, size)) => Est {
                cost: 1,
                size: *size,
                schema: *schema,
            },
            None => Est::unknown(1),
        },
        Expr::Select {
            operand,
            field,
            test,
        } => {
            let e = est(operand, scope, d);
            let cost = e.cost.saturating_add(1);
            if *test {
                return Est::scalar(cost);
            }
            match e.schema.and_then(|s| property(s, field)) {
                Some(s) => Est::of(cost, Some(s)),
                None => Est::unknown(cost),
            }
        }
        Expr::List(items) => {
            let sum = items
                .iter()
                .fold(10u64, |acc, i| acc.saturating_add(est(i, scope, d).cost));
            Est {
                cost: sum,
                size: items.len() as u64,
                schema: None,
            }
        }
        Expr::Map(entries) => {
            let sum = entries.iter().fold(30u64, |acc, (k, v)| {
                acc.saturating_add(est(k, scope, d).cost)
                    .saturating_add(est(v, scope, d).cost)
            });
            Est {
                cost: sum,
                size: entries.len() as u64,
                schema: None,
            }
        }
        Expr::Comprehension {
            kind,
            target,
            var,
            filter,
            body,
        } => {
            let t = est(target, scope, d);
            let (var_schema, var_size) = match t.schema {
                Some(s) if s.type_ == "array" => {
                    let items = s.items.as_deref();
                    (items, items.map_or(u64::MAX, max_elements))
                }
                // Map keys are strings of unknown length.
                _ => (None, u64::MAX),
            };
            scope.push((var.clone(), var_schema, var_size));
            let body_cost = est(body, scope, d).cost;
            let filter_cost = filter.as_deref().map_or(0, |f| est(f, scope, d).cost);
            scope.pop();
            // The loop condition and step cel-go's macro expansions add per iteration.
            let overhead = match kind {
                Macro::All | Macro::Exists => 3,
                Macro::ExistsOne => 2,
                Macro::Map | Macro::Filter => 13,
            };
            let per = body_cost
                .saturating_add(filter_cost)
                .saturating_add(overhead);
            let cost = t
                .cost
                .saturating_add(t.size.saturating_mul(per))
                .saturating_add(2);
            match kind {
                Macro::Map | Macro::Filter => Est {
                    cost,
                    size: t.size,
                    schema: None,
                },
                _ => Est::scalar(cost),
            }
        }
        Expr::Call { target, func, args } => call(target.as_deref(), func, args, scope, d),
    }
}

fn call<'a>(
    target: Option<&Node>,
    func: &str,
    args: &[Node],
    scope: &mut Scope<'a>,
    d: usize,
) -> Est<'a> {
    let recv = target.map(|t| est(t, scope, d));
    let ests: Vec<Est<'a>> = args.iter().map(|a| est(a, scope, d)).collect();
    let arg_sum = recv
        .iter()
        .chain(ests.iter())
        .fold(0u64, |acc, e| acc.saturating_add(e.cost));
    let size_of = |i: usize| ests.get(i).map_or(u64::MAX, |e| e.size);
    match (func, recv) {
        ("_&&_" | "_||_", _) => Est::scalar(arg_sum),
        ("_?_:_", _) => {
            let c = ests.first().map_or(0, |e| e.cost);
            let (t, f) = (ests.get(1), ests.get(2));
            let cost = c.saturating_add(t.map_or(0, |e| e.cost).max(f.map_or(0, |e| e.cost)));
            let size = t.map_or(0, |e| e.size).max(f.map_or(0, |e| e.size));
            Est {
                cost,
                size,
                schema: None,
            }
        }
        ("_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_", _) => {
            // Linear in the shorter side; 1 for scalars.
            let smallest = size_of(0).min(size_of(1));
            Est::scalar(factor(smallest, 0.1).saturating_add(arg_sum))
        }
        ("_+_", _) => {
            let (a, b) = (ests.first(), ests.get(1));
            let sized = |e: Option<&Est<'_>>| e.is_some_and(|e| e.size != 1 || e.schema.is_some());
            if sized(a) || sized(b) {
                let size = size_of(0).saturating_add(size_of(1));
                Est {
                    cost: factor(size, 0.1).saturating_add(arg_sum),
                    size,
                    schema: None,
                }
            } else {
                Est::scalar(1u64.saturating_add(arg_sum))
            }
        }
        ("_[_]", _) => {
            let container = ests.first().and_then(|e| e.schema);
            let elem = container.and_then(|s| {
                if s.type_ == "array" {
                    s.items.as_deref()
                } else {
                    s.additional_schema()
                }
            });
            Est::of(1u64.saturating_add(arg_sum), elem)
        }
        ("@in", _) => {
            let list = ests.get(1);
            let is_map = list
                .and_then(|e| e.schema)
                .is_some_and(|s| s.type_ == "object");
            let cost = if is_map { 1 } else { size_of(1) };
            Est::scalar(cost.saturating_add(arg_sum))
        }
        ("contains", Some(r)) => {
            let cost = factor(r.size, 0.1).saturating_mul(factor(size_of(0), 0.1));
            Est::scalar(cost.saturating_add(arg_sum))
        }
        ("startsWith" | "endsWith", Some(_)) => {
            Est::scalar(factor(size_of(0), 0.1).saturating_add(arg_sum))
        }
        ("matches", r) => {
            let (subject, pattern) = match r {
                Some(r) => (r.size, size_of(0)),
                None => (size_of(0), size_of(1)),
            };
            let cost = factor(subject, 0.1).saturating_mul(factor(pattern, 0.25));
            Est::scalar(cost.saturating_add(arg_sum))
        }
        ("size", _) => Est::scalar(1u64.saturating_add(arg_sum)),
        (
            "lowerAscii" | "upperAscii" | "trim" | "replace" | "split" | "join" | "indexOf"
            | "lastIndexOf" | "charAt" | "substring",
            Some(r),
        ) => {
            let result = match func {
                "indexOf" | "lastIndexOf" => 1,
                "charAt" => 1,
                _ => r.size,
            };
            Est {
                cost: factor(r.size, 0.1).saturating_add(arg_sum),
                size: result,
                schema: None,
            }
        }
        ("string" | "bytes" | "format" | "dyn", _) => Est::unknown(1u64.saturating_add(arg_sum)),
        _ => Est::scalar(1u64.saturating_add(arg_sum)),
    }
}
