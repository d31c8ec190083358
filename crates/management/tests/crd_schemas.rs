//! Cluster API's CRDs as `crds::cluster_api()` gives them, served by topograph-kube:
//! a field one version has and the other does not is refused in the version that lacks
//! it (server-side apply always, create under strict field validation) and pruned with
//! a warning by default, accepted and converted in the version that has it; and every
//! example and published ClusterClass and Cluster passes its version's schema under
//! strict field validation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::crds;

const MDS: &str = "/apis/cluster.x-k8s.io/{version}/namespaces/default/machinedeployments";

fn machine_deployments(version: &str) -> String {
    MDS.replace("{version}", version)
}

async fn start() -> RunningServer {
    // The providers' kinds the MachineDeployments reference: Cluster API's conversion
    // looks their API versions up in their CRDs.
    let providers = [
        json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate"}),
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate"}),
    ];
    let mut seed = crds::cluster_api();
    seed.extend(crds::for_objects(&providers));
    Server::start(Config {
        seed,
        ..Config::default()
    })
    .await
    .expect("server starts")
}

/// An answer: status code, `Warning` headers, JSON body.
struct Answer {
    code: u16,
    warnings: Vec<String>,
    body: Value,
}

async fn request(
    server: &RunningServer,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) -> Answer {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connects");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .await
        .expect("request sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response read");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let warnings = head
        .lines()
        .filter_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("warning")
                .then(|| value.trim().to_string())
        })
        .collect();
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"));
    Answer {
        code,
        warnings,
        body,
    }
}

/// A MachineDeployment in `version` whose machines' spec carries `nodeDrainTimeout`,
/// which only v1beta1 has (v1beta2 says `deletion.nodeDrainTimeoutSeconds`).
fn machine_deployment(version: &str, name: &str) -> Value {
    let reference = |group: &str, kind: &str| match version {
        "v1beta1" => json!({"apiVersion": format!("{group}/v1beta1"), "kind": kind, "name": "t"}),
        _ => json!({"apiGroup": group, "kind": kind, "name": "t"}),
    };
    json!({
        "apiVersion": format!("cluster.x-k8s.io/{version}"),
        "kind": "MachineDeployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "clusterName": "c",
            "selector": {"matchLabels": {"pool": "a"}},
            "template": {
                "metadata": {"labels": {"pool": "a"}},
                "spec": {
                    "clusterName": "c",
                    "version": "v1.30.0",
                    "bootstrap": {"configRef": reference("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate")},
                    "infrastructureRef": reference("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate"),
                    "nodeDrainTimeout": "10s"
                }
            }
        }
    })
}

const UNKNOWN: &str = "spec.template.spec.nodeDrainTimeout";

#[tokio::test]
async fn server_side_apply_refuses_a_v1beta1_field_in_v1beta2_naming_it() {
    let server = start().await;
    let answer = request(
        &server,
        "PATCH",
        &format!(
            "{}/md?fieldManager=topograph&force=true",
            machine_deployments("v1beta2")
        ),
        "application/apply-patch+yaml",
        &machine_deployment("v1beta2", "md"),
    )
    .await;
    // kube-apiserver's 500: the typed conversion of the patch fails.
    assert_eq!(answer.code, 500, "{}", answer.body);
    let message = answer.body["message"].as_str().unwrap_or_default();
    assert!(
        message.ends_with(&format!(".{UNKNOWN}: field not declared in schema")),
        "{message}"
    );

    // The client's own apply meets the same refusal.
    let api =
        topograph_management::ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
            .await
            .expect("client");
    let refused = api
        .apply(&machine_deployment("v1beta2", "md"))
        .await
        .expect_err("a v1beta2 MachineDeployment with nodeDrainTimeout is refused");
    assert!(refused.to_string().contains(UNKNOWN), "{refused}");
}

