//! Status: v1beta1's conditions (and the counters whose meaning changed) move to
//! `status.deprecated.v1beta1` in v1beta2, and v1beta1's `status.v1beta2` becomes the
//! top of v1beta2's status.

use serde_json::Value;

use super::Context;
use super::fields::{Object, Result, child, entry, put_nonempty, take, take_object};

/// Moves conditions and the given fields between the versions' places for them.
/// `deprecated` are the fields besides `conditions` that v1beta2 keeps under
/// `deprecated.v1beta1`; `moved` those besides `conditions` that v1beta1 keeps under
/// `status.v1beta2`.
pub(crate) fn conditions(
    status: &mut Object,
    path: &str,
    ctx: &Context,
    deprecated: &[&str],
    moved: &[&str],
) -> Result<()> {
    if ctx.to_v1beta2() {
        let mut old = Object::new();
        for key in std::iter::once("conditions").chain(deprecated.iter().copied()) {
            if let Some(value) = take(status, key) {
                old.insert(key.to_string(), value);
            }
        }
        if let Some(new) = take_object(status, "v1beta2", path)? {
            status.extend(new);
        }
        if !old.is_empty() {
            entry(entry(status, "deprecated"), "v1beta1").extend(old);
        }
    } else {
        let mut new = Object::new();
        for key in std::iter::once("conditions").chain(moved.iter().copied()) {
            if let Some(value) = take(status, key) {
                new.insert(key.to_string(), value);
            }
        }
        if let Some(mut deprecated_status) = take_object(status, "deprecated", path)? {
            if let Some(old) = take_object(
                &mut deprecated_status,
                "v1beta1",
                &child(path, "deprecated"),
            )? {
                status.extend(old);
            }
            put_nonempty(status, "deprecated", deprecated_status);
        }
        put_nonempty(status, "v1beta2", new);
    }
    Ok(())
}

/// v1beta1's readiness booleans against v1beta2's `initialization`: only `true` carries
/// over, as Cluster API converts a `false` to an unset field and back.
pub(crate) fn initialization(
    status: &mut Object,
    path: &str,
    ctx: &Context,
    pairs: &[(&str, &str)],
) -> Result<()> {
    if ctx.to_v1beta2() {
        let mut init = Object::new();
        for (old, new) in pairs {
            if take(status, old) == Some(Value::Bool(true)) {
                init.insert((*new).to_string(), Value::Bool(true));
            }
        }
        put_nonempty(status, "initialization", init);
    } else if let Some(mut init) = take_object(status, "initialization", path)? {
        for (old, new) in pairs {
            if take(&mut init, new) == Some(Value::Bool(true)) {
                status.insert((*old).to_string(), Value::Bool(true));
            }
        }
    }
    Ok(())
}
