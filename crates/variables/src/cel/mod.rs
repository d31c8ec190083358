//! `x-kubernetes-validations`: CEL rules on schema nodes, checked against the node's
//! declared type (mistakes give cel-go's compile errors) and evaluated on the value,
//! with `oldSelf` from the old value for transition rules. Reported like the
//! Kubernetes CEL validator: the rule's message (or `failed rule: <rule>`), its
//! reason and `fieldPath`, runtime errors as `<error> evaluating rule: <rule>`.

pub mod cost;
mod eval;
mod parse;
mod types;

use std::collections::BTreeMap;

use topograph_api::field::{ErrorType, FieldError, go_quote};

use crate::fieldpath;
use crate::prune::HOLDER;
use crate::schema::{Rule, Schema};
use crate::value::Val;
use eval::{Activation, CVal};
use parse::{Expr, Node};
use types::{Checker, Ty};

/// Evaluates every rule of `schema` on `value`; errors are under `value_at`, with
/// `raw` (the whole raw value) as bad value.
pub fn validate(
    schema: &Schema,
    value: &Val,
    old: Option<&Val>,
    value_at: &str,
    raw: &str,
) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut ctx = Walk {
        shown: Shown::Raw(raw),
        errors: &mut out,
        ratchet: false,
    };
    // Cluster API validates the value as a property of a holder object: a schema
    // without a declared type is left out of the holder's fields, rules and all.
    let Some(decl) = types::declared(schema) else {
        return out;
    };
    ctx.walk(
        schema,
        Some(&decl),
        value,
        old,
        format!("{value_at}.{HOLDER}"),
    );
    // The value was validated under a holder key: drop it from the first path element.
    for e in &mut out {
        let from = format!("value.{HOLDER}");
        if let Some(i) = e.path.find(&from) {
            e.path.replace_range(i..i + from.len(), "value");
        }
    }
    out
}

/// Evaluates every rule of `schema` on `value` as the CRD machinery does for a
/// class's defaults, examples and enum values: errors under `path`, each showing the
/// value of the node its rule sits on.
pub fn validate_own(
    schema: &Schema,
    value: &Val,
    old: Option<&Val>,
    path: &str,
) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut ctx = Walk {
        shown: Shown::Own,
        errors: &mut out,
        ratchet: false,
    };
    ctx.walk(
        schema,
        Some(&types::of_schema(schema)),
        value,
        old,
        path.to_string(),
    );
    out
}

/// Evaluates every rule of a custom resource's schema on the resource, as
/// kube-apiserver does on a write: paths from the resource root (Go's nil path, so a
/// rule on the root reports at `<nil>`), each failure showing the schema type of the
/// node its rule sits on (`Invalid value: "object"`), `oldSelf` from `old` on updates.
pub fn validate_resource(schema: &Schema, value: &Val, old: Option<&Val>) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut ctx = Walk {
        shown: Shown::Type,
        errors: &mut out,
        // kube-apiserver ratchets the rules of custom-resource updates.
        ratchet: true,
    };
    ctx.walk(
        schema,
        Some(&types::of_schema(schema)),
        value,
        old,
        String::new(),
    );
    out
}

/// What a failed rule shows as bad value.
enum Shown<'a> {
    /// Cluster API's variable validation: the whole raw value, quoted.
    Raw(&'a str),
    /// The CRD machinery: the value of the node the rule is on.
    Own,
    /// kube-apiserver on custom resource writes: the node's schema type, quoted.
    Type,
}

/// How Go prints a path: the nil (empty) path is `<nil>`.
fn shown_path(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_string()
    } else {
        path.to_string()
    }
}

struct Walk<'a> {
    shown: Shown<'a>,
    errors: &'a mut Vec<FieldError>,
    /// Whether a rule that does not read `oldSelf` is skipped on a node the update left
    /// unchanged ([`crate::ratchet`]).
    ratchet: bool,
}

