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
    topograph_api::field::go_quote(text)
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
