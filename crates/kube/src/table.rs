//! `meta.k8s.io` Tables, what `kubectl get` asks for (`Accept:
//! application/json;as=Table;v=v1;g=meta.k8s.io`) and prints as columns. The columns
//! and cells are kube-apiserver's: its printers for the built-in kinds served here
//! (Namespace, Secret, ConfigMap, both Events), its default convertor (Name, Created At)
//! for CustomResourceDefinitions, and apiextensions' convertor for custom resources
//! (Name and the version's `additionalPrinterColumns`, or Name and Age without them).
//! Each row carries, as `includeObject` asks, nothing, the object's metadata as a
//! `PartialObjectMetadata` (the default) or the whole object.

use crate::jsonpath::JsonPath;
use crate::protobuf::time::parse_rfc3339;
use crate::status::ApiError;
use crate::store::Store;
use crate::types::{CRD_GROUP, CRD_PLURAL, ResourceType};
use serde_json::{Map, Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

/// The group of `Table` and `PartialObjectMetadata`.
pub const META_GROUP: &str = "meta.k8s.io";

/// What a row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    /// The `includeObject` query parameter; absent or empty is `Metadata`.
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value.unwrap_or("") {
            "" | "Metadata" => Ok(Include::Metadata),
            "None" => Ok(Include::None),
            "Object" => Ok(Include::Object),
            other => Err(ApiError::bad_request(format!(
                "Unable to convert to Table as requested: includeObject: Unsupported value: \"{other}\": supported values: \"Metadata\", \"None\", \"Object\""
            ))),
        }
    }
}

/// A Table request: the Table's `apiVersion` (`meta.k8s.io/v1` or `/v1beta1`) and what
/// rows carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableRequest {
    pub api_version: &'static str,
    pub include: Include,
}

/// One column definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
}

