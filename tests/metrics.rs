//! Every service's Prometheus metrics, end to end: a fleet of real processes (redis,
//! `topograph-kube` with simulated providers, render, applier, gateway) is scraped
//! before and after a Cluster is applied through the gateway, and every metric the
//! dashboards use (`k8s/dashboards/metric-names.txt`) must be exposed and have moved:
//! counters up, histograms with new samples, gauges present. Stopping the management
//! cluster at the end must show up as management-cluster errors.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use topograph_management::{ManagementCluster, crds};
use topograph_tests::{
    TempDir, admin_tenants, apply_through_gateway, binary, free_port, gateway_command, http_get,
    management_cluster, quick_start, redis_without_persistence, root, small_cluster, spawn_gateway,
    spawn_logged, wait_for_port,
};

const MC: &str = "mgmt-a";
const TOKEN: &str = "token-of-ops";
const NAMESPACE: &str = "team-a";

/// One scrape: the value of every sample, by metric name and label set.
type Scrape = BTreeMap<String, BTreeMap<String, f64>>;

/// Parses the text exposition (`name{labels} value` lines; comments skipped).
fn parse(text: &str) -> Scrape {
    let mut scrape = Scrape::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (series, value) = match line.rsplit_once(' ') {
            Some(split) => split,
            None => continue,
        };
        let (name, labels) = match series.find('{') {
            Some(i) => (&series[..i], &series[i..]),
            None => (series, ""),
        };
        let value: f64 = value.parse().unwrap_or(f64::NAN);
        scrape
            .entry(name.to_string())
            .or_default()
            .insert(labels.to_string(), value);
    }
    scrape
}

fn scrape(port: u16) -> Scrape {
    parse(&http_get(port, "/metrics"))
}

/// The sum of `name`'s samples whose labels contain every one of `having`.
fn sum(scrape: &Scrape, name: &str, having: &[&str]) -> f64 {
    scrape.get(name).map_or(0.0, |series| {
        series
            .iter()
            .filter(|(labels, _)| having.iter().all(|h| labels.contains(h)))
            .map(|(_, v)| v)
            .sum()
    })
}

