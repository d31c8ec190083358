//! `GetRollout`, `PauseRollout`, `ResumeRollout`, `AbortRollout` (decision 0030): a
//! class's rollout as its `RolloutPolicy` records it, and what the tenant asks of it
//! written into the policy's spec (`paused`, `resumeAt`, `abortRevision`), which the
//! appliers' rollout driver acts on at its next step. The gateway never writes the
//! rollout's status: that is the driver's alone.

use serde_json::{Value, json};
use tonic::Status;
use topograph_management::ManagementCluster;
use topograph_proto::gateway::v1 as pb;
use topograph_reconcile::rollout::waves::{self, phase};
use topograph_reconcile::rollout::{API_VERSION, POLICY_KIND};

use crate::objects::conditions;
use crate::state::{State, api_status};
use crate::tenancy::Tenant;
use topograph_api::Violation;
use topograph_proto::violations::invalid;

/// What a tenant asks of a rollout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Read it.
    Get,
    /// Move nobody until resumed.
    Pause,
    /// Go on: unpause, and give a halted rollout's Clusters a new deadline.
    Resume,
    /// Move the moved Clusters back to the stable revision.
    Abort,
}

impl Action {
    fn method(self) -> &'static str {
        match self {
            Action::Get => "GetRollout",
            Action::Pause => "PauseRollout",
            Action::Resume => "ResumeRollout",
            Action::Abort => "AbortRollout",
        }
    }
}

async fn read(api: &ManagementCluster, namespace: &str, name: &str) -> Result<Value, Status> {
    api.get(API_VERSION, POLICY_KIND, namespace, name)
        .await
        .map_err(|e| api_status("reading the RolloutPolicy", e))?
        .ok_or_else(|| {
            Status::not_found(format!(
                "ClusterClass {namespace}/{name} has no RolloutPolicy: its changes reach every Cluster at once"
            ))
        })
}

/// The spec change `action` makes, given the policy as stored; `None` for a read.
fn spec_patch(action: Action, policy: &Value, now: &str) -> Result<Option<Value>, Status> {
    let status = waves::Status::of(policy).unwrap_or_default();
    Ok(match action {
        Action::Get => None,
        Action::Pause => Some(json!({"spec": {"paused": true}})),
        Action::Resume => Some(json!({"spec": {"paused": false, "resumeAt": now}})),
        Action::Abort => {
            if status.target_revision.is_empty() || status.phase == phase::ABORTED {
                return Err(Status::failed_precondition(format!(
                    "no rollout to abort: phase {:?}, every Cluster renders revision {}",
                    status.phase, status.stable_revision
                )));
            }
            Some(json!({"spec": {"abortRevision": status.target_revision}}))
        }
    })
}

/// The answer: the policy's status and spec as the RPC's message.
pub fn rollout(policy: &Value) -> pb::Rollout {
    let status = waves::Status::of(policy).unwrap_or_default();
    let count = |w: &waves::WaveStatus, f: fn(&waves::WaveMember) -> bool| {
        i32::try_from(w.clusters.iter().filter(|m| f(m)).count()).unwrap_or(i32::MAX)
    };
    pb::Rollout {
        phase: status.phase.clone(),
        stable_revision: status.stable_revision.clone(),
        target_revision: status.target_revision.clone(),
        waves: status
            .waves
            .iter()
            .map(|w| pb::RolloutWave {
                name: w.name.clone(),
                clusters: i32::try_from(w.clusters.len()).unwrap_or(i32::MAX),
                moved: count(w, |m| !m.moved_at.is_empty()),
                passed: count(w, |m| !m.passed_at.is_empty()),
                opened_at: w.opened_at.clone(),
                passed_at: w.passed_at.clone(),
            })
            .collect(),
        halted_cluster: status
            .halted
            .as_ref()
            .map(|h| h.cluster.clone())
            .unwrap_or_default(),
        halted_reason: status
            .halted
            .as_ref()
            .map(|h| h.reason.clone())
            .unwrap_or_default(),
        paused: policy.pointer("/spec/paused").and_then(Value::as_bool) == Some(true),
        conditions: conditions(policy),
        policy: serde_json::to_vec(policy).unwrap_or_default(),
    }
}

/// Any of the four RPCs.
pub async fn serve(
    state: &State,
    tenant: &Tenant,
    request: pb::RolloutRequest,
    action: Action,
) -> Result<pb::Rollout, Status> {
    let mut missing = Vec::new();
    for (field, value) in [("namespace", &request.namespace), ("name", &request.name)] {
        if value.is_empty() {
            missing.push(Violation::new(field, "Required value"));
        }
    }
    if !missing.is_empty() {
        return Err(invalid(missing));
    }
    let mc = &request.management_cluster;
    tenant.authorize(action.method(), mc, Some(&request.namespace))?;
    let api = state.cluster(mc)?;
    let policy = read(&api, &request.namespace, &request.name).await?;
    let now = waves::stamp(waves::now_ms());
    let Some(patch) = spec_patch(action, &policy, &now)? else {
        return Ok(rollout(&policy));
    };
    let written = api
        .merge_patch(&policy, &patch)
        .await
        .map_err(|e| api_status("writing the RolloutPolicy", e))?;
    tracing::info!(
        tenant = %tenant.name,
        management_cluster = %mc,
        policy = %format!("{}/{}", request.namespace, request.name),
        action = action.method(),
        "rollout changed"
    );
    Ok(rollout(&written))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(status: Value) -> Value {
        json!({"metadata": {"name": "qs", "namespace": "ns"},
               "spec": {"waves": [{"name": "all", "percent": 100}]}, "status": status})
    }

    #[test]
    fn actions_write_the_spec_fields_the_driver_reads() {
        let running = policy(
            json!({"stableRevision": "r1", "targetRevision": "r2", "phase": "Halted",
            "waves": [{"name": "all", "openedAt": "t", "clusters": [{"cluster": "ns/a", "movedAt": "t"}, {"cluster": "ns/b"}]}],
            "halted": {"cluster": "ns/a", "reason": "no", "at": "t"}}),
        );
        let patch = |a| {
            spec_patch(a, &running, "2026-01-01T00:00:00.000Z")
                .ok()
                .flatten()
        };
        assert_eq!(patch(Action::Get), None);
        assert_eq!(
            patch(Action::Pause),
            Some(json!({"spec": {"paused": true}}))
        );
        assert_eq!(
            patch(Action::Resume),
            Some(json!({"spec": {"paused": false, "resumeAt": "2026-01-01T00:00:00.000Z"}}))
        );
        assert_eq!(
            patch(Action::Abort),
            Some(json!({"spec": {"abortRevision": "r2"}}))
        );
        let idle = policy(json!({"stableRevision": "r1", "phase": "Stable"}));
        let refused = spec_patch(Action::Abort, &idle, "t");
        assert!(refused.is_err_and(|s| s.code() == tonic::Code::FailedPrecondition));
        let shown = rollout(&running);
        assert_eq!(
            (shown.phase.as_str(), shown.halted_cluster.as_str()),
            ("Halted", "ns/a")
        );
        assert_eq!(shown.waves.len(), 1);
        assert_eq!(
            (
                shown.waves[0].clusters,
                shown.waves[0].moved,
                shown.waves[0].passed
            ),
            (2, 1, 0)
        );
    }
}
