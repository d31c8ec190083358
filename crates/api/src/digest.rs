//! Digests of JSON: a value's text, as `serde_json` writes it, fed to a hasher.
//! `serde_json` writes a map's keys in order, so equal values have equal digests.
//! Digests live in one process's memory (which objects are known unchanged, what a
//! watch saw last); they are never stored or sent.

use serde_json::Value;
use std::hash::{DefaultHasher, Hasher};

/// JSON that can be digested: a value, or a list of values (digested as the array
/// they make).
pub trait Json {
    /// Appends the JSON text to `out`, as `serde_json::to_vec` writes it.
    fn write_text(&self, out: &mut Vec<u8>);
}

impl Json for Value {
    fn write_text(&self, out: &mut Vec<u8>) {
        crate::json::write(self, out);
    }
}

impl Json for [Value] {
    fn write_text(&self, out: &mut Vec<u8>) {
        crate::json::write_array(self, out);
    }
}

/// Feeds the JSON text of `value` to `hasher` in one call. The text is written by
/// [`crate::json`] (eight bytes at a time, where `serde_json`'s serializer goes byte by
/// byte and a hasher fed token by token costs more than the hashing), so equal values
/// give equal digests whatever the hasher, and a streaming one (`DefaultHasher`) gives
/// the digest of the whole text.
pub fn write_json(hasher: &mut impl Hasher, value: &(impl Json + ?Sized)) {
    let mut text = Vec::with_capacity(256);
    value.write_text(&mut text);
    hasher.write(&text);
}

/// The digest of the JSON text of `value`.
pub fn of_json(value: &(impl Json + ?Sized)) -> u64 {
    let mut hasher = DefaultHasher::new();
    write_json(&mut hasher, value);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_have_equal_digests_and_a_change_changes_it() {
        let a = json!({"b": 1, "a": [true, null, "x"]});
        let same: serde_json::Value =
            serde_json::from_str(r#"{"a":[true,null,"x"],"b":1}"#).unwrap();
        assert_eq!(of_json(&a), of_json(&same));
        assert_ne!(
            of_json(&a),
            of_json(&json!({"b": 2, "a": [true, null, "x"]}))
        );
        assert_ne!(of_json(&json!(["ab", "c"])), of_json(&json!(["a", "bc"])));
    }

    #[test]
    fn a_streaming_hasher_digests_the_whole_text() {
        let long = "x".repeat(1000);
        for value in [
            json!(null),
            json!({"a": "short"}),
            json!({"long": long, "list": [1, 2.5, "é", {"k": long}], "tail": "t"}),
            json!((0..200).map(|i| format!("item-{i}")).collect::<Vec<_>>()),
        ] {
            let mut whole = DefaultHasher::new();
            whole.write(&serde_json::to_vec(&value).unwrap());
            assert_eq!(of_json(&value), whole.finish(), "{value}");
        }
        // A list of values is digested as the array `serde_json` writes for it.
        let items = [json!("a"), json!({"b": [1, null]}), json!(2.5)];
        let mut whole = DefaultHasher::new();
        whole.write(&serde_json::to_vec(&items[..]).unwrap());
        assert_eq!(of_json(&items[..]), whole.finish());
    }
}
