//! `metadata.managedFields`: its entries, read from and written to an object in the
//! shape Kubernetes uses, with kube-apiserver's checks and error texts, its order of
//! entries, and the identity that tells two entries apart.
//!
//! An entry is identified by manager, operation, subresource and, for `Update`
//! entries only, apiVersion: one manager that updates through two versions has two
//! entries, but its `Apply` entry follows whatever version it last applied with.

use std::cmp::Ordering;

use serde_json::{Map, Value};
use topograph_gocompat::json as gojson;

use crate::fieldset::{FieldSet, FieldsV1Error};

/// The operation that made a managed fields entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// A server-side apply.
    Apply,
    /// Any other write (create, update, merge or JSON patch).
    Update,
}

impl Operation {
    /// The wire name, `Apply` or `Update`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// The only `fieldsType` Kubernetes knows.
pub const FIELDS_V1: &str = "FieldsV1";

/// One entry of `metadata.managedFields`.
#[derive(Clone, Debug, PartialEq)]
pub struct ManagedFieldsEntry {
    /// The field manager's name.
    pub manager: String,
    /// The operation that made the entry.
    pub operation: Operation,
    /// The apiVersion the fields are expressed in.
    pub api_version: String,
    /// When the entry last changed the object, RFC 3339 in UTC.
    pub time: Option<String>,
    /// Always [`FIELDS_V1`].
    pub fields_type: String,
    /// The fields owned.
    pub fields: FieldSet,
    /// The subresource written through (`status`, `scale`), if any.
    pub subresource: Option<String>,
}

/// Who an entry belongs to; two entries with one identity are one entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    /// The manager's name.
    pub manager: String,
    /// The operation.
    pub operation: Operation,
    /// The apiVersion for `Update` entries, empty for `Apply` ones.
    pub api_version: String,
    /// The subresource, empty for the main resource.
    pub subresource: String,
}

impl Identity {
    /// The identifier kube-apiserver keys managers by (and sorts conflicts by): the
    /// JSON of the entry without time and fields, and without apiVersion for Apply.
    pub fn identifier(&self) -> String {
        let mut out = String::from("{");
        let mut fields: Vec<(&str, &str)> = Vec::new();
        if !self.manager.is_empty() {
            fields.push(("manager", &self.manager));
        }
        fields.push(("operation", self.operation.as_str()));
        if !self.api_version.is_empty() {
            fields.push(("apiVersion", &self.api_version));
        }
        if !self.subresource.is_empty() {
            fields.push(("subresource", &self.subresource));
        }
        for (i, (k, v)) in fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            gojson::write_string(&mut out, k, true);
            out.push(':');
            gojson::write_string(&mut out, v, true);
        }
        out.push('}');
        out
    }
}

impl ManagedFieldsEntry {
    /// The entry's identity.
    pub fn identity(&self) -> Identity {
        Identity {
            manager: self.manager.clone(),
            operation: self.operation,
            api_version: match self.operation {
                Operation::Apply => String::new(),
                Operation::Update => self.api_version.clone(),
            },
            subresource: self.subresource.clone().unwrap_or_default(),
        }
    }

    /// The entry as Kubernetes writes it (empty values left out).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        if !self.manager.is_empty() {
            m.insert("manager".into(), Value::String(self.manager.clone()));
        }
        m.insert(
            "operation".into(),
            Value::String(self.operation.as_str().into()),
        );
        if !self.api_version.is_empty() {
            m.insert("apiVersion".into(), Value::String(self.api_version.clone()));
        }
        if let Some(t) = &self.time {
            m.insert("time".into(), Value::String(t.clone()));
        }
        m.insert("fieldsType".into(), Value::String(self.fields_type.clone()));
        m.insert("fieldsV1".into(), self.fields.to_fields_v1());
        if let Some(s) = self.subresource.as_ref().filter(|s| !s.is_empty()) {
            m.insert("subresource".into(), Value::String(s.clone()));
        }
        Value::Object(m)
    }

    /// Reads entry number `index` of `metadata.managedFields`.
    pub fn from_value(v: &Value, index: usize) -> Result<ManagedFieldsEntry, ManagedFieldsError> {
        let Value::Object(m) = v else {
            return Err(ManagedFieldsError::Malformed(format!(
                "managed fields entry {index} is not an object"
            )));
        };
        let string = |name: &str| -> Result<Option<String>, ManagedFieldsError> {
            match m.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(ManagedFieldsError::Malformed(format!(
                    "managed fields entry {index}: {name} must be a string"
                ))),
            }
        };
        let operation = match string("operation")?.as_deref() {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            _ => {
                return Err(ManagedFieldsError::Invalid(
                    "operation must be `Apply` or `Update`".into(),
                ));
            }
        };
        let api_version = string("apiVersion")?.unwrap_or_default();
        if api_version.is_empty() {
            return Err(ManagedFieldsError::Invalid(
                "apiVersion must not be empty".into(),
            ));
        }
        let fields_type = string("fieldsType")?.unwrap_or_default();
        match fields_type.as_str() {
            FIELDS_V1 => {}
            "" => {
                return Err(ManagedFieldsError::Invalid(format!(
                    "missing fieldsType in managed fields entry {index}"
                )));
            }
            other => {
                return Err(ManagedFieldsError::Invalid(format!(
                    "invalid fieldsType {other:?} in managed fields entry {index}"
                )));
            }
        }
        let time = match string("time")? {
            // A time is kept as Kubernetes re-writes it: whole seconds, UTC.
            Some(t) => Some(normalize_time(&t).ok_or_else(|| {
                ManagedFieldsError::Malformed(format!(
                    "managed fields entry {index}: time {t:?} is not RFC 3339"
                ))
            })?),
            None => None,
        };
        let fields = match m.get("fieldsV1") {
            None => FieldSet::new(),
            Some(f) => FieldSet::from_fields_v1(f)
                .map_err(|e| ManagedFieldsError::Fields { index, error: e })?,
        };
        Ok(ManagedFieldsEntry {
            manager: string("manager")?.unwrap_or_default(),
            operation,
            api_version,
            time,
            fields_type,
            fields,
            subresource: string("subresource")?.filter(|s| !s.is_empty()),
        })
    }
}

