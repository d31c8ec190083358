//! Go's `regexp` (RE2 syntax) run by the `regex` crate.
//!
//! The two engines share the RE2 family's syntax, but not all of it: Go's `\d`, `\w`,
//! `\s` and `\b` are ASCII-only, a `[` or `&&` inside a class is literal in Go, and Go
//! refuses some patterns the `regex` crate takes (`a**`) or words its refusals
//! differently. Patterns are therefore checked for Go's syntax errors first (with Go's
//! texts, which Cluster API prints), then rewritten so that the `regex` crate gives
//! them Go's meaning.

use regex::Regex;

/// Compiles `pattern` as Go's `regexp.Compile` would; the error is Go's text
/// (`error parsing regexp: missing closing ): ` + the pattern in back quotes).
///
/// `size_limit` bounds the compiled program (`RegexBuilder::size_limit`): Go has no
/// such bound, so each caller picks what its inputs may cost.
pub fn compile(pattern: &str, size_limit: usize) -> Result<Regex, String> {
    if let Some(e) = syntax_error(pattern) {
        return Err(format!("error parsing regexp: {e}"));
    }
    regex::RegexBuilder::new(&translate(pattern))
        .size_limit(size_limit)
        .build()
        // What passes the checks but not the `regex` crate is mostly Perl syntax RE2
        // lacks too (back-references); Go's wording for that is the closest.
        .map_err(|_| {
            format!("error parsing regexp: invalid or unsupported Perl syntax: `{pattern}`")
        })
}

/// The first of Go's syntax errors that shows up in practice, found left to right as
/// Go's parser finds them, as `code: `expr`` text.
fn syntax_error(p: &str) -> Option<String> {
    let chars: Vec<(usize, char)> = p.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|x| x.1);
    // The pattern text from char `from` to char `to` (exclusive).
    let text = |from: usize, to: usize| {
        let byte = |i: usize| chars.get(i).map_or(p.len(), |x| x.0);
        p.get(byte(from)..byte(to)).unwrap_or(p)
    };
    let mut depth = 0usize;
    // Whether what precedes may take a repetition operator, and whether it just took
    // one (Go refuses `a**`; the `regex` crate would take it).
    let mut can_repeat = false;
    let mut prev_repeat = false;
    let mut i = 0;
    while let Some(c) = at(i) {
        match c {
            '\\' => {
                let Some(e) = at(i + 1) else {
                    return Some("trailing backslash at end of expression: ``".into());
                };
                // Any escaped ASCII non-word character stands for itself; of the
                // letters and digits only those with a meaning are allowed.
                let ok = (e.is_ascii() && !e.is_ascii_alphanumeric())
                    || "afnrtvdDwWsSbBAzpPQEx0123456789".contains(e);
                if !ok {
                    return Some(format!("invalid escape sequence: `\\{e}`"));
                }
                i += 2;
                can_repeat = true;
                prev_repeat = false;
                continue;
            }
            '(' => {
                can_repeat = false;
                prev_repeat = false;
                if at(i + 1) == Some('?') {
                    let ok = match at(i + 2) {
                        Some('P') => at(i + 3) == Some('<'),
                        Some('<') => !matches!(at(i + 3), Some('=' | '!')),
                        Some(':' | 'i' | 'm' | 's' | 'U' | '-' | ')') => true,
                        _ => false,
                    };
                    if !ok {
                        return Some(format!(
                            "invalid or unsupported Perl syntax: `{}`",
                            text(i, i + 3)
                        ));
                    }
                    // Flags or a group name: `(?i)` opens nothing, `(?i:`, `(?P<n>`
                    // and `(?<n>` open a group.
                    let mut j = i + 2;
                    while at(j).is_some_and(|d| !matches!(d, ')' | ':' | '>')) {
                        j += 1;
                    }
                    if at(j) != Some(')') {
                        depth += 1;
                    }
                    i = j + 1;
                    continue;
                }
                depth += 1;
            }
            ')' => {
                if depth == 0 {
                    return Some(format!("unexpected ): `{p}`"));
                }
                depth -= 1;
                can_repeat = true;
                prev_repeat = false;
            }
            '|' => {
                can_repeat = false;
                prev_repeat = false;
            }
            '[' => {
                // Find the end of the class: `]` right after `[` or `[^` is literal,
                // and so is the `]` ending a `[:alpha:]` inside it.
                let mut j = i + 1;
                if at(j) == Some('^') {
                    j += 1;
                }
                if at(j) == Some(']') {
                    j += 1;
                }
                let mut closed = false;
                while let Some(d) = at(j) {
                    if d == '\\' {
                        j += 2;
                        continue;
                    }
                    if d == '['
                        && at(j + 1) == Some(':')
                        && let Some(end) = p.get(chars[j].0..).and_then(|r| r.find(":]"))
                    {
                        let stop = chars[j].0 + end + 2;
                        while chars.get(j).is_some_and(|x| x.0 < stop) {
                            j += 1;
                        }
                        continue;
                    }
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    j += 1;
                }
                if !closed {
                    return Some(format!("missing closing ]: `{}`", text(i, chars.len())));
                }
                i = j + 1;
                can_repeat = true;
                prev_repeat = false;
                continue;
            }
            '*' | '+' | '?' => {
                let len = if at(i + 1) == Some('?') { 2 } else { 1 };
                if prev_repeat {
                    return Some(format!(
                        "invalid nested repetition operator: `{}`",
                        text(i.saturating_sub(1), i + len)
                    ));
                }
                if !can_repeat {
                    return Some(format!(
                        "missing argument to repetition operator: `{}`",
                        text(i, i + len)
                    ));
                }
                i += len;
                prev_repeat = true;
                continue;
            }
            _ => {
                can_repeat = true;
                prev_repeat = false;
            }
        }
        i += 1;
    }
    if depth > 0 {
        return Some(format!("missing closing ): `{p}`"));
    }
    None
}

