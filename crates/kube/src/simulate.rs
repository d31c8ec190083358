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

mod looks;

use crate::objects::SharedKey;
use crate::selector::Filter;
use crate::store::{Event, EventType, PatchType, Store, Sub};
use crate::stored::Stored;
use crate::types::{ResourceType, type_key};
use crate::util::meta_str;
use serde_json::{Value, json};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, watch};
use topograph_api::contract::{self, Contract, Declared};
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

/// An object the simulation follows: its type key and its (namespace, name). Every
/// map of the simulation holds keys of every object, some twice (dependents both ways
/// round), so both parts are shared: the type key among all keys of its kind, the
/// name with the store's own copy of it when the object is there.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    type_key: Arc<str>,
    object: SharedKey,
}

impl Key {
    fn ns(&self) -> &str {
        &self.object.0
    }

    fn name(&self) -> &str {
        &self.object.1
    }
}

/// What the simulation knows between passes. It follows the store's change events, so
/// a pass reads only the objects that changed, came due, or depend on one that changed:
/// a settled fleet costs nothing, and a fleet's cost grows with its changes, not with
/// its size times the passes.
pub(crate) struct Simulator {
    store: Arc<Store>,
    delay: Duration,
    /// Simulated kinds by type key, and every kind by (group, kind) to resolve
    /// references; rebuilt when a CRD changes.
    kinds: HashMap<String, (Arc<ResourceType>, Role)>,
    by_kind: HashMap<(String, String), Arc<ResourceType>>,
    /// The contract each kind's CRD declares, read once per CRD change.
    contracts: HashMap<String, Option<Declared>>,
    /// Each object's generation and when it was first seen: its spec is "done" `delay` later.
    seen: HashMap<Key, (i64, Instant)>,
    /// Objects to look at in the next pass.
    dirty: HashSet<Key>,
    /// When objects' delays end, earliest first (stale entries only cost a look).
    due: BinaryHeap<Reverse<(Instant, Key)>>,
    /// Objects whose state decides another's: a Cluster's infrastructure and control
    /// plane, a MachinePool's infrastructure, the Cluster a worker waits for.
    dependents: Dependents,
    /// Look at every object again (at start, after missed events, when a CRD changed).
    resync: bool,
    /// Objects looked at so far, for tests to see that a settled fleet costs nothing.
    looked_at: u64,
    /// Control planes and MachineDeployments these match never get ready machines.
    failing: Vec<FailRule>,
    /// The last look at each object that changed nothing, to skip repeating it.
    looks: looks::Looks,
    /// The one copy of each type key the keys share.
    type_keys: HashSet<Arc<str>>,
}

/// A simulated provider told to fail: `KEY=VALUE[,KEY=VALUE...]` matches a control
/// plane or MachineDeployment carrying every one of those labels (on the object or its
/// machine template), where the key `version` means its Kubernetes version instead. Its
/// machines never become ready: its status observes each generation with no replica
/// ready or updated, as when new machines never join.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailRule {
    all: Vec<(String, String)>,
}

impl std::str::FromStr for FailRule {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let all = text
            .split(',')
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
                _ => Err(format!(
                    "{text:?}: expected KEY=VALUE[,KEY=VALUE...] (labels; the key version: a Kubernetes version)"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FailRule { all })
    }
}

impl FailRule {
    fn matches(&self, obj: &Value) -> bool {
        self.all.iter().all(|(key, value)| {
            let paths: &[&str] = if key == "version" {
                &["/spec/version", "/spec/template/spec/version"]
            } else {
                &["/metadata/labels", "/spec/template/metadata/labels"]
            };
            paths.iter().filter_map(|p| obj.pointer(p)).any(|found| {
                let found = if key == "version" {
                    Some(found)
                } else {
                    found.get(key)
                };
                found.and_then(Value::as_str) == Some(value.as_str())
            })
        })
    }
}

#[cfg(test)]
mod fail_rule_tests {
    use super::*;

    #[test]
    fn rules_match_labels_all_together_or_a_version() {
        let md = json!({"metadata": {"labels": {"cluster.x-k8s.io/cluster-name": "c-5"}},
                        "spec": {"template": {"metadata": {"labels": {"channel": "beta"}},
                                              "spec": {"version": "v1.31.0"}}}});
        let rule = |text: &str| text.parse::<FailRule>().unwrap_or_else(|e| panic!("{e}"));
        assert!(rule("channel=beta").matches(&md));
        assert!(rule("channel=beta,cluster.x-k8s.io/cluster-name=c-5").matches(&md));
        assert!(!rule("channel=beta,cluster.x-k8s.io/cluster-name=c-6").matches(&md));
        assert!(rule("version=v1.31.0").matches(&md));
        assert!(!rule("version=v1.30.0").matches(&md));
        assert!("nothing".parse::<FailRule>().is_err());
        assert!("=x".parse::<FailRule>().is_err());
    }
}

