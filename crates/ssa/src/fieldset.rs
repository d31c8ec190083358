//! Sets of field paths as a tree, and their FieldsV1 encoding.
//!
//! A path is a list of elements: a field name (`.spec`), the key of a map-list item
//! (`[name="nginx"]`), the value of a set item (`[="a"]`) or, for completeness, a list
//! index (`[0]`), which server-side apply itself never produces. A set holds paths the
//! way structured-merge-diff does: each node has *members* (paths that end there) and
//! *children* (paths that go on); a node can be both, which FieldsV1 writes as `"."`.
//!
//! The set operations keep structured-merge-diff's meaning, which is not a prefix-aware
//! one: `difference` removes exact paths only (a parent minus its child is still the
//! parent, a child minus its parent is still the child), `recursive_difference`
//! removes whole subtrees.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};
use topograph_gocompat::json as gojson;

use crate::value;

/// One step of a field path.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A field of a map (`f:<name>`).
    Field(String),
    /// The item of a map-list with these key fields, sorted by name (`k:{…}`).
    Key(Vec<(String, Value)>),
    /// The item of a set with this value (`v:<json>`).
    Value(Value),
    /// An item by position (`i:<n>`); only read, never produced by apply.
    Index(usize),
}

impl PathElement {
    /// A map-list key element from its fields, sorted by field name as Kubernetes does.
    pub fn key<I, K>(fields: I) -> PathElement
    where
        I: IntoIterator<Item = (K, Value)>,
        K: Into<String>,
    {
        let mut fields: Vec<(String, Value)> =
            fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    fn variant(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The FieldsV1 key of this element (`f:name`, `k:{"name":"x"}`, `v:"a"`, `i:0`).
    pub fn to_fields_v1_key(&self) -> String {
        match self {
            // Field names are written raw after the prefix. Written without `format!`:
            // every managed-fields entry a write records is rebuilt key by key.
            PathElement::Field(name) => {
                let mut out = String::with_capacity(name.len() + 2);
                out.push_str("f:");
                out.push_str(name);
                out
            }
            PathElement::Key(fields) => {
                let mut out = String::from("k:{");
                for (i, (name, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    gojson::write_string(&mut out, name, false);
                    out.push(':');
                    value::write_json(&mut out, v);
                }
                out.push('}');
                out
            }
            PathElement::Value(v) => {
                let mut out = String::from("v:");
                value::write_json(&mut out, v);
                out
            }
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Reads a FieldsV1 key. `Ok(None)` is a well-formed key of a kind this version
    /// does not know, which Kubernetes drops rather than fails on.
    pub fn from_fields_v1_key(key: &str) -> Result<Option<PathElement>, FieldsV1Error> {
        let bytes = key.as_bytes();
        if bytes.len() < 2 {
            return Err(FieldsV1Error("key must be 2 characters long:".to_string()));
        }
        if bytes[1] != b':' {
            return Err(FieldsV1Error(format!("missing colon: {key}")));
        }
        let rest = &key[2..];
        match bytes[0] {
            b'f' => Ok(Some(PathElement::Field(rest.to_string()))),
            b'v' => {
                let v: Value = serde_json::from_str(rest)
                    .map_err(|e| FieldsV1Error(format!("parsing key {key:?}: {e}")))?;
                Ok(Some(PathElement::Value(v)))
            }
            b'k' => match serde_json::from_str::<Value>(rest) {
                Ok(Value::Object(map)) => Ok(Some(PathElement::key(map))),
                Ok(_) => Err(FieldsV1Error(format!(
                    "parsing key {key:?}: a key element must be a JSON object"
                ))),
                Err(e) => Err(FieldsV1Error(format!("parsing key {key:?}: {e}"))),
            },
            b'i' => rest
                .parse::<usize>()
                .map(|i| Some(PathElement::Index(i)))
                .map_err(|_| {
                    FieldsV1Error(format!("strconv.Atoi: parsing {rest:?}: invalid syntax"))
                }),
            _ => Ok(None),
        }
    }
}

impl Ord for PathElement {
    /// structured-merge-diff's order: field names, then keys, then set values, then
    /// indexes; within a kind, by name, key fields, value or number.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((na, va), (nb, vb)) in a.iter().zip(b) {
                    let c = na.cmp(nb).then_with(|| value::compare(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => value::compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.variant().cmp(&other.variant()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    // Equality follows the order, so `80` and `80.0` are the same key.
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    /// As kube-apiserver prints it in a conflict: `.name`, `[k="v",…]`, `[="v"]`, `[0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value::go_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value::go_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A field path; prints as kube-apiserver does, e.g.
/// `.spec.template.spec.containers[name="nginx"].image`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// A path of field names only (`Path::fields(&["spec", "replicas"])`).
    pub fn fields(names: &[&str]) -> Path {
        Path(
            names
                .iter()
                .map(|n| PathElement::Field((*n).to_string()))
                .collect(),
        )
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in &self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

/// A FieldsV1 document that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FieldsV1Error(pub String);

/// A set of field paths as a tree (structured-merge-diff's `fieldpath.Set`).
///
/// Children are never empty: every operation drops a child left without members or
/// children of its own, so two sets with the same paths are `==`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> FieldSet {
        FieldSet::default()
    }

    /// A set of the given paths.
    pub fn from_paths<I: IntoIterator<Item = Path>>(paths: I) -> FieldSet {
        let mut set = FieldSet::new();
        for p in paths {
            set.insert(&p.0);
        }
        set
    }

    /// Adds a path. Its parents are not added; the empty path (the whole object) is
    /// never a member, as Kubernetes tracks no owner of the object itself.
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is a member (not merely the parent of one).
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// No paths at all.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// The number of member paths.
    pub fn len(&self) -> usize {
        self.members.len() + self.children.values().map(FieldSet::len).sum::<usize>()
    }

    /// The members directly under this node.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The subtree under `pe` (paths that start with `pe`, without it).
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// The child nodes of this node.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    /// Every member path in structured-merge-diff's iteration order: a node's members
    /// first, then its children's paths, both sorted.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            prefix.push(m.clone());
            out.push(Path(prefix.clone()));
            prefix.pop();
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    out.children.insert(pe.clone(), both);
                }
            }
        }
        out
    }

    /// Paths of `self` that are not paths of `other` (exact paths: descendants of a
    /// removed path stay).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            let rest = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// [`FieldSet::difference`] in place: nothing is copied, and subtracting an empty
    /// set (what most writes take from most managers) costs nothing.
    pub fn subtract(&mut self, other: &FieldSet) {
        if other.is_empty() || self.is_empty() {
            return;
        }
        if !other.members.is_empty() {
            self.members.retain(|m| !other.members.contains(m));
        }
        for (pe, theirs) in &other.children {
            if let Some(mine) = self.children.get_mut(pe) {
                mine.subtract(theirs);
                if mine.is_empty() {
                    self.children.remove(pe);
                }
            }
        }
    }

    /// Paths of `self` that neither are in `other` nor lie under one of its paths.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let rest = match other.children.get(pe) {
                Some(theirs) => child.recursive_difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// The set with every path on the way to one of its paths made a member too: a
    /// field someone owns keeps the maps, list items and structs above it.
    pub(crate) fn with_parents(&self) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.clone(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            out.members.insert(pe.clone());
            out.set_child(pe.clone(), child.with_parents());
        }
        out
    }

    pub(crate) fn add_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    pub(crate) fn set_child(&mut self, pe: PathElement, child: FieldSet) {
        if child.is_empty() {
            self.children.remove(&pe);
        } else {
            self.children.insert(pe, child);
        }
    }

    /// The FieldsV1 text exactly as Kubernetes writes it: keys in path-element order,
    /// `"."` first in a node that is itself a member, no whitespace.
    pub fn to_fields_v1_string(&self) -> String {
        let mut out = String::from("{");
        self.write_contents(&mut out, false);
        out.push('}');
        out
    }

    fn write_contents(&self, out: &mut String, include_self: bool) {
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
        };
        if include_self && !self.is_empty() {
            sep(out);
            out.push_str("\".\":{}");
        }
        let mut members = self.members.iter().peekable();
        let mut children = self.children.iter().peekable();
        loop {
            let order = match (members.peek(), children.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(m), Some((c, _))) => (*m).cmp(*c),
            };
            sep(out);
            match order {
                Ordering::Less => {
                    let Some(m) = members.next() else { break };
                    gojson::write_string(out, &m.to_fields_v1_key(), false);
                    out.push_str(":{}");
                }
                Ordering::Greater | Ordering::Equal => {
                    let Some((pe, child)) = children.next() else {
                        break;
                    };
                    let is_member = order == Ordering::Equal;
                    if is_member {
                        members.next();
                    }
                    gojson::write_string(out, &pe.to_fields_v1_key(), false);
                    out.push_str(":{");
                    child.write_contents(out, is_member);
                    out.push('}');
                }
            }
        }
    }

    /// The FieldsV1 document as a JSON value (its key order is serde_json's).
    pub fn to_fields_v1(&self) -> Value {
        let mut map = Map::new();
        self.fill_value(&mut map);
        Value::Object(map)
    }

    fn fill_value(&self, map: &mut Map<String, Value>) {
        for m in &self.members {
            if !self.children.contains_key(m) {
                map.insert(m.to_fields_v1_key(), Value::Object(Map::new()));
            }
        }
        for (pe, child) in &self.children {
            let mut inner = Map::new();
            if self.members.contains(pe) {
                inner.insert(".".to_string(), Value::Object(Map::new()));
            }
            child.fill_value(&mut inner);
            map.insert(pe.to_fields_v1_key(), Value::Object(inner));
        }
    }

    /// Reads a FieldsV1 document. Keys of unknown kinds are dropped, as Kubernetes
    /// does; a key that does not parse, or a node that is not an object, is an error.
    pub fn from_fields_v1(v: &Value) -> Result<FieldSet, FieldsV1Error> {
        match v {
            Value::Object(map) => Ok(read_node(map)?.0.unwrap_or_default()),
            Value::Null => Ok(FieldSet::new()),
            other => Err(not_an_object(other)),
        }
    }

    /// Reads FieldsV1 text.
    pub fn from_fields_v1_str(text: &str) -> Result<FieldSet, FieldsV1Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| FieldsV1Error(e.to_string()))?;
        FieldSet::from_fields_v1(&v)
    }
}

