//! Template data converted once for many executions. Go templates see JSON numbers as
//! float64s, objects as maps and so on, and converting is most of the cost of running a
//! small template over a large data set, so the conversion happens on first use, field
//! by field, and is shared between data sets built over a common part.
//!
//! Data can also be layered: one map of fields over another data set's, read as their
//! merge without the merge being built. Many data sets that differ in a few fields over
//! a large common one (each patch item's variables over the global variables) then
//! cost only their own fields.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::fields;
use crate::value;

/// Template data; see the module documentation.
#[derive(Debug)]
pub struct Data<'a> {
    root: Root<'a>,
    /// Data whose conversion this one shares where the two are equal (the lower layer
    /// of layered data).
    base: Option<&'a Data<'a>>,
    converted: OnceCell<value::Value>,
    /// Top-level fields converted one at a time, for templates that read only some.
    fields: RefCell<BTreeMap<&'a str, value::Value>>,
    /// Layered data as one document, built only for what reads the data whole.
    whole: OnceCell<Value>,
}

#[derive(Clone, Copy, Debug)]
enum Root<'a> {
    Json(&'a Value),
    /// `own`'s fields over the base's; a field named in `unions` that is an object in
    /// both layers is their union, `own`'s entries winning.
    Layered {
        own: &'a Map<String, Value>,
        unions: &'a [&'a str],
    },
}

/// A top-level field of the data: where it comes from, with its key.
enum Top<'a> {
    /// The field of one document: plain data, or the upper layer.
    Own(&'a str, &'a Value),
    /// Only the lower layer has it.
    Base(&'a str, &'a Value),
    /// Both layers have it as an object, and it is a union (upper, lower).
    Union(&'a str, &'a Map<String, Value>, &'a Map<String, Value>),
}

impl<'a> Data<'a> {
    /// Data for templates, converted from `json` when first needed.
    pub fn new(json: &'a Value) -> Data<'a> {
        Data::with_root(Root::Json(json), None)
    }

    /// Data for `json` that, when first needed, shares with `base` every part the two
    /// have in common, so many data sets built over one common part convert it once.
    pub fn sharing(json: &'a Value, base: &'a Data<'a>) -> Data<'a> {
        Data::with_root(Root::Json(json), Some(base))
    }

    /// Data that reads as `own`'s fields set over `base`'s (which must be a map),
    /// except that a field named in `unions` which is a map in both is their union,
    /// `own`'s entries winning. It reads as that merge would, converting only `own`'s
    /// fields: the rest is `base`'s conversion.
    pub fn layered(
        own: &'a Map<String, Value>,
        base: &'a Data<'a>,
        unions: &'a [&'a str],
    ) -> Data<'a> {
        Data::with_root(Root::Layered { own, unions }, Some(base))
    }

    fn with_root(root: Root<'a>, base: Option<&'a Data<'a>>) -> Data<'a> {
        Data {
            root,
            base,
            converted: OnceCell::new(),
            fields: RefCell::default(),
            whole: OnceCell::new(),
        }
    }

    /// The data as one JSON document (layered data merged, once).
    pub(crate) fn json(&self) -> &Value {
        match self.root {
            Root::Json(json) => json,
            Root::Layered { own, unions } => self.whole.get_or_init(|| {
                let mut merged = self.base_map().cloned().unwrap_or_default();
                for (name, value) in own {
                    match (merged.get_mut(name), value) {
                        (Some(Value::Object(lower)), Value::Object(upper))
                            if unions.contains(&name.as_str()) =>
                        {
                            lower.extend(upper.iter().map(|(k, v)| (k.clone(), v.clone())));
                        }
                        _ => {
                            merged.insert(name.clone(), value.clone());
                        }
                    }
                }
                Value::Object(merged)
            }),
        }
    }

    /// The lower layer's document, as a map.
    fn base_map(&self) -> Option<&'a Map<String, Value>> {
        let base: &'a Data<'a> = self.base?;
        base.json().as_object()
    }

