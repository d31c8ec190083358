//! Structural defaulting: missing properties (and non-nullable nulls) get their
//! schema's default, in objects, in maps (`additionalProperties`) and in array items;
//! defaults are defaulted in turn.

use crate::schema::Schema;
use crate::value::Val;

/// Defaults `x` in place against `s`.
pub fn apply(x: &mut Val, s: &Schema) {
    match x {
        Val::Obj(m) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else {
                    continue;
                };
                let missing = match m.get(k) {
                    None => true,
                    Some(v) => is_non_nullable_null(v, Some(prop)),
                };
                if missing {
                    m.insert(k.clone(), d.clone());
                }
            }
            let additional = s.additional_schema();
            for (k, v) in m.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    apply(v, prop);
                } else if let Some(a) = additional {
                    if is_non_nullable_null(v, Some(a)) {
                        *v = a.default.clone().unwrap_or(Val::Null);
                    }
                    apply(v, a);
                }
            }
        }
        Val::Arr(items) => {
            let Some(item_schema) = s.items.as_deref() else {
                return;
            };
            for v in items.iter_mut() {
                if is_non_nullable_null(v, Some(item_schema)) {
                    *v = item_schema.default.clone().unwrap_or(Val::Null);
                }
                apply(v, item_schema);
            }
        }
        _ => {}
    }
}

fn is_non_nullable_null(v: &Val, s: Option<&Schema>) -> bool {
    matches!(v, Val::Null) && s.is_some_and(|s| !s.nullable)
}

/// Defaults a top-level variable value: an absent or null value takes the schema's
/// own default first.
pub fn apply_top(value: Option<Val>, s: &Schema) -> Val {
    let mut v = match value {
        None | Some(Val::Null) => s.default.clone().unwrap_or(Val::Null),
        Some(v) => v,
    };
    apply(&mut v, s);
    v
}
