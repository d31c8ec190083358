//! clusterctl-style variable substitution in manifests (`${NAME}`, `${NAME:=default}`).
//!
//! Cluster templates published by Cluster API and providers carry placeholders that
//! `clusterctl generate cluster` fills from the environment. Substituting them here lets
//! users render those templates directly. Supported forms: `${NAME}`, `${NAME:=default}`,
//! `${NAME=default}`, `${NAME:-default}`, `${NAME-default}` (the `:` forms also replace
//! an empty value). `$$` is a literal `$`; a `$` not followed by `{` is left alone.

use std::collections::BTreeMap;

/// A placeholder that has neither a value nor a default.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: variable {name} is not set and has no default")]
pub struct MissingVariable {
    /// The variable.
    pub name: String,
    /// 1-based line of the placeholder.
    pub line: usize,
}

/// Replaces every placeholder in `text` using `values`; lists every missing variable.
pub fn substitute(
    text: &str,
    values: &BTreeMap<String, String>,
) -> Result<String, Vec<MissingVariable>> {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let Some(body_start) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let Some(end) = closing_brace(body_start) else {
            out.push_str(&rest[pos..]);
            rest = "";
            break;
        };
        let body = &body_start[..end];
        let name_len = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let (name, op) = body.split_at(name_len);
        let (default, empty_counts_as_unset) = if let Some(d) = op.strip_prefix(":=") {
            (Some(d), true)
        } else if let Some(d) = op.strip_prefix(":-") {
            (Some(d), true)
        } else if let Some(d) = op.strip_prefix('=') {
            (Some(d), false)
        } else if let Some(d) = op.strip_prefix('-') {
            (Some(d), false)
        } else {
            (None, false)
        };
        if name.is_empty() || (default.is_none() && !op.is_empty()) {
            // Not a placeholder we understand (for example a shell expression): keep it.
            out.push_str(&rest[pos..pos + 2 + end + 1]);
        } else {
            // A default may itself hold placeholders (`${A:-${B}}`), as clusterctl's
            // envsubst allows.
            let mut use_default = |d: &str, out: &mut String| match substitute(d, values) {
                Ok(text) => out.push_str(&text),
                Err(inner) => missing.extend(inner),
            };
            match (values.get(name), default) {
                (Some(v), Some(d)) if v.is_empty() && empty_counts_as_unset => {
                    use_default(d, &mut out)
                }
                (Some(v), _) => out.push_str(v),
                (None, Some(d)) => use_default(d, &mut out),
                (None, None) => {
                    let line = text[..text.len() - rest.len() + pos].matches('\n').count() + 1;
                    missing.push(MissingVariable {
                        name: name.to_string(),
                        line,
                    });
                }
            }
        }
        rest = &body_start[end + 1..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// The position of the `}` closing a placeholder whose body starts `body`, skipping
/// the placeholders nested in it.
fn closing_brace(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = body.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'{' if i > 0 && bytes[i - 1] == b'$' => depth += 1,
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn substitutes_the_forms_clusterctl_templates_use() {
        let v = vals(&[("A", "x"), ("EMPTY", "")]);
        let cases = [
            ("${A}", "x"),
            ("name: \"${A}\"", "name: \"x\""),
            ("${B:=d}", "d"),
            ("${A:=d}", "x"),
            ("${EMPTY:=d}", "d"),
            ("${EMPTY=d}", ""),
            ("${B:-[\"10.0.0.0/8\"]}", "[\"10.0.0.0/8\"]"),
            ("${UNSET:-${A}}", "x"),
            ("${UNSET:-x-${UNSET2:-y}}", "x-y"),
            ("${B-d}", "d"),
            ("$$A", "$A"),
            ("$A", "$A"),
            ("cost $5", "cost $5"),
            ("${A}-${A}", "x-x"),
            ("${unclosed", "${unclosed"),
            ("${A#prefix}", "${A#prefix}"),
        ];
        for (input, want) in cases {
            assert_eq!(substitute(input, &v).unwrap(), want, "input {input}");
        }
    }

    #[test]
    fn lists_every_missing_variable_with_its_line() {
        let err = substitute("a: ${X}\nb: ${Y}\n", &BTreeMap::new()).unwrap_err();
        assert_eq!(
            err.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec![
                "line 1: variable X is not set and has no default",
                "line 2: variable Y is not set and has no default"
            ]
        );
    }
}
