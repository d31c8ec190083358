//! Field violations and the INVALID_ARGUMENT status that carries them.
//!
//! Admission reports paths inside an object (`spec.topology.version`); the gateway's
//! answer names the request field the object came in, so a client holding many objects
//! knows which one is meant: `objects[1].spec.topology.version`.

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

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

/// INVALID_ARGUMENT with a `google.rpc.BadRequest` listing `violations`.
pub fn invalid(violations: Vec<Violation>) -> Status {
    let message = match violations.as_slice() {
        [one] => format!("{}: {}", one.field, one.description),
        many => format!(
            "{} problems: {}",
            many.len(),
            many.iter()
                .take(3)
                .map(|v| format!("{}: {}", v.field, v.description))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    let details = ErrorDetails::with_bad_request(
        violations
            .into_iter()
            .map(|v| tonic_types::FieldViolation::new(v.field, v.description))
            .collect::<Vec<_>>(),
    );
    Status::with_error_details(Code::InvalidArgument, message, details)
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

    #[test]
    fn the_status_carries_every_violation() {
        let status = invalid(vec![
            Violation::new("objects[0].spec", "a"),
            Violation::new("objects[1].metadata.name", "b"),
        ]);
        assert_eq!(status.code(), Code::InvalidArgument);
        let details = status.get_details_bad_request().unwrap();
        let fields: Vec<_> = details
            .field_violations
            .iter()
            .map(|v| v.field.as_str())
            .collect();
        assert_eq!(fields, ["objects[0].spec", "objects[1].metadata.name"]);
        assert!(
            status.message().starts_with("2 problems"),
            "{}",
            status.message()
        );
    }
}
