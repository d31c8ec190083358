//! The reconcile core: keeps a management cluster's objects equal to what the topology
//! engine says they should be.
//!
//! * [`class`] reconciles ClusterClasses (variables in status, `VariablesReady`,
//!   ownerReferences on the templates a class references).
//! * [`cluster`] reconciles one Cluster: reads it, its class and every object its topology
//!   consists of, renders the desired state (`topograph_engine::Engine`: in process or the render service) and writes the differences in
//!   Cluster API's order, honouring upgrade sequencing, then reports the outcome on the
//!   Cluster's status and as Events.
//! * [`merge`] is the rule for updating an object from its desired state: fields the
//!   desired state sets are enforced, everything else is left alone.
//! * [`plan`] runs the same reconcile on a dry-run client: plans and impact.
//! * [`hooks`]: Runtime SDK lifecycle hooks (when they are due, what their answers
//!   mean, the Cluster annotations that keep their state).
//!
//! It talks to API servers only through `topograph_management::ManagementCluster`.

pub mod class;
pub mod cluster;
pub mod conditions;
pub mod error;
pub mod events;
pub mod hooks;
pub mod merge;
pub mod plan;
pub mod rollout;

pub use cluster::write::apply_intent;
pub use cluster::{Outcome, reconcile_cluster, reconcile_cluster_with_hooks};
pub use error::ReconcileError;
