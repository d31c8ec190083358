//! One applier process: N reconcilers on the queue, the watchers of the management
//! clusters whose lease it holds, the registry re-read as its directory changes, and
//! the queue's gauges published as metrics. Shutdown (SIGTERM) stops taking work,
//! lets every reconcile in hand finish and acknowledges it, then releases the leases.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch as signal;
use topograph_queue::Queue;

use crate::extensions::RuntimeExtensions;
use crate::lease::Lease;
use crate::metrics::Metrics;
use crate::watch::{self, WatchConfig, Watchers};
use crate::worker::{self, Context};
use topograph_engine::Engine;
use topograph_management::registry::Registry;

/// How often a management cluster's ExtensionConfigs are read again (a new or changed
/// one is discovered at its first reconcile after that).
const EXTENSION_CONFIG_REFRESH: Duration = Duration::from_secs(10);

/// How a process runs.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// Concurrent reconcilers.
    pub workers: usize,
    /// This process's name (consumers and lease holder derive from it).
    pub name: String,
    /// Longest reconcile.
    pub reconcile_timeout: Duration,
    /// How often a reconcile in progress renews its job's lease (a third of the
    /// queue's lease: two renewals may fail before another worker could take over).
    pub lease_renewal: Duration,
    /// How often the management clusters directory is re-read.
    pub registry_refresh: Duration,
    /// Watcher timing.
    pub watch: WatchConfig,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            workers: 4,
            name: format!("applier-{}", std::process::id()),
            reconcile_timeout: Duration::from_secs(60),
            lease_renewal: Duration::from_secs(10),
            registry_refresh: Duration::from_secs(2),
            watch: WatchConfig::default(),
        }
    }
}

/// Runs until `shutdown` turns true, then drains.
pub async fn run<Q: Queue, L: Lease>(
    queue: Arc<Q>,
    lease: Arc<L>,
    registry: Arc<Registry>,
    engine: Arc<dyn Engine>,
    metrics: Arc<Metrics>,
    config: ServiceConfig,
    shutdown: signal::Receiver<bool>,
) {
    registry.refresh().await;
    let refresher = {
        let registry = registry.clone();
        let mut shutdown = shutdown.clone();
        let every = config.registry_refresh;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = shutdown.changed() => return,
                }
                let changes = registry.refresh().await;
                if !changes.added.is_empty() || !changes.removed.is_empty() {
                    tracing::info!(added = ?changes.added, removed = ?changes.removed, "management clusters changed");
                }
            }
        })
    };
    let gauges = {
        let queue = queue.clone();
        let metrics = metrics.clone();
        let registry = registry.clone();
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            loop {
                if let Ok(stats) = queue.stats().await {
                    metrics.queue(&stats);
                }
                metrics.owned_caches(registry.owned_cache_size());
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                    _ = shutdown.changed() => return,
                }
            }
        })
    };
    let extensions = Arc::new(RuntimeExtensions::new(EXTENSION_CONFIG_REFRESH));
    let watchers = tokio::spawn(watch::run(
        Arc::new(Watchers {
            queue: queue.clone(),
            lease,
            holder: config.name.clone(),
            registry: registry.clone(),
            metrics: metrics.clone(),
            config: config.watch.clone(),
            extensions: Some(extensions.clone()),
            shares: Default::default(),
        }),
        shutdown.clone(),
    ));
    let context = Arc::new(Context {
        queue,
        registry,
        engine,
        metrics,
        reconcile_timeout: config.reconcile_timeout,
        lease_renewal: config.lease_renewal,
        extensions,
    });
    let workers: Vec<_> = (0..config.workers.max(1))
        .map(|i| {
            tokio::spawn(worker::run(
                context.clone(),
                format!("{}-{i}", config.name),
                shutdown.clone(),
            ))
        })
        .collect();
    for w in workers {
        let _ = w.await;
    }
    let _ = watchers.await;
    refresher.abort();
    gauges.abort();
}
