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
//! the JSON text the server sent, compressed against other objects of their kind
//! (`kept_text`: the objects one template makes are alike but for names, uids, times
//! and versions), and parsed when read; a quick-start Cluster's objects keep 4.3 KB of
//! the 33 KB sent. What is answered:
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

use std::borrow::Cow;
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
use crate::kept_text::{Dictionary, KeptText};

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

/// `(group, kind, namespace)`: where fences are looked up.
type Place = (String, String, String);

/// A cache while held: its stores, their watches and the fences.
#[derive(Default)]
struct Held {
    stores: Mutex<HashMap<(String, String), Arc<Store>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    fences: Arc<Mutex<Fences>>,
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

/// One object as kept: its text, and what reads and fences check.
#[derive(Clone, Debug)]
struct Kept {
    text: KeptText,
    version: Version,
    /// The owning Cluster's name (the index's own copy).
    cluster: Arc<str>,
}

/// A resourceVersion: a number, as every API server writes them, kept as one.
#[derive(Clone, Debug, PartialEq)]
enum Version {
    Number(u64),
    Text(Box<str>),
}

impl Version {
    fn new(text: &str) -> Version {
        text.parse()
            .map(Version::Number)
            .unwrap_or_else(|_| Version::Text(text.into()))
    }

    /// Whether an object at this version has reached `wanted`: numerically when both
    /// are numbers, otherwise only when equal.
    fn reached(&self, wanted: &str) -> bool {
        match (self, wanted.parse::<u64>()) {
            (Version::Number(have), Ok(wanted)) => *have >= wanted,
            (Version::Text(have), _) => **have == *wanted,
            (Version::Number(_), Err(_)) => false,
        }
    }
}

/// The kept objects of one `(apiVersion, kind)`.
struct Store {
    state: RwLock<StoreState>,
    /// What this kind's texts are compressed against.
    dictionary: Dictionary,
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

    /// A watched object's text and version as this store keeps them.
    fn keep(&self, watched: &Watched) -> (KeptText, Version) {
        (
            KeptText::new(watched.text.get(), &self.dictionary),
            Version::new(
                watched
                    .metadata
                    .resource_version
                    .as_deref()
                    .unwrap_or_default(),
            ),
        )
    }
}

#[derive(Default)]
struct StoreState {
    /// The watch's listing is in and it has not failed since (or delivered since).
    synced: bool,
    objects: Objects,
    /// A listing being taken.
    listing: Option<Objects>,
}

/// Kept objects by namespace. Namespace, name and Cluster strings are each kept once,
/// shared by the objects and the index: a thousand Clusters' objects are tens of
/// thousands of entries, and their strings were as much as their compressed text.
#[derive(Default)]
struct Objects {
    by_namespace: HashMap<Arc<str>, Namespace>,
    /// How many objects, and the bytes of their texts.
    size: CacheSize,
}

/// What a cache keeps: its objects, and the bytes of their compressed texts and of the
/// stores' current dictionaries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheSize {
    pub objects: usize,
    pub bytes: usize,
}

impl std::ops::AddAssign for CacheSize {
    fn add_assign(&mut self, other: CacheSize) {
        self.objects += other.objects;
        self.bytes += other.bytes;
    }
}

#[derive(Default)]
struct Namespace {
    objects: HashMap<Arc<str>, Kept>,
    /// Cluster -> the names of the objects it owns.
    by_cluster: HashMap<Arc<str>, BTreeSet<Arc<str>>>,
}

impl Objects {
    fn get(&self, namespace: &str, name: &str) -> Option<&Kept> {
        self.by_namespace.get(namespace)?.objects.get(name)
    }

