//! Validation ratcheting of custom-resource updates, as kube-apiserver has done by
//! default since Kubernetes 1.30 (`CRDValidationRatcheting`, stable in 1.33): a part
//! of the object that an update leaves as it was is not held to the schema again, so
//! an object stored before its CRD tightened a rule can still be updated elsewhere.
//!
//! kube-apiserver pairs each node of the new object with the old value at the same
//! place (a property with the old object's property of that name, when the schema
//! names the property or gives additional properties a schema) and drops every
//! OpenAPI error of a node whose new value equals its old one, and the errors of the
//! CEL rules on it that do not read `oldSelf`.
//!
//! Where this rendition is stricter: list items are never paired with old ones
//! (kube-apiserver pairs the items of `x-kubernetes-list-type: map` lists by their
//! keys), and a list is unchanged only item for item in order, each item judged as
//! an object node is. So it only ever drops errors kube-apiserver drops too.
//!
//! Not holding unchanged parts to the schema again is also what makes updates cheap:
//! a status report or a replica count skips validating the rest of the object.

use crate::schema::Schema;
use crate::value::Val;

/// Whether `new` is, for ratcheting, the same as `old` at a node of schema `s`:
/// equal scalars, lists of the same unchanged items in order, or objects with the
/// same keys whose values are unchanged, each key paired through the schema (a key
/// the schema does not pair, kept only by `x-kubernetes-preserve-unknown-fields`,
/// makes the object changed, as it makes kube-apiserver's comparison fail).
pub(crate) fn unchanged(s: &Schema, new: &Val, old: &Val) -> bool {
    match (new, old) {
        (Val::Obj(n), Val::Obj(o)) => {
            n.len() == o.len()
                && n.iter()
                    .all(|(key, value)| match (o.get(key), paired_schema(s, key)) {
                        (Some(was), Some(child)) => unchanged(child, value, was),
                        _ => false,
                    })
        }
        (Val::Arr(n), Val::Arr(o)) => {
            n.len() == o.len()
                && s.items
                    .as_deref()
                    .is_some_and(|items| n.iter().zip(o).all(|(a, b)| unchanged(items, a, b)))
        }
        (Val::Obj(_) | Val::Arr(_), _) | (_, Val::Obj(_) | Val::Arr(_)) => false,
        _ => new == old,
    }
}

/// The old value paired with property `key` of a node of schema `s` whose old value
/// is `old`: the old object's value of that key, when the schema pairs the key.
pub(crate) fn paired<'a>(s: &Schema, old: Option<&'a Val>, key: &str) -> Option<&'a Val> {
    match old {
        Some(Val::Obj(o)) if paired_schema(s, key).is_some() => o.get(key),
        _ => None,
    }
}

/// The schema kube-apiserver pairs a property's old and new values under: the
/// property's own, else that of additional properties.
fn paired_schema<'a>(s: &'a Schema, key: &str) -> Option<&'a Schema> {
    s.properties.get(key).or_else(|| s.additional_schema())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::from_serde;
    use serde_json::json;

    fn schema(v: serde_json::Value) -> Schema {
        let json = crate::json::parse(&v.to_string()).unwrap_or_else(|_| panic!("JSON: {v}"));
        crate::crd::read(Some(&json)).unwrap_or_else(|_| panic!("a CRD schema: {v}"))
    }

    #[test]
    fn what_counts_as_unchanged() {
        let s = schema(json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "loose": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        }}));
        let cases = [
            (json!({"name": "a"}), json!({"name": "a"}), true),
            (json!({"name": "a"}), json!({"name": "b"}), false),
            (
                json!({"name": "a"}),
                json!({"name": "a", "count": 1}),
                false,
            ),
            (json!({"count": 1}), json!({"count": 1}), true),
            // Decoded as Kubernetes decodes: 1 and 1.0 are an int64 and a float64.
            (json!({"ratio": 1}), json!({"ratio": 1.0}), false),
            (
                json!({"tags": ["x", "y"]}),
                json!({"tags": ["x", "y"]}),
                true,
            ),
            (
                json!({"tags": ["y", "x"]}),
                json!({"tags": ["x", "y"]}),
                false,
            ),
            (
                json!({"labels": {"k": "v"}}),
                json!({"labels": {"k": "v"}}),
                true,
            ),
            (
                json!({"labels": {"k": "v"}}),
                json!({"labels": {"k": "w"}}),
                false,
            ),
            // Keys only preservation keeps are not paired: never unchanged.
            (
                json!({"loose": {"x": 1}}),
                json!({"loose": {"x": 1}}),
                false,
            ),
            (json!({"loose": {}}), json!({"loose": {}}), true),
            (json!({"name": null}), json!({"name": null}), true),
            (json!({"name": null}), json!({"name": "a"}), false),
            (json!({"tags": []}), json!({"tags": {}}), false),
        ];
        for (new, old, want) in cases {
            assert_eq!(
                unchanged(&s, &from_serde(&new), &from_serde(&old)),
                want,
                "{new} against {old}"
            );
        }
    }

    #[test]
    fn only_properties_the_schema_pairs_have_an_old_value() {
        let s = schema(json!({"type": "object",
            "properties": {"a": {"type": "string"}},
        }));
        let old = from_serde(&json!({"a": "x", "b": "y"}));
        assert_eq!(paired(&s, Some(&old), "a"), Some(&Val::Str("x".into())));
        assert_eq!(paired(&s, Some(&old), "b"), None);
        assert_eq!(paired(&s, Some(&Val::Str("x".into())), "a"), None);
        assert_eq!(paired(&s, None, "a"), None);
        let map = schema(json!({"type": "object", "additionalProperties": {"type": "string"}}));
        assert_eq!(paired(&map, Some(&old), "b"), Some(&Val::Str("y".into())));
    }
}
