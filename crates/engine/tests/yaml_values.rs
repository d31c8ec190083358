//! Differential test: how rendered template output is read, against the answers of the
//! Go reference (`tests/corpus/yaml_values.jsonl`, regrown by `gen_yaml_values.py`, and
//! the rendered outputs of `topograph-gotemplate`'s oracle corpus, whose answers carry
//! the value Cluster API reads too). The value decides what a `valueFrom.template` patch
//! writes and whether `enabledIf` is on, and a refusal's text ends up in the Cluster's
//! `TopologyReconciled` condition, so both must agree.

use std::path::Path;

use serde_json::Value;
use topograph_engine::patches::yaml_to_json;

/// JSON equality where numbers compare by value (`1000` and `1000.0` are the same).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Known differences, by text, each with the reason it is accepted.
const ACCEPTED: &[(&str, &str)] = &[];

/// Refusals whose text we do not reproduce, only the refusal itself: the texts of YAML
/// syntax errors come from the parser (granit-parser, not libyaml), which words some
/// problems differently and places some at another line. Keyed by the rendered text.
const SYNTAX_TEXT_DIFFERS: &[&str] = &[
    // An empty key before `:` on a line of its own: go-yaml's parser wants a key there;
    // this one reads a null key, which the conversion refuses.
    ": a",
];

/// One case: the rendered text and the oracle's answer.
struct Case {
    text: String,
    value: Option<Value>,
    error: Option<String>,
    enabled: bool,
}

fn corpus_cases() -> Vec<Case> {
    let corpus = include_str!("corpus/yaml_values.jsonl");
    corpus
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let case: Value = serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("bad corpus line {line}: {e}");
            });
            Case {
                text: case["text"].as_str().unwrap_or_default().to_string(),
                value: case.get("value").cloned(),
                error: case["error"].as_str().map(str::to_string),
                enabled: case["enabled"].as_bool().unwrap_or(false),
            }
        })
        .collect()
}

/// The rendered outputs of the template corpus, with the value the oracle read from
/// each (only successful `template` renders carry one).
fn template_corpus_cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gotemplate/tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("gotemplate corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("gotemplate corpus file");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let case: Value = serde_json::from_str(line).expect("corpus line is JSON");
            let expect = &case["expect"];
            if case["request"]["op"] != "template" || expect["ok"] != Value::Bool(true) {
                continue;
            }
            cases.push(Case {
                text: expect["out"].as_str().unwrap_or_default().to_string(),
                value: expect.get("value").cloned(),
                error: expect["value_error"].as_str().map(str::to_string),
                enabled: expect["enabled"].as_bool().unwrap_or(false),
            });
        }
    }
    cases
}

fn check(cases: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let text = case.text.as_str();
        if ACCEPTED.iter().any(|(t, _)| *t == text) {
            continue;
        }
        let got = yaml_to_json(text);
        let ok = match (&got, &case.value, &case.error) {
            (Ok(v), Some(want), _) => same(v, want) && (*v == Value::Bool(true)) == case.enabled,
            (Err(e), None, Some(want)) => e == want || SYNTAX_TEXT_DIFFERS.contains(&text),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{text:?}: got {got:?}, want {}",
                match (&case.value, &case.error) {
                    (Some(v), _) => v.to_string(),
                    (_, Some(e)) => format!("error {e:?}"),
                    _ => "null".into(),
                }
            ));
        }
    }
    failures
}

#[test]
fn rendered_output_reads_like_kubernetes_yaml() {
    let cases = corpus_cases();
    assert!(cases.len() >= 300, "corpus too small: {}", cases.len());
    let failures = check(&cases);
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn template_corpus_outputs_read_like_kubernetes_yaml() {
    let cases = template_corpus_cases();
    assert!(
        cases.len() >= 400,
        "template corpus too small: {}",
        cases.len()
    );
    let failures = check(&cases);
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn unreadable_output_never_panics() {
    for text in [
        "&a [*a, *a]",
        "a: &a\n  b: *a\n",
        "<<: *x",
        "? [a, {b: c}]\n: d",
        "- !!binary ====",
        "!!timestamp 2001-02-30",
        "{? a}",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    ] {
        let _ = yaml_to_json(text);
    }
}

#[test]
fn alias_bombs_are_refused_as_go_yaml_refuses_them() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    assert_eq!(
        yaml_to_json(&text),
        Err("error converting YAML to JSON: yaml: document contains excessive aliasing".into())
    );
}

mod properties {
    use proptest::prelude::*;
    use topograph_engine::patches::yaml_to_json;

    /// Pieces YAML is made of, so generated texts reach the parser's corners.
    fn yamlish() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("\n".to_string()),
            Just("  ".to_string()),
            Just("\t".to_string()),
            Just("- ".to_string()),
            Just(": ".to_string()),
            Just("? ".to_string()),
            Just("<<: ".to_string()),
            Just("&a ".to_string()),
            Just("*a".to_string()),
            Just("!!binary ".to_string()),
            Just("!!int ".to_string()),
            Just("|-\n".to_string()),
            Just(">\n".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just(", ".to_string()),
            Just("'".to_string()),
            Just("\"\\u".to_string()),
            Just("---\n".to_string()),
            Just("%YAML 1.1\n".to_string()),
            Just("# c".to_string()),
            Just("y".to_string()),
            Just("1e400".to_string()),
            Just("0x1F".to_string()),
            Just(".inf".to_string()),
            Just("~".to_string()),
            "[a-z0-9._-]{1,6}",
            "\\PC{0,4}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_text_is_read_or_refused_without_panicking(text in yamlish()) {
            if let Err(e) = yaml_to_json(&text) {
                prop_assert!(e.starts_with("error converting YAML to JSON: "), "{e}");
            }
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,120}") {
            let _ = yaml_to_json(&text);
        }
    }
}
