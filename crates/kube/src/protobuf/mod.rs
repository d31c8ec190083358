//! `application/vnd.kubernetes.protobuf` for the built-in kinds: objects, lists, Status
//! errors, DeleteOptions bodies and watch events, over the messages of the `k8s-pb`
//! crate (decision 0022).
//!
//! The store keeps JSON, so every protobuf body is converted on the way in and every
//! answer on the way out, by the rules of Go's typed structs ([`gojson`]): a client gets
//! the bytes kube-apiserver would send, and JSON that Go would write comes back from the
//! wire unchanged. On the wire an object is the magic `k8s\0` followed by a
//! `runtime.Unknown` envelope naming its apiVersion and kind around the message; a watch
//! sends `WatchEvent` messages (the object inside enveloped), each after its length as
//! four big-endian bytes.

mod core;
mod crd;
mod events;
pub mod gojson;
mod meta;
pub mod time;

use crate::status::ApiError;
use crate::types::ResourceType;
pub use gojson::CodecError;
use gojson::{Reader, error};
use k8s_pb::apimachinery::pkg::apis::meta::v1::{DeleteOptions, WatchEvent};
use k8s_pb::apimachinery::pkg::runtime::{RawExtension, TypeMeta, Unknown};
use prost::Message;
use serde_json::Value;

/// What every protobuf body starts with.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// A kind served in protobuf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Namespace,
    ConfigMap,
    Secret,
    /// `v1` Event.
    Event,
    /// `events.k8s.io/v1` Event.
    EventsEvent,
    CustomResourceDefinition,
}

impl Kind {
    /// The protobuf kind of a group's kind; custom resources have none.
    pub fn of(group: &str, kind: &str) -> Option<Kind> {
        match (group, kind) {
            ("", "Namespace") => Some(Kind::Namespace),
            ("", "ConfigMap") => Some(Kind::ConfigMap),
            ("", "Secret") => Some(Kind::Secret),
            ("", "Event") => Some(Kind::Event),
            ("events.k8s.io", "Event") => Some(Kind::EventsEvent),
            (crate::types::CRD_GROUP, "CustomResourceDefinition") => {
                Some(Kind::CustomResourceDefinition)
            }
            _ => None,
        }
    }

    /// The protobuf kind of a served resource in `version` (every message here is v1's).
    pub fn for_type(rt: &ResourceType, version: &str) -> Option<Kind> {
        (version == "v1").then(|| Kind::of(&rt.group, &rt.kind))?
    }

    /// The object's message (no envelope). Fails when the JSON does not fit the kind.
    pub fn encode(self, object: &Value) -> Result<Vec<u8>, CodecError> {
        let r = Reader::of(object, "")?;
        Ok(match self {
            Kind::Namespace => core::namespace_from_json(&r)?.encode_to_vec(),
            Kind::ConfigMap => core::config_map_from_json(&r)?.encode_to_vec(),
            Kind::Secret => core::secret_from_json(&r)?.encode_to_vec(),
            Kind::Event => core::event_from_json(&r)?.encode_to_vec(),
            Kind::EventsEvent => events::event_from_json(&r)?.encode_to_vec(),
            Kind::CustomResourceDefinition => crd::crd_from_json(&r)?.encode_to_vec(),
        })
    }

    /// The object a message holds, as JSON without apiVersion and kind.
    pub fn decode(self, raw: &[u8]) -> Result<Value, CodecError> {
        fn message<M: Message + Default>(raw: &[u8]) -> Result<M, CodecError> {
            M::decode(raw).map_err(|e| error("", e.to_string()))
        }
        match self {
            Kind::Namespace => core::namespace_to_json(message(raw)?),
            Kind::ConfigMap => core::config_map_to_json(message(raw)?),
            Kind::Secret => core::secret_to_json(message(raw)?),
            Kind::Event => core::event_to_json(message(raw)?),
            Kind::EventsEvent => events::event_to_json(message(raw)?),
            Kind::CustomResourceDefinition => crd::crd_to_json(message(raw)?),
        }
    }
}

/// The magic and envelope around a message.
pub fn wrap(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.to_string()),
            kind: Some(kind.to_string()),
        }),
        raw: Some(raw),
        // Written empty, as Go writes them.
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = Vec::with_capacity(unknown.encoded_len() + MAGIC.len());
    out.extend_from_slice(MAGIC);
    unknown.encode(&mut out).unwrap_or_default();
    out
}

/// An envelope's contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwrapped {
    pub api_version: String,
    pub kind: String,
    pub raw: Vec<u8>,
}

