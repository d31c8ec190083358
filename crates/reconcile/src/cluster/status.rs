//! What a reconcile reports on the Cluster's status: the `TopologyReconciled` condition
//! (spec 7.5, in both the v1beta1 and the v1beta2 condition lists),
//! `status.observedGeneration`, and the provisioning phase of seed 003 (`Pending` until
//! the Cluster references its infrastructure, `Provisioning` until the object that
//! provides the control plane endpoint is ready, then `Provisioned`). The phase is the
//! one that follows from what the reconcile just wrote, so a fresh Cluster's second
//! reconcile has nothing left to write.

use serde_json::{Value, json};
use topograph_api::model::ClusterClass;
use topograph_api::object::ObjectExt;
use topograph_engine::DesiredState;
use topograph_engine::contract::{ContractFields, flag};

use super::read::Current;
use crate::conditions::{self, Condition};
use crate::error::ReconcileError;
use topograph_management::ManagementCluster;

/// The condition type.
pub const TOPOLOGY_RECONCILED: &str = "TopologyReconciled";
/// Pauses reconciliation when present on a Cluster.
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

/// How far a reconcile got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    Paused(String),
    Deleting,
    ClassNotReconciled,
    /// A lifecycle hook holds the reconcile (the condition's message).
    HookBlocking(String),
    Done(Done),
}

/// A reconcile that ran to the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Done {
    /// The Cluster referenced neither an InfrastructureCluster nor a ControlPlane.
    pub creating: bool,
    /// Reason and message while an upgrade is in progress.
    pub upgrade: Option<(String, String)>,
    /// The provisioning phase.
    pub phase: Option<String>,
    /// Lifecycle hooks hold part of the topology (the condition's message).
    pub hooks_blocking: Option<String>,
}

