//! The core (`v1`) kinds served: Namespace, ConfigMap, Secret and Event, with the
//! ObjectReference and EventSource they use, between their JSON and protobuf forms.
//! Secret `data` and ConfigMap `binaryData` are base64 in JSON and raw bytes on the wire.

use super::gojson::{Reader, Result, Writer};
use super::meta::{object_meta_from_json, object_meta_to_json};
use k8s_pb::api::core::v1::{
    ConfigMap, Event, EventSeries, EventSource, Namespace, NamespaceCondition, NamespaceSpec,
    NamespaceStatus, ObjectReference, Secret,
};
use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

/// An object's metadata: Go always writes the struct, so a missing one is empty.
pub fn metadata_from_json(r: &Reader) -> Result<Option<ObjectMeta>> {
    match r.object("metadata")? {
        Some(m) => object_meta_from_json(&m.reader()?).map(Some),
        None => Ok(Some(ObjectMeta::default())),
    }
}

pub fn metadata_to_json(w: &mut Writer, m: Option<ObjectMeta>) -> Result<()> {
    w.object("metadata", object_meta_to_json(m.unwrap_or_default())?);
    Ok(())
}

pub fn namespace_from_json(r: &Reader) -> Result<Namespace> {
    let spec = match r.object("spec")? {
        Some(s) => NamespaceSpec {
            finalizers: s.reader()?.strings("finalizers")?,
        },
        None => NamespaceSpec::default(),
    };
    let status = match r.object("status")? {
        None => NamespaceStatus::default(),
        Some(s) => {
            let s = s.reader()?;
            let conditions = s
                .items("conditions")?
                .iter()
                .map(|c| {
                    let c = c.reader()?;
                    Ok(NamespaceCondition {
                        r#type: c.string("type")?,
                        status: c.string("status")?,
                        last_transition_time: c.time("lastTransitionTime")?,
                        reason: c.string("reason")?,
                        message: c.string("message")?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            NamespaceStatus {
                phase: s.string("phase")?,
                conditions,
            }
        }
    };
    Ok(Namespace {
        metadata: metadata_from_json(r)?,
        spec: Some(spec),
        status: Some(status),
    })
}

pub fn namespace_to_json(n: Namespace) -> Result<Value> {
    let mut w = Writer::new();
    metadata_to_json(&mut w, n.metadata)?;
    let mut spec = Writer::new();
    spec.strings("finalizers", n.spec.unwrap_or_default().finalizers);
    w.object("spec", spec.done());
    let status = n.status.unwrap_or_default();
    let conditions = status
        .conditions
        .into_iter()
        .map(|c| {
            let mut cw = Writer::new();
            cw.str_always("type", c.r#type)
                .str_always("status", c.status);
            cw.time("lastTransitionTime", c.last_transition_time)?
                .str("reason", c.reason)
                .str("message", c.message);
            Ok(cw.done())
        })
        .collect::<Result<Vec<_>>>()?;
    let mut sw = Writer::new();
    sw.str("phase", status.phase).list("conditions", conditions);
    w.object("status", sw.done());
    Ok(w.done())
}

pub fn config_map_from_json(r: &Reader) -> Result<ConfigMap> {
    Ok(ConfigMap {
        metadata: metadata_from_json(r)?,
        immutable: r.boolean("immutable")?,
        data: r.string_map("data")?,
        binary_data: r.bytes_map("binaryData")?,
    })
}

pub fn config_map_to_json(c: ConfigMap) -> Result<Value> {
    let mut w = Writer::new();
    metadata_to_json(&mut w, c.metadata)?;
    w.bool_ptr("immutable", c.immutable)
        .string_map("data", c.data)
        .bytes_map("binaryData", c.binary_data);
    Ok(w.done())
}

pub fn secret_from_json(r: &Reader) -> Result<Secret> {
    Ok(Secret {
        metadata: metadata_from_json(r)?,
        immutable: r.boolean("immutable")?,
        data: r.bytes_map("data")?,
        string_data: r.string_map("stringData")?,
        r#type: r.string("type")?,
    })
}

pub fn secret_to_json(s: Secret) -> Result<Value> {
    let mut w = Writer::new();
    metadata_to_json(&mut w, s.metadata)?;
    w.bool_ptr("immutable", s.immutable)
        .bytes_map("data", s.data)
        .string_map("stringData", s.string_data)
        .str("type", s.r#type);
    Ok(w.done())
}

pub fn object_reference_from_json(r: &Reader) -> Result<ObjectReference> {
    Ok(ObjectReference {
        kind: r.string("kind")?,
        namespace: r.string("namespace")?,
        name: r.string("name")?,
        uid: r.string("uid")?,
        api_version: r.string("apiVersion")?,
        resource_version: r.string("resourceVersion")?,
        field_path: r.string("fieldPath")?,
    })
}

pub fn object_reference_to_json(o: ObjectReference) -> Value {
    let mut w = Writer::new();
    w.str("kind", o.kind)
        .str("namespace", o.namespace)
        .str("name", o.name)
        .str("uid", o.uid)
        .str("apiVersion", o.api_version)
        .str("resourceVersion", o.resource_version)
        .str("fieldPath", o.field_path);
    w.done()
}

/// An object reference that is a struct field: read as empty when missing.
pub fn reference_field(r: &Reader, key: &str) -> Result<Option<ObjectReference>> {
    match r.object(key)? {
        Some(o) => object_reference_from_json(&o.reader()?).map(Some),
        None => Ok(Some(ObjectReference::default())),
    }
}

/// An object reference behind a pointer.
pub fn reference_ptr(r: &Reader, key: &str) -> Result<Option<ObjectReference>> {
    match r.object(key)? {
        Some(o) => object_reference_from_json(&o.reader()?).map(Some),
        None => Ok(None),
    }
}

pub fn event_source_field(r: &Reader, key: &str) -> Result<Option<EventSource>> {
    let Some(s) = r.object(key)? else {
        return Ok(Some(EventSource::default()));
    };
    let s = s.reader()?;
    Ok(Some(EventSource {
        component: s.string("component")?,
        host: s.string("host")?,
    }))
}

pub fn event_source_to_json(s: Option<EventSource>) -> Value {
    let s = s.unwrap_or_default();
    let mut w = Writer::new();
    w.str("component", s.component).str("host", s.host);
    w.done()
}

pub fn event_from_json(r: &Reader) -> Result<Event> {
    let series = match r.object("series")? {
        None => None,
        Some(s) => {
            let s = s.reader()?;
            Some(EventSeries {
                count: s.int32("count")?,
                last_observed_time: s.micro_time("lastObservedTime")?,
            })
        }
    };
    Ok(Event {
        metadata: metadata_from_json(r)?,
        involved_object: reference_field(r, "involvedObject")?,
        reason: r.string("reason")?,
        message: r.string("message")?,
        source: event_source_field(r, "source")?,
        first_timestamp: r.time("firstTimestamp")?,
        last_timestamp: r.time("lastTimestamp")?,
        count: r.int32("count")?,
        r#type: r.string("type")?,
        event_time: r.micro_time("eventTime")?,
        series,
        action: r.string("action")?,
        related: reference_ptr(r, "related")?,
        reporting_component: r.string("reportingComponent")?,
        reporting_instance: r.string("reportingInstance")?,
    })
}

pub fn event_to_json(e: Event) -> Result<Value> {
    let mut w = Writer::new();
    metadata_to_json(&mut w, e.metadata)?;
    w.object(
        "involvedObject",
        object_reference_to_json(e.involved_object.unwrap_or_default()),
    )
    .str("reason", e.reason)
    .str("message", e.message)
    .object("source", event_source_to_json(e.source));
    w.time("firstTimestamp", e.first_timestamp)?
        .time("lastTimestamp", e.last_timestamp)?
        .int("count", e.count)
        .str("type", e.r#type)
        .micro_time("eventTime", e.event_time)?;
    let series = match e.series {
        None => None,
        Some(s) => {
            let mut sw = Writer::new();
            sw.int("count", s.count)
                .micro_time("lastObservedTime", s.last_observed_time)?;
            Some(sw.done())
        }
    };
    w.object_ptr("series", series)
        .str("action", e.action)
        .object_ptr("related", e.related.map(object_reference_to_json))
        .str_always("reportingComponent", e.reporting_component)
        .str_always("reportingInstance", e.reporting_instance);
    Ok(w.done())
}
