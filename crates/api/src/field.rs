//! Field errors in Kubernetes' format: `<path>: <Type>: <detail>`.
//!
//! Every problem with an input is reported against the field it is about, so that a
//! person (or a UI) can point at it. The texts follow `k8s.io/apimachinery`'s
//! `field.Error`, which Cluster API's messages are made of.

use std::fmt;

/// The kind of a field error; its text is what Kubernetes prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// A required field is missing.
    Required,
    /// The value is not valid.
    Invalid,
    /// The value is not one of the supported ones.
    NotSupported,
    /// The change or setting is not allowed.
    Forbidden,
    /// The value is a duplicate.
    Duplicate,
    /// Something went wrong that is not the user's input.
    Internal,
    /// The value is not of the expected type; Kubernetes prints it as `Invalid value`.
    TypeInvalid,
    /// A string is too long; Kubernetes prints no value for it.
    TooLong,
    /// A list or map has too many entries.
    TooMany,
    /// A referenced thing does not exist.
    NotFound,
}

impl ErrorType {
    /// The text Kubernetes prints for this type.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Internal => "Internal error",
            ErrorType::TypeInvalid => "Invalid value",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::NotFound => "Not found",
        }
    }

    /// The reason name Kubernetes uses in API status details (`FieldValueInvalid`, ...).
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::NotFound => "FieldValueNotFound",
        }
    }

    /// The type whose [`ErrorType::reason`] is `reason`.
    pub fn from_reason(reason: &str) -> Option<ErrorType> {
        [
            ErrorType::Required,
            ErrorType::Invalid,
            ErrorType::NotSupported,
            ErrorType::Forbidden,
            ErrorType::Duplicate,
            ErrorType::Internal,
            ErrorType::TypeInvalid,
            ErrorType::TooLong,
            ErrorType::TooMany,
            ErrorType::NotFound,
        ]
        .into_iter()
        .find(|t| t.reason() == reason)
    }

    /// Whether Kubernetes leaves the bad value out of the printed error.
    pub fn omits_value(self) -> bool {
        matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        )
    }
}

/// Field values are printed as Go's `%q` prints them (`strconv.Quote`), as in
/// Kubernetes' texts; other crates quote the values they report through this name.
pub use topograph_gocompat::strconv::quote as go_quote;

/// One problem with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted path of the field (`spec.topology.class`).
    pub path: String,
    /// What kind of problem.
    pub error_type: ErrorType,
    /// The offending value, printed as Go's `%#v` would (a quoted string, a number).
    pub bad_value: Option<String>,
    /// Human-readable detail.
    pub detail: String,
}

impl FieldError {
    /// A required field is missing.
    pub fn required(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(path, ErrorType::Required, None, detail)
    }

    /// A value is invalid; `bad_value` is shown quoted.
    pub fn invalid(path: impl Into<String>, bad_value: &str, detail: impl Into<String>) -> Self {
        Self::new(path, ErrorType::Invalid, Some(go_quote(bad_value)), detail)
    }

    /// Something went wrong that is not the user's input (no value is printed).
    pub fn internal(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(path, ErrorType::Internal, None, detail)
    }

    /// A value is not allowed here.
    pub fn forbidden(path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(path, ErrorType::Forbidden, None, detail)
    }

    /// Any error with every part given.
    pub fn new(
        path: impl Into<String>,
        error_type: ErrorType,
        bad_value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            path: path.into(),
            error_type,
            bad_value,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.error_type.as_str())?;
        if let Some(value) = &self.bad_value
            && !self.error_type.omits_value()
        {
            write!(f, ": {value}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_kubernetes() {
        assert_eq!(
            FieldError::required("spec.topology.class", "classRef.name cannot be empty")
                .to_string(),
            "spec.topology.class: Required value: classRef.name cannot be empty"
        );
        assert_eq!(
            FieldError::invalid("spec.topology.version", "1.2", "must start with v").to_string(),
            "spec.topology.version: Invalid value: \"1.2\": must start with v"
        );
        assert_eq!(
            FieldError::forbidden(
                "spec.topology",
                "cannot be removed from an existing Cluster"
            )
            .to_string(),
            "spec.topology: Forbidden: cannot be removed from an existing Cluster"
        );
    }

    #[test]
    fn value_less_types_print_no_value() {
        let e = FieldError::new("v", ErrorType::TooLong, Some("\"abc\"".into()), "x");
        assert_eq!(e.to_string(), "v: Too long: x");
        let e = FieldError::new("v", ErrorType::TooMany, Some("3".into()), "y");
        assert_eq!(e.to_string(), "v: Too many: 3: y");
        let e = FieldError::new("v", ErrorType::TypeInvalid, Some("1".into()), "z");
        assert_eq!(e.to_string(), "v: Invalid value: 1: z");
    }
}
