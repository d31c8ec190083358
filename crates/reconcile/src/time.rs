//! Timestamps as Kubernetes writes them: RFC 3339, UTC, whole seconds, truncated
//! ([`topograph_management::time`]).

use serde_json::Value;

/// Now, as a Kubernetes `Time`.
pub(crate) fn now() -> Value {
    Value::String(topograph_management::time::now())
}
