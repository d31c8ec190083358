//! `topograph up`: the whole system in one process, for trying it and for demos. The
//! gateway, the applier (watchers and reconcilers on an in-process queue) and the
//! engine linked in, in front of an in-memory management cluster named `local` whose
//! providers are simulated, preloaded with the quick-start example through the
//! gateway's own Apply. Apply installs the CRDs of provider kinds it has not seen
//! (any class can be tried), and `--kubeconfig-out` lets kubectl at the cluster.
//! `--example-extension` serves the example Runtime SDK extension beside it and
//! registers it, so lifecycle hooks can be tried (`--hook-responses` holds them).
//!
//! The output is a contract: `gateway listening on ADDR` once it serves, preceded by
//! `token: ...` when no `--token` was given (a generated admin token).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::Value;
use tokio::sync::watch;
use topograph_api::object::ObjectExt;
use topograph_applier::lease::LocalLease;
use topograph_applier::metrics::Metrics;
use topograph_applier::service::{self, ServiceConfig};
use topograph_applier::watch::WatchConfig;
use topograph_gateway::{
    Gateway, GatewayConfig, Limits, QueueJobs, Registration, TenantStore, Tenants,
};
use topograph_management::ManagementCluster;
use topograph_management::registry::Registry;
use topograph_queue::{MemoryQueue, QueueConfig};

use crate::client::Client;

/// The management cluster of the embedded mode.
pub const LOCAL: &str = "local";

const EXAMPLE_CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");
const EXAMPLE_CLUSTER: &str = include_str!("../../../examples/quick-start/cluster.yaml");

/// Runs gateway, applier and engine in one process with an in-memory management
/// cluster, until interrupted.
#[derive(Args, Debug)]
pub struct UpArgs {
    /// Where the gateway listens.
    #[arg(long, default_value = "127.0.0.1:50080")]
    listen: SocketAddr,
    /// The admin token (default: a generated one, printed).
    #[arg(long, env = "TOPOGRAPH_TOKEN")]
    token: Option<String>,
    /// Start empty instead of with the quick-start ClusterClass and Cluster.
    #[arg(long)]
    no_examples: bool,
    /// How long the simulated providers take to react, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    provider_delay_ms: u64,
    /// Concurrent reconcilers.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Write a kubeconfig for the in-memory management cluster here, for kubectl.
    #[arg(long, value_name = "PATH")]
    kubeconfig_out: Option<std::path::PathBuf>,
    /// Also run the example Runtime SDK extension (HTTPS, in process) and register it
    /// as ExtensionConfig `k8s-upgrade-with-runtimesdk`: its lifecycle hooks answer for
    /// every Cluster, and its patch handlers are the ones Cluster API's
    /// quick-start-runtimesdk class calls.
    #[arg(long)]
    example_extension: bool,
    /// With --example-extension: its lifecycle answers per hook, read on every call
    /// (`{"BeforeClusterUpgrade": {"status": "Success", "retryAfterSeconds": 30}}`).
    #[arg(long, value_name = "FILE", requires = "example_extension")]
    hook_responses: Option<std::path::PathBuf>,
}

/// The ExtensionConfig name the example extension is registered under (the name Cluster
/// API's quick-start-runtimesdk class refers to).
pub const EXAMPLE_EXTENSION: &str = "k8s-upgrade-with-runtimesdk";

/// Serves the example extension on a free loopback port; returns its URL and the CA
/// that signed its certificate.
async fn start_example_extension(
    hook_responses: Option<std::path::PathBuf>,
) -> Result<(String, String), String> {
    let generated = topograph_runtime::tls::generate(&["localhost", "127.0.0.1"])?;
    let tls = topograph_runtime::tls::server_config(
        generated.cert_pem.as_bytes(),
        generated.key_pem.as_bytes(),
    )?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("the example extension: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("the example extension: {e}"))?;
    let extension = topograph_example_extension::Extension {
        lifecycle: topograph_example_extension::Lifecycle {
            responses: hook_responses,
        },
        calls_log: None,
    };
    tokio::spawn(topograph_runtime::server::serve(
        listener,
        Arc::new(tls),
        Arc::new(extension),
    ));
    Ok((format!("https://{addr}"), generated.ca_pem))
}

/// The ExtensionConfig registering the example extension at `url`.
fn example_extension_config(url: &str, ca_pem: &str) -> Result<Value, String> {
    let config = topograph_runtime::config::ExtensionConfig::for_url(
        EXAMPLE_EXTENSION,
        url,
        ca_pem.as_bytes().to_vec(),
    );
    serde_json::to_value(config)
        .map_err(|e| format!("the example extension's ExtensionConfig: {e}"))
}

pub fn run(args: &UpArgs) -> ExitCode {
    crate::block_on(true, async {
        // Logs (warnings unless RUST_LOG says otherwise) and, with OTEL_* set, spans of
        // the whole fleet in this process; set up inside the runtime the exporter uses.
        let tracing = topograph_telemetry::trace::init_with("topograph-up", "warn");
        let code = match up(args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("topograph up: {e}");
                ExitCode::from(2)
            }
        };
        // The final flush blocks; off the async workers so the exporter can still run.
        let _ = tokio::task::spawn_blocking(move || tracing.shutdown()).await;
        code
    })
}

