//! The applier as a fleet, with real processes: redis-server (AOF on), the render
//! service, two in-memory management clusters (`topograph-kube`) and two
//! `topograph-applier` processes sharing one queue. Clusters converge; a killed applier,
//! a restarted Redis or a vanished management cluster lose nothing else; bursts of
//! changes coalesce.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use topograph_api::object::ObjectExt;
use topograph_management::{ManagementCluster, crds};
use topograph_tests::{
    Process, TempDir, binary, free_port, quick_start, unconverged, wait_for_port,
};

const V1BETA1: &str = "cluster.x-k8s.io/v1beta1";

fn redis_server(dir: &Path, port: u16) -> Process {
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
            "--dir",
        ])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start redis-server ({e}); install the Debian package redis-server")
        });
    let process = Process(child);
    wait_for_port(port, "redis-server");
    process
}

/// A render service replica: the process, its URL and its metrics port.
fn render_service() -> (Process, String, u16) {
    let port = free_port();
    let metrics = free_port();
    let child = Command::new(binary("topograph-render", "topograph-render"))
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let process = Process(child);
    wait_for_port(port, "topograph-render");
    wait_for_port(metrics, "topograph-render metrics");
    (process, format!("http://127.0.0.1:{port}"), metrics)
}

/// How many Render calls a render replica has answered, by its metrics.
fn renders_answered(metrics_port: u16) -> f64 {
    topograph_tests::http_get(metrics_port, "/metrics")
        .lines()
        .filter(|l| l.starts_with("topograph_render_grpc_requests_total{"))
        .filter(|l| l.contains("/topograph.render.v1.RenderService/Render\""))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// A management cluster: `topograph-kube` writing `<dir>/<name>.kubeconfig`.
fn management_cluster(dir: &Path, name: &str, extra: &[&str]) -> Process {
    topograph_tests::management_cluster(dir, name, extra).process
}

/// Reconciles counted per Cluster key, from the appliers' logs.
#[derive(Clone, Default)]
struct Reconciles(Arc<Mutex<BTreeMap<String, u64>>>);

impl Reconciles {
    fn snapshot(&self) -> BTreeMap<String, u64> {
        self.0.lock().unwrap().clone()
    }
}

fn applier(
    tag: &str,
    extra: &[&str],
    redis: &str,
    clusters: &Path,
    render: &str,
    name: &str,
    reconciles: &Reconciles,
) -> Process {
    let mut child = Command::new(binary("topograph-applier", "topograph-applier"))
        .args(["--redis", redis, "--management-clusters"])
        .arg(clusters)
        .args(["--render", render, "--workers", "4", "--name", name])
        // Defaults a test may override through `extra`.
        .args(
            [
                ("--lease-seconds", "3"),
                ("--resync-seconds", "20"),
                ("--quiet-ms", "500"),
            ]
            .into_iter()
            .filter(|(flag, _)| !extra.contains(flag))
            .flat_map(|(flag, value)| [flag, value]),
        )
        .args(extra)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(stderr) = child.stderr.take() {
        let reconciles = reconciles.clone();
        // The log stays in the temp directory for a look after a failure.
        let log_path = std::env::temp_dir().join(format!("topograph-{tag}-{name}.log"));
        std::thread::spawn(move || {
            let mut log = std::fs::File::create(log_path).ok();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(log) = log.as_mut() {
                    use std::io::Write;
                    let _ = writeln!(log, "{line}");
                }
                if !line.contains(" reconciled ") && !line.contains(" reconciled:") {
                    continue;
                }
                if let Some(key) = line.split_whitespace().find_map(|w| w.strip_prefix("key=")) {
                    *reconciles
                        .0
                        .lock()
                        .unwrap()
                        .entry(key.to_string())
                        .or_default() += 1;
                }
            }
        });
    }
    Process(child)
}

/// Loads CRDs, the quick-start class and `count` Clusters `c-<i>` (one worker pool
/// each, to keep the fleet light).
async fn load(kubeconfig: &Path, count: usize) -> ManagementCluster {
    let api = ManagementCluster::from_kubeconfig(kubeconfig)
        .await
        .unwrap();
    let class = quick_start("clusterclass.yaml", "default");
    let mut objects = crds::cluster_api();
    objects.extend(crds::for_objects(&class));
    objects.extend(class);
    for object in &objects {
        api.create(object).await.unwrap();
    }
    let template = quick_start("cluster.yaml", "default").remove(0);
    for i in 0..count {
        let mut cluster = template.clone();
        cluster["metadata"]["name"] = json!(format!("c-{i}"));
        cluster["spec"]["topology"]["workers"]["machineDeployments"] =
            json!([{"class": "default-worker", "name": "md-0", "replicas": 1}]);
        api.create(&cluster).await.unwrap();
    }
    api
}

