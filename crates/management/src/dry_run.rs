//! Writes kept in memory instead of sent: the overlay behind a dry-run
//! [`crate::ManagementCluster`]. Reads through a dry-run client see the live objects with
//! the overlay's writes on top, so a whole reconcile runs unchanged and its writes can be
//! read back as a plan, exact because it is the reconcile itself that made them.
//!
//! The overlay plays the API server's part for what a reconcile relies on: names from
//! `generateName`, uids, resourceVersion conflicts, AlreadyExists, generation bumps on
//! spec changes, and status written only through the status subresource (every kind the
//! topology writes has one), by the rules the in-memory API server uses too
//! ([`topograph_api::server`]). Its own are the placeholders: uids and resourceVersions
//! `dry-run-N`, and generated names from the run's sequence. It does not run admission webhooks, defaulting or garbage
//! collection; [`Overlay::touched`] hands back each object as first seen and as last
//! written, and the plan derives cascading deletions itself.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use topograph_api::object::{ObjectExt, ObjectKey, group_of, metadata_mut};
use topograph_api::server::{self, Sub};

/// One object a dry run wrote: as it was before (`None`: it did not exist) and as it
/// would be after (`None`: deleted).
#[derive(Clone, Debug, PartialEq)]
pub struct Touched {
    /// Which object.
    pub key: ObjectKey,
    /// The object before the first write.
    pub before: Option<Value>,
    /// The object after the last write.
    pub after: Option<Value>,
}

/// Why an overlay write was refused, as the API server would answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 404.
    NotFound,
    /// 409 AlreadyExists.
    AlreadyExists,
    /// 409 Conflict (stale resourceVersion).
    Conflict,
    /// 422 Invalid: a create with neither a name nor a `generateName`.
    NameRequired,
    /// 409 Conflict: another precondition failed; the text says which.
    Precondition(String),
}

/// The writes of one dry run.
#[derive(Debug, Default)]
pub struct Overlay {
    objects: BTreeMap<ObjectKey, Entry>,
    // Counts writes, for resourceVersions, uids and generated names unique in this run.
    sequence: u64,
}

#[derive(Debug)]
struct Entry {
    before: Option<Value>,
    after: Option<Value>,
    order: u64,
}

impl Overlay {
    /// What the overlay knows of `key`: `None` when it never wrote it (read the live
    /// object), `Some(None)` when it deleted it.
    pub fn get(&self, key: &ObjectKey) -> Option<Option<Value>> {
        self.objects.get(key).map(|e| e.after.clone())
    }

    /// `live` (a list of one kind in one namespace, or in all when `namespace` is empty,
    /// selected by `labels`) with the overlay's writes of that kind applied, sorted by
    /// namespace and name as the API server lists.
    pub fn list(
        &self,
        live: Vec<Value>,
        api_version: &str,
        kind: &str,
        namespace: &str,
        labels: &[(&str, &str)],
    ) -> Vec<Value> {
        let group = group_of(api_version);
        // By namespace and name: a list across namespaces holds same-named objects.
        let mut listed: BTreeMap<(String, String), Value> = BTreeMap::new();
        for object in live {
            let key = ObjectKey::of(&object);
            let at = (key.namespace.clone(), key.name.clone());
            match self.objects.get(&key) {
                Some(entry) => {
                    if let Some(after) = &entry.after {
                        listed.insert(at, after.clone());
                    }
                }
                None => {
                    listed.insert(at, object);
                }
            }
        }
        for (key, entry) in &self.objects {
            if key.group != group
                || key.kind != kind
                || (!namespace.is_empty() && key.namespace != namespace)
            {
                continue;
            }
            let at = (key.namespace.clone(), key.name.clone());
            match &entry.after {
                Some(after) if selected(after, labels) => {
                    listed.insert(at, after.clone());
                }
                _ => {
                    listed.remove(&at);
                }
            }
        }
        listed.into_values().collect()
    }

