//! Sprig's string functions: case changes (with xstrings' and goutils' word rules),
//! trimming, padding, wrapping, quoting, splitting and joining.

use std::collections::BTreeMap;
use std::rc::Rc;

use topograph_gocompat::strconv::quote;

use super::{arg_int, arg_str, go_lower, go_upper, is_go_space, slice_str, strval};
use crate::funcs::{Ctx, FnError, FnResult, Param, Table, def};
use crate::value::{ListKind, MapKind, Value};

use Param::{Any, Int, Str};

fn s(v: impl Into<crate::value::Str>) -> FnResult {
    Ok(Value::Str(v.into()))
}

fn sized(c: &Ctx, out: String) -> FnResult {
    c.check_size(out.len() as u128)?;
    s(out)
}

pub(crate) fn register(t: &mut Table) {
    def(t, "hello", &[], None, |_, _| s("Hello!"));
    def(t, "abbrev", &[Int, Str], None, |_, a| {
        let (width, st) = (arg_int(a, 0), arg_str(a, 1));
        if width < 4 {
            return s(st);
        }
        s(abbreviate(st, 0, width))
    });
    def(t, "abbrevboth", &[Int, Int, Str], None, |_, a| {
        let (left, right) = (arg_int(a, 0), arg_int(a, 1));
        let st = arg_str(a, 2);
        if right < 4 || (left > 0 && right < 7) {
            return s(st);
        }
        s(abbreviate(st, left, right))
    });
    def(t, "trunc", &[Int, Str], None, |_, a| {
        let c = arg_int(a, 0);
        let st = arg_str(a, 1);
        let len = st.len() as i64;
        if c < 0 && len + c > 0 {
            return s(slice_str(st, Some(len + c), None)?);
        }
        if c >= 0 && len > c {
            return s(slice_str(st, None, Some(c))?);
        }
        s(st)
    });
    def(t, "trim", &[Str], None, |_, a| {
        s(arg_str(a, 0).trim_matches(is_go_space))
    });
    def(t, "upper", &[Str], None, |_, a| {
        s(arg_str(a, 0).chars().map(go_upper).collect::<String>())
    });
    def(t, "lower", &[Str], None, |_, a| {
        s(arg_str(a, 0).chars().map(go_lower).collect::<String>())
    });
    def(t, "title", &[Str], None, |_, a| s(title(arg_str(a, 0))));
    def(t, "untitle", &[Str], None, |_, a| s(untitle(arg_str(a, 0))));
    def(t, "substr", &[Int, Int, Str], None, |_, a| {
        let (start, end) = (arg_int(a, 0), arg_int(a, 1));
        let st = arg_str(a, 2);
        if start < 0 {
            return s(slice_str(st, None, Some(end))?);
        }
        if end < 0 || end > st.len() as i64 {
            return s(slice_str(st, Some(start), None)?);
        }
        s(slice_str(st, Some(start), Some(end))?)
    });
    def(t, "repeat", &[Int, Str], None, |c, a| {
        let n = arg_int(a, 0);
        let st = arg_str(a, 1);
        if n < 0 {
            return Err("strings: negative Repeat count".into());
        }
        c.check_size(n as u128 * st.len() as u128)?;
        s(st.repeat(n as usize))
    });
    for name in ["trimall", "trimAll"] {
        def(t, name, &[Str, Str], None, |_, a| {
            let cut = arg_str(a, 0);
            s(arg_str(a, 1).trim_matches(|c| cut.contains(c)))
        });
    }
    def(t, "trimSuffix", &[Str, Str], None, |_, a| {
        let (suf, st) = (arg_str(a, 0), arg_str(a, 1));
        s(st.strip_suffix(suf).unwrap_or(st))
    });
    def(t, "trimPrefix", &[Str, Str], None, |_, a| {
        let (pre, st) = (arg_str(a, 0), arg_str(a, 1));
        s(st.strip_prefix(pre).unwrap_or(st))
    });
    def(t, "nospace", &[Str], None, |_, a| {
        s(delete_white_space(arg_str(a, 0)))
    });
    def(t, "initials", &[Str], None, |_, a| {
        s(initials(arg_str(a, 0)))
    });
    def(t, "swapcase", &[Str], None, |_, a| {
        s(swap_case(arg_str(a, 0)))
    });
    def(t, "shuffle", &[Str], None, |_, a| s(shuffle(arg_str(a, 0))));
    def(t, "snakecase", &[Str], None, |_, a| {
        s(to_lower_words(arg_str(a, 0), '_'))
    });
    def(t, "kebabcase", &[Str], None, |_, a| {
        s(to_lower_words(arg_str(a, 0), '-'))
    });
    def(t, "camelcase", &[Str], None, |_, a| {
        s(pascal_case(arg_str(a, 0)))
    });
    def(t, "wrap", &[Int, Str], None, |_, a| {
        s(wrap_custom(arg_str(a, 1), arg_int(a, 0), "", false))
    });
    def(t, "wrapWith", &[Int, Str, Str], None, |c, a| {
        let out = wrap_custom(arg_str(a, 2), arg_int(a, 0), arg_str(a, 1), true);
        sized(c, out)
    });
    def(t, "contains", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(arg_str(a, 1).contains(arg_str(a, 0))))
    });
    def(t, "hasPrefix", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(arg_str(a, 1).starts_with(arg_str(a, 0))))
    });
    def(t, "hasSuffix", &[Str, Str], None, |_, a| {
        Ok(Value::Bool(arg_str(a, 1).ends_with(arg_str(a, 0))))
    });
    def(t, "quote", &[], Some(Any), |_, a| {
        // Built in place: `quote` of one string is most calls, and needs no copies of
        // its argument or list of parts.
        let mut out = String::new();
        for (i, v) in a.iter().filter(|v| !v.is_nil()).enumerate() {
            let quoted = match v {
                Value::Str(text) => quote(text),
                other => quote(&strval(other)),
            };
            if i == 0 {
                out = quoted;
            } else {
                out.push(' ');
                out.push_str(&quoted);
            }
        }
        s(out)
    });
    def(t, "squote", &[], Some(Any), |_, a| {
        let parts: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| format!("'{}'", crate::fmt::sprint_value(v)))
            .collect();
        s(parts.join(" "))
    });
    def(t, "cat", &[], Some(Any), |_, a| {
        let parts: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(crate::fmt::sprint_value)
            .collect();
        s(parts.join(" "))
    });
    def(t, "indent", &[Int, Str], None, |c, a| {
        let out = indent(c, arg_int(a, 0), arg_str(a, 1))?;
        sized(c, out)
    });
    def(t, "nindent", &[Int, Str], None, |c, a| {
        let out = format!("\n{}", indent(c, arg_int(a, 0), arg_str(a, 1))?);
        sized(c, out)
    });
    def(t, "replace", &[Str, Str, Str], None, |c, a| {
        let (old, new, src) = (arg_str(a, 0), arg_str(a, 1), arg_str(a, 2));
        let out = go_replace(c, src, old, new)?;
        sized(c, out)
    });
    def(t, "plural", &[Str, Str, Int], None, |_, a| {
        s(if arg_int(a, 2) == 1 {
            arg_str(a, 0)
        } else {
            arg_str(a, 1)
        })
    });
    def(t, "toString", &[Any], None, |_, a| {
        s(a.first().map(strval).unwrap_or_default())
    });
    def(t, "split", &[Str, Str], None, |_, a| {
        Ok(parts_map(go_split(arg_str(a, 1), arg_str(a, 0), -1)))
    });
    def(t, "splitn", &[Str, Int, Str], None, |_, a| {
        Ok(parts_map(go_split(
            arg_str(a, 2),
            arg_str(a, 0),
            arg_int(a, 1),
        )))
    });
    def(t, "splitList", &[Str, Str], None, |_, a| {
        Ok(Value::str_list(go_split(arg_str(a, 1), arg_str(a, 0), -1)))
    });
    def(t, "toStrings", &[Any], None, |_, a| {
        let v = a.first().unwrap_or(&Value::Nil);
        // Sprig hands a `[]string` back as it is, nil included.
        if matches!(v, Value::List(_, ListKind::Str)) {
            return Ok(v.clone());
        }
        Ok(Value::str_list(strslice(v)))
    });
    def(t, "join", &[Str, Any], None, |c, a| {
        let parts = strslice(a.get(1).unwrap_or(&Value::Nil));
        let out = parts.join(arg_str(a, 0));
        sized(c, out)
    });
    def(t, "sortAlpha", &[Any], None, |_, a| {
        let v = a.first().unwrap_or(&Value::Nil);
        match v {
            // Sprig sorts a `[]string` where it is: a nil one stays nil.
            Value::List(_, ListKind::Str) if v.is_nil_list() => Ok(v.clone()),
            Value::List(..) => {
                let mut parts = strslice(v);
                parts.sort();
                Ok(Value::str_list(parts))
            }
            other => Ok(Value::str_list(vec![strval(other)])),
        }
    });
}

