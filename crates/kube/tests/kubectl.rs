//! The real `topograph-kube` binary driven by the real kubectl: create, get, patch,
//! replace with a stale resourceVersion, delete, `get --watch`, and the snapshot kept
//! across a graceful (SIGTERM) restart. kubectl must be installed (CI: `scripts/test`
//! installs the Debian package kubernetes-client, kubectl 1.20); no `--validate=false`
//! is needed: the server answers kubectl's OpenAPI request with an empty document.
//!
//! The typed commands (`create namespace|secret|configmap`, which kubectl 1.32 and later
//! send in protobuf) and `kubectl get`'s printing of the server's Tables run with every
//! kubectl at hand: the one on PATH and those listed in `TOPOGRAPH_KUBECTLS`
//! (`scripts/test` adds Debian's 1.20 when PATH has a newer one).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn kubectl_path() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("kubectl"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("kubectl is not on PATH: install the Debian package kubernetes-client (apt-get install -y kubernetes-client); scripts/test does this on CI")
        })
}

struct Running {
    child: Child,
    kubectl: PathBuf,
    dir: PathBuf,
    kubeconfig: PathBuf,
    /// Whether dropping removes `dir` (not when a restarted server reuses it).
    remove_dir: bool,
}

fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "topograph-kubectl-{name}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Starts the binary on a free port and waits for the URL it prints.
fn start(dir: &Path, extra: &[&str]) -> Running {
    start_for(dir, extra, kubectl_path())
}

