//! Go values as templates see them.
//!
//! Template data arrives as JSON and, as in Cluster API, is typed the way Go's
//! `encoding/json` decodes into `interface{}`: objects are `map[string]interface{}`,
//! arrays `[]interface{}`, numbers `float64`. Functions return their own Go types
//! (`int`, `int64`, `[]string`, `*semver.Version`, ...), and those types show in
//! output (`%T`, `typeOf`) and in error texts, so the value model keeps them apart.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Deref;
use std::rc::Rc;
use std::sync::Arc;

use crate::semver::Version;

/// Element type of a Go slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// `[]interface {}`
    Iface,
    /// `[]string`
    Str,
    /// `[]int`
    Int,
    /// `[][]interface {}`
    Lists,
}

/// Element type of a Go map (keys are always strings here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MapKind {
    /// `map[string]interface {}`
    Iface,
    /// `map[string]string`
    Str,
}

/// Deepest template data converted (JSON parsers stop far earlier by default).
pub(crate) const MAX_DATA_DEPTH: usize = 512;

/// A shared, mutable Go map.
pub(crate) type MapRef = Rc<RefCell<BTreeMap<String, Value>>>;

thread_local! {
    /// The vector behind every nil slice made on this thread (see [`Value::nil_list`]).
    static NIL_ITEMS: Rc<Vec<Value>> = Rc::new(Vec::new());
}

/// The text of a Go string. Strings from the data or built during evaluation are
/// `Rc`s; string literals of the template are the template's own `Arc`s, so passing
/// `"+"` to a function costs a reference count rather than an allocation (the parsed
/// template is shared between threads, hence not an `Rc`).
#[derive(Clone)]
pub(crate) enum Str {
    Local(Rc<str>),
    Literal(Arc<str>),
}

impl Deref for Str {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Str::Local(s) => s,
            Str::Literal(s) => s,
        }
    }
}

impl std::fmt::Debug for Str {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        **self == **other
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str::Local(s.into())
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str::Local(s.into())
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str::Local(s.as_str().into())
    }
}

impl From<Rc<str>> for Str {
    fn from(s: Rc<str>) -> Str {
        Str::Local(s)
    }
}

/// A Go value.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// Go's zero `reflect.Value`: a missing map entry, "no value".
    Invalid,
    /// A nil `interface{}` (JSON `null`, the literal `nil`).
    Nil,
    Bool(bool),
    /// Go `int`.
    Int(i64),
    /// Go `int64`.
    Int64(i64),
    /// Go `uint8` (a byte of a string).
    Uint8(u8),
    /// Go `uint64`.
    Uint64(u64),
    Float64(f64),
    /// Go `complex128` (only from literals such as `1i`).
    Complex(f64, f64),
    Str(Str),
    List(Rc<Vec<Value>>, ListKind),
    /// Go maps are references: `set`, `unset` and `merge` change them in place,
    /// visibly to every holder.
    Map(MapRef, MapKind),
    /// `*semver.Version`
    Version(Rc<Version>),
}

impl Value {
    pub(crate) fn str(s: impl Into<Str>) -> Value {
        Value::Str(s.into())
    }

