//! Replays the differential corpus (`tests/corpus/*.jsonl`, answers recorded from Go's
//! `text/template` + Sprig) through our engine: rendered output must match exactly,
//! and failures must match Go's stage and error text. Every mismatch is listed.
//! Each case also runs over data converted once and reused, which must agree.

use std::path::Path;

use serde_json::Value;
use topograph_gotemplate::{Data, ErrorKind, Options, Template};

/// Cases whose Go error text we do not reproduce; only the failing stage is compared.
/// Keyed by template text, each with the reason.
const STAGE_ONLY: &[(&str, &str)] = &[];

fn run(op: &str, template: &str, data: &Value) -> Result<String, (ErrorKind, String)> {
    let (name, options) = if op == "nametemplate" {
        ("template name generator", Options::name_generator())
    } else {
        ("tpl", Options::patch())
    };
    let t = Template::parse(name, template, &options).map_err(|e| (e.kind, e.message))?;
    let fresh = t.execute(data);
    // Data converted once and reused (how the patch engine runs templates) must give
    // the same answer, the second time as well.
    let converted = Data::new(data);
    for round in 1..=2 {
        let reused = t.execute_data(&converted);
        if reused != fresh {
            return Err((
                ErrorKind::Execute,
                format!("execute_data (round {round}) gave {reused:?}, execute {fresh:?}"),
            ));
        }
    }
    fresh.map_err(|e| (e.kind, e.message))
}

#[test]
fn corpus_matches_go() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut total = 0;
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("corpus file");
        for (lineno, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            total += 1;
            let case: Value = serde_json::from_str(line).expect("corpus line is JSON");
            let req = &case["request"];
            let expect = &case["expect"];
            let op = req["op"].as_str().unwrap_or("template");
            let template = req["template"].as_str().unwrap_or("");
            let got = std::panic::catch_unwind(|| run(op, template, &req["data"]));
            let where_ = format!(
                "{}:{} {op} {template:?}",
                file.file_name().unwrap_or_default().to_string_lossy(),
                lineno + 1
            );
            let Ok(got) = got else {
                failures.push(format!("{where_}\n    PANIC"));
                continue;
            };
            let stage_only = STAGE_ONLY.iter().any(|(t, _)| *t == template);
            if expect["ok"] == Value::Bool(true) {
                let want = expect["out"].as_str().unwrap_or("");
                match got {
                    Ok(out) if out == want => {}
                    other => {
                        failures.push(format!("{where_}\n    want {want:?}\n    got  {other:?}"))
                    }
                }
            } else {
                let stage = expect["stage"].as_str().unwrap_or("");
                let want = expect["error"].as_str().unwrap_or("");
                let want_kind = if stage == "parse" {
                    ErrorKind::Parse
                } else {
                    ErrorKind::Execute
                };
                match got {
                    Err((kind, msg)) if kind == want_kind && (stage_only || msg == want) => {}
                    other => failures.push(format!(
                        "{where_}\n    want {stage}: {want:?}\n    got  {other:?}"
                    )),
                }
            }
        }
    }
    for f in &failures {
        eprintln!("MISMATCH {f}");
    }
    eprintln!(
        "oracle corpus: {} cases, {} passed, {} failed",
        total,
        total - failures.len(),
        failures.len()
    );
    assert!(total >= 1, "empty corpus");
    assert!(failures.is_empty(), "{} corpus mismatches", failures.len());
}

/// Every function of the hermetic set is exercised by at least one corpus case.
#[test]
fn corpus_covers_every_function() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut text = String::new();
    for entry in std::fs::read_dir(&dir).expect("corpus directory").flatten() {
        if entry.path().extension().is_some_and(|x| x == "jsonl") {
            for line in std::fs::read_to_string(entry.path())
                .expect("corpus file")
                .lines()
            {
                let case: Value = serde_json::from_str(line).expect("corpus line is JSON");
                text.push_str(case["request"]["template"].as_str().unwrap_or(""));
                text.push('\n');
            }
        }
    }
    let words: std::collections::HashSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let missing: Vec<&str> =
        Template::function_names(topograph_gotemplate::Functions::HermeticSprig)
            .into_iter()
            .filter(|n| !words.contains(n))
            .collect();
    assert!(
        missing.is_empty(),
        "functions without corpus cases: {missing:?}"
    );
}
