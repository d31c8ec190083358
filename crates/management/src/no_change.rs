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
//! What is remembered are two 64-bit digests of the field manager, the object and the
//! intent: one of the object's identity and resourceVersion ([`NoChange::key`], looked
//! up first: it costs nothing to compute), one of the object but for what status
//! writes change ([`NoChange::content_key`]: providers report status all the time, and
//! that changes nothing an apply does). Any other write, by anyone, or a different
//! intent is a different digest, so a remembered answer is only ever reused for the
//! very same request over an object that differs at most in its status. Entries expire after
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

/// At most this many digests (16 bytes and a map slot each: a few MB at most). A fleet
/// of 10,000 Clusters with ~15 applied objects each, two digests per object, fits.
pub const CAPACITY: usize = 1 << 19;

/// The digest of an apply's intent ([`NoChange::intent`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intent(u64);

/// The digests of applies found to change nothing, with when each expires.
#[derive(Debug, Default)]
pub struct NoChange {
    entries: Mutex<HashMap<u64, Instant>>,
    hits: AtomicU64,
}

impl NoChange {
    /// The digest of an apply's intent, which both of its digests take: digested once.
    pub fn intent(intent: &Value) -> Intent {
        Intent(topograph_api::digest::of_json(intent))
    }

    /// The digest of applying `intent` over `current` as `manager`; `None` when the
    /// current object has no resourceVersion (nothing then identifies its content).
    pub fn key(manager: &str, current: &Value, intent: Intent) -> Option<u64> {
        let version = current
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        identity(&mut hasher, manager, current);
        version.hash(&mut hasher);
        intent.0.hash(&mut hasher);
        Some(hasher.finish())
    }

    /// The digest of applying `intent` over `current` as `manager`, whatever status
    /// writes did to `current` since: its identity, generation, the metadata an apply
    /// reads or writes and the managed-fields entries of everything but the status
    /// subresource. `None` when the object has no generation.
    ///
    /// Any change of a custom resource outside `metadata` and a status subresource's
    /// `status` moves its generation, and a status write can change nothing else, so an
    /// apply (which never sets status) over the object does what it did before the
    /// providers reported. A converged Cluster whose objects' status moved since the
    /// last reconcile is answered from memory all the same, where the resourceVersion's
    /// digest ([`NoChange::key`]) would predict each one again.
    pub fn content_key(manager: &str, current: &Value, intent: Intent) -> Option<u64> {
        let meta = current.get("metadata").and_then(Value::as_object)?;
        let generation = meta
            .get("generation")
            .and_then(Value::as_i64)
            .filter(|g| *g > 0)?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        // Never equal to a resourceVersion's digest.
        "content".hash(&mut hasher);
        identity(&mut hasher, manager, current);
        generation.hash(&mut hasher);
        for field in [
            "uid",
            "labels",
            "annotations",
            "ownerReferences",
            "finalizers",
            "deletionTimestamp",
        ] {
            field.hash(&mut hasher);
            topograph_api::digest::write_json(&mut hasher, meta.get(field).unwrap_or(&Value::Null));
        }
        let entries = meta.get("managedFields").and_then(Value::as_array);
        for entry in entries.into_iter().flatten() {
            if entry.get("subresource").and_then(Value::as_str) != Some("status") {
                topograph_api::digest::write_json(&mut hasher, entry);
            }
        }
        intent.0.hash(&mut hasher);
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

/// Feeds the field manager and the object's apiVersion, kind, namespace and name.
fn identity(hasher: &mut impl Hasher, manager: &str, object: &Value) {
    for part in [
        manager,
        object.api_version(),
        object.kind(),
        object.namespace(),
        object.name(),
    ] {
        part.hash(hasher);
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
        let intent = NoChange::intent(&json!({"data": {"a": "1"}}));
        let key = NoChange::key("m", &object("1"), intent).unwrap();
        assert_eq!(NoChange::key("m", &object("1"), intent), Some(key));
        assert_ne!(NoChange::key("m", &object("2"), intent), Some(key));
        assert_ne!(NoChange::key("other", &object("1"), intent), Some(key));
        let other_intent = NoChange::intent(&json!({"data": {"a": "2"}}));
        assert_ne!(NoChange::key("m", &object("1"), other_intent), Some(key));
        let unversioned =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        assert_eq!(NoChange::key("m", &unversioned, intent), None);
    }

    /// A MachineDeployment as a reconcile reads it, with a provider's status report.
    fn reported(replicas: i64, version: &str) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
            "metadata": {"name": "md", "namespace": "ns", "uid": "u", "generation": 2,
                "resourceVersion": version, "labels": {"a": "1"},
                "managedFields": [
                    {"manager": "topology", "operation": "Apply", "apiVersion": "cluster.x-k8s.io/v1beta1",
                     "time": "2026-11-28T10:00:00Z", "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                    {"manager": "provider", "operation": "Update", "apiVersion": "cluster.x-k8s.io/v1beta1",
                     "time": format!("2026-11-28T10:00:{:02}Z", replicas), "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:status": {"f:replicas": {}}}, "subresource": "status"}]},
            "spec": {"replicas": 3},
            "status": {"replicas": replicas}})
    }

    #[test]
    fn the_content_digest_ignores_status_writes_and_nothing_else() {
        let intent = NoChange::intent(&json!({"spec": {"replicas": 3}}));
        let key = |object: &Value| NoChange::content_key("topology", object, intent);
        let base = reported(1, "10");
        let digest = key(&base).unwrap();
        // A status report: a new resourceVersion, status and status entry; same digest.
        assert_eq!(key(&reported(2, "11")), Some(digest));
        assert_ne!(
            NoChange::key("topology", &reported(2, "11"), intent),
            NoChange::key("topology", &base, intent)
        );
        // Anything else an apply reads is another digest.
        let changed = |pointer: &str, value: Value| {
            let mut object = base.clone();
            *object.pointer_mut(pointer).unwrap() = value;
            key(&object)
        };
        for (pointer, value) in [
            ("/metadata/generation", json!(3)),
            ("/metadata/labels", json!({"a": "2"})),
            ("/metadata/uid", json!("v")),
            ("/metadata/managedFields/0/fieldsV1", json!({"f:spec": {}})),
            ("/metadata/managedFields/1/subresource", json!("scale")),
        ] {
            assert_ne!(
                changed(pointer, value.clone()),
                Some(digest),
                "{pointer} = {value}"
            );
        }
        let mut annotated = base.clone();
        annotated["metadata"]["annotations"] = json!({"x": "y"});
        assert_ne!(key(&annotated), Some(digest));
        assert_ne!(NoChange::content_key("other", &base, intent), Some(digest));
        assert_ne!(
            NoChange::content_key(
                "topology",
                &base,
                NoChange::intent(&json!({"spec": {"replicas": 4}}))
            ),
            Some(digest)
        );
        // Never a resourceVersion's digest; nothing for an object without a generation.
        assert_ne!(NoChange::key("topology", &base, intent), Some(digest));
        assert_eq!(NoChange::content_key("m", &object("1"), intent), None);
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
