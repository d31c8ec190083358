//! Differential test against the oracle corpus: `tests/corpus/oracle.jsonl` (the shared
//! corpus's requests) and `tests/corpus/quirks.jsonl` (Go and Kubernetes corners of our
//! own, regrown by `quirks.py`). Every `schema` and `default` request is replayed
//! through the crate and its answer is compared with the oracle's: `ok`, `stage`, the
//! error strings as a set, the defaulted output exactly. Every mismatch is printed with
//! its file and line; the test fails on any mismatch that is not in [`KNOWN`].

use std::collections::BTreeMap;

use topograph_api::model::{Metadata, Variable, VariableDefinition};
use topograph_variables::check::{self, Defaulted, Subject, Verdict};
use topograph_variables::json::{self, Json};
use topograph_variables::{Scope, default_variables, validate_variables};

/// Known differences, by corpus file and line, each with the reason we accept it.
const KNOWN: &[(&str, usize, &str)] = &[];

/// The corpus files, by name.
const CORPORA: &[(&str, &str)] = &[
    ("oracle.jsonl", include_str!("corpus/oracle.jsonl")),
    ("quirks.jsonl", include_str!("corpus/quirks.jsonl")),
];

/// An answer in the oracle's terms.
#[derive(Debug, Default, PartialEq)]
struct Answer {
    ok: bool,
    stage: Option<String>,
    errors: Vec<String>,
    error: Option<String>,
    out: Option<String>,
    absent: bool,
}

