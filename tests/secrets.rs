//! The Kubernetes deployment mode end to end, with real processes: the gateway reads
//! its tenants from a Secret of a "home" cluster (`--tenants-secret`), and the gateway
//! and an applier both find management clusters as labelled Secrets there
//! (`--management-cluster-secrets`, `--home-kubeconfig`). The home cluster and the
//! management cluster are two `topograph-kube`s; redis-server, the render service, the
//! applier and the gateway run beside them.
//!
//! Covered: a token is accepted or refused according to the Secret; rotating the
//! Secret swaps the valid token without a restart, and an invalid edit keeps the
//! previous tenants; an admin's RegisterManagementCluster writes the labelled Secret,
//! and the applier, which knows management clusters only from those Secrets,
//! reconciles a Cluster applied there through the gateway; UnregisterManagementCluster
//! deletes the Secret and both processes forget the management cluster.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use topograph_gateway::tenancy::token_sha256_hex;
use topograph_management::registry::SECRET_LABEL;
use topograph_management::{ManagementCluster, crds};
use topograph_proto::gateway::v1 as pb;
use topograph_proto::gateway::v1::applied_object::Action;
use topograph_proto::gateway::v1::gateway_service_client::GatewayServiceClient;
use topograph_tests::{
    TempDir, binary, free_port, gateway_command, management_cluster, quick_start,
    redis_without_persistence, small_cluster, spawn_gateway, spawn_logged, unconverged,
    wait_for_port,
};

/// The home cluster's namespace holding the fleet's Secrets.
const HOME_NS: &str = "topograph-system";
const TENANTS_SECRET: &str = "gateway-tenants";
/// The management cluster registered during the test.
const MC: &str = "mgmt-b";
/// The tenants' namespace on the management cluster.
const NS: &str = "team-a";
const TOKEN_A: &str = "token-before-rotation";
const TOKEN_B: &str = "token-after-rotation";

type Client = GatewayServiceClient<Channel>;

/// A request carrying `token` as a bearer token.
fn req<T>(token: &str, message: T) -> Request<T> {
    let mut request = Request::new(message);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}")
            .parse()
            .expect("an ASCII bearer token"),
    );
    request
}

/// A tenants document with one admin tenant holding `token`.
fn tenants_document(token: &str) -> String {
    format!(
        "tenants:\n\
         - name: ops\n  tokenSha256: {}\n  managementClusters: ['*']\n  namespaces: ['*']\n  admin: true\n",
        token_sha256_hex(token)
    )
}

/// The tenants Secret's new content, written through `stringData` as an operator's
/// `kubectl apply` of a manifest would (the API server folds it into `data`).
fn with_tenants(mut secret: Value, document: &str) -> Value {
    if let Some(object) = secret.as_object_mut() {
        object.remove("data");
    }
    secret["stringData"] = json!({ "tenants.yaml": document });
    secret
}

async fn rotate_tenants(home: &ManagementCluster, document: &str) {
    let current = home
        .get("v1", "Secret", HOME_NS, TENANTS_SECRET)
        .await
        .expect("reading the tenants Secret")
        .expect("the tenants Secret exists");
    home.replace(&with_tenants(current, document))
        .await
        .expect("replacing the tenants Secret");
}

/// ListManagementClusters as `token`: the cheapest call that needs a valid admin token.
async fn management_clusters(c: &mut Client, token: &str) -> Result<Vec<String>, Status> {
    c.list_management_clusters(req(token, pb::ListManagementClustersRequest {}))
        .await
        .map(|r| r.into_inner().names)
}

/// Whether token A is refused and token B accepted (`Err` says how it stands instead).
async fn rotated(c: &mut Client) -> Result<(), String> {
    let a = management_clusters(c, TOKEN_A).await;
    let b = management_clusters(c, TOKEN_B).await;
    match (&a, &b) {
        (Err(e), Ok(_)) if e.code() == Code::Unauthenticated => Ok(()),
        _ => Err(format!("token A: {a:?}; token B: {b:?}")),
    }
}