impl Column {
    fn new(name: &str, type_: &str, format: &str, description: &str, priority: i64) -> Self {
        Column {
            name: name.into(),
            type_: type_.into(),
            format: format.into(),
            description: description.into(),
            priority,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

// The descriptions are the Go types' SwaggerDoc texts, which kube-apiserver's printers use.
const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATED_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const SECRET_TYPE_DOC: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
const SECRET_DATA_DOC: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
const CONFIGMAP_DATA_DOC: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
const EVENT_DOCS: [&str; 8] = [
    "The time at which the most recent occurrence of this event was recorded.",
    "Type of this event (Normal, Warning), new types could be added in the future",
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    "The object that this event is about.",
    "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
    "The component reporting this event. Should be a short machine understandable string.",
    "A human-readable description of the status of this operation.",
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
];
const EVENT_COUNT_DOC: &str = "The number of times this event has occurred.";

/// How a kind's rows get their cells.
#[derive(Debug, Clone, PartialEq)]
enum Cells {
    Namespace,
    Secret,
    ConfigMap,
    /// `events.k8s.io`: the same printer, reading the new API's field names.
    Event {
        events_api: bool,
    },
    /// kube-apiserver's default convertor: the name and the creation time as written.
    CreatedAt,
    /// A CRD's columns after Name: each with its path, or none when unreadable.
    Custom(Vec<JsonPath>),
}

/// The columns of one resource in one version, and how to fill them.
#[derive(Debug, Clone, PartialEq)]
pub struct Printer {
    columns: Vec<Column>,
    cells: Cells,
}

impl Printer {
    /// The printer of a built-in kind, `None` for a custom resource.
    pub fn builtin(rt: &ResourceType) -> Option<Self> {
        let name = || Column::new("Name", "string", "name", NAME_DOC, 0);
        let age = || Column::new("Age", "string", "", CREATED_DOC, 0);
        let (columns, cells) = match (rt.group.as_str(), rt.plural.as_str()) {
            ("", "namespaces") => (
                vec![
                    name(),
                    Column::new("Status", "string", "", "The status of the namespace", 0),
                    age(),
                ],
                Cells::Namespace,
            ),
            ("", "secrets") => (
                vec![
                    name(),
                    Column::new("Type", "string", "", SECRET_TYPE_DOC, 0),
                    Column::new("Data", "string", "", SECRET_DATA_DOC, 0),
                    age(),
                ],
                Cells::Secret,
            ),
            ("", "configmaps") => (
                vec![
                    name(),
                    Column::new("Data", "string", "", CONFIGMAP_DATA_DOC, 0),
                    age(),
                ],
                Cells::ConfigMap,
            ),
            (group @ ("" | "events.k8s.io"), "events") => {
                let [
                    last,
                    type_,
                    reason,
                    object,
                    subobject,
                    source,
                    message,
                    first,
                ] = EVENT_DOCS;
                (
                    vec![
                        Column::new("Last Seen", "string", "", last, 0),
                        Column::new("Type", "string", "", type_, 0),
                        Column::new("Reason", "string", "", reason, 0),
                        Column::new("Object", "string", "", object, 0),
                        Column::new("Subobject", "string", "", subobject, 1),
                        Column::new("Source", "string", "", source, 1),
                        Column::new("Message", "string", "", message, 0),
                        Column::new("First Seen", "string", "", first, 1),
                        Column::new("Count", "string", "", EVENT_COUNT_DOC, 1),
                        Column::new("Name", "string", "name", NAME_DOC, 1),
                    ],
                    Cells::Event {
                        events_api: !group.is_empty(),
                    },
                )
            }
            (CRD_GROUP, CRD_PLURAL) => (
                vec![
                    name(),
                    Column::new("Created At", "date", "", CREATED_DOC, 0),
                ],
                Cells::CreatedAt,
            ),
            _ => return None,
        };
        Some(Printer { columns, cells })
    }

    /// apiextensions' convertor for a CRD version's `additionalPrinterColumns`: Name,
    /// then each column, or Name and Age when there are none. As kube-apiserver does
    /// with a path it cannot read, the columns stop before it.
    pub fn custom(printer_columns: &[Value]) -> Self {
        let default = [
            json!({"name": "Age", "type": "date", "description": CREATED_DOC,
            "jsonPath": ".metadata.creationTimestamp"}),
        ];
        let printer_columns = if printer_columns.is_empty() {
            &default[..]
        } else {
            printer_columns
        };
        let mut columns = vec![Column::new("Name", "string", "name", NAME_DOC, 0)];
        let mut paths = Vec::new();
        for col in printer_columns {
            let s = |k: &str| col.get(k).and_then(Value::as_str).unwrap_or("");
            let Ok(path) = JsonPath::parse(s("jsonPath")) else {
                tracing::debug!(
                    "printer column {:?} has an unreadable path {:?}",
                    s("name"),
                    s("jsonPath")
                );
                break;
            };
            let description = match s("description") {
                "" => format!(
                    "Custom resource definition column (in JSONPath format): {}",
                    s("jsonPath")
                ),
                d => d.to_string(),
            };
            columns.push(Column {
                name: s("name").into(),
                type_: s("type").into(),
                format: s("format").into(),
                description,
                priority: col.get("priority").and_then(Value::as_i64).unwrap_or(0),
            });
            paths.push(path);
        }
        Printer {
            columns,
            cells: Cells::Custom(paths),
        }
    }

    /// The printer for `rt` served in `version`: a custom resource's columns come from
    /// its CRD's entry for that version.
    pub fn for_resource(store: &Store, rt: &ResourceType, version: &str) -> Self {
        if let Some(printer) = Self::builtin(rt) {
            return printer;
        }
        let columns = store
            .resolve(CRD_GROUP, CRD_PLURAL)
            .and_then(|crds| {
                store
                    .get(&crds, "", &format!("{}.{}", rt.plural, rt.group))
                    .ok()
            })
            .and_then(|crd| {
                crd.pointer("/spec/versions")
                    .and_then(Value::as_array)?
                    .iter()
                    .find(|v| v.get("name").and_then(Value::as_str) == Some(version))?
                    .get("additionalPrinterColumns")
                    .and_then(Value::as_array)
                    .cloned()
            })
            .unwrap_or_default();
        Self::custom(&columns)
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// One object's cells, ages counted up to `now` (nanoseconds since the epoch).
    pub fn cells(&self, obj: &Value, now: i128) -> Vec<Value> {
        let name = json!(str_at(obj, &["metadata", "name"]));
        let age = || json!(since(obj.pointer("/metadata/creationTimestamp"), now));
        let len = |key: &str| json!(obj.get(key).and_then(Value::as_object).map_or(0, Map::len));
        match &self.cells {
            Cells::Namespace => vec![name, json!(str_at(obj, &["status", "phase"])), age()],
            Cells::Secret => vec![name, json!(str_at(obj, &["type"])), len("data"), age()],
            Cells::ConfigMap => {
                let count = ["data", "binaryData"]
                    .iter()
                    .map(|k| obj.get(*k).and_then(Value::as_object).map_or(0, Map::len))
                    .sum::<usize>();
                vec![name, json!(count), age()]
            }
            Cells::Event { events_api } => event_cells(obj, *events_api, now),
            Cells::CreatedAt => {
                // Written as Go's time.RFC3339 in UTC; a zero time is 0001-01-01.
                let created = obj
                    .pointer("/metadata/creationTimestamp")
                    .and_then(Value::as_str)
                    .and_then(|t| parse_rfc3339(t).ok())
                    .and_then(|(secs, _)| crate::protobuf::time::format_seconds(secs).ok())
                    .unwrap_or_else(|| "0001-01-01T00:00:00Z".into());
                vec![name, json!(created)]
            }
            Cells::Custom(paths) => {
                let mut cells = vec![name];
                for (path, column) in paths.iter().zip(&self.columns[1..]) {
                    let found = path.find(obj);
                    cells.push(match found.first() {
                        None => Value::Null,
                        Some(value) => custom_cell(&column.type_, value, now),
                    });
                }
                cells
            }
        }
    }

    /// The Table of `objects` (already in the requested version). `headers`: whether
    /// the column definitions are included (a watch sends them with its first event
    /// only, as kube-apiserver does).
    pub fn table(
        &self,
        request: TableRequest,
        objects: &[Value],
        resource_version: &str,
        headers: bool,
        now: i128,
    ) -> Value {
        let rows: Vec<Value> = objects
            .iter()
            .map(|obj| {
                let object = match request.include {
                    Include::None => Value::Null,
                    Include::Metadata => json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": request.api_version,
                        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
                    }),
                    Include::Object => obj.clone(),
                };
                json!({"cells": self.cells(obj, now), "object": object})
            })
            .collect();
        let mut metadata = Map::new();
        if !resource_version.is_empty() {
            metadata.insert("resourceVersion".into(), json!(resource_version));
        }
        // The default convertor appends to a nil slice: an empty list has null rows.
        let rows = if rows.is_empty() && self.cells == Cells::CreatedAt {
            Value::Null
        } else {
            Value::Array(rows)
        };
        let columns = if headers {
            Value::Array(self.columns.iter().map(Column::to_json).collect())
        } else {
            Value::Null
        };
        json!({
            "kind": "Table",
            "apiVersion": request.api_version,
            "metadata": metadata,
            "columnDefinitions": columns,
            "rows": rows,
        })
    }
}

fn str_at<'a>(obj: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(obj, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// kube-apiserver's event printer, reading a core `v1` Event or (`events_api`) an
/// `events.k8s.io` one, whose fields the API server maps onto the same internal Event.
fn event_cells(obj: &Value, events_api: bool, now: i128) -> Vec<Value> {
    let [
        first_ts,
        last_ts,
        count_key,
        regarding,
        message,
        source,
        controller,
    ] = if events_api {
        [
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
            "regarding",
            "note",
            "deprecatedSource",
            "reportingController",
        ]
    } else {
        [
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "involvedObject",
            "message",
            "source",
            "reportingComponent",
        ]
    };
    let s = |path: &[&str]| str_at(obj, path);
    let mut first = since(obj.get(first_ts), now);
    if is_zero(obj.get(first_ts)) {
        first = since(obj.get("eventTime"), now);
    }
    let mut last = since(obj.get(last_ts), now);
    if is_zero(obj.get(last_ts)) {
        last = first.clone();
    }
    let mut count = obj.get(count_key).and_then(Value::as_i64).unwrap_or(0);
    if let Some(series) = obj.get("series").filter(|s| s.is_object()) {
        last = since(series.get("lastObservedTime"), now);
        count = series.get("count").and_then(Value::as_i64).unwrap_or(0);
    } else if count == 0 {
        // Singleton events have no count in the new API.
        count = 1;
    }
    let kind = s(&[regarding, "kind"]).to_lowercase();
    let target = match s(&[regarding, "name"]) {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let first_non_empty = |a: &'static str, b: &'static str| match s(&[source, a]) {
        "" => s(&[b]),
        x => x,
    };
    let component = first_non_empty("component", controller);
    let source_cell = match first_non_empty("host", "reportingInstance") {
        "" => component.to_string(),
        instance => format!("{component}, {instance}"),
    };
    vec![
        json!(last),
        json!(s(&["type"])),
        json!(s(&["reason"])),
        json!(target),
        json!(s(&[regarding, "fieldPath"])),
        json!(source_cell),
        json!(s(&[message]).trim()),
        json!(first),
        json!(count),
        json!(s(&["metadata", "name"])),
    ]
}

/// A cell of a CRD column, as apiextensions' convertor makes it from the first value
/// the path reaches: `string` columns print it as JSONPath prints, other types keep
/// a value of their type (an integer column truncates a float), `date` columns are
/// ages, and a value of the wrong type is null.
fn custom_cell(type_: &str, value: &Value, now: i128) -> Value {
    match (type_, value) {
        (_, Value::Null) => Value::Null,
        ("string", v) => json!(jsonpath_text(v)),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, go_float_value),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(t)) => {
            // metav1.Time's query-parameter form: empty or "null" is the zero time.
            if t.is_empty() || t == "null" {
                json!("<unknown>")
            } else {
                match parse_rfc3339(t) {
                    Ok(at) => json!(human_duration(elapsed(at, now))),
                    Err(_) => json!("<invalid>"),
                }
            }
        }
        _ => Value::Null,
    }
}

/// A float64 as Go's encoding/json writes it: whole numbers without a fraction.
fn go_float_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        json!(f as i64)
    } else {
        json!(f)
    }
}

