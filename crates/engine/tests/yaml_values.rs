//! Differential test: how rendered template output is read, against the answers of the
//! Go reference (`tests/corpus/yaml_values.jsonl`, regrown by `gen_yaml_values.py`).
//! The value decides what a `valueFrom.template` patch writes and whether `enabledIf`
//! is on, so every case must agree.

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

/// Known differences, each with the reason it is accepted.
const ACCEPTED: &[(&str, &str)] = &[
    (
        "tRUE",
        "booleans in mixed case are booleans here; Go only knows three spellings of each",
    ),
    ("yEs", "as above"),
    (
        "1e400",
        "an out-of-range float is refused here; Go keeps the text as a string",
    ),
    (
        "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
        "a key spelled as a YAML 1.1 boolean (`y`) stays text here; Go makes it \"true\"",
    ),
    (
        "\ta",
        "a leading tab is read as white space here; Go refuses it",
    ),
];

#[test]
fn rendered_output_reads_like_kubernetes_yaml() {
    let corpus = include_str!("corpus/yaml_values.jsonl");
    let mut failures = Vec::new();
    let mut cases = 0;
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = match serde_json::from_str(line) {
            Ok(case) => case,
            Err(e) => panic!("bad corpus line {line}: {e}"),
        };
        cases += 1;
        let text = case["text"].as_str().unwrap_or_default();
        if ACCEPTED.iter().any(|(t, _)| *t == text) {
            continue;
        }
        let got = yaml_to_json(text);
        let ok = match (&got, case.get("value")) {
            (Err(_), None) => true,
            (Ok(v), Some(want)) => {
                same(v, want)
                    && (*v == Value::Bool(true)) == case["enabled"].as_bool().unwrap_or(false)
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("{text:?}: got {got:?}, want {}", line));
        }
    }
    assert!(cases >= 100, "corpus too small: {cases}");
    assert!(
        failures.is_empty(),
        "{} of {cases} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
