//! Kubernetes' validation building blocks with their exact messages: names, labels and
//! annotations (shared with the variables crate, which checks `x-metadata`),
//! int-or-percent values, semantic versions. Cluster API's admission rules are made of
//! these.

use std::collections::BTreeMap;

use topograph_api::field::FieldError;
use topograph_api::model::IntOrString;

pub use topograph_variables::labels::{dns1123_subdomain, label_value, qualified_name};
use topograph_variables::labels::{validate_annotations, validate_labels};

/// Labels and annotations at `path` (`<path>.labels`, `<path>.annotations`).
pub fn metadata(
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = validate_labels(labels, &format!("{path}.labels"));
    errors.extend(validate_annotations(
        annotations,
        &format!("{path}.annotations"),
    ));
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
            Some(digits) => topograph_gocompat::strconv::atoi(digits)
                .map(|_| ())
                .map_err(|e| {
                    format!(
                        "invalid value for IntOrString: invalid value {}: {e}",
                        topograph_gocompat::strconv::quote(s)
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
