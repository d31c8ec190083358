//! The unknown-field check: which fields structural pruning would drop from a value.
//! Cluster API reports them all in one error instead of dropping them.

use crate::schema::Schema;
use crate::value::Val;

/// The key the value is held under while pruning; it shows in paths of array values
/// (`variableValue[0].x`) because only `variableValue.` is stripped.
pub const HOLDER: &str = "variableValue";

/// Paths of the fields pruning would drop, sorted, relative to the value.
pub fn unknown_fields(value: &Val, schema: &Schema) -> Vec<String> {
    let mut found = Vec::new();
    prune(value, Some(schema), HOLDER, &mut found);
    let prefix = format!("{HOLDER}.");
    let mut out: Vec<String> = found
        .into_iter()
        .map(|p| p.strip_prefix(&prefix).map(str::to_string).unwrap_or(p))
        .collect();
    out.sort();
    out
}

fn prune(x: &Val, s: Option<&Schema>, path: &str, found: &mut Vec<String>) {
    if let Some(s) = s
        && s.preserve_unknown
    {
        skip_prune(x, s, path, found);
        return;
    }
    match x {
        Val::Obj(m) => {
            let Some(s) = s else {
                found.extend(m.keys().map(|k| format!("{path}.{k}")));
                return;
            };
            for (k, v) in m {
                let child = format!("{path}.{k}");
                if let Some(p) = s.properties.get(k) {
                    prune(v, Some(p), &child, found);
                } else if let Some(a) = &s.additional {
                    match a {
                        crate::schema::Additional::Schema(a) => prune(v, Some(a), &child, found),
                        // `additionalProperties: true` keeps the key and its content.
                        crate::schema::Additional::Allows(true) => {}
                        crate::schema::Additional::Allows(false) => found.push(child),
                    }
                } else {
                    found.push(child);
                }
            }
        }
        Val::Arr(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter().enumerate() {
                prune(v, item_schema, &format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}

/// Below `x-kubernetes-preserve-unknown-fields`: unknown keys stay, known ones are
/// still pruned by their own schemas.
fn skip_prune(x: &Val, s: &Schema, path: &str, found: &mut Vec<String>) {
    match x {
        Val::Obj(m) => {
            for (k, v) in m {
                let child = format!("{path}.{k}");
                if let Some(p) = s.properties.get(k) {
                    prune(v, Some(p), &child, found);
                } else if let Some(a) = s.additional_schema() {
                    prune(v, Some(a), &child, found);
                }
            }
        }
        Val::Arr(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter().enumerate() {
                    skip_prune(v, item_schema, &format!("{path}[{i}]"), found);
                }
            }
        }
        _ => {}
    }
}
