//! Owner-reference garbage collection, run synchronously when an object is removed so
//! tests see a deterministic end state right after the DELETE returns.

use crate::store::GcStore;
use crate::stored::IndexEntries;

/// Deletes the dependents of a removed owner that have no other existing owner (they go
/// through normal deletion, so their finalizers hold them and their own dependents
/// follow); dependents with another live owner only lose the dangling reference.
pub(crate) fn collect<S: GcStore>(store: &mut S, owner_uid: &str) {
    for (rt, key, read) in store.dependents_of(owner_uid) {
        let other_owner_alive = IndexEntries::of(&read.1)
            .owners
            .iter()
            .any(|uid| uid != owner_uid && store.uid_exists(uid));
        if other_owner_alive {
            store.drop_owner_ref(&rt, &key, owner_uid, read);
        } else {
            store.delete_dependent(&rt, &key);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use crate::util::meta_str;
    use serde_json::{Value, json};

    fn cm(name: &str, owners: &[&Value], finalizers: &[&str]) -> Value {
        let refs: Vec<Value> = owners
            .iter()
            .map(|o| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": meta_str(o, "name"), "uid": meta_str(o, "uid")}))
            .collect();
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": refs, "finalizers": finalizers}})
    }

    #[test]
    fn deleting_an_owner_cascades_unless_another_owner_lives() {
        let s = Store::new(100);
        let a = s.create_object(cm("a", &[], &[])).unwrap();
        let b = s.create_object(cm("b", &[], &[])).unwrap();
        let child = s.create_object(cm("child", &[&a], &[])).unwrap();
        s.create_object(cm("grandchild", &[&child], &[])).unwrap();
        s.create_object(cm("shared", &[&a, &b], &[])).unwrap();
        s.create_object(cm("held", &[&a], &["example.com/hold"]))
            .unwrap();

        s.delete_object("v1", "ConfigMap", "default", "a").unwrap();

        let get = |n: &str| s.get_object("v1", "ConfigMap", "default", n);
        assert!(get("child").is_none());
        assert!(get("grandchild").is_none(), "recursive");
        let shared = get("shared").unwrap();
        assert_eq!(
            shared["metadata"]["ownerReferences"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        assert_eq!(shared["metadata"]["ownerReferences"][0]["name"], "b");
        let held = get("held").unwrap();
        assert!(
            held["metadata"]["deletionTimestamp"].is_string(),
            "finalizers respected"
        );
    }
}
