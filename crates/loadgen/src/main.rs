//! `loadgen`: drives the render service or the gateway with N concurrent clients for a
//! duration and prints throughput and latency percentiles as one JSON line.
//!
//! `loadgen render --addr http://127.0.0.1:50051 -f class.yaml -f cluster.yaml
//! --concurrency 64 --duration 10` sends the same Render request (the ClusterClass, its
//! templates and the Cluster found in the files) in a closed loop from every client.
//!
//! `loadgen gateway --addr http://127.0.0.1:50080 --token T --op apply|get|list -f
//! class.yaml -f cluster.yaml` first applies the files (class, templates, Cluster),
//! then: `apply` re-applies one of `--distinct` copies of the Cluster per request with
//! an annotation that changes every time (so every Apply is admitted, written and
//! queued); `get` reads the Cluster with its owned objects; `list` lists a page of the
//! namespace's Clusters.
//!
//! `loadgen fleet -f class.yaml -f cluster.yaml --management-clusters 10 --clusters
//! 1000` starts a whole fleet cold and times it until every Cluster converged
//! ([`fleet`]).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};

mod fleet;
use serde_json::Value;
use tonic::transport::{Channel, Endpoint};
use topograph_api::load::parse_documents;
use topograph_api::object::{ObjectExt, set_at};
use topograph_proto::render::v1::RenderRequest;
use topograph_proto::render::v1::render_service_client::RenderServiceClient;

#[derive(Parser, Debug)]
#[command(name = "loadgen", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Send Render requests.
    Render(RenderArgs),
    /// Send gateway requests.
    Gateway(GatewayArgs),
    /// Start a fleet cold and time it until every Cluster converged.
    Fleet(fleet::FleetArgs),
}

/// What the gateway clients send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum GatewayOp {
    /// Apply a changed Cluster.
    Apply,
    /// GetCluster.
    Get,
    /// ListClusters (one page).
    List,
}

#[derive(Args, Debug)]
struct GatewayArgs {
    /// The gateway.
    #[arg(long, default_value = "http://127.0.0.1:50080")]
    addr: String,
    /// Bearer token.
    #[arg(long, env = "TOPOGRAPH_TOKEN", default_value = "")]
    token: String,
    /// The management cluster.
    #[arg(long, default_value = "local")]
    management_cluster: String,
    /// The namespace the objects go to (objects without one).
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// The operation.
    #[arg(long, value_enum, default_value = "get")]
    op: GatewayOp,
    /// YAML or JSON files with the ClusterClass, its templates and one Cluster.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// Concurrent clients, each with one request outstanding at a time.
    #[arg(short = 'c', long, default_value_t = 1)]
    concurrency: usize,
    /// How long to send, in seconds.
    #[arg(short = 'd', long, default_value_t = 10.0)]
    duration: f64,
    /// Copies of the Cluster `apply` cycles through (`<name>-lg-<i>`).
    #[arg(long, default_value_t = 16)]
    distinct: usize,
}

#[derive(Args, Debug)]
struct RenderArgs {
    /// The server.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    addr: String,
    /// YAML or JSON files with the ClusterClass, its templates and one Cluster.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// Concurrent clients, each with one request outstanding at a time.
    #[arg(short = 'c', long, default_value_t = 1)]
    concurrency: usize,
    /// How long to send, in seconds.
    #[arg(short = 'd', long, default_value_t = 10.0)]
    duration: f64,
    /// HTTP/2 connections the clients share (round robin).
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Cycle through this many variants of the Cluster (different names), so a server
    /// that remembers responses sees repeats only every N requests; 1: one request
    /// over and over.
    #[arg(long, default_value_t = 1)]
    distinct: usize,
    /// Ask for the desired state alone, as appliers do (`desired_only`).
    #[arg(long)]
    desired_only: bool,
}

/// The request the files describe.
fn request(files: &[String]) -> Result<RenderRequest, String> {
    let mut out = RenderRequest::default();
    let (mut classes, mut clusters) = (0, 0);
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let (docs, errors) = parse_documents(file, &text);
        if let Some(e) = errors.first() {
            return Err(e.to_string());
        }
        for doc in docs {
            let bytes = serde_json::to_vec(&doc.value).map_err(|e| format!("{file}: {e}"))?;
            match doc.value.get("kind").and_then(Value::as_str) {
                Some("ClusterClass") => {
                    classes += 1;
                    out.cluster_class = bytes;
                }
                Some("Cluster") => {
                    clusters += 1;
                    out.cluster = bytes;
                }
                _ => out.templates.push(bytes),
            }
        }
    }
    if classes != 1 || clusters != 1 {
        return Err(format!(
            "the files must hold one ClusterClass and one Cluster (found {classes} and {clusters})"
        ));
    }
    Ok(out)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// `distinct` variants of `request`, the Cluster renamed in each but the first.
