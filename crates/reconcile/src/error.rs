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
    /// The engine (the render service) gave no answer: nothing is wrong with the
    /// Cluster.
    #[error("{0}")]
    EngineUnavailable(String),
    /// The Cluster does not exist (any more).
    #[error("Cluster {0} not found")]
    ClusterNotFound(String),
    /// Something read from the API server is not what the topology expects.
    #[error("{0}")]
    Invalid(String),
    /// A lifecycle hook could not be called or failed (its extension and handler
    /// named).
    #[error("{0}")]
    Hook(String),
}

impl ReconcileError {
    /// An [`ReconcileError::Invalid`] from anything printable.
    pub fn invalid(message: impl Into<String>) -> Self {
        ReconcileError::Invalid(message.into())
    }

    /// The same failure, its message prefixed with `prefix: ` (Go's `errors.Wrapf`,
    /// which Cluster API's texts follow). The kind of failure is kept, so an API
    /// server's refusal still counts as one; a failure to reach the server at all
    /// says nothing about the object and is left as it is.
    pub fn context(self, prefix: impl std::fmt::Display) -> Self {
        match self {
            ReconcileError::Api(kube::Error::Api(mut status)) => {
                status.message = format!("{prefix}: {}", status.message);
                ReconcileError::Api(kube::Error::Api(status))
            }
            ReconcileError::Invalid(message) => {
                ReconcileError::Invalid(format!("{prefix}: {message}"))
            }
            ReconcileError::Render(messages) => {
                ReconcileError::Invalid(format!("{prefix}: {}", messages.join("; ")))
            }
            other => other,
        }
    }
}

impl From<topograph_management::Error> for ReconcileError {
    fn from(e: topograph_management::Error) -> Self {
        match e {
            topograph_management::Error::Api(e) => ReconcileError::Api(e),
            topograph_management::Error::Invalid(message) => ReconcileError::Invalid(message),
            other @ topograph_management::Error::NoServerSideApply { .. } => {
                ReconcileError::Invalid(other.to_string())
            }
        }
    }
}
