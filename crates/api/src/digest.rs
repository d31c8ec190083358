//! Digests of JSON: a value's text fed to a hasher as `serde_json` writes it, with no
//! text built. `serde_json` writes a map's keys in order, so equal values have equal
//! digests. Digests live in one process's memory (which objects are known unchanged,
//! what a watch saw last); they are never stored or sent.

use serde::Serialize;
use std::hash::{DefaultHasher, Hasher};

/// Feeds the JSON text of `value` to `hasher`.
pub fn write_json<T: Serialize + ?Sized>(hasher: &mut impl Hasher, value: &T) {
    // Writing to a hasher cannot fail, nor can serializing a JSON value.
    let _ = serde_json::to_writer(HashWriter(hasher), value);
}

/// The digest of the JSON text of `value`.
pub fn of_json<T: Serialize + ?Sized>(value: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    write_json(&mut hasher, value);
    hasher.finish()
}

struct HashWriter<'a, H: Hasher>(&'a mut H);

impl<H: Hasher> std::io::Write for HashWriter<'_, H> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes);
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
}