    /// The top-level field `name`.
    fn top(&self, name: &str) -> Option<Top<'a>> {
        match self.root {
            Root::Json(json) => {
                let (key, value) = json.as_object()?.get_key_value(name)?;
                Some(Top::Own(key, value))
            }
            Root::Layered { own, unions } => {
                let lower = self.base_map().and_then(|b| b.get_key_value(name));
                match (own.get_key_value(name), lower) {
                    (Some((key, Value::Object(upper))), Some((_, Value::Object(lower))))
                        if unions.contains(&name) =>
                    {
                        Some(Top::Union(key, upper, lower))
                    }
                    (Some((key, value)), _) => Some(Top::Own(key, value)),
                    (None, Some((key, value))) => Some(Top::Base(key, value)),
                    (None, None) => None,
                }
            }
        }
    }

    /// The value at the field chain `path` (`None` when the chain meets a non-map).
    pub(crate) fn at(&self, path: &[String]) -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        let (value, rest) = match self.top(first)? {
            Top::Own(_, value) | Top::Base(_, value) => (value, rest),
            Top::Union(_, upper, lower) => {
                let (second, rest) = rest.split_first()?;
                (upper.get(second).or_else(|| lower.get(second))?, rest)
            }
        };
        rest.iter()
            .try_fold(value, |value, key| value.as_object()?.get(key))
    }

    pub(crate) fn converted(&self) -> &value::Value {
        self.converted.get_or_init(|| match self.base {
            Some(base) => {
                value::Value::from_json_sharing(self.json(), base.json(), base.converted())
            }
            None => value::Value::from_json(self.json()),
        })
    }

    /// Whether the data was converted whole already.
    pub(crate) fn converted_already(&self) -> Option<&value::Value> {
        self.converted.get()
    }

    /// The top-level field `name` of map data, converted as [`Data::converted`]
    /// converts it (sharing with the base where equal); `None` when absent.
    fn field(&self, name: &str) -> Option<value::Value> {
        let top = self.top(name)?;
        if let Some(value::Value::Map(map, _)) = self.converted.get() {
            return value::Value::map_get(map, name);
        }
        if let Some(converted) = self.fields.borrow().get(name) {
            return Some(converted.clone());
        }
        let lower = || {
            let base = self.base?;
            Some((base.json_field(name)?, base.field(name)?))
        };
        let (key, converted) = match top {
            Top::Own(key, json) => (
                key,
                match lower() {
                    Some((base_json, base)) => {
                        value::Value::from_json_field_sharing(json, base_json, &base)
                    }
                    None => value::Value::from_json_field(json),
                },
            ),
            Top::Base(key, _) => (key, self.base?.field(name)?),
            Top::Union(key, upper, lower_json) => match self.base?.field(name)? {
                value::Value::Map(lower, _) => {
                    (key, value::Value::union_field(upper, lower_json, &lower))
                }
                // Not a map's conversion (cut off by the depth limit): the merged field.
                _ => (key, value::Value::from_json_field(self.json_field(name)?)),
            },
        };
        self.fields.borrow_mut().insert(key, converted.clone());
        Some(converted)
    }

    /// The field `name` of the data as one document.
    fn json_field(&self, name: &str) -> Option<&Value> {
        self.json().as_object()?.get(name)
    }

    /// Map data with only what `fields` reads of it, converted; `None` for other data.
    pub(crate) fn only(&self, fields: &fields::Fields) -> Option<value::Value> {
        if let Root::Json(json) = self.root {
            json.as_object()?;
        }
        let mut converted = BTreeMap::new();
        for (name, reads) in fields {
            let value = match reads {
                // Fields read whole are kept for the next execution.
                fields::Reads::Whole => self.field(name),
                fields::Reads::Fields(some) => self.top(name).map(|top| match top {
                    Top::Own(_, child) | Top::Base(_, child) => {
                        value::Value::from_json_reading(child, some, 1)
                    }
                    Top::Union(_, upper, lower) => {
                        value::Value::from_json_reading_union(upper, lower, some, 1)
                    }
                }),
            };
            if let Some(value) = value {
                converted.insert(name.clone(), value);
            }
        }
        Some(value::Value::map(converted))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::{Options, Template};

    /// Templates that read data in each way [`Data`] serves it: plain chains, chains
    /// through maps (only some fields), whole fields, the whole data, and a template
    /// that changes its data.
    const TEMPLATES: &[&str] = &[
        "{{ .a }}-{{ .u.a }}-{{ .u.b.c }}",
        "{{ .u.b }}",
        "{{ .u }}",
        "{{ .b.a }} {{ if .c }}{{ .c.a }}{{ end }}",
        "{{ range $k, $v := .u }}{{ $k }}={{ $v }};{{ end }}",
        "{{ . }}",
        "{{ toJson . }}",
        "{{ $_ := set .u \"a\" \"changed\" }}{{ .u }}",
        "{{ .u.a }}{{ .a }}",
        "{{ .u.c.a }}",
    ];

    fn tree() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            "[a-c]{0,3}".prop_map(Value::from),
            any::<i16>().prop_map(Value::from),
            Just(Value::Null),
        ];
        leaf.prop_recursive(2, 12, 3, |inner| {
            prop::collection::btree_map("[abc]", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect()))
        })
    }

    /// A map of a few fields; mostly with `u`, the union field, as a map.
    fn map() -> impl Strategy<Value = Map<String, Value>> {
        let fields = prop::collection::btree_map("[abcu]", tree(), 0..4);
        let union = prop::collection::btree_map("[abc]", tree(), 0..4);
        (fields, prop::option::weighted(0.8, union)).prop_map(|(fields, union)| {
            let mut map: Map<String, Value> = fields.into_iter().collect();
            if let Some(union) = union {
                map.insert("u".into(), Value::Object(union.into_iter().collect()));
            }
            map
        })
    }

    /// What the layered data reads as: the merge, built.
    fn merged(lower: &Map<String, Value>, upper: &Map<String, Value>) -> Value {
        let mut merged = lower.clone();
        for (k, v) in upper {
            match (merged.get_mut(k), v) {
                (Some(Value::Object(l)), Value::Object(u)) if k == "u" => {
                    l.extend(u.iter().map(|(k, v)| (k.clone(), v.clone())))
                }
                _ => {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
        Value::Object(merged)
    }

    fn run_all(data: &Data<'_>, order: &[usize]) -> Vec<Result<String, String>> {
        let options = Options::patch();
        order
            .iter()
            .map(|i| {
                Template::parse("t", TEMPLATES[*i % TEMPLATES.len()], &options)
                    .map_err(|e| e.message)?
                    .execute_data(data)
                    .map_err(|e| e.message)
            })
            .collect()
    }

    #[test]
    fn a_union_reads_both_layers() {
        let lower = json!({"a": "A", "u": {"a": "lower", "b": {"c": "deep"}}});
        let Value::Object(upper) = json!({"u": {"a": "upper"}, "x": "X"}) else {
            unreachable!()
        };
        let base = Data::new(&lower);
        let layered = Data::layered(&upper, &base, &["u"]);
        let got = run_all(&layered, &[0, 9]);
        assert_eq!(got[0], Ok("A-upper-deep".to_string()));
        assert_eq!(got[1], Ok("<no value>".to_string()));
        assert_eq!(
            layered.json(),
            &json!({"a": "A", "x": "X", "u": {"a": "upper", "b": {"c": "deep"}}})
        );
    }

    proptest! {
        #[test]
        fn layered_data_reads_as_its_merge(
            lower in map(),
            upper in map(),
            order in prop::collection::vec(0..TEMPLATES.len(), 1..6),
            convert_lower_first in any::<bool>(),
        ) {
            let lower_json = Value::Object(lower.clone());
            let base = Data::new(&lower_json);
            if convert_lower_first {
                base.converted();
            }
            let merged = merged(&lower, &upper);
            let want = run_all(&Data::new(&merged), &order);
            let layered = Data::layered(&upper, &base, &["u"]);
            prop_assert_eq!(run_all(&layered, &order), want.clone());
            // The base is shared: a second layer over it reads the same.
            let again = Data::layered(&upper, &base, &["u"]);
            prop_assert_eq!(run_all(&again, &order), want);
        }
    }
}
