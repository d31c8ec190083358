//! Sprig's regular-expression functions over Go's RE2 syntax, with Go's match
//! positions for `FindAll`, `Split` and `ReplaceAll`. Patterns get Go's meaning and
//! Go's syntax errors from `topograph_gocompat::regexp`.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use topograph_gocompat::regexp;
use topograph_gocompat::strconv::quote;

use super::{arg_int, arg_str};
use crate::funcs::{Ctx, FnError, FnResult, Param, Table, def};
use crate::value::{ListKind, Value};

use Param::{Int, Str};

/// Compiled patterns are cached: templates call these in loops.
static CACHE: LazyLock<Mutex<HashMap<String, Result<Regex, String>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

const CACHE_MAX: usize = 256;

/// Go puts no bound on a compiled pattern; this one keeps a template's pattern from
/// compiling into an arbitrarily large program.
const SIZE_LIMIT: usize = 1 << 20;

/// Compiles a Go pattern, or returns Go's error text.
pub(crate) fn compile(p: &str) -> Result<Regex, String> {
    if let Ok(cache) = CACHE.lock()
        && let Some(r) = cache.get(p)
    {
        return r.clone();
    }
    let r = regexp::compile(p, SIZE_LIMIT);
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
            quote(p)
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
            compile(arg_str(a, 0)).is_ok_and(|r| r.is_match(arg_str(a, 1))),
        ))
    });
    def(t, "mustRegexMatch", &[Str, Str], None, |_, a| {
        let r = compile(arg_str(a, 0))?;
        Ok(Value::Bool(r.is_match(arg_str(a, 1))))
    });
    for (name, must) in [("regexFindAll", false), ("mustRegexFindAll", true)] {
        let f: crate::funcs::Native = if must {
            |_, a| {
                let r = compile(arg_str(a, 0))?;
                Ok(find_all_strings(&r, arg_str(a, 1), arg_int(a, 2)))
            }
        } else {
            |_, a| {
                let r = must_compile(arg_str(a, 0))?;
                Ok(find_all_strings(&r, arg_str(a, 1), arg_int(a, 2)))
            }
        };
        def(t, name, &[Str, Str, Int], None, f);
    }
    def(t, "regexFind", &[Str, Str], None, |_, a| {
        let r = must_compile(arg_str(a, 0))?;
        Ok(Value::str(r.find(arg_str(a, 1)).map_or("", |m| m.as_str())))
    });
    def(t, "mustRegexFind", &[Str, Str], None, |_, a| {
        let r = compile(arg_str(a, 0))?;
        Ok(Value::str(r.find(arg_str(a, 1)).map_or("", |m| m.as_str())))
    });
    def(t, "regexReplaceAll", &[Str, Str, Str], None, |c, a| {
        let r = must_compile(arg_str(a, 0))?;
        replace(c, &r, arg_str(a, 1), arg_str(a, 2), false)
    });
    def(t, "mustRegexReplaceAll", &[Str, Str, Str], None, |c, a| {
        let r = compile(arg_str(a, 0))?;
        replace(c, &r, arg_str(a, 1), arg_str(a, 2), false)
    });
    def(
        t,
        "regexReplaceAllLiteral",
        &[Str, Str, Str],
        None,
        |c, a| {
            let r = must_compile(arg_str(a, 0))?;
            replace(c, &r, arg_str(a, 1), arg_str(a, 2), true)
        },
    );
    def(
        t,
        "mustRegexReplaceAllLiteral",
        &[Str, Str, Str],
        None,
        |c, a| {
            let r = compile(arg_str(a, 0))?;
            replace(c, &r, arg_str(a, 1), arg_str(a, 2), true)
        },
    );
    def(t, "regexSplit", &[Str, Str, Int], None, |_, a| {
        let r = must_compile(arg_str(a, 0))?;
        Ok(split_strings(&r, arg_str(a, 1), arg_int(a, 2)))
    });
    def(t, "mustRegexSplit", &[Str, Str, Int], None, |_, a| {
        let r = compile(arg_str(a, 0))?;
        Ok(split_strings(&r, arg_str(a, 1), arg_int(a, 2)))
    });
    def(t, "regexQuoteMeta", &[Str], None, |_, a| {
        let mut out = String::new();
        for ch in arg_str(a, 0).chars() {
            if "\\.+*?()|[]{}^$".contains(ch) {
                out.push('\\');
            }
            out.push(ch);
        }
        Ok(Value::str(out))
    });
}

/// Go's `FindAllString`: nil, not empty, when nothing matches.
fn find_all_strings(r: &Regex, s: &str, n: i64) -> Value {
    let found = find_all(r, s, n);
    if found.is_empty() {
        return Value::nil_list(ListKind::Str);
    }
    Value::str_list(
        found
            .into_iter()
            .map(|(a, b)| s.get(a..b).unwrap_or("").to_string())
            .collect(),
    )
}

/// Go's `Regexp.Split`: nil when asked for no parts.
fn split_strings(r: &Regex, s: &str, n: i64) -> Value {
    if n == 0 {
        return Value::nil_list(ListKind::Str);
    }
    Value::str_list(split(r, s, n))
}
