//! The object store: every collection, the global resourceVersion, the watch event
//! history and fan-out, and the write rules (no-op writes, finalizers, and the rules the
//! dry-run overlay of `topograph-management` plays too, from [`topograph_api::server`]:
//! generated names, resourceVersion preconditions, generation, status subresource).
//! One mutex guards it all so each request is atomic; it is never held across an await.

use crate::conversion::{Converter, convert, convert_ref};
use crate::fields::{self, Write};
use crate::selector::Filter;
use crate::status::ApiError;
use crate::stored::Stored;
use crate::types::{ResourceType, split_api_version, type_key};
use crate::util::{meta_str, metadata_mut, name_suffix, uuid_v4};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;
use topograph_api::object::{ObjectExt, object_of};
use topograph_api::server::{self, equal_except};
use topograph_gocompat::time;
use topograph_ssa::Schema;

pub use topograph_api::server::Sub;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// A change to one object, as watches see it.
#[derive(Debug, Clone)]
pub struct Event {
    pub rv: u64,
    pub type_key: String,
    pub event_type: EventType,
    /// The object after the change (for DELETED: as it was removed), in its stored
    /// version; shared with the store while it is the current version.
    pub object: Arc<Stored>,
    /// For MODIFIED: what selectors read of the object before (see `Inner::selectable`),
    /// so selector watches can turn the change into ADDED/DELETED.
    pub old: Option<Stored>,
    /// What selectors read of the object after the change, when that is less than the
    /// object: kept once with the event, so each watch with a label selector reads a
    /// few labels rather than parsing the whole object again.
    pub selected: Option<Stored>,
}

impl Event {
    /// The object as selectors read it after the change.
    pub fn selectable(&self) -> &Stored {
        self.selected.as_ref().unwrap_or(&self.object)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 7386.
    Merge,
    /// RFC 6902.
    Json,
    /// Treated as a merge patch: without Go struct schemas there are no merge keys, and
    /// the objects this server holds are custom resources, for which Kubernetes itself
    /// refuses strategic merge.
    Strategic,
}

#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `propagationPolicy: Orphan`: dependents are left alone.
    pub orphan: bool,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
}

use crate::objects::{ObjKey, Objects};

struct Inner {
    rv: u64,
    types: BTreeMap<String, Arc<ResourceType>>,
    objects: Objects,
    uids: HashSet<String>,
    history: VecDeque<Arc<Event>>,
    history_limit: usize,
    /// The highest resourceVersion dropped from `history`: watches from before it get 410.
    evicted_rv: u64,
    tx: broadcast::Sender<Arc<Event>>,
    /// Parsed CRD schemas by (resource key, version), with the stored CRD they were
    /// read from: a CRD's schema is large, and writes read it each time.
    schemas: HashMap<(String, String), (Arc<Stored>, Arc<Schema>)>,
    /// Plays the conversion webhook of kinds whose CRD asks for one.
    converter: Option<Converter>,
}

/// Whether a write's managed fields are computed as an update's, or were already
/// computed (by an apply) and are stored as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Track {
    Update,
    Given,
}

/// A stored object as a write reads it: in the version the write is made in, and as
/// stored when that differs. A write used to parse the stored text twice (once for
/// each form); both forms come from one parse now.
struct Read {
    /// In the version of the write.
    object: Value,
    /// As stored, when not `object` itself.
    stored: Option<Value>,
}

/// What a new watch starts from, taken atomically with its subscription.
pub struct WatchStart {
    /// Current objects of the collection, when the watch starts from "now".
    pub objects: Vec<Arc<Stored>>,
    /// Events after the requested resourceVersion, when one was given.
    pub replay: Vec<Arc<Event>>,
    pub rx: broadcast::Receiver<Arc<Event>>,
    pub rv: u64,
}

pub struct Store {
    inner: Mutex<Inner>,
    /// Change events' objects converted for watches, shared among them (its own lock:
    /// watches must not wait on writes for it).
    converted: Arc<crate::converted_events::ConvertedEvents>,
}

impl Store {
    pub fn new(history_limit: usize) -> Self {
        Self::with_converter(history_limit, None)
    }

    /// A store converting objects of kinds with webhook conversion through `converter`.
    pub fn with_converter(history_limit: usize, converter: Option<Converter>) -> Self {
        // The channel holds as many events as the history: a watcher further behind than
        // that would have to re-list anyway.
        let (tx, _) = broadcast::channel(history_limit.clamp(16, 100_000));
        let mut inner = Inner {
            rv: 0,
            types: BTreeMap::new(),
            objects: Objects::default(),
            uids: HashSet::new(),
            history: VecDeque::new(),
            history_limit: history_limit.max(1),
            evicted_rv: 0,
            tx,
            schemas: HashMap::new(),
            converter,
        };
        for t in ResourceType::builtins() {
            inner.types.insert(t.key(), Arc::new(t));
        }
        let store = Store {
            inner: Mutex::new(inner),
            converted: Default::default(),
        };
        for ns in ["default", "kube-system", "kube-public"] {
            let obj = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            let _ = store.create_object(obj);
        }
        store
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a half-applied write (writes build
        // the new object first and then insert), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Change events' objects as watches converted them.
    pub fn converted_events(&self) -> Arc<crate::converted_events::ConvertedEvents> {
        self.converted.clone()
    }

    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    pub fn types(&self) -> Vec<Arc<ResourceType>> {
        self.lock().types.values().cloned().collect()
    }

    pub fn resolve(&self, group: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.lock().types.get(&type_key(group, plural)).cloned()
    }

    /// The resource serving `kind` in `api_version`.
    pub fn resolve_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceType>> {
        self.lock().resolve_kind(api_version, kind)
    }

    /// The object as stored (in its kind's storage version).
    pub fn get(&self, rt: &ResourceType, ns: &str, name: &str) -> Result<Value, ApiError> {
        // Parsed after the lock is released: other requests need not wait for it.
        Ok(self.get_stored(rt, ns, name)?.value())
    }

    /// The object as stored, as its JSON text.
    pub fn get_stored(
        &self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
    ) -> Result<Arc<Stored>, ApiError> {
        self.lock().get(rt, ns, name).cloned()
    }

    /// What converts objects of kinds with webhook conversion.
    pub fn converter(&self) -> Option<Converter> {
        self.lock().converter.clone()
    }

    /// `object` (as stored, or as a write returned it) in `api_version`.
    pub fn view(
        &self,
        rt: &ResourceType,
        object: Value,
        api_version: &str,
    ) -> Result<Value, ApiError> {
        self.lock().view(rt, object, api_version)
    }

    /// The `apiVersion` each served group and kind is stored in.
    pub fn storage_api_versions(&self) -> HashMap<(String, String), String> {
        self.lock()
            .types
            .values()
            .map(|t| {
                (
                    (t.group.clone(), t.kind.clone()),
                    t.api_version(&t.storage_version),
                )
            })
            .collect()
    }

    /// Matching objects sorted by namespace and name, and the current resourceVersion.
    pub fn list(&self, rt: &ResourceType, ns: Option<&str>, filter: &Filter) -> (Vec<Value>, u64) {
        let (stored, rv) = self.list_stored(rt, ns, filter);
        (stored.iter().map(|o| o.value()).collect(), rv)
    }

    /// [`Store::list`] as the objects' JSON text.
    pub fn list_stored(
        &self,
        rt: &ResourceType,
        ns: Option<&str>,
        filter: &Filter,
    ) -> (Vec<Arc<Stored>>, u64) {
        let inner = self.lock();
        (inner.list(rt, ns, filter), inner.rv)
    }

    /// Creates as the server itself; see [`Store::create_as`].
    pub fn create(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        self.create_as(rt, version, ns, body, &Write::internal())
    }

    /// Creates, recording an `Update` managed fields entry for the writer.
    pub fn create_as(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        body: Value,
        w: &Write,
    ) -> Result<Value, ApiError> {
        self.lock()
            .create(rt, version, ns, body, false, w, Track::Update)
    }

    /// Updates as the server itself; see [`Store::update_as`].
    pub fn update(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        body: Value,
        sub: Sub,
    ) -> Result<Value, ApiError> {
        self.update_as(rt, version, ns, name, body, sub, &Write::internal())
    }

    /// Updates (PUT), recording an `Update` managed fields entry for the writer.
    #[allow(clippy::too_many_arguments)]
    pub fn update_as(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        body: Value,
        sub: Sub,
        w: &Write,
    ) -> Result<Value, ApiError> {
        self.lock().update(rt, version, ns, name, body, sub, w)
    }

    /// Patches as the server itself; see [`Store::patch_as`].
    #[allow(clippy::too_many_arguments)]
    pub fn patch(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
        sub: Sub,
    ) -> Result<Value, ApiError> {
        self.patch_as(
            rt,
            version,
            ns,
            name,
            patch_type,
            patch,
            sub,
            &Write::internal(),
        )
    }

    /// Merge or JSON patch, recording an `Update` managed fields entry for the writer.
    #[allow(clippy::too_many_arguments)]
    pub fn patch_as(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
        sub: Sub,
        w: &Write,
    ) -> Result<Value, ApiError> {
        self.lock()
            .patch(rt, version, ns, name, patch_type, patch, sub, w)
    }

    /// Server-side apply of `config` by `w.manager` (an upsert on the main resource):
    /// kube-apiserver's merge, ownership and conflicts, from `topograph_ssa`.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        config: Value,
        force: bool,
        sub: Sub,
        w: &Write,
    ) -> Result<Value, ApiError> {
        self.lock()
            .apply(rt, version, ns, name, config, force, sub, w)
    }

    pub fn delete(
        &self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        self.lock().delete(rt, ns, name, opts)
    }

    /// Deletes every matching object; returns them as the deletion left them.
    pub fn delete_collection(
        &self,
        rt: &ResourceType,
        ns: Option<&str>,
        filter: &Filter,
        opts: &DeleteOptions,
    ) -> Vec<Value> {
        let mut inner = self.lock();
        let names: Vec<(String, String)> = inner
            .list(rt, ns, filter)
            .iter()
            .map(|o| (o.namespace().to_string(), o.name().to_string()))
            .collect();
        names
            .into_iter()
            .filter_map(|(ns, name)| inner.delete(rt, &ns, &name, opts).ok())
            .collect()
    }

    /// Every change from now on, of every kind (a watch without its start).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.lock().tx.subscribe()
    }

