//! Rendering `enabledIf` and `valueFrom.template`: a Go template with Sprig's hermetic
//! functions, evaluated over the variables, whose output is read as YAML the way Cluster
//! API reads it ([`super::yaml`]) into a JSON value. Templates are parsed once per render.

use serde_json::Value;
use topograph_gocompat::strconv::quote;
use topograph_gotemplate::{Data, Options, Template};

use topograph_gocompat::yaml::yaml_to_json_remembered;

/// Parsed templates by text, so a template used for many items is parsed once. A
/// class has few template texts: a list finds one sooner than a hash map hashes it.
#[derive(Default)]
pub struct TemplateCache {
    parsed: Vec<(String, Result<Template, String>)>,
}

impl TemplateCache {
    fn get(&mut self, text: &str) -> Result<&Template, String> {
        let at = match self.parsed.iter().position(|(t, _)| t == text) {
            Some(at) => at,
            None => {
                let parsed = crate::template_cache::parse("tpl", text, &Options::patch())
                    .map_err(|e| format!("failed to parse template: {}: {e}", quote(text)));
                self.parsed.push((text.to_string(), parsed));
                self.parsed.len() - 1
            }
        };
        match self.parsed.get(at) {
            Some((_, parsed)) => parsed.as_ref().map_err(Clone::clone),
            None => Err(format!("failed to parse template: {}", quote(text))),
        }
    }

    /// Renders `text` with `data` and reads the output as YAML.
    pub fn render(&mut self, text: &str, data: &Data<'_>) -> Result<Value, String> {
        let template = self.get(text)?;
        let rendered = template
            .execute_data(data)
            .map_err(|e| format!("failed to render template: {}: {e}", quote(text)))?;
        // The same output comes back for every Cluster with the same variables.
        yaml_to_json_remembered(&rendered).map_err(|e| {
            format!(
                "failed to unmarshal rendered template: {}: {e}",
                quote(&rendered)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use topograph_gocompat::yaml::yaml_to_json;

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
