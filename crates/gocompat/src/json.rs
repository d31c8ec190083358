//! Go's `encoding/json` where its output is text we must match: how `Marshal` writes a
//! string, and the wording of `Unmarshal`'s syntax errors (`invalid character 'x'
//! looking for beginning of value`, `unexpected end of JSON input`).

use std::fmt::Write;

/// Go's error for a JSON text that stops before its value is complete.
pub const UNEXPECTED_END: &str = "unexpected end of JSON input";

/// Writes `s` as a JSON string the way `json.Marshal` does.
///
/// `escape_html` is `Encoder.SetEscapeHTML`: `Marshal` escapes `<`, `>` and `&` so the
/// output can sit in HTML, Sprig's `toRawJson` turns that off. U+2028 and U+2029 are
/// escaped either way, as Go does for JavaScript's sake.
pub fn write_string(out: &mut String, s: &str, escape_html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `quoteChar`: how a syntax error shows the offending byte (`'x'`, `'\n'`).
pub fn quote_char(c: u8) -> String {
    // The byte is shown as the rune of the same value, as Go's `string(c)` makes it.
    crate::strconv::quote_rune(char::from(c), false)
}

/// Go's `SyntaxError` text for the byte `c` met `context` (`after array element`,
/// `looking for beginning of value`, ...); no byte means the text ended there.
pub fn syntax_error(c: Option<u8>, context: &str) -> String {
    match c {
        Some(c) => format!("invalid character {} {context}", quote_char(c)),
        None => UNEXPECTED_END.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_string_like_go() {
        let cases = [
            ("<x>", true, r#""\u003cx\u003e""#),
            ("<x>", false, r#""<x>""#),
            ("a&b", true, r#""a\u0026b""#),
            ("a&b", false, r#""a&b""#),
            ("\"\\\n\r\t\u{8}\u{c}", true, r#""\"\\\n\r\t\b\f""#),
            ("\u{1}\u{1f}\u{7f}", false, "\"\\u0001\\u001f\u{7f}\""),
            ("\u{2028}\u{2029}", false, r#""\u2028\u2029""#),
            ("\u{2028}", true, r#""\u2028""#),
            ("é😀/", true, "\"é😀/\""),
        ];
        for (s, escape_html, want) in cases {
            let mut out = String::new();
            write_string(&mut out, s, escape_html);
            assert_eq!(out, want, "{s:?} {escape_html}");
        }
    }

    #[test]
    fn quote_char_like_go() {
        let cases = [
            (b'x', "'x'"),
            (b'\'', "'\\''"),
            (b'"', "'\"'"),
            (b' ', "' '"),
            (b'\n', "'\\n'"),
            (b'\\', "'\\\\'"),
            (0, "'\\x00'"),
            (0xe9, "'é'"),
            (0x85, "'\\u0085'"),
        ];
        for (c, want) in cases {
            assert_eq!(quote_char(c), want, "{c:#x}");
        }
    }

    #[test]
    fn syntax_error_like_go() {
        let cases = [
            (
                Some(b'i'),
                "looking for beginning of value",
                "invalid character 'i' looking for beginning of value",
            ),
            (
                Some(b':'),
                "after top-level value",
                "invalid character ':' after top-level value",
            ),
            (
                Some(b' '),
                "in literal true (expecting 'e')",
                "invalid character ' ' in literal true (expecting 'e')",
            ),
            (None, "after array element", UNEXPECTED_END),
        ];
        for (c, context, want) in cases {
            assert_eq!(syntax_error(c, context), want, "{c:?} {context}");
        }
    }
}
