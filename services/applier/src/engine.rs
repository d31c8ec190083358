//! Where the desired state comes from. The reconciler asks through
//! [`DesiredStateEngine`], so the engine can run in process or behind the render service.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::{DesiredState, ObjectStore, RenderOptions};

/// A boxed future, so engines can be chosen at run time.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Computes a Cluster's desired state from its class and the objects read for it
/// (templates and current objects).
pub trait DesiredStateEngine: Send + Sync {
    /// The desired state, or the messages saying why there is none.
    fn desired_state<'a>(
        &'a self,
        cluster: &'a Cluster,
        class: &'a ClusterClass,
        objects: Vec<Value>,
    ) -> BoxFuture<'a, Result<DesiredState, Vec<String>>>;
}

/// The engine linked into this process.
#[derive(Clone, Copy, Debug, Default)]
pub struct InProcess;

impl DesiredStateEngine for InProcess {
    fn desired_state<'a>(
        &'a self,
        cluster: &'a Cluster,
        class: &'a ClusterClass,
        objects: Vec<Value>,
    ) -> BoxFuture<'a, Result<DesiredState, Vec<String>>> {
        Box::pin(async move {
            let store = ObjectStore::new(objects);
            topograph_engine::render_with(cluster, class, &store, RenderOptions::default())
                .map(|rendered| rendered.desired)
                .map_err(|e| e.messages)
        })
    }
}
