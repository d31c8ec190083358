//! The load generator works against the real services, so the numbers in the notes can
//! be re-measured: `loadgen render` against `topograph-render`, and `loadgen gateway`
//! (apply, get, list) against `topograph up`. Each run is short; what is checked is
//! that requests were answered and none failed, not how fast (that is for release
//! builds on a quiet machine, not for tests).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;
use topograph_tests::{Process, binary, free_port, root, wait_for_port};

const TOKEN: &str = "loadgen-token";

/// Runs `loadgen` with `args`; its one JSON line.
fn loadgen(args: &[&str]) -> Value {
    let output = Command::new(binary("loadgen", "loadgen"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("starting loadgen: {e}"));
    assert!(
        output.status.success(),
        "loadgen {args:?}: exit {:?}: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("loadgen {args:?} printed {stdout:?}: {e}"))
}

/// Every request answered, none failed.
fn answered(report: &Value, op: &str) {
    assert_eq!(report["op"], op, "{report}");
    assert!(report["requests"].as_u64().unwrap_or(0) > 0, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    for p in ["p50_ms", "p90_ms", "p99_ms"] {
        assert!(report[p].as_f64().is_some_and(|v| v > 0.0), "{report}");
    }
}

#[test]
fn loadgen_drives_the_render_service_and_the_gateway() {
    let port = free_port();
    let render = Process(
        Command::new(binary("topograph-render", "topograph-render"))
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting topograph-render: {e}")),
    );
    wait_for_port(port, "topograph-render");
    let files = [
        "-f",
        "examples/quick-start/clusterclass.yaml",
        "-f",
        "examples/quick-start/cluster.yaml",
    ];
    let addr = format!("http://127.0.0.1:{port}");
    let mut args = vec!["render", "--addr", &addr, "-c", "2", "-d", "0.5"];
    args.extend(files);
    answered(&loadgen(&args), "render");
    drop(render);

    let port = free_port();
    let mut child = Command::new(binary("topograph-cli", "topograph"))
        .args([
            "up",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--token",
            TOKEN,
        ])
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting topograph up: {e}"));
    let stdout = child.stdout.take().expect("piped stdout");
    let _up = Process(child);
    // The reader stays open to the end: `up` must never write into a closed pipe.
    let mut lines = BufReader::new(stdout).lines();
    let listening = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|line| line.starts_with("gateway listening on "));
    assert!(listening, "topograph up never said it listens");

    let addr = format!("http://127.0.0.1:{port}");
    for op in ["apply", "get", "list"] {
        let mut args = vec![
            "gateway", "--addr", &addr, "--token", TOKEN, "--op", op, "-c", "2", "-d", "0.5",
        ];
        args.extend(files);
        answered(&loadgen(&args), op);
    }
    drop(lines);
}

/// `loadgen fleet` starts a whole fleet (redis-server, topograph-kube servers with
/// simulated providers, the render service, appliers), creates the Clusters and waits
/// for all of them: a small one here, with every field of the report in its line.
#[test]
fn loadgen_fleet_starts_a_fleet_and_reports_its_convergence() {
    let report = loadgen(&[
        "fleet",
        "-f",
        "examples/quick-start/clusterclass.yaml",
        "-f",
        "examples/quick-start/cluster.yaml",
        "--management-clusters",
        "2",
        "--clusters",
        "3",
        "--appliers",
        "2",
        "--workers",
        "2",
        "--timeout",
        "120",
    ]);
    assert_eq!(report["clusters"], 6, "{report}");
    assert!(
        report["clusters_per_second"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    // Settled (no reconcile for a while) comes after converged.
    assert!(
        report["settled_seconds"].as_f64().unwrap() >= report["seconds"].as_f64().unwrap(),
        "{report}"
    );
    for process in ["redis", "render", "applier-0", "applier-1"] {
        assert!(
            report["processes"][process]["peak_rss_mb"]
                .as_f64()
                .unwrap()
                > 0.0,
            "{report}"
        );
    }
    assert_eq!(report["processes"]["kube"]["processes"], 2, "{report}");
    // Every Cluster took at least one reconcile, which created its topology's objects
    // (loadgen's own creates of the Clusters are not counted).
    assert!(
        report["reconciles_per_cluster"].as_f64().unwrap() >= 1.0,
        "{report}"
    );
    assert!(
        report["requests_per_cluster"]["create"].as_f64().unwrap() >= 5.0,
        "{report}"
    );
    assert!(
        report["requests_per_cluster"]["get"].as_f64().unwrap() > 0.0,
        "{report}"
    );
}

/// A fleet of two appliers, each watching one of two management clusters and reading
/// their Clusters' own objects from its watch-fed caches (decision 0036), the queue
/// handing each the Clusters it watches (decision 0037): its reconciles read little
/// live, converged ones nothing of their own, where without the caches each reconcile
/// reads ten objects and lists five kinds.
#[test]
fn loadgen_fleet_with_owned_caches_reads_converged_clusters_from_them() {
    let run = |owned_cache: bool| {
        let mut args = vec![
            "fleet",
            "-f",
            "examples/quick-start/clusterclass.yaml",
            "-f",
            "examples/quick-start/cluster.yaml",
            "--management-clusters",
            "2",
            "--clusters",
            "20",
            "--appliers",
            "2",
            "--workers",
            "2",
            // Past the watches' spread and the fleet's settling (≈9 s with the quiet
            // wait, in a debug build), so the first resync is measured on its own.
            "--resync-seconds",
            "20",
            "--resync-rounds",
            "1",
            "--timeout",
            "120",
        ];
        if owned_cache {
            args.push("--owned-cache");
        }
        loadgen(&args)
    };
    let live = run(false);
    let cached = run(true);
    let gets = |report: &Value| report["requests_per_cluster"]["get"].as_f64().unwrap();
    let lists = |report: &Value| report["requests_per_cluster"]["list"].as_f64().unwrap();
    assert!(gets(&live) > 8.0 && lists(&live) > 8.0, "{live}");
    // What is left is what the first reconciles read while each kind's watch was
    // listing, and the management cluster's own reads (its class, templates and rollout
    // policies), shared by its Clusters.
    assert!(
        gets(&cached) < gets(&live) / 2.0 && lists(&cached) < lists(&live) / 2.0,
        "{live}\n{cached}"
    );
    // The caches hold every Cluster's own objects (each of the 40 Clusters has more
    // than five: itself, its infrastructure cluster, control plane, templates,
    // MachineDeployments...); live, nothing is kept.
    let cached_objects = |report: &Value| report["owned_caches"]["objects"].as_f64().unwrap();
    assert!(cached_objects(&cached) > 200.0, "{cached}");
    assert!(
        cached["owned_caches"]["bytes"].as_f64().unwrap() > 0.0,
        "{cached}"
    );
    assert_eq!(cached_objects(&live), 0.0, "{live}");
    // The resync: converged Clusters, read from the caches.
    let resync = |report: &Value, verb: &str| {
        report["resyncs"][0]["requests_per_reconcile"][verb]
            .as_f64()
            .unwrap()
    };
    assert!(resync(&live, "get") >= 10.0, "{live}");
    assert!(
        resync(&cached, "get") < 1.0 && resync(&cached, "list") < 1.0,
        "{cached}"
    );
    // The caches cost no reconcile: a new Cluster takes two either way. (On a machine
    // so slow that a resync fell inside the fleet's settling, loadgen says so, and that
    // resync counts up to one more per Cluster.)
    let reconciles = |report: &Value| report["reconciles_per_cluster"].as_f64().unwrap();
    let counted = |report: &Value| report["resync_counted"].as_bool().unwrap();
    let slack = if counted(&live) || counted(&cached) {
        1.1
    } else {
        0.1
    };
    assert!(
        reconciles(&cached) <= reconciles(&live) + slack,
        "{live}\n{cached}"
    );
}
