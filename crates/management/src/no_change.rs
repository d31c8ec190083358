//! Applies known to change nothing. A converged reconcile predicts, for every object it
//! owns, what a server-side apply of its intent would do (`predict_apply`), and most of
//! that work is finding that the answer is "nothing". Cluster API keeps the same record
//! for the dry-run applies it sends: a request already found to make no difference is
//! not repeated while the object and the intent stay the same. An apply this client
//! sent is remembered as well ([`crate::ManagementCluster::remember_applied`]): server-side
//! apply is idempotent, so the same intent over the very object it answered with
//! changes nothing, and a new Cluster's second reconcile need not predict what its
//! first wrote and nobody has written since.
//!
//! What is remembered is a 64-bit digest of the field manager, the object's identity and
//! resourceVersion, and the intent. A new resourceVersion (any write, by anyone) or a
//! different intent is a different digest, so a remembered answer is only ever reused
//! for the very same request over the very same stored object. Entries expire after
//! [`TTL`] (Cluster API's 30 minutes); the memory is bounded by [`CAPACITY`] entries,
//! emptied of expired ones, then of all, when full.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use topograph_api::object::ObjectExt;

/// How long a remembered answer is believed: longer than a resync period, so a
/// converged Cluster's next resync still finds it.
pub const TTL: Duration = Duration::from_secs(30 * 60);

/// At most this many answers (16 bytes and a map slot each: a few MB at most). A fleet
/// of 10,000 Clusters with ~15 applied objects each fits.
pub const CAPACITY: usize = 1 << 18;

/// The digests of applies found to change nothing, with when each expires.
#[derive(Debug, Default)]
pub struct NoChange {
    entries: Mutex<HashMap<u64, Instant>>,
    hits: AtomicU64,
}

impl NoChange {
    /// The digest of applying `intent` over `current` as `manager`; `None` when the
    /// current object has no resourceVersion (nothing then identifies its content).
    pub fn key(manager: &str, current: &Value, intent: &Value) -> Option<u64> {
        let version = current
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for part in [
            manager,
            current.api_version(),
            current.kind(),
            current.namespace(),
            current.name(),
            version,
        ] {
            part.hash(&mut hasher);
        }
        topograph_api::digest::write_json(&mut hasher, intent);
        Some(hasher.finish())
    }

    /// Whether the apply with this digest was found to change nothing, not too long ago.
    pub fn contains(&self, key: u64) -> bool {
        let Ok(entries) = self.entries.lock() else {
            return false;
        };
        let hit = entries
            .get(&key)
            .is_some_and(|expires| *expires > Instant::now());
        if hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    /// How many predictions a remembered answer saved.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Remembers that the apply with this digest changes nothing.
    pub fn insert(&self, key: u64) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let now = Instant::now();
        if entries.len() >= CAPACITY {
            entries.retain(|_, expires| *expires > now);
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key, now + TTL);
    }

    /// How many answers are remembered (expired ones included until the next sweep).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(version: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "a", "namespace": "ns", "resourceVersion": version}})
    }

    #[test]
    fn the_digest_changes_with_the_version_the_intent_and_the_manager() {
        let intent = json!({"data": {"a": "1"}});
        let key = NoChange::key("m", &object("1"), &intent).unwrap();
        assert_eq!(NoChange::key("m", &object("1"), &intent), Some(key));
        assert_ne!(NoChange::key("m", &object("2"), &intent), Some(key));
        assert_ne!(NoChange::key("other", &object("1"), &intent), Some(key));
        let other_intent = json!({"data": {"a": "2"}});
        assert_ne!(NoChange::key("m", &object("1"), &other_intent), Some(key));
        let unversioned =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        assert_eq!(NoChange::key("m", &unversioned, &intent), None);
    }

    #[test]
    fn an_answer_is_remembered_and_the_memory_stays_bounded() {
        let memory = NoChange::default();
        assert!(!memory.contains(7));
        memory.insert(7);
        assert!(memory.contains(7));
        for key in 0..(CAPACITY as u64 + 10) {
            memory.insert(key + 100);
        }
        assert!(memory.len() <= CAPACITY);
    }
}
