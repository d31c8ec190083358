//! Simulated providers for scale tests, in the spirit of Cluster API's in-memory
//! provider: infrastructure clusters, control planes, infrastructure machine pools and
//! bootstrap configs become ready, MachineDeployments and MachinePools report their
//! replicas, each a configurable delay after their spec last changed, and Clusters get
//! the readiness and owner references Cluster API's core controller gives.
//! Providers report status the way the contract their CRD declares has it
//! (`cluster.x-k8s.io/<contract>` labels): v1beta2-contract providers only in the v1beta2
//! contract's fields (`status.initialization.*`, `upToDateReplicas`, ...); others, as
//! providers moving between contracts do, in both.
//! Writes go through the store (events, resourceVersions) but are not client requests.

use crate::selector::Filter;
use crate::store::{PatchType, Store, Sub};
use crate::types::ResourceType;
use crate::util::meta_str;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use topograph_api::contract::{self, Contract};
use topograph_api::object::ObjectExt;

const INFRA_GROUP: &str = "infrastructure.cluster.x-k8s.io";
const CONTROL_PLANE_GROUP: &str = "controlplane.cluster.x-k8s.io";
const BOOTSTRAP_GROUP: &str = "bootstrap.cluster.x-k8s.io";
const CLUSTER_GROUP: &str = "cluster.x-k8s.io";
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    InfraCluster,
    ControlPlane,
    MachineDeployment,
    InfraMachinePool,
    BootstrapConfig,
    MachinePool,
    Cluster,
}

fn role(rt: &ResourceType) -> Option<Role> {
    match rt.group.as_str() {
        INFRA_GROUP if rt.kind.ends_with("MachinePool") => Some(Role::InfraMachinePool),
        INFRA_GROUP if !rt.kind.ends_with("Template") && !rt.kind.contains("Machine") => {
            Some(Role::InfraCluster)
        }
        CONTROL_PLANE_GROUP if !rt.kind.ends_with("Template") => Some(Role::ControlPlane),
        BOOTSTRAP_GROUP if !rt.kind.ends_with("Template") => Some(Role::BootstrapConfig),
        CLUSTER_GROUP if rt.kind == "MachineDeployment" => Some(Role::MachineDeployment),
        CLUSTER_GROUP if rt.kind == "MachinePool" => Some(Role::MachinePool),
        CLUSTER_GROUP if rt.kind == "Cluster" => Some(Role::Cluster),
        _ => None,
    }
}

/// When each object's current generation was first seen: its spec is "done" `delay` later.
pub(crate) struct Simulator {
    store: Arc<Store>,
    delay: Duration,
    seen: HashMap<(String, String, String), (i64, Instant)>,
}

/// A MachineDeployment or MachinePool with its resource type.
type Worker = (Arc<ResourceType>, Value);

impl Simulator {
    pub fn new(store: Arc<Store>, delay: Duration) -> Self {
        Simulator {
            store,
            delay,
            seen: HashMap::new(),
        }
    }

