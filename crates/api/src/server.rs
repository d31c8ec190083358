//! The Kubernetes API server's write rules, as pure functions over JSON objects: the
//! name a create gives from `generateName`, the resourceVersion precondition, when a
//! write moves `metadata.generation`, what a main-resource or `/status` write keeps of
//! the stored object, and the texts the server refuses writes with.
//!
//! Two things play the API server: the in-memory server of `topograph-kube`, and the
//! dry-run overlay of `topograph-management`, which must answer a reconcile as the
//! server it stands in for would, or a plan stops being exact. Both call these, so the
//! two cannot drift apart. What only one of them does (finalizers, watches and garbage
//! collection in the server; placeholder uids in the overlay) stays with it.

use serde_json::Value;

use crate::object::{ObjectExt, metadata_mut};

/// Which part of an object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sub {
    /// The object itself (`PUT`/`PATCH` on the resource).
    Main,
    /// The status subresource (`/status`).
    Status,
}

/// Kubernetes' `rand.String` alphabet: no vowels (no accidental words) and no `0`, `1`
/// or `3` (easily confused).
pub const NAME_SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Length of the suffix a `generateName` gets.
pub const NAME_SUFFIX_LEN: usize = 5;

/// How often a create draws another suffix while the one drawn names an existing
/// object, as the API server retries a generated name that clashes.
const NAME_ATTEMPTS: usize = 8;

/// The field error of a create with neither `name` nor `generateName`.
pub const NAME_REQUIRED: &str = "metadata.name: Required value: name or generateName is required";

/// A `generateName` suffix: `n` written in [`NAME_SUFFIX_ALPHABET`], least significant
/// digit first, [`NAME_SUFFIX_LEN`] digits. A random `n` gives the API server's random
/// suffix; a counter gives distinct, reproducible ones.
pub fn name_suffix(mut n: u64) -> String {
    let base = NAME_SUFFIX_ALPHABET.len() as u64;
    (0..NAME_SUFFIX_LEN)
        .map(|_| {
            // The remainder is below the alphabet's length, so the index is in range.
            let c = NAME_SUFFIX_ALPHABET[(n % base) as usize] as char;
            n /= base;
            c
        })
        .collect()
}

/// The name a create stores: `metadata.name`, else `metadata.generateName` followed by
/// a suffix from `suffix`, drawn again while `taken` says the name is in use (a few
/// times; a name still taken then fails the create as AlreadyExists). `None` when the
/// object has neither: refuse it as Invalid with [`NAME_REQUIRED`].
pub fn name_to_create(
    object: &Value,
    mut suffix: impl FnMut() -> String,
    taken: impl Fn(&str) -> bool,
) -> Option<String> {
    let name = object.name();
    if !name.is_empty() {
        return Some(name.to_string());
    }
    let prefix = metadata_str(object, "generateName");
    if prefix.is_empty() {
        return None;
    }
    let mut generated = format!("{prefix}{}", suffix());
    for _ in 1..NAME_ATTEMPTS {
        if !taken(&generated) {
            break;
        }
        generated = format!("{prefix}{}", suffix());
    }
    Some(generated)
}

/// Why a body that names a `metadata.uid` cannot be written, if it cannot: it addresses
/// that very object, so it may neither create one (an apply to a deleted object must
/// not bring it back) nor land on another object of the same name. The text follows
/// kube-apiserver's, and goes after "Operation cannot be fulfilled on …" (409).
pub fn uid_mismatch(body: &Value, stored: Option<&Value>) -> Option<String> {
    let uid = metadata_str(body, "uid");
    if uid.is_empty() {
        return None;
    }
    match stored {
        None => Some(format!(
            "uid mismatch: the provided object specified uid {uid}, and no existing object was found"
        )),
        Some(stored) if metadata_str(stored, "uid") != uid => Some(format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            metadata_str(stored, "uid")
        )),
        Some(_) => None,
    }
}

/// Whether a write's resourceVersion precondition holds: a resourceVersion the written
/// object carries must be the stored one; none (or an empty one) is no precondition.
/// When it fails the server answers [`Refused::conflict`].
pub fn resource_version_holds(written: &Value, stored: &Value) -> bool {
    let sent = metadata_str(written, "resourceVersion");
    sent.is_empty() || sent == metadata_str(stored, "resourceVersion")
}

/// Metadata only the server sets: a main-resource write keeps the stored values (and
/// drops what the stored object does not have).
const SERVER_METADATA: [&str; 8] = [
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "resourceVersion",
];

