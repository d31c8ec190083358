//! Label selectors (`matchLabels`, `matchExpressions`) matched against a namespace's
//! labels, as Kubernetes' `LabelSelectorAsSelector` + `Matches` do.

use std::collections::BTreeMap;

use crate::config::LabelSelector;

/// Whether the selector selects nothing in particular (matches every namespace).
pub fn is_empty(selector: Option<&LabelSelector>) -> bool {
    selector.is_none_or(|s| s.match_labels.is_empty() && s.match_expressions.is_empty())
}

/// Checks the selector's operators, as converting it to a selector would.
pub fn validate(selector: &LabelSelector) -> Result<(), String> {
    for e in &selector.match_expressions {
        match e.operator.as_str() {
            "In" | "NotIn" if e.values.is_empty() => {
                return Err(format!(
                    "for 'in', 'notin' operators, values set can't be empty (key {:?})",
                    e.key
                ));
            }
            "Exists" | "DoesNotExist" if !e.values.is_empty() => {
                return Err(format!(
                    "values set must be empty for exists and does not exist (key {:?})",
                    e.key
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => return Err(format!("{other:?} is not a valid label selector operator")),
        }
    }
    Ok(())
}

/// Whether `labels` satisfy the selector (an invalid selector matches nothing).
pub fn matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    if validate(selector).is_err() {
        return false;
    }
    selector
        .match_labels
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v))
        && selector.match_expressions.iter().all(|e| {
            let value = labels.get(&e.key);
            match e.operator.as_str() {
                "In" => value.is_some_and(|v| e.values.contains(v)),
                "NotIn" => value.is_none_or(|v| !e.values.contains(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn expressions_and_labels() {
        let selector = LabelSelector {
            match_labels: labels(&[("team", "a")]),
            match_expressions: vec![LabelSelectorRequirement {
                key: "env".into(),
                operator: "NotIn".into(),
                values: vec!["prod".into()],
            }],
        };
        assert!(matches(&selector, &labels(&[("team", "a")])));
        assert!(matches(
            &selector,
            &labels(&[("team", "a"), ("env", "dev")])
        ));
        assert!(!matches(
            &selector,
            &labels(&[("team", "a"), ("env", "prod")])
        ));
        assert!(!matches(&selector, &labels(&[("team", "b")])));
        assert!(is_empty(Some(&LabelSelector::default())));
    }
}