#[tokio::test]
async fn strict_create_refuses_it_and_the_default_prunes_it_with_a_warning() {
    let server = start().await;
    let strict = request(
        &server,
        "POST",
        &format!("{}?fieldValidation=Strict", machine_deployments("v1beta2")),
        "application/json",
        &machine_deployment("v1beta2", "strict"),
    )
    .await;
    assert_eq!(strict.code, 400, "{}", strict.body);
    assert_eq!(strict.body["reason"], "BadRequest");
    assert_eq!(
        strict.body["message"],
        format!(
            "MachineDeployment in version \"v1beta2\" cannot be handled as a MachineDeployment: strict decoding error: unknown field \"{UNKNOWN}\""
        )
    );

    // No directive is Warn: created without the field, one warning naming it.
    let warned = request(
        &server,
        "POST",
        &machine_deployments("v1beta2"),
        "application/json",
        &machine_deployment("v1beta2", "warned"),
    )
    .await;
    assert_eq!(warned.code, 201, "{}", warned.body);
    assert_eq!(
        warned.warnings,
        [format!(r#"299 - "unknown field \"{UNKNOWN}\"""#)]
    );
    assert!(
        warned
            .body
            .pointer("/spec/template/spec/nodeDrainTimeout")
            .is_none(),
        "{}",
        warned.body
    );

    // Ignore: the same, silently.
    let ignored = request(
        &server,
        "POST",
        &format!("{}?fieldValidation=Ignore", machine_deployments("v1beta2")),
        "application/json",
        &machine_deployment("v1beta2", "ignored"),
    )
    .await;
    assert_eq!((ignored.code, ignored.warnings.len()), (201, 0));

    // A directive kube-apiserver does not know is refused as its option validation does.
    let bogus = request(
        &server,
        "POST",
        &format!("{}?fieldValidation=Loud", machine_deployments("v1beta2")),
        "application/json",
        &machine_deployment("v1beta2", "bogus"),
    )
    .await;
    assert_eq!(bogus.code, 422, "{}", bogus.body);
    assert_eq!(
        bogus.body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Loud\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );
}

#[tokio::test]
async fn the_v1beta1_field_in_a_v1beta1_request_is_accepted_and_converted() {
    let server = start().await;
    for (method, path, content_type) in [
        (
            "POST",
            format!("{}?fieldValidation=Strict", machine_deployments("v1beta1")),
            "application/json",
        ),
        (
            "PATCH",
            format!(
                "{}/applied?fieldManager=topograph&force=true",
                machine_deployments("v1beta1")
            ),
            "application/apply-patch+yaml",
        ),
    ] {
        let name = if method == "POST" {
            "created"
        } else {
            "applied"
        };
        let answer = request(
            &server,
            method,
            &path,
            content_type,
            &machine_deployment("v1beta1", name),
        )
        .await;
        assert_eq!(answer.code, 201, "{method}: {}", answer.body);
        assert!(answer.warnings.is_empty(), "{:?}", answer.warnings);
        assert_eq!(
            answer.body.pointer("/spec/template/spec/nodeDrainTimeout"),
            Some(&json!("10s"))
        );
        // Stored in v1beta2, where the same setting has its v1beta2 name.
        let read = request(
            &server,
            "GET",
            &format!("{}/{name}", machine_deployments("v1beta2")),
            "application/json",
            &Value::Null,
        )
        .await;
        assert_eq!(read.code, 200, "{}", read.body);
        assert_eq!(
            read.body
                .pointer("/spec/template/spec/deletion/nodeDrainTimeoutSeconds"),
            Some(&json!(10)),
            "{}",
            read.body
        );
        assert!(
            read.body
                .pointer("/spec/template/spec/nodeDrainTimeout")
                .is_none()
        );
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// clusterctl's variables from a `values.env` (`NAME=VALUE`, `#` comments).
fn values(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect()
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(yaml_files(&path));
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The Clusters and ClusterClasses of the examples and, when the steering repository's
/// `shared/real-world` is beside the workspace, of Cluster API's and the providers'
/// published files (placeholders filled from each folder's `values.env`).
fn cluster_api_documents() -> Vec<(String, Value)> {
    let mut folders: Vec<PathBuf> = ["quick-start", "quick-start-v1beta2", "mixed"]
        .iter()
        .map(|name| workspace().join("examples").join(name))
        .collect();
    let real_world = workspace().join("../shared/real-world");
    if real_world.exists() {
        folders.push(real_world.join("cluster-api-v1.10.10"));
        let mut providers: Vec<PathBuf> = std::fs::read_dir(real_world.join("providers"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        providers.sort();
        folders.extend(providers);
    } else {
        eprintln!("../shared/real-world is not present: the examples alone");
    }
    let defaults: BTreeMap<String, String> = [
        ("CLUSTER_NAME", "dev"),
        ("NAMESPACE", "default"),
        ("KUBERNETES_VERSION", "v1.30.0"),
        ("CONTROL_PLANE_MACHINE_COUNT", "3"),
        ("WORKER_MACHINE_COUNT", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut out = Vec::new();
    for folder in folders {
        let mut vars = defaults.clone();
        vars.extend(values(&folder.join("values.env")));
        for file in yaml_files(&folder) {
            let name = file.display().to_string();
            let text = std::fs::read_to_string(&file).expect("readable");
            let text = topograph_api::envsubst::substitute(&text, &vars)
                .unwrap_or_else(|missing| panic!("{name}: unset {missing:?}"));
            let (docs, errors) = topograph_api::load::parse_documents(&name, &text);
            assert!(errors.is_empty(), "{name}: {errors:?}");
            for doc in docs {
                let doc = doc.value;
                if doc.api_version().starts_with("cluster.x-k8s.io/")
                    && matches!(doc.kind(), "Cluster" | "ClusterClass")
                {
                    out.push((format!("{name}: {} {}", doc.kind(), doc.name()), doc));
                }
            }
        }
    }
    out
}

#[tokio::test]
async fn every_example_and_published_class_and_cluster_passes_its_versions_schema() {
    let server = start().await;
    let documents = cluster_api_documents();
    let mut namespaces = BTreeSet::new();
    let mut versions = BTreeSet::new();
    for (what, doc) in &documents {
        let namespace = match doc.namespace() {
            "" => "default",
            ns => ns,
        };
        if namespaces.insert(namespace.to_string()) {
            let ns =
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
            let created = request(
                &server,
                "POST",
                "/api/v1/namespaces",
                "application/json",
                &ns,
            )
            .await;
            assert!(matches!(created.code, 201 | 409), "{}", created.body);
        }
        let version = doc.api_version().trim_start_matches("cluster.x-k8s.io/");
        versions.insert(version.to_string());
        let plural = crds::plural(doc.kind());
        // A dry run: the same names recur across folders, and nothing needs storing.
        let path = format!(
            "/apis/cluster.x-k8s.io/{version}/namespaces/{namespace}/{plural}?fieldValidation=Strict&dryRun=All"
        );
        let answer = request(&server, "POST", &path, "application/json", doc).await;
        assert_eq!(answer.code, 201, "{what}: {}", answer.body);
        assert!(answer.warnings.is_empty(), "{what}: {:?}", answer.warnings);
        // The schema is a real one: a field it does not have is refused.
        let mut misspelt = doc.clone();
        misspelt["spec"]["topologyy"] = json!({});
        let answer = request(&server, "POST", &path, "application/json", &misspelt).await;
        assert_eq!(answer.code, 400, "{what}: {}", answer.body);
    }
    assert!(
        versions.contains("v1beta1") && versions.contains("v1beta2"),
        "{versions:?}"
    );
    assert!(documents.len() >= 6, "{} documents", documents.len());
}