impl Walk<'_> {
    /// Runs the rules of `s` and of its children on `v`. `decl` is the type the node
    /// is declared with, as its parent's type declares it (see [`types::declared`]):
    /// a property the parent's type leaves out is not visited at all.
    fn walk(&mut self, s: &Schema, decl: Option<&Ty>, v: &Val, old: Option<&Val>, path: String) {
        self.rules(s, decl, v, old, &path);
        match v {
            Val::Arr(items) => {
                if let Some(item_schema) = s.items.as_deref() {
                    let elem = match decl {
                        Some(Ty::List(e)) => Some(e.as_ref()),
                        _ => None,
                    };
                    // Arrays are atomic: items have no old value to compare with.
                    for (i, x) in items.iter().enumerate() {
                        self.walk(item_schema, elem, x, None, format!("{path}[{i}]"));
                    }
                }
            }
            Val::Obj(m) => {
                let old_map = match old {
                    Some(Val::Obj(o)) => Some(o),
                    _ => None,
                };
                if let Some(a) = s.additional_schema() {
                    let elem = match decl {
                        Some(Ty::Map(_, e)) => Some(e.as_ref()),
                        _ => None,
                    };
                    for (k, x) in m {
                        let o = old_map.and_then(|o| o.get(k));
                        self.walk(a, elem, x, o, format!("{path}[{k}]"));
                    }
                }
                for (k, x) in m {
                    let Some(p) = s.properties.get(k) else {
                        continue;
                    };
                    // A property CEL cannot name is typed on its own; one it can is
                    // typed by its parent's fields, which leave untyped ones out.
                    let field = match types::escape(k) {
                        None => types::declared(p),
                        Some(name) => match decl {
                            Some(Ty::Object(fields)) => fields.get(&name).cloned(),
                            _ => None,
                        },
                    };
                    let Some(field) = field else {
                        continue;
                    };
                    let o = old_map.and_then(|o| o.get(k));
                    self.walk(p, Some(&field), x, o, fieldpath::child(&path, k));
                }
            }
            _ => {}
        }
    }

    fn rules(&mut self, s: &Schema, decl: Option<&Ty>, v: &Val, old: Option<&Val>, path: &str) {
        let Some(rules) = &s.rules else {
            return;
        };
        if matches!(v, Val::Null) || rules.is_empty() {
            return;
        }
        let Some(self_ty) = decl else {
            self.invalid(
                path,
                s,
                v,
                "rule compiler initialization error: failed to convert to declType for CEL validation rules".to_string(),
            );
            return;
        };
        // Judged once per node, and only when a rule asks.
        let mut unchanged = None;
        for rule in rules {
            if rule.rule.trim().is_empty() {
                continue;
            }
            let compiled = match compile(&rule.rule, self_ty, true) {
                Ok(c) => c,
                Err(e) => {
                    self.invalid(path, s, v, format!("rule compile error: {e}"));
                    continue;
                }
            };
            let transition = uses(&compiled, "oldSelf");
            if transition && old.is_none() {
                continue;
            }
            if !transition
                && self.ratchet
                && let Some(old) = old
                && *unchanged.get_or_insert_with(|| crate::ratchet::unchanged(s, v, old))
            {
                continue;
            }
            let mut act = activation(s, v, old);
            match eval::eval(&compiled, &mut act) {
                CVal::Bool(true) => {}
                CVal::Err(e) => {
                    let shown = rule_error_string(rule);
                    let msg = if e.starts_with("no such overload") {
                        format!(
                            "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {shown}"
                        )
                    } else {
                        format!("{e} evaluating rule: {shown}")
                    };
                    self.invalid(path, s, v, msg);
                }
                _ => self.failed(s, rule, v, old, path),
            }
        }
    }

    fn shown(&self, s: &Schema, v: &Val) -> String {
        match self.shown {
            Shown::Raw(raw) => go_quote(raw),
            Shown::Own => crate::value::go_print(v),
            Shown::Type => go_quote(&s.type_),
        }
    }

    fn invalid(&mut self, path: &str, s: &Schema, v: &Val, detail: String) {
        let shown = self.shown(s, v);
        self.errors.push(FieldError::new(
            shown_path(path),
            ErrorType::Invalid,
            Some(shown),
            detail,
        ));
    }

    fn failed(&mut self, s: &Schema, rule: &Rule, v: &Val, old: Option<&Val>, path: &str) {
        let at = match field_path(s, &rule.field_path) {
            Some(sub) if path.is_empty() => sub.strip_prefix('.').unwrap_or(&sub).to_string(),
            Some(sub) => format!("{path}{sub}"),
            None => shown_path(path),
        };
        let detail = message_expression(s, rule, v, old).unwrap_or_else(|| rule_message(rule));
        let raw = Some(self.shown(s, v));
        let e = match rule.reason.as_deref() {
            Some("FieldValueForbidden") => FieldError::new(at, ErrorType::Forbidden, None, detail),
            Some("FieldValueRequired") => FieldError::new(at, ErrorType::Required, None, detail),
            Some("FieldValueDuplicate") => FieldError::new(at, ErrorType::Duplicate, raw, ""),
            _ => FieldError::new(at, ErrorType::Invalid, raw, detail),
        };
        self.errors.push(e);
    }
}

fn rule_error_string(rule: &Rule) -> String {
    if rule.message.is_empty() {
        rule.rule.trim().to_string()
    } else {
        rule.message.trim().to_string()
    }
}

