//! What Cluster API's ClusterClass webhook says about a class's variable
//! definitions (`spec.variables`): names, metadata, the schema's conversion, whether
//! it is structural, its defaults, types, examples and enum values, and its CEL rules
//! (compilation, `oldSelf` placement, reasons, field paths, messages, cost).
//!
//! The steps and their order follow Cluster API's `ValidateClusterClassVariables`:
//! names must be unique across the list; then each definition in order — name,
//! metadata, `x-metadata`, then the schema, where each stage that finds something
//! ends the schema's check (conversion, structure, defaults), before the per-node
//! checks and the CEL cost budget. Where Go walks a map, this walks it sorted.

use std::collections::{BTreeMap, BTreeSet};

use topograph_api::field::{ErrorType, FieldError, go_quote};
use topograph_api::model::{Metadata, VariableDefinition};

use crate::cel::{self, Env, cost};
use crate::dialect;
use crate::json::{self, Json};
use crate::schema::{Rule, Schema};
use crate::value::go_print;
use crate::{BUILTIN, check, fieldpath, labels, prune, structural};

/// A definition with its schema as this crate's JSON reader gives it: number
/// literals as written (`1e400` stays what it is), and a number node whose text is
/// not a JSON number stands for a literal that is not JSON at all (as a `default`
/// built in memory can be in Go).
#[derive(Clone, Debug, PartialEq)]
pub struct RawDefinition {
    /// Variable name.
    pub name: String,
    /// The `openAPIV3Schema`.
    pub schema: Json,
    /// `metadata` (`deprecatedV1Beta1Metadata` in later API versions).
    pub metadata: Metadata,
}

impl From<&VariableDefinition> for RawDefinition {
    fn from(d: &VariableDefinition) -> Self {
        RawDefinition {
            name: d.name.clone(),
            schema: json::from_serde(&d.schema),
            metadata: d.metadata.clone(),
        }
    }
}

/// See [`crate::validate_definitions`].
pub fn validate(definitions: &[RawDefinition], old: Option<&[RawDefinition]>) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for d in definitions {
        if !seen.insert(d.name.as_str()) {
            out.push(FieldError::invalid(
                format!("spec.variables[{}].name", d.name),
                &d.name,
                format!(
                    "variable name must be unique. Variable with name {} is defined more than once",
                    go_quote(&d.name)
                ),
            ));
        }
    }
    // Go indexes the old definitions in a map: a repeated name keeps the last one.
    let old_by_name: BTreeMap<&str, &RawDefinition> = old
        .unwrap_or_default()
        .iter()
        .map(|d| (d.name.as_str(), d))
        .collect();
    for d in definitions {
        let at = format!("spec.variables[{}]", d.name);
        names(&d.name, &format!("{at}.name"), &mut out);
        out.extend(labels::validate_labels(
            &d.metadata.labels,
            &format!("{at}.metadata.labels"),
        ));
        out.extend(labels::validate_annotations(
            &d.metadata.annotations,
            &format!("{at}.metadata.annotations"),
        ));
        let schema_at = format!("{at}.schema.openAPIV3Schema");
        x_metadata(&d.schema, &schema_at, 0, &mut out);
        let old = old_by_name.get(d.name.as_str()).map(|o| &o.schema);
        root_schema(&d.name, &d.schema, old, &schema_at, &mut out);
    }
    out
}

fn names(name: &str, at: &str, out: &mut Vec<FieldError>) {
    if name.is_empty() {
        out.push(FieldError::required(at, "variable name must be defined"));
    }
    if name == BUILTIN {
        out.push(FieldError::invalid(
            at,
            name,
            format!("{} is a reserved variable name", go_quote(BUILTIN)),
        ));
    }
    if name.contains('.') {
        out.push(FieldError::invalid(
            at,
            name,
            "variable name cannot contain \".\"",
        ));
    }
}

/// Members of a JSON object with a key Go's decoder would match to `name`.
fn members<'a>(j: &'a Json, name: &'a str) -> impl Iterator<Item = &'a Json> + 'a {
    let list: &[(String, Json)] = match j {
        Json::Obj(m) => m,
        _ => &[],
    };
    list.iter()
        .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

