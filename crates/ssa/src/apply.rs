//! Server-side apply and the ownership bookkeeping of every other write, as
//! kube-apiserver does them (structured-merge-diff's `merge.Updater` wrapped in
//! apimachinery's managed-fields managers).
//!
//! An apply merges the applied configuration into the live object, then *prunes*:
//! a field this manager applied last time and leaves out now is removed, unless some
//! manager (any entry, `Update` ones too) still owns it. It then compares live with
//! the result: a field another entry owns that the apply adds or changes is a
//! conflict, or with `force` moves to the applier; a field the apply removes leaves
//! every entry. The applier's entry becomes exactly the fields of its configuration.
//!
//! An apply of exactly the fields its manager already owns, every value already live
//! (what a converged reconcile sends and predicts), would give live back: it skips the
//! merge, the prune and the compare (`typed::holds` decides), and only its
//! ownership is worked out.
//!
//! Times follow kube-apiserver: an `Apply` entry's time changes only when the object
//! changes (applying an unchanged configuration keeps the old time, and a manager
//! that only starts sharing values gets an entry without one); an `Update` entry's
//! time changes when the write took fields.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::conflict::{Conflict, Conflicts};
use crate::fieldset::{FieldSet, Path};
use crate::managed::{
    FIELDS_V1, Identity, ManagedFieldsEntry, ManagedFieldsError, Operation, cmp_identity_text,
    normalize_time, read_managed_fields, same_ownership, sort_entries, write_managed_fields,
};
use crate::schema::{Schema, Type};
use crate::typed::{check_applied, compare, ensure_named, field_set, holds, merge, remove};
use crate::value;

/// Fields kube-apiserver never records in a manager's entry: the type, the
/// identity and bookkeeping of the object, and `metadata` itself (its fields are
/// recorded one by one).
pub fn never_managed() -> FieldSet {
    NEVER_MANAGED.clone()
}

static NEVER_MANAGED: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(|| {
    let meta = |name: &str| Path::fields(&["metadata", name]);
    FieldSet::from_paths([
        Path::fields(&["apiVersion"]),
        Path::fields(&["kind"]),
        Path::fields(&["metadata"]),
        meta("name"),
        meta("namespace"),
        meta("creationTimestamp"),
        meta("selfLink"),
        meta("uid"),
        meta("clusterName"),
        meta("generation"),
        meta("managedFields"),
        meta("resourceVersion"),
    ])
});

/// The fields a write to the main resource of a kind with a status subresource does
/// not set (kube-apiserver resets `.status` there): pass as `ignored`.
pub fn reset_fields_main_resource() -> FieldSet {
    FieldSet::from_paths([Path::fields(&["status"])])
}

/// The fields a write to the status subresource does not set (`.spec`).
pub fn reset_fields_status_subresource() -> FieldSet {
    FieldSet::from_paths([Path::fields(&["spec"])])
}

/// The fields an applied configuration sets, as its manager's `Apply` entry records
/// them: leaves, atomic lists and maps, map-list items (`k:` with `.` and their key
/// fields), set items (`v:`), without [`never_managed`] fields. `status` is
/// included; leave it out with [`ApplyOptions::ignored`] where kube-apiserver resets it.
pub fn fields_of(object: &Value, schema: &Schema) -> FieldSet {
    field_set(object, schema.root()).difference(&NEVER_MANAGED)
}

/// The result of an apply.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The object to store, with `metadata.managedFields` written.
    pub object: Value,
    /// Its managed fields entries, in kube-apiserver's order.
    pub managed: Vec<ManagedFieldsEntry>,
    /// Whether the object or its ownership (times aside) differs from live.
    pub changed: bool,
    /// Fields other managers owned that a forced apply took from them (empty without
    /// force, where they are a [`ApplyError::Conflicts`] instead).
    pub overridden: Conflicts,
}

/// Why an apply did not happen.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ApplyError {
    /// Fields owned by other managers (409 Conflict).
    #[error("{0}")]
    Conflicts(Conflicts),
    /// The request is wrong (400 Bad Request), kube-apiserver's text.
    #[error("{0}")]
    BadRequest(String),
    /// The configuration does not fit its schema: a set or map-list item without
    /// its key, or twice (kube-apiserver answers 500 with this text).
    #[error("{0}")]
    Invalid(String),
    /// The live object's managed fields cannot be read (500, as kube-apiserver).
    #[error("failed to decode managed fields: {0}")]
    ManagedFields(ManagedFieldsError),
}

