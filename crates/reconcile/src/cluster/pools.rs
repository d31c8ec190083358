//! MachinePools (spec 7.1 step 9.7), after the MachineDeployments: the ones the
//! topology gained are created (infrastructure machine pool, bootstrap config, then the
//! MachinePool), the ones it keeps are updated (the two objects patched in place, never
//! rotated, then the MachinePool), and the ones it lost are deleted. Pools whose
//! creation waits for the control plane, and pools pending a version upgrade, are left
//! as they are. A pool has no health check.

use std::collections::BTreeSet;

use serde_json::Value;
use topograph_api::object::{ObjectExt, group_kind, group_of};
use topograph_engine::desired::DesiredMachinePool;
use topograph_engine::{DesiredState, labels};

use super::Run;
use super::read::{Current, CurrentMachinePool};
use super::write;
use crate::class::API_VERSION;
use crate::error::ReconcileError;
use crate::events::{self, CREATE, DELETE, UPDATE};
use crate::merge;

const VERSION: &[&str] = &["spec", "template", "spec", "version"];

pub(crate) async fn reconcile(
    run: &mut Run<'_>,
    current: &Current,
    desired: &DesiredState,
) -> Result<(), ReconcileError> {
    let new: Vec<&DesiredMachinePool> = desired
        .machine_pools
        .iter()
        .filter(|mp| !current.machine_pools.contains_key(&mp.topology_name))
        .collect();
    if !new.is_empty() {
        // The pools were read once at the start; a reconcile racing this one may have
        // made one since, and a second pool for one topology entry would never go.
        let live = live_topology_names(run).await?;
        for mp in new {
            if !live.contains(&mp.topology_name) {
                create(run, desired, mp).await?;
            }
        }
    }
    for mp in &desired.machine_pools {
        if let Some(existing) = current.machine_pools.get(&mp.topology_name) {
            update(run, desired, existing, mp).await?;
        }
    }
    for (name, existing) in &current.machine_pools {
        if !desired
            .machine_pools
            .iter()
            .any(|mp| &mp.topology_name == name)
        {
            remove(run, existing).await?;
        }
    }
    Ok(())
}

/// The topology names of the Cluster's MachinePools as the API server has them now.
async fn live_topology_names(run: &Run<'_>) -> Result<BTreeSet<String>, ReconcileError> {
    let cluster = &run.cluster;
    let owned = [
        (labels::CLUSTER_NAME, cluster.name()),
        (labels::TOPOLOGY_OWNED, ""),
    ];
    let pools = run
        .api
        .list(API_VERSION, "MachinePool", cluster.namespace(), &owned)
        .await
        .map_err(|e| {
            ReconcileError::from(e).context("failed to read MachinePools for managed topology")
        })?;
    Ok(pools
        .iter()
        .filter_map(|mp| mp.labels().get(labels::POOL_NAME).cloned())
        .filter(|name| !name.is_empty())
        .collect())
}

/// `ns/name`, as Cluster API's wrapped errors name an object.
fn object_key(object: &Value) -> String {
    format!("{}/{}", object.namespace(), object.name())
}

async fn create(
    run: &mut Run<'_>,
    desired: &DesiredState,
    mp: &DesiredMachinePool,
) -> Result<(), ReconcileError> {
    if desired
        .upgrade
        .must_not_create_machine_pool(&mp.topology_name)
    {
        return Ok(());
    }
    let infrastructure_created = referenced_object(run, None, &mp.infrastructure_object)
        .await
        .map_err(|e| {
            e.context(format!(
                "failed to create MachinePool {}",
                object_key(&mp.object)
            ))
        })?;
    let bootstrap_created = match referenced_object(run, None, &mp.bootstrap_object).await {
        Ok(created) => created,
        Err(e) => {
            if infrastructure_created {
                clean_up(run, &mp.infrastructure_object).await;
            }
            // Cluster API names the kind here, where it names the object above.
            return Err(e.context(format!("failed to create MachinePool {}", mp.object.kind())));
        }
    };
    match write::create(run.api, &mp.object).await {
        Ok(created) => {
            run.outcome.created += 1;
            run.event(
                CREATE,
                format!("Created MachinePool {}", events::key(&created)),
            );
            Ok(())
        }
        Err(e) => {
            // Objects made for a pool that does not exist would only be collected
            // with the Cluster; the next attempt makes them again.
            if infrastructure_created {
                clean_up(run, &mp.infrastructure_object).await;
            }
            if bootstrap_created {
                clean_up(run, &mp.bootstrap_object).await;
            }
            Err(e)
        }
    }
}

