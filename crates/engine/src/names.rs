//! Names of generated objects.
//!
//! The formats are Cluster API's (`<cluster>-<5 chars>`, `<cluster>-<md>-<5 chars>`,
//! the same 27-letter alphabet, a 58-character base when a name would exceed 63), but
//! the 5 characters come from a hash of stable inputs instead of a random source, so
//! rendering is a pure function and a retried create can never leak a second object.
//! See `docs/decisions/0001-deterministic-name-suffixes.md`.

use serde_json::Value;
use sha2::{Digest, Sha256};
use topograph_api::object::set_at;
use topograph_api::server::{NAME_SUFFIX_ALPHABET as ALPHABET, NAME_SUFFIX_LEN};
use topograph_gotemplate::Options;

use crate::template_cache;

/// Length of the suffix: the API server's for `generateName`.
pub const SUFFIX_LEN: usize = NAME_SUFFIX_LEN;
/// Longest object name.
pub const MAX_NAME_LEN: usize = 63;
/// Longest base a suffix is appended to.
pub const MAX_GENERATED_BASE_LEN: usize = MAX_NAME_LEN - SUFFIX_LEN;

/// A 5-character suffix derived from `parts`. Parts are length-prefixed before
/// hashing, so `["ab", "c"]` and `["a", "bc"]` differ.
pub fn suffix(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    digest
        .iter()
        .take(SUFFIX_LEN)
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// The first `max` bytes of `s`, cut back to a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Cluster API's simple name generator: the prefix (cut to 58) and a suffix.
pub fn simple(prefix: &str, suffix: &str) -> String {
    format!("{}{suffix}", truncate(prefix, MAX_GENERATED_BASE_LEN))
}

/// Why a naming template could not be used; the texts are Cluster API's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameTemplateError {
    /// The template does not parse.
    #[error("parsing template {template:?}: {reason}")]
    Parse {
        /// The template.
        template: String,
        /// Go's parse error.
        reason: String,
    },
    /// Evaluation failed (a missing key, since `missingkey=error` is on).
    #[error("rendering template: {reason}")]
    Render {
        /// Go's execution error.
        reason: String,
    },
}

/// Data a naming template sees: `.cluster.name`, `.random`, and for pools
/// `.machineDeployment.topologyName` / `.machinePool.topologyName`.
#[derive(Clone, Debug, Default)]
pub struct NameData {
    value: Value,
}

impl NameData {
    /// Data with `.cluster.name` and `.random`.
    pub fn new(cluster_name: &str, random: &str) -> Self {
        NameData::default()
            .with("cluster.name", cluster_name)
            .with("random", random)
    }

    /// Adds a dotted field, e.g. `machineDeployment.topologyName`.
    pub fn with(mut self, field: &str, value: &str) -> Self {
        let path: Vec<&str> = field.split('.').collect();
        set_at(&mut self.value, &path, Value::String(value.to_string()));
        self
    }
}

/// Renders a naming template as Cluster API does: Go's `text/template` without Sprig,
/// with `missingkey=error`.
///
/// A result longer than 63 characters is cut to 58 and given `overflow_suffix()`, as
/// Cluster API does (with a fresh suffix rather than `.random`); it is only computed
/// then.
pub fn render_template(
    template: &str,
    data: &NameData,
    overflow_suffix: impl FnOnce() -> String,
) -> Result<String, NameTemplateError> {
    let parsed = template_cache::parse(
        "template name generator",
        template,
        &Options::name_generator(),
    )
    .map_err(|e| NameTemplateError::Parse {
        template: template.to_string(),
        reason: e.message,
    })?;
    let out = parsed
        .execute(&data.value)
        .map_err(|e| NameTemplateError::Render { reason: e.message })?;
    if out.len() > MAX_NAME_LEN {
        return Ok(simple(&out, &overflow_suffix()));
    }
    Ok(out)
}

