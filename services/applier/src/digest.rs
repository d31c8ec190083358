//! A hash of JSON, the same whether it is taken from a decoded [`Value`] or while the
//! text is read (a serde seed that decodes nothing): the watchers hash the parts of an
//! object they compare without building it.
//!
//! Every value is fed with a tag of its type. An object's members are hashed one by
//! one and summed, so their order does not count: decoded objects keep their keys
//! sorted, text keeps them as the server wrote them.

use std::fmt;
use std::hash::{DefaultHasher, Hasher};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const UNSIGNED: u8 = 3;
const SIGNED: u8 = 4;
const FLOAT: u8 = 5;
const STRING: u8 = 6;
const ARRAY: u8 = 7;
const OBJECT: u8 = 8;
const END: u8 = 9;

fn string(hasher: &mut impl Hasher, text: &str) {
    hasher.write_u8(STRING);
    hasher.write_usize(text.len());
    hasher.write(text.as_bytes());
}

/// The hash of one part of an object, `null` when it has none.
pub fn of(part: Option<&Value>) -> u64 {
    let mut hasher = DefaultHasher::new();
    value(&mut hasher, part.unwrap_or(&Value::Null));
    hasher.finish()
}

/// Feeds `value` to `hasher`.
pub fn value(hasher: &mut impl Hasher, value: &Value) {
    match value {
        Value::Null => hasher.write_u8(NULL),
        Value::Bool(b) => hasher.write_u8(if *b { TRUE } else { FALSE }),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                hasher.write_u8(UNSIGNED);
                hasher.write_u64(u);
            } else if let Some(i) = n.as_i64() {
                hasher.write_u8(SIGNED);
                hasher.write_i64(i);
            } else {
                hasher.write_u8(FLOAT);
                hasher.write_u64(n.as_f64().unwrap_or_default().to_bits());
            }
        }
        Value::String(s) => string(hasher, s),
        Value::Array(items) => {
            hasher.write_u8(ARRAY);
            for item in items {
                self::value(hasher, item);
            }
            hasher.write_u8(END);
        }
        Value::Object(map) => {
            let mut members = Members::default();
            for (key, item) in map {
                let mut member = DefaultHasher::new();
                string(&mut member, key);
                self::value(&mut member, item);
                members.add(member);
            }
            members.finish(hasher);
        }
    }
}

/// An object's members, each hashed alone, combined whatever their order.
#[derive(Default)]
struct Members {
    count: usize,
    sum: u64,
}

impl Members {
    fn add(&mut self, member: DefaultHasher) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(member.finish());
    }

    fn finish(self, hasher: &mut impl Hasher) {
        hasher.write_u8(OBJECT);
        hasher.write_usize(self.count);
        hasher.write_u64(self.sum);
    }
}

/// A seed that feeds the value being read to the hasher, keeping nothing of it.
pub struct Digest<'a, H>(pub &'a mut H);

impl<'de, H: Hasher> DeserializeSeed<'de> for Digest<'_, H> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, H: Hasher> Visitor<'de> for Digest<'_, H> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.0.write_u8(NULL);
        Ok(())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<(), E> {
        self.0.write_u8(if b { TRUE } else { FALSE });
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<(), E> {
        self.0.write_u8(UNSIGNED);
        self.0.write_u64(u);
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<(), E> {
        // As `Value` holds it: a non-negative integer is unsigned.
        match u64::try_from(i) {
            Ok(u) => self.visit_u64(u),
            Err(_) => {
                self.0.write_u8(SIGNED);
                self.0.write_i64(i);
                Ok(())
            }
        }
    }

    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<(), E> {
        self.0.write_u8(FLOAT);
        self.0.write_u64(f.to_bits());
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        string(self.0, s);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.write_u8(ARRAY);
        while seq.next_element_seed(Digest(&mut *self.0))?.is_some() {}
        self.0.write_u8(END);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut members = Members::default();
        loop {
            // The key goes straight into its member's hasher (a key is read as a
            // string, which the value seed hashes as [`string`] does): no String per key.
            let mut member = DefaultHasher::new();
            if map.next_key_seed(Digest(&mut member))?.is_none() {
                break;
            }
            map.next_value_seed(Digest(&mut member))?;
            members.add(member);
        }
        members.finish(self.0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::hash::DefaultHasher;

    fn of_value(v: &Value) -> u64 {
        let mut h = DefaultHasher::new();
        value(&mut h, v);
        h.finish()
    }

    fn of_text(text: &str) -> u64 {
        let mut h = DefaultHasher::new();
        let mut de = serde_json::Deserializer::from_str(text);
        Digest(&mut h)
            .deserialize(&mut de)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        h.finish()
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e9f64..1e9).prop_map(Value::from),
            "[a-z\"\\\\/é\\n]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-z~/]{0,5}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Read from text or from the value decoded from it: the same hash.
        #[test]
        fn text_and_value_hash_alike(v in json()) {
            let text = v.to_string();
            let decoded: Value = serde_json::from_str(&text).unwrap_or_default();
            prop_assert_eq!(of_text(&text), of_value(&decoded));
        }
    }

    #[test]
    fn members_in_any_order_hash_alike() {
        assert_eq!(
            of_text(r#"{"b":1,"a":{"y":[1,2],"x":null}}"#),
            of_text(r#"{"a":{"x":null,"y":[1,2]},"b":1}"#)
        );
        assert_ne!(of_text("[1,2]"), of_text("[2,1]"));
    }

    #[test]
    fn different_values_hash_differently() {
        let values = [
            "null",
            "false",
            "true",
            "0",
            "-1",
            "1.5",
            "\"\"",
            "\"a\"",
            "[]",
            "{}",
            "[[]]",
            "[null]",
            "{\"a\":null}",
            "{\"a\":1}",
            "{\"b\":1}",
            "[\"a\",\"b\"]",
            "[\"ab\"]",
        ];
        let mut seen = std::collections::HashSet::new();
        for text in values {
            assert!(seen.insert(of_text(text)), "{text}");
        }
    }
}
