//! Timestamps as Kubernetes writes them: RFC 3339, UTC, whole seconds.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{Timestamp, Unit};
use serde_json::Value;

/// Now, as a Kubernetes `Time`.
pub(crate) fn now() -> Value {
    let now = Timestamp::now()
        .round(Unit::Second)
        .unwrap_or_else(|_| Timestamp::now());
    serde_json::to_value(Time(now)).unwrap_or(Value::Null)
}
