//! Go (RE2) regular expressions on top of the `regex` crate: the syntax errors Go
//! reports for patterns it refuses, and the ASCII meaning Go gives to `\d`, `\w`,
//! `\s` and `\b`.

use regex::Regex;

/// Compiles a pattern as Go's `regexp.Compile` would; the error is Go's text
/// (`error parsing regexp: missing closing ): ` + the pattern in back quotes).
pub fn compile(pattern: &str) -> Result<Regex, String> {
    check_syntax(pattern)
        .map_err(|(code, expr)| format!("error parsing regexp: {code}: `{expr}`"))?;
    let translated = translate(pattern);
    regex::RegexBuilder::new(&translated)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| {
            let first = e.to_string();
            let line = first.lines().last().unwrap_or("invalid pattern").trim();
            format!("error parsing regexp: {line}: `{pattern}`")
        })
}

/// The checks of Go's parser whose messages show up in practice.
fn check_syntax(p: &str) -> Result<(), (&'static str, String)> {
    let chars: Vec<(usize, char)> = p.char_indices().collect();
    let mut depth: Vec<usize> = Vec::new();
    let mut i = 0;
    while let Some(&(at, c)) = chars.get(i) {
        match c {
            '\\' => {
                i += 2;
                continue;
            }
            '[' => {
                // Find the end of the class: `]` right after `[` or `[^` is literal.
                let mut j = i + 1;
                if chars.get(j).map(|x| x.1) == Some('^') {
                    j += 1;
                }
                if chars.get(j).map(|x| x.1) == Some(']') {
                    j += 1;
                }
                let mut closed = false;
                while let Some(&(_, d)) = chars.get(j) {
                    if d == '\\' {
                        j += 2;
                        continue;
                    }
                    if d == '['
                        && chars.get(j + 1).map(|x| x.1) == Some(':')
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
                    return Err(("missing closing ]", p.get(at..).unwrap_or(p).to_string()));
                }
                i = j + 1;
                continue;
            }
            '(' => {
                if chars.get(i + 1).map(|x| x.1) == Some('?') {
                    let next = chars.get(i + 2).map(|x| x.1);
                    let ok = match next {
                        Some('P') => chars.get(i + 3).map(|x| x.1) == Some('<'),
                        Some('<') => !matches!(chars.get(i + 3).map(|x| x.1), Some('=' | '!')),
                        Some(':' | 'i' | 'm' | 's' | 'U' | '-' | ')') => true,
                        _ => false,
                    };
                    if !ok {
                        let end = chars.get(i + 3).map(|x| x.0).unwrap_or(p.len());
                        return Err((
                            "invalid or unsupported Perl syntax",
                            p.get(at..end).unwrap_or(p).to_string(),
                        ));
                    }
                }
                depth.push(at);
            }
            ')' if depth.pop().is_none() => {
                return Err(("unexpected )", p.to_string()));
            }
            _ => {}
        }
        i += 1;
    }
    if !depth.is_empty() {
        return Err(("missing closing )", p.to_string()));
    }
    Ok(())
}

/// Rewrites the Perl classes and word boundaries to their ASCII meaning in Go.
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
                // A literal `[` inside a class; the regex crate would read a nested class.
                out.push_str("\\[");
                class_start = false;
                continue;
            } else if c == '^' && class_start && out.ends_with('[') {
                out.push(c);
                continue;
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
    fn go_errors() {
        assert_eq!(
            compile("(unclosed").unwrap_err(),
            "error parsing regexp: missing closing ): `(unclosed`"
        );
        assert_eq!(
            compile("(?=x)").unwrap_err(),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
        );
        assert_eq!(
            compile("[").unwrap_err(),
            "error parsing regexp: missing closing ]: `[`"
        );
    }

    #[test]
    fn ascii_classes() {
        let r = compile(r"^\d+$").unwrap();
        assert!(r.is_match("123"));
        assert!(!r.is_match("١٢٣"));
        assert!(compile(r"^[\w-]+$").unwrap().is_match("a_b-c"));
        assert!(compile(r"\p{Greek}+").unwrap().is_match("αβ"));
        assert!(compile(r"^[]a]+$").unwrap().is_match("]a"));
    }
}
