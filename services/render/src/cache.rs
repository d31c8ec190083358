//! Parsed ClusterClasses keyed by a hash of their bytes and the namespace they default
//! into, so a fleet rendering many Clusters of one class decodes and checks it once.
//! Bounded: the least recently used entry goes when the cache is full.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use topograph_api::field::FieldError;
use topograph_api::model::ClusterClass;

/// A decoded class and what admission says about it on its own (no Clusters, no old
/// version), which depends only on the class and so is cached with it.
#[derive(Debug)]
pub struct CachedClass {
    /// The class.
    pub class: ClusterClass,
    /// Its admission problems when created.
    pub problems: Vec<FieldError>,
}

type Key = ([u8; 32], String);

/// The cache. Lookups take a short lock; decoding happens outside it.
#[derive(Debug)]
pub struct ClassCache {
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    tick: u64,
    map: HashMap<Key, (u64, Arc<CachedClass>)>,
}

/// The cache key of `bytes` defaulted into `namespace`.
pub fn key(bytes: &[u8], namespace: &str) -> Key {
    (Sha256::digest(bytes).into(), namespace.to_string())
}

impl ClassCache {
    /// A cache of at most `capacity` classes (0 turns caching off).
    pub fn new(capacity: usize) -> Self {
        ClassCache {
            capacity,
            entries: Mutex::new(Entries::default()),
        }
    }

    /// The cached class for `key`, if any.
    pub fn get(&self, key: &Key) -> Option<Arc<CachedClass>> {
        // A poisoned lock only means another request panicked mid-update of plain data;
        // the map is still consistent enough to serve from.
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.tick += 1;
        let tick = entries.tick;
        let entry = entries.map.get_mut(key)?;
        entry.0 = tick;
        Some(entry.1.clone())
    }

    /// Stores `class` under `key`, evicting the least recently used entry when full.
    pub fn insert(&self, key: Key, class: Arc<CachedClass>) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.tick += 1;
        let tick = entries.tick;
        if !entries.map.contains_key(&key) && entries.map.len() >= self.capacity {
            let oldest = entries
                .map
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                entries.map.remove(&oldest);
            }
        }
        entries.map.insert(key, (tick, class));
    }

    /// How many classes are cached.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Arc<CachedClass> {
        Arc::new(CachedClass {
            class: ClusterClass {
                name: name.to_string(),
                ..ClusterClass::default()
            },
            problems: Vec::new(),
        })
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let cache = ClassCache::new(2);
        let (a, b, c) = (key(b"a", "ns"), key(b"b", "ns"), key(b"c", "ns"));
        cache.insert(a.clone(), entry("a"));
        cache.insert(b.clone(), entry("b"));
        // Touching `a` makes `b` the oldest.
        assert!(cache.get(&a).is_some());
        cache.insert(c.clone(), entry("c"));
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&b).is_none());
        assert_eq!(
            cache.get(&a).map(|e| e.class.name.clone()),
            Some("a".into())
        );
        assert_eq!(
            cache.get(&c).map(|e| e.class.name.clone()),
            Some("c".into())
        );
    }

    #[test]
    fn namespace_is_part_of_the_key() {
        let cache = ClassCache::new(4);
        cache.insert(key(b"a", "one"), entry("a"));
        assert!(cache.get(&key(b"a", "two")).is_none());
        assert!(cache.get(&key(b"a", "one")).is_some());
    }

    #[test]
    fn capacity_zero_caches_nothing() {
        let cache = ClassCache::new(0);
        cache.insert(key(b"a", "ns"), entry("a"));
        assert_eq!(cache.len(), 0);
    }
}
