//! Objects decoded once for many requests. A render request carries its class's
//! templates as JSON text, the same text for every Cluster of the class, and decoding
//! them was a tenth of a render of a class without patches (the render service's
//! answer to each request, `topograph bench render --mode bytes`). Cluster API reads
//! them from its informer cache, decoded once per change.
//!
//! An entry is known by its exact text and the namespace it was decoded into, and kept
//! with its text: a hash only finds the candidate, the text decides. Only an input that
//! decodes into one plain object (no ClusterClass, no Cluster, no problem) is kept;
//! anything else is the caller's to load, with its messages. Bounded by the texts'
//! size, least recently used forgotten first.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::load::{Input, LoadOptions, load};

/// What one decoded text is known by: its namespace, length and hash.
type Key = (String, usize, u64);

struct Entry {
    text: Box<[u8]>,
    object: Arc<Value>,
}

struct Entries {
    /// The texts' total size.
    bytes: usize,
    map: lru::LruCache<Key, Entry>,
}

/// Decoded objects by their text, up to a total size of text.
pub struct DecodedObjects {
    capacity: usize,
    entries: Mutex<Entries>,
}

impl std::fmt::Debug for DecodedObjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodedObjects")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl DecodedObjects {
    /// A cache of up to `capacity` bytes of text (0 keeps nothing). A decoded object
    /// takes about ten times its text in memory.
    pub fn new(capacity: usize) -> Self {
        DecodedObjects {
            capacity,
            entries: Mutex::new(Entries {
                bytes: 0,
                map: lru::LruCache::unbounded(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // Entries go in and out whole: a poisoned lock holds nothing half written.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `input` decoded as [`load`] decodes it into `namespace`, when it is one plain
    /// object; `None` otherwise (the caller loads it, for its messages).
    pub fn object(&self, input: &Input<'_>, namespace: &str) -> Option<Arc<Value>> {
        let text = input.text.as_bytes();
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = (namespace.to_string(), text.len(), hasher.finish());
        if let Some(entry) = self.lock().map.get(&key)
            && *entry.text == *text
        {
            return Some(entry.object.clone());
        }
        let options = LoadOptions {
            namespace: Some(namespace.to_string()),
        };
        let mut bundle = load(std::slice::from_ref(input), &options).ok()?;
        if bundle.objects.len() != 1
            || !bundle.clusters.is_empty()
            || !bundle.cluster_classes.is_empty()
        {
            return None;
        }
        let object = Arc::new(bundle.objects.pop()?.value);
        self.keep(key, text, object.clone());
        Some(object)
    }

    fn keep(&self, key: Key, text: &[u8], object: Arc<Value>) {
        if text.len() > self.capacity {
            return;
        }
        let mut entries = self.lock();
        let entry = Entry {
            text: text.into(),
            object,
        };
        if let Some(old) = entries.map.put(key, entry) {
            entries.bytes -= old.text.len();
        }
        entries.bytes += text.len();
        while entries.bytes > self.capacity {
            let Some((_, oldest)) = entries.map.pop_lru() else {
                break;
            };
            entries.bytes -= oldest.text.len();
        }
    }

    /// How many objects are kept (tests look).
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The default capacity: 1 MiB of text, the templates of a hundred classes like the
/// quick-start's.
pub const DEFAULT_CAPACITY: usize = 1 << 20;

impl Default for DecodedObjects {
    fn default() -> Self {
        DecodedObjects::new(DEFAULT_CAPACITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &str) -> Input<'_> {
        Input { name: "t", text }
    }

    const TEMPLATE: &str = r#"{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"DockerMachineTemplate","metadata":{"name":"m"},"spec":{"template":{"spec":{}}}}"#;

    #[test]
    fn an_object_decodes_as_load_decodes_it_once_per_text_and_namespace() {
        let cache = DecodedObjects::new(1 << 20);
        let first = cache.object(&input(TEMPLATE), "ns").unwrap();
        let options = LoadOptions {
            namespace: Some("ns".into()),
        };
        let loaded = load(&[input(TEMPLATE)], &options).unwrap();
        assert_eq!(*first, loaded.objects[0].value);
        assert_eq!(first["metadata"]["namespace"], "ns");
        // The same text again is the same object; another namespace is another one.
        let copy = String::from(TEMPLATE);
        let again = cache.object(&input(&copy), "ns").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let other = cache.object(&input(TEMPLATE), "other").unwrap();
        assert_eq!(other["metadata"]["namespace"], "other");
        assert_eq!(cache.len(), 2);
        // Other text, even one byte, is decoded afresh.
        let changed = TEMPLATE.replace("\"m\"", "\"n\"");
        let n = cache.object(&input(&changed), "ns").unwrap();
        assert_eq!(n["metadata"]["name"], "n");
    }

    #[test]
    fn anything_but_one_plain_object_is_left_to_the_caller() {
        let cache = DecodedObjects::new(1 << 20);
        for text in [
            "{",
            r#"{"kind":"X"}"#,
            r#"{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"}}"#,
            r#"[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}]"#,
        ] {
            assert!(cache.object(&input(text), "ns").is_none(), "{text}");
        }
        assert!(cache.is_empty());
    }

    #[test]
    fn the_texts_kept_stay_within_the_capacity_oldest_forgotten_first() {
        let texts: Vec<String> = (0..4)
            .map(|i| TEMPLATE.replace("\"m\"", &format!("\"m{i}\"")))
            .collect();
        let cache = DecodedObjects::new(texts[0].len() * 2);
        let a = cache.object(&input(&texts[0]), "ns").unwrap();
        cache.object(&input(&texts[1]), "ns").unwrap();
        // Used again, the first is the most recent: the second goes first.
        assert!(Arc::ptr_eq(
            &a,
            &cache.object(&input(&texts[0]), "ns").unwrap()
        ));
        cache.object(&input(&texts[2]), "ns").unwrap();
        assert_eq!(cache.len(), 2);
        assert!(Arc::ptr_eq(
            &a,
            &cache.object(&input(&texts[0]), "ns").unwrap()
        ));
        let off = DecodedObjects::new(0);
        assert!(off.object(&input(&texts[3]), "ns").is_some());
        assert!(off.is_empty());
    }
}
