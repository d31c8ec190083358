//! Admission rules: what Cluster API's webhooks refuse about a ClusterClass or a
//! Cluster, with their texts and field paths (spec section 6), and the defaulting its
//! mutating webhook does. Every rule reports; none stops at the first problem.

mod cluster;
mod cluster_class;
pub mod common;
mod compatibility;
pub(crate) mod names;
mod workers;

pub use cluster::{
    SKIP_CLASS_CHECK, SKIP_VERSION_CHECK, UPGRADE_CONCURRENCY, Validation, admit_cluster,
    class_not_found_warning, default_cluster, validate_cluster,
};
pub use cluster_class::validate_cluster_class;
pub use compatibility::check_compatibility;
