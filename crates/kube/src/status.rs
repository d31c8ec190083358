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
    /// Boxed: it is rarely set, and keeps every `Result<_, ApiError>` small.
    pub details: Option<Box<Details>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Details {
    pub name: String,
    pub group: String,
    pub kind: String,
    /// `details.causes`, e.g. the fields of an apply conflict.
    pub causes: Vec<Value>,
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
            if !d.kind.is_empty() {
                details.insert("kind".into(), Value::String(d.kind.clone()));
            }
            if !d.causes.is_empty() {
                details.insert("causes".into(), Value::Array(d.causes.clone()));
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
        let ns = ApiError::namespace_not_found("x").to_status();
        assert_eq!(ns["message"], "namespaces \"x\" not found");
        assert_eq!(ns["details"], json!({"name":"x","kind":"namespaces"}));
    }
}
