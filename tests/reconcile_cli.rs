//! The `topograph-kube` and `topograph reconcile` command lines (both contracts): start
//! the in-memory API server as a process, load the quick-start class and Cluster into
//! it, and reconcile with the real `topograph` binary until nothing is left to write.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_management::{ManagementCluster, crds};
use topograph_tests::{binary, quick_start, run};

/// A running `topograph-kube`, killed when dropped.
struct Kube {
    child: Child,
    url: String,
    kubeconfig: PathBuf,
    _dir: TempDir,
}

impl Drop for Kube {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("topograph-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start_kube(tag: &str) -> Kube {
    let dir = TempDir::new(tag);
    let kubeconfig = dir.0.join("kubeconfig");
    let mut child = Command::new(binary("topograph-kube", "topograph-kube"))
        .args(["--listen", "127.0.0.1:0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The first stdout line is the URL, printed once the server serves.
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    assert!(kubeconfig.exists());
    Kube {
        child,
        url,
        kubeconfig,
        _dir: dir,
    }
}

async fn load(kubeconfig: &Path) {
    let api = ManagementCluster::from_kubeconfig(kubeconfig)
        .await
        .unwrap();
    let class = quick_start("clusterclass.yaml", "default");
    let cluster = quick_start("cluster.yaml", "default");
    let mut objects = crds::cluster_api();
    objects.extend(crds::for_objects(&class));
    for crd in &objects {
        api.create(crd).await.unwrap();
    }
    for object in class.iter().chain(&cluster) {
        api.create(object).await.unwrap();
    }
}

fn reconcile(kube: &Kube, cluster: &str) -> (bool, Value, String) {
    let kubeconfig = kube.kubeconfig.to_str().unwrap();
    let out = run(&[
        "reconcile",
        "--kubeconfig",
        kubeconfig,
        "--cluster",
        cluster,
        "-o",
        "json",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (out.status.success(), json, stderr)
}

#[tokio::test]
async fn reconcile_prints_its_counts_and_a_converged_cluster_makes_no_writes() {
    let kube = start_kube("reconcile-cli");
    load(&kube.kubeconfig).await;

    let (ok, first, stderr) = reconcile(&kube, "default/dev");
    assert!(ok, "{stderr}");
    assert_eq!(first["created"], 16, "{first}");
    assert_eq!(first["deleted"], 0);
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["created", "deleted", "updated", "writes"],
        "the output contract"
    );
    assert!(first["writes"].as_u64().unwrap() >= 16);

    let mut last = first;
    for _ in 0..5 {
        if last["writes"] == 0 {
            break;
        }
        let (ok, next, stderr) = reconcile(&kube, "default/dev");
        assert!(ok, "{stderr}");
        last = next;
    }
    assert_eq!(
        last,
        json!({"created": 0, "updated": 0, "deleted": 0, "writes": 0})
    );

    // The server's own counter agrees: one more reconcile, no write requests.
    let before = request_counts(&kube.url);
    let (ok, _, _) = reconcile(&kube, "default/dev");
    assert!(ok);
    let after = request_counts(&kube.url);
    for verb in ["create", "update", "patch", "delete"] {
        assert_eq!(before[verb], after[verb], "{verb}: {before} -> {after}");
    }
    assert_ne!(before["get"], after["get"]);
}

/// The server's request counters (`GET /_topograph/requests`), over a plain socket.
fn request_counts(url: &str) -> Value {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /_topograph/requests HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"))
}

#[tokio::test]
async fn a_failed_reconcile_exits_1_with_the_error() {
    let kube = start_kube("reconcile-cli-missing");
    load(&kube.kubeconfig).await;
    let (ok, out, stderr) = reconcile(&kube, "default/missing");
    assert!(!ok);
    assert_eq!(out, Value::Null);
    assert!(
        stderr.contains("Cluster default/missing not found"),
        "{stderr}"
    );

    let kubeconfig = kube.kubeconfig.to_str().unwrap();
    let usage = run(&["reconcile", "--kubeconfig", kubeconfig, "--cluster", "dev"]);
    assert_eq!(usage.status.code(), Some(2));
}

/// A running `topograph-render`, killed when dropped.
struct RenderServer(Child, String);

impl Drop for RenderServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_render_service() -> RenderServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(binary("topograph-render", "topograph-render"))
        .args(["--listen", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Owned from here on, so the process is killed and reaped whatever happens.
    let server = RenderServer(child, format!("http://{addr}"));
    for _ in 0..200 {
        if std::net::TcpStream::connect(&addr).is_ok() {
            return server;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("topograph-render did not listen on {addr}");
}

/// The specs of the objects a reconcile made, by kind and name.
async fn owned_specs(kubeconfig: &Path) -> Vec<(String, String, Value)> {
    let api = ManagementCluster::from_kubeconfig(kubeconfig)
        .await
        .unwrap();
    let mut specs = Vec::new();
    for (api_version, kind) in [
        ("cluster.x-k8s.io/v1beta1", "MachineDeployment"),
        ("cluster.x-k8s.io/v1beta1", "MachineHealthCheck"),
        (
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlane",
        ),
        ("infrastructure.cluster.x-k8s.io/v1beta1", "DockerCluster"),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "DockerMachineTemplate",
        ),
        (
            "bootstrap.cluster.x-k8s.io/v1beta1",
            "KubeadmConfigTemplate",
        ),
    ] {
        for o in api
            .list(
                api_version,
                kind,
                "default",
                &[("topology.cluster.x-k8s.io/owned", "")],
            )
            .await
            .unwrap()
        {
            specs.push((kind.to_string(), o.name().to_string(), o["spec"].clone()));
        }
    }
    specs.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    specs
}

#[tokio::test]
async fn reconciling_through_the_render_service_makes_the_same_objects() {
    let render = start_render_service();
    let local = start_kube("reconcile-local");
    let remote = start_kube("reconcile-remote");
    load(&local.kubeconfig).await;
    load(&remote.kubeconfig).await;

    let (ok, first, stderr) = reconcile(&local, "default/dev");
    assert!(ok, "{stderr}");
    let kubeconfig = remote.kubeconfig.to_str().unwrap();
    let through = |extra: &[&str]| {
        let mut args = vec![
            "reconcile",
            "--kubeconfig",
            kubeconfig,
            "--cluster",
            "default/dev",
            "-o",
            "json",
            "--render-service",
            &render.1,
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let remote_first = through(&[]);
    assert_eq!(first, remote_first);
    let specs = owned_specs(&local.kubeconfig).await;
    assert_eq!(specs.len(), 16 - 1, "everything but the shim Secret");
    assert_eq!(specs, owned_specs(&remote.kubeconfig).await);

    // Converges the same way, to zero writes.
    let mut last = remote_first;
    for _ in 0..5 {
        if last["writes"] == 0 {
            break;
        }
        last = through(&[]);
    }
    assert_eq!(last["writes"], 0);
}