fn rule_message(rule: &Rule) -> String {
    if rule.message.is_empty() {
        format!("failed rule: {}", rule.rule.trim())
    } else {
        rule.message.trim().to_string()
    }
}

/// The message computed by `messageExpression`, when it yields a usable one.
fn message_expression(s: &Schema, rule: &Rule, v: &Val, old: Option<&Val>) -> Option<String> {
    if rule.message_expression.trim().is_empty() {
        return None;
    }
    let compiled = compile(&rule.message_expression, &types::of_schema(s), false).ok()?;
    let mut act = activation(s, v, old);
    match eval::eval(&compiled, &mut act) {
        CVal::Str(m) if !m.trim().is_empty() && !m.contains(['\n', '\r']) => {
            Some(m.trim().to_string())
        }
        _ => None,
    }
}

fn activation(s: &Schema, v: &Val, old: Option<&Val>) -> Activation {
    let mut vars = vec![("self".to_string(), to_cval(v, Some(s)))];
    if let Some(o) = old {
        vars.push(("oldSelf".to_string(), to_cval(o, Some(s))));
    }
    Activation { vars }
}

/// The environment an expression is compiled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Env {
    /// What new expressions of a class may use: the libraries of the oldest
    /// Kubernetes version the class must stay usable with (no IP/CIDR library).
    Compatible,
    /// Everything this crate knows: for expressions a class already had.
    Newest,
}

/// A rule or message expression as compiled for a class's schema.
pub struct Compiled {
    node: Node,
}

impl Compiled {
    /// Whether the expression refers to `oldSelf` (a transition rule).
    pub fn uses_old_self(&self) -> bool {
        uses(&self.node, "oldSelf")
    }

    /// The static worst-case cost of one evaluation on a value of `schema`.
    pub fn max_cost(&self, schema: &Schema) -> u64 {
        cost::estimate(&self.node, schema)
    }
}

/// Whether Kubernetes declares a CEL type for values of `schema` (see
/// [`types::declared`]): rules on a node without one cannot be compiled.
pub fn has_declared_type(schema: &Schema) -> bool {
    types::declared(schema).is_some()
}

/// Compiles a rule (`boolean`) or a message expression for `schema` in `env`; the
/// error is the Kubernetes detail text (`compilation failed: ERROR: ...`).
pub fn compile_for(
    schema: &Schema,
    src: &str,
    boolean: bool,
    env: Env,
) -> Result<Compiled, String> {
    compile_in(
        src,
        &types::of_schema(schema),
        boolean,
        env == Env::Compatible,
    )
    .map(|node| Compiled { node })
}

/// Parses and checks an expression; rules must be boolean, messages strings.
fn compile(src: &str, self_ty: &Ty, boolean: bool) -> Result<Node, String> {
    compile_in(src, self_ty, boolean, false)
}

fn compile_in(src: &str, self_ty: &Ty, boolean: bool, compatible: bool) -> Result<Node, String> {
    let ast = parse::parse(src).map_err(|e| {
        format!(
            "compilation failed: {}",
            parse::format_error(src, e.pos, &e.message)
        )
    })?;
    let mut checker = Checker::new(vec![
        ("self".to_string(), self_ty.clone()),
        ("oldSelf".to_string(), self_ty.clone()),
    ]);
    checker.compatible = compatible;
    let t = checker.check(&ast);
    if !checker.errors.is_empty() {
        let shown: Vec<String> = checker
            .errors
            .iter()
            .map(|(pos, msg)| parse::format_error(src, *pos, msg))
            .collect();
        return Err(format!("compilation failed: {}", shown.join("\n")));
    }
    let ok = if boolean {
        matches!(t, Ty::Bool | Ty::Dyn)
    } else {
        matches!(t, Ty::String | Ty::Dyn)
    };
    if !ok {
        return Err(if boolean {
            "cel expression must evaluate to a bool".to_string()
        } else {
            "messageExpression must evaluate to a string".to_string()
        });
    }
    Ok(ast)
}

/// Whether the expression refers to a (not shadowed) variable.
fn uses(n: &Node, name: &str) -> bool {
    match &n.expr {
        Expr::Ident(i) => i == name,
        Expr::Lit(_) => false,
        Expr::Select { operand, .. } => uses(operand, name),
        Expr::Call { target, args, .. } => {
            target.as_deref().is_some_and(|t| uses(t, name)) || args.iter().any(|a| uses(a, name))
        }
        Expr::List(items) => items.iter().any(|i| uses(i, name)),
        Expr::Map(entries) => entries.iter().any(|(k, v)| uses(k, name) || uses(v, name)),
        Expr::Comprehension {
            target,
            var,
            filter,
            body,
            ..
        } => {
            uses(target, name)
                || (var != name
                    && (filter.as_deref().is_some_and(|f| uses(f, name)) || uses(body, name)))
        }
    }
}

