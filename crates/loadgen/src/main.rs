//! `loadgen`: drives the render service with N concurrent clients for a duration and
//! prints throughput and latency percentiles.
//!
//! `loadgen render --addr http://127.0.0.1:50051 -f class.yaml -f cluster.yaml
//! --concurrency 64 --duration 10` sends the same Render request (the ClusterClass, its
//! templates and the Cluster found in the files) in a closed loop from every client.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use serde_json::Value;
use tonic::transport::{Channel, Endpoint};
use topograph_api::load::parse_documents;
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
                renamed["metadata"]["name"] = Value::from(format!("{name}-{i}"));
                variant.cluster = serde_json::to_vec(&renamed).map_err(|e| e.to_string())?;
            }
            Ok(variant)
        })
        .collect()
}

async fn render(args: RenderArgs) -> Result<(), String> {
    let request = request(&args.files)?;
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
    let start = Instant::now();
    let end = start + duration;
    let mut tasks = Vec::new();
    for i in 0..args.concurrency.max(1) {
        let mut client = RenderServiceClient::new(channels[i % channels.len()].clone())
            .max_decoding_message_size(64 << 20);
        let variants = variants.clone();
        let clients = args.concurrency.max(1);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = 0u64;
            // Each client walks the variants from its own offset.
            let mut next = i;
            while Instant::now() < end {
                let request = variants[next % variants.len()].clone();
                next += clients;
                let sent = Instant::now();
                match client.render(request).await {
                    Ok(_) => latencies.push(sent.elapsed()),
                    Err(_) => errors += 1,
                }
            }
            (latencies, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (l, e) = task.await.map_err(|e| format!("client task: {e}"))?;
        latencies.extend(l);
        errors += e;
    }
    let elapsed = start.elapsed().as_secs_f64();
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{{\"concurrency\": {}, \"seconds\": {elapsed:.3}, \"renders\": {}, \"errors\": {errors}, \"renders_per_second\": {:.1}, \"p50_ms\": {:.3}, \"p90_ms\": {:.3}, \"p99_ms\": {:.3}}}",
        args.concurrency,
        latencies.len(),
        latencies.len() as f64 / elapsed,
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 90.0)),
        ms(percentile(&latencies, 99.0)),
    );
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
