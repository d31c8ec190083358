//! The write primitives every part of a reconcile uses, all server-side applies as the
//! client's field manager with force, as Cluster API's topology controller writes:
//! create from a desired object, update to an intent (skipped when a local prediction
//! says nothing would change), and template reconciliation with rotation (spec
//! section 2).

use serde_json::{Value, json};
use topograph_api::object::{ObjectExt, group_of};

use topograph_api::managed::MANAGED_PATHS;

use crate::error::ReconcileError;
use crate::events;
use crate::merge;
use topograph_management::ManagementCluster;
use topograph_management::error::Error as ClientError;

/// What the topology applies to an existing object: its identity, the current uid (so
/// an apply can never re-create an object deleted in between, as Cluster API sends it),
/// and the parts of `intent` the topology owns.
fn apply_body(current: &Value, intent: &Value) -> Value {
    with_identity(merge::intent(intent), current)
}

/// `body` naming `current`: its apiVersion and kind where the body has none, its name,
/// namespace and uid.
fn with_identity(mut body: Value, current: &Value) -> Value {
    for key in ["apiVersion", "kind"] {
        if body.get(key).is_none()
            && let Some(v) = current.get(key)
        {
            body[key] = v.clone();
        }
    }
    for key in ["name", "namespace", "uid"] {
        if let Some(v) = current.pointer(&format!("/metadata/{key}")) {
            body["metadata"][key] = v.clone();
        }
    }
    body
}

/// The record of managed paths earlier versions kept in an annotation; server-side
/// apply's managed fields replace it.
fn has_legacy_record(object: &Value) -> bool {
    object.annotations().contains_key(MANAGED_PATHS)
}

/// Drops the legacy annotation and the ownership earlier non-apply writes of this
/// client recorded (its own `Update` entries, and unnamed ones), so the fields it set
/// are owned by its `Apply` entry alone and go when the topology stops setting them.
async fn forget_legacy_record(
    cluster: &ManagementCluster,
    object: &Value,
) -> Result<Value, ReconcileError> {
    let manager = cluster.field_manager();
    let entries: Vec<Value> = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter(|e| {
                    let by = e.get("manager").and_then(Value::as_str).unwrap_or("");
                    let update = e.get("operation").and_then(Value::as_str) == Some("Update");
                    !(update && (by.is_empty() || by == manager))
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    // With the object's resourceVersion: the managed fields are replaced whole, so a
    // write in between must fail this patch (409, retried next reconcile) rather than
    // lose its owner's entry.
    let resource_version = object
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    let mut patch = json!({"metadata": {
        "resourceVersion": resource_version,
        "annotations": {MANAGED_PATHS: null},
    }});
    if !entries.is_empty() {
        patch["metadata"]["managedFields"] = Value::Array(entries);
    }
    Ok(cluster.merge_patch(object, &patch).await?)
}

/// Brings the object `current` to `intent` with one server-side apply as the client's
/// field manager: the intent is all the topology sets on the object, so fields it set
/// last time and no longer sets are removed by the server, and fields others own stay.
/// Whether anything would change is computed locally first, so a converged object costs
/// no request. `Some(stored)` when written, `None` when it already matched.
pub(crate) async fn update(
    cluster: &ManagementCluster,
    current: &Value,
    intent: &Value,
) -> Result<Option<Value>, ReconcileError> {
    let body = apply_body(current, intent);
    let predicted = cluster.predict_apply(Some(current), &body).await?;
    write_predicted(cluster, current, &body, &predicted).await
}

/// The write of `body` over `current` once a local apply `predicted` what it does: the
/// apply when it changes anything, and the legacy record's removal when the object
/// still carries one. `None` when nothing was written.
async fn write_predicted(
    cluster: &ManagementCluster,
    current: &Value,
    body: &Value,
    predicted: &topograph_management::api::Prediction,
) -> Result<Option<Value>, ReconcileError> {
    let legacy = has_legacy_record(current);
    if !predicted.changed && !legacy {
        return Ok(None);
    }
    let mut stored = if predicted.changed {
        let stored = cluster.apply(body).await?;
        if !legacy {
            cluster.remember_applied(&stored, body);
        }
        if !predicted.overridden.is_empty() {
            events::record(
                cluster,
                &stored,
                events::UPDATE,
                forced_message(&stored, &predicted.overridden),
            );
        }
        stored
    } else {
        current.clone()
    };
    if legacy {
        stored = forget_legacy_record(cluster, &stored).await?;
    }
    Ok(Some(stored))
}

/// The Event text when an apply took fields other managers owned: which fields, from
/// whom, in kube-apiserver's words for the conflicts force overrode.
fn forced_message(stored: &Value, overridden: &topograph_ssa::Conflicts) -> String {
    format!(
        "Updated {} {} by force over {}: {}",
        stored.kind(),
        events::key(stored),
        overridden.count_text(),
        overridden.listing()
    )
}

/// [`update`], for callers outside the reconcile (the same write).
pub async fn apply_intent(
    cluster: &ManagementCluster,
    current: &Value,
    intent: &Value,
) -> Result<Option<Value>, ReconcileError> {
    update(cluster, current, intent).await
}

/// Creates the object `desired` describes (only the parts the topology owns are sent)
/// with a server-side apply, as Cluster API does: names are deterministic, so an object
/// a crashed reconcile created before it could record it is found under the same name
/// and brought to the intent instead of failing the reconcile forever.
pub(crate) async fn create(
    cluster: &ManagementCluster,
    desired: &Value,
) -> Result<Value, ReconcileError> {
    // `merge::intent` never carries a uid: an apply that creates must not name one.
    let intent = merge::intent(desired);
    match cluster.apply(&intent).await {
        Ok(created) => {
            // What the next reconcile's update of it will predict (`apply_body`: the
            // same intent naming the created object), answered now.
            cluster.remember_applied(&created, &with_identity(intent, &created));
            Ok(created)
        }
        Err(ClientError::Api(e)) => Err(create_error(desired, &e)),
        Err(other) => Err(other.into()),
    }
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
    // The engine names a copy whose spec changed anew (deterministically, so a plan
    // and the reconcile after it agree); a copy of another kind is new as well.
    let rotation = if desired.name() != current.name() || !same_kind {
        desired.clone()
    } else {
        let body = apply_body(current, &merge::intent(desired));
        let predicted = cluster.predict_apply(Some(current), &body).await?;
        if predicted.object.get("spec") == current.get("spec") {
            let updated = write_predicted(cluster, current, &body, &predicted)
                .await?
                .is_some();
            return Ok(TemplateOutcome {
                name: current.name().to_string(),
                replaced: None,
                created: false,
                updated,
            });
        }
        // The spec changes only by what the topology stopped setting (the engine sees
        // the desired fields in place): a rotation too, named from what it becomes.
        let spec = predicted.object.get("spec").cloned().unwrap_or_default();
        let suffix = topograph_engine::names::suffix(&[
            current.namespace(),
            current.name(),
            "release",
            &spec.to_string(),
        ]);
        let mut renamed = desired.clone();
        let name = topograph_engine::names::simple(prefix, &suffix);
        topograph_api::object::set_at(&mut renamed, &["metadata", "name"], json!(name));
        renamed
    };
    // A new template under a new name, so machines created from the old one keep their
    // template until the holder rolls them.
    let created = create(cluster, &rotation).await?;
    Ok(TemplateOutcome {
        name: created.name().to_string(),
        replaced: Some(current.clone()),
        created: true,
        updated: false,
    })
}
