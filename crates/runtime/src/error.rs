//! What can go wrong calling an extension, worded as Cluster API's Runtime SDK client
//! words it (`failed to call extension handler "<handler>.<extension>": ...`), with the
//! kind of failure kept so callers can tell a Failure answer from a broken call.

/// Why a call to an extension handler did not give a usable answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The whole message, naming the handler (and so the extension).
    pub message: String,
}

/// The kinds of [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// No handler of that name is registered, or it serves another hook.
    NotRegistered,
    /// The ExtensionConfig cannot be used (URL, CA bundle, namespace selector) or the
    /// object's namespace is not served: never ignored by a failure policy.
    Misconfigured,
    /// The call itself failed (connection, TLS, timeout, status code, undecodable or
    /// wrong answer): the errors a failure policy `Ignore` ignores.
    Call,
    /// The handler answered with status `Failure`.
    Failure,
    /// Discovery found an answer it cannot accept.
    Discovery,
}

impl Error {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The same error with `prefix: ` before its message.
    pub fn wrap(self, prefix: impl std::fmt::Display) -> Self {
        Error {
            kind: self.kind,
            message: format!("{prefix}: {}", self.message),
        }
    }
}
