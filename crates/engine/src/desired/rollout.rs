//! `spec.topology.rolloutAfter`: roll out every machine of the Cluster after a time,
//! "one component at a time, control plane first and then machine deployments" (the
//! v1beta1 field's contract, which Cluster API itself left unimplemented).
//!
//! The control plane gets `spec.rolloutAfter` as soon as the topology sets it. A
//! MachineDeployment gets it only once the control plane carries the same value and
//! reports its rollout done (observedGeneration caught up, every replica updated);
//! until then it keeps whatever it had, so the workers follow the control plane.

use serde_json::{Value, json};
use topograph_api::object::{ObjectExt, set_at};

use super::Scope;
use crate::contract::{Contract, ContractFields};

/// Where v1beta1 control planes (KubeadmControlPlane) and MachineDeployments keep it.
pub const PATH: &[&str] = &["spec", "rolloutAfter"];

/// Where Cluster API writes the control plane's own `rollout.after` (v1beta2's
/// `topology.controlPlane.rollout.after`), whatever contract the control plane
/// implements.
pub const CONTROL_PLANE_ROLLOUT_AFTER: &[&str] = &["spec", "rollout", "after"];

/// Sets the control plane's `rolloutAfter` (the Cluster's) and `rollout.after` (the
/// control plane topology's).
pub(crate) fn control_plane(scope: &Scope<'_>, object: &mut Value) {
    if let Some(after) = &scope.topology.rollout_after {
        set_at(object, PATH, json!(after));
    }
    if let Some(after) = &scope.topology.control_plane.rollout_after {
        set_at(object, CONTROL_PLANE_ROLLOUT_AFTER, json!(after));
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
    cp.at(PATH).and_then(Value::as_str) == Some(after)
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
