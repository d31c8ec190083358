//! Reads of a Cluster's own objects from watch-fed caches, in the process that watches
//! the management cluster (decision 0036).
//!
//! A converged reconcile of a quick-start Cluster read fifteen objects live: the
//! Cluster, its infrastructure cluster and control plane, the machine templates they
//! and its MachineDeployments reference, and lists of its MachineDeployments,
//! MachineSets, Machines, health checks and MachinePools. Cluster API reads all of them
//! through controller-runtime's informer caches. Here a management cluster's cache is
//! *held* ([`OwnedCache::hold`]) by the applier holding its watch lease, the one whose
//! watches queue its Clusters; any other process reads live.
//!
//! While held, each `(apiVersion, kind)` read through it is watched from its first read
//! (which is live) across namespaces: Clusters all, any other kind with the
//! `cluster.x-k8s.io/cluster-name` label only (what a Cluster owns). Objects are kept as
//! the JSON text the server sent and parsed when read, so a thousand Clusters cost
//! their text, not the several times more a parsed tree takes; managed-fields entries,
//! alike on every object one manager writes from one template but for their times,
//! are kept once for the whole cache (`kept_text`). What is answered:
//!
//! * an object found in the cache (anything else is read live: "not found" is never
//!   answered, so a missing object costs a request, as before);
//! * the objects of one Cluster carrying given labels (a list by the Cluster's label).
//!
//! Freshness comes from *fences*: a version of an object this process knows exists,
//! which the cache must have reached before it answers for that object (or, for a list,
//! for that object's Cluster). A fence is set by every write this client sends (its
//! answer's resourceVersion; a deletion fences until the object is gone) and by the
//! applier's watch index for every change of a Cluster or of the objects it watches, so
//! a reconcile never reads its own writes, or an older version than the index has seen
//! (what it was queued for, another applier's writes), out of date. Until the cache
//! reaches it, those reads are live; the watch delivering the version clears it (or
//! the read finding it reached, when two versions of a kind are kept). A fence not
//! reached within [`FENCE_TTL`] is dropped: by then the watch has failed (and reads are
//! live anyway) or the object moved on. ResourceVersions are compared as numbers when both are (etcd's revisions,
//! as every API server writes them), for equality otherwise.
//!
//! A watch that fails is not believed until it delivers again; releasing the cache
//! drops every object and stops its watches.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use kube::api::ObjectMeta;
use kube::runtime::watcher::{self, Event};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::task::JoinHandle;
use topograph_api::object::{ObjectExt, group_of};

use crate::api::ManagementCluster;
use crate::kept_text::{KeptText, Shared};

/// The label every object a Cluster owns carries.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// How long a fence holds reads live while its watch has not delivered its version.
pub const FENCE_TTL: Duration = Duration::from_secs(30);

/// The cache of one management cluster's Cluster-owned objects; empty and unused until
/// held. Shared by every clone of its client.
#[derive(Default)]
pub struct OwnedCache {
    held: RwLock<Option<Arc<Held>>>,
}

impl std::fmt::Debug for OwnedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedCache")
            .field("held", &self.held().is_some())
            .finish()
    }
}

/// `(namespace, name)`.
type Name = (String, String);

/// `(group, kind, namespace)`: where fences are looked up.
type Place = (String, String, String);

/// A cache while held: its stores, their watches and the fences.
#[derive(Default)]
struct Held {
    stores: Mutex<HashMap<(String, String), Arc<Store>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    fences: Arc<Mutex<Fences>>,
    /// Managed-fields entries, kept once for every store.
    shared: Arc<Shared>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Ok(tasks) = self.tasks.get_mut() {
            for task in tasks.drain(..) {
                task.abort();
            }
        }
    }
}

/// One object as kept: its text as sent, and what the cache indexes it by.
#[derive(Clone, Debug)]
struct Kept {
    text: KeptText,
    resource_version: String,
    cluster: String,
}

/// The kept objects of one `(apiVersion, kind)`.
struct Store {
    state: RwLock<StoreState>,
    shared: Arc<Shared>,
    /// Where this kind's fences are looked up: `(group, kind)`.
    group_kind: (String, String),
    fences: Arc<Mutex<Fences>>,
    /// No other store keeps this group's kind (in another version), so what this one
    /// has reached the cache has: a fence it reaches is cleared as its event arrives.
    alone: std::sync::atomic::AtomicBool,
}

