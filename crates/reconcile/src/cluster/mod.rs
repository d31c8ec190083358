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
//!
//! With Runtime SDK on, the lifecycle hooks are called where Cluster API calls them
//! ([`crate::hooks`]): `BeforeClusterDelete` while deleting, `BeforeClusterCreate` before
//! the first writes, `AfterControlPlaneInitialized` once the control plane is, and the
//! upgrade hooks over the engine's version decisions ([`upgrade_hooks`]); a blocking
//! answer holds what it guards and requeues the Cluster after its `retryAfterSeconds`.

mod control_plane;
mod pools;
mod read;
pub(crate) mod status;
pub use control_plane::without_topology_fields;
pub use status::{TOPOLOGY_RECONCILED, without_report};
mod upgrade_hooks;
mod workers;
pub(crate) mod write;

use serde_json::Value;
use topograph_api::object::ObjectExt;

use crate::class::{self, API_VERSION};
use crate::error::ReconcileError;
use crate::events;
use crate::hooks::{self, Hook, HookResponses, LifecycleHooks, NoHooks};
use crate::rollout;
use status::Progress;
use topograph_engine::Engine;
use topograph_engine::service::{RenderFailure, RenderInputs};
use topograph_management::ManagementCluster;
use topograph_management::class_cache::Keep;

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
    /// Look at the Cluster again after this many seconds (0: only when something
    /// changes): a lifecycle hook is holding it. Left out of the JSON when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub requeue_after_seconds: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// State shared by the steps of one reconcile.
pub(crate) struct Run<'a> {
    pub api: &'a ManagementCluster,
    pub cluster: Value,
    pub outcome: Outcome,
    pub hooks: &'a dyn LifecycleHooks,
    /// The answers of the hooks this reconcile called.
    pub responses: HookResponses,
}

impl Run<'_> {
    /// Records an Event on the Cluster.
    pub fn event(&self, reason: &str, message: String) {
        events::record(self.api, &self.cluster, reason, message);
    }

    /// Asks `hook` with `request` and records its answer; `true` when it lets the
    /// reconcile go on. A hook no extension handles lets it go without a call, as
    /// Cluster API's client does with no handlers.
    pub async fn ask(
        &mut self,
        hook: Hook,
        request: serde_json::Map<String, Value>,
    ) -> Result<bool, ReconcileError> {
        if !self
            .hooks
            .registered(hook, &self.cluster)
            .await
            .map_err(hook_error)?
        {
            return Ok(true);
        }
        let answer = self
            .hooks
            .call(hook, &self.cluster, request)
            .await
            .map_err(hook_error)?;
        let go = !hooks::can_block(hook) || answer.retry_after_seconds == 0;
        if !go {
            tracing::info!(
                cluster = %key(&self.cluster), hook = hook.name(),
                retry_after = answer.retry_after_seconds, "held by a lifecycle hook"
            );
        }
        self.responses.add(hook, answer);
        Ok(go)
    }
}

/// Reconciles the Cluster `namespace/name` once, with Runtime SDK off.
pub async fn reconcile_cluster(
    api: &ManagementCluster,
    engine: &dyn Engine,
    namespace: &str,
    name: &str,
) -> Result<Outcome, ReconcileError> {
    reconcile_cluster_with_hooks(api, engine, &NoHooks, namespace, name).await
}

