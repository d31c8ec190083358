//! Reconciles one Cluster with a managed topology (spec section 7.1):
//!
//! 1. read the Cluster; stop if it has no topology, is paused or is being deleted;
//! 2. read its ClusterClass, reconciling the class first when it has not been;
//! 3. read the current objects ([`read`]) and compute the desired state with the engine
//!    (admission included: an invalid Cluster is reported and nothing is written);
//! 4. write the differences in Cluster API's order: the InfrastructureCluster, the
//!    ControlPlane (health check, machine template with rotation, object), the Cluster's
//!    own fields, then the MachineDeployments and the MachinePools ([`control_plane`],
//!    [`workers`], [`pools`]); holders waiting for a version upgrade are not touched;
//! 5. report `TopologyReconciled`, `observedGeneration` and the provisioning phase on the
//!    Cluster's status ([`status`]), writing only when something changed.

mod control_plane;
mod pools;
mod read;
pub(crate) mod status;
mod workers;
pub(crate) mod write;

use serde_json::Value;
use topograph_api::object::ObjectExt;

use crate::class::{self, API_VERSION};
use crate::error::ReconcileError;
use crate::events;
use status::Progress;
use topograph_engine::Engine;
use topograph_engine::service::{RenderFailure, RenderInputs};
use topograph_management::ManagementCluster;

/// What one reconcile did: objects created, updated and deleted, and every write request
/// it made (status and Events included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Outcome {
    /// Objects created.
    pub created: u64,
    /// Objects updated.
    pub updated: u64,
    /// Objects deleted.
    pub deleted: u64,
    /// Write requests made (create, update, patch, delete).
    pub writes: u64,
}

/// State shared by the steps of one reconcile.
pub(crate) struct Run<'a> {
    pub api: &'a ManagementCluster,
    pub cluster: Value,
    pub outcome: Outcome,
}

impl Run<'_> {
    /// Records an Event on the Cluster.
    pub async fn event(&self, reason: &str, message: String) {
        events::record(self.api, &self.cluster, reason, message).await;
    }
}

/// Reconciles the Cluster `namespace/name` once.
pub async fn reconcile_cluster(
    api: &ManagementCluster,
    engine: &dyn Engine,
    namespace: &str,
    name: &str,
) -> Result<Outcome, ReconcileError> {
    // Writes are counted for this reconcile alone, whatever else uses the cluster.
    let api = &api.counting_apart();
    let Some(cluster) = api.get(API_VERSION, "Cluster", namespace, name).await? else {
        return Err(ReconcileError::ClusterNotFound(format!(
            "{namespace}/{name}"
        )));
    };
    if cluster.at(&["spec", "topology"]).is_none() {
        return Ok(Outcome::default());
    }
    let mut run = Run {
        api,
        cluster: cluster.clone(),
        outcome: Outcome::default(),
    };
    let progress = reconcile(&mut run, engine).await;
    // The Cluster as last written: its generation moves when the topology sets its refs.
    let reported = status::report(api, &run.cluster, &progress).await;
    let mut outcome = run.outcome;
    outcome.writes = api.writes().total();
    match (progress, reported) {
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(e),
        (Ok(_), Ok(())) => Ok(outcome),
    }
}

async fn reconcile(run: &mut Run<'_>, engine: &dyn Engine) -> Result<Progress, ReconcileError> {
    let cluster = &run.cluster;
    if let Some(message) = status::paused(cluster) {
        return Ok(Progress::Paused(message));
    }
    if cluster.at(&["metadata", "deletionTimestamp"]).is_some() {
        return Ok(Progress::Deleting);
    }
    let c = topograph_api::load::decode_cluster(cluster.clone()).map_err(|e| {
        ReconcileError::invalid(format!(
            "Cluster {}/{} cannot be read: {e}",
            cluster.namespace(),
            cluster.name()
        ))
    })?;
    let Some(topology) = c.topology.as_ref() else {
        return Ok(Progress::Done(status::Done::default()));
    };
    let class_namespace = topology.class_namespace_or(&c.namespace).to_string();
    let class_name = topology.class.clone();
    let class_object = read_class(run.api, &class_namespace, &class_name).await?;
    if class::not_reconciled(&class_object).is_some() {
        return Ok(Progress::ClassNotReconciled);
    }
    let class =
        topograph_api::load::decode_cluster_class(class_object.clone()).map_err(|problems| {
            ReconcileError::invalid(format!(
                "ClusterClass {class_namespace}/{class_name} cannot be read: {}",
                problems.join("; ")
            ))
        })?;

    let current = read::read(run.api, &c, &class).await?;
    let creating = current.infrastructure_cluster.is_none() && current.control_plane.is_none();
    let inputs = RenderInputs {
        cluster: &c,
        class: &class,
        class_object: &class_object,
        objects: &current.engine_inputs,
    };
    // The worker's `reconcile` span declares a `class` field; the reconcile learns the
    // class only here, once it read the Cluster.
    tracing::Span::current().record("class", inputs.class_key().as_str());
    let desired = engine
        .render(inputs)
        .await
        .map_err(|failure| match failure {
            RenderFailure::Refused(messages) => ReconcileError::Render(messages),
            RenderFailure::Unavailable(e) => ReconcileError::EngineUnavailable(e.0),
        })?;

    control_plane::reconcile(run, &c, &class, &current, &desired).await?;
    workers::reconcile(run, &c, &current, &desired).await?;
    pools::reconcile(run, &current, &desired).await?;
    Ok(Progress::Done(status::Done {
        creating,
        upgrade: status::upgrade_condition(&topology.version, &desired),
        phase: status::phase(&class, &current),
    }))
}

/// Reads the class, reconciling it first when it has not been (a fresh management
/// cluster has nobody else to do it). A class that still is not ready after that makes
/// the Cluster wait.
async fn read_class(
    api: &ManagementCluster,
    namespace: &str,
    name: &str,
) -> Result<Value, ReconcileError> {
    let get = || api.get(API_VERSION, "ClusterClass", namespace, name);
    let Some(class) = get().await? else {
        return Err(ReconcileError::invalid(format!(
            "error reading the ClusterClass: failed to get ClusterClass {namespace}/{name}: clusterclasses.cluster.x-k8s.io \"{name}\" not found"
        )));
    };
    if class::not_reconciled(&class).is_none() {
        return Ok(class);
    }
    if let Err(e) = class::reconcile_class(api, namespace, name).await {
        tracing::warn!(class = %format!("{namespace}/{name}"), error = %e, "ClusterClass reconcile failed");
    }
    Ok(get().await?.unwrap_or(class))
}
