//! Reading a plain `apiextensions.k8s.io/v1` `JSONSchemaProps` (CRD schemas): the full
//! keyword set the validator knows (`nullable`, `multipleOf`, `patternProperties`,
//! boolean `additionalProperties`, ...), Go decoding errors with the v1 type names, and
//! the literal conversion to the internal form.

use std::collections::BTreeMap;

use topograph_gocompat::json::UNEXPECTED_END;

use crate::godecode;
use crate::json::Json;
use crate::schema::{Additional, Rule, Schema};
use crate::value::{self, Numbers};

/// Why a CRD schema cannot be used: the oracle's stage and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unusable {
    /// Go's decoding error.
    Decode(String),
    /// A literal (`default`, `enum`, `example`) Go cannot hold.
    Conversion(String),
    /// A `$ref` that does not parse as a URL.
    BadReference(String),
    /// A `$ref`: the validator refuses references.
    Reference(String),
}

const PROPS: &str = "JSONSchemaProps";

/// Marks the `JSONSchemaProps` reader's [`godecode::Decoder`].
struct Props;

type Decoder = godecode::Decoder<Props>;

impl Decoder {
    fn string(&mut self, j: &Json, go_type: &str) -> Option<String> {
        match j {
            Json::Str(s) => Some(s.clone()),
            Json::Null => None,
            other => {
                self.fail(other, go_type);
                None
            }
        }
    }

    fn flag(&mut self, j: &Json) -> Option<bool> {
        match j {
            Json::Bool(b) => Some(*b),
            Json::Null => None,
            other => {
                self.fail(other, "bool");
                None
            }
        }
    }

    fn int(&mut self, j: &Json) -> Option<i64> {
        match j {
            Json::Num(lit) => match lit.parse::<i64>() {
                Ok(i) if value::is_integer_literal(lit) => Some(i),
                _ => {
                    self.fail_what(format!("number {lit}"), "int64");
                    None
                }
            },
            Json::Null => None,
            other => {
                self.fail(other, "int64");
                None
            }
        }
    }

    fn float(&mut self, j: &Json) -> Option<f64> {
        match j {
            Json::Num(lit) => match value::parse_float(lit) {
                Some(f) => Some(f),
                None => {
                    self.fail_what(format!("number {lit}"), "float64");
                    None
                }
            },
            Json::Null => None,
            other => {
                self.fail(other, "float64");
                None
            }
        }
    }

    /// A nested schema decoded by a custom unmarshaler: a fresh error context.
    fn fresh(&mut self, j: &Json, literals: &mut Vec<(String, Json)>) -> Schema {
        let mut inner = Decoder::default();
        let s = inner.schema(j, literals);
        if self.err.is_none() {
            self.err = inner.err;
        }
        s
    }

    fn in_field<T>(&mut self, name: &'static str, f: impl FnOnce(&mut Self) -> T) -> T {
        let outer = self.strct;
        self.stack.push(name);
        self.strct = PROPS;
        let out = f(self);
        self.stack.pop();
        self.strct = outer;
        out
    }

    fn schema_list(&mut self, j: &Json, literals: &mut Vec<(String, Json)>) -> Vec<Schema> {
        match j {
            Json::Arr(items) => items
                .iter()
                .map(|i| match i {
                    Json::Obj(_) | Json::Null => self.schema(i, literals),
                    other => {
                        self.fail(other, "v1.JSONSchemaProps");
                        Schema::default()
                    }
                })
                .collect(),
            Json::Null => Vec::new(),
            other => {
                self.fail(other, "[]v1.JSONSchemaProps");
                Vec::new()
            }
        }
    }

    fn schema_map(
        &mut self,
        j: &Json,
        literals: &mut Vec<(String, Json)>,
    ) -> BTreeMap<String, Schema> {
        match j {
            Json::Obj(members) => members
                .iter()
                .map(|(k, v)| {
                    let s = match v {
                        Json::Obj(_) | Json::Null => self.schema(v, literals),
                        other => {
                            self.fail(other, "v1.JSONSchemaProps");
                            Schema::default()
                        }
                    };
                    (k.clone(), s)
                })
                .collect(),
            Json::Null => BTreeMap::new(),
            other => {
                self.fail(other, "map[string]v1.JSONSchemaProps");
                BTreeMap::new()
            }
        }
    }

