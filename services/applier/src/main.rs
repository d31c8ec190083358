//! `topograph-applier`: reconciles the Clusters of many management clusters from a
//! shared job queue. The command line is a contract:
//!
//! `topograph-applier --redis URL --management-clusters DIR --render ADDR --workers N`
//!
//! * `--redis`: the queue and the watcher leases (`redis://host:port`, or several node
//!   URLs separated by commas for a Redis Cluster); `memory` runs a single process with
//!   an in-process queue. With `--redis-prefix` and `--redis-shards`, the queue's flags
//!   shared with the gateway ([`topograph_queue::flags::QueueArgs`]).
//! * `--management-clusters`: a directory with one `<name>.kubeconfig` per management
//!   cluster, re-read when it changes. Alternatively (or as well)
//!   `--management-cluster-secrets NAMESPACE`: Secrets labelled
//!   `topograph.io/management-cluster` in that namespace of the cluster the applier runs
//!   in (or of `--home-kubeconfig FILE`).
//! * `--render`: the render service: `http://host:port`, `dns:///host:port` (calls
//!   balanced over every replica the name resolves to, e.g. a headless Service) or a
//!   comma-separated list of URLs; `in-process` links the engine.
//! * `--workers`: concurrent reconcilers.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use tokio::sync::watch;
use topograph_applier::lease::{Lease, LocalLease, RedisLease};
use topograph_applier::metrics::{Metrics, TimedEngine};
use topograph_applier::service::{self, ServiceConfig};
use topograph_applier::watch::WatchConfig;
use topograph_engine::{Engine, Local};
use topograph_management::ManagementCluster;
use topograph_management::registry::{Registry, Source};
use topograph_proto::remote::RemoteEngine;
use topograph_queue::flags::{Connected, QueueArgs};
use topograph_queue::{Queue, QueueConfig};

/// jemalloc, as topograph-kube: an applier keeping a management cluster's objects
/// (decision 0036) holds their texts among short-lived request buffers, which jemalloc
/// packs tighter than mimalloc (111–114 MB resident against 154–165 MB at 1,000
/// Clusters; 46 against 66 MB without the cache), for the same CPU (decision 0034).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its start (`_RJEM_MALLOC_CONF` in the environment still
/// overrides them). Freed pages go back to the system after 1 s unused rather than 10 s:
/// a cold build frees request buffers faster than the default gives them back, and
/// part of the applier's peak was that backlog (1 × 1,000 with owned-object caches,
/// eleven runs against seven: 83–90 MB, median 85, against 89–110 MB, median 95;
/// without the caches 39–41 against 42–47 MB), for no CPU measured.
#[unsafe(export_name = "_rjem_malloc_conf")]
static MALLOC_CONF: &[u8; 20] = b"dirty_decay_ms:1000\0";

/// Reconciles the Clusters of many management clusters from a shared job queue.
#[derive(Parser, Debug)]
#[command(name = "topograph-applier", version, about)]
struct Args {
    /// The queue, in whose Redis the watcher leases live too.
    #[command(flatten)]
    queue: QueueArgs,
    #[command(flatten)]
    field_manager: topograph_management::user_agent::FieldManagerArgs,
    /// Directory of `<name>.kubeconfig` files, one per management cluster.
    #[arg(
        long,
        env = "TOPOGRAPH_MANAGEMENT_CLUSTERS",
        required_unless_present = "management_cluster_secrets"
    )]
    management_clusters: Option<PathBuf>,
    /// Namespace whose Secrets labelled `topograph.io/management-cluster` hold
    /// management clusters' kubeconfigs (data key `value` or `kubeconfig`).
    #[arg(long, env = "TOPOGRAPH_MANAGEMENT_CLUSTER_SECRETS")]
    management_cluster_secrets: Option<String>,
    /// The cluster holding those Secrets; default: the one this process runs in
    /// (service account), else `$KUBECONFIG`.
    #[arg(
        long,
        env = "TOPOGRAPH_HOME_KUBECONFIG",
        requires = "management_cluster_secrets"
    )]
    home_kubeconfig: Option<PathBuf>,
    /// The render service (`http://host:port`, `dns:///host:port` to balance over every
    /// replica the name resolves to, or a comma-separated list), or `in-process`.
    #[arg(long, env = "TOPOGRAPH_RENDER")]
    render: String,
    /// Concurrent reconcilers.
    #[arg(long, env = "TOPOGRAPH_WORKERS", default_value_t = 4)]
    workers: usize,
    /// Prometheus `/metrics` address.
    #[arg(long, env = "TOPOGRAPH_METRICS_LISTEN")]
    metrics_listen: Option<std::net::SocketAddr>,
    /// Name of this process (consumer and lease holder); default: host and pid.
    #[arg(long, env = "TOPOGRAPH_APPLIER_NAME")]
    name: Option<String>,
    /// Seconds between full resyncs of every known Cluster.
    #[arg(long, default_value_t = 300)]
    resync_seconds: u64,
    /// Milliseconds between steps of the rollouts of a watched management cluster.
    #[arg(long, default_value_t = 2000)]
    rollout_interval_ms: u64,
    /// Seconds a job (and a watcher lease) is held before others may take it over if
    /// this process stops renewing it (a reconcile renews it every third of this).
    #[arg(long, default_value_t = 30)]
    lease_seconds: u64,
    /// Longest a reconcile may take before it is given up and retried (a management
    /// cluster that accepts connections but does not answer holds a worker this long).
    #[arg(long, default_value_t = 60)]
    reconcile_timeout_seconds: u64,
    /// Read a Cluster's own objects from watch-fed caches while this process holds the
    /// watch of its management cluster (decisions 0036, 0038): a converged Cluster then
    /// costs no request, for about 10 KB of memory per quick-start Cluster watched.
    /// `false`: they are read live.
    #[arg(long, env = "TOPOGRAPH_OWNED_CACHE", default_value_t = true, action = clap::ArgAction::Set)]
    owned_cache: bool,
    /// Milliseconds a Cluster's changes must be quiet before it is queued (a burst of
    /// changes costs one reconcile).
    #[arg(long, default_value_t = 500)]
    quiet_ms: u64,
    /// Milliseconds a changing Cluster waits at most before it is queued anyway.
    #[arg(long, default_value_t = 10_000)]
    max_delay_ms: u64,
}

