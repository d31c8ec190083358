//! The store's objects by collection, with the two indexes an API server's reads need
//! to stay cheap as a management cluster grows: objects by label (a list by label
//! selector reads only the objects carrying one of its labels, not the whole
//! collection) and dependents by owner uid (garbage collection finds an owner's
//! dependents without scanning every object of every kind). Objects are kept as their
//! JSON text ([`Stored`]) and shared (`Arc`) with the change events that carry them, so
//! a watch history of thousands of changes holds only the versions since replaced.

use crate::selector::{LabelSelector, Op};
use crate::stored::{IndexEntries, Stored};

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// (namespace, name).
pub(crate) type ObjKey = (String, String);

/// An object's key, allocated once and shared by its collection, its stored form and
/// every index entry: an object carries five or so labels, and a copy of its key in
/// each label's set was more memory than its JSON.
pub(crate) type SharedKey = Arc<ObjKey>;

/// A collection's type key, allocated once and shared by every index entry of its
/// objects.
type TypeKey = Arc<str>;

#[derive(Default)]
pub(crate) struct Objects {
    by_type: HashMap<TypeKey, BTreeMap<SharedKey, Arc<Stored>>>,
    /// (type key, label key, label value) → the objects carrying that label.
    labelled: HashMap<(TypeKey, String, String), BTreeSet<SharedKey>>,
    /// Owner uid → (type key, object) of each object naming it in `ownerReferences`.
    owned: HashMap<String, BTreeSet<(TypeKey, SharedKey)>>,
}

impl Objects {
    pub fn collection(&self, type_key: &str) -> Option<&BTreeMap<SharedKey, Arc<Stored>>> {
        self.by_type.get(type_key)
    }

    pub fn get(&self, type_key: &str, key: &ObjKey) -> Option<&Arc<Stored>> {
        self.by_type.get(type_key).and_then(|c| c.get(key))
    }

    pub fn contains(&self, type_key: &str, key: &ObjKey) -> bool {
        self.get(type_key, key).is_some()
    }

    /// Every collection, in no particular order.
    pub fn collections(&self) -> impl Iterator<Item = (&str, &BTreeMap<SharedKey, Arc<Stored>>)> {
        self.by_type.iter().map(|(t, c)| (&**t, c))
    }

    /// Stores `obj` under `key`, returning it as stored (to share with the change
    /// event).
    pub fn insert(&mut self, type_key: &str, key: ObjKey, obj: &Value) -> Arc<Stored> {
        self.store(type_key, key, obj, None)
    }

    /// [`Objects::insert`] over `old`, the object stored under `key` now, parsed: its
    /// index entries are read from it rather than from its text.
    pub fn replace(
        &mut self,
        type_key: &str,
        key: ObjKey,
        obj: &Value,
        old: &Value,
    ) -> Arc<Stored> {
        self.store(type_key, key, obj, Some(old))
    }

    fn store(
        &mut self,
        type_key: &str,
        key: ObjKey,
        obj: &Value,
        old: Option<&Value>,
    ) -> Arc<Stored> {
        // The collection's own copy of the type key, made with the collection.
        let type_key = match self.by_type.get_key_value(type_key) {
            Some((shared, _)) => shared.clone(),
            None => Arc::from(type_key),
        };
        let collection = self.by_type.entry(type_key.clone()).or_default();
        // A new version of an object keeps its key, which the indexes share.
        let shared = match collection.get_key_value(&key) {
            Some((shared, _)) => shared.clone(),
            None => Arc::new(key),
        };
        let stored = Arc::new(Stored::with_key(shared.clone(), obj));
        let previous = collection.insert(shared.clone(), stored.clone());
        let entries = IndexEntries::of(obj);
        if let Some(previous) = &previous {
            let before = match old {
                Some(old) => IndexEntries::of(old),
                None => previous.index_entries(),
            };
            // Most writes change neither labels nor owners: nothing to re-index.
            if before == entries {
                return stored;
            }
            self.index(&type_key, &shared, &before, false);
        }
        self.index(&type_key, &shared, &entries, true);
        stored
    }

    /// Takes `key`'s object out.
    pub fn remove(&mut self, type_key: &str, key: &ObjKey) -> Option<Arc<Stored>> {
        let (type_key, _) = self.by_type.get_key_value(type_key)?;
        let type_key = type_key.clone();
        let old = self.by_type.get_mut(&type_key)?.remove(key)?;
        self.index(&type_key, old.key(), &old.index_entries(), false);
        Some(old)
    }

    /// Drops a whole (emptied) collection, as when its CRD goes.
    pub fn remove_collection(&mut self, type_key: &str) {
        let keys: Vec<ObjKey> = self
            .by_type
            .get(type_key)
            .map(|c| c.keys().map(|k| (**k).clone()).collect())
            .unwrap_or_default();
        for key in keys {
            self.remove(type_key, &key);
        }
        self.by_type.remove(type_key);
    }

