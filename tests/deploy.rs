//! The deployment files against the binaries. No Docker engine (and no Kubernetes
//! cluster) runs where the tests do, so `Dockerfile`, `docker-compose.yml`, `deploy/`
//! and the kustomize output of `k8s/` are kept correct here:
//!
//! * every container of ours runs an image the Dockerfile builds (`topograph/<target>`),
//!   and that target's entrypoint is the binary whose flags are checked;
//! * its flags are accepted, values included: the binary runs with the container's
//!   arguments, its environment variables turned into their flags, and `--help` last
//!   (clap parses and checks everything before `--help`); required flags are given;
//! * every `TOPOGRAPH_*` variable is one the binary reads (its `--help` `[env: ...]`),
//!   `OTEL_*` ones are those the tracing set-up reads (`crates/telemetry/src/trace.rs`);
//! * listen addresses are not loopback, container ports match them, Services,
//!   probes, network policies, Prometheus targets and the clients' URLs point at them;
//! * autoscalers, budgets, bindings, ConfigMaps and Secrets name what exists;
//! * the dashboards only query metrics the services expose (the list that
//!   `tests/metrics.rs` checks against a live fleet) and link reconciles to traces.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use topograph_api::load::parse_documents;
use topograph_tests::{binary, root};

/// Where the services' OpenTelemetry set-up documents the `OTEL_*` variables it reads.
const OTEL_DOC: &str = "crates/telemetry/src/trace.rs";

/// Secrets the cluster provides from elsewhere (cert-manager) rather than the base.
const EXTERNAL_SECRETS: &[&str] = &["topograph-gateway-tls"];

fn read(path: &str) -> String {
    let full = root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("reading {}: {e}", full.display()))
}

fn yaml(path: &str) -> Value {
    serde_saphyr::from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| match s {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------
// The Dockerfile.

/// The Dockerfile's runtime targets: target name -> entrypoint binary name.
fn dockerfile_targets() -> BTreeMap<String, String> {
    let text = read("Dockerfile");
    let mut targets = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"FROM") {
            current = match words.as_slice() {
                [_, _, as_, name] if as_.eq_ignore_ascii_case("AS") => Some(name.to_string()),
                _ => None,
            };
        }
        if let (Some(target), Some(rest)) = (&current, line.strip_prefix("ENTRYPOINT ")) {
            let entry: Vec<String> = serde_json::from_str(rest)
                .unwrap_or_else(|e| panic!("Dockerfile ENTRYPOINT {rest}: {e}"));
            let program = entry.first().cloned().unwrap_or_default();
            let name = program.rsplit('/').next().unwrap_or_default().to_string();
            targets.insert(target.clone(), name);
        }
    }
    targets
}

/// The workspace package of a binary.
fn package_of(binary_name: &str) -> &'static str {
    match binary_name {
        "topograph-render" => "topograph-render",
        "topograph-applier" => "topograph-applier",
        "topograph-gateway" => "topograph-gateway",
        "topograph-kube" => "topograph-kube",
        "topograph" => "topograph-cli",
        other => panic!("the Dockerfile runs {other:?}, no binary of the workspace"),
    }
}