impl Store {
    /// Clears the fence on `namespace/name` if this store has now reached it: fences
    /// last only while the cache lags, rather than until the next read of the object
    /// (the index fences every change it sees, most of which nothing reads soon).
    fn clear_reached(&self, state: &StoreState, namespace: &str, name: &str) {
        if !self.alone.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let Ok(mut fences) = self.fences.lock() else {
            return;
        };
        if fences.by_name.is_empty() {
            return;
        }
        // Clears a fence reached (or expired); one still ahead stays.
        fences.holds(&self.place(namespace), name, state, Instant::now());
    }

    /// Where this kind's fences in `namespace` are looked up.
    fn place(&self, namespace: &str) -> Place {
        let (group, kind) = &self.group_kind;
        (group.clone(), kind.clone(), namespace.to_string())
    }
}

#[derive(Default)]
struct StoreState {
    /// The watch's listing is in and it has not failed since (or delivered since).
    synced: bool,
    objects: HashMap<Name, Kept>,
    /// `(namespace, cluster)` -> names of the objects it owns.
    by_cluster: HashMap<Name, BTreeSet<String>>,
    /// A listing being taken.
    listing: Option<HashMap<Name, Kept>>,
}

impl StoreState {
    fn insert(&mut self, name: Name, kept: Kept) {
        self.unindex(&name);
        self.by_cluster
            .entry((name.0.clone(), kept.cluster.clone()))
            .or_default()
            .insert(name.1.clone());
        self.objects.insert(name, kept);
    }

    fn remove(&mut self, name: &Name) {
        self.unindex(name);
        self.objects.remove(name);
    }

    fn unindex(&mut self, name: &Name) {
        let Some(old) = self.objects.get(name) else {
            return;
        };
        let key = (name.0.clone(), old.cluster.clone());
        if let Some(names) = self.by_cluster.get_mut(&key) {
            names.remove(&name.1);
            if names.is_empty() {
                self.by_cluster.remove(&key);
            }
        }
    }

    fn replace_all(&mut self, objects: HashMap<Name, Kept>) {
        self.objects.clear();
        self.by_cluster.clear();
        for (name, kept) in objects {
            self.insert(name, kept);
        }
    }
}

impl crate::watched::Fed<Watched> for Store {
    fn event(&self, event: Event<Watched>) {
        let Ok(mut state) = self.state.write() else {
            return;
        };
        let state = &mut *state;
        match event {
            Event::Init => state.listing = Some(HashMap::new()),
            Event::InitApply(watched) => {
                let (name, kept) = watched.into_kept(&self.shared);
                state.listing.get_or_insert_default().insert(name, kept);
            }
            Event::InitDone => {
                let listed = state.listing.take().unwrap_or_default();
                state.replace_all(listed);
                state.synced = true;
            }
            Event::Apply(watched) => {
                let (name, kept) = watched.into_kept(&self.shared);
                state.insert(name.clone(), kept);
                state.synced = state.listing.is_none();
                self.clear_reached(state, &name.0, &name.1);
            }
            Event::Delete(watched) => {
                state.remove(&watched.name);
                state.synced = state.listing.is_none();
                self.clear_reached(state, &watched.name.0, &watched.name.1);
            }
        }
    }

    fn failed(&self) {
        if let Ok(mut state) = self.state.write() {
            state.synced = false;
        }
    }
}

/// A version of an object the cache must reach before answering for it.
#[derive(Debug)]
struct Fence {
    /// The owning Cluster's name (the object's own for a Cluster; may be empty).
    cluster: String,
    /// `None`: the object is being deleted; reached once the cache has it no more.
    resource_version: Option<String>,
    set: Instant,
}

#[derive(Default)]
struct Fences {
    by_name: HashMap<(Place, String), Fence>,
    /// `(place, cluster)` -> names fenced there.
    by_cluster: HashMap<(Place, String), BTreeSet<String>>,
    /// How many fences were left after the last sweep of expired ones.
    after_sweep: usize,
}

impl Fences {
    fn set(&mut self, place: Place, name: &str, fence: Fence) {
        // A fence is cleared when a read finds it reached; one on an object never read
        // again (its Cluster deleted) would stay: expired ones go whenever the fences
        // have doubled since the last sweep.
        if self.by_name.len() >= 2 * self.after_sweep + 1024 {
            self.sweep(fence.set);
        }
        self.clear(&place, name);
        self.by_cluster
            .entry((place.clone(), fence.cluster.clone()))
            .or_default()
            .insert(name.to_string());
        self.by_name.insert((place, name.to_string()), fence);
    }