    /// Subscribes a watch: from now (current objects first) when `since` is None, else
    /// replaying the history after `since`; 410 when the history no longer reaches back.
    pub fn watch_start(
        &self,
        rt: &ResourceType,
        ns: Option<&str>,
        since: Option<u64>,
    ) -> Result<WatchStart, ApiError> {
        let inner = self.lock();
        let rx = inner.tx.subscribe();
        let key = rt.key();
        match since {
            None => Ok(WatchStart {
                objects: inner.list(rt, ns, &Filter::default()),
                replay: vec![],
                rx,
                rv: inner.rv,
            }),
            Some(rv) => {
                if rv < inner.evicted_rv {
                    return Err(ApiError::expired(rv, inner.evicted_rv + 1));
                }
                let replay = inner
                    .history
                    .iter()
                    .filter(|e| e.rv > rv && e.type_key == key)
                    .cloned()
                    .collect();
                Ok(WatchStart {
                    objects: vec![],
                    replay,
                    rx,
                    rv: inner.rv,
                })
            }
        }
    }

    /// Creates an object given with its apiVersion and kind (namespace from its metadata,
    /// "default" when a namespaced object names none). Not counted as a request.
    pub fn create_object(&self, obj: Value) -> Result<Value, ApiError> {
        self.lock().create_object(obj, false)
    }

    /// Like [`Store::create_object`] but keeps the given `status` (for seeding tests), and
    /// replaces the object unconditionally if it exists.
    pub fn seed_object(&self, obj: Value) -> Result<Value, ApiError> {
        let mut inner = self.lock();
        let (rt, version, ns, name) = inner.locate(&obj)?;
        if inner.exists(&rt, &ns, &name) {
            let w = Write::internal();
            let main = inner.update(
                &rt,
                &version,
                &ns,
                &name,
                strip_rv(obj.clone()),
                Sub::Main,
                &w,
            )?;
            if rt.status_subresource {
                return inner.update(&rt, &version, &ns, &name, strip_rv(obj), Sub::Status, &w);
            }
            return Ok(main);
        }
        inner.create_object(obj, true)
    }

    /// The object of `kind` in `api_version`, rendered in that version.
    pub fn get_object(&self, api_version: &str, kind: &str, ns: &str, name: &str) -> Option<Value> {
        let inner = self.lock();
        let rt = inner.resolve_kind(api_version, kind)?;
        let ns = if rt.namespaced { ns } else { "" };
        let object = inner.get(&rt, ns, name).ok()?.value();
        inner.view(&rt, object, api_version).ok()
    }

    /// Objects of `kind` (in one namespace, or all when `ns` is None), in `api_version`.
    pub fn list_objects(&self, api_version: &str, kind: &str, ns: Option<&str>) -> Vec<Value> {
        let inner = self.lock();
        let Some(rt) = inner.resolve_kind(api_version, kind) else {
            return vec![];
        };
        inner
            .list(&rt, ns, &Filter::default())
            .into_iter()
            .filter_map(|o| inner.view(&rt, o.value(), api_version).ok())
            .collect()
    }

    /// Updates (Main) or replaces the status of (Status) an object given with apiVersion,
    /// kind, namespace and name, unconditionally unless it carries a resourceVersion.
    pub fn update_object(&self, obj: Value, sub: Sub) -> Result<Value, ApiError> {
        let mut inner = self.lock();
        let (rt, version, ns, name) = inner.locate(&obj)?;
        inner.update(&rt, &version, &ns, &name, obj, sub, &Write::internal())
    }