impl ApplyError {
    /// The HTTP status code kube-apiserver answers with.
    pub fn code(&self) -> u16 {
        match self {
            ApplyError::Conflicts(_) => Conflicts::CODE,
            ApplyError::BadRequest(_) => 400,
            ApplyError::Invalid(_) | ApplyError::ManagedFields(_) => 500,
        }
    }
}

/// Everything an apply needs besides the objects.
#[derive(Clone, Copy, Debug)]
pub struct ApplyOptions<'a> {
    /// The field manager.
    pub manager: &'a str,
    /// The apiVersion the configuration is written in; the configuration's own
    /// `apiVersion` must be this.
    pub api_version: &'a str,
    /// Take fields other managers own instead of failing.
    pub force: bool,
    /// The object's type.
    pub schema: &'a Schema,
    /// The time of the write, RFC 3339.
    pub now: &'a str,
    /// The subresource applied through (`status`), if any.
    pub subresource: Option<&'a str>,
    /// Fields the write does not set (kube-apiserver's reset fields, e.g.
    /// [`reset_fields_main_resource`]): the configuration's values there are dropped
    /// and nobody comes to own them.
    pub ignored: Option<&'a FieldSet>,
}

/// Applies `intent` for `manager` to `live` (None to create), on the main resource.
pub fn apply(
    live: Option<&Value>,
    intent: &Value,
    manager: &str,
    api_version: &str,
    force: bool,
    schema: &Schema,
    now: &str,
) -> Result<Applied, ApplyError> {
    apply_with(
        live,
        intent,
        &ApplyOptions {
            manager,
            api_version,
            force,
            schema,
            now,
            subresource: None,
            ignored: None,
        },
    )
}

/// `namespace/name; group/version, Kind=kind`, as kube-apiserver names an object in
/// its merge errors.
fn describe(o: &Value) -> String {
    let text = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or("");
    let api_version = text("/apiVersion");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!(
        "{}/{}; {group}/{version}, Kind={}",
        text("/metadata/namespace"),
        text("/metadata/name"),
        text("/kind")
    )
}

fn without_managed_fields(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(Value::Object(meta)) = v.get_mut("metadata") {
        meta.remove("managedFields");
    }
    v
}

fn by_identity(entries: Vec<ManagedFieldsEntry>) -> BTreeMap<Identity, ManagedFieldsEntry> {
    // A repeated identity keeps the last entry, as kube-apiserver's decoding does.
    entries.into_iter().map(|e| (e.identity(), e)).collect()
}

fn finish(managers: BTreeMap<Identity, ManagedFieldsEntry>) -> Vec<ManagedFieldsEntry> {
    let mut out: Vec<ManagedFieldsEntry> = managers
        .into_values()
        .filter(|e| !e.fields.is_empty())
        .collect();
    sort_entries(&mut out);
    out
}

fn now_text(now: &str) -> String {
    normalize_time(now).unwrap_or_else(|| now.to_string())
}

/// Removes the fields `manager` applied last time (`last`) and no longer applies,
/// unless a manager owns them now (structured-merge-diff's prune: remove, add back
/// what is owned, then remove only what was in the last applied set).
///
/// What is owned comes back with its parents: a map the applier released stays
/// when another manager owns a field inside it, and only its released fields go.
fn prune(merged: &Value, owned: &FieldSet, last: &FieldSet, ty: &Type) -> Value {
    let last = ensure_named(last, ty);
    let pruned = remove(merged, &last, ty);
    let owned = ensure_named(owned, ty).with_parents();
    let merged_set = ensure_named(&field_set(merged, ty), ty);
    let pruned_set = ensure_named(&field_set(&pruned, ty), ty);
    let pruned = remove(
        merged,
        &merged_set.difference(&pruned_set.union(&owned)),
        ty,
    );
    let pruned_set = ensure_named(&field_set(&pruned, ty), ty);
    remove(
        merged,
        &merged_set.difference(&pruned_set).intersection(&last),
        ty,
    )
}