fn not_an_object(v: &Value) -> FieldsV1Error {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    FieldsV1Error(format!("expected a FieldsV1 object, found {kind}"))
}

/// Reads one node: its children (None when it has none) and whether the node is a
/// member of its parent (`"."`, or a node with no children at all).
fn read_node(map: &Map<String, Value>) -> Result<(Option<FieldSet>, bool), FieldsV1Error> {
    let mut set: Option<FieldSet> = None;
    let mut is_member = false;
    for (key, v) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let Some(pe) = PathElement::from_fields_v1_key(key)? else {
            continue;
        };
        let (grandchildren, child_is_member) = match v {
            Value::Object(inner) => read_node(inner)?,
            // A null node reads as an empty one, as Go's reader allows.
            Value::Null => (None, true),
            other => return Err(not_an_object(other)),
        };
        let node = set.get_or_insert_with(FieldSet::new);
        if child_is_member {
            node.members.insert(pe.clone());
        }
        if let Some(g) = grandchildren.filter(|g| !g.is_empty()) {
            // A repeated key (`80` and `80.0`) keeps the last, as Kubernetes does.
            node.children.insert(pe, g);
        }
    }
    if set.is_none() {
        is_member = true;
    }
    Ok((set, is_member))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(n: &str) -> PathElement {
        PathElement::Field(n.to_string())
    }

    #[test]
    fn difference_is_exact_and_recursive_difference_is_not() {
        let parent = FieldSet::from_paths([Path::fields(&["a"])]);
        let child = FieldSet::from_paths([Path::fields(&["a", "b"])]);
        assert_eq!(parent.difference(&child), parent);
        assert_eq!(child.difference(&parent), child);
        assert!(child.recursive_difference(&parent).is_empty());
    }

    #[test]
    fn key_elements_sort_their_fields() {
        let pe = PathElement::key([("protocol", json!("TCP")), ("containerPort", json!(80))]);
        assert_eq!(
            pe.to_fields_v1_key(),
            r#"k:{"containerPort":80,"protocol":"TCP"}"#
        );
        assert_eq!(pe.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
    }

    #[test]
    fn member_and_parent_writes_dot_first() {
        let mut s = FieldSet::new();
        s.insert(&[f("spec")]);
        s.insert(&[f("spec"), f("replicas")]);
        s.insert(&[f("metadata"), f("labels"), f("app")]);
        assert_eq!(
            s.to_fields_v1_string(),
            r#"{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{".":{},"f:replicas":{}}}"#
        );
    }

    #[test]
    fn bad_keys_fail_and_unknown_kinds_are_dropped() {
        assert!(FieldSet::from_fields_v1(&json!({"x": {}})).is_err());
        assert!(FieldSet::from_fields_v1(&json!({"fa": {}})).is_err());
        assert!(FieldSet::from_fields_v1(&json!({"k:[1]": {}})).is_err());
        assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_err());
        let s = FieldSet::from_fields_v1(&json!({"z:zz": {}, "f:a": {}})).unwrap();
        assert_eq!(s.paths(), vec![Path::fields(&["a"])]);
    }
}
