//! The render service's caches, one bounded least-recently-used map ([`Lru`]) for both:
//!
//! * parsed ClusterClasses keyed by a hash of their bytes and the namespace they default
//!   into, so a fleet rendering many Clusters of one class decodes and checks it once;
//! * whole Render responses keyed by a hash of every input byte ([`request_key`]):
//!   rendering is deterministic, and a fleet in steady state (resyncs, watch events that
//!   change nothing the topology reads) sends the same inputs again and again. Bounded
//!   by the responses' encoded size.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use topograph_api::field::FieldError;
use topograph_api::model::ClusterClass;
use topograph_engine::admission::{self, Admitted};

/// A decoded class and what admission says about it on its own (no Clusters, no old
/// version), which depends only on the class and so is cached with it.
#[derive(Debug)]
pub struct CachedClass {
    /// The class as decoded (what `Default` reads, admitted or not).
    pub class: ClusterClass,
    /// The admitted class, or its admission problems when created.
    pub admitted: Result<Admitted<ClusterClass>, Vec<FieldError>>,
}

impl CachedClass {
    /// Admits `class` and keeps both.
    pub fn admit(class: ClusterClass) -> Self {
        let admitted = admission::admit_class(class.clone(), None, &[]);
        CachedClass { class, admitted }
    }
}

type Key = ([u8; 32], String);

/// Parsed classes, at most a number of them.
pub type ClassCache = Lru<Key, Arc<CachedClass>>;

/// A bounded map that forgets the least recently used entries first. Each entry has a
/// weight (1 for a count bound, its size for a byte bound); the total stays within
/// the capacity. Lookups take a short lock; values are computed outside it.
#[derive(Debug)]
pub struct Lru<K, V> {
    capacity: usize,
    entries: Mutex<Entries<K, V>>,
}

#[derive(Debug)]
struct Entries<K, V> {
    tick: u64,
    weight: usize,
    map: HashMap<K, (u64, usize, V)>,
}

impl<K, V> Default for Entries<K, V> {
    fn default() -> Self {
        Entries {
            tick: 0,
            weight: 0,
            map: HashMap::new(),
        }
    }
}

/// The cache key of `bytes` defaulted into `namespace`.
pub fn key(bytes: &[u8], namespace: &str) -> Key {
    (Sha256::digest(bytes).into(), namespace.to_string())
}

/// The key of a request made of `parts`, in order: each part's length goes into the
/// hash before its bytes, so no two different sequences of parts share a key.
pub fn request_key<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.finalize().into()
}

impl<K: Eq + Hash + Clone, V: Clone> Lru<K, V> {
    /// A cache holding at most `capacity` in weight (0 turns caching off).
    pub fn new(capacity: usize) -> Self {
        Lru {
            capacity,
            entries: Mutex::new(Entries::default()),
        }
    }

    /// The cached value for `key`, if any.
    pub fn get(&self, key: &K) -> Option<V> {
        // A poisoned lock only means another request panicked mid-update of plain data;
        // the map is still consistent enough to serve from.
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.tick += 1;
        let tick = entries.tick;
        let entry = entries.map.get_mut(key)?;
        entry.0 = tick;
        Some(entry.2.clone())
    }

    /// Stores `value` under `key` with weight 1.
    pub fn insert(&self, key: K, value: V) {
        self.insert_weighing(key, value, 1);
    }

    /// Stores `value` under `key`, evicting the least recently used entries until the
    /// total weight fits. A value heavier than the whole capacity is not stored.
    pub fn insert_weighing(&self, key: K, value: V, weight: usize) {
        if weight > self.capacity {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.tick += 1;
        let tick = entries.tick;
        if let Some((_, old, _)) = entries.map.remove(&key) {
            entries.weight -= old;
        }
        while entries.weight + weight > self.capacity {
            let oldest = entries
                .map
                .iter()
                .min_by_key(|(_, (used, _, _))| *used)
                .map(|(k, _)| k.clone());
            let Some(oldest) = oldest else { break };
            if let Some((_, w, _)) = entries.map.remove(&oldest) {
                entries.weight -= w;
            }
        }
        entries.weight += weight;
        entries.map.insert(key, (tick, weight, value));
    }

    /// How many entries are cached (tests look).
    #[cfg(test)]
    fn len(&self) -> usize {
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
            admitted: Err(Vec::new()),
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

    #[test]
    fn a_byte_bound_evicts_until_the_new_entry_fits() {
        let cache: Lru<u8, u8> = Lru::new(10);
        cache.insert_weighing(1, 1, 4);
        cache.insert_weighing(2, 2, 4);
        assert!(cache.get(&1).is_some());
        // 4 + 4 + 6 > 10: the least recently used (2) goes, then 1 as well.
        cache.insert_weighing(3, 3, 6);
        assert_eq!(cache.get(&2), None);
        assert_eq!(cache.get(&3), Some(3));
        cache.insert_weighing(4, 4, 4);
        assert_eq!(cache.len(), 2);
        // Too heavy for the whole cache: not stored, nothing evicted.
        cache.insert_weighing(5, 5, 11);
        assert_eq!(cache.get(&5), None);
        assert_eq!(cache.len(), 2);
        // Replacing an entry counts its weight once.
        cache.insert_weighing(4, 40, 4);
        assert_eq!(cache.get(&4), Some(40));
        assert_eq!(cache.get(&3), Some(3));
    }

    #[test]
    fn request_keys_tell_part_boundaries_apart() {
        assert_ne!(
            request_key([b"ab".as_slice(), b"c".as_slice()]),
            request_key([b"a".as_slice(), b"bc".as_slice()])
        );
        assert_eq!(
            request_key([b"ab".as_slice(), b"c".as_slice()]),
            request_key([b"ab".as_slice(), b"c".as_slice()])
        );
    }
}