fn string_map(j: &Json, into: &mut BTreeMap<String, String>) {
    if let Json::Obj(m) = j {
        for (k, v) in m {
            if let Json::Str(s) = v {
                into.insert(k.clone(), s.clone());
            }
        }
    }
}

/// Deep schemas are not walked further than this (the JSON reader bounds nesting
/// too; this keeps the walk independent of it).
const MAX_DEPTH: usize = 256;

/// `x-metadata` labels and annotations, on the node and below it (through
/// `additionalProperties`, `properties` and `items`, as Cluster API walks them).
fn x_metadata(j: &Json, at: &str, depth: usize, out: &mut Vec<FieldError>) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut labels_map = BTreeMap::new();
    let mut annotations = BTreeMap::new();
    let mut present = false;
    for m in members(j, "x-metadata") {
        if matches!(m, Json::Obj(_)) {
            present = true;
        }
        for l in members(m, "labels") {
            string_map(l, &mut labels_map);
        }
        for a in members(m, "annotations") {
            string_map(a, &mut annotations);
        }
    }
    if present {
        out.extend(labels::validate_labels(
            &labels_map,
            &format!("{at}.x-metadata.labels"),
        ));
        out.extend(labels::validate_annotations(
            &annotations,
            &format!("{at}.x-metadata.annotations"),
        ));
    }
    for a in members(j, "additionalProperties") {
        x_metadata(a, &format!("{at}.additionalProperties"), depth + 1, out);
    }
    let mut props: BTreeMap<&str, &Json> = BTreeMap::new();
    for p in members(j, "properties") {
        if let Json::Obj(m) = p {
            for (k, v) in m {
                props.insert(k, v);
            }
        }
    }
    for (k, v) in props {
        x_metadata(v, &format!("{at}.properties[{k}]"), depth + 1, out);
    }
    for i in members(j, "items") {
        x_metadata(i, &format!("{at}.items"), depth + 1, out);
    }
}

/// Rules and message expressions a class already had, for one variable.
#[derive(Default)]
struct Preexisting {
    rules: BTreeSet<String>,
    messages: BTreeSet<String>,
}

impl Preexisting {
    fn collect(&mut self, s: &Schema, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for r in s.rules.iter().flatten() {
            self.rules.insert(r.rule.clone());
            if !r.message_expression.is_empty() {
                self.messages.insert(r.message_expression.clone());
            }
        }
        let children = s
            .properties
            .values()
            .chain(s.additional_schema())
            .chain(s.items.as_deref())
            .chain(s.all_of.iter())
            .chain(s.any_of.iter())
            .chain(s.one_of.iter())
            .chain(s.not.as_deref());
        for c in children {
            self.collect(c, depth + 1);
        }
    }

    fn env(set: &BTreeSet<String>, expression: &str) -> Env {
        if set.contains(expression) {
            Env::Newest
        } else {
            Env::Compatible
        }
    }
}

