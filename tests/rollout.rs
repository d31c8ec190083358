//! Fleet rollouts end to end (decision 0030), with real processes: redis-server (AOF
//! on), topograph-kube with simulated providers (one of them told to fail), the render
//! service and an applier. A hundred Clusters of the quick-start class get a class change
//! through a policy of waves [canary 1, 10%, 100%] with at most 5 rolling at once,
//! checked by the timestamps the rollout records; every process is restarted in the
//! middle of it and nothing is lost; a second change that breaks one Cluster of the 10%
//! wave halts the rollout in that wave, and aborting it moves the moved Clusters back.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_management::{ManagementCluster, crds};
use topograph_reconcile::rollout::{self, waves};
use topograph_tests::{
    Process, TempDir, binary, free_port, quick_start, small_cluster, spawn_logged, unconverged,
    wait_for_port,
};

const CAPI: &str = "cluster.x-k8s.io/v1beta1";
const CLUSTERS: usize = 100;
/// The simulated providers never get c-005's machines ready once its MachineDeployment
/// carries the label the second class change adds.
const FAILING: &str = "channel=beta,cluster.x-k8s.io/cluster-name=c-005";

/// Every process of the fleet, restartable.
struct Fleet {
    dir: PathBuf,
    redis_port: u16,
    redis: Option<Process>,
    kube: Option<Process>,
    render: Option<Process>,
    applier: Option<Process>,
    restarts: usize,
}

impl Fleet {
    fn start(dir: &Path) -> Fleet {
        let mut fleet = Fleet {
            dir: dir.to_path_buf(),
            redis_port: free_port(),
            redis: None,
            kube: None,
            render: None,
            applier: None,
            restarts: 0,
        };
        std::fs::create_dir_all(dir.join("clusters")).unwrap();
        fleet.start_all();
        fleet
    }

    fn start_all(&mut self) {
        let dir = self.dir.clone();
        let n = self.restarts;
        self.redis = Some(spawn_logged(
            Command::new("redis-server")
                .args([
                    "--port",
                    &self.redis_port.to_string(),
                    "--bind",
                    "127.0.0.1",
                ])
                .args([
                    "--appendonly",
                    "yes",
                    "--appendfsync",
                    "always",
                    "--save",
                    "",
                ])
                .arg("--dir")
                .arg(&dir),
            &dir.join(format!("redis-{n}.log")),
        ));
        let snapshot = dir.join("mc.json");
        let kube = topograph_tests::management_cluster(
            &dir.join("clusters"),
            "mc",
            &[
                "--simulate-providers",
                "--provider-delay-ms",
                "300",
                "--simulate-fail",
                FAILING,
                "--snapshot",
                snapshot.to_str().unwrap_or_default(),
            ],
        );
        self.kube = Some(kube.process);
        let render_port = free_port();
        self.render = Some(spawn_logged(
            Command::new(binary("topograph-render", "topograph-render"))
                .args(["--listen", &format!("127.0.0.1:{render_port}")]),
            &dir.join(format!("render-{n}.log")),
        ));
        wait_for_port(self.redis_port, "redis-server");
        wait_for_port(render_port, "topograph-render");
        self.applier = Some(spawn_logged(
            Command::new(binary("topograph-applier", "topograph-applier"))
                .args(["--redis", &format!("redis://127.0.0.1:{}", self.redis_port)])
                .args(["--render", &format!("http://127.0.0.1:{render_port}")])
                .args([
                    "--workers",
                    "4",
                    "--quiet-ms",
                    "100",
                    "--lease-seconds",
                    "3",
                ])
                .args(["--rollout-interval-ms", "300"])
                .arg("--management-clusters")
                .arg(dir.join("clusters"))
                .env("RUST_LOG", "info"),
            &std::env::temp_dir().join(format!("topograph-rollout-applier-{n}.log")),
        ));
    }

    /// Stops every process as it would die: the applier, the render service and Redis
    /// killed; the API server stopped (an API server keeps what it acknowledged: the
    /// in-memory one writes its snapshot when it stops).
    fn restart(&mut self) {
        for process in [self.applier.take(), self.render.take(), self.redis.take()] {
            drop(process);
        }
        if let Some(mut kube) = self.kube.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &kube.0.id().to_string()])
                .status();
            let _ = kube.0.wait();
        }
        let _ = std::fs::remove_file(self.dir.join("clusters/mc.kubeconfig"));
        self.restarts += 1;
        self.start_all();
    }

    async fn api(&self) -> ManagementCluster {
        ManagementCluster::from_kubeconfig(&self.dir.join("clusters/mc.kubeconfig"))
            .await
            .unwrap()
    }
}

async fn get(api: &ManagementCluster, api_version: &str, kind: &str, name: &str) -> Value {
    match api.get(api_version, kind, "default", name).await {
        Ok(Some(object)) => object,
        other => panic!("{kind} default/{name}: {other:?}"),
    }
}

