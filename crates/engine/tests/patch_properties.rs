//! Property tests of the patch engine's building blocks: JSON patch application and
//! variable paths never panic on any input, and an `add` of a new key undone by a
//! `remove` gives back the document.

use proptest::prelude::*;
use serde_json::{Map, Value};
use topograph_engine::patches::json_patch::{Operation, apply};
use topograph_engine::patches::variable_path::lookup;

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z0-9~/]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z0-9~/-]{0,3}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn pointer() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z0-9~/-]{0,3}|-|-1|01|[0-9]", 0..4)
        .prop_map(|tokens| tokens.iter().map(|t| format!("/{t}")).collect::<String>())
}

fn operation() -> impl Strategy<Value = Operation> {
    (
        prop_oneof![
            Just("add"),
            Just("replace"),
            Just("remove"),
            Just("move"),
            Just("copy"),
            Just("test"),
            Just("")
        ],
        pointer(),
        prop::option::of(json()),
        prop::option::of(pointer()),
    )
        .prop_map(|(op, path, value, from)| Operation {
            op: op.to_string(),
            path,
            value,
            from,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn applying_never_panics_and_leaves_the_input_alone(
        doc in json(),
        operations in prop::collection::vec(operation(), 0..5),
    ) {
        let before = doc.clone();
        let _ = apply(&doc, &operations);
        prop_assert_eq!(doc, before);
    }

    #[test]
    fn add_then_remove_of_a_new_key_is_identity(
        doc in prop::collection::btree_map("[a-z]{1,3}", json(), 0..4),
        key in "[a-z]{4}",
        value in json(),
    ) {
        let doc = Value::Object(doc.into_iter().collect());
        let path = format!("/{key}");
        let out = apply(&doc, &[
            Operation { op: "add".into(), path: path.clone(), value: Some(value), from: None },
            Operation { op: "remove".into(), path, value: None, from: None },
        ]);
        prop_assert_eq!(out, Ok(doc));
    }

    #[test]
    fn variable_paths_never_panic(
        variables in prop::collection::btree_map("[a-z]{1,3}", json(), 0..4),
        path in "[a-z0-9\\[\\]\\.-]{0,12}",
    ) {
        let variables: Map<String, Value> = variables.into_iter().collect();
        let _ = lookup(&variables, &path);
    }
}