fn root_schema(name: &str, j: &Json, old: Option<&Json>, at: &str, out: &mut Vec<FieldError>) {
    let context = |detail: &str| {
        format!(
            "failed to convert schema definition for variable {}; ClusterClass should be checked: {detail}",
            go_quote(name)
        )
    };
    let (schema, problems) = match dialect::read(Some(j)) {
        Ok(read) => read,
        Err(e) => {
            // Go never gets here (the request would not decode); the decoder's
            // message is the most useful thing to report.
            out.push(FieldError::invalid(at, "", context(&e)));
            return;
        }
    };
    if !problems.is_empty() {
        for p in problems {
            let rest = p.path.strip_prefix("schema").unwrap_or(&p.path);
            out.push(FieldError::invalid(
                format!("{at}{rest}"),
                &p.raw,
                context(&p.detail),
            ));
        }
        return;
    }
    let mut preexisting = Preexisting::default();
    if let Some(Ok((old_schema, _))) = old.map(|o| dialect::read(Some(o))) {
        preexisting.collect(&old_schema, 0);
    }

    let found = structural::validate(&schema, at);
    if !found.is_empty() {
        out.extend(found);
        return;
    }
    let mut found = Vec::new();
    defaults(&schema, at, 0, &mut found);
    if !found.is_empty() {
        out.extend(found);
        return;
    }

    let mut ctx = Ctx {
        preexisting: &preexisting,
        total: TotalCost::default(),
    };
    let lists = node(&schema, at, Some(1), None, &mut ctx, 0);
    out.extend(lists.schema);
    out.extend(lists.cel);
    if ctx.total.total > cost::TOTAL_LIMIT {
        for (path, _) in &ctx.total.most_expensive {
            out.push(FieldError::forbidden(
                path.clone(),
                "contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        out.push(FieldError::forbidden(
            at,
            cost_message(
                "x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema",
                ctx.total.total,
                cost::TOTAL_LIMIT,
            ),
        ));
    }
}

/// Kubernetes' `ValidateDefaults`: each default (below `properties` and `items`,
/// not `additionalProperties`) must have no unknown fields, be valid for its node,
/// and pass the node's CEL rules with itself as old value.
fn defaults(s: &Schema, at: &str, depth: usize, out: &mut Vec<FieldError>) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(d) = &s.default {
        let path = format!("{at}.default");
        if !prune::unknown_fields(d, s).is_empty() {
            out.push(FieldError::new(
                &path,
                ErrorType::Invalid,
                Some(go_print(d)),
                "must not have unknown fields",
            ));
        }
        let found = check::crd(s, Some(d), Some(&path));
        if !found.is_empty() {
            out.extend(found);
        } else if s.has_rules() {
            out.extend(cel::validate_own(s, d, Some(d), &path));
        }
    }
    if let Some(i) = s.items.as_deref() {
        defaults(i, &format!("{at}.items"), depth + 1, out);
    }
    for (k, p) in &s.properties {
        defaults(p, &format!("{at}.properties[{k}]"), depth + 1, out);
    }
}

/// The running total of expression costs and the most expensive contributors.
#[derive(Default)]
struct TotalCost {
    total: u64,
    most_expensive: Vec<(String, u64)>,
}

impl TotalCost {
    fn observe(&mut self, path: &str, cost: u64) {
        self.total = self.total.saturating_add(cost);
        // Expressions below 1% of the budget are not named as contributors.
        if cost < cost::TOTAL_LIMIT / 100 {
            return;
        }
        let at = self
            .most_expensive
            .iter()
            .position(|(_, c)| *c < cost)
            .unwrap_or(self.most_expensive.len());
        self.most_expensive.insert(at, (path.to_string(), cost));
        self.most_expensive.truncate(4);
    }
}

struct Ctx<'a> {
    preexisting: &'a Preexisting,
    total: TotalCost,
}

/// Errors of a node and below, schema problems apart from CEL ones (CEL is only
/// compiled where the schema itself is sound).
#[derive(Default)]
struct Lists {
    schema: Vec<FieldError>,
    cel: Vec<FieldError>,
}

impl Lists {
    fn append(&mut self, other: Lists) {
        self.schema.extend(other.schema);
        self.cel.extend(other.cel);
    }

    fn is_empty(&self) -> bool {
        self.schema.is_empty() && self.cel.is_empty()
    }
}

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// How often values of a child can occur, given the parent's count: once per
/// object for properties, `maxProperties`/`maxItems` times for maps and lists,
/// unbounded (`None`) otherwise.
fn child_cardinality(parent: &Schema, card: Option<u64>) -> Option<u64> {
    let per = match parent.type_.as_str() {
        "object" => match parent.additional_schema() {
            Some(_) => parent.max_properties.map(|m| u64::try_from(m).unwrap_or(0)),
            None => Some(1),
        },
        "array" => parent.max_items.map(|m| u64::try_from(m).unwrap_or(0)),
        _ => None,
    };
    Some(card?.saturating_mul(per?))
}

