//! Answers in the format the request negotiated: objects, lists and `Status` errors as
//! JSON, YAML or protobuf. A stored built-in object that does not fit its kind's message
//! (this server stores what JSON clients wrote, unchecked) is answered in JSON when the
//! client takes JSON too, and is otherwise a 500 that names the field.

use crate::media::{Format, Negotiated};
use crate::protobuf::{self, CodecError};
use crate::routes::json_response;
use crate::status::ApiError;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

/// How one request's answers are written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answer {
    pub negotiated: Negotiated,
    /// The resource's protobuf kind, when it has one.
    pub kind: Option<protobuf::Kind>,
}

fn bytes_response(code: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn yaml_response(code: StatusCode, value: &Value) -> Response {
    match serde_saphyr::to_string(value) {
        Ok(text) => bytes_response(code, crate::media::YAML, text.into_bytes()),
        Err(e) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &ApiError::internal(format!("writing YAML: {e}")).to_status(),
        ),
    }
}

impl Answer {
    pub fn format(&self) -> Format {
        self.negotiated.format
    }

    pub fn object(&self, code: StatusCode, object: &Value) -> Response {
        self.encoded(code, object, protobuf::write_object)
    }

    /// JSON text written already (objects as stored), when the request takes JSON.
    pub fn json_text(&self, code: StatusCode, body: Vec<u8>) -> Option<Response> {
        (self.format() == Format::Json).then(|| bytes_response(code, "application/json", body))
    }

    pub fn list(&self, list: &Value) -> Response {
        self.encoded(StatusCode::OK, list, protobuf::write_list)
    }

    fn encoded(
        &self,
        code: StatusCode,
        value: &Value,
        write: fn(protobuf::Kind, &Value) -> Result<Vec<u8>, CodecError>,
    ) -> Response {
        match (self.format(), self.kind) {
            (Format::Yaml, _) => yaml_response(code, value),
            (Format::Protobuf, Some(kind)) => match write(kind, value) {
                Ok(bytes) => bytes_response(code, crate::media::PROTOBUF, bytes),
                Err(_) if self.negotiated.json_too => json_response(code, value),
                Err(e) => self.error(ApiError::internal(format!(
                    "the object cannot be written as protobuf: {e}"
                ))),
            },
            _ => json_response(code, value),
        }
    }

    /// An error as the `Status` object, in the negotiated format.
    pub fn error(&self, e: ApiError) -> Response {
        let code = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let status = e.to_status();
        match self.format() {
            Format::Yaml => yaml_response(code, &status),
            // A Status is a meta type: protobuf for any resource that negotiated it.
            Format::Protobuf => match protobuf::write_status(&status) {
                Ok(bytes) => bytes_response(code, crate::media::PROTOBUF, bytes),
                Err(_) => json_response(code, &status),
            },
            Format::Json => json_response(code, &status),
        }
    }
}
