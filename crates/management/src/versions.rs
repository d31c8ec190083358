//! Cluster API's own kinds written in the version the management cluster prefers.
//!
//! The engine and the reconcile speak one version of Cluster API's kinds; a management
//! cluster may prefer another (Cluster API 1.11 and later store `v1beta2`). Cluster
//! API's topology controller applies in the preferred version, so its field manager's
//! `managedFields` entry is in that version's field paths: an apply in another version
//! would change the ownership record (and a takeover of its objects would write every
//! one of them once) even when no value changes. So applies and their local predictions
//! of Cluster API's kinds are converted ([`topograph_api::convert`]) to the version the
//! server prefers, and what comes back is converted back to the caller's version. Merge
//! patches go there too, as the difference the patch makes in that version (decision
//! 0040): the server then converts nothing.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kube::discovery;
use serde_json::Value;
use topograph_api::convert::{self, GROUP, Options, Version};
use topograph_api::object::ObjectExt;

use crate::api::ManagementCluster;
use crate::error::Error;

/// What discovery said of Cluster API's group, and when.
#[derive(Clone, Debug)]
pub(crate) struct Preferred {
    version: Option<Version>,
    at: Instant,
}

/// `(group, kind)` -> the apiVersion the server serves it in, for references that
/// carry only a group (v1beta2's contract references going down to v1beta1).
pub(crate) type RefVersions = HashMap<(String, String), String>;

impl ManagementCluster {
    /// The version of Cluster API's group the server prefers, when it is one the
    /// conversion knows; asked again after the unserved-kind expiry, so an upgrade of
    /// Cluster API is seen without a restart.
    async fn preferred_cluster_api(&self) -> Result<Option<Version>, Error> {
        if let Some(known) = self.preferred_cache().clone()
            && known.at.elapsed() < self.unserved_expiry()
        {
            return Ok(known.version);
        }
        let version = match discovery::group(self.client(), GROUP).await {
            Ok(group) => {
                Version::of_api_version(&format!("{GROUP}/{}", group.preferred_version_or_latest()))
            }
            Err(kube::Error::Discovery(_)) => None,
            Err(e) if crate::error::is_not_found(&e) => None,
            Err(e) => return Err(e.into()),
        };
        *self.preferred_cache() = Some(Preferred {
            version,
            at: Instant::now(),
        });
        Ok(version)
    }