/// Applies with every option.
pub fn apply_with(
    live: Option<&Value>,
    intent: &Value,
    o: &ApplyOptions<'_>,
) -> Result<Applied, ApplyError> {
    apply_checked(live, intent, o, true)
}

/// [`apply_with`] that always merges, prunes and compares, even for a configuration
/// its manager already owns with every value live: for the property test that holds
/// the two paths to the same answer.
#[doc(hidden)]
pub fn apply_in_full(
    live: Option<&Value>,
    intent: &Value,
    o: &ApplyOptions<'_>,
) -> Result<Applied, ApplyError> {
    apply_checked(live, intent, o, false)
}

fn apply_checked(
    live: Option<&Value>,
    intent: &Value,
    o: &ApplyOptions<'_>,
    shortcut: bool,
) -> Result<Applied, ApplyError> {
    if !intent.is_object() {
        return Err(ApplyError::BadRequest(
            "the applied configuration must be a JSON object".into(),
        ));
    }
    if intent
        .pointer("/metadata/managedFields")
        .is_some_and(|v| !v.is_null())
    {
        return Err(ApplyError::BadRequest(
            "metadata.managedFields must be nil".into(),
        ));
    }
    let patch_version = intent
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if patch_version != o.api_version {
        return Err(ApplyError::BadRequest(format!(
            "Incorrect version specified in apply patch. Specified patch version: {patch_version}, expected: {}",
            o.api_version
        )));
    }
    if let Err(why) = check_applied(intent, o.schema.root()) {
        return Err(ApplyError::Invalid(format!(
            "failed to create typed patch object ({}): {why}",
            describe(intent)
        )));
    }
    if live.is_some_and(|l| !l.is_object()) {
        return Err(ApplyError::BadRequest(
            "the live object must be a JSON object".into(),
        ));
    }
    let before = match live {
        Some(l) => read_managed_fields(l).map_err(ApplyError::ManagedFields)?,
        None => Vec::new(),
    };
    let live_obj = live
        .map(without_managed_fields)
        .unwrap_or_else(|| Value::Object(Default::default()));
    let ty = o.schema.root();
    // Only reset fields make a copy of the configuration: every later step reads it.
    let intent = match o.ignored {
        Some(ignored) => Cow::Owned(remove(intent, ignored, ty)),
        None => Cow::Borrowed(intent),
    };
    let mut managers = by_identity(before.clone());
    let id = Identity {
        manager: o.manager.to_string(),
        operation: Operation::Apply,
        api_version: String::new(),
        subresource: o.subresource.unwrap_or("").to_string(),
    };
    let previous = managers.remove(&id);
    let distinct = managers.len() + usize::from(previous.is_some()) == before.len();
    let mut fields = field_set(&intent, ty);
    if let Some(ignored) = o.ignored {
        fields = fields.recursive_difference(ignored);
    }
    // The apply a converged reconcile sends or predicts: its manager owns exactly
    // these fields already, in this version, and live holds every value. Merging,
    // pruning and comparing would give live back, so they are skipped (the same
    // answer at a fraction of the cost; a property test holds the two paths equal).
    let recorded = fields.difference(&NEVER_MANAGED);
    let settled = shortcut
        && live.is_some()
        && previous
            .as_ref()
            .is_some_and(|p| p.api_version == o.api_version && p.fields == recorded)
        && holds(&live_obj, &intent, ty);
    let (object, conflicts) = if settled {
        (None, Vec::new())
    } else {
        let (merged, conflicts) = merge_and_prune(
            &live_obj,
            &intent,
            &fields,
            previous.as_ref(),
            &mut managers,
            o,
        )?;
        (Some(merged), conflicts)
    };

    let object_changed = match &object {
        Some(merged) => live.is_none() || !value::equal(&live_obj, merged),
        None => false,
    };
    let mut applier = ManagedFieldsEntry {
        manager: o.manager.to_string(),
        operation: Operation::Apply,
        api_version: o.api_version.to_string(),
        time: previous.and_then(|p| p.time),
        fields_type: FIELDS_V1.to_string(),
        fields: recorded,
        subresource: o.subresource.map(str::to_string),
    };
    let mut object = match object {
        Some(merged) if object_changed => {
            applier.time = Some(now_text(o.now));
            merged
        }
        _ => live_obj,
    };
    managers.insert(id, applier);
    let managed = finish(managers);
    write_managed_fields(&mut object, &managed);
    // Settled, with no two entries of one identity and none empty, the entries come
    // out as they went in: no need to write them all out as text to compare.
    let kept = settled && distinct && before.iter().all(|e| !e.fields.is_empty());
    let changed = object_changed || !(kept || same_ownership(&before, &managed));
    Ok(Applied {
        object,
        managed,
        changed,
        overridden: Conflicts(conflicts),
    })
}

