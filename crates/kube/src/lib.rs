//! An in-memory server speaking enough of the Kubernetes API for kube-rs and kubectl:
//! discovery, CRDs, CRUD with the API server's write rules, patches, watches, the
//! Tables `kubectl get` prints, finalizers,
//! owner-reference garbage collection, request counters, snapshots and simulated
//! Cluster API providers. Embedded in tests (`Server::start` on port 0) or run as the
//! `topograph-kube` binary.

mod answer;
pub mod conversion;
pub mod converted_events;
pub mod counts;
pub mod discovery;
mod event_ttl;
pub mod fields;
mod gc;
mod jsonpath;
pub mod kubeconfig;
pub mod media;
mod objects;
pub mod patch;
pub mod protobuf;
mod routes;
pub mod selector;
mod shared_text;
mod simulate;
pub use simulate::FailRule;
pub mod snapshot;
pub mod status;
pub mod store;
pub mod stored;
pub mod table;
pub mod types;
pub mod util;
mod validation;
mod warnings;
pub mod watch;

pub use counts::RequestCounts;
pub use status::ApiError;
pub use store::{DeleteOptions, PatchType, Store, Sub};
pub use types::ResourceType;

use anyhow::Context;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How to run a server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// How many events watches can resume from.
    pub history_limit: usize,
    /// How long Events live after their last write (kube-apiserver's `--event-ttl`).
    pub event_ttl: Duration,
    /// Simulated providers with this delay, or none.
    pub simulate_providers: Option<Duration>,
    /// What the simulated providers fail (`KEY=VALUE` labels, `version=V`).
    pub simulate_failures: Vec<FailRule>,
    /// Snapshot file: loaded at start when present, written when changed and at shutdown.
    pub snapshot: Option<PathBuf>,
    pub snapshot_interval: Duration,
    /// Objects (CRDs first) created at start, with their status kept.
    pub seed: Vec<Value>,
    /// Serve server-side apply. Off, apply patches get 415 Unsupported Media Type, as
    /// from an API server that predates it (Kubernetes before 1.16), so clients can be
    /// tested against one.
    pub server_side_apply: bool,
    /// Plays the conversion webhook of CRDs with `conversion.strategy: Webhook`
    /// (by default Cluster API's, as a management cluster with Cluster API installed).
    pub converter: Option<conversion::Converter>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            bookmark_interval: Duration::from_secs(1),
            history_limit: 10_000,
            event_ttl: Duration::from_secs(3600),
            simulate_providers: None,
            simulate_failures: Vec::new(),
            snapshot: None,
            snapshot_interval: Duration::from_secs(3),
            seed: Vec::new(),
            server_side_apply: true,
            converter: Some(conversion::Converter::cluster_api()),
        }
    }
}

pub struct Server;

impl Server {
    /// Binds, loads the snapshot and seed objects, and serves in the background.
    pub async fn start(config: Config) -> anyhow::Result<RunningServer> {
        let store = Arc::new(Store::with_converter(
            config.history_limit,
            config.converter.clone(),
        ));
        if let Some(path) = &config.snapshot
            && path.exists()
        {
            let objects = snapshot::read(path)?;
            store
                .load(objects)
                .map_err(|e| anyhow::anyhow!("loading snapshot {}: {e}", path.display()))?;
        }
        for obj in config.seed {
            store
                .seed_object(obj)
                .map_err(|e| anyhow::anyhow!("seeding: {e}"))?;
        }
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("binding {}", config.listen))?;
        let addr = listener.local_addr()?;
        let counters = Arc::new(counts::Counters::default());
        let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
        let state = Arc::new(routes::AppState {
            store: store.clone(),
            counters: counters.clone(),
            bookmark_interval: config.bookmark_interval,
            shutdown: shutdown_rx.clone(),
            server_side_apply: config.server_side_apply,
        });
        let app = routes::router(state);
        let mut rx = shutdown_rx.clone();
        let server = tokio::spawn(async move {
            let shutdown = async move {
                let _ = rx.wait_for(|v| *v).await;
            };
            if let Err(e) = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::error!("server error: {e}");
            }
        });
        let mut background = Vec::new();
        if let Some(delay) = config.simulate_providers {
            let sim = simulate::Simulator::new(store.clone(), delay)
                .failing(config.simulate_failures.clone());
            background.push(tokio::spawn(sim.run(shutdown_rx.clone())));
        }
        background.push(tokio::spawn(event_ttl::run(
            store.clone(),
            config.event_ttl,
            shutdown_rx.clone(),
        )));
        if let Some(path) = config.snapshot.clone() {
            background.push(tokio::spawn(snapshot::run(
                store.clone(),
                path,
                config.snapshot_interval,
                shutdown_rx.clone(),
            )));
        }
        Ok(RunningServer {
            addr,
            store,
            counters,
            shutdown_tx,
            server: Some(server),
            background,
        })
    }
}

/// A server serving in the background; dropping it stops it (without waiting).
pub struct RunningServer {
    addr: SocketAddr,
    store: Arc<Store>,
    counters: Arc<counts::Counters>,
    shutdown_tx: tokio::sync::watch::Sender<bool>,
    server: Option<JoinHandle<()>>,
    background: Vec<JoinHandle<()>>,
}

impl RunningServer {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn kubeconfig_yaml(&self) -> String {
        kubeconfig::kubeconfig_yaml(&self.url())
    }

    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        kubeconfig::write_atomically(path, self.kubeconfig_yaml().as_bytes())
    }

    /// Requests served so far, by verb.
    pub fn counts(&self) -> RequestCounts {
        self.counters.snapshot()
    }

    pub fn reset_counts(&self) {
        self.counters.reset()
    }

    /// Direct access to the objects; nothing done through it is counted.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Creates or replaces objects (status kept), uncounted; CRDs register their kinds.
    pub fn seed(&self, objects: impl IntoIterator<Item = Value>) -> Result<(), ApiError> {
        for obj in objects {
            self.store.seed_object(obj)?;
        }
        Ok(())
    }

    /// All objects, CRDs first: what the snapshot file holds.
    pub fn snapshot(&self) -> Vec<Value> {
        self.store.snapshot()
    }

    /// Stops serving: open watches end, in-flight requests finish (for up to 5 s), and
    /// the snapshot, if configured, is written a last time.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown_tx.send(true);
        if let Some(server) = self.server.take() {
            let abort = server.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), server)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        for task in std::mem::take(&mut self.background) {
            let _ = task.await;
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.shutdown_tx.send(true);
    }
}
