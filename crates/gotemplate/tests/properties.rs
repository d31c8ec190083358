//! Property tests: evaluation never panics, whatever the template text or data,
//! and always respects its limits.

use proptest::prelude::*;
use serde_json::{Value, json};
use topograph_gotemplate::{ErrorKind, Functions, Limits, MissingKey, Options, Template};

fn small_limits() -> Limits {
    Limits {
        max_output_bytes: 4096,
        max_steps: 5000,
        max_depth: 20,
    }
}

fn options(functions: Functions, missing_key: MissingKey) -> Options {
    Options {
        missing_key,
        functions,
        limits: small_limits(),
    }
}

/// Pieces that combine into mostly-valid templates, so evaluation is reached often.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{{ .a }}".to_string()),
        Just("{{ .b.c }}".to_string()),
        Just("{{ .list }}".to_string()),
        Just("{{ range .list }}".to_string()),
        Just("{{ range $i, $v := .list }}{{ $i }}".to_string()),
        Just("{{ range 50 }}".to_string()),
        Just("{{ if .a }}".to_string()),
        Just("{{ else }}".to_string()),
        Just("{{ end }}".to_string()),
        Just("{{ with .b }}".to_string()),
        Just("{{ $x := .a }}".to_string()),
        Just("{{ $x }}".to_string()),
        Just("{{ define \"t\" }}".to_string()),
        Just("{{ template \"t\" . }}".to_string()),
        Just("{{ break }}".to_string()),
        Just("{{ printf \"%v %d %s\" .a .n .list }}".to_string()),
        Just("{{ .a | upper | repeat 3 }}".to_string()),
        Just("{{ toJson . }}".to_string()),
        Just("{{ until 40 | join \",\" }}".to_string()),
        Just("{{ index .list 1 }}".to_string()),
        Just("{{ eq .n 3.0 }}".to_string()),
        Just("{{ semverCompare \">=1.2\" .v }}".to_string()),
        Just("{{ (".to_string()),
        Just(")".to_string()),
        Just(" | ".to_string()),
        "[a-z.$ \"(){}|-]{0,8}",
    ]
}

fn data() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        any::<i64>().prop_map(|i| json!(i)),
        "[a-z0-9.+-]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn check(text: &str, data: &Value, opts: &Options) {
    match Template::parse("tpl", text, opts) {
        Ok(t) => match t.execute(data) {
            Ok(out) => assert!(out.len() <= opts.limits.max_output_bytes),
            Err(e) => assert!(!e.message.is_empty()),
        },
        Err(e) => assert!(matches!(e.kind, ErrorKind::Parse | ErrorKind::Limit)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>(), d in data()) {
        check(&text, &d, &options(Functions::HermeticSprig, MissingKey::Zero));
        check(&text, &d, &options(Functions::Builtins, MissingKey::Error));
    }

    #[test]
    fn composed_templates_never_panic(parts in prop::collection::vec(fragment(), 0..16), d in data()) {
        let text: String = parts.concat();
        let mut obj = json!({"a": "x", "n": 3, "list": [1, "two", null], "b": {"c": 1}, "v": "v1.2.3"});
        if let (Some(o), Value::Object(extra)) = (obj.as_object_mut(), d) {
            o.extend(extra);
        }
        check(&text, &obj, &options(Functions::HermeticSprig, MissingKey::Zero));
        check(&text, &obj, &options(Functions::Builtins, MissingKey::Error));
    }

    #[test]
    fn steps_stop_loops(n in 0u32..100_000) {
        let opts = options(Functions::HermeticSprig, MissingKey::Zero);
        let t = Template::parse("tpl", &format!("{{{{ range {n} }}}}{{{{ end }}}}"), &opts);
        let r = t.map(|t| t.execute(&json!({})));
        match r {
            Ok(Ok(out)) => prop_assert!(n < 5000 && out.is_empty()),
            Ok(Err(e)) => prop_assert!(e.kind == ErrorKind::Limit && n >= 4000),
            Err(e) => prop_assert!(false, "parse failed: {e}"),
        }
    }
}
