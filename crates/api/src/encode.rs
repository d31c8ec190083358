//! Compact JSON text of a [`Value`], byte for byte what `serde_json::to_vec` writes, for
//! the answers that carry rendered objects. Objects are mostly short keys and short
//! strings: written straight into the buffer, with strings checked for what needs
//! escaping eight bytes at a time, rather than through serde's `Serializer` and a
//! byte-by-byte table, an answer costs ~10 % fewer instructions.
//!
//! The text is `serde_json`'s: keys in the map's order, no spaces, strings escaping
//! only `"`, `\` and the control characters (`\b`, `\t`, `\n`, `\f`, `\r`, else
//! `\u00xx` in lowercase hex), numbers written by `serde_json` itself.

use serde_json::Value;

/// What a byte becomes inside a string: 0 stays as it is, `u` is `\u00xx`, any other
/// is the letter after the backslash.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// `value` as compact JSON text.
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write(&mut out, value);
    out
}

/// Appends `value` as compact JSON text to `out`.
pub fn write(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => write_number(out, number),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            let mut items = items.iter();
            if let Some(first) = items.next() {
                write(out, first);
                for item in items {
                    out.push(b',');
                    write(out, item);
                }
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            let mut entries = map.iter();
            if let Some((key, value)) = entries.next() {
                write_str(out, key);
                out.push(b':');
                write(out, value);
                for (key, value) in entries {
                    out.push(b',');
                    write_str(out, key);
                    out.push(b':');
                    write(out, value);
                }
            }
            out.push(b'}');
        }
    }
}

/// Numbers are rare next to keys and strings: `serde_json` writes them, so integers,
/// floats (shortest round-trip form) and non-finite values come out as it writes them.
fn write_number(out: &mut Vec<u8>, number: &serde_json::Number) {
    if let Some(n) = number.as_u64() {
        // Integers print the same through `Display` as through serde_json's `itoa`.
        let mut digits = [0u8; 20];
        out.extend_from_slice(format_u64(n, &mut digits));
    } else if let Err(e) = serde_json::to_writer(&mut *out, number) {
        // Writing into a Vec never fails; were it to, the number is lost loudly in
        // debug builds rather than silently corrupting the text.
        debug_assert!(false, "writing a number into a Vec failed: {e}");
    }
}

/// The decimal digits of `n`, written from the end of `buffer`.
fn format_u64(mut n: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buffer[at..]
}

/// Whether any of the eight bytes of `word` needs escaping: a control character
/// (below 0x20), `"` or `\\`. Most strings need none, and checking eight bytes at a
/// time is what makes this faster than a byte-by-byte table.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A byte is zero where `word` equals the searched byte; `x - ONES` borrows into the
    // high bit of the first zero byte (and no other test is needed to know one exists).
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
    below_space
        || has_zero(word ^ (ONES * u64::from(b'"')))
        || has_zero(word ^ (ONES * u64::from(b'\\')))
}

/// Eight bytes of `bytes` from `at`, if there are that many.
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk = bytes.get(at..at.checked_add(8)?)?;
    <[u8; 8]>::try_from(chunk).ok().map(u64::from_le_bytes)
}

/// Appends `s` as a JSON string.
fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Eight bytes at a time up to the first eight that may need escaping. When fewer
    // than eight are left unchecked, the last eight (overlapping checked ones) cover
    // them.
    let mut clean = 0;
    let mut dirty = false;
    while let Some(word) = word_at(bytes, clean) {
        if needs_escape(word) {
            dirty = true;
            break;
        }
        clean += 8;
    }
    if !dirty
        && clean < bytes.len()
        && let Some(last) = bytes.len().checked_sub(8)
        && word_at(bytes, last).is_some_and(|word| !needs_escape(word))
    {
        clean = bytes.len();
    }
    let (plain, rest) = bytes.split_at(clean);
    out.extend_from_slice(plain);
    // The rest byte by byte.
    let mut start = 0;
    for (i, &byte) in rest.iter().enumerate() {
        let escape = ESCAPE[usize::from(byte)];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&rest[start..i]);
        start = i + 1;
        if escape == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
    }
    out.extend_from_slice(&rest[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn same_as_serde_json(value: &Value) {
        let want = serde_json::to_vec(value).map_err(|e| e.to_string());
        assert_eq!(Ok(to_vec(value)), want, "{value}");
    }

    #[test]
    fn writes_what_serde_json_writes() {
        for value in [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(-1),
            json!(1.5),
            json!(1e300),
            json!(-0.0),
            json!(0.1),
            json!(""),
            json!("plain"),
            json!("quote \" backslash \\ slash / del \u{7f} nul \u{0} \u{1f}"),
            json!("\u{8}\t\n\u{b}\u{c}\r é ü 🦀 \u{2028}"),
            json!([]),
            json!({}),
            json!([1, "a", null, [], {}]),
            json!({"b": {"c": [1, 2, {"d": "e\n"}]}, "a": "x", "\"k\"": 1}),
        ] {
            same_as_serde_json(&value);
        }
        // Every escaped byte at every place of a string spanning a few eight-byte
        // chunks, and bytes just around the ones escaped.
        for special in [
            '"', '\\', '\u{0}', '\u{1f}', '\n', ' ', '!', '#', '[', ']', '\u{7f}', 'é',
        ] {
            for at in 0..20 {
                let mut text: String = "abcdefghijklmnopqrstu".chars().take(20).collect();
                text.insert(at, special);
                same_as_serde_json(&json!(text));
            }
        }
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[\\x00-\\x7f]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::btree_map("[\\x00-\\x7f]{0,6}|\\PC{0,4}", inner, 0..8)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(value in any_value()) {
            let want = serde_json::to_vec(&value).map_err(|e| e.to_string());
            prop_assert_eq!(Ok(to_vec(&value)), want);
        }
    }
}
