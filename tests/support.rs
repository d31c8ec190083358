//! Helpers for the end-to-end tests: run the real `topograph` binary and compare its
//! output with golden files (`UPDATE_GOLDEN=1` rewrites them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The binary `name` of the workspace package `package`, the workspace built once per
/// test process so the tests never run a stale one (cargo does not build other
/// packages' binaries for a package's tests).
pub fn binary(package: &str, name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !*built {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut build = Command::new(cargo);
        // The whole workspace with all targets, as `cargo test --workspace` and the CI
        // script build it, so after those this is only a freshness check: `-p package`
        // would resolve dependency features differently and rebuild and relink them
        // beside the copies the run already has.
        build.args(["build", "-q", "--workspace", "--all-targets"]);
        // Without the variables cargo sets for this test process: a build script that
        // reruns when one changes (ring's, on CARGO_MANIFEST_DIR) would otherwise
        // rebuild, and make the next `cargo` command from a shell rebuild again.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if [
                "CARGO_PKG_",
                "CARGO_MANIFEST_",
                "CARGO_CRATE_",
                "CARGO_BIN_",
            ]
            .iter()
            .any(|prefix| key.starts_with(prefix))
                || key == "CARGO_PRIMARY_PACKAGE"
                || key == "CARGO_TARGET_TMPDIR"
            {
                build.env_remove(key.as_ref());
            }
        }
        if PROFILE == "release" {
            build.arg("--release");
        }
        let status = build.current_dir(root()).status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "cargo build --workspace (for {package}'s {name}) failed"
        );
        *built = true;
    }
    std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join("target"))
        .join(PROFILE)
        .join(name)
}

/// The processes the tests start are built like the tests themselves, so
/// `cargo test --release` measures release binaries.
const PROFILE: &str = if cfg!(debug_assertions) {
    "debug"
} else {
    "release"
};

/// The `topograph` binary built by cargo for this test run.
pub fn topograph() -> Command {
    let mut command = Command::new(binary("topograph-cli", "topograph"));
    command.current_dir(root());
    command
}

/// Runs `topograph` with `args`.
pub fn run(args: &[&str]) -> Output {
    match topograph().args(args).output() {
        Ok(output) => output,
        Err(e) => {
            panic!("cannot run topograph (build it with `cargo build -p topograph-cli`): {e}")
        }
    }
}

/// Compares `actual` with the golden file `name`, or rewrites it under `UPDATE_GOLDEN=1`.
pub fn assert_golden(name: &str, actual: &str) {
    let path = root().join("tests").join("golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        if let Err(e) = std::fs::write(&path, actual) {
            panic!("writing {}: {e}", path.display());
        }
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "reading {}: {e} (UPDATE_GOLDEN=1 creates it)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs from the output; rerun with UPDATE_GOLDEN=1 if the change is intended.\n--- output ---\n{actual}",
        path.display()
    );
}

/// A child process killed (and reaped) when dropped.
pub struct Process(pub std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A directory under the system temp directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh, empty directory named for `tag` and this process.
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("topograph-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            panic!("creating {}: {e}", dir.display());
        }
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A TCP port nobody listens on right now.
pub fn free_port() -> u16 {
    match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("no free port: {e}"),
    }
}

/// Waits (up to 10 s) until something listens on `port`.
pub fn wait_for_port(port: u16, what: &str) {
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("{what} did not listen on port {port}");
}

/// `GET path` on `127.0.0.1:port` over plain HTTP/1.1; the response body.
pub fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = match std::net::TcpStream::connect(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(e) => panic!("connecting to port {port}: {e}"),
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let mut response = String::new();
    if let Err(e) = stream
        .write_all(request.as_bytes())
        .and_then(|()| stream.read_to_string(&mut response))
    {
        panic!("GET {path} on port {port}: {e}");
    }
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// `command` started with stdout discarded and stderr written to `log`.
pub fn spawn_logged(command: &mut Command, log: &Path) -> Process {
    let log = match std::fs::File::create(log) {
        Ok(file) => file,
        Err(e) => panic!("creating {}: {e}", log.display()),
    };
    Process(
        command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| panic!("starting {command:?}: {e}")),
    )
}

