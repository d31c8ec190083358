//! `loadgen fleet`: the whole fleet started cold on this machine and timed until every
//! Cluster converged. It starts `redis-server`, `--management-clusters` topograph-kube
//! servers with simulated providers, one render service and `--appliers` appliers of
//! `--workers` workers (the binaries beside this one), seeds every management cluster
//! with Cluster API's CRDs and the class of the files, then creates `--clusters` copies
//! of the files' Cluster in each and waits until all report `TopologyReconciled` True
//! for their generation, then until the appliers have gone quiet (settled). One JSON
//! line: Clusters, seconds to converge and to settle and the rates they give, per
//! process its CPU seconds and peak RSS (from `/proc`), and per Cluster the reconciles
//! the appliers ran (their metrics) and the API requests the management clusters
//! served by verb (their request counters, without loadgen's own).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_management::{ManagementCluster, crds};

/// Arguments of `loadgen fleet`.
#[derive(Args, Debug)]
pub struct FleetArgs {
    /// YAML or JSON files with the ClusterClass, its templates and one Cluster.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// How many management clusters (topograph-kube processes).
    #[arg(long, default_value_t = 10)]
    management_clusters: usize,
    /// Copies of the Cluster in each management cluster.
    #[arg(long, default_value_t = 1000)]
    clusters: usize,
    /// Applier processes.
    #[arg(long, default_value_t = 2)]
    appliers: usize,
    /// Workers per applier.
    #[arg(long, default_value_t = 8)]
    workers: usize,
    /// How long the simulated providers take to react, in milliseconds.
    #[arg(long, default_value_t = 200)]
    provider_delay_ms: u64,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 1800)]
    timeout: u64,
    /// The appliers' full resync period, in seconds. Cluster API's default sync
    /// period (10 minutes), longer than a 10 × 1,000 run, so a measurement counts the
    /// reconciles changes cause, not a resync falling in the middle of it.
    #[arg(long, default_value_t = 600)]
    resync_seconds: u64,
    /// After the fleet settled, wait for this many resyncs of every Cluster by the
    /// appliers and measure each: what a reconcile of a converged Cluster costs
    /// (requests, CPU). The first resync still finds the providers' last reports; the
    /// next ones are the steady state. Use a `--resync-seconds` shorter than the run.
    #[arg(long, default_value_t = 0)]
    resync_rounds: usize,
    /// The queue's shards (`topograph-applier --redis-shards`). Defaults to the
    /// applier's own default, or with `--owned-cache` to 16 shards hashed by management
    /// cluster (`--redis-shard-by management-cluster`: `mc-0`..`mc-9` get one each), so
    /// each applier takes the Clusters of the management clusters it watches first.
    #[arg(long)]
    redis_shards: Option<usize>,
    /// The appliers read a Cluster's own objects from watch-fed caches while they hold
    /// its management cluster's watch (`topograph-applier --owned-cache`, decision 0036).
    #[arg(long)]
    owned_cache: bool,
    /// Keep every process's log (each topograph-kube's too) in this directory instead
    /// of a temporary one removed at the end; with `RUST_LOG` set (the processes
    /// inherit it) this shows what a fleet did, request by request.
    #[arg(long)]
    keep_logs: Option<PathBuf>,
}

/// A child process killed when dropped.
struct Proc {
    name: String,
    child: Child,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proc {
    /// CPU seconds (user + system) and peak RSS in MiB, read from `/proc`.
    fn usage(&self) -> (f64, f64) {
        let pid = self.child.id();
        let cpu = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                // Fields after the command name (which may hold spaces) start at ')'.
                let rest = stat.rsplit_once(')')?.1;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let utime: f64 = fields.get(11)?.parse().ok()?;
                let stime: f64 = fields.get(12)?.parse().ok()?;
                Some((utime + stime) / clock_ticks())
            })
            .unwrap_or(0.0);
        let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|status| {
                let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
                let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
                Some(kib / 1024.0)
            })
            .unwrap_or(0.0);
        (cpu, rss)
    }
}