    pub(crate) fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items), ListKind::Iface)
    }

    /// A nil slice (what `rest` of an empty list or `regexFindAll` without a match
    /// return). Go tells it from an empty slice only in `encoding/json` (`null`), `%#v`
    /// (`[]string(nil)`) and `reflect.DeepEqual`; everywhere else it is an empty slice.
    /// So it is one here, sharing one vector that marks it as nil: every operation
    /// that builds a new slice (`append`, ...) gives a non-nil one, as in Go.
    pub(crate) fn nil_list(kind: ListKind) -> Value {
        Value::List(NIL_ITEMS.with(Rc::clone), kind)
    }

    /// Whether this is a nil slice (see [`Value::nil_list`]).
    pub(crate) fn is_nil_list(&self) -> bool {
        match self {
            Value::List(items, _) => NIL_ITEMS.with(|nil| Rc::ptr_eq(items, nil)),
            _ => false,
        }
    }

    pub(crate) fn str_list(items: Vec<String>) -> Value {
        Value::List(
            Rc::new(items.into_iter().map(Value::str).collect()),
            ListKind::Str,
        )
    }

    pub(crate) fn map(m: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(RefCell::new(m)), MapKind::Iface)
    }

    /// A snapshot of a map's entries (Go iterates a sorted copy too).
    pub(crate) fn entries(m: &MapRef) -> Vec<(String, Value)> {
        m.try_borrow()
            .map(|b| b.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }

    /// One entry of a map.
    pub(crate) fn map_get(m: &MapRef, k: &str) -> Option<Value> {
        m.try_borrow().ok().and_then(|b| b.get(k).cloned())
    }

    /// Number of entries of a map.
    pub(crate) fn map_len(m: &MapRef) -> usize {
        m.try_borrow().map(|b| b.len()).unwrap_or(0)
    }

    /// Converts decoded JSON the way `encoding/json` fills an `interface{}`.
    /// Nesting beyond [`MAX_DATA_DEPTH`] is cut off (becomes nil) to keep the
    /// conversion's recursion bounded.
    pub(crate) fn from_json(v: &serde_json::Value) -> Value {
        Value::from_json_at(v, 0)
    }

    /// [`Value::from_json`] of a top-level field of the data (one level down, for the
    /// depth limit).
    pub(crate) fn from_json_field(v: &serde_json::Value) -> Value {
        Value::from_json_at(v, 1)
    }

    fn from_json_at(v: &serde_json::Value, depth: usize) -> Value {
        if depth > MAX_DATA_DEPTH {
            return Value::Nil;
        }
        match v {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Float64(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Value::str(s.as_str()),
            serde_json::Value::Array(a) => Value::list(
                a.iter()
                    .map(|x| Value::from_json_at(x, depth + 1))
                    .collect(),
            ),
            serde_json::Value::Object(o) => Value::map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json_at(v, depth + 1)))
                    .collect(),
            ),
        }
    }

    /// Like [`Value::from_json`], but parts equal to `base_json` reuse `base` (its
    /// conversion) instead of being converted again. Only for data that templates do
    /// not change in place: the parts are shared, not copied.
    pub(crate) fn from_json_sharing(
        v: &serde_json::Value,
        base_json: &serde_json::Value,
        base: &Value,
    ) -> Value {
        Value::from_json_sharing_at(v, base_json, base, 0)
    }

    /// Only what `fields` reads of `v` (at `depth` for the depth limit): a map keeps
    /// the entries read, each converted whole or only as far as read; any other value
    /// is converted whole.
    pub(crate) fn from_json_reading(
        v: &serde_json::Value,
        fields: &crate::fields::Fields,
        depth: usize,
    ) -> Value {
        if depth > MAX_DATA_DEPTH {
            return Value::Nil;
        }
        let serde_json::Value::Object(o) = v else {
            return Value::from_json_at(v, depth);
        };
        Value::reading_children(|k| o.get(k), fields, depth)
    }

    /// [`Value::from_json_reading`] of the union of two maps (`upper`'s entries
    /// winning), without building the union.
    pub(crate) fn from_json_reading_union(
        upper: &serde_json::Map<String, serde_json::Value>,
        lower: &serde_json::Map<String, serde_json::Value>,
        fields: &crate::fields::Fields,
        depth: usize,
    ) -> Value {
        if depth > MAX_DATA_DEPTH {
            return Value::Nil;
        }
        Value::reading_children(|k| upper.get(k).or_else(|| lower.get(k)), fields, depth)
    }

    /// The map of what `fields` reads of a map at `depth` whose entries `child` gives.
    fn reading_children<'j>(
        child: impl Fn(&str) -> Option<&'j serde_json::Value>,
        fields: &crate::fields::Fields,
        depth: usize,
    ) -> Value {
        Value::map(
            fields
                .iter()
                .filter_map(|(k, reads)| {
                    let child = child(k)?;
                    let converted = match reads {
                        crate::fields::Reads::Whole => Value::from_json_at(child, depth + 1),
                        crate::fields::Reads::Fields(some) => {
                            Value::from_json_reading(child, some, depth + 1)
                        }
                    };
                    Some((k.clone(), converted))
                })
                .collect(),
        )
    }

    /// A top-level field of the data that is the union of two maps (`upper`'s entries
    /// winning), converted as [`Value::from_json_field_sharing`] converts the union
    /// against `lower_json` (whose conversion is `lower`). `lower`'s entries that the
    /// union keeps are shared; `upper`'s are converted, sharing where equal to `lower`'s.
    pub(crate) fn union_field(
        upper: &serde_json::Map<String, serde_json::Value>,
        lower_json: &serde_json::Map<String, serde_json::Value>,
        lower: &MapRef,
    ) -> Value {
        let depth = 1;
        let mut entries = lower.try_borrow().map(|m| m.clone()).unwrap_or_default();
        for (k, child) in upper {
            let converted = match (lower_json.get(k), entries.get(k)) {
                (Some(bj), Some(bv)) => Value::from_json_sharing_at(child, bj, bv, depth + 1),
                _ => Value::from_json_at(child, depth + 1),
            };
            entries.insert(k.clone(), converted);
        }
        Value::map(entries)
    }

    /// [`Value::from_json_sharing`] of a top-level field of the data.
    pub(crate) fn from_json_field_sharing(
        v: &serde_json::Value,
        base_json: &serde_json::Value,
        base: &Value,
    ) -> Value {
        Value::from_json_sharing_at(v, base_json, base, 1)
    }

    fn from_json_sharing_at(
        v: &serde_json::Value,
        base_json: &serde_json::Value,
        base: &Value,
        depth: usize,
    ) -> Value {
        if depth > MAX_DATA_DEPTH {
            return Value::Nil;
        }
        if v == base_json {
            return base.clone();
        }
        match (v, base_json, base) {
            (serde_json::Value::Object(o), serde_json::Value::Object(bo), Value::Map(bm, _)) => {
                Value::map(
                    o.iter()
                        .map(|(k, child)| {
                            let converted = match (bo.get(k), Value::map_get(bm, k)) {
                                (Some(bj), Some(bv)) => {
                                    Value::from_json_sharing_at(child, bj, &bv, depth + 1)
                                }
                                _ => Value::from_json_at(child, depth + 1),
                            };
                            (k.clone(), converted)
                        })
                        .collect(),
                )
            }
            _ => Value::from_json_at(v, depth),
        }
    }

    /// Go's type name (`%T`, `typeOf`).
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Invalid | Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint8(_) => "uint8",
            Value::Uint64(_) => "uint64",
            Value::Float64(_) => "float64",
            Value::Complex(..) => "complex128",
            Value::Str(_) => "string",
            Value::List(_, k) => match k {
                ListKind::Iface => "[]interface {}",
                ListKind::Str => "[]string",
                ListKind::Int => "[]int",
                ListKind::Lists => "[][]interface {}",
            },
            Value::Map(_, k) => match k {
                MapKind::Iface => "map[string]interface {}",
                MapKind::Str => "map[string]string",
            },
            Value::Version(_) => "*semver.Version",
        }
    }

    /// Go's `reflect.Kind` name (`kindOf`).
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Value::Invalid | Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint8(_) => "uint8",
            Value::Uint64(_) => "uint64",
            Value::Float64(_) => "float64",
            Value::Complex(..) => "complex128",
            Value::Str(_) => "string",
            Value::List(..) => "slice",
            Value::Map(..) => "map",
            Value::Version(_) => "ptr",
        }
    }

    /// Go template truth: false, 0, nil, and empty strings, slices and maps are false.
    pub(crate) fn truth(&self) -> bool {
        match self {
            Value::Invalid | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint8(u) => *u != 0,
            Value::Uint64(u) => *u != 0,
            Value::Float64(f) => *f != 0.0,
            Value::Complex(r, i) => *r != 0.0 || *i != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l, _) => !l.is_empty(),
            Value::Map(m, _) => Value::map_len(m) > 0,
            Value::Version(_) => true,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_nil(&self) -> bool {
        matches!(self, Value::Nil | Value::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_numbers_are_float64() {
        let v = Value::from_json(&serde_json::json!({"n": 3, "l": [1, "a", null]}));
        let Value::Map(m, MapKind::Iface) = v else {
            panic!("not a map")
        };
        assert!(matches!(Value::map_get(&m, "n"), Some(Value::Float64(f)) if f == 3.0));
        assert_eq!(
            Value::map_get(&m, "l").as_ref().map(Value::type_name),
            Some("[]interface {}")
        );
    }

    #[test]
    fn truthiness_follows_go() {
        assert!(!Value::str("").truth());
        assert!(Value::Float64(0.5).truth());
        assert!(!Value::list(vec![]).truth());
        assert!(!Value::Nil.truth());
    }
}
