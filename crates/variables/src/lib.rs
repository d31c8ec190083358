//! ClusterClass variables (placeholder API; the implementation lands with issue 3):
//! schemas in Cluster API's dialect, validation of values with its error texts and
//! field paths, and defaulting.

use serde_json::Value;
use topograph_api::field::FieldError;
use topograph_api::model::{Variable, VariableDefinition};

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

/// Defaults `values` against `definitions` (spec 5.3): existing values in order, then
/// variables created from a top-level default (in [`Scope::Cluster`] only).
pub fn default_variables(
    values: &[Variable],
    definitions: &[VariableDefinition],
    scope: Scope<'_>,
) -> Result<Vec<Variable>, Vec<FieldError>> {
    let _ = (definitions, scope);
    Ok(values.to_vec())
}

/// Validates `values` against `definitions` (spec 5.4). `old` holds the previous values
/// for transition rules (`oldSelf`), when there is a previous Cluster.
pub fn validate_variables(
    values: &[Variable],
    old: Option<&[Variable]>,
    definitions: &[VariableDefinition],
    scope: Scope<'_>,
) -> Vec<FieldError> {
    let _ = (values, old, definitions, scope);
    Vec::new()
}

/// Validates one value against one schema, reporting at `path` (`spec.topology.variables[name]`).
pub fn validate_value(
    schema: &Value,
    name: &str,
    value: &Value,
    old: Option<&Value>,
    path: &str,
) -> Vec<FieldError> {
    let _ = (schema, name, value, old, path);
    Vec::new()
}