/// The object an apply leaves and the fields it takes from other managers (whose
/// entries lose them, and the fields it removes): merge, prune, compare.
fn merge_and_prune(
    live_obj: &Value,
    intent: &Value,
    fields: &FieldSet,
    previous: Option<&ManagedFieldsEntry>,
    managers: &mut BTreeMap<Identity, ManagedFieldsEntry>,
    o: &ApplyOptions<'_>,
) -> Result<(Value, Vec<Conflict>), ApplyError> {
    let ty = o.schema.root();
    let merged = merge(live_obj, intent, ty);
    let mut last = previous.map(|p| p.fields.clone()).unwrap_or_default();
    if let Some(ignored) = o.ignored {
        last = last.recursive_difference(ignored);
    }
    let final_obj = if last.is_empty() {
        merged
    } else {
        let owned = managers
            .values()
            .fold(fields.clone(), |acc, e| acc.union(&e.fields));
        prune(&merged, &owned, &last, ty)
    };

    let mut cmp = compare(live_obj, &final_obj, ty);
    if let Some(ignored) = o.ignored {
        cmp.exclude(ignored);
    }
    let taken = cmp.modified.union(&cmp.added);
    let mut conflicts: Vec<Conflict> = Vec::new();
    for (owner, entry) in managers.iter() {
        for path in entry.fields.intersection(&taken).paths() {
            conflicts.push(Conflict {
                owner: owner.clone(),
                path,
            });
        }
    }
    // Grouped by owner in the order of kube-apiserver's identifiers; a stable sort
    // keeps each owner's paths in set order.
    conflicts.sort_by(|a, b| cmp_identity_text(&a.owner, &b.owner));
    if !o.force && !conflicts.is_empty() {
        return Err(ApplyError::Conflicts(Conflicts(conflicts)));
    }
    for entry in managers.values_mut() {
        entry.fields.subtract(&taken);
        entry.fields.subtract(&cmp.removed);
    }
    Ok((final_obj, conflicts))
}

/// Everything an update needs besides the objects.
#[derive(Clone, Copy, Debug)]
pub struct UpdateOptions<'a> {
    /// The field manager.
    pub manager: &'a str,
    /// The apiVersion of the request.
    pub api_version: &'a str,
    /// The object's type.
    pub schema: &'a Schema,
    /// The time of the write, RFC 3339.
    pub now: &'a str,
    /// The subresource written through (`status`), if any.
    pub subresource: Option<&'a str>,
    /// Fields the write does not set (reset fields); nobody comes to own them.
    pub ignored: Option<&'a FieldSet>,
}

/// The managed fields after a write that is not an apply (create with `old` None,
/// update, merge or JSON patch): changed and new fields go to the manager's
/// `Update` entry and leave every other entry; removed fields leave every entry.
///
/// Like kube-apiserver, the entries come from `new`'s own `metadata.managedFields`
/// when they are readable and not empty and the write is not to a subresource
/// (so a client can rewrite them), otherwise from `old`'s. When neither can be read
/// the result is no entries, which is what kube-apiserver stores then.
pub fn update(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    api_version: &str,
    schema: &Schema,
    now: &str,
    subresource: Option<&str>,
) -> Vec<ManagedFieldsEntry> {
    update_with(
        old,
        new,
        &UpdateOptions {
            manager,
            api_version,
            schema,
            now,
            subresource,
            ignored: None,
        },
    )
}