/// Sprig's `strslice`: lists become their elements' `strval`s (nils dropped).
pub(crate) fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(items, _) => items.iter().filter(|x| !x.is_nil()).map(strval).collect(),
        Value::Nil | Value::Invalid => Vec::new(),
        other => vec![strval(other)],
    }
}

fn parts_map(parts: Vec<String>) -> Value {
    let m: BTreeMap<String, Value> = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| (format!("_{i}"), Value::str(p)))
        .collect();
    Value::Map(Rc::new(std::cell::RefCell::new(m)), MapKind::Str)
}

/// `strings.SplitN` (n < 0: all; n == 0: none).
pub(crate) fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<String> = s.chars().map(String::from).collect();
        if n > 0 && (n as usize) < chars.len() {
            let k = n as usize - 1;
            let head: String = s.chars().take(k).collect();
            let mut out: Vec<String> = head.chars().map(String::from).collect();
            out.push(s.chars().skip(k).collect());
            return out;
        }
        return chars;
    }
    if n < 0 {
        return s.split(sep).map(str::to_string).collect();
    }
    s.splitn(n as usize, sep).map(str::to_string).collect()
}

/// `strings.Replace(src, old, new, -1)`, including Go's rule for an empty `old`.
fn go_replace(c: &Ctx, src: &str, old: &str, new: &str) -> Result<String, FnError> {
    if old.is_empty() {
        let n = src.chars().count() as u128 + 1;
        c.check_size(src.len() as u128 + n * new.len() as u128)?;
        let mut out = String::new();
        out.push_str(new);
        for ch in src.chars() {
            out.push(ch);
            out.push_str(new);
        }
        return Ok(out);
    }
    // A one-character pattern (the usual `replace "+" "_"`) is searched as a `char`,
    // which skips setting up a substring searcher; the matches are the same.
    let mut chars = old.chars();
    let single = match (chars.next(), chars.next()) {
        (Some(ch), None) => Some(ch),
        _ => None,
    };
    // Counting the matches only matters when the result might go over the bound (the
    // error names the size); with as many matches as `src` has room for, it fits.
    let most = src.len() as u128 + (src.len() / old.len()) as u128 * new.len() as u128;
    if !c.fits(most) {
        let n = match single {
            Some(ch) => src.matches(ch).count(),
            None => src.matches(old).count(),
        };
        c.check_size(src.len() as u128 + n as u128 * new.len() as u128)?;
    }
    Ok(match single {
        Some(ch) => src.replace(ch, new),
        None => src.replace(old, new),
    })
}