/// The same, driven by the given kubectl.
fn start_for(dir: &Path, extra: &[&str], kubectl: PathBuf) -> Running {
    let kubeconfig = dir.join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_topograph-kube"))
        .args(["--listen", "127.0.0.1:0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("topograph-kube starts");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("URL line");
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "printed {url:?}");
    let written = std::fs::read_to_string(&kubeconfig).expect("kubeconfig written");
    assert!(written.contains(&format!("server: {url}")), "{written}");
    Running {
        child,
        kubectl,
        dir: dir.to_path_buf(),
        kubeconfig,
        remove_dir: true,
    }
}

impl Running {
    fn kubectl_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.kubectl);
        // Own HOME and cache: kubectl caches discovery per host:port and must not share it.
        cmd.env("HOME", &self.dir)
            .env_remove("KUBECONFIG")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args);
        cmd
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_command(args).output().expect("kubectl runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        serde_json::from_str(&self.ok(&args)).expect("kubectl printed JSON")
    }

    fn file(&self, name: &str, contents: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, contents).expect("write manifest");
        path.to_string_lossy().into_owned()
    }

    fn terminate(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        for _ in 0..100 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("topograph-kube did not stop within 5 s of SIGTERM");
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.remove_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: machinedeployments.cluster.x-k8s.io
  labels:
    cluster.x-k8s.io/v1beta1: v1beta1
spec:
  group: cluster.x-k8s.io
  scope: Namespaced
  names:
    plural: machinedeployments
    singular: machinedeployment
    kind: MachineDeployment
    shortNames: [md]
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    subresources:
      status: {}
"#;

const MD: &str = r#"apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: md1
  labels:
    app: web
spec:
  replicas: 2
"#;

const CM: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
data:
  a: b
"#;

#[test]
fn kubectl_create_get_patch_replace_delete() {
    let server = start(&temp_dir("crud"), &[]);
    let crd = server.file("crd.yaml", CRD);
    let md = server.file("md.yaml", MD);
    let cm = server.file("cm.yaml", CM);
    assert!(server.ok(&["create", "-f", &crd]).contains(
        "customresourcedefinition.apiextensions.k8s.io/machinedeployments.cluster.x-k8s.io created"
    ));
    assert!(
        server
            .ok(&["create", "-f", &md])
            .contains("machinedeployment.cluster.x-k8s.io/md1 created")
    );
    server.ok(&["create", "-f", &cm]);

    let original = server.json(&["get", "machinedeployment", "md1"]);
    assert_eq!(original["spec"]["replicas"], 2);
    assert_eq!(original["metadata"]["generation"], 1);
    assert_eq!(server.json(&["get", "configmap", "cm1"])["data"]["a"], "b");
    let listed = server.json(&["get", "md", "-l", "app=web"]);
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(1));

    server.ok(&[
        "patch",
        "md",
        "md1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    let patched = server.json(&["get", "md", "md1"]);
    assert_eq!(
        (
            patched["spec"]["replicas"].clone(),
            patched["metadata"]["generation"].clone()
        ),
        (3.into(), 2.into())
    );
    server.ok(&["patch", "configmap", "cm1", "-p", r#"{"data":{"c":"d"}}"#]);
    let cm1 = server.json(&["get", "cm", "cm1"]);
    assert_eq!(cm1["data"]["c"], "d");
    // As on a real API server, a ConfigMap has no generation, created or changed.
    assert!(cm1["metadata"].get("generation").is_none(), "{cm1}");

    // Replacing with the resourceVersion read before the patch conflicts.
    let stale = server.file("stale.json", &original.to_string());
    let out = server.kubectl(&["replace", "-f", &stale]);
    assert!(!out.status.success(), "stale replace must fail");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the object has been modified"), "{stderr}");

    server.ok(&["delete", "md", "md1"]);
    let out = server.kubectl(&["get", "md", "md1"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("machinedeployments.cluster.x-k8s.io \"md1\" not found"),
        "{stderr}"
    );
    server.ok(&["delete", "-f", &cm]);
    assert!(!server.kubectl(&["get", "cm", "cm1"]).status.success());
}

#[test]
fn kubectl_get_watch_prints_changes() {
    let server = start(&temp_dir("watch"), &[]);
    server.ok(&["create", "-f", &server.file("crd.yaml", CRD)]);
    server.ok(&["create", "-f", &server.file("md.yaml", MD)]);
    let mut watch = server
        .kubectl_command(&[
            "get",
            "md",
            "--watch",
            "-o",
            "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get --watch starts");
    let (tx, rx) = mpsc::channel();
    let stdout = watch.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_for = |want: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line)
                    if line.split_whitespace().collect::<Vec<_>>()
                        == want.split_whitespace().collect::<Vec<_>>() =>
                {
                    return;
                }
                Ok(_) => {}
                Err(e) => panic!("no line {want:?} from kubectl get --watch: {e}"),
            }
        }
    };
    wait_for("md1 2");
    server.ok(&[
        "patch",
        "md",
        "md1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":5}}"#,
    ]);
    wait_for("md1 5");
    let _ = watch.kill();
    let _ = watch.wait();
}

#[test]
fn snapshot_survives_a_graceful_restart() {
    let dir = temp_dir("snapshot");
    let snapshot = dir.join("state.json");
    let snapshot_arg = snapshot.to_string_lossy().into_owned();
    let mut first = start(&dir, &["--snapshot", &snapshot_arg]);
    first.ok(&["create", "-f", &first.file("crd.yaml", CRD)]);
    first.ok(&["create", "-f", &first.file("md.yaml", MD)]);
    let uid = first.json(&["get", "md", "md1"])["metadata"]["uid"].clone();
    first.remove_dir = false;
    assert!(first.terminate().success(), "SIGTERM is a clean exit");
    let saved: Value = serde_json::from_slice(&std::fs::read(&snapshot).expect("snapshot written"))
        .expect("snapshot is JSON");
    assert!(
        saved
            .as_array()
            .is_some_and(|a| a.iter().any(|o| o["metadata"]["name"] == "md1"))
    );
    drop(first);

    let second = start(&dir, &["--snapshot", &snapshot_arg]);
    assert_eq!(second.json(&["get", "md", "md1"])["metadata"]["uid"], uid);
}

