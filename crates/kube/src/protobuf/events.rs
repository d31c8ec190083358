//! `events.k8s.io/v1` Event between its JSON and protobuf forms (the core Event's
//! references and source, with its own series and deprecated copies of the core fields).

use super::core::{
    event_source_field, event_source_to_json, metadata_from_json, metadata_to_json,
    object_reference_to_json, reference_field, reference_ptr,
};
use super::gojson::{Reader, Result, Writer};
use k8s_pb::api::events::v1::{Event, EventSeries};
use serde_json::Value;

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
        event_time: r.micro_time("eventTime")?,
        series,
        reporting_controller: r.string("reportingController")?,
        reporting_instance: r.string("reportingInstance")?,
        action: r.string("action")?,
        reason: r.string("reason")?,
        regarding: reference_field(r, "regarding")?,
        related: reference_ptr(r, "related")?,
        note: r.string("note")?,
        r#type: r.string("type")?,
        deprecated_source: event_source_field(r, "deprecatedSource")?,
        deprecated_first_timestamp: r.time("deprecatedFirstTimestamp")?,
        deprecated_last_timestamp: r.time("deprecatedLastTimestamp")?,
        deprecated_count: r.int32("deprecatedCount")?,
    })
}

pub fn event_to_json(e: Event) -> Result<Value> {
    let mut w = Writer::new();
    metadata_to_json(&mut w, e.metadata)?;
    w.micro_time("eventTime", e.event_time)?;
    let series = match e.series {
        None => None,
        Some(s) => {
            // Unlike the core Event's series, both fields are written even when zero.
            let mut sw = Writer::new();
            sw.int_always("count", s.count)
                .micro_time("lastObservedTime", s.last_observed_time)?;
            Some(sw.done())
        }
    };
    w.object_ptr("series", series)
        .str("reportingController", e.reporting_controller)
        .str("reportingInstance", e.reporting_instance)
        .str("action", e.action)
        .str("reason", e.reason)
        .object(
            "regarding",
            object_reference_to_json(e.regarding.unwrap_or_default()),
        )
        .object_ptr("related", e.related.map(object_reference_to_json))
        .str("note", e.note)
        .str("type", e.r#type)
        .object(
            "deprecatedSource",
            event_source_to_json(e.deprecated_source),
        );
    w.time("deprecatedFirstTimestamp", e.deprecated_first_timestamp)?
        .time("deprecatedLastTimestamp", e.deprecated_last_timestamp)?
        .int("deprecatedCount", e.deprecated_count);
    Ok(w.done())
}
