//! The `RolloutPolicy` of a ClusterClass: read from its object with every problem named
//! by its field path, and checked against the class's Clusters (a selector matching
//! nothing, waves selecting the same Cluster).
//!
//! ```yaml
//! apiVersion: topograph.io/v1alpha1
//! kind: RolloutPolicy
//! metadata: {name: quick-start, namespace: default}   # the class's name and namespace
//! spec:
//!   waves:
//!   - {name: canary, selector: {matchLabels: {canary: "true"}}}
//!   - {name: some, percent: 10}       # 10% of the class's Clusters moved by its end
//!   - {name: all, percent: 100}       # the last wave moves everyone
//!   maxRolling: 5                     # moved Clusters not yet past their gate, at most
//!   soak: 30s                         # after a wave passed, before the next opens
//!   healthDeadline: 10m               # a moved Cluster passes its gate within this
//!   paused: false
//!   abortRevision: ""                 # the target revision to abort (moved Clusters go back)
//!   resumeAt: ""                      # RFC 3339; later than a halt: the rollout goes on
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;
use topograph_api::field::{ErrorType, FieldError};
use topograph_runtime::config::LabelSelector;

/// One wave.
#[derive(Clone, Debug, PartialEq)]
pub struct Wave {
    /// Its name, unique in the policy.
    pub name: String,
    /// Only Clusters with these labels.
    pub selector: Option<LabelSelector>,
    /// The share of the class's Clusters moved once this wave is done (over all waves so
    /// far), 1 to 100.
    pub percent: Option<u32>,
}

/// A policy as its spec says.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Namespace (the class's).
    pub namespace: String,
    /// Name (the class's).
    pub name: String,
    /// The waves, in order.
    pub waves: Vec<Wave>,
    /// Moved Clusters that have not passed their gate yet, at most.
    pub max_rolling: u32,
    /// How long a passed wave waits before the next one opens.
    pub soak: Duration,
    /// How long a moved Cluster has to pass its gate.
    pub health_deadline: Duration,
    /// No Cluster is moved while paused.
    pub paused: bool,
    /// The target revision to abort.
    pub abort_revision: String,
    /// A halted rollout goes on when this is later than the halt (RFC 3339).
    pub resume_at: String,
}

/// The defaults of the optional fields.
pub const DEFAULT_MAX_ROLLING: u32 = 1;
/// A moved Cluster has ten minutes to pass its gate unless the policy says otherwise.
pub const DEFAULT_HEALTH_DEADLINE: Duration = Duration::from_secs(600);

const WAVE_FIELDS: &[&str] = &["name", "selector", "percent"];
const SPEC_FIELDS: &[&str] = &[
    "waves",
    "maxRolling",
    "soak",
    "healthDeadline",
    "paused",
    "abortRevision",
    "resumeAt",
];

/// Reads a policy object, reporting every problem with its field path.
pub fn parse(object: &Value) -> Result<Policy, Vec<FieldError>> {
    let (policy, errors) = read(object);
    if errors.is_empty() {
        Ok(policy)
    } else {
        Err(errors)
    }
}

/// The policy as far as it reads (defaults where a field is wrong), and its problems.
fn read(object: &Value) -> (Policy, Vec<FieldError>) {
    let mut errors = Vec::new();
    let meta = |f: &str| {
        object
            .pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let empty = serde_json::Map::new();
    let spec = match object.get("spec") {
        Some(Value::Object(spec)) => spec,
        None => {
            errors.push(FieldError::required("spec.waves", "a policy needs waves"));
            &empty
        }
        Some(other) => {
            errors.push(type_error("spec", other, "object"));
            &empty
        }
    };
    unknown_fields(spec, SPEC_FIELDS, "spec", &mut errors);
    let waves = match spec.get("waves") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| wave(item, &format!("spec.waves[{i}]"), &mut errors))
            .collect(),
        Some(Value::Array(_)) | None if object.get("spec").is_some() => {
            errors.push(FieldError::required(
                "spec.waves",
                "a policy needs at least one wave",
            ));
            Vec::new()
        }
        Some(Value::Array(_)) | None => Vec::new(),
        Some(other) => {
            errors.push(type_error("spec.waves", other, "array"));
            Vec::new()
        }
    };
    let max_rolling = match spec.get("maxRolling") {
        None | Some(Value::Null) => DEFAULT_MAX_ROLLING,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=u64::from(u32::MAX)).contains(&n) => n as u32,
            _ => {
                errors.push(FieldError::new(
                    "spec.maxRolling",
                    ErrorType::Invalid,
                    Some(v.to_string()),
                    "must be an integer of at least 1",
                ));
                DEFAULT_MAX_ROLLING
            }
        },
    };
    let soak = duration(spec, "soak", Duration::ZERO, &mut errors);
    let health_deadline = duration(spec, "healthDeadline", DEFAULT_HEALTH_DEADLINE, &mut errors);
    if health_deadline.is_zero() {
        errors.push(FieldError::invalid(
            "spec.healthDeadline",
            "0s",
            "must be longer than 0s",
        ));
    }
    let paused = match spec.get("paused") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            errors.push(type_error("spec.paused", other, "boolean"));
            false
        }
    };
    let text = |field: &str, errors: &mut Vec<FieldError>| match spec.get(field) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            errors.push(type_error(&format!("spec.{field}"), other, "string"));
            String::new()
        }
    };
    let abort_revision = text("abortRevision", &mut errors);
    let resume_at = text("resumeAt", &mut errors);
    if !resume_at.is_empty() && resume_at.parse::<k8s_openapi::jiff::Timestamp>().is_err() {
        errors.push(FieldError::invalid(
            "spec.resumeAt",
            &resume_at,
            "must be an RFC 3339 time",
        ));
    }
    check_waves(&waves, &mut errors);
    let policy = Policy {
        namespace: meta("namespace"),
        name: meta("name"),
        waves,
        max_rolling,
        soak,
        health_deadline,
        paused,
        abort_revision,
        resume_at,
    };
    (policy, errors)
}

