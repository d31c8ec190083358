//! Kubernetes server-side apply over `serde_json::Value` objects, computed the way
//! kube-apiserver computes it (structured-merge-diff v4 and apimachinery's managed
//! fields), for two users: an in-memory API server that serves apply patches and
//! keeps `metadata.managedFields` on every write, and a reconciler that predicts,
//! without a request, whether applying an intent would change anything.
//!
//! - [`fieldset`]: field paths, sets of them, and their FieldsV1 encoding.
//! - [`schema`]: which lists are atomic, sets or keyed maps, which maps are atomic,
//!   read from a CRD's `openAPIV3Schema`.
//! - [`apply`](mod@apply): [`apply()`], [`update()`] and [`fields_of`].
//! - [`managed`]: `metadata.managedFields` entries.
//! - [`conflict`]: apply conflicts and their 409 status.
//!
//! Left out, as kube-apiserver features this crate does not reproduce: conversion of
//! entries between apiVersions (an entry of another version is compared as if it
//! were this one), the cap of ten `Update` entries (`ancient-changes`), the
//! `last-applied-configuration` annotation bridge, unions, and the validation of
//! values against their scalar types.

pub mod apply;
pub mod conflict;
pub mod fieldset;
pub mod managed;
pub mod schema;
mod typed;
mod value;

pub use apply::{
    Applied, ApplyError, ApplyOptions, UpdateOptions, apply, apply_in_full, apply_with, fields_of,
    never_managed, reset_fields_main_resource, reset_fields_status_subresource, try_update, update,
    update_in_place, update_with,
};
pub use conflict::{Conflict, Conflicts, StatusCause};
pub use fieldset::{FieldSet, FieldsV1Error, Path, PathElement};
pub use managed::{
    Identity, ManagedFieldsEntry, ManagedFieldsError, Operation, read_managed_fields,
    write_managed_fields,
};
pub use schema::{ListKind, ListType, MapType, Schema, SchemaError, Type};