    /// The apiVersion of Cluster API's group the server prefers (`cluster.x-k8s.io/v1beta2`
    /// on Cluster API 1.11 and later); None when discovery names none the conversion
    /// knows. Watching in it spares the server a conversion of every event, as Cluster
    /// API's own controllers watch in their storage version.
    pub async fn preferred_cluster_api_version(&self) -> Result<Option<&'static str>, Error> {
        Ok(self
            .preferred_cluster_api()
            .await?
            .map(Version::api_version))
    }

    /// The version `object` is to be written in, when it is one of Cluster API's
    /// converted kinds and the server prefers another version of them.
    pub(crate) async fn write_version(&self, object: &Value) -> Result<Option<Version>, Error> {
        let Some(own) = convert::version_of(object) else {
            return Ok(None);
        };
        Ok(self
            .preferred_cluster_api()
            .await?
            .filter(|preferred| *preferred != own))
    }

    /// `object` with its owner references to Cluster API's objects naming the version
    /// the server prefers (Cluster API writes them in its own version; an owner
    /// reference in another one would be a difference the next apply has to write).
    /// `None` when nothing needs renaming.
    pub(crate) async fn with_preferred_owner_refs(
        &self,
        object: &Value,
    ) -> Result<Option<Value>, Error> {
        let names_cluster_api = object
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|owners| {
                owners.iter().any(|r| {
                    r.get("apiVersion")
                        .and_then(Value::as_str)
                        .and_then(Version::of_api_version)
                        .is_some()
                })
            });
        if !names_cluster_api {
            return Ok(None);
        }
        let Some(preferred) = self.preferred_cluster_api().await? else {
            return Ok(None);
        };
        let mut renamed = object.clone();
        Ok(convert::owner_refs_to(&mut renamed, preferred).then_some(renamed))
    }

    /// `intent` in `to`, to be written: a new intent, so no conversion data.
    pub(crate) fn for_writing(intent: &Value, to: Version) -> Result<Value, Error> {
        let options = Options {
            conversion_data: false,
            ..Options::default()
        };
        convert::convert(intent, to, &options).map_err(|e| {
            Error::invalid(format!(
                "{} {}: converting to {}: {e}",
                intent.kind(),
                intent.name(),
                to.api_version()
            ))
        })
    }

    /// A merge patch of `of` (read in another version) as the server is to get it in
    /// `to`: `of` there, and the difference the patch makes there, as Cluster API's patch
    /// helper computes what it sends from the object before and after its changes. The
    /// patch's resourceVersion, a precondition, is kept. Both conversions read `of`'s
    /// conversion data, as the server converting the patched object would.
    pub(crate) fn merge_patch_there(
        &self,
        of: &Value,
        patch: &Value,
        to: Version,
    ) -> Result<(Arc<Value>, Value), Error> {
        let before = self.up_again(of, to)?;
        let mut patched = of.clone();
        json_patch::merge(&mut patched, patch);
        let after = Self::for_writing(&patched, to)?;
        let mut difference =
            merge_difference(&before, &after).unwrap_or_else(|| Value::Object(Default::default()));
        if let Some(resource_version) = patch.pointer("/metadata/resourceVersion")
            && let Some(map) = difference.as_object_mut()
        {
            let metadata = map
                .entry("metadata")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(metadata) = metadata.as_object_mut() {
                metadata.insert("resourceVersion".into(), resource_version.clone());
            }
        }
        Ok((before, difference))
    }

    /// `object`, read in another version than `to`, in `to` as the server has it: the
    /// object it was converted from when this client converted it lately (a read of the
    /// owned-object cache, a write's answer) and it is unchanged since, else converted
    /// (its conversion data restoring what the version read cannot hold).
    pub(crate) fn up_again(&self, object: &Value, to: Version) -> Result<Arc<Value>, Error> {
        match self.conversions().from(object, to) {
            Some(there) => Ok(there),
            None => Self::for_writing(object, to).map(Arc::new),
        }
    }

    /// `object`, answered by the server (or computed) in another version, back in
    /// `version`, with the conversion data a round trip needs, as the server would
    /// answer a read in that version.
    pub(crate) async fn read_back(&self, object: &Value, version: Version) -> Result<Value, Error> {
        if convert::version_of(object).is_none_or(|own| own == version) {
            return Ok(object.clone());
        }
        let versions = self.ref_versions(object).await?;
        let lookup = |group: &str, kind: &str| {
            versions
                .get(&(group.to_string(), kind.to_string()))
                .cloned()
        };
        let options = Options {
            conversion_data: true,
            api_version_of: &lookup,
        };
        convert::convert(object, version, &options).map_err(|e| {
            Error::invalid(format!(
                "{} {}: converting to {}: {e}",
                object.kind(),
                object.name(),
                version.api_version()
            ))
        })
    }

    /// [`ManagementCluster::read_back`] of an object the server has (a read, a write's
    /// answer), remembered with it so that writing it back starts from it
    /// ([`ManagementCluster::up_again`]).
    pub(crate) async fn read_back_kept(
        &self,
        object: Value,
        version: Version,
    ) -> Result<Value, Error> {
        let converted = self.read_back(&object, version).await?;
        if object.api_version() != converted.api_version() {
            self.conversions().remember(object, &converted);
        }
        Ok(converted)
    }

    /// The apiVersion of every `{apiGroup, kind}` reference in `object`, from
    /// discovery (cached for the process).
    async fn ref_versions(&self, object: &Value) -> Result<RefVersions, Error> {
        let mut wanted = BTreeSet::new();
        group_kind_refs(object, &mut wanted);
        let mut found = RefVersions::new();
        for (group, kind) in wanted {
            let key = (group.clone(), kind.clone());
            if let Some(known) = self.ref_versions_cache().get(&key).cloned() {
                found.insert(key, known);
                continue;
            }
            let api_version = match discovery::group(self.client(), &group).await {
                Ok(g) => g.recommended_kind(&kind).map(|(r, _)| r.api_version),
                Err(kube::Error::Discovery(_)) => None,
                Err(e) if crate::error::is_not_found(&e) => None,
                Err(e) => return Err(e.into()),
            };
            if let Some(api_version) = api_version {
                self.ref_versions_cache()
                    .insert(key.clone(), api_version.clone());
                found.insert(key, api_version);
            }
        }
        Ok(found)
    }
}