async fn policy_status(api: &ManagementCluster) -> waves::Status {
    let policy = get(
        api,
        rollout::API_VERSION,
        rollout::POLICY_KIND,
        "quick-start",
    )
    .await;
    waves::Status::of(&policy).unwrap_or_else(|e| panic!("{e}"))
}

/// Waits until `done` holds for the policy's status, or fails with it after `limit`.
async fn wait_status(
    api: &ManagementCluster,
    what: &str,
    limit: Duration,
    done: impl Fn(&waves::Status) -> bool,
) -> waves::Status {
    let started = Instant::now();
    loop {
        let status = policy_status(api).await;
        if done(&status) {
            return status;
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not after {limit:?}; status {}",
            serde_json::to_string_pretty(&status).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn wait_converged(api: &ManagementCluster, limit: Duration) {
    let started = Instant::now();
    loop {
        let clusters = api
            .list(CAPI, "Cluster", "default", &[])
            .await
            .unwrap_or_default();
        let left: Vec<String> = clusters.iter().filter_map(unconverged).collect();
        if clusters.len() == CLUSTERS && left.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < limit,
            "{} Clusters, not converged: {:?}",
            clusters.len(),
            left.iter().take(5).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The class with `labels` on its worker class's machines (a change that rolls every
/// MachineDeployment).
async fn change_class(api: &ManagementCluster, labels: Value) {
    let mut class = get(api, CAPI, "ClusterClass", "quick-start").await;
    class["spec"]["workers"]["machineDeployments"][0]["template"]["metadata"] =
        json!({ "labels": labels });
    api.replace(&class).await.unwrap();
}

fn pin(cluster: &Value, annotation: &str) -> Option<String> {
    rollout::pin::annotation(cluster, annotation).map(str::to_string)
}

/// `(moved, passed)` in milliseconds of every Cluster of every wave.
fn intervals(status: &waves::Status) -> Vec<(String, usize, i64, i64)> {
    status
        .waves
        .iter()
        .enumerate()
        .flat_map(|(i, w)| {
            w.clusters.iter().map(move |m| {
                (
                    m.cluster.clone(),
                    i,
                    waves::millis(&m.moved_at).unwrap_or(i64::MAX),
                    waves::millis(&m.passed_at).unwrap_or(i64::MAX),
                )
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_class_change_rolls_out_in_waves_survives_restarts_and_halts_on_harm() {
    let tmp = TempDir::new("rollout");
    let mut fleet = Fleet::start(&tmp.0);
    let api = fleet.api().await;
    let class = quick_start("clusterclass.yaml", "default");
    let mut objects = crds::cluster_api();
    objects.extend(crds::topograph());
    objects.extend(crds::for_objects(&class));
    objects.extend(class);
    for object in &objects {
        api.create(object).await.unwrap();
    }
    for i in 0..CLUSTERS {
        let mut cluster = small_cluster(&format!("c-{i:03}"), "default");
        if i == 0 {
            cluster["metadata"]["labels"] = json!({"canary": "true"});
        }
        api.create(&cluster).await.unwrap();
    }
    wait_converged(&api, Duration::from_secs(240)).await;

    api.create(&json!({
        "apiVersion": rollout::API_VERSION, "kind": rollout::POLICY_KIND,
        "metadata": {"name": "quick-start", "namespace": "default"},
        "spec": {
            "waves": [
                {"name": "canary", "selector": {"matchLabels": {"canary": "true"}}},
                {"name": "ten", "percent": 10},
                {"name": "all", "percent": 100},
            ],
            "maxRolling": 5,
            // Debug builds on two shared cores: a moved Cluster may wait for the queue
            // behind every Cluster the class change itself queued.
            "healthDeadline": "180s",
        },
    }))
    .await
    .unwrap();
    let first = wait_status(
        &api,
        "stable revision recorded",
        Duration::from_secs(30),
        |s| !s.stable_revision.is_empty(),
    )
    .await
    .stable_revision;

    // The first change: every Cluster's machines roll, in waves.
    change_class(&api, json!({"rollout": "two"})).await;
    let started = wait_status(&api, "rollout started", Duration::from_secs(30), |s| {
        !s.target_revision.is_empty()
    })
    .await;
    let second = started.target_revision.clone();
    assert_ne!(second, first);
    // Nobody outside the first wave moved: unpinned Clusters still render the stable
    // revision, whose MachineDeployments lack the new label.
    let md = api
        .list(
            CAPI,
            "MachineDeployment",
            "default",
            &[("cluster.x-k8s.io/cluster-name", "c-050")],
        )
        .await
        .unwrap();
    assert!(
        md.iter()
            .all(|m| m.pointer("/metadata/labels/rollout").is_none())
    );

    // Every process dies in the middle of the 10% wave and comes back.
    wait_status(&api, "second wave opened", Duration::from_secs(240), |s| {
        s.waves.len() >= 2
    })
    .await;
    fleet.restart();
    let api = fleet.api().await;
    let done = wait_status(&api, "rollout complete", Duration::from_secs(400), |s| {
        s.stable_revision == second && s.target_revision.is_empty()
    })
    .await;

    // Waves in order with the sizes the policy asks, never more than 5 rolling.
    let sizes: Vec<(&str, usize)> = done
        .waves
        .iter()
        .map(|w| (w.name.as_str(), w.clusters.len()))
        .collect();
    assert_eq!(sizes, [("canary", 1), ("ten", 9), ("all", 90)]);
    let spans = intervals(&done);
    assert_eq!(spans[0].0, "default/c-000");
    for (cluster, wave, moved, passed) in &spans {
        assert!(moved <= passed, "{cluster}: passed before it moved");
        let earlier_passed = spans.iter().filter(|s| s.1 < *wave).map(|s| s.3).max();
        assert!(
            earlier_passed.is_none_or(|at| at <= *moved),
            "{cluster} of wave {wave} moved before the waves before it passed"
        );
        let rolling = spans
            .iter()
            .filter(|s| s.2 <= *moved && *moved < s.3)
            .count();
        assert!(rolling <= 5, "{rolling} rolling when {cluster} moved");
    }
    let clusters = api.list(CAPI, "Cluster", "default", &[]).await.unwrap();
    for c in &clusters {
        assert_eq!(
            pin(c, rollout::OBSERVED_ANNOTATION).as_deref(),
            Some(second.as_str()),
            "{}",
            c.name()
        );
    }
    let mds = api
        .list(CAPI, "MachineDeployment", "default", &[])
        .await
        .unwrap();
    assert_eq!(mds.len(), CLUSTERS);
    assert!(mds.iter().all(|m| {
        m.pointer("/metadata/labels/rollout")
            .and_then(Value::as_str)
            == Some("two")
    }));

    // The second change breaks c-005's machines: the rollout halts in the 10% wave.
    let mut policy = get(
        &api,
        rollout::API_VERSION,
        rollout::POLICY_KIND,
        "quick-start",
    )
    .await;
    policy["spec"]["healthDeadline"] = json!("20s");
    api.replace(&policy).await.unwrap();
    change_class(&api, json!({"rollout": "two", "channel": "beta"})).await;
    let halted = wait_status(&api, "rollout halted", Duration::from_secs(240), |s| {
        s.phase == waves::phase::HALTED
    })
    .await;
    let third = halted.target_revision.clone();
    let halt = halted.halted.clone().unwrap_or_default();
    assert_eq!(halt.cluster, "default/c-005");
    assert!(
        halt.reason
            .contains("did not pass its health gate within 20s"),
        "{}",
        halt.reason
    );
    assert_eq!(halted.waves.len(), 2, "halted in the wave where it failed");
    let clusters = api.list(CAPI, "Cluster", "default", &[]).await.unwrap();
    let moved: Vec<String> = clusters
        .iter()
        .filter(|c| pin(c, rollout::PIN_ANNOTATION).as_deref() == Some(third.as_str()))
        .map(|c| c.name().to_string())
        .collect();
    assert!(
        moved.len() <= 10 && moved.contains(&"c-005".to_string()),
        "{moved:?}"
    );
    let class = get(&api, CAPI, "ClusterClass", "quick-start").await;
    let condition = topograph_reconcile::conditions::find(&class, rollout::CONDITION)
        .cloned()
        .unwrap_or_default();
    assert_eq!(condition["status"], "False", "{condition}");
    assert!(
        condition["message"]
            .as_str()
            .is_some_and(|m| m.contains("default/c-005"))
    );
    let events = api.list("v1", "Event", "default", &[]).await.unwrap();
    assert!(events.iter().any(|e| e["reason"] == "RolloutHalted"
        && e["type"] == "Warning"
        && e.pointer("/involvedObject/name").and_then(Value::as_str) == Some("c-005")));

    // Abort: the moved Clusters go back to the stable revision and lose the label.
    let mut policy = get(
        &api,
        rollout::API_VERSION,
        rollout::POLICY_KIND,
        "quick-start",
    )
    .await;
    policy["spec"]["abortRevision"] = json!(third);
    api.replace(&policy).await.unwrap();
    wait_status(&api, "rollout aborted", Duration::from_secs(60), |s| {
        s.phase == waves::phase::ABORTED
    })
    .await;
    let started = Instant::now();
    loop {
        let clusters = api.list(CAPI, "Cluster", "default", &[]).await.unwrap();
        let back = clusters
            .iter()
            .filter(|c| moved.contains(&c.name().to_string()))
            .all(|c| {
                pin(c, rollout::PIN_ANNOTATION).as_deref() == Some(second.as_str())
                    && pin(c, rollout::OBSERVED_ANNOTATION).as_deref() == Some(second.as_str())
            });
        let mds = api
            .list(CAPI, "MachineDeployment", "default", &[])
            .await
            .unwrap();
        if back
            && mds
                .iter()
                .all(|m| m.pointer("/metadata/labels/channel").is_none())
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the moved Clusters did not go back"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    drop(fleet);
}
