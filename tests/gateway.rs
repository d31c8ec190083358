//! The gateway end to end, with real processes: redis-server, an in-memory management
//! cluster (`topograph-kube` with simulated providers), the render service, an applier
//! and `topograph-gateway`, driven by a tonic client as three tenants.
//!
//! Refused requests (no token, wrong token, another tenant's namespace or management
//! cluster, invalid objects) are checked against the management cluster's own write
//! counter: they must change nothing. Then the quick-start class and Clusters are
//! applied, reconciled by the applier (seen through Get and Watch), listed a page at a
//! time, and deleted.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic::{Code, Request};
use tonic_types::StatusExt;
use topograph_gateway::tenancy::token_sha256_hex;
use topograph_management::{ManagementCluster, crds};
use topograph_proto::gateway::v1 as pb;
use topograph_proto::gateway::v1::applied_object::Action;
use topograph_proto::gateway::v1::gateway_service_client::GatewayServiceClient;
use topograph_reconcile::plan;
use topograph_tests::{
    Process, TempDir, free_port, gateway_command, http_get, management_cluster, quick_start,
    redis_without_persistence, small_cluster, spawn_gateway, spawn_render_and_applier,
};

const MC: &str = "mgmt-a";
const TOKEN_A: &str = "token-of-team-a";
const TOKEN_B: &str = "token-of-team-b";
const TOKEN_OPS: &str = "token-of-ops";

type Client = GatewayServiceClient<Channel>;

/// A request carrying `token` as a bearer token (none when `None`).
fn req<T>(token: Option<&str>, message: T) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(token) = token {
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ASCII token"),
        );
    }
    request
}

fn bytes(objects: &[Value]) -> Vec<Vec<u8>> {
    objects
        .iter()
        .map(|o| serde_json::to_vec(o).unwrap())
        .collect()
}

/// The management cluster's counts of requests by verb.
fn kube_counts(port: u16) -> Value {
    let body = http_get(port, "/_topograph/requests");
    let json = &body[body.find('{').unwrap()..=body.rfind('}').unwrap()];
    serde_json::from_str(json).unwrap()
}

fn kube_writes(port: u16) -> u64 {
    let c = kube_counts(port);
    ["create", "update", "patch", "delete"]
        .iter()
        .map(|k| c[k].as_u64().unwrap_or(0))
        .sum()
}

struct Fleet {
    _dir: TempDir,
    _processes: Vec<Process>,
    kube_port: u16,
    kubeconfig: String,
    metrics_port: u16,
    client: Client,
    api: ManagementCluster,
}

/// The tests each start five processes; one fleet at a time keeps a two-core machine
/// responsive enough for their deadlines.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A fleet of its own for the test `tag` (directories and logs are named for it).
async fn start(tag: &str) -> Fleet {
    let dir = TempDir::new(&format!("gateway-e2e-{tag}"));
    let clusters_dir = dir.0.join("clusters");
    std::fs::create_dir_all(&clusters_dir).unwrap();
    let mut processes = Vec::new();

    let redis_port = free_port();
    processes.push(redis_without_persistence(redis_port));

    let kube = management_cluster(
        &clusters_dir,
        MC,
        &["--simulate-providers", "--provider-delay-ms", "200"],
    );
    let (kube_port, kubeconfig) = (kube.port, kube.kubeconfig.clone());
    processes.push(kube.process);

    // CRDs and the tenants' namespaces.
    let api = ManagementCluster::from_kubeconfig_yaml(&kubeconfig)
        .await
        .unwrap();
    let mut seed = crds::cluster_api();
    seed.extend(crds::for_objects(&quick_start(
        "clusterclass.yaml",
        "team-a",
    )));
    for ns in ["team-a", "team-b"] {
        seed.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    }
    for object in &seed {
        api.create(object).await.unwrap();
    }

    let (redis, render) = spawn_render_and_applier(
        &dir.0,
        redis_port,
        &clusters_dir,
        &std::env::temp_dir().join(format!("topograph-gateway-e2e-{tag}-applier.log")),
        &mut processes,
    );

    let tenants = dir.0.join("tenants.yaml");
    std::fs::write(
        &tenants,
        format!(
            "tenants:\n\
             - name: team-a\n  tokenSha256: {}\n  managementClusters: [{MC}]\n  namespaces: [team-a]\n\
             - name: team-b\n  tokenSha256: {}\n  managementClusters: [{MC}]\n  namespaces: [team-b]\n\
             - name: ops\n  tokenSha256: {}\n  managementClusters: ['*']\n  namespaces: ['*']\n  admin: true\n",
            token_sha256_hex(TOKEN_A),
            token_sha256_hex(TOKEN_B),
            token_sha256_hex(TOKEN_OPS),
        ),
    )
    .unwrap();
    let metrics_port = free_port();
    let (gateway, addr) = spawn_gateway(
        gateway_command()
            .args(["--render", &render, "--redis", &redis])
            .arg("--management-clusters")
            .arg(&clusters_dir)
            .arg("--tenants")
            .arg(&tenants)
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")]),
        // Kept next to the other e2e logs for a look after a failure.
        &std::env::temp_dir().join(format!("topograph-gateway-e2e-{tag}-gateway.log")),
    );
    processes.push(gateway);
    let client = GatewayServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    Fleet {
        _dir: dir,
        _processes: processes,
        kube_port,
        kubeconfig,
        metrics_port,
        client,
        api,
    }
}