/// Polls `check` every 100 ms until it holds; panics with its last answer after
/// `within`.
async fn eventually(
    what: &str,
    within: Duration,
    mut check: impl AsyncFnMut() -> Result<(), String>,
) {
    let deadline = Instant::now() + within;
    loop {
        match check().await {
            Ok(()) => return,
            Err(last) => assert!(
                Instant::now() < deadline,
                "{what}: not within {within:?}; last seen: {last}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether the log at `path` has a line containing every one of `needles`.
fn logged(path: &Path, needles: &[&str]) -> Result<(), String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    if text
        .lines()
        .any(|line| needles.iter().all(|n| line.contains(n)))
    {
        Ok(())
    } else {
        Err(format!("no line with {needles:?} in {}", path.display()))
    }
}

/// A log kept outside the test's directory, for a look after a failure.
fn log_path(process: &str) -> PathBuf {
    std::env::temp_dir().join(format!("topograph-secrets-e2e-{process}.log"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_and_applier_configured_by_secrets() {
    let started = Instant::now();
    let dir = TempDir::new("secrets-e2e");
    let mut processes = Vec::new();

    // No process is given this directory: the management cluster's kubeconfig only
    // reaches the fleet through the home cluster's Secrets.
    let home = management_cluster(&dir.0, "home", &[]);
    processes.push(home.process);
    let home_kubeconfig = dir.0.join("home.kubeconfig");
    let home_kubeconfig = home_kubeconfig
        .to_str()
        .expect("a UTF-8 temp directory")
        .to_string();
    let managed = management_cluster(
        &dir.0,
        MC,
        &["--simulate-providers", "--provider-delay-ms", "200"],
    );
    let managed_index = processes.len();
    processes.push(managed.process);

    let home_api = ManagementCluster::from_kubeconfig_yaml(&home.kubeconfig)
        .await
        .expect("a client of the home cluster");
    home_api
        .create(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": HOME_NS}}))
        .await
        .expect("creating the home namespace");
    home_api
        .create(&with_tenants(
            json!({
                "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": TENANTS_SECRET, "namespace": HOME_NS},
            }),
            &tenants_document(TOKEN_A),
        ))
        .await
        .expect("creating the tenants Secret");

    // The gateway does not install CRDs; a management cluster comes with them.
    let managed_api = ManagementCluster::from_kubeconfig_yaml(&managed.kubeconfig)
        .await
        .expect("a client of the management cluster");
    let mut seed = crds::cluster_api();
    seed.extend(crds::for_objects(&quick_start("clusterclass.yaml", NS)));
    seed.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    for object in &seed {
        managed_api
            .create(object)
            .await
            .unwrap_or_else(|e| panic!("seeding the management cluster with {object}: {e}"));
    }

    let redis_port = free_port();
    processes.push(redis_without_persistence(redis_port));
    let render_port = free_port();
    processes.push(spawn_logged(
        Command::new(binary("topograph-render", "topograph-render"))
            .args(["--listen", &format!("127.0.0.1:{render_port}")]),
        &log_path("render"),
    ));
    wait_for_port(redis_port, "redis-server");
    wait_for_port(render_port, "topograph-render");
    let redis = format!("redis://127.0.0.1:{redis_port}");
    let render = format!("http://127.0.0.1:{render_port}");

    let applier_log = log_path("applier");
    processes.push(spawn_logged(
        Command::new(binary("topograph-applier", "topograph-applier"))
            .args(["--redis", &redis, "--render", &render, "--workers", "2"])
            .args(["--quiet-ms", "100", "--lease-seconds", "5"])
            .args(["--management-cluster-secrets", HOME_NS])
            .args(["--home-kubeconfig", &home_kubeconfig]),
        &applier_log,
    ));
    let gateway_log = log_path("gateway");
    let (gateway_process, addr) = spawn_gateway(
        gateway_command().args([
            "--render",
            &render,
            "--redis",
            &redis,
            "--tenants-secret",
            &format!("{HOME_NS}/{TENANTS_SECRET}"),
            "--management-cluster-secrets",
            HOME_NS,
            "--home-kubeconfig",
            &home_kubeconfig,
            "--reload-seconds",
            "1",
        ]),
        &gateway_log,
    );
    processes.push(gateway_process);
    let mut client = GatewayServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap_or_else(|e| panic!("connecting to the gateway at {addr}: {e}"));
    let c = &mut client;
    println!("fleet started in {:.1} s", started.elapsed().as_secs_f64());

    // a. The Secret decides who may call.
    let names = management_clusters(c, TOKEN_A)
        .await
        .expect("token A is in the tenants Secret");
    assert!(names.is_empty(), "nothing registered yet: {names:?}");
    let refused = management_clusters(c, TOKEN_B).await;
    assert_eq!(
        refused.as_ref().err().map(Status::code),
        Some(Code::Unauthenticated),
        "token B is not in the Secret yet: {refused:?}"
    );

    // b. Rotation: the new token works and the old one stops, without a restart.
    rotate_tenants(&home_api, &tenants_document(TOKEN_B)).await;
    let rotating = Instant::now();
    eventually("the rotated tenants", Duration::from_secs(10), async || {
        rotated(c).await
    })
    .await;
    println!(
        "rotation took effect after {:.1} s",
        rotating.elapsed().as_secs_f64()
    );

    // A broken edit (a misspelt field) must not lock everyone out: once the gateway
    // has read it and said so, the last good tenants still hold.
    rotate_tenants(
        &home_api,
        &format!(
            "tenants:\n- name: ops\n  tokenSha: {}\n  admin: true\n",
            token_sha256_hex(TOKEN_A)
        ),
    )
    .await;
    eventually(
        "the gateway's warning about the invalid tenants",
        Duration::from_secs(10),
        // The field named, so an unrelated failed read cannot stand in for this one.
        async || {
            logged(
                &gateway_log,
                &["tenants not reloaded", "unknown field `tokenSha`"],
            )
        },
    )
    .await;
    rotated(c)
        .await
        .expect("an invalid tenants document keeps the previous tenants");

    // c. Registration writes the labelled Secret in the home cluster.
    let registered = c
        .register_management_cluster(req(
            TOKEN_B,
            pb::RegisterManagementClusterRequest {
                name: MC.into(),
                kubeconfig: managed.kubeconfig.clone().into_bytes(),
            },
        ))
        .await
        .expect("registering the management cluster")
        .into_inner();
    assert!(registered.created, "{MC} was not known before");
    let secrets = home_api
        .list("v1", "Secret", HOME_NS, &[(SECRET_LABEL, MC)])
        .await
        .expect("listing the home cluster's Secrets");
    let names: Vec<&str> = secrets
        .iter()
        .filter_map(|s| s["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, [MC], "the registration Secrets: {secrets:?}");
    assert!(
        secrets[0]["data"]["value"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "the kubeconfig is under the data key `value`: {}",
        secrets[0]
    );
    assert_eq!(
        management_clusters(c, TOKEN_B)
            .await
            .expect("listing management clusters"),
        [MC]
    );

    // d. A Cluster applied there is reconciled by the applier, which only knows the
    // management cluster from the Secret the gateway wrote.
    let mut objects = quick_start("clusterclass.yaml", NS);
    objects.push(small_cluster("dev", NS));
    let applied = c
        .apply(req(
            TOKEN_B,
            pb::ApplyRequest {
                management_cluster: MC.into(),
                objects: objects
                    .iter()
                    .map(|o| serde_json::to_vec(o).expect("JSON of an object"))
                    .collect(),
                dry_run: false,
            },
        ))
        .await
        .expect("applying the quick-start class and a Cluster")
        .into_inner();
    assert!(
        applied
            .objects
            .iter()
            .all(|o| o.action == Action::Created as i32),
        "{:?}",
        applied.objects
    );
    let applying = Instant::now();
    eventually(
        "the Cluster's reconcile",
        Duration::from_secs(60),
        async || match managed_api
            .get("cluster.x-k8s.io/v1beta1", "Cluster", NS, "dev")
            .await
        {
            Ok(Some(cluster)) => unconverged(&cluster).map_or(Ok(()), Err),
            Ok(None) => Err("the Cluster is gone".to_string()),
            Err(e) => Err(format!("reading the Cluster: {e}")),
        },
    )
    .await;
    println!(
        "reconciled {:.1} s after Apply",
        applying.elapsed().as_secs_f64()
    );
    logged(
        &applier_log,
        &["management clusters changed", &format!("added=[\"{MC}\"]")],
    )
    .expect("the applier picked the management cluster up after it started");
    let got = c
        .get_cluster(req(
            TOKEN_B,
            pb::GetClusterRequest {
                management_cluster: MC.into(),
                namespace: NS.into(),
                name: "dev".into(),
            },
        ))
        .await
        .expect("GetCluster through the gateway")
        .into_inner();
    assert!(
        got.conditions
            .iter()
            .any(|c| c.r#type == "TopologyReconciled" && c.status == "True"),
        "{:?}",
        got.conditions
    );
    for kind in ["KubeadmControlPlane", "DockerCluster", "MachineDeployment"] {
        assert!(
            got.owned.iter().any(|o| o.kind == kind),
            "{kind} missing from {:?}",
            got.owned
        );
    }

    // e. Unregistration deletes the Secret; the gateway forgets the management cluster
    // at once and the applier on its next refresh.
    let removed = c
        .unregister_management_cluster(req(
            TOKEN_B,
            pb::UnregisterManagementClusterRequest { name: MC.into() },
        ))
        .await
        .expect("unregistering the management cluster")
        .into_inner();
    assert!(removed.removed, "{MC} was registered");
    let left = home_api
        .get("v1", "Secret", HOME_NS, MC)
        .await
        .expect("reading the home cluster's Secrets");
    assert!(left.is_none(), "the Secret stayed: {left:?}");
    assert!(
        management_clusters(c, TOKEN_B)
            .await
            .expect("listing management clusters")
            .is_empty()
    );
    let gone = c
        .get_cluster(req(
            TOKEN_B,
            pb::GetClusterRequest {
                management_cluster: MC.into(),
                namespace: NS.into(),
                name: "dev".into(),
            },
        ))
        .await;
    assert_eq!(
        gone.as_ref().err().map(Status::code),
        Some(Code::NotFound),
        "{gone:?}"
    );
    eventually(
        "the applier dropping the management cluster",
        Duration::from_secs(10),
        async || {
            logged(
                &applier_log,
                &[
                    "management clusters changed",
                    &format!("removed=[\"{MC}\"]"),
                ],
            )
        },
    )
    .await;
    // ...and stops watching it: its watches end with it, so a management cluster that
    // is gone and then unreachable costs nothing (no retrying watches, no errors).
    eventually(
        "the applier stopping its watches of the management cluster",
        Duration::from_secs(10),
        async || {
            logged(
                &applier_log,
                &["stopped watching", &format!("management_cluster={MC}")],
            )
        },
    )
    .await;
    drop(processes.remove(managed_index));
    let errors_before = watch_errors(&applier_log);
    // A window for something not to happen: watches left behind retry within ~1 s.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        watch_errors(&applier_log),
        errors_before,
        "watches of the unregistered management cluster kept running after its API server went"
    );
    println!("done after {:.1} s", started.elapsed().as_secs_f64());
}

/// How many watch errors the log at `path` has reported.
fn watch_errors(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains("watch error"))
        .count()
}