impl Simulator {
    /// Providers told to fail what `rules` match.
    pub fn failing(mut self, rules: Vec<FailRule>) -> Self {
        self.failing = rules;
        self
    }

    pub fn new(store: Arc<Store>, delay: Duration) -> Self {
        Simulator {
            store,
            delay,
            kinds: HashMap::new(),
            by_kind: HashMap::new(),
            contracts: HashMap::new(),
            seen: HashMap::new(),
            dirty: HashSet::new(),
            due: BinaryHeap::new(),
            dependents: Dependents::default(),
            resync: true,
            looked_at: 0,
            failing: Vec::new(),
            looks: looks::Looks::default(),
            type_keys: HashSet::new(),
        }
    }

    pub async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        let tick = (self.delay / 4).clamp(Duration::from_millis(10), Duration::from_millis(500));
        let mut events = self.store.subscribe();
        let mut next = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = shutdown.wait_for(|v| *v) => return,
                event = events.recv() => match event {
                    Ok(event) => self.observe(&event),
                    Err(broadcast::error::RecvError::Lagged(_)) => self.resync = true,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = tokio::time::sleep_until(next) => {
                    self.pass(&mut events);
                    next = tokio::time::Instant::now() + tick;
                }
            }
        }
    }

    /// A change in the store: the object and whatever depends on it are looked at in
    /// the next pass (where a new generation starts its delay, so objects changed
    /// together come due together).
    fn observe(&mut self, event: &Event) {
        if event.type_key == type_key(crate::types::CRD_GROUP, crate::types::CRD_PLURAL) {
            // A new kind, or a kind's declared contract changed: everything is read again.
            self.resync = true;
            return;
        }
        if self.resync || !self.kinds.contains_key(&event.type_key) {
            // Not simulated, or about to be read anew anyway.
            return;
        }
        let key = Key {
            type_key: self.type_key(&event.type_key),
            object: event.object.key().clone(),
        };
        self.dirty.extend(self.dependents.of(&key).cloned());
        if event.event_type == EventType::Deleted {
            self.seen.remove(&key);
            self.dependents.forget(&key);
            self.looks.forget(&key);
            return;
        }
        self.dirty.insert(key);
    }

    /// The shared copy of a type key.
    fn type_key(&mut self, type_key: &str) -> Arc<str> {
        if let Some(shared) = self.type_keys.get(type_key) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(type_key);
        self.type_keys.insert(shared.clone());
        shared
    }

    /// The key of `ns/name` of `rt`'s kind, sharing the store's copy of its name when
    /// `stored` is the object as the store holds it.
    fn key(&mut self, rt: &ResourceType, ns: &str, name: &str, stored: Option<&Stored>) -> Key {
        Key {
            type_key: self.type_key(&rt.key()),
            object: match stored {
                Some(stored) => stored.key().clone(),
                None => Arc::new((ns.to_string(), name.to_string())),
            },
        }
    }

    /// Starts the delay of a generation not seen before.
    fn note_generation(&mut self, key: &Key, obj: &Value, now: Instant) -> Instant {
        let generation = obj
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        match self.seen.get_mut(key) {
            Some(seen) if seen.0 == generation => return seen.1,
            Some(seen) => *seen = (generation, now),
            None => {
                self.seen.insert(key.clone(), (generation, now));
            }
        }
        self.due.push(Reverse((now + self.delay, key.clone())));
        now
    }

    /// Everything the store holds of the simulated kinds, to be looked at.
    fn resync(&mut self) {
        self.resync = false;
        self.looks.clear();
        self.kinds.clear();
        self.by_kind.clear();
        self.contracts.clear();
        for rt in self.store.types() {
            self.by_kind
                .insert((rt.group.clone(), rt.kind.clone()), rt.clone());
            if let Some(role) = role(&rt) {
                self.kinds.insert(rt.key(), (rt, role));
            }
        }
        let now = Instant::now();
        let kinds: Vec<_> = self.kinds.values().map(|(rt, _)| rt.clone()).collect();
        let mut alive = HashSet::new();
        for rt in kinds {
            let (objects, _) = self.store.list(&rt, None, &Filter::default());
            for obj in objects {
                let key = self.key(
                    &rt,
                    meta_str(&obj, "namespace"),
                    meta_str(&obj, "name"),
                    None,
                );
                self.note_generation(&key, &obj, now);
                alive.insert(key.clone());
                self.dirty.insert(key);
            }
        }
        self.seen.retain(|k, _| alive.contains(k));
    }

    /// One pass over the objects that changed or came due: Clusters last, after this
    /// pass's own changes are in, so they see this pass's readiness.
    pub fn pass(&mut self, events: &mut broadcast::Receiver<Arc<Event>>) {
        if self.resync {
            self.resync();
        }
        let now = Instant::now();
        while let Some(Reverse((at, _))) = self.due.peek() {
            if *at > now {
                break;
            }
            if let Some(Reverse((_, key))) = self.due.pop() {
                self.dirty.insert(key);
            }
        }
        for key in self.take_dirty(false) {
            self.look_at(&key, now);
        }
        loop {
            match events.try_recv() {
                Ok(event) => self.observe(&event),
                Err(broadcast::error::TryRecvError::Lagged(_)) => self.resync = true,
                Err(_) => break,
            }
        }
        for key in self.take_dirty(true) {
            self.look_at(&key, now);
        }
    }

    /// Takes the dirty Clusters out (or everything else), leaving the rest dirty.
    fn take_dirty(&mut self, clusters: bool) -> Vec<Key> {
        let kinds = &self.kinds;
        let (taken, left): (HashSet<Key>, HashSet<Key>) =
            std::mem::take(&mut self.dirty).into_iter().partition(|k| {
                (kinds.get(&*k.type_key).map(|(_, r)| *r) == Some(Role::Cluster)) == clusters
            });
        self.dirty = left;
        taken.into_iter().collect()
    }

    /// Plays the provider (or core controller) of one object.
    fn look_at(&mut self, key: &Key, now: Instant) {
        let Some((rt, role)) = self.kinds.get(&*key.type_key).cloned() else {
            return;
        };
        let Ok(stored) = self.store.get_stored(&rt, key.ns(), key.name()) else {
            return;
        };
        if self
            .looks
            .repeats(key, &stored, self.due(key, now), &self.store)
        {
            self.looked_at += 1;
            return;
        }
        self.looks.start();
        // Providers decide from the object and write patches: its managed fields,
        // half of its text, are not read.
        let Some(obj) = self.view(&rt, stored.value_without_managed_fields()) else {
            self.looks.abandon(key);
            return;
        };
        self.looked_at += 1;
        self.act(key, &rt, role, &obj, now);
        let due = self.due(key, now);
        self.looks.finish(key, &rt, stored, due, &self.store);
    }

    /// Whether the delay of the object's generation is over (None: not seen yet).
    fn due(&self, key: &Key, now: Instant) -> Option<bool> {
        self.seen
            .get(key)
            .map(|(_, since)| now.duration_since(*since) >= self.delay)
    }

    /// What the provider (or core controller) does about `obj` as it is now.
    fn act(&mut self, key: &Key, rt: &Arc<ResourceType>, role: Role, obj: &Value, now: Instant) {
        if matches!(role, Role::MachineDeployment | Role::MachinePool) {
            self.owned_by_cluster(key, rt, obj);
        }
        if obj.pointer("/metadata/deletionTimestamp").is_some() {
            return;
        }
        let since = self.note_generation(key, obj, now);
        let generation = obj
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let due = now.duration_since(since) >= self.delay;
        if due
            && matches!(role, Role::ControlPlane | Role::MachineDeployment)
            && self.failing.iter().any(|rule| rule.matches(obj))
        {
            self.machines_failing(rt, obj, generation);
            return;
        }
        match role {
            Role::InfraCluster if due => self.infra_ready(rt, obj),
            Role::ControlPlane if due => {
                let replicas = replicas(obj);
                let mut status = json!({
                    "version": obj.pointer("/spec/version").cloned().unwrap_or(Value::Null),
                    "replicas": replicas, "readyReplicas": replicas,
                    "observedGeneration": generation,
                    "initialization": {"controlPlaneInitialized": true},
                });
                match self.contract(rt, obj) {
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
                self.patch(rt, obj, Sub::Status, json!({"status": status}));
            }
            Role::MachineDeployment if due => {
                let replicas = replicas(obj);
                let status = if obj.api_version().ends_with("/v1beta1") {
                    json!({
                        "replicas": replicas, "readyReplicas": replicas, "updatedReplicas": replicas,
                        "availableReplicas": replicas, "observedGeneration": generation, "phase": "Running",
                    })
                } else {
                    json!({
                        "replicas": replicas, "readyReplicas": replicas, "upToDateReplicas": replicas,
                        "availableReplicas": replicas, "observedGeneration": generation, "phase": "Running",
                        "deprecated": {"v1beta1": {
                            "readyReplicas": replicas, "updatedReplicas": replicas,
                            "availableReplicas": replicas, "unavailableReplicas": 0,
                        }},
                    })
                };
                self.patch(rt, obj, Sub::Status, json!({ "status": status }));
            }
            Role::InfraMachinePool if due => self.provisioned(rt, obj),
            Role::BootstrapConfig if due => self.bootstrap_ready(rt, obj),
            Role::MachinePool if due => self.machine_pool(key, rt, obj, generation),
            Role::Cluster => self.cluster(key, rt, obj),
            _ => {}
        }
    }

    /// What a control plane or MachineDeployment whose machines never join reports: its
    /// generation observed, no replica ready or updated.
    /// Cluster API's v1beta2 MachineDeployment keeps its v1beta1 counters under
    /// `deprecated.v1beta1`, which is what a v1beta1 reader sees.
    fn machines_failing(&mut self, rt: &ResourceType, obj: &Value, generation: i64) {
        let replicas = replicas(obj);
        let mut status = json!({
            "readyReplicas": 0, "upToDateReplicas": 0, "availableReplicas": 0,
            "observedGeneration": generation,
        });
        if rt.group != CLUSTER_GROUP || obj.api_version().ends_with("/v1beta1") {
            status["updatedReplicas"] = json!(0);
            status["unavailableReplicas"] = json!(replicas);
        } else {
            status["deprecated"] = json!({"v1beta1": {
                "readyReplicas": 0, "updatedReplicas": 0, "availableReplicas": 0,
                "unavailableReplicas": replicas,
            }});
        }
        self.patch(rt, obj, Sub::Status, json!({ "status": status }));
    }

    /// Cluster API's MachineDeployment and MachinePool controllers make the Cluster named
    /// by a worker's label its owner; a worker whose Cluster is not there yet waits for it.
    fn owned_by_cluster(&mut self, key: &Key, rt: &ResourceType, worker: &Value) {
        let Some(cluster_name) = worker
            .pointer("/metadata/labels")
            .and_then(|l| l.get(CLUSTER_NAME_LABEL))
            .and_then(Value::as_str)
        else {
            return;
        };
        let Some(cluster_type) = self
            .by_kind
            .get(&(CLUSTER_GROUP.to_string(), "Cluster".to_string()))
            .cloned()
        else {
            return;
        };
        let cluster = self
            .store
            .get_stored(&cluster_type, key.ns(), cluster_name)
            .ok();
        let cluster_key = self.key(&cluster_type, key.ns(), cluster_name, cluster.as_deref());
        self.dependents.link(&cluster_key, key);
        // Only the Cluster's uid is read: workers are looked at again on every change
        // of their Cluster, and parsing it whole each time was most of their cost.
        let uid = cluster.map(|cluster| cluster.uid());
        self.looks
            .read_uid(&cluster_type, key.ns(), cluster_name, uid.clone());
        if let Some(uid) = uid {
            let owner = owner_reference(&cluster_type, cluster_name, &uid);
            self.add_owner(rt, worker, &owner);
        }
    }
    fn infra_ready(&mut self, rt: &ResourceType, obj: &Value) {
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
    fn provisioned(&mut self, rt: &ResourceType, obj: &Value) {
        let mut status = json!({"initialization": {"provisioned": true}});
        if self.contract(rt, obj) == Contract::V1Beta1 {
            status["ready"] = json!(true);
        }
        self.patch(rt, obj, Sub::Status, json!({"status": status}));
    }

    /// A bootstrap config reports its data secret (named like itself) created.
    fn bootstrap_ready(&mut self, rt: &ResourceType, obj: &Value) {
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
    /// it observed, phase `Running`, in the fields of the version the pool was read in
    /// (v1beta1 keeps the v1beta2 counters under `status.v1beta2`, v1beta2 the v1beta1
    /// ones under `status.deprecated.v1beta1`). Until then the
    /// pool reports nothing new: its observed generation stays behind, which is how the
    /// topology tells a pool still rolling out.
    fn machine_pool(&mut self, key: &Key, rt: &ResourceType, obj: &Value, generation: i64) {
        let ns = meta_str(obj, "namespace");
        let infrastructure_ready = obj
            .pointer("/spec/template/spec/infrastructureRef")
            .and_then(|r| self.resolve_ref(r, ns, key))
            .is_some_and(|(infra_type, infra)| {
                self.provider_ready(&infra_type, &infra, "infrastructureRef")
            });
        if !infrastructure_ready {
            return;
        }
        let replicas = replicas(obj);
        let status = if obj.api_version().ends_with("/v1beta1") {
            json!({
                "replicas": replicas, "readyReplicas": replicas,
                "availableReplicas": replicas, "unavailableReplicas": 0,
                "observedGeneration": generation, "phase": "Running",
                "bootstrapReady": true, "infrastructureReady": true,
                "v1beta2": {
                    "readyReplicas": replicas, "availableReplicas": replicas,
                    "upToDateReplicas": replicas,
                },
            })
        } else {
            json!({
                "replicas": replicas, "readyReplicas": replicas,
                "availableReplicas": replicas, "upToDateReplicas": replicas,
                "observedGeneration": generation, "phase": "Running",
                "initialization": {"bootstrapDataSecretCreated": true, "infrastructureProvisioned": true},
                "deprecated": {"v1beta1": {
                    "readyReplicas": replicas, "availableReplicas": replicas,
                    "unavailableReplicas": 0,
                }},
            })
        };
        self.patch(rt, obj, Sub::Status, json!({ "status": status }));
    }

    /// The contract `obj` implements, as its kind's CRD declares it (v1beta1 without a
    /// declaration).
    fn contract(&mut self, rt: &ResourceType, obj: &Value) -> Contract {
        let key = rt.key();
        if !self.contracts.contains_key(&key) {
            let declared = self
                .store
                .resolve(crate::types::CRD_GROUP, crate::types::CRD_PLURAL)
                .and_then(|crds| {
                    self.store
                        .get(&crds, "", &format!("{}.{}", rt.plural, rt.group))
                        .ok()
                })
                .and_then(|crd| contract::from_crd(&crd))
                .map(|(_, _, declared)| declared);
            self.contracts.insert(key.clone(), declared);
        }
        let version = crate::types::split_api_version(obj.api_version()).1;
        self.contracts
            .get(&key)
            .and_then(Option::as_ref)
            .map(|declared| declared.for_version(version))
            .unwrap_or_default()
    }

    /// Whether a provider object the Cluster references is ready by its contract: the
    /// infrastructure provisioned, the control plane initialized.
    fn provider_ready(&mut self, rt: &ResourceType, obj: &Value, field: &str) -> bool {
        let path = match (self.contract(rt, obj), field) {
            (Contract::V1Beta1, _) => "/status/ready",
            (Contract::V1Beta2, "infrastructureRef") => "/status/initialization/provisioned",
            (Contract::V1Beta2, _) => "/status/initialization/controlPlaneInitialized",
        };
        obj.pointer(path).and_then(Value::as_bool) == Some(true)
    }

    /// Readiness on the Cluster from the objects it references, and the Cluster made
    /// an owner of those objects.
    fn cluster(&mut self, key: &Key, rt: &ResourceType, cluster: &Value) {
        let ns = meta_str(cluster, "namespace");
        let owner = cluster_owner(rt, cluster);
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
                .and_then(|r| self.resolve_ref(r, ns, key))
            else {
                continue;
            };
            self.add_owner(&ref_type, &referenced, &owner);
            let ready = self.provider_ready(&ref_type, &referenced, field);
            // In the fields of the version the Cluster was read in: a field that
            // version does not have would never read back, and be written again on
            // every pass.
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
    }

    /// The object a reference points to (`apiVersion` in v1beta1, `apiGroup` in
    /// v1beta2), whose changes `dependent` is looked at again for, from now on.
    fn resolve_ref(
        &mut self,
        reference: &Value,
        ns: &str,
        dependent: &Key,
    ) -> Option<(Arc<ResourceType>, Value)> {
        let kind = reference.get("kind").and_then(Value::as_str)?;
        let name = reference.get("name").and_then(Value::as_str)?;
        let group = match reference.get("apiVersion").and_then(Value::as_str) {
            Some(av) => crate::types::split_api_version(av).0,
            None => reference.get("apiGroup").and_then(Value::as_str)?,
        };
        let rt = self
            .by_kind
            .get(&(group.to_string(), kind.to_string()))?
            .clone();
        let ns = if rt.namespaced { ns } else { "" };
        let stored = self.store.get_stored(&rt, ns, name).ok();
        let key = self.key(&rt, ns, name, stored.as_deref());
        self.dependents.link(&key, dependent);
        self.looks.read_object(&rt, ns, name, stored.clone());
        let stored = stored?;
        // What is read of it (identity, owners, status, version) is all there is to
        // parse, unless a conversion webhook has to see the whole object.
        let read = match rt.group == CLUSTER_GROUP || !rt.webhook_conversion {
            true => stored.referenced(),
            false => None,
        };
        let obj = self.view(&rt, read.unwrap_or_else(|| stored.value()))?;
        Some((rt, obj))
    }

    fn add_owner(&self, rt: &ResourceType, obj: &Value, owner: &Value) {
        let refs = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array);
        // Nearly always owned already: checked before anything is copied.
        if refs.is_some_and(|refs| refs.iter().any(|r| r.get("uid") == owner.get("uid"))) {
            return;
        }
        let mut refs = refs.cloned().unwrap_or_default();
        refs.push(owner.clone());
        // Metadata reads the same in every version: written in the storage version,
        // the write converts nothing.
        self.write(
            rt,
            obj,
            &rt.storage_version,
            Sub::Main,
            &json!({"metadata": {"ownerReferences": refs}}),
        );
    }

    /// A stored object as the simulation reads it: Cluster API's own kinds as stored
    /// (its controllers work in the newest version, which the storage version is, so
    /// nothing is converted), providers' kinds in v1beta1 where the kind serves it
    /// (they play providers of the v1beta1 contract), else as stored.
    fn view(&self, rt: &ResourceType, obj: Value) -> Option<Value> {
        if rt.group == CLUSTER_GROUP {
            return Some(obj);
        }
        let version = if rt.serves("v1beta1") {
            "v1beta1"
        } else {
            &rt.storage_version
        };
        self.store.view(rt, obj, &rt.api_version(version)).ok()
    }

    fn patch(&self, rt: &ResourceType, obj: &Value, sub: Sub, patch: Value) {
        // Most passes find nothing to do: checked on the object read, without a write.
        if !changes(obj, &patch) {
            return;
        }
        // In the version the object was read in, so the patch means what it says.
        let version = crate::types::split_api_version(obj.api_version()).1;
        self.write(rt, obj, version, sub, &patch);
    }

    fn write(&self, rt: &ResourceType, obj: &Value, version: &str, sub: Sub, patch: &Value) {
        let result = self.store.patch(
            rt,
            version,
            meta_str(obj, "namespace"),
            meta_str(obj, "name"),
            PatchType::Merge,
            patch,
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

/// Whether merging `patch` (RFC 7386) into `target` changes it.
fn changes(target: &Value, patch: &Value) -> bool {
    let Some(patch) = patch.as_object() else {
        return target != patch;
    };
    let Some(target) = target.as_object() else {
        return true;
    };
    patch
        .iter()
        .any(|(key, value)| match (target.get(key), value) {
            (None, Value::Null) => false,
            (None, _) | (Some(_), Value::Null) => true,
            (Some(current), Value::Object(_)) => changes(current, value),
            (Some(current), value) => current != value,
        })
}

/// The replicas an object's spec asks for (one when it names none, as the providers
/// default it).
fn replicas(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// The owner reference Cluster API's core controllers give a Cluster's objects, naming
/// the Cluster in its preferred version.
fn cluster_owner(rt: &ResourceType, cluster: &Value) -> Value {
    owner_reference(rt, meta_str(cluster, "name"), meta_str(cluster, "uid"))
}

/// [`cluster_owner`] of the Cluster named `name` with uid `uid`.
fn owner_reference(rt: &ResourceType, name: &str, uid: &str) -> Value {
    let version = rt.api_version(rt.versions.first().map_or("v1beta1", String::as_str));
    json!({"apiVersion": version, "kind": "Cluster", "name": name, "uid": uid})
}

/// Which objects are looked at again when another changes, both ways round so a
/// deleted object's links go with it.
#[derive(Default)]
struct Dependents {
    of: HashMap<Key, HashSet<Key>>,
    on: HashMap<Key, HashSet<Key>>,
}

impl Dependents {
    fn link(&mut self, on: &Key, dependent: &Key) {
        if self.of.get(on).is_some_and(|d| d.contains(dependent)) {
            return;
        }
        self.of
            .entry(on.clone())
            .or_default()
            .insert(dependent.clone());
        self.on
            .entry(dependent.clone())
            .or_default()
            .insert(on.clone());
    }

    fn of<'a>(&'a self, key: &Key) -> impl Iterator<Item = &'a Key> + 'a {
        self.of.get(key).into_iter().flatten()
    }

    /// Drops a deleted object's links: what depended on it, and what it depended on.
    fn forget(&mut self, key: &Key) {
        if let Some(dependents) = self.of.remove(key) {
            for d in dependents {
                if let Some(on) = self.on.get_mut(&d) {
                    on.remove(key);
                }
            }
        }
        if let Some(on) = self.on.remove(key) {
            for o in on {
                if let Some(of) = self.of.get_mut(&o) {
                    of.remove(key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(group: &str, kind: &str) -> Value {
        crd_in(group, kind, &["v1beta1"])
    }

    /// A CRD serving `versions`, the first stored.
    fn crd_in(group: &str, kind: &str, versions: &[&str]) -> Value {
        let plural = format!("{}s", kind.to_lowercase());
        let versions: Vec<Value> = versions
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"name": v, "served": true, "storage": i == 0, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}))
            .collect();
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group, "scope": "Namespaced",
                "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
                "versions": versions,
            }
        })
    }

    fn fleet() -> Arc<Store> {
        let store = Arc::new(Store::new(10_000));
        for (group, kind) in [
            (CLUSTER_GROUP, "Cluster"),
            (CLUSTER_GROUP, "MachineDeployment"),
            (INFRA_GROUP, "DockerCluster"),
            (CONTROL_PLANE_GROUP, "KubeadmControlPlane"),
        ] {
            store.create_object(crd(group, kind)).expect("CRD");
        }
        store
    }

    fn object(group: &str, kind: &str, name: &str, rest: Value) -> Value {
        let mut obj = json!({"apiVersion": format!("{group}/v1beta1"), "kind": kind, "metadata": {"name": name}});
        json_patch::merge(&mut obj, &rest);
        obj
    }

    fn cluster(name: &str) -> Value {
        object(
            CLUSTER_GROUP,
            "Cluster",
            name,
            json!({"spec": {
                "infrastructureRef": {"apiVersion": format!("{INFRA_GROUP}/v1beta1"), "kind": "DockerCluster", "name": name},
                "controlPlaneRef": {"apiVersion": format!("{CONTROL_PLANE_GROUP}/v1beta1"), "kind": "KubeadmControlPlane", "name": name},
            }}),
        )
    }

    /// Passes as the running simulation makes them, with every change seen in between.
    fn settle(sim: &mut Simulator, events: &mut broadcast::Receiver<Arc<Event>>, passes: usize) {
        for _ in 0..passes {
            while let Ok(event) = events.try_recv() {
                sim.observe(&event);
            }
            sim.pass(events);
        }
    }

    fn get(store: &Store, group: &str, kind: &str, name: &str) -> Value {
        store
            .get_object(&format!("{group}/v1beta1"), kind, "default", name)
            .expect("object exists")
    }

    #[test]
    fn a_patch_changes_what_merging_it_would_change() {
        let target = json!({"status": {"ready": true, "replicas": 3}, "spec": {"a": [1]}});
        for (patch, expected) in [
            (json!({"status": {"ready": true}}), false),
            (json!({"status": {"ready": false}}), true),
            (json!({"status": {"gone": null}}), false),
            (json!({"status": {"replicas": null}}), true),
            (json!({"status": {"new": {"x": 1}}}), true),
            (json!({"spec": {"a": [1]}}), false),
            (json!({"spec": {"a": [1, 2]}}), true),
            (json!({"spec": {"a": {"b": 1}}}), true),
            (json!({}), false),
        ] {
            let mut merged = target.clone();
            json_patch::merge(&mut merged, &patch);
            assert_eq!(merged != target, expected, "{patch}");
            assert_eq!(changes(&target, &patch), expected, "{patch}");
        }
    }

    #[test]
    fn a_settled_fleet_reads_nothing_and_a_change_reads_only_what_it_touches() {
        let store = fleet();
        let mut sim = Simulator::new(store.clone(), Duration::ZERO);
        let mut events = store.subscribe();
        for name in ["a", "b", "c"] {
            store.create_object(cluster(name)).expect("Cluster");
            store
                .create_object(object(INFRA_GROUP, "DockerCluster", name, json!({})))
                .expect("infra");
            store
                .create_object(object(
                    CONTROL_PLANE_GROUP,
                    "KubeadmControlPlane",
                    name,
                    json!({"spec": {"version": "v1.33.0"}}),
                ))
                .expect("control plane");
        }
        settle(&mut sim, &mut events, 6);
        for name in ["a", "b", "c"] {
            let c = get(&store, CLUSTER_GROUP, "Cluster", name);
            assert_eq!(c["status"]["infrastructureReady"], true, "{c}");
            assert_eq!(c["status"]["controlPlaneReady"], true, "{c}");
        }

        let settled = sim.looked_at;
        settle(&mut sim, &mut events, 3);
        assert_eq!(sim.looked_at, settled, "a settled fleet is not read again");

        // An upgrade of one control plane: the control plane, then its Cluster, and
        // nothing of the other Clusters.
        store
            .merge_patch_object(
                &format!("{CONTROL_PLANE_GROUP}/v1beta1"),
                "KubeadmControlPlane",
                "default",
                "b",
                &json!({"spec": {"version": "v1.34.0"}}),
                Sub::Main,
            )
            .expect("upgrade");
        settle(&mut sim, &mut events, 4);
        let cp = get(&store, CONTROL_PLANE_GROUP, "KubeadmControlPlane", "b");
        assert_eq!(cp["status"]["version"], "v1.34.0");
        let read = sim.looked_at - settled;
        assert!(
            (2..=6).contains(&read),
            "an upgrade of one control plane read {read} objects"
        );
    }

    #[test]
    fn cluster_api_kinds_stored_in_v1beta2_get_v1beta2_status() {
        let store = Arc::new(Store::new(10_000));
        for kind in ["Cluster", "MachineDeployment", "MachinePool"] {
            store
                .create_object(crd_in(CLUSTER_GROUP, kind, &["v1beta2", "v1beta1"]))
                .expect("CRD");
        }
        for (group, kind) in [
            (INFRA_GROUP, "DockerCluster"),
            (INFRA_GROUP, "DockerMachinePool"),
            (CONTROL_PLANE_GROUP, "KubeadmControlPlane"),
        ] {
            store.create_object(crd(group, kind)).expect("CRD");
        }
        let mut sim = Simulator::new(store.clone(), Duration::ZERO);
        let mut events = store.subscribe();
        let v1beta2 = |kind: &str, name: &str, rest: Value| {
            let mut obj = json!({"apiVersion": format!("{CLUSTER_GROUP}/v1beta2"), "kind": kind, "metadata": {"name": name}});
            json_patch::merge(&mut obj, &rest);
            obj
        };
        store
            .create_object(v1beta2("Cluster", "c", json!({"spec": {
                "infrastructureRef": {"apiGroup": INFRA_GROUP, "kind": "DockerCluster", "name": "c"},
                "controlPlaneRef": {"apiGroup": CONTROL_PLANE_GROUP, "kind": "KubeadmControlPlane", "name": "c"},
            }})))
            .expect("Cluster");
        store
            .create_object(object(INFRA_GROUP, "DockerCluster", "c", json!({})))
            .expect("infra");
        store
            .create_object(object(
                CONTROL_PLANE_GROUP,
                "KubeadmControlPlane",
                "c",
                json!({}),
            ))
            .expect("control plane");
        store
            .create_object(v1beta2(
                "MachineDeployment",
                "md",
                json!({
                "metadata": {"labels": {CLUSTER_NAME_LABEL: "c"}}, "spec": {"replicas": 2}}),
            ))
            .expect("MachineDeployment");
        store
            .create_object(object(INFRA_GROUP, "DockerMachinePool", "mp", json!({})))
            .expect("infra machine pool");
        store
            .create_object(v1beta2("MachinePool", "mp", json!({
                "metadata": {"labels": {CLUSTER_NAME_LABEL: "c"}},
                "spec": {"replicas": 3, "template": {"spec": {"infrastructureRef": {"apiGroup": INFRA_GROUP, "kind": "DockerMachinePool", "name": "mp"}}}}})))
            .expect("MachinePool");
        settle(&mut sim, &mut events, 6);

        let get2 = |kind: &str, name: &str| {
            store
                .get_object(&format!("{CLUSTER_GROUP}/v1beta2"), kind, "default", name)
                .expect("object exists")
        };
        let c = get2("Cluster", "c");
        assert_eq!(
            c["status"]["initialization"],
            json!({"infrastructureProvisioned": true, "controlPlaneInitialized": true}),
            "{c}"
        );
        let md = get2("MachineDeployment", "md");
        assert_eq!(md["status"]["upToDateReplicas"], 2, "{md}");
        assert_eq!(md["status"]["readyReplicas"], 2, "{md}");
        assert_eq!(
            md["status"]["deprecated"]["v1beta1"]["updatedReplicas"], 2,
            "{md}"
        );
        let mp = get2("MachinePool", "mp");
        assert_eq!(mp["status"]["upToDateReplicas"], 3, "{mp}");
        assert_eq!(
            mp["status"]["initialization"]["infrastructureProvisioned"], true,
            "{mp}"
        );
        for owned in [&md, &mp] {
            assert_eq!(
                owned["metadata"]["ownerReferences"][0]["uid"], c["metadata"]["uid"],
                "{owned}"
            );
        }
    }

    #[test]
    fn objects_created_in_any_order_find_each_other() {
        let store = fleet();
        let mut sim = Simulator::new(store.clone(), Duration::ZERO);
        let mut events = store.subscribe();
        // The worker before its Cluster, the Cluster before what it references.
        store
            .create_object(object(
                CLUSTER_GROUP,
                "MachineDeployment",
                "md",
                json!({
                "metadata": {"labels": {CLUSTER_NAME_LABEL: "late"}}, "spec": {"replicas": 2}}),
            ))
            .expect("worker");
        settle(&mut sim, &mut events, 2);
        let created = store.create_object(cluster("late")).expect("Cluster");
        settle(&mut sim, &mut events, 2);
        store
            .create_object(object(INFRA_GROUP, "DockerCluster", "late", json!({})))
            .expect("infra");
        store
            .create_object(object(
                CONTROL_PLANE_GROUP,
                "KubeadmControlPlane",
                "late",
                json!({}),
            ))
            .expect("control plane");
        settle(&mut sim, &mut events, 6);

        let uid = meta_str(&created, "uid");
        for (group, kind, name) in [
            (CLUSTER_GROUP, "MachineDeployment", "md"),
            (INFRA_GROUP, "DockerCluster", "late"),
            (CONTROL_PLANE_GROUP, "KubeadmControlPlane", "late"),
        ] {
            let obj = get(&store, group, kind, name);
            assert_eq!(
                obj["metadata"]["ownerReferences"][0]["uid"], uid,
                "{kind}: {obj}"
            );
        }
        let c = get(&store, CLUSTER_GROUP, "Cluster", "late");
        assert_eq!(c["status"]["infrastructureReady"], true, "{c}");
        assert_eq!(c["status"]["controlPlaneReady"], true, "{c}");
    }
}
