//! The management clusters an applier serves, from two kinds of source: a directory
//! with one `<name>.kubeconfig` per management cluster, and Secrets in a namespace of a
//! "home" cluster labelled [`SECRET_LABEL`] (the label's value names the management
//! cluster, the Secret's name when empty; the kubeconfig is under the data key
//! `value`, as in Cluster API's `<cluster>-kubeconfig` Secrets, or `kubeconfig`).
//! Sources are re-read on every refresh. Clients are built once per kubeconfig content
//! and rebuilt when it changes (rotated credentials); a management cluster no source
//! names any more is removed. A source that cannot be read this time changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};

use crate::api::ManagementCluster;

/// The label that marks a Secret as a management cluster's kubeconfig.
pub const SECRET_LABEL: &str = "topograph.io/management-cluster";

/// Where management clusters are found.
#[derive(Clone)]
pub enum Source {
    /// `<name>.kubeconfig` files in a directory.
    Directory(PathBuf),
    /// Labelled Secrets in one namespace of a cluster.
    Secrets {
        /// The cluster holding the Secrets.
        home: Arc<ManagementCluster>,
        /// Their namespace.
        namespace: String,
    },
}

impl Source {
    /// The kubeconfigs by management cluster name, or `None` if the source could not
    /// be read (then nothing it named is removed).
    async fn read(&self) -> Option<BTreeMap<String, String>> {
        match self {
            Source::Directory(dir) => read_directory(dir),
            Source::Secrets { home, namespace } => read_secrets(home, namespace).await,
        }
    }
}

fn read_directory(dir: &Path) -> Option<BTreeMap<String, String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot read the management clusters directory");
            return None;
        }
    };
    let mut found = BTreeMap::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".kubeconfig"))
        else {
            continue;
        };
        if name.is_empty() || name.contains('/') {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                found.insert(name.to_string(), text);
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "unreadable kubeconfig")
            }
        }
    }
    Some(found)
}

async fn read_secrets(
    home: &ManagementCluster,
    namespace: &str,
) -> Option<BTreeMap<String, String>> {
    let api: Api<Secret> = Api::namespaced(home.client().clone(), namespace);
    let list = match api.list(&ListParams::default().labels(SECRET_LABEL)).await {
        Ok(list) => list,
        Err(e) => {
            tracing::warn!(namespace, error = %e, "cannot list the management cluster Secrets");
            return None;
        }
    };
    let mut found = BTreeMap::new();
    for secret in list.items {
        let secret_name = secret.metadata.name.clone().unwrap_or_default();
        let name = secret
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SECRET_LABEL))
            .filter(|v| !v.is_empty())
            .cloned()
            .unwrap_or_else(|| secret_name.clone());
        let data = secret.data.unwrap_or_default();
        let Some(bytes) = data.get("value").or_else(|| data.get("kubeconfig")) else {
            tracing::warn!(secret = %format!("{namespace}/{secret_name}"), "Secret has no data key value or kubeconfig");
            continue;
        };
        match String::from_utf8(bytes.0.clone()) {
            Ok(text) => {
                if found.insert(name.clone(), text).is_some() {
                    tracing::warn!(management_cluster = %name, "named by two Secrets; the last one listed wins");
                }
            }
            Err(_) => {
                tracing::warn!(secret = %format!("{namespace}/{secret_name}"), "kubeconfig is not UTF-8")
            }
        }
    }
    Some(found)
}

/// One management cluster.
#[derive(Clone)]
pub struct Entry {
    /// Its client.
    pub api: Arc<ManagementCluster>,
    /// The kubeconfig text it was built from.
    pub kubeconfig: String,
}

/// What a refresh changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// New management clusters, or ones whose kubeconfig changed.
    pub added: Vec<String>,
    /// Management clusters whose file went away.
    pub removed: Vec<String>,
}

/// Management clusters by name.
pub struct Registry {
    sources: Vec<Source>,
    clusters: RwLock<BTreeMap<String, Entry>>,
    // Whether the clients built read class-level objects through a class cache.
    class_cache: bool,
    // Whether the clients built have an owned-object cache (held while watched).
    owned_cache: bool,
}

impl Registry {
    /// An empty registry over `dir`; call [`Registry::refresh`] to read it.
    pub fn new(dir: &Path) -> Self {
        Self::with_sources(vec![Source::Directory(dir.to_path_buf())])
    }

