//! Go's renderings of numbers and strings that appear inside Cluster API's error texts
//! (`strconv.Atoi` failures, `%q`), so our messages read the same.

/// Go's `strconv.Atoi`, with its error text.
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

/// Go's `%q` of a string: printable characters as they are, the rest escaped.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || is_unprintable_format(c) => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Format and separator characters Go does not count as printable.
fn is_unprintable_format(c: char) -> bool {
    matches!(c as u32, 0xad | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2064 | 0xfeff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("a \"b\"\n\t\\"), r#""a \"b\"\n\t\\""#);
        assert_eq!(quote("{{ .x }}"), r#""{{ .x }}""#);
        assert_eq!(quote("\u{1}é"), "\"\\x01é\"");
        assert_eq!(atoi("12"), Ok(12));
        assert_eq!(
            atoi("x"),
            Err(r#"strconv.Atoi: parsing "x": invalid syntax"#.to_string())
        );
        assert_eq!(
            atoi("99999999999999999999"),
            Err(r#"strconv.Atoi: parsing "99999999999999999999": value out of range"#.to_string())
        );
    }
}
