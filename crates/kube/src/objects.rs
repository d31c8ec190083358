//! The store's objects by collection, with the two indexes an API server's reads need
//! to stay cheap as a management cluster grows: objects by label (a list by label
//! selector reads only the objects carrying one of its labels, not the whole
//! collection) and dependents by owner uid (garbage collection finds an owner's
//! dependents without scanning every object of every kind). Objects are shared
//! (`Arc`) with the change events that carry them, so a watch history of thousands of
//! changes holds only the versions that have since been replaced.

use crate::selector::{LabelSelector, Op};

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// (namespace, name).
pub(crate) type ObjKey = (String, String);

#[derive(Default)]
pub(crate) struct Objects {
    by_type: HashMap<String, BTreeMap<ObjKey, Arc<Value>>>,
    /// (type key, label key, label value) → the objects carrying that label.
    labelled: HashMap<(String, String, String), BTreeSet<ObjKey>>,
    /// Owner uid → (type key, object) of each object naming it in `ownerReferences`.
    owned: HashMap<String, BTreeSet<(String, ObjKey)>>,
}

impl Objects {
    pub fn collection(&self, type_key: &str) -> Option<&BTreeMap<ObjKey, Arc<Value>>> {
        self.by_type.get(type_key)
    }

    pub fn get(&self, type_key: &str, key: &ObjKey) -> Option<&Value> {
        self.by_type
            .get(type_key)
            .and_then(|c| c.get(key))
            .map(|o| &**o)
    }

    pub fn contains(&self, type_key: &str, key: &ObjKey) -> bool {
        self.get(type_key, key).is_some()
    }

    /// Every collection, in no particular order.
    pub fn collections(&self) -> impl Iterator<Item = (&String, &BTreeMap<ObjKey, Arc<Value>>)> {
        self.by_type.iter()
    }

    /// Stores `obj` under `key`, returning it as stored (to share with the change
    /// event).
    pub fn insert(&mut self, type_key: &str, key: ObjKey, obj: Value) -> Arc<Value> {
        let obj = Arc::new(obj);
        let old = self
            .by_type
            .entry(type_key.to_string())
            .or_default()
            .insert(key.clone(), obj.clone());
        if let Some(old) = &old {
            self.index(type_key, &key, old, false);
        }
        self.index(type_key, &key, &obj, true);
        obj
    }

    /// Takes `key`'s object out: the store's own copy, unless a change event still
    /// holds it.
    pub fn remove(&mut self, type_key: &str, key: &ObjKey) -> Option<Value> {
        let old = self.by_type.get_mut(type_key)?.remove(key)?;
        self.index(type_key, key, &old, false);
        Some(Arc::unwrap_or_clone(old))
    }

    /// Drops a whole (emptied) collection, as when its CRD goes.
    pub fn remove_collection(&mut self, type_key: &str) {
        let keys: Vec<ObjKey> = self
            .by_type
            .get(type_key)
            .map(|c| c.keys().cloned().collect())
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
    ) -> Box<dyn Iterator<Item = &'a Value> + 'a> {
        let Some(coll) = self.by_type.get(type_key) else {
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
                    .get(&(type_key.to_string(), label, value))
                    .into_iter()
                    .flatten()
                    .filter(move |(n, _)| ns.is_none_or(|ns| ns == n));
                Box::new(keys.filter_map(|k| coll.get(k)).map(|o| &**o))
            }
            None => Box::new(
                coll.iter()
                    .filter(move |((n, _), _)| ns.is_none_or(|ns| ns == n))
                    .map(|(_, o)| &**o),
            ),
        }
    }

    /// The objects naming `uid` among their owners.
    pub fn owned_by(&self, uid: &str) -> Vec<(String, ObjKey)> {
        self.owned
            .get(uid)
            .map(|o| o.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Adds (or removes) `obj`'s entries in the indexes.
    fn index(&mut self, type_key: &str, key: &ObjKey, obj: &Value, add: bool) {
        for (label, value) in labels(obj) {
            let entry = (type_key.to_string(), label.to_string(), value.to_string());
            if add {
                self.labelled.entry(entry).or_default().insert(key.clone());
            } else if let Some(keys) = self.labelled.get_mut(&entry) {
                keys.remove(key);
                if keys.is_empty() {
                    self.labelled.remove(&entry);
                }
            }
        }
        for uid in owner_uids(obj) {
            let entry = (type_key.to_string(), key.clone());
            if add {
                self.owned.entry(uid.to_string()).or_default().insert(entry);
            } else if let Some(owned) = self.owned.get_mut(uid) {
                owned.remove(&entry);
                if owned.is_empty() {
                    self.owned.remove(uid);
                }
            }
        }
    }
}

fn labels(obj: &Value) -> impl Iterator<Item = (&str, &str)> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
}

fn owner_uids(obj: &Value) -> impl Iterator<Item = &str> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uid").and_then(Value::as_str))
        .filter(|uid| !uid.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::meta_str;
    use serde_json::json;

    fn obj(name: &str, labels: Value, owners: &[&str]) -> Value {
        let refs: Vec<Value> = owners.iter().map(|u| json!({"uid": u})).collect();
        json!({"metadata": {"name": name, "namespace": "ns", "labels": labels, "ownerReferences": refs}})
    }

    fn names<'a>(it: impl Iterator<Item = &'a Value>) -> Vec<&'a str> {
        it.map(|o| meta_str(o, "name")).collect()
    }

    #[test]
    fn indexes_follow_every_replacement_and_removal() {
        let mut objects = Objects::default();
        let key = |n: &str| ("ns".to_string(), n.to_string());
        let sel = |s: &str| LabelSelector::parse(s).expect("selector");
        objects.insert(
            "t",
            key("a"),
            obj("a", json!({"c": "1", "x": "y"}), &["u1"]),
        );
        objects.insert("t", key("b"), obj("b", json!({"c": "1"}), &["u1", "u2"]));
        objects.insert("t", key("z"), obj("z", json!({"c": "2"}), &[]));
        objects.insert("other", key("a"), obj("a", json!({"c": "1"}), &["u1"]));

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
        objects.insert("t", key("a"), obj("a", json!({"c": "2", "x": "y"}), &[]));
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
        assert!(objects.labelled.keys().all(|(t, _, _)| t == "t"));
    }
}
