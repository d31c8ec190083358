//! The walks over an object with its type that server-side apply is built from:
//! the field set of an object, the merge of an applied configuration into a live
//! object, the comparison of two objects (added, modified, removed fields), the
//! removal of a set of fields, and the "named fields are members" widening that
//! pruning uses. Each follows structured-merge-diff's `typed` package, including its
//! corner cases (a map emptied by a removal becomes `null`; two empty containers
//! compare as one leaf), because ownership results depend on them.
//!
//! Values that do not fit their type (a string where the schema has a map, a set item
//! that is an object, a map-list item without its key) are taken as atomic leaves
//! instead of being refused: kube-apiserver would have rejected such an object
//! before server-side apply sees it, and a leaf keeps every walk total.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::fieldset::{FieldSet, Path, PathElement};
use crate::schema::{ListKind, Type};
use crate::value;

/// How a value is walked under its type.
enum Shape<'t> {
    /// Owned and compared whole.
    Leaf,
    /// A granular map (object or null) with this type.
    Map(&'t Type),
    /// An associative list (array or null) whose items have these path elements.
    List(&'t Type, Vec<PathElement>),
}

impl Shape<'_> {
    fn kind(&self) -> u8 {
        match self {
            Shape::Leaf => 0,
            Shape::Map(_) => 1,
            Shape::List(..) => 2,
        }
    }
}

/// The path element of a list item, or structured-merge-diff's reason it has none.
fn item_element(kind: &ListKind, item: &Value) -> Result<PathElement, String> {
    match kind {
        ListKind::Atomic => Err("not an associative list".to_string()),
        ListKind::Set => match item {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => {
                Ok(PathElement::Value(item.clone()))
            }
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".to_string())
            }
            Value::Array(_) => {
                Err("not supported: associative list with lists as elements".to_string())
            }
            Value::Null => Err(
                "associative list without keys has an element that's an explicit null".to_string(),
            ),
        },
        ListKind::Map { keys, defaults } => {
            let obj = match item {
                Value::Object(obj) => obj,
                Value::Null => {
                    return Err(
                        "associative list with keys may not have a null element".to_string()
                    );
                }
                _ => {
                    return Err(
                        "associative list with keys may not have non-map elements".to_string()
                    );
                }
            };
            let mut fields = Vec::with_capacity(keys.len());
            for k in keys {
                let Some(v) = obj.get(k).or_else(|| defaults.get(k)) else {
                    return Err(format!(
                        "associative list with keys has an element that omits key field {k:?} (and doesn't have default value)"
                    ));
                };
                fields.push((k.clone(), v.clone()));
            }
            Ok(PathElement::key(fields))
        }
    }
}

/// Checks an applied configuration as kube-apiserver does before merging it: every
/// field is declared by the schema, every item of a set or map-list has its path
/// element, and none is there twice.
pub(crate) fn check_applied(v: &Value, ty: &Type) -> Result<(), String> {
    check(v, ty, &mut Vec::new())
}

fn check(v: &Value, ty: &Type, path: &mut Vec<PathElement>) -> Result<(), String> {
    match (ty, v) {
        (Type::List(l), Value::Array(items)) if l.kind != ListKind::Atomic => {
            let mut seen = std::collections::BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let at = Path(path.clone());
                let pe =
                    item_element(&l.kind, item).map_err(|m| format!("{at}: element {i}: {m}"))?;
                if !seen.insert(pe.clone()) {
                    return Err(format!("{at}: duplicate entries for key {pe}"));
                }
                path.push(pe);
                check(item, &l.items, path)?;
                path.pop();
            }
            Ok(())
        }
        (Type::Map(m), Value::Object(map)) if !m.atomic => check_map(map, ty, path),
        (Type::Deduced, Value::Object(map)) => check_map(map, ty, path),
        _ => Ok(()),
    }
}

