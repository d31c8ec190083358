//! Class-level reads from watch-fed caches: the objects every Cluster of a class reads
//! alike (its ClusterClass, the templates the class references, its RolloutPolicy and
//! the ClusterClassRevisions its Clusters are pinned to). A fleet of 1,000 Clusters of one
//! class asked the API server for the same eight objects on every reconcile; an applier
//! now keeps them, as Cluster API's controllers read through controller-runtime's
//! informer caches.
//!
//! A kind is watched (across namespaces) from the first read of it, and read live until
//! its first listing is in. What is kept depends on the kind ([`Keep`]):
//!
//! * [`Keep::All`]: every object (classes, policies, revisions: few per management
//!   cluster). The cache then answers "not found" too: a Cluster whose class has no
//!   RolloutPolicy costs no request for learning it.
//! * [`Keep::Unowned`]: only objects without the `cluster.x-k8s.io/cluster-name` label.
//!   Template kinds are stamped out per Cluster (a MachineDeployment's machine template
//!   is a copy of its class's, labelled with the Cluster), and those copies are the
//!   Cluster's own objects: read live, never kept. An object not kept is read live, so
//!   only the class's own templates are answered from the cache.
//!
//! Freshness: a watch delivers a change moments after it is made, but a reconcile queued
//! by another process's watch may start first. The watching applier queues the Clusters
//! of a changed class again a little later (`services/applier`), so a Cluster rendered
//! from a class a moment old is rendered again from the new one. A watch that fails is
//! not believed until it delivers again: reads go live meanwhile.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, RwLock};

use kube::api::ObjectMeta;
use kube::runtime::watcher::{self, Event};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use tokio::task::JoinHandle;
use topograph_api::object::ObjectExt;

use crate::api::ManagementCluster;

/// The label every object a Cluster's topology owns carries.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// Which objects of a kind the cache keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// Every object: the cache answers "not found" as well.
    All,
    /// Objects no Cluster owns (without the `cluster.x-k8s.io/cluster-name` label); any
    /// other is read live.
    Unowned,
}

impl Keep {
    /// The watch of a kind kept this way.
    fn watch_config(self) -> watcher::Config {
        match self {
            Keep::All => watcher::Config::default(),
            // The server leaves out what would not be kept (a template kind's per-Cluster
            // copies, a thousand per class in a fleet), and reports an object that gains
            // the label as deleted.
            Keep::Unowned => watcher::Config::default().labels(&format!("!{CLUSTER_NAME_LABEL}")),
        }
    }

    fn keeps(self, object: &Value) -> bool {
        match self {
            Keep::All => true,
            Keep::Unowned => !object.labels().contains_key(CLUSTER_NAME_LABEL),
        }
    }
}

/// `(namespace, name)`.
type Name = (String, String);

/// `(apiVersion, kind, keep)`.
type KindKey = (String, String, Keep);

/// What a cache answers for one object.
#[derive(Debug, PartialEq)]
pub enum Cached {
    /// The object as last seen.
    Found(Value),
    /// No such object (only for [`Keep::All`] kinds).
    Missing,
    /// Not known here: read it live.
    Unknown,
}

/// The watch-fed caches of one management cluster, one per `(apiVersion, kind)` read
/// through it. Dropping it stops its watches.
#[derive(Default)]
pub struct ClassCache {
    // A kind read with two keep rules gets a watch for each: what one keeps, the other
    // may not answer for.
    kinds: Mutex<HashMap<KindKey, Arc<KindStore>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for ClassCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds = self.kinds.lock().map(|k| k.len()).unwrap_or_default();
        f.debug_struct("ClassCache").field("kinds", &kinds).finish()
    }
}

impl Drop for ClassCache {
    fn drop(&mut self) {
        if let Ok(tasks) = self.tasks.get_mut() {
            for task in tasks.drain(..) {
                task.abort();
            }
        }
    }
}

/// The kept objects of one kind.
struct KindStore {
    keep: Keep,
    state: RwLock<KindState>,
}