/// `metadata.managedFields` that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManagedFieldsError {
    /// Not the JSON shape of managed fields at all (a client's request is bad).
    #[error("{0}")]
    Malformed(String),
    /// An entry kube-apiserver refuses to decode (its texts).
    #[error("{0}")]
    Invalid(String),
    /// An entry's FieldsV1 does not parse.
    #[error("error decoding set in managed fields entry {index}: {error}")]
    Fields {
        /// Which entry.
        index: usize,
        /// What is wrong with its fields.
        error: FieldsV1Error,
    },
}

/// Reads `metadata.managedFields` of an object; absent or null is no entries.
pub fn read_managed_fields(object: &Value) -> Result<Vec<ManagedFieldsEntry>, ManagedFieldsError> {
    match object.get("metadata").and_then(|m| m.get("managedFields")) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| ManagedFieldsEntry::from_value(v, i))
            .collect(),
        Some(_) => Err(ManagedFieldsError::Malformed(
            "metadata.managedFields must be a list".into(),
        )),
    }
}

/// Writes `metadata.managedFields` of an object; no entries removes the field, as
/// kube-apiserver does.
pub fn write_managed_fields(object: &mut Value, entries: &[ManagedFieldsEntry]) {
    let Value::Object(obj) = object else {
        return;
    };
    if entries.is_empty() {
        if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
            meta.remove("managedFields");
        }
        return;
    }
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.iter().map(ManagedFieldsEntry::to_value).collect()),
        );
    }
}

/// Sorts entries as kube-apiserver writes them: Apply before Update, then by time
/// (to the second, none first), manager, apiVersion and subresource.
pub fn sort_entries(entries: &mut [ManagedFieldsEntry]) {
    entries.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then_with(|| seconds(p).cmp(&seconds(q)))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| {
                p.subresource
                    .as_deref()
                    .unwrap_or("")
                    .cmp(q.subresource.as_deref().unwrap_or(""))
            })
    });
}

fn seconds(e: &ManagedFieldsEntry) -> i64 {
    e.time.as_deref().and_then(parse_rfc3339).unwrap_or(0)
}

/// Two entry lists are the same ownership, whatever their times and order.
pub(crate) fn same_ownership(a: &[ManagedFieldsEntry], b: &[ManagedFieldsEntry]) -> bool {
    let key = |es: &[ManagedFieldsEntry]| {
        let mut v: Vec<(Identity, String, String)> = es
            .iter()
            .map(|e| {
                (
                    e.identity(),
                    e.api_version.clone(),
                    e.fields.to_fields_v1_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    key(a) == key(b)
}

pub(crate) fn cmp_identity_text(a: &Identity, b: &Identity) -> Ordering {
    a.identifier().cmp(&b.identifier())
}

/// Seconds since the epoch of an RFC 3339 time (`2024-05-01T10:00:00Z`,
/// fractions and offsets allowed).
pub fn parse_rfc3339(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let n = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (year, month, day) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hour, minute, second) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let ob = rest.as_bytes();
            if ob.len() != 6 || !matches!(ob[0], b'+' | b'-') || ob[3] != b':' {
                return None;
            }
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            let sign = if ob[0] == b'-' { -1 } else { 1 };
            sign * (oh * 3600 + om * 60)
        }
    };
    let days = topograph_gocompat::time::days_from_civil(year, month, day);
    Some(days * 86400 + hour * 3600 + minute * 60 + second - offset)
}

/// A time as `metav1.Time` writes it: whole seconds in UTC, `Z`.
pub fn normalize_time(t: &str) -> Option<String> {
    parse_rfc3339(t).map(topograph_gocompat::time::rfc3339)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            normalize_time("2024-03-01T01:30:00.5+01:00").as_deref(),
            Some("2024-03-01T00:30:00Z")
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn decoding_errors_use_kube_texts() {
        let obj = |e: Value| json!({"metadata": {"managedFields": [e]}});
        let err = |e: Value| read_managed_fields(&obj(e)).unwrap_err().to_string();
        assert_eq!(
            err(
                json!({"manager": "m", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"})
            ),
            "operation must be `Apply` or `Update`"
        );
        assert_eq!(
            err(json!({"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1"})),
            "apiVersion must not be empty"
        );
        assert_eq!(
            err(json!({"manager": "m", "operation": "Apply", "apiVersion": "v1"})),
            "missing fieldsType in managed fields entry 0"
        );
        assert_eq!(
            err(
                json!({"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV2"})
            ),
            "invalid fieldsType \"FieldsV2\" in managed fields entry 0"
        );
        assert!(read_managed_fields(&json!({"metadata": {"managedFields": 3}})).is_err());
    }

    #[test]
    fn identifiers() {
        let id = Identity {
            manager: "kubectl".into(),
            operation: Operation::Update,
            api_version: "apps/v1".into(),
            subresource: "status".into(),
        };
        assert_eq!(
            id.identifier(),
            r#"{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","subresource":"status"}"#
        );
    }
}