    /// Merge-patches an object (Main or Status) addressed by apiVersion, kind, namespace, name.
    pub fn merge_patch_object(
        &self,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
        patch: &Value,
        sub: Sub,
    ) -> Result<Value, ApiError> {
        let mut inner = self.lock();
        let rt = inner.resolve_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!("no kind {kind} in {api_version} is registered"))
        })?;
        let (_, version) = split_api_version(api_version);
        let ns = if rt.namespaced { ns } else { "" };
        let w = Write::internal();
        inner.patch(&rt, version, ns, name, PatchType::Merge, patch, sub, &w)
    }

    pub fn delete_object(
        &self,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        let mut inner = self.lock();
        let rt = inner.resolve_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!("no kind {kind} in {api_version} is registered"))
        })?;
        let ns = if rt.namespaced { ns } else { "" };
        inner.delete(&rt, ns, name, &DeleteOptions::default())
    }

    /// Every object, CRDs first and namespaces next, so loading them back in order works.
    pub fn snapshot(&self) -> Vec<Value> {
        let inner = self.lock();
        let mut keys: Vec<&str> = inner.objects.collections().map(|(k, _)| k).collect();
        keys.sort_by_key(|k| {
            let rank = match inner.types.get(*k) {
                Some(t) if t.is_crd() => 0,
                Some(t) if t.is_namespace() => 1,
                _ => 2,
            };
            (rank, *k)
        });
        keys.into_iter()
            .flat_map(|k| {
                inner
                    .objects
                    .collection(k)
                    .into_iter()
                    .flat_map(|c| c.values().map(|o| o.value()))
            })
            .collect()
    }

    /// Loads objects as saved by [`Store::snapshot`], keeping their metadata (uid,
    /// resourceVersion, timestamps). The global resourceVersion continues after the
    /// highest loaded one. Emits ADDED events. Returns how many objects were loaded.
    pub fn load(&self, objects: Vec<Value>) -> Result<usize, ApiError> {
        let mut inner = self.lock();
        let mut n = 0;
        for obj in objects {
            let (rt, _, ns, name) = inner.locate(&obj)?;
            if rt.is_crd() {
                let t = ResourceType::from_crd(&obj)?;
                inner.types.insert(t.key(), Arc::new(t));
            }
            let rv = meta_str(&obj, "resourceVersion")
                .parse::<u64>()
                .unwrap_or(0);
            inner.rv = inner.rv.max(rv);
            let uid = meta_str(&obj, "uid").to_string();
            if let Some(old) = inner.objects.get(&rt.key(), &(ns.clone(), name.clone())) {
                let old_uid = meta_str(&old.value(), "uid").to_string();
                inner.uids.remove(&old_uid);
            }
            inner.uids.insert(uid);
            let stored = inner.objects.insert(&rt.key(), (ns, name), &obj);
            inner.emit(&rt.key(), EventType::Added, stored, &obj, None);
            n += 1;
        }
        Ok(n)
    }
}

/// kube-apiserver's `IgnoreManagedFieldsTimestampsTransformer`: a write whose only
/// effect is a newer `time` on a managed fields entry (and the order that follows from
/// it) changes nothing. That happens when a request drops a value the server fills back
/// in (a default, a namespace conversion restores) inside a field the writer owns whole.
fn only_managed_times_differ(old: &Value, new: &Value) -> bool {
    // Compared in place: this runs on nearly every write, and copies of both objects
    // were a few percent of the server's time.
    fn same_except(a: &Map<String, Value>, b: &Map<String, Value>, skip: &str) -> bool {
        a.iter()
            .filter(|(k, _)| *k != skip)
            .eq(b.iter().filter(|(k, _)| *k != skip))
    }
    fn entries_without_time(meta: Option<&Map<String, Value>>) -> Vec<String> {
        let mut entries: Vec<String> = meta
            .and_then(|m| m.get("managedFields"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|entry| match entry.as_object() {
                Some(e) => {
                    let rest: BTreeMap<&String, &Value> =
                        e.iter().filter(|(k, _)| *k != "time").collect();
                    serde_json::to_string(&rest).unwrap_or_default()
                }
                None => entry.to_string(),
            })
            .collect();
        entries.sort();
        entries
    }
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return old == new;
    };
    let rest_equal = old
        .iter()
        .filter(|(k, _)| *k != "apiVersion" && *k != "metadata")
        .eq(new
            .iter()
            .filter(|(k, _)| *k != "apiVersion" && *k != "metadata"));
    if !rest_equal {
        return false;
    }
    let (old_meta, new_meta) = (old.get("metadata"), new.get("metadata"));
    let meta_equal = match (
        old_meta.and_then(Value::as_object),
        new_meta.and_then(Value::as_object),
    ) {
        (Some(a), Some(b)) => same_except(a, b, "managedFields"),
        _ => old_meta == new_meta,
    };
    meta_equal
        && entries_without_time(old_meta.and_then(Value::as_object))
            == entries_without_time(new_meta.and_then(Value::as_object))
}

fn strip_rv(mut obj: Value) -> Value {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    obj
}

fn set_meta(obj: &mut Value, field: &str, value: Value) {
    if let Some(m) = metadata_mut(obj) {
        m.insert(field.into(), value);
    }
}