#[derive(Default)]
struct KindState {
    /// Whether the objects are what the watch says now: its listing is in and it has not
    /// failed since (or delivered again since it did).
    synced: bool,
    objects: HashMap<Name, Arc<Value>>,
    /// A listing being taken (the watch's first, or again after it fell behind).
    listing: Option<HashMap<Name, Arc<Value>>>,
}

impl KindStore {
    fn answer(&self, namespace: &str, name: &str) -> Cached {
        let Ok(state) = self.state.read() else {
            return Cached::Unknown;
        };
        if !state.synced {
            return Cached::Unknown;
        }
        match state
            .objects
            .get(&(namespace.to_string(), name.to_string()))
        {
            Some(object) => Cached::Found(Value::clone(object)),
            None if self.keep == Keep::All => Cached::Missing,
            None => Cached::Unknown,
        }
    }
}

impl crate::watched::Fed<Watched> for KindStore {
    fn event(&self, event: Event<Watched>) {
        let Ok(mut state) = self.state.write() else {
            return;
        };
        let state = &mut *state;
        match event {
            Event::Init => state.listing = Some(HashMap::new()),
            Event::InitApply(Watched { object, .. }) => {
                if self.keep.keeps(&object) {
                    state
                        .listing
                        .get_or_insert_default()
                        .insert(name_of(&object), Arc::new(object));
                }
            }
            Event::InitDone => {
                state.objects = state.listing.take().unwrap_or_default();
                state.synced = true;
            }
            Event::Apply(Watched { object, .. }) => {
                let name = name_of(&object);
                if self.keep.keeps(&object) {
                    state.objects.insert(name, Arc::new(object));
                } else {
                    // Labelled since: a Cluster's own object now.
                    state.objects.remove(&name);
                }
                state.synced = state.listing.is_none();
            }
            Event::Delete(Watched { object, .. }) => {
                state.objects.remove(&name_of(&object));
                state.synced = state.listing.is_none();
            }
        }
    }

    fn failed(&self) {
        if let Ok(mut state) = self.state.write() {
            state.synced = false;
        }
    }
}

fn name_of(object: &Value) -> Name {
    (object.namespace().to_string(), object.name().to_string())
}

impl ClassCache {
    /// What the cache knows of one object; the first read of a kind starts its watch
    /// (through `api`) and is [`Cached::Unknown`].
    pub(crate) async fn get(
        &self,
        api: &ManagementCluster,
        api_version: &str,
        kind: &str,
        keep: Keep,
        namespace: &str,
        name: &str,
    ) -> Cached {
        let key = (api_version.to_string(), kind.to_string(), keep);
        let store = {
            let Ok(mut kinds) = self.kinds.lock() else {
                return Cached::Unknown;
            };
            match kinds.entry(key.clone()) {
                Entry::Occupied(known) => return known.get().answer(namespace, name),
                Entry::Vacant(new) => new
                    .insert(Arc::new(KindStore {
                        keep,
                        state: RwLock::default(),
                    }))
                    .clone(),
            }
        };
        let started = crate::watched::start::<Watched, _>(
            api,
            api_version,
            kind,
            keep.watch_config(),
            &store,
            &self.tasks,
        )
        .await;
        // Not served (or discovery failed): forget the kind, so a later read tries again
        // once it is served.
        if !started && let Ok(mut kinds) = self.kinds.lock() {
            kinds.remove(&key);
        }
        Cached::Unknown
    }
}

/// An object as a cache watch reads it: the whole object, and the resourceVersion the
/// watcher resumes from.
#[derive(Clone, Debug)]
struct Watched {
    metadata: ObjectMeta,
    object: Value,
}

impl<'de> Deserialize<'de> for Watched {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = Value::deserialize(deserializer)?;
        let resource_version = object
            .at(&["metadata", "resourceVersion"])
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(Watched {
            metadata: ObjectMeta {
                resource_version,
                ..ObjectMeta::default()
            },
            object,
        })
    }
}

crate::dynamic_resource!(Watched);
