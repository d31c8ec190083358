//! Rendering `enabledIf` and `valueFrom.template`: a Go template with Sprig's hermetic
//! functions, evaluated over the variables, whose output is read as YAML (1.1, so `yes`
//! and `on` are booleans) into a JSON value. Templates are parsed once per render.

use std::collections::HashMap;

use serde_json::Value;
use topograph_gocompat::strconv::quote;
use topograph_gotemplate::{Data, Options, Template};

/// Parsed templates by text, so a template used for many items is parsed once.
#[derive(Default)]
pub struct TemplateCache {
    parsed: HashMap<String, Result<Template, String>>,
}

impl TemplateCache {
    fn get(&mut self, text: &str) -> Result<&Template, String> {
        self.parsed
            .entry(text.to_string())
            .or_insert_with(|| {
                crate::template_cache::parse("tpl", text, &Options::patch())
                    .map_err(|e| format!("failed to parse template: {}: {e}", quote(text)))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Renders `text` with `data` and reads the output as YAML.
    pub fn render(&mut self, text: &str, data: &Data<'_>) -> Result<Value, String> {
        let template = self.get(text)?;
        let rendered = template
            .execute_data(data)
            .map_err(|e| format!("failed to render template: {}: {e}", quote(text)))?;
        yaml_to_json(&rendered).map_err(|e| {
            format!(
                "failed to unmarshal rendered template: {}: {e}",
                quote(&rendered)
            )
        })
    }
}

/// Reads rendered output as Kubernetes' YAML reader does: empty output is `null`.
pub fn yaml_to_json(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    let docs =
        serde_saphyr::from_multiple_with_options::<Value>(text, yaml_options()).map_err(|e| {
            let message = e.to_string();
            message.lines().next().unwrap_or_default().to_string()
        })?;
    let mut value = docs.into_iter().next().unwrap_or(Value::Null);
    integral_floats_to_integers(&mut value);
    Ok(value)
}

/// Go's YAML 1.1 reader: `010` is octal, a repeated key keeps its last value.
fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.legacy_octal_numbers = true;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    options
}

/// Kubernetes' YAML reader writes a float with no fraction as an integer (`1.0` and
/// `1e3` become `1` and `1000`); the YAML parser here keeps them floats.
fn integral_floats_to_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_to_integers),
        Value::Object(map) => map.values_mut().for_each(integral_floats_to_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn output_is_read_as_yaml_1_1() {
        let cases = [
            ("true", json!(true)),
            (" yes\n", json!(true)),
            ("on", json!(true)),
            ("\"true\"", json!("true")),
            ("1", json!(1)),
            ("", Value::Null),
            ("- 3\n- 4", json!([3, 4])),
            (
                "local:\n  imageTag: 3.5\n",
                json!({"local": {"imageTag": 3.5}}),
            ),
            ("<no value>", json!("<no value>")),
            (
                "a: 1e3\nd: 1.0\ne: ~\ng: .5\nh: +1\n",
                json!({"a": 1000, "d": 1, "e": null, "g": 0.5, "h": 1}),
            ),
            (
                "local:\n  imageTag: \n",
                json!({"local": {"imageTag": null}}),
            ),
            ("a\n---\nb", json!("a")),
            ("kindest/node:v1.30.0", json!("kindest/node:v1.30.0")),
        ];
        for (text, want) in cases {
            assert_eq!(yaml_to_json(text), Ok(want), "{text:?}");
        }
        assert!(yaml_to_json("a: b: c").is_err());
    }
}