fn indent(c: &Ctx, spaces: i64, v: &str) -> Result<String, FnError> {
    if spaces < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let lines = v.matches('\n').count() as u128 + 1;
    c.check_size(lines * (spaces as u128 + 1) + v.len() as u128)?;
    let pad = " ".repeat(spaces as usize);
    Ok(format!("{pad}{}", v.replace('\n', &format!("\n{pad}"))))
}

/// goutils `AbbreviateFull`; byte-based, as Go's is.
fn abbreviate(s: &str, offset: i64, max_width: i64) -> String {
    if s.is_empty() || max_width < 4 {
        return String::new();
    }
    let len = s.len() as i64;
    if len <= max_width {
        return s.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < max_width - 3 {
        offset = len - (max_width - 3);
    }
    let cut = |lo: i64, hi: i64| slice_str(s, Some(lo), Some(hi)).unwrap_or_default();
    if offset <= 4 {
        return format!("{}...", cut(0, max_width - 3));
    }
    if max_width < 7 {
        return String::new();
    }
    if offset + max_width - 3 < len {
        let rest = cut(offset, len);
        return format!("...{}", abbreviate(&rest, 0, max_width - 3));
    }
    format!("...{}", cut(len - (max_width - 3), len))
}

fn title(s: &str) -> String {
    fn separator(c: char) -> bool {
        if (c as u32) <= 0x7f {
            return !(c.is_ascii_alphanumeric() || c == '_');
        }
        if c.is_alphabetic() || c.is_numeric() {
            return false;
        }
        is_go_space(c)
    }
    let mut prev = ' ';
    s.chars()
        .map(|c| {
            let out = if separator(prev) { go_upper(c) } else { c };
            prev = c;
            out
        })
        .collect()
}

fn untitle(s: &str) -> String {
    let mut next = true;
    s.chars()
        .map(|c| {
            if is_go_space(c) {
                next = true;
                c
            } else if next {
                next = false;
                go_lower(c)
            } else {
                c
            }
        })
        .collect()
}

/// goutils `DeleteWhiteSpace`: works on bytes, so non-ASCII text comes out as
/// Latin-1 characters whenever some whitespace was removed.
fn delete_white_space(s: &str) -> String {
    let is_space = |b: u8| matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xa0);
    if !s.bytes().any(is_space) {
        return s.to_string();
    }
    s.bytes()
        .filter(|b| !is_space(*b))
        .map(char::from)
        .collect()
}

