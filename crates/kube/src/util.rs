//! Small helpers the server needs without extra dependencies: random names and uids,
//! and JSON field access (timestamps are `topograph_gocompat::time`'s).

use serde_json::Value;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A random 64-bit number. `RandomState` is seeded from the OS per thread and advanced per
/// call; mixing in a counter and the clock makes consecutive values independent enough
/// for names and uids (nothing here needs cryptographic randomness).
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    hasher.write_u128(nanos);
    hasher.finish()
}

/// A version 4 UUID in its usual text form.
pub fn uuid_v4() -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&random_u64().to_le_bytes());
    bytes[8..].copy_from_slice(&random_u64().to_le_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    // 8-4-4-4-12 hex digits; every create names one, so written without `format!`.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// A random suffix for `generateName`, as Kubernetes appends
/// ([`topograph_api::server::name_suffix`]).
pub fn name_suffix() -> String {
    topograph_api::server::name_suffix(random_u64())
}

pub use topograph_api::object::metadata_mut;

/// A string field of `metadata`, empty when missing.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The string at a `/`-separated path, empty when missing or not a string.
pub fn str_at<'a>(obj: &'a Value, path: &str) -> &'a str {
    obj.pointer(path).and_then(Value::as_str).unwrap_or("")
}

/// Kubernetes' version priority: GA before beta before alpha, higher numbers first, and
/// versions not following the pattern last in lexical order.
pub fn version_priority_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parse(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let major: u64 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((3, major, 0));
        }
        for (label, rank) in [("beta", 2u8), ("alpha", 1u8)] {
            if let Some(n) = tail.strip_prefix(label) {
                let minor: u64 = n.parse().ok()?;
                return Some((rank, major, minor));
            }
        }
        None
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// How Go's JSON decoder names a JSON value's type in its errors ("cannot unmarshal
/// number into ..."); the server's messages use the same words.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_has_version_and_variant() {
        let u = uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(u, uuid_v4());
        // 8-4-4-4-12 lower-case hex digits, as Kubernetes writes uids.
        let groups: Vec<usize> = u.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{u}");
        assert!(
            u.chars()
                .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)),
            "{u}"
        );
    }

    #[test]
    fn name_suffix_uses_the_kubernetes_alphabet() {
        let s = name_suffix();
        assert_eq!(s.len(), 5);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }

    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut v = vec![
            "v1alpha1",
            "v1beta1",
            "foo",
            "v2",
            "v1",
            "v1beta2",
            "v10alpha3",
        ];
        v.sort_by(|a, b| version_priority_cmp(a, b));
        assert_eq!(
            v,
            vec![
                "v2",
                "v1",
                "v1beta2",
                "v1beta1",
                "v10alpha3",
                "v1alpha1",
                "foo"
            ]
        );
    }
}
