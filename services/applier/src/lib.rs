//! The applier process: workers that take Cluster keys from the queue and reconcile
//! them (`topograph_reconcile`), watchers that turn management-cluster changes into
//! keys, and the metrics both report. `topograph up` runs the same pieces in process.
//!
//! * [`service`] runs N [`worker`]s, the [`watch`]ers (under a [`lease`] per management
//!   cluster, mapped to Cluster keys by [`watch_index`] from what `seen` decodes of
//!   each watched object) and the registry refresh.
//! * [`extensions`]: Runtime SDK — each management cluster's ExtensionConfigs
//!   discovered, and the lifecycle hooks the workers' reconciles call through them.
//! * [`metrics`]: the Prometheus metrics of all of it.

mod digest;
pub mod extensions;
pub mod lease;
pub mod metrics;
pub mod rollouts;
mod seen;
pub mod service;
pub mod watch;
pub mod watch_index;
pub mod worker;
