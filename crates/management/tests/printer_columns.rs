//! Cluster API's printer columns in `crds::cluster_api()` and `crds::cluster_api_v1beta1()`,
//! per kind and version as Cluster API's CRDs declare them, and the Tables topograph-kube
//! builds from them for `kubectl get`.

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::crds;

const AVAILABLE: &str = r#".status.conditions[?(@.type=="Available")].status"#;
const PAUSED: &str = r#".status.conditions[?(@.type=="Paused")].status"#;
const VARIABLES_READY: &str = r#".status.conditions[?(@.type=="VariablesReady")].status"#;
const AGE: &str = ".metadata.creationTimestamp";

/// `(name, type, jsonPath, priority)`, in Cluster API's order.
type Column = (&'static str, &'static str, &'static str, i64);

/// Cluster API main's v1beta2 columns, for the kinds `cluster_api()` serves in v1beta2.
fn v1beta2(kind: &str) -> Vec<Column> {
    match kind {
        "Cluster" => vec![
            ("ClusterClass", "string", ".spec.topology.classRef.name", 0),
            ("Available", "string", AVAILABLE, 0),
            (
                "CP Desired",
                "integer",
                ".status.controlPlane.desiredReplicas",
                0,
            ),
            ("CP Current", "integer", ".status.controlPlane.replicas", 10),
            (
                "CP Ready",
                "integer",
                ".status.controlPlane.readyReplicas",
                10,
            ),
            (
                "CP Available",
                "integer",
                ".status.controlPlane.availableReplicas",
                0,
            ),
            (
                "CP Up-to-date",
                "integer",
                ".status.controlPlane.upToDateReplicas",
                0,
            ),
            ("W Desired", "integer", ".status.workers.desiredReplicas", 0),
            ("W Current", "integer", ".status.workers.replicas", 10),
            ("W Ready", "integer", ".status.workers.readyReplicas", 10),
            (
                "W Available",
                "integer",
                ".status.workers.availableReplicas",
                0,
            ),
            (
                "W Up-to-date",
                "integer",
                ".status.workers.upToDateReplicas",
                0,
            ),
            ("Paused", "string", PAUSED, 10),
            ("Phase", "string", ".status.phase", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.topology.version", 0),
        ],
        "ClusterClass" => vec![
            ("Paused", "string", PAUSED, 10),
            ("Variables Ready", "string", VARIABLES_READY, 0),
            ("Age", "date", AGE, 0),
        ],
        "MachineDeployment" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("Available", "string", AVAILABLE, 0),
            ("Desired", "integer", ".spec.replicas", 0),
            ("Current", "integer", ".status.replicas", 0),
            ("Ready", "integer", ".status.readyReplicas", 0),
            ("Available", "integer", ".status.availableReplicas", 0),
            ("Up-to-date", "integer", ".status.upToDateReplicas", 0),
            ("Paused", "string", PAUSED, 10),
            ("Phase", "string", ".status.phase", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.template.spec.version", 0),
        ],
        "MachineHealthCheck" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("Replicas", "integer", ".status.expectedMachines", 0),
            ("Healthy", "integer", ".status.currentHealthy", 0),
            ("Paused", "string", PAUSED, 10),
            ("Age", "date", AGE, 0),
        ],
        "MachinePool" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("Desired", "integer", ".spec.replicas", 0),
            ("Current", "integer", ".status.replicas", 0),
            ("Ready", "integer", ".status.readyReplicas", 0),
            ("Available", "integer", ".status.availableReplicas", 0),
            ("Up-to-date", "integer", ".status.upToDateReplicas", 0),
            ("Paused", "string", PAUSED, 10),
            ("Phase", "string", ".status.phase", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.template.spec.version", 0),
        ],
        other => panic!("no v1beta2 columns expected for {other}"),
    }
}

/// The v1beta1 columns: Cluster API 1.10's, which today's multi-version CRDs keep.
fn v1beta1(kind: &str) -> Vec<Column> {
    match kind {
        "Cluster" => vec![
            ("ClusterClass", "string", ".spec.topology.class", 0),
            ("Phase", "string", ".status.phase", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.topology.version", 0),
        ],
        "ClusterClass" => vec![("Age", "date", AGE, 0)],
        "MachineDeployment" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("Desired", "integer", ".spec.replicas", 10),
            ("Replicas", "integer", ".status.replicas", 0),
            ("Ready", "integer", ".status.readyReplicas", 0),
            ("Updated", "integer", ".status.updatedReplicas", 0),
            ("Unavailable", "integer", ".status.unavailableReplicas", 0),
            ("Phase", "string", ".status.phase", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.template.spec.version", 0),
        ],
        "MachineSet" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("Desired", "integer", ".spec.replicas", 10),
            ("Replicas", "integer", ".status.replicas", 0),
            ("Ready", "integer", ".status.readyReplicas", 0),
            ("Available", "integer", ".status.availableReplicas", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.template.spec.version", 0),
        ],
        "Machine" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("NodeName", "string", ".status.nodeRef.name", 0),
            ("ProviderID", "string", ".spec.providerID", 0),
            ("Phase", "string", ".status.phase", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.version", 0),
        ],
        "MachineHealthCheck" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("ExpectedMachines", "integer", ".status.expectedMachines", 0),
            ("MaxUnhealthy", "string", ".spec.maxUnhealthy", 0),
            ("CurrentHealthy", "integer", ".status.currentHealthy", 0),
            ("Age", "date", AGE, 0),
        ],
        // Cluster API declares this count a string.
        "MachinePool" => vec![
            ("Cluster", "string", ".spec.clusterName", 0),
            ("Desired", "integer", ".spec.replicas", 10),
            ("Replicas", "string", ".status.replicas", 0),
            ("Phase", "string", ".status.phase", 0),
            ("Age", "date", AGE, 0),
            ("Version", "string", ".spec.template.spec.version", 0),
        ],
        other => panic!("no v1beta1 columns expected for {other}"),
    }
}

/// The columns `crd` declares for `version`, read back into the test's shape.
fn declared(crd: &Value, version: &str) -> Vec<(String, String, String, i64)> {
    let served = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == version))
        .unwrap_or_else(|| panic!("{} serves {version}", crd.name()));
    served["additionalPrinterColumns"]
        .as_array()
        .unwrap_or_else(|| panic!("{} {version} has printer columns", crd.name()))
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            assert!(
                !text("description").is_empty(),
                "{} {version} {} has Cluster API's description",
                crd.name(),
                text("name")
            );
            assert!(
                c.get("format").is_none(),
                "no Cluster API column has a format"
            );
            (
                text("name"),
                text("type"),
                text("jsonPath"),
                c.get("priority").and_then(Value::as_i64).unwrap_or(0),
            )
        })
        .collect()
}