/// Every way of being refused: no write reaches the management cluster.
async fn refusals(fleet: &mut Fleet) {
    let c = &mut fleet.client;
    let mut objects = quick_start("clusterclass.yaml", "team-a");
    objects.push(small_cluster("dev", "team-a"));
    let apply = |token: Option<&str>, ns: &str, mc: &str| {
        let mut objects = quick_start("clusterclass.yaml", ns);
        objects.push(small_cluster("dev", ns));
        req(
            token,
            pb::ApplyRequest {
                management_cluster: mc.to_string(),
                objects: bytes(&objects),
                dry_run: false,
            },
        )
    };
    let before = kube_writes(fleet.kube_port);

    let e = c.apply(apply(None, "team-a", MC)).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
    let e = c
        .apply(apply(Some("guess"), "team-a", MC))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
    // The digest of a token is not the token.
    let e = c
        .apply(apply(Some(&token_sha256_hex(TOKEN_A)), "team-a", MC))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
    let e = c
        .apply(apply(Some(TOKEN_B), "team-a", MC))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let e = c
        .apply(apply(Some(TOKEN_A), "team-a", "mgmt-b"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    // One object in another tenant's namespace refuses the whole request.
    let mut mixed = objects.clone();
    mixed.push(small_cluster("intruder", "team-b"));
    let e = c
        .apply(req(
            Some(TOKEN_A),
            pb::ApplyRequest {
                management_cluster: MC.to_string(),
                objects: bytes(&mixed),
                dry_run: false,
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    // Rollouts: only within the tenant's namespaces and management clusters.
    let rollout = |token: Option<&str>, mc: &str| {
        req(
            token,
            pb::RolloutRequest {
                management_cluster: mc.to_string(),
                namespace: "team-a".into(),
                name: "quick-start".into(),
            },
        )
    };
    for (token, mc, code) in [
        (None, MC, Code::Unauthenticated),
        (Some(TOKEN_B), MC, Code::PermissionDenied),
        (Some(TOKEN_A), "mgmt-b", Code::PermissionDenied),
    ] {
        let e = c.pause_rollout(rollout(token, mc)).await.unwrap_err();
        assert_eq!(e.code(), code, "{e:?}");
        let e = c.abort_rollout(rollout(token, mc)).await.unwrap_err();
        assert_eq!(e.code(), code, "{e:?}");
    }
    let e = c.get_rollout(rollout(Some(TOKEN_A), MC)).await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "no policy yet: {e:?}");
    for (token, ns) in [(Some(TOKEN_B), "team-a"), (None, "team-a")] {
        let e = c
            .get_cluster(req(
                token,
                pb::GetClusterRequest {
                    management_cluster: MC.into(),
                    namespace: ns.into(),
                    name: "dev".into(),
                },
            ))
            .await
            .unwrap_err();
        assert!(
            matches!(e.code(), Code::PermissionDenied | Code::Unauthenticated),
            "{e:?}"
        );
        let e = c
            .delete_cluster(req(
                token,
                pb::DeleteClusterRequest {
                    management_cluster: MC.into(),
                    namespace: ns.into(),
                    name: "dev".into(),
                },
            ))
            .await
            .unwrap_err();
        assert!(
            matches!(e.code(), Code::PermissionDenied | Code::Unauthenticated),
            "{e:?}"
        );
    }
    let e = c
        .watch(req(
            Some(TOKEN_B),
            pb::WatchRequest {
                management_cluster: MC.into(),
                namespace: "team-a".into(),
                name: String::new(),
                include_existing: true,
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let e = c
        .register_management_cluster(req(
            Some(TOKEN_A),
            pb::RegisterManagementClusterRequest {
                name: "mgmt-b".into(),
                kubeconfig: fleet.kubeconfig.clone().into_bytes(),
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");

    // An invalid Cluster (a string variable given a number, a bad version) next to a
    // valid class: refused with the object's field paths, nothing written.
    let mut invalid = objects.clone();
    let at = invalid.len() - 1;
    invalid[at]["spec"]["topology"]["variables"][0]["value"] = json!(42);
    invalid[at]["spec"]["topology"]["version"] = json!("v1.30");
    let e = c
        .apply(req(
            Some(TOKEN_A),
            pb::ApplyRequest {
                management_cluster: MC.into(),
                objects: bytes(&invalid),
                dry_run: false,
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    let fields: Vec<String> = e
        .get_details_bad_request()
        .expect("a BadRequest detail")
        .field_violations
        .into_iter()
        .map(|v| v.field)
        .collect();
    let prefix = format!("objects[{at}].spec.topology.");
    assert!(
        fields
            .iter()
            .any(|f| f.starts_with(&format!("{prefix}variables"))),
        "{fields:?}"
    );
    assert!(
        fields
            .iter()
            .any(|f| f.starts_with(&format!("{prefix}version"))),
        "{fields:?}"
    );
    assert!(
        fields.iter().all(|f| f.starts_with("objects[")),
        "{fields:?}"
    );

    // An object of a kind the management cluster does not serve (its CRD is missing),
    // last in the request: refused before the templates ahead of it are written.
    let mut unserved = objects.clone();
    unserved.push(json!({
        "apiVersion": "infrastructure.example.com/v1", "kind": "NoSuchMachineTemplate",
        "metadata": {"name": "x", "namespace": "team-a"}, "spec": {"template": {"spec": {}}}
    }));
    let e = c
        .apply(req(
            Some(TOKEN_A),
            pb::ApplyRequest {
                management_cluster: MC.into(),
                objects: bytes(&unserved),
                dry_run: false,
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    let violations = e
        .get_details_bad_request()
        .expect("a BadRequest detail")
        .field_violations;
    let fields: Vec<&str> = violations.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![format!("objects[{}].kind", unserved.len() - 1)],
        "{e:?}"
    );
    // A real management cluster gets no CRDs from the gateway: the refusal says how
    // to install one.
    assert!(
        violations[0]
            .description
            .contains("`topograph crds -f <file> | kubectl create -f -`"),
        "{e:?}"
    );

    let after = kube_writes(fleet.kube_port);
    assert_eq!(
        before, after,
        "refused requests wrote to the management cluster"
    );
    let none = fleet
        .api
        .list("cluster.x-k8s.io/v1beta1", "ClusterClass", "team-a", &[])
        .await
        .unwrap();
    assert!(none.is_empty(), "{none:?}");

    // The refusals are counted by code.
    let metrics = http_get(fleet.metrics_port, "/metrics");
    for code in ["UNAUTHENTICATED", "PERMISSION_DENIED", "INVALID_ARGUMENT"] {
        assert!(
            metrics.contains(&format!(
                "topograph_gateway_grpc_requests_total{{method=\"/topograph.gateway.v1.GatewayService/Apply\",code=\"{code}\"}}"
            )),
            "{code} not counted:\n{metrics}"
        );
    }
}

/// Collects a watch's events in the background.
fn collect(
    mut stream: tonic::Streaming<pb::WatchEvent>,
) -> std::sync::Arc<std::sync::Mutex<Vec<pb::WatchEvent>>> {
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = events.clone();
    tokio::spawn(async move {
        while let Ok(Some(event)) = stream.message().await {
            sink.lock().unwrap().push(event);
        }
    });
    events
}

fn reconciled(cluster: &Value) -> bool {
    let generation = cluster["metadata"]["generation"].clone();
    cluster["status"]["v1beta2"]["conditions"]
        .as_array()
        .is_some_and(|l| {
            l.iter().any(|c| {
                c["type"] == "TopologyReconciled"
                    && c["status"] == "True"
                    && c["observedGeneration"] == generation
            })
        })
}

async fn get(c: &mut Client, name: &str) -> Result<pb::GetClusterResponse, tonic::Status> {
    c.get_cluster(req(
        Some(TOKEN_A),
        pb::GetClusterRequest {
            management_cluster: MC.into(),
            namespace: "team-a".into(),
            name: name.into(),
        },
    ))
    .await
    .map(tonic::Response::into_inner)
}

async fn list(c: &mut Client, token: &str, request: pb::ListClustersRequest) -> Vec<String> {
    let mut names = Vec::new();
    let mut request = request;
    loop {
        let page = c
            .list_clusters(req(Some(token), request.clone()))
            .await
            .unwrap()
            .into_inner();
        if request.page_size > 0 {
            assert!(page.clusters.len() <= request.page_size as usize);
        }
        names.extend(
            page.clusters
                .iter()
                .map(|s| format!("{}/{}", s.namespace, s.name)),
        );
        if page.next_page_token.is_empty() {
            return names;
        }
        request.page_token = page.next_page_token;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_end_to_end() {
    let started = Instant::now();
    let _serial = SERIAL.lock().await;
    let mut fleet = start("main").await;
    println!("fleet started in {:.1} s", started.elapsed().as_secs_f64());

    refusals(&mut fleet).await;
    let c = &mut fleet.client.clone();

    // Watch the namespace before anything exists.
    let stream = c
        .watch(req(
            Some(TOKEN_A),
            pb::WatchRequest {
                management_cluster: MC.into(),
                namespace: "team-a".into(),
                name: "dev".into(),
                include_existing: false,
            },
        ))
        .await
        .unwrap()
        .into_inner();
    let events = collect(stream);

    // Apply the class, its templates and a Cluster in one call; Clusters listed first
    // are still written last.
    let mut objects = vec![small_cluster("dev", "team-a")];
    objects.extend(quick_start("clusterclass.yaml", "team-a"));
    let applied = c
        .apply(req(
            Some(TOKEN_A),
            pb::ApplyRequest {
                management_cluster: MC.into(),
                objects: bytes(&objects),
                dry_run: false,
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(applied.objects.len(), objects.len());
    assert!(
        applied
            .objects
            .iter()
            .all(|o| o.action == Action::Created as i32)
    );
    let kinds: Vec<&str> = applied.objects.iter().map(|o| o.kind.as_str()).collect();
    assert_eq!(kinds.last(), Some(&"Cluster"), "{kinds:?}");
    assert_eq!(kinds[kinds.len() - 2], "ClusterClass", "{kinds:?}");
    // Defaulted: the variables the class defaults are there.
    let written: Value = serde_json::from_slice(&applied.objects.last().unwrap().object).unwrap();
    assert!(written["metadata"]["uid"].is_string(), "{written}");

    // Reconciled by the applier: status and owned objects through Get.
    let deadline = Instant::now() + Duration::from_secs(30);
    let got = loop {
        let got = get(c, "dev").await.unwrap();
        let cluster: Value = serde_json::from_slice(&got.cluster).unwrap();
        let owned: BTreeSet<&str> = got.owned.iter().map(|o| o.kind.as_str()).collect();
        if reconciled(&cluster) && owned.contains("MachineDeployment") {
            break got;
        }
        assert!(
            Instant::now() < deadline,
            "not reconciled: {cluster}\nowned: {owned:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let owned: BTreeSet<&str> = got.owned.iter().map(|o| o.kind.as_str()).collect();
    for kind in [
        "KubeadmControlPlane",
        "DockerCluster",
        "MachineDeployment",
        "DockerMachineTemplate",
        "KubeadmConfigTemplate",
    ] {
        assert!(owned.contains(kind), "{kind} missing from {owned:?}");
    }
    assert!(
        got.conditions
            .iter()
            .any(|c| c.r#type == "TopologyReconciled" && c.status == "True"),
        "{:?}",
        got.conditions
    );
    println!(
        "applied and reconciled after {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // The watch saw the reconcile: its Events and the condition turning True.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = events.lock().unwrap().clone();
        let creates = seen
            .iter()
            .filter(|e| matches!(&e.event, Some(pb::watch_event::Event::Reconcile(r)) if r.reason == "TopologyCreate"))
            .count();
        let condition = seen.iter().any(|e| {
            matches!(&e.event, Some(pb::watch_event::Event::Condition(c))
                if c.r#type == "TopologyReconciled" && c.status == "True")
        });
        if creates >= 2 && condition {
            assert!(
                seen.iter()
                    .all(|e| e.namespace == "team-a" && e.name == "dev")
            );
            break;
        }
        assert!(Instant::now() < deadline, "watch events: {seen:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Applying the same objects again changes nothing.
    let again = c
        .apply(req(
            Some(TOKEN_A),
            pb::ApplyRequest {
                management_cluster: MC.into(),
                objects: bytes(&objects),
                dry_run: false,
            },
        ))
        .await
        .unwrap()
        .into_inner();
    let actions: Vec<i32> = again.objects.iter().map(|o| o.action).collect();
    assert!(
        actions.iter().all(|a| *a == Action::Unchanged as i32),
        "{actions:?}"
    );
    // The applier's references survive a re-apply.
    let stored: Value = serde_json::from_slice(&get(c, "dev").await.unwrap().cluster).unwrap();
    assert!(
        stored["spec"]["controlPlaneRef"]["name"].is_string(),
        "{stored}"
    );

    // Six more Clusters, two labelled; then list them a page at a time.
    let mut more = Vec::new();
    for i in 1..=6 {
        let mut object = small_cluster(&format!("c-{i}"), "team-a");
        if i % 3 == 0 {
            object["metadata"]["labels"] = json!({"env": "prod"});
        }
        more.push(object);
    }
    c.apply(req(
        Some(TOKEN_A),
        pb::ApplyRequest {
            management_cluster: MC.into(),
            objects: bytes(&more),
            dry_run: false,
        },
    ))
    .await
    .unwrap();
    let all = list(
        c,
        TOKEN_A,
        pb::ListClustersRequest {
            management_cluster: MC.into(),
            page_size: 3,
            ..Default::default()
        },
    )
    .await;
    let want: Vec<String> = ["c-1", "c-2", "c-3", "c-4", "c-5", "c-6", "dev"]
        .iter()
        .map(|n| format!("team-a/{n}"))
        .collect();
    assert_eq!(all, want);
    let first = c
        .list_clusters(req(
            Some(TOKEN_A),
            pb::ListClustersRequest {
                management_cluster: MC.into(),
                namespace: "team-a".into(),
                page_size: 3,
                ..Default::default()
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.clusters.len(), 3);
    let dev_summary = list_one(c, "dev").await;
    assert_eq!(dev_summary.class, "quick-start");
    assert_eq!(dev_summary.version, "v1.30.0");
    assert_eq!(
        dev_summary.topology_reconciled.map(|s| s.status),
        Some("True".to_string())
    );
    // A token from one query does not serve another.
    let e = c
        .list_clusters(req(
            Some(TOKEN_A),
            pb::ListClustersRequest {
                management_cluster: MC.into(),
                class: "other".into(),
                page_size: 3,
                page_token: first.next_page_token.clone(),
                ..Default::default()
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    let prod = list(
        c,
        TOKEN_A,
        pb::ListClustersRequest {
            management_cluster: MC.into(),
            label_selector: "env=prod".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(prod, ["team-a/c-3", "team-a/c-6"]);
    let none = list(
        c,
        TOKEN_A,
        pb::ListClustersRequest {
            management_cluster: MC.into(),
            class: "other".into(),
            ..Default::default()
        },
    )
    .await;
    assert!(none.is_empty());
    // Tenants see their own namespaces only; an admin sees everything.
    assert!(
        list(
            c,
            TOKEN_B,
            pb::ListClustersRequest {
                management_cluster: MC.into(),
                ..Default::default()
            }
        )
        .await
        .is_empty()
    );
    assert_eq!(
        list(
            c,
            TOKEN_OPS,
            pb::ListClustersRequest {
                management_cluster: MC.into(),
                ..Default::default()
            }
        )
        .await
        .len(),
        7
    );

    // The class cannot go while Clusters use it.
    let e = c
        .delete_cluster_class(req(
            Some(TOKEN_A),
            pb::DeleteClusterClassRequest {
                management_cluster: MC.into(),
                namespace: "team-a".into(),
                name: "quick-start".into(),
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert!(
        e.message().starts_with(
            "ClusterClass cannot be deleted because it is used by Cluster(s): team-a/c-1, team-a/c-2, team-a/c-3, ..."
        ),
        "{}",
        e.message()
    );

    // Delete a Cluster.
    let deleted = c
        .delete_cluster(req(
            Some(TOKEN_A),
            pb::DeleteClusterRequest {
                management_cluster: MC.into(),
                namespace: "team-a".into(),
                name: "dev".into(),
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(deleted.deleted);
    assert_eq!(get(c, "dev").await.unwrap_err().code(), Code::NotFound);

    // Management clusters: the admin registers a second one (the same API server).
    let registered = c
        .register_management_cluster(req(
            Some(TOKEN_OPS),
            pb::RegisterManagementClusterRequest {
                name: "mgmt-b".into(),
                kubeconfig: fleet.kubeconfig.clone().into_bytes(),
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(registered.created);
    let names = c
        .list_management_clusters(req(Some(TOKEN_OPS), pb::ListManagementClustersRequest {}))
        .await
        .unwrap()
        .into_inner()
        .names;
    assert_eq!(names, ["mgmt-a", "mgmt-b"]);
    let e = c
        .register_management_cluster(req(
            Some(TOKEN_OPS),
            pb::RegisterManagementClusterRequest {
                name: "mgmt-c".into(),
                kubeconfig: b"apiVersion: v1\nkind: Config\nclusters: []\n".to_vec(),
            },
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(e.code(), Code::InvalidArgument | Code::FailedPrecondition),
        "{e:?}"
    );
    let removed = c
        .unregister_management_cluster(req(
            Some(TOKEN_OPS),
            pb::UnregisterManagementClusterRequest {
                name: "mgmt-b".into(),
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(removed.removed);
    println!("done after {:.1} s", started.elapsed().as_secs_f64());
}

async fn list_one(c: &mut Client, name: &str) -> pb::ClusterSummary {
    let all = c
        .list_clusters(req(
            Some(TOKEN_A),
            pb::ListClustersRequest {
                management_cluster: MC.into(),
                namespace: "team-a".into(),
                ..Default::default()
            },
        ))
        .await
        .unwrap()
        .into_inner();
    all.clusters
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} not listed"))
}

/// The topology objects of namespace `ns` (and its Clusters), without status and
/// server metadata: what plans speak of.
async fn topology_objects(api: &ManagementCluster, ns: &str) -> BTreeMap<(String, String), Value> {
    let mut objects = BTreeMap::new();
    for (api_version, kind) in [
        ("cluster.x-k8s.io/v1beta1", "Cluster"),
        ("cluster.x-k8s.io/v1beta1", "MachineDeployment"),
        ("cluster.x-k8s.io/v1beta1", "MachineHealthCheck"),
        (
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlane",
        ),
        (
            "bootstrap.cluster.x-k8s.io/v1beta1",
            "KubeadmConfigTemplate",
        ),
        ("infrastructure.cluster.x-k8s.io/v1beta1", "DockerCluster"),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "DockerMachineTemplate",
        ),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "DockerClusterTemplate",
        ),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "DockerMachinePoolTemplate",
        ),
        (
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlaneTemplate",
        ),
    ] {
        for o in api.list(api_version, kind, ns, &[]).await.unwrap() {
            let name = o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            objects.insert((kind.to_string(), name), plan::clean(&o));
        }
    }
    objects
}

type Keys = BTreeSet<(String, String)>;

/// Created, modified and deleted between two [`topology_objects`].
fn changes(
    before: &BTreeMap<(String, String), Value>,
    after: &BTreeMap<(String, String), Value>,
) -> [Keys; 3] {
    [
        after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .cloned()
            .collect(),
        after
            .iter()
            .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
            .map(|(k, _)| k.clone())
            .collect(),
        before
            .keys()
            .filter(|k| !after.contains_key(*k))
            .cloned()
            .collect(),
    ]
}

/// A plan's objects, but the shim Secret: a new Cluster's first reconcile creates it
/// and the next one (once the Cluster owns its objects) deletes it, while the
/// appliers here run as many reconciles as they like before the comparison.
fn plan_keys(plan: &pb::PlanResponse) -> [Keys; 3] {
    let keys = |l: &[pb::PlannedObject]| {
        l.iter()
            .filter(|o| !(o.kind == "Secret" && o.name.ends_with("-shim")))
            .map(|o| (o.kind.clone(), o.name.clone()))
            .collect()
    };
    [
        keys(&plan.created),
        keys(&plan.modified),
        keys(&plan.deleted),
    ]
}

async fn apply_as(c: &mut Client, token: &str, objects: &[Value]) {
    c.apply(req(
        Some(token),
        pb::ApplyRequest {
            management_cluster: MC.into(),
            objects: bytes(objects),
            dry_run: false,
        },
    ))
    .await
    .unwrap();
}

/// Waits until every Cluster of `ns` is reconciled for its generation, then a little
/// longer while nothing moves (simulated providers answer after 200 ms).
async fn settled(api: &ManagementCluster, ns: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut last = BTreeMap::new();
    loop {
        let clusters = api
            .list("cluster.x-k8s.io/v1beta1", "Cluster", ns, &[])
            .await
            .unwrap();
        let now = topology_objects(api, ns).await;
        // A new Cluster's shim Secret goes one reconcile after the providers adopt its
        // objects, and takes its owner reference off them: not settled before that.
        let shims = api
            .list("v1", "Secret", ns, &[])
            .await
            .unwrap()
            .iter()
            .filter(|s| {
                s["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("-shim"))
            })
            .count();
        if clusters.iter().all(reconciled) && shims == 0 && now == last {
            return;
        }
        assert!(Instant::now() < deadline, "{ns} did not settle");
        last = now;
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
}

async fn plan_of(c: &mut Client, proposed: &[Value], name: &str) -> pb::PlanResponse {
    c.plan(req(
        Some(TOKEN_A),
        pb::PlanRequest {
            management_cluster: MC.into(),
            namespace: "team-a".into(),
            name: name.into(),
            proposed: bytes(proposed),
        },
    ))
    .await
    .unwrap()
    .into_inner()
}

/// Plans, applies, waits for the appliers, and checks the plan named exactly what
/// changed.
async fn plan_then_apply(fleet: &Fleet, c: &mut Client, proposed: Value) -> pb::PlanResponse {
    let name = proposed["metadata"]["name"].as_str().unwrap().to_string();
    let writes = kube_writes(fleet.kube_port);
    let plan = plan_of(c, std::slice::from_ref(&proposed), &name).await;
    assert_eq!(kube_writes(fleet.kube_port), writes, "Plan writes nothing");
    assert!(plan.errors.is_empty(), "{:?}", plan.errors);
    let before = topology_objects(&fleet.api, "team-a").await;
    apply_as(c, TOKEN_A, &[proposed]).await;
    settled(&fleet.api, "team-a").await;
    let after = topology_objects(&fleet.api, "team-a").await;
    assert_eq!(
        plan_keys(&plan),
        changes(&before, &after),
        "plan vs what happened"
    );
    plan
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_and_impact_say_what_then_happens() {
    let _serial = SERIAL.lock().await;
    let fleet = start("plan").await;
    let c = &mut fleet.client.clone();
    apply_as(c, TOKEN_A, &quick_start("clusterclass.yaml", "team-a")).await;

    // Create: every object of the new Cluster, before it exists.
    let plan = plan_then_apply(&fleet, c, small_cluster("p1", "team-a")).await;
    assert!(plan.created.iter().any(|o| o.kind == "KubeadmControlPlane"));
    // Besides: the class's templates get their owner reference as the class is
    // reconciled on the way.
    assert!(plan.deleted.is_empty());
    assert!(
        plan.modified
            .iter()
            .all(|o| o.name.starts_with("quick-start")),
        "{:?}",
        plan.modified
    );

    // Modify: a scale and a variable that rotates the control plane's template.
    let mut changed = small_cluster("p1", "team-a");
    changed["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = json!(3);
    changed["spec"]["topology"]["variables"][0]["value"] = json!("mirror.example.com/k8s");
    let plan = plan_then_apply(&fleet, c, changed.clone()).await;
    let md = plan
        .modified
        .iter()
        .find(|o| o.kind == "MachineDeployment")
        .unwrap();
    let ops: Value = serde_json::from_slice(&md.patch).unwrap();
    assert!(
        ops.as_array()
            .unwrap()
            .iter()
            .any(|op| op["path"] == "/spec/replicas" && op["value"] == 3),
        "{ops}"
    );
    assert!(
        md.diff.contains("+    replicas: 3") || md.diff.contains("+  replicas: 3"),
        "{}",
        md.diff
    );

    // Delete: the pool goes, another comes.
    changed["spec"]["topology"]["workers"]["machineDeployments"] =
        json!([{"class": "default-worker", "name": "md-9", "replicas": 1}]);
    let plan = plan_then_apply(&fleet, c, changed).await;
    assert!(plan.deleted.iter().any(|o| o.kind == "MachineDeployment"));
    assert!(plan.created.iter().any(|o| o.kind == "MachineDeployment"));

    // A Cluster written in v1beta2 goes through the same door: planned, applied and
    // reconciled exactly as planned.
    let options = topograph_api::convert::Options {
        conversion_data: false,
        ..Default::default()
    };
    let v1beta2 = topograph_api::convert::convert(
        &small_cluster("p2", "team-a"),
        topograph_api::convert::Version::V1Beta2,
        &options,
    )
    .unwrap();
    assert_eq!(v1beta2["apiVersion"], "cluster.x-k8s.io/v1beta2");
    let plan = plan_then_apply(&fleet, c, v1beta2).await;
    assert!(plan.created.iter().any(|o| o.kind == "MachineDeployment"));

    // Impact across 50 Clusters of a class with two pool classes; 20 use the second.
    let mut class = quick_start("clusterclass.yaml", "team-b");
    let cc = class
        .iter_mut()
        .find(|o| o["kind"] == "ClusterClass")
        .unwrap();
    let mut gpu = cc["spec"]["workers"]["machineDeployments"][0].clone();
    gpu["class"] = json!("gpu");
    cc["spec"]["workers"]["machineDeployments"]
        .as_array_mut()
        .unwrap()
        .push(gpu);
    apply_as(c, TOKEN_B, &class).await;
    let clusters: Vec<Value> = (0..50)
        .map(|i| {
            let mut c = small_cluster(&format!("f-{i:02}"), "team-b");
            if i % 5 < 2 {
                c["spec"]["topology"]["workers"]["machineDeployments"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"class": "gpu", "name": "gpu-0", "replicas": 1}));
            }
            c
        })
        .collect();
    apply_as(c, TOKEN_B, &clusters).await;
    settled(&fleet.api, "team-b").await;
    let mut stored = fleet
        .api
        .get(
            "cluster.x-k8s.io/v1beta1",
            "ClusterClass",
            "team-b",
            "quick-start",
        )
        .await
        .unwrap()
        .unwrap();
    stored["spec"]["workers"]["machineDeployments"][1]["minReadySeconds"] = json!(30);
    let started = Instant::now();
    let mut stream = c
        .impact(req(
            Some(TOKEN_B),
            pb::ImpactRequest {
                management_cluster: MC.into(),
                proposed: bytes(std::slice::from_ref(&stored)),
            },
        ))
        .await
        .unwrap()
        .into_inner();
    let mut items = Vec::new();
    while let Some(item) = stream.message().await.unwrap() {
        items.push(item);
    }
    println!(
        "impact of a class change on 50 Clusters: {:.2} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(items.len(), 50);
    assert!(items.iter().all(|i| i.blocking.is_empty()));
    let predicted: BTreeSet<String> = items
        .iter()
        .filter(|i| {
            let p = i.plan.clone().unwrap_or_default();
            !(p.created.is_empty() && p.modified.is_empty() && p.deleted.is_empty())
        })
        .map(|i| i.name.clone())
        .collect();
    assert_eq!(predicted.len(), 20, "{predicted:?}");

    let before = topology_objects(&fleet.api, "team-b").await;
    apply_as(c, TOKEN_B, &[stored]).await;
    settled(&fleet.api, "team-b").await;
    let after = topology_objects(&fleet.api, "team-b").await;
    let [created, modified, deleted] = changes(&before, &after);
    let mut changed_clusters = BTreeSet::new();
    for key in created.iter().chain(&modified).chain(&deleted) {
        let object = after.get(key).or_else(|| before.get(key)).unwrap();
        if let Some(name) = object["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"].as_str() {
            changed_clusters.insert(name.to_string());
        }
    }
    assert_eq!(predicted, changed_clusters);
    // team-a sees nothing of team-b's Clusters.
    let refused = c
        .impact(req(
            Some(TOKEN_A),
            pb::ImpactRequest {
                management_cluster: MC.into(),
                proposed: bytes(&class[..1]),
            },
        ))
        .await;
    assert_eq!(
        refused.err().map(|s| s.code()),
        Some(Code::PermissionDenied)
    );
}
