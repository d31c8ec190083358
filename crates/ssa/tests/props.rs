//! Properties of apply and of the FieldsV1 encoding over generated objects.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use topograph_ssa::{
    ApplyError, ApplyOptions, FieldSet, Path, PathElement, Schema, apply, apply_in_full,
    apply_with, fields_of, update, write_managed_fields,
};

const V: &str = "example.com/v1";

fn typed_schema() -> Schema {
    Schema::from_crd_schema(&json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "items": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {
                            "name": {"type": "string"},
                            "v": {"type": "string"},
                            "sub": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                        }}
                    }
                }
            }
        }
    }))
    .unwrap()
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![Just("a"), Just("b"), Just("c"), Just("d")].prop_map(str::to_string)
}

/// Any JSON, with few distinct keys and strings so that objects overlap.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..3).prop_map(|n| json!(n)),
        (-3i64..3).prop_map(|n| json!(n as f64 + 0.5)),
        word().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(word(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A spec that mostly fits the typed schema, with some values that do not.
fn spec() -> impl Strategy<Value = Value> {
    // Items are keyed by the map's keys below, so names never repeat.
    let item = (prop::option::of(word()), prop::option::of(any_json())).prop_map(|(v, sub)| {
        let mut m = Map::new();
        if let Some(v) = v {
            m.insert("v".into(), Value::String(v));
        }
        if let Some(sub) = sub {
            m.insert("sub".into(), sub);
        }
        Value::Object(m)
    });
    (
        prop::option::of(-3i64..3),
        prop::option::of(prop::collection::vec(word(), 0..3)),
        prop::option::of(prop::collection::btree_set(word(), 0..4)),
        prop::option::of(prop::collection::btree_map(word(), word(), 0..3)),
        prop::option::of(prop::collection::btree_map(word(), word(), 0..3)),
        prop::option::of(any_json()),
        prop::option::of(prop::collection::btree_map(word(), item, 0..4)),
    )
        .prop_map(|(n, args, tags, sel, labels, raw, items)| {
            let mut m = Map::new();
            if let Some(n) = n {
                m.insert("n".into(), json!(n));
            }
            if let Some(args) = args {
                m.insert("args".into(), json!(args));
            }
            if let Some(tags) = tags {
                m.insert("tags".into(), json!(tags));
            }
            if let Some(sel) = sel {
                m.insert("sel".into(), json!(sel));
            }
            if let Some(labels) = labels {
                m.insert("labels".into(), json!(labels));
            }
            if let Some(raw) = raw {
                m.insert("raw".into(), raw);
            }
            if let Some(items) = items {
                let items = items
                    .into_iter()
                    .map(|(name, mut item)| {
                        item["name"] = Value::String(name);
                        item
                    })
                    .collect();
                m.insert("items".into(), Value::Array(items));
            }
            Value::Object(m)
        })
}

fn object(spec: Value) -> Value {
    json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

fn schemas() -> impl Strategy<Value = Schema> {
    prop_oneof![Just(typed_schema()), Just(Schema::unknown())]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Applying the same intent twice changes nothing the second time, whatever the
    /// object held and whoever owned it.
    #[test]
    fn apply_is_idempotent(
        schema in schemas(),
        before in prop::option::of(spec()),
        other in spec(),
        intent in spec(),
        force in any::<bool>(),
    ) {
        let mut live = None;
        if let Some(before) = before {
            let b = apply(None, &object(before), "b", V, true, &schema, "2024-01-01T00:00:00Z").unwrap();
            let mut edited = b.object.clone();
            edited["spec"] = other;
            let managed = update(Some(&b.object), &edited, "u", V, &schema, "2024-01-01T00:00:01Z", None);
            write_managed_fields(&mut edited, &managed);
            live = Some(edited);
        }
        let first = match apply(live.as_ref(), &object(intent.clone()), "a", V, force, &schema, "2024-01-01T00:00:02Z") {
            Ok(a) => a,
            Err(ApplyError::Conflicts(_)) => return Ok(()),
            Err(e) => panic!("{e}"),
        };
        let second = apply(Some(&first.object), &object(intent), "a", V, force, &schema, "2024-01-01T00:00:03Z").unwrap();
        prop_assert!(!second.changed, "second apply changed {:#}", second.object);
        prop_assert_eq!(&second.object, &first.object);
    }

    /// An apply that its manager already owns with every value live takes a shortcut
    /// (no merge, prune or compare): it answers exactly what the full path answers,
    /// whatever happened to the object between the two applies.
    #[test]
    fn settled_applies_answer_as_in_full(
        schema in schemas(),
        before in prop::option::of(spec()),
        first in spec(),
        edit in prop::option::of((prop_oneof![spec(), any_json()], edit())),
        again in prop::option::of(spec()),
        ignore_n in any::<bool>(),
        force in any::<bool>(),
    ) {
        let mut live = None;
        if let Some(before) = before {
            live = Some(apply(None, &object(before), "b", V, true, &schema, "2024-01-01T00:00:00Z").unwrap().object);
        }
        let Ok(applied) = apply(live.as_ref(), &object(first.clone()), "a", V, true, &schema, "2024-01-01T00:00:01Z") else {
            return Ok(());
        };
        let mut live = applied.object;
        if let Some((edit, how)) = edit {
            let mut edited = live.clone();
            match how {
                Edit::Replace | Edit::ReplaceUnrecorded => edited["spec"] = edit,
                Edit::Add | Edit::AddUnrecorded => deep_merge(&mut edited["spec"], edit),
                Edit::Reorder | Edit::RepeatItem => {
                    if let Some(spec) = edited["spec"].as_object_mut() {
                        for list in spec.values_mut().filter_map(Value::as_array_mut) {
                            match (how, list.first().cloned()) {
                                (Edit::Reorder, _) => list.reverse(),
                                (_, Some(first)) => list.push(first),
                                _ => {}
                            }
                        }
                    }
                }
                Edit::EmptyEntry | Edit::EntryTwice => {
                    if let Some(entries) = edited["metadata"]["managedFields"].as_array_mut() {
                        let extra = match (how, entries.first()) {
                            (Edit::EmptyEntry, _) => Some(json!({"manager": "z", "operation": "Update",
                                "apiVersion": V, "fieldsType": "FieldsV1", "fieldsV1": {}})),
                            (_, first) => first.cloned(),
                        };
                        entries.extend(extra);
                    }
                }
            }
            if matches!(how, Edit::Replace | Edit::Add) {
                let managed = update(Some(&live), &edited, "u", V, &schema, "2024-01-01T00:00:02Z", None);
                write_managed_fields(&mut edited, &managed);
            }
            live = edited;
        }
        // Mostly the same configuration again, as a converged reconcile sends it.
        let intent = object(again.unwrap_or(first));
        let ignored = FieldSet::from_paths([Path::fields(&["spec", "n"])]);
        let options = ApplyOptions {
            manager: "a",
            api_version: V,
            force,
            schema: &schema,
            now: "2024-01-01T00:00:03Z",
            subresource: None,
            ignored: ignore_n.then_some(&ignored),
        };
        let quick = apply_with(Some(&live), &intent, &options);
        let full = apply_in_full(Some(&live), &intent, &options);
        prop_assert_eq!(quick, full);
    }

    /// Every field an intent sets is in the object the apply returns.
    #[test]
    fn applied_fields_are_in_the_result(
        schema in schemas(),
        before in spec(),
        intent in spec(),
    ) {
        let live = apply(None, &object(before), "b", V, true, &schema, "2024-01-01T00:00:00Z").unwrap();
        let intent = object(intent);
        let a = apply(Some(&live.object), &intent, "a", V, true, &schema, "2024-01-01T00:00:01Z").unwrap();
        let missing = fields_of(&intent, &schema).difference(&fields_of(&a.object, &schema));
        prop_assert!(missing.is_empty(), "missing {:?}", missing.paths());
        prop_assert_eq!(&a.managed.iter().find(|e| e.manager == "a").map(|e| e.fields.clone()).unwrap_or_default(), &fields_of(&intent, &schema));
    }

    /// Nothing panics on arbitrary JSON, whatever the schema.
    #[test]
    fn no_panics_on_arbitrary_json(
        schema in schemas(),
        live in any_json(),
        intent in any_json(),
        other in any_json(),
        force in any::<bool>(),
    ) {
        let mut intent = intent;
        if let Value::Object(m) = &mut intent {
            m.insert("apiVersion".into(), json!(V));
        }
        let _ = apply(Some(&live), &intent, "a", V, force, &schema, "now");
        let _ = apply(None, &intent, "a", V, force, &schema, "2024-01-01T00:00:00Z");
        let _ = update(Some(&live), &other, "u", V, &schema, "now", None);
        let _ = update(None, &live, "u", V, &schema, "now", Some("status"));
        let _ = fields_of(&live, &schema);
        let _ = FieldSet::from_fields_v1(&live);
        let _ = topograph_ssa::read_managed_fields(&json!({"metadata": {"managedFields": [live]}}));
    }

    /// Subtracting in place leaves what the copying difference gives.
    #[test]
    fn subtract_is_difference(
        a in prop::collection::vec(path(), 0..8),
        b in prop::collection::vec(path(), 0..8),
    ) {
        let (a, b) = (FieldSet::from_paths(a), FieldSet::from_paths(b));
        let mut in_place = a.clone();
        in_place.subtract(&b);
        prop_assert_eq!(&in_place, &a.difference(&b));
        let mut emptied = a.clone();
        emptied.subtract(&a);
        prop_assert!(emptied.is_empty());
    }

    /// FieldsV1 text reads back to the same set, and the set writes the same text.
    #[test]
    fn fields_v1_round_trips(paths in prop::collection::vec(path(), 0..8)) {
        let set = FieldSet::from_paths(paths);
        let text = set.to_fields_v1_string();
        let back = FieldSet::from_fields_v1_str(&text).unwrap();
        prop_assert_eq!(&back, &set);
        prop_assert_eq!(back.to_fields_v1_string(), text);
        prop_assert_eq!(FieldSet::from_fields_v1(&set.to_fields_v1()).unwrap(), set);
    }
}

/// What happens to an object between two applies of one manager.
#[derive(Clone, Copy, Debug)]
enum Edit {
    /// Another manager replaces the spec (an update, recorded in managed fields).
    Replace,
    /// Another manager adds to the spec.
    Add,
    /// Something replaces the spec with no manager recorded.
    ReplaceUnrecorded,
    /// Something adds to the spec with no manager recorded.
    AddUnrecorded,
    /// The spec's lists reversed, unrecorded.
    Reorder,
    /// Each of the spec's lists gets its first item again, unrecorded.
    RepeatItem,
    /// A client writes a managed-fields entry that owns nothing.
    EmptyEntry,
    /// A client writes the first managed-fields entry twice.
    EntryTwice,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        Just(Edit::Replace),
        Just(Edit::Add),
        Just(Edit::ReplaceUnrecorded),
        Just(Edit::AddUnrecorded),
        Just(Edit::Reorder),
        Just(Edit::RepeatItem),
        Just(Edit::EmptyEntry),
        Just(Edit::EntryTwice),
    ]
}

/// `patch` written over `target`: objects key by key, anything else replaced.
fn deep_merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                deep_merge(t.entry(k).or_insert(Value::Null), v);
            }
        }
        (t, p) => *t = p,
    }
}

fn element() -> impl Strategy<Value = PathElement> {
    prop_oneof![
        "[a-z<>&\" .:/]{0,6}".prop_map(PathElement::Field),
        (word(), -2i64..2)
            .prop_map(|(n, p)| PathElement::key([("name", json!(n)), ("port", json!(p))])),
        prop_oneof![
            word().prop_map(Value::String),
            (-2i64..2).prop_map(|n| json!(n)),
            any::<bool>().prop_map(Value::Bool),
            Just(json!(1.5)),
        ]
        .prop_map(PathElement::Value),
    ]
}

fn path() -> impl Strategy<Value = Path> {
    prop::collection::vec(element(), 1..4).prop_map(Path)
}
