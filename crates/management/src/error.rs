//! What a request to a management cluster can fail with.

use thiserror::Error;

/// A request that did not succeed: the API server's refusal or failure, or something
/// about the request or its answer that is not what it should be.
#[derive(Debug, Error)]
pub enum Error {
    /// The API server refused or failed a request.
    #[error("{0}")]
    Api(#[from] kube::Error),
    /// A kubeconfig, an object or an answer that cannot be used.
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// An [`Error::Invalid`] from anything printable.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }
}

/// The API server's answer was 409 Conflict: the object changed since it was read.
pub fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// The API server's answer was 404 Not Found.
pub fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

/// The API server's answer was 409 AlreadyExists: a create found the name taken.
pub fn is_already_exists(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409 && s.reason == "AlreadyExists")
}