    /// Objects of a collection (in one namespace, or all) that may match `selector`,
    /// sorted by namespace and name: those carrying one of its required labels when it
    /// has one, else the whole collection. The caller still checks the whole selector.
    pub fn candidates<'a>(
        &'a self,
        type_key: &str,
        ns: Option<&'a str>,
        selector: &LabelSelector,
    ) -> Box<dyn Iterator<Item = &'a Arc<Stored>> + 'a> {
        let Some((type_key, coll)) = self.by_type.get_key_value(type_key) else {
            return Box::new(std::iter::empty());
        };
        let required = selector
            .0
            .iter()
            .find_map(|r| match (&r.op, r.values.as_slice()) {
                (Op::Equals | Op::In, [value]) => Some((r.key.clone(), value.clone())),
                _ => None,
            });
        match required {
            Some((label, value)) => {
                let keys = self
                    .labelled
                    .get(&(type_key.clone(), label, value))
                    .into_iter()
                    .flatten()
                    .filter(move |k| ns.is_none_or(|ns| ns == k.0));
                Box::new(keys.filter_map(|k| coll.get(&**k)))
            }
            None => Box::new(
                coll.iter()
                    .filter(move |(k, _)| ns.is_none_or(|ns| ns == k.0))
                    .map(|(_, o)| o),
            ),
        }
    }

    /// The objects naming `uid` among their owners.
    pub fn owned_by(&self, uid: &str) -> Vec<(String, ObjKey)> {
        self.owned
            .get(uid)
            .map(|o| {
                o.iter()
                    .map(|(t, k)| (t.to_string(), (**k).clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Adds (or removes) an object's entries in the indexes.
    fn index(&mut self, type_key: &TypeKey, key: &SharedKey, entries: &IndexEntries, add: bool) {
        for (label, value) in &entries.labels {
            let entry = (type_key.clone(), label.clone(), value.clone());
            if add {
                self.labelled.entry(entry).or_default().insert(key.clone());
            } else if let Some(keys) = self.labelled.get_mut(&entry) {
                keys.remove(key);
                if keys.is_empty() {
                    self.labelled.remove(&entry);
                }
            }
        }
        for uid in &entries.owners {
            let entry = (type_key.clone(), key.clone());
            if add {
                self.owned.entry(uid.clone()).or_default().insert(entry);
            } else if let Some(owned) = self.owned.get_mut(uid) {
                owned.remove(&entry);
                if owned.is_empty() {
                    self.owned.remove(uid);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(name: &str, labels: Value, owners: &[&str]) -> Value {
        let refs: Vec<Value> = owners.iter().map(|u| json!({"uid": u})).collect();
        json!({"metadata": {"name": name, "namespace": "ns", "labels": labels, "ownerReferences": refs}})
    }

    fn names<'a>(it: impl Iterator<Item = &'a Arc<Stored>>) -> Vec<&'a str> {
        it.map(|o| o.name()).collect()
    }

    #[test]
    fn indexes_follow_every_replacement_and_removal() {
        let mut objects = Objects::default();
        let key = |n: &str| ("ns".to_string(), n.to_string());
        let sel = |s: &str| LabelSelector::parse(s).expect("selector");
        objects.insert(
            "t",
            key("a"),
            &obj("a", json!({"c": "1", "x": "y"}), &["u1"]),
        );
        objects.insert("t", key("b"), &obj("b", json!({"c": "1"}), &["u1", "u2"]));
        objects.insert("t", key("z"), &obj("z", json!({"c": "2"}), &[]));
        objects.insert("other", key("a"), &obj("a", json!({"c": "1"}), &["u1"]));

        assert_eq!(
            names(objects.candidates("t", None, &sel("c=1"))),
            ["a", "b"]
        );
        assert_eq!(
            names(objects.candidates("t", Some("elsewhere"), &sel("c=1"))),
            Vec::<&str>::new()
        );
        // Without a required label, the whole collection.
        assert_eq!(
            names(objects.candidates("t", None, &sel("c!=1"))),
            ["a", "b", "z"]
        );
        assert_eq!(objects.owned_by("u1").len(), 3);

        // A replacement moves its label and drops an owner.
        objects.insert("t", key("a"), &obj("a", json!({"c": "2", "x": "y"}), &[]));
        assert_eq!(names(objects.candidates("t", None, &sel("c=1"))), ["b"]);
        assert_eq!(
            names(objects.candidates("t", None, &sel("c=2"))),
            ["a", "z"]
        );
        assert_eq!(names(objects.candidates("t", None, &sel("x=y"))), ["a"]);
        assert_eq!(
            objects.owned_by("u1"),
            vec![("other".to_string(), key("a")), ("t".to_string(), key("b"))]
        );

        objects.remove("t", &key("b"));
        objects.remove_collection("other");
        assert!(objects.owned_by("u1").is_empty());
        assert!(objects.owned_by("u2").is_empty());
        assert_eq!(
            names(objects.candidates("t", None, &sel("c=1"))),
            Vec::<&str>::new()
        );
        assert!(objects.labelled.keys().all(|(t, _, _)| &**t == "t"));
    }
}
