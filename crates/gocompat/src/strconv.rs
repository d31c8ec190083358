//! Go's `strconv` as it shows in printed texts: `Quote` and its variants (the `%q`
//! of `fmt`, `field.Error` values, template error messages), `IsPrint`, and `Atoi`
//! with its error wording.

/// Go's `strconv.IsPrint` (the same set as `unicode.IsPrint`).
///
/// Rust has no general-category lookup, so what Go deems unprintable beyond controls
/// and separators is listed: format characters, private use, and the unassigned and
/// non-character code points of the Specials block. Other unassigned code points
/// count as printable here, where Go would escape them.
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(
        c as u32,
        0xad | 0x600..=0x605
            | 0x61c
            | 0x6dd
            | 0x70f
            | 0x180e
            | 0x200b..=0x200f
            | 0x202a..=0x202e
            | 0x2060..=0x206f
            | 0xe000..=0xf8ff
            | 0xfeff
            | 0xfff0..=0xfffb
            | 0xfffe
            | 0xffff
            | 0xf0000..=0x10ffff
    )
}

/// Go's `strconv.Quote`, which is also `fmt`'s `%q` of a string.
pub fn quote(s: &str) -> String {
    quote_with(s, '"', false)
}

/// The family of Go's quoters in one: `quote` is the delimiter (`"` for `Quote`, `'`
/// for `QuoteRune`), `ascii_only` escapes everything outside printable ASCII
/// (`QuoteToASCII`, `%+q`).
pub fn quote_with(s: &str, quote: char, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        if c == quote || c == '\\' {
            out.push('\\');
            out.push(c);
            continue;
        }
        let shown = if ascii_only {
            c.is_ascii() && is_print(c)
        } else {
            is_print(c)
        };
        if shown {
            out.push(c);
            continue;
        }
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            _ => {
                let u = c as u32;
                if u < 0x20 || u == 0x7f {
                    out.push_str(&format!("\\x{u:02x}"));
                } else if u < 0x10000 {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\U{u:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// Go's `strconv.QuoteRune` (`QuoteRuneToASCII` when `ascii_only`): `%q` of a rune.
pub fn quote_rune(c: char, ascii_only: bool) -> String {
    quote_with(c.encode_utf8(&mut [0; 4]), '\'', ascii_only)
}

/// Go's `strconv.Atoi` with its error text (`strconv.Atoi: parsing "x": invalid
/// syntax`), which Cluster API passes on unchanged.
pub fn atoi(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            quote(text)
        ));
    }
    text.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", quote(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_print_like_go() {
        let cases = [
            (' ', true),
            ('a', true),
            ('é', true),
            ('😀', true),
            ('\t', false),
            ('\u{7f}', false),
            ('\u{85}', false),
            ('\u{a0}', false),
            ('\u{ad}', false),
            ('\u{2028}', false),
            ('\u{200b}', false),
            ('\u{e000}', false),
            ('\u{feff}', false),
            ('\u{fff0}', false),
            ('\u{fffb}', false),
            ('\u{fffd}', true),
            ('\u{fffe}', false),
            ('\u{ffff}', false),
            ('\u{f0000}', false),
        ];
        for (c, want) in cases {
            assert_eq!(is_print(c), want, "{c:?}");
        }
    }

    #[test]
    fn quote_like_go() {
        let cases = [
            ("a \"b\"\n\t\\", r#""a \"b\"\n\t\\""#),
            ("{{ .x }}", r#""{{ .x }}""#),
            ("\u{1}é", "\"\\x01é\""),
            ("a\"b\\", "\"a\\\"b\\\\\""),
            ("\u{1}\n", "\"\\x01\\n\""),
            ("héllo", "\"héllo\""),
            ("\u{feff}", "\"\\ufeff\""),
            ("a\"b\n", "\"a\\\"b\\n\""),
            ("'", "\"'\""),
            ("\u{7}\u{8}\u{c}\r\u{b}\u{7f}", "\"\\a\\b\\f\\r\\v\\x7f\""),
            ("\u{85}\u{2028}", "\"\\u0085\\u2028\""),
            ("\u{f0000}", "\"\\U000f0000\""),
            ("", "\"\""),
        ];
        for (s, want) in cases {
            assert_eq!(quote(s), want, "{s:?}");
        }
    }

    #[test]
    fn quote_with_like_go() {
        let cases = [
            ("é\n", '"', true, "\"\\u00e9\\n\""),
            ("😀", '"', true, "\"\\U0001f600\""),
            ("a~", '"', true, "\"a~\""),
            ("it's \"x\"", '\'', false, "'it\\'s \"x\"'"),
            ("é", '\'', false, "'é'"),
            ("é", '\'', true, "'\\u00e9'"),
        ];
        for (s, q, ascii_only, want) in cases {
            assert_eq!(
                quote_with(s, q, ascii_only),
                want,
                "{s:?} {q:?} {ascii_only}"
            );
        }
    }

    #[test]
    fn quote_rune_like_go() {
        let cases = [
            ('x', false, "'x'"),
            ('\'', false, "'\\''"),
            ('"', false, "'\"'"),
            ('\n', false, "'\\n'"),
            ('\u{0}', false, "'\\x00'"),
            ('é', false, "'é'"),
            ('é', true, "'\\u00e9'"),
        ];
        for (c, ascii_only, want) in cases {
            assert_eq!(quote_rune(c, ascii_only), want, "{c:?} {ascii_only}");
        }
    }

    #[test]
    fn atoi_like_go() {
        let cases: [(&str, Result<i64, &str>); 9] = [
            ("12", Ok(12)),
            ("+7", Ok(7)),
            ("-0", Ok(0)),
            ("-9223372036854775808", Ok(i64::MIN)),
            ("x", Err(r#"strconv.Atoi: parsing "x": invalid syntax"#)),
            ("12a", Err(r#"strconv.Atoi: parsing "12a": invalid syntax"#)),
            ("", Err(r#"strconv.Atoi: parsing "": invalid syntax"#)),
            ("-", Err(r#"strconv.Atoi: parsing "-": invalid syntax"#)),
            (
                "99999999999999999999",
                Err(r#"strconv.Atoi: parsing "99999999999999999999": value out of range"#),
            ),
        ];
        for (s, want) in cases {
            assert_eq!(atoi(s), want.map_err(str::to_string), "{s:?}");
        }
    }
}
