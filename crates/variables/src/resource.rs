//! A custom resource against its CRD version's `openAPIV3Schema`, step by step as
//! kube-apiserver takes a write: pruning of the fields the schema does not know (the
//! resource root keeps `apiVersion`, `kind` and `metadata`, as embedded resources do),
//! removal of non-nullable nulls that have no default, structural defaulting, then
//! OpenAPI validation and the `x-kubernetes-validations` rules. Pruning and defaulting
//! work on the `serde_json` object in place, so the parts they leave alone keep their
//! exact representation; validation reads the object as Kubernetes decodes it.
//!
//! An update is validated with kube-apiserver's ratcheting ([`crate::ratchet`]): the
//! parts it leaves unchanged are not held to the schema again.
//!
//! What this module does not know about: `metadata` beyond "keep it" (the caller
//! coerces it to `ObjectMeta`), list-type (`map`/`set`) invariants, and CEL cost
//! budgets.

use serde_json::{Map, Value};
use topograph_api::field::{ErrorType, FieldError};

use crate::schema::{Additional, Schema};
use crate::value::{self, Val};

/// The keys an embedded resource (and the resource root) keeps whatever its schema says.
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// The text kube-apiserver adds when OpenAPI errors keep it from running CEL rules.
pub const RULES_NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// One served version's schema, read once when its CRD is accepted.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceSchema {
    root: Schema,
    /// The root as CEL rules on it see `self`, when any `x-kubernetes-validations`
    /// rule is declared (known once, as every write asks and the schemas of Cluster
    /// API's kinds are large trees to walk): with `apiVersion`, `kind` and
    /// `metadata.{name,generateName}` typed, as kube-apiserver's
    /// `WithTypeAndObjectMeta` does for the resource root. A copy of the whole tree,
    /// so not kept for the schemas that have no rules (most of a management cluster's).
    cel_root: Option<Schema>,
}

impl ResourceSchema {
    /// Reads an `apiextensions.k8s.io/v1` `openAPIV3Schema`; `Err` (Go's decoding error,
    /// or why the schema cannot be used) when it is not one the validator can use.
    pub fn read(open_api_v3_schema: &Value) -> Result<Self, String> {
        let j = crate::json::from_serde(open_api_v3_schema);
        use crate::crd::Unusable;
        let root = crate::crd::read(Some(&j)).map_err(|u| match u {
            Unusable::Decode(e) | Unusable::Conversion(e) | Unusable::BadReference(e) => e,
            Unusable::Reference(r) => format!("schema references are not supported: {r}"),
        })?;
        // A structural schema is an object at the root; kube-apiserver refuses a CRD
        // whose schema is not, so there is no behaviour to copy for one.
        if root.type_ != "object" {
            return Err(format!(
                "type: must be object at the root, not {:?}",
                root.type_
            ));
        }
        let cel_root = root.has_rules().then(|| with_type_and_object_meta(&root));
        Ok(ResourceSchema { root, cel_root })
    }

    /// Whether any object is kept as sent and valid (`x-kubernetes-preserve-unknown-fields`
    /// at an `object` root with nothing else to check): pruning, defaulting and
    /// validation can be skipped, and only `metadata` needs the caller's attention.
    pub fn accepts_anything(&self) -> bool {
        let r = &self.root;
        r.preserve_unknown
            && r.properties.is_empty()
            && r.pattern_properties.is_empty()
            && r.additional.is_none()
            && r.rules.is_none()
            && r.enum_.is_empty()
            && r.required.is_empty()
            && r.all_of.is_empty()
            && r.any_of.is_empty()
            && r.one_of.is_empty()
            && r.not.is_none()
            && r.min_properties.is_none()
            && r.max_properties.is_none()
    }

    /// Drops the fields the schema does not know and the nulls it does not allow
    /// (unless a default will replace them): what the API server's decoder does before
    /// anything else sees the object.
    pub fn prune(&self, object: &mut Value) {
        self.prune_reporting(object);
    }

    /// [`ResourceSchema::prune`], answering the paths of the fields it dropped
    /// (`spec.foo`, `spec.items[0].bar`), as kube-apiserver lists them for field
    /// validation (`unknown field "spec.foo"`). Disallowed nulls are not unknown fields.
    pub fn prune_reporting(&self, object: &mut Value) -> Vec<String> {
        let mut pruned = Pruned::default();
        // The root is pruned as an embedded resource: `apiVersion`, `kind` and
        // `metadata` are never dropped.
        prune(object, Some(&self.root), true, &mut pruned);
        prune_nulls(object, Some(&self.root));
        pruned.paths
    }