    /// The objects `cluster` owns in `namespace`, by name.
    fn owned<'a>(&'a self, namespace: &str, cluster: &str) -> impl Iterator<Item = &'a Kept> {
        let namespace = self.by_namespace.get(namespace);
        namespace
            .and_then(|ns| ns.by_cluster.get(cluster))
            .into_iter()
            .flatten()
            .filter_map(move |name| namespace?.objects.get(name))
    }

    fn insert(&mut self, watched: &Watched, text: KeptText, version: Version) {
        if !self.by_namespace.contains_key(watched.namespace.as_str()) {
            self.by_namespace
                .insert(watched.namespace.as_str().into(), Namespace::default());
        }
        let Some(ns) = self.by_namespace.get_mut(watched.namespace.as_str()) else {
            return;
        };
        let name: Arc<str> = match ns.objects.get_key_value(watched.name.as_str()) {
            Some((name, _)) => name.clone(),
            None => watched.name.as_str().into(),
        };
        ns.unindex(&name);
        let cluster: Arc<str> = match ns.by_cluster.get_key_value(watched.cluster.as_str()) {
            Some((cluster, _)) => cluster.clone(),
            None => watched.cluster.as_str().into(),
        };
        ns.by_cluster
            .entry(cluster.clone())
            .or_default()
            .insert(name.clone());
        self.size.objects += 1;
        self.size.bytes += text.size();
        let old = ns.objects.insert(
            name,
            Kept {
                text,
                version,
                cluster,
            },
        );
        if let Some(old) = old {
            self.size.objects -= 1;
            self.size.bytes -= old.text.size();
        }
    }

    fn remove(&mut self, namespace: &str, name: &str) {
        let Some(ns) = self.by_namespace.get_mut(namespace) else {
            return;
        };
        ns.unindex(name);
        if let Some(old) = ns.objects.remove(name) {
            self.size.objects -= 1;
            self.size.bytes -= old.text.size();
        }
        if ns.objects.is_empty() {
            self.by_namespace.remove(namespace);
        }
    }
}

impl Namespace {
    fn unindex(&mut self, name: &str) {
        let Some(old) = self.objects.get(name) else {
            return;
        };
        if let Some(names) = self.by_cluster.get_mut(&old.cluster) {
            names.remove(name);
            if names.is_empty() {
                let cluster = old.cluster.clone();
                self.by_cluster.remove(&cluster);
            }
        }
    }
}