/// redis-server on `port` without persistence (callers wait for the port).
pub fn redis_without_persistence(port: u16) -> Process {
    Process(
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server ({e}); install redis-server")),
    )
}

/// A running `topograph-kube`: the process, its port and its kubeconfig.
pub struct KubeProcess {
    /// The server (killed when dropped).
    pub process: Process,
    /// The port it serves on.
    pub port: u16,
    /// Its kubeconfig, as written to `<dir>/<name>.kubeconfig`.
    pub kubeconfig: String,
}

/// `topograph-kube` with `args`, its kubeconfig appearing whole as `<dir>/<name>.kubeconfig`
/// (appliers and gateways re-read that directory at any moment) once it serves.
pub fn management_cluster(dir: &Path, name: &str, args: &[&str]) -> KubeProcess {
    use std::io::BufRead;
    let partial = dir.join(format!("{name}.kubeconfig.tmp"));
    let mut child = Command::new(binary("topograph-kube", "topograph-kube"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .arg("--kubeconfig-out")
        .arg(&partial)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting topograph-kube: {e}"));
    // Its URL on stdout means it serves.
    let mut url = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = std::io::BufReader::new(stdout).read_line(&mut url);
    }
    let process = Process(child);
    let port = url
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("topograph-kube printed {url:?}, not its URL"));
    let kubeconfig = std::fs::read_to_string(&partial)
        .unwrap_or_else(|e| panic!("reading {}: {e}", partial.display()));
    if let Err(e) = std::fs::rename(&partial, dir.join(format!("{name}.kubeconfig"))) {
        panic!("publishing the kubeconfig of {name}: {e}");
    }
    KubeProcess {
        process,
        port,
        kubeconfig,
    }
}

/// The documents of `examples/quick-start/<file>`, each placed in `namespace`.
pub fn quick_start(file: &str, namespace: &str) -> Vec<serde_json::Value> {
    let path = root().join("examples/quick-start").join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let (docs, errors) = topograph_api::load::parse_documents(file, &text);
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    docs.into_iter()
        .map(|d| {
            let mut value = d.value;
            value["metadata"]["namespace"] = serde_json::json!(namespace);
            value
        })
        .collect()
}

