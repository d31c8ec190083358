//! Lifecycle hooks end to end, with real processes: redis-server, `topograph-kube` with
//! simulated providers, the render service, an applier, and the example Runtime SDK
//! extension over HTTPS. An ExtensionConfig is discovered (its status lists the
//! handlers), a new Cluster is held by BeforeClusterCreate with Cluster API's condition,
//! and once the extension's answer turns to go the queue brings the Cluster back by
//! itself (nothing else touches it) and the topology is created; AfterControlPlaneInitialized
//! is called once the simulated control plane is up.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use topograph_management::{ManagementCluster, crds};
use topograph_tests::{
    Process, TempDir, free_port, management_cluster, quick_start, redis_without_persistence,
    small_cluster, spawn_render_and_applier, start_extension,
};

const MC: &str = "mgmt-hooks";
const NS: &str = "hooks";
const CLUSTER: &str = "held";

fn write_answers(path: &Path, answers: Value) {
    std::fs::write(path, serde_json::to_vec(&answers).unwrap()).unwrap();
}

async fn wait_for<T>(
    what: &str,
    timeout: Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let started = Instant::now();
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            started.elapsed() < timeout,
            "{what}: not within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn condition(cluster: &Value) -> Value {
    cluster["status"]["v1beta2"]["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == "TopologyReconciled"))
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_cluster_create_holds_a_cluster_until_the_extension_lets_it_go() {
    let dir = TempDir::new("lifecycle-hooks-e2e");
    let clusters_dir = dir.0.join("clusters");
    std::fs::create_dir_all(&clusters_dir).unwrap();
    let answers = dir.0.join("answers.json");
    let calls = dir.0.join("calls.jsonl");
    write_answers(
        &answers,
        json!({"BeforeClusterCreate": {"status": "Success", "retryAfterSeconds": 2, "message": "waiting for quota"}}),
    );
    let extension = start_extension(
        &dir.0,
        &[
            "--hook-responses",
            answers.to_str().unwrap(),
            "--calls-log",
            calls.to_str().unwrap(),
        ],
    );

    let mut processes: Vec<Process> = Vec::new();
    let redis_port = free_port();
    processes.push(redis_without_persistence(redis_port));
    let kube = management_cluster(
        &clusters_dir,
        MC,
        &["--simulate-providers", "--provider-delay-ms", "150"],
    );
    processes.push(kube.process);
    let api = ManagementCluster::from_kubeconfig_yaml(&kube.kubeconfig)
        .await
        .unwrap();
    let mut seed = crds::cluster_api();
    seed.extend(crds::for_objects(&quick_start("clusterclass.yaml", NS)));
    seed.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    seed.extend(quick_start("clusterclass.yaml", NS));
    let ca = std::fs::read(&extension.ca).unwrap();
    seed.push(json!({
        "apiVersion": "runtime.cluster.x-k8s.io/v1alpha1",
        "kind": "ExtensionConfig",
        "metadata": {"name": "lifecycle"},
        "spec": {"clientConfig": {
            "url": extension.url,
            "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)
        }}
    }));
    for object in &seed {
        api.create(object).await.unwrap();
    }
    spawn_render_and_applier(
        &dir.0,
        redis_port,
        &clusters_dir,
        &std::env::temp_dir().join("topograph-lifecycle-hooks-e2e-applier.log"),
        &mut processes,
    );
    api.create(&small_cluster(CLUSTER, NS)).await.unwrap();
    let get = || async {
        api.get("cluster.x-k8s.io/v1beta1", "Cluster", NS, CLUSTER)
            .await
            .unwrap()
            .unwrap()
    };

    // Held, with Cluster API's reason and message, and nothing created.
    let held = wait_for("the hold reported", Duration::from_secs(60), async || {
        let c = get().await;
        (condition(&c)["reason"] == "LifecycleHookBlocking").then_some(c)
    })
    .await;
    assert_eq!(
        condition(&held)["message"],
        "hook \"BeforeClusterCreate\" is blocking: waiting for quota"
    );
    assert!(held["spec"]["controlPlaneRef"].is_null());
    // The ExtensionConfig was discovered: its handlers and condition in its status.
    let config = api
        .get(
            "runtime.cluster.x-k8s.io/v1alpha1",
            "ExtensionConfig",
            "",
            "lifecycle",
        )
        .await
        .unwrap()
        .unwrap();
    let handlers: Vec<&str> = config["status"]["handlers"]
        .as_array()
        .map(|l| l.iter().filter_map(|h| h["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        handlers.contains(&"before-cluster-create.lifecycle"),
        "{handlers:?}"
    );
    assert_eq!(config["status"]["conditions"][0]["type"], "Discovered");
    assert_eq!(config["status"]["conditions"][0]["status"], "True");

    // Asked again while it holds (the queue's requeue, not a sleeping worker).
    let asked = |hook: &'static str| {
        let calls = calls.clone();
        move || {
            std::fs::read_to_string(&calls)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|call| call["hook"] == hook)
                .count()
        }
    };
    let before_create = asked("BeforeClusterCreate");
    wait_for("asked again", Duration::from_secs(20), async || {
        (before_create() >= 2).then_some(())
    })
    .await;

    // Let go: nothing touches the Cluster, yet the queue brings it back and the
    // topology is created; the control plane comes up and AfterControlPlaneInitialized
    // is called, once.
    write_answers(&answers, json!({}));
    let created = wait_for(
        "created after the hold",
        Duration::from_secs(60),
        async || {
            let c = get().await;
            c["spec"]["controlPlaneRef"].is_object().then_some(c)
        },
    )
    .await;
    assert_ne!(condition(&created)["reason"], "LifecycleHookBlocking");
    let initialized = asked("AfterControlPlaneInitialized");
    wait_for(
        "AfterControlPlaneInitialized",
        Duration::from_secs(60),
        async || (initialized() == 1).then_some(()),
    )
    .await;
    let settled = wait_for("pending hooks done", Duration::from_secs(30), async || {
        let c = get().await;
        c["metadata"]["annotations"]["runtime.cluster.x-k8s.io/pending-hooks"]
            .is_null()
            .then_some(c)
    })
    .await;
    assert_eq!(settled["metadata"]["name"], CLUSTER);
    drop(processes);
}
