//! The applier library: reconciles ClusterClasses and Clusters against a management cluster.
