//! Reading a variable schema in Cluster API's dialect of `openAPIV3Schema`.
//!
//! Only the keywords of that dialect exist (others are dropped, as the API server
//! prunes them); `maximum`/`minimum` take integers only. Reading happens in two steps,
//! as in Cluster API: the typed decode (whose failures carry Go's `encoding/json`
//! wording, type names included), then the conversion of the `default`, `enum` and
//! `example` literals, whose problems are collected per field.

use std::collections::BTreeMap;

use topograph_api::field::go_quote;
use topograph_gocompat::json::{UNEXPECTED_END, syntax_error};

use crate::godecode;
use crate::json::Json;
use crate::schema::{Additional, Rule, Schema};
use crate::value::{self, Numbers};

/// The Go type names that show up in decoding errors.
const SCHEMA: &str = "capiSchema";
const RULE: &str = "capiValidationRule";

/// One problem met while converting literals.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Path below `schema` (`schema.properties[a].default`).
    pub path: String,
    /// The literal as written.
    pub raw: String,
    /// What is wrong.
    pub detail: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: Invalid value: {}: {}",
            self.path,
            go_quote(&self.raw),
            self.detail
        )
    }
}

/// Prints a problem list like Go's `%v` of a `field.ErrorList`.
pub fn problem_list(problems: &[Problem]) -> String {
    let items: Vec<String> = problems.iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(" "))
}

/// The result of reading a schema: the decode error, or the schema and the literal
/// problems (the schema is only meaningful when there are none).
pub type Read = Result<(Schema, Vec<Problem>), String>;

/// Reads a schema; `None` is an empty request body.
pub fn read(j: Option<&Json>) -> Read {
    let Some(j) = j else {
        return Err(UNEXPECTED_END.to_string());
    };
    let mut dec = Decoder::default();
    let mut node = Node::default();
    match j {
        Json::Obj(_) => dec.node_into(j, &mut node),
        Json::Null => {}
        other => dec.fail(other, "main.capiSchema"),
    }
    if let Some(e) = dec.err {
        return Err(e);
    }
    let mut problems = Vec::new();
    let schema = internalize(&node, "schema", &mut problems);
    Ok((schema, problems))
}

/// Go's `capiSchema`, before literal conversion.
#[derive(Clone, Debug, Default)]
struct Node<'a> {
    example: Option<&'a Json>,
    default: Option<&'a Json>,
    enum_: Option<Vec<&'a Json>>,
    type_: String,
    int_or_string: Option<bool>,
    preserve: Option<bool>,
    properties: Option<BTreeMap<String, Node<'a>>>,
    additional: Option<Box<Node<'a>>>,
    required: Option<Vec<String>>,
    max_properties: Option<i64>,
    min_properties: Option<i64>,
    items: Option<Box<Node<'a>>>,
    max_items: Option<i64>,
    min_items: Option<i64>,
    unique_items: Option<bool>,
    format: String,
    max_length: Option<i64>,
    min_length: Option<i64>,
    pattern: String,
    maximum: Option<i64>,
    minimum: Option<i64>,
    exclusive_maximum: Option<bool>,
    exclusive_minimum: Option<bool>,
    all_of: Option<Vec<Node<'a>>>,
    one_of: Option<Vec<Node<'a>>>,
    any_of: Option<Vec<Node<'a>>>,
    not: Option<Box<Node<'a>>>,
    rules: Option<Vec<Rule>>,
}

/// Marks the `capiSchema` reader's [`godecode::Decoder`].
struct Capi;

type Decoder = godecode::Decoder<Capi>;

/// Go's case-insensitive match of a JSON key to a field name.
fn key_is(key: &str, name: &str) -> bool {
    key.eq_ignore_ascii_case(name)
}

impl Decoder {
    fn string(&mut self, j: &Json, out: &mut String) {
        match j {
            Json::Str(s) => *out = s.clone(),
            Json::Null => {}
            other => self.fail(other, "string"),
        }
    }

    fn flag(&mut self, j: &Json, out: &mut Option<bool>) {
        match j {
            Json::Bool(b) => *out = Some(*b),
            Json::Null => *out = None,
            other => self.fail(other, "bool"),
        }
    }

    fn int(&mut self, j: &Json, out: &mut Option<i64>) {
        match j {
            Json::Num(lit) => match lit.parse::<i64>() {
                Ok(i) if value::is_integer_literal(lit) => *out = Some(i),
                _ => self.fail_what(format!("number {lit}"), "int64"),
            },
            Json::Null => *out = None,
            other => self.fail(other, "int64"),
        }
    }