/// How many conversions [`Conversions`] remembers: a few reconciles' worth of objects
/// (each reads and writes a handful of Cluster API's objects).
const CONVERSIONS_REMEMBERED: usize = 64;

/// The objects this client lately converted from the server's version for a reader, with
/// the object each came from, so that writing one of them back (a prediction, a merge
/// patch) starts from what the server has instead of converting it up again: the round
/// trip costs two conversions (≈10 % of the applier's CPU before), and the object the
/// server keeps is what a write is applied to anyway. Found only for an object equal to
/// the one handed out, so a reader changing its copy gets a conversion.
#[derive(Default)]
pub(crate) struct Conversions(Mutex<VecDeque<Converted>>);

struct Converted {
    /// `uid` and `resourceVersion`, to find it without comparing whole objects.
    identity: (String, String),
    from: Arc<Value>,
    /// The digest of the object handed out ([`digest`]): kept instead of a copy,
    /// which would cost about what the conversion spared.
    to: u64,
}

impl Conversions {
    fn identity(object: &Value) -> Option<(&str, &str)> {
        let uid = object.at(&["metadata", "uid"])?.as_str()?;
        let version = object.at(&["metadata", "resourceVersion"])?.as_str()?;
        Some((uid, version))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Converted>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers that `to` was converted from `from`.
    fn remember(&self, from: Value, to: &Value) {
        let Some((uid, version)) = Self::identity(to) else {
            return;
        };
        let converted = Converted {
            identity: (uid.to_string(), version.to_string()),
            to: digest(to),
            from: Arc::new(from),
        };
        let mut remembered = self.lock();
        remembered.retain(|c| {
            c.identity.0 != converted.identity.0
                || c.from.api_version() != converted.from.api_version()
        });
        if remembered.len() >= CONVERSIONS_REMEMBERED {
            remembered.pop_front();
        }
        remembered.push_back(converted);
    }

    /// What `object` was converted from, when it was, from an object in `version`.
    fn from(&self, object: &Value, version: Version) -> Option<Arc<Value>> {
        let (uid, resource_version) = Self::identity(object)?;
        let found = {
            let remembered = self.lock();
            remembered
                .iter()
                .rev()
                .find(|c| {
                    c.identity.0 == uid
                        && c.identity.1 == resource_version
                        && c.from.api_version() == version.api_version()
                })
                .map(|c| (c.from.clone(), c.to))?
        };
        (digest(object) == found.1).then_some(found.0)
    }
}

/// A 64-bit digest of a JSON value, its structure included (types, keys, order).
fn digest(value: &Value) -> u64 {
    fn feed(value: &Value, hasher: &mut std::collections::hash_map::DefaultHasher) {
        use std::hash::Hash;
        match value {
            Value::Null => 0u8.hash(hasher),
            Value::Bool(b) => (1u8, b).hash(hasher),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => (2u8, i).hash(hasher),
                (_, Some(u), _) => (6u8, u).hash(hasher),
                (_, _, f) => (7u8, f.map(f64::to_bits)).hash(hasher),
            },
            Value::String(s) => (3u8, s).hash(hasher),
            Value::Array(items) => {
                (4u8, items.len()).hash(hasher);
                items.iter().for_each(|v| feed(v, hasher));
            }
            Value::Object(map) => {
                (5u8, map.len()).hash(hasher);
                for (key, v) in map {
                    key.hash(hasher);
                    feed(v, hasher);
                }
            }
        }
    }
    use std::hash::Hasher;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    feed(value, &mut hasher);
    hasher.finish()
}

/// The JSON merge patch (RFC 7386) that turns `before` into `after`, `None` when they
/// are equal: maps are compared key by key (a key gone is `null`), anything else is
/// replaced whole when it differs, lists included, as merge patches replace them. A
/// `null` kept in `after` cannot be said in a merge patch; it reads as "remove", which
/// for Kubernetes' objects is the same.
fn merge_difference(before: &Value, after: &Value) -> Option<Value> {
    match (before, after) {
        (Value::Object(before), Value::Object(after)) => {
            let mut difference = serde_json::Map::new();
            for (key, was) in before {
                match after.get(key) {
                    None => {
                        difference.insert(key.clone(), Value::Null);
                    }
                    Some(is) => {
                        if let Some(changed) = merge_difference(was, is) {
                            difference.insert(key.clone(), changed);
                        }
                    }
                }
            }
            for (key, is) in after {
                if !before.contains_key(key) {
                    difference.insert(key.clone(), is.clone());
                }
            }
            (!difference.is_empty()).then_some(Value::Object(difference))
        }
        _ if before == after => None,
        _ => Some(after.clone()),
    }
}