fn check_map(
    map: &Map<String, Value>,
    ty: &Type,
    path: &mut Vec<PathElement>,
) -> Result<(), String> {
    for (k, child) in map {
        path.push(PathElement::Field(k.clone()));
        // A structural schema names every field it allows unless it keeps unknown
        // fields (or gives map values a type); kube-apiserver refuses the rest.
        if let Type::Map(m) = ty
            && m.elements.is_none()
            && !m.fields.contains_key(k)
        {
            return Err(format!(
                "{}: field not declared in schema",
                Path(path.clone())
            ));
        }
        check(child, ty.field(k).0, path)?;
        path.pop();
    }
    Ok(())
}

fn shape<'t>(ty: &'t Type, v: &Value) -> Shape<'t> {
    match ty {
        Type::Scalar | Type::Atomic => Shape::Leaf,
        Type::Deduced => match v {
            Value::Object(_) | Value::Null => Shape::Map(ty),
            _ => Shape::Leaf,
        },
        Type::Map(m) => match v {
            Value::Object(_) | Value::Null if !m.atomic => Shape::Map(ty),
            _ => Shape::Leaf,
        },
        Type::List(l) => match (&l.kind, v) {
            (ListKind::Atomic, _) => Shape::Leaf,
            (_, Value::Null) => Shape::List(ty, Vec::new()),
            (kind, Value::Array(items)) => {
                let pes: Option<Vec<PathElement>> =
                    items.iter().map(|i| item_element(kind, i).ok()).collect();
                match pes {
                    Some(pes) => Shape::List(ty, pes),
                    None => Shape::Leaf,
                }
            }
            _ => Shape::Leaf,
        },
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// The items of an associative list by path element, first occurrence winning, in
/// list order.
fn index_items<'v>(v: &'v Value, pes: &[PathElement]) -> Vec<(PathElement, &'v Value)> {
    let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for (pe, item) in pes.iter().zip(items) {
        if seen.insert(pe.clone()) {
            out.push((pe.clone(), item));
        }
    }
    out
}

/// Every field an object sets (structured-merge-diff's `ToFieldSet`): leaves, atomic
/// containers, list items (with their fields), and map keys that are not named fields.
pub(crate) fn field_set(v: &Value, ty: &Type) -> FieldSet {
    let mut set = FieldSet::new();
    collect(v, ty, &mut Vec::new(), &mut set);
    set
}

fn collect(v: &Value, ty: &Type, path: &mut Vec<PathElement>, set: &mut FieldSet) {
    match shape(ty, v) {
        Shape::Leaf => set.insert(path),
        Shape::Map(ty) => {
            if let Value::Object(map) = v {
                for (k, child) in map {
                    let (child_ty, named) = ty.field(k);
                    path.push(PathElement::Field(k.clone()));
                    collect(child, child_ty, path, set);
                    if !named {
                        set.insert(path);
                    }
                    path.pop();
                }
            }
        }
        Shape::List(ty, pes) => {
            let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
            for (pe, item) in pes.into_iter().zip(items) {
                path.push(pe);
                collect(item, ty.items(), path, set);
                set.insert(path);
                path.pop();
            }
        }
    }
}

/// Merges `rhs` (an applied configuration) into `lhs` (the live object): maps key by
/// key, associative lists item by item, everything else replaced by `rhs`.
pub(crate) fn merge(lhs: &Value, rhs: &Value, ty: &Type) -> Value {
    merge_node(Some(lhs), Some(rhs), ty)
}

fn merge_node(lhs: Option<&Value>, rhs: Option<&Value>, ty: &Type) -> Value {
    let (l, r) = match (lhs, rhs) {
        (Some(l), Some(r)) => (l, r),
        (Some(only), None) | (None, Some(only)) => return only.clone(),
        (None, None) => return Value::Null,
    };
    let (sl, sr) = (shape(ty, l), shape(ty, r));
    if sl.kind() != sr.kind() || (is_empty_container(l) && is_empty_container(r)) {
        return r.clone();
    }
    match (sl, sr) {
        (Shape::Map(ty), Shape::Map(_)) => {
            let empty = Map::new();
            let lm = l.as_object().unwrap_or(&empty);
            let rm = r.as_object().unwrap_or(&empty);
            let mut out = Map::new();
            for k in lm.keys().chain(rm.keys()) {
                if out.contains_key(k) {
                    continue;
                }
                let child = merge_node(lm.get(k), rm.get(k), ty.field(k).0);
                out.insert(k.clone(), child);
            }
            Value::Object(out)
        }
        (Shape::List(ty, lpes), Shape::List(_, rpes)) => {
            let litems = index_items(l, &lpes);
            let ritems = index_items(r, &rpes);
            Value::Array(merge_list(&litems, &ritems, ty.items()))
        }
        _ => r.clone(),
    }
}