/// Linux's `USER_HZ`, which `/proc/<pid>/stat` counts in: 100 on every architecture
/// Linux runs on today.
fn clock_ticks() -> f64 {
    100.0
}

fn sibling(name: &str) -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("locating loadgen: {e}"))?;
    let path = me
        .parent()
        .map(|d| d.join(name))
        .ok_or_else(|| format!("no directory beside {}", me.display()))?;
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} not found beside loadgen (build it: cargo build --release -p {name})",
            path.display()
        ))
    }
}

fn spawn(name: &str, command: &mut Command, log: &Path) -> Result<Proc, String> {
    let log = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting {name}: {e}"))?;
    Ok(Proc {
        name: name.to_string(),
        child,
    })
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

async fn wait_for_port(port: u16, what: &str) -> Result<(), String> {
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("{what} did not listen on {port}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The body of `GET path` on a local HTTP server (the appliers' metrics, topograph-kube's
/// request counters): plain HTTP/1.0, so no client library is needed for two reads.
async fn http_get(addr: &str, path: &str) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("{addr}: {e}"))?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .map_err(|e| format!("{addr}{path}: {e}"))?;
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .await
        .map_err(|e| format!("{addr}{path}: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .ok_or_else(|| format!("{addr}{path}: no HTTP answer"))
}

/// The sum of a Prometheus text exposition's samples of `metric` (all label sets).
fn metric_sum(exposition: &str, metric: &str) -> f64 {
    exposition
        .lines()
        .filter(|l| {
            l.strip_prefix(metric)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Starts one topograph-kube; returns it, its address and its management cluster
/// client, its kubeconfig published in `dir` as `<name>.kubeconfig` for the appliers.
async fn management_cluster(
    binary: &Path,
    dir: &Path,
    log: &Path,
    name: &str,
    provider_delay_ms: u64,
) -> Result<(Proc, String, ManagementCluster), String> {
    use std::io::BufRead;
    let partial = dir.join(format!("{name}.kubeconfig.tmp"));
    let log = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = Command::new(binary)
        .args(["--listen", "127.0.0.1:0", "--simulate-providers"])
        .args(["--provider-delay-ms", &provider_delay_ms.to_string()])
        .arg("--kubeconfig-out")
        .arg(&partial)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting topograph-kube: {e}"))?;
    let mut url = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = std::io::BufReader::new(stdout).read_line(&mut url);
    }
    let process = Proc {
        name: format!("kube-{name}"),
        child,
    };
    let kubeconfig = std::fs::read_to_string(&partial)
        .map_err(|e| format!("{name}: its kubeconfig ({url:?}): {e}"))?;
    let api = ManagementCluster::from_kubeconfig_yaml(&kubeconfig)
        .await
        .map_err(|e| format!("{name}: {e}"))?;
    std::fs::rename(&partial, dir.join(format!("{name}.kubeconfig")))
        .map_err(|e| format!("{name}: {e}"))?;
    let addr = url.trim().trim_start_matches("http://").to_string();
    Ok((process, addr, api))
}

fn converged(cluster: &Value) -> bool {
    let generation = cluster.at(&["metadata", "generation"]).cloned();
    cluster
        .at(&["status", "v1beta2", "conditions"])
        .or_else(|| cluster.at(&["status", "conditions"]))
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c["type"] == "TopologyReconciled"
                    && c["status"] == "True"
                    && (c.get("observedGeneration").is_none()
                        || c.get("observedGeneration").cloned() == generation)
            })
        })
}

/// Runs the fleet and prints its line.
pub async fn fleet(args: FleetArgs) -> Result<(), String> {
    let objects = crate::objects(&args.files, "default")?;
    let (clusters, class): (Vec<Value>, Vec<Value>) =
        objects.into_iter().partition(|o| o.kind() == "Cluster");
    let template = clusters
        .into_iter()
        .next()
        .ok_or("the files hold no Cluster")?;
    let namespace = template.namespace().to_string();
    let kube = sibling("topograph-kube")?;
    let render = sibling("topograph-render")?;
    let applier = sibling("topograph-applier")?;
    let dir = match &args.keep_logs {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("topograph-fleet-{}", std::process::id())),
    };
    let kubeconfigs = dir.join("clusters");
    std::fs::create_dir_all(&kubeconfigs).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut processes: Vec<Proc> = Vec::new();

    let redis_port = free_port()?;
    processes.push(spawn(
        "redis",
        Command::new("redis-server")
            .args(["--port", &redis_port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"]),
        &dir.join("redis.log"),
    )?);
    let mut apis = Vec::new();
    let mut kube_addrs = Vec::new();
    for i in 0..args.management_clusters {
        let (process, addr, api) = management_cluster(
            &kube,
            &kubeconfigs,
            &dir.join(format!("kube-mc-{i}.log")),
            &format!("mc-{i}"),
            args.provider_delay_ms,
        )
        .await?;
        processes.push(process);
        kube_addrs.push(addr);
        let mut seed = crds::cluster_api();
        seed.extend(crds::topograph());
        seed.extend(crds::for_objects(&class));
        seed.push(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        );
        seed.extend(class.iter().cloned());
        for object in &seed {
            let exists = api
                .get(
                    object.api_version(),
                    object.kind(),
                    object.namespace(),
                    object.name(),
                )
                .await
                .map_err(|e| format!("seeding mc-{i}: {e}"))?
                .is_some();
            if !exists {
                api.create(object).await.map_err(|e| {
                    format!("seeding mc-{i}: {} {}: {e}", object.kind(), object.name())
                })?;
            }
        }
        apis.push(api);
    }
    let render_port = free_port()?;
    processes.push(spawn(
        "render",
        Command::new(&render).args(["--listen", &format!("127.0.0.1:{render_port}")]),
        &dir.join("render.log"),
    )?);
    wait_for_port(redis_port, "redis-server").await?;
    wait_for_port(render_port, "topograph-render").await?;
    let mut metrics_addrs = Vec::new();
    // No applier's first resync comes sooner than a resync period from here.
    let first_resync = Instant::now() + Duration::from_secs(args.resync_seconds);
    for i in 0..args.appliers {
        let metrics = format!("127.0.0.1:{}", free_port()?);
        metrics_addrs.push(metrics.clone());
        processes.push(spawn(
            &format!("applier-{i}"),
            Command::new(&applier)
                .args(["--redis", &format!("redis://127.0.0.1:{redis_port}")])
                .args(["--render", &format!("http://127.0.0.1:{render_port}")])
                .args(["--workers", &args.workers.to_string()])
                .args(queue_layout(&args))
                .args(["--resync-seconds", &args.resync_seconds.to_string()])
                .args(["--name", &format!("applier-{i}")])
                .args(["--owned-cache", &args.owned_cache.to_string()])
                .args(["--metrics-listen", &metrics])
                .arg("--management-clusters")
                .arg(&kubeconfigs),
            &dir.join(format!("applier-{i}.log")),
        )?);
    }

    // A fleet in service has its watches spread over its appliers; one just started
    // lets the first applier up take them all and shed the extra ones over the next
    // lease renewals. Measured from the spread, so a move of watches (and of the
    // caches that go with them) falls outside the measurement.
    spread_watches(&metrics_addrs, args.management_clusters).await?;

    let mut requests_before = Vec::new();
    for addr in &kube_addrs {
        requests_before.push(requests(addr).await?);
    }
    // The clock runs from the first create to the last convergence.
    let started = Instant::now();
    let mut creators = Vec::new();
    for api in &apis {
        let api = api.clone();
        let template = template.clone();
        let count = args.clusters;
        creators.push(tokio::spawn(async move {
            use futures::StreamExt;
            futures::stream::iter(0..count)
                .map(|n| {
                    let api = api.clone();
                    let mut cluster = template.clone();
                    cluster["metadata"]["name"] = json!(format!("c-{n:05}"));
                    async move { api.create(&cluster).await.map(drop) }
                })
                .buffer_unordered(16)
                .collect::<Vec<_>>()
                .await
                .into_iter()
                .collect::<Result<Vec<()>, _>>()
                .map_err(|e| e.to_string())
        }));
    }
    for creator in creators {
        creator
            .await
            .map_err(|e| format!("creating Clusters: {e}"))??;
    }
    let created = started.elapsed();
    let total = args.management_clusters * args.clusters;
    let deadline = started + Duration::from_secs(args.timeout);
    let mut polls = 0;
    loop {
        let mut done = 0;
        polls += 1;
        for (i, api) in apis.iter().enumerate() {
            // A busy server may drop a large list: counted as not done, asked again.
            // Listed in the storage version, which costs the server no conversion.
            match api
                .list("cluster.x-k8s.io/v1beta2", "Cluster", &namespace, &[])
                .await
            {
                Ok(listed) => done += listed.iter().filter(|c| converged(c)).count(),
                Err(e) => eprintln!("loadgen: listing the Clusters of mc-{i}: {e}"),
            }
        }
        if done >= total {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{done} of {total} Clusters converged within {} s",
                args.timeout
            ));
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    // Converged is not finished: each new Cluster's second reconcile (the shim Secret's
    // removal once the core controller owns its objects) may still be queued. The fleet
    // has settled when the appliers ran no reconcile for `QUIET`; everything after this
    // (reconciles, requests, CPU) counts the whole work.
    let reconciles = reconciles_run(&metrics_addrs).await?;
    let (reconciles, last_change) = until_quiet(&metrics_addrs, reconciles, deadline).await?;
    // A resync falling before the fleet was quiet is counted with it (a short
    // `--resync-seconds` against a slow build): said, so nobody reads it as the cost of
    // building the fleet.
    let resync_counted = Instant::now() >= first_resync;
    if resync_counted {
        eprintln!(
            "loadgen: the fleet was not quiet before the first resync ({} s); its reconciles are counted with the fleet's",
            args.resync_seconds
        );
    }
    let settled = last_change.max(started + Duration::from_secs_f64(seconds)) - started;
    let per_cluster = |x: f64| per(x, total as f64);
    let served = served_since(&kube_addrs, &requests_before).await?;
    // Without loadgen's own requests: the creates and the convergence polls (the
    // counters' own reads are not counted).
    let own = |verb: &str| match verb {
        "create" => total as f64,
        "list" => (polls * args.management_clusters) as f64,
        _ => 0.0,
    };
    let requests_per_cluster: serde_json::Map<String, Value> = served
        .into_iter()
        .map(|(verb, count)| {
            let count = count.as_f64().unwrap_or(0.0) - own(&verb);
            (verb, json!(per_cluster(count.max(0.0))))
        })
        .collect();
    let mut usage = serde_json::Map::new();
    let mut kube_cpu = 0.0;
    let mut kube_rss: f64 = 0.0;
    for process in &processes {
        let (cpu, rss) = process.usage();
        if process.name.starts_with("kube-") {
            kube_cpu += cpu;
            kube_rss = kube_rss.max(rss);
        } else {
            usage.insert(
                process.name.clone(),
                json!({"cpu_seconds": round(cpu), "peak_rss_mb": round(rss)}),
            );
        }
    }
    usage.insert(
        "kube".into(),
        json!({"cpu_seconds": round(kube_cpu), "peak_rss_mb_max": round(kube_rss), "processes": args.management_clusters}),
    );
    let mut line = json!({
        "clusters": total,
        "management_clusters": args.management_clusters,
        "appliers": args.appliers,
        "workers": args.workers,
        "created_seconds": round(created.as_secs_f64()),
        "seconds": round(seconds),
        "clusters_per_second": round(total as f64 / seconds),
        "settled_seconds": round(settled.as_secs_f64()),
        "settled_clusters_per_second": round(total as f64 / settled.as_secs_f64()),
        "reconciles_per_cluster": per_cluster(reconciles),
        "resync_counted": resync_counted,
        "requests_per_cluster": requests_per_cluster,
        "owned_caches": owned_caches(&metrics_addrs).await?,
        "processes": usage,
    });
    if args.resync_rounds > 0 {
        let mut rounds = Vec::new();
        for _ in 0..args.resync_rounds {
            rounds.push(
                measure_resync(&processes, &kube_addrs, &metrics_addrs, total, deadline).await?,
            );
        }
        line["resyncs"] = json!(rounds);
    }
    println!("{line}");
    drop(processes);
    if args.keep_logs.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// The requests the management clusters served since `before` (their counters then),
/// summed by verb.
async fn served_since(
    kube_addrs: &[String],
    before: &[Value],
) -> Result<serde_json::Map<String, Value>, String> {
    let mut served = serde_json::Map::new();
    for (addr, before) in kube_addrs.iter().zip(before) {
        let after = requests(addr).await?;
        for (verb, count) in after.as_object().into_iter().flatten() {
            let delta = count.as_f64().unwrap_or(0.0) - before[verb].as_f64().unwrap_or(0.0);
            let entry = served.entry(verb.clone()).or_insert(json!(0.0));
            *entry = json!(entry.as_f64().unwrap_or(0.0) + delta);
        }
    }
    Ok(served)
}

/// Waits for one resync of every Cluster of a settled fleet and measures it: per
/// reconcile, the requests the management clusters served by verb and each process's
/// CPU milliseconds (a converged Cluster's reconcile: nothing to write, all to read).
async fn measure_resync(
    processes: &[Proc],
    kube_addrs: &[String],
    metrics_addrs: &[String],
    total: usize,
    deadline: Instant,
) -> Result<Value, String> {
    let cpu = |processes: &[Proc]| -> Vec<f64> { processes.iter().map(|p| p.usage().0).collect() };
    let mut requests_before = Vec::new();
    for addr in kube_addrs {
        requests_before.push(requests(addr).await?);
    }
    let cpu_before = cpu(processes);
    let before = reconciles_run(metrics_addrs).await?;
    // The resync starts (timed from its first reconcile); every Cluster reconciled once
    // more, then nothing for QUIET.
    let started = loop {
        if Instant::now() > deadline {
            return Err("no resync of the fleet before the timeout".into());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        if reconciles_run(metrics_addrs).await? > before {
            break Instant::now();
        }
    };
    let (reconciles, last_change) =
        until_quiet(metrics_addrs, before + total as f64, deadline).await?;
    let ran = reconciles - before;
    let per_reconcile = |x: f64| per(x, ran.max(1.0));
    let served = served_since(kube_addrs, &requests_before).await?;
    let requests: serde_json::Map<String, Value> = served
        .into_iter()
        .map(|(verb, count)| (verb, json!(per_reconcile(count.as_f64().unwrap_or(0.0)))))
        .collect();
    let mut cpu_ms = serde_json::Map::new();
    let mut kube_ms = 0.0;
    for ((process, after), before) in processes.iter().zip(cpu(processes)).zip(cpu_before) {
        let ms = (after - before) * 1000.0;
        if process.name.starts_with("kube-") {
            kube_ms += ms;
        } else {
            cpu_ms.insert(process.name.clone(), json!(per_reconcile(ms)));
        }
    }
    cpu_ms.insert("kube".into(), json!(per_reconcile(kube_ms)));
    Ok(json!({
        "reconciles": ran,
        "seconds": round((last_change - started).as_secs_f64()),
        "requests_per_reconcile": requests,
        "cpu_ms_per_reconcile": cpu_ms,
    }))
}

/// How long the appliers must run no reconcile for a fleet to have settled.
const QUIET: Duration = Duration::from_secs(3);

/// Waits until the appliers ran at least `at_least` reconciles and then none for
/// [`QUIET`] (or the deadline passed): how many they ran, and when the last one was
/// counted.
async fn until_quiet(
    metrics_addrs: &[String],
    at_least: f64,
    deadline: Instant,
) -> Result<(f64, Instant), String> {
    let mut reconciles = reconciles_run(metrics_addrs).await?;
    let mut last_change = Instant::now();
    while (reconciles < at_least || last_change.elapsed() < QUIET) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = reconciles_run(metrics_addrs).await?;
        if now != reconciles {
            reconciles = now;
            last_change = Instant::now();
        }
    }
    Ok((reconciles, last_change))
}

/// The appliers' queue flags: with owned-object caches, shards by management cluster.
fn queue_layout(args: &FleetArgs) -> Vec<String> {
    let mut flags = Vec::new();
    let shards = args.redis_shards.or(args.owned_cache.then_some(16));
    if let Some(shards) = shards {
        flags.extend(["--redis-shards".to_string(), shards.to_string()]);
    }
    if args.owned_cache {
        flags.extend(["--redis-shard-by".into(), "management-cluster".into()]);
    }
    flags
}

/// Waits until every management cluster is watched and no applier watches more than
/// its share (`topograph_applier_watches_held`).
async fn spread_watches(
    metrics_addrs: &[String],
    management_clusters: usize,
) -> Result<(), String> {
    let share = management_clusters.div_ceil(metrics_addrs.len().max(1)) as f64;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let mut held = Vec::new();
        for addr in metrics_addrs {
            // Not serving yet: counted as holding nothing.
            let exposition = http_get(addr, "/metrics").await.unwrap_or_default();
            held.push(metric_sum(&exposition, "topograph_applier_watches_held"));
        }
        let total: f64 = held.iter().sum();
        if total >= management_clusters as f64 && held.iter().all(|&h| h <= share) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "watches not spread over the appliers within 120 s: {held:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Each of `metrics`, summed over the appliers (one scrape of each).
async fn appliers_sums<const N: usize>(
    metrics_addrs: &[String],
    metrics: [&str; N],
) -> Result<[f64; N], String> {
    let mut sums = [0.0; N];
    for addr in metrics_addrs {
        let exposition = http_get(addr, "/metrics").await?;
        for (sum, metric) in sums.iter_mut().zip(metrics) {
            *sum += metric_sum(&exposition, metric);
        }
    }
    Ok(sums)
}

/// How many reconciles the appliers have run (their metrics).
async fn reconciles_run(metrics_addrs: &[String]) -> Result<f64, String> {
    let [reconciles] = appliers_sums(metrics_addrs, ["topograph_applier_reconciles_total"]).await?;
    Ok(reconciles)
}

/// What the appliers' owned-object caches keep together (their gauges, refreshed every
/// 2 s): objects, and the bytes (and MB) of their compressed texts.
async fn owned_caches(metrics_addrs: &[String]) -> Result<Value, String> {
    let [objects, bytes] = appliers_sums(
        metrics_addrs,
        [
            "topograph_applier_owned_cache_objects",
            "topograph_applier_owned_cache_bytes",
        ],
    )
    .await?;
    Ok(json!({"objects": objects, "bytes": bytes, "mb": round(bytes / 1_048_576.0)}))
}

/// A management cluster's request counters (topograph-kube's `/_topograph/requests`).
async fn requests(addr: &str) -> Result<Value, String> {
    let body = http_get(addr, "/_topograph/requests").await?;
    serde_json::from_str(&body).map_err(|e| format!("{addr}: request counters: {e}"))
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `x` per `n`, to two decimals.
fn per(x: f64, n: f64) -> f64 {
    (x / n * 100.0).round() / 100.0
}
