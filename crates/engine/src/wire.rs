//! How desired objects of Cluster API's own kinds, and references between objects, are
//! written in `cluster.x-k8s.io/v1beta1`. Provider objects' fields are written by the
//! contract their kind implements ([`crate::contract`]).

use serde_json::{Value, json};
use topograph_api::model::{Cluster, ObjectRef};
use topograph_api::object::{ObjectExt, group_of, split_api_version};

/// API version of the objects we write.
pub const API_VERSION: &str = "cluster.x-k8s.io/v1beta1";

/// An `ObjectReference` to an object, as `contract.ObjToRef` builds it.
pub fn ref_to(object: &Value) -> ObjectRef {
    ObjectRef {
        api_version: object.api_version().to_string(),
        kind: object.kind().to_string(),
        namespace: object.namespace().to_string(),
        name: object.name().to_string(),
    }
}

/// A reference as JSON; empty fields are omitted, as Go's `omitempty` does.
pub fn ref_value(r: &ObjectRef) -> Value {
    crate::contract::object_reference(r)
}

/// A reference as an object of `api_version` holds it: a contract-versioned
/// `{apiGroup, kind, name}` in `cluster.x-k8s.io/v1beta2`, else an `ObjectReference`.
pub fn ref_value_in(api_version: &str, r: &ObjectRef) -> Value {
    if api_version != "cluster.x-k8s.io/v1beta2" {
        return ref_value(r);
    }
    json!({
        "apiGroup": group_of(&r.api_version),
        "kind": r.kind,
        "name": r.name,
    })
}

/// The reference to `desired`, keeping the current reference's API version when group
/// and kind are unchanged, so that a version a provider moved to is never downgraded.
/// A current reference that names only a group (a v1beta2 contract-versioned
/// reference) has no version to keep.
pub fn desired_ref(current: Option<&ObjectRef>, desired: &Value) -> ObjectRef {
    let mut r = ref_to(desired);
    if let Some(current) = current
        && group_of(&current.api_version) == group_of(&r.api_version)
        && current.kind == r.kind
        && !split_api_version(&current.api_version).1.is_empty()
    {
        r.api_version = current.api_version.clone();
    }
    r
}

/// Reads an `ObjectReference` stored in an object.
pub fn read_ref(object: &Value, path: &[&str]) -> Option<ObjectRef> {
    let r = object.at(path)?;
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let reference = ObjectRef {
        api_version: s("apiVersion"),
        kind: s("kind"),
        namespace: s("namespace"),
        name: s("name"),
    };
    (!reference.name.is_empty()).then_some(reference)
}

/// The owner reference to a Cluster. The UID is only known once the Cluster exists;
/// an offline render of a new Cluster leaves it out.
pub fn cluster_owner_ref(cluster: &Cluster) -> Value {
    let mut owner = json!({
        "apiVersion": API_VERSION,
        "kind": "Cluster",
        "name": cluster.name,
    });
    if !cluster.uid.is_empty() {
        owner["uid"] = Value::String(cluster.uid.clone());
    }
    owner
}