    fn clear(&mut self, place: &Place, name: &str) {
        let key = (place.clone(), name.to_string());
        let Some(old) = self.by_name.remove(&key) else {
            return;
        };
        let key = (key.0, old.cluster);
        if let Some(names) = self.by_cluster.get_mut(&key) {
            names.remove(name);
            if names.is_empty() {
                self.by_cluster.remove(&key);
            }
        }
    }

    fn sweep(&mut self, now: Instant) {
        let expired: Vec<(Place, String)> = self
            .by_name
            .iter()
            .filter(|(_, fence)| now.duration_since(fence.set) >= FENCE_TTL)
            .map(|(key, _)| key.clone())
            .collect();
        for (place, name) in expired {
            self.clear(&place, &name);
        }
        self.after_sweep = self.by_name.len();
    }

    /// Whether a fence on `name` keeps the cache from answering for it now; a fence
    /// found reached (or expired) is cleared.
    fn holds(&mut self, place: &Place, name: &str, state: &StoreState, now: Instant) -> bool {
        let Some(fence) = self.by_name.get(&(place.clone(), name.to_string())) else {
            return false;
        };
        let kept = state.objects.get(&(place.2.clone(), name.to_string()));
        let reached = match (&fence.resource_version, kept) {
            (None, kept) => kept.is_none(),
            (Some(wanted), Some(kept)) => reached(&kept.resource_version, wanted),
            (Some(_), None) => false,
        };
        if reached || now.duration_since(fence.set) >= FENCE_TTL {
            self.clear(place, name);
            return false;
        }
        true
    }

    /// Whether a fence on any object of `cluster` keeps the cache from listing them.
    fn holds_cluster(
        &mut self,
        place: &Place,
        cluster: &str,
        state: &StoreState,
        now: Instant,
    ) -> bool {
        let names: Vec<String> = match self.by_cluster.get(&(place.clone(), cluster.to_string())) {
            Some(names) => names.iter().cloned().collect(),
            None => return false,
        };
        let mut held = false;
        for name in names {
            held |= self.holds(place, &name, state, now);
        }
        held
    }
}

/// Whether a cache at `have` has reached `wanted`: numerically when both are numbers
/// (as every API server's resourceVersions are), otherwise only when equal.
fn reached(have: &str, wanted: &str) -> bool {
    match (have.parse::<u64>(), wanted.parse::<u64>()) {
        (Ok(have), Ok(wanted)) => have >= wanted,
        _ => have == wanted,
    }
}