/// Opens an envelope; the error is a 400's message.
pub fn unwrap(body: &[u8]) -> Result<Unwrapped, String> {
    let Some(rest) = body.strip_prefix(MAGIC.as_slice()) else {
        return Err(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
                .to_string(),
        );
    };
    let unknown = Unknown::decode(rest).map_err(|e| format!("invalid protobuf envelope: {e}"))?;
    if let Some(encoding) = unknown.content_encoding.filter(|e| !e.is_empty()) {
        return Err(format!("unsupported content encoding {encoding:?}"));
    }
    if let Some(ct) = unknown
        .content_type
        .filter(|c| !c.is_empty() && c != crate::media::PROTOBUF)
    {
        return Err(format!(
            "unsupported content type {ct:?} inside the envelope"
        ));
    }
    let tm = unknown.type_meta.unwrap_or_default();
    Ok(Unwrapped {
        api_version: tm.api_version.unwrap_or_default(),
        kind: tm.kind.unwrap_or_default(),
        raw: unknown.raw.unwrap_or_default(),
    })
}

/// An object in a request body, as the JSON the store takes (apiVersion and kind from
/// the envelope, or the resource's when it names none).
pub fn read_object(
    kind: Kind,
    api_version: &str,
    kind_name: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let env = unwrap(body).map_err(ApiError::bad_request)?;
    if !env.kind.is_empty() && env.kind != kind_name {
        // The store's own check would say the same of a JSON body.
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({}) does not match the expected kind ({kind_name})",
            env.kind
        )));
    }
    let mut object = kind.decode(&env.raw).map_err(|e| {
        ApiError::bad_request(format!(
            "the {kind_name} in the protobuf body is invalid: {e}"
        ))
    })?;
    if let Value::Object(map) = &mut object {
        let api_version = if env.api_version.is_empty() {
            api_version.to_string()
        } else {
            env.api_version
        };
        map.insert("apiVersion".into(), Value::String(api_version));
        map.insert("kind".into(), Value::String(kind_name.to_string()));
    }
    Ok(object)
}

fn type_of(object: &Value) -> (&str, &str) {
    let s = |k: &str| object.get(k).and_then(Value::as_str).unwrap_or("");
    (s("apiVersion"), s("kind"))
}

/// An object (apiVersion and kind in it) as a protobuf body.
pub fn write_object(kind: Kind, object: &Value) -> Result<Vec<u8>, CodecError> {
    let (api_version, kind_name) = type_of(object);
    Ok(wrap(api_version, kind_name, kind.encode(object)?))
}

/// A list object (`{apiVersion, kind, metadata, items}`) as a protobuf body. Every list
/// message is ListMeta in field 1 and the items in field 2, so one writer serves all.
pub fn write_list(kind: Kind, list: &Value) -> Result<Vec<u8>, CodecError> {
    let r = Reader::of(list, "")?;
    let metadata = match r.object("metadata")? {
        Some(m) => meta::list_meta_from_json(&m.reader()?)?,
        None => Default::default(),
    };
    let mut raw = Vec::new();
    prost::encoding::message::encode(1, &metadata, &mut raw);
    for item in r.items("items")? {
        let bytes = kind.encode(item.value()).map_err(|e| CodecError {
            path: format!("{}.{}", item.path(), e.path.trim_start_matches('.')),
            message: e.message,
        })?;
        prost::encoding::bytes::encode(2, &bytes, &mut raw);
    }
    let (api_version, kind_name) = type_of(list);
    Ok(wrap(api_version, kind_name, raw))
}

/// A `Status` (`ApiError::to_status`) as a protobuf body.
pub fn write_status(status: &Value) -> Result<Vec<u8>, CodecError> {
    let message = meta::status_from_json(&Reader::of(status, "")?)?;
    Ok(wrap("v1", "Status", message.encode_to_vec()))
}

/// A delete's DeleteOptions body in protobuf, as the JSON a delete reads.
pub fn read_delete_options(body: &[u8]) -> Result<Value, ApiError> {
    let env = unwrap(body).map_err(ApiError::bad_request)?;
    if !env.kind.is_empty() && env.kind != "DeleteOptions" {
        return Err(ApiError::bad_request(format!(
            "the body of a delete must be DeleteOptions, not {}",
            env.kind
        )));
    }
    let options = DeleteOptions::decode(env.raw.as_slice())
        .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?;
    Ok(meta::delete_options_to_json(options))
}

/// One watch event on a protobuf watch stream: its length, then the `WatchEvent` whose
/// object is a whole protobuf body (magic and envelope).
pub fn watch_frame(event_type: &str, object: Vec<u8>) -> Vec<u8> {
    let event = WatchEvent {
        r#type: Some(event_type.to_string()),
        object: Some(RawExtension { raw: Some(object) }),
    };
    let message = event.encode_to_vec();
    let len = u32::try_from(message.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(message.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&message);
    out
}

#[cfg(test)]
mod tests;