/// How client-go's JSONPath prints one value: text for scalars (Go's `%v`), compact
/// JSON with sorted keys for maps and lists.
fn jsonpath_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => n.as_u64().map_or_else(
                || topograph_gocompat::float::go_float(n.as_f64().unwrap_or(0.0)),
                |u| u.to_string(),
            ),
        },
        Value::Null => "null".into(),
        Value::Array(_) | Value::Object(_) => topograph_variables::value::serde_to_json(value),
    }
}

/// Now, in nanoseconds since the epoch.
pub fn now() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// Whether a `metav1.Time` field is Go's zero time: missing, null or unreadable.
fn is_zero(timestamp: Option<&Value>) -> bool {
    timestamp
        .and_then(Value::as_str)
        .and_then(|t| parse_rfc3339(t).ok())
        .is_none()
}

/// kube-apiserver's `translateTimestampSince`: the age of a timestamp, `<unknown>` for
/// the zero time.
fn since(timestamp: Option<&Value>, now: i128) -> String {
    match timestamp
        .and_then(Value::as_str)
        .and_then(|t| parse_rfc3339(t).ok())
    {
        Some(at) => human_duration(elapsed(at, now)),
        None => "<unknown>".into(),
    }
}

/// Go's `time.Since`: nanoseconds, saturating as a `time.Duration` does.
fn elapsed((secs, nanos): (i64, u32), now: i128) -> i64 {
    let then = i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    (now - then).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// apimachinery's `duration.HumanDuration`: about two significant figures of a
/// duration in nanoseconds (`5s`, `3m2s`, `2d3h`, `3y45d`); up to two seconds in the
/// future is `0s` (clock skew), further is `<invalid>`.
pub fn human_duration(d: i64) -> String {
    const SECOND: i64 = 1_000_000_000;
    const MINUTE: i64 = 60 * SECOND;
    const HOUR: i64 = 60 * MINUTE;
    let seconds = d / SECOND;
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = d / MINUTE;
    if minutes < 10 {
        let s = (d / SECOND) % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = d / HOUR;
    if hours < 8 {
        let m = (d / MINUTE) % 60;
        if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        }
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        }
    } else if hours < 24 * 365 * 2 {
        format!("{}d", hours / 24)
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        }
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

#[cfg(test)]
mod tests;
