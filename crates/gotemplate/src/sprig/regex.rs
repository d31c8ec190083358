//! Sprig's regular-expression functions over Go's RE2 syntax. Patterns are run by
//! the `regex` crate (same RE2 family) after mapping Go's ASCII-only `\d \w \s \b`
//! classes; syntax errors are worded as Go's `regexp` words them.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;

use super::{arg_int, arg_str};
use crate::funcs::{Ctx, FnError, FnResult, Param, Table, def};
use crate::value::Value;

use Param::{Int, Str};

/// Compiled patterns are cached: templates call these in loops.
static CACHE: LazyLock<Mutex<HashMap<String, Result<Regex, String>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

const CACHE_MAX: usize = 256;

fn class_for(c: char, in_class: bool) -> Option<&'static str> {
    let (open, body) = match c {
        'd' => ("", "0-9"),
        'w' => ("", "0-9A-Za-z_"),
        's' => ("", "\\t\\n\\f\\r "),
        'D' => ("^", "0-9"),
        'W' => ("^", "0-9A-Za-z_"),
        'S' => ("^", "\\t\\n\\f\\r "),
        _ => return None,
    };
    if in_class {
        if !open.is_empty() {
            // Negated classes inside brackets: Rust's ASCII class syntax does it.
            return Some(match c {
                'D' => "[:^digit:]",
                'W' => "[:^word:]",
                _ => "[:^space:]",
            });
        }
        return Some(body);
    }
    Some(match c {
        'd' => "[0-9]",
        'w' => "[0-9A-Za-z_]",
        's' => "[\\t\\n\\f\\r ]",
        'D' => "[^0-9]",
        'W' => "[^0-9A-Za-z_]",
        _ => "[^\\t\\n\\f\\r ]",
    })
}

/// Go's syntax errors for the common mistakes, found left to right as Go finds them.
fn go_syntax_error(p: &str) -> Option<String> {
    let chars: Vec<char> = p.chars().collect();
    let mut depth = 0i32;
    let mut i = 0;
    let mut prev_repeat = false;
    let mut can_repeat = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(&e) = chars.get(i + 1) else {
                    return Some("trailing backslash at end of expression: ``".into());
                };
                let ok = e.is_ascii_punctuation() || "afnrtvdDwWsSbBAzpPQEx0123456789".contains(e);
                if !ok || e == '_' {
                    return Some(format!("invalid escape sequence: `\\{e}`"));
                }
                i += 2;
                can_repeat = true;
                prev_repeat = false;
                continue;
            }
            '(' => {
                depth += 1;
                can_repeat = false;
                prev_repeat = false;
                if chars.get(i + 1) == Some(&'?') {
                    // Group flags or a name: `(?i)`, `(?:`, `(?P<n>`, `(?<n>`.
                    let mut j = i + 2;
                    while j < chars.len() && !matches!(chars[j], ')' | ':' | '>') {
                        j += 1;
                    }
                    if chars.get(j) == Some(&')') {
                        depth -= 1;
                    }
                    i = j + 1;
                    continue;
                }
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
                let start = i;
                i += 1;
                if chars.get(i) == Some(&'^') {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                }
                while i < chars.len() && chars[i] != ']' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    let rest: String = chars[start..].iter().collect();
                    return Some(format!("missing closing ]: `{rest}`"));
                }
                can_repeat = true;
                prev_repeat = false;
            }
            '*' | '+' | '?' => {
                let mut op: String = c.to_string();
                if chars.get(i + 1) == Some(&'?') {
                    op.push('?');
                }
                if prev_repeat {
                    let start = i.saturating_sub(1);
                    let text: String = chars[start..i + op.chars().count()].iter().collect();
                    return Some(format!("invalid nested repetition operator: `{text}`"));
                }
                if !can_repeat {
                    return Some(format!("missing argument to repetition operator: `{op}`"));
                }
                i += op.chars().count();
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

/// Rewrites Go-only syntax for the `regex` crate.
fn translate(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let mut it = p.chars().peekable();
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                let Some(e) = it.next() else {
                    out.push('\\');
                    break;
                };
                if let Some(cls) = class_for(e, in_class) {
                    out.push_str(cls);
                } else if e == 'b' && !in_class {
                    out.push_str("(?-u:\\b)");
                } else if e == 'B' && !in_class {
                    out.push_str("(?-u:\\B)");
                } else {
                    out.push('\\');
                    out.push(e);
                }
                class_start = false;
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                out.push('[');
                if it.peek() == Some(&'^') {
                    it.next();
                    out.push('^');
                }
                if it.peek() == Some(&']') {
                    it.next();
                    out.push_str("\\]");
                }
                continue;
            }
            '[' if in_class => {
                if it.peek() == Some(&':') {
                    out.push('[');
                } else {
                    out.push_str("\\[");
                }
            }
            ']' if in_class && !class_start => {
                in_class = false;
                out.push(']');
            }
            '&' | '~' | '-' if in_class => {
                if c == '-' {
                    out.push('-');
                } else {
                    out.push('\\');
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
        class_start = false;
    }
    out
}

/// Compiles a Go pattern, or returns Go's error text.
pub(crate) fn compile(p: &str) -> Result<Regex, String> {
    if let Ok(cache) = CACHE.lock()
        && let Some(r) = cache.get(p)
    {
        return r.clone();
    }
    let r = match go_syntax_error(p) {
        Some(e) => Err(format!("error parsing regexp: {e}")),
        None => regex::RegexBuilder::new(&translate(p))
            .size_limit(1 << 20)
            .build()
            .map_err(|_| {
                format!("error parsing regexp: invalid or unsupported Perl syntax: `{p}`")
            }),
    };
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHE_MAX {
            cache.clear();
        }
        cache.insert(p.to_string(), r.clone());
    }
    r
}