fn finalizers(obj: &Value) -> usize {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

impl Inner {
    fn view(&self, rt: &ResourceType, object: Value, api_version: &str) -> Result<Value, ApiError> {
        let api_version_of = |group: &str, kind: &str| self.storage_api_version_of(group, kind);
        convert(
            self.converter.as_ref(),
            rt,
            object,
            api_version,
            &api_version_of,
        )
    }

    /// The apiVersion objects of `kind` in `group` are stored in: conversion writes
    /// references to other kinds in it.
    fn storage_api_version_of(&self, group: &str, kind: &str) -> Option<String> {
        self.types
            .values()
            .find(|t| t.group == group && t.kind == kind)
            .map(|t| t.api_version(&t.storage_version))
    }

    /// [`Inner::view`] of an object the caller keeps.
    fn view_ref(
        &self,
        rt: &ResourceType,
        object: &Value,
        api_version: &str,
    ) -> Result<Value, ApiError> {
        let api_version_of = |group: &str, kind: &str| self.storage_api_version_of(group, kind);
        convert_ref(
            self.converter.as_ref(),
            rt,
            object,
            api_version,
            &api_version_of,
        )
    }

    /// `object` in the version its kind is stored in, or None when it is in it already
    /// (the common case, where a copy would be the object itself).
    fn storage_form(&self, rt: &ResourceType, object: &Value) -> Result<Option<Value>, ApiError> {
        let storage = rt.api_version(&rt.storage_version);
        if object.get("apiVersion").and_then(Value::as_str) == Some(storage.as_str()) {
            return Ok(None);
        }
        self.view_ref(rt, object, &storage).map(Some)
    }

    /// The stored object in `version`, parsed once for the whole write.
    fn read_in(
        &self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        version: &str,
    ) -> Result<Read, ApiError> {
        let parsed = self.get(rt, ns, name)?.value();
        let api_version = rt.api_version(version);
        if parsed.get("apiVersion").and_then(Value::as_str) == Some(api_version.as_str()) {
            return Ok(Read {
                object: parsed,
                stored: None,
            });
        }
        Ok(Read {
            object: self.view_ref(rt, &parsed, &api_version)?,
            stored: Some(parsed),
        })
    }

    fn resolve_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceType>> {
        let (group, version) = split_api_version(api_version);
        self.types
            .values()
            .find(|t| t.group == group && t.kind == kind && t.serves(version))
            .cloned()
    }

    /// The resource, version, namespace and name an object given in full belongs to.
    fn locate(&self, obj: &Value) -> Result<(Arc<ResourceType>, String, String, String), ApiError> {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let rt = self.resolve_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!(
                "no kind \"{kind}\" is registered for version \"{api_version}\""
            ))
        })?;
        let ns = match meta_str(obj, "namespace") {
            _ if !rt.namespaced => String::new(),
            "" => "default".to_string(),
            ns => ns.to_string(),
        };
        let (_, version) = split_api_version(api_version);
        Ok((
            rt.clone(),
            version.to_string(),
            ns,
            meta_str(obj, "name").to_string(),
        ))
    }

    fn get(&self, rt: &ResourceType, ns: &str, name: &str) -> Result<&Arc<Stored>, ApiError> {
        self.objects
            .get(&rt.key(), &(ns.to_string(), name.to_string()))
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))
    }

    fn exists(&self, rt: &ResourceType, ns: &str, name: &str) -> bool {
        self.objects
            .contains(&rt.key(), &(ns.to_string(), name.to_string()))
    }

    fn list(&self, rt: &ResourceType, ns: Option<&str>, filter: &Filter) -> Vec<Arc<Stored>> {
        self.objects
            .candidates(&rt.key(), ns, &filter.labels)
            .filter(|o| o.matches(filter))
            .cloned()
            .collect()
    }

    /// Sends and records the change of `object`, whose stored form is `now` (and was
    /// `old` before a modification).
    fn emit(
        &mut self,
        type_key: &str,
        event_type: EventType,
        object: Arc<Stored>,
        now: &Value,
        old: Option<&Value>,
    ) {
        let old =
            old.map(|old| Stored::with_key(object.key().clone(), &self.selectable(type_key, old)));
        let selected = match self.selectable(type_key, now) {
            Cow::Owned(selected) => Some(Stored::with_key(object.key().clone(), &selected)),
            Cow::Borrowed(_) => None,
        };
        let event = Arc::new(Event {
            rv: self.rv,
            type_key: type_key.to_string(),
            event_type,
            object,
            old,
            selected,
        });
        self.history.push_back(event.clone());
        while self.history.len() > self.history_limit {
            if let Some(e) = self.history.pop_front() {
                self.evicted_rv = e.rv;
            }
        }
        // No receivers is fine: nobody watches.
        let _ = self.tx.send(event);
    }

    /// What selectors read of an object: its name, namespace and labels, and the whole
    /// object for the built-in kinds with field labels of their own. The history holds
    /// thousands of events, and the objects before a change were most of its memory.
    fn selectable<'a>(&self, type_key: &str, object: &'a Value) -> Cow<'a, Value> {
        if self
            .types
            .get(type_key)
            .is_none_or(|rt| !crate::selector::fields_of(&rt.group, &rt.kind).is_empty())
        {
            return Cow::Borrowed(object);
        }
        let Value::Object(map) = object else {
            return Cow::Borrowed(object);
        };
        let mut selected = serde_json::Map::new();
        if let Some(Value::Object(meta)) = map.get("metadata") {
            for field in ["name", "namespace", "labels"] {
                if let Some(v) = meta.get(field) {
                    selected.insert(field.to_string(), v.clone());
                }
            }
        }
        Cow::Owned(object_of([("metadata", Value::Object(selected))]))
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Checks the body's apiVersion and kind against the resource being written.
    fn check_type(rt: &ResourceType, version: &str, body: &mut Value) -> Result<(), ApiError> {
        let Some(map) = body.as_object_mut() else {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        };
        let expected = rt.api_version(version);
        match map.get("apiVersion").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("apiVersion".into(), Value::String(expected.clone()));
            }
            Some(av) => {
                let (g, v) = split_api_version(av);
                if g != rt.group || !rt.serves(v) {
                    return Err(ApiError::bad_request(format!(
                        "the API version in the data ({av}) does not match the expected API version ({expected})"
                    )));
                }
            }
        }
        match map.get("kind").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("kind".into(), Value::String(rt.kind.clone()));
            }
            Some(k) if k == rt.kind => {}
            Some(k) => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the data ({k}) does not match the expected kind ({})",
                    rt.kind
                )));
            }
        }
        if map.get("metadata").is_some_and(|m| !m.is_object()) {
            return Err(ApiError::bad_request("metadata must be an object"));
        }
        if rt.group.is_empty() && rt.kind == "Secret" {
            fold_string_data(map)?;
        }
        Ok(())
    }

    fn create_object(&mut self, obj: Value, keep_status: bool) -> Result<Value, ApiError> {
        let (rt, version, ns, _) = self.locate(&obj)?;
        let w = Write::internal();
        self.create(&rt, &version, &ns, obj, keep_status, &w, Track::Update)
    }

    /// The schema objects of `rt` merge by in `version` (see [`fields::schema_of`]).
    fn schema_for(&mut self, rt: &ResourceType, version: &str) -> Arc<Schema> {
        let crd_name = format!("{}.{}", rt.plural, rt.group);
        let crd = self.objects.get(
            &type_key(crate::types::CRD_GROUP, crate::types::CRD_PLURAL),
            &(String::new(), crd_name),
        );
        let Some(crd) = crd.cloned() else {
            return Arc::new(Schema::unknown());
        };
        let key = (rt.key(), version.to_string());
        // Any write of the CRD stores a new `Stored`, so the same one means the same
        // schema (and the large CRD is parsed only when it changed).
        if let Some((read_from, schema)) = self.schemas.get(&key)
            && Arc::ptr_eq(read_from, &crd)
        {
            return schema.clone();
        }
        let schema = Arc::new(fields::schema_of(Some(&crd.value()), version));
        self.schemas.insert(key, (crd, schema.clone()));
        schema
    }

    #[allow(clippy::too_many_arguments)]
    fn create(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        mut body: Value,
        keep_status: bool,
        w: &Write,
        track: Track,
    ) -> Result<Value, ApiError> {
        Self::check_type(rt, version, &mut body)?;
        let body_ns = meta_str(&body, "namespace").to_string();
        if rt.namespaced {
            if !body_ns.is_empty() && body_ns != ns {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            let ns_type = type_key("", "namespaces");
            if !self
                .objects
                .contains(&ns_type, &(String::new(), ns.to_string()))
            {
                return Err(ApiError::namespace_not_found(ns));
            }
        }
        let name = server::name_to_create(&body, name_suffix, |name| self.exists(rt, ns, name))
            .ok_or_else(|| ApiError::invalid(&rt.group, &rt.kind, "", server::NAME_REQUIRED))?;
        // Named and placed before validation, so rules about the name (CEL on
        // `self.metadata.name`) see the one a generateName gave.
        let Some(meta) = metadata_mut(&mut body) else {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        };
        meta.insert("name".into(), Value::String(name.clone()));
        if rt.namespaced {
            meta.insert("namespace".into(), Value::String(ns.to_string()));
        } else {
            meta.remove("namespace");
        }
        crate::validation::on_create(rt, &name, &mut body, keep_status, w.field_validation)?;
        if self.exists(rt, ns, &name) {
            return Err(ApiError::already_exists(&rt.group, &rt.plural, &name));
        }
        // A dry run takes no resourceVersion: nothing is stored, nothing changes.
        let rv = if w.dry_run { 0 } else { self.next_rv() };
        let Some(meta) = metadata_mut(&mut body) else {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        };
        let uid = uuid_v4();
        meta.insert("uid".into(), Value::String(uid.clone()));
        meta.insert("creationTimestamp".into(), Value::String(time::now()));
        if w.dry_run {
            meta.remove("resourceVersion");
        } else {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        if rt.tracks_generation() {
            meta.insert("generation".into(), Value::from(1));
        } else {
            meta.remove("generation");
        }
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        if !keep_status {
            server::keep_status(&mut body, None, rt.status_subresource);
        }
        if rt.is_namespace() {
            body["status"] = serde_json::json!({"phase": "Active"});
        }
        // kube-apiserver's defaulting of a Secret: no type means Opaque.
        if rt.group.is_empty()
            && rt.kind == "Secret"
            && body
                .get("type")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            body["type"] = Value::String("Opaque".into());
        }
        if track == Track::Update {
            let schema = self.schema_for(rt, version);
            let api_version = rt.api_version(version);
            fields::record_update(
                rt,
                &schema,
                &api_version,
                None,
                &mut body,
                Sub::Main,
                &w.manager,
            );
        }
        let crd_type = if rt.is_crd() {
            Some(self.accept_crd(&mut body, None)?)
        } else {
            None
        };
        let storage = self.storage_form(rt, &body)?;
        if w.dry_run {
            return Ok(body);
        }
        if let Some(t) = crd_type {
            self.types.insert(t.key(), Arc::new(t));
        }
        self.uids.insert(uid);
        let shared = self.objects.insert(
            &rt.key(),
            (ns.to_string(), name),
            storage.as_ref().unwrap_or(&body),
        );
        self.emit(
            &rt.key(),
            EventType::Added,
            shared,
            storage.as_ref().unwrap_or(&body),
            None,
        );
        // Answered as a read in the request's version would give it.
        self.answer(rt, storage, body)
    }

    /// What a write answers: the stored object in the version of the write (`written`),
    /// which is `written` itself when it is what was stored.
    fn answer(
        &self,
        rt: &ResourceType,
        storage: Option<Value>,
        written: Value,
    ) -> Result<Value, ApiError> {
        match storage {
            None => Ok(written),
            Some(storage) => self.view(rt, storage, written.api_version()),
        }
    }

    /// Validates a CRD and sets its status; the kind it defines must not collide with
    /// another resource (and an update must not move it).
    fn accept_crd(
        &self,
        crd: &mut Value,
        previous: Option<&Value>,
    ) -> Result<ResourceType, ApiError> {
        let t = ResourceType::from_crd(crd)?;
        let name = meta_str(crd, "name").to_string();
        let same_key = previous
            .and_then(|p| ResourceType::from_crd(p).ok())
            .map(|p| p.key());
        if let Some(existing) = self.types.get(&t.key())
            && same_key.as_deref() != Some(&t.key())
            && !existing.is_crd()
        {
            return Err(ApiError::invalid(
                crate::types::CRD_GROUP,
                "CustomResourceDefinition",
                &name,
                "spec.names.plural: Invalid value: already served by a built-in resource",
            ));
        }
        if let Some(k) = same_key
            && k != t.key()
        {
            return Err(ApiError::invalid(
                crate::types::CRD_GROUP,
                "CustomResourceDefinition",
                &name,
                "spec.group, spec.names.plural: Invalid value: field is immutable",
            ));
        }
        crd["status"] = t.crd_status(crd);
        Ok(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn update(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        mut body: Value,
        sub: Sub,
        w: &Write,
    ) -> Result<Value, ApiError> {
        Self::check_type(rt, version, &mut body)?;
        let read = self.read_in(rt, ns, name, version)?;
        self.update_read(rt, ns, name, read, body, sub, w)
    }

    /// [`Inner::update`] of an object read already, with a body whose type is checked.
    #[allow(clippy::too_many_arguments)]
    fn update_read(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        read: Read,
        body: Value,
        sub: Sub,
        w: &Write,
    ) -> Result<Value, ApiError> {
        let body_name = meta_str(&body, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_ns = meta_str(&body, "namespace");
        if rt.namespaced && !body_ns.is_empty() && body_ns != ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if !server::resource_version_holds(&body, &read.object) {
            return Err(ApiError::conflict(&rt.group, &rt.plural, name));
        }
        let new = server::to_store(&read.object, body, sub, rt.status_subresource);
        self.commit(rt, ns, name, read, new, sub, w, Track::Update)
    }

    /// Stores an updated object: managed fields, no-op detection, generation,
    /// resourceVersion, events, and removal once a deleting object's last finalizer is
    /// gone. A dry run stops before anything is stored.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        read: Read,
        mut new: Value,
        sub: Sub,
        w: &Write,
        track: Track,
    ) -> Result<Value, ApiError> {
        let Read {
            object: mut stored,
            stored: stored_storage,
        } = read;
        // Every write of a custom resource (update, patch, apply) is pruned, defaulted
        // and validated against its CRD's schema first, so pruned fields are neither
        // stored nor owned. Pruning drops an empty `managedFields` as Go's omitempty
        // does, but `[]` in a request means "reset them": kept aside for the record
        // (taken out rather than copied: nothing in validation reads them, and they
        // are half of a typical object).
        let requested_managed = new
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .and_then(|meta| meta.remove("managedFields"));
        crate::validation::on_update(rt, name, &mut new, &stored, sub, w.field_validation)?;
        if let (Some(requested), Some(meta)) = (
            requested_managed,
            new.get_mut("metadata").and_then(Value::as_object_mut),
        ) {
            meta.insert("managedFields".into(), requested);
        }
        if track == Track::Update {
            let api_version = new
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let (_, version) = split_api_version(&api_version);
            let schema = self.schema_for(rt, version);
            fields::record_update(
                rt,
                &schema,
                &api_version,
                Some(&mut stored),
                &mut new,
                sub,
                &w.manager,
            );
        }
        let crd_type = if rt.is_crd() {
            Some(self.accept_crd(&mut new, Some(&stored))?)
        } else {
            None
        };
        // Converted before anything is stored, so a conversion failure changes nothing.
        // Whether anything changed (and the generation) is judged in the storage version,
        // as kube-apiserver judges it: a version that spells a value differently (a
        // duration, a defaulted namespace) does not make a write of it a change.
        let mut storage = self.storage_form(rt, &new)?;
        let stored_form = stored_storage.as_ref().unwrap_or(&stored);
        let storage_form = storage.as_ref().unwrap_or(&new);
        if equal_except(stored_form, storage_form, &["apiVersion"])
            || only_managed_times_differ(stored_form, storage_form)
        {
            return Ok(stored);
        }
        if let Some(generation) =
            server::bumped_generation(stored_form, storage_form, sub, rt.status_subresource)
                .filter(|_| rt.tracks_generation())
        {
            set_meta(&mut new, "generation", Value::from(generation));
            if let Some(storage) = &mut storage {
                set_meta(storage, "generation", Value::from(generation));
            }
        }
        if w.dry_run {
            return Ok(new);
        }
        let rv = self.next_rv();
        set_meta(&mut new, "resourceVersion", Value::String(rv.to_string()));
        if let Some(storage) = &mut storage {
            set_meta(storage, "resourceVersion", Value::String(rv.to_string()));
        }
        let key = (ns.to_string(), name.to_string());
        let stored_form = stored_storage.as_ref().unwrap_or(&stored);
        if new.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&new) == 0 {
            if self.objects.contains(&rt.key(), &key) {
                self.objects
                    .insert(&rt.key(), key.clone(), storage.as_ref().unwrap_or(&new));
            }
            let removed = self.remove(rt, &key, false, false);
            let api_version = new.api_version().to_string();
            return self.view(rt, removed, &api_version);
        }
        if let Some(t) = crd_type {
            self.types.insert(t.key(), Arc::new(t));
        }
        let shared = self.objects.replace(
            &rt.key(),
            key,
            storage.as_ref().unwrap_or(&new),
            stored_form,
        );
        self.emit(
            &rt.key(),
            EventType::Modified,
            shared,
            storage.as_ref().unwrap_or(&new),
            Some(stored_form),
        );
        // Answered as a read in the request's version would give it.
        self.answer(rt, storage, new)
    }

    #[allow(clippy::too_many_arguments)]
    fn patch(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
        sub: Sub,
        w: &Write,
    ) -> Result<Value, ApiError> {
        let read = self.read_in(rt, ns, name, version)?;
        let mut doc = read.object.clone();
        crate::patch::apply(&mut doc, patch_type, patch)?;
        // A resourceVersion in the patch is a precondition; the stored one is not.
        if !server::resource_version_holds(&doc, &read.object) {
            return Err(ApiError::conflict(&rt.group, &rt.plural, name));
        }
        // Updated over what was read here: under the lock it is what an update would
        // read again.
        Self::check_type(rt, version, &mut doc)?;
        self.update_read(rt, ns, name, read, doc, sub, w)
    }

    /// Server-side apply: see [`Store::apply`].
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        mut config: Value,
        force: bool,
        sub: Sub,
        w: &Write,
    ) -> Result<Value, ApiError> {
        let Some(map) = config.as_object_mut() else {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        };
        if let Some(kind) = map.get("kind").and_then(Value::as_str)
            && kind != rt.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                rt.kind
            )));
        }
        match map.get("metadata") {
            None | Some(Value::Object(_)) => {}
            Some(_) => return Err(ApiError::bad_request("metadata must be an object")),
        }
        let body_name = meta_str(&config, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_ns = meta_str(&config, "namespace");
        if rt.namespaced && !body_ns.is_empty() && body_ns != ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let read = match self.exists(rt, ns, name) {
            true => Some(self.read_in(rt, ns, name, version)?),
            false => None,
        };
        let stored = read.as_ref().map(|r| &r.object);
        if let Some(why) = server::uid_mismatch(&config, stored) {
            return Err(ApiError::conflict_because(
                &rt.group, &rt.plural, name, &why,
            ));
        }
        if let Some(stored) = stored
            && !server::resource_version_holds(&config, stored)
        {
            return Err(ApiError::conflict(&rt.group, &rt.plural, name));
        }
        if stored.is_none() && sub != Sub::Main {
            return Err(ApiError::not_found(&rt.group, &rt.plural, name));
        }
        let api_version = rt.api_version(version);
        let schema = self.schema_for(rt, version);
        let ignored = fields::reset_fields(rt, sub);
        let now = time::now();
        let applied = topograph_ssa::apply_with(
            stored,
            &config,
            &topograph_ssa::ApplyOptions {
                manager: &w.manager,
                api_version: &api_version,
                force,
                schema: &schema,
                now: &now,
                subresource: fields::subresource(sub),
                ignored: ignored.as_ref(),
            },
        )
        .map_err(fields::apply_error)?;
        let mut object = applied.object;
        Self::check_type(rt, version, &mut object)?;
        let Some(read) = read else {
            // Apply is an upsert: a missing object is created from the configuration.
            if let Some(meta) = metadata_mut(&mut object) {
                meta.insert("name".into(), Value::String(name.to_string()));
                meta.remove("resourceVersion");
            }
            return self.create(rt, version, ns, object, false, w, Track::Given);
        };
        if !applied.changed {
            return Ok(read.object);
        }
        let mut new = server::to_store(&read.object, object, sub, rt.status_subresource);
        // A status write keeps the stored metadata, but the apply's ownership is new.
        topograph_ssa::write_managed_fields(&mut new, &applied.managed);
        self.commit(rt, ns, name, read, new, sub, w, Track::Given)
    }

    fn delete(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        let stored = self.get(rt, ns, name)?.value();
        if let Some(uid) = &opts.precondition_uid
            && uid != meta_str(&stored, "uid")
        {
            let why = format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta_str(&stored, "uid")
            );
            return Err(ApiError::conflict_because(
                &rt.group, &rt.plural, name, &why,
            ));
        }
        if let Some(rv) = &opts.precondition_rv
            && rv != meta_str(&stored, "resourceVersion")
        {
            let why = format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                meta_str(&stored, "resourceVersion")
            );
            return Err(ApiError::conflict_because(
                &rt.group, &rt.plural, name, &why,
            ));
        }
        let key = (ns.to_string(), name.to_string());
        Ok(self.delete_key(rt, &key, opts.orphan))
    }

    /// Deletion after preconditions: finalizers hold the object with a deletionTimestamp,
    /// otherwise it is removed now.
    fn delete_key(&mut self, rt: &ResourceType, key: &ObjKey, orphan: bool) -> Value {
        let Some(stored) = self.objects.get(&rt.key(), key).map(|o| o.value()) else {
            return Value::Null;
        };
        if finalizers(&stored) == 0 {
            return self.remove(rt, key, orphan, true);
        }
        if stored.pointer("/metadata/deletionTimestamp").is_some() {
            return stored;
        }
        let mut new = stored.clone();
        let rv = self.next_rv();
        set_meta(&mut new, "deletionTimestamp", Value::String(time::now()));
        set_meta(&mut new, "deletionGracePeriodSeconds", Value::from(0));
        if rt.tracks_generation() {
            let generation = stored
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            set_meta(&mut new, "generation", Value::from(generation + 1));
        }
        set_meta(&mut new, "resourceVersion", Value::String(rv.to_string()));
        let shared = self.objects.replace(&rt.key(), key.clone(), &new, &stored);
        self.emit(&rt.key(), EventType::Modified, shared, &new, Some(&stored));
        new
    }

    /// Removes an object now and cascades: a namespace's contents, a CRD's objects, and
    /// (unless orphaning) dependents through owner references.
    fn remove(&mut self, rt: &ResourceType, key: &ObjKey, orphan: bool, bump_rv: bool) -> Value {
        let Some(removed) = self.objects.remove(&rt.key(), key) else {
            return Value::Null;
        };
        let mut obj = removed.value();
        let removed = if bump_rv {
            let rv = self.next_rv();
            set_meta(&mut obj, "resourceVersion", Value::String(rv.to_string()));
            Arc::new(Stored::with_key(removed.key().clone(), &obj))
        } else {
            removed
        };
        let uid = meta_str(&obj, "uid").to_string();
        self.uids.remove(&uid);
        self.emit(&rt.key(), EventType::Deleted, removed, &obj, None);
        if rt.is_namespace() {
            let ns = meta_str(&obj, "name").to_string();
            let types: Vec<Arc<ResourceType>> = self
                .types
                .values()
                .filter(|t| t.namespaced)
                .cloned()
                .collect();
            for t in types {
                let keys: Vec<ObjKey> = self
                    .objects
                    .collection(&t.key())
                    .map(|c| {
                        c.keys()
                            .filter(|k| k.0 == ns)
                            .map(|k| (**k).clone())
                            .collect()
                    })
                    .unwrap_or_default();
                for k in keys {
                    self.delete_key(&t, &k, false);
                }
            }
        }
        if rt.is_crd()
            && let Ok(t) = ResourceType::from_crd(&obj)
        {
            let keys: Vec<ObjKey> = self
                .objects
                .collection(&t.key())
                .map(|c| c.keys().map(|k| (**k).clone()).collect())
                .unwrap_or_default();
            for k in keys {
                self.remove(&t, &k, false, true);
            }
            self.types.remove(&t.key());
            self.objects.remove_collection(&t.key());
        }
        if !orphan {
            crate::gc::collect(self, &uid);
        }
        obj
    }
}