    /// Applies the schema's defaults to missing fields (and non-nullable nulls).
    pub fn default(&self, object: &mut Value) {
        apply_defaults(object, &self.root);
    }

    /// Validates a whole object (create, update): OpenAPI from the root, then the CEL
    /// rules (with `oldSelf` from `old` on updates) unless a type, required, enum or
    /// size error means the object does not have the shape the rules were written for.
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let data = value::from_serde(object);
        let old = old.map(without_managed_fields);
        let mut errors = crate::check::crd_update(&self.root, Some(&data), old.as_ref(), None);
        self.rules(&data, old.as_ref(), &mut errors);
        errors
    }

    /// Validates a write to the `status` subresource: OpenAPI on `status` alone (paths
    /// under `status`, details relative to it), then the CEL rules on the whole object,
    /// as kube-apiserver's status strategy does.
    pub fn validate_status(&self, object: &Value, old: &Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let (Some(status), Some(s)) = (object.get("status"), self.root.properties.get("status"))
        {
            let status = value::from_serde(status);
            let old_status = old.get("status").map(value::from_serde);
            errors =
                crate::check::crd_update(s, Some(&status), old_status.as_ref(), Some("status"));
        }
        // The whole object is read only by rules: a status write of a kind without any
        // (the common case) converts just its status.
        if self.cel_root.is_some() {
            let data = value::from_serde(object);
            let old = without_managed_fields(old);
            self.rules(&data, Some(&old), &mut errors);
        }
        errors
    }

    fn rules(&self, data: &Val, old: Option<&Val>, errors: &mut Vec<FieldError>) {
        let Some(cel_root) = &self.cel_root else {
            return;
        };
        let blocking = errors.iter().any(|e| {
            matches!(
                e.error_type,
                ErrorType::NotSupported
                    | ErrorType::Required
                    | ErrorType::TooLong
                    | ErrorType::TooMany
                    | ErrorType::TypeInvalid
            )
        });
        if blocking {
            // Go's `field.Invalid(nil, nil, ...)`: a nil value prints as "null".
            errors.push(FieldError::invalid("<nil>", "null", RULES_NOT_CHECKED));
            return;
        }
        errors.extend(crate::cel::validate_resource(cel_root, data, old));
    }
}

/// The stored object as validation reads it: its managed fields, which neither the
/// schema (`metadata` is an object there) nor a rule reads, are left out rather than
/// converted, and the written object has none by then to compare them with.
fn without_managed_fields(old: &Value) -> Val {
    let Some(fields) = old.as_object() else {
        return value::from_serde(old);
    };
    let convert = |(key, v): (&String, &Value)| {
        let v = match v.as_object() {
            Some(meta) if key == "metadata" => Val::Obj(
                meta.iter()
                    .filter(|(k, _)| *k != "managedFields")
                    .map(|(k, v)| (k.clone(), value::from_serde(v)))
                    .collect(),
            ),
            _ => value::from_serde(v),
        };
        (key.clone(), v)
    };
    Val::Obj(fields.iter().map(convert).collect())
}

/// kube-apiserver's `WithTypeAndObjectMeta`: unless the root already types them,
/// `apiVersion`, `kind` (strings) and `metadata` (`name`, `generateName`) are added.
fn with_type_and_object_meta(root: &Schema) -> Schema {
    let is = |s: Option<&Schema>, t: &str| s.is_some_and(|s| s.type_ == t);
    let meta = root.properties.get("metadata");
    let typed = is(root.properties.get("kind"), "string")
        && is(root.properties.get("apiVersion"), "string")
        && is(meta, "object")
        && is(meta.and_then(|m| m.properties.get("name")), "string")
        && is(
            meta.and_then(|m| m.properties.get("generateName")),
            "string",
        );
    let mut out = root.clone();
    if typed {
        return out;
    }
    let string = Schema {
        type_: "string".into(),
        ..Schema::default()
    };
    out.properties.insert("kind".into(), string.clone());
    out.properties.insert("apiVersion".into(), string.clone());
    let mut metadata = Schema {
        type_: "object".into(),
        ..Schema::default()
    };
    metadata.properties.insert("name".into(), string.clone());
    metadata.properties.insert("generateName".into(), string);
    out.properties.insert("metadata".into(), metadata);
    out
}

/// The schema of additional properties as pruning and defaulting see it:
/// `Some(None)` for the boolean form (keys kept, no schema below them).
fn additional(s: &Schema) -> Option<Option<&Schema>> {
    match &s.additional {
        Some(Additional::Schema(a)) => Some(Some(a)),
        Some(Additional::Allows(_)) => Some(None),
        None => None,
    }
}

