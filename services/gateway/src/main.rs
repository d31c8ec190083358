//! `topograph-gateway`: the platform API. The command line is a contract:
//!
//! `topograph-gateway --listen ADDR --management-clusters DIR --render ADDR|in-process
//!  --redis URL|memory --tenants FILE --metrics-listen ADDR`
//!
//! Every flag can also be given as an environment variable: `TOPOGRAPH_GATEWAY_*`;
//! `--field-manager` is `TOPOGRAPH_FIELD_MANAGER`, as for the appliers; for the queue's
//! flags, shared with the appliers
//! ([`topograph_queue::flags::QueueArgs`]), `TOPOGRAPH_REDIS`, `TOPOGRAPH_REDIS_PREFIX`
//! and `TOPOGRAPH_REDIS_SHARDS` (their former `TOPOGRAPH_GATEWAY_REDIS*` names are
//! still read, with a warning, while these are unset). Once it serves, the process
//! prints `gateway listening on ADDR` on stdout (the address actually bound, so
//! `--listen 127.0.0.1:0` works). SIGTERM or SIGINT stops accepting, ends open
//! watches, lets requests in flight finish and exits 0.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use topograph_gateway::tenant_source::{TenantSource, keep_reloading};
use topograph_gateway::{
    Gateway, GatewayConfig, Jobs, Limits, QueueJobs, Registration, TenantStore, Tls,
};
use topograph_management::ManagementCluster;
use topograph_management::registry::{Registry, Source};
use topograph_queue::QueueConfig;
use topograph_queue::flags::{Connected, GATEWAY_RENAMED, QueueArgs};
use topograph_telemetry::rpc::{RpcMetrics, shutdown_signal};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The platform API: tenancy, admission, writes, status and watch for managed
/// topologies on many management clusters.
#[derive(Parser, Debug)]
#[command(name = "topograph-gateway", version, about)]
struct Args {
    #[command(flatten)]
    field_manager: topograph_management::user_agent::FieldManagerArgs,
    /// Address of the gRPC server.
    #[arg(
        long,
        env = "TOPOGRAPH_GATEWAY_LISTEN",
        default_value = "127.0.0.1:50052"
    )]
    listen: SocketAddr,
    /// Directory of `<name>.kubeconfig` files, one per management cluster.
    #[arg(
        long,
        env = "TOPOGRAPH_GATEWAY_MANAGEMENT_CLUSTERS",
        required_unless_present = "management_cluster_secrets"
    )]
    management_clusters: Option<PathBuf>,
    /// Namespace whose Secrets labelled `topograph.io/management-cluster` hold
    /// management clusters' kubeconfigs (registrations are written there too).
    #[arg(long, env = "TOPOGRAPH_GATEWAY_MANAGEMENT_CLUSTER_SECRETS")]
    management_cluster_secrets: Option<String>,
    /// The cluster holding those Secrets (and the tenants Secret); default: the one
    /// this process runs in, else `$KUBECONFIG`.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_HOME_KUBECONFIG")]
    home_kubeconfig: Option<PathBuf>,
    /// The render service for validation, defaulting and plans (`http://host:port`,
    /// `dns:///host:port` to balance over every replica the name resolves to, or a
    /// comma-separated list), or `in-process`.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_RENDER")]
    render: String,
    /// The appliers' queue (with `memory`, queued keys stay in this process: tests
    /// only).
    #[command(flatten)]
    queue: QueueArgs,
    /// The tenants document (YAML).
    #[arg(
        long,
        env = "TOPOGRAPH_GATEWAY_TENANTS",
        required_unless_present = "tenants_secret"
    )]
    tenants: Option<PathBuf>,
    /// The tenants document in a Secret (`NAMESPACE/NAME`, data key `tenants.yaml`).
    #[arg(
        long,
        env = "TOPOGRAPH_GATEWAY_TENANTS_SECRET",
        conflicts_with = "tenants"
    )]
    tenants_secret: Option<String>,
    /// The server's TLS certificate chain (PEM); plain HTTP/2 without it.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The TLS certificate's private key (PEM).
    #[arg(long, env = "TOPOGRAPH_GATEWAY_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// CA (PEM) whose client certificates are required (mutual TLS); tenants with a
    /// `clientCommonName` must then present a certificate with that common name.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_CLIENT_CA", requires = "tls_cert")]
    client_ca: Option<PathBuf>,
    /// Seconds between re-reads of the tenants and of the management clusters.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_RELOAD_SECONDS", default_value_t = 5)]
    reload_seconds: u64,
    /// Address of the Prometheus `/metrics` endpoint (off when not given).
    #[arg(long, env = "TOPOGRAPH_GATEWAY_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// Longest a request may take, in milliseconds; a shorter client deadline wins.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_TIMEOUT_MS", default_value_t = 30_000)]
    timeout_ms: u64,
    /// Requests in flight at most; more are refused with RESOURCE_EXHAUSTED.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_MAX_IN_FLIGHT", default_value_t = 1024)]
    max_in_flight: usize,
    /// Largest request message, in bytes.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_MAX_DECODING_MESSAGE_SIZE", default_value_t = 8 << 20)]
    max_decoding_message_size: usize,
    /// Largest response message, in bytes.
    #[arg(long, env = "TOPOGRAPH_GATEWAY_MAX_ENCODING_MESSAGE_SIZE", default_value_t = 32 << 20)]
    max_encoding_message_size: usize,
}