/// Checks a name against RFC 1123 subdomain rules (what object names must be);
/// returns the problem, if any.
pub fn dns1123_subdomain_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("must not be empty".to_string());
    }
    if name.len() > 253 {
        return Some("must be no more than 253 characters".to_string());
    }
    let valid_label = |label: &str| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.split('.').all(valid_label) {
        None
    } else {
        Some(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
                .to_string(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_uses_the_kubernetes_alphabet_and_is_stable() {
        let s = suffix(&["ns", "c1", "ControlPlane"]);
        assert_eq!(s.len(), 5);
        assert!(s.bytes().all(|b| ALPHABET.contains(&b)));
        assert_eq!(s, suffix(&["ns", "c1", "ControlPlane"]));
        assert_ne!(s, suffix(&["ns", "c1", "InfrastructureCluster"]));
        assert_ne!(suffix(&["ab", "c"]), suffix(&["a", "bc"]));
    }

    #[test]
    fn simple_names_cut_the_prefix_at_58() {
        assert_eq!(simple("c1-", "abcde"), "c1-abcde");
        let long = "x".repeat(70);
        let name = simple(&long, "abcde");
        assert_eq!(name.len(), 63);
        assert_eq!(&name[58..], "abcde");
    }

    #[test]
    fn name_templates_render_like_cluster_api() {
        let md = NameData::new("c1", "rrrrr").with("machineDeployment.topologyName", "md-0");
        // (template, expected)
        let cases = [
            ("{{ .cluster.name }}-{{ .random }}", "c1-rrrrr"),
            (
                "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}",
                "c1-md-0-rrrrr",
            ),
            ("{{.cluster.name}}-workers", "c1-workers"),
            ("prefix- {{- .cluster.name -}} -x", "prefix-c1-x"),
            ("static", "static"),
        ];
        for (template, want) in cases {
            assert_eq!(
                render_template(template, &md, || "zzzzz".into()).unwrap(),
                want,
                "{template}"
            );
        }
    }

    #[test]
    fn long_template_output_is_cut_and_suffixed() {
        let data = NameData::new(&"c".repeat(40), "rrrrr");
        let name = render_template("{{ .cluster.name }}-{{ .cluster.name }}", &data, || {
            "zzzzz".into()
        })
        .unwrap();
        assert_eq!(name.len(), 63);
        assert!(name.ends_with("zzzzz"));
        // Exactly 63 characters is kept as is.
        let data = NameData::new(&"c".repeat(63), "r");
        assert_eq!(
            render_template("{{ .cluster.name }}", &data, || "zzzzz".into()).unwrap(),
            "c".repeat(63)
        );
    }

    #[test]
    fn name_template_errors() {
        let data = NameData::new("c1", "rrrrr");
        assert_eq!(
            render_template("{{ .cluster.name }}-{{ .nope }}", &data, || "z".into())
                .unwrap_err()
                .to_string(),
            "rendering template: template: template name generator:1:23: executing \"template name generator\" at <.nope>: map has no entry for key \"nope\""
        );
        assert_eq!(
            render_template("{{ .cluster.nope }}", &data, || "z".into())
                .unwrap_err()
                .to_string(),
            "rendering template: template: template name generator:1:11: executing \"template name generator\" at <.cluster.nope>: map has no entry for key \"nope\""
        );
        assert!(matches!(
            render_template("{{ .cluster.name", &data, || "z".into()),
            Err(NameTemplateError::Parse { .. })
        ));
        assert_eq!(
            render_template("{{ .cluster.name", &data, || "z".into())
                .unwrap_err()
                .to_string(),
            "parsing template \"{{ .cluster.name\": template: template name generator:1: unclosed action"
        );
        // The whole language is there, without Sprig.
        assert_eq!(
            render_template("{{ printf \"%s-x\" .random }}", &data, || "z".into()),
            Ok("rrrrr-x".to_string())
        );
        assert!(matches!(
            render_template("{{ .random | upper }}", &data, || "z".into()),
            Err(NameTemplateError::Parse { .. })
        ));
    }

    #[test]
    fn dns_subdomain_rules() {
        assert_eq!(dns1123_subdomain_problem("c1-md-0-abcde"), None);
        assert_eq!(dns1123_subdomain_problem("a.b"), None);
        assert!(dns1123_subdomain_problem("-a").is_some());
        assert!(dns1123_subdomain_problem("A").is_some());
        assert!(dns1123_subdomain_problem("a..b").is_some());
        assert!(dns1123_subdomain_problem("").is_some());
    }
}
