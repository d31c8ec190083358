//! Lifecycle hooks end to end, with real processes: redis-server, `topograph-kube` with
//! simulated providers, the render service, an applier, and the example Runtime SDK
//! extension over HTTPS. An ExtensionConfig is discovered (its status lists the
//! handlers), a new Cluster is held by BeforeClusterCreate with Cluster API's condition,
//! and once the extension's answer turns to go the queue brings the Cluster back by
//! itself (nothing else touches it) and the topology is created; AfterControlPlaneInitialized
//! is called once the simulated control plane is up.
//!
//! The same fleet renders the quick-start-runtimesdk real-world class through the render
//! service: the applier hands it the discovered ExtensionConfig, the render service calls
//! the example extension's GeneratePatches and ValidateTopology itself, and the Cluster
//! is reconciled with the patched fields; the class's status lists the discovered
//! variables.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use topograph_management::{ManagementCluster, crds};
use topograph_runtime::config::ExtensionConfig;
use topograph_tests::{
    Extension, Process, TempDir, free_port, management_cluster, quick_start,
    redis_without_persistence, runtimesdk, small_cluster, spawn_render_and_applier,
    start_extension,
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

/// Redis, topograph-kube (simulated providers) with Cluster API's CRDs, `namespace`,
/// the class objects and an ExtensionConfig `config_name` for `extension`, then the
/// render service and an applier: the management cluster's client and the processes.
async fn start_fleet(
    dir: &Path,
    mc: &str,
    namespace: &str,
    class: Vec<Value>,
    config_name: &str,
    extension: &Extension,
    applier_log: &str,
) -> (ManagementCluster, Vec<Process>) {
    let clusters_dir = dir.join("clusters");
    std::fs::create_dir_all(&clusters_dir).unwrap();
    let mut processes: Vec<Process> = Vec::new();
    let redis_port = free_port();
    processes.push(redis_without_persistence(redis_port));
    let kube = management_cluster(
        &clusters_dir,
        mc,
        &["--simulate-providers", "--provider-delay-ms", "150"],
    );
    processes.push(kube.process);
    let api = ManagementCluster::from_kubeconfig_yaml(&kube.kubeconfig)
        .await
        .unwrap();
    let mut seed = crds::cluster_api();
    seed.extend(crds::for_objects(&class));
    seed.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}));
    seed.extend(class);
    let ca = std::fs::read(&extension.ca).unwrap();
    seed.push(
        serde_json::to_value(ExtensionConfig::for_url(config_name, &extension.url, ca)).unwrap(),
    );
    for object in &seed {
        api.create(object).await.unwrap();
    }
    spawn_render_and_applier(
        dir,
        redis_port,
        &clusters_dir,
        &std::env::temp_dir().join(applier_log),
        &mut processes,
    );
    (api, processes)
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

    let (api, processes) = start_fleet(
        &dir.0,
        MC,
        NS,
        quick_start("clusterclass.yaml", NS),
        "lifecycle",
        &extension,
        "topograph-lifecycle-hooks-e2e-applier.log",
    )
    .await;
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
            // The references are written before the reconcile reports its status: wait
            // for both.
            let c = get().await;
            (c["spec"]["controlPlaneRef"].is_object()
                && condition(&c)["reason"] != "LifecycleHookBlocking")
                .then_some(c)
        },
    )
    .await;
    assert!(created["spec"]["infrastructureRef"].is_object());
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_render_service_calls_the_extensions_of_a_class_with_external_patches() {
    const MC: &str = "mgmt-patches";
    const NS: &str = "rtsdk";
    let Some((class, cluster)) = runtimesdk(NS) else {
        eprintln!("skipped: the real-world folder is absent");
        return;
    };
    let name = cluster["metadata"]["name"].as_str().unwrap().to_string();
    let dir = TempDir::new("external-patches-e2e");
    let calls = dir.0.join("calls.jsonl");
    let extension = start_extension(&dir.0, &["--calls-log", calls.to_str().unwrap()]);

    // The class's handlers name this ExtensionConfig.
    let (api, processes) = start_fleet(
        &dir.0,
        MC,
        NS,
        class,
        "k8s-upgrade-with-runtimesdk",
        &extension,
        "topograph-external-patches-e2e-applier.log",
    )
    .await;
    api.create(&cluster).await.unwrap();
    let get = || async {
        api.get("cluster.x-k8s.io/v1beta1", "Cluster", NS, &name)
            .await
            .unwrap()
            .unwrap()
    };

    let reconciled = wait_for(
        "TopologyReconciled True",
        Duration::from_secs(90),
        async || {
            let c = get().await;
            (condition(&c)["status"] == "True" && c["spec"]["infrastructureRef"].is_object())
                .then_some(c)
        },
    )
    .await;
    let r = &reconciled["spec"]["infrastructureRef"];
    let docker_cluster = api
        .get(
            r["apiVersion"].as_str().unwrap(),
            "DockerCluster",
            NS,
            r["name"].as_str().unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        docker_cluster["spec"]["loadBalancer"]["imageRepository"],
        "kindest"
    );
    let r = &reconciled["spec"]["controlPlaneRef"];
    let kcp = api
        .get(
            r["apiVersion"].as_str().unwrap(),
            "KubeadmControlPlane",
            NS,
            r["name"].as_str().unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        kcp["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"],
        1
    );

    // The class's status lists what DiscoverVariables answered.
    let class = api
        .get(
            "cluster.x-k8s.io/v1beta1",
            "ClusterClass",
            NS,
            "quick-start-runtimesdk",
        )
        .await
        .unwrap()
        .unwrap();
    let variables = class["status"]["variables"].as_array().unwrap();
    assert!(
        variables
            .iter()
            .any(|v| v["name"] == "imageRepository" && v["definitions"][0]["from"] == "test-patch"),
        "{variables:#?}"
    );

    // The extension was called by the render service (the applier's engine is remote).
    let log = std::fs::read_to_string(&calls).unwrap_or_default();
    assert!(log.contains("GeneratePatches"), "{log}");
    assert!(log.contains("ValidateTopology"), "{log}");
    drop(processes);
}