/// An object owned by another: its resource, key, and text with its parse.
pub(crate) type Dependent = (Arc<ResourceType>, ObjKey, (Arc<Stored>, Value));

/// What the garbage collector needs from the store, kept here so `Inner` stays private.
pub(crate) trait GcStore {
    /// (resource, key, object as stored and parsed) of every object with an owner
    /// reference to `uid`.
    fn dependents_of(&self, uid: &str) -> Vec<Dependent>;
    fn uid_exists(&self, uid: &str) -> bool;
    fn delete_dependent(&mut self, rt: &ResourceType, key: &ObjKey);
    /// Drops the reference to `uid`; `read` is the object as `dependents_of` read it,
    /// parsed again only if it changed since.
    fn drop_owner_ref(
        &mut self,
        rt: &ResourceType,
        key: &ObjKey,
        uid: &str,
        read: (Arc<Stored>, Value),
    );
}

impl GcStore for Inner {
    fn dependents_of(&self, uid: &str) -> Vec<Dependent> {
        self.objects
            .owned_by(uid)
            .into_iter()
            .filter_map(|(tk, key)| {
                let rt = self.types.get(&tk)?.clone();
                let stored = self.objects.get(&tk, &key)?.clone();
                let obj = stored.value();
                Some((rt, key, (stored, obj)))
            })
            .collect()
    }

