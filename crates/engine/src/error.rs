//! Render errors: a list of messages, each naming the field or object it is about.

use std::fmt;

/// Everything that stopped a render; never just the first problem.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderError {
    /// One message per problem, in a stable order.
    pub messages: Vec<String>,
}

impl RenderError {
    /// A single problem.
    pub fn new(message: impl Into<String>) -> Self {
        RenderError {
            messages: vec![message.into()],
        }
    }

    /// Adds a problem.
    pub fn push(&mut self, message: impl Into<String>) {
        self.messages.push(message.into());
    }

    /// True when there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Adds every problem of `other`.
    pub fn extend(&mut self, other: RenderError) {
        self.messages.extend(other.messages);
    }
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.messages.join("\n"))
    }
}

impl std::error::Error for RenderError {}
