//! The objects a render can read: provider templates and current objects, indexed the
//! way the topology controller looks them up (by group, kind, namespace and name, or
//! by labels).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use serde_json::Value;
use topograph_api::model::ObjectRef;
use topograph_api::object::{ObjectExt, ObjectKey, group_of};

type IndexKey = (String, String, String, String);

/// An immutable set of objects with lookups by reference and by labels. It records
/// which objects were read, so callers can report inputs nothing used.
#[derive(Debug, Default)]
pub struct ObjectStore {
    objects: Vec<Value>,
    index: HashMap<IndexKey, usize>,
    read: RefCell<BTreeSet<usize>>,
}

fn index_key(api_version: &str, kind: &str, namespace: &str, name: &str) -> IndexKey {
    (
        group_of(api_version).to_string(),
        kind.to_string(),
        namespace.to_string(),
        name.to_string(),
    )
}

impl ObjectStore {
    /// Indexes `objects`. With duplicates (same group, kind, namespace and name) the
    /// last one wins, as a later `kubectl apply` would.
    pub fn new(objects: impl IntoIterator<Item = Value>) -> Self {
        let objects: Vec<Value> = objects.into_iter().collect();
        let index = objects
            .iter()
            .enumerate()
            .map(|(i, o)| {
                (
                    index_key(o.api_version(), o.kind(), o.namespace(), o.name()),
                    i,
                )
            })
            .collect();
        ObjectStore {
            objects,
            index,
            read: RefCell::default(),
        }
    }

    /// The object a reference points at; an empty reference namespace means
    /// `default_namespace`. The API version's group must match; its version need not,
    /// as an API server would convert between versions.
    pub fn get(&self, r: &ObjectRef, default_namespace: &str) -> Option<&Value> {
        let namespace = if r.namespace.is_empty() {
            default_namespace
        } else {
            &r.namespace
        };
        let i = *self
            .index
            .get(&index_key(&r.api_version, &r.kind, namespace, &r.name))?;
        self.read.borrow_mut().insert(i);
        Some(&self.objects[i])
    }

    /// Objects of a group and kind in a namespace carrying every given label.
    pub fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        labels: &[(&str, &str)],
    ) -> Vec<&Value> {
        let mut found = Vec::new();
        for (i, o) in self.objects.iter().enumerate() {
            if group_of(o.api_version()) != group || o.kind() != kind || o.namespace() != namespace
            {
                continue;
            }
            // Compare in place: no label map is built for every object scanned.
            let have = o.at(&["metadata", "labels"]);
            if labels
                .iter()
                .all(|(k, v)| have.and_then(|l| l.get(*k)).and_then(Value::as_str) == Some(*v))
            {
                self.read.borrow_mut().insert(i);
                found.push(o);
            }
        }
        found
    }

    /// Keys of the objects no lookup has returned so far.
    pub fn unread(&self) -> Vec<ObjectKey> {
        let read = self.read.borrow();
        self.objects
            .iter()
            .enumerate()
            .filter(|(i, _)| !read.contains(i))
            .map(|(_, o)| o.key())
            .collect()
    }
}