/// What a write of `body` over `stored` stores, before the server sets a new
/// resourceVersion and [`bumped_generation`]: for [`Sub::Main`] the body with the
/// stored server-owned metadata and, with a status subresource, the stored status; for
/// [`Sub::Status`] the stored object with the body's status, in the body's apiVersion
/// (the version the write was made in).
pub fn to_store(stored: &Value, body: Value, sub: Sub, status_subresource: bool) -> Value {
    match sub {
        Sub::Main => {
            let mut new = body;
            for field in SERVER_METADATA {
                match stored.at(&["metadata", field]) {
                    Some(value) => {
                        if let Some(metadata) = metadata_mut(&mut new) {
                            metadata.insert(field.into(), value.clone());
                        }
                    }
                    None => {
                        if let Some(metadata) =
                            new.get_mut("metadata").and_then(Value::as_object_mut)
                        {
                            metadata.remove(field);
                        }
                    }
                }
            }
            keep_status(&mut new, Some(stored), status_subresource);
            new
        }
        Sub::Status => {
            let mut new = stored.clone();
            if let Some(map) = new.as_object_mut() {
                match body.get("status") {
                    Some(status) => map.insert("status".into(), status.clone()),
                    None => map.remove("status"),
                };
                if let Some(api_version) = body.get("apiVersion") {
                    map.insert("apiVersion".into(), api_version.clone());
                }
            }
            new
        }
    }
}

/// Gives a main-resource write the status it may store: with a status subresource the
/// stored one (`None`: a create, which stores none), else its own.
pub fn keep_status(new: &mut Value, stored: Option<&Value>, status_subresource: bool) {
    if !status_subresource {
        return;
    }
    if let Some(map) = new.as_object_mut() {
        match stored.and_then(|s| s.get("status")) {
            Some(status) => map.insert("status".into(), status.clone()),
            None => map.remove("status"),
        };
    }
}

/// Whether objects of kind `kind` in API group `group` carry `metadata.generation`.
/// Custom resources and CRDs do, as do the built-in workload kinds; the core group's
/// other kinds (Namespaces, ConfigMaps, Secrets, Events, ...) and `events.k8s.io` Events
/// do not, and no CRD can define a kind in either group. (Some other built-in groups'
/// kinds do not either, Leases for one; nothing here writes them.)
pub fn tracks_generation(group: &str, kind: &str) -> bool {
    match group {
        "" => kind == "ReplicationController",
        "events.k8s.io" => false,
        _ => true,
    }
}

/// The generation `new` gets over `stored`: one more than the stored one (0 when it has
/// none) when a main-resource write changed anything but apiVersion, kind, metadata and
/// (with a status subresource) status; `None` when it keeps the stored one.
pub fn bumped_generation(
    stored: &Value,
    new: &Value,
    sub: Sub,
    status_subresource: bool,
) -> Option<i64> {
    if sub == Sub::Status {
        return None;
    }
    let skip: &[&str] = if status_subresource {
        &["apiVersion", "kind", "metadata", "status"]
    } else {
        &["apiVersion", "kind", "metadata"]
    };
    if equal_except(stored, new, skip) {
        return None;
    }
    let generation = stored
        .at(&["metadata", "generation"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    Some(generation + 1)
}

/// Whether two objects are equal apart from the listed top-level fields.
pub fn equal_except(a: &Value, b: &Value, skip: &[&str]) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    a.keys()
        .chain(b.keys())
        .filter(|k| !skip.contains(&k.as_str()))
        .all(|k| a.get(k) == b.get(k))
}

fn metadata_str<'a>(object: &'a Value, field: &str) -> &'a str {
    object
        .at(&["metadata", field])
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `plural.group`, or `plural` for the core group: how the API server names a resource
/// in messages.
pub fn group_resource(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

/// Why a stale write is refused, after `Operation cannot be fulfilled on ...:`.
pub const MODIFIED: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// A write the API server refuses: the code, reason and message of the `Status` it
/// answers with, texts as kube-apiserver writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason`.
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
}