    /// An empty registry over the given sources; a name found in two sources takes the
    /// later source's kubeconfig.
    pub fn with_sources(sources: Vec<Source>) -> Self {
        Registry {
            sources,
            clusters: RwLock::default(),
            class_cache: false,
            owned_cache: false,
        }
    }

    /// The same registry, its clients reading class-level objects from watch-fed
    /// caches ([`ManagementCluster::with_class_cache`]): for appliers.
    pub fn with_class_cache(mut self) -> Self {
        self.class_cache = true;
        self
    }

    /// The same registry, its clients able to keep a Cluster's own objects while this
    /// process watches their management cluster
    /// ([`ManagementCluster::with_owned_cache`]): for appliers.
    pub fn with_owned_cache(mut self) -> Self {
        self.owned_cache = true;
        self
    }

    /// A registry of the given management clusters (tests, the embedded mode).
    pub fn fixed(clusters: impl IntoIterator<Item = (String, Arc<ManagementCluster>)>) -> Self {
        let clusters = clusters
            .into_iter()
            .map(|(name, api)| {
                (
                    name,
                    Entry {
                        api,
                        kubeconfig: String::new(),
                    },
                )
            })
            .collect();
        Registry {
            sources: Vec::new(),
            clusters: RwLock::new(clusters),
            class_cache: false,
            owned_cache: false,
        }
    }

    /// The management cluster `name`.
    pub fn get(&self, name: &str) -> Option<Arc<ManagementCluster>> {
        self.clusters
            .read()
            .ok()
            .and_then(|c| c.get(name).map(|e| e.api.clone()))
    }

    /// Names of the management clusters.
    pub fn names(&self) -> Vec<String> {
        self.clusters
            .read()
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The management clusters whose owned-object caches this process holds (it
    /// watches them), for the queue to hand it their Clusters first; `None` when its
    /// clients keep no such cache (any Cluster is as well served here as anywhere).
    pub fn held_caches(&self) -> Option<Vec<String>> {
        let clusters = self.clusters.read().ok()?;
        let mut any = false;
        let mut held = Vec::new();
        for (name, entry) in clusters.iter() {
            if let Some(cache) = entry.api.owned_cache() {
                any = true;
                if cache.is_held() {
                    held.push(name.clone());
                }
            }
        }
        any.then_some(held)
    }

    /// What the owned-object caches of every management cluster keep together.
    pub fn owned_cache_size(&self) -> crate::owned_cache::CacheSize {
        let mut size = crate::owned_cache::CacheSize::default();
        if let Ok(clusters) = self.clusters.read() {
            for entry in clusters.values() {
                if let Some(cache) = entry.api.owned_cache() {
                    size += cache.size();
                }
            }
        }
        size
    }

    /// Re-reads the sources. A kubeconfig that cannot be read or used is logged and
    /// left out (its management cluster, if it was there, stays with its old client);
    /// so is everything a source named when that source cannot be read at all.
    pub async fn refresh(&self) -> Changes {
        let mut changes = Changes::default();
        if self.sources.is_empty() {
            return changes;
        }
        let mut found = BTreeMap::new();
        let mut unread = false;
        for source in &self.sources {
            match source.read().await {
                Some(kubeconfigs) => found.extend(kubeconfigs),
                None => unread = true,
            }
        }
        let current: BTreeMap<String, String> = self
            .clusters
            .read()
            .map(|c| {
                c.iter()
                    .map(|(k, v)| (k.clone(), v.kubeconfig.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let mut built = Vec::new();
        for (name, text) in &found {
            if current.get(name) == Some(text) {
                continue;
            }
            match ManagementCluster::from_kubeconfig_yaml(text).await {
                Ok(mut api) => {
                    if self.class_cache {
                        api = api.with_class_cache();
                    }
                    if self.owned_cache {
                        api = api.with_owned_cache();
                    }
                    built.push((name.clone(), text.clone(), api))
                }
                Err(e) => {
                    tracing::warn!(management_cluster = %name, error = %e, "unusable kubeconfig")
                }
            }
        }
        // With a source unreadable, nothing is known to be gone.
        let gone: BTreeSet<String> = current
            .keys()
            .filter(|name| !unread && !found.contains_key(*name))
            .cloned()
            .collect();
        if let Ok(mut clusters) = self.clusters.write() {
            for (name, kubeconfig, api) in built {
                changes.added.push(name.clone());
                clusters.insert(
                    name,
                    Entry {
                        api: Arc::new(api),
                        kubeconfig,
                    },
                );
            }
            for name in gone {
                clusters.remove(&name);
                changes.removed.push(name);
            }
        }
        changes
    }
}
