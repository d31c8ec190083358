//! The Cluster-level objects, in Cluster API's order: the shim Secret that guards
//! creation, the InfrastructureCluster, the ControlPlane (its health check, its machine
//! template with rotation, the object itself), then the Cluster's own fields.

use serde_json::{Map, Value, json};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_api::object::{ObjectExt, set_at};
use topograph_engine::DesiredState;
use topograph_engine::contract::{ContractFields, Path};
use topograph_engine::labels;
use topograph_engine::wire;

use super::Run;
use super::read::Current;
use super::write::{self, Compatibility};
use crate::error::ReconcileError;
use crate::events::{self, CREATE, DELETE, UPDATE};
use crate::merge;

/// The annotation saying which version an upgrade is moving the control plane to.
pub const UPGRADE_STEP: &str = topograph_engine::upgrade::UPGRADE_STEP_ANNOTATION;

pub(crate) async fn reconcile(
    run: &mut Run<'_>,
    c: &Cluster,
    class: &ClusterClass,
    current: &Current,
    desired: &DesiredState,
) -> Result<(), ReconcileError> {
    let mut infrastructure = desired.infrastructure_cluster.clone();
    let mut control_plane = desired.control_plane.object.clone();
    shim(run, c, current, infrastructure.as_mut(), &mut control_plane).await?;

    if let Some(infra) = &infrastructure {
        holder(run, current.infrastructure_cluster.as_ref(), infra, None).await?;
    }

    let cp_current = current.control_plane.as_ref();
    health_check(
        run,
        current.control_plane_health_check.as_ref(),
        desired.control_plane.health_check.as_ref(),
    )
    .await?;
    if !control_plane_pending_upgrade(desired) {
        let mut replaced = None;
        if let Some(template) = &desired.control_plane.machine_template {
            let outcome = write::template(
                run.api,
                current.control_plane_template.as_ref(),
                template,
                Compatibility::SameKind,
                &format!("{}-", c.name),
            )
            .await?;
            template_events(
                run,
                &outcome,
                template,
                current.control_plane_template.as_ref(),
            )
            .await;
            if outcome.name != template.name() {
                let reference = current
                    .contract_of(&control_plane)
                    .control_plane()
                    .infrastructure_ref;
                set_at(
                    &mut control_plane,
                    &[reference.path, &["name"]].concat(),
                    json!(outcome.name),
                );
            }
            replaced = outcome.replaced;
        }
        let version_at = current.contract_of(&control_plane).control_plane().version;
        let version_from = cp_current
            .and_then(|cp| cp.at(current.contract_of(cp).control_plane().version))
            .and_then(Value::as_str)
            .map(str::to_string);
        holder(
            run,
            cp_current,
            &control_plane,
            Some((version_at, version_from)),
        )
        .await?;
        if let Some(old) = replaced {
            run.api.delete(&old).await.map_err(|e| {
                ReconcileError::invalid(format!(
                    "failed to delete old {} {}/{} of {} {}/{}: {e}",
                    old.kind(),
                    old.namespace(),
                    old.name(),
                    control_plane.kind(),
                    control_plane.namespace(),
                    control_plane.name()
                ))
            })?;
            run.outcome.deleted += 1;
        }
    }
    cluster_fields(run, class, current, desired).await
}

fn control_plane_pending_upgrade(desired: &DesiredState) -> bool {
    desired.upgrade.must_not_touch_control_plane()
}

/// Creates or updates an object the Cluster references (never renamed). `version` is,
/// for a control plane, where its version is and what it was, for the Event.
async fn holder(
    run: &mut Run<'_>,
    current: Option<&Value>,
    desired: &Value,
    version: Option<(Path, Option<String>)>,
) -> Result<(), ReconcileError> {
    let Some(current) = current else {
        let created = write::create(run.api, desired).await?;
        run.outcome.created += 1;
        run.event(
            CREATE,
            format!("Created {} {}", created.kind(), events::key(&created)),
        );
        return Ok(());
    };
    if current.name() != desired.name()
        || current.kind() != desired.kind()
        || topograph_api::object::group_of(current.api_version())
            != topograph_api::object::group_of(desired.api_version())
    {
        return Err(ReconcileError::invalid(format!(
            "{} {}/{} cannot be replaced by {} {}/{}: objects the Cluster references are never renamed nor change kind",
            current.kind(),
            current.namespace(),
            current.name(),
            desired.kind(),
            desired.namespace(),
            desired.name()
        )));
    }
    let intent = merge::without_empty_endpoint(merge::intent(desired));
    if let Some(stored) = write::update(run.api, current, &intent).await? {
        run.outcome.updated += 1;
        let message = match &version {
            Some((at, from)) => events::updated(&stored, at, from.as_deref()),
            None => events::updated(&stored, &[], None),
        };
        run.event(UPDATE, message);
    }
    Ok(())
}

