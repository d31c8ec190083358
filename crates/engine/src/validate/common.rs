//! Kubernetes' validation building blocks with their exact messages: qualified names,
//! DNS names, label values, labels and annotations, int-or-percent values, semantic
//! versions. Cluster API's admission rules are made of these.

use std::collections::BTreeMap;

use topograph_api::field::{ErrorType, FieldError};
use topograph_api::model::IntOrString;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";

fn is_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !s.is_empty()
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !s.is_empty()
        && b.first()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && b.last()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// Kubernetes' `IsDNS1123Subdomain`: the problems, empty when valid.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 253 {
        problems.push("must be no more than 253 characters".to_string());
    }
    if !value.split('.').all(is_dns1123_label) {
        problems.push(format!(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{DNS1123_SUBDOMAIN_FMT}')"
        ));
    }
    problems
}

/// Kubernetes' `IsDNS1123Label`: the problems, empty when valid.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1123_label(value) {
        problems.push(format!(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{DNS1123_LABEL_FMT}')"
        ));
    }
    problems
}

/// Kubernetes' `IsQualifiedName`: the problems, empty when valid.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_string());
            } else {
                problems.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|p| format!("prefix part {p}")),
                );
            }
            name
        }
        _ => {
            return vec![format!(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{QUALIFIED_NAME_FMT}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        problems.push("name part must be no more than 63 characters".to_string());
    }
    if !name.is_empty() && !is_name_part(name) {
        problems.push(format!(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{QUALIFIED_NAME_FMT}')"
        ));
    }
    problems
}

/// Kubernetes' `IsValidLabelValue`: the problems, empty when valid.
pub fn label_value(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_name_part(value) {
        problems.push(format!(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '{LABEL_VALUE_FMT}')"
        ));
    }
    problems
}

/// Labels and annotations at `path` (`<path>.labels`, `<path>.annotations`).
pub fn metadata(
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let labels_path = format!("{path}.labels");
    for (key, value) in labels {
        for problem in qualified_name(key) {
            errors.push(FieldError::invalid(&labels_path, key, problem));
        }
        for problem in label_value(value) {
            errors.push(FieldError::invalid(&labels_path, value, problem));
        }
    }
    let annotations_path = format!("{path}.annotations");
    let mut total = 0;
    for (key, value) in annotations {
        for problem in qualified_name(&key.to_lowercase()) {
            errors.push(FieldError::invalid(&annotations_path, key, problem));
        }
        total += key.len() + value.len();
    }
    const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(FieldError::new(
            annotations_path,
            ErrorType::TooLong,
            None,
            format!("may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
    errors
}

/// Checks an int-or-percent value as Kubernetes' `GetScaledValueFromIntOrPercent`
/// reads it: an integer, or a string `<int>%`. The error is that function's text.
pub fn int_or_percent(value: &IntOrString) -> Result<(), String> {
    match value {
        IntOrString::Int(_) => Ok(()),
        IntOrString::String(s) => match s.strip_suffix('%') {
            None => Err(
                "invalid value for IntOrString: invalid type: string is not a percentage"
                    .to_string(),
            ),
            Some(digits) => crate::go_text::atoi(digits).map(|_| ()).map_err(|e| {
                format!(
                    "invalid value for IntOrString: invalid value {}: {e}",
                    topograph_api::field::go_quote(s)
                )
            }),
        },
    }
}

/// Reads an int-or-percent JSON value (a rollout strategy field).
pub fn int_or_percent_json(value: &serde_json::Value) -> Result<(), String> {
    match value {
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Ok(()),
        serde_json::Value::String(s) => int_or_percent(&IntOrString::String(s.clone())),
        _ => Err(
            "invalid value for IntOrString: invalid type: neither int nor percentage".to_string(),
        ),
    }
}

/// A strict semantic version (`1.2.3`, with optional pre-release and build metadata):
/// `(major, minor, patch, pre-release)`.
pub fn semver(text: &str) -> Option<(u64, u64, u64, String)> {
    let (core, _build) = match text.split_once('+') {
        Some((core, build)) => {
            if build.is_empty()
                || !build.split('.').all(|p| {
                    !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
            {
                return None;
            }
            (core, Some(build))
        }
        None => (text, None),
    };
    let (numbers, pre) = match core.split_once('-') {
        Some((numbers, pre)) => (numbers, pre),
        None => (core, ""),
    };
    if core.contains('-')
        && (pre.is_empty()
            || !pre.split('.').all(|p| {
                !p.is_empty()
                    && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !(p.len() > 1 && p.starts_with('0') && p.bytes().all(|b| b.is_ascii_digit()))
            }))
    {
        return None;
    }
    let parts: Vec<&str> = numbers.split('.').collect();
    let [major, minor, patch] = parts.as_slice() else {
        return None;
    };
    let number = |s: &str| {
        (!s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && !(s.len() > 1 && s.starts_with('0')))
        .then(|| s.parse::<u64>().ok())
        .flatten()
    };
    Some((
        number(major)?,
        number(minor)?,
        number(patch)?,
        pre.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_values() {
        assert!(qualified_name("example.com/my-name").is_empty());
        assert!(qualified_name("My_Name.1").is_empty());
        assert_eq!(qualified_name("a/b/c").len(), 1);
        assert!(qualified_name("/a")[0].starts_with("prefix part must be non-empty"));
        assert!(qualified_name("-a")[0].starts_with("name part must consist"));
        assert_eq!(
            qualified_name(&"a".repeat(64)),
            vec!["name part must be no more than 63 characters".to_string()]
        );
        assert!(label_value("").is_empty());
        assert!(label_value("a b")[0].starts_with("a valid label must be an empty string"));
        assert!(dns1123_subdomain("a.b-c").is_empty());
        assert!(!dns1123_subdomain("A").is_empty());
        assert!(dns1123_label("a.b").len() == 1);
    }

    #[test]
    fn int_or_percent_values() {
        assert!(int_or_percent_json(&json!(1)).is_ok());
        assert!(int_or_percent_json(&json!("40%")).is_ok());
        assert_eq!(
            int_or_percent_json(&json!("40")),
            Err("invalid value for IntOrString: invalid type: string is not a percentage".into())
        );
        assert_eq!(
            int_or_percent_json(&json!("x%")),
            Err(r#"invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax"#.into())
        );
        assert!(int_or_percent_json(&json!(1.5)).is_err());
    }

    #[test]
    fn semantic_versions() {
        assert_eq!(semver("1.30.1"), Some((1, 30, 1, String::new())));
        assert_eq!(
            semver("1.30.1-rc.1+build.5"),
            Some((1, 30, 1, "rc.1".into()))
        );
        for bad in [
            "1.30",
            "v1.30.1",
            "1.30.01",
            "1.30.1-",
            "1.30.1+",
            "1.x.1",
            "1.30.1-01",
        ] {
            assert_eq!(semver(bad), None, "{bad}");
        }
    }
}
