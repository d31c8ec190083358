//! What the merge needs to know about an object's type: for every path, whether a
//! map is granular or atomic and which of its keys are named fields, and whether a
//! list is atomic, a set, or a map keyed by some of its items' fields.
//!
//! The model is structured-merge-diff's: a map type has named `fields` (a CRD's
//! `properties`, or a struct's fields) and an element type for its other keys
//! (`additionalProperties`); named fields matter because a map key that is *not* a
//! named field is owned as a node of its own (`f:labels` entries are leaves, but an
//! entry of an untyped map is a member even when it is itself a map). `Deduced` is the
//! type of `x-kubernetes-preserve-unknown-fields` and of objects with no schema: maps
//! granular, lists atomic. [`Schema::from_crd_schema`] reads a CRD's
//! `openAPIV3Schema` the way kube-apiserver's converter does for structural schemas,
//! with `metadata` typed as `ObjectMeta` (labels, annotations granular; finalizers a
//! set; ownerReferences a map keyed by `uid`).

use std::collections::BTreeMap;

use serde_json::Value;

/// The type of one node of an object.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// A leaf: string, number, boolean, int-or-string.
    Scalar,
    /// Anything, owned and replaced whole (a schema of `{}`).
    Atomic,
    /// Decided by the value: maps granular with deduced values, lists atomic.
    Deduced,
    /// A map or object.
    Map(MapType),
    /// A list.
    List(ListType),
}

/// A map or object type.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MapType {
    /// Named fields (`properties`).
    pub fields: BTreeMap<String, Type>,
    /// The type of keys that are not named fields (`additionalProperties`,
    /// `x-kubernetes-preserve-unknown-fields`); `None` reads them as [`Type::Deduced`].
    pub elements: Option<Box<Type>>,
    /// `x-kubernetes-map-type: atomic`: owned and replaced whole.
    pub atomic: bool,
}

/// A list type.
#[derive(Clone, Debug, PartialEq)]
pub struct ListType {
    /// The type of the items.
    pub items: Box<Type>,
    /// How the list merges.
    pub kind: ListKind,
}

/// How a list merges (`x-kubernetes-list-type`).
#[derive(Clone, Debug, PartialEq)]
pub enum ListKind {
    /// Replaced whole; the default.
    Atomic,
    /// A set of scalars, merged by value.
    Set,
    /// A list of objects merged by these key fields (`x-kubernetes-list-map-keys`);
    /// `defaults` are the key fields' schema defaults, used when an item omits one.
    Map {
        /// The key fields, in schema order.
        keys: Vec<String>,
        /// Defaults of key fields, by name.
        defaults: BTreeMap<String, Value>,
    },
}

pub(crate) static DEDUCED: Type = Type::Deduced;
pub(crate) static ATOMIC: Type = Type::Atomic;

impl Type {
    /// The type of the map key `name` under this type, and whether it is a named field.
    pub(crate) fn field(&self, name: &str) -> (&Type, bool) {
        match self {
            Type::Map(m) => match m.fields.get(name) {
                Some(t) => (t, true),
                None => (m.elements.as_deref().unwrap_or(&DEDUCED), false),
            },
            Type::Deduced => (&DEDUCED, false),
            _ => (&ATOMIC, false),
        }
    }

    /// The type of the items of a list of this type.
    pub(crate) fn items(&self) -> &Type {
        match self {
            Type::List(l) => &l.items,
            _ => &ATOMIC,
        }
    }
}

/// An error in a CRD schema that keeps it from being read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SchemaError {
    /// Where in the schema, e.g. `.properties.spec.items`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The type of a whole object.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    root: Type,
}

impl Schema {
    /// No hints: every map granular, every list atomic (structured-merge-diff's
    /// deduced type, which kube-apiserver uses for objects without a schema).
    pub fn unknown() -> Schema {
        Schema {
            root: Type::Deduced,
        }
    }

    /// A schema from a root type, as built by hand.
    pub fn from_type(root: Type) -> Schema {
        Schema { root }
    }

    /// The root type.
    pub fn root(&self) -> &Type {
        &self.root
    }

    /// Reads a CRD version's `openAPIV3Schema`. `apiVersion` and `kind` are scalars
    /// and `metadata` is `ObjectMeta` whatever the schema says, as for kube-apiserver;
    /// keys the schema does not name are read as deduced rather than refused.
    pub fn from_crd_schema(open_api_v3_schema: &Value) -> Result<Schema, SchemaError> {
        let mut root = match convert(open_api_v3_schema, "")? {
            Type::Map(m) => m,
            _ => MapType::default(),
        };
        root.atomic = false;
        root.fields.insert("apiVersion".to_string(), Type::Scalar);
        root.fields.insert("kind".to_string(), Type::Scalar);
        root.fields.insert("metadata".to_string(), object_meta());
        Ok(Schema {
            root: Type::Map(root),
        })
    }

    /// Reads the schema of one version of a CustomResourceDefinition object
    /// (`spec.versions[name=version].schema.openAPIV3Schema`, or the older
    /// `spec.validation.openAPIV3Schema`).
    pub fn from_crd(crd: &Value, version: &str) -> Result<Schema, SchemaError> {
        let spec = crd.get("spec");
        let per_version = spec
            .and_then(|s| s.get("versions"))
            .and_then(Value::as_array)
            .and_then(|vs| {
                vs.iter()
                    .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
            })
            .and_then(|v| v.pointer("/schema/openAPIV3Schema"));
        let schema =
            per_version.or_else(|| spec.and_then(|s| s.pointer("/validation/openAPIV3Schema")));
        match schema {
            Some(s) => Schema::from_crd_schema(s),
            None => Err(SchemaError {
                path: ".spec.versions".to_string(),
                message: format!("no openAPIV3Schema for version {version:?}"),
            }),
        }
    }
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool).unwrap_or(false)
}