fn variants(request: &RenderRequest, distinct: usize) -> Result<Vec<RenderRequest>, String> {
    let cluster: Value =
        serde_json::from_slice(&request.cluster).map_err(|e| format!("the Cluster: {e}"))?;
    let name = cluster["metadata"]["name"]
        .as_str()
        .unwrap_or("cluster")
        .to_string();
    (0..distinct.max(1))
        .map(|i| {
            let mut variant = request.clone();
            if i > 0 {
                let mut renamed = cluster.clone();
                set_at(
                    &mut renamed,
                    &["metadata", "name"],
                    Value::from(format!("{name}-{i}")),
                );
                variant.cluster = serde_json::to_vec(&renamed).map_err(|e| e.to_string())?;
            }
            Ok(variant)
        })
        .collect()
}

/// What a closed-loop run measured.
struct Measured {
    seconds: f64,
    latencies: Vec<Duration>,
    errors: u64,
    first_error: Option<String>,
}

impl Measured {
    /// One JSON line: counts, rate and latency percentiles in milliseconds.
    fn report(mut self, what: &str, concurrency: usize) -> String {
        self.latencies.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let mut line = format!(
            "{{\"op\": \"{what}\", \"concurrency\": {concurrency}, \"seconds\": {:.3}, \"requests\": {}, \"errors\": {}, \"requests_per_second\": {:.1}, \"p50_ms\": {:.3}, \"p90_ms\": {:.3}, \"p99_ms\": {:.3}",
            self.seconds,
            self.latencies.len(),
            self.errors,
            self.latencies.len() as f64 / self.seconds.max(f64::EPSILON),
            ms(percentile(&self.latencies, 50.0)),
            ms(percentile(&self.latencies, 90.0)),
            ms(percentile(&self.latencies, 99.0)),
        );
        if let Some(error) = self.first_error {
            line.push_str(&format!(", \"first_error\": {}", Value::from(error)));
        }
        line.push('}');
        line
    }
}

/// Runs `concurrency` clients for `duration`, each calling `call(client, n)` for its
/// n-th request in a closed loop.
async fn drive<F, Fut>(concurrency: usize, duration: Duration, call: F) -> Result<Measured, String>
where
    F: Fn(usize, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let start = Instant::now();
    let end = start + duration;
    let mut tasks = Vec::new();
    for client in 0..concurrency.max(1) {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let (mut errors, mut first_error) = (0u64, None);
            let mut n = 0;
            while Instant::now() < end {
                let sent = Instant::now();
                match call(client, n).await {
                    Ok(()) => latencies.push(sent.elapsed()),
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert(e);
                    }
                }
                n += 1;
            }
            (latencies, errors, first_error)
        }));
    }
    let mut measured = Measured {
        seconds: 0.0,
        latencies: Vec::new(),
        errors: 0,
        first_error: None,
    };
    for task in tasks {
        let (latencies, errors, first_error) =
            task.await.map_err(|e| format!("client task: {e}"))?;
        measured.latencies.extend(latencies);
        measured.errors += errors;
        if measured.first_error.is_none() {
            measured.first_error = first_error;
        }
    }
    measured.seconds = start.elapsed().as_secs_f64();
    Ok(measured)
}

/// A call's result as the driver counts it.
fn outcome<T>(result: Result<tonic::Response<T>, tonic::Status>) -> Result<(), String> {
    result.map(|_| ()).map_err(|e| e.to_string())
}

/// The bearer token every gateway request carries.
#[derive(Clone)]
struct Authorization(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl Authorization {
    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        request
    }
}

/// The objects of `files`, JSON each, with `namespace` where they name none.
fn objects(files: &[String], namespace: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let (docs, errors) = parse_documents(file, &text);
        if let Some(e) = errors.first() {
            return Err(e.to_string());
        }
        for doc in docs {
            let mut value = doc.value;
            if value.namespace().is_empty() {
                set_at(
                    &mut value,
                    &["metadata", "namespace"],
                    Value::from(namespace),
                );
            }
            out.push(value);
        }
    }
    Ok(out)
}