fn main() -> ExitCode {
    topograph_management::user_agent::set("topograph-applier", env!("CARGO_PKG_VERSION"));
    let args = Args::parse();
    args.field_manager.install();
    topograph_telemetry::runner::run("topograph-applier", start(args))
}

async fn start(args: Args) -> Result<(), String> {
    let engine: Arc<dyn Engine> = if args.render == "in-process" {
        Arc::new(Local)
    } else {
        Arc::new(RemoteEngine::connect_lazy(&args.render)?)
    };
    let lease_time = Duration::from_secs(args.lease_seconds.max(3));
    let queue_config = QueueConfig {
        lease: lease_time,
        ..QueueConfig::default()
    };
    let name = args.name.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "applier".to_string());
        format!("{host}-{}", std::process::id())
    });
    let config = ServiceConfig {
        workers: args.workers,
        name,
        // The job's lease is renewed while its reconcile runs, so a reconcile may take
        // longer than one lease; a process that dies stops renewing and loses it.
        reconcile_timeout: Duration::from_secs(args.reconcile_timeout_seconds.max(1)),
        lease_renewal: lease_time / 3,
        registry_refresh: Duration::from_secs(2),
        watch: WatchConfig {
            resync: Duration::from_secs(args.resync_seconds.max(1)),
            lease_ttl: lease_time,
            quiet: Duration::from_millis(args.quiet_ms),
            max_delay: Duration::from_millis(args.max_delay_ms.max(args.quiet_ms)),
            rollout_interval: Duration::from_millis(args.rollout_interval_ms.max(10)),
        },
    };
    let connected = args
        .queue
        .connect(queue_config)
        .await
        .map_err(|e| format!("--redis: {e}"))?;
    match connected {
        Connected::Memory(queue) => {
            run(args, Arc::new(queue), Arc::new(LocalLease), engine, config).await
        }
        Connected::Redis(queue) => {
            // The leases ride on the queue's connection, with its response timeout.
            let lease = RedisLease::new(queue.connection(), &args.queue.redis_prefix);
            run(args, Arc::new(queue), Arc::new(lease), engine, config).await
        }
    }
}

async fn run<Q: Queue, L: Lease>(
    args: Args,
    queue: Arc<Q>,
    lease: Arc<L>,
    engine: Arc<dyn Engine>,
    config: ServiceConfig,
) -> Result<(), String> {
    let metrics = Arc::new(Metrics::new());
    // Engine time by class, whichever engine renders.
    let engine: Arc<dyn Engine> = Arc::new(TimedEngine::new(engine, metrics.clone()));
    if let Some(addr) = args.metrics_listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("--metrics-listen {addr}: {e}"))?;
        let metrics = metrics.clone();
        tokio::spawn(topograph_telemetry::serve_metrics(
            listener,
            Arc::new(move || metrics.encode()),
        ));
    }
    let mut sources = Vec::new();
    if let Some(dir) = &args.management_clusters {
        sources.push(Source::Directory(dir.clone()));
    }
    if let Some(namespace) = &args.management_cluster_secrets {
        let home = match &args.home_kubeconfig {
            Some(path) => ManagementCluster::from_kubeconfig(path).await,
            None => ManagementCluster::infer().await,
        }
        .map_err(|e| format!("--management-cluster-secrets: {e}"))?;
        sources.push(Source::Secrets {
            home: Arc::new(home),
            namespace: namespace.clone(),
        });
    }
    let mut registry = Registry::with_sources(sources).with_class_cache();
    if args.owned_cache {
        registry = registry.with_owned_cache();
    }
    let registry = Arc::new(registry);
    let (stop, shutdown) = watch::channel(false);
    tokio::spawn(async move {
        topograph_telemetry::rpc::shutdown_signal().await;
        tracing::info!("shutting down: finishing the reconciles in hand");
        let _ = stop.send(true);
    });
    service::run(queue, lease, registry, engine, metrics, config, shutdown).await;
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The options above reach jemalloc (a wrong symbol name would be ignored silently).
    #[test]
    fn jemalloc_returns_freed_pages_after_one_second() {
        let mut value: isize = 0;
        let mut len = std::mem::size_of::<isize>();
        // SAFETY: a read of a documented `ssize_t` option into a value of that size.
        let read = unsafe {
            tikv_jemalloc_sys::mallctl(
                c"opt.dirty_decay_ms".as_ptr(),
                (&raw mut value).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        assert_eq!(read, 0, "mallctl failed");
        assert_eq!(value, 1000);
    }
}
