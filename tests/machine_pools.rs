//! MachinePools end to end, with real processes: redis-server, `topograph-kube` with
//! simulated providers (the MachinePool controller among them), the render service,
//! an applier and the gateway. A pool is added to a running Cluster through Apply,
//! scaled (the MachinePool updated in place, its bootstrap config and infrastructure
//! machine pool keeping their names), upgraded (the control plane first, then the
//! pool, the condition naming the pool on the way) and removed (the pool and its two
//! objects gone), each step seen through `GetCluster`'s workers.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tonic::Request;
use tonic::transport::Channel;
use topograph_management::{ManagementCluster, crds};
use topograph_proto::gateway::v1 as pb;
use topograph_proto::gateway::v1::gateway_service_client::GatewayServiceClient;
use topograph_tests::{
    Process, TempDir, admin_tenants, free_port, gateway_command, management_cluster, quick_start,
    redis_without_persistence, small_cluster, spawn_gateway, spawn_render_and_applier,
};

const MC: &str = "mgmt-pools";
const NS: &str = "pools";
const TOKEN: &str = "token-of-ops";
const CLUSTER: &str = "with-pools";

type Client = GatewayServiceClient<Channel>;

struct Fleet {
    _dir: TempDir,
    _processes: Vec<Process>,
    client: Client,
    api: ManagementCluster,
}

fn req<T>(message: T) -> Request<T> {
    let mut request = Request::new(message);
    match format!("Bearer {TOKEN}").parse() {
        Ok(value) => {
            request.metadata_mut().insert("authorization", value);
        }
        Err(e) => panic!("{e}"),
    }
    request
}

async fn start() -> Fleet {
    let dir = TempDir::new("machine-pools-e2e");
    let clusters_dir = dir.0.join("clusters");
    std::fs::create_dir_all(&clusters_dir).unwrap();
    let mut processes = Vec::new();
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
    for object in &seed {
        api.create(object).await.unwrap();
    }

    let (redis, render) = spawn_render_and_applier(
        &dir.0,
        redis_port,
        &clusters_dir,
        &std::env::temp_dir().join("topograph-machine-pools-e2e-applier.log"),
        &mut processes,
    );
    let tenants = admin_tenants(&dir.0, TOKEN);
    let (gateway, addr) = spawn_gateway(
        gateway_command()
            .args(["--render", &render, "--redis", &redis])
            .arg("--management-clusters")
            .arg(&clusters_dir)
            .arg("--tenants")
            .arg(&tenants),
        &std::env::temp_dir().join("topograph-machine-pools-e2e-gateway.log"),
    );
    processes.push(gateway);
    let client = GatewayServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    Fleet {
        _dir: dir,
        _processes: processes,
        client,
        api,
    }
}

async fn apply(c: &mut Client, objects: &[Value]) {
    c.apply(req(pb::ApplyRequest {
        management_cluster: MC.into(),
        objects: objects
            .iter()
            .map(|o| serde_json::to_vec(o).unwrap())
            .collect(),
        dry_run: false,
    }))
    .await
    .unwrap();
}

async fn get(c: &mut Client) -> pb::GetClusterResponse {
    c.get_cluster(req(pb::GetClusterRequest {
        management_cluster: MC.into(),
        namespace: NS.into(),
        name: CLUSTER.into(),
    }))
    .await
    .unwrap()
    .into_inner()
}

/// Whether the topology is reconciled for the Cluster's current generation.
fn reconciled(got: &pb::GetClusterResponse) -> bool {
    let cluster: Value = serde_json::from_slice(&got.cluster).unwrap_or_default();
    got.conditions.iter().any(|c| {
        c.r#type == "TopologyReconciled"
            && c.status == "True"
            && Some(c.observed_generation) == cluster["metadata"]["generation"].as_i64()
    })
}

