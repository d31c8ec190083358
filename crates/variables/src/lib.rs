//! ClusterClass variables: schemas in Cluster API's dialect, validation of values
//! with its error texts and field paths, the unknown-field check, CEL rules,
//! defaulting, and the Cluster-level rules (duplicates, conflicting definitions,
//! required variables).
//!
//! The validator is our own rendition of the Kubernetes CRD machinery Cluster API
//! runs (see `docs/decisions/0004-variable-schema-validation.md`): its messages are
//! part of the contract.

mod cel;
pub mod check;
mod cluster;
pub mod crd;
mod defaulting;
pub mod definitions;
pub mod dialect;
mod fieldpath;
pub mod formats;
mod godecode;
mod goregex;
pub mod json;
pub mod labels;
pub mod openapi;
mod prune;
mod ratchet;
mod report;
pub mod resource;
pub mod schema;
mod schema_cache;
mod structural;
pub mod value;

use serde_json::Value;
use topograph_api::field::FieldError;
use topograph_api::model::{Variable, VariableDefinition};

pub use cluster::{BUILTIN, same_schema};

/// Where a list of variable values lives, for field paths and the rules that differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// `spec.topology.variables`: required variables are enforced, missing ones with
    /// a top-level default are created.
    Cluster,
    /// `spec.topology.controlPlane.variables.overrides`.
    ControlPlane,
    /// `spec.topology.workers.machineDeployments[<name>].variables.overrides`.
    MachineDeployment(&'a str),
    /// `spec.topology.workers.machinePools[<name>].variables.overrides`.
    MachinePool(&'a str),
}

impl Scope<'_> {
    /// The field path of the list.
    pub fn path(&self) -> String {
        match self {
            Scope::Cluster => "spec.topology.variables".to_string(),
            Scope::ControlPlane => "spec.topology.controlPlane.variables.overrides".to_string(),
            Scope::MachineDeployment(n) => {
                format!("spec.topology.workers.machineDeployments[{n}].variables.overrides")
            }
            Scope::MachinePool(n) => {
                format!("spec.topology.workers.machinePools[{n}].variables.overrides")
            }
        }
    }
}

/// Defaults `values` against `definitions` (spec 5.3): existing values in their order,
/// defaulted; then, in [`Scope::Cluster`] only, definitions (by name) not yet present
/// whose schema has a top-level `default` are created. Values come back re-serialized
/// as Go's `encoding/json` writes them (object keys sorted).
pub fn default_variables(
    values: &[Variable],
    definitions: &[VariableDefinition],
    scope: Scope<'_>,
) -> Result<Vec<Variable>, Vec<FieldError>> {
    cluster::default_variables(values, definitions, scope)
}

/// Validates `values` against `definitions` (spec 5.4): duplicates, conflicting
/// definitions, required variables (Cluster scope only), then each value (unknown
/// name, OpenAPI validation, unknown fields, CEL). `old` holds the previous values
/// for transition rules (`oldSelf`), when there is a previous Cluster.
pub fn validate_variables(
    values: &[Variable],
    old: Option<&[Variable]>,
    definitions: &[VariableDefinition],
    scope: Scope<'_>,
) -> Vec<FieldError> {
    #[cfg(feature = "validation-count")]
    VALIDATIONS.with(|n| n.set(n.get() + 1));
    cluster::validate_variables(values, old, definitions, scope)
}

#[cfg(feature = "validation-count")]
thread_local! {
    static VALIDATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many variable lists [`validate_variables`] has checked on this thread (with the
/// `validation-count` feature, which only tests turn on): lets a
/// test see that one request validates a Cluster's values once, not once per stage
/// (validation runs CEL and is the costly part of admission).
#[cfg(feature = "validation-count")]
pub fn validations_on_this_thread() -> u64 {
    VALIDATIONS.with(std::cell::Cell::get)
}

/// Problems with a class's variable definitions, paths under `spec.variables[<name>]`.
/// `old` are the definitions of the class before an update (None on create): CEL
/// expressions already present there are compiled with the newest environment and skip
/// the stricter checks that only new rules get.
pub fn validate_definitions(
    definitions: &[VariableDefinition],
    old: Option<&[VariableDefinition]>,
) -> Vec<FieldError> {
    let new: Vec<definitions::RawDefinition> = definitions.iter().map(Into::into).collect();
    let old: Option<Vec<definitions::RawDefinition>> =
        old.map(|o| o.iter().map(Into::into).collect());
    definitions::validate(&new, old.as_deref())
}

/// Validates one value against one schema, reporting at `path`
/// (`spec.topology.variables[name]`; the value's own errors are under `<path>.value`).
pub fn validate_value(
    schema: &Value,
    name: &str,
    value: &Value,
    old: Option<&Value>,
    path: &str,
) -> Vec<FieldError> {
    cluster::validate_value(schema, name, value, old, path)
}

/// Defaults one top-level variable: `value` `None` means "not set", and then the
/// variable is only created from the schema's own `default` (`Ok(None)` otherwise).
/// Errors are reported at `path` (`spec.topology.variables[name]`).
pub fn default_value(
    schema: &Value,
    name: &str,
    value: Option<&Value>,
    path: &str,
) -> Result<Option<Value>, Vec<FieldError>> {
    let subject = check::Subject {
        name,
        at: (!path.is_empty()).then(|| path.to_string()),
    };
    let schema = json::from_serde(schema);
    let value = value.map(json::from_serde);
    match check::default_variable(Some(&schema), &subject, value.as_ref()) {
        check::Defaulted::Absent => Ok(None),
        check::Defaulted::Value(text) => Ok(serde_json::from_str(&text).ok()),
        check::Defaulted::Invalid(_, errors) => Err(errors),
        check::Defaulted::Undecodable(e) => Err(vec![cluster::undecodable(&subject, &e)]),
    }
}

/// Validates `value` against a plain `apiextensions.k8s.io/v1` schema (CRD semantics:
/// kube-openapi's detail texts, each error's own bad value), reporting under `path`
/// (empty: no path). `Err` when the schema itself cannot be used.
pub fn validate_crd(schema: &Value, value: &Value, path: &str) -> Result<Vec<FieldError>, String> {
    let schema = json::from_serde(schema);
    let value = json::from_serde(value);
    let path = (!path.is_empty()).then_some(path);
    check::crd_request(Some(&schema), Some(&value), path).map_err(|(_, e)| e)
}