/// Rewrites a pattern that passed [`syntax_error`] so the `regex` crate reads it as
/// Go does: Perl classes and word boundaries ASCII-only, and the characters that are
/// class syntax only to the `regex` crate (nested `[`, `&&`, `~~`) made literal.
fn translate(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 16);
    let mut in_class = false;
    let mut class_start = false;
    let mut it = p.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            let Some(n) = it.next() else {
                out.push('\\');
                break;
            };
            // (outside a class, inside one): a negated class inside a class nests,
            // which the `regex` crate reads as a union.
            let rep: Option<(&str, &str)> = match n {
                'd' => Some(("[0-9]", "0-9")),
                'D' => Some(("[^0-9]", "[^0-9]")),
                'w' => Some(("[0-9A-Za-z_]", "0-9A-Za-z_")),
                'W' => Some(("[^0-9A-Za-z_]", "[^0-9A-Za-z_]")),
                's' => Some(("[\\t\\n\\f\\r ]", "\\t\\n\\f\\r ")),
                'S' => Some(("[^\\t\\n\\f\\r ]", "[^\\t\\n\\f\\r ]")),
                'b' if !in_class => Some(("(?-u:\\b)", "")),
                'B' if !in_class => Some(("(?-u:\\B)", "")),
                _ => None,
            };
            match rep {
                Some((outside, inside)) => out.push_str(if in_class { inside } else { outside }),
                None => {
                    out.push('\\');
                    out.push(n);
                }
            }
            class_start = false;
            continue;
        }
        if in_class {
            if c == ']' && !class_start {
                in_class = false;
            } else if c == '[' && it.peek() == Some(&':') {
                // POSIX class: copy through to its end.
                out.push(c);
                for d in it.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
                class_start = false;
                continue;
            } else if c == '[' {
                out.push_str("\\[");
                class_start = false;
                continue;
            } else if c == '^' && class_start && out.ends_with('[') {
                out.push(c);
                continue;
            } else if c == '&' || c == '~' {
                out.push('\\');
            }
            class_start = false;
            out.push(c);
            continue;
        }
        if c == '[' {
            in_class = true;
            class_start = true;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_like_go() {
        // (pattern, subject, whether it matches or Go's error)
        let cases: &[(&str, &str, Result<bool, &str>)] = &[
            (
                "(unclosed",
                "",
                Err("error parsing regexp: missing closing ): `(unclosed`"),
            ),
            ("(", "", Err("error parsing regexp: missing closing ): `(`")),
            (
                "(?i",
                "",
                Err("error parsing regexp: missing closing ): `(?i`"),
            ),
            ("a)", "", Err("error parsing regexp: unexpected ): `a)`")),
            (
                "(?=x)",
                "",
                Err("error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
            ),
            (
                "(?",
                "",
                Err("error parsing regexp: invalid or unsupported Perl syntax: `(?`"),
            ),
            ("[", "", Err("error parsing regexp: missing closing ]: `[`")),
            (
                "[a",
                "",
                Err("error parsing regexp: missing closing ]: `[a`"),
            ),
            (
                "x[]",
                "",
                Err("error parsing regexp: missing closing ]: `[]`"),
            ),
            (
                "[[:alpha:]",
                "",
                Err("error parsing regexp: missing closing ]: `[[:alpha:]`"),
            ),
            (
                "a**",
                "",
                Err("error parsing regexp: invalid nested repetition operator: `**`"),
            ),
            (
                "*",
                "",
                Err("error parsing regexp: missing argument to repetition operator: `*`"),
            ),
            (
                "(?i)+?",
                "",
                Err("error parsing regexp: missing argument to repetition operator: `+?`"),
            ),
            (
                "a|*",
                "",
                Err("error parsing regexp: missing argument to repetition operator: `*`"),
            ),
            (
                r"\q",
                "",
                Err(r"error parsing regexp: invalid escape sequence: `\q`"),
            ),
            (
                r"\é",
                "",
                Err(r"error parsing regexp: invalid escape sequence: `\é`"),
            ),
            (
                r"a\",
                "",
                Err("error parsing regexp: trailing backslash at end of expression: ``"),
            ),
            (
                r"\1",
                "",
                Err(r"error parsing regexp: invalid or unsupported Perl syntax: `\1`"),
            ),
            (r"^v1\.2[89]", "v1.28", Ok(true)),
            (r"^\d+$", "123", Ok(true)),
            (r"^\d+$", "١٢٣", Ok(false)),
            (r"\d+", "\u{0663}", Ok(false)),
            (r"^\w$", "é", Ok(false)),
            (r"^\s$", "\u{b}", Ok(false)),
            (r"^[\S]$", "\u{b}", Ok(true)),
            (r"^[\D]$", "x", Ok(true)),
            (r"^[\D]$", "1", Ok(false)),
            (r"^[\w-]+$", "a_b-c", Ok(true)),
            (r"\bfoo\b", "a foo b", Ok(true)),
            (r"\bfoo\b", "éfooé", Ok(true)),
            (r"\p{Greek}+", "αβ", Ok(true)),
            (r"^[]a]+$", "]a", Ok(true)),
            (r"^[^]a]$", "b", Ok(true)),
            (r"^[]]\d$", "]1", Ok(true)),
            (r"^[[:alpha:]]+$", "abc", Ok(true)),
            (r"^[[:alpha:]&&1]+$", "a&1", Ok(true)),
            (r"^[a&&b]+$", "a&b", Ok(true)),
            (r"^[a~~b]+$", "~", Ok(true)),
            (r"^[[a]+$", "[a", Ok(true)),
            (r"^[\d-]+$", "1-2", Ok(true)),
            (r"^a\_b\ c$", "a_b c", Ok(true)),
            ("(?i)ABC", "abc", Ok(true)),
            ("(?P<first>x)(?:y)(?<n>z)", "xyz", Ok(true)),
        ];
        for (pattern, subject, want) in cases {
            let got = compile(pattern, 1 << 20).map(|r| r.is_match(subject));
            assert_eq!(
                got,
                want.map_err(str::to_string),
                "{pattern:?} on {subject:?}"
            );
        }
    }
}
