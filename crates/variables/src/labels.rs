//! Kubernetes' checks of label and annotation keys and values (`ValidateLabels`,
//! `ValidateAnnotations`), with apimachinery's messages, for the metadata a class
//! attaches to its variables.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use topograph_api::field::{ErrorType, FieldError};

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX: usize = 63;
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX: usize = 63;
/// The most bytes all annotation keys and values together may take.
const ANNOTATIONS_MAX: usize = 256 * 1024;

fn anchored(fmt: &str) -> Option<Regex> {
    Regex::new(&format!("^(?:{fmt})$")).ok()
}

static QUALIFIED_NAME: LazyLock<Option<Regex>> = LazyLock::new(|| anchored(QUALIFIED_NAME_FMT));
static DNS1123_SUBDOMAIN: LazyLock<Option<Regex>> =
    LazyLock::new(|| anchored(DNS1123_SUBDOMAIN_FMT));
static LABEL_VALUE: LazyLock<Option<Regex>> = LazyLock::new(|| anchored(LABEL_VALUE_FMT));

fn matches(re: &LazyLock<Option<Regex>>, s: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(s))
}

/// apimachinery's `RegexError`: the message, examples and the pattern.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let shown: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        shown.join(" or ")
    )
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `IsDNS1123Subdomain`: the problems, empty when valid.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !matches(&DNS1123_SUBDOMAIN, value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// apimachinery's `IsQualifiedName`.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
    }
    if !matches(&QUALIFIED_NAME, name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// apimachinery's `IsValidLabelValue`.
/// `IsValidLabelValue`: the problems, empty when valid.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX {
        errs.push(max_len_error(LABEL_VALUE_MAX));
    }
    if !matches(&LABEL_VALUE, value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `ValidateLabels`: each key a qualified name, each value a label value; all errors
/// at `path`. Keys are taken in sorted order (Go walks the map at random).
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    for (k, v) in labels {
        for msg in qualified_name(k) {
            out.push(FieldError::invalid(path, k, msg));
        }
        for msg in label_value(v) {
            out.push(FieldError::invalid(path, v, msg));
        }
    }
    out
}

/// `ValidateAnnotations`: each key a qualified name once lower-cased, and all of
/// them together at most 256 KiB.
pub fn validate_annotations(annotations: &BTreeMap<String, String>, path: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations {
        for msg in qualified_name(&k.to_lowercase()) {
            out.push(FieldError::invalid(path, k, msg));
        }
        total = total.saturating_add(k.len()).saturating_add(v.len());
    }
    if total > ANNOTATIONS_MAX {
        out.push(FieldError::new(
            path,
            ErrorType::TooLong,
            None,
            format!("may not be more than {ANNOTATIONS_MAX} bytes"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        assert!(qualified_name("example.com/my-key").is_empty());
        assert!(qualified_name("key").is_empty());
        assert_eq!(
            qualified_name(".label-key"),
            [
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
        assert_eq!(qualified_name("/a"), ["prefix part must be non-empty"]);
        assert_eq!(qualified_name("a/b/c").len(), 1);
    }
}