/// [`update`] with every option.
pub fn update_with(
    old: Option<&Value>,
    new: &Value,
    o: &UpdateOptions<'_>,
) -> Vec<ManagedFieldsEntry> {
    try_update(old, new, o).unwrap_or_default()
}

/// [`update_with`], telling why the live object's managed fields could not be read.
pub fn try_update(
    old: Option<&Value>,
    new: &Value,
    o: &UpdateOptions<'_>,
) -> Result<Vec<ManagedFieldsEntry>, ManagedFieldsError> {
    let supplied = match o.subresource {
        None => read_managed_fields(new).ok().filter(|e| !e.is_empty()),
        Some(_) => None,
    };
    let entries = match supplied {
        Some(e) => e,
        None => match old {
            Some(old) => read_managed_fields(old)?,
            None => Vec::new(),
        },
    };
    let old_obj = old
        .map(without_managed_fields)
        .unwrap_or_else(|| Value::Object(Default::default()));
    let new_obj = without_managed_fields(new);
    Ok(record(entries, &old_obj, &new_obj, o))
}

/// [`update_with`] for a caller that can lend both objects: their
/// `metadata.managedFields` are taken out for the comparison and put back as they
/// were, where [`update_with`] compares copies without them (a copy of each object on
/// every write).
pub fn update_in_place(
    old: Option<&mut Value>,
    new: &mut Value,
    o: &UpdateOptions<'_>,
) -> Vec<ManagedFieldsEntry> {
    let supplied = match o.subresource {
        None => read_managed_fields(new).ok().filter(|e| !e.is_empty()),
        Some(_) => None,
    };
    let entries = match (supplied, old.as_deref()) {
        (Some(e), _) => e,
        (None, Some(old)) => match read_managed_fields(old) {
            Ok(e) => e,
            // What `update_with` answers when the old entries cannot be read.
            Err(_) => return Vec::new(),
        },
        (None, None) => Vec::new(),
    };
    let mut empty = Value::Object(Default::default());
    let old = old.unwrap_or(&mut empty);
    let old_entries = take_managed_fields(old);
    let new_entries = take_managed_fields(new);
    let result = record(entries, old, new, o);
    put_managed_fields(old, old_entries);
    put_managed_fields(new, new_entries);
    result
}

fn take_managed_fields(v: &mut Value) -> Option<Value> {
    v.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|meta| meta.remove("managedFields"))
}

fn put_managed_fields(v: &mut Value, entries: Option<Value>) {
    if let (Some(entries), Some(meta)) = (
        entries,
        v.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        meta.insert("managedFields".into(), entries);
    }
}

/// The entries after a write from `old_obj` to `new_obj` (both without their managed
/// fields), starting from `entries`.
fn record(
    entries: Vec<ManagedFieldsEntry>,
    old_obj: &Value,
    new_obj: &Value,
    o: &UpdateOptions<'_>,
) -> Vec<ManagedFieldsEntry> {
    let ty = o.schema.root();
    let mut cmp = compare(old_obj, new_obj, ty);
    if let Some(ignored) = o.ignored {
        cmp.exclude(ignored);
    }
    let taken = cmp.modified.union(&cmp.added);
    let mut managers = by_identity(entries);
    for entry in managers.values_mut() {
        entry.fields.subtract(&taken);
        entry.fields.subtract(&cmp.removed);
    }
    let mut fields = taken.difference(&cmp.removed);
    if let Some(ignored) = o.ignored {
        fields = fields.recursive_difference(ignored);
    }
    let fields = fields.difference(&NEVER_MANAGED);
    if !fields.is_empty() {
        let id = Identity {
            manager: o.manager.to_string(),
            operation: Operation::Update,
            api_version: o.api_version.to_string(),
            subresource: o.subresource.unwrap_or("").to_string(),
        };
        let previous = managers.remove(&id).map(|e| e.fields).unwrap_or_default();
        managers.insert(
            id,
            ManagedFieldsEntry {
                manager: o.manager.to_string(),
                operation: Operation::Update,
                api_version: o.api_version.to_string(),
                time: Some(now_text(o.now)),
                fields_type: FIELDS_V1.to_string(),
                fields: fields.union(&previous),
                subresource: o.subresource.map(str::to_string),
            },
        );
    }
    finish(managers)
}