/// Cluster API's DockerCluster with its `controlPlaneEndpoint` schema: `host` required.
const DOCKER_CLUSTER_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: dockerclusters.infrastructure.cluster.x-k8s.io
spec:
  group: infrastructure.cluster.x-k8s.io
  scope: Namespaced
  names:
    plural: dockerclusters
    singular: dockercluster
    kind: DockerCluster
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              controlPlaneEndpoint:
                type: object
                required: [host]
                properties:
                  host: {type: string}
                  port: {type: integer, format: int32, default: 6443}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
    subresources:
      status: {}
"#;

#[test]
fn kubectl_apply_shows_the_schema_refusal() {
    let server = start(&temp_dir("schema"), &[]);
    server.ok(&["apply", "-f", &server.file("crd.yaml", DOCKER_CLUSTER_CRD)]);
    let invalid = server.file(
        "invalid.yaml",
        "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: DockerCluster\nmetadata:\n  name: dc1\nspec:\n  controlPlaneEndpoint:\n    port: 6443\n",
    );
    let out = server.kubectl(&["apply", "-f", &invalid]);
    assert!(!out.status.success(), "an invalid object must be refused");
    // kubectl renders a 422 with causes from its details (kind, name, then each cause's
    // field and message), not from the Status message: what it shows for a real cluster.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "The DockerCluster \"dc1\" is invalid: spec.controlPlaneEndpoint.host: Required value"
    );
    assert!(
        !server
            .kubectl(&["get", "dockercluster", "dc1"])
            .status
            .success()
    );

    // kubectl asks for strict field validation: an unknown field is refused, named in
    // kube-apiserver's strict decoding error; `--validate=false` (Ignore) drops it.
    let valid = server.file(
        "valid.yaml",
        "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: DockerCluster\nmetadata:\n  name: dc1\nspec:\n  controlPlaneEndpoint:\n    host: 10.0.0.1\n  unknown: dropped\n",
    );
    let out = server.kubectl(&["apply", "-f", &valid]);
    assert!(
        !out.status.success(),
        "kubectl's strict validation refuses it"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            r#"DockerCluster in version "v1beta1" cannot be handled as a DockerCluster: strict decoding error: unknown field "spec.unknown""#
        ),
        "{stderr}"
    );
    server.ok(&["apply", "--validate=false", "-f", &valid]);
    let stored = server.json(&["get", "dockercluster", "dc1"]);
    assert_eq!(
        stored["spec"],
        serde_json::json!({"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}})
    );
}

#[test]
fn kubectl_apply_server_side() {
    let server = start(&temp_dir("ssa"), &[]);
    server.ok(&["create", "-f", &server.file("crd.yaml", CRD)]);
    let md = server.file("md.yaml", MD);
    let out = server.ok(&["apply", "--server-side", "-f", &md]);
    assert!(
        out.contains("machinedeployment.cluster.x-k8s.io/md1 serverside-applied"),
        "{out}"
    );
    let created = server.json(&["get", "md", "md1", "--show-managed-fields"]);
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(
        (entry["manager"].clone(), entry["operation"].clone()),
        ("kubectl".into(), "Apply".into())
    );

    // Another manager takes spec.replicas; kubectl's next apply conflicts, then forces.
    server.ok(&[
        "patch",
        "md",
        "md1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":7}}"#,
    ]);
    let changed = server.file("md2.yaml", &MD.replace("replicas: 2", "replicas: 3"));
    let out = server.kubectl(&["apply", "--server-side", "-f", &changed]);
    assert!(!out.status.success(), "a conflicting apply must fail");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Apply failed with 1 conflict: conflict with \"kubectl")
            && stderr.contains(".spec.replicas"),
        "{stderr}"
    );
    server.ok(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        &changed,
    ]);
    assert_eq!(server.json(&["get", "md", "md1"])["spec"]["replicas"], 3);

    let yaml = server.ok(&["get", "md", "md1", "-o", "yaml", "--show-managed-fields"]);
    assert!(yaml.contains("managedFields:"), "{yaml}");
    assert!(yaml.contains("operation: Apply"), "{yaml}");
    let plain = server.ok(&["get", "md", "md1", "-o", "yaml"]);
    assert!(!plain.contains("managedFields:"), "{plain}");
}

