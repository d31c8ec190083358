//! The data model of topograph: ClusterClasses, Clusters and the provider objects
//! they reference, and the loader that reads them from YAML or JSON.
//!
//! Layout:
//! * [`v1beta1`], [`v1beta2`]: the `cluster.x-k8s.io` wire formats, field for field.
//! * [`model`]: the version-neutral model the engine works on, converted from either
//!   wire format (the v1beta2 conversion is in `from_v1beta2`).
//! * [`load`]: multi-document YAML/JSON and `kind: List` into a [`load::Bundle`], with
//!   errors naming the file, the document and the field.
//! * [`decoded`]: objects decoded once for many requests (a class's templates, sent
//!   with every render request), known by their text.
//! * [`envsubst`]: clusterctl-style `${VAR}` substitution for published templates.
//! * [`contract`]: which Cluster API contract a provider kind implements, as its CRD's
//!   labels declare it.
//! * [`object`]: helpers for arbitrary objects kept as JSON (provider templates), and
//!   [`ObjectKey`], the one identity of an object (group, kind, namespace, name).
//! * [`server`]: the API server's write rules, shared by the in-memory API server and
//!   the dry-run overlay.
//! * [`field`]: Kubernetes-style field errors.
//! * [`json`]: compact JSON text, byte for byte `serde_json`'s, with plain strings
//!   copied whole.
//! * [`duration`]: Go duration text, as v1beta1 timeouts use it.
//! * [`violation`]: one problem with one field of a request, as every door answers.
//! * [`convert`]: Cluster API's kinds between `cluster.x-k8s.io/v1beta1` and `v1beta2`,
//!   on JSON, losslessly through the `cluster.x-k8s.io/conversion-data` annotation.

pub mod contract;
pub mod convert;
pub mod decoded;
pub mod digest;
pub mod duration;
pub mod envsubst;
pub mod field;
mod from_v1beta2;
pub mod json;
pub mod load;
pub mod managed;
pub mod model;
pub mod object;
pub mod server;
pub mod v1beta1;
pub mod v1beta2;
pub mod violation;

pub use duration::Duration;
pub use field::{ErrorType, FieldError};
pub use object::{ObjectExt, ObjectKey};
pub use violation::Violation;
