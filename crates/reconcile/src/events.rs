//! Kubernetes Events, as Cluster API's topology controller records them (reasons
//! `TopologyCreate`, `TopologyUpdate`, `TopologyDelete`). Recording is best effort: an
//! Event that cannot be written never fails a reconcile.

use k8s_openapi::jiff::Timestamp;

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;

use topograph_management::ManagementCluster;

/// The component Events are reported by.
pub const COMPONENT: &str = "topology/cluster-controller";

/// Reason for creations.
pub const CREATE: &str = "TopologyCreate";
/// Reason for updates.
pub const UPDATE: &str = "TopologyUpdate";
/// Reason for deletions.
pub const DELETE: &str = "TopologyDelete";

/// `"namespace/name"`, as Go's `%q` prints an object key.
pub fn key(object: &Value) -> String {
    format!("\"{}/{}\"", object.namespace(), object.name())
}

/// `Updated <Kind> "ns/name"`, with ` with version change from X to Y` when the write
/// moved the version at `version_at` (Cluster API's text for control planes and
/// MachineDeployments).
pub fn updated(stored: &Value, version_at: &[&str], version_from: Option<&str>) -> String {
    let version_to = stored.at(version_at).and_then(Value::as_str);
    let suffix = match (version_from, version_to) {
        (Some(from), Some(to)) if from != to => format!(" with version change from {from} to {to}"),
        _ => String::new(),
    };
    format!("Updated {} {}{suffix}", stored.kind(), key(stored))
}

/// The Event object for `message` about `involved`, from the topology controller.
pub fn event(involved: &Value, reason: &str, message: &str) -> Value {
    event_from(COMPONENT, involved, reason, message, false)
}

/// The Event object for `message` about `involved`, reported by `component`; a
/// `warning` is of type Warning, else Normal.
pub fn event_from(
    component: &str,
    involved: &Value,
    reason: &str,
    message: &str,
    warning: bool,
) -> Value {
    // One reading of the clock names the Event and stamps it, as client-go's recorder
    // does.
    let at = Timestamp::now();
    let nanos = at.as_nanosecond();
    let now = topograph_management::event_correlator::timestamp(at);
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": format!("{}.{nanos:x}", involved.name()),
            "namespace": involved.namespace(),
        },
        "involvedObject": {
            "apiVersion": involved.api_version(),
            "kind": involved.kind(),
            "name": involved.name(),
            "namespace": involved.namespace(),
            "uid": involved.get("metadata").and_then(|m| m.get("uid")).cloned().unwrap_or(Value::Null),
        },
        "reason": reason,
        "message": message,
        "type": if warning { "Warning" } else { "Normal" },
        "source": {"component": component},
        "reportingComponent": component,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    })
}

/// Records an Event without waiting for it, as Cluster API's event recorder does:
/// correlated with the Events recorded before ([`ManagementCluster::record_event`]),
/// and written while the reconcile goes on, which waits for its Events only when it
/// ends ([`ManagementCluster::settle`]), so they are there when it returns. Failures
/// are logged, not returned.
pub fn record(cluster: &ManagementCluster, involved: &Value, reason: &str, message: String) {
    tracing::info!(reason, object = %key(involved), "{message}");
    cluster.record_event(event(involved, reason, &message));
}