    fn strings(&mut self, j: &Json, out: &mut Option<Vec<String>>) {
        match j {
            Json::Arr(items) => {
                let mut v = Vec::new();
                for i in items {
                    let mut s = String::new();
                    self.string(i, &mut s);
                    v.push(s);
                }
                *out = Some(v);
            }
            Json::Null => *out = None,
            other => self.fail(other, "[]string"),
        }
    }

    fn boxed<'a>(&mut self, j: &'a Json, out: &mut Option<Box<Node<'a>>>) {
        match j {
            Json::Obj(_) => {
                // Go decodes into the struct a pointer already points to: a repeated
                // key merges into the earlier value.
                let node = out.get_or_insert_with(Default::default);
                self.node_into(j, node);
            }
            Json::Null => *out = None,
            other => self.fail(other, "main.capiSchema"),
        }
    }

    fn nodes<'a>(&mut self, j: &'a Json, out: &mut Option<Vec<Node<'a>>>) {
        match j {
            Json::Arr(items) => {
                let mut v = Vec::new();
                for i in items {
                    let mut n = Node::default();
                    match i {
                        Json::Obj(_) => self.node_into(i, &mut n),
                        Json::Null => {}
                        other => self.fail(other, "main.capiSchema"),
                    }
                    v.push(n);
                }
                *out = Some(v);
            }
            Json::Null => *out = None,
            other => self.fail(other, "[]main.capiSchema"),
        }
    }

    fn node_map<'a>(&mut self, j: &'a Json, out: &mut Option<BTreeMap<String, Node<'a>>>) {
        match j {
            Json::Obj(members) => {
                // A repeated `properties` key adds to the map decoded before; a repeated
                // property name replaces the earlier one.
                let map = out.get_or_insert_with(BTreeMap::new);
                for (k, v) in members {
                    let mut n = Node::default();
                    match v {
                        Json::Obj(_) => self.node_into(v, &mut n),
                        Json::Null => {}
                        other => self.fail(other, "main.capiSchema"),
                    }
                    map.insert(k.clone(), n);
                }
            }
            Json::Null => *out = None,
            other => self.fail(other, "map[string]main.capiSchema"),
        }
    }

    fn free_map(&mut self, j: &Json) {
        match j {
            Json::Obj(members) => {
                for (_, v) in members {
                    if let Err(e) = value::decode(v, Numbers::Float)
                        && let Some(lit) = e
                            .strip_prefix("json: cannot unmarshal ")
                            .and_then(|r| r.strip_suffix(" into Go value of type float64"))
                    {
                        self.fail_what(lit.to_string(), "float64");
                    }
                }
            }
            Json::Null => {}
            other => self.fail(other, "map[string]interface {}"),
        }
    }

    fn rules(&mut self, j: &Json, out: &mut Option<Vec<Rule>>) {
        match j {
            Json::Arr(items) => {
                let mut v = Vec::new();
                for i in items {
                    let mut r = Rule::default();
                    match i {
                        Json::Obj(members) => {
                            let outer = self.strct;
                            for (k, val) in members {
                                let (name, field): (&'static str, &mut String) =
                                    if key_is(k, "rule") {
                                        ("rule", &mut r.rule)
                                    } else if key_is(k, "message") {
                                        ("message", &mut r.message)
                                    } else if key_is(k, "messageExpression") {
                                        ("messageExpression", &mut r.message_expression)
                                    } else if key_is(k, "fieldPath") {
                                        ("fieldPath", &mut r.field_path)
                                    } else if key_is(k, "reason") {
                                        let mut s = r.reason.clone().unwrap_or_default();
                                        self.stack.push("reason");
                                        self.strct = RULE;
                                        self.string(val, &mut s);
                                        self.stack.pop();
                                        self.strct = outer;
                                        r.reason = Some(s);
                                        continue;
                                    } else {
                                        continue;
                                    };
                                self.stack.push(name);
                                self.strct = RULE;
                                self.string(val, field);
                                self.stack.pop();
                                self.strct = outer;
                            }
                        }
                        Json::Null => {}
                        other => self.fail(other, "main.capiValidationRule"),
                    }
                    if r.reason.as_deref() == Some("") {
                        r.reason = None;
                    }
                    v.push(r);
                }
                *out = Some(v);
            }
            Json::Null => *out = None,
            other => self.fail(other, "[]main.capiValidationRule"),
        }
    }

    fn node_into<'a>(&mut self, j: &'a Json, node: &mut Node<'a>) {
        let Json::Obj(members) = j else {
            return;
        };
        let outer = self.strct;
        for (k, v) in members {
            let Some(name) = FIELDS.iter().find(|f| key_is(k, f)).copied() else {
                continue;
            };
            self.stack.push(name);
            self.strct = SCHEMA;
            match name {
                "description" => {
                    let mut s = String::new();
                    self.string(v, &mut s);
                }
                "example" => node.example = literal(v),
                "default" => node.default = literal(v),
                "enum" => match v {
                    Json::Arr(items) => node.enum_ = Some(items.iter().collect()),
                    Json::Null => node.enum_ = None,
                    other => self.fail(other, "[]main.rawJSON"),
                },
                "x-metadata" => self.free_map(v),
                "type" => self.string(v, &mut node.type_),
                "x-kubernetes-int-or-string" => self.flag(v, &mut node.int_or_string),
                "x-kubernetes-preserve-unknown-fields" => self.flag(v, &mut node.preserve),
                "properties" => self.node_map(v, &mut node.properties),
                "additionalProperties" => self.boxed(v, &mut node.additional),
                "required" => self.strings(v, &mut node.required),
                "maxProperties" => self.int(v, &mut node.max_properties),
                "minProperties" => self.int(v, &mut node.min_properties),
                "items" => self.boxed(v, &mut node.items),
                "maxItems" => self.int(v, &mut node.max_items),
                "minItems" => self.int(v, &mut node.min_items),
                "uniqueItems" => self.flag(v, &mut node.unique_items),
                "format" => self.string(v, &mut node.format),
                "maxLength" => self.int(v, &mut node.max_length),
                "minLength" => self.int(v, &mut node.min_length),
                "pattern" => self.string(v, &mut node.pattern),
                "maximum" => self.int(v, &mut node.maximum),
                "minimum" => self.int(v, &mut node.minimum),
                "exclusiveMaximum" => self.flag(v, &mut node.exclusive_maximum),
                "exclusiveMinimum" => self.flag(v, &mut node.exclusive_minimum),
                "allOf" => self.nodes(v, &mut node.all_of),
                "oneOf" => self.nodes(v, &mut node.one_of),
                "anyOf" => self.nodes(v, &mut node.any_of),
                "not" => self.boxed(v, &mut node.not),
                "x-kubernetes-validations" => self.rules(v, &mut node.rules),
                _ => {}
            }
            self.stack.pop();
            self.strct = outer;
        }
    }
}

