//! The management clusters an applier serves: one `<name>.kubeconfig` per management
//! cluster in a directory, re-read when it changes. Clients are built once per
//! kubeconfig content and rebuilt when the file's content changes (rotated
//! credentials); a removed file removes its management cluster.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::api::ManagementCluster;

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
    dir: PathBuf,
    clusters: RwLock<BTreeMap<String, Entry>>,
}

impl Registry {
    /// An empty registry over `dir`; call [`Registry::refresh`] to read it.
    pub fn new(dir: &Path) -> Self {
        Registry {
            dir: dir.to_path_buf(),
            clusters: RwLock::default(),
        }
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
            dir: PathBuf::new(),
            clusters: RwLock::new(clusters),
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

    /// Re-reads the directory. A kubeconfig that cannot be read or used is logged and
    /// left out (its management cluster, if it was there, stays with its old client).
    pub async fn refresh(&self) -> Changes {
        let mut changes = Changes::default();
        if self.dir.as_os_str().is_empty() {
            return changes;
        }
        let mut found = BTreeMap::new();
        match std::fs::read_dir(&self.dir) {
            Ok(entries) => {
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
            }
            Err(e) => {
                tracing::warn!(dir = %self.dir.display(), error = %e, "cannot read the management clusters directory");
                return changes;
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
                Ok(api) => built.push((name.clone(), text.clone(), api)),
                Err(e) => {
                    tracing::warn!(management_cluster = %name, error = %e, "unusable kubeconfig")
                }
            }
        }
        let gone: BTreeSet<String> = current
            .keys()
            .filter(|name| !found.contains_key(*name))
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