/// Why the Cluster is paused, if it is.
pub(crate) fn paused(cluster: &Value) -> Option<String> {
    let mut why = Vec::new();
    if cluster.at(&["spec", "paused"]).and_then(Value::as_bool) == Some(true) {
        why.push("Cluster spec.paused is set to true");
    }
    if cluster.annotations().contains_key(PAUSED_ANNOTATION) {
        why.push("Cluster has the cluster.x-k8s.io/paused annotation");
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// The upgrade part of the condition, while an upgrade is in progress.
pub(crate) fn upgrade_condition(
    topology_version: &str,
    desired: &DesiredState,
) -> Option<(String, String)> {
    topograph_engine::upgrade::condition(topology_version, &desired.upgrade)
        .map(|c| (c.reason.to_string(), c.message))
}

/// The provisioning phase once a reconcile has written the topology: the endpoint comes
/// from the InfrastructureCluster, or from the ControlPlane when the class has no
/// infrastructure (seed 004); whether it is ready is read where the contract its kind
/// implements says. A provider object missing before the writes was just created (and
/// the Cluster now references it): provisioning, not yet ready.
pub(crate) fn phase(class: &ClusterClass, current: &Current) -> Option<String> {
    let ready = if class.infrastructure.is_some() {
        current.infrastructure_cluster.as_ref().map(|infra| {
            flag(
                infra,
                current
                    .contract_of(infra)
                    .infrastructure_cluster()
                    .provisioned,
            )
        })
    } else {
        current
            .control_plane
            .as_ref()
            .map(|cp| flag(cp, current.contract_of(cp).control_plane().ready))
    };
    Some(
        match ready {
            Some(true) => "Provisioned",
            Some(false) | None => "Provisioning",
        }
        .to_string(),
    )
}

const CLASS_NOT_RECONCILED: &str = "ClusterClass not reconciled. If this condition persists please check ClusterClass status. A ClusterClass is reconciled if.status.observedGeneration == .metadata.generation is true. If this is not the case either ClusterClass reconciliation failed or the ClusterClass is paused";

fn condition(progress: &Result<Progress, ReconcileError>) -> Condition {
    match progress {
        Ok(Progress::Paused(message)) => {
            Condition::not_ok(TOPOLOGY_RECONCILED, "Paused", "Paused", message.clone())
        }
        Err(e) => Condition::not_ok(
            TOPOLOGY_RECONCILED,
            "ReconcileFailed",
            "TopologyReconcileFailed",
            e.to_string(),
        )
        .with_severity("Error"),
        Ok(Progress::Deleting) => Condition::not_ok(
            TOPOLOGY_RECONCILED,
            "Deleting",
            "Deleting",
            "Cluster is deleting".to_string(),
        ),
        Ok(Progress::ClassNotReconciled) => Condition::not_ok(
            TOPOLOGY_RECONCILED,
            "ClusterClassNotReconciled",
            "ClusterClassNotReconciled",
            CLASS_NOT_RECONCILED.to_string(),
        ),
        Ok(Progress::HookBlocking(message))
        | Ok(Progress::Done(Done {
            hooks_blocking: Some(message),
            ..
        })) => Condition::not_ok(
            TOPOLOGY_RECONCILED,
            "LifecycleHookBlocking",
            "LifecycleHookBlocking",
            message.clone(),
        ),
        Ok(Progress::Done(Done {
            creating: false,
            upgrade: Some((reason, message)),
            ..
        })) => Condition::not_ok(TOPOLOGY_RECONCILED, reason, reason, message.clone()),
        Ok(Progress::Done(_)) => Condition::ok(TOPOLOGY_RECONCILED, "ReconcileSucceeded"),
    }
}

/// The Cluster without what a reconcile reports on it (the `TopologyReconciled`
/// condition in each of its condition lists, `status.observedGeneration`,
/// `status.phase`) and without what every write changes (`resourceVersion`,
/// `managedFields`). Two versions of a Cluster equal in this differ only in a
/// reconcile's own report, which no reconcile reads to decide anything: the watchers
/// queue no reconcile for such a change.
pub fn without_report(cluster: &Value) -> Value {
    let mut rest = cluster.clone();
    if let Some(meta) = rest.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
        meta.remove("managedFields");
        // The revision a reconcile rendered is its report too (decision 0030).
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove(crate::rollout::OBSERVED_ANNOTATION);
            if annotations.is_empty() {
                meta.remove("annotations");
            }
        }
    }
    if let Some(status) = rest.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("observedGeneration");
        status.remove("phase");
    }
    // v1beta1 keeps the v1beta2 conditions under `v1beta2`, v1beta2 the v1beta1 ones
    // under `deprecated.v1beta1`.
    for path in [
        "/status/conditions",
        "/status/v1beta2/conditions",
        "/status/deprecated/v1beta1/conditions",
    ] {
        if let Some(list) = rest.pointer_mut(path).and_then(Value::as_array_mut) {
            list.retain(|c| c.get("type").and_then(Value::as_str) != Some(TOPOLOGY_RECONCILED));
        }
        // A list (and the objects holding it) left empty is as if never written: the
        // first report creates them.
        let mut at = path;
        while let Some((parent, field)) = at.rsplit_once('/') {
            let empty = rest.pointer(at).is_none_or(|v| {
                v.as_array().is_some_and(Vec::is_empty)
                    || v.as_object().is_some_and(|o| o.is_empty())
            });
            if !empty {
                break;
            }
            if let Some(holder) = rest.pointer_mut(parent).and_then(Value::as_object_mut) {
                holder.remove(field);
            }
            at = parent;
        }
    }
    rest
}

/// Writes the outcome on the Cluster's status, when it differs from what is there.
pub(crate) async fn report(
    api: &ManagementCluster,
    cluster: &Value,
    progress: &Result<Progress, ReconcileError>,
) -> Result<(), ReconcileError> {
    let generation = cluster
        .at(&["metadata", "generation"])
        .and_then(Value::as_i64)
        .unwrap_or_default();
    let mut status = cluster
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    conditions::set(&mut status, &condition(progress), generation);
    if matches!(progress, Ok(Progress::Done(_))) {
        status.insert("observedGeneration".into(), json!(generation));
    }
    if let Ok(Progress::Done(Done {
        phase: Some(phase), ..
    })) = progress
    {
        status.insert("phase".into(), json!(phase));
    }
    // Only what changed, and only the topology's own fields: others written since the
    // Cluster was read stay as they are.
    if let Some(patch) = conditions::status_patch(cluster.get("status"), &status) {
        api.merge_patch_status(cluster, &patch).await?;
    }
    Ok(())
}