/// goutils `Initials`, byte-based like Go's.
fn initials(s: &str) -> String {
    let is_space = |b: u8| matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xa0);
    let mut out = String::new();
    let mut gap = true;
    for b in s.bytes() {
        if is_space(b) {
            gap = true;
        } else if gap {
            out.push(char::from(b));
            gap = false;
        }
    }
    out
}

fn swap_case(s: &str) -> String {
    let mut ws = true;
    s.chars()
        .map(|c| {
            if c.is_uppercase() {
                ws = false;
                go_lower(c)
            } else if c.is_lowercase() {
                if ws {
                    ws = false;
                }
                go_upper(c)
            } else {
                ws = is_go_space(c);
                c
            }
        })
        .collect()
}

fn shuffle(s: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut chars: Vec<char> = s.chars().collect();
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(chars.len());
    let mut seed = h.finish() | 1;
    for i in (1..chars.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        chars.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    chars.into_iter().collect()
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || is_go_space(c)
}

/// Go's `unicode.IsPunct` (ASCII exactly; other scripts approximately).
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        return matches!(
            c,
            '!' | '"'
                | '#'
                | '%'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | ','
                | '-'
                | '.'
                | '/'
                | ':'
                | ';'
                | '?'
                | '@'
                | '['
                | '\\'
                | ']'
                | '_'
                | '{'
                | '}'
        );
    }
    c.is_ascii_punctuation()
}