/// Where pruning is and what it dropped, in kube-apiserver's path notation. The path
/// is one buffer with the length it had before each step, as pruning visits every
/// field of every write and names only the few it drops.
#[derive(Default)]
struct Pruned {
    at: String,
    steps: Vec<usize>,
    paths: Vec<String>,
}

impl Pruned {
    fn enter_field(&mut self, key: &str) {
        self.steps.push(self.at.len());
        if !self.at.is_empty() {
            self.at.push('.');
        }
        self.at.push_str(key);
    }

    fn enter_index(&mut self, i: usize) {
        use std::fmt::Write;
        self.steps.push(self.at.len());
        // Writing to a String cannot fail.
        let _ = write!(self.at, "[{i}]");
    }

    fn leave(&mut self) {
        if let Some(len) = self.steps.pop() {
            self.at.truncate(len);
        }
    }

    fn dropped(&mut self, key: &str) {
        self.enter_field(key);
        self.paths.push(self.at.clone());
        self.leave();
    }
}

/// kube-apiserver's structural pruning.
/// `root`: `x` is the resource itself, whose metadata fields stay as an embedded
/// resource's do.
fn prune(x: &mut Value, s: Option<&Schema>, root: bool, pruned: &mut Pruned) {
    if let Some(s) = s
        && s.preserve_unknown
    {
        skip_prune(x, s, root, pruned);
        return;
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in m.keys() {
                    pruned.dropped(k);
                }
                m.clear();
                return;
            };
            m.retain(|k, v| {
                if (root || s.embedded_resource) && META_FIELDS.contains(&k.as_str()) {
                    return true;
                }
                let known = s.properties.get(k).map(Some).or_else(|| additional(s));
                let Some(child) = known else {
                    pruned.dropped(k);
                    return false;
                };
                pruned.enter_field(k);
                prune(v, child, false, pruned);
                pruned.leave();
                true
            });
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                pruned.enter_index(i);
                prune(v, item_schema, false, pruned);
                pruned.leave();
            }
        }
        _ => {}
    }
}

/// Below `x-kubernetes-preserve-unknown-fields`: unknown keys stay, known ones are
/// pruned by their own schemas.
fn skip_prune(x: &mut Value, s: &Schema, root: bool, pruned: &mut Pruned) {
    match x {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if (root || s.embedded_resource) && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                let known = s.properties.get(k).map(Some).or_else(|| additional(s));
                if let Some(child) = known {
                    pruned.enter_field(k);
                    prune(v, child, false, pruned);
                    pruned.leave();
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    pruned.enter_index(i);
                    skip_prune(v, item_schema, false, pruned);
                    pruned.leave();
                }
            }
        }
        _ => {}
    }
}

fn field_schema<'a>(s: Option<&'a Schema>, key: &str) -> Option<&'a Schema> {
    let s = s?;
    match s.properties.get(key) {
        Some(p) => Some(p),
        None => additional(s).flatten(),
    }
}

/// kube-apiserver's `PruneNonNullableNullsWithoutDefaults`: a `null` the schema does
/// not allow and no default would replace is taken as "not set".
fn prune_nulls(x: &mut Value, s: Option<&Schema>) {
    match x {
        Value::Object(m) => {
            m.retain(|k, v| {
                let schema = field_schema(s, k);
                let drop = v.is_null()
                    && schema.is_some_and(|schema| !schema.nullable && schema.default.is_none());
                if !drop {
                    prune_nulls(v, schema);
                }
                !drop
            });
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for v in items {
                prune_nulls(v, item_schema);
            }
        }
        _ => {}
    }
}

fn non_nullable_null(v: &Value, s: Option<&Schema>) -> bool {
    v.is_null() && s.is_some_and(|s| !s.nullable)
}

fn default_of(s: Option<&Schema>) -> Value {
    s.and_then(|s| s.default.as_ref())
        .map_or(Value::Null, value::to_serde)
}

/// kube-apiserver's structural defaulting: missing properties (and non-nullable nulls)
/// get their schema's default, in objects, maps and array items.
fn apply_defaults(x: &mut Value, s: &Schema) {
    match x {
        Value::Object(m) => default_object(m, s),
        Value::Array(items) => {
            let Some(item_schema) = s.items.as_deref() else {
                return;
            };
            for v in items {
                if non_nullable_null(v, Some(item_schema)) {
                    *v = default_of(Some(item_schema));
                }
                apply_defaults(v, item_schema);
            }
        }
        _ => {}
    }
}

