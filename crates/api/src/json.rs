//! JSON text of a value, byte for byte what `serde_json::to_vec` writes, faster for
//! Kubernetes objects: their strings (keys, names, images, versions) nearly never need
//! an escape, and `serde_json` looks every byte of every string up in its escape table.
//! Here a string is checked eight bytes at a time and copied whole when nothing in it
//! needs escaping; a string that does, and every number, is written by `serde_json`
//! itself, so the two writers cannot differ.

use serde_json::Value;

/// `value` as compact JSON text.
pub fn to_vec(value: &Value) -> Vec<u8> {
    // Most objects a render writes are 1 to 4 KB of text.
    let mut out = Vec::with_capacity(1024);
    write(value, &mut out);
    out
}

/// `value` as compact JSON text without the field at `omitted` (a path of object keys;
/// `["metadata", "managedFields"]` leaves an object's managed fields out), as if it
/// had been removed from a copy.
pub fn to_vec_omitting(value: &Value, omitted: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    write_omitting(value, omitted, &mut out);
    out
}

fn write_omitting(value: &Value, omitted: &[&str], out: &mut Vec<u8>) {
    let (Value::Object(fields), Some((first, rest))) = (value, omitted.split_first()) else {
        return write(value, out);
    };
    let kept = fields
        .iter()
        .filter(|(key, _)| !(key.as_str() == *first && rest.is_empty()));
    write_object(kept, out, |key, field, out| {
        if key == *first {
            write_omitting(field, rest, out);
        } else {
            write(field, out);
        }
    });
}

/// Appends an object of `members` to `out`, each member's value written by `value`
/// (for writers that treat some members apart).
pub fn write_object<'a>(
    members: impl IntoIterator<Item = (&'a String, &'a Value)>,
    out: &mut Vec<u8>,
    mut value: impl FnMut(&str, &Value, &mut Vec<u8>),
) {
    out.push(b'{');
    for (i, (key, member)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(key, out);
        out.push(b':');
        value(key, member, out);
    }
    out.push(b'}');
}

/// Appends `value` as compact JSON text to `out`.
pub fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => write_with_serde(number, out),
        Value::String(text) => write_str(text, out),
        Value::Array(items) => write_array(items, out),
        Value::Object(fields) => write_object(fields, out, |_, field, out| write(field, out)),
    }
}

/// Appends `items` as a JSON array to `out`, as `serde_json` writes a slice of values.
pub fn write_array(items: &[Value], out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(item, out);
    }
    out.push(b']');
}

/// A string, quoted: copied as it is when no byte of it needs an escape.
pub fn write_str(text: &str, out: &mut Vec<u8>) {
    if needs_escape(text.as_bytes()) {
        write_with_serde(text, out);
    } else {
        out.reserve(text.len() + 3);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

fn write_with_serde<T: serde::Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    // Writing a string or a number into a vector cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// Whether JSON needs an escape for any byte of `bytes`: a control character (below
/// 0x20), a quote or a backslash. Everything else, UTF-8 sequences included, is
/// written as it is. Read eight bytes at a time, a long string's tail as its last eight
/// bytes; a string shorter than a word byte by byte.
fn needs_escape(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n < 8 {
        // Byte by byte: padding a short string into a word costs a copy of variable
        // length, which is more than the few comparisons it saves.
        return bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
    }
    let word_at = |i: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        u64::from_ne_bytes(word)
    };
    let mut i = 0;
    while i + 8 <= n {
        if word_needs_escape(word_at(i)) {
            return true;
        }
        i += 8;
    }
    i < n && word_needs_escape(word_at(n - 8))
}

/// Whether any of the eight bytes of `word` needs an escape.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    const SPACES: u64 = u64::from_ne_bytes([0x20; 8]);
    // Bytes below `n` (at most 0x80) set the high bit of the result, once bytes that
    // had it set themselves are masked out by `!x`: exact as to whether any byte is
    // (a borrow only runs on from a byte that is itself below `n`). A zero byte is
    // one below 1, and a byte equal to `c` is a zero byte of `x ^ c`.
    let below = |x: u64, n: u64| x.wrapping_sub(n) & !x & HIGHS;
    below(word, SPACES) | below(word ^ QUOTES, ONES) | below(word ^ BACKSLASHES, ONES) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn writes_what_serde_json_writes() {
        let cases = [
            json!(null),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            json!([
                "",
                "a\"b",
                "back\\slash",
                "tab\there",
                "line\nbreak",
                "\u{1f}",
                "\u{7f}"
            ]),
            json!({"unicode": "größe ✓ 😀", "esc\"key": 1, "n": [-1, 0, 1.5, 1e300, u64::MAX]}),
            json!("exactly8"),
            json!("seventeen bytes.\""),
            json!("a string longer than eight bytes with a quote \" near its end"),
            json!({"nested": {"empty": {}, "list": [], "t": true, "f": false}}),
        ];
        for value in cases {
            assert_eq!(
                to_vec(&value),
                serde_json::to_vec(&value).unwrap_or_default(),
                "{value}"
            );
        }
    }

    #[test]
    fn every_byte_that_needs_an_escape_is_found_at_every_position() {
        for byte in 0u8..=0xff {
            for len in 1..=24 {
                for position in 0..len {
                    let mut text = vec![b'a'; len];
                    text[position] = byte;
                    let needs = byte < 0x20 || byte == b'"' || byte == b'\\';
                    assert_eq!(
                        needs_escape(&text),
                        needs,
                        "byte {byte:#x} at {position} of {len}"
                    );
                }
            }
        }
        assert!(!needs_escape(b""));
        // Bytes of multi-byte UTF-8 sequences never need one.
        assert!(!needs_escape("ĀĂĄĆ€€€€😀😀".as_bytes()));
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[ -~\\t\\n\"\\\\]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(value in any_value()) {
            prop_assert_eq!(to_vec(&value), serde_json::to_vec(&value).unwrap_or_default());
        }

        #[test]
        fn an_omitted_field_is_written_as_if_removed_from_a_copy(
            value in any_value(), managed in any_value(), first in any::<bool>()
        ) {
            let mut object = json!({"metadata": {"name": "a", "managedFields": managed}, "spec": value});
            if first {
                // An object whose only metadata field is the omitted one.
                object["metadata"].as_object_mut().map(|m| m.remove("name"));
            }
            let mut copy = object.clone();
            copy["metadata"].as_object_mut().map(|m| m.remove("managedFields"));
            prop_assert_eq!(
                to_vec_omitting(&object, &["metadata", "managedFields"]),
                serde_json::to_vec(&copy).unwrap_or_default()
            );
            // Any value: written as the copy without the field, where there is one.
            let mut copy = value.clone();
            if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("managedFields");
            }
            prop_assert_eq!(
                to_vec_omitting(&value, &["metadata", "managedFields"]),
                serde_json::to_vec(&copy).unwrap_or_default()
            );
        }
    }
}