    fn uid_exists(&self, uid: &str) -> bool {
        self.uids.contains(uid)
    }

    fn delete_dependent(&mut self, rt: &ResourceType, key: &ObjKey) {
        self.delete_key(rt, key, false);
    }

    fn drop_owner_ref(
        &mut self,
        rt: &ResourceType,
        key: &ObjKey,
        uid: &str,
        read: (Arc<Stored>, Value),
    ) {
        let stored = match self.objects.get(&rt.key(), key) {
            None => return,
            Some(now) if Arc::ptr_eq(now, &read.0) => read.1,
            Some(now) => now.value(),
        };
        let mut new = stored.clone();
        if let Some(refs) = new
            .pointer_mut("/metadata/ownerReferences")
            .and_then(Value::as_array_mut)
        {
            refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid));
        }
        let w = Write::internal();
        let read = Read {
            object: stored,
            stored: None,
        };
        let _ = self.commit(rt, &key.0, &key.1, read, new, Sub::Main, &w, Track::Update);
    }
}

/// A Secret's write-only `stringData` is merged into `data` (base64, winning over a
/// `data` key of the same name) and dropped, as the Kubernetes API server does.
fn fold_string_data(secret: &mut serde_json::Map<String, Value>) -> Result<(), ApiError> {
    use base64::Engine as _;
    let Some(strings) = secret.remove("stringData") else {
        return Ok(());
    };
    let Value::Object(strings) = strings else {
        return Err(ApiError::bad_request("stringData must be an object"));
    };
    let data = secret
        .entry("data")
        .or_insert_with(|| Value::Object(Default::default()));
    if data.is_null() {
        *data = Value::Object(Default::default());
    }
    let Some(data) = data.as_object_mut() else {
        return Err(ApiError::bad_request("data must be an object"));
    };
    for (key, value) in strings {
        let Some(text) = value.as_str() else {
            return Err(ApiError::bad_request(format!(
                "stringData.{key} must be a string"
            )));
        };
        data.insert(
            key,
            Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn foo_crd(status: bool) -> Value {
        let mut version = json!({"name": "v1", "served": true, "storage": true});
        if status {
            version["subresources"] = json!({"status": {}});
        }
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "foos", "kind": "Foo"},
                "versions": [version, {"name": "v2", "served": true, "storage": false}]}})
    }

    fn setup(status: bool) -> (Store, Arc<ResourceType>) {
        let s = Store::new(100);
        s.create_object(foo_crd(status)).unwrap();
        let rt = s.resolve("example.com", "foos").unwrap();
        s.create_object(json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": {"a": 1}, "status": {"s": 1}}))
            .unwrap();
        (s, rt)
    }

    fn rv(o: &Value) -> u64 {
        meta_str(o, "resourceVersion").parse().unwrap()
    }

    fn generation(o: &Value) -> i64 {
        o["metadata"]["generation"].as_i64().unwrap()
    }

    fn events_after(s: &Store, rt: &ResourceType, rv: u64) -> Vec<&'static str> {
        s.watch_start(rt, None, Some(rv))
            .unwrap()
            .replay
            .iter()
            .map(|e| e.event_type.as_str())
            .collect()
    }

    #[test]
    fn events_carry_what_selectors_read_of_the_object_after_the_change() {
        let (s, rt) = setup(true);
        let created = s.get(&rt, "default", "f").unwrap();
        let patched = s
            .patch(
                &rt,
                "v1",
                "default",
                "f",
                PatchType::Merge,
                &json!({"metadata": {"labels": {"app": "web"}}, "spec": {"a": 2}}),
                Sub::Main,
            )
            .unwrap();
        s.delete(&rt, "default", "f", &DeleteOptions::default())
            .unwrap();
        let start = s.watch_start(&rt, None, Some(rv(&created))).unwrap();
        let [modified, deleted] = &start.replay[..] else {
            panic!("two events after the create: {}", start.replay.len());
        };
        let labelled =
            json!({"metadata": {"name": "f", "namespace": "default", "labels": {"app": "web"}}});
        for event in [modified, deleted] {
            // Name, namespace and labels only, and the same answer as the whole object.
            assert_eq!(event.selectable().value(), labelled);
            for selector in ["app=web", "app!=web", "app", "!app", "app in (db)"] {
                let filter = Filter {
                    labels: crate::selector::LabelSelector::parse(selector).unwrap(),
                    ..Default::default()
                };
                assert_eq!(
                    event.selectable().matches(&filter),
                    event.object.matches(&filter),
                    "{selector}"
                );
            }
        }
        assert_eq!(modified.object.value()["spec"], patched["spec"]);
        let before = modified.old.as_ref().unwrap().value();
        assert_eq!(before["metadata"].get("labels"), None);
    }

    #[test]
    fn writes_follow_generation_and_resource_version_rules() {
        let (s, rt) = setup(true);
        let created = s.get(&rt, "default", "f").unwrap();
        assert_eq!(generation(&created), 1);
        assert!(
            created.get("status").is_none(),
            "create ignores status with a status subresource"
        );

        let mut spec = created.clone();
        spec["spec"]["a"] = json!(2);
        spec["status"] = json!({"s": 9});
        let updated = s
            .update(&rt, "v1", "default", "f", spec, Sub::Main)
            .unwrap();
        assert_eq!((generation(&updated), rv(&updated)), (2, rv(&created) + 1));
        assert!(updated.get("status").is_none(), "main writes ignore status");

        let mut labels = updated.clone();
        labels["metadata"]["labels"] = json!({"x": "y"});
        let labelled = s
            .update(&rt, "v1", "default", "f", labels, Sub::Main)
            .unwrap();
        assert_eq!(generation(&labelled), 2, "metadata does not count");

        let mut status = labelled.clone();
        status["status"] = json!({"s": 2});
        status["spec"]["a"] = json!(100);
        let with_status = s
            .update(&rt, "v1", "default", "f", status, Sub::Status)
            .unwrap();
        assert_eq!(with_status["status"], json!({"s": 2}));
        assert_eq!(with_status["spec"]["a"], 2, "status writes ignore the rest");
        assert_eq!(generation(&with_status), 2);
        assert_eq!(rv(&with_status), rv(&labelled) + 1);

        // A no-op: same object through another version, no resourceVersion, no event.
        let mut same = with_status.clone();
        same["apiVersion"] = json!("example.com/v2");
        same["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        let unchanged = s
            .update(&rt, "v2", "default", "f", same, Sub::Main)
            .unwrap();
        assert_eq!(rv(&unchanged), rv(&with_status));
        assert_eq!(s.current_rv(), rv(&with_status));
        assert!(events_after(&s, &rt, rv(&with_status)).is_empty());

        let mut stale = with_status.clone();
        stale["metadata"]["resourceVersion"] = json!(rv(&created).to_string());
        stale["spec"]["a"] = json!(3);
        assert_eq!(
            s.update(&rt, "v1", "default", "f", stale, Sub::Main)
                .unwrap_err()
                .reason,
            "Conflict"
        );
        let stale_patch = json!({"metadata": {"resourceVersion": "1"}, "spec": {"a": 4}});
        assert_eq!(
            s.patch(
                &rt,
                "v1",
                "default",
                "f",
                PatchType::Merge,
                &stale_patch,
                Sub::Main
            )
            .unwrap_err()
            .code,
            409
        );
    }

    #[test]
    fn without_a_status_subresource_status_is_part_of_the_object() {
        let (s, rt) = setup(false);
        let created = s.get(&rt, "default", "f").unwrap();
        assert_eq!(created["status"], json!({"s": 1}));
        let patched = s
            .patch(
                &rt,
                "v1",
                "default",
                "f",
                PatchType::Merge,
                &json!({"status": {"s": 2}}),
                Sub::Main,
            )
            .unwrap();
        assert_eq!(
            (patched["status"].clone(), generation(&patched)),
            (json!({"s": 2}), 2)
        );
    }

    #[test]
    fn finalizers_hold_objects_until_removed() {
        let (s, rt) = setup(true);
        let start = s.current_rv();
        s.patch(
            &rt,
            "v1",
            "default",
            "f",
            PatchType::Merge,
            &json!({"metadata": {"finalizers": ["a/b"]}}),
            Sub::Main,
        )
        .unwrap();
        let deleting = s
            .delete(&rt, "default", "f", &DeleteOptions::default())
            .unwrap();
        assert!(deleting["metadata"]["deletionTimestamp"].is_string());
        assert_eq!(deleting["metadata"]["deletionGracePeriodSeconds"], 0);
        let again = s
            .delete(&rt, "default", "f", &DeleteOptions::default())
            .unwrap();
        assert_eq!(rv(&again), rv(&deleting), "deleting twice changes nothing");
        s.patch(
            &rt,
            "v1",
            "default",
            "f",
            PatchType::Merge,
            &json!({"metadata": {"finalizers": []}}),
            Sub::Main,
        )
        .unwrap();
        assert_eq!(s.get(&rt, "default", "f").unwrap_err().code, 404);
        assert_eq!(
            events_after(&s, &rt, start),
            vec!["MODIFIED", "MODIFIED", "DELETED"]
        );
    }

    #[test]
    fn secret_string_data_is_folded_into_data_on_every_write() {
        let s = Store::new(100);
        let created = s
            .create_object(json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "k", "namespace": "default"},
                "data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "hi", "c": ""}}))
            .unwrap();
        assert_eq!(created["data"], json!({"a": "eA==", "b": "aGk=", "c": ""}));
        assert!(created.get("stringData").is_none());
        let mut changed = created.clone();
        changed["stringData"] = json!({"a": "kubeconfig"});
        let updated = s.update_object(changed, Sub::Main).unwrap();
        assert_eq!(updated["data"]["a"], "a3ViZWNvbmZpZw==");
        assert!(updated.get("stringData").is_none());
        let bad = s.create_object(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "j", "namespace": "default"}, "stringData": {"a": 1}}));
        assert_eq!(bad.unwrap_err().message, "stringData.a must be a string");
    }

    #[test]
    fn deleting_a_namespace_or_crd_removes_what_it_holds() {
        let (s, rt) = setup(true);
        s.create_object(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}),
        )
        .unwrap();
        s.create_object(json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "g", "namespace": "ns1"}})).unwrap();
        s.create_object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns1"}})).unwrap();
        s.delete_object("v1", "Namespace", "", "ns1").unwrap();
        assert!(s.get_object("example.com/v1", "Foo", "ns1", "g").is_none());
        assert!(s.get_object("v1", "ConfigMap", "ns1", "c").is_none());
        assert!(s.get(&rt, "default", "f").is_ok());
        let created = s.create_object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns1"}}));
        assert_eq!(created.unwrap_err().message, "namespaces \"ns1\" not found");

        s.delete_object(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "",
            "foos.example.com",
        )
        .unwrap();
        assert!(s.resolve("example.com", "foos").is_none());
        assert!(s.list_objects("example.com/v1", "Foo", None).is_empty());
    }

    #[test]
    fn a_write_that_only_moves_managed_fields_times_changes_nothing() {
        let entry = |manager: &str, time: &str| {
            serde_json::json!({"manager": manager, "operation": "Update", "time": time,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:ref": {}}}})
        };
        let old = serde_json::json!({"apiVersion": "x/v1beta2", "metadata": {"name": "a",
            "managedFields": [entry("a", "t1"), entry("b", "t2")]}, "spec": {"ref": {"name": "n"}}});
        let mut new = old.clone();
        new["apiVersion"] = "x/v1beta1".into();
        new["metadata"]["managedFields"] = serde_json::json!([entry("b", "t2"), entry("a", "t3")]);
        assert!(only_managed_times_differ(&old, &new));
        new["spec"]["ref"]["name"] = "m".into();
        assert!(!only_managed_times_differ(&old, &new));
        let mut owned = old.clone();
        owned["metadata"]["managedFields"][0]["fieldsV1"] = serde_json::json!({"f:spec": {}});
        assert!(!only_managed_times_differ(&old, &owned));
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = serde_json::json!({"a": "b"});
        assert!(!only_managed_times_differ(&old, &labelled));
        let mut fewer = old.clone();
        fewer["metadata"]["managedFields"] = serde_json::json!([entry("a", "t9")]);
        assert!(!only_managed_times_differ(&old, &fewer));
        let mut without_spec = old.clone();
        without_spec.as_object_mut().map(|o| o.remove("spec"));
        assert!(!only_managed_times_differ(&old, &without_spec));
        assert!(only_managed_times_differ(&without_spec, &without_spec));
    }

    #[test]
    fn generate_name_and_conflicts_on_create() {
        let (s, rt) = setup(true);
        let made = s
            .create(
                &rt,
                "v1",
                "default",
                json!({"metadata": {"generateName": "f-"}}),
            )
            .unwrap();
        let name = meta_str(&made, "name");
        assert!(name.starts_with("f-") && name.len() == 7, "{name}");
        assert_eq!(made["apiVersion"], "example.com/v1");
        assert_eq!(made["kind"], "Foo");
        let dup = s
            .create(&rt, "v1", "default", json!({"metadata": {"name": "f"}}))
            .unwrap_err();
        assert_eq!(
            (dup.code, dup.message.as_str()),
            (409, "foos.example.com \"f\" already exists")
        );
        let unnamed = s
            .create(&rt, "v1", "default", json!({"metadata": {}}))
            .unwrap_err();
        assert_eq!(unnamed.code, 422);
        let wrong_kind = s
            .create(
                &rt,
                "v1",
                "default",
                json!({"kind": "Bar", "metadata": {"name": "x"}}),
            )
            .unwrap_err();
        assert_eq!(wrong_kind.code, 400);
    }
}