fn default_object(m: &mut Map<String, Value>, s: &Schema) {
    for (k, prop) in &s.properties {
        let Some(d) = &prop.default else {
            continue;
        };
        let missing = m.get(k).is_none_or(|v| non_nullable_null(v, Some(prop)));
        if missing {
            m.insert(k.clone(), value::to_serde(d));
        }
    }
    let additional = additional(s);
    for (k, v) in m.iter_mut() {
        if let Some(prop) = s.properties.get(k) {
            apply_defaults(v, prop);
        } else if let Some(a) = additional {
            if non_nullable_null(v, a) {
                *v = default_of(a);
            }
            if let Some(a) = a {
                apply_defaults(v, a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ResourceSchema {
        ResourceSchema::read(&json!({
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object"},
                "spec": {
                    "type": "object",
                    "required": ["host"],
                    "properties": {
                        "host": {"type": "string"},
                        "port": {"type": "integer", "format": "int32", "default": 6443},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "tags": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                        "nullable": {"type": "string", "nullable": true}
                    },
                    "x-kubernetes-validations": [{"rule": "self.host != 'bad'", "message": "host must not be bad"}]
                },
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
            }
        }))
        .unwrap()
    }

    #[test]
    fn prunes_unknown_fields_and_disallowed_nulls_keeping_the_resource_root() {
        let s = schema();
        let mut o = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n", "odd": 1},
            "spec": {"host": "h", "unknown": 1, "extra": {"kept": {"deep": 1}},
                     "tags": [{"a": "x", "b": "y"}], "nullable": null},
            "status": null, "other": {"x": 1}});
        let reported = s.prune_reporting(&mut o);
        assert_eq!(reported, ["other", "spec.tags[0].b", "spec.unknown"]);
        assert_eq!(
            o,
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n", "odd": 1},
                "spec": {"host": "h", "extra": {"kept": {"deep": 1}}, "tags": [{"a": "x"}], "nullable": null}})
        );
    }

    #[test]
    fn defaults_then_validates_with_kubernetes_texts() {
        let s = schema();
        let mut o = json!({"spec": {"host": "h", "port": null}});
        s.prune(&mut o);
        s.default(&mut o);
        assert_eq!(o["spec"]["port"], 6443);
        assert!(s.validate(&o, None).is_empty());

        let missing: Vec<String> = s
            .validate(&json!({"spec": {"port": "x"}}), None)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            missing,
            [
                "spec.port: Invalid value: \"string\": spec.port in body must be of type integer: \"string\"",
                "spec.host: Required value",
                "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ]
        );
        let bad: Vec<String> = s
            .validate(&json!({"spec": {"host": "bad"}}), None)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            bad,
            ["spec: Invalid value: \"object\": host must not be bad"]
        );
    }

    #[test]
    fn status_writes_check_status_and_the_rules() {
        let s = schema();
        let old = json!({"spec": {"host": "h"}});
        let errors: Vec<String> = s
            .validate_status(
                &json!({"spec": {"host": "h"}, "status": {"ready": "yes"}}),
                &old,
            )
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errors,
            [
                "status.ready: Invalid value: \"string\": ready in body must be of type boolean: \"string\"",
                "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ]
        );
    }

    #[test]
    fn root_rules_see_typed_metadata() {
        let s = ResourceSchema::read(&json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('a')"}],
            "properties": {"spec": {"type": "object"}}}))
        .unwrap();
        assert!(
            s.validate(&json!({"metadata": {"name": "ab"}}), None)
                .is_empty()
        );
        let errors: Vec<String> = s
            .validate(&json!({"metadata": {"name": "b"}}), None)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errors,
            ["<nil>: Invalid value: \"object\": failed rule: self.metadata.name.startsWith('a')"]
        );
    }

    #[test]
    fn preserve_unknown_fields_root_accepts_anything() {
        let s = ResourceSchema::read(
            &json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        )
        .unwrap();
        assert!(s.accepts_anything());
        let mut o = json!({"spec": {"a": [1, {"b": null}]}, "status": null});
        let before = o.clone();
        s.prune(&mut o);
        s.default(&mut o);
        assert_eq!(o, before);
        assert!(s.validate(&o, None).is_empty());
        assert!(!schema().accepts_anything());
    }
    /// A schema tightened after objects were stored: `spec.name` at most 3 characters,
    /// `spec.replicas` at most 5, `spec.zones` items at most 2 characters, a rule on
    /// `spec.owner`, a transition rule on `spec.immutable`, and `spec.loose` with at
    /// least three properties, which keeps unknown ones.
    fn tightened() -> ResourceSchema {
        ResourceSchema::read(&json!({"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "maxLength": 3},
                "replicas": {"type": "integer", "maximum": 5},
                "zones": {"type": "array", "items": {"type": "string", "maxLength": 2}},
                "owner": {"type": "object", "properties": {"team": {"type": "string"}},
                    "x-kubernetes-validations": [{"rule": "self.team != 'nobody'", "message": "an owner"}]},
                "immutable": {"type": "string",
                    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]},
                "loose": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "minProperties": 3, "properties": {"size": {"type": "integer", "maximum": 1}}},
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string", "maxLength": 4}}},
        }}))
        .unwrap()
    }

    const NOT_CHECKED: &str = "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";
    const LOOSE: &str =
        "spec.loose: Invalid value: 2: spec.loose in body should have at least 3 properties";

    #[test]
    fn updates_are_ratcheted_as_kube_apiserver_ratchets_them() {
        let s = tightened();
        let stored = json!({"apiVersion": "x/v1", "kind": "X",
            "metadata": {"name": "o", "resourceVersion": "7",
                "managedFields": [{"manager": "m", "operation": "Update"}]},
            "spec": {"name": "toolong", "replicas": 9, "zones": ["abc", "d"],
                "owner": {"team": "nobody"}, "immutable": "a", "loose": {"size": 4, "x": 1}},
            "status": {"phase": "Provisioning"}});
        let with = |path: &str, value: serde_json::Value| {
            let mut o = stored.clone();
            if let Some(m) = o.as_object_mut().and_then(|m| m.get_mut("metadata")) {
                m.as_object_mut().map(|m| m.remove("managedFields"));
                m["resourceVersion"] = json!("8");
            }
            *o.pointer_mut(path).unwrap_or_else(|| panic!("{path}")) = value;
            o
        };
        let texts = |errors: Vec<FieldError>| -> Vec<String> {
            errors.iter().map(ToString::to_string).collect()
        };
        // What every invalid part the update leaves alone still costs without an old
        // object: the create of the same object is refused for each.
        assert_eq!(
            texts(s.validate(&with("/spec/immutable", json!("a")), None)),
            [
                LOOSE,
                "spec.name: Too long: may not be more than 3 bytes",
                "spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5",
                "spec.zones[0]: Too long: may not be more than 2 bytes",
                "status.phase: Too long: may not be more than 4 bytes",
                NOT_CHECKED,
            ]
        );

        let cases: [(&str, serde_json::Value, &[&str]); 8] = [
            // The loose object keeps a key its schema does not pair, so it is never
            // unchanged: its own count is checked on every update.
            ("/spec/immutable", json!("a"), &[LOOSE]),
            (
                "/spec/replicas",
                json!(10),
                &[
                    LOOSE,
                    "spec.replicas: Invalid value: 10: spec.replicas in body should be less than or equal to 5",
                ],
            ),
            ("/spec/replicas", json!(4), &[LOOSE]),
            // Its paired property is, though: an unchanged `size` of 4 stays.
            ("/spec/loose", json!({"size": 4, "x": 1, "y": 2}), &[]),
            (
                "/spec/loose",
                json!({"size": 3, "x": 1, "y": 2}),
                &[
                    "spec.loose.size: Invalid value: 3: spec.loose.size in body should be less than or equal to 1",
                ],
            ),
            // A list is paired as a whole: one changed item and all are checked.
            (
                "/spec/zones",
                json!(["abc", "e"]),
                &[
                    LOOSE,
                    "spec.zones[0]: Too long: may not be more than 2 bytes",
                    NOT_CHECKED,
                ],
            ),
            // A rule holds again once its node changes.
            (
                "/spec/owner",
                json!({"team": "nobody", "x": 1}),
                &[LOOSE, "spec.owner: Invalid value: \"object\": an owner"],
            ),
            // Transition rules are never ratcheted.
            (
                "/spec/immutable",
                json!("b"),
                &[
                    LOOSE,
                    "spec.immutable: Invalid value: \"string\": immutable",
                ],
            ),
        ];
        for (path, value, want) in cases {
            let got = texts(s.validate(&with(path, value.clone()), Some(&stored)));
            assert_eq!(got, want, "{path} = {value}");
        }
        // A status write is ratcheted the same way, within `status`.
        let status =
            |phase: &str| texts(s.validate_status(&with("/status/phase", json!(phase)), &stored));
        assert_eq!(status("Provisioning"), Vec::<String>::new());
        assert_eq!(
            status("Provisioned"),
            [
                "status.phase: Too long: may not be more than 4 bytes",
                NOT_CHECKED
            ]
        );
    }
}
