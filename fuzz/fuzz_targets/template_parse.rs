//! Fuzzes the Go template engine: arbitrary bytes are parsed as a template with
//! both function sets and, when they parse, executed against fixed CAPI-like data
//! under small limits. Any panic, hang or limit overrun is a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;
use topograph_gotemplate::{Functions, Limits, MissingKey, Options, Template};

const LIMITS: Limits = Limits {
    max_output_bytes: 64 * 1024,
    max_steps: 20_000,
    max_depth: 32,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let input = serde_json::json!({
        "builtin": {"cluster": {"name": "c1", "namespace": "ns"},
                    "controlPlane": {"version": "v1.29.3", "replicas": 3}},
        "list": [1, "two", null, {"a": 1.5}],
        "flag": true,
    });
    for (functions, missing_key) in [
        (Functions::HermeticSprig, MissingKey::Zero),
        (Functions::Builtins, MissingKey::Error),
    ] {
        let options = Options {
            missing_key,
            functions,
            limits: LIMITS,
        };
        if let Ok(t) = Template::parse("tpl", text, &options) {
            if let Ok(out) = t.execute(&input) {
                assert!(out.len() <= LIMITS.max_output_bytes);
            }
        }
    }
});
