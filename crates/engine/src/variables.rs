//! The Cluster's variable values as patches see them: defaulted from the class's
//! definitions and validated, at the top level and in every override list, before
//! any patch runs (as the topology controller does before each reconcile). When the
//! same render has just admitted the Cluster, its values were validated there and are
//! only defaulted here.

use topograph_api::model::{ClusterClass, Topology, Variable};
use topograph_variables::{Scope, default_variables, validate_variables};

use crate::error::RenderError;
use crate::patches::Values;

/// Defaulted values per scope.
pub struct Resolved {
    cluster: Vec<Variable>,
    control_plane: Vec<Variable>,
    machine_deployments: Vec<Vec<Variable>>,
}

impl Resolved {
    /// Borrowed, in the shape the patch engine reads.
    pub fn as_patch_values(&self) -> Values<'_> {
        Values {
            cluster: &self.cluster,
            control_plane: &self.control_plane,
            machine_deployments: self.machine_deployments.iter().map(Vec::as_slice).collect(),
        }
    }
}

fn resolve_scope(
    values: &[Variable],
    class: &ClusterClass,
    scope: Scope<'_>,
    validate: bool,
    errors: &mut RenderError,
) -> Vec<Variable> {
    match default_variables(values, &class.variables, scope) {
        Ok(defaulted) => {
            if validate {
                for e in validate_variables(&defaulted, None, &class.variables, scope) {
                    errors.push(e.to_string());
                }
            }
            defaulted
        }
        Err(problems) => {
            for e in problems {
                errors.push(e.to_string());
            }
            Vec::new()
        }
    }
}

/// Defaults every variable list of `topology` against `class`, and validates them unless
/// `admitted` says admission has just validated these very values.
pub fn resolve(
    topology: &Topology,
    class: &ClusterClass,
    admitted: bool,
) -> Result<Resolved, RenderError> {
    let validate = !admitted;
    let mut errors = RenderError::default();
    let cluster = resolve_scope(
        &topology.variables,
        class,
        Scope::Cluster,
        validate,
        &mut errors,
    );
    let control_plane = resolve_scope(
        &topology.control_plane.variable_overrides,
        class,
        Scope::ControlPlane,
        validate,
        &mut errors,
    );
    let machine_deployments = topology
        .machine_deployments
        .iter()
        .map(|md| {
            resolve_scope(
                &md.variable_overrides,
                class,
                Scope::MachineDeployment(&md.name),
                validate,
                &mut errors,
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(Resolved {
            cluster,
            control_plane,
            machine_deployments,
        })
    } else {
        Err(errors)
    }
}
