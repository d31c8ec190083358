//! Label and annotation keys the topology owns. The values are facts of the Cluster API
//! contract: other controllers and users select objects by them.

/// The Cluster an object belongs to.
pub const CLUSTER_NAME: &str = "cluster.x-k8s.io/cluster-name";
/// Marks objects managed by a topology.
pub const TOPOLOGY_OWNED: &str = "topology.cluster.x-k8s.io/owned";
/// The topology name of a MachineDeployment, on it and on its templates.
pub const DEPLOYMENT_NAME: &str = "topology.cluster.x-k8s.io/deployment-name";
/// The topology name of a MachinePool.
pub const POOL_NAME: &str = "topology.cluster.x-k8s.io/pool-name";
/// Selects control plane machines.
pub const CONTROL_PLANE: &str = "cluster.x-k8s.io/control-plane";

/// The class template an object was cloned from.
pub const CLONED_FROM_NAME: &str = "cluster.x-k8s.io/cloned-from-name";
/// The group and kind of that template (`Kind.group`).
pub const CLONED_FROM_GROUP_KIND: &str = "cluster.x-k8s.io/cloned-from-groupkind";
/// kubectl's record of the last applied configuration; never copied into clones.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// Holds a MachineDeployment's upgrade and every later one in the list.
pub const HOLD_UPGRADE_SEQUENCE: &str = "topology.cluster.x-k8s.io/hold-upgrade-sequence";
/// Defers a MachineDeployment's upgrade.
pub const DEFER_UPGRADE: &str = "topology.cluster.x-k8s.io/defer-upgrade";
