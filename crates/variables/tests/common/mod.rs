//! Proptest strategies the variables property tests share: arbitrary JSON values, and
//! schema nodes built from keyword entries. Each test picks its own ranges, so that one
//! test widening what it generates does not change what another one checks.

use proptest::prelude::*;
use serde_json::{Map, Value};

/// JSON scalars: null, booleans, integers from `ints`, floats, strings matching `text`.
pub fn leaf(
    ints: impl Strategy<Value = i64> + 'static,
    text: &'static str,
) -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        ints.prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        text.prop_map(Value::String),
    ]
}

/// Values three levels deep at the most: `leaf` values, and arrays and objects of
/// fewer than `width` members whose keys match `keys`.
pub fn nested(
    leaf: impl Strategy<Value = Value> + 'static,
    size: u32,
    width: u32,
    keys: &'static str,
) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(3, size, width, move |inner| {
        let members = 0..width as usize;
        prop_oneof![
            prop::collection::vec(inner.clone(), members.clone()).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, members)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Schema nodes: objects of up to four `keyword` entries (a keyword drawn twice keeps
/// its last value).
pub fn node(
    keyword: impl Strategy<Value = (&'static str, Value)> + 'static,
) -> impl Strategy<Value = Value> {
    prop::collection::vec(keyword, 0..5).prop_map(|kws| {
        let mut m = Map::new();
        for (k, v) in kws {
            m.insert(k.to_string(), v);
        }
        Value::Object(m)
    })
}
