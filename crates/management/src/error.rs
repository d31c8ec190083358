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

    /// The API server answered with HTTP status `code`.
    pub fn has_code(&self, code: u16) -> bool {
        matches!(self, Error::Api(e) if has_code(e, code))
    }
}

/// The API server's answer was 404 Not Found.
pub fn is_not_found(e: &kube::Error) -> bool {
    has_code(e, 404)
}

/// The API server answered with HTTP status `code`.
pub fn has_code(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}