fn type_error(path: &str, value: &Value, expected: &str) -> FieldError {
    FieldError::new(
        path,
        ErrorType::TypeInvalid,
        Some(value.to_string()),
        format!("must be of type {expected}"),
    )
}

fn unknown_fields(
    object: &serde_json::Map<String, Value>,
    known: &[&str],
    at: &str,
    errors: &mut Vec<FieldError>,
) {
    for field in object.keys().filter(|k| !known.contains(&k.as_str())) {
        errors.push(FieldError::new(
            format!("{at}.{field}"),
            ErrorType::Invalid,
            None,
            "field not declared in schema",
        ));
    }
}

fn duration(
    spec: &serde_json::Map<String, Value>,
    field: &str,
    default: Duration,
    errors: &mut Vec<FieldError>,
) -> Duration {
    match spec.get(field) {
        None | Some(Value::Null) => default,
        Some(Value::String(text)) => match topograph_api::duration::Duration::parse(text) {
            Ok(d) if d.as_nanos() >= 0 => Duration::from_nanos(d.as_nanos() as u64),
            Ok(_) => {
                errors.push(FieldError::invalid(
                    format!("spec.{field}"),
                    text,
                    "must not be negative",
                ));
                default
            }
            Err(e) => {
                errors.push(FieldError::invalid(
                    format!("spec.{field}"),
                    text,
                    e.to_string(),
                ));
                default
            }
        },
        Some(other) => {
            errors.push(type_error(&format!("spec.{field}"), other, "string"));
            default
        }
    }
}

fn wave(item: &Value, at: &str, errors: &mut Vec<FieldError>) -> Option<Wave> {
    let Some(fields) = item.as_object() else {
        errors.push(type_error(at, item, "object"));
        return None;
    };
    unknown_fields(fields, WAVE_FIELDS, at, errors);
    let name = match fields.get("name") {
        Some(Value::String(name)) if !name.is_empty() => {
            for problem in topograph_variables::labels::label_value(name) {
                errors.push(FieldError::invalid(format!("{at}.name"), name, problem));
            }
            name.clone()
        }
        Some(Value::String(_)) | None => {
            errors.push(FieldError::required(format!("{at}.name"), ""));
            String::new()
        }
        Some(other) => {
            errors.push(type_error(&format!("{at}.name"), other, "string"));
            String::new()
        }
    };
    let selector = match fields.get("selector") {
        None | Some(Value::Null) => None,
        Some(value) => match serde_json::from_value::<LabelSelector>(value.clone()) {
            Ok(selector) => {
                if let Err(problem) = topograph_runtime::selector::validate(&selector) {
                    errors.push(FieldError::new(
                        format!("{at}.selector"),
                        ErrorType::Invalid,
                        Some(value.to_string()),
                        problem,
                    ));
                }
                if topograph_runtime::selector::is_empty(Some(&selector)) {
                    errors.push(FieldError::new(
                        format!("{at}.selector"),
                        ErrorType::Invalid,
                        Some(value.to_string()),
                        "an empty selector selects every Cluster: leave it out and use percent",
                    ));
                }
                Some(selector)
            }
            Err(e) => {
                errors.push(FieldError::new(
                    format!("{at}.selector"),
                    ErrorType::Invalid,
                    Some(value.to_string()),
                    format!("not a label selector: {e}"),
                ));
                None
            }
        },
    };
    let percent = match fields.get("percent") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(p) if (1..=100).contains(&p) => Some(p as u32),
            _ => {
                errors.push(FieldError::new(
                    format!("{at}.percent"),
                    ErrorType::Invalid,
                    Some(v.to_string()),
                    "must be an integer from 1 to 100",
                ));
                None
            }
        },
    };
    if !fields.contains_key("selector") && !fields.contains_key("percent") {
        errors.push(FieldError::required(
            at.to_string(),
            "a wave needs a selector, a percent, or both",
        ));
    }
    Some(Wave {
        name,
        selector,
        percent,
    })
}