const FIELDS: &[&str] = &[
    "description",
    "example",
    "default",
    "enum",
    "x-metadata",
    "type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "properties",
    "additionalProperties",
    "required",
    "maxProperties",
    "minProperties",
    "items",
    "maxItems",
    "minItems",
    "uniqueItems",
    "format",
    "maxLength",
    "minLength",
    "pattern",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "x-kubernetes-validations",
];

/// A `default`/`example` literal: `null` means none.
fn literal(j: &Json) -> Option<&Json> {
    (!matches!(j, Json::Null)).then_some(j)
}

/// Decodes one literal; `None` (with a problem recorded) when Go could not hold it.
fn convert(
    j: &Json,
    path: String,
    what: &str,
    problems: &mut Vec<Problem>,
) -> Option<crate::value::Val> {
    let raw = value::compact(j);
    let failure = not_json(j, &raw).or_else(|| value::decode(j, Numbers::Float).err());
    if let Some(e) = failure {
        problems.push(Problem {
            path,
            raw,
            detail: format!("{what} is not valid JSON: {e}"),
        });
        return None;
    }
    value::decode(j, Numbers::Kubernetes).ok()
}

/// A literal built in memory can hold text that is not JSON at all (a number node
/// whose text is no number): Go's syntax error for its text, if so.
fn not_json(j: &Json, raw: &str) -> Option<String> {
    fn bad_number(j: &Json) -> bool {
        match j {
            Json::Num(lit) => crate::json::parse(lit).map_or(true, |p| !matches!(p, Json::Num(_))),
            Json::Arr(items) => items.iter().any(bad_number),
            Json::Obj(m) => m.iter().any(|(_, v)| bad_number(v)),
            _ => false,
        }
    }
    if !bad_number(j) {
        return None;
    }
    let e = crate::json::parse(raw).err()?;
    let context = match e.message.as_str() {
        "invalid character after top-level value" => "after top-level value",
        "expected , or ]" => "after array element",
        "expected , or }" => "after object key:value pair",
        "expected object key" => "looking for beginning of object key string",
        "expected :" => "after object key",
        "invalid number" => "in numeric literal",
        "invalid literal" => "in literal",
        _ => "looking for beginning of value",
    };
    Some(syntax_error(raw.as_bytes().get(e.offset).copied(), context))
}