/// The Cluster `object` belongs to: a Cluster's own name, otherwise its
/// `cluster.x-k8s.io/cluster-name` label (empty without one).
pub(crate) fn cluster_of(object: &Value) -> String {
    if is_cluster(object.api_version(), object.kind()) {
        return object.name().to_string();
    }
    object
        .at(&["metadata", "labels", CLUSTER_NAME_LABEL])
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn is_cluster(api_version: &str, kind: &str) -> bool {
    kind == "Cluster" && group_of(api_version) == "cluster.x-k8s.io"
}

impl OwnedCache {
    /// Holds the cache (`true`: from now on reads may come from it, its watches
    /// starting with the first read of each kind) or releases it (`false`: every object
    /// and fence dropped, every watch stopped).
    pub fn hold(&self, hold: bool) {
        let Ok(mut held) = self.held.write() else {
            return;
        };
        match (hold, held.is_some()) {
            (true, false) => *held = Some(Arc::default()),
            (false, true) => *held = None,
            _ => {}
        }
    }

    /// Whether the cache is held.
    pub fn is_held(&self) -> bool {
        self.held().is_some()
    }

    fn held(&self) -> Option<Arc<Held>> {
        self.held.read().ok().and_then(|held| held.clone())
    }

    /// Fences `namespace/name` of `group`'s `kind` at `resource_version` (`None`: until it is
    /// gone): reads of it, and lists of `cluster`'s objects of the kind, are live until
    /// the cache has reached that version. Nothing when the cache is not held or does
    /// not keep the kind (its first listing, when it comes, is newer than this).
    pub fn fence(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
        cluster: &str,
        resource_version: Option<&str>,
    ) {
        let Some(held) = self.held() else {
            return;
        };
        let stores: Vec<Arc<Store>> = match held.stores.lock() {
            Ok(stores) => stores
                .iter()
                .filter(|((v, k), _)| k == kind && group_of(v) == group)
                .map(|(_, store)| store.clone())
                .collect(),
            Err(_) => return,
        };
        let Some(first) = stores.first() else {
            return;
        };
        // Under the store's lock, taken before the fences' as its events take them: an
        // event it has applied is seen here, and one it applies later sees the fence.
        let Ok(state) = first.state.read() else {
            return;
        };
        let Ok(mut fences) = held.fences.lock() else {
            return;
        };
        let place = (group.to_string(), kind.to_string(), namespace.to_string());
        let now = Instant::now();
        fences.set(
            place.clone(),
            name,
            Fence {
                cluster: cluster.to_string(),
                resource_version: resource_version.map(str::to_string),
                set: now,
            },
        );
        if stores.len() == 1 {
            // Already reached (the cache's watch was first): cleared at once.
            fences.holds(&place, name, &state, now);
        }
    }

    /// How many fences wait for their watch (for tests and metrics).
    pub fn fences(&self) -> usize {
        self.held()
            .and_then(|held| held.fences.lock().ok().map(|f| f.by_name.len()))
            .unwrap_or_default()
    }

    /// The store of a kind, once its watch has listed; the first call starts the watch.
    async fn store(
        &self,
        api: &ManagementCluster,
        api_version: &str,
        kind: &str,
    ) -> Option<Arc<Store>> {
        let held = self.held()?;
        let key = (api_version.to_string(), kind.to_string());
        let store = {
            let mut stores = held.stores.lock().ok()?;
            if let Some(store) = stores.get(&key) {
                return Some(store.clone());
            }
            let group = group_of(api_version).to_string();
            let mut alone = true;
            for ((other_version, other_kind), other) in stores.iter() {
                if other_kind == kind && group_of(other_version) == group {
                    alone = false;
                    other
                        .alone
                        .store(false, std::sync::atomic::Ordering::Relaxed);
                }
            }
            let store = Arc::new(Store {
                state: RwLock::default(),
                shared: held.shared.clone(),
                group_kind: (group, kind.to_string()),
                fences: held.fences.clone(),
                alone: alone.into(),
            });
            stores.insert(key.clone(), store.clone());
            store
        };
        let config = if is_cluster(api_version, kind) {
            watcher::Config::default()
        } else {
            watcher::Config::default().labels(CLUSTER_NAME_LABEL)
        };
        let started = crate::watched::start::<Watched, _>(
            api,
            api_version,
            kind,
            config,
            &store,
            &held.tasks,
        )
        .await;
        if !started && let Ok(mut stores) = held.stores.lock() {
            stores.remove(&key);
        }
        None
    }

    /// `namespace/name` of `kind` as the cache has it, or `None`: read it live.
    pub(crate) async fn get(
        &self,
        api: &ManagementCluster,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<Value> {
        let store = self.store(api, api_version, kind).await?;
        // Parsed under the read lock: copying the text out first would cost as much.
        let state = store.state.read().ok()?;
        if !state.synced {
            return None;
        }
        let kept = state
            .objects
            .get(&(namespace.to_string(), name.to_string()))?;
        let place = store.place(namespace);
        if store
            .fences
            .lock()
            .ok()?
            .holds(&place, name, &state, Instant::now())
        {
            return None;
        }
        serde_json::from_str(&kept.text.whole()).ok()
    }

    /// The objects of `kind` in `namespace` that `cluster` owns and that carry every
    /// label of `labels` (as [`ManagementCluster::list`] matches them), or `None`: list
    /// them live.
    pub(crate) async fn list(
        &self,
        api: &ManagementCluster,
        api_version: &str,
        kind: &str,
        namespace: &str,
        cluster: &str,
        labels: &[(&str, &str)],
    ) -> Option<Vec<Value>> {
        let store = self.store(api, api_version, kind).await?;
        let state = store.state.read().ok()?;
        if !state.synced {
            return None;
        }
        let place = store.place(namespace);
        if store
            .fences
            .lock()
            .ok()?
            .holds_cluster(&place, cluster, &state, Instant::now())
        {
            return None;
        }
        let names = state
            .by_cluster
            .get(&(namespace.to_string(), cluster.to_string()));
        let mut out = Vec::new();
        for name in names.into_iter().flatten() {
            let Some(kept) = state.objects.get(&(namespace.to_string(), name.clone())) else {
                continue;
            };
            let object: Value = serde_json::from_str(&kept.text.whole()).ok()?;
            let carries = labels.iter().all(|(key, value)| {
                object
                    .at(&["metadata", "labels", key])
                    .and_then(Value::as_str)
                    == Some(*value)
            });
            if carries {
                out.push(object);
            }
        }
        Some(out)
    }
}

/// An object as the cache's watches read it: its text as sent, and the little of its
/// metadata the cache indexes it by.
#[derive(Clone, Debug)]
struct Watched {
    metadata: ObjectMeta,
    name: Name,
    cluster: String,
    text: Box<RawValue>,
}

impl Watched {
    fn into_kept(self, shared: &Shared) -> (Name, Kept) {
        (
            self.name,
            Kept {
                text: KeptText::new(self.text.get(), shared),
                resource_version: self.metadata.resource_version.unwrap_or_default(),
                cluster: self.cluster,
            },
        )
    }
}

/// What is read of a watched object's text besides keeping it.
#[derive(Deserialize)]
struct Head {
    #[serde(default, rename = "apiVersion")]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: HeadMetadata,
}

#[derive(Default, Deserialize)]
struct HeadMetadata {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(default)]
    labels: Option<HashMap<String, Value>>,
}

impl<'de> Deserialize<'de> for Watched {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text: Box<RawValue> = Deserialize::deserialize(deserializer)?;
        let head: Head = serde_json::from_str(text.get()).map_err(D::Error::custom)?;
        let meta = head.metadata;
        let cluster = if is_cluster(&head.api_version, &head.kind) {
            meta.name.clone()
        } else {
            meta.labels
                .as_ref()
                .and_then(|labels| labels.get(CLUSTER_NAME_LABEL))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Ok(Watched {
            metadata: ObjectMeta {
                resource_version: meta.resource_version,
                ..ObjectMeta::default()
            },
            name: (meta.namespace, meta.name),
            cluster,
            text,
        })
    }
}

crate::dynamic_resource!(Watched);

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(resource_version: &str, cluster: &str) -> Kept {
        Kept {
            text: KeptText::new("{}", &Shared::default()),
            resource_version: resource_version.to_string(),
            cluster: cluster.to_string(),
        }
    }

    fn at(namespace: &str) -> Place {
        (
            "cluster.x-k8s.io".into(),
            "MachineDeployment".into(),
            namespace.into(),
        )
    }

    #[test]
    fn resource_versions_compare_as_numbers_when_they_are() {
        assert!(reached("10", "9"));
        assert!(reached("10", "10"));
        assert!(!reached("9", "10"));
        assert!(reached("abc", "abc"));
        assert!(!reached("abd", "abc"));
        assert!(!reached("10", "x"));
    }

    #[test]
    fn a_fence_holds_reads_until_the_cache_reaches_its_version() {
        let now = Instant::now();
        let mut state = StoreState::default();
        state.insert(("ns".into(), "md".into()), kept("5", "c"));
        let mut fences = Fences::default();
        let fence = |rv: Option<&str>| Fence {
            cluster: "c".into(),
            resource_version: rv.map(str::to_string),
            set: now,
        };
        fences.set(at("ns"), "md", fence(Some("7")));
        assert!(fences.holds(&at("ns"), "md", &state, now));
        assert!(fences.holds_cluster(&at("ns"), "c", &state, now));
        // Another Cluster's objects, another namespace: not held.
        assert!(!fences.holds_cluster(&at("ns"), "other", &state, now));
        assert!(!fences.holds_cluster(&at("elsewhere"), "c", &state, now));
        state.insert(("ns".into(), "md".into()), kept("7", "c"));
        assert!(!fences.holds_cluster(&at("ns"), "c", &state, now));
        assert!(fences.by_name.is_empty() && fences.by_cluster.is_empty());

        // A deletion holds until the object is gone.
        fences.set(at("ns"), "md", fence(None));
        assert!(fences.holds(&at("ns"), "md", &state, now));
        state.remove(&("ns".into(), "md".into()));
        assert!(!fences.holds(&at("ns"), "md", &state, now));

        // A version the cache never reaches is given up on after FENCE_TTL.
        fences.set(at("ns"), "md", fence(Some("9")));
        assert!(fences.holds(&at("ns"), "md", &state, now + FENCE_TTL / 2));
        assert!(!fences.holds(&at("ns"), "md", &state, now + FENCE_TTL));
        assert!(fences.by_name.is_empty());
    }

    #[test]
    fn fences_never_read_expire_as_more_are_set() {
        let start = Instant::now();
        let mut fences = Fences::default();
        let fence = |set: Instant| Fence {
            cluster: "c".into(),
            resource_version: Some("1".into()),
            set,
        };
        for i in 0..1024 {
            fences.set(at("ns"), &format!("old-{i}"), fence(start));
        }
        assert_eq!(fences.by_name.len(), 1024);
        let later = start + FENCE_TTL;
        fences.set(at("ns"), "new", fence(later));
        assert_eq!(fences.by_name.len(), 1, "the expired ones are swept");
        assert_eq!(fences.by_cluster.len(), 1);
        // Fences not expired are kept, and the next sweep waits for twice as many.
        for i in 0..2000 {
            fences.set(at("ns"), &format!("young-{i}"), fence(later));
        }
        assert_eq!(fences.by_name.len(), 2001);
    }

    #[test]
    fn a_fence_goes_as_the_watch_delivers_its_version_when_one_store_keeps_the_kind() {
        use crate::watched::Fed;
        let fences = Arc::new(Mutex::new(Fences::default()));
        let store = Store {
            state: RwLock::default(),
            shared: Arc::default(),
            group_kind: ("cluster.x-k8s.io".into(), "MachineDeployment".into()),
            fences: fences.clone(),
            alone: true.into(),
        };
        let md = |rv: &str| {
            serde_json::from_str::<Watched>(&format!(
                r#"{{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{{"name":"md","namespace":"ns","resourceVersion":"{rv}","labels":{{"cluster.x-k8s.io/cluster-name":"c"}}}}}}"#
            ))
            .unwrap()
        };
        let fence = |rv: &str| Fence {
            cluster: "c".into(),
            resource_version: Some(rv.into()),
            set: Instant::now(),
        };
        let left = || fences.lock().unwrap().by_name.len();
        fences.lock().unwrap().set(at("ns"), "md", fence("7"));
        store.event(Event::Apply(md("6")));
        assert_eq!(left(), 1, "not reached yet");
        store.event(Event::Apply(md("7")));
        assert_eq!(left(), 0, "reached: gone without a read");

        // Another store keeps the kind in another version: the read decides.
        store
            .alone
            .store(false, std::sync::atomic::Ordering::Relaxed);
        fences.lock().unwrap().set(at("ns"), "md", fence("8"));
        store.event(Event::Apply(md("8")));
        assert_eq!(left(), 1);
    }

    #[test]
    fn the_cluster_index_follows_label_changes_and_removals() {
        let mut state = StoreState::default();
        let name: Name = ("ns".into(), "x".into());
        state.insert(name.clone(), kept("1", "a"));
        state.insert(name.clone(), kept("2", "b"));
        assert!(!state.by_cluster.contains_key(&("ns".into(), "a".into())));
        assert_eq!(
            state.by_cluster.get(&("ns".into(), "b".into())),
            Some(&BTreeSet::from(["x".to_string()]))
        );
        state.remove(&name);
        assert!(state.by_cluster.is_empty() && state.objects.is_empty());
    }

    #[test]
    fn watched_objects_keep_their_text_and_index_by_cluster() {
        let text = r#"{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns","resourceVersion":"12","labels":{"cluster.x-k8s.io/cluster-name":"c"}},"spec":{"replicas":3}}"#;
        let watched: Watched = serde_json::from_str(text).unwrap();
        let (name, kept) = watched.into_kept(&Shared::default());
        assert_eq!(name, ("ns".to_string(), "md".to_string()));
        assert_eq!(
            (kept.resource_version.as_str(), kept.cluster.as_str()),
            ("12", "c")
        );
        assert_eq!(kept.text.whole(), text);

        let cluster = r#"{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns"}}"#;
        let (_, kept) = serde_json::from_str::<Watched>(cluster)
            .unwrap()
            .into_kept(&Shared::default());
        assert_eq!(kept.cluster, "c");
    }
}
