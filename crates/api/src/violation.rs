//! Violations: one problem with one field of a request, the shape every door of
//! topograph answers refusals in (the render service's and the gateway's
//! `google.rpc.BadRequest`, the CLI's report).
//!
//! Admission reports paths inside an object (`spec.topology.version`); whoever received
//! the object puts the request field it came in (`objects[1]`, `cluster`) in front, so a
//! caller holding many objects knows which one is meant.

use crate::field::FieldError;

/// One problem with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The field path; empty for the object as a whole.
    pub field: String,
    /// What is wrong (Kubernetes' message format when it comes from admission).
    pub description: String,
}

impl Violation {
    /// A violation.
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> Self {
        Violation {
            field: field.into(),
            description: description.into(),
        }
    }

    /// The same violation with `prefix` (a request field) in front of its path.
    pub fn prefixed(self, prefix: &str) -> Self {
        Violation {
            field: prefix_path(prefix, &self.field),
            description: self.description,
        }
    }

    /// Field errors about an object, as violations at their paths inside it.
    pub fn from_field_errors(errors: &[FieldError]) -> Vec<Violation> {
        errors
            .iter()
            .map(|e| Violation::new(e.path.clone(), e.to_string()))
            .collect()
    }
}

/// `prefix.path`, or `prefix` alone for an empty path; a path starting with an index
/// (`[0].x`) joins without a dot.
pub fn prefix_path(prefix: &str, path: &str) -> String {
    if path.is_empty() {
        prefix.to_string()
    } else if prefix.is_empty() {
        path.to_string()
    } else if path.starts_with('[') {
        format!("{prefix}{path}")
    } else {
        format!("{prefix}.{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_prefixed_by_the_request_field() {
        let v = Violation::new("spec.topology.variables[0].value", "Invalid value")
            .prefixed("objects[1]");
        assert_eq!(v.field, "objects[1].spec.topology.variables[0].value");
        assert_eq!(
            Violation::new("", "not JSON").prefixed("objects[0]").field,
            "objects[0]"
        );
        assert_eq!(prefix_path("objects", "[2].kind"), "objects[2].kind");
        assert_eq!(prefix_path("", "spec"), "spec");
    }
}