fn is_alphabet(c: char) -> bool {
    if !c.is_alphabetic() {
        return false;
    }
    !('\u{4E00}'..='\u{9FCC}').contains(&c)
        && !('\u{3400}'..='\u{4DB5}').contains(&c)
        && !('\u{20000}'..='\u{2A6D6}').contains(&c)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// xstrings `nextWord` over a char slice: the kind and length of the next word.
fn next_word(s: &[char]) -> (Word, usize) {
    let Some(&r) = s.first() else {
        return (Word::Invalid, 0);
    };
    let mut n = 1;
    let kind;
    if is_connector(r) {
        kind = Word::Connector;
        while s.get(n).is_some_and(|c| is_connector(*c)) {
            n += 1;
        }
    } else if is_punct(r) {
        kind = Word::Punct;
        while s.get(n).is_some_and(|c| is_punct(*c)) {
            n += 1;
        }
    } else if r.is_uppercase() {
        kind = Word::Upper;
        match s.get(1) {
            Some(c) if c.is_uppercase() => {
                n = 2;
                while s.get(n).is_some_and(|c| c.is_uppercase()) {
                    n += 1;
                }
                if s.get(n).is_some_and(|c| is_alphabet(*c)) {
                    n -= 1;
                }
            }
            Some(c) if is_alphabet(*c) => {
                n = 2;
                while s
                    .get(n)
                    .is_some_and(|c| is_alphabet(*c) && !c.is_uppercase())
                {
                    n += 1;
                }
            }
            _ => {}
        }
    } else if is_alphabet(r) {
        kind = Word::Alphabet;
        while s
            .get(n)
            .is_some_and(|c| is_alphabet(*c) && !c.is_uppercase())
        {
            n += 1;
        }
    } else if r.is_numeric() {
        kind = Word::Number;
        while s.get(n).is_some_and(|c| c.is_numeric()) {
            n += 1;
        }
    } else {
        kind = Word::Other;
        while s.get(n).is_some_and(|c| {
            !(is_connector(*c) || is_alphabet(*c) || c.is_numeric() || is_punct(*c))
        }) {
            n += 1;
        }
    }
    (kind, n)
}

fn push_lower(out: &mut String, kind: Word, word: &[char], connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.extend(word);
        return;
    }
    for &c in word {
        if is_connector(c) {
            out.push(connector);
        } else if c.is_uppercase() {
            out.push(go_lower(c));
        } else {
            out.push(c);
        }
    }
}

/// xstrings `camelCaseToLowerCase` (snake and kebab case).
fn to_lower_words(s: &str, connector: char) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut pos = 0;
    let take = |pos: &mut usize| -> (Word, &[char]) {
        let (k, n) = next_word(&chars[*pos..]);
        let w = &chars[*pos..*pos + n];
        *pos += n;
        (k, w)
    };
    let (mut wt, mut word) = take(&mut pos);
    while pos < chars.len() {
        if wt != Word::Connector {
            push_lower(&mut out, wt, word, connector);
        }
        let prev = wt;
        let last = word;
        (wt, word) = take(&mut pos);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    push_lower(&mut out, wt, word, connector);
                    (wt, word) = take(&mut pos);
                }
                if wt != Word::Invalid && wt != Word::Punct && wt != Word::Connector {
                    out.push(connector);
                }
            }
            Word::Connector => push_lower(&mut out, prev, last, connector),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if pos >= chars.len() {
                    continue;
                }
                let num = word;
                (wt, word) = take(&mut pos);
                if wt != Word::Alphabet {
                    push_lower(&mut out, Word::Number, num, connector);
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                push_lower(&mut out, Word::Number, num, connector);
                while wt == Word::Alphabet || wt == Word::Number {
                    push_lower(&mut out, wt, word, connector);
                    (wt, word) = take(&mut pos);
                }
                if wt != Word::Invalid && wt != Word::Connector && wt != Word::Punct {
                    out.push(connector);
                }
            }
        }
    }
    push_lower(&mut out, wt, word, connector);
    out
}