/// Every `(apiGroup, kind)` pair of a map holding both, anywhere in `value`.
fn group_kind_refs(value: &Value, out: &mut BTreeSet<(String, String)>) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(group)), Some(Value::String(kind))) =
                (map.get("apiGroup"), map.get("kind"))
            {
                out.insert((group.clone(), kind.clone()));
            }
            map.values().for_each(|v| group_kind_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| group_kind_refs(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_merge_difference_says_what_changed_and_nothing_else() {
        let before = json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}},
            "spec": {"list": [1, 2], "same": {"deep": true}}});
        let after = json!({"metadata": {"name": "a", "labels": {"x": "1", "z": "3"}},
            "spec": {"list": [1, 2, 3], "same": {"deep": true}}, "status": {"ready": true}});
        assert_eq!(
            merge_difference(&before, &after),
            Some(json!({"metadata": {"labels": {"y": null, "z": "3"}},
                "spec": {"list": [1, 2, 3]}, "status": {"ready": true}}))
        );
        assert_eq!(merge_difference(&before, &before), None);
    }

    #[test]
    fn a_conversion_is_remembered_for_the_object_handed_out_and_not_a_changed_copy() {
        let from = |rv: &str| {
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "a", "uid": "u", "resourceVersion": rv}, "spec": {"paused": true}})
        };
        let to = |rv: &str| {
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "a", "uid": "u", "resourceVersion": rv}, "spec": {"paused": true}})
        };
        let conversions = Conversions::default();
        let found = |conversions: &Conversions, object: &Value| {
            conversions
                .from(object, Version::V1Beta2)
                .map(|v| v.as_ref().clone())
        };
        conversions.remember(from("1"), &to("1"));
        assert_eq!(found(&conversions, &to("1")), Some(from("1")));
        assert_eq!(
            conversions.from(&to("1"), Version::V1Beta1),
            None,
            "another version"
        );
        let mut changed = to("1");
        changed["spec"]["paused"] = json!(false);
        assert_eq!(found(&conversions, &changed), None);
        // A newer version of the object replaces the older.
        conversions.remember(from("2"), &to("2"));
        assert_eq!(found(&conversions, &to("1")), None);
        assert_eq!(found(&conversions, &to("2")), Some(from("2")));
        // Bounded: the oldest go first.
        for i in 0..CONVERSIONS_REMEMBERED {
            let mut other = to("1");
            other["metadata"]["uid"] = json!(format!("other-{i}"));
            conversions.remember(from("1"), &other);
        }
        assert_eq!(conversions.lock().len(), CONVERSIONS_REMEMBERED);
        assert_eq!(found(&conversions, &to("2")), None);
    }

    mod property {
        use super::*;
        use proptest::prelude::*;

        /// JSON without nulls (a merge patch cannot set one), small keys so maps overlap.
        fn json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                any::<bool>().prop_map(Value::from),
                (0i64..4).prop_map(Value::from),
                "[ab]{0,2}".prop_map(Value::from),
            ];
            leaf.prop_recursive(4, 32, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    prop::collection::btree_map("[a-d]", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        proptest! {
            /// Merged onto `before`, the difference gives `after`, whatever both are.
            #[test]
            fn the_difference_merged_gives_the_object_after(before in json(), after in json()) {
                let mut merged = before.clone();
                if let Some(difference) = merge_difference(&before, &after) {
                    json_patch::merge(&mut merged, &difference);
                }
                prop_assert_eq!(merged, after);
            }
        }
    }

    #[test]
    fn references_by_group_are_found_anywhere() {
        let md = json!({"spec": {"template": {"spec": {
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "a"}},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "b"}}}},
            "status": {"conditions": [{"kind": "not a reference"}]}});
        let mut found = BTreeSet::new();
        group_kind_refs(&md, &mut found);
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            [
                (
                    "bootstrap.cluster.x-k8s.io".to_string(),
                    "KubeadmConfigTemplate".to_string()
                ),
                (
                    "infrastructure.cluster.x-k8s.io".to_string(),
                    "DockerMachineTemplate".to_string()
                ),
            ]
        );
    }
}