/// `regexp.MustCompile`'s panic text.
fn must_compile(p: &str) -> Result<Regex, FnError> {
    compile(p).map_err(|e| {
        let q = if p.contains('`') || p.chars().any(|c| c != '\t' && c.is_control()) {
            crate::fmt::quote(p)
        } else {
            format!("`{p}`")
        };
        FnError::Go(format!("regexp: Compile({q}): {e}"))
    })
}

/// Go's `FindAllString` match positions: empty matches right after a match are skipped.
fn find_all(r: &Regex, s: &str, n: i64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut prev_end: Option<usize> = None;
    for m in r.find_iter(s) {
        if n >= 0 && out.len() as i64 >= n {
            break;
        }
        if m.start() == m.end() && prev_end == Some(m.start()) {
            continue;
        }
        prev_end = Some(m.end());
        out.push((m.start(), m.end()));
    }
    out
}

fn split(r: &Regex, s: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if !r.as_str().is_empty() && s.is_empty() {
        return vec![String::new()];
    }
    let matches = find_all(r, s, n);
    let mut out = Vec::new();
    let (mut beg, mut end) = (0, 0);
    for (a, b) in matches {
        if n > 0 && out.len() as i64 == n - 1 {
            break;
        }
        end = a;
        if b != 0 {
            out.push(s.get(beg..end).unwrap_or("").to_string());
        }
        beg = b;
    }
    if end != s.len() {
        out.push(s.get(beg..).unwrap_or("").to_string());
    }
    out
}

fn replace(c: &Ctx, r: &Regex, s: &str, repl: &str, literal: bool) -> FnResult {
    let mut out = String::new();
    let mut last = 0;
    let matches: Vec<(usize, usize)> = find_all(r, s, -1);
    for (a, b) in matches {
        out.push_str(s.get(last..a).unwrap_or(""));
        if literal {
            out.push_str(repl);
        } else if let Some(caps) = r
            .captures_at(s, a)
            .filter(|m| m.get(0).is_some_and(|g| g.start() == a && g.end() == b))
        {
            caps.expand(repl, &mut out);
        }
        c.check_size(out.len() as u128)?;
        last = b;
    }
    out.push_str(s.get(last..).unwrap_or(""));
    c.check_size(out.len() as u128)?;
    Ok(Value::str(out))
}