fn main() -> ExitCode {
    topograph_management::user_agent::set("topograph-gateway", env!("CARGO_PKG_VERSION"));
    let (args, deprecated) = topograph_queue::flags::parse::<Args>(GATEWAY_RENAMED);
    args.field_manager.install();
    topograph_telemetry::runner::run("topograph-gateway", async move {
        for warning in &deprecated {
            tracing::warn!("{warning}");
        }
        run(args).await
    })
}

async fn home(args: &Args) -> Result<Arc<ManagementCluster>, String> {
    match &args.home_kubeconfig {
        Some(path) => ManagementCluster::from_kubeconfig(path).await,
        None => ManagementCluster::infer().await,
    }
    .map(Arc::new)
    .map_err(|e| format!("the home cluster: {e}"))
}

async fn run(args: Args) -> Result<(), String> {
    let reload = Duration::from_secs(args.reload_seconds.max(1));
    let home = if args.management_cluster_secrets.is_some() || args.tenants_secret.is_some() {
        Some(home(&args).await?)
    } else {
        None
    };

    let tenant_source = match (&args.tenants, &args.tenants_secret, &home) {
        (Some(path), _, _) => TenantSource::File(path.clone()),
        (None, Some(text), Some(home)) => {
            let (namespace, name) = text
                .split_once('/')
                .filter(|(ns, n)| !ns.is_empty() && !n.is_empty())
                .ok_or_else(|| format!("--tenants-secret {text:?}: expected NAMESPACE/NAME"))?;
            TenantSource::Secret {
                home: home.clone(),
                namespace: namespace.to_string(),
                name: name.to_string(),
            }
        }
        _ => return Err("give --tenants FILE or --tenants-secret NAMESPACE/NAME".to_string()),
    };
    let tenants = tenant_source.read().await?;
    if tenants.is_empty() {
        tracing::warn!("no tenants: every request will be refused");
    }
    let tenants = Arc::new(TenantStore::new(tenants));
    tokio::spawn(keep_reloading(tenant_source, tenants.clone(), reload));

    let mut sources = Vec::new();
    let mut registration = Registration::default();
    if let Some(dir) = &args.management_clusters {
        sources.push(Source::Directory(dir.clone()));
        registration.directory = Some(dir.clone());
    }
    if let (Some(namespace), Some(home)) = (&args.management_cluster_secrets, &home) {
        sources.push(Source::Secrets {
            home: home.clone(),
            namespace: namespace.clone(),
        });
        registration.secrets = Some((home.clone(), namespace.clone()));
    }
    let registry = Arc::new(Registry::with_sources(sources));
    registry.refresh().await;

    // Admission, Plan and Impact go through the same engine as the appliers: one
    // balanced channel to the render service, or the engine in process.
    let engine: Arc<dyn topograph_engine::Engine> = if args.render == "in-process" {
        Arc::new(topograph_engine::Local)
    } else {
        Arc::new(topograph_proto::remote::RemoteEngine::connect_lazy(
            &args.render,
        )?)
    };
    let connected = args
        .queue
        .connect(QueueConfig::default())
        .await
        .map_err(|e| format!("--redis: {e}"))?;
    let jobs: Arc<dyn Jobs> = match connected {
        Connected::Memory(queue) => Arc::new(QueueJobs(Arc::new(queue))),
        Connected::Redis(queue) => Arc::new(QueueJobs(Arc::new(queue))),
    };

    let metrics = Arc::new(RpcMetrics::new("topograph_gateway"));
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

    let read = |flag: &str, path: &PathBuf| {
        std::fs::read(path).map_err(|e| format!("{flag} {}: {e}", path.display()))
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(Tls {
            cert: read("--tls-cert", cert)?,
            key: read("--tls-key", key)?,
            client_ca: args
                .client_ca
                .as_ref()
                .map(|ca| read("--client-ca", ca))
                .transpose()?,
        }),
        _ => None,
    };

    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("--listen {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("--listen {}: {e}", args.listen))?;
    let gateway = Gateway::new(GatewayConfig {
        registry,
        jobs,
        engine,
        tenants,
        registration,
        limits: Limits {
            timeout: Duration::from_millis(args.timeout_ms.max(1)),
            max_in_flight: args.max_in_flight,
            max_decoding_message_size: args.max_decoding_message_size,
            max_encoding_message_size: args.max_encoding_message_size,
        },
        metrics,
        registry_refresh: reload.min(Duration::from_secs(2)),
        install_missing_crds: false,
    });
    let gateway = match tls {
        Some(tls) => gateway.with_tls(tls),
        None => gateway,
    };
    // The contract with whoever started the process: serving from here on.
    println!("gateway listening on {addr}");
    tracing::info!(%addr, "gateway listening");
    gateway
        .serve(listener, shutdown_signal())
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!("stopped");
    Ok(())
}