fn cost_message(name: &str, cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    let factor = if f > 100.0 {
        "more than 100x".to_string()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// How Go prints a rule as a field error's bad value (`%#v` of the internal type).
/// The reason is a pointer there, printed as an address; the reason itself is
/// shown in its place.
fn go_rule(r: &Rule) -> String {
    let reason = match &r.reason {
        None => "(*apiextensions.FieldValueErrorReason)(nil)".to_string(),
        Some(x) => format!("(*apiextensions.FieldValueErrorReason)({})", go_quote(x)),
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:(*bool)(nil)}}",
        go_quote(&r.rule),
        go_quote(&r.message),
        go_quote(&r.message_expression),
        go_quote(&r.field_path),
    )
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

fn supported(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("supported values: {}", quoted.join(", "))
}

/// Cluster API's `validateSchema` for one node and below.
fn node(
    s: &Schema,
    at: &str,
    card: Option<u64>,
    uncorrelatable: Option<&str>,
    ctx: &mut Ctx<'_>,
    depth: usize,
) -> Lists {
    let mut lists = Lists::default();
    if depth > MAX_DEPTH {
        return lists;
    }
    // Kubernetes' structural rules let a node go without a type when it is
    // int-or-string or keeps unknown fields; Cluster API accepts those too.
    let untyped_ok = s.int_or_string || s.preserve_unknown;
    if s.type_.is_empty() && !untyped_ok {
        lists.schema.push(FieldError::required(
            format!("{at}.type"),
            "type cannot be empty",
        ));
        return lists;
    }
    if !s.type_.is_empty() && !TYPES.contains(&s.type_.as_str()) {
        lists.schema.push(FieldError::new(
            format!("{at}.type"),
            ErrorType::NotSupported,
            Some(go_quote(&s.type_)),
            supported(TYPES),
        ));
        return lists;
    }
    if let Some(e) = &s.example {
        lists
            .schema
            .extend(check::crd(s, Some(e), Some(&format!("{at}.example"))));
    }
    for (i, e) in s.enum_.iter().enumerate() {
        lists
            .schema
            .extend(check::crd(s, Some(e), Some(&format!("{at}.enum[{i}]"))));
    }
    if let Some(a) = s.additional_schema() {
        if !s.properties.is_empty() {
            lists.schema.push(FieldError::forbidden(
                at,
                "additionalProperties and properties are mutually exclusive",
            ));
        }
        let child = child_cardinality(s, card);
        lists.append(node(
            a,
            &format!("{at}.additionalProperties"),
            child,
            uncorrelatable,
            ctx,
            depth + 1,
        ));
    }
    for (k, p) in &s.properties {
        let child = child_cardinality(s, card);
        lists.append(node(
            p,
            &format!("{at}.properties[{k}]"),
            child,
            uncorrelatable,
            ctx,
            depth + 1,
        ));
    }
    if let Some(i) = s.items.as_deref() {
        // Lists are atomic: their items have no old value to compare with.
        let items_at = format!("{at}.items");
        let unc = uncorrelatable
            .map(str::to_string)
            .unwrap_or(items_at.clone());
        let child = child_cardinality(s, card);
        lists.append(node(i, &items_at, child, Some(&unc), ctx, depth + 1));
    }
    let Some(rules) = s.rules.as_ref().filter(|r| !r.is_empty()) else {
        return lists;
    };
    let rule_at = |i: usize, field: &str| format!("{at}.x-kubernetes-validations[{i}].{field}");
    for (i, r) in rules.iter().enumerate() {
        let rule = r.rule.trim();
        let message = r.message.trim();
        if rule.is_empty() {
            lists.schema.push(FieldError::required(
                rule_at(i, "rule"),
                "rule is not specified",
            ));
        } else if !r.message.is_empty() && message.is_empty() {
            lists.schema.push(FieldError::invalid(
                rule_at(i, "message"),
                &r.message,
                "message must be non-empty if specified",
            ));
        } else if r.message.len() > 2048 {
            let head = String::from_utf8_lossy(r.message.as_bytes().get(..10).unwrap_or_default());
            lists.schema.push(FieldError::invalid(
                rule_at(i, "message"),
                &format!("{head}..."),
                "message must have a maximum length of 2048 characters",
            ));
        } else if has_newlines(message) {
            lists.schema.push(FieldError::invalid(
                rule_at(i, "message"),
                &r.message,
                "message must not contain line breaks",
            ));
        } else if has_newlines(rule) && message.is_empty() {
            lists.schema.push(FieldError::required(
                rule_at(i, "message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if !r.message_expression.is_empty() && r.message_expression.trim().is_empty() {
            lists.schema.push(FieldError::required(
                rule_at(i, "messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = &r.reason
            && !REASONS.contains(&reason.as_str())
        {
            lists.schema.push(FieldError::new(
                rule_at(i, "reason"),
                ErrorType::NotSupported,
                Some(go_quote(reason)),
                supported(REASONS),
            ));
        }
        let fp = &r.field_path;
        if !fp.is_empty() && fp.trim().is_empty() {
            lists.schema.push(FieldError::invalid(
                rule_at(i, "fieldPath"),
                fp,
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_newlines(fp) {
            lists.schema.push(FieldError::invalid(
                rule_at(i, "fieldPath"),
                fp,
                "fieldPath must not contain line breaks",
            ));
        }
        if !fp.is_empty()
            && let Err(e) = fieldpath::valid(fp, s)
        {
            lists.schema.push(FieldError::invalid(
                rule_at(i, "fieldPath"),
                fp,
                format!("fieldPath must be a valid path: {e}"),
            ));
        }
    }
    if lists.schema.is_empty() && !cel::has_declared_type(s) {
        // The CRD machinery finds no CEL type for an untyped node that keeps unknown
        // fields, so it cannot compile any of its rules.
        lists.cel.push(FieldError::new(
            format!("{at}.x-kubernetes-validations"),
            ErrorType::Internal,
            None,
            "internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations",
        ));
    } else if lists.schema.is_empty() {
        let cardinality = card.unwrap_or_else(|| cost::unbounded_cardinality(s));
        for (i, r) in rules.iter().enumerate() {
            let env = Preexisting::env(&ctx.preexisting.rules, &r.rule);
            let compiled = cel::compile_for(s, &r.rule, true, env);
            let max = compiled.as_ref().map_or(0, |c| c.max_cost(s));
            let expression_cost = max.saturating_mul(cardinality);
            let path = rule_at(i, "rule");
            if expression_cost > cost::PER_EXPRESSION_LIMIT {
                lists.cel.push(FieldError::forbidden(
                    &path,
                    cost_message(
                        "estimated rule cost",
                        expression_cost,
                        cost::PER_EXPRESSION_LIMIT,
                    ),
                ));
            }
            ctx.total.observe(&path, expression_cost);
            if let Err(detail) = &compiled {
                lists.cel.push(FieldError::new(
                    &path,
                    ErrorType::Invalid,
                    Some(go_rule(r)),
                    detail.clone(),
                ));
            }
            if !r.message_expression.is_empty() {
                let env = Preexisting::env(&ctx.preexisting.messages, &r.message_expression);
                let msg_at = rule_at(i, "messageExpression");
                match cel::compile_for(s, &r.message_expression, false, env) {
                    Err(detail) => {
                        let detail = if detail.starts_with("compilation failed") {
                            format!("messageExpression {detail}")
                        } else {
                            detail
                        };
                        lists.cel.push(FieldError::new(
                            &msg_at,
                            ErrorType::Invalid,
                            Some(go_rule(r)),
                            detail,
                        ));
                    }
                    Ok(m) => {
                        let message_cost = m.max_cost(s);
                        if message_cost > cost::PER_EXPRESSION_LIMIT {
                            lists.cel.push(FieldError::forbidden(
                                &msg_at,
                                cost_message(
                                    "estimated messageExpression cost",
                                    message_cost,
                                    cost::PER_EXPRESSION_LIMIT,
                                ),
                            ));
                        }
                        ctx.total.observe(&msg_at, message_cost);
                    }
                }
            }
            if let (Ok(c), Some(unc)) = (&compiled, uncorrelatable)
                && c.uses_old_self()
            {
                lists.cel.push(FieldError::invalid(
                    &path,
                    &r.rule,
                    format!(
                        "oldSelf cannot be used on the uncorrelatable portion of the schema within {unc}"
                    ),
                ));
            }
        }
    }
    if !lists.is_empty() {
        return lists;
    }
    if let Some(e) = &s.example {
        lists
            .cel
            .extend(cel::validate_own(s, e, None, &format!("{at}.example")));
    }
    for (i, e) in s.enum_.iter().enumerate() {
        lists
            .cel
            .extend(cel::validate_own(s, e, None, &format!("{at}.enum[{i}]")));
    }
    lists
}