impl crate::watched::Fed<Watched> for Store {
    fn event(&self, event: Event<Watched>) {
        // Texts are compressed before the lock is taken: reads wait only for inserts.
        let state = || self.state.write().ok();
        match event {
            Event::Init => {
                if let Some(mut state) = state() {
                    state.listing = Some(Objects::default());
                }
            }
            Event::InitApply(watched) => {
                let (text, version) = self.keep(&watched);
                if let Some(mut state) = state() {
                    let listing = state.listing.get_or_insert_default();
                    listing.insert(&watched, text, version);
                }
            }
            Event::InitDone => {
                if let Some(mut state) = state() {
                    state.objects = state.listing.take().unwrap_or_default();
                    state.synced = true;
                }
            }
            Event::Apply(watched) => {
                let (text, version) = self.keep(&watched);
                if let Some(mut state) = state() {
                    state.objects.insert(&watched, text, version);
                    state.synced = state.listing.is_none();
                    self.clear_reached(&state, &watched.namespace, &watched.name);
                }
            }
            Event::Delete(watched) => {
                if let Some(mut state) = state() {
                    state.objects.remove(&watched.namespace, &watched.name);
                    state.synced = state.listing.is_none();
                    self.clear_reached(&state, &watched.namespace, &watched.name);
                }
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
        let kept = state.objects.get(&place.2, name);
        let reached = match (&fence.resource_version, kept) {
            (None, kept) => kept.is_none(),
            (Some(wanted), Some(kept)) => kept.version.reached(wanted),
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

    /// What the cache keeps now (nothing while not held).
    pub fn size(&self) -> CacheSize {
        let mut size = CacheSize::default();
        let Some(held) = self.held() else {
            return size;
        };
        let stores: Vec<Arc<Store>> = match held.stores.lock() {
            Ok(stores) => stores.values().cloned().collect(),
            Err(_) => return size,
        };
        for store in stores {
            if let Ok(state) = store.state.read() {
                size += state.objects.size;
            }
            size.bytes += store.dictionary.len();
        }
        size
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
                dictionary: Dictionary::default(),
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
        let kept = state.objects.get(namespace, name)?;
        let place = store.place(namespace);
        if store
            .fences
            .lock()
            .ok()?
            .holds(&place, name, &state, Instant::now())
        {
            return None;
        }
        serde_json::from_str(&kept.text.whole()?).ok()
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
        let mut out = Vec::new();
        for kept in state.objects.owned(namespace, cluster) {
            let object: Value = serde_json::from_str(&kept.text.whole()?).ok()?;
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
    /// Its resourceVersion only (what the watcher reads).
    metadata: ObjectMeta,
    namespace: String,
    name: String,
    cluster: String,
    text: Box<RawValue>,
}

/// What is read of a watched object's text besides keeping it, borrowed from it.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default, borrow, rename = "apiVersion")]
    api_version: Cow<'a, str>,
    #[serde(default, borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    metadata: HeadMetadata<'a>,
}

#[derive(Default, Deserialize)]
struct HeadMetadata<'a> {
    #[serde(default, borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    namespace: Cow<'a, str>,
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(default, borrow)]
    labels: Option<HashMap<Cow<'a, str>, &'a RawValue>>,
}

impl<'de> Deserialize<'de> for Watched {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text: Box<RawValue> = Deserialize::deserialize(deserializer)?;
        let head: Head = serde_json::from_str(text.get()).map_err(D::Error::custom)?;
        let meta = head.metadata;
        let cluster = if is_cluster(&head.api_version, &head.kind) {
            meta.name.to_string()
        } else {
            meta.labels
                .as_ref()
                .and_then(|labels| labels.get(CLUSTER_NAME_LABEL))
                .and_then(|value| serde_json::from_str::<String>(value.get()).ok())
                .unwrap_or_default()
        };
        Ok(Watched {
            metadata: ObjectMeta {
                resource_version: meta.resource_version,
                ..ObjectMeta::default()
            },
            namespace: meta.namespace.into_owned(),
            name: meta.name.into_owned(),
            cluster,
            text,
        })
    }
}

crate::dynamic_resource!(Watched);

#[cfg(test)]
mod tests {
    use super::*;

    fn watched(namespace: &str, name: &str, rv: &str, cluster: &str) -> Watched {
        serde_json::from_str(&format!(
            r#"{{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{{"name":"{name}","namespace":"{namespace}","resourceVersion":"{rv}","labels":{{"cluster.x-k8s.io/cluster-name":"{cluster}"}}}}}}"#
        ))
        .unwrap()
    }

    /// Keeps `namespace/name` at `rv`, owned by `cluster`.
    fn put(state: &mut StoreState, namespace: &str, name: &str, rv: &str, cluster: &str) {
        let watched = watched(namespace, name, rv, cluster);
        let text = KeptText::new(watched.text.get(), &Dictionary::default());
        state.objects.insert(&watched, text, Version::new(rv));
    }

    fn store(fences: &Arc<Mutex<Fences>>) -> Store {
        Store {
            state: RwLock::default(),
            dictionary: Dictionary::default(),
            group_kind: ("cluster.x-k8s.io".into(), "MachineDeployment".into()),
            fences: fences.clone(),
            alone: true.into(),
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
        let reached = |have: &str, wanted: &str| Version::new(have).reached(wanted);
        assert!(reached("10", "9"));
        assert!(reached("10", "10"));
        assert!(!reached("9", "10"));
        assert!(reached("abc", "abc"));
        assert!(!reached("abd", "abc"));
        assert!(!reached("10", "x"));
        assert!(!reached("x", "10"));
        assert!(reached("007", "7"), "as numbers");
    }

    #[test]
    fn a_fence_holds_reads_until_the_cache_reaches_its_version() {
        let now = Instant::now();
        let mut state = StoreState::default();
        put(&mut state, "ns", "md", "5", "c");
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
        put(&mut state, "ns", "md", "7", "c");
        assert!(!fences.holds_cluster(&at("ns"), "c", &state, now));
        assert!(fences.by_name.is_empty() && fences.by_cluster.is_empty());

        // A deletion holds until the object is gone.
        fences.set(at("ns"), "md", fence(None));
        assert!(fences.holds(&at("ns"), "md", &state, now));
        state.objects.remove("ns", "md");
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
        let store = store(&fences);
        let md = |rv: &str| watched("ns", "md", rv, "c");
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
        put(&mut state, "ns", "x", "1", "a");
        put(&mut state, "ns", "y", "1", "b");
        put(&mut state, "ns", "x", "2", "b");
        let owned = |state: &StoreState, cluster: &str| -> Vec<Version> {
            state
                .objects
                .owned("ns", cluster)
                .map(|kept| kept.version.clone())
                .collect()
        };
        assert!(owned(&state, "a").is_empty());
        assert_eq!(
            owned(&state, "b"),
            [Version::Number(2), Version::Number(1)],
            "x, then y"
        );
        let ns = &state.objects.by_namespace["ns"];
        assert_eq!(ns.by_cluster.len(), 1, "a's entry gone");
        let (x, y) = (&ns.objects["x"], &ns.objects["y"]);
        assert!(Arc::ptr_eq(&x.cluster, &y.cluster), "one copy of b");
        assert_eq!(state.objects.size.objects, 2, "x replaced, not added");
        let bytes = x.text.size() + y.text.size();
        assert_eq!(state.objects.size.bytes, bytes);
        state.objects.remove("ns", "x");
        state.objects.remove("ns", "y");
        state.objects.remove("ns", "never");
        assert!(
            state.objects.by_namespace.is_empty(),
            "the namespace goes with its objects"
        );
        assert_eq!(state.objects.size, CacheSize::default());
    }

    #[test]
    fn watched_objects_keep_their_text_and_index_by_cluster() {
        let fences = Arc::new(Mutex::new(Fences::default()));
        let store = store(&fences);
        let text = r#"{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns","resourceVersion":"12","labels":{"cluster.x-k8s.io/cluster-name":"c","x":"y"},"managedFields":[{"manager":"m","time":"2026-01-01T00:00:00Z","fieldsV1":{"f:spec":{}}}]},"spec":{"replicas":3}}"#;
        let watched: Watched = serde_json::from_str(text).unwrap();
        assert_eq!(
            (
                watched.namespace.as_str(),
                watched.name.as_str(),
                watched.cluster.as_str()
            ),
            ("ns", "md", "c")
        );
        let (kept, version) = store.keep(&watched);
        assert_eq!(version, Version::Number(12));
        assert_eq!(kept.whole().as_deref(), Some(text));

        // A Cluster is its own; an escaped name reads as its value.
        let cluster = r#"{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c\u002d1","namespace":"ns"}}"#;
        let watched: Watched = serde_json::from_str(cluster).unwrap();
        assert_eq!(
            (watched.name.as_str(), watched.cluster.as_str()),
            ("c-1", "c-1")
        );
        let (kept, version) = store.keep(&watched);
        assert_eq!(version, Version::Text("".into()));
        assert_eq!(kept.whole().as_deref(), Some(cluster));
    }

    #[test]
    fn a_listing_replaces_what_was_kept_and_reads_see_it_whole() {
        use crate::watched::Fed;
        let fences = Arc::new(Mutex::new(Fences::default()));
        let store = store(&fences);
        store.event(Event::Apply(watched("ns", "gone", "1", "c")));
        store.event(Event::Init);
        store.event(Event::InitApply(watched("ns", "a", "2", "c")));
        store.event(Event::InitApply(watched("ns", "b", "3", "c")));
        {
            let state = store.state.read().unwrap();
            assert!(
                state.objects.get("ns", "gone").is_some(),
                "the old until done"
            );
        }
        store.event(Event::InitDone);
        let state = store.state.read().unwrap();
        assert!(state.synced);
        assert!(state.objects.get("ns", "gone").is_none());
        let texts: Vec<String> = state
            .objects
            .owned("ns", "c")
            .filter_map(|kept| kept.text.whole())
            .collect();
        assert_eq!(
            texts,
            [watched("ns", "a", "2", "c"), watched("ns", "b", "3", "c")]
                .map(|w| w.text.get().to_string())
        );
    }
}