    pub async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        let tick = (self.delay / 4).clamp(Duration::from_millis(10), Duration::from_millis(500));
        loop {
            tokio::select! {
                _ = tokio::time::sleep(tick) => self.sweep(),
                _ = shutdown.wait_for(|v| *v) => return,
            }
        }
    }

    /// One pass over all simulated kinds: clusters last, so they see this pass's readiness.
    pub fn sweep(&mut self) {
        let now = Instant::now();
        let mut types: Vec<(Arc<ResourceType>, Role)> = self
            .store
            .types()
            .into_iter()
            .filter_map(|t| role(&t).map(|r| (t, r)))
            .collect();
        types.sort_by_key(|(_, r)| *r == Role::Cluster);
        let mut alive = Vec::new();
        // MachineDeployments and MachinePools by (namespace, cluster name), gathered as
        // their pass lists them, so each Cluster finds its own without a list of its
        // own: a list per Cluster scanned every worker of the store, quadratic in the
        // fleet's size.
        let mut workers: HashMap<(String, String), Vec<Worker>> = HashMap::new();
        for (rt, role) in types {
            let (objects, _) = self.store.list(&rt, None, &Filter::default());
            let objects: Vec<Value> = objects
                .into_iter()
                .filter_map(|o| self.view(&rt, o))
                .collect();
            for obj in objects {
                if matches!(role, Role::MachineDeployment | Role::MachinePool)
                    && let Some(cluster) = obj
                        .pointer("/metadata/labels")
                        .and_then(|l| l.get(CLUSTER_NAME_LABEL))
                        .and_then(Value::as_str)
                {
                    workers
                        .entry((meta_str(&obj, "namespace").to_string(), cluster.to_string()))
                        .or_default()
                        .push((rt.clone(), obj.clone()));
                }
                if obj.pointer("/metadata/deletionTimestamp").is_some() {
                    continue;
                }
                let key = (
                    rt.key(),
                    meta_str(&obj, "namespace").to_string(),
                    meta_str(&obj, "name").to_string(),
                );
                let generation = obj
                    .pointer("/metadata/generation")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                let entry = self.seen.entry(key.clone()).or_insert((generation, now));
                if entry.0 != generation {
                    *entry = (generation, now);
                }
                let due = now.duration_since(entry.1) >= self.delay;
                alive.push(key);
                match role {
                    Role::InfraCluster if due => self.infra_ready(&rt, &obj),
                    Role::ControlPlane if due => {
                        let replicas = obj
                            .pointer("/spec/replicas")
                            .and_then(Value::as_i64)
                            .unwrap_or(1);
                        let mut status = json!({
                            "version": obj.pointer("/spec/version").cloned().unwrap_or(Value::Null),
                            "replicas": replicas, "readyReplicas": replicas,
                            "observedGeneration": generation,
                            "initialization": {"controlPlaneInitialized": true},
                        });
                        match self.contract(&rt, &obj) {
                            Contract::V1Beta1 => {
                                status["updatedReplicas"] = json!(replicas);
                                status["ready"] = json!(true);
                                status["initialized"] = json!(true);
                            }
                            Contract::V1Beta2 => {
                                status["upToDateReplicas"] = json!(replicas);
                                status["availableReplicas"] = json!(replicas);
                            }
                        }
                        self.patch(&rt, &obj, Sub::Status, json!({"status": status}));
                    }
                    Role::MachineDeployment if due => {
                        let replicas = obj
                            .pointer("/spec/replicas")
                            .and_then(Value::as_i64)
                            .unwrap_or(1);
                        self.patch(&rt, &obj, Sub::Status, json!({"status": {
                            "replicas": replicas, "readyReplicas": replicas, "updatedReplicas": replicas,
                            "availableReplicas": replicas, "observedGeneration": generation, "phase": "Running",
                        }}));
                    }
                    Role::InfraMachinePool if due => self.provisioned(&rt, &obj),
                    Role::BootstrapConfig if due => self.bootstrap_ready(&rt, &obj),
                    Role::MachinePool if due => self.machine_pool(&rt, &obj, generation),
                    Role::Cluster => {
                        let own = workers
                            .get(&(
                                meta_str(&obj, "namespace").to_string(),
                                meta_str(&obj, "name").to_string(),
                            ))
                            .map(Vec::as_slice)
                            .unwrap_or_default();
                        self.cluster(&rt, &obj, own);
                    }
                    _ => {}
                }
            }
        }
        let alive: std::collections::HashSet<_> = alive.into_iter().collect();
        self.seen.retain(|k, _| alive.contains(k));
    }

    fn infra_ready(&self, rt: &ResourceType, obj: &Value) {
        if obj
            .pointer("/spec/controlPlaneEndpoint/host")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            let host = format!("{}.sim.local", meta_str(obj, "name"));
            self.patch(
                rt,
                obj,
                Sub::Main,
                json!({"spec": {"controlPlaneEndpoint": {"host": host, "port": 6443}}}),
            );
        }
        self.provisioned(rt, obj);
    }

    /// An infrastructure object reports itself provisioned, in its contract's fields.
    fn provisioned(&self, rt: &ResourceType, obj: &Value) {
        let mut status = json!({"initialization": {"provisioned": true}});
        if self.contract(rt, obj) == Contract::V1Beta1 {
            status["ready"] = json!(true);
        }
        self.patch(rt, obj, Sub::Status, json!({"status": status}));
    }

    /// A bootstrap config reports its data secret (named like itself) created.
    fn bootstrap_ready(&self, rt: &ResourceType, obj: &Value) {
        let mut status = json!({
            "initialization": {"dataSecretCreated": true},
            "dataSecretName": meta_str(obj, "name"),
        });
        if self.contract(rt, obj) == Contract::V1Beta1 {
            status["ready"] = json!(true);
        }
        self.patch(rt, obj, Sub::Status, json!({"status": status}));
    }

    /// What Cluster API's MachinePool controller reports once the pool's infrastructure
    /// is provisioned: every replica ready, available and up to date for the generation
    /// it observed, phase `Running`. Read in v1beta1, so the v1beta2 counters go in
    /// `status.v1beta2` (the top of the status where v1beta2 is stored). Until then the
    /// pool reports nothing new: its observed generation stays behind, which is how the
    /// topology tells a pool still rolling out.
    fn machine_pool(&self, rt: &ResourceType, obj: &Value, generation: i64) {
        let ns = meta_str(obj, "namespace");
        let infrastructure_ready = obj
            .pointer("/spec/template/spec/infrastructureRef")
            .and_then(|r| self.resolve_ref(r, ns))
            .is_some_and(|(infra_type, infra)| {
                self.provider_ready(&infra_type, &infra, "infrastructureRef")
            });
        if !infrastructure_ready {
            return;
        }
        let replicas = obj
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        self.patch(
            rt,
            obj,
            Sub::Status,
            json!({"status": {
                "replicas": replicas, "readyReplicas": replicas,
                "availableReplicas": replicas, "unavailableReplicas": 0,
                "observedGeneration": generation, "phase": "Running",
                "bootstrapReady": true, "infrastructureReady": true,
                "v1beta2": {
                    "readyReplicas": replicas, "availableReplicas": replicas,
                    "upToDateReplicas": replicas,
                },
            }}),
        );
    }

    /// The contract `obj` implements, as its kind's CRD declares it (v1beta1 without a
    /// declaration).
    fn contract(&self, rt: &ResourceType, obj: &Value) -> Contract {
        let Some(crds) = self
            .store
            .resolve(crate::types::CRD_GROUP, crate::types::CRD_PLURAL)
        else {
            return Contract::default();
        };
        let api_version = obj.api_version();
        let version = crate::types::split_api_version(api_version).1;
        self.store
            .get(&crds, "", &format!("{}.{}", rt.plural, rt.group))
            .ok()
            .and_then(|crd| contract::from_crd(&crd))
            .map(|(_, _, declared)| declared.for_version(version))
            .unwrap_or_default()
    }

    /// Whether a provider object the Cluster references is ready by its contract: the
    /// infrastructure provisioned, the control plane initialized.
    fn provider_ready(&self, rt: &ResourceType, obj: &Value, field: &str) -> bool {
        let path = match (self.contract(rt, obj), field) {
            (Contract::V1Beta1, _) => "/status/ready",
            (Contract::V1Beta2, "infrastructureRef") => "/status/initialization/provisioned",
            (Contract::V1Beta2, _) => "/status/initialization/controlPlaneInitialized",
        };
        obj.pointer(path).and_then(Value::as_bool) == Some(true)
    }

    /// Readiness on the Cluster from the objects it references, and the Cluster made an
    /// owner of those objects and of its `workers` (MachineDeployments and MachinePools
    /// labelled with its name).
    fn cluster(&self, rt: &ResourceType, cluster: &Value, workers: &[Worker]) {
        let ns = meta_str(cluster, "namespace");
        let name = meta_str(cluster, "name");
        // Cluster API's core controller names the Cluster in its own (the preferred)
        // version.
        let owner_version = rt.api_version(rt.versions.first().map_or("v1beta1", String::as_str));
        let owner = json!({"apiVersion": owner_version, "kind": "Cluster", "name": name, "uid": meta_str(cluster, "uid")});
        let mut status = serde_json::Map::new();
        for (field, ready_field, init_field) in [
            (
                "infrastructureRef",
                "infrastructureReady",
                "infrastructureProvisioned",
            ),
            (
                "controlPlaneRef",
                "controlPlaneReady",
                "controlPlaneInitialized",
            ),
        ] {
            let Some((ref_type, referenced)) = cluster
                .pointer(&format!("/spec/{field}"))
                .and_then(|r| self.resolve_ref(r, ns))
            else {
                continue;
            };
            self.add_owner(&ref_type, &referenced, &owner);
            let ready = self.provider_ready(&ref_type, &referenced, field);
            // In the fields of the version the Cluster was read in: a field that
            // version does not have would never read back, and be written again on
            // every sweep.
            if ready && cluster.api_version().ends_with("/v1beta1") {
                status.insert(ready_field.into(), Value::Bool(true));
            } else if ready {
                let init = status.entry("initialization").or_insert_with(|| json!({}));
                init[init_field] = Value::Bool(true);
            }
        }
        if !status.is_empty() {
            self.patch(rt, cluster, Sub::Status, json!({"status": status}));
        }
        // Cluster API's MachineDeployment and MachinePool controllers make the Cluster
        // an owner of their objects.
        for (worker_type, worker) in workers {
            self.add_owner(worker_type, worker, &owner);
        }
    }

    /// The object a Cluster reference points to: `apiVersion` (v1beta1) or `apiGroup` (v1beta2).
    fn resolve_ref(&self, reference: &Value, ns: &str) -> Option<(Arc<ResourceType>, Value)> {
        let kind = reference.get("kind").and_then(Value::as_str)?;
        let name = reference.get("name").and_then(Value::as_str)?;
        let group = match reference.get("apiVersion").and_then(Value::as_str) {
            Some(av) => crate::types::split_api_version(av).0.to_string(),
            None => reference
                .get("apiGroup")
                .and_then(Value::as_str)?
                .to_string(),
        };
        let rt = self
            .store
            .types()
            .into_iter()
            .find(|t| t.group == group && t.kind == kind)?;
        let ns = if rt.namespaced { ns } else { "" };
        let obj = self.store.get(&rt, ns, name).ok()?;
        let obj = self.view(&rt, obj)?;
        Some((rt, obj))
    }

    fn add_owner(&self, rt: &ResourceType, obj: &Value, owner: &Value) {
        let mut refs = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if refs.iter().any(|r| r.get("uid") == owner.get("uid")) {
            return;
        }
        refs.push(owner.clone());
        self.patch(
            rt,
            obj,
            Sub::Main,
            json!({"metadata": {"ownerReferences": refs}}),
        );
    }

    /// A stored object as the simulated providers read it: in v1beta1 where the kind
    /// serves it (they play providers of the v1beta1 contract), else as stored.
    fn view(&self, rt: &ResourceType, obj: Value) -> Option<Value> {
        let version = if rt.serves("v1beta1") {
            "v1beta1"
        } else {
            &rt.storage_version
        };
        self.store.view(rt, obj, &rt.api_version(version)).ok()
    }

    fn patch(&self, rt: &ResourceType, obj: &Value, sub: Sub, patch: Value) {
        // Most sweeps find nothing to do: check on our copy instead of taking the lock.
        let mut merged = obj.clone();
        json_patch::merge(&mut merged, &patch);
        if merged == *obj {
            return;
        }
        // In the version the object was read in, so the patch means what it says.
        let api_version = obj.api_version();
        let version = crate::types::split_api_version(api_version).1;
        let result = self.store.patch(
            rt,
            version,
            meta_str(obj, "namespace"),
            meta_str(obj, "name"),
            PatchType::Merge,
            &patch,
            sub,
        );
        if let Err(e) = result {
            tracing::debug!(
                "simulated provider write to {} failed: {e}",
                meta_str(obj, "name")
            );
        }
    }
}
