//! Properties: validation and defaulting never panic on arbitrary schemas and values;
//! defaulting is idempotent; a valid value stays valid after defaulting when the
//! schema's defaults are themselves valid.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use topograph_variables::json as cjson;
use topograph_variables::{check, default_value, validate_value};

const PATH: &str = "spec.topology.variables[v]";

mod common;

/// Arbitrary JSON values with keys that often collide with schema properties.
fn value() -> impl Strategy<Value = Value> {
    // Beyond 2^53 Go's float64 reading loses digits, so re-defaulting would differ.
    let ints = -(1i64 << 53)..(1i64 << 53);
    common::nested(common::leaf(ints, "[a-c0-9%.: -]{0,6}"), 24, 4, "[a-d]")
}

const RULES: &[&str] = &[
    "self == oldSelf",
    "self.size() < 3",
    "has(self.a)",
    "self > 1",
    "self.all(x, x != 'a')",
    "1 / 0 == 1",
    "self.foo(",
    "type(self) == int",
    "self.startsWith('a')",
    "",
];

/// Arbitrary schemas in the variable dialect (and beyond it: unknown keys, wrong types).
fn schema() -> impl Strategy<Value = Value> {
    let keyword = prop_oneof![
        prop::sample::select(vec![
            "string", "integer", "number", "boolean", "object", "array", "x"
        ])
        .prop_map(|t| ("type", json!(t))),
        value().prop_map(|v| ("default", v)),
        prop::collection::vec(value(), 0..3).prop_map(|v| ("enum", Value::Array(v))),
        (0i64..4).prop_map(|n| ("maxLength", json!(n))),
        (0i64..4).prop_map(|n| ("minItems", json!(n))),
        (-3i64..3).prop_map(|n| ("maximum", json!(n))),
        any::<bool>().prop_map(|b| ("exclusiveMinimum", json!(b))),
        prop::sample::select(vec!["^a", "(", "[0-9]+", "\\d"]).prop_map(|p| ("pattern", json!(p))),
        prop::sample::select(vec![
            "uri",
            "email",
            "date-time",
            "duration",
            "cidr",
            "byte",
            "x"
        ])
        .prop_map(|f| ("format", json!(f))),
        prop::collection::vec("[a-d]", 0..3).prop_map(|r| ("required", json!(r))),
        any::<bool>().prop_map(|b| ("x-kubernetes-int-or-string", json!(b))),
        any::<bool>().prop_map(|b| ("x-kubernetes-preserve-unknown-fields", json!(b))),
        any::<bool>().prop_map(|b| ("uniqueItems", json!(b))),
        prop::sample::select(RULES.to_vec())
            .prop_map(|r| ("x-kubernetes-validations", json!([{"rule": r}]))),
        value().prop_map(|v| ("maxProperties", v)),
    ];
    common::node(keyword).prop_recursive(3, 24, 3, |inner| {
        (
            inner.clone(),
            prop::collection::btree_map("[a-d]", inner.clone(), 0..3),
            prop::option::of(inner.clone()),
            prop::option::of(inner.clone()),
            prop::collection::vec(inner, 0..2),
        )
            .prop_map(|(base, props, items, additional, one_of)| {
                let mut m = match base {
                    Value::Object(m) => m,
                    _ => Map::new(),
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
                if !one_of.is_empty() {
                    m.insert("oneOf".into(), Value::Array(one_of));
                }
                Value::Object(m)
            })
    })
}

/// Structural schemas whose defaults fit their own node (no cross-field constraints).
fn typed_schema() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        (any::<bool>(), "[a-c]{0,3}").prop_map(|(d, s)| {
            if d {
                json!({"type": "string", "default": s})
            } else {
                json!({"type": "string"})
            }
        }),
        (any::<bool>(), -5i64..5).prop_map(|(d, n)| {
            if d {
                json!({"type": "integer", "default": n})
            } else {
                json!({"type": "integer"})
            }
        }),
        (any::<bool>(), any::<bool>()).prop_map(|(d, b)| {
            if d {
                json!({"type": "boolean", "default": b})
            } else {
                json!({"type": "boolean"})
            }
        }),
    ];
    scalar.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map("[a-d]", inner.clone(), 0..3),
                any::<bool>()
            )
                .prop_map(|(props, with_default)| {
                    let mut m = Map::new();
                    m.insert("type".into(), json!("object"));
                    m.insert(
                        "properties".into(),
                        Value::Object(props.into_iter().collect()),
                    );
                    if with_default {
                        m.insert("default".into(), json!({}));
                    }
                    Value::Object(m)
                }),
            inner
                .clone()
                .prop_map(|i| json!({"type": "object", "additionalProperties": i})),
            inner.prop_map(|i| json!({"type": "array", "items": i})),
        ]
    })
}

/// Values that fit a schema made by [`typed_schema`], some fields left out.
fn value_for(schema: &Value) -> BoxedStrategy<Value> {
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => "[a-c]{0,3}".prop_map(Value::String).boxed(),
        Some("integer") => (-5i64..5).prop_map(Value::from).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        Some("array") => {
            let items = schema.get("items").cloned().unwrap_or(Value::Null);
            prop::collection::vec(value_for(&items), 0..3)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("object") => {
            if let Some(a) = schema.get("additionalProperties") {
                return prop::collection::btree_map("[a-d]", value_for(a), 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect()))
                    .boxed();
            }
            let props: Vec<(String, Value)> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default();
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                .into_iter()
                .map(|(k, p)| {
                    prop::option::of(value_for(&p))
                        .prop_map(move |v| v.map(|v| (k.clone(), v)))
                        .boxed()
                })
                .collect();
            fields
                .prop_map(|fs| Value::Object(fs.into_iter().flatten().collect()))
                .boxed()
        }
        _ => Just(Value::Null).boxed(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn never_panics(schema in schema(), v in value(), old in prop::option::of(value())) {
        let _ = validate_value(&schema, "v", &v, old.as_ref(), PATH);
        let _ = default_value(&schema, "v", Some(&v), PATH);
        let _ = default_value(&schema, "v", None, PATH);
        let s = cjson::from_serde(&schema);
        let j = cjson::from_serde(&v);
        let _ = check::crd_request(Some(&s), Some(&j), Some("spec"));
    }

    #[test]
    fn defaulting_is_idempotent(schema in schema(), v in prop::option::of(value())) {
        if let Ok(Some(once)) = default_value(&schema, "v", v.as_ref(), PATH) {
            let twice = default_value(&schema, "v", Some(&once), PATH);
            prop_assert_eq!(twice, Ok(Some(once)));
        }
    }

    #[test]
    fn valid_values_stay_valid_after_defaulting(
        (schema, v) in typed_schema().prop_flat_map(|s| (Just(s.clone()), value_for(&s)))
    ) {
        prop_assert_eq!(validate_value(&schema, "v", &v, None, PATH), Vec::new());
        let defaulted = default_value(&schema, "v", Some(&v), PATH);
        let Ok(Some(d)) = defaulted else {
            return Err(TestCaseError::fail(format!("defaulting failed: {defaulted:?}")));
        };
        prop_assert_eq!(validate_value(&schema, "v", &d, None, PATH), Vec::new());
    }
}
