//! Fleet rollouts (decision 0030): a ClusterClass change reaches the class's Clusters in
//! waves, and stops on the first sign of harm.
//!
//! * [`revision`]: content-addressed snapshots of a class and its templates
//!   (`ClusterClassRevision`), which pinned Clusters render against.
//! * [`policy`]: the `RolloutPolicy` a class may have (waves, at most N rolling, soak,
//!   health deadline, pause / abort / resume), read and refused with field paths.
//! * [`gate`]: whether a moved Cluster is healthy at the revision it was moved to.
//! * [`waves`]: the rollout's state machine, a pure function of the policy, its status,
//!   the Clusters and the time.
//! * [`pin`]: which revision a Cluster renders (what the reconcile asks).
//! * [`planned`]: plans and impact of a class change under a policy: the revision each
//!   Cluster would get and the wave it would move in.
//! * [`controller`]: drives every policy of a management cluster, one step at a time,
//!   with the state kept in the policies' status.

use serde_json::Value;
use topograph_api::object::ObjectExt;
use topograph_management::ManagementCluster;

use crate::error::ReconcileError;

pub mod controller;
pub mod gate;
pub mod pin;
pub mod planned;
pub mod policy;
pub mod revision;
pub mod waves;

/// The API group and version of the rollout kinds.
pub const API_VERSION: &str = "topograph.io/v1alpha1";
/// The kind of a class's rollout policy (named like the class, in its namespace).
pub const POLICY_KIND: &str = "RolloutPolicy";
/// The kind of a class revision.
pub const REVISION_KIND: &str = "ClusterClassRevision";
/// On a Cluster: the revision it has been moved to (it renders that revision).
pub const PIN_ANNOTATION: &str = "topograph.io/class-revision";
/// On a Cluster: the revision its last successful reconcile rendered.
pub const OBSERVED_ANNOTATION: &str = "topograph.io/observed-class-revision";
/// On a revision: the class it snapshots.
pub const CLASS_LABEL: &str = "topograph.io/cluster-class";
/// The condition a rollout reports on its policy and on the class.
pub const CONDITION: &str = "RolloutHealthy";

/// The `(namespace, name)` of the class a Cluster uses (v1beta1 `class` and
/// `classNamespace`, v1beta2 `classRef`), the namespace defaulting to the Cluster's.
pub fn class_of(cluster: &Value) -> Option<(String, String)> {
    let class = cluster
        .pointer("/spec/topology/class")
        .or_else(|| cluster.pointer("/spec/topology/classRef/name"))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())?;
    let namespace = cluster
        .pointer("/spec/topology/classNamespace")
        .or_else(|| cluster.pointer("/spec/topology/classRef/namespace"))
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .unwrap_or(cluster.namespace());
    Some((namespace.to_string(), class.to_string()))
}

/// Every template `class` references, as `api` reads them now, in the class's order;
/// `None` when the class cannot be read or a template is missing (no revision of it
/// can be made yet).
pub(crate) async fn templates_of(
    api: &ManagementCluster,
    class: &Value,
) -> Result<Option<Vec<Value>>, ReconcileError> {
    let Ok(decoded) = topograph_api::load::decode_cluster_class(class.clone()) else {
        return Ok(None);
    };
    let mut templates = Vec::new();
    for r in crate::class::template_refs(&decoded) {
        let namespace = if r.namespace.is_empty() {
            class.namespace()
        } else {
            r.namespace.as_str()
        };
        match api.get(&r.api_version, &r.kind, namespace, &r.name).await? {
            Some(t) => templates.push(t),
            None => return Ok(None),
        }
    }
    Ok(Some(templates))
}