/// The metric names the dashboards may use.
fn dashboard_metric_names() -> Vec<String> {
    let path = root().join("k8s/dashboards/metric-names.txt");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Waits up to `within` for `check` on fresh scrapes of `port`; the last scrape.
fn wait_until(port: u16, within: Duration, what: &str, check: impl Fn(&Scrape) -> bool) -> Scrape {
    let start = Instant::now();
    loop {
        let s = scrape(port);
        if check(&s) {
            return s;
        }
        assert!(
            start.elapsed() < within,
            "{what}: not within {within:?}; last scrape: {s:#?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_service_exposes_its_metrics_and_they_move() {
    let dir = TempDir::new("metrics-e2e");
    let clusters_dir = dir.0.join("clusters");
    std::fs::create_dir_all(&clusters_dir).unwrap();
    let log = |name: &str| std::env::temp_dir().join(format!("topograph-metrics-e2e-{name}.log"));
    let mut processes = Vec::new();

    let redis_port = free_port();
    processes.push(redis_without_persistence(redis_port));

    let started = management_cluster(
        &clusters_dir,
        MC,
        &["--simulate-providers", "--provider-delay-ms", "200"],
    );
    let kubeconfig = started.kubeconfig.clone();
    // Kept apart: stopping it later is how management-cluster errors are provoked.
    let mut kube = Some(started.process);
    let api = ManagementCluster::from_kubeconfig_yaml(&kubeconfig)
        .await
        .unwrap();
    let mut seed = crds::cluster_api();
    seed.extend(crds::topograph());
    seed.extend(crds::for_objects(&quick_start(
        "clusterclass.yaml",
        NAMESPACE,
    )));
    seed.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}));
    for object in &seed {
        api.create(object).await.unwrap();
    }

    let render_port = free_port();
    let render_metrics = free_port();
    processes.push(spawn_logged(
        Command::new(binary("topograph-render", "topograph-render"))
            .args(["--listen", &format!("127.0.0.1:{render_port}")])
            .args(["--metrics-listen", &format!("127.0.0.1:{render_metrics}")]),
        &log("render"),
    ));
    wait_for_port(redis_port, "redis-server");
    wait_for_port(render_port, "topograph-render");
    let redis = format!("redis://127.0.0.1:{redis_port}");
    let render = format!("http://127.0.0.1:{render_port}");

    let applier_metrics = free_port();
    processes.push(spawn_logged(
        Command::new(binary("topograph-applier", "topograph-applier"))
            .args(["--redis", &redis, "--render", &render, "--workers", "2"])
            .args(["--quiet-ms", "100", "--lease-seconds", "5"])
            .args(["--metrics-listen", &format!("127.0.0.1:{applier_metrics}")])
            .arg("--management-clusters")
            .arg(&clusters_dir),
        &log("applier"),
    ));

    let tenants = admin_tenants(&dir.0, TOKEN);
    let gateway_metrics = free_port();
    let (gateway, addr) = spawn_gateway(
        gateway_command()
            .args(["--render", &render, "--redis", &redis])
            .arg("--management-clusters")
            .arg(&clusters_dir)
            .arg("--tenants")
            .arg(&tenants)
            .args(["--metrics-listen", &format!("127.0.0.1:{gateway_metrics}")]),
        &log("gateway"),
    );
    processes.push(gateway);
    wait_for_port(applier_metrics, "the applier's metrics");
    wait_for_port(render_metrics, "the render service's metrics");
    wait_for_port(gateway_metrics, "the gateway's metrics");

    let render_before = scrape(render_metrics);
    let applier_before = scrape(applier_metrics);
    let gateway_before = scrape(gateway_metrics);

    // The quick-start class and one small Cluster, through the gateway.
    let mut objects = quick_start("clusterclass.yaml", NAMESPACE);
    objects.push(small_cluster("metrics", NAMESPACE));
    apply_through_gateway(&addr, TOKEN, MC, &objects).await;

    // The applier reconciles it: reconciles, writes by kind, engine time by class and
    // watcher lag all move.
    let applier_after = tokio::task::spawn_blocking(move || {
        wait_until(
            applier_metrics,
            Duration::from_secs(60),
            "the Cluster reconciled with writes",
            |s| {
                sum(s, "topograph_applier_reconciles_total", &["result=\"ok\""]) >= 1.0
                    && sum(
                        s,
                        "topograph_applier_object_writes_total",
                        &["kind=\"MachineDeployment\"", "verb=\"apply\""],
                    ) >= 1.0
                    && sum(s, "topograph_applier_watch_lag_seconds_count", &[]) >= 1.0
            },
        )
    })
    .await
    .unwrap();
    let render_after = scrape(render_metrics);
    let gateway_after = scrape(gateway_metrics);

    let moved = |before: &Scrape, after: &Scrape, name: &str, having: &[&str]| {
        let (b, a) = (sum(before, name, having), sum(after, name, having));
        assert!(a > b, "{name}{having:?} did not increase: {b} -> {a}");
    };
    moved(
        &applier_before,
        &applier_after,
        "topograph_applier_reconciles_total",
        &[],
    );
    moved(
        &applier_before,
        &applier_after,
        "topograph_applier_reconcile_duration_seconds_count",
        &[],
    );
    moved(
        &applier_before,
        &applier_after,
        "topograph_applier_writes_total",
        &[],
    );
    moved(
        &applier_before,
        &applier_after,
        "topograph_applier_object_writes_total",
        &["management_cluster=\"mgmt-a\"", "kind=\"Cluster\""],
    );
    moved(
        &applier_before,
        &applier_after,
        "topograph_applier_render_duration_seconds_count",
        &["class=\"quick-start\"", "result=\"ok\""],
    );
    moved(
        &applier_before,
        &applier_after,
        "topograph_applier_watch_events_total",
        &["management_cluster=\"mgmt-a\""],
    );
    moved(
        &applier_before,
        &applier_after,
        "topograph_applier_watch_lag_seconds_count",
        &["management_cluster=\"mgmt-a\""],
    );
    moved(
        &gateway_before,
        &gateway_after,
        "topograph_gateway_grpc_requests_total",
        &[
            "method=\"/topograph.gateway.v1.GatewayService/Apply\"",
            "code=\"OK\"",
        ],
    );
    moved(
        &gateway_before,
        &gateway_after,
        "topograph_gateway_grpc_request_duration_seconds_count",
        &["method=\"/topograph.gateway.v1.GatewayService/Apply\""],
    );
    // The render service times its engine runs by class.
    moved(
        &render_before,
        &render_after,
        "topograph_render_engine_duration_seconds_count",
        &["class=\"quick-start\"", "result=\"ok\""],
    );
    // Apply's admission and the applier's renders both go through the render service.
    for name in [
        "topograph_render_grpc_requests_total",
        "topograph_render_grpc_request_duration_seconds_count",
    ] {
        moved(&render_before, &render_after, name, &[]);
    }
    for gauge in [
        "topograph_applier_queue_depth",
        "topograph_applier_queue_oldest_job_age_seconds",
        "topograph_applier_queue_in_flight",
    ] {
        assert!(
            applier_after.contains_key(gauge),
            "{gauge} missing: {applier_after:#?}"
        );
    }

    // A class change rolled out under a policy: the rollout metrics move.
    let policy = json!({"apiVersion": "topograph.io/v1alpha1", "kind": "RolloutPolicy",
        "metadata": {"name": "quick-start", "namespace": NAMESPACE},
        "spec": {"waves": [{"name": "all", "percent": 100}]}});
    apply_through_gateway(&addr, TOKEN, MC, &[policy]).await;
    tokio::task::spawn_blocking(move || {
        wait_until(
            applier_metrics,
            Duration::from_secs(60),
            "the policy's stable revision",
            |s| sum(s, "topograph_rollout_phase", &["phase=\"Stable\""]) >= 1.0,
        )
    })
    .await
    .unwrap();
    let mut changed = quick_start("clusterclass.yaml", NAMESPACE);
    for object in &mut changed {
        if object["kind"] == "ClusterClass" {
            object["spec"]["workers"]["machineDeployments"][0]["template"]["metadata"] =
                json!({"labels": {"rollout": "two"}});
        }
    }
    apply_through_gateway(&addr, TOKEN, MC, &changed).await;
    let rolled = tokio::task::spawn_blocking(move || {
        wait_until(
            applier_metrics,
            Duration::from_secs(120),
            "the class change rolled out",
            |s| {
                sum(
                    s,
                    "topograph_rollout_events_total",
                    &["reason=\"RolloutComplete\""],
                ) >= 1.0
                    && sum(
                        s,
                        "topograph_rollout_pins_total",
                        &["policy=\"team-a/quick-start\""],
                    ) >= 1.0
                    && sum(s, "topograph_rollout_revisions_total", &[]) >= 2.0
            },
        )
    })
    .await
    .unwrap();
    assert_eq!(
        sum(&rolled, "topograph_rollout_phase", &["phase=\"Stable\""]),
        1.0,
        "{:?}",
        rolled.get("topograph_rollout_phase")
    );

    // The management cluster goes away: the watches break and are counted.
    drop(kube.take());
    let applier_last = tokio::task::spawn_blocking(move || {
        wait_until(
            applier_metrics,
            Duration::from_secs(30),
            "management-cluster errors after the API server stopped",
            |s| {
                sum(
                    s,
                    "topograph_applier_management_cluster_errors_total",
                    &["management_cluster=\"mgmt-a\"", "kind=\"watch\""],
                ) >= 1.0
            },
        )
    })
    .await
    .unwrap();

    // Every name the dashboards may use is served by some service.
    let mut served: Vec<&String> = Vec::new();
    for s in [&render_after, &gateway_after, &applier_last] {
        served.extend(s.keys());
    }
    let missing: Vec<String> = dashboard_metric_names()
        .into_iter()
        .filter(|name| !served.contains(&name))
        .collect();
    assert!(
        missing.is_empty(),
        "k8s/dashboards/metric-names.txt names metrics no service exposes: {missing:?}\nserved: {served:?}"
    );
    drop(processes);
}