fn owned(columns: Vec<Column>) -> Vec<(String, String, String, i64)> {
    columns
        .into_iter()
        .map(|(n, t, p, prio)| (n.into(), t.into(), p.into(), prio))
        .collect()
}

#[test]
fn every_kind_and_version_declares_cluster_apis_columns() {
    let mut checked = 0;
    for (set, crds) in [
        ("cluster_api", crds::cluster_api()),
        ("cluster_api_v1beta1", crds::cluster_api_v1beta1()),
    ] {
        // Runtime SDK's ExtensionConfig comes with them; it has no printer columns.
        let (crds, others): (Vec<_>, Vec<_>) = crds
            .into_iter()
            .partition(|crd| crd["spec"]["group"] == "cluster.x-k8s.io");
        assert_eq!(
            others
                .iter()
                .map(|crd| crd["metadata"]["name"].as_str().unwrap_or_default())
                .collect::<Vec<_>>(),
            ["extensionconfigs.runtime.cluster.x-k8s.io"],
            "{set}"
        );
        assert_eq!(crds.len(), crds::CLUSTER_API_KINDS.len(), "{set}");
        for crd in &crds {
            let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
            let versions: Vec<&str> = crd["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v["name"].as_str())
                .collect();
            for version in versions {
                let want = match version {
                    "v1beta2" => v1beta2(kind),
                    "v1beta1" => v1beta1(kind),
                    other => panic!("{set}: {kind} serves {other}"),
                };
                assert_eq!(
                    declared(crd, version),
                    owned(want),
                    "{set}: {kind} {version}"
                );
                checked += 1;
            }
        }
    }
    // cluster_api(): five kinds in two versions, two in v1beta1; cluster_api_v1beta1():
    // seven in v1beta1.
    assert_eq!(checked, 5 * 2 + 2 + 7);
}

async fn start() -> RunningServer {
    Server::start(Config {
        seed: crds::cluster_api(),
        ..Config::default()
    })
    .await
    .expect("server starts")
}

/// Sends a request with `accept`; the status code and the JSON body.
async fn request(
    server: &RunningServer,
    method: &str,
    path: &str,
    accept: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connects");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAccept: {accept}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
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
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"));
    (code, body)
}

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

fn clusters(version: &str) -> String {
    format!("/apis/cluster.x-k8s.io/{version}/namespaces/default/clusters")
}

/// The cell of `column` in the row of the object called `name`.
fn cell<'a>(table: &'a Value, column: &str, name: &str) -> &'a Value {
    let index = table["columnDefinitions"]
        .as_array()
        .and_then(|cs| cs.iter().position(|c| c["name"] == column))
        .unwrap_or_else(|| panic!("no column {column} in {table}"));
    let row = table["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["cells"][0] == name))
        .unwrap_or_else(|| panic!("no row {name} in {table}"));
    &row["cells"][index]
}

