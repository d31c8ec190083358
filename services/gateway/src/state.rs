//! What every handler shares: the management clusters, the job queue, admission, and
//! the translation of API server failures into gRPC statuses.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tonic::Status;
use topograph_management::ManagementCluster;
use topograph_management::keys::ClusterKey;
use topograph_management::registry::Registry;
use topograph_queue::Queue;
use topograph_reconcile::ReconcileError;

use crate::objects::{API_VERSION, class_of};

/// A boxed future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where Clusters go to be reconciled. [`Queue`] is not object-safe; this is the one
/// operation the gateway needs from it, so the gateway need not be generic.
pub trait Jobs: Send + Sync {
    /// Queues a Cluster key (`<management cluster>/<namespace>/<name>`).
    fn enqueue<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// A [`Queue`] as [`Jobs`].
pub struct QueueJobs<Q>(pub Arc<Q>);

impl<Q: Queue> Jobs for QueueJobs<Q> {
    fn enqueue<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            // The job continues the caller's trace (the Apply that queued it).
            let context = topograph_telemetry::trace::current_context();
            self.0
                .enqueue_traced(key, context.as_deref())
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// Where registered management clusters are written.
#[derive(Clone, Default)]
pub struct Registration {
    /// The directory of `<name>.kubeconfig` files.
    pub directory: Option<PathBuf>,
    /// Labelled Secrets in a namespace of a home cluster (preferred when set).
    pub secrets: Option<(Arc<ManagementCluster>, String)>,
}

/// The handlers' shared state.
pub struct State {
    /// The management clusters.
    pub registry: Arc<Registry>,
    /// The job queue.
    pub jobs: Arc<dyn Jobs>,
    /// Admission (validation and defaulting), and desired states for Plan and Impact.
    pub engine: Arc<dyn topograph_engine::Engine>,
    /// Where registrations are written.
    pub registration: Registration,
    /// Apply installs CRDs for unserved provider kinds (the embedded mode).
    pub install_missing_crds: bool,
    /// The management clusters' runtime extensions, as the appliers discovered them.
    pub runtime_sdk: Arc<crate::extensions::RuntimeSdk>,
    /// Becomes true when the server shuts down: open watches end then, or the server
    /// would wait for them forever.
    pub stopping: tokio::sync::watch::Sender<bool>,
}

impl State {
    /// The management cluster `name`; callers authorise the tenant first, so an
    /// unknown name tells a tenant nothing it may not know.
    pub fn cluster(&self, name: &str) -> Result<Arc<ManagementCluster>, Status> {
        if name.is_empty() {
            return Err(topograph_proto::violations::invalid(vec![
                topograph_api::Violation::new(
                    "management_cluster",
                    "Required value: a management cluster name",
                ),
            ]));
        }
        self.registry
            .get(name)
            .ok_or_else(|| Status::not_found(format!("no management cluster {name:?}")))
    }

    /// Queues the keys; failures are returned as warnings (the appliers' watches queue
    /// the same Clusters a moment later, so a failed enqueue loses nothing).
    pub async fn enqueue(&self, keys: &BTreeSet<ClusterKey>) -> Vec<String> {
        let mut warnings = Vec::new();
        for key in keys {
            let text = key.to_string();
            let span = tracing::info_span!("enqueue", key = %text);
            if let Err(e) = tracing::Instrument::instrument(self.jobs.enqueue(&text), span).await {
                tracing::warn!(key = %text, error = %e, "could not queue a Cluster");
                warnings.push(format!(
                    "Cluster {}/{} was not queued ({e}); the appliers' watches will pick it up",
                    key.namespace, key.name
                ));
            }
        }
        warnings
    }
}

/// A gRPC status for a failed API server request about `what`.
pub fn api_status(what: &str, e: impl Into<ReconcileError>) -> Status {
    let e = e.into();
    match &e {
        ReconcileError::Api(kube::Error::Api(s)) => {
            let message = format!("{what}: {}", s.message);
            match s.code {
                400 | 422 => Status::invalid_argument(message),
                404 => Status::not_found(message),
                409 => Status::aborted(message),
                401 | 403 => Status::failed_precondition(format!(
                    "{message} (the gateway's credentials for the management cluster are refused)"
                )),
                429 => Status::resource_exhausted(message),
                _ => Status::unavailable(message),
            }
        }
        ReconcileError::Api(_) => Status::unavailable(format!("{what}: {e}")),
        _ => Status::internal(format!("{what}: {e}")),
    }
}

/// The Clusters (anywhere on the management cluster) using ClusterClass
/// `namespace/name`, sorted by namespace and name.
pub async fn clusters_using(
    api: &ManagementCluster,
    namespace: &str,
    name: &str,
) -> Result<Vec<Value>, ReconcileError> {
    let mut users: Vec<Value> = api
        .list(API_VERSION, "Cluster", "", &[])
        .await?
        .into_iter()
        .filter(|c| class_of(c).is_some_and(|(ns, n)| ns == namespace && n == name))
        .collect();
    users.sort_by_key(key_of);
    Ok(users)
}

/// `(namespace, name)` of an object.
pub fn key_of(object: &Value) -> (String, String) {
    use topograph_api::object::ObjectExt;
    (object.namespace().to_string(), object.name().to_string())
}