/// Rules over the waves together: unique names, percentages that grow, and a last wave
/// that moves everyone.
fn check_waves(waves: &[Wave], errors: &mut Vec<FieldError>) {
    let mut names = BTreeSet::new();
    let mut previous: Option<(usize, u32)> = None;
    for (i, wave) in waves.iter().enumerate() {
        if !wave.name.is_empty() && !names.insert(wave.name.as_str()) {
            errors.push(FieldError::new(
                format!("spec.waves[{i}].name"),
                ErrorType::Duplicate,
                Some(topograph_api::field::go_quote(&wave.name)),
                "",
            ));
        }
        if let Some(percent) = wave.percent {
            if let Some((j, before)) = previous
                && percent <= before
            {
                errors.push(FieldError::new(
                    format!("spec.waves[{i}].percent"),
                    ErrorType::Invalid,
                    Some(percent.to_string()),
                    format!(
                        "must be greater than the {before} of spec.waves[{j}].percent: percentages count the Clusters moved over all waves so far"
                    ),
                ));
            }
            previous = Some((i, percent));
        }
    }
    if let Some(last) = waves.last() {
        let i = waves.len() - 1;
        if last.percent != Some(100) || last.selector.is_some() {
            errors.push(FieldError::new(
                format!("spec.waves[{i}]"),
                ErrorType::Invalid,
                None,
                "the last wave must move every Cluster: percent 100 and no selector",
            ));
        }
    }
}

/// A Cluster of the class, as waves select it: `namespace/name` and its labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// `namespace/name`.
    pub key: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
}

impl Wave {
    /// Whether the wave may take `member` (its selector, if any, matches).
    pub fn selects(&self, member: &Member) -> bool {
        self.selector
            .as_ref()
            .is_none_or(|s| topograph_runtime::selector::matches(s, &member.labels))
    }
}

/// Rules that need the class's Clusters: a wave's selector must match one of them, and
/// no Cluster may be matched by two selectors (which wave would move it?).
pub fn check_against(policy: &Policy, clusters: &[Member]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut taken: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, wave) in policy.waves.iter().enumerate() {
        if wave.selector.is_none() {
            continue;
        }
        let selected: Vec<&Member> = clusters.iter().filter(|c| wave.selects(c)).collect();
        if selected.is_empty() {
            errors.push(FieldError::new(
                format!("spec.waves[{i}].selector"),
                ErrorType::Invalid,
                None,
                format!(
                    "selects no Cluster of ClusterClass {}/{}",
                    policy.namespace, policy.name
                ),
            ));
        }
        for member in selected {
            match taken.get(member.key.as_str()) {
                Some(&j) => {
                    errors.push(FieldError::new(
                        format!("spec.waves[{i}].selector"),
                        ErrorType::Invalid,
                        None,
                        format!(
                            "selects Cluster {}, which spec.waves[{j}].selector ({:?}) selects too: waves must not overlap",
                            member.key, policy.waves[j].name
                        ),
                    ));
                    break;
                }
                None => {
                    taken.insert(member.key.as_str(), i);
                }
            }
        }
    }
    errors
}