    /// Creates `object` over `current` (what a read sees now).
    pub fn create(&mut self, object: &Value, current: Option<Value>) -> Result<Value, Refusal> {
        if current.is_some() {
            return Err(Refusal::AlreadyExists);
        }
        let sequence = self.next();
        // The run's sequence, not a random source, picks the suffix, so a plan made twice
        // names the same objects. Whether a live object already has the generated name
        // is not asked (that is a read, and the overlay only sees what it is given); with
        // five random characters on the live side, a clash is one in 27^5 per object.
        let name = server::name_to_create(object, || server::name_suffix(sequence), |_| false)
            .ok_or(Refusal::NameRequired)?;
        let mut created = object.clone();
        server::keep_status(&mut created, None, STATUS_SUBRESOURCE);
        let generation = tracks_generation(&created);
        if let Some(metadata) = metadata_mut(&mut created) {
            metadata.insert("name".into(), json!(name));
            metadata.insert("uid".into(), json!(format!("dry-run-{sequence}")));
            metadata.insert(
                "resourceVersion".into(),
                json!(format!("dry-run-{sequence}")),
            );
            if generation {
                metadata.insert("generation".into(), json!(1));
            } else {
                metadata.remove("generation");
            }
            metadata.remove("managedFields");
        }
        self.record(None, Some(created.clone()));
        Ok(created)
    }

    /// Replaces the object's main resource (its status stays), or with `status` its
    /// status alone.
    pub fn replace(
        &mut self,
        object: &Value,
        current: Option<Value>,
        status: bool,
    ) -> Result<Value, Refusal> {
        let current = current.ok_or(Refusal::NotFound)?;
        self.write(current, object.clone(), sub(status))
    }

    /// Applies a JSON merge patch to the main resource, or with `status` to the status.
    pub fn merge_patch(
        &mut self,
        patch: &Value,
        current: Option<Value>,
        status: bool,
    ) -> Result<Value, Refusal> {
        let current = current.ok_or(Refusal::NotFound)?;
        let mut patched = current.clone();
        json_patch::merge(&mut patched, patch);
        self.write(current, patched, sub(status))
    }

    /// Deletes the object; one already gone is fine.
    pub fn delete(&mut self, current: Option<Value>) {
        if let Some(current) = current {
            self.record(Some(current), None);
        }
    }

    /// Every object written, in the order first written.
    pub fn touched(&self) -> Vec<Touched> {
        let mut entries: Vec<(&ObjectKey, &Entry)> = self.objects.iter().collect();
        entries.sort_by_key(|(_, e)| e.order);
        entries
            .into_iter()
            .map(|(key, e)| Touched {
                key: key.clone(),
                before: e.before.clone(),
                after: e.after.clone(),
            })
            .collect()
    }

