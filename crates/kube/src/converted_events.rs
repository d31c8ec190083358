//! The last change events' objects as converted for a watch in another version than
//! the stored one, shared by the watches asking for the same version: a Cluster's
//! change is watched in `v1beta1` by more than one client (an applier's watch index
//! and its owned-object cache), and converting a Cluster is the dearest conversion
//! there is. Watches read an event within moments of each other, so a few dozen
//! entries catch them; older events (a watch replaying history) convert again.
//!
//! An event is known by its object, the very `Arc` the event carries (events of one
//! write can share a resourceVersion: a cascade's deletions), which each entry holds
//! so that its address cannot be taken by another object while the entry lives.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;

use crate::stored::Stored;

/// How many converted objects are kept, newest last.
const KEPT: usize = 64;

type Entry = (Arc<Stored>, String, Bytes);

/// Events' objects by the stored object and the apiVersion they were converted to.
#[derive(Default)]
pub struct ConvertedEvents(Mutex<VecDeque<Entry>>);

impl ConvertedEvents {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        // Entries are inserted whole: a poisoned lock holds nothing half written.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `object` as JSON in `api_version`, when a watch kept it.
    pub fn get(&self, object: &Arc<Stored>, api_version: &str) -> Option<Bytes> {
        self.lock()
            .iter()
            .rev()
            .find(|(o, v, _)| Arc::ptr_eq(o, object) && v == api_version)
            .map(|(_, _, bytes)| bytes.clone())
    }

    /// Keeps `object` converted to `api_version`.
    pub fn keep(&self, object: &Arc<Stored>, api_version: &str, converted: Bytes) {
        let mut kept = self.lock();
        if kept.len() >= KEPT {
            kept.pop_front();
        }
        kept.push_back((object.clone(), api_version.to_string(), converted));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    fn stored(name: &str) -> Arc<Stored> {
        let object = json!({"apiVersion": "g/v2", "kind": "K", "metadata": {"name": name}});
        Arc::new(Stored::new((String::new(), name.to_string()), &object))
    }

    #[test]
    fn kept_by_object_and_version_and_bounded() {
        let events = ConvertedEvents::default();
        let (a, same_text) = (stored("a"), stored("a"));
        events.keep(&a, "g/v1", Bytes::from_static(b"{}"));
        assert_eq!(events.get(&a, "g/v1").as_deref(), Some(b"{}".as_slice()));
        assert_eq!(events.get(&a, "g/v2"), None);
        assert_eq!(
            events.get(&same_text, "g/v1"),
            None,
            "another event's object"
        );
        let others: Vec<Arc<Stored>> = (0..KEPT).map(|i| stored(&i.to_string())).collect();
        for other in &others {
            events.keep(other, "g/v1", Bytes::new());
        }
        assert_eq!(events.get(&a, "g/v1"), None, "the oldest went first");
        assert!(events.get(&others[0], "g/v1").is_some());
    }
}