fn pool(got: &pb::GetClusterResponse) -> Option<&pb::Worker> {
    got.workers
        .iter()
        .find(|w| w.kind == "MachinePool" && w.topology_name == "mp-0")
}

/// Polls Get until `done` holds (at most 30 s); the last answer.
async fn until(
    c: &mut Client,
    what: &str,
    done: impl Fn(&pb::GetClusterResponse) -> bool,
) -> pb::GetClusterResponse {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = get(c).await;
        if done(&got) {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not reached; workers {:?}, conditions {:?}",
            got.workers,
            got.conditions
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The Cluster with these MachinePools (none: the key left out) at `version`.
fn cluster(pools: Option<Value>, version: &str) -> Value {
    let mut c = small_cluster(CLUSTER, NS);
    c["spec"]["topology"]["version"] = json!(version);
    if let Some(pools) = pools {
        c["spec"]["topology"]["workers"]["machinePools"] = pools;
    }
    c
}

/// The MachinePool's object names: itself, its bootstrap config, its infrastructure
/// machine pool.
async fn pool_objects(api: &ManagementCluster, name: &str) -> (Value, Value, Value) {
    let mp = api
        .get("cluster.x-k8s.io/v1beta1", "MachinePool", NS, name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("MachinePool {name}"));
    let referenced = async |path: &str| {
        let r = mp
            .pointer(&format!("/spec/template/spec/{path}"))
            .cloned()
            .unwrap_or_default();
        api.get(
            r["apiVersion"].as_str().unwrap_or_default(),
            r["kind"].as_str().unwrap_or_default(),
            NS,
            r["name"].as_str().unwrap_or_default(),
        )
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{path} of {name}: {r}"))
    };
    let bootstrap = referenced("bootstrap/configRef").await;
    let infrastructure = referenced("infrastructureRef").await;
    (mp, bootstrap, infrastructure)
}

fn name(object: &Value) -> String {
    object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The namespace's Events, oldest first, as `reason: message`.
async fn events(api: &ManagementCluster) -> Vec<String> {
    let mut events = api.list("v1", "Event", NS, &[]).await.unwrap();
    events.sort_by_key(|e| {
        e["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    });
    events
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                e["reason"].as_str().unwrap_or_default(),
                e["message"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_pool_added_scaled_upgraded_and_removed_through_the_gateway() {
    let started = Instant::now();
    let fleet = start().await;
    let c = &mut fleet.client.clone();
    let api = &fleet.api;
    let stream = c
        .watch(req(pb::WatchRequest {
            management_cluster: MC.into(),
            namespace: NS.into(),
            name: CLUSTER.into(),
            include_existing: false,
        }))
        .await
        .unwrap()
        .into_inner();
    let conditions = collect_condition_messages(stream);

    let mut objects = quick_start("clusterclass.yaml", NS);
    objects.push(cluster(None, "v1.30.0"));
    apply(c, &objects).await;
    until(c, "created", |got| {
        reconciled(got) && got.workers.iter().any(|w| w.kind == "MachineDeployment")
    })
    .await;
    println!(
        "fleet up and Cluster reconciled after {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Added: the pool comes up with its two objects, listed among the workers.
    let one = json!([{"class": "default-worker", "name": "mp-0", "replicas": 1}]);
    apply(c, &[cluster(Some(one), "v1.30.0")]).await;
    let got = until(c, "pool added", |got| {
        reconciled(got) && pool(got).is_some_and(|w| w.ready_replicas == 1)
    })
    .await;
    let worker = pool(&got).unwrap();
    assert_eq!(worker.class, "default-worker");
    assert_eq!(worker.replicas, Some(1));
    assert_eq!(worker.version, "v1.30.0");
    let owned: Vec<&str> = got.owned.iter().map(|o| o.kind.as_str()).collect();
    for kind in ["MachinePool", "KubeadmConfig", "DockerMachinePool"] {
        assert!(owned.contains(&kind), "{kind} not in {owned:?}");
    }
    let (mp, bootstrap, infrastructure) = pool_objects(api, &worker.name).await;
    let names = [name(&mp), name(&bootstrap), name(&infrastructure)];
    println!("pool added after {:.1} s", started.elapsed().as_secs_f64());

    // Scaled: the same MachinePool, its objects under the same names.
    let three = json!([{"class": "default-worker", "name": "mp-0", "replicas": 3}]);
    apply(c, &[cluster(Some(three.clone()), "v1.30.0")]).await;
    let got = until(c, "pool scaled", |got| {
        reconciled(got) && pool(got).is_some_and(|w| w.replicas == Some(3) && w.ready_replicas == 3)
    })
    .await;
    let (mp, bootstrap, infrastructure) = pool_objects(api, &pool(&got).unwrap().name).await;
    assert_eq!(
        [name(&mp), name(&bootstrap), name(&infrastructure)],
        names,
        "updated in place"
    );
    println!("pool scaled after {:.1} s", started.elapsed().as_secs_f64());

    // Upgraded: the control plane first, then the pool.
    apply(c, &[cluster(Some(three.clone()), "v1.31.0")]).await;
    let got = until(c, "upgraded", |got| {
        reconciled(got)
            && got.workers.len() == 2
            && got
                .workers
                .iter()
                .all(|w| w.version == "v1.31.0" && Some(w.ready_replicas) == w.replicas)
    })
    .await;
    let (mp, _, infrastructure) = pool_objects(api, &pool(&got).unwrap().name).await;
    assert_eq!(name(&infrastructure), names[2]);
    assert_eq!(
        infrastructure["spec"]["template"]["customImage"], "kindest/node:v1.31.0",
        "the pool's infrastructure follows its version"
    );
    let events = events(api).await;
    let position = |needle: &str| {
        events
            .iter()
            .position(|e| e.starts_with("TopologyUpdate: ") && e.contains(needle))
            .unwrap_or_else(|| panic!("no event with {needle:?}: {events:#?}"))
    };
    let control_plane = position("KubeadmControlPlane");
    let pool_upgrade = position(&format!(
        "MachinePool \"{NS}/{}\" with version change from v1.30.0 to v1.31.0",
        name(&mp)
    ));
    assert!(control_plane < pool_upgrade, "{events:#?}");
    let seen = conditions.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|m| m.contains(&format!("MachinePool {}", name(&mp)))
                || m.contains("MachinePools ")),
        "the condition named the pool while it waited or upgraded: {seen:#?}"
    );
    println!("upgraded after {:.1} s", started.elapsed().as_secs_f64());

    // Removed: the pool and both its objects go.
    apply(c, &[cluster(None, "v1.31.0")]).await;
    until(c, "pool removed", |got| {
        reconciled(got) && pool(got).is_none()
    })
    .await;
    for (api_version, kind, object) in [
        ("cluster.x-k8s.io/v1beta1", "MachinePool", &names[0]),
        (
            bootstrap["apiVersion"].as_str().unwrap(),
            "KubeadmConfig",
            &names[1],
        ),
        (
            infrastructure["apiVersion"].as_str().unwrap(),
            "DockerMachinePool",
            &names[2],
        ),
    ] {
        assert!(
            api.get(api_version, kind, NS, object)
                .await
                .unwrap()
                .is_none(),
            "{kind} {object} still there"
        );
    }
    println!(
        "pool removed after {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The messages of the `TopologyReconciled` condition changes the watch reports.
fn collect_condition_messages(
    mut stream: tonic::Streaming<pb::WatchEvent>,
) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    let messages = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = messages.clone();
    tokio::spawn(async move {
        while let Ok(Some(event)) = stream.message().await {
            if let Some(pb::watch_event::Event::Condition(c)) = event.event
                && c.r#type == "TopologyReconciled"
                && let Ok(mut sink) = sink.lock()
            {
                sink.push(c.message);
            }
        }
    });
    messages
}