async fn gateway(args: GatewayArgs) -> Result<(), String> {
    use topograph_proto::gateway::v1 as pb;
    use topograph_proto::gateway::v1::gateway_service_client::GatewayServiceClient;

    let objects = objects(&args.files, &args.namespace)?;
    let cluster = objects
        .iter()
        .find(|o| o["kind"] == "Cluster")
        .cloned()
        .ok_or("the files hold no Cluster")?;
    let name = cluster["metadata"]["name"]
        .as_str()
        .unwrap_or("cluster")
        .to_string();
    let namespace = cluster["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let channel = Endpoint::from_shared(args.addr.clone())
        .map_err(|e| format!("--addr: {e}"))?
        .connect()
        .await
        .map_err(|e| format!("connecting to {}: {e}", args.addr))?;
    let authorization: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>> =
        if args.token.is_empty() {
            None
        } else {
            Some(
                format!("Bearer {}", args.token)
                    .parse()
                    .map_err(|_| "the token is not a valid header value".to_string())?,
            )
        };
    let auth = Authorization(authorization);
    let encode = |objects: &[Value]| -> Vec<Vec<u8>> {
        objects
            .iter()
            .map(|o| serde_json::to_vec(o).unwrap_or_default())
            .collect()
    };
    // Warm-up: the class, its templates and the Cluster exist before the clock starts,
    // and a wrong token or address fails here rather than as a run of errors.
    let mut client = GatewayServiceClient::new(channel.clone()).max_decoding_message_size(64 << 20);
    client
        .apply(auth.request(pb::ApplyRequest {
            management_cluster: args.management_cluster.clone(),
            objects: encode(&objects),
            dry_run: false,
        }))
        .await
        .map_err(|e| format!("applying the files: {e}"))?;

    let duration = Duration::from_secs_f64(args.duration.max(0.0));
    let mc = args.management_cluster.clone();
    let distinct = args.distinct.max(1);
    let clients = args.concurrency.max(1);
    let measured = match args.op {
        GatewayOp::Apply => {
            drive(clients, duration, move |c, n| {
                let mut client = GatewayServiceClient::new(channel.clone());
                let mut copy = cluster.clone();
                let k = (c + n * clients) % distinct;
                set_at(
                    &mut copy,
                    &["metadata", "name"],
                    Value::from(format!("{name}-lg-{k}")),
                );
                // A new value every time: each Apply is a real write and a queued job.
                set_at(
                    &mut copy,
                    &["metadata", "annotations", "loadgen.topograph.io/sequence"],
                    Value::from(format!("{c}-{n}")),
                );
                let message = auth.request(pb::ApplyRequest {
                    management_cluster: mc.clone(),
                    objects: encode(std::slice::from_ref(&copy)),
                    dry_run: false,
                });
                async move { outcome(client.apply(message).await) }
            })
            .await?
        }
        GatewayOp::Get => {
            drive(clients, duration, move |_, _| {
                let mut client =
                    GatewayServiceClient::new(channel.clone()).max_decoding_message_size(64 << 20);
                let message = auth.request(pb::GetClusterRequest {
                    management_cluster: mc.clone(),
                    namespace: namespace.clone(),
                    name: name.clone(),
                });
                async move { outcome(client.get_cluster(message).await) }
            })
            .await?
        }
        GatewayOp::List => {
            drive(clients, duration, move |_, _| {
                let mut client =
                    GatewayServiceClient::new(channel.clone()).max_decoding_message_size(64 << 20);
                let message = auth.request(pb::ListClustersRequest {
                    management_cluster: mc.clone(),
                    namespace: namespace.clone(),
                    page_size: 100,
                    ..Default::default()
                });
                async move { outcome(client.list_clusters(message).await) }
            })
            .await?
        }
    };
    let op = format!("{:?}", args.op).to_lowercase();
    println!("{}", measured.report(&op, clients));
    Ok(())
}

async fn render(args: RenderArgs) -> Result<(), String> {
    let mut request = request(&args.files)?;
    request.desired_only = args.desired_only;
    let variants = std::sync::Arc::new(variants(&request, args.distinct)?);
    let endpoint = Endpoint::from_shared(args.addr.clone()).map_err(|e| format!("--addr: {e}"))?;
    let mut channels: Vec<Channel> = Vec::new();
    for _ in 0..args.connections.max(1) {
        channels.push(
            endpoint
                .connect()
                .await
                .map_err(|e| format!("connecting to {}: {e}", args.addr))?,
        );
    }
    // One warm-up request, so connection set-up and the server's class cache are not
    // part of the measurement, and a broken request fails fast.
    RenderServiceClient::new(channels[0].clone())
        .render(request.clone())
        .await
        .map_err(|e| format!("warm-up request: {e}"))?;

    let duration = Duration::from_secs_f64(args.duration.max(0.0));
    let clients = args.concurrency.max(1);
    let measured = drive(clients, duration, move |c, n| {
        let mut client = RenderServiceClient::new(channels[c % channels.len()].clone())
            .max_decoding_message_size(64 << 20);
        // Each client walks the variants from its own offset.
        let request = variants[(c + n * clients) % variants.len()].clone();
        async move { outcome(client.render(request).await) }
    })
    .await?;
    println!("{}", measured.report("render", clients));
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("loadgen: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Render(args) => runtime.block_on(render(args)),
        Command::Gateway(args) => runtime.block_on(gateway(args)),
        Command::Fleet(args) => runtime.block_on(fleet::fleet(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&sorted, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&sorted, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&sorted, 100.0), Duration::from_millis(100));
        assert_eq!(percentile(&[], 99.0), Duration::ZERO);
    }
}