fn member<'a>(members: &'a [(String, Json)], key: &str) -> Option<&'a Json> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn string_member(members: &[(String, Json)], key: &str) -> Option<String> {
    match member(members, key) {
        Some(Json::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

fn expected_answer(text: &str) -> Answer {
    let parsed = json::parse(text).expect("expected answer is JSON");
    let Json::Obj(m) = parsed else {
        panic!("expected answer is an object")
    };
    let raw: BTreeMap<String, &str> = json::raw_members(text)
        .expect("expected answer is an object")
        .into_iter()
        .collect();
    let mut errors: Vec<String> = match member(&m, "errors") {
        Some(Json::Arr(items)) => items
            .iter()
            .filter_map(|e| match e {
                Json::Str(s) => Some(sort_conversion_list(s)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    errors.sort();
    Answer {
        ok: member(&m, "ok") == Some(&Json::Bool(true)),
        stage: string_member(&m, "stage"),
        errors,
        error: string_member(&m, "error"),
        out: raw.get("out").map(|s| s.to_string()),
        absent: member(&m, "absent") == Some(&Json::Bool(true)),
    }
}

/// Lists of schema conversion problems are compared with their items sorted: the
/// oracle that produced the corpus listed them in Go map order (as `norm.py` notes).
fn sort_conversion_list(text: &str) -> String {
    for marker in [
        "ClusterClass should be checked: [",
        "error to convert schema [",
    ] {
        let Some(i) = text.find(marker) else {
            continue;
        };
        let start = i + marker.len();
        let Some(end) = text.rfind(']').filter(|e| *e >= start) else {
            continue;
        };
        let inner = &text[start..end];
        let mut items: Vec<String> = inner.split(" schema.").map(str::to_string).collect();
        for item in items.iter_mut().skip(1) {
            *item = format!("schema.{item}");
        }
        items.sort();
        return format!("{}{}{}", &text[..start], items.join(" "), &text[end..]);
    }
    text.to_string()
}

fn failed(stage: &str, errors: Vec<String>) -> Answer {
    let mut errors: Vec<String> = errors.iter().map(|e| sort_conversion_list(e)).collect();
    errors.sort();
    Answer {
        ok: false,
        stage: Some(stage.to_string()),
        errors,
        ..Answer::default()
    }
}

fn fault(stage: &str, error: String) -> Answer {
    Answer {
        ok: false,
        stage: Some(stage.to_string()),
        error: Some(error),
        ..Answer::default()
    }
}

fn our_answer(request: &str) -> (String, Answer) {
    let parsed = json::parse(request).expect("request is JSON");
    let Json::Obj(m) = parsed else {
        panic!("request is an object")
    };
    let raw: BTreeMap<String, &str> = json::raw_members(request)
        .expect("request is an object")
        .into_iter()
        .collect();
    let op = string_member(&m, "op").unwrap_or_default();
    let mode = string_member(&m, "mode").unwrap_or_else(|| "capi".to_string());
    let mut name = string_member(&m, "name").unwrap_or_default();
    if name.is_empty() {
        name = "variable".to_string();
    }
    let schema = member(&m, "schema");
    let value = member(&m, "value");
    match (op.as_str(), mode.as_str()) {
        ("cluster", _) => ("cluster".to_string(), cluster_answer(request, &name)),
        ("default", _) => {
            let path =
                string_member(&m, "path").unwrap_or_else(|| "spec.topology.variables".into());
            let subject = Subject::new(&path, &name);
            let answer = match check::default_variable(schema, &subject, value) {
                Defaulted::Absent => Answer {
                    ok: true,
                    absent: true,
                    ..Answer::default()
                },
                Defaulted::Value(out) => Answer {
                    ok: true,
                    out: Some(out),
                    ..Answer::default()
                },
                Defaulted::Invalid(stage, errors) => failed(
                    stage.name(),
                    errors.iter().map(ToString::to_string).collect(),
                ),
                Defaulted::Undecodable(e) => fault(
                    "schema",
                    format!("oracle: schema does not decode as CAPI JSONSchemaProps: {e}"),
                ),
            };
            ("default".to_string(), answer)
        }
        ("schema", "crd") => {
            let path = string_member(&m, "path").filter(|p| !p.is_empty());
            let answer = match check::crd_request(schema, value, path.as_deref()) {
                Ok(errors) if errors.is_empty() => Answer {
                    ok: true,
                    ..Answer::default()
                },
                Ok(errors) => failed("openapi", errors.iter().map(ToString::to_string).collect()),
                Err((stage, e)) => fault(stage, e),
            };
            ("schema/crd".to_string(), answer)
        }
        _ => {
            let path =
                string_member(&m, "path").unwrap_or_else(|| "spec.topology.variables".into());
            let subject = Subject::new(&path, &name);
            let raw_value = raw.get("value").copied().unwrap_or("");
            let old = member(&m, "old_value");
            let answer = match check::variable(schema, &subject, value, raw_value, old) {
                Verdict::Valid => Answer {
                    ok: true,
                    ..Answer::default()
                },
                Verdict::Invalid(stage, errors) => failed(
                    stage.name(),
                    errors.iter().map(ToString::to_string).collect(),
                ),
                Verdict::Undecodable(e) => fault(
                    "schema",
                    format!("oracle: schema does not decode as CAPI JSONSchemaProps: {e}"),
                ),
            };
            ("schema/capi".to_string(), answer)
        }
    }
}

/// A value set in a Cluster, defaulted and validated as Cluster API's webhook does it
/// (requests of op `cluster`, see `quirks.py`). The oracle's answer is its validation of
/// its own defaulted text, so the stage is taken from the errors' presence alone: the
/// Cluster-level functions report errors without one.
fn cluster_answer(request: &str, name: &str) -> Answer {
    let parsed: serde_json::Value = serde_json::from_str(request).expect("request is JSON");
    let definition = VariableDefinition {
        name: name.to_string(),
        required: false,
        schema: parsed["schema"].clone(),
        metadata: Metadata::default(),
    };
    let value = Variable {
        name: name.to_string(),
        definition_from: None,
        value: parsed["value"].clone(),
    };
    let defs = [definition];
    let errors = match default_variables(&[value], &defs, Scope::Cluster) {
        Ok(defaulted) => validate_variables(&defaulted, None, &defs, Scope::Cluster),
        Err(errors) => errors,
    };
    if errors.is_empty() {
        return Answer {
            ok: true,
            ..Answer::default()
        };
    }
    let mut errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    errors.sort();
    Answer {
        ok: false,
        errors,
        ..Answer::default()
    }
}

#[test]
fn oracle_corpus() {
    let mut totals: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut unexpected = 0;
    let mut known_hit = 0;
    for (file, case) in CORPORA
        .iter()
        .flat_map(|(file, text)| text.lines().map(move |l| (*file, l)))
    {
        let Ok(Json::Obj(m)) = json::parse(case) else {
            panic!("corpus line is not an object: {case}")
        };
        let line = match member(&m, "line") {
            Some(Json::Num(n)) => n.parse::<usize>().unwrap_or(0),
            _ => 0,
        };
        let request = string_member(&m, "request").unwrap_or_default();
        let expected = expected_answer(&string_member(&m, "expected").unwrap_or_default());
        let (kind, ours) = our_answer(&request);
        let mut expected = expected;
        if kind == "cluster" {
            expected.stage = None;
        }
        let entry = totals.entry(kind.clone()).or_default();
        entry.0 += 1;
        if ours == expected {
            entry.1 += 1;
            continue;
        }
        if KNOWN.iter().any(|(f, l, _)| *f == file && *l == line) {
            known_hit += 1;
            continue;
        }
        unexpected += 1;
        println!("MISMATCH {file}:{line} ({kind}): {request}");
        println!("   expected: {expected:?}");
        println!("   ours:     {ours:?}");
    }
    for (kind, (total, passed)) in &totals {
        println!("{kind}: {passed}/{total} match the oracle");
    }
    println!("known differences: {known_hit}/{}", KNOWN.len());
    assert_eq!(unexpected, 0, "{unexpected} answers differ from the oracle");
}