/// Deletes an object this reconcile created, best effort: the Cluster owns it, so
/// garbage collection takes it with the Cluster if this fails.
async fn clean_up(run: &mut Run<'_>, object: &Value) {
    match run.api.delete(object).await {
        Ok(_) => run.outcome.deleted += 1,
        Err(e) => tracing::warn!(
            kind = object.kind(),
            name = object.name(),
            error = %e,
            "could not clean up after a failed MachinePool creation; it goes with the Cluster"
        ),
    }
}

async fn update(
    run: &mut Run<'_>,
    desired: &DesiredState,
    existing: &CurrentMachinePool,
    mp: &DesiredMachinePool,
) -> Result<(), ReconcileError> {
    // A pool pending a version upgrade is not touched at all, so that it does not roll
    // out twice (once for the spec now, once for the version later).
    if existing
        .object
        .at(&["metadata", "deletionTimestamp"])
        .is_some()
        || desired
            .upgrade
            .must_not_update_machine_pool(&mp.topology_name)
    {
        return Ok(());
    }
    let failed = || {
        format!(
            "failed to reconcile MachinePool {}",
            object_key(&existing.object)
        )
    };
    referenced_object(
        run,
        existing.infrastructure_object.as_ref(),
        &mp.infrastructure_object,
    )
    .await
    .map_err(|e| e.context(failed()))?;
    referenced_object(
        run,
        existing.bootstrap_object.as_ref(),
        &mp.bootstrap_object,
    )
    .await
    .map_err(|e| e.context(failed()))?;
    let version_from = existing
        .object
        .at(VERSION)
        .and_then(Value::as_str)
        .map(str::to_string);
    let stored = write::update(run.api, &existing.object, &merge::intent(&mp.object))
        .await
        .map_err(|e| {
            e.context(format!(
                "failed to patch MachinePool {}",
                object_key(&existing.object)
            ))
        })?;
    if let Some(stored) = stored {
        run.outcome.updated += 1;
        let message = events::updated(&stored, VERSION, version_from.as_deref());
        run.event(UPDATE, message);
    }
    Ok(())
}

/// Creates an object the MachinePool references, or brings the existing one to the
/// desired state in place: it keeps its name, group and kind for as long as the pool
/// lives (the pool's controller works on it directly, there is no template to
/// rotate). Whether it was created.
async fn referenced_object(
    run: &mut Run<'_>,
    current: Option<&Value>,
    desired: &Value,
) -> Result<bool, ReconcileError> {
    let Some(current) = current else {
        write::create(run.api, desired).await?;
        run.outcome.created += 1;
        run.event(
            CREATE,
            format!("Created {} {}", desired.kind(), events::key(desired)),
        );
        return Ok(true);
    };
    strictly_compatible(current, desired)?;
    let stored = write::update(run.api, current, &merge::intent(desired))
        .await
        .map_err(|e| {
            e.context(format!(
                "failed to patch {} {}",
                current.kind(),
                object_key(current)
            ))
        })?;
    if stored.is_some() {
        run.outcome.updated += 1;
        run.event(
            UPDATE,
            format!("Updated {} {}", desired.kind(), events::key(desired)),
        );
    }
    Ok(false)
}

