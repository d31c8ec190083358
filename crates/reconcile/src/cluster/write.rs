//! The write primitives every part of a reconcile uses: create from a desired object,
//! update by enforcing an intent with optimistic concurrency (a 409 re-reads the object
//! and tries again), and template reconciliation with rotation (spec section 2).

use serde_json::{Value, json};
use topograph_api::object::{ObjectExt, group_of};

use crate::error::ReconcileError;
use crate::merge::{self, Change};
use topograph_management::ManagementCluster;
use topograph_management::error::{Error as ClientError, is_already_exists, is_conflict};

/// How many times an update is retried after a 409 Conflict.
pub const CONFLICT_RETRIES: usize = 5;

/// Whether the topology owns a whole `spec` (MachineHealthChecks) or only the fields
/// it sets (everything else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpecAuthority {
    FieldsSet,
    Whole,
}

fn merged(current: &Value, intent: &Value, authority: SpecAuthority) -> Value {
    let mut merged = merge::apply(current, intent);
    if authority == SpecAuthority::Whole
        && let (Some(spec), Some(obj)) = (intent.get("spec"), merged.as_object_mut())
    {
        obj.insert("spec".into(), spec.clone());
    }
    merged
}

/// Enforces `intent` on `current`. `Some(stored)` when something was written, `None`
/// when the object already matched. A conflict re-reads the object and tries again.
pub(crate) async fn update(
    cluster: &ManagementCluster,
    current: &Value,
    intent: &Value,
) -> Result<Option<Value>, ReconcileError> {
    update_with(cluster, current, intent, SpecAuthority::FieldsSet).await
}

/// Brings the object `current` to `intent` as the topology's write (see
/// [`crate::merge::apply`]: the intent is all the topology sets on the object, so
/// fields it set last time and no longer sets are removed) with optimistic
/// concurrency: a 409 Conflict re-reads the object and tries again, up to
/// [`CONFLICT_RETRIES`] times. `Some(stored)` when written, `None` when it already
/// matched.
pub async fn apply_intent(
    cluster: &ManagementCluster,
    current: &Value,
    intent: &Value,
) -> Result<Option<Value>, ReconcileError> {
    update(cluster, current, intent).await
}

/// [`update`] with an explicit [`SpecAuthority`].
pub(crate) async fn update_with(
    cluster: &ManagementCluster,
    current: &Value,
    intent: &Value,
    authority: SpecAuthority,
) -> Result<Option<Value>, ReconcileError> {
    let mut current = current.clone();
    for _ in 0..=CONFLICT_RETRIES {
        let want = merged(&current, intent, authority);
        if want == current {
            return Ok(None);
        }
        match cluster.replace(&want).await {
            Ok(stored) => return Ok(Some(stored)),
            Err(ClientError::Api(e)) if is_conflict(&e) => {
                tracing::debug!(object = %current.name(), "conflict; reading the object again");
                match cluster
                    .get(
                        current.api_version(),
                        current.kind(),
                        current.namespace(),
                        current.name(),
                    )
                    .await?
                {
                    Some(fresh) => current = fresh,
                    None => {
                        return Err(ReconcileError::invalid(format!(
                            "{} {}/{} was deleted while being updated",
                            current.kind(),
                            current.namespace(),
                            current.name()
                        )));
                    }
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ReconcileError::invalid(format!(
        "{} {}/{}: still conflicting after {CONFLICT_RETRIES} retries",
        current.kind(),
        current.namespace(),
        current.name()
    )))
}

/// Creates the object `desired` describes (only the parts the topology owns are sent).
///
/// Names are deterministic, so an object a crashed reconcile created before it could
/// record it (e.g. in the Cluster's references) is found under the same name: when it
/// belongs to the same Cluster's topology it is adopted (brought to the intent) instead
/// of failing the reconcile forever.
pub(crate) async fn create(
    cluster: &ManagementCluster,
    desired: &Value,
) -> Result<Value, ReconcileError> {
    let intent = topograph_api::managed::record(merge::intent(desired));
    match cluster.create(&intent).await {
        Ok(created) => Ok(created),
        Err(ClientError::Api(e)) if is_already_exists(&e) => {
            let existing = cluster
                .get(
                    desired.api_version(),
                    desired.kind(),
                    desired.namespace(),
                    desired.name(),
                )
                .await?;
            match existing {
                Some(existing) if same_topology(&existing, desired) => {
                    tracing::info!(
                        kind = desired.kind(),
                        name = desired.name(),
                        "adopting an object an earlier reconcile created"
                    );
                    Ok(update(cluster, &existing, &intent)
                        .await?
                        .unwrap_or(existing))
                }
                _ => Err(create_error(desired, &e)),
            }
        }
        Err(ClientError::Api(e)) => Err(create_error(desired, &e)),
        Err(other) => Err(other.into()),
    }
}

/// The existing object is part of the same Cluster's topology as `desired`.
fn same_topology(existing: &Value, desired: &Value) -> bool {
    let labels = existing.labels();
    let cluster = labels.get(topograph_engine::labels::CLUSTER_NAME);
    labels.contains_key(topograph_engine::labels::TOPOLOGY_OWNED)
        && cluster.is_some()
        && cluster == desired.labels().get(topograph_engine::labels::CLUSTER_NAME)
}

/// Drops the generated name from the message so the Cluster's condition stays the same
/// from one attempt to the next (Cluster API does the same).
fn create_error(desired: &Value, e: &kube::Error) -> ReconcileError {
    ReconcileError::invalid(format!(
        "failed to create {}: {}",
        topograph_api::object::group_kind(desired.api_version(), desired.kind()),
        status_message(e)
    ))
}

fn status_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    }
}

/// Which current templates a desired one may replace in place or by rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compatibility {
    /// Same group, kind and namespace (infrastructure machine templates).
    SameKind,
    /// Same namespace only (bootstrap templates may change kind).
    SameNamespace,
}