/// Reconciles the Cluster `namespace/name` once, calling lifecycle hooks through
/// `hooks`.
pub async fn reconcile_cluster_with_hooks(
    api: &ManagementCluster,
    engine: &dyn Engine,
    hooks: &dyn LifecycleHooks,
    namespace: &str,
    name: &str,
) -> Result<Outcome, ReconcileError> {
    // Writes are counted for this reconcile alone, whatever else uses the cluster.
    let api = &api.counting_apart();
    let Some(cluster) = api
        .get_owned(API_VERSION, "Cluster", namespace, name)
        .await?
    else {
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
        hooks,
        responses: HookResponses::default(),
    };
    let progress = reconcile(&mut run, engine).await;
    // The Cluster as last written: its generation moves when the topology sets its refs.
    let reported = status::report(api, &run.cluster, &progress).await;
    // The reconcile's Events are written (and counted) before it returns.
    api.settle().await;
    let mut outcome = run.outcome;
    outcome.writes = api.writes().total();
    outcome.requeue_after_seconds = run.responses.retry_after().map_or(0, |d| d.as_secs());
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
        before_delete(run).await?;
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
    let class_object = read_class(run.api, run.hooks, &class_namespace, &class_name).await?;
    if class::not_reconciled(&class_object).is_some() {
        return Ok(Progress::ClassNotReconciled);
    }
    // With a rollout policy, the Cluster renders the revision it was moved to (or the
    // stable one), not the class as it is now (decision 0030).
    let (class_object, recorded, rendered) =
        match rollout::pin::revision_for(run.api, &run.cluster, &class_object).await? {
            Some(revision) => (
                revision.class,
                Some(revision.templates),
                Some(revision.name),
            ),
            None => (class_object, None, None),
        };
    let class =
        topograph_api::load::decode_cluster_class(class_object.clone()).map_err(|problems| {
            ReconcileError::invalid(format!(
                "ClusterClass {class_namespace}/{class_name} cannot be read: {}",
                problems.join("; ")
            ))
        })?;

    let current = read::read(run.api, &c, &class, recorded.as_deref()).await?;
    let creating = current.infrastructure_cluster.is_none() && current.control_plane.is_none();
    if let Some(message) = before_create(run).await? {
        return Ok(Progress::HookBlocking(message));
    }
    // Only a class with external patches or a GenerateUpgradePlan extension needs
    // extensions; any other renders exactly as with Runtime SDK off, without reading
    // namespaces for selectors.
    let extensions = if class.patches.iter().any(|p| p.external.is_some())
        || class.upgrade_plan_extension.is_some()
    {
        let mut namespaces = vec![c.namespace.clone()];
        if class_namespace != c.namespace {
            namespaces.push(class_namespace.clone());
        }
        run.hooks
            .render_extensions(&namespaces)
            .await
            .map_err(hook_error)?
    } else {
        None
    };
    let inputs = RenderInputs {
        cluster: &c,
        class: &class,
        class_object: &class_object,
        objects: &current.engine_inputs,
        extensions: extensions.as_ref(),
    };
    // The worker's `reconcile` span declares a `class` field; the reconcile learns the
    // class only here, once it read the Cluster.
    tracing::Span::current().record("class", inputs.class_key().as_str());
    let mut desired = engine
        .render(inputs)
        .await
        .map_err(|failure| match failure {
            RenderFailure::Refused(messages) => ReconcileError::Render(messages),
            RenderFailure::Unavailable(e) => ReconcileError::EngineUnavailable(e.0),
        })?;

    upgrade_hooks::apply(run, &topology.version, &mut desired).await?;
    after_control_plane_initialized(run).await?;
    control_plane::reconcile(run, &c, &class, &current, &desired).await?;
    workers::reconcile(run, &c, &current, &desired).await?;
    pools::reconcile(run, &current, &desired).await?;
    if let Some(revision) = &rendered {
        observed_revision(run, revision).await?;
    }
    Ok(Progress::Done(status::Done {
        creating,
        upgrade: status::upgrade_condition(&topology.version, &desired),
        phase: status::phase(&class, &current),
        hooks_blocking: run.responses.retry_after().map(|_| run.responses.message()),
    }))
}

/// Records on the Cluster the revision its topology was written from, which the
/// rollout's health gate waits for.
async fn observed_revision(run: &mut Run<'_>, revision: &str) -> Result<(), ReconcileError> {
    if rollout::pin::annotation(&run.cluster, rollout::OBSERVED_ANNOTATION) == Some(revision) {
        return Ok(());
    }
    let patch =
        serde_json::json!({"metadata": {"annotations": {rollout::OBSERVED_ANNOTATION: revision}}});
    run.cluster = run.api.merge_patch(&run.cluster, &patch).await?;
    Ok(())
}

/// Neither reference is set yet: the topology is about to be created.
fn refs_unset(cluster: &Value) -> bool {
    cluster.at(&["spec", "infrastructureRef"]).is_none()
        && cluster.at(&["spec", "controlPlaneRef"]).is_none()
}

/// `BeforeClusterCreate`, before anything of a new topology is written; `Some` with the
/// condition's message while it blocks.
async fn before_create(run: &mut Run<'_>) -> Result<Option<String>, ReconcileError> {
    if !run.hooks.enabled() || !refs_unset(&run.cluster) {
        return Ok(None);
    }
    let request = request_with_cluster(topograph_runtime::hooks::cleanup_cluster(&run.cluster));
    let go = run.ask(Hook::BeforeClusterCreate, request).await?;
    Ok((!go).then(|| run.responses.message()))
}