/// [`parse`] and [`check_against`] (over the waves that read): what admission refuses,
/// every problem at once.
pub fn admit(object: &Value, clusters: &[Member]) -> Result<Policy, Vec<FieldError>> {
    let (policy, mut errors) = read(object);
    errors.extend(check_against(&policy, clusters));
    if errors.is_empty() {
        Ok(policy)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(spec: Value) -> Value {
        json!({
            "apiVersion": super::super::API_VERSION, "kind": "RolloutPolicy",
            "metadata": {"name": "quick-start", "namespace": "default"},
            "spec": spec,
        })
    }

    fn member(name: &str, labels: &[(&str, &str)]) -> Member {
        Member {
            key: format!("default/{name}"),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn texts(result: Result<Policy, Vec<FieldError>>) -> Vec<String> {
        match result {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn a_full_policy_reads_with_its_defaults() {
        let read = parse(&policy(json!({"waves": [
            {"name": "canary", "selector": {"matchLabels": {"canary": "true"}}},
            {"name": "ten", "percent": 10},
            {"name": "all", "percent": 100},
        ], "maxRolling": 5, "soak": "30s"})));
        let Ok(read) = read else {
            panic!("refused: {read:?}")
        };
        assert_eq!(read.waves.len(), 3);
        assert_eq!(read.max_rolling, 5);
        assert_eq!(read.soak, Duration::from_secs(30));
        assert_eq!(read.health_deadline, DEFAULT_HEALTH_DEADLINE);
        assert!(!read.paused);
        assert_eq!(
            (read.namespace.as_str(), read.name.as_str()),
            ("default", "quick-start")
        );
    }

    #[test]
    fn bad_specs_are_refused_with_field_paths() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                json!({}),
                vec!["spec.waves: Required value: a policy needs at least one wave"],
            ),
            (
                json!({"waves": [{"name": "a", "percent": 50}, {"name": "b", "percent": 30}, {"name": "c", "percent": 100}]}),
                vec![
                    "spec.waves[1].percent: Invalid value: 30: must be greater than the 50 of spec.waves[0].percent: percentages count the Clusters moved over all waves so far",
                ],
            ),
            (
                json!({"waves": [{"name": "a", "percent": 50}]}),
                vec![
                    "spec.waves[0]: Invalid value: the last wave must move every Cluster: percent 100 and no selector",
                ],
            ),
            (
                json!({"waves": [{"name": "a", "percent": 0}, {"name": "b", "percent": 100}]}),
                vec!["spec.waves[0].percent: Invalid value: 0: must be an integer from 1 to 100"],
            ),
            (
                json!({"waves": [{"name": "a"}, {"name": "b", "percent": 100}]}),
                vec!["spec.waves[0]: Required value: a wave needs a selector, a percent, or both"],
            ),
            (
                json!({"waves": [{"name": "a", "percent": 10}, {"name": "a", "percent": 100}]}),
                vec!["spec.waves[1].name: Duplicate value: \"a\""],
            ),
            (
                json!({"waves": [{"name": "all", "percent": 100}], "maxRolling": 0, "soak": "soon", "colour": 1}),
                vec![
                    "spec.colour: Invalid value: field not declared in schema",
                    "spec.maxRolling: Invalid value: 0: must be an integer of at least 1",
                    "spec.soak: Invalid value: \"soon\": time: invalid duration \"soon\"",
                ],
            ),
            (
                json!({"waves": [{"name": "c", "selector": {"matchExpressions": [{"key": "x", "operator": "In"}]}}, {"name": "all", "percent": 100}]}),
                vec![
                    "spec.waves[0].selector: Invalid value: {\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\"}]}: for 'in', 'notin' operators, values set can't be empty (key \"x\")",
                ],
            ),
            (
                json!({"waves": [{"name": "all", "percent": 100}], "resumeAt": "yesterday", "healthDeadline": "0s"}),
                vec![
                    "spec.healthDeadline: Invalid value: \"0s\": must be longer than 0s",
                    "spec.resumeAt: Invalid value: \"yesterday\": must be an RFC 3339 time",
                ],
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(texts(parse(&policy(spec.clone()))), want, "{spec}");
        }
    }

    #[test]
    fn selectors_must_match_a_cluster_and_not_overlap() {
        let clusters = [
            member("a", &[("canary", "true"), ("region", "eu")]),
            member("b", &[("region", "eu")]),
            member("c", &[]),
        ];
        let spec = |waves: Value| policy(json!({ "waves": waves }));
        let ok = spec(json!([
            {"name": "canary", "selector": {"matchLabels": {"canary": "true"}}},
            {"name": "all", "percent": 100},
        ]));
        assert_eq!(texts(admit(&ok, &clusters)), Vec::<String>::new());
        let nothing = spec(json!([
            {"name": "canary", "selector": {"matchLabels": {"canary": "false"}}},
            {"name": "all", "percent": 100},
        ]));
        assert_eq!(
            texts(admit(&nothing, &clusters)),
            [
                "spec.waves[0].selector: Invalid value: selects no Cluster of ClusterClass default/quick-start"
            ]
        );
        let overlap = spec(json!([
            {"name": "canary", "selector": {"matchLabels": {"canary": "true"}}},
            {"name": "eu", "selector": {"matchLabels": {"region": "eu"}}},
            {"name": "all", "percent": 100},
        ]));
        assert_eq!(
            texts(admit(&overlap, &clusters)),
            [
                "spec.waves[1].selector: Invalid value: selects Cluster default/a, which spec.waves[0].selector (\"canary\") selects too: waves must not overlap"
            ]
        );
    }
}
