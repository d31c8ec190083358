//! Turning validator failures into Kubernetes field errors, as the CRD machinery
//! does: the failure's path joined to the field path, its kind mapped to a field
//! error type, and the bad value either the failure's own or (for variables) the
//! whole raw value.

use topograph_api::field::{ErrorType, FieldError, go_quote};

use crate::openapi::{Code, EVal, Problem};
use crate::value::{Val, go_float, to_json};

/// Where errors are reported and how their values are shown.
pub struct Target<'a> {
    /// The field path of the validated value; `None` is Go's nil path.
    pub root: Option<&'a str>,
    /// Cluster API shows the whole raw value (already quoted) as every bad value and
    /// trims the leading ` in body ` from details; CRDs show each failure's value.
    pub raw_value: Option<&'a str>,
}

impl Target<'_> {
    fn path(&self, name: &str) -> String {
        if name.is_empty() || name == "." {
            return self.root.unwrap_or("<nil>").to_string();
        }
        let name = name.strip_prefix('.').unwrap_or(name);
        match self.root {
            Some(r) => format!("{r}.{name}"),
            None => name.to_string(),
        }
    }

    fn value(&self, v: &EVal) -> Option<String> {
        match self.raw_value {
            Some(raw) => Some(go_quote(raw)),
            None => Some(print_value(v)),
        }
    }

    fn detail(&self, message: &str) -> String {
        if self.raw_value.is_some() {
            message
                .strip_prefix(" in body ")
                .unwrap_or(message)
                .to_string()
        } else {
            message.to_string()
        }
    }

    /// Converts the validator's problems.
    pub fn field_errors(&self, problems: &[Problem]) -> Vec<FieldError> {
        problems.iter().map(|p| self.field_error(p)).collect()
    }

    fn field_error(&self, p: &Problem) -> FieldError {
        let f = match p {
            Problem::Message(m) => {
                return FieldError::new(
                    self.root.unwrap_or("<nil>"),
                    ErrorType::Invalid,
                    self.value(&EVal::Str(String::new())),
                    self.detail(m),
                );
            }
            Problem::Failure(f) => f,
        };
        let path = self.path(&f.name);
        let value_or_empty = if f.value == EVal::Nil {
            EVal::Str(String::new())
        } else {
            f.value.clone()
        };
        match f.code {
            Code::Required => FieldError::new(path, ErrorType::Required, None, ""),
            Code::Enum => {
                let values: Vec<String> = f
                    .values
                    .iter()
                    .map(|v| match v {
                        Val::Str(s) => go_quote(s),
                        other => go_quote(&to_json(other)),
                    })
                    .collect();
                let detail = if values.is_empty() {
                    String::new()
                } else {
                    format!("supported values: {}", values.join(", "))
                };
                FieldError::new(path, ErrorType::NotSupported, self.value(&f.value), detail)
            }
            Code::TooLong => {
                let detail = match f.valid {
                    Some(1) => "may not be more than 1 byte".to_string(),
                    Some(max) if max >= 0 => format!("may not be more than {max} bytes"),
                    _ => "value is too long".to_string(),
                };
                FieldError::new(path, ErrorType::TooLong, None, detail)
            }
            Code::MaxItems | Code::TooManyProperties => {
                let detail = match f.valid {
                    Some(1) => "must have at most 1 item".to_string(),
                    Some(max) if max >= 0 => format!("must have at most {max} items"),
                    _ => "has too many items".to_string(),
                };
                let shown = match (&self.raw_value, &f.value) {
                    (Some(_), _) => self.value(&f.value),
                    (None, EVal::Int(n)) if *n >= 0 => Some(n.to_string()),
                    _ => None,
                };
                FieldError::new(path, ErrorType::TooMany, shown, detail)
            }
            Code::InvalidType => FieldError::new(
                path,
                ErrorType::TypeInvalid,
                self.value(&value_or_empty),
                self.detail(&f.message),
            ),
            _ => FieldError::new(
                path,
                ErrorType::Invalid,
                self.value(&value_or_empty),
                self.detail(&f.message),
            ),
        }
    }
}

/// How `field.Error` prints a bad value: strings quoted, numbers and booleans plain,
/// anything else as JSON.
pub fn print_value(v: &EVal) -> String {
    match v {
        EVal::Nil => "null".to_string(),
        EVal::Str(s) => go_quote(s),
        EVal::Int(i) => i.to_string(),
        EVal::Float(f) => go_float(*f),
        EVal::Data(d) => to_json(d),
    }
}
