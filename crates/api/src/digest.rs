//! Digests of JSON: a value's text fed to a hasher as `serde_json` writes it, with no
//! text built. `serde_json` writes a map's keys in order, so equal values have equal
//! digests. Digests live in one process's memory (which objects are known unchanged,
//! what a watch saw last); they are never stored or sent.

use serde::Serialize;
use std::hash::{DefaultHasher, Hasher};

/// Feeds the JSON text of `value` to `hasher`, in chunks: `serde_json` writes a value a
/// token at a time (a quote, a key, a colon), and a hasher call per token cost more
/// than the hashing. Equal values give equal chunks, so equal digests, whatever the
/// hasher; a streaming one (`DefaultHasher`) gives the digest of the whole text.
pub fn write_json<T: Serialize + ?Sized>(hasher: &mut impl Hasher, value: &T) {
    let mut writer = HashWriter {
        hasher,
        buffer: [0; CHUNK],
        len: 0,
    };
    // Writing to a hasher cannot fail, nor can serializing a JSON value.
    let _ = serde_json::to_writer(&mut writer, value);
    writer.drain();
}

/// The digest of the JSON text of `value`.
pub fn of_json<T: Serialize + ?Sized>(value: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    write_json(&mut hasher, value);
    hasher.finish()
}

/// [`write_json`] of a JSON value, its text written by [`crate::json`] (checked eight
/// bytes at a time, where `serde_json`'s serializer goes byte by byte and token by
/// token) and hashed in one call: the same text, so the same digest with a streaming
/// hasher.
pub fn write_value(hasher: &mut impl Hasher, value: &serde_json::Value) {
    let mut text = Vec::with_capacity(CHUNK);
    crate::json::write(value, &mut text);
    hasher.write(&text);
}

/// The digest of the JSON text of `value` ([`write_value`]).
pub fn of_value(value: &serde_json::Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    write_value(&mut hasher, value);
    hasher.finish()
}

/// How many bytes of text are gathered before they are hashed.
const CHUNK: usize = 256;

struct HashWriter<'a, H: Hasher> {
    hasher: &'a mut H,
    buffer: [u8; CHUNK],
    len: usize,
}

impl<H: Hasher> HashWriter<'_, H> {
    /// Hashes what is gathered.
    fn drain(&mut self) {
        if self.len > 0 {
            self.hasher.write(&self.buffer[..self.len]);
            self.len = 0;
        }
    }
}

impl<H: Hasher> std::io::Write for HashWriter<'_, H> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.len + bytes.len() > CHUNK {
            self.drain();
        }
        if bytes.len() >= CHUNK {
            self.hasher.write(bytes);
        } else {
            self.buffer[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
    fn a_streaming_hasher_digests_the_whole_text_whatever_the_chunks() {
        let long = "x".repeat(3 * CHUNK + 7);
        for value in [
            json!(null),
            json!({"a": "short"}),
            json!({"long": long, "list": [1, 2.5, "é", {"k": long}], "tail": "t"}),
            json!((0..200).map(|i| format!("item-{i}")).collect::<Vec<_>>()),
        ] {
            let mut whole = DefaultHasher::new();
            whole.write(&serde_json::to_vec(&value).unwrap());
            let whole = whole.finish();
            assert_eq!(of_json(&value), whole, "{value}");
            assert_eq!(of_value(&value), whole, "{value}");
        }
    }
}