#[test]
fn dockerfile_builds_every_binary_it_ships_as_non_root() {
    let text = read("Dockerfile");
    let targets = dockerfile_targets();
    for target in ["render", "applier", "gateway", "kube", "tools"] {
        assert!(
            targets.contains_key(target),
            "no target {target}: {targets:?}"
        );
    }
    let build = text
        .split("cargo build")
        .nth(1)
        .and_then(|rest| rest.split("&&").next())
        .unwrap_or_else(|| panic!("no cargo build in the Dockerfile"));
    assert!(
        build.contains("--release") && build.contains("--locked"),
        "{build}"
    );
    for binary_name in targets.values() {
        let package = package_of(binary_name);
        assert!(
            build.contains(&format!("-p {package}")),
            "the builder does not build {package} (for {binary_name})"
        );
        assert!(
            text.contains(&format!("target/release/{binary_name} ")),
            "{binary_name} is not copied out of the builder"
        );
    }
    // Every stage after the builder runs as the unprivileged user of `runtime`.
    let runtime = text.split("AS runtime").nth(1).unwrap_or_default();
    let last_user = runtime
        .lines()
        .filter_map(|l| l.strip_prefix("USER "))
        .next_back()
        .unwrap_or_default();
    assert_eq!(
        last_user.trim(),
        "10001:10001",
        "the images end as a non-root user"
    );
    // The builder's Rust is at least the workspace's rust-version.
    let rust = text
        .lines()
        .find_map(|l| l.strip_prefix("ARG RUST_VERSION="))
        .unwrap_or_else(|| panic!("no ARG RUST_VERSION"));
    let workspace = read("Cargo.toml");
    let wanted = workspace
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default();
    let version = |v: &str| -> Vec<u32> { v.split('.').filter_map(|p| p.parse().ok()).collect() };
    assert!(
        version(rust.trim()) >= version(&wanted),
        "Rust {rust} < {wanted}"
    );
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("COPY ") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words.len() == 2 && !rest.starts_with("--from") && words[0] != "." {
                assert!(
                    root().join(words[0]).exists(),
                    "COPY of a missing {}",
                    words[0]
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// What a binary accepts.

/// A binary's command line as its `--help` describes it.
struct Cli {
    path: PathBuf,
    /// Long flags, with whether they take a value.
    flags: BTreeMap<String, bool>,
    /// Environment variable -> its flag.
    env: BTreeMap<String, String>,
    /// Flags the usage line requires.
    required: Vec<String>,
}

fn cli(binary_name: &str) -> Cli {
    let path = binary(package_of(binary_name), binary_name);
    let output = Command::new(&path)
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("running {} --help: {e}", path.display()));
    assert!(output.status.success(), "{binary_name} --help failed");
    let help = String::from_utf8_lossy(&output.stdout).to_string();
    let mut flags = BTreeMap::new();
    let mut env = BTreeMap::new();
    let mut last_flag: Option<String> = None;
    for line in help.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('-') {
            let long = trimmed
                .split([',', ' '])
                .map(str::trim)
                .find(|w| w.starts_with("--"));
            if let Some(long) = long {
                let takes_value = trimmed.contains(&format!("{long} <"));
                flags.insert(long.to_string(), takes_value);
                last_flag = Some(long.to_string());
            }
        }
        if let (Some(i), Some(flag)) = (line.find("[env: "), &last_flag) {
            let name: String = line[i + 6..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            env.insert(name, flag.clone());
        }
    }
    let usage = help
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .unwrap_or_default();
    let required = usage
        .split_whitespace()
        .filter(|w| w.starts_with("--"))
        .map(str::to_string)
        .collect();
    Cli {
        path,
        flags,
        env,
        required,
    }
}

/// One container of ours as a deployment file describes it.
struct Container {
    /// Where it is described, for messages.
    at: String,
    binary: String,
    args: Vec<String>,
    /// Environment variables with their values when known (not from Secrets or the
    /// downward API).
    env: BTreeMap<String, Option<String>>,
}

impl Container {
    /// The value of `flag`, from the arguments or its environment variable.
    fn flag(&self, cli: &Cli, flag: &str) -> Option<String> {
        let mut args = self.args.iter();
        while let Some(arg) = args.next() {
            if arg == flag {
                return args.next().cloned();
            }
            if let Some(value) = arg.strip_prefix(&format!("{flag}=")) {
                return Some(value.to_string());
            }
        }
        cli.env
            .iter()
            .find(|(_, f)| *f == flag)
            .and_then(|(name, _)| self.env.get(name).cloned().flatten())
    }

    /// The ports it listens on: every `*listen` flag's address (a loopback one is an
    /// error: nothing outside the container could reach it).
    fn listen_ports(&self, cli: &Cli) -> BTreeSet<u16> {
        let mut ports = BTreeSet::new();
        for flag in cli.flags.keys().filter(|f| f.ends_with("listen")) {
            if let Some(addr) = self.flag(cli, flag) {
                let addr: std::net::SocketAddr = addr
                    .parse()
                    .unwrap_or_else(|e| panic!("{}: {flag} {addr}: {e}", self.at));
                assert!(
                    !addr.ip().is_loopback(),
                    "{}: {flag} {addr} is unreachable from outside the container",
                    self.at
                );
                ports.insert(addr.port());
            }
        }
        ports
    }
}

/// Checks a container's flags and environment against its binary; its listen ports.
fn check_container(container: &Container) -> BTreeSet<u16> {
    let cli = cli(&container.binary);
    let at = &container.at;
    let mut args = container.args.clone();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        assert!(arg.starts_with("--"), "{at}: unexpected argument {arg:?}");
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, _)) => (flag, true),
            None => (arg.as_str(), false),
        };
        let takes_value = *cli
            .flags
            .get(flag)
            .unwrap_or_else(|| panic!("{at}: {} does not accept {flag}", container.binary));
        i += if takes_value && !inline { 2 } else { 1 };
    }
    let mut given: BTreeSet<String> = container
        .args
        .iter()
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or_default().to_string())
        .collect();
    for (name, value) in &container.env {
        if name.starts_with("OTEL_") {
            assert!(
                read(OTEL_DOC).contains(name.as_str()),
                "{at}: {name} is read by no service ({OTEL_DOC} lists what is)"
            );
            continue;
        }
        assert!(
            name.starts_with("TOPOGRAPH_"),
            "{at}: {name} is read by nothing"
        );
        let flag = cli.env.get(name).unwrap_or_else(|| {
            panic!(
                "{at}: {} reads no {name} (it reads {:?})",
                container.binary,
                cli.env.keys()
            )
        });
        assert!(
            given.insert(flag.clone()),
            "{at}: {flag} given twice (argument and {name})"
        );
        // Values known here are checked by the binary too.
        if let Some(value) = value {
            args.push(format!("{flag}={value}"));
        }
    }
    for required in &cli.required {
        assert!(
            given.contains(required),
            "{at}: {} requires {required}",
            container.binary
        );
    }
    let output = Command::new(&cli.path)
        .args(&args)
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", cli.path.display()));
    assert!(
        output.status.success(),
        "{at}: {} refuses {args:?}: {}",
        container.binary,
        String::from_utf8_lossy(&output.stderr)
    );
    container.listen_ports(&cli)
}

