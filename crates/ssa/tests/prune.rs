//! Pruning a parent the applier stops applying keeps what other managers own under
//! it (structured-merge-diff's `prune`: remove the last applied set, add back every
//! item some manager still owns with its parents, then the dangling items).

use serde_json::{Value, json};
use topograph_ssa::{Schema, apply, read_managed_fields, update, write_managed_fields};

const V: &str = "example.com/v1";
const T0: &str = "2024-05-01T10:00:00Z";
const T1: &str = "2024-05-01T11:00:00Z";
const T2: &str = "2024-05-01T12:00:00Z";

fn crd_schema() -> Schema {
    Schema::from_crd_schema(&json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "keep": {"type": "string"},
                    "m": {"type": "object", "additionalProperties": {"type": "string"}},
                    "s": {
                        "type": "object",
                        "properties": {"a": {"type": "string"}, "b": {"type": "string"}}
                    }
                }
            }
        }
    }))
    .unwrap()
}

fn schemas() -> Vec<(&'static str, Schema)> {
    vec![("untyped", Schema::unknown()), ("crd", crd_schema())]
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": spec})
}

fn entry_fields(object: &Value, manager: &str) -> String {
    read_managed_fields(object)
        .unwrap()
        .into_iter()
        .find(|e| e.manager == manager)
        .map(|e| e.fields.to_fields_v1_string())
        .unwrap_or_default()
}

/// A applies `first`, B updates `spec.<parent>.b = "2"` when `b_writes`, then A
/// applies `{spec: {keep: "x"}}`; returns the final object.
fn scenario(schema: &Schema, parent: &str, b_writes: bool) -> Value {
    let a = apply(
        None,
        &obj(json!({parent: {"a": "1"}, "keep": "x"})),
        "a",
        V,
        false,
        schema,
        T0,
    )
    .unwrap();
    let mut live = a.object;
    if b_writes {
        let mut edited = live.clone();
        edited["spec"][parent]["b"] = json!("2");
        let managed = update(Some(&live), &edited, "b", V, schema, T1, None);
        write_managed_fields(&mut edited, &managed);
        live = edited;
    }
    apply(
        Some(&live),
        &obj(json!({"keep": "x"})),
        "a",
        V,
        false,
        schema,
        T2,
    )
    .unwrap()
    .object
}

#[test]
fn released_map_keeps_the_children_another_manager_owns() {
    for (name, schema) in schemas() {
        let out = scenario(&schema, "m", true);
        assert_eq!(out["spec"], json!({"m": {"b": "2"}, "keep": "x"}), "{name}");
        let a = entry_fields(&out, "a");
        assert!(!a.contains("f:m"), "{name}: a still owns m: {a}");
        assert!(entry_fields(&out, "b").contains(r#""f:b""#), "{name}");
    }
}

#[test]
fn released_map_nobody_else_owns_is_removed() {
    for (name, schema) in schemas() {
        let out = scenario(&schema, "m", false);
        assert_eq!(out["spec"], json!({"keep": "x"}), "{name}");
    }
}

#[test]
fn released_struct_keeps_the_fields_another_manager_owns() {
    let schema = crd_schema();
    let out = scenario(&schema, "s", true);
    assert_eq!(out["spec"], json!({"s": {"b": "2"}, "keep": "x"}));
    let out = scenario(&schema, "s", false);
    assert_eq!(out["spec"], json!({"keep": "x"}));
}