fn column_names(table: &Value) -> Vec<&str> {
    table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect()
}

#[tokio::test]
async fn a_cluster_table_has_cluster_apis_columns_in_either_version() {
    let server = start().await;
    let created = [
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Cluster",
            "metadata": {"name": "written-v1beta2", "namespace": "default"},
            "spec": {"topology": {"classRef": {"name": "quick-start"}, "version": "v1.33.0"}}
        }),
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "Cluster",
            "metadata": {"name": "written-v1beta1", "namespace": "default"},
            "spec": {"topology": {"class": "quick-start-v1", "version": "v1.32.0"}}
        }),
    ];
    for cluster in &created {
        let version = cluster
            .api_version()
            .trim_start_matches("cluster.x-k8s.io/");
        let (code, body) = request(
            &server,
            "POST",
            &clusters(version),
            "application/json",
            Some(cluster),
        )
        .await;
        assert_eq!(code, 201, "{body}");
    }

    let (code, table) = request(&server, "GET", &clusters("v1beta2"), TABLE, None).await;
    assert_eq!(code, 200, "{table}");
    assert_eq!(table["kind"], "Table");
    let mut want = vec!["Name"];
    want.extend(v1beta2("Cluster").iter().map(|c| c.0));
    assert_eq!(column_names(&table), want);
    let priorities: Vec<i64> = table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["priority"].as_i64())
        .collect();
    assert_eq!(priorities.iter().filter(|p| **p == 10).count(), 5);
    assert_eq!(
        cell(&table, "ClusterClass", "written-v1beta2"),
        "quick-start"
    );
    assert_eq!(
        cell(&table, "ClusterClass", "written-v1beta1"),
        "quick-start-v1"
    );
    assert_eq!(cell(&table, "Version", "written-v1beta1"), "v1.32.0");
    // No status yet: kube-apiserver's cell for a path that finds nothing.
    assert_eq!(cell(&table, "Available", "written-v1beta2"), &Value::Null);

    let (code, table) = request(&server, "GET", &clusters("v1beta1"), TABLE, None).await;
    assert_eq!(code, 200, "{table}");
    assert_eq!(
        column_names(&table),
        ["Name", "ClusterClass", "Phase", "Age", "Version"]
    );
    assert_eq!(
        cell(&table, "ClusterClass", "written-v1beta2"),
        "quick-start"
    );
    assert_eq!(
        cell(&table, "ClusterClass", "written-v1beta1"),
        "quick-start-v1"
    );
    assert_eq!(cell(&table, "Version", "written-v1beta2"), "v1.33.0");

    // One object's Table, as `kubectl get cluster NAME` asks for it.
    let (code, table) = request(
        &server,
        "GET",
        &format!("{}/written-v1beta1", clusters("v1beta2")),
        TABLE,
        None,
    )
    .await;
    assert_eq!(code, 200, "{table}");
    assert_eq!(table["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        cell(&table, "ClusterClass", "written-v1beta1"),
        "quick-start-v1"
    );
}
