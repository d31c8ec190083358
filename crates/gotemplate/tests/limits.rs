//! Hostile templates stop quickly with a `Limit` error instead of hanging or
//! exhausting memory.

use std::time::{Duration, Instant};

use serde_json::json;
use topograph_gotemplate::{ErrorKind, Limits, Options, Template};

fn run(text: &str, limits: Limits) -> Result<String, topograph_gotemplate::Error> {
    let options = Options {
        limits,
        ..Options::patch()
    };
    Template::parse("tpl", text, &options)?.execute(&json!({"n": 3}))
}

fn assert_limit(text: &str) {
    let start = Instant::now();
    let r = run(text, Limits::default());
    assert!(
        matches!(&r, Err(e) if e.kind == ErrorKind::Limit),
        "{text}: {r:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{text} took {:?}",
        start.elapsed()
    );
}

#[test]
fn hostile_templates_hit_limits() {
    assert_limit("{{ range seq 1 1000000000 }}x{{ end }}");
    assert_limit("{{ range until 1000000000 }}x{{ end }}");
    assert_limit("{{ range untilStep 0 2000000000 1 }}x{{ end }}");
    assert_limit("{{ range 1000000000 }}{{ end }}");
    assert_limit("{{ repeat 1000000000 \"x\" }}");
    assert_limit("{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}");
    assert_limit("{{ range 100000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}");
    assert_limit(
        "{{ $s := \"xxxxxxxxxxxxxxxx\" }}{{ range 100 }}{{ $s = printf \"%s%s\" $s $s }}{{ end }}",
    );
    assert_limit("{{ indent 1000000000 \"x\" }}");
    assert_limit("{{ printf \"%999999d\" 1 | repeat 10000 }}");
    let deep = format!("{{{{ {}1{} }}}}", "(".repeat(500), ")".repeat(500));
    assert_limit(&deep);
    let nested = format!(
        "{}x{}",
        "{{ if true }}".repeat(500),
        "{{ end }}".repeat(500)
    );
    assert_limit(&nested);
    // Deep blocks inside deep template recursion: bounded before the stack is.
    let blocks = format!(
        "{}{{{{ template \"r\" . }}}}{}",
        "{{ if true }}".repeat(90),
        "{{ end }}".repeat(90)
    );
    assert_limit(&format!(
        "{{{{ define \"r\" }}}}{blocks}{{{{ end }}}}{{{{ template \"r\" . }}}}"
    ));
    let parens = format!("{}1{}", "(".repeat(90), ")".repeat(90));
    assert_limit(&format!(
        "{{{{ define \"r\" }}}}{{{{ $x := {parens} }}}}{{{{ template \"r\" . }}}}{{{{ end }}}}{{{{ template \"r\" . }}}}"
    ));
    let deep_json = format!("{}{}", "[".repeat(600), "]".repeat(600));
    let r = run(
        &format!("{{{{ mustFromJson {deep_json:?} }}}}"),
        Limits::default(),
    );
    assert!(r.is_err());
}

#[test]
fn output_and_steps_are_bounded() {
    let small = Limits {
        max_output_bytes: 10,
        max_steps: 1000,
        max_depth: 10,
    };
    let r = run("{{ range 100 }}ab{{ end }}", small);
    assert!(matches!(r, Err(e) if e.kind == ErrorKind::Limit));
    let r = run("{{ range 100 }}{{ end }}ok", small);
    assert_eq!(r.ok().as_deref(), Some("ok"));
    let r = run("{{ range 2000 }}{{ end }}", small);
    assert!(matches!(r, Err(e) if e.kind == ErrorKind::Limit));
}

#[test]
fn templates_are_shareable() {
    fn assert_traits<T: Send + Sync + Clone>() {}
    assert_traits::<Template>();
    let t = Template::parse("tpl", "{{ .n }}", &Options::patch()).expect("parses");
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let t = t.clone();
            std::thread::spawn(move || t.execute(&json!({"n": i})))
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().ok().and_then(Result::ok), Some(i.to_string()));
    }
}
