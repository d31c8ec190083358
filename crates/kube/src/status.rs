//! Error replies as Kubernetes `Status` objects, with the API server's reasons, codes and
//! message texts, so clients (kube-rs, kubectl) classify them like a real cluster's.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use topograph_api::server::Refused;

/// A failed request: rendered as a `Status` object with the HTTP code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// `details` of the Status: name, group and kind (the resource's plural, as Kubernetes does).
    /// Boxed: errors travel in `Result`s everywhere, and the causes would make every
    /// one of them large.
    pub details: Option<Box<Details>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Details {
    pub name: String,
    pub group: String,
    pub kind: String,
    /// One entry per field problem of a 422 (`StatusCause`); empty otherwise.
    pub causes: Vec<Cause>,
}

/// One field problem of an Invalid status, as `errors.NewInvalid` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// The field error type (`FieldValueRequired`, `FieldValueInvalid`, ...).
    pub reason: String,
    /// The error without its field path (`Required value`, `Invalid value: ...`).
    pub message: String,
    /// The field path (`spec.controlPlaneEndpoint.host`).
    pub field: String,
}

impl ApiError {
    /// The shared refusal (texts as kube-apiserver's), with the details naming the object.
    fn with_details(refused: Refused, group: &str, plural: &str, name: &str) -> Self {
        let Refused {
            code,
            reason,
            message,
        } = refused;
        ApiError {
            code,
            reason,
            message,
            details: Some(Box::new(Details {
                name: name.to_string(),
                group: group.to_string(),
                kind: plural.to_string(),
                causes: Vec::new(),
            })),
        }
    }

    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        Self::with_details(Refused::not_found(group, plural, name), group, plural, name)
    }

    pub fn namespace_not_found(namespace: &str) -> Self {
        Self::not_found("", "namespaces", namespace)
    }

    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        let refused = Refused::already_exists(group, plural, name);
        Self::with_details(refused, group, plural, name)
    }

    pub fn conflict(group: &str, plural: &str, name: &str) -> Self {
        Self::with_details(Refused::conflict(group, plural, name), group, plural, name)
    }

    pub fn conflict_because(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let refused = Refused::conflict_because(group, plural, name, why);
        Self::with_details(refused, group, plural, name)
    }

    /// 422 like `errors.NewInvalid`: the qualified kind, the name and the field problems.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: &str) -> Self {
        let refused = Refused::invalid(group, kind, name, causes);
        Self::with_details(refused, group, kind, name)
    }

    /// 422 like `errors.NewInvalid` with its field errors: each is a cause, and the
    /// message holds them as `field.ErrorList.ToAggregate` prints them (repeated texts
    /// once; one bare, several as `[e1, e2]`). `errors` are (cause, full text) pairs.
    pub fn invalid_causes(
        group: &str,
        kind: &str,
        name: &str,
        errors: Vec<(Cause, String)>,
    ) -> Self {
        let mut texts: Vec<String> = Vec::new();
        for (_, text) in &errors {
            if !texts.contains(text) {
                texts.push(text.clone());
            }
        }
        let aggregate = match texts.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let mut e = Self::invalid(group, kind, name, &aggregate);
        if texts.is_empty() {
            // `NewInvalid` with no errors: no aggregate to print.
            let qualified = if group.is_empty() {
                kind.to_string()
            } else {
                format!("{kind}.{group}")
            };
            e.message = format!("{qualified} \"{name}\" is invalid");
        }
        if let Some(d) = &mut e.details {
            d.causes = errors.into_iter().map(|(c, _)| c).collect();
        }
        e
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError {
            code: 400,
            reason: "BadRequest",
            message: message.into(),
            details: None,
        }
    }

    pub fn method_not_allowed() -> Self {
        ApiError {
            code: 405,
            reason: "MethodNotAllowed",
            message: "the server does not allow this method on the requested resource".into(),
            details: None,
        }
    }

    /// An unknown path: the text kube-apiserver answers for resources it does not serve.
    pub fn path_not_found() -> Self {
        ApiError {
            code: 404,
            reason: "NotFound",
            message: "the server could not find the requested resource".into(),
            details: None,
        }
    }

    /// 406: nothing the client accepts is served for this resource.
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        ApiError {
            code: 406,
            reason: "NotAcceptable",
            message: message.into(),
            details: None,
        }
    }

    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        ApiError {
            code: 415,
            reason: "UnsupportedMediaType",
            message: message.into(),
            details: None,
        }
    }

    /// 410 for a watch from a resourceVersion the event history no longer holds.
    pub fn expired(requested: u64, oldest: u64) -> Self {
        ApiError {
            code: 410,
            reason: "Expired",
            message: format!("too old resource version: {requested} ({oldest})"),
            details: None,
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError {
            code: 500,
            reason: "InternalError",
            message: message.into(),
            details: None,
        }
    }

    /// The `Status` object Kubernetes sends for this error.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            let mut details = serde_json::Map::new();
            if !d.name.is_empty() {
                details.insert("name".into(), Value::String(d.name.clone()));
            }
            if !d.group.is_empty() {
                details.insert("group".into(), Value::String(d.group.clone()));
            }
            details.insert("kind".into(), Value::String(d.kind.clone()));
            if !d.causes.is_empty() {
                let causes = d
                    .causes
                    .iter()
                    .map(|c| {
                        // StatusCause's fields are all `omitempty`.
                        let mut cause = serde_json::Map::new();
                        for (key, value) in [
                            ("reason", &c.reason),
                            ("message", &c.message),
                            ("field", &c.field),
                        ] {
                            if !value.is_empty() {
                                cause.insert(key.into(), Value::String(value.clone()));
                            }
                        }
                        Value::Object(cause)
                    })
                    .collect();
                details.insert("causes".into(), Value::Array(causes));
            }
            status["details"] = Value::Object(details);
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        crate::routes::json_response(code, &self.to_status())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_match_kubernetes() {
        let e = ApiError::not_found("cluster.x-k8s.io", "machinedeployments", "foo");
        assert_eq!(
            e.message,
            "machinedeployments.cluster.x-k8s.io \"foo\" not found"
        );
        assert_eq!(
            e.to_status(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"machinedeployments.cluster.x-k8s.io \"foo\" not found","reason":"NotFound",
                "details":{"name":"foo","group":"cluster.x-k8s.io","kind":"machinedeployments"},"code":404})
        );
        assert_eq!(
            ApiError::conflict("cluster.x-k8s.io", "machinedeployments", "foo").message,
            "Operation cannot be fulfilled on machinedeployments.cluster.x-k8s.io \"foo\": the object has been modified; please apply your changes to the latest version and try again"
        );
        assert_eq!(
            ApiError::already_exists("", "configmaps", "x").message,
            "configmaps \"x\" already exists"
        );
        let cause = |field: &str, message: &str| {
            let c = Cause {
                reason: "FieldValueRequired".into(),
                message: message.into(),
                field: field.into(),
            };
            (c, format!("{field}: {message}"))
        };
        let one = ApiError::invalid_causes("g.io", "Foo", "f", vec![cause("a", "Required value")]);
        assert_eq!(one.message, "Foo.g.io \"f\" is invalid: a: Required value");
        let status = one.to_status();
        assert_eq!(
            status["details"],
            json!({"name": "f", "group": "g.io", "kind": "Foo", "causes": [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "a"}]})
        );
        // Repeated texts are printed once (and still listed as causes).
        let many = ApiError::invalid_causes(
            "g.io",
            "Foo",
            "f",
            vec![
                cause("a", "Required value"),
                cause("b", "Required value"),
                cause("a", "Required value"),
            ],
        );
        assert_eq!(
            many.message,
            "Foo.g.io \"f\" is invalid: [a: Required value, b: Required value]"
        );
        assert_eq!(
            many.to_status()["details"]["causes"]
                .as_array()
                .map(Vec::len),
            Some(3)
        );
        let ns = ApiError::namespace_not_found("x").to_status();
        assert_eq!(ns["message"], "namespaces \"x\" not found");
        assert_eq!(ns["details"], json!({"name":"x","kind":"namespaces"}));
    }
}