/// xstrings `ToPascalCase`.
fn pascal_case(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut i = 0;
    let mut r0 = ' ';
    let mut first_upper = false;
    let mut found = false;
    while i < chars.len() {
        r0 = chars[i];
        i += 1;
        if !is_connector(r0) {
            first_upper = r0.is_uppercase();
            r0 = go_upper(r0);
            found = true;
            break;
        }
        out.push(r0);
    }
    if i >= chars.len() {
        if found {
            out.push(r0);
        }
        return out;
    }
    while i < chars.len() {
        let r1 = r0;
        r0 = chars[i];
        i += 1;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = r0.is_uppercase();
            r0 = go_upper(r0);
        } else {
            if first_upper {
                if r0.is_uppercase() {
                    r0 = go_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

/// goutils `WrapCustom`, byte-based as Go's.
fn wrap_custom(s: &str, wrap_length: i64, newline: &str, wrap_long: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let nl = if newline.is_empty() { "\n" } else { newline };
    let wl = wrap_length.max(1) as usize;
    let b = s.as_bytes();
    let len = b.len();
    let mut offset = 0usize;
    let mut out: Vec<u8> = Vec::new();
    while len - offset > wl {
        if b[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = (wl + offset + 1).min(len);
        let space = b[offset..end].iter().rposition(|&c| c == b' ');
        if let Some(sp) = space {
            out.extend_from_slice(&b[offset..offset + sp]);
            out.extend_from_slice(nl.as_bytes());
            offset += sp + 1;
        } else if wrap_long {
            let end = wl + offset;
            out.extend_from_slice(&b[offset..end]);
            out.extend_from_slice(nl.as_bytes());
            offset += wl;
        } else {
            let end = wl + offset;
            match b[end..].iter().position(|&c| c == b' ') {
                None => {
                    out.extend_from_slice(&b[offset..]);
                    offset = len;
                }
                Some(idx) => {
                    let sp = idx + end;
                    out.extend_from_slice(&b[offset..sp]);
                    out.extend_from_slice(nl.as_bytes());
                    offset = sp + 1;
                }
            }
        }
    }
    out.extend_from_slice(&b[offset.min(len)..]);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_conversions_follow_xstrings() {
        assert_eq!(to_lower_words("HTTPServer", '_'), "http_server");
        assert_eq!(to_lower_words("FirstName", '_'), "first_name");
        assert_eq!(to_lower_words("a b-c", '-'), "a-b-c");
        assert_eq!(pascal_case("foo_bar"), "FooBar");
        assert_eq!(title("hello world-x"), "Hello World-X");
        assert_eq!(swap_case("Hello World"), "hELLO wORLD");
    }

    #[test]
    fn wrapping_and_abbreviation() {
        assert_eq!(
            wrap_custom("one two three", 5, "", false),
            "one\ntwo\nthree"
        );
        assert_eq!(abbreviate("Now is the time", 0, 10), "Now is ...");
    }

    #[test]
    fn replace_is_bounded_by_its_counted_size() {
        let c = Ctx {
            limits: crate::Limits {
                max_output_bytes: 20,
                max_steps: 10,
                ..Default::default()
            },
        };
        let limit = |r: Result<String, FnError>| match r {
            Err(FnError::Limit(m)) => m,
            other => format!("{other:?}"),
        };
        // Could grow past 20 but does not: only the real matches count.
        assert_eq!(
            go_replace(&c, "axxxxxxxxx", "a", "bbb").ok().as_deref(),
            Some("bbbxxxxxxxxx")
        );
        assert_eq!(
            go_replace(&c, "abxxxxxxxx", "ab", "cccc").ok().as_deref(),
            Some("ccccxxxxxxxx")
        );
        assert_eq!(
            limit(go_replace(&c, "aaaaxxxxxx", "a", "bbb")),
            "result of 22 bytes or elements exceeds the evaluation limit"
        );
        assert_eq!(
            limit(go_replace(&c, "ababxxxxxx", "ab", "ccccccc")),
            "result of 24 bytes or elements exceeds the evaluation limit"
        );
    }
}