// ---------------------------------------------------------------------------------
// docker-compose.yml.

/// `host:port` out of a URL like `http://render:50051`, `dns:///render:50051` or
/// `redis://redis:6379`.
fn host_port(url: &str) -> Option<(String, u16)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.trim_start_matches('/');
    let authority = rest.split('/').next()?;
    let authority = authority.rsplit('@').next()?;
    let (host, port) = authority.rsplit_once(':')?;
    Some((host.to_string(), port.parse().ok()?))
}

#[test]
fn compose_agrees_with_the_dockerfile_and_the_binaries() {
    let compose = yaml("docker-compose.yml");
    let services = compose["services"]
        .as_object()
        .unwrap_or_else(|| panic!("no services"));
    let targets = dockerfile_targets();
    for wanted in [
        "redis",
        "otel-collector",
        "jaeger",
        "kube",
        "gateway",
        "seed",
    ] {
        assert!(services.contains_key(wanted), "no service {wanted}");
    }
    let count = |prefix: &str| {
        services
            .values()
            .filter(|s| s["image"].as_str().is_some_and(|i| i.starts_with(prefix)))
            .count()
    };
    assert_eq!(count("topograph/render:"), 2, "two render services");
    assert_eq!(count("topograph/applier:"), 2, "two appliers");
    let redis = strings(&services["redis"]["command"]).join(" ");
    assert!(
        redis.contains("--appendonly yes"),
        "redis without AOF: {redis}"
    );

    // Every service of ours: image built from its target, flags and environment
    // accepted, ports served. Names (and network aliases) -> ports listened on.
    let mut listening: BTreeMap<String, BTreeSet<u16>> = BTreeMap::new();
    let mut mounts: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (name, service) in services {
        for volume in strings(&service["volumes"]) {
            let parts: Vec<&str> = volume.split(':').collect();
            if parts[0].starts_with("./") {
                assert!(
                    root().join(parts[0]).exists(),
                    "{name}: mounts missing {}",
                    parts[0]
                );
                mounts
                    .entry(name.clone())
                    .or_default()
                    .push((parts[0].to_string(), parts[1].to_string()));
            }
        }
        let Some(image) = service["image"].as_str() else {
            continue;
        };
        let Some(image) = image.strip_prefix("topograph/") else {
            continue;
        };
        let target = image.split(':').next().unwrap_or_default();
        assert_eq!(
            service["build"]["target"].as_str(),
            Some(target),
            "{name}: image topograph/{image} is built from target {target}"
        );
        assert_eq!(service["build"]["context"].as_str(), Some("."), "{name}");
        if target != "tools" {
            assert_eq!(
                service["read_only"], true,
                "{name}: a writable root filesystem"
            );
        }
        let binary_name = targets
            .get(target)
            .unwrap_or_else(|| panic!("{name}: the Dockerfile has no target {target}"));
        let env: BTreeMap<String, Option<String>> = service["environment"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        (k.clone(), Some(v))
                    })
                    .collect()
            })
            .unwrap_or_default();
        if target == "tools" {
            // The seed job: the CLI's client variables, and the demo tenant's token.
            let apply = cli("topograph");
            let apply_help = Command::new(&apply.path)
                .args(["apply", "--help"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
                .unwrap_or_default();
            for var in env.keys().filter(|k| k.starts_with("TOPOGRAPH_")) {
                assert!(apply_help.contains(var.as_str()), "seed: {var} unknown");
            }
            let token = env
                .get("TOPOGRAPH_TOKEN")
                .cloned()
                .flatten()
                .unwrap_or_default();
            let tenants = read("deploy/compose/tenants.yaml");
            assert!(
                tenants.contains(&topograph_gateway::tenancy::token_sha256_hex(&token)),
                "the seed's token is not the demo tenant's"
            );
            continue;
        }
        let container = Container {
            at: format!("docker-compose.yml service {name}"),
            binary: binary_name.clone(),
            args: strings(&service["command"]),
            env,
        };
        let ports = check_container(&container);
        for port in strings(&service["ports"]) {
            let inside: u16 = port
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or_else(|| panic!("{name}: port {port}"));
            assert!(
                ports.contains(&inside),
                "{name} publishes {inside}, listens on {ports:?}"
            );
        }
        // Paths in flags lie in mounted volumes.
        for arg in &container.args {
            if arg.starts_with("/etc/") {
                assert!(
                    mounts
                        .get(name)
                        .is_some_and(|m| m.iter().any(|(_, to)| arg.starts_with(to.as_str()))),
                    "{name}: {arg} is not mounted"
                );
            }
        }
        let mut names = vec![name.clone()];
        names.extend(strings(&service["networks"]["default"]["aliases"]));
        for n in names {
            listening
                .entry(n)
                .or_default()
                .extend(ports.iter().copied());
        }
    }
    listening.insert("redis".into(), [6379].into());
    let collector = yaml("deploy/otel-collector.yaml");
    let otlp = collector["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
        .as_str()
        .and_then(host_port)
        .unwrap_or_else(|| panic!("the collector has no OTLP gRPC receiver"));
    listening.insert("otel-collector".into(), [otlp.1].into());

    // Every URL a service is given reaches something that listens there.
    for (name, service) in services {
        let mut values = strings(&service["command"]);
        if let Some(env) = service["environment"].as_object() {
            values.extend(env.values().filter_map(|v| v.as_str().map(str::to_string)));
        }
        for value in values.iter().filter(|v| v.contains("://")) {
            let (host, port) = host_port(value).unwrap_or_else(|| panic!("{name}: {value}"));
            assert!(
                listening.get(&host).is_some_and(|p| p.contains(&port)),
                "{name}: {value} reaches nothing ({listening:?})"
            );
        }
    }
    // The demo management cluster's kubeconfig points at `kube`.
    let kubeconfig = yaml("deploy/compose/management-clusters/demo.kubeconfig");
    let server = kubeconfig["clusters"][0]["cluster"]["server"]
        .as_str()
        .unwrap_or_default();
    let (host, port) = host_port(server).unwrap_or_else(|| panic!("server {server}"));
    assert!(
        listening[&host].contains(&port),
        "kubeconfig server {server}"
    );
    // Prometheus scrapes metrics ports.
    let prometheus = yaml("deploy/compose/prometheus.yml");
    let mut scraped = 0;
    for job in prometheus["scrape_configs"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for target in strings(&job["static_configs"][0]["targets"]) {
            let (host, port) = host_port(&target).unwrap_or_else(|| panic!("{target}"));
            assert!(
                listening.get(&host).is_some_and(|p| p.contains(&port)),
                "Prometheus scrapes {target}, nothing listens there"
            );
            scraped += 1;
        }
    }
    assert_eq!(scraped, 5, "every render, applier and gateway is scraped");
    // The demo's tenants document is one the gateway accepts.
    topograph_gateway::tenancy::Tenants::from_yaml(&read("deploy/compose/tenants.yaml"))
        .unwrap_or_else(|e| panic!("deploy/compose/tenants.yaml: {e}"));
}

// ---------------------------------------------------------------------------------
// k8s/.

fn kustomize(dir: &str) -> Vec<Value> {
    let output = Command::new("kubectl")
        .arg("kustomize")
        .arg(root().join(dir))
        .output()
        .unwrap_or_else(|e| panic!("kubectl kustomize {dir} ({e}); scripts/test installs kubectl"));
    assert!(
        output.status.success(),
        "kubectl kustomize {dir}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let (docs, errors) = parse_documents(dir, &text);
    assert!(errors.is_empty(), "{dir}: {errors:?}");
    docs.into_iter().map(|d| d.value).collect()
}

fn named<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

fn matches(selector: &Value, labels: &Value) -> bool {
    selector
        .as_object()
        .is_some_and(|s| !s.is_empty() && s.iter().all(|(k, v)| &labels[k] == v))
}

fn check_overlay(dir: &str, tag: &str) {
    let objects = kustomize(dir);
    let targets = dockerfile_targets();
    let names = |kind: &str| -> BTreeSet<String> {
        objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    };
    let deployments: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .collect();
    for name in ["topograph-render", "topograph-applier", "topograph-gateway"] {
        assert!(
            named(&objects, "Deployment", name).is_some(),
            "{dir}: no {name}"
        );
    }
    let namespace = objects
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .and_then(|o| o["metadata"]["namespace"].as_str())
        .unwrap_or_default();
    assert!(!namespace.is_empty(), "{dir}: no namespace");
    // Pod ports by pod labels, for Services and policies.
    let mut pods: Vec<(Value, BTreeMap<String, u16>, BTreeSet<u16>)> = Vec::new();
    for deployment in &deployments {
        let name = deployment["metadata"]["name"].as_str().unwrap_or_default();
        let pod = &deployment["spec"]["template"];
        assert!(
            matches(
                &deployment["spec"]["selector"]["matchLabels"],
                &pod["metadata"]["labels"]
            ),
            "{dir}: {name} does not select its pods"
        );
        let spec = &pod["spec"];
        if let Some(account) = spec["serviceAccountName"].as_str() {
            assert!(
                names("ServiceAccount").contains(account),
                "{dir}: {name}: no {account}"
            );
        }
        for volume in spec["volumes"].as_array().into_iter().flatten() {
            if let Some(secret) = volume["secret"]["secretName"].as_str() {
                assert!(
                    names("Secret").contains(secret) || EXTERNAL_SECRETS.contains(&secret),
                    "{dir}: {name} mounts a missing Secret {secret}"
                );
            }
        }
        let mut named_ports = BTreeMap::new();
        let mut all_ports = BTreeSet::new();
        for container in spec["containers"].as_array().into_iter().flatten() {
            let at = format!(
                "{dir}: {name}/{}",
                container["name"].as_str().unwrap_or_default()
            );
            for port in container["ports"].as_array().into_iter().flatten() {
                let number = port["containerPort"].as_u64().unwrap_or_default() as u16;
                all_ports.insert(number);
                if let Some(n) = port["name"].as_str() {
                    named_ports.insert(n.to_string(), number);
                }
            }
            let image = container["image"].as_str().unwrap_or_default();
            let Some(ours) = image.strip_prefix("topograph/") else {
                continue;
            };
            let (target, image_tag) = ours.split_once(':').unwrap_or((ours, ""));
            assert_eq!(image_tag, tag, "{at}: image {image}");
            let binary_name = targets
                .get(target)
                .unwrap_or_else(|| panic!("{at}: the Dockerfile has no target {target}"));
            let security = &container["securityContext"];
            assert_eq!(security["readOnlyRootFilesystem"], true, "{at}");
            assert_eq!(security["allowPrivilegeEscalation"], false, "{at}");
            assert_eq!(spec["securityContext"]["runAsNonRoot"], true, "{at}");
            let mut env: BTreeMap<String, Option<String>> = BTreeMap::new();
            for from in container["envFrom"].as_array().into_iter().flatten() {
                let map = from["configMapRef"]["name"].as_str().unwrap_or_default();
                let config = named(&objects, "ConfigMap", map)
                    .unwrap_or_else(|| panic!("{at}: no ConfigMap {map}"));
                for (k, v) in config["data"].as_object().into_iter().flatten() {
                    env.insert(k.clone(), v.as_str().map(str::to_string));
                }
            }
            for var in container["env"].as_array().into_iter().flatten() {
                let var_name = var["name"].as_str().unwrap_or_default().to_string();
                if let Some(secret) = var["valueFrom"]["secretKeyRef"].as_object() {
                    let secret_name = secret["name"].as_str().unwrap_or_default();
                    let key = secret["key"].as_str().unwrap_or_default();
                    let object = named(&objects, "Secret", secret_name)
                        .unwrap_or_else(|| panic!("{at}: no Secret {secret_name}"));
                    assert!(
                        !object["stringData"][key].is_null() || !object["data"][key].is_null(),
                        "{at}: Secret {secret_name} has no {key}"
                    );
                }
                env.insert(var_name, var["value"].as_str().map(str::to_string));
            }
            let container_description = Container {
                at: at.clone(),
                binary: binary_name.clone(),
                args: strings(&container["args"]),
                env,
            };
            assert!(
                container["command"].is_null(),
                "{at}: the image's entrypoint runs"
            );
            let listening = check_container(&container_description);
            let declared: BTreeSet<u16> = container["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["containerPort"].as_u64().map(|p| p as u16))
                .collect();
            assert_eq!(declared, listening, "{at}: container ports vs listen flags");
            for probe in ["readinessProbe", "livenessProbe"] {
                let probe = &container[probe];
                assert!(!probe.is_null(), "{at}: no probe");
                let handlers: Vec<&str> = ["grpc", "httpGet", "tcpSocket", "exec"]
                    .into_iter()
                    .filter(|h| !probe[*h].is_null())
                    .collect();
                assert_eq!(handlers.len(), 1, "{at}: probe handlers {handlers:?}");
                let port = &probe[handlers[0]]["port"];
                let number = port
                    .as_u64()
                    .map(|p| p as u16)
                    .or_else(|| port.as_str().and_then(|n| named_ports.get(n).copied()));
                assert!(
                    number.is_some_and(|n| listening.contains(&n)),
                    "{at}: probe on {port}, listening on {listening:?}"
                );
                if handlers[0] == "grpc" {
                    // gRPC probes speak plain HTTP/2: not to a TLS port.
                    assert!(
                        !container_description.args.iter().any(|a| a == "--tls-cert"),
                        "{at}: gRPC probe of a TLS server"
                    );
                }
            }
        }
        pods.push((pod["metadata"]["labels"].clone(), named_ports, all_ports));
    }
    // Services reach container ports of the pods they select.
    for service in objects.iter().filter(|o| o["kind"] == "Service") {
        let name = service["metadata"]["name"].as_str().unwrap_or_default();
        let selected: Vec<_> = pods
            .iter()
            .filter(|(labels, _, _)| matches(&service["spec"]["selector"], labels))
            .collect();
        assert!(
            !selected.is_empty(),
            "{dir}: Service {name} selects no pods"
        );
        for port in service["spec"]["ports"].as_array().into_iter().flatten() {
            let target = &port["targetPort"];
            for (_, named_ports, all_ports) in &selected {
                let ok = match target {
                    Value::String(n) => named_ports.contains_key(n),
                    Value::Number(n) => n.as_u64().is_some_and(|n| all_ports.contains(&(n as u16))),
                    _ => false,
                };
                assert!(
                    ok,
                    "{dir}: Service {name} targets {target}, not a container port"
                );
            }
        }
    }
    // Clients' URLs in ConfigMaps and Secrets reach a Service port.
    let service_ports = |host: &str, port: u16| {
        let host = host.split('.').next().unwrap_or_default();
        named(&objects, "Service", host).is_some_and(|s| {
            s["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["port"].as_u64() == Some(u64::from(port)))
        })
    };
    for config in objects.iter().filter(|o| o["kind"] == "ConfigMap") {
        for (key, value) in config["data"].as_object().into_iter().flatten() {
            let Some(url) = value
                .as_str()
                .filter(|v| v.starts_with("http://") || v.starts_with("dns:///"))
            else {
                continue;
            };
            if key.starts_with("OTEL_") {
                continue; // the collector lives outside the fleet's namespace
            }
            let (host, port) = host_port(url).unwrap_or_else(|| panic!("{key}: {url}"));
            assert!(
                service_ports(&host, port),
                "{dir}: {key}={url} reaches no Service"
            );
            // A name the client resolves to balance over must list the pods: through a
            // ClusterIP it would resolve to one virtual address and one pod per client.
            if url.starts_with("dns:///") {
                let service = named(
                    &objects,
                    "Service",
                    host.split('.').next().unwrap_or_default(),
                );
                assert!(
                    service.is_some_and(|s| s["spec"]["clusterIP"] == "None"),
                    "{dir}: {key}={url} names a Service that is not headless"
                );
            }
        }
    }
    // Autoscalers, budgets and bindings name what exists.
    for hpa in objects
        .iter()
        .filter(|o| o["kind"] == "HorizontalPodAutoscaler")
    {
        let target = &hpa["spec"]["scaleTargetRef"];
        assert_eq!(target["kind"], "Deployment");
        let name = target["name"].as_str().unwrap_or_default();
        assert!(
            named(&objects, "Deployment", name).is_some(),
            "{dir}: HPA of {name}"
        );
        for metric in hpa["spec"]["metrics"].as_array().into_iter().flatten() {
            if let Some(external) = metric["external"]["metric"]["name"].as_str() {
                assert!(
                    read("k8s/dashboards/metric-names.txt")
                        .lines()
                        .any(|l| l.trim() == external),
                    "{dir}: HPA on {external}, which no service exposes"
                );
            }
        }
    }
    let hpa_of = |name: &str| {
        objects.iter().find(|o| {
            o["kind"] == "HorizontalPodAutoscaler" && o["spec"]["scaleTargetRef"]["name"] == name
        })
    };
    let render_hpa = hpa_of("topograph-render").unwrap_or_else(|| panic!("{dir}: render HPA"));
    assert_eq!(render_hpa["spec"]["metrics"][0]["resource"]["name"], "cpu");
    let applier_hpa = hpa_of("topograph-applier").unwrap_or_else(|| panic!("{dir}: applier HPA"));
    assert_eq!(
        applier_hpa["spec"]["metrics"][0]["external"]["metric"]["name"],
        "topograph_applier_queue_depth"
    );
    for pdb in objects
        .iter()
        .filter(|o| o["kind"] == "PodDisruptionBudget")
    {
        let name = pdb["metadata"]["name"].as_str().unwrap_or_default();
        assert!(
            pods.iter()
                .any(|(labels, _, _)| matches(&pdb["spec"]["selector"]["matchLabels"], labels)),
            "{dir}: PodDisruptionBudget {name} selects no pods"
        );
    }
    for binding in objects.iter().filter(|o| o["kind"] == "RoleBinding") {
        let role = binding["roleRef"]["name"].as_str().unwrap_or_default();
        assert!(names("Role").contains(role), "{dir}: no Role {role}");
        for subject in binding["subjects"].as_array().into_iter().flatten() {
            let account = subject["name"].as_str().unwrap_or_default();
            assert!(
                names("ServiceAccount").contains(account),
                "{dir}: no {account}"
            );
        }
    }
    // Network policies: the ports they open are ports the selected pods listen on, and
    // the render service and Redis are open to the appliers and the gateway only.
    for policy in objects.iter().filter(|o| o["kind"] == "NetworkPolicy") {
        let name = policy["metadata"]["name"].as_str().unwrap_or_default();
        let selector = &policy["spec"]["podSelector"]["matchLabels"];
        let selected: Vec<_> = pods
            .iter()
            .filter(|(labels, _, _)| matches(selector, labels))
            .collect();
        for rule in policy["spec"]["ingress"].as_array().into_iter().flatten() {
            for port in rule["ports"].as_array().into_iter().flatten() {
                let number = port["port"].as_u64().unwrap_or_default() as u16;
                for (labels, _, all_ports) in &selected {
                    assert!(
                        all_ports.contains(&number),
                        "{dir}: NetworkPolicy {name} opens {number} on {labels}"
                    );
                }
            }
        }
    }
    for (policy, port) in [("topograph-render", 50051), ("topograph-redis", 6379)] {
        let policy = named(&objects, "NetworkPolicy", policy)
            .unwrap_or_else(|| panic!("{dir}: no NetworkPolicy {policy}"));
        let rule = policy["spec"]["ingress"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| {
                r["ports"]
                    .as_array()
                    .is_some_and(|ps| ps.iter().any(|p| p["port"] == port))
            })
            .unwrap_or_else(|| panic!("{dir}: no rule for {port}"));
        let from: BTreeSet<String> = rule["from"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                assert!(
                    f["namespaceSelector"].is_null(),
                    "{dir}: {port} open to namespaces"
                );
                f["podSelector"]["matchLabels"]["app.kubernetes.io/name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        assert_eq!(
            from,
            BTreeSet::from([
                "topograph-applier".to_string(),
                "topograph-gateway".to_string()
            ]),
            "{dir}: who reaches {port}"
        );
    }
    // The dashboards ship as a ConfigMap for Grafana's sidecar.
    let dashboards = named(&objects, "ConfigMap", "topograph-dashboards")
        .unwrap_or_else(|| panic!("{dir}: no dashboards ConfigMap"));
    assert_eq!(dashboards["metadata"]["labels"]["grafana_dashboard"], "1");
    // The tenants placeholder is a document the gateway accepts.
    let tenants = named(&objects, "Secret", "topograph-tenants")
        .and_then(|s| s["stringData"]["tenants.yaml"].as_str())
        .unwrap_or_else(|| panic!("{dir}: no tenants Secret"));
    topograph_gateway::tenancy::Tenants::from_yaml(tenants)
        .unwrap_or_else(|e| panic!("{dir}: tenants placeholder: {e}"));
}

#[test]
fn the_dev_overlay_agrees_with_the_binaries() {
    check_overlay("k8s/overlays/dev", "dev");
}

#[test]
fn the_production_overlay_agrees_with_the_binaries() {
    check_overlay("k8s/overlays/production", "0.1.0");
}

#[test]
fn the_management_cluster_access_builds() {
    let objects = kustomize("k8s/management-cluster");
    let role = named(&objects, "ClusterRole", "topograph-fleet")
        .unwrap_or_else(|| panic!("no ClusterRole topograph-fleet"));
    let groups: BTreeSet<String> = role["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| strings(&r["apiGroups"]))
        .collect();
    assert!(groups.contains("cluster.x-k8s.io"), "{groups:?}");
    // The appliers watch ExtensionConfigs and write their status; the gateway lists them.
    let extension_configs = role["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| {
            strings(&r["apiGroups"])
                .iter()
                .any(|g| g == "runtime.cluster.x-k8s.io")
        })
        .unwrap_or_else(|| panic!("no rule for runtime.cluster.x-k8s.io: {role:#}"));
    let resources = strings(&extension_configs["resources"]);
    let verbs = strings(&extension_configs["verbs"]);
    for (needed, among) in [
        ("extensionconfigs", &resources),
        ("extensionconfigs/status", &resources),
        ("list", &verbs),
        ("watch", &verbs),
        ("patch", &verbs),
    ] {
        assert!(
            among.iter().any(|x| x == needed),
            "{needed} in {extension_configs:#}"
        );
    }
    // Rollouts: topograph's own CRDs, as the binaries define them, and the rights to
    // drive them.
    for crd in topograph_management::crds::topograph() {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        let shipped = named(&objects, "CustomResourceDefinition", name)
            .unwrap_or_else(|| panic!("k8s/management-cluster/crds.yaml lacks {name}"));
        assert_eq!(
            shipped, &crd,
            "k8s/management-cluster/crds.yaml differs from crds::topograph() for {name}; regenerate it from `topograph crds`"
        );
    }
    let rollouts = role["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| strings(&r["apiGroups"]).iter().any(|g| g == "topograph.io"))
        .unwrap_or_else(|| panic!("no rule for topograph.io: {role:#}"));
    for needed in [
        "rolloutpolicies",
        "rolloutpolicies/status",
        "clusterclassrevisions",
    ] {
        assert!(
            strings(&rollouts["resources"]).iter().any(|x| x == needed),
            "{needed}"
        );
    }
    let binding = named(&objects, "ClusterRoleBinding", "topograph-fleet")
        .unwrap_or_else(|| panic!("no ClusterRoleBinding"));
    let subject = &binding["subjects"][0];
    let account = named(
        &objects,
        "ServiceAccount",
        subject["name"].as_str().unwrap_or_default(),
    )
    .unwrap_or_else(|| panic!("the binding's ServiceAccount is missing"));
    assert_eq!(subject["namespace"], account["metadata"]["namespace"]);
}

// ---------------------------------------------------------------------------------
// Dashboards.

#[test]
fn dashboards_query_only_exposed_metrics_and_link_reconciles_to_traces() {
    let exposed: BTreeSet<String> = read("k8s/dashboards/metric-names.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    let kustomization = read("k8s/dashboards/kustomization.yaml");
    let datasources = yaml("deploy/compose/grafana/datasources/datasources.yaml");
    let uids: BTreeSet<String> = datasources["datasources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["uid"].as_str().map(str::to_string))
        .collect();
    let mut files = 0;
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut trace_links = 0;
    for entry in std::fs::read_dir(root().join("k8s/dashboards"))
        .into_iter()
        .flatten()
    {
        let path = entry.map(|e| e.path()).unwrap_or_default();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        assert!(
            kustomization.contains(&file),
            "{file} is not in the ConfigMap"
        );
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let dashboard: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(dashboard["uid"].is_string(), "{file}: no uid");
        for panel in dashboard["panels"].as_array().into_iter().flatten() {
            if panel["type"] == "row" {
                continue;
            }
            let title = panel["title"].as_str().unwrap_or_default();
            let uid = panel["datasource"]["uid"].as_str().unwrap_or_default();
            assert!(uids.contains(uid), "{file}: {title}: datasource {uid}");
            let targets = panel["targets"].as_array().cloned().unwrap_or_default();
            assert!(!targets.is_empty(), "{file}: {title}: no queries");
            let mut reconcile = false;
            for target in &targets {
                let expr = target["expr"].as_str().unwrap_or_default();
                let names = metric_names(expr);
                assert!(!names.is_empty(), "{file}: {title}: {expr} uses no metric");
                for name in names {
                    assert!(
                        exposed.contains(&name),
                        "{file}: {title}: {name} is not exposed by any service"
                    );
                    reconcile |= name.starts_with("topograph_applier_reconcile");
                    used.insert(name);
                }
            }
            if reconcile {
                let links = panel["fieldConfig"]["defaults"]["links"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let url = links
                    .iter()
                    .filter_map(|l| l["url"].as_str())
                    .find(|u| u.contains("jaeger"))
                    .unwrap_or_else(|| panic!("{file}: {title}: no link to traces"));
                assert!(
                    url.contains("topograph-applier") && url.contains("reconcile"),
                    "{file}: {title}: the trace link is not filtered to reconciles: {url}"
                );
                trace_links += 1;
            }
        }
    }
    assert!(files >= 2, "dashboards missing");
    assert!(trace_links >= 2, "reconcile panels without trace links");
    // Everything the issue lists has a panel.
    for wanted in [
        "topograph_render_grpc_request_duration_seconds_bucket",
        "topograph_gateway_grpc_requests_total",
        "topograph_applier_render_duration_seconds_bucket",
        "topograph_render_engine_duration_seconds_bucket",
        "topograph_applier_reconciles_total",
        "topograph_applier_reconcile_duration_seconds_bucket",
        "topograph_applier_object_writes_total",
        "topograph_applier_queue_depth",
        "topograph_applier_queue_oldest_job_age_seconds",
        "topograph_applier_watch_lag_seconds_bucket",
        "topograph_applier_management_cluster_errors_total",
    ] {
        assert!(used.contains(wanted), "no panel shows {wanted}");
    }
}

/// The metric names in a PromQL expression: identifiers of the services' namespace.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("topograph_") {
        let before = rest[..i].chars().next_back();
        let name: String = rest[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        // Part of a longer identifier or a label value ("...topograph_x") is no name.
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '"') {
            names.push(name.clone());
        }
        rest = &rest[i + name.len()..];
    }
    names
}