impl Refused {
    /// 404: no object of that resource and name.
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        let resource = group_resource(group, plural);
        Refused {
            code: 404,
            reason: "NotFound",
            message: format!("{resource} \"{name}\" not found"),
        }
    }

    /// 409: a create found the name taken.
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        let resource = group_resource(group, plural);
        Refused {
            code: 409,
            reason: "AlreadyExists",
            message: format!("{resource} \"{name}\" already exists"),
        }
    }

    /// 409: the resourceVersion precondition failed ([`resource_version_holds`]).
    pub fn conflict(group: &str, plural: &str, name: &str) -> Self {
        Self::conflict_because(group, plural, name, MODIFIED)
    }

    /// 409 for another failed precondition, `why` saying which.
    pub fn conflict_because(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let resource = group_resource(group, plural);
        Refused {
            code: 409,
            reason: "Conflict",
            message: format!("Operation cannot be fulfilled on {resource} \"{name}\": {why}"),
        }
    }

    /// 422 like `errors.NewInvalid`: the qualified kind, the name and the field problems.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: &str) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        Refused {
            code: 422,
            reason: "Invalid",
            message: format!("{qualified} \"{name}\" is invalid: {causes}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn foo(spec: i64, status: i64) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Foo",
            "metadata": {"name": "f", "uid": "u", "resourceVersion": "7", "generation": 3},
            "spec": {"a": spec}, "status": {"s": status}})
    }

    #[test]
    fn suffixes_use_the_kubernetes_alphabet_and_length() {
        for n in [0, 1, 26, 27, u64::MAX] {
            let s = name_suffix(n);
            assert_eq!(s.len(), NAME_SUFFIX_LEN);
            assert!(s.bytes().all(|b| NAME_SUFFIX_ALPHABET.contains(&b)), "{s}");
        }
        assert_ne!(name_suffix(1), name_suffix(2));
    }

    #[test]
    fn names_come_from_name_else_generate_name() {
        let named = json!({"metadata": {"name": "x", "generateName": "g-"}});
        assert_eq!(
            name_to_create(&named, || unreachable!(), |_| true),
            Some("x".into())
        );
        let mut draws = 0;
        let generated = name_to_create(
            &json!({"metadata": {"generateName": "g-"}}),
            || {
                draws += 1;
                name_suffix(draws)
            },
            |name| name == format!("g-{}", name_suffix(1)),
        );
        assert_eq!(generated, Some(format!("g-{}", name_suffix(2))));
        assert_eq!(
            name_to_create(&json!({"metadata": {}}), String::new, |_| false),
            None
        );
    }

    #[test]
    fn a_stale_resource_version_fails_the_precondition() {
        let stored = foo(1, 1);
        let mut written = foo(2, 1);
        assert!(resource_version_holds(&written, &stored));
        written["metadata"]["resourceVersion"] = json!("");
        assert!(resource_version_holds(&written, &stored));
        written["metadata"]["resourceVersion"] = json!("6");
        assert!(!resource_version_holds(&written, &stored));
        assert_eq!(
            Refused::conflict("example.com", "foos", "f").message,
            format!("Operation cannot be fulfilled on foos.example.com \"f\": {MODIFIED}")
        );
    }

    #[test]
    fn main_writes_keep_the_stored_status_and_status_writes_the_rest() {
        let stored = foo(1, 1);
        let mut body = foo(2, 9);
        body["metadata"]["uid"] = json!("other");
        let main = to_store(&stored, body.clone(), Sub::Main, true);
        assert_eq!(
            (&main["spec"]["a"], &main["status"]["s"]),
            (&json!(2), &json!(1))
        );
        assert_eq!(main["metadata"]["uid"], "u", "the server's metadata stays");
        assert_eq!(bumped_generation(&stored, &main, Sub::Main, true), Some(4));
        let status = to_store(&stored, body.clone(), Sub::Status, true);
        assert_eq!(
            (&status["spec"]["a"], &status["status"]["s"]),
            (&json!(1), &json!(9))
        );
        assert_eq!(bumped_generation(&stored, &status, Sub::Status, true), None);
        // Without a status subresource, status is part of the object.
        let plain = to_store(&stored, foo(1, 9), Sub::Main, false);
        assert_eq!(plain["status"]["s"], 9);
        assert_eq!(
            bumped_generation(&stored, &plain, Sub::Main, false),
            Some(4)
        );
        assert_eq!(bumped_generation(&stored, &plain, Sub::Main, true), None);
        // Metadata alone moves no generation.
        let mut labelled = stored.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        assert_eq!(bumped_generation(&stored, &labelled, Sub::Main, true), None);
        let mut created = foo(1, 1);
        keep_status(&mut created, None, true);
        assert!(created.get("status").is_none(), "a create stores no status");
    }
}
