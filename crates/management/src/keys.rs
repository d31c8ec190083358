//! Cluster keys, as the queue carries them: `<management cluster>/<namespace>/<name>`.

use std::fmt;

/// One Cluster on one management cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterKey {
    /// The management cluster's name (its kubeconfig file's stem).
    pub management_cluster: String,
    /// The Cluster's namespace.
    pub namespace: String,
    /// The Cluster's name.
    pub name: String,
}

impl ClusterKey {
    /// A key.
    pub fn new(management_cluster: &str, namespace: &str, name: &str) -> Self {
        ClusterKey {
            management_cluster: management_cluster.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    /// Reads `<management cluster>/<namespace>/<name>`; none of the parts may be empty
    /// (Kubernetes names and namespaces never contain `/`).
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split('/');
        let (Some(mc), Some(ns), Some(name), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        if mc.is_empty() || ns.is_empty() || name.is_empty() {
            return None;
        }
        Some(ClusterKey::new(mc, ns, name))
    }
}

impl fmt::Display for ClusterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.management_cluster, self.namespace, self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_reject_malformed_text() {
        let key = ClusterKey::new("mgmt-a", "default", "dev");
        assert_eq!(ClusterKey::parse(&key.to_string()), Some(key));
        for bad in ["", "a/b", "a/b/c/d", "/b/c", "a//c", "a/b/"] {
            assert_eq!(ClusterKey::parse(bad), None, "{bad:?}");
        }
    }
}