    fn next(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    /// Stores `body` written to `sub` over `current` by the API server's rules: the
    /// resourceVersion precondition, the status subresource split, a new resourceVersion
    /// and a new generation when the write changed the spec.
    fn write(&mut self, current: Value, body: Value, sub: Sub) -> Result<Value, Refusal> {
        if !server::resource_version_holds(&body, &current) {
            return Err(Refusal::Conflict);
        }
        let mut written = server::to_store(&current, body, sub, STATUS_SUBRESOURCE);
        let generation = server::bumped_generation(&current, &written, sub, STATUS_SUBRESOURCE)
            .filter(|_| tracks_generation(&current));
        let sequence = self.next();
        if let Some(metadata) = metadata_mut(&mut written) {
            metadata.insert(
                "resourceVersion".into(),
                json!(format!("dry-run-{sequence}")),
            );
            if let Some(generation) = generation {
                metadata.insert("generation".into(), json!(generation));
            }
        }
        self.record(Some(current), Some(written.clone()));
        Ok(written)
    }

    fn record(&mut self, before: Option<Value>, after: Option<Value>) {
        let Some(key) = after.as_ref().or(before.as_ref()).map(ObjectKey::of) else {
            return;
        };
        let order = self.sequence;
        self.objects
            .entry(key)
            .and_modify(|e| e.after = after.clone())
            .or_insert(Entry {
                before,
                after,
                order,
            });
    }
}

/// Every kind the topology writes has a status subresource, so the overlay treats
/// every kind as having one.
const STATUS_SUBRESOURCE: bool = true;

fn sub(status: bool) -> Sub {
    if status { Sub::Status } else { Sub::Main }
}

/// Label selection as [`crate::ManagementCluster::list`] means it: every pair present
/// with that value.
fn selected(object: &Value, labels: &[(&str, &str)]) -> bool {
    let have = object.labels();
    labels
        .iter()
        .all(|(k, v)| have.get(*k).map(String::as_str) == Some(*v))
}

/// Whether `object`'s kind carries `metadata.generation` on a real API server.
fn tracks_generation(object: &Value) -> bool {
    server::tracks_generation(group_of(object.api_version()), object.kind())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A custom resource (its kind tracks generations, as every kind the topology
    /// writes but Secrets and Events).
    fn cm(name: &str, data: &str) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "7", "generation": 3, "uid": "u1",
                "labels": {"app": "x"}},
            "data": {"k": data}, "status": {"s": 1}})
    }

    #[test]
    fn writes_follow_the_api_servers_rules() {
        let mut overlay = Overlay::default();
        let live = cm("a", "1");
        assert_eq!(
            overlay.create(&cm("a", "2"), Some(live.clone())),
            Err(Refusal::AlreadyExists)
        );
        let mut stale = cm("a", "2");
        stale["metadata"]["resourceVersion"] = json!("6");
        assert_eq!(
            overlay.replace(&stale, Some(live.clone()), false),
            Err(Refusal::Conflict)
        );
        let mut changed = cm("a", "2");
        changed["status"] = json!({"s": 9});
        let replaced = overlay
            .replace(&changed, Some(live.clone()), false)
            .unwrap();
        assert_eq!(replaced["data"]["k"], "2");
        assert_eq!(replaced["status"], json!({"s": 1}), "status needs /status");
        assert_eq!(replaced["metadata"]["generation"], 4);
        assert_ne!(replaced["metadata"]["resourceVersion"], "7");
        let status = overlay
            .merge_patch(
                &json!({"status": {"s": 2}, "data": {"k": "3"}}),
                Some(replaced.clone()),
                true,
            )
            .unwrap();
        assert_eq!(status["status"]["s"], 2);
        assert_eq!(
            status["data"]["k"], "2",
            "the main resource needs no /status"
        );
        assert_eq!(
            status["metadata"]["generation"], 4,
            "status moves no generation"
        );
        // Secrets, ConfigMaps and Events carry no generation on a real API server.
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "ns", "resourceVersion": "1"}, "data": {}});
        let mut rewritten = secret.clone();
        rewritten["data"] = json!({"k": "dg=="});
        let replaced = overlay
            .replace(&rewritten, Some(secret.clone()), false)
            .unwrap();
        assert!(
            replaced.pointer("/metadata/generation").is_none(),
            "{replaced}"
        );
        let mut new_secret = secret.clone();
        new_secret["metadata"]["name"] = json!("t");
        let created = overlay.create(&new_secret, None).unwrap();
        assert!(
            created.pointer("/metadata/generation").is_none(),
            "{created}"
        );
        let touched = overlay.touched();
        assert_eq!(touched.len(), 3);
        assert_eq!(touched[0].before.as_ref(), Some(&live));
        assert_eq!(touched[0].after.as_ref(), Some(&status));
    }

    #[test]
    fn reads_see_the_overlay_on_top_of_the_live_objects() {
        let mut overlay = Overlay::default();
        let mut new = cm("", "n");
        new["metadata"]["generateName"] = json!("gen-");
        let created = overlay.create(&new, None).unwrap();
        assert_eq!(created.name(), "gen-cbbbb");
        assert_eq!(created["metadata"]["generation"], 1);
        overlay.delete(Some(cm("b", "1")));
        let listed = overlay.list(
            vec![cm("b", "1"), cm("c", "1")],
            "example.com/v1",
            "Widget",
            "ns",
            &[("app", "x")],
        );
        let names: Vec<&str> = listed.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["c", "gen-cbbbb"]);
        assert_eq!(overlay.get(&ObjectKey::of(&cm("b", "1"))), Some(None));
        assert_eq!(overlay.get(&ObjectKey::of(&cm("c", "1"))), None);
        let other_labels = overlay.list(
            Vec::new(),
            "example.com/v1",
            "Widget",
            "ns",
            &[("app", "y")],
        );
        // Across namespaces, same names stay apart.
        let mut elsewhere = cm("c", "1");
        elsewhere["metadata"]["namespace"] = json!("other");
        let everywhere = overlay.list(
            vec![cm("c", "1"), elsewhere],
            "example.com/v1",
            "Widget",
            "",
            &[],
        );
        let at: Vec<(&str, &str)> = everywhere
            .iter()
            .map(|o| (o.namespace(), o.name()))
            .collect();
        assert_eq!(at, [("ns", "c"), ("ns", "gen-cbbbb"), ("other", "c")]);
        assert!(other_labels.is_empty());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        #[derive(Clone, Debug)]
        enum Op {
            Create(u8, u8),
            Replace(u8, u8, bool),
            Patch(u8, u8),
            Delete(u8),
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                (0..4u8, any::<u8>()).prop_map(|(n, v)| Op::Create(n, v)),
                (0..4u8, any::<u8>(), any::<bool>()).prop_map(|(n, v, s)| Op::Replace(n, v, s)),
                (0..4u8, any::<u8>()).prop_map(|(n, v)| Op::Patch(n, v)),
                (0..4u8).prop_map(Op::Delete),
            ]
        }

        proptest! {
            /// Whatever writes a reconcile makes, reads see exactly the last one, every
            /// touched object is reported once with the live object as its `before`, and
            /// nothing panics.
            #[test]
            fn reads_and_touched_agree_with_the_writes(ops in prop::collection::vec(op(), 0..40)) {
                let live: BTreeMap<u8, Value> = (0..2u8).map(|n| (n, cm(&format!("o{n}"), "live"))).collect();
                let mut overlay = Overlay::default();
                let mut model: BTreeMap<u8, Option<Value>> = BTreeMap::new();
                let current = |overlay: &Overlay, n: u8| {
                    overlay
                        .get(&ObjectKey::of(&cm(&format!("o{n}"), "")))
                        .unwrap_or_else(|| live.get(&n).cloned())
                };
                for op in ops {
                    match op {
                        Op::Create(n, v) => {
                            let now = current(&overlay, n);
                            let result = overlay.create(&cm(&format!("o{n}"), &v.to_string()), now.clone());
                            prop_assert_eq!(result.is_ok(), now.is_none());
                            if let Ok(created) = result {
                                model.insert(n, Some(created));
                            }
                        }
                        Op::Replace(n, v, stale) => {
                            let now = current(&overlay, n);
                            let mut object = cm(&format!("o{n}"), &v.to_string());
                            let rv = now.as_ref().map(|o| o["metadata"]["resourceVersion"].clone()).unwrap_or(Value::Null);
                            object["metadata"]["resourceVersion"] = if stale { json!("stale") } else { rv };
                            let result = overlay.replace(&object, now.clone(), false);
                            prop_assert_eq!(result.is_ok(), now.is_some() && !stale);
                            if let Ok(written) = result {
                                prop_assert_eq!(&written["data"]["k"], &json!(v.to_string()));
                                model.insert(n, Some(written));
                            }
                        }
                        Op::Patch(n, v) => {
                            let now = current(&overlay, n);
                            let result = overlay.merge_patch(&json!({"data": {"p": v}}), now.clone(), false);
                            prop_assert_eq!(result.is_ok(), now.is_some());
                            if let Ok(written) = result {
                                model.insert(n, Some(written));
                            }
                        }
                        Op::Delete(n) => {
                            let now = current(&overlay, n);
                            let existed = now.is_some();
                            overlay.delete(now);
                            if existed {
                                model.insert(n, None);
                            }
                        }
                    }
                }
                for (n, expected) in &model {
                    prop_assert_eq!(&current(&overlay, *n), expected);
                }
                let touched = overlay.touched();
                prop_assert_eq!(touched.len(), model.len());
                for t in touched {
                    let n: u8 = t.key.name[1..].parse().unwrap();
                    prop_assert_eq!(t.before, live.get(&n).cloned());
                    prop_assert_eq!(&t.after, &model[&n]);
                }
            }
        }
    }
}
