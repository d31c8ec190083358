//! The management-cluster client: everything topograph knows about talking to a
//! Kubernetes API server that holds Cluster API objects.
//!
//! * [`api`]: [`ManagementCluster`], the only door to an API server (discovery, reads,
//!   writes, counted), live or dry-run.
//! * [`dry_run`]: the in-memory overlay a dry-run client writes into.
//! * [`class_cache`]: class-level objects (classes, their templates, rollout policies
//!   and revisions) read from watch-fed caches.
//! * [`owned_cache`]: a Cluster's own objects read from watch-fed caches, in the
//!   process holding the management cluster's watch lease.
//! * [`registry`]: the management clusters a process serves, from kubeconfig files and
//!   labelled Secrets.
//! * [`contracts`]: which Cluster API contract a provider kind implements, from its
//!   CRD's labels, cached per kind.
//! * [`crds`]: CustomResourceDefinitions for Cluster API's kinds and provider kinds.
//! * [`event_correlator`]: Events aggregated, counted and rate-limited before they are
//!   written, as client-go's recorder does.
//! * [`keys`]: the `<management cluster>/<namespace>/<name>` key of a Cluster.
//! * `kept_text`: object text as the owned-object cache keeps it, compressed against
//!   other objects of its kind.
//! * [`error`]: what a request can fail with.
//! * [`user_agent`]: the `User-Agent` every request carries (`topograph-applier/0.1.0`).
//! * [`watched`]: [`dynamic_resource!`], what kube-rs' watcher needs of a type any
//!   kind is read into.
//! * `versions`: Cluster API's kinds applied in the version the server prefers.

pub mod api;
pub mod class_cache;
pub mod contracts;
pub mod crds;
pub mod dry_run;
pub mod error;
pub mod event_correlator;
mod kept_text;
pub mod keys;
pub mod no_change;
pub mod owned_cache;
pub mod registry;
pub mod user_agent;
mod versions;
pub mod watched;

pub use api::{ManagementCluster, WriteCounts};
pub use error::Error;
