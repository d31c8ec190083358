//! Field paths: the check Kubernetes makes of a rule's `fieldPath`
//! (`cel.ValidFieldPath`: a JSONPath of `.name` and `['name']` steps that must lead to
//! a declared field), and the paths validation names the fields of an object by.

use crate::schema::Schema;

/// `path.name` as Go's `field.Path.Child` builds it: the empty (nil) path has no dot.
pub(crate) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        member(path, name)
    }
}

/// `path.name` as kube-openapi joins a key to its object's path, a dot always (the
/// root's path is empty, so its additional properties read `.name`). Written without
/// `format!`: validation builds one for every field an object has.
pub(crate) fn member(path: &str, name: &str) -> String {
    let mut out = String::with_capacity(path.len() + 1 + name.len());
    out.push_str(path);
    out.push('.');
    out.push_str(name);
    out
}

/// Splits like the scanner Kubernetes uses: `.`, `[` and `]` alone; a token starting
/// with `'` runs to the next unescaped `'`; anything else up to the next delimiter.
fn tokens(path: &str) -> Vec<&str> {
    let b = path.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < b.len() {
        let rest = &b[start..];
        let mut end = rest.len();
        if rest.first() == Some(&b'\'') {
            for i in 1..rest.len() {
                if rest[i] == b'\'' && rest[i - 1] != b'\\' {
                    end = i + 1;
                    break;
                }
            }
        } else if let Some(i) = rest.iter().position(|c| matches!(c, b'.' | b'[' | b']')) {
            end = if i == 0 { 1 } else { i };
        }
        // Delimiters and quotes are ASCII, so every cut is at a character boundary.
        if let Some(t) = path.get(start..start + end) {
            out.push(t);
        }
        start += end;
    }
    out
}

/// Undoes the escapes of a single-quoted CEL string.
fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars
            .next()
            .ok_or_else(|| "unable to unescape string".to_string())?;
        match e {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '`' | '?' => out.push(e),
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = chars.by_ref().take(n).collect();
                let v = u32::from_str_radix(&digits, 16)
                    .ok()
                    .filter(|_| digits.len() == n)
                    .and_then(char::from_u32)
                    .ok_or_else(|| "unable to unescape string".to_string())?;
                out.push(v);
            }
            _ => return Err("unable to unescape string".to_string()),
        }
    }
    Ok(out)
}

fn step<'a>(s: &'a Schema, name: &str) -> Result<&'a Schema, String> {
    if !s.properties.is_empty() {
        s.properties
            .get(name)
            .ok_or_else(|| "does not refer to a valid field".to_string())
    } else if let Some(a) = s.additional_schema() {
        Ok(a)
    } else {
        Err("does not refer to a valid field".to_string())
    }
}

/// `Ok` when `path` names a field of `schema`; otherwise Kubernetes' reason.
pub fn valid(path: &str, schema: &Schema) -> Result<(), String> {
    let toks = tokens(path);
    let mut it = toks.into_iter();
    let mut cur = schema;
    while let Some(tok) = it.next() {
        match tok {
            "[" => {
                let t = it.next().ok_or("unexpected end of JSON path")?;
                if t.len() < 2 || !t.starts_with('\'') || !t.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {t}"));
                }
                let inner = t.get(1..t.len() - 1).unwrap_or("");
                let name = unescape(inner).map_err(|e| format!("invalid string literal: {e}"))?;
                cur = step(cur, &name)?;
                let close = it.next().ok_or("unexpected end of JSON path")?;
                if close != "]" {
                    return Err(format!("expected ] but got {close}"));
                }
            }
            "." => {
                let t = it.next().ok_or("unexpected end of JSON path")?;
                cur = step(cur, t)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_kubernetes() {
        assert_eq!(
            tokens(".a['b.c'][0]"),
            [".", "a", "[", "'b.c'", "]", "[", "0", "]"]
        );
        assert_eq!(tokens("'unterminated"), ["'unterminated"]);
        assert_eq!(unescape("c\\a").as_deref(), Ok("c\u{7}"));
    }
}