/// Events for a template reconcile.
pub(crate) async fn template_events(
    run: &mut Run<'_>,
    outcome: &write::TemplateOutcome,
    desired: &Value,
    current: Option<&Value>,
) {
    let key = format!("\"{}/{}\"", desired.namespace(), outcome.name);
    if outcome.created {
        run.outcome.created += 1;
        let message = match &outcome.replaced {
            Some(old) => format!(
                "Created {} {key} as a replacement for {} (template rotation)",
                desired.kind(),
                events::key(old)
            ),
            None => format!("Created {} {key}", desired.kind()),
        };
        run.event(CREATE, message);
    } else if outcome.updated {
        run.outcome.updated += 1;
        let kind = current.map_or(desired.kind(), |c| c.kind());
        run.event(UPDATE, format!("Updated {kind} {key} (metadata changes)"));
    }
}

/// Creates, updates or deletes a MachineHealthCheck; the topology owns the spec fields
/// it applies (as with every object it writes with server-side apply).
pub(crate) async fn health_check(
    run: &mut Run<'_>,
    current: Option<&Value>,
    desired: Option<&Value>,
) -> Result<(), ReconcileError> {
    match (current, desired) {
        (None, Some(desired)) => {
            let created = write::create(run.api, desired).await?;
            run.outcome.created += 1;
            let message = format!("Created MachineHealthCheck {}", events::key(&created));
            events::record(run.api, &created, CREATE, message);
        }
        (Some(current), Some(desired)) => {
            let intent = merge::intent(desired);
            if let Some(stored) = write::update(run.api, current, &intent).await? {
                run.outcome.updated += 1;
                let message = format!("Updated MachineHealthCheck {}", events::key(&stored));
                events::record(run.api, &stored, UPDATE, message);
            }
        }
        (Some(current), None) if current.labels().contains_key(labels::TOPOLOGY_OWNED) => {
            run.api.delete(current).await?;
            run.outcome.deleted += 1;
            let message = format!("Deleted MachineHealthCheck {}", events::key(current));
            events::record(run.api, current, DELETE, message);
        }
        _ => {}
    }
    Ok(())
}

/// The shim Secret (spec 7.1, step 9.1): while the InfrastructureCluster or the
/// ControlPlane does not exist, both are created owned by a Secret the Cluster owns, so
/// a failed creation leaves nothing behind; once both exist and both are owned by the
/// Cluster, the shim goes.
async fn shim(
    run: &mut Run<'_>,
    c: &Cluster,
    current: &Current,
    infrastructure: Option<&mut Value>,
    control_plane: &mut Value,
) -> Result<(), ReconcileError> {
    let name = format!("{}-shim", c.name);
    let missing = (infrastructure.is_some() && current.infrastructure_cluster.is_none())
        || current.control_plane.is_none();
    if missing {
        // Created without a read first: the shim usually does not exist yet, and one
        // left by an attempt that failed half way answers AlreadyExists, then is read.
        let secret = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "cluster.x-k8s.io/secret",
            "metadata": {
                "name": name,
                "namespace": c.namespace,
                "labels": {labels::CLUSTER_NAME: c.name},
                "ownerReferences": [wire::cluster_owner_ref(c)],
            },
        });
        let secret = match run.api.create(&secret).await {
            Ok(created) => {
                run.outcome.created += 1;
                created
            }
            Err(e) if e.has_code(409) => {
                match run.api.get("v1", "Secret", &c.namespace, &name).await? {
                    Some(secret) => secret,
                    None => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        };
        let owner = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "name": name,
            "uid": secret.at(&["metadata", "uid"]).cloned().unwrap_or(Value::Null),
        });
        for object in infrastructure.into_iter().chain([control_plane]) {
            add_owner(object, &owner);
        }
        return Ok(());
    }
    let owned_by = |object: Option<&Value>, kind: &str, owner: &str| {
        object.is_some_and(|o| {
            o.at(&["metadata", "ownerReferences"])
                .and_then(Value::as_array)
                .is_some_and(|owners| {
                    owners.iter().any(|r| {
                        r.get("kind").and_then(Value::as_str) == Some(kind)
                            && r.get("name").and_then(Value::as_str) == Some(owner)
                    })
                })
        })
    };
    let objects = [
        current.infrastructure_cluster.as_ref(),
        current.control_plane.as_ref(),
    ];
    let present: Vec<&Value> = objects.iter().flatten().copied().collect();
    let all_owned_by_cluster = present
        .iter()
        .all(|o| owned_by(Some(o), "Cluster", &c.name));
    let any_shim = present.iter().any(|o| owned_by(Some(o), "Secret", &name));
    if all_owned_by_cluster && any_shim {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": c.namespace}});
        // Deleted without a read first: a shim already gone is not an error.
        if run.api.delete(&secret).await? {
            run.outcome.deleted += 1;
        }
    }
    Ok(())
}