/// The order of a merged associative list, as structured-merge-diff makes it: items
/// only in the live list keep their place, items of the applied list come in its
/// order, and an applied item new to the list goes before the next item the two
/// lists share.
fn merge_list(
    lhs: &[(PathElement, &Value)],
    rhs: &[(PathElement, &Value)],
    item_ty: &Type,
) -> Vec<Value> {
    let lmap: BTreeMap<&PathElement, &Value> = lhs.iter().map(|(p, v)| (p, *v)).collect();
    let rmap: BTreeMap<&PathElement, &Value> = rhs.iter().map(|(p, v)| (p, *v)).collect();
    let mut shared = rhs.iter().map(|(p, _)| p).filter(|p| lmap.contains_key(p));
    let mut next_shared = shared.next();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let pe = &lhs[li].0;
            if *pe == rhs[ri].0 {
                out.push(merge_node(Some(lhs[li].1), Some(rhs[ri].1), item_ty));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if rmap.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                // A shared item that the applied order places later.
                li += 1;
                continue;
            }
        }
        if li < lhs.len() && !rmap.contains_key(&lhs[li].0) {
            out.push(lhs[li].1.clone());
            li += 1;
            continue;
        }
        if ri < rhs.len() {
            let pe = &rhs[ri].0;
            out.push(merge_node(lmap.get(pe).copied(), Some(rhs[ri].1), item_ty));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
            continue;
        }
        // Only a shared live item is left, and its applied copy is already out.
        li += 1;
    }
    out
}

/// Whether merging `applied` into `live` gives `live` back as it is: every key of a
/// granular map and every item of an associative list that `applied` has, `live` has
/// too (in the same order, with other items around them), and every leaf, atomic value and
/// other list is exactly live's. Values are compared as written (`1` is not `1.0`).
///
/// Then an apply by a manager that already owns exactly `applied`'s fields changes
/// nothing: pruning removes only fields the manager stops applying, and it applies
/// the same ones. `false` only means "merge, prune and compare in full".
pub(crate) fn holds(live: &Value, applied: &Value, ty: &Type) -> bool {
    match (shape(ty, live), shape(ty, applied), live, applied) {
        (Shape::Map(ty), Shape::Map(_), Value::Object(live), Value::Object(applied)) => {
            applied.iter().all(|(k, a)| {
                let child = ty.field(k).0;
                live.get(k).is_some_and(|l| holds(l, a, child))
            })
        }
        (
            Shape::List(ty, lpes),
            Shape::List(_, apes),
            Value::Array(live),
            Value::Array(applied),
        ) => {
            // Merging keeps live's items in place and each applied item where live has
            // it, when the applied keys come in live's order; a repeated key in live
            // would be merged away.
            let mut next = apes.iter().zip(applied).peekable();
            let mut seen = std::collections::BTreeSet::new();
            for (pe, l) in lpes.iter().zip(live) {
                if !seen.insert(pe) {
                    return false;
                }
                if let Some((_, a)) = next.next_if(|(ape, _)| *ape == pe)
                    && !holds(l, a, ty.items())
                {
                    return false;
                }
            }
            next.peek().is_none()
        }
        (Shape::Leaf, Shape::Leaf, ..) => live == applied,
        _ => false,
    }
}

/// Fields added, modified and removed from one object to another.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    pub(crate) fn exclude(&mut self, ignored: &FieldSet) {
        self.added = self.added.recursive_difference(ignored);
        self.modified = self.modified.recursive_difference(ignored);
        self.removed = self.removed.recursive_difference(ignored);
    }
}

