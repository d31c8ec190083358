//! Property: validating class variable definitions never panics, whatever the names,
//! schemas (in and beyond the dialect), rules, metadata and old definitions; and
//! validating the same input twice gives the same errors in the same order.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use topograph_api::model::{Metadata, VariableDefinition};
use topograph_variables::definitions::{RawDefinition, validate};
use topograph_variables::json::Json;
use topograph_variables::validate_definitions;

mod common;

fn value() -> impl Strategy<Value = Value> {
    common::nested(
        common::leaf(any::<i64>(), "[a-c0-9%.:' -]{0,6}"),
        16,
        3,
        "[a-c]",
    )
}

const RULES: &[&str] = &[
    "self == oldSelf",
    "self.size() < 3",
    "has(self.a)",
    "self > 1",
    "self.all(x, self.exists(y, x == y))",
    "self.contains('keyword')",
    "ip(self).family() == 6",
    "self.matches('^a+$')",
    "'a' + string(self) == 'b'",
    "self.foo(",
    "a \n b",
    " ",
    "",
];

fn rule() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(RULES.to_vec()),
        prop::option::of(prop::sample::select(vec!["", " ", "msg", "a\nb"])),
        prop::option::of(prop::sample::select(vec![
            "'x'",
            "string(self)",
            " ",
            "self +",
        ])),
        prop::option::of(prop::sample::select(vec![
            "FieldValueInvalid",
            "InternalError",
            "",
        ])),
        prop::option::of(prop::sample::select(vec![
            ".a", "['a']", ".a.b", "[", "['", ".", "..", "   ", ".a\n", "['c\\", "[0]",
        ])),
    )
        .prop_map(|(r, m, me, reason, fp)| {
            let mut o = Map::new();
            o.insert("rule".into(), json!(r));
            if let Some(m) = m {
                o.insert("message".into(), json!(m));
            }
            if let Some(me) = me {
                o.insert("messageExpression".into(), json!(me));
            }
            if let Some(x) = reason {
                o.insert("reason".into(), json!(x));
            }
            if let Some(x) = fp {
                o.insert("fieldPath".into(), json!(x));
            }
            Value::Object(o)
        })
}

fn schema() -> impl Strategy<Value = Value> {
    let keyword = prop_oneof![
        prop::sample::select(vec![
            "string", "integer", "number", "boolean", "object", "array", "null", ""
        ])
        .prop_map(|t| ("type", json!(t))),
        value().prop_map(|v| ("default", v)),
        value().prop_map(|v| ("example", v)),
        prop::collection::vec(value(), 0..3).prop_map(|v| ("enum", Value::Array(v))),
        (-1i64..4).prop_map(|n| ("maxLength", json!(n))),
        (-1i64..4).prop_map(|n| ("maxItems", json!(n))),
        (-1i64..4).prop_map(|n| ("maxProperties", json!(n))),
        prop::sample::select(vec!["^a", "(", "[a", "\\d"]).prop_map(|p| ("pattern", json!(p))),
        prop::sample::select(vec!["date-time", "duration", "byte", "x"])
            .prop_map(|f| ("format", json!(f))),
        any::<bool>().prop_map(|b| ("x-kubernetes-int-or-string", json!(b))),
        any::<bool>().prop_map(|b| ("x-kubernetes-preserve-unknown-fields", json!(b))),
        prop::collection::vec(rule(), 0..3)
            .prop_map(|r| ("x-kubernetes-validations", Value::Array(r))),
        prop::sample::select(vec![".a", "A/b", "a", "x/y/z", ""]).prop_map(|k| (
            "x-metadata",
            json!({"labels": {k: "-v"}, "annotations": {k: 1}})
        )),
        value().prop_map(|v| ("required", v)),
    ];
    common::node(keyword).prop_recursive(3, 24, 3, |inner| {
        (
            inner.clone(),
            prop::collection::btree_map("[a-c]|metadata", inner.clone(), 0..3),
            prop::option::of(inner.clone()),
            prop::option::of(inner.clone()),
            prop::collection::vec(inner.clone(), 0..2),
            prop::option::of(inner),
        )
            .prop_map(|(base, props, items, additional, any_of, not)| {
                let mut m = match base {
                    Value::Object(m) => m,
                    other => {
                        let mut m = Map::new();
                        m.insert("default".into(), other);
                        m
                    }
                };
                if !props.is_empty() {
                    m.insert(
                        "properties".into(),
                        Value::Object(props.into_iter().collect()),
                    );
                }
                if let Some(i) = items {
                    m.insert("items".into(), i);
                }
                if let Some(a) = additional {
                    m.insert("additionalProperties".into(), a);
                }
                if !any_of.is_empty() {
                    m.insert("anyOf".into(), Value::Array(any_of));
                }
                if let Some(n) = not {
                    m.insert("not".into(), n);
                }
                Value::Object(m)
            })
    })
}

fn definition() -> impl Strategy<Value = VariableDefinition> {
    (
        prop_oneof![
            prop::sample::select(vec!["", "builtin", "a.b", "cpu", "cpu"]).prop_map(String::from),
            "\\PC{0,8}",
        ],
        any::<bool>(),
        prop_oneof![schema(), value()],
        prop::collection::btree_map("[-a-z./]{0,5}", "[-a-z_]{0,5}", 0..3),
    )
        .prop_map(|(name, required, schema, labels)| VariableDefinition {
            name,
            required,
            schema,
            metadata: Metadata {
                annotations: labels.clone(),
                labels,
            },
        })
}

/// Number nodes holding text that is no number stand for raw literals that are not JSON.
fn garbage_literals(j: Json, text: &str) -> Json {
    match j {
        Json::Num(_) => Json::Num(text.to_string()),
        Json::Arr(a) => Json::Arr(a.into_iter().map(|x| garbage_literals(x, text)).collect()),
        Json::Obj(m) => Json::Obj(
            m.into_iter()
                .map(|(k, v)| (k, garbage_literals(v, text)))
                .collect(),
        ),
        other => other,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_is_stable(
        defs in prop::collection::vec(definition(), 0..4),
        old in prop::option::of(prop::collection::vec(definition(), 0..3)),
        garbage in prop::sample::select(vec!["", "-", "1e999", "\"a\":1", "invalid", "{", "]"]),
    ) {
        let once = validate_definitions(&defs, old.as_deref());
        let twice = validate_definitions(&defs, old.as_deref());
        prop_assert_eq!(once, twice);

        let raw: Vec<RawDefinition> = defs
            .iter()
            .map(|d| {
                let mut r = RawDefinition::from(d);
                r.schema = garbage_literals(r.schema, garbage);
                r
            })
            .collect();
        let _ = validate(&raw, None);
    }
}
