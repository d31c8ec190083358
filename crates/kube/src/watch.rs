//! Watch streams: newline-delimited JSON events (or, for built-in kinds that negotiated
//! it, length-prefixed protobuf `WatchEvent`s) over a chunked response, started from the
//! current state or replayed from the event history, filtered by namespace and
//! selectors, with optional bookmarks and a timeout. A watch that negotiated a Table
//! sends each object as a one-row Table, the column definitions only in the first, as
//! kube-apiserver does.

use crate::conversion::convert;
use crate::media::Format;
use crate::protobuf;
use crate::selector::Filter;
use crate::status::ApiError;
use crate::store::{Event, EventType, Store};
use crate::stored::Stored;
use crate::table::{self, Printer, TableRequest};
use crate::types::ResourceType;
use crate::util::meta_str;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};
use topograph_api::object::object_of;

/// What a watch request asked for.
#[derive(Debug, Clone)]
pub struct WatchParams {
    pub api_version: String,
    pub namespace: Option<String>,
    pub filter: Filter,
    /// None: start from the current objects (sent as ADDED); Some: replay after this rv.
    pub since: Option<u64>,
    /// `sendInitialEvents=true`: after the current objects, a bookmark marks their end.
    pub send_initial_events: bool,
    pub bookmarks: bool,
    pub bookmark_interval: Duration,
    pub timeout: Option<Duration>,
    /// Events carry Tables of their object, printed so, rather than the object.
    pub table: Option<(Printer, TableRequest)>,
}

/// How events are written on the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Json,
    Protobuf(protobuf::Kind),
}

impl Encoding {
    /// One event's bytes. An object that does not fit its protobuf message becomes an
    /// ERROR event saying so, rather than a broken stream.
    fn frame(self, event: &Value) -> Bytes {
        match self {
            Encoding::Json => {
                let object = serde_json::to_vec(&event["object"]).unwrap_or_default();
                json_frame(event["type"].as_str().unwrap_or(""), &object)
            }
            Encoding::Protobuf(kind) => {
                let event_type = event["type"].as_str().unwrap_or("");
                let object = &event["object"];
                let written = if event_type == "ERROR" {
                    protobuf::write_status(object)
                } else {
                    protobuf::write_object(kind, object)
                };
                let (event_type, bytes) = match written {
                    Ok(bytes) => (event_type, bytes),
                    Err(e) => {
                        let status = ApiError::internal(format!(
                            "the object cannot be written as protobuf: {e}"
                        ))
                        .to_status();
                        ("ERROR", protobuf::write_status(&status).unwrap_or_default())
                    }
                };
                Bytes::from(protobuf::watch_frame(event_type, bytes))
            }
        }
    }
}

