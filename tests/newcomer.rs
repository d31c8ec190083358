//! A newcomer's first session, as the README tells it: `topograph up`, then the client
//! subcommands against it — list, get, plan a change, apply it, see it reconciled — and
//! `up` without a token printing the one it generated.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use topograph_tests::{TempDir, binary, root, succeeded, topograph_up};

const TOKEN: &str = "newcomer-token";

fn topograph(addr: &str, args: &[&str]) -> Output {
    Command::new(binary("topograph-cli", "topograph"))
        .args(args)
        .args(["--addr", addr, "--token", TOKEN])
        .current_dir(root())
        .output()
        .unwrap()
}

fn reconciled(cluster: &Value) -> bool {
    cluster["status"]["v1beta2"]["conditions"]
        .as_array()
        .is_some_and(|l| {
            l.iter().any(|c| {
                c["type"] == "TopologyReconciled"
                    && c["status"] == "True"
                    && c["observedGeneration"] == cluster["metadata"]["generation"]
            })
        })
}

fn wait_reconciled(addr: &str, what: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let cluster: Value = serde_json::from_str(&succeeded(topograph(
            addr,
            &["get", "cluster", "dev", "-n", "default", "-o", "json"],
        )))
        .unwrap();
        if reconciled(&cluster) && what(&cluster) {
            return cluster;
        }
        assert!(Instant::now() < deadline, "not reconciled: {cluster:#}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn up_then_list_get_plan_apply() {
    let (_up, addr, seen, _rest) = topograph_up(&["--token", TOKEN]);
    assert_eq!(
        seen.len(),
        1,
        "only the listening line with --token: {seen:?}"
    );

    // The example Cluster is there and gets reconciled.
    let listed = succeeded(topograph(&addr, &["list", "clusters"]));
    assert!(
        listed
            .lines()
            .any(|l| l.contains("dev") && l.contains("quick-start")),
        "{listed}"
    );
    let cluster = wait_reconciled(&addr, |_| true);
    assert_eq!(
        cluster["spec"]["controlPlaneRef"]["kind"],
        "KubeadmControlPlane"
    );

    // Plan a scale of md-0: one MachineDeployment modified, with the patch.
    let dir = TempDir::new("newcomer");
    let mut changed = cluster.clone();
    for field in [
        "resourceVersion",
        "uid",
        "generation",
        "creationTimestamp",
        "managedFields",
    ] {
        changed["metadata"].as_object_mut().unwrap().remove(field);
    }
    changed.as_object_mut().unwrap().remove("status");
    // Converged means: the plan of the Cluster as it is has nothing left to do (the
    // first reconciles leave one step behind them, the shim Secret's removal once the
    // providers have adopted the objects).
    let same = dir.0.join("same.json");
    std::fs::write(&same, serde_json::to_string(&changed).unwrap()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let plan: Value = serde_json::from_str(&succeeded(topograph(
            &addr,
            &["plan", "-f", same.to_str().unwrap(), "-o", "json"],
        )))
        .unwrap();
        if plan["created"] == json!([])
            && plan["modified"] == json!([])
            && plan["deleted"] == json!([])
        {
            break;
        }
        assert!(Instant::now() < deadline, "never converged: {plan:#}");
        std::thread::sleep(Duration::from_millis(300));
    }
    changed["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = json!(5);
    let file = dir.0.join("dev.json");
    std::fs::write(&file, serde_json::to_string(&changed).unwrap()).unwrap();
    let file = file.to_str().unwrap();
    let plan: Value = serde_json::from_str(&succeeded(topograph(
        &addr,
        &["plan", "-f", file, "-o", "json"],
    )))
    .unwrap();
    assert_eq!(plan["created"], json!([]), "{plan:#}");
    assert_eq!(plan["deleted"], json!([]), "{plan:#}");
    let modified = plan["modified"].as_array().unwrap();
    let kinds: Vec<&str> = modified
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Cluster", "MachineDeployment"], "{plan:#}");
    let md = &modified[1];
    assert_eq!(md["namespace"], "default");
    assert!(
        md["name"].as_str().unwrap().starts_with("dev-md-0-"),
        "{md}"
    );
    assert!(
        md["patch"]
            .as_array()
            .unwrap()
            .iter()
            .any(|op| op["path"] == "/spec/replicas" && op["value"] == 5),
        "{md}"
    );

    // Apply it; the MachineDeployment follows.
    let applied = succeeded(topograph(&addr, &["apply", "-f", file]));
    assert_eq!(applied.trim(), "Cluster default/dev configured");
    wait_reconciled(&addr, |c| {
        c["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] == 5
    });
    let got = succeeded(topograph(
        &addr,
        &["get", "cluster", "dev", "-n", "default"],
    ));
    assert!(got.contains("MachineDeployment dev-md-0-"), "{got}");

    // A wrong token is refused, exit 1.
    let refused = Command::new(binary("topograph-cli", "topograph"))
        .args(["list", "clusters", "--addr", &addr, "--token", "nope"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Unauthenticated"));
}

#[test]
fn up_without_a_token_prints_the_one_it_generated() {
    let (_up, addr, seen, _rest) = topograph_up(&["--no-examples"]);
    assert_eq!(seen.len(), 2, "{seen:?}");
    let token = seen[0]
        .strip_prefix("token: ")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert!(token.len() >= 32, "{token}");
    let listed = Command::new(binary("topograph-cli", "topograph"))
        .args([
            "list", "clusters", "-o", "json", "--addr", &addr, "--token", token,
        ])
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]");
}

/// A gateway that is not there: the address as printed is taken, and the error says
/// what was tried and why it failed.
#[test]
fn a_failed_connection_says_what_was_tried_and_why() {
    let output = topograph("127.0.0.1:1", &["list", "clusters"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("connecting to http://127.0.0.1:1: transport error")
            && stderr.contains("Connection refused"),
        "{stderr}"
    );
    let output = topograph("unix:///tmp/gateway.sock", &["list", "clusters"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("expected host:port, http://host:port"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A newcomer's own class, of a provider the embedded management cluster has never
/// seen: Apply installs the provider's CRDs (as `topograph crds` writes them) instead of
/// refusing the kinds, and kubectl reaches the cluster through `--kubeconfig-out`.
#[test]
fn up_takes_a_class_of_any_provider_and_writes_a_kubeconfig() {
    let dir = TempDir::new("newcomer-own-class");
    let kubeconfig = dir.0.join("kubeconfig");
    let kubeconfig_arg = kubeconfig.display().to_string();
    let (_up, addr, _seen, _rest) = topograph_up(&[
        "--no-examples",
        "--token",
        TOKEN,
        "--kubeconfig-out",
        &kubeconfig_arg,
    ]);
    // The quick-start class and Cluster, moved to a provider nobody installed.
    let own = |file: &str| {
        std::fs::read_to_string(root().join("examples/quick-start").join(file))
            .unwrap()
            .replace(
                "infrastructure.cluster.x-k8s.io",
                "infrastructure.acme.example",
            )
            .replace("Docker", "Acme")
    };
    let class = dir.0.join("class.yaml");
    std::fs::write(&class, own("clusterclass.yaml")).unwrap();
    let cluster = dir.0.join("cluster.yaml");
    std::fs::write(&cluster, own("cluster.yaml")).unwrap();
    succeeded(topograph(
        &addr,
        &[
            "apply",
            "-f",
            &class.display().to_string(),
            "-f",
            &cluster.display().to_string(),
        ],
    ));

    // kubectl sees the installed CRDs, templates and stamped kinds alike, and the
    // Cluster the gateway wrote.
    let kubectl = |args: &[&str]| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .output()
    };
    let Ok(crds) = kubectl(&["get", "crds", "-o", "name"]) else {
        eprintln!("skipping the kubectl half: no kubectl on PATH");
        return;
    };
    let crds = succeeded(crds);
    for crd in [
        "acmeclustertemplates.infrastructure.acme.example",
        "acmeclusters.infrastructure.acme.example",
        "acmemachinetemplates.infrastructure.acme.example",
    ] {
        assert!(crds.contains(crd), "{crd} in {crds}");
    }
    let clusters = succeeded(kubectl(&["get", "clusters", "-A", "-o", "name"]).unwrap());
    assert!(
        clusters.contains("cluster.cluster.x-k8s.io/dev"),
        "{clusters}"
    );
}

#[test]
fn up_with_the_example_extension_holds_an_upgrade_until_its_answer_changes() {
    let dir = TempDir::new("newcomer-extension");
    let answers = dir.0.join("answers.json");
    std::fs::write(&answers, "{}").unwrap();
    let answers_arg = answers.display().to_string();
    let (_up, addr, _seen, _rest) = topograph_up(&[
        "--token",
        TOKEN,
        "--example-extension",
        "--hook-responses",
        &answers_arg,
    ]);
    let before = wait_reconciled(&addr, |c| {
        c["metadata"]["annotations"]["runtime.cluster.x-k8s.io/pending-hooks"].is_null()
            && c["status"]["controlPlaneReady"] == true
    });
    let version = before["spec"]["topology"]["version"].as_str().unwrap();
    assert_eq!(version, "v1.30.0");

    // The extension holds upgrades; the Cluster says so, with the extension's words.
    std::fs::write(
        &answers,
        json!({"BeforeClusterUpgrade": {"status": "Success", "retryAfterSeconds": 1, "message": "change freeze"}})
            .to_string(),
    )
    .unwrap();
    let mut cluster = before.clone();
    cluster["spec"]["topology"]["version"] = json!("v1.31.0");
    for key in [
        "status",
        "metadata/managedFields",
        "metadata/resourceVersion",
    ] {
        let mut parts = key.split('/');
        match (parts.next(), parts.next()) {
            (Some(a), Some(b)) => {
                if let Some(o) = cluster[a].as_object_mut() {
                    o.remove(b);
                }
            }
            (Some(a), None) => {
                if let Some(o) = cluster.as_object_mut() {
                    o.remove(a);
                }
            }
            _ => {}
        }
    }
    let file = dir.0.join("cluster.json");
    std::fs::write(&file, cluster.to_string()).unwrap();
    succeeded(topograph(
        &addr,
        &["apply", "-f", &file.display().to_string()],
    ));
    let condition = |c: &Value| {
        c["status"]["v1beta2"]["conditions"]
            .as_array()
            .and_then(|l| l.iter().find(|x| x["type"] == "TopologyReconciled"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let held = loop {
        let c: Value = serde_json::from_str(&succeeded(topograph(
            &addr,
            &["get", "cluster", "dev", "-n", "default", "-o", "json"],
        )))
        .unwrap();
        if condition(&c)["reason"] == "LifecycleHookBlocking" {
            break c;
        }
        assert!(Instant::now() < deadline, "never held: {c:#}");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(
        condition(&held)["message"],
        "hook \"BeforeClusterUpgrade\" is blocking: change freeze"
    );

    // Go: the upgrade runs to the end without anything else touching the Cluster.
    std::fs::write(&answers, "{}").unwrap();
    wait_reconciled(&addr, |c| {
        c["metadata"]["annotations"]["runtime.cluster.x-k8s.io/pending-hooks"].is_null()
            && c["metadata"]["annotations"]["topology.internal.cluster.x-k8s.io/upgrade-step"]
                .is_null()
            && c["spec"]["topology"]["version"] == "v1.31.0"
    });
}

/// The Runtime SDK through the gateway: with an ExtensionConfig on the management
/// cluster, Apply admits a class with external patches (and its Cluster, with Cluster
/// API's warning while the class's variables are not discovered yet), the Cluster is
/// reconciled with the extension's patches, later Clusters are checked against the
/// variables the extension defined, and a plan renders through the extension.
#[test]
fn up_with_the_example_extension_applies_and_plans_a_class_with_external_patches() {
    let Some((class, cluster)) = topograph_tests::runtimesdk("default") else {
        eprintln!("skipped: the real-world folder is absent");
        return;
    };
    let dir = TempDir::new("newcomer-external-patches");
    let (_up, addr, _seen, _rest) =
        topograph_up(&["--no-examples", "--token", TOKEN, "--example-extension"]);
    let write = |name: &str, object: &Value| {
        let path = dir.0.join(name);
        std::fs::write(&path, object.to_string()).unwrap();
        path.display().to_string()
    };
    let mut args = vec!["apply".to_string()];
    for (i, object) in class.iter().chain([&cluster]).enumerate() {
        args.push("-f".to_string());
        args.push(write(&format!("{i}.json"), object));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let applied = topograph(&addr, &args);
    let stderr = String::from_utf8_lossy(&applied.stderr).to_string();
    succeeded(applied);
    assert!(
        stderr.contains("hasn't been successfully reconciled"),
        "{stderr}"
    );

    let name = cluster["metadata"]["name"].as_str().unwrap().to_string();
    let get = || -> Value {
        serde_json::from_str(&succeeded(topograph(
            &addr,
            &["get", "cluster", &name, "-n", "default", "-o", "json"],
        )))
        .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    while !reconciled(&get()) {
        assert!(Instant::now() < deadline, "not reconciled: {:#}", get());
        std::thread::sleep(Duration::from_millis(300));
    }

    // The class is reconciled now: a Cluster is checked against what the extension
    // defined (imageRepository is a string).
    let mut bad = cluster.clone();
    bad["metadata"]["name"] = json!("bad-variables");
    bad["spec"]["topology"]["variables"] = json!([
        {"name": "kubeadmControlPlaneMaxSurge", "value": "1"},
        {"name": "imageRepository", "value": 5}
    ]);
    let refused = topograph(&addr, &["apply", "-f", &write("bad.json", &bad)]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("spec.topology.variables[imageRepository].value"),
        "{stderr}"
    );

    // Converged first (the providers adopt the objects after the first reconcile, and
    // the shim Secret goes one reconcile later): the plan of the Cluster as it is has
    // nothing left to do.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut same = get();
        same.as_object_mut().unwrap().remove("status");
        let plan: Value = serde_json::from_str(&succeeded(topograph(
            &addr,
            &["plan", "-f", &write("same.json", &same), "-o", "json"],
        )))
        .unwrap();
        if ["created", "modified", "deleted"]
            .iter()
            .all(|k| plan[k] == json!([]))
        {
            break;
        }
        assert!(Instant::now() < deadline, "never converged: {plan:#}");
        std::thread::sleep(Duration::from_millis(300));
    }

    // A plan of a new repository goes through the extension's GeneratePatches.
    let mut changed = get();
    changed["spec"]["topology"]["variables"] = json!([
        {"name": "kubeadmControlPlaneMaxSurge", "value": "1"},
        {"name": "imageRepository", "value": "registry.example"}
    ]);
    changed.as_object_mut().unwrap().remove("status");
    let planned: Value = serde_json::from_str(&succeeded(topograph(
        &addr,
        &["plan", "-f", &write("changed.json", &changed), "-o", "json"],
    )))
    .unwrap();
    let modified = planned["modified"].as_array().cloned().unwrap_or_default();
    let docker_cluster = modified
        .iter()
        .find(|o| o["kind"] == "DockerCluster")
        .unwrap_or_else(|| panic!("{planned:#}"));
    assert_eq!(
        docker_cluster["patch"],
        json!([{"op": "replace", "path": "/spec/loadBalancer/imageRepository", "value": "registry.example"}]),
        "{planned:#}"
    );
    assert!(
        planned["errors"].as_array().is_none_or(|e| e.is_empty()),
        "{planned:#}"
    );
}