/// Cluster API's strict compatibility of a referenced object with its desired state:
/// same name, API group, kind and namespace, every difference reported (one, or all
/// of them in brackets, as Go's error aggregates print).
fn strictly_compatible(current: &Value, desired: &Value) -> Result<(), ReconcileError> {
    let gk = group_kind(current.api_version(), current.kind());
    let name = current.name();
    let mut problems = Vec::new();
    let mut differ = |field: &str, what: &str, from: &str, to: &str, why: &str| {
        if from != to {
            problems.push(format!(
                "metadata.{field}: Forbidden: {what} of {gk}/{name} cannot be changed from {from:?} to {to:?} {why}"
            ));
        }
    };
    let incompatible = "to prevent incompatible changes in the Cluster";
    differ("name", "metadata.name", name, desired.name(), incompatible);
    differ(
        "apiVersion",
        "apiVersion.group",
        group_of(current.api_version()),
        group_of(desired.api_version()),
        incompatible,
    );
    differ(
        "kind",
        "apiVersion.kind",
        current.kind(),
        desired.kind(),
        incompatible,
    );
    differ(
        "namespace",
        "metadata.namespace",
        current.namespace(),
        desired.namespace(),
        "because templates must be in the same namespace as the Cluster",
    );
    match problems.as_slice() {
        [] => Ok(()),
        [one] => Err(ReconcileError::invalid(one.clone())),
        many => Err(ReconcileError::invalid(format!("[{}]", many.join(", ")))),
    }
}

/// Deletes a MachinePool that left the topology, then the two objects it referenced:
/// Cluster API's MachinePool controller deletes those when its pool goes, and here it
/// is done at once so that a management cluster without that controller is left
/// clean (with it, the second delete finds nothing).
async fn remove(run: &mut Run<'_>, existing: &CurrentMachinePool) -> Result<(), ReconcileError> {
    if existing
        .object
        .at(&["metadata", "deletionTimestamp"])
        .is_none()
    {
        run.api.delete(&existing.object).await.map_err(|e| {
            ReconcileError::from(e).context(format!(
                "failed to delete MachinePool {}",
                object_key(&existing.object)
            ))
        })?;
        run.outcome.deleted += 1;
        run.event(
            DELETE,
            format!("Deleted MachinePool {}", events::key(&existing.object)),
        );
    }
    for object in [
        existing.bootstrap_object.as_ref(),
        existing.infrastructure_object.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        if object.labels().contains_key(labels::TOPOLOGY_OWNED)
            && object.at(&["metadata", "deletionTimestamp"]).is_none()
        {
            run.api.delete(object).await?;
            run.outcome.deleted += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(api_version: &str, kind: &str, namespace: &str, name: &str) -> Value {
        json!({"apiVersion": api_version, "kind": kind,
               "metadata": {"name": name, "namespace": namespace}})
    }

    #[test]
    fn referenced_objects_keep_name_group_kind_and_namespace() {
        let infra = "infrastructure.cluster.x-k8s.io/v1beta1";
        let current = object(infra, "DockerMachinePool", "ns", "c-mp-abc");
        // Another version of the same group is the same object.
        let newer = object(
            "infrastructure.cluster.x-k8s.io/v1beta2",
            "DockerMachinePool",
            "ns",
            "c-mp-abc",
        );
        assert!(strictly_compatible(&current, &newer).is_ok());
        let renamed = object(infra, "DockerMachinePool", "ns", "c-mp-xyz");
        assert_eq!(
            strictly_compatible(&current, &renamed)
                .unwrap_err()
                .to_string(),
            "metadata.name: Forbidden: metadata.name of DockerMachinePool.infrastructure.cluster.x-k8s.io/c-mp-abc cannot be changed from \"c-mp-abc\" to \"c-mp-xyz\" to prevent incompatible changes in the Cluster"
        );
        let other = object("example.com/v1", "Pool", "other", "c-mp-abc");
        let message = strictly_compatible(&current, &other)
            .unwrap_err()
            .to_string();
        assert!(message.starts_with("[metadata.apiVersion: Forbidden: apiVersion.group of DockerMachinePool.infrastructure.cluster.x-k8s.io/c-mp-abc cannot be changed from \"infrastructure.cluster.x-k8s.io\" to \"example.com\""), "{message}");
        assert!(message.contains(", metadata.kind: Forbidden: apiVersion.kind of DockerMachinePool.infrastructure.cluster.x-k8s.io/c-mp-abc cannot be changed from \"DockerMachinePool\" to \"Pool\" to prevent incompatible changes in the Cluster, "), "{message}");
        assert!(message.ends_with("metadata.namespace: Forbidden: metadata.namespace of DockerMachinePool.infrastructure.cluster.x-k8s.io/c-mp-abc cannot be changed from \"ns\" to \"other\" because templates must be in the same namespace as the Cluster]"), "{message}");
    }
}