/// The result of reconciling a template a holder references.
#[derive(Clone, Debug)]
pub(crate) struct TemplateOutcome {
    /// The template the holder must reference.
    pub name: String,
    /// The template it replaced, to delete once the holder no longer references it.
    pub replaced: Option<Value>,
    /// Created (a new template or a rotation).
    pub created: bool,
    /// Updated in place (metadata only).
    pub updated: bool,
}

/// Creates, updates in place (metadata changes) or rotates (spec changes) a template
/// copy. `prefix` names a rotated copy (`<cluster>-` or `<cluster>-<md>-`).
pub(crate) async fn template(
    cluster: &ManagementCluster,
    current: Option<&Value>,
    desired: &Value,
    compatibility: Compatibility,
    prefix: &str,
) -> Result<TemplateOutcome, ReconcileError> {
    let Some(current) = current else {
        let created = create(cluster, desired).await?;
        return Ok(TemplateOutcome {
            name: created.name().to_string(),
            replaced: None,
            created: true,
            updated: false,
        });
    };
    let same_kind = group_of(current.api_version()) == group_of(desired.api_version())
        && current.kind() == desired.kind();
    if current.namespace() != desired.namespace()
        || (compatibility == Compatibility::SameKind && !same_kind)
    {
        return Err(ReconcileError::invalid(format!(
            "failed to rotate {}: {} {}/{} cannot be replaced by {} {}/{}",
            desired.kind(),
            current.kind(),
            current.namespace(),
            current.name(),
            desired.kind(),
            desired.namespace(),
            desired.name()
        )));
    }
    let intent = merge::intent(desired);
    let change = if same_kind {
        merge::change(current, &merge::apply(current, &intent))
    } else {
        Change {
            any: true,
            spec: true,
        }
    };
    if !change.any {
        return Ok(TemplateOutcome {
            name: current.name().to_string(),
            replaced: None,
            created: false,
            updated: false,
        });
    }
    if !change.spec {
        update(cluster, current, &intent).await?;
        return Ok(TemplateOutcome {
            name: current.name().to_string(),
            replaced: None,
            created: false,
            updated: true,
        });
    }
    // A spec change: a new template under a new name, so machines created from the old
    // one keep their template until the holder rolls them.
    let mut rotated = intent;
    if let Some(metadata) = rotated.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("name");
        metadata.insert("generateName".into(), json!(prefix));
    }
    let created = cluster
        .create(&topograph_api::managed::record(rotated))
        .await?;
    Ok(TemplateOutcome {
        name: created.name().to_string(),
        replaced: Some(current.clone()),
        created: true,
        updated: false,
    })
}
