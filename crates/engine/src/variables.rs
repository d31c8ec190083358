//! The Cluster's variable values as patches see them: defaulted from the class's
//! definitions and validated, at the top level and in every override list, before
//! any patch runs, as the topology controller does for objects that bypassed admission.
//! An admitted Cluster's values were defaulted and validated by admission and are used
//! as they are ([`as_given`]).

use topograph_api::model::{ClusterClass, Topology, Variable};
use topograph_variables::{Scope, default_variables, validate_variables};

use crate::error::RenderError;
use crate::patches::Values;

/// Defaulted values per scope.
pub struct Resolved {
    cluster: Vec<Variable>,
    control_plane: Vec<Variable>,
    machine_deployments: Vec<Vec<Variable>>,
    machine_pools: Vec<Vec<Variable>>,
}

impl Resolved {
    /// Borrowed, in the shape the patch engine reads.
    pub fn as_patch_values(&self) -> Values<'_> {
        Values {
            cluster: &self.cluster,
            control_plane: &self.control_plane,
            machine_deployments: self.machine_deployments.iter().map(Vec::as_slice).collect(),
            machine_pools: self.machine_pools.iter().map(Vec::as_slice).collect(),
        }
    }
}

fn resolve_scope(
    values: &[Variable],
    class: &ClusterClass,
    scope: Scope<'_>,
    errors: &mut RenderError,
) -> Vec<Variable> {
    match default_variables(values, &class.variables, scope) {
        Ok(defaulted) => {
            for e in validate_variables(&defaulted, None, &class.variables, scope) {
                errors.push(e.to_string());
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

/// The values of an admitted Cluster's topology, as admission left them.
pub fn as_given(topology: &Topology) -> Values<'_> {
    Values {
        cluster: &topology.variables,
        control_plane: &topology.control_plane.variable_overrides,
        machine_deployments: topology
            .machine_deployments
            .iter()
            .map(|md| md.variable_overrides.as_slice())
            .collect(),
        machine_pools: topology
            .machine_pools
            .iter()
            .map(|mp| mp.variable_overrides.as_slice())
            .collect(),
    }
}

/// Defaults and validates every variable list of `topology` against `class`.
pub fn resolve(topology: &Topology, class: &ClusterClass) -> Result<Resolved, RenderError> {
    let mut errors = RenderError::default();
    let cluster = resolve_scope(&topology.variables, class, Scope::Cluster, &mut errors);
    let control_plane = resolve_scope(
        &topology.control_plane.variable_overrides,
        class,
        Scope::ControlPlane,
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
                &mut errors,
            )
        })
        .collect();
    let machine_pools = topology
        .machine_pools
        .iter()
        .map(|mp| {
            resolve_scope(
                &mp.variable_overrides,
                class,
                Scope::MachinePool(&mp.name),
                &mut errors,
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(Resolved {
            cluster,
            control_plane,
            machine_deployments,
            machine_pools,
        })
    } else {
        Err(errors)
    }
}