/// Every kubectl to run the typed commands with: `TOPOGRAPH_KUBECTLS` (paths separated
/// by `:`) and the one on PATH, each once.
fn every_kubectl() -> Vec<PathBuf> {
    let listed = std::env::var_os("TOPOGRAPH_KUBECTLS").unwrap_or_default();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let on_path = std::env::split_paths(&path)
        .map(|dir| dir.join("kubectl"))
        .find(|p| p.is_file());
    let mut all: Vec<PathBuf> = std::env::split_paths(&listed)
        .filter(|p| p.is_file())
        .chain(on_path)
        .collect();
    all.dedup();
    all
}

/// The client's minor version (`20` for 1.20), as `kubectl version --client` reports it.
fn client_minor(kubectl: &Path) -> u32 {
    let out = Command::new(kubectl)
        .args(["version", "--client", "-o", "json"])
        .output()
        .expect("kubectl version runs");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v["clientVersion"]["minor"]
        .as_str()
        .map(|m| m.trim_end_matches('+'))
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

const APPLIED_CM: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  namespace: fleet-a
data:
  replicas: "3"
"#;

const EVENT: &str = r#"apiVersion: v1
kind: Event
metadata:
  name: settings.1
  namespace: fleet-a
involvedObject:
  apiVersion: v1
  kind: ConfigMap
  name: settings
  namespace: fleet-a
reason: Tested
message: typed clients read events in protobuf
type: Normal
count: 1
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:00:00Z"
source:
  component: kubectl-test
"#;

/// The commands kubectl sends typed (protobuf since 1.32) and those around them:
/// create namespace / secret / configmap, get (table, JSON, YAML), an AlreadyExists
/// refusal, server-side apply of a built-in kind and of a custom resource, edit, wait
/// (for a jsonpath and for deletion), delete, a server dry run and `kubectl events`.
#[test]
fn typed_commands_with_every_kubectl() {
    let kubectls = every_kubectl();
    if kubectls.is_empty() {
        println!(
            "skipped: no kubectl on PATH or in TOPOGRAPH_KUBECTLS (scripts/test installs one)"
        );
        return;
    }
    for kubectl in kubectls {
        let minor = client_minor(&kubectl);
        println!("kubectl {} (client 1.{minor})", kubectl.display());
        typed_commands(&kubectl, minor);
    }
}

fn typed_commands(kubectl: &Path, minor: u32) {
    let server = start_for(&temp_dir("typed"), &[], kubectl.to_path_buf());
    let ns = ["-n", "fleet-a"];
    let with_ns =
        |args: &[&'static str]| -> Vec<&'static str> { args.iter().copied().chain(ns).collect() };
    assert!(
        server
            .ok(&["create", "namespace", "fleet-a"])
            .contains("namespace/fleet-a created")
    );
    let out = server.ok(&with_ns(&[
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=user=admin",
        "--from-literal=token=s3cr3t",
    ]));
    assert!(out.contains("secret/creds created"), "{out}");
    let out = server.ok(&with_ns(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=fast",
    ]));
    assert!(out.contains("configmap/settings created"), "{out}");

    // Read back: what the typed clients sent is what is stored.
    let namespace = server.json(&["get", "namespace", "fleet-a"]);
    assert_eq!(namespace["status"]["phase"], "Active");
    assert!(namespace["metadata"]["uid"].is_string());
    let secret = server.json(&with_ns(&["get", "secret", "creds"]));
    assert_eq!(
        secret["data"],
        serde_json::json!({"user": "YWRtaW4=", "token": "czNjcjN0"})
    );
    let table = server.ok(&["get", "namespaces"]);
    assert!(table.lines().any(|l| l.starts_with("fleet-a ")), "{table}");
    let yaml = server.ok(&with_ns(&["get", "configmap", "settings", "-o", "yaml"]));
    assert!(yaml.contains("mode: fast"), "{yaml}");
    // describe lists the object's Events by `involvedObject.*` field selectors.
    for (kind, name) in [("configmap", "settings"), ("secret", "creds")] {
        let described = server.ok(&with_ns(&["describe", kind, name]));
        assert!(described.contains(name), "{described}");
    }

    // A refusal of a protobuf request, read from the Status the server sent.
    let out = server.kubectl(&["create", "namespace", "fleet-a"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("namespaces \"fleet-a\" already exists"),
        "{stderr}"
    );
    // Older kubectls (1.20) look for dry-run support in the server's OpenAPI document,
    // which this server leaves empty; 1.27 and later just ask.
    if minor >= 27 {
        let dry = server.json(&["create", "namespace", "dry", "--dry-run=server"]);
        assert_eq!(dry["metadata"]["name"], "dry");
        assert!(
            !server
                .kubectl(&["get", "namespace", "dry"])
                .status
                .success()
        );
    }

    // Server-side apply, of a built-in kind and of a custom resource.
    let out = server.ok(&[
        "apply",
        "--server-side",
        "-f",
        &server.file("cm.yaml", APPLIED_CM),
    ]);
    assert!(
        out.contains("configmap/applied serverside-applied"),
        "{out}"
    );
    // kubectl 1.21 began hiding managed fields unless asked.
    let show = if minor >= 21 {
        vec!["--show-managed-fields"]
    } else {
        vec![]
    };
    let args: Vec<&str> = ["get", "configmap", "applied"]
        .into_iter()
        .chain(show)
        .chain(ns)
        .collect();
    let applied = server.json(&args);
    assert_eq!(applied["data"]["replicas"], "3");
    assert_eq!(
        applied["metadata"]["managedFields"][0]["operation"],
        "Apply"
    );
    server.ok(&[
        "apply",
        "--server-side",
        "-f",
        &server.file("crd.yaml", CRD),
    ]);
    let md = MD.replace("name: md1", "name: md1\n  namespace: fleet-a");
    let out = server.ok(&["apply", "--server-side", "-f", &server.file("md.yaml", &md)]);
    assert!(
        out.contains("machinedeployment.cluster.x-k8s.io/md1 serverside-applied"),
        "{out}"
    );
    assert_eq!(
        server.json(&with_ns(&["get", "md", "md1"]))["spec"]["replicas"],
        2
    );

    // Edit through an editor that changes the file it is given.
    let editor = server.file(
        "editor.sh",
        "#!/bin/sh\nsed -i 's/mode: fast/mode: slow/' \"$1\"\n",
    );
    let status = Command::new("chmod")
        .args(["+x", &editor])
        .status()
        .expect("chmod runs");
    assert!(status.success());
    let out = server
        .kubectl_command(&with_ns(&["edit", "configmap", "settings"]))
        .env("KUBE_EDITOR", &editor)
        .output()
        .expect("kubectl edit runs");
    assert!(
        out.status.success(),
        "kubectl edit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        server.json(&with_ns(&["get", "configmap", "settings"]))["data"]["mode"],
        "slow"
    );

    // `wait --for=jsonpath` arrived in kubectl 1.23.
    if minor >= 23 {
        let out = server.ok(&[
            "wait",
            "--for=jsonpath={.status.phase}=Active",
            "namespace/fleet-a",
            "--timeout=10s",
        ]);
        assert!(out.contains("condition met"), "{out}");
    }
    // `kubectl events` (1.26) lists Events through the typed client.
    server.ok(&["create", "-f", &server.file("event.yaml", EVENT)]);
    if minor >= 26 {
        let out = server.ok(&with_ns(&["events"]));
        assert!(
            out.contains("typed clients read events in protobuf"),
            "{out}"
        );
    }

    // Wait for a deletion while it happens.
    let waiting = server
        .kubectl_command(&with_ns(&[
            "wait",
            "--for=delete",
            "configmap/settings",
            "--timeout=30s",
        ]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl wait starts");
    std::thread::sleep(Duration::from_millis(1500));
    let out = server.ok(&with_ns(&["delete", "configmap", "settings"]));
    assert!(out.contains("configmap \"settings\" deleted"), "{out}");
    let waited = waiting.wait_with_output().expect("kubectl wait ends");
    assert!(
        waited.status.success(),
        "kubectl wait --for=delete: {}{}",
        String::from_utf8_lossy(&waited.stdout),
        String::from_utf8_lossy(&waited.stderr)
    );
    server.ok(&with_ns(&["delete", "secret", "creds"]));
    let out = server.kubectl(&with_ns(&["get", "secret", "creds"]));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("secrets \"creds\" not found"), "{stderr}");
}

/// A Cluster CRD with the printer columns of Cluster API's v1beta1 Cluster, plus a
/// priority-1 column for `-o wide`.
const PRINTED_CLUSTER_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusters.cluster.x-k8s.io
spec:
  group: cluster.x-k8s.io
  scope: Namespaced
  names: {plural: clusters, singular: cluster, kind: Cluster, listKind: ClusterList}
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: ClusterClass, type: string, jsonPath: .spec.topology.class}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    - {name: Version, type: string, jsonPath: .spec.topology.version}
    - {name: Paused, type: boolean, jsonPath: .spec.paused, priority: 1}
"#;

const PRINTED_CLUSTER: &str = r#"apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: c1
  namespace: fleet-a
spec:
  paused: true
  topology: {class: quick-start, version: v1.33.0}
"#;

/// The words of each line kubectl printed (a header's `LAST SEEN` is two words).
fn words(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// The row of a table whose `column`-th word is `name`.
fn row(table: &str, column: usize, name: &str) -> Vec<String> {
    words(table)
        .into_iter()
        .find(|w| w.get(column).map(String::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no row {name:?} in\n{table}"))
}

fn header(table: &str) -> Vec<String> {
    words(table).into_iter().next().unwrap_or_default()
}

fn is_young_age(cell: &str) -> bool {
    cell.strip_suffix('s')
        .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n < 120))
}

/// `kubectl get` prints the server's Tables: kube-apiserver's columns for the built-in
/// kinds, a CRD's printer columns for its custom resources, priority-1 columns with
/// `-o wide`, labels from the rows' metadata, sorting from the rows' objects, and a
/// watch's rows under one header.
#[test]
fn get_prints_server_tables_with_every_kubectl() {
    let kubectls = every_kubectl();
    if kubectls.is_empty() {
        println!(
            "skipped: no kubectl on PATH or in TOPOGRAPH_KUBECTLS (scripts/test installs one)"
        );
        return;
    }
    for kubectl in kubectls {
        println!("kubectl {}", kubectl.display());
        server_tables(&kubectl);
    }
}

fn server_tables(kubectl: &Path) {
    let server = start_for(&temp_dir("tables"), &[], kubectl.to_path_buf());
    let with_ns = |args: &[&'static str]| -> Vec<&'static str> {
        args.iter().copied().chain(["-n", "fleet-a"]).collect()
    };
    server.ok(&["create", "namespace", "fleet-a"]);
    server.ok(&["label", "namespace", "fleet-a", "team=a"]);
    server.ok(&with_ns(&[
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=user=admin",
        "--from-literal=token=s3cr3t",
    ]));
    server.ok(&with_ns(&[
        "create",
        "secret",
        "generic",
        "another",
        "--from-literal=a=b",
    ]));
    server.ok(&with_ns(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=fast",
    ]));
    server.ok(&["create", "-f", &server.file("event.yaml", EVENT)]);
    server.ok(&[
        "create",
        "-f",
        &server.file("crd.yaml", PRINTED_CLUSTER_CRD),
    ]);
    server.ok(&[
        "create",
        "-f",
        &server.file("cluster.yaml", PRINTED_CLUSTER),
    ]);

    let out = server.ok(&["get", "ns"]);
    assert_eq!(header(&out), ["NAME", "STATUS", "AGE"], "{out}");
    let fleet = row(&out, 0, "fleet-a");
    assert_eq!(fleet[1], "Active");
    assert!(is_young_age(&fleet[2]), "{out}");
    let out = server.ok(&["get", "ns", "fleet-a", "--show-labels"]);
    assert_eq!(header(&out), ["NAME", "STATUS", "AGE", "LABELS"], "{out}");
    assert!(row(&out, 0, "fleet-a")[3].contains("team=a"), "{out}");

    let out = server.ok(&with_ns(&["get", "secrets"]));
    assert_eq!(header(&out), ["NAME", "TYPE", "DATA", "AGE"], "{out}");
    assert_eq!(row(&out, 0, "creds")[1..3], ["Opaque", "2"]);
    // Sorting needs the rows' whole objects (includeObject=Object).
    let out = server.ok(&with_ns(&["get", "secrets", "--sort-by=.metadata.name"]));
    let names: Vec<String> = words(&out)
        .into_iter()
        .skip(1)
        .map(|w| w[0].clone())
        .collect();
    assert_eq!(names, ["another", "creds"], "{out}");
    let out = server.ok(&with_ns(&["get", "secret", "creds"]));
    assert_eq!(words(&out).len(), 2, "{out}");
    let out = server.ok(&with_ns(&["get", "configmaps"]));
    assert_eq!(header(&out), ["NAME", "DATA", "AGE"], "{out}");
    assert_eq!(row(&out, 0, "settings")[1], "1");

    let out = server.ok(&with_ns(&["get", "events"]));
    assert_eq!(
        header(&out),
        ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{out}"
    );
    assert!(
        out.contains(
            "Normal   Tested   configmap/settings   typed clients read events in protobuf"
        ),
        "{out}"
    );
    let out = server.ok(&with_ns(&["get", "events", "-o", "wide"]));
    assert_eq!(
        header(&out),
        [
            "LAST",
            "SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST",
            "SEEN",
            "COUNT",
            "NAME"
        ],
        "{out}"
    );
    let event = row(&out, 3, "configmap/settings");
    assert_eq!(event[4], "kubectl-test");
    assert_eq!(event[event.len() - 2..], ["1", "settings.1"], "{out}");

    let out = server.ok(&["get", "crd"]);
    assert_eq!(header(&out), ["NAME", "CREATED", "AT"], "{out}");
    assert!(row(&out, 0, "clusters.cluster.x-k8s.io")[1].ends_with('Z'));

    let out = server.ok(&["get", "clusters.cluster.x-k8s.io", "-A"]);
    assert_eq!(
        header(&out),
        [
            "NAMESPACE",
            "NAME",
            "CLUSTERCLASS",
            "PHASE",
            "AGE",
            "VERSION"
        ],
        "{out}"
    );
    // The Cluster has no phase: an empty cell, which kubectl prints as nothing.
    let cluster = row(&out, 1, "c1");
    assert_eq!(
        (
            cluster[0].as_str(),
            cluster[2].as_str(),
            cluster[4].as_str()
        ),
        ("fleet-a", "quick-start", "v1.33.0"),
        "{out}"
    );
    assert!(is_young_age(&cluster[3]), "{out}");
    let out = server.ok(&with_ns(&["get", "clusters", "-o", "wide"]));
    assert_eq!(
        header(&out),
        ["NAME", "CLUSTERCLASS", "PHASE", "AGE", "VERSION", "PAUSED"],
        "{out}"
    );
    assert_eq!(row(&out, 0, "c1").last().map(String::as_str), Some("true"));

    // A watch: the list's Table, then each change as a row under the same header.
    let mut watch = server
        .kubectl_command(&with_ns(&["get", "configmaps", "--watch"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get --watch starts");
    let (tx, rx) = mpsc::channel();
    let stdout = watch.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(15))
            .expect("a line from kubectl get --watch")
    };
    assert_eq!(header(&next()), ["NAME", "DATA", "AGE"]);
    assert_eq!(words(&next())[0][..2], ["settings", "1"]);
    server.ok(&with_ns(&[
        "patch",
        "configmap",
        "settings",
        "-p",
        r#"{"data":{"extra":"x"}}"#,
    ]));
    assert_eq!(words(&next())[0][..2], ["settings", "2"]);
    let _ = watch.kill();
    let _ = watch.wait();
}
