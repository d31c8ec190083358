//! Names of generated objects.
//!
//! The formats are Cluster API's (`<cluster>-<5 chars>`, `<cluster>-<md>-<5 chars>`,
//! the same 27-letter alphabet, a 58-character base when a name would exceed 63), but
//! the 5 characters come from a hash of stable inputs instead of a random source, so
//! rendering is a pure function and a retried create can never leak a second object.
//! See `docs/decisions/0001-deterministic-name-suffixes.md`.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

/// Kubernetes' `rand.String` alphabet: no vowels, no `0`, `1` or `3`.
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the suffix.
pub const SUFFIX_LEN: usize = 5;
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

/// Why a naming template could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameTemplateError {
    /// The template does not parse (or uses what naming templates do not support).
    #[error("parsing template {template:?}: {reason}")]
    Parse {
        /// The template.
        template: String,
        /// Why.
        reason: String,
    },
    /// The template refers to data that does not exist.
    #[error(
        "rendering template: template: template name generator: executing \"template name generator\" at <{field}>: map has no entry for key {key:?}"
    )]
    MissingKey {
        /// The field expression, e.g. `.nope`.
        field: String,
        /// The missing key.
        key: String,
    },
}

/// Data a naming template sees: `.cluster.name`, `.random`, and for pools
/// `.machineDeployment.topologyName` / `.machinePool.topologyName`.
#[derive(Clone, Debug, Default)]
pub struct NameData {
    values: BTreeMap<String, String>,
}

impl NameData {
    /// Data with `.cluster.name` and `.random`.
    pub fn new(cluster_name: &str, random: &str) -> Self {
        let mut values = BTreeMap::new();
        values.insert("cluster.name".to_string(), cluster_name.to_string());
        values.insert("random".to_string(), random.to_string());
        NameData { values }
    }

    /// Adds a dotted field, e.g. `machineDeployment.topologyName`.
    pub fn with(mut self, field: &str, value: &str) -> Self {
        self.values.insert(field.to_string(), value.to_string());
        self
    }

    /// Whether `path` names a map (a prefix of some field) rather than a value.
    fn is_map(&self, path: &str) -> bool {
        let prefix = format!("{path}.");
        self.values.keys().any(|k| k.starts_with(&prefix))
    }
}

/// Renders a naming template: literal text and `{{ .field.path }}` actions with the
/// `{{-`/`-}}` trim markers. Other template constructs are reported as unsupported.
///
/// A result longer than 63 characters is cut to 58 and given `overflow_suffix()`, as
/// Cluster API does (with a fresh suffix rather than `.random`); it is only computed
/// then.
pub fn render_template(
    template: &str,
    data: &NameData,
    overflow_suffix: impl FnOnce() -> String,
) -> Result<String, NameTemplateError> {
    let parse_err = |reason: &str| NameTemplateError::Parse {
        template: template.to_string(),
        reason: reason.to_string(),
    };
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let mut literal = &rest[..start];
        let mut action = &rest[start + 2..];
        if let Some(a) = action.strip_prefix('-')
            && a.starts_with([' ', '\t', '\n', '\r'])
        {
            literal = literal.trim_end();
            action = a;
        }
        out.push_str(literal);
        let end = action
            .find("}}")
            .ok_or_else(|| parse_err("template: template name generator:1: unclosed action"))?;
        let mut body = &action[..end];
        let mut after = &action[end + 2..];
        if let Some(b) = body.strip_suffix('-')
            && b.ends_with([' ', '\t', '\n', '\r'])
        {
            body = b;
            after = after.trim_start();
        }
        let field = body.trim();
        let is_field_chain = field.starts_with('.')
            && field.len() > 1
            && field[1..]
                .split('.')
                .all(|seg| !seg.is_empty() && seg.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if !is_field_chain {
            return Err(parse_err(&format!(
                "naming templates support field references such as {{{{ .cluster.name }}}}; {{{{{body}}}}} is not supported"
            )));
        }
        let path = &field[1..];
        match data.values.get(path) {
            Some(value) => out.push_str(value),
            None => {
                // Report the first missing key on the way, as Go's missingkey=error does.
                let segments: Vec<&str> = path.split('.').collect();
                let mut missing = segments[0];
                for i in 1..=segments.len() {
                    let prefix = segments[..i].join(".");
                    if !data.is_map(&prefix) && !data.values.contains_key(&prefix) {
                        missing = segments[i - 1];
                        break;
                    }
                }
                return Err(NameTemplateError::MissingKey {
                    field: field.to_string(),
                    key: missing.to_string(),
                });
            }
        }
        rest = after;
    }
    out.push_str(rest);
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
            "rendering template: template: template name generator: executing \"template name generator\" at <.nope>: map has no entry for key \"nope\""
        );
        assert_eq!(
            render_template("{{ .cluster.nope }}", &data, || "z".into())
                .unwrap_err()
                .to_string(),
            "rendering template: template: template name generator: executing \"template name generator\" at <.cluster.nope>: map has no entry for key \"nope\""
        );
        assert!(matches!(
            render_template("{{ .cluster.name", &data, || "z".into()),
            Err(NameTemplateError::Parse { .. })
        ));
        assert!(matches!(
            render_template("{{ printf \"%s\" .random }}", &data, || "z".into()),
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