/// An ExtensionConfig that appears after its class is discovered at once, and the
/// classes calling it are reconciled again by the watcher (Cluster API's ClusterClass
/// controller follows ExtensionConfigs): the class gets its discovered variables
/// without any Cluster being reconciled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_config_created_later_reconciles_the_classes_calling_it() {
    const MC: &str = "mgmt-late-config";
    const NS: &str = "late";
    let Some((class, _)) = runtimesdk(NS) else {
        eprintln!("skipped: the real-world folder is absent");
        return;
    };
    let dir = TempDir::new("late-extension-config");
    let extension = start_extension(&dir.0, &[]);
    // The fleet starts with an ExtensionConfig the class does not call.
    let (api, processes) = start_fleet(
        &dir.0,
        MC,
        NS,
        class,
        "some-other-extension",
        &extension,
        "topograph-late-config-e2e-applier.log",
    )
    .await;
    let get_class = || async {
        api.get(
            "cluster.x-k8s.io/v1beta1",
            "ClusterClass",
            NS,
            "quick-start-runtimesdk",
        )
        .await
        .unwrap()
        .unwrap()
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(get_class().await["status"]["variables"].is_null());

    let ca = std::fs::read(&extension.ca).unwrap();
    let config = ExtensionConfig::for_url("k8s-upgrade-with-runtimesdk", &extension.url, ca);
    api.create(&serde_json::to_value(config).unwrap())
        .await
        .unwrap();
    let class = wait_for(
        "the class's discovered variables",
        Duration::from_secs(30),
        async || {
            let c = get_class().await;
            c["status"]["variables"]
                .as_array()
                .is_some_and(|v| {
                    v.iter().any(|v| {
                        v["name"] == "imageRepository"
                            && v["definitions"][0]["from"] == "test-patch"
                    })
                })
                .then_some(c)
        },
    )
    .await;
    let ready = class["status"]["v1beta2"]["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == "VariablesReady"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(ready["status"], "True", "{class:#}");
    drop(processes);
}
