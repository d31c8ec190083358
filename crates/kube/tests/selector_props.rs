//! Properties of the label-selector parser: it never panics, and a selector rendered from
//! generated requirements matches exactly when a direct evaluation of them does.

use proptest::prelude::*;
use std::collections::BTreeMap;
use topograph_kube::selector::LabelSelector;

#[derive(Debug, Clone)]
enum Req {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("x.io/c".to_string())
    ]
}

fn value() -> impl Strategy<Value = String> {
    "[a-c]{0,2}"
}

fn req() -> impl Strategy<Value = Req> {
    prop_oneof![
        (key(), value()).prop_map(|(k, v)| Req::Eq(k, v)),
        (key(), value()).prop_map(|(k, v)| Req::NotEq(k, v)),
        (key(), prop::collection::vec(value(), 1..4)).prop_map(|(k, v)| Req::In(k, v)),
        (key(), prop::collection::vec(value(), 1..4)).prop_map(|(k, v)| Req::NotIn(k, v)),
        key().prop_map(Req::Exists),
        key().prop_map(Req::NotExists),
    ]
}

fn render(r: &Req, spaced: bool) -> String {
    let sp = if spaced { " " } else { "" };
    match r {
        Req::Eq(k, v) => format!("{k}{sp}={sp}{v}"),
        Req::NotEq(k, v) => format!("{k}{sp}!={sp}{v}"),
        Req::In(k, vs) => format!("{k} in ({})", vs.join(",")),
        Req::NotIn(k, vs) => format!("{k} notin ({})", vs.join(&format!(",{sp}"))),
        Req::Exists(k) => k.clone(),
        Req::NotExists(k) => format!("!{k}"),
    }
}

fn eval(r: &Req, labels: &BTreeMap<String, String>) -> bool {
    match r {
        Req::Eq(k, v) => labels.get(k) == Some(v),
        Req::NotEq(k, v) => labels.get(k) != Some(v),
        Req::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
        Req::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.contains(l)),
        Req::Exists(k) => labels.contains_key(k),
        Req::NotExists(k) => !labels.contains_key(k),
    }
}

proptest! {
    #[test]
    fn parser_never_panics(input in any::<String>()) {
        let _ = LabelSelector::parse(&input);
    }

    #[test]
    fn parser_never_panics_on_selector_like_text(input in "[a-c!=(), in]{0,20}") {
        let _ = LabelSelector::parse(&input);
    }

    #[test]
    fn rendered_selectors_match_like_their_requirements(
        reqs in prop::collection::vec(req(), 0..4),
        labels in prop::collection::btree_map(key(), value(), 0..3),
        spaced in any::<bool>(),
    ) {
        let text: Vec<String> = reqs.iter().map(|r| render(r, spaced)).collect();
        let text = text.join(if spaced { ", " } else { "," });
        let parsed = LabelSelector::parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        let as_json: serde_json::Map<String, serde_json::Value> =
            labels.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
        prop_assert_eq!(parsed.matches(Some(&as_json)), reqs.iter().all(|r| eval(r, &labels)), "{}", text);
    }
}
