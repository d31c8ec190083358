//! Refusals on the wire: violations ([`topograph_api::Violation`]) carried as
//! INVALID_ARGUMENT with a `google.rpc.BadRequest` detail, and read back from one, so
//! every service answers a bad request the same way and every client reads it the same
//! way.

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};
use topograph_api::Violation;

/// INVALID_ARGUMENT with a `google.rpc.BadRequest` listing `violations`; the message
/// names the first few, so a client that shows only messages still says what is wrong.
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

/// The violations of an INVALID_ARGUMENT status that carries them; `None` for any other
/// status (the request may have been fine and the service at fault).
pub fn of_status(status: &Status) -> Option<Vec<Violation>> {
    if status.code() != Code::InvalidArgument {
        return None;
    }
    let bad_request = status.get_details_bad_request()?;
    if bad_request.field_violations.is_empty() {
        return None;
    }
    Some(
        bad_request
            .field_violations
            .into_iter()
            .map(|v| Violation::new(v.field, v.description))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_carries_every_violation_and_gives_them_back() {
        let sent = vec![
            Violation::new("objects[0].spec", "a"),
            Violation::new("objects[1].metadata.name", "b"),
        ];
        let status = invalid(sent.clone());
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(
            status.message().starts_with("2 problems"),
            "{}",
            status.message()
        );
        assert_eq!(of_status(&status), Some(sent));
        assert_eq!(of_status(&Status::unavailable("down")), None);
        assert_eq!(of_status(&Status::invalid_argument("no details")), None);
    }
}
