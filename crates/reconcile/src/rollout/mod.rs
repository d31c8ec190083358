//! Fleet rollouts (decision 0030): a ClusterClass change reaches the class's Clusters in
//! waves, and stops on the first sign of harm.
//!
//! * [`revision`]: content-addressed snapshots of a class and its templates
//!   (`ClusterClassRevision`), which pinned Clusters render against.
//! * [`policy`]: the `RolloutPolicy` a class may have (waves, at most N rolling, soak,
//!   health deadline, pause / abort / resume), read and refused with field paths.
//! * [`gate`]: whether a moved Cluster is healthy at the revision it was moved to.
//! * [`waves`]: the rollout's state machine, a pure function of the policy, its status,
//!   the Clusters and the time.
//! * [`pin`]: which revision a Cluster renders (what the reconcile asks).
//! * [`planned`]: plans and impact of a class change under a policy: the revision each
//!   Cluster would get and the wave it would move in.
//! * [`controller`]: drives every policy of a management cluster, one step at a time,
//!   with the state kept in the policies' status.

pub mod controller;
pub mod gate;
pub mod pin;
pub mod planned;
pub mod policy;
pub mod revision;
pub mod waves;

/// The API group and version of the rollout kinds.
pub const API_VERSION: &str = "topograph.io/v1alpha1";
/// The kind of a class's rollout policy (named like the class, in its namespace).
pub const POLICY_KIND: &str = "RolloutPolicy";
/// The kind of a class revision.
pub const REVISION_KIND: &str = "ClusterClassRevision";
/// On a Cluster: the revision it has been moved to (it renders that revision).
pub const PIN_ANNOTATION: &str = "topograph.io/class-revision";
/// On a Cluster: the revision its last successful reconcile rendered.
pub const OBSERVED_ANNOTATION: &str = "topograph.io/observed-class-revision";
/// On a revision: the class it snapshots.
pub const CLASS_LABEL: &str = "topograph.io/cluster-class";
/// The condition a rollout reports on its policy and on the class.
pub const CONDITION: &str = "RolloutHealthy";