fn add_owner(object: &mut Value, owner: &Value) {
    let owners = object
        .at(&["metadata", "ownerReferences"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if owners
        .iter()
        .any(|o| o.get("kind") == owner.get("kind") && o.get("name") == owner.get("name"))
    {
        return;
    }
    let mut owners = owners;
    owners.push(owner.clone());
    set_at(
        object,
        &["metadata", "ownerReferences"],
        Value::Array(owners),
    );
}

/// `cluster` without the fields [`cluster_fields`] writes: what a change of the Cluster
/// means to its next reconcile when the reconcile itself made it (the watchers ignore
/// them, so a reconcile's own writes do not queue another).
pub fn without_topology_fields(mut cluster: Value) -> Value {
    if let Some(spec) = cluster.get_mut("spec").and_then(Value::as_object_mut) {
        for key in [
            "infrastructureRef",
            "controlPlaneRef",
            "controlPlaneEndpoint",
        ] {
            spec.remove(key);
        }
    }
    if let Some(metadata) = cluster.get_mut("metadata").and_then(Value::as_object_mut) {
        for (field, keys) in [
            (
                "labels",
                &[labels::CLUSTER_NAME, labels::TOPOLOGY_OWNED][..],
            ),
            ("annotations", &[UPGRADE_STEP][..]),
        ] {
            if let Some(map) = metadata.get_mut(field).and_then(Value::as_object_mut) {
                for key in keys {
                    map.remove(*key);
                }
                if map.is_empty() {
                    metadata.remove(field);
                }
            }
        }
    }
    cluster
}

/// The Cluster's own fields the topology owns (spec 1.11): its two labels, the
/// references to the InfrastructureCluster and the ControlPlane, the upgrade-step
/// annotation, and the control plane endpoint when it comes from an object the topology
/// created. Written as a JSON merge patch, only when something differs.
async fn cluster_fields(
    run: &mut Run<'_>,
    class: &ClusterClass,
    current: &Current,
    desired: &DesiredState,
) -> Result<(), ReconcileError> {
    let cluster = run.cluster.clone();
    let want = &desired.cluster;
    let mut patch = Map::new();
    let mut labels_patch = Map::new();
    for key in [labels::CLUSTER_NAME, labels::TOPOLOGY_OWNED] {
        let have = cluster.labels().get(key).cloned();
        let wanted = want.labels().get(key).cloned();
        if have != wanted {
            labels_patch.insert(key.to_string(), json!(wanted));
        }
    }
    let mut annotations_patch = Map::new();
    let have = cluster.annotations().get(UPGRADE_STEP).cloned();
    let wanted = desired.upgrade.upgrade_step.clone();
    if have != wanted {
        annotations_patch.insert(UPGRADE_STEP.to_string(), json!(wanted));
    }
    let mut metadata = Map::new();
    if !labels_patch.is_empty() {
        metadata.insert("labels".into(), Value::Object(labels_patch));
    }
    if !annotations_patch.is_empty() {
        metadata.insert("annotations".into(), Value::Object(annotations_patch));
    }
    if !metadata.is_empty() {
        patch.insert("metadata".into(), Value::Object(metadata));
    }
    let mut spec = Map::new();
    for key in ["infrastructureRef", "controlPlaneRef"] {
        if let Some(r) = want.at(&["spec", key]) {
            let have = cluster.at(&["spec", key]).cloned().unwrap_or(Value::Null);
            if merge::enforce(&have, r) != have {
                spec.insert(key.to_string(), r.clone());
            }
        }
    }
    // Seed 004: without an InfrastructureCluster the ControlPlane provides the endpoint.
    let endpoint_source = if class.infrastructure.is_some() {
        current.infrastructure_cluster.as_ref()
    } else {
        current.control_plane.as_ref()
    };
    if let Some(endpoint) = endpoint_source.and_then(|o| o.at(&["spec", "controlPlaneEndpoint"]))
        && endpoint
            .get("host")
            .and_then(Value::as_str)
            .is_some_and(|h| !h.is_empty())
        && cluster.at(&["spec", "controlPlaneEndpoint"]) != Some(endpoint)
    {
        spec.insert("controlPlaneEndpoint".into(), endpoint.clone());
    }
    if !spec.is_empty() {
        patch.insert("spec".into(), Value::Object(spec));
    }
    if patch.is_empty() {
        return Ok(());
    }
    let stored = run.api.merge_patch(&cluster, &Value::Object(patch)).await?;
    run.outcome.updated += 1;
    run.event(UPDATE, format!("Updated Cluster {}", events::key(&stored)));
    run.cluster = stored;
    Ok(())
}