/// Starts a watch and returns the streaming response; the stream ends on timeout, on
/// shutdown, when the client goes away, or after a 410 when this watcher fell behind.
pub fn start(
    store: &Store,
    rt: Arc<ResourceType>,
    params: WatchParams,
    encoding: Encoding,
    mut shutdown: watch::Receiver<bool>,
) -> Response {
    let begin = store.watch_start(&rt, params.namespace.as_deref(), params.since);
    let converter = store.converter();
    let api_versions = store.storage_api_versions();
    // A change event converted for a plain JSON watch is shared with the other watches
    // of that version.
    let converted =
        (encoding == Encoding::Json && params.table.is_none()).then(|| store.converted_events());
    // A JSON watch of the version objects are stored in sends their stored text as it
    // is: no parsing, no conversion, no writing (the common case for controllers).
    let as_stored = encoding == Encoding::Json
        && params.table.is_none()
        && params.api_version == rt.api_version(&rt.storage_version);
    // Events carry objects as stored; each is sent in the watch's version.
    let in_version = move |rt: &ResourceType, mut line: Value, api_version: &str| -> Value {
        let object = line["object"].take();
        let api_version_of = |group: &str, kind: &str| {
            api_versions
                .get(&(group.to_string(), kind.to_string()))
                .cloned()
        };
        match convert(converter.as_ref(), rt, object, api_version, &api_version_of) {
            Ok(object) => {
                line["object"] = object;
                line
            }
            Err(e) => json!({"type": "ERROR", "object": e.to_status()}),
        }
    };
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let mut tables = Tables {
        table: params.table.clone(),
        headers_sent: false,
    };
    tokio::spawn(async move {
        let mut start = match begin {
            Ok(s) => s,
            Err(e) => {
                let _ = send(
                    &tx,
                    encoding,
                    &mut tables,
                    json!({"type": "ERROR", "object": e.to_status()}),
                )
                .await;
                return;
            }
        };
        // One object's event, in the watch's version and encoding; a change event's
        // conversion is `shared`.
        let frame = |tables: &mut Tables,
                     event_type: EventType,
                     object: &Arc<Stored>,
                     shared: bool|
         -> Bytes {
            if as_stored && object.is_in(&params.api_version) {
                return stored_frame(event_type, object);
            }
            let converted = converted.as_deref().filter(|_| shared);
            if let Some(converted) = converted
                && let Some(bytes) = converted.get(object, &params.api_version)
            {
                return json_frame(event_type.as_str(), &bytes);
            }
            // Built around the parsed object: `json!` would copy it through a serializer.
            let line = object_of([
                ("type", Value::String(event_type.as_str().to_string())),
                ("object", object.value()),
            ]);
            let line = in_version(&rt, line, &params.api_version);
            if let Some(converted) = converted
                && line["type"] != "ERROR"
            {
                let bytes = Bytes::from(topograph_api::json::to_vec(&line["object"]));
                converted.keep(object, &params.api_version, bytes.clone());
                return json_frame(event_type.as_str(), &bytes);
            }
            encoding.frame(&tables.apply(line))
        };
        for obj in std::mem::take(&mut start.objects) {
            if obj.matches(&params.filter)
                && tx
                    .send(frame(&mut tables, EventType::Added, &obj, false))
                    .await
                    .is_err()
            {
                return;
            }
        }
        for ev in std::mem::take(&mut start.replay) {
            if let Some(event_type) = translate(&ev, &params)
                && tx
                    .send(frame(&mut tables, event_type, &ev.object, true))
                    .await
                    .is_err()
            {
                return;
            }
        }
        let mut last_rv = start.rv;
        if params.send_initial_events
            && !send(
                &tx,
                encoding,
                &mut tables,
                bookmark(&rt, &params.api_version, last_rv, true),
            )
            .await
        {
            return;
        }
        let interval = params.bookmark_interval.max(Duration::from_millis(10));
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        let deadline = params.timeout.map(|t| tokio::time::Instant::now() + t);
        let key = rt.key();
        loop {
            tokio::select! {
                received = start.rx.recv() => match received {
                    Ok(ev) => {
                        last_rv = last_rv.max(ev.rv);
                        if ev.type_key != key {
                            continue;
                        }
                        if let Some(event_type) = translate(&ev, &params)
                            && tx.send(frame(&mut tables, event_type, &ev.object, true)).await.is_err()
                        {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let status = ApiError::expired(last_rv, last_rv + 1).to_status();
                        let _ = send(&tx, encoding, &mut tables, json!({"type": "ERROR", "object": status})).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = ticker.tick(), if params.bookmarks => {
                    if !send(&tx, encoding, &mut tables, bookmark(&rt, &params.api_version, last_rv, false)).await {
                        return;
                    }
                }
                _ = sleep_until(deadline) => return,
                _ = shutdown.changed() => return,
                _ = tx.closed() => return,
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = StatusCode::OK;
    let content_type = match encoding {
        Encoding::Json => Format::Json,
        Encoding::Protobuf(_) => Format::Protobuf,
    }
    .stream_media_type();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Sends one event; false when the client is gone.
async fn send(
    tx: &mpsc::Sender<Bytes>,
    encoding: Encoding,
    tables: &mut Tables,
    event: Value,
) -> bool {
    let event = tables.apply(event);
    tx.send(encoding.frame(&event)).await.is_ok()
}

/// Turns the objects of a Table watch's events into Tables.
struct Tables {
    table: Option<(Printer, TableRequest)>,
    headers_sent: bool,
}

impl Tables {
    fn apply(&mut self, mut event: Value) -> Value {
        let Some((printer, request)) = &self.table else {
            return event;
        };
        // Bookmarks and errors keep their objects: kubectl reads them as they are.
        if !matches!(
            event["type"].as_str(),
            Some("ADDED" | "MODIFIED" | "DELETED")
        ) {
            return event;
        }
        let object = event["object"].take();
        let rv = meta_str(&object, "resourceVersion").to_string();
        event["object"] = printer.table(*request, &[object], &rv, !self.headers_sent, table::now());
        self.headers_sent = true;
        event
    }
}

fn bookmark(rt: &ResourceType, api_version: &str, rv: u64, initial_events_end: bool) -> Value {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": api_version, "metadata": metadata}})
}

/// An event of an object sent as stored, from the object's stored text.
fn stored_frame(event_type: EventType, object: &Stored) -> Bytes {
    json_frame_with(event_type.as_str(), object.json_len(), |line| {
        object.write_json(line)
    })
}

/// A JSON watch event: `{"type":…,"object":…}`, `type` first, as kube-apiserver writes it
/// (Go writes a struct's fields in order). Clients decode the event's type before its
/// object then, so they can read the object straight into its own type; with `object`
/// first (the order of a sorted map), serde-based clients such as kube-rs must buffer the
/// whole object before they know what it is.
fn json_frame(event_type: &str, object: &[u8]) -> Bytes {
    json_frame_with(event_type, object.len(), |line| {
        line.extend_from_slice(object)
    })
}

/// A JSON watch event whose object `write_object` writes (`len` bytes).
fn json_frame_with(event_type: &str, len: usize, write_object: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    let mut line = Vec::with_capacity(len + event_type.len() + 24);
    line.extend_from_slice(b"{\"type\":");
    // An event type is one of a few upper-case words: nothing to escape.
    line.push(b'"');
    line.extend_from_slice(event_type.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    write_object(&mut line);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

/// The event a watcher with this namespace and selectors sees: a modification moving an
/// object into or out of the selection is an ADDED or DELETED for it, as in Kubernetes.
pub fn translate(ev: &Event, params: &WatchParams) -> Option<EventType> {
    if let Some(ns) = &params.namespace
        && ev.object.namespace() != ns
    {
        return None;
    }
    let now = ev.selectable().matches(&params.filter);
    let event_type = match ev.event_type {
        EventType::Added | EventType::Deleted if now => ev.event_type,
        EventType::Modified => {
            let before = ev.old.as_ref().is_some_and(|o| o.matches(&params.filter));
            match (before, now) {
                (true, true) => EventType::Modified,
                (false, true) => EventType::Added,
                (true, false) => EventType::Deleted,
                (false, false) => return None,
            }
        }
        _ => return None,
    };
    Some(event_type)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selector::LabelSelector;

    #[test]
    fn selector_watch_sees_objects_enter_and_leave() {
        let params = WatchParams {
            api_version: "v1".into(),
            namespace: Some("default".into()),
            filter: Filter {
                labels: LabelSelector::parse("app=web").unwrap(),
                ..Default::default()
            },
            since: None,
            send_initial_events: false,
            bookmarks: false,
            bookmark_interval: Duration::from_secs(1),
            timeout: None,
            table: None,
        };
        let obj = |app: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default", "labels": {"app": app}}});
        let stored = |o: &Value| {
            let key = (meta_str(o, "namespace").into(), meta_str(o, "name").into());
            Stored::new(key, o)
        };
        let ev = |t, new: Value, old: Option<Value>| Event {
            rv: 2,
            type_key: "/configmaps".into(),
            event_type: t,
            object: Arc::new(stored(&new)),
            old: old.as_ref().map(stored),
            selected: None,
        };
        let kind = |t: Option<EventType>| t.map(|t| t.as_str().to_string());
        assert_eq!(
            kind(translate(
                &ev(EventType::Modified, obj("web"), Some(obj("db"))),
                &params
            ))
            .as_deref(),
            Some("ADDED")
        );
        assert_eq!(
            kind(translate(
                &ev(EventType::Modified, obj("db"), Some(obj("web"))),
                &params
            ))
            .as_deref(),
            Some("DELETED")
        );
        assert_eq!(
            kind(translate(
                &ev(EventType::Modified, obj("web"), Some(obj("web"))),
                &params
            ))
            .as_deref(),
            Some("MODIFIED")
        );
        assert_eq!(
            kind(translate(&ev(EventType::Added, obj("db"), None), &params)),
            None
        );
        let mut other_ns = obj("web");
        other_ns["metadata"]["namespace"] = json!("kube-system");
        assert_eq!(
            kind(translate(&ev(EventType::Added, other_ns, None), &params)),
            None
        );
    }

    #[test]
    fn json_events_name_their_type_before_their_object() {
        let event = json!({"type": "ERROR", "object": {"kind": "Status", "code": 410}});
        let frame = Encoding::Json.frame(&event);
        assert_eq!(
            frame.as_ref(),
            br#"{"type":"ERROR","object":{"code":410,"kind":"Status"}}"#
                .as_slice()
                .iter()
                .chain(b"\n")
                .copied()
                .collect::<Vec<u8>>()
                .as_slice()
        );
        let parsed: Value = serde_json::from_slice(&frame).unwrap_or_default();
        assert_eq!(parsed, event);
    }
}