/// Compares two objects (structured-merge-diff's `Compare`): a leaf is added,
/// removed or modified; a map or list item that appears or disappears is itself
/// added or removed along with its fields.
pub(crate) fn compare(lhs: &Value, rhs: &Value, ty: &Type) -> Comparison {
    let mut c = Comparison::default();
    compare_node(Some(lhs), Some(rhs), ty, &mut Vec::new(), &mut c);
    c
}

fn leaf_rule(lhs: Option<&Value>, rhs: Option<&Value>, path: &[PathElement], c: &mut Comparison) {
    match (lhs, rhs) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(l), Some(r)) if !value::equal(l, r) => c.modified.insert(path),
        _ => {}
    }
}

fn compare_node(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    ty: &Type,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) {
    // Equal values hold no change at any depth, and most of an object is unchanged
    // by a write: comparing them is cheaper than walking them (and finding their
    // list items' keys).
    if let (Some(l), Some(r)) = (lhs, rhs)
        && l == r
    {
        return;
    }
    let sl = lhs.map(|v| shape(ty, v));
    let sr = rhs.map(|v| shape(ty, v));
    let changed_kind = matches!((&sl, &sr), (Some(a), Some(b)) if a.kind() != b.kind());
    if changed_kind {
        // The value changed kind: the node is modified, and whatever was (or is
        // now) under it is removed (or added).
        c.modified.insert(path);
        if let (Some(l), Some(s)) = (lhs, sl) {
            compare_children(Some((l, &s)), None, path, c);
        }
        if let (Some(r), Some(s)) = (rhs, sr) {
            compare_children(None, Some((r, &s)), path, c);
        }
        return;
    }
    let Some(s) = sl.as_ref().or(sr.as_ref()) else {
        return;
    };
    let both_empty = lhs.is_none_or(is_empty_container) && rhs.is_none_or(is_empty_container);
    if matches!(s, Shape::Leaf) || both_empty {
        leaf_rule(lhs, rhs, path, c);
        return;
    }
    compare_children(lhs.zip(sl.as_ref()), rhs.zip(sr.as_ref()), path, c);
    match (lhs, rhs) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        _ => {}
    }
}