    fn rules(&mut self, j: &Json) -> Option<Vec<Rule>> {
        let Json::Arr(items) = j else {
            if !matches!(j, Json::Null) {
                self.fail(j, "v1.ValidationRules");
            }
            return None;
        };
        let mut out = Vec::new();
        for i in items {
            let mut r = Rule::default();
            match i {
                Json::Obj(members) => {
                    for (k, v) in members {
                        let outer = self.strct;
                        let (name, ty): (&'static str, &str) = match k.to_ascii_lowercase().as_str()
                        {
                            "rule" => ("rule", "string"),
                            "message" => ("message", "string"),
                            "messageexpression" => ("messageExpression", "string"),
                            "fieldpath" => ("fieldPath", "string"),
                            "reason" => ("reason", "v1.FieldValueErrorReason"),
                            "optionaloldself" => ("optionalOldSelf", "bool"),
                            _ => continue,
                        };
                        self.stack.push(name);
                        self.strct = "ValidationRule";
                        if name == "optionalOldSelf" {
                            self.flag(v);
                        } else if let Some(s) = self.string(v, ty) {
                            match name {
                                "rule" => r.rule = s,
                                "message" => r.message = s,
                                "messageExpression" => r.message_expression = s,
                                "fieldPath" => r.field_path = s,
                                _ => r.reason = Some(s).filter(|x| !x.is_empty()),
                            }
                        }
                        self.stack.pop();
                        self.strct = outer;
                    }
                }
                Json::Null => {}
                other => self.fail(other, "v1.ValidationRule"),
            }
            out.push(r);
        }
        Some(out)
    }

    /// Decodes one schema object; literal texts are collected for conversion.
    fn schema(&mut self, j: &Json, literals: &mut Vec<(String, Json)>) -> Schema {
        let mut s = Schema::default();
        let Json::Obj(members) = j else {
            return s;
        };
        for (k, v) in members {
            let key = k.to_ascii_lowercase();
            match key.as_str() {
                "$ref" => {
                    if let Some(r) = self.in_field("$ref", |d| d.string(v, "string")) {
                        s.reference = Some(r);
                    }
                }
                "description" | "title" | "id" | "$schema" | "format" | "pattern" | "type" => {
                    let name: &'static str = match key.as_str() {
                        "description" => "description",
                        "title" => "title",
                        "id" => "id",
                        "$schema" => "$schema",
                        "format" => "format",
                        "pattern" => "pattern",
                        _ => "type",
                    };
                    let got = self.in_field(name, |d| d.string(v, "string"));
                    match name {
                        "format" => s.format = got.unwrap_or_default(),
                        "pattern" => s.pattern = got.unwrap_or_default(),
                        "type" => s.type_ = got.unwrap_or_default(),
                        _ => {}
                    }
                }
                "default" | "example" if !matches!(v, Json::Null) => {
                    literals.push((key.clone(), v.clone()));
                    if key == "default" {
                        s.default = value::decode(v, Numbers::Kubernetes).ok();
                    }
                }
                "enum" => match v {
                    Json::Arr(items) => {
                        for item in items {
                            literals.push(("enum".into(), item.clone()));
                            s.enum_.push(
                                value::decode(item, Numbers::Kubernetes)
                                    .unwrap_or(crate::value::Val::Null),
                            );
                        }
                    }
                    Json::Null => {}
                    other => self.in_field("enum", |d| d.fail(other, "[]v1.JSON")),
                },
                "maximum" => s.maximum = self.in_field("maximum", |d| d.float(v)),
                "minimum" => s.minimum = self.in_field("minimum", |d| d.float(v)),
                "multipleof" => s.multiple_of = self.in_field("multipleOf", |d| d.float(v)),
                "exclusivemaximum" => {
                    s.exclusive_maximum =
                        self.in_field("exclusiveMaximum", |d| d.flag(v)) == Some(true)
                }
                "exclusiveminimum" => {
                    s.exclusive_minimum =
                        self.in_field("exclusiveMinimum", |d| d.flag(v)) == Some(true)
                }
                "uniqueitems" => {
                    s.unique_items = self.in_field("uniqueItems", |d| d.flag(v)) == Some(true)
                }
                "nullable" => s.nullable = self.in_field("nullable", |d| d.flag(v)) == Some(true),
                "x-kubernetes-int-or-string" => {
                    s.int_or_string =
                        self.in_field("x-kubernetes-int-or-string", |d| d.flag(v)) == Some(true)
                }
                "x-kubernetes-preserve-unknown-fields" => {
                    s.preserve_unknown = self
                        .in_field("x-kubernetes-preserve-unknown-fields", |d| d.flag(v))
                        == Some(true)
                }
                "x-kubernetes-embedded-resource" => {
                    s.embedded_resource =
                        self.in_field("x-kubernetes-embedded-resource", |d| d.flag(v)) == Some(true)
                }
                "maxlength" => s.max_length = self.in_field("maxLength", |d| d.int(v)),
                "minlength" => s.min_length = self.in_field("minLength", |d| d.int(v)),
                "maxitems" => s.max_items = self.in_field("maxItems", |d| d.int(v)),
                "minitems" => s.min_items = self.in_field("minItems", |d| d.int(v)),
                "maxproperties" => s.max_properties = self.in_field("maxProperties", |d| d.int(v)),
                "minproperties" => s.min_properties = self.in_field("minProperties", |d| d.int(v)),
                "required" => {
                    s.required = self.in_field("required", |d| match v {
                        Json::Arr(items) => {
                            items.iter().filter_map(|i| d.string(i, "string")).collect()
                        }
                        Json::Null => Vec::new(),
                        other => {
                            d.fail(other, "[]string");
                            Vec::new()
                        }
                    })
                }
                "properties" => {
                    s.properties = self.in_field("properties", |d| d.schema_map(v, literals))
                }
                "patternproperties" => {
                    s.pattern_properties =
                        self.in_field("patternProperties", |d| d.schema_map(v, literals))
                }
                "allof" => s.all_of = self.in_field("allOf", |d| d.schema_list(v, literals)),
                "oneof" => s.one_of = self.in_field("oneOf", |d| d.schema_list(v, literals)),
                "anyof" => s.any_of = self.in_field("anyOf", |d| d.schema_list(v, literals)),
                "not" => {
                    s.not = self.in_field("not", |d| match v {
                        Json::Obj(_) => Some(Box::new(d.schema(v, literals))),
                        Json::Null => None,
                        other => {
                            d.fail(other, "v1.JSONSchemaProps");
                            None
                        }
                    })
                }
                "items" => match v {
                    Json::Obj(_) => s.items = Some(Box::new(self.fresh(v, literals))),
                    Json::Arr(list) => {
                        for i in list {
                            self.fresh(i, literals);
                        }
                    }
                    _ => {
                        if self.err.is_none() {
                            self.err = Some(
                                "JSONSchemaPropsOrArray: expected JSON object or array".into(),
                            );
                        }
                    }
                },
                "additionalproperties" => match v {
                    Json::Obj(_) => {
                        s.additional = Some(Additional::Schema(Box::new(self.fresh(v, literals))))
                    }
                    Json::Bool(b) => s.additional = Some(Additional::Allows(*b)),
                    _ => {
                        if self.err.is_none() {
                            self.err =
                                Some("JSONSchemaPropsOrBool: expected JSON object or bool".into());
                        }
                    }
                },
                "x-kubernetes-validations" => {
                    s.rules = self.in_field("x-kubernetes-validations", |d| d.rules(v));
                }
                _ => {}
            }
        }
        s
    }
}

