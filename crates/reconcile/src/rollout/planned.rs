//! Plans of class changes under a rollout policy (decision 0030). With a policy, a
//! Cluster renders the revision it was moved to, not the live class, so a plan that
//! staged a proposed class would show nothing. A plan instead renders what the Cluster
//! will get once its wave moves it: the proposed class's revision, staged in the dry
//! run with the Cluster pinned to it, both then left out of the plan (they are the
//! rollout's writes, not the change's). [`waves_of`] tells which wave each Cluster of
//! the class would move in.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_management::ManagementCluster;

use super::pin::annotation;
use super::policy::{self, Member};
use super::waves::{self, ClusterInfo};
use super::{
    API_VERSION, OBSERVED_ANNOTATION, PIN_ANNOTATION, POLICY_KIND, REVISION_KIND, class_of,
};
use crate::class::{self, template_refs};
use crate::error::ReconcileError;

/// Whether `proposed` changes the class or one of its templates.
fn touches(proposed: &[Value], class: &Value) -> bool {
    let refs = topograph_api::load::decode_cluster_class(class.clone())
        .map(|c| template_refs(&c))
        .unwrap_or_default();
    proposed.iter().any(|o| {
        (o.kind() == "ClusterClass"
            && o.namespace() == class.namespace()
            && o.name() == class.name())
            || refs.iter().any(|r| {
                r.kind == o.kind()
                    && r.name == o.name()
                    && (if r.namespace.is_empty() {
                        class.namespace()
                    } else {
                        &r.namespace
                    }) == o.namespace()
            })
    })
}

/// In the dry run `dry` (with `proposed` staged): when the Cluster's class has a
/// policy and `proposed` changes it, records the proposed class's revision and pins
/// the Cluster to it; the revision's name.
pub async fn stage(
    dry: &ManagementCluster,
    proposed: &[Value],
    namespace: &str,
    name: &str,
) -> Result<Option<String>, ReconcileError> {
    let Some(cluster) = dry
        .get(class::API_VERSION, "Cluster", namespace, name)
        .await?
    else {
        return Ok(None);
    };
    let Some((class_ns, class_name)) = class_of(&cluster) else {
        return Ok(None);
    };
    if dry
        .get(API_VERSION, POLICY_KIND, &class_ns, &class_name)
        .await?
        .is_none()
    {
        return Ok(None);
    }
    let Some(mut staged) = dry
        .get(class::API_VERSION, "ClusterClass", &class_ns, &class_name)
        .await?
    else {
        return Ok(None);
    };
    if !touches(proposed, &staged) {
        return Ok(None);
    }
    // The revision snapshots the class as reconciled (its variables in status).
    if class::not_reconciled(&staged).is_some() {
        class::reconcile_class_with(dry, None, &class_ns, &class_name).await?;
        if let Some(reconciled) = dry
            .get(class::API_VERSION, "ClusterClass", &class_ns, &class_name)
            .await?
        {
            staged = reconciled;
        }
    }
    let Some(templates) = super::templates_of(dry, &staged).await? else {
        return Ok(None);
    };
    let revision = super::revision::object(&staged, &templates);
    let revision_name = revision.name().to_string();
    if dry
        .get(API_VERSION, REVISION_KIND, &class_ns, &revision_name)
        .await?
        .is_none()
    {
        dry.create(&revision).await?;
    }
    if annotation(&cluster, PIN_ANNOTATION) != Some(revision_name.as_str()) {
        let patch = json!({"metadata": {"annotations": {PIN_ANNOTATION: revision_name}}});
        dry.merge_patch(&cluster, &patch).await?;
    }
    Ok(Some(revision_name))
}

/// A plan's patch operation without what is the rollout's own (a pin, or the record of
/// the revision rendered), not the change's; `false` when nothing else is left of it.
pub fn keep_change(op: &mut Value) -> bool {
    let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
    let escaped = |a: &str| format!("/metadata/annotations/{}", a.replace('/', "~1"));
    if path == escaped(PIN_ANNOTATION) || path == escaped(OBSERVED_ANNOTATION) {
        return false;
    }
    if path == "/metadata/annotations"
        && let Some(added) = op.get_mut("value").and_then(Value::as_object_mut)
    {
        added.remove(PIN_ANNOTATION);
        added.remove(OBSERVED_ANNOTATION);
        return !added.is_empty();
    }
    true
}

/// Whether an object of a plan is the rollout's own (a revision).
pub fn is_rollout_object(kind: &str) -> bool {
    kind == REVISION_KIND
}

/// The wave each Cluster of the class `namespace/name` would move in toward `target`,
/// under the class's policy (none without a readable one).
pub async fn waves_of(
    api: &ManagementCluster,
    namespace: &str,
    name: &str,
    target: &str,
) -> Result<BTreeMap<String, String>, ReconcileError> {
    let Some(object) = api.get(API_VERSION, POLICY_KIND, namespace, name).await? else {
        return Ok(BTreeMap::new());
    };
    let Ok(policy) = policy::parse(&object) else {
        return Ok(BTreeMap::new());
    };
    let key = (namespace.to_string(), name.to_string());
    let clusters: Vec<ClusterInfo> = api
        .list(class::API_VERSION, "Cluster", "", &[])
        .await?
        .iter()
        .filter(|c| class_of(c).as_ref() == Some(&key))
        .map(|c| ClusterInfo {
            member: Member {
                key: format!("{}/{}", c.namespace(), c.name()),
                labels: c.labels().clone().into_iter().collect(),
            },
            pin: annotation(c, PIN_ANNOTATION).map(str::to_string),
        })
        .collect();
    Ok(waves::assign(&policy, &clusters, target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rollouts_own_writes_leave_a_plan() {
        let mut whole = json!({"op": "add", "path": "/metadata/annotations",
            "value": {PIN_ANNOTATION: "r", OBSERVED_ANNOTATION: "r"}});
        assert!(!keep_change(&mut whole));
        let mut mixed = json!({"op": "add", "path": "/metadata/annotations",
            "value": {PIN_ANNOTATION: "r", "team": "a"}});
        assert!(keep_change(&mut mixed));
        assert_eq!(mixed["value"], json!({"team": "a"}));
        let mut one = json!({"op": "replace", "path": "/metadata/annotations/topograph.io~1class-revision", "value": "r"});
        assert!(!keep_change(&mut one));
        let mut other = json!({"op": "replace", "path": "/spec/replicas", "value": 3});
        assert!(keep_change(&mut other));
    }
}