pub(crate) fn register(t: &mut Table) {
    def(t, "regexMatch", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(
            compile(arg_str(&a, 0)).is_ok_and(|r| r.is_match(arg_str(&a, 1))),
        ))
    });
    def(t, "mustRegexMatch", &[Str, Str], None, |_, a| {
        let r = compile(arg_str(&a, 0))?;
        Ok(Value::Bool(r.is_match(arg_str(&a, 1))))
    });
    for (name, must) in [("regexFindAll", false), ("mustRegexFindAll", true)] {
        let f: crate::funcs::Native = if must {
            |_, a| {
                let r = compile(arg_str(&a, 0))?;
                Ok(find_all_strings(&r, arg_str(&a, 1), arg_int(&a, 2)))
            }
        } else {
            |_, a| {
                let r = must_compile(arg_str(&a, 0))?;
                Ok(find_all_strings(&r, arg_str(&a, 1), arg_int(&a, 2)))
            }
        };
        def(t, name, &[Str, Str, Int], None, f);
    }
    def(t, "regexFind", &[Str, Str], None, |_, a| {
        let r = must_compile(arg_str(&a, 0))?;
        Ok(Value::str(
            r.find(arg_str(&a, 1)).map_or("", |m| m.as_str()),
        ))
    });
    def(t, "mustRegexFind", &[Str, Str], None, |_, a| {
        let r = compile(arg_str(&a, 0))?;
        Ok(Value::str(
            r.find(arg_str(&a, 1)).map_or("", |m| m.as_str()),
        ))
    });
    def(t, "regexReplaceAll", &[Str, Str, Str], None, |c, a| {
        let r = must_compile(arg_str(&a, 0))?;
        replace(c, &r, arg_str(&a, 1), arg_str(&a, 2), false)
    });
    def(t, "mustRegexReplaceAll", &[Str, Str, Str], None, |c, a| {
        let r = compile(arg_str(&a, 0))?;
        replace(c, &r, arg_str(&a, 1), arg_str(&a, 2), false)
    });
    def(
        t,
        "regexReplaceAllLiteral",
        &[Str, Str, Str],
        None,
        |c, a| {
            let r = must_compile(arg_str(&a, 0))?;
            replace(c, &r, arg_str(&a, 1), arg_str(&a, 2), true)
        },
    );
    def(
        t,
        "mustRegexReplaceAllLiteral",
        &[Str, Str, Str],
        None,
        |c, a| {
            let r = compile(arg_str(&a, 0))?;
            replace(c, &r, arg_str(&a, 1), arg_str(&a, 2), true)
        },
    );
    def(t, "regexSplit", &[Str, Str, Int], None, |_, a| {
        let r = must_compile(arg_str(&a, 0))?;
        Ok(Value::str_list(split(&r, arg_str(&a, 1), arg_int(&a, 2))))
    });
    def(t, "mustRegexSplit", &[Str, Str, Int], None, |_, a| {
        let r = compile(arg_str(&a, 0))?;
        Ok(Value::str_list(split(&r, arg_str(&a, 1), arg_int(&a, 2))))
    });
    def(t, "regexQuoteMeta", &[Str], None, |_, a| {
        let mut out = String::new();
        for ch in arg_str(&a, 0).chars() {
            if "\\.+*?()|[]{}^$".contains(ch) {
                out.push('\\');
            }
            out.push(ch);
        }
        Ok(Value::str(out))
    });
}

fn find_all_strings(r: &Regex, s: &str, n: i64) -> Value {
    Value::str_list(
        find_all(r, s, n)
            .into_iter()
            .map(|(a, b)| s.get(a..b).unwrap_or("").to_string())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_errors() {
        assert_eq!(
            compile("(").err().as_deref(),
            Some("error parsing regexp: missing closing ): `(`")
        );
        assert_eq!(
            compile("a**").err().as_deref(),
            Some("error parsing regexp: invalid nested repetition operator: `**`")
        );
        assert!(compile(r"^v1\.2[89]").is_ok());
    }

    #[test]
    fn ascii_classes() {
        let r = compile(r"\d+").ok();
        assert!(r.is_some_and(|r| !r.is_match("\u{0663}")));
    }
}