fn first_reference(s: &Schema) -> Option<&str> {
    if let Some(r) = &s.reference {
        return Some(r);
    }
    s.properties
        .values()
        .chain(s.pattern_properties.values())
        .chain(s.all_of.iter())
        .chain(s.one_of.iter())
        .chain(s.any_of.iter())
        .chain(s.items.as_deref())
        .chain(s.not.as_deref())
        .chain(s.additional_schema())
        .find_map(first_reference)
}

/// What Go's URL parser says about a `$ref`, if it refuses it.
fn reference_error(r: &str) -> Option<String> {
    let b = r.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let ok = b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
            if !ok {
                let end = (i + 3).min(r.len());
                return Some(format!(
                    "parse {}: invalid URL escape {}",
                    topograph_api::field::go_quote(r),
                    topograph_api::field::go_quote(r.get(i..end).unwrap_or("%"))
                ));
            }
        }
        i += 1;
    }
    if let Some(rest) = r.split_once("://").map(|x| x.1) {
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        if host.starts_with('[') && !host.contains(']') {
            return Some(format!(
                "parse {}: missing ']' in host",
                topograph_api::field::go_quote(r)
            ));
        }
    }
    None
}

/// Reads a CRD schema (`None`: an empty request body).
pub fn read(j: Option<&Json>) -> Result<Schema, Unusable> {
    let Some(j) = j else {
        return Err(Unusable::Decode(UNEXPECTED_END.into()));
    };
    let mut dec = Decoder::default();
    let mut literals = Vec::new();
    let schema = match j {
        Json::Obj(_) | Json::Null => dec.schema(j, &mut literals),
        other => {
            dec.fail(other, "v1.JSONSchemaProps");
            Schema::default()
        }
    };
    if let Some(e) = dec.err {
        return Err(Unusable::Decode(e));
    }
    for (_, lit) in &literals {
        if let Err(e) = value::decode(lit, Numbers::Float) {
            return Err(Unusable::Conversion(e));
        }
    }
    if let Some(r) = first_reference(&schema) {
        return Err(match reference_error(r) {
            Some(e) => Unusable::BadReference(e),
            None => Unusable::Reference(r.to_string()),
        });
    }
    Ok(schema)
}
