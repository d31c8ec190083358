//! The objects a render can read: provider templates and current objects, indexed the
//! way the topology controller looks them up (by group, kind, namespace and name, or
//! by labels).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use serde_json::Value;
use topograph_api::model::ObjectRef;
use topograph_api::object::{ObjectExt, ObjectKey, group_of};

/// An immutable set of objects with lookups by reference and by labels. It records
/// which objects were read, so callers can report inputs nothing used.
#[derive(Debug, Default)]
pub struct ObjectStore {
    objects: Vec<Value>,
    index: HashMap<ObjectKey, usize>,
    read: RefCell<BTreeSet<usize>>,
}

impl ObjectStore {
    /// Indexes `objects`. With duplicates (same group, kind, namespace and name) the
    /// last one wins, as a later `kubectl apply` would.
    pub fn new(objects: impl IntoIterator<Item = Value>) -> Self {
        let objects: Vec<Value> = objects.into_iter().collect();
        let index = objects
            .iter()
            .enumerate()
            .map(|(i, o)| (ObjectKey::of(o), i))
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
            .get(&ObjectKey::new(&r.api_version, &r.kind, namespace, &r.name))?;
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

    /// The objects no lookup has returned so far, as given: their keys do not tell two
    /// versions of one object apart, and a report of unused inputs must.
    pub fn unread(&self) -> Vec<&Value> {
        let read = self.read.borrow();
        self.objects
            .iter()
            .enumerate()
            .filter(|(i, _)| !read.contains(i))
            .map(|(_, o)| o)
            .collect()
    }
}