fn examples() -> Result<Vec<Value>, String> {
    let mut objects = Vec::new();
    for (name, text) in [
        ("clusterclass.yaml", EXAMPLE_CLASS),
        ("cluster.yaml", EXAMPLE_CLUSTER),
    ] {
        let (docs, errors) = topograph_api::load::parse_documents(name, text);
        if let Some(e) = errors.first() {
            return Err(format!("the built-in example {name}: {e}"));
        }
        for doc in docs {
            let mut object = doc.value;
            if object.namespace().is_empty() {
                topograph_api::object::set_at(
                    &mut object,
                    &["metadata", "namespace"],
                    Value::from("default"),
                );
            }
            objects.push(object);
        }
    }
    Ok(objects)
}

/// A token from the kernel's random source.
fn generated_token() -> Result<String, String> {
    use std::io::Read;
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("generating a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

async fn up(args: &UpArgs) -> Result<(), String> {
    let examples = if args.no_examples {
        Vec::new()
    } else {
        examples()?
    };
    // Cluster API's CRDs, and the providers' for the example's kinds (more kinds can be
    // added later with `kubectl apply` of CRDs against the in-memory server).
    let mut seed = topograph_management::crds::cluster_api();
    seed.extend(topograph_management::crds::topograph());
    seed.extend(topograph_management::crds::for_objects(&examples));
    let server = topograph_kube::Server::start(topograph_kube::Config {
        simulate_providers: Some(Duration::from_millis(args.provider_delay_ms)),
        seed,
        ..topograph_kube::Config::default()
    })
    .await
    .map_err(|e| format!("starting the in-memory management cluster: {e}"))?;
    if let Some(path) = &args.kubeconfig_out {
        std::fs::write(path, server.kubeconfig_yaml())
            .map_err(|e| format!("--kubeconfig-out {}: {e}", path.display()))?;
    }
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .map_err(|e| e.to_string())?;
    let extension = if args.example_extension {
        let (url, ca) = start_example_extension(args.hook_responses.clone()).await?;
        api.create(&example_extension_config(&url, &ca)?)
            .await
            .map_err(|e| format!("registering the example extension: {e}"))?;
        Some(url)
    } else {
        None
    };
    // The embedded applier reads class-level objects, and a Cluster's own while it
    // watches, from watch-fed caches, as the fleet's appliers do.
    let registry = Arc::new(Registry::fixed([(
        LOCAL.to_string(),
        Arc::new(api.with_class_cache().with_owned_cache()),
    )]));
    let queue = Arc::new(MemoryQueue::new(QueueConfig::default()));

    let (token, generated) = match &args.token {
        Some(token) => (token.clone(), false),
        None => (generated_token()?, true),
    };
    let tenants = Tenants::from_yaml(&format!(
        "tenants:\n- name: admin\n  tokenSha256: {}\n  managementClusters: [\"*\"]\n  namespaces: [\"*\"]\n  admin: true\n",
        topograph_gateway::tenancy::token_sha256_hex(&token)
    ))?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("--listen {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("--listen {}: {e}", args.listen))?;
    let gateway = Gateway::new(GatewayConfig {
        registry: registry.clone(),
        jobs: Arc::new(QueueJobs(queue.clone())),
        engine: Arc::new(topograph_engine::Local),
        tenants: Arc::new(TenantStore::new(tenants)),
        registration: Registration::default(),
        limits: Limits::default(),
        metrics: Arc::new(topograph_telemetry::rpc::RpcMetrics::new(
            "topograph_gateway",
        )),
        registry_refresh: Duration::from_secs(2),
        install_missing_crds: true,
    });

    let (stop, shutdown) = watch::channel(false);
    let applier = tokio::spawn(service::run(
        queue,
        Arc::new(LocalLease),
        registry,
        Arc::new(topograph_engine::Local),
        Arc::new(Metrics::new()),
        ServiceConfig {
            workers: args.workers,
            name: "up".to_string(),
            watch: WatchConfig {
                resync: Duration::from_secs(60),
                ..WatchConfig::default()
            },
            ..ServiceConfig::default()
        },
        shutdown.clone(),
    ));
    let mut gateway_shutdown = shutdown.clone();
    let gateway = tokio::spawn(gateway.serve(listener, async move {
        let _ = gateway_shutdown.wait_for(|stopping| *stopping).await;
    }));

    if !examples.is_empty() {
        let client = Client::connect(&format!("http://{addr}"), &token)
            .await
            .map_err(|e| format!("loading the examples: {e}"))?;
        client
            .apply(LOCAL, &examples)
            .await
            .map_err(|e| format!("loading the examples: {e}"))?;
    }
    if generated {
        println!("token: {token}");
    }
    println!("gateway listening on {addr}");
    eprintln!(
        "management cluster {LOCAL:?} (in memory, simulated providers) at {}",
        server.url()
    );
    if let Some(url) = &extension {
        eprintln!("example extension at {url} (ExtensionConfig {EXAMPLE_EXTENSION})");
    }
    if let Some(path) = &args.kubeconfig_out {
        eprintln!(
            "kubeconfig for it: {} (kubectl --kubeconfig {} get clusters -A)",
            path.display(),
            path.display()
        );
    }

    topograph_telemetry::rpc::shutdown_signal().await;
    eprintln!("shutting down");
    let _ = stop.send(true);
    let _ = applier.await;
    match gateway.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e.to_string()),
        Err(e) => return Err(e.to_string()),
    }
    server.shutdown().await;
    Ok(())
}