/// Why a Cluster does not count as converged, or `None` when it does: its topology is
/// reconciled for its current generation and its control plane is set.
pub fn unconverged(c: &serde_json::Value) -> Option<String> {
    let condition = c["status"]["v1beta2"]["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|x| x["type"] == "TopologyReconciled"));
    let reconciled = condition.is_some_and(|x| {
        x["status"] == "True" && x["observedGeneration"] == c["metadata"]["generation"]
    });
    if reconciled && c["spec"]["controlPlaneRef"]["name"].is_string() {
        return None;
    }
    Some(format!(
        "{} (generation {}, TopologyReconciled {})",
        c["metadata"]["name"].as_str().unwrap_or("?"),
        c["metadata"]["generation"],
        condition.map_or("absent".to_string(), |x| x.to_string())
    ))
}

/// The quick-start Cluster `name` in `namespace`, small: one control plane machine and
/// one worker pool of one.
pub fn small_cluster(name: &str, namespace: &str) -> serde_json::Value {
    let mut c = quick_start("cluster.yaml", namespace).remove(0);
    c["metadata"]["name"] = serde_json::json!(name);
    c["spec"]["topology"]["controlPlane"]["replicas"] = serde_json::json!(1);
    c["spec"]["topology"]["workers"]["machineDeployments"] =
        serde_json::json!([{"class": "default-worker", "name": "md-0", "replicas": 1}]);
    c
}

/// Writes `<dir>/tenants.yaml` with one admin tenant `ops` of `token`; its path.
pub fn admin_tenants(dir: &Path, token: &str) -> PathBuf {
    let path = dir.join("tenants.yaml");
    let text = format!(
        "tenants:\n- name: ops\n  tokenSha256: {}\n  managementClusters: ['*']\n  namespaces: ['*']\n  admin: true\n",
        topograph_gateway::tenancy::token_sha256_hex(token)
    );
    if let Err(e) = std::fs::write(&path, text) {
        panic!("writing {}: {e}", path.display());
    }
    path
}

/// Starts `topograph-gateway --listen 127.0.0.1:0` with `command`'s other arguments,
/// stderr to `log`; the process and the address it announced on its first line.
pub fn spawn_gateway(command: &mut Command, log: &Path) -> (Process, String) {
    use std::io::BufRead;
    let stderr = match std::fs::File::create(log) {
        Ok(file) => file,
        Err(e) => panic!("creating {}: {e}", log.display()),
    };
    let mut child = command
        .args(["--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("starting topograph-gateway: {e}"));
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
    }
    let process = Process(child);
    let addr = line
        .trim()
        .strip_prefix("gateway listening on ")
        .unwrap_or_else(|| {
            panic!(
                "the gateway printed {line:?}, not its address (log: {})",
                log.display()
            )
        })
        .to_string();
    (process, addr)
}

/// The `topograph-gateway` command, to give [`spawn_gateway`].
pub fn gateway_command() -> Command {
    Command::new(binary("topograph-gateway", "topograph-gateway"))
}

/// Applies `objects` to management cluster `mc` through the gateway at `addr`
/// (`host:port`), as the tenant whose bearer token is `token`.
pub async fn apply_through_gateway(
    addr: &str,
    token: &str,
    mc: &str,
    objects: &[serde_json::Value],
) -> topograph_proto::gateway::v1::ApplyResponse {
    use topograph_proto::gateway::v1 as pb;
    use topograph_proto::gateway::v1::gateway_service_client::GatewayServiceClient;
    let mut client = match GatewayServiceClient::connect(format!("http://{addr}")).await {
        Ok(client) => client,
        Err(e) => panic!("connecting to the gateway at {addr}: {e}"),
    };
    let mut request = tonic::Request::new(pb::ApplyRequest {
        management_cluster: mc.to_string(),
        objects: objects
            .iter()
            .map(|o| serde_json::to_vec(o).unwrap_or_default())
            .collect(),
        dry_run: false,
    });
    match format!("Bearer {token}").parse() {
        Ok(value) => {
            request.metadata_mut().insert("authorization", value);
        }
        Err(e) => panic!("token {token:?} is not a header value: {e}"),
    }
    match client.apply(request).await {
        Ok(response) => response.into_inner(),
        Err(status) => panic!("Apply through the gateway failed: {status:?}"),
    }
}

/// topograph-render, and an applier with two workers for the management clusters in
/// `clusters_dir`, on the redis-server listening on `redis_port`; their processes are
/// pushed onto `processes`, the render service's log goes to `dir`, the applier's to
/// `applier_log` (beside the other e2e logs, for a look after a failure). Returns the
/// redis and render service URLs, for the gateway.
pub fn spawn_render_and_applier(
    dir: &Path,
    redis_port: u16,
    clusters_dir: &Path,
    applier_log: &Path,
    processes: &mut Vec<Process>,
) -> (String, String) {
    let render_port = free_port();
    processes.push(spawn_logged(
        Command::new(binary("topograph-render", "topograph-render"))
            .args(["--listen", &format!("127.0.0.1:{render_port}")]),
        &dir.join("render.log"),
    ));
    wait_for_port(redis_port, "redis-server");
    wait_for_port(render_port, "topograph-render");
    let redis = format!("redis://127.0.0.1:{redis_port}");
    let render = format!("http://127.0.0.1:{render_port}");
    processes.push(spawn_logged(
        Command::new(binary("topograph-applier", "topograph-applier"))
            .args(["--redis", &redis, "--render", &render, "--workers", "2"])
            .args(["--quiet-ms", "100", "--lease-seconds", "5"])
            .arg("--management-clusters")
            .arg(clusters_dir),
        applier_log,
    ));
    (redis, render)
}

/// The example Runtime SDK extension, running as its own process (HTTPS with a CA it
/// generated); stopped when dropped.
pub struct Extension {
    child: std::process::Child,
    /// `https://127.0.0.1:<port>`.
    pub url: String,
    /// The CA that signed its certificate (an ExtensionConfig's caBundle).
    pub ca: PathBuf,
}

impl Drop for Extension {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `topograph-example-extension` on a free port, its CA written into `dir`,
/// with `args` besides.
pub fn start_extension(dir: &Path, args: &[&str]) -> Extension {
    use std::io::BufRead;
    let ca = dir.join("ca.pem");
    let mut child = Command::new(binary(
        "topograph-example-extension",
        "topograph-example-extension",
    ))
    .args(["--listen", "127.0.0.1:0", "--write-ca"])
    .arg(&ca)
    .args(args)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null())
    .spawn()
    .expect("start the example extension");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read its address");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("address line")
        .to_string();
    Extension { child, url, ca }
}

/// The runtimesdk class (with its templates) and Cluster, values.env substituted, every
/// object in `namespace`.
pub fn runtimesdk(namespace: &str) -> Option<(Vec<serde_json::Value>, serde_json::Value)> {
    let dir = root().join("../shared/real-world/providers/capi-e2e-quick-start-runtimesdk-v1beta1");
    if !dir.exists() {
        return None;
    }
    let values: std::collections::BTreeMap<String, String> =
        std::fs::read_to_string(dir.join("values.env"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.to_string()))
            .collect();
    let read = |file: &str| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let text = topograph_api::envsubst::substitute(&text, &values).unwrap();
        let (docs, errors) = topograph_api::load::parse_documents(file, &text);
        assert!(errors.is_empty(), "{errors:?}");
        docs.into_iter()
            .map(|d| {
                let mut v = d.value;
                v["metadata"]["namespace"] = serde_json::json!(namespace);
                v
            })
            .collect()
    };
    let class = read("clusterclass-quick-start-runtimesdk.yaml");
    let cluster = read("cluster-template-upgrades-runtimesdk.kustomized.yaml")
        .into_iter()
        .find(|o| o["kind"] == "Cluster")?;
    Some((class, cluster))
}

/// What `topograph up` gave a test: the process, the gateway's address as it printed it,
/// its stdout lines up to the listening one, and the rest of its stdout.
pub type Up = (
    Process,
    String,
    Vec<String>,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
);

/// `topograph up` on a free port with `extra` arguments (providers at 200 ms).
pub fn topograph_up(extra: &[&str]) -> Up {
    use std::io::BufRead;
    let port = free_port();
    let mut child = Command::new(binary("topograph-cli", "topograph"))
        .args(["up", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--provider-delay-ms", "200"])
        .args(extra)
        .current_dir(std::env::temp_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting topograph up: {e}"));
    let Some(stdout) = child.stdout.take() else {
        panic!("topograph up without stdout")
    };
    let process = Process(child);
    let mut lines = std::io::BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        seen.push(line.clone());
        if line.starts_with("gateway listening on ") {
            break;
        }
    }
    let addr = seen
        .last()
        .and_then(|l| l.strip_prefix("gateway listening on "))
        .unwrap_or_else(|| panic!("topograph up printed {seen:?}"))
        .to_string();
    assert_eq!(addr, format!("127.0.0.1:{port}"));
    (process, addr, seen, lines)
}

/// The stdout of a command that must have succeeded (else its exit and stderr).
pub fn succeeded(output: Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
