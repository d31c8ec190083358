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
    /// The API server does not serve server-side apply (it answered an apply patch
    /// with 415 Unsupported Media Type): topograph writes with nothing else, so this is
    /// said plainly rather than worked around with another kind of write.
    #[error(
        "the API server {server} does not support server-side apply: it answered the apply of {object} with 415 Unsupported Media Type ({message}); topograph writes the topology only with server-side apply (Kubernetes 1.22 or later)"
    )]
    NoServerSideApply {
        /// The server's URL.
        server: String,
        /// `<Kind> <namespace>/<name>`.
        object: String,
        /// The server's own message.
        message: String,
    },
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
