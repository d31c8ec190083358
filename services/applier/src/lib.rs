//! The applier library: keeps a management cluster's objects equal to what the topology
//! engine says they should be.
//!
//! * [`class`] reconciles ClusterClasses (variables in status, `VariablesReady`,
//!   ownerReferences on the templates a class references).
//! * [`cluster`] reconciles one Cluster: reads it, its class and every object its topology
//!   consists of, renders the desired state ([`engine`]) and writes the differences in
//!   Cluster API's order, honouring upgrade sequencing, then reports the outcome on the
//!   Cluster's status and as Events.
//! * [`merge`] is the rule for updating an object from its desired state: fields the
//!   desired state sets are enforced, everything else is left alone.
//! * [`api`] is the only place that talks to the API server; it counts writes.
//! * [`crds`] builds the CustomResourceDefinitions a management cluster needs for
//!   Cluster API's kinds and for provider kinds.

pub mod api;
pub mod class;
pub mod cluster;
pub mod conditions;
pub mod crds;
pub mod dry_run;
pub mod engine;
pub mod error;
pub mod events;
pub mod keys;
pub mod lease;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod registry;
pub mod service;
mod time;
pub mod watch;
pub mod watch_index;
pub mod worker;

pub use api::{ManagementCluster, WriteCounts};
pub use cluster::write::apply_intent;
pub use cluster::{Outcome, reconcile_cluster};
pub use error::ReconcileError;