/// `AfterControlPlaneInitialized`: marked pending when the topology is created, called
/// once the Cluster reports its control plane initialized.
async fn after_control_plane_initialized(run: &mut Run<'_>) -> Result<(), ReconcileError> {
    if !run.hooks.enabled() {
        return Ok(());
    }
    let hook = Hook::AfterControlPlaneInitialized;
    if refs_unset(&run.cluster) {
        mark_pending(run, &[hook], true).await?;
    }
    if !hooks::is_pending(&run.cluster, hook) || !control_plane_initialized(&run.cluster) {
        return Ok(());
    }
    run.ask(hook, request_with_cluster(run.cluster.clone()))
        .await?;
    mark_pending(run, &[hook], false).await
}

/// `BeforeClusterDelete`, until it lets the deletion go: then the Cluster is marked
/// `ok-to-delete` (at once when no extension handles the hook).
async fn before_delete(run: &mut Run<'_>) -> Result<(), ReconcileError> {
    if !run.hooks.enabled() || hooks::is_ok_to_delete(&run.cluster) {
        return Ok(());
    }
    let request = request_with_cluster(topograph_runtime::hooks::cleanup_cluster(&run.cluster));
    if !run.ask(Hook::BeforeClusterDelete, request).await? {
        return Ok(());
    }
    run.cluster = run
        .api
        .merge_patch(&run.cluster, &hooks::ok_to_delete_patch())
        .await?;
    run.outcome.updated += 1;
    Ok(())
}

/// Adds hooks to (or removes them from) the Cluster's pending list, when that changes it.
async fn mark_pending(run: &mut Run<'_>, list: &[Hook], add: bool) -> Result<(), ReconcileError> {
    if let Some(patch) = hooks::pending_patch(&run.cluster, list, add) {
        run.cluster = run.api.merge_patch(&run.cluster, &patch).await?;
    }
    Ok(())
}

/// Whether the Cluster says its control plane is initialized: the v1beta1
/// `ControlPlaneInitialized` condition or `status.controlPlaneReady`, or v1beta2's
/// `status.initialization.controlPlaneInitialized`.
fn control_plane_initialized(cluster: &Value) -> bool {
    let condition = cluster
        .at(&["status", "conditions"])
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("ControlPlaneInitialized")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        });
    let flag = |path: &[&str]| cluster.at(path).and_then(Value::as_bool) == Some(true);
    condition
        || flag(&["status", "controlPlaneReady"])
        || flag(&["status", "initialization", "controlPlaneInitialized"])
}

fn request_with_cluster(cluster: Value) -> serde_json::Map<String, Value> {
    let mut fields = serde_json::Map::new();
    fields.insert("cluster".into(), cluster);
    fields
}

fn hook_error(e: hooks::HookError) -> ReconcileError {
    ReconcileError::Hook(e.0)
}

fn key(cluster: &Value) -> String {
    format!("{}/{}", cluster.namespace(), cluster.name())
}

/// Reads the class, reconciling it first when it has not been (a fresh management
/// cluster has nobody else to do it). A class that still is not ready after that makes
/// the Cluster wait.
async fn read_class(
    api: &ManagementCluster,
    hooks: &dyn LifecycleHooks,
    namespace: &str,
    name: &str,
) -> Result<Value, ReconcileError> {
    // From the class cache when there is one; a class just created and not in it yet
    // is read live (positive answers only).
    let class = api
        .get_class_level(API_VERSION, "ClusterClass", Keep::Unowned, namespace, name)
        .await?;
    let Some(class) = class else {
        return Err(ReconcileError::invalid(format!(
            "error reading the ClusterClass: failed to get ClusterClass {namespace}/{name}: clusterclasses.cluster.x-k8s.io \"{name}\" not found"
        )));
    };
    if class::not_reconciled(&class).is_none() {
        return Ok(class);
    }
    // The class reconcile calls DiscoverVariables through the same extensions the
    // render gets (none with Runtime SDK off: only inline variables are listed).
    let namespaces = [namespace.to_string()];
    let extensions = match hooks.render_extensions(&namespaces).await {
        Ok(extensions) => extensions,
        Err(e) => {
            tracing::warn!(class = %format!("{namespace}/{name}"), error = %e, "runtime extensions unavailable for the ClusterClass reconcile");
            None
        }
    };
    let extensions = extensions.as_ref().map(|e| e.extensions.as_ref());
    if let Err(e) = class::reconcile_class_with(api, extensions, namespace, name).await {
        tracing::warn!(class = %format!("{namespace}/{name}"), error = %e, "ClusterClass reconcile failed");
    }
    // Live: the cache may not have the status just written yet.
    Ok(api
        .get(API_VERSION, "ClusterClass", namespace, name)
        .await?
        .unwrap_or(class))
}