fn on(flag: Option<bool>) -> bool {
    flag == Some(true)
}

/// Converts a decoded node; problems are listed in a fixed order (default, enum,
/// example, additionalProperties, properties by name, items, oneOf, anyOf, allOf, not).
fn internalize(n: &Node<'_>, at: &str, problems: &mut Vec<Problem>) -> Schema {
    let mut s = Schema {
        type_: n.type_.clone(),
        int_or_string: on(n.int_or_string),
        preserve_unknown: on(n.preserve),
        format: n.format.clone(),
        pattern: n.pattern.clone(),
        max_length: n.max_length,
        min_length: n.min_length,
        max_items: n.max_items,
        min_items: n.min_items,
        unique_items: on(n.unique_items),
        max_properties: n.max_properties,
        min_properties: n.min_properties,
        required: n.required.clone().unwrap_or_default(),
        exclusive_maximum: on(n.exclusive_maximum),
        exclusive_minimum: on(n.exclusive_minimum),
        maximum: n.maximum.map(|i| i as f64),
        minimum: n.minimum.map(|i| i as f64),
        rules: n.rules.clone(),
        ..Schema::default()
    };
    if let Some(d) = n.default {
        s.default = convert(d, format!("{at}.default"), "default", problems);
    }
    if let Some(items) = &n.enum_ {
        for (i, e) in items.iter().enumerate() {
            if matches!(e, Json::Null) {
                continue;
            }
            if let Some(v) = convert(e, format!("{at}.enum[{i}]"), "enum value", problems) {
                s.enum_.push(v);
            }
        }
    }
    if let Some(e) = n.example {
        s.example = convert(e, format!("{at}.example"), "example", problems);
    }
    if let Some(a) = &n.additional {
        let path = format!("{at}.additionalProperties");
        s.additional = Some(Additional::Schema(Box::new(internalize(
            a, &path, problems,
        ))));
    }
    if let Some(props) = &n.properties {
        for (name, p) in props {
            let path = format!("{at}.properties[{name}]");
            s.properties
                .insert(name.clone(), internalize(p, &path, problems));
        }
    }
    if let Some(i) = &n.items {
        let path = format!("{at}.items");
        s.items = Some(Box::new(internalize(i, &path, problems)));
    }
    let list = |l: &Option<Vec<Node<'_>>>, key: &str, problems: &mut Vec<Problem>| {
        l.iter()
            .flatten()
            .enumerate()
            .map(|(i, x)| internalize(x, &format!("{at}.{key}[{i}]"), problems))
            .collect::<Vec<_>>()
    };
    s.one_of = list(&n.one_of, "oneOf", problems);
    s.any_of = list(&n.any_of, "anyOf", problems);
    s.all_of = list(&n.all_of, "allOf", problems);
    if let Some(x) = &n.not {
        let path = format!("{at}.not");
        s.not = Some(Box::new(internalize(x, &path, problems)));
    }
    s
}

/// Reads a schema given as a `serde_json` value.
pub fn read_value(v: &serde_json::Value) -> Read {
    let j = crate::json::from_serde(v);
    read(Some(&j))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        read(Some(&crate::json::parse(text).unwrap())).unwrap_err()
    }

    #[test]
    fn go_decode_errors() {
        assert_eq!(
            err(r#"{"properties":{"a":{"maximum":1.5}}}"#),
            "json: cannot unmarshal number 1.5 into Go struct field capiSchema.properties.maximum of type int64"
        );
        assert_eq!(
            err(r#"{"x-kubernetes-validations":[{"rule":1}]}"#),
            "json: cannot unmarshal number into Go struct field capiValidationRule.x-kubernetes-validations.rule of type string"
        );
        assert_eq!(
            err(r#"{"oneOf":[1]}"#),
            "json: cannot unmarshal number into Go struct field capiSchema.oneOf of type main.capiSchema"
        );
        assert_eq!(
            err("[]"),
            "json: cannot unmarshal array into Go value of type main.capiSchema"
        );
    }

    #[test]
    fn literal_problems_in_order() {
        let (_, p) = read(Some(
            &crate::json::parse(r#"{"enum":[1,1e400,null,-1e999],"default":1e400}"#).unwrap(),
        ))
        .unwrap();
        let paths: Vec<_> = p.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(
            paths,
            ["schema.default", "schema.enum[1]", "schema.enum[3]"]
        );
    }
}
