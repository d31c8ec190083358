//! Why a reconcile failed.

use thiserror::Error;

/// A reconcile that could not finish. The message is what the Cluster's
/// `TopologyReconciled` condition reports.
#[derive(Debug, Error)]
pub enum ReconcileError {
    /// The API server refused or failed a request.
    #[error("{0}")]
    Api(#[from] kube::Error),
    /// The desired state could not be computed (invalid input, patch errors, ...).
    #[error("{}", .0.join("; "))]
    Render(Vec<String>),
    /// The Cluster does not exist (any more).
    #[error("Cluster {0} not found")]
    ClusterNotFound(String),
    /// Something read from the API server is not what the topology expects.
    #[error("{0}")]
    Invalid(String),
}

impl ReconcileError {
    /// An [`ReconcileError::Invalid`] from anything printable.
    pub fn invalid(message: impl Into<String>) -> Self {
        ReconcileError::Invalid(message.into())
    }
}

/// The API server's answer was 409 Conflict: the object changed since it was read.
pub(crate) fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// The API server's answer was 404 Not Found.
pub(crate) fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}
