//! Template rotation: a template copy whose spec no longer holds in the current copy
//! gets a new name, and its holder (the ControlPlane, a MachineDeployment) references
//! that name. Templates are immutable by convention, so a changed spec means a new
//! template and a rollout of the machines made from it.
//!
//! It runs once patches ran, on the spec the copy will be written with: Cluster API
//! decides on the patched desired template too. Deciding on the class template's own
//! spec would rotate every copy whose template a patch changes (a `replace` of a field
//! the template sets), once, right after it was created. The new name hashes the
//! desired spec, so the same change always gives the same name and a plan agrees with
//! the reconcile after it.

use serde_json::{Value, json};
use topograph_api::model::Cluster;
use topograph_api::object::set_at;

use super::DesiredState;
use super::clone::is_enforced;
use crate::blueprint::Blueprint;
use crate::contract::{Contract, ContractFields};
use crate::current::{CurrentState, Referenced};
use crate::names;
use crate::patches::describe;
use crate::wire::desired_ref;

/// A copy that was renamed: the object as it was called before and after
/// (`Kind namespace/name`, as the patch explanation names objects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renamed {
    /// The name it had while patches ran.
    pub before: String,
    /// Its new name.
    pub after: String,
}

/// Renames `copy` when its spec does not hold in `current`'s object; the new name.
fn rotate(
    cluster: &Cluster,
    copy: &mut Value,
    current: &Referenced<'_>,
    prefix: &str,
    role: &[&str],
    renamed: &mut Vec<Renamed>,
) -> Option<String> {
    let current = current.object?;
    let null = Value::Null;
    let desired_spec = copy.get("spec").unwrap_or(&null);
    if is_enforced(desired_spec, current.get("spec").unwrap_or(&null)) {
        return None;
    }
    let content = desired_spec.to_string();
    let mut parts = role.to_vec();
    parts.extend(["rotation", content.as_str()]);
    let name = names::simple(prefix, &super::suffix_of(cluster, &parts));
    let before = describe(copy);
    set_at(copy, &["metadata", "name"], json!(name));
    renamed.push(Renamed {
        before,
        after: describe(copy),
    });
    Some(name)
}

/// Rotates every template copy of `desired` whose spec changed against `current`, and
/// points its holder at the new name. What was renamed, in order.
pub(crate) fn apply(
    cluster: &Cluster,
    blueprint: &Blueprint<'_>,
    current: &CurrentState<'_>,
    desired: &mut DesiredState,
) -> Vec<Renamed> {
    let mut renamed = Vec::new();
    let cp = &mut desired.control_plane;
    if let Some(copy) = cp.machine_template.as_mut() {
        let reference = &current.control_plane_machine_template;
        let prefix = format!("{}-", cluster.name);
        if rotate(
            cluster,
            copy,
            reference,
            &prefix,
            &["ControlPlaneMachineTemplate"],
            &mut renamed,
        )
        .is_some()
        {
            // As the desired state first set it: under the v1beta1 contract a version
            // the provider moved the reference to is kept.
            let contract = blueprint.control_plane_contract;
            let current_ref = match contract {
                Contract::V1Beta1 => reference.reference.as_ref(),
                Contract::V1Beta2 => None,
            };
            contract
                .control_plane()
                .infrastructure_ref
                .set(&mut cp.object, &desired_ref(current_ref, copy));
        }
    }
    for md in &mut desired.machine_deployments {
        let Some(current) = current.machine_deployments.get(&md.topology_name) else {
            continue;
        };
        let prefix = format!("{}-{}-", cluster.name, md.topology_name);
        let topology_name = md.topology_name.as_str();
        for (copy, reference, role, path) in [
            (
                &mut md.bootstrap_template,
                &current.bootstrap_template,
                "BootstrapTemplate",
                &["spec", "template", "spec", "bootstrap", "configRef", "name"][..],
            ),
            (
                &mut md.infrastructure_template,
                &current.infrastructure_template,
                "InfrastructureMachineTemplate",
                &["spec", "template", "spec", "infrastructureRef", "name"][..],
            ),
        ] {
            if let Some(name) = rotate(
                cluster,
                copy,
                reference,
                &prefix,
                &[role, topology_name],
                &mut renamed,
            ) {
                set_at(&mut md.object, path, json!(name));
            }
        }
    }
    renamed
}
