//! The objects a render can read: provider templates and current objects, indexed the
//! way the topology controller looks them up (by group, kind, namespace and name, or
//! by labels), and the contracts the CustomResourceDefinitions among them declare for
//! their kinds.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;
use topograph_api::contract::{self, Contract, Declared};
use topograph_api::model::ObjectRef;
use topograph_api::object::{ObjectExt, ObjectKey, group_of, split_api_version};

/// An immutable set of objects with lookups by reference and by labels. It records
/// which objects were read, so callers can report inputs nothing used. Objects are
/// shared, so a class's templates decoded once serve every render of its Clusters
/// ([`topograph_api::decoded`]) without a copy.
#[derive(Debug, Default)]
pub struct ObjectStore {
    objects: Vec<Arc<Value>>,
    index: HashMap<ObjectKey, usize>,
    read: RefCell<BTreeSet<usize>>,
    // (group, kind) -> what its CRD declares. CRDs are declarations, never referenced,
    // so they are not inputs a render could leave unused.
    contracts: HashMap<(String, String), Declared>,
    crds: BTreeSet<usize>,
}

impl ObjectStore {
    /// Indexes `objects`. With duplicates (same group, kind, namespace and name) the
    /// last one wins, as a later `kubectl apply` would.
    pub fn new(objects: impl IntoIterator<Item = Value>) -> Self {
        Self::shared(objects.into_iter().map(Arc::new))
    }

    /// [`ObjectStore::new`] of objects shared with others.
    pub fn shared(objects: impl IntoIterator<Item = Arc<Value>>) -> Self {
        let objects: Vec<Arc<Value>> = objects.into_iter().collect();
        let index = objects
            .iter()
            .enumerate()
            .map(|(i, o)| (ObjectKey::of(o), i))
            .collect();
        let mut contracts = HashMap::new();
        let mut crds = BTreeSet::new();
        for (i, object) in objects.iter().enumerate() {
            if let Some((group, kind, declared)) = contract::from_crd(object) {
                contracts.insert((group, kind), declared);
                crds.insert(i);
            }
        }
        ObjectStore {
            objects,
            index,
            read: RefCell::default(),
            contracts,
            crds,
        }
    }

    /// The contract objects of `kind` in `api_version` implement, as the kind's CRD
    /// among the objects declares it; v1beta1 without one. An `api_version` without a
    /// version (`group/`, from a contract-versioned reference) takes the latest
    /// contract declared.
    pub fn contract_of(&self, api_version: &str, kind: &str) -> Contract {
        let (group, version) = split_api_version(api_version);
        let Some(declared) = self.contracts.get(&(group.to_string(), kind.to_string())) else {
            return Contract::default();
        };
        if version.is_empty() {
            declared.latest().unwrap_or_default()
        } else {
            declared.for_version(version)
        }
    }

    /// The contract `object` implements ([`ObjectStore::contract_of`] its kind and
    /// API version).
    pub fn contract_of_object(&self, object: &Value) -> Contract {
        self.contract_of(object.api_version(), object.kind())
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
        Some(self.objects[i].as_ref())
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
                found.push(o.as_ref());
            }
        }
        found
    }

    /// Every object, in the order given (duplicates included).
    pub fn objects(&self) -> impl Iterator<Item = &Value> {
        self.objects.iter().map(Arc::as_ref)
    }

    /// The objects no lookup has returned so far, as given: their keys do not tell two
    /// versions of one object apart, and a report of unused inputs must.
    pub fn unread(&self) -> Vec<&Value> {
        let read = self.read.borrow();
        self.objects
            .iter()
            .enumerate()
            .filter(|(i, _)| !read.contains(i) && !self.crds.contains(i))
            .map(|(_, o)| o.as_ref())
            .collect()
    }
}
