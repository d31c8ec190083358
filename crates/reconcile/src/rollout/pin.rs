//! Which revision of its class a Cluster renders: the one its pin names; unpinned, the
//! stable revision of the class's rollout policy; without a policy (or before the
//! policy recorded one), the live class, as Cluster API renders.

use serde_json::Value;
use topograph_api::object::ObjectExt;
use topograph_management::ManagementCluster;
use topograph_management::class_cache::Keep;

use super::revision::{self, Revision};
use super::{API_VERSION, PIN_ANNOTATION, POLICY_KIND, REVISION_KIND};
use crate::error::ReconcileError;

/// The annotation `key` of `object`, if set and not empty.
pub fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
        .filter(|v| !v.is_empty())
}

/// The revision `cluster` renders, or `None` for the live class `class`.
pub async fn revision_for(
    api: &ManagementCluster,
    cluster: &Value,
    class: &Value,
) -> Result<Option<Revision>, ReconcileError> {
    let (namespace, name) = (class.namespace(), class.name());
    let wanted = match annotation(cluster, PIN_ANNOTATION) {
        Some(pinned) => pinned.to_string(),
        None => {
            // Kept whole: most classes have none, and the cache says so without a request.
            let policy = api
                .get_class_level(API_VERSION, POLICY_KIND, Keep::All, namespace, name)
                .await?;
            let Some(policy) = policy else {
                return Ok(None);
            };
            match policy
                .pointer("/status/stableRevision")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
            {
                Some(stable) => stable.to_string(),
                None => return Ok(None),
            }
        }
    };
    // A revision never changes once recorded; one just recorded may not be in the
    // cache yet, and is read live then (positive answers only).
    let Some(stored) = api
        .get_class_level(
            API_VERSION,
            REVISION_KIND,
            Keep::Unowned,
            namespace,
            &wanted,
        )
        .await?
    else {
        return Err(ReconcileError::invalid(format!(
            "error reading the ClusterClass: {REVISION_KIND} {namespace}/{wanted} not found"
        )));
    };
    let found = revision::read(&stored).map_err(ReconcileError::invalid)?;
    if found.class.name() != name {
        return Err(ReconcileError::invalid(format!(
            "error reading the ClusterClass: {REVISION_KIND} {namespace}/{wanted} is a revision of ClusterClass {}, not {name}",
            found.class.name()
        )));
    }
    Ok(Some(found))
}
