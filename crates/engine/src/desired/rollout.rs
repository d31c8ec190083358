//! `spec.topology.rolloutAfter`: roll out every machine of the Cluster after a time,
//! "one component at a time, control plane first and then machine deployments" (the
//! v1beta1 field's contract, which Cluster API itself left unimplemented).
//!
//! The control plane gets it (at the path its contract has) as soon as the topology
//! sets it. A
//! MachineDeployment gets it only once the control plane carries the same value and
//! reports its rollout done (observedGeneration caught up, every replica updated);
//! until then it keeps whatever it had, so the workers follow the control plane.

use serde_json::{Value, json};
use topograph_api::object::{ObjectExt, set_at};

use super::Scope;
use crate::contract::{Contract, ContractFields};

/// Where v1beta1 control planes (KubeadmControlPlane) and MachineDeployments keep it.
pub const PATH: &[&str] = &["spec", "rolloutAfter"];

/// Where a control plane keeps its rollout time by the contract it implements:
/// `spec.rolloutAfter` (v1beta1, e.g. KubeadmControlPlane v1beta1) or
/// `spec.rollout.after` (v1beta2). Writing the other one would be a field the
/// control plane's schema does not declare, which a server-side apply refuses.
pub fn control_plane_path(contract: Contract) -> &'static [&'static str] {
    match contract {
        Contract::V1Beta1 => PATH,
        Contract::V1Beta2 => &["spec", "rollout", "after"],
    }
}

/// Sets the control plane's rollout time: the control plane topology's
/// (`topology.controlPlane.rollout.after`, v1beta2) or else the Cluster's
/// (`topology.rolloutAfter`, v1beta1).
pub(crate) fn control_plane(scope: &Scope<'_>, object: &mut Value) {
    let after = scope
        .topology
        .control_plane
        .rollout_after
        .as_ref()
        .or(scope.topology.rollout_after.as_ref());
    if let Some(after) = after {
        let path = control_plane_path(scope.blueprint.control_plane_contract);
        set_at(object, path, json!(after));
    }
}

fn control_plane_rolled_out(cp: &Value, contract: Contract, after: &str) -> bool {
    let int = |path: &[&str]| cp.at(path).and_then(Value::as_i64);
    let generation_seen = match (
        int(&["metadata", "generation"]),
        int(&["status", "observedGeneration"]),
    ) {
        (Some(generation), Some(observed)) => observed >= generation,
        _ => false,
    };
    let replicas = int(&["spec", "replicas"]).unwrap_or(1);
    let updated = int(contract.control_plane().up_to_date_replicas);
    cp.at(control_plane_path(contract)).and_then(Value::as_str) == Some(after)
        && generation_seen
        && updated.is_none_or(|u| u >= replicas)
}

/// Sets a MachineDeployment's `rolloutAfter`, given its current object.
pub(crate) fn machine_deployment(scope: &Scope<'_>, current: Option<&Value>, object: &mut Value) {
    let Some(after) = &scope.topology.rollout_after else {
        return;
    };
    let had = current.and_then(|md| md.at(PATH)).cloned();
    let cp_done = scope.current.control_plane.object.is_some_and(|cp| {
        control_plane_rolled_out(cp, scope.current.control_plane_contract, after)
    });
    if cp_done || had.as_ref().and_then(Value::as_str) == Some(after.as_str()) {
        set_at(object, PATH, json!(after));
    } else if let Some(had) = had {
        set_at(object, PATH, had);
    }
}