fn convert(schema: &Value, at: &str) -> Result<Type, SchemaError> {
    let err = |message: &str| SchemaError {
        path: if at.is_empty() {
            ".".to_string()
        } else {
            at.to_string()
        },
        message: message.to_string(),
    };
    let Value::Object(s) = schema else {
        return Err(err("a schema must be an object"));
    };
    if flag(schema, "x-kubernetes-int-or-string") {
        return Ok(Type::Scalar);
    }
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    let ty = s.get("type").and_then(Value::as_str);
    let is_object = ty == Some("object")
        || (ty.is_none()
            && (s.contains_key("properties") || s.contains_key("additionalProperties")));
    let is_array = ty == Some("array") || (ty.is_none() && s.contains_key("items"));
    if is_object {
        let mut m = MapType {
            atomic: s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic"),
            ..MapType::default()
        };
        if let Some(props) = s.get("properties") {
            let Value::Object(props) = props else {
                return Err(err("properties must be an object"));
            };
            for (name, sub) in props {
                m.fields.insert(
                    name.clone(),
                    convert(sub, &format!("{at}.properties.{name}"))?,
                );
            }
        }
        match s.get("additionalProperties") {
            Some(Value::Bool(true)) => m.elements = Some(Box::new(Type::Deduced)),
            Some(sub @ Value::Object(_)) => {
                m.elements = Some(Box::new(convert(
                    sub,
                    &format!("{at}.additionalProperties"),
                )?))
            }
            _ if preserve => m.elements = Some(Box::new(Type::Deduced)),
            _ => {}
        }
        return Ok(Type::Map(m));
    }
    if is_array {
        let items = match s.get("items") {
            Some(sub) => convert(sub, &format!("{at}.items"))?,
            None => Type::Atomic,
        };
        let kind = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => ListKind::Set,
            Some("map") => {
                let keys: Vec<String> = s
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|ks| {
                        ks.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                if keys.is_empty() {
                    // kube-apiserver refuses such a CRD; merging it whole is the safe reading.
                    ListKind::Atomic
                } else {
                    let defaults = keys
                        .iter()
                        .filter_map(|k| {
                            let d = s.get("items")?.get("properties")?.get(k)?.get("default")?;
                            Some((k.clone(), d.clone()))
                        })
                        .collect();
                    ListKind::Map { keys, defaults }
                }
            }
            _ => ListKind::Atomic,
        };
        return Ok(Type::List(ListType {
            items: Box::new(items),
            kind,
        }));
    }
    match ty {
        Some("string" | "integer" | "number" | "boolean") => Ok(Type::Scalar),
        Some(other) if !preserve => Err(err(&format!("unknown type {other:?}"))),
        _ if preserve => Ok(Type::Deduced),
        _ => Ok(Type::Atomic),
    }
}

fn string_map() -> Type {
    Type::Map(MapType {
        elements: Some(Box::new(Type::Scalar)),
        ..MapType::default()
    })
}

fn struct_of(fields: &[(&str, Type)]) -> Type {
    Type::Map(MapType {
        fields: fields
            .iter()
            .map(|(n, t)| ((*n).to_string(), t.clone()))
            .collect(),
        ..MapType::default()
    })
}

/// `metav1.ObjectMeta` as kube-apiserver's schema has it.
pub fn object_meta() -> Type {
    let owner_reference = struct_of(&[
        ("apiVersion", Type::Scalar),
        ("kind", Type::Scalar),
        ("name", Type::Scalar),
        ("uid", Type::Scalar),
        ("controller", Type::Scalar),
        ("blockOwnerDeletion", Type::Scalar),
    ]);
    let scalars = [
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ];
    let mut fields: Vec<(&str, Type)> = scalars.iter().map(|n| (*n, Type::Scalar)).collect();
    fields.push(("labels", string_map()));
    fields.push(("annotations", string_map()));
    fields.push((
        "ownerReferences",
        Type::List(ListType {
            items: Box::new(owner_reference),
            kind: ListKind::Map {
                keys: vec!["uid".to_string()],
                defaults: BTreeMap::new(),
            },
        }),
    ));
    fields.push((
        "finalizers",
        Type::List(ListType {
            items: Box::new(Type::Scalar),
            kind: ListKind::Set,
        }),
    ));
    fields.push((
        "managedFields",
        Type::List(ListType {
            items: Box::new(Type::Atomic),
            kind: ListKind::Atomic,
        }),
    ));
    struct_of(&fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_list_and_map_hints() {
        let s = Schema::from_crd_schema(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                            "items": {"type": "object", "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"}
                            }}
                        },
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
                        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "any": {}
                    }
                }
            }
        }))
        .unwrap();
        let (spec, named) = s.root().field("spec");
        assert!(named);
        match spec.field("ports").0 {
            Type::List(ListType {
                kind: ListKind::Map { keys, defaults },
                ..
            }) => {
                assert_eq!(keys, &["port", "protocol"]);
                assert_eq!(defaults.get("protocol"), Some(&json!("TCP")));
            }
            other => panic!("ports: {other:?}"),
        }
        assert!(matches!(
            spec.field("tags").0,
            Type::List(ListType {
                kind: ListKind::Set,
                ..
            })
        ));
        assert!(matches!(
            spec.field("sel").0,
            Type::Map(MapType { atomic: true, .. })
        ));
        assert_eq!(spec.field("raw").0.field("x"), (&Type::Deduced, false));
        assert_eq!(spec.field("any").0, &Type::Atomic);
        assert!(matches!(s.root().field("metadata").0, Type::Map(_)));
    }
}