/// How many Clusters a management cluster has, and those not converged yet, described.
async fn not_converged(api: &ManagementCluster) -> (usize, Vec<String>) {
    match api
        .list("cluster.x-k8s.io/v1beta1", "Cluster", "default", &[])
        .await
    {
        Ok(clusters) => (
            clusters.len(),
            clusters.iter().filter_map(unconverged).collect(),
        ),
        Err(e) => (0, vec![format!("cannot list Clusters: {e}")]),
    }
}

async fn wait_converged(apis: &[&ManagementCluster], want: usize, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let mut listed = 0;
        let mut left = Vec::new();
        for api in apis {
            let (count, unconverged) = not_converged(api).await;
            listed += count;
            left.extend(unconverged);
        }
        if listed == want && left.is_empty() {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "{} of {want} Clusters converged after {limit:?}; not converged: {}",
            listed - left.len().min(listed),
            left.iter().take(5).cloned().collect::<Vec<_>>().join("; ")
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The fleet tests each start seven processes; run them one at a time so their timings
/// mean something on a two-core machine.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Fleet {
    tag: String,
    _redis: Option<Process>,
    redis_port: u16,
    redis_dir: TempDir,
    _render: Process,
    render: String,
    render_metrics: u16,
    clusters_dir: TempDir,
    kube_a: Option<Process>,
    _kube_b: Process,
    api_a: ManagementCluster,
    api_b: ManagementCluster,
    reconciles: Reconciles,
}

impl Fleet {
    async fn start(tag: &str, per_cluster: usize) -> Fleet {
        Fleet::start_with(tag, per_cluster, &[]).await
    }

    /// [`Fleet::start`] with extra `topograph-kube` flags for both management clusters.
    async fn start_with(tag: &str, per_cluster: usize, kube_args: &[&str]) -> Fleet {
        let redis_dir = TempDir::new(&format!("{tag}-redis"));
        let redis_port = free_port();
        let redis = redis_server(&redis_dir.0, redis_port);
        let (render_process, render, render_metrics) = render_service();
        let clusters_dir = TempDir::new(&format!("{tag}-clusters"));
        let kube_a = management_cluster(&clusters_dir.0, "mgmt-a", kube_args);
        let kube_b = management_cluster(&clusters_dir.0, "mgmt-b", kube_args);
        let api_a = load(&clusters_dir.0.join("mgmt-a.kubeconfig"), per_cluster).await;
        let api_b = load(&clusters_dir.0.join("mgmt-b.kubeconfig"), per_cluster).await;
        Fleet {
            tag: tag.to_string(),
            _redis: Some(redis),
            redis_port,
            redis_dir,
            _render: render_process,
            render,
            render_metrics,
            clusters_dir,
            kube_a: Some(kube_a),
            _kube_b: kube_b,
            api_a,
            api_b,
            reconciles: Reconciles::default(),
        }
    }

    fn redis_url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.redis_port)
    }

    fn applier(&self, name: &str) -> Process {
        self.applier_with(name, &[])
    }

    fn applier_with(&self, name: &str, extra: &[&str]) -> Process {
        applier(
            &self.tag,
            extra,
            &self.redis_url(),
            &self.clusters_dir.0,
            &self.render,
            name,
            &self.reconciles,
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_clusters_converge_with_one_and_with_two_appliers() {
    let _serial = SERIAL.lock().await;
    let fleet = Fleet::start("fleet-converge", 100).await;
    let one = fleet.applier("applier-1");
    let elapsed =
        wait_converged(&[&fleet.api_a, &fleet.api_b], 200, Duration::from_secs(180)).await;
    println!(
        "1 applier: 200 Clusters converged in {:.1} s ({:.1} Clusters/s)",
        elapsed.as_secs_f64(),
        200.0 / elapsed.as_secs_f64()
    );
    drop(one);

    let fleet = Fleet::start("fleet-converge-2", 100).await;
    let _a = fleet.applier("applier-1");
    let _b = fleet.applier("applier-2");
    let elapsed =
        wait_converged(&[&fleet.api_a, &fleet.api_b], 200, Duration::from_secs(180)).await;
    println!(
        "2 appliers: 200 Clusters converged in {:.1} s ({:.1} Clusters/s)",
        elapsed.as_secs_f64(),
        200.0 / elapsed.as_secs_f64()
    );
}

/// Rollouts across a fleet (decision 0030): two management clusters, two appliers. Each
/// management cluster's rollout is driven by whichever applier holds its watch lease,
/// and a class change reaches every Cluster of both in the policy's waves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_changes_roll_out_in_every_management_cluster() {
    let _serial = SERIAL.lock().await;
    // Providers simulated: a moved Cluster passes its health gate once its machines
    // are ready.
    let fleet = Fleet::start_with(
        "fleet-rollout",
        20,
        &["--simulate-providers", "--provider-delay-ms", "200"],
    )
    .await;
    let policy = json!({"apiVersion": "topograph.io/v1alpha1", "kind": "RolloutPolicy",
        "metadata": {"name": "quick-start", "namespace": "default"},
        "spec": {"waves": [{"name": "half", "percent": 50}, {"name": "all", "percent": 100}],
                 "maxRolling": 4}});
    for api in [&fleet.api_a, &fleet.api_b] {
        for crd in crds::topograph() {
            api.create(&crd).await.unwrap();
        }
        api.create(&policy).await.unwrap();
    }
    let _a = fleet.applier("applier-1");
    let _b = fleet.applier("applier-2");
    wait_converged(&[&fleet.api_a, &fleet.api_b], 40, Duration::from_secs(180)).await;
    let status = |api: &ManagementCluster| {
        let api = api.clone();
        async move {
            api.get(
                "topograph.io/v1alpha1",
                "RolloutPolicy",
                "default",
                "quick-start",
            )
            .await
            .ok()
            .flatten()
            .map(|p| p["status"].clone())
            .unwrap_or_default()
        }
    };
    let mut first = Vec::new();
    for api in [&fleet.api_a, &fleet.api_b] {
        let started = Instant::now();
        loop {
            let s = status(api).await;
            if let Some(stable) = s["stableRevision"].as_str() {
                first.push(stable.to_string());
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no stable revision: {s}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let mut class = api
            .get(
                "cluster.x-k8s.io/v1beta1",
                "ClusterClass",
                "default",
                "quick-start",
            )
            .await
            .unwrap()
            .unwrap();
        class["spec"]["workers"]["machineDeployments"][0]["template"]["metadata"] =
            json!({"labels": {"rollout": "two"}});
        api.replace(&class).await.unwrap();
    }
    for (api, first) in [&fleet.api_a, &fleet.api_b].into_iter().zip(&first) {
        let started = Instant::now();
        loop {
            let s = status(api).await;
            let done = s["stableRevision"].as_str().is_some_and(|r| r != first)
                && s.get("targetRevision").is_none();
            let mds = api
                .list(
                    "cluster.x-k8s.io/v1beta1",
                    "MachineDeployment",
                    "default",
                    &[],
                )
                .await
                .unwrap_or_default();
            if done
                && !mds.is_empty()
                && mds
                    .iter()
                    .all(|m| m["metadata"]["labels"]["rollout"] == "two")
            {
                let waves: Vec<usize> = s["waves"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|w| w["clusters"].as_array().map_or(0, Vec::len))
                    .collect();
                assert_eq!(waves, [10, 10], "{s:#}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(240),
                "the rollout did not complete: {s:#}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// Scaling the render service out works without a load balancer in front: an applier
/// given both replicas (the list form of `--render`; `dns:///name:port` resolves to the
/// same set behind a headless Service) sends renders to both, and when one dies the
/// rest of the work goes to the other with no Cluster left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_render_replicas_share_the_renders_and_either_may_die() {
    let _serial = SERIAL.lock().await;
    let mut fleet = Fleet::start("fleet-render-replicas", 50).await;
    let (second, second_url, second_metrics) = render_service();
    let first_metrics = fleet.render_metrics;
    fleet.render = format!("{},{second_url}", fleet.render);
    let _applier = fleet.applier("applier-1");
    wait_converged(&[&fleet.api_a, &fleet.api_b], 100, Duration::from_secs(120)).await;
    let (first_count, second_count) = (
        renders_answered(first_metrics),
        renders_answered(second_metrics),
    );
    println!("renders answered: first replica {first_count}, second {second_count}");
    // Power-of-two-choices balancing by load: both must take a real share.
    for (replica, count) in [("first", first_count), ("second", second_count)] {
        assert!(
            count >= 10.0,
            "the {replica} replica answered {count} renders (first {first_count}, second {second_count})"
        );
    }

    // One replica dies; a change to every Cluster is then rendered by the other.
    drop(second);
    for api in [&fleet.api_a, &fleet.api_b] {
        for i in 0..50 {
            let patch = json!({"spec": {"topology": {"workers": {"machineDeployments": [
                {"class": "default-worker", "name": "md-0", "replicas": 2}
            ]}}}});
            let cluster = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
                "metadata": {"name": format!("c-{i}"), "namespace": "default"}});
            api.merge_patch(&cluster, &patch).await.unwrap();
        }
    }
    wait_converged(&[&fleet.api_a, &fleet.api_b], 100, Duration::from_secs(120)).await;
    let after = renders_answered(first_metrics);
    assert!(
        after >= first_count + 100.0,
        "the surviving replica answered {} renders after the other died, fewer than the 100 changed Clusters",
        after - first_count
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_applier_and_a_restarted_redis_leave_no_cluster_behind() {
    let _serial = SERIAL.lock().await;
    // A reconcile killed halfway leaves a control plane without its MachineDeployments;
    // those are created only once the control plane reports a stable status (Cluster
    // API's rule), so this fleet needs providers to play their part.
    let mut fleet = Fleet::start_with(
        "fleet-chaos",
        100,
        &["--simulate-providers", "--provider-delay-ms", "200"],
    )
    .await;
    let mut first = fleet.applier("applier-1");
    let _second = fleet.applier("applier-2");
    // Let work start, then kill one applier without warning (SIGKILL).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    first.0.kill().unwrap();
    let _ = first.0.wait();
    // Restart Redis on the same port and directory: the AOF brings the queue back.
    fleet._redis = None;
    tokio::time::sleep(Duration::from_millis(300)).await;
    fleet._redis = Some(redis_server(&fleet.redis_dir.0, fleet.redis_port));
    wait_converged(&[&fleet.api_a, &fleet.api_b], 200, Duration::from_secs(180)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_changes_cost_at_most_two_reconciles_per_cluster() {
    let _serial = SERIAL.lock().await;
    let fleet = Fleet::start("fleet-burst", 50).await;
    // A burst is queued once it has been quiet for 2 s, or after 60 s of constant
    // changes (the writers below take several seconds in a debug build; on a loaded
    // machine one Cluster's changes can pause for longer than 500 ms). No resync
    // during the test: it would add a reconcile to every Cluster.
    let burst = [
        "--max-delay-ms",
        "60000",
        "--quiet-ms",
        "2000",
        "--resync-seconds",
        "600",
    ];
    let _a = fleet.applier_with("applier-1", &burst);
    let _b = fleet.applier_with("applier-2", &burst);
    wait_converged(&[&fleet.api_a, &fleet.api_b], 100, Duration::from_secs(120)).await;
    // Let the reconciles caused by the appliers' own writes settle: no reconcile for 3 s.
    let mut before = fleet.reconciles.snapshot();
    loop {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = fleet.reconciles.snapshot();
        if now == before {
            break;
        }
        before = now;
    }

    // 100 changes to each of the 100 Clusters, from 20 concurrent writers.
    let mut clusters = Vec::new();
    for (api, mc) in [(&fleet.api_a, "mgmt-a"), (&fleet.api_b, "mgmt-b")] {
        for c in api
            .list("cluster.x-k8s.io/v1beta1", "Cluster", "default", &[])
            .await
            .unwrap()
        {
            clusters.push((mc, c));
        }
    }
    assert_eq!(clusters.len(), 100);
    let kubeconfigs = [
        fleet.clusters_dir.0.join("mgmt-a.kubeconfig"),
        fleet.clusters_dir.0.join("mgmt-b.kubeconfig"),
    ];
    let clusters = Arc::new(clusters);
    let mut writers = Vec::new();
    for w in 0..20usize {
        let clusters = clusters.clone();
        let kubeconfigs = kubeconfigs.clone();
        writers.push(tokio::spawn(async move {
            let a = ManagementCluster::from_kubeconfig(&kubeconfigs[0]).await.unwrap();
            let b = ManagementCluster::from_kubeconfig(&kubeconfigs[1]).await.unwrap();
            for round in 0..100usize {
                for (i, (mc, cluster)) in clusters.iter().enumerate() {
                    if i % 20 != w {
                        continue;
                    }
                    let api = if *mc == "mgmt-a" { &a } else { &b };
                    let patch = json!({"metadata": {"annotations": {"example.com/touched": round.to_string()}}});
                    api.merge_patch(cluster, &patch).await.unwrap();
                }
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    // The quiet period, then every reconcile done: nothing new for 3 s.
    let settle = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut after = fleet.reconciles.snapshot();
    loop {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = fleet.reconciles.snapshot();
        if now == after || settle.elapsed() > Duration::from_secs(60) {
            break;
        }
        after = now;
    }
    let mut total = 0;
    for (mc, cluster) in clusters.iter() {
        let key = format!("{mc}/default/{}", cluster.name());
        let n = after.get(&key).copied().unwrap_or(0) - before.get(&key).copied().unwrap_or(0);
        assert!(n <= 2, "{key}: {n} reconciles for 100 changes");
        total += n;
    }
    assert!(
        total >= 100,
        "every Cluster was reconciled after its changes ({total})"
    );
    println!("10,000 changes to 100 Clusters: {total} reconciles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_management_cluster_that_goes_away_stops_nothing_else() {
    let _serial = SERIAL.lock().await;
    let mut fleet = Fleet::start("fleet-vanish", 50).await;
    // mgmt-a goes away before any work is done.
    fleet.kube_a = None;
    let _a = fleet.applier("applier-1");
    let _b = fleet.applier("applier-2");
    wait_converged(&[&fleet.api_b], 50, Duration::from_secs(120)).await;
}

/// The reconcile counts once no reconcile has run for 3 s.
async fn quiet(reconciles: &Reconciles) -> BTreeMap<String, u64> {
    let mut before = reconciles.snapshot();
    loop {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = reconciles.snapshot();
        if now == before {
            return now;
        }
        before = now;
    }
}

/// Once a Cluster has settled, providers' status reports on its MachineDeployments and
/// control plane cost no reconcile; an edit of a MachineDeployment's spec does, and is
/// put right (decision 0032).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_cluster_is_not_reconciled_for_its_objects_status_reports() {
    settled_clusters_react_only_to_edits("fleet-reports", &[]).await;
}

/// The same with the applier reading a Cluster's own objects from its watch-fed caches
/// (decision 0036): the edit is still seen and put right, not read out of date.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_owned_caches_a_settled_cluster_still_reacts_to_edits_only() {
    settled_clusters_react_only_to_edits("fleet-reports-cached", &["--owned-cache", "true"]).await;
}

async fn settled_clusters_react_only_to_edits(tag: &str, applier_args: &[&str]) {
    let _serial = SERIAL.lock().await;
    let providers = ["--simulate-providers", "--provider-delay-ms", "50"];
    let fleet = Fleet::start_with(tag, 5, &providers).await;
    let mut args = vec!["--resync-seconds", "600"];
    args.extend_from_slice(applier_args);
    let _a = fleet.applier_with("applier-1", &args);
    let apis = [&fleet.api_a, &fleet.api_b];
    wait_converged(&apis, 10, Duration::from_secs(120)).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut phases = Vec::new();
        for api in apis {
            for c in api.list(V1BETA1, "Cluster", "default", &[]).await.unwrap() {
                phases.push(c["status"]["phase"].clone());
            }
        }
        if phases.iter().all(|p| p == "Provisioned") {
            break;
        }
        assert!(Instant::now() < deadline, "not provisioned: {phases:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let before = quiet(&fleet.reconciles).await;

    let report = json!({"status": {"conditions": [{"type": "ExampleReport", "status": "True",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    let mut reported = 0;
    for api in apis {
        let mds = api
            .list(V1BETA1, "MachineDeployment", "default", &[])
            .await
            .unwrap();
        let cps = api
            .list(
                "controlplane.cluster.x-k8s.io/v1beta1",
                "KubeadmControlPlane",
                "default",
                &[],
            )
            .await
            .unwrap();
        for object in mds.iter().chain(&cps) {
            api.merge_patch_status(object, &report).await.unwrap();
            reported += 1;
        }
    }
    assert_eq!(reported, 20);
    let after = quiet(&fleet.reconciles).await;
    assert_eq!(after, before, "status reports cost reconciles");

    // Someone else scales a MachineDeployment: its Cluster is reconciled at once and the
    // topology's replicas put back.
    let md = fleet
        .api_a
        .list(V1BETA1, "MachineDeployment", "default", &[])
        .await
        .unwrap()
        .remove(0);
    let cluster = md["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"]
        .as_str()
        .unwrap()
        .to_string();
    fleet
        .api_a
        .merge_patch(&md, &json!({"spec": {"replicas": 7}}))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = fleet
            .api_a
            .get(V1BETA1, "MachineDeployment", "default", md.name())
            .await
            .unwrap()
            .unwrap();
        if now["spec"]["replicas"] == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "replicas not put back: {now}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let key = format!("mgmt-a/default/{cluster}");
    let edited = quiet(&fleet.reconciles).await;
    assert!(
        edited.get(&key) > after.get(&key),
        "{key} reconciled for the edit"
    );
}
