//! A management cluster for reconcile tests: the in-memory API server with Cluster API's
//! and the quick-start providers' CRDs, the quick-start class and its templates, and
//! helpers to read, write and reconcile.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use topograph_api::contract::Contract;
use topograph_api::object::ObjectExt;
use topograph_engine::Local;
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::{ManagementCluster, crds};
use topograph_reconcile::hooks::{LifecycleHooks, NoHooks};
use topograph_reconcile::{Outcome, reconcile_cluster_with_hooks};

pub const V1BETA1: &str = "cluster.x-k8s.io/v1beta1";
pub const NS: &str = "default";

/// The quick-start class file (class and templates) and the example Cluster.
pub fn quick_start() -> (Vec<Value>, Value) {
    let read = |file: &str| {
        let path = format!(
            "{}/../../examples/quick-start/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let (docs, errors) = topograph_api::load::parse_documents(&path, &text);
        assert!(errors.is_empty(), "{errors:?}");
        docs.into_iter()
            .map(|d| {
                let mut v = d.value;
                if v.namespace().is_empty() {
                    v["metadata"]["namespace"] = json!(NS);
                }
                v
            })
            .collect::<Vec<_>>()
    };
    let class = read("clusterclass.yaml");
    let cluster = read("cluster.yaml").remove(0);
    (class, cluster)
}

/// A running in-memory management cluster and a client counting its writes.
pub struct Env {
    pub server: RunningServer,
    /// What the reconciles use.
    pub api: ManagementCluster,
    /// Another writer: the tests play users and providers through it.
    pub other: ManagementCluster,
    /// Every write `api` sent, as (kind, verb), in order.
    written: Arc<Mutex<Vec<(String, &'static str)>>>,
}

impl Env {
    /// A server with CRDs, the quick-start class and templates, and `clusters`.
    pub async fn start(class: Vec<Value>, clusters: Vec<Value>) -> Env {
        Env::start_with(class, clusters, None).await
    }

    /// [`Env::start`], with providers simulated by the server after `delay`.
    pub async fn start_with(
        class: Vec<Value>,
        clusters: Vec<Value>,
        simulate_providers: Option<std::time::Duration>,
    ) -> Env {
        Env::start_on(
            crds::cluster_api(),
            class,
            clusters,
            simulate_providers,
            Contract::V1Beta1,
        )
        .await
    }

    /// [`Env::start_with`], every provider kind's CRD declaring `contract`.
    pub async fn start_declaring(
        class: Vec<Value>,
        clusters: Vec<Value>,
        simulate_providers: Option<std::time::Duration>,
        contract: Contract,
    ) -> Env {
        Env::start_on(
            crds::cluster_api(),
            class,
            clusters,
            simulate_providers,
            contract,
        )
        .await
    }

    /// [`Env::start`] on a management cluster with Cluster API v1.10's CRDs (v1beta1
    /// alone), where v1beta1 fields v1beta2 dropped still exist.
    pub async fn start_v1beta1(class: Vec<Value>, clusters: Vec<Value>) -> Env {
        Env::start_on(
            crds::cluster_api_v1beta1(),
            class,
            clusters,
            None,
            Contract::V1Beta1,
        )
        .await
    }

    async fn start_on(
        mut seed: Vec<Value>,
        class: Vec<Value>,
        clusters: Vec<Value>,
        simulate_providers: Option<std::time::Duration>,
        contract: Contract,
    ) -> Env {
        seed.extend(crds::for_objects_declaring(&class, contract));
        let server = Server::start(Config {
            seed,
            simulate_providers,
            ..Config::default()
        })
        .await
        .unwrap();
        let written: Arc<Mutex<Vec<(String, &'static str)>>> = Arc::default();
        let log = written.clone();
        let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
            .await
            .unwrap()
            .with_write_observer(Arc::new(move |kind: &str, verb: &'static str| {
                log.lock().unwrap().push((kind.to_string(), verb));
            }));
        // Users and providers write under field managers of their own.
        let other = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
            .await
            .unwrap()
            .with_field_manager("someone-else");
        for object in class.iter().chain(&clusters) {
            other.create(object).await.unwrap();
        }
        Env {
            server,
            api,
            other,
            written,
        }
    }

    /// Every write the reconciles sent so far, as (kind, verb), in the order sent:
    /// the order of a reconcile's writes, which Events no longer show once similar
    /// ones are combined.
    pub fn written(&self) -> Vec<(String, &'static str)> {
        self.written.lock().unwrap().clone()
    }

    /// The quick-start class and the example Cluster.
    pub async fn quick_start() -> Env {
        let (class, cluster) = quick_start();
        Env::start(class, vec![cluster]).await
    }

    /// One reconcile of `default/<name>`; also checks the server saw exactly the writes
    /// the reconcile reports.
    pub async fn reconcile(&self, name: &str) -> Result<Outcome, String> {
        self.reconcile_with_hooks(name, &NoHooks).await
    }

    /// [`Env::reconcile`], lifecycle hooks answered by `hooks`.
    pub async fn reconcile_with_hooks(
        &self,
        name: &str,
        hooks: &dyn LifecycleHooks,
    ) -> Result<Outcome, String> {
        let before = self.server.counts().writes();
        let result = reconcile_cluster_with_hooks(&self.api, &Local, hooks, NS, name).await;
        let seen = self.server.counts().writes() - before;
        match result {
            Ok(outcome) => {
                assert_eq!(
                    outcome.writes, seen,
                    "writes reported vs seen by the server"
                );
                Ok(outcome)
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// Reconciles until a reconcile writes nothing (at most 5 times); returns the
    /// outcomes of the reconciles that wrote.
    pub async fn converge(&self, name: &str) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        for _ in 0..5 {
            let outcome = self.reconcile(name).await.unwrap();
            if outcome.writes == 0 {
                return outcomes;
            }
            outcomes.push(outcome);
        }
        panic!("no convergence after 5 reconciles: {outcomes:?}");
    }

    pub async fn get(&self, api_version: &str, kind: &str, name: &str) -> Option<Value> {
        self.other.get(api_version, kind, NS, name).await.unwrap()
    }

    pub async fn cluster(&self, name: &str) -> Value {
        self.get(V1BETA1, "Cluster", name).await.unwrap()
    }

    /// Objects of a kind owned by the topology of Cluster `cluster`.
    pub async fn owned(&self, api_version: &str, kind: &str, cluster: &str) -> Vec<Value> {
        self.other
            .list(
                api_version,
                kind,
                NS,
                &[
                    ("cluster.x-k8s.io/cluster-name", cluster),
                    ("topology.cluster.x-k8s.io/owned", ""),
                ],
            )
            .await
            .unwrap()
    }

    /// The MachineDeployment of a topology entry.
    pub async fn machine_deployment(&self, cluster: &str, topology_name: &str) -> Option<Value> {
        self.owned(V1BETA1, "MachineDeployment", cluster)
            .await
            .into_iter()
            .find(|md| {
                md.labels()
                    .get("topology.cluster.x-k8s.io/deployment-name")
                    .map(String::as_str)
                    == Some(topology_name)
            })
    }

    /// The MachinePool of a topology entry.
    pub async fn machine_pool(&self, cluster: &str, topology_name: &str) -> Option<Value> {
        self.owned(V1BETA1, "MachinePool", cluster)
            .await
            .into_iter()
            .find(|mp| {
                mp.labels()
                    .get("topology.cluster.x-k8s.io/pool-name")
                    .map(String::as_str)
                    == Some(topology_name)
            })
    }

    /// The object a MachinePool references at `path` (`bootstrap/configRef` or
    /// `infrastructureRef` under `spec.template.spec`).
    pub async fn pool_object(&self, pool: &Value, path: &str) -> Option<Value> {
        let r = pool.pointer(&format!("/spec/template/spec/{path}"))?;
        self.get(
            r["apiVersion"].as_str()?,
            r["kind"].as_str()?,
            r["name"].as_str()?,
        )
        .await
    }

    /// The ControlPlane the Cluster references.
    pub async fn control_plane(&self, cluster: &str) -> Value {
        let c = self.cluster(cluster).await;
        let r = &c["spec"]["controlPlaneRef"];
        self.get(
            r["apiVersion"].as_str().unwrap(),
            r["kind"].as_str().unwrap(),
            r["name"].as_str().unwrap(),
        )
        .await
        .unwrap()
    }

    /// Merge-patches an object as another writer.
    pub async fn patch(&self, object: &Value, patch: Value) -> Value {
        self.other.merge_patch(object, &patch).await.unwrap()
    }

    /// Merge-patches an object's status as a provider would.
    pub async fn patch_status(&self, object: &Value, status: Value) -> Value {
        self.other
            .merge_patch_status(object, &json!({ "status": status }))
            .await
            .unwrap()
    }

    /// Sets the Cluster `dev`'s topology fields with a merge patch, as a user would.
    pub async fn edit_topology(&self, patch: Value) {
        let cluster = self.cluster("dev").await;
        self.patch(&cluster, json!({"spec": {"topology": patch}}))
            .await;
    }

    /// Reports the control plane of `dev` at its spec version, as a provider would once
    /// done.
    pub async fn control_plane_reports(&self) {
        let cp = self.control_plane("dev").await;
        let version = cp["spec"]["version"].clone();
        self.patch_status(
            &cp,
            json!({"version": version, "ready": true, "initialized": true}),
        )
        .await;
    }

    /// Reports a MachineDeployment of `dev` as rolled out at its current generation.
    pub async fn machine_deployment_reports(&self, topology_name: &str) {
        let md = self.machine_deployment("dev", topology_name).await.unwrap();
        let replicas = md["spec"]["replicas"].clone();
        self.patch_status(
            &md,
            json!({"observedGeneration": md["metadata"]["generation"], "replicas": replicas,
                   "updatedReplicas": replicas, "readyReplicas": replicas}),
        )
        .await;
    }

    /// The version of a MachineDeployment of `dev` ("" when unset).
    pub async fn md_version(&self, topology_name: &str) -> String {
        let md = self.machine_deployment("dev", topology_name).await.unwrap();
        md["spec"]["template"]["spec"]["version"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The Cluster's `TopologyReconciled` condition (v1beta2 list).
    pub async fn condition(&self, cluster: &str) -> Value {
        let c = self.cluster(cluster).await;
        c["status"]["v1beta2"]["conditions"]
            .as_array()
            .and_then(|l| l.iter().find(|c| c["type"] == "TopologyReconciled"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Event messages recorded in the namespace, oldest first.
    pub async fn events(&self) -> Vec<String> {
        let mut events = self.other.list("v1", "Event", NS, &[]).await.unwrap();
        events.sort_by_key(|e| {
            e["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or("")
                .parse::<u64>()
                .unwrap_or(0)
        });
        events
            .iter()
            .map(|e| {
                format!(
                    "{}: {}",
                    e["reason"].as_str().unwrap_or(""),
                    e["message"].as_str().unwrap_or("")
                )
            })
            .collect()
    }
}