fn compare_children(
    lhs: Option<(&Value, &Shape<'_>)>,
    rhs: Option<(&Value, &Shape<'_>)>,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) {
    let shape = match lhs.or(rhs) {
        Some((_, s)) => s,
        None => return,
    };
    match shape {
        Shape::Leaf => {}
        Shape::Map(ty) => {
            let empty = Map::new();
            let lm = lhs.and_then(|(v, _)| v.as_object()).unwrap_or(&empty);
            let rm = rhs.and_then(|(v, _)| v.as_object()).unwrap_or(&empty);
            let mut keys: Vec<&String> = lm.keys().chain(rm.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                path.push(PathElement::Field(k.clone()));
                compare_node(lm.get(k), rm.get(k), ty.field(k).0, path, c);
                path.pop();
            }
        }
        Shape::List(ty, _) => {
            let litems = list_items(lhs);
            let ritems = list_items(rhs);
            let lmap: BTreeMap<&PathElement, &Value> =
                litems.iter().map(|(p, v)| (p, *v)).collect();
            let rmap: BTreeMap<&PathElement, &Value> =
                ritems.iter().map(|(p, v)| (p, *v)).collect();
            let mut pes: Vec<&PathElement> = lmap.keys().chain(rmap.keys()).copied().collect();
            pes.sort();
            pes.dedup();
            for pe in pes {
                path.push(pe.clone());
                compare_node(
                    lmap.get(pe).copied(),
                    rmap.get(pe).copied(),
                    ty.items(),
                    path,
                    c,
                );
                path.pop();
            }
        }
    }
}

fn list_items<'v>(side: Option<(&'v Value, &Shape<'_>)>) -> Vec<(PathElement, &'v Value)> {
    match side {
        Some((v, Shape::List(_, pes))) => index_items(v, pes),
        _ => Vec::new(),
    }
}

/// Removes the member paths of `set` from `v` (structured-merge-diff's
/// `RemoveItems`): a member is dropped with everything under it; a map or list left
/// empty, and an atomic container the set reaches into, become `null`.
pub(crate) fn remove(v: &Value, set: &FieldSet, ty: &Type) -> Value {
    match shape(ty, v) {
        Shape::Leaf => {
            // The walk does not go into an atomic container: structured-merge-diff
            // leaves nothing of one that the set reaches into.
            let atomic_container = match (ty, v) {
                (Type::Atomic | Type::Deduced, Value::Array(_) | Value::Object(_)) => true,
                (Type::Map(m), Value::Object(_)) => m.atomic,
                (Type::List(_), Value::Array(_)) => true,
                _ => false,
            };
            if atomic_container {
                Value::Null
            } else {
                v.clone()
            }
        }
        Shape::Map(ty) => {
            let Some(map) = v.as_object() else {
                return Value::Null;
            };
            let mut out = Map::new();
            for (k, child) in map {
                let pe = PathElement::Field(k.clone());
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                let kept = match set.with_prefix(&pe) {
                    Some(sub) => remove(child, sub, ty.field(k).0),
                    None => child.clone(),
                };
                out.insert(k.clone(), kept);
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Object(out)
            }
        }
        Shape::List(ty, pes) => {
            let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
            let mut out = Vec::new();
            for (pe, item) in pes.iter().zip(items) {
                if set.has(std::slice::from_ref(pe)) {
                    continue;
                }
                out.push(match set.with_prefix(pe) {
                    Some(sub) => remove(item, sub, ty.items()),
                    None => item.clone(),
                });
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Array(out)
            }
        }
    }
}

/// The set with every named field on the way to its paths made a member too
/// (structured-merge-diff's `EnsureNamedFieldsAreMembers`): pruning treats a struct
/// field as released with the last field under it, but not a map or list node.
pub(crate) fn ensure_named(set: &FieldSet, ty: &Type) -> FieldSet {
    let mut out = FieldSet::new();
    for m in set.members() {
        out.add_member(m.clone());
    }
    for (pe, child) in set.children() {
        let child_ty = match pe {
            PathElement::Field(name) => {
                let (t, named) = ty.field(name);
                if named {
                    out.add_member(pe.clone());
                }
                t
            }
            PathElement::Key(_) => ty.items(),
            _ => &crate::schema::ATOMIC,
        };
        out.set_child(pe.clone(), ensure_named(child, child_ty));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ListType, MapType};
    use serde_json::json;

    fn set_list() -> Type {
        Type::Map(MapType {
            fields: [(
                "s".to_string(),
                Type::List(ListType {
                    items: Box::new(Type::Scalar),
                    kind: ListKind::Set,
                }),
            )]
            .into(),
            ..MapType::default()
        })
    }

    fn keyed_list() -> Type {
        Type::Map(MapType {
            fields: [(
                "l".to_string(),
                Type::List(ListType {
                    items: Box::new(Type::Map(MapType {
                        fields: [
                            ("key".to_string(), Type::Scalar),
                            ("id".to_string(), Type::Scalar),
                        ]
                        .into(),
                        ..MapType::default()
                    })),
                    kind: ListKind::Map {
                        keys: vec!["key".to_string(), "id".to_string()],
                        defaults: BTreeMap::new(),
                    },
                }),
            )]
            .into(),
            ..MapType::default()
        })
    }

    /// Set merges from structured-merge-diff's merge tests (live, applied, merged).
    #[test]
    fn set_merge_order() {
        let cases = [
            (
                json!(["a", "b", "c"]),
                json!(["a", "b"]),
                json!(["a", "b", "c"]),
            ),
            (json!(["a", "b"]), json!(["b", "a"]), json!(["b", "a"])),
            (
                json!(["a", "b", "c"]),
                json!(["c", "d", "e", "f"]),
                json!(["a", "b", "c", "d", "e", "f"]),
            ),
            (
                json!(["a", "b", "c", "g", "f"]),
                json!(["c", "d", "e", "f"]),
                json!(["a", "b", "c", "g", "d", "e", "f"]),
            ),
            (
                json!(["c", "d", "e", "f"]),
                json!(["a", "c", "e"]),
                json!(["a", "c", "d", "e", "f"]),
            ),
            (
                json!(["a", "b", "c", "x", "y", "z"]),
                json!(["d", "e", "f", "x", "y", "z"]),
                json!(["a", "b", "c", "d", "e", "f", "x", "y", "z"]),
            ),
            (
                json!(["c", "a", "g", "f"]),
                json!(["c", "f", "a", "g"]),
                json!(["c", "f", "a", "g"]),
            ),
            (
                json!(["a", "b", "c", "d"]),
                json!(["d", "e", "f", "a"]),
                json!(["b", "c", "d", "e", "f", "a"]),
            ),
            (
                json!(["c", "d", "e", "f", "g", "h", "i", "j"]),
                json!(["2", "h", "3", "e", "4", "k", "l"]),
                json!([
                    "c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l"
                ]),
            ),
            (
                json!(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]),
                json!(["1", "b", "2", "h", "3", "e", "4", "k", "l"]),
                json!([
                    "a", "1", "b", "c", "d", "f", "g", "2", "h", "i", "j", "3", "e", "4", "k", "l"
                ]),
            ),
            (json!([1, 2, 3.5]), json!([1, 2, 3]), json!([1, 2, 3.5, 3])),
        ];
        let ty = set_list();
        for (l, r, want) in cases {
            let got = merge(&json!({"s": l}), &json!({"s": r}), &ty);
            assert_eq!(got, json!({"s": want}), "live {l} applied {r}");
        }
    }

    #[test]
    fn keyed_list_merge_order() {
        let ty = keyed_list();
        let cases = [
            (
                json!([{"key": "a", "id": 1}, {"key": "b", "id": 2}, {"key": "c", "id": 3}]),
                json!([{"key": "c", "id": 3}, {"key": "b", "id": 2}]),
                json!([{"key": "a", "id": 1}, {"key": "c", "id": 3}, {"key": "b", "id": 2}]),
            ),
            (
                json!([{"key": "a", "id": 1}, {"key": "b", "id": 2}, {"key": "c", "id": 3}]),
                json!([{"key": "c", "id": 3}, {"key": "a", "id": 1}]),
                json!([{"key": "b", "id": 2}, {"key": "c", "id": 3}, {"key": "a", "id": 1}]),
            ),
            (
                json!([{"key": "a", "id": 1}, {"key": "b", "id": 1}]),
                json!([{"key": "a", "id": 1}, {"key": "a", "id": 2}]),
                json!([{"key": "a", "id": 1}, {"key": "b", "id": 1}, {"key": "a", "id": 2}]),
            ),
        ];
        for (l, r, want) in cases {
            assert_eq!(
                merge(&json!({"l": l}), &json!({"l": r}), &ty),
                json!({"l": want})
            );
        }
    }

    #[test]
    fn empty_and_null_are_replaced() {
        let ty = Type::Deduced;
        assert_eq!(
            merge(&json!({"a": {}}), &json!({"a": null}), &ty),
            json!({"a": null})
        );
        assert_eq!(
            merge(&json!({"a": null}), &json!({"a": {}}), &ty),
            json!({"a": {}})
        );
        assert_eq!(
            merge(&json!({"a": 1}), &json!({"a": {}}), &ty),
            json!({"a": {}})
        );
    }

    #[test]
    fn compare_marks_new_maps_and_items() {
        let c = compare(&json!({}), &json!({"spec": {"a": 1}}), &Type::Deduced);
        assert_eq!(
            c.added.to_fields_v1_string(),
            r#"{"f:spec":{".":{},"f:a":{}}}"#
        );
        let c = compare(
            &json!({"spec": {"a": 1}}),
            &json!({"spec": {}}),
            &Type::Deduced,
        );
        assert_eq!(c.removed.to_fields_v1_string(), r#"{"f:spec":{"f:a":{}}}"#);
        assert!(c.modified.is_empty() && c.added.is_empty());
    }

    #[test]
    fn remove_leaves_null_for_emptied_maps() {
        let mut set = FieldSet::new();
        set.insert(&[
            PathElement::Field("a".into()),
            PathElement::Field("b".into()),
        ]);
        let got = remove(&json!({"a": {"b": 1}, "c": 2}), &set, &Type::Deduced);
        assert_eq!(got, json!({"a": null, "c": 2}));
    }
}