/// `fieldPath` (`.a.b`, `['a']`) resolved against the schema; `None` when it does not
/// name a field of it.
fn field_path(s: &Schema, fp: &str) -> Option<String> {
    if fp.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut cur = s;
    let mut rest = fp;
    while !rest.is_empty() {
        let (name, next) = if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            (&r[..end], &r[end + 2..])
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            (&r[..end], &r[end..])
        } else {
            return None;
        };
        if name.is_empty() {
            return None;
        }
        if let Some(p) = cur.properties.get(name) {
            out.push('.');
            out.push_str(name);
            cur = p;
        } else if let Some(a) = cur.additional_schema() {
            out.push_str(&format!("[{name}]"));
            cur = a;
        } else {
            return None;
        }
        rest = next;
    }
    Some(out)
}

fn go_type(v: &Val) -> &'static str {
    match v {
        Val::Null => "<nil>",
        Val::Bool(_) => "bool",
        Val::Int(_) => "int64",
        Val::Float(_) => "float64",
        Val::Str(_) => "string",
        Val::Arr(_) => "[]interface {}",
        Val::Obj(_) => "map[string]interface {}",
    }
}

/// Data as CEL sees it through the node's declared type; data that does not fit the
/// type becomes an error value, raised only where it is used.
fn to_cval(v: &Val, s: Option<&Schema>) -> CVal {
    if matches!(v, Val::Null) {
        return CVal::Null;
    }
    let Some(s) = s.filter(|s| !s.int_or_string && !s.type_.is_empty()) else {
        return dyn_cval(v, s);
    };
    let wrong =
        |want: &str| CVal::Err(format!("invalid data, expected {want}, got {}", go_type(v)));
    match s.type_.as_str() {
        "integer" => match v {
            Val::Int(i) => CVal::Int(*i),
            _ => wrong("int"),
        },
        "number" => match v {
            Val::Float(f) => CVal::Double(*f),
            Val::Int(i) => CVal::Double(*i as f64),
            _ => wrong("double"),
        },
        "boolean" => match v {
            Val::Bool(b) => CVal::Bool(*b),
            _ => wrong("bool"),
        },
        "string" => match v {
            Val::Str(t) => match types::of_schema(s) {
                Ty::Timestamp => eval::parse_timestamp(t).map_or_else(
                    || CVal::Err(format!("invalid timestamp {t:?}")),
                    CVal::Timestamp,
                ),
                Ty::Duration => crate::formats::go_parse_duration(t).map_or_else(
                    || CVal::Err(format!("invalid duration {t:?}")),
                    CVal::Duration,
                ),
                _ => CVal::Str(t.clone()),
            },
            _ => wrong("string"),
        },
        "array" => match v {
            Val::Arr(items) => CVal::List(
                items
                    .iter()
                    .map(|x| to_cval(x, s.items.as_deref()))
                    .collect(),
            ),
            _ => wrong("[]interface{}"),
        },
        "object" => match v {
            Val::Obj(m) => {
                if !s.properties.is_empty() {
                    let mut fields = BTreeMap::new();
                    for (k, x) in m {
                        if let (Some(p), Some(name)) = (s.properties.get(k), types::escape(k)) {
                            fields.insert(name, to_cval(x, Some(p)));
                        }
                    }
                    CVal::Obj(fields)
                } else if let Some(a) = s.additional_schema() {
                    CVal::Map(
                        m.iter()
                            .map(|(k, x)| (CVal::Str(k.clone()), to_cval(x, Some(a))))
                            .collect(),
                    )
                } else {
                    CVal::Obj(BTreeMap::new())
                }
            }
            _ => wrong("map[string]interface{}"),
        },
        _ => dyn_cval(v, Some(s)),
    }
}

fn dyn_cval(v: &Val, s: Option<&Schema>) -> CVal {
    match v {
        Val::Null => CVal::Null,
        Val::Bool(b) => CVal::Bool(*b),
        Val::Int(i) => CVal::Int(*i),
        Val::Float(f) => CVal::Double(*f),
        Val::Str(t) => CVal::Str(t.clone()),
        Val::Arr(items) => CVal::List(
            items
                .iter()
                .map(|x| to_cval(x, s.and_then(|s| s.items.as_deref())))
                .collect(),
        ),
        Val::Obj(m) => CVal::Map(
            m.iter()
                .map(|(k, x)| {
                    let sub = s.and_then(|s| s.properties.get(k).or(s.additional_schema()));
                    (CVal::Str(k.clone()), to_cval(x, sub))
                })
                .collect(),
        ),
    }
}
