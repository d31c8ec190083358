//! Conditions in the two places a v1beta1 object keeps them: `status.conditions`
//! (Cluster API's v1beta1 conditions, with a severity when not True) and
//! `status.v1beta2.conditions` (Kubernetes `metav1.Condition`s, with observedGeneration).
//! The transition time only moves when the status does, so re-reporting the same
//! condition changes nothing and costs no write.

use serde_json::{Map, Value, json};

/// One condition, in both shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// Type, e.g. `TopologyReconciled`.
    pub type_: String,
    /// True or False.
    pub status: bool,
    /// Reason in the v1beta2 condition.
    pub reason: String,
    /// Reason in the v1beta1 condition (empty when True).
    pub v1beta1_reason: String,
    /// `Error`, `Warning` or `Info` for a False v1beta1 condition.
    pub severity: &'static str,
    /// Message.
    pub message: String,
}

impl Condition {
    /// A True condition.
    pub fn ok(type_: &str, reason: &str) -> Self {
        Condition {
            type_: type_.to_string(),
            status: true,
            reason: reason.to_string(),
            v1beta1_reason: String::new(),
            severity: "",
            message: String::new(),
        }
    }

    /// A False condition with severity Info.
    pub fn not_ok(type_: &str, reason: &str, v1beta1_reason: &str, message: String) -> Self {
        Condition {
            type_: type_.to_string(),
            status: false,
            reason: reason.to_string(),
            v1beta1_reason: v1beta1_reason.to_string(),
            severity: "Info",
            message,
        }
    }

    /// The same condition with another severity.
    pub fn with_severity(mut self, severity: &'static str) -> Self {
        self.severity = severity;
        self
    }
}

fn status_text(ok: bool) -> &'static str {
    if ok { "True" } else { "False" }
}

/// The merge patch of the status subresource that takes `old` to `new`: only the
/// top-level keys that changed (of `v1beta2`, only its conditions), so what other
/// controllers wrote in between — other keys, other `v1beta2` fields — stays. `None`
/// when nothing changed.
pub fn status_patch(old: Option<&Value>, new: &Map<String, Value>) -> Option<Value> {
    let empty = Map::new();
    let old = old.and_then(Value::as_object).unwrap_or(&empty);
    let mut patch = Map::new();
    for (key, value) in new {
        if old.get(key) == Some(value) {
            continue;
        }
        let changed = match (key.as_str(), value.get("conditions")) {
            ("v1beta2", Some(conditions)) => json!({ "conditions": conditions }),
            _ => value.clone(),
        };
        patch.insert(key.clone(), changed);
    }
    (!patch.is_empty()).then(|| json!({ "status": patch }))
}

/// Sets `condition` in `status` (an object), keeping every other condition.
pub fn set(status: &mut Map<String, Value>, condition: &Condition, generation: i64) {
    let mut v1beta1 = Map::new();
    v1beta1.insert("type".into(), json!(condition.type_));
    v1beta1.insert("status".into(), json!(status_text(condition.status)));
    if !condition.status {
        v1beta1.insert("severity".into(), json!(condition.severity));
        v1beta1.insert("reason".into(), json!(condition.v1beta1_reason));
        if !condition.message.is_empty() {
            v1beta1.insert("message".into(), json!(condition.message));
        }
    }
    upsert(
        status.entry("conditions").or_insert_with(|| json!([])),
        v1beta1,
    );

    let mut v1beta2 = Map::new();
    v1beta2.insert("type".into(), json!(condition.type_));
    v1beta2.insert("status".into(), json!(status_text(condition.status)));
    v1beta2.insert("observedGeneration".into(), json!(generation));
    v1beta2.insert("reason".into(), json!(condition.reason));
    v1beta2.insert("message".into(), json!(condition.message));
    let holder = status.entry("v1beta2").or_insert_with(|| json!({}));
    if !holder.is_object() {
        *holder = json!({});
    }
    if let Some(holder) = holder.as_object_mut() {
        upsert(
            holder.entry("conditions").or_insert_with(|| json!([])),
            v1beta2,
        );
    }
}

fn upsert(list: &mut Value, mut condition: Map<String, Value>) {
    if !list.is_array() {
        *list = json!([]);
    }
    let Some(items) = list.as_array_mut() else {
        return;
    };
    let type_ = condition.get("type").cloned();
    match items.iter_mut().find(|c| c.get("type") == type_.as_ref()) {
        Some(existing) => {
            let same_status = existing.get("status") == condition.get("status");
            let since = existing.get("lastTransitionTime").cloned();
            condition.insert(
                "lastTransitionTime".into(),
                match since {
                    Some(since) if same_status => since,
                    _ => now(),
                },
            );
            *existing = Value::Object(condition);
        }
        None => {
            condition.insert("lastTransitionTime".into(), now());
            items.push(Value::Object(condition));
        }
    }
}

/// The v1beta2 condition of `type_` in an object's status, if reported.
pub fn find<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object
        .get("status")?
        .get("v1beta2")?
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Now, as Kubernetes writes a `Time`.
fn now() -> Value {
    Value::String(topograph_gocompat::time::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_patch_carries_only_what_changed() {
        let old = json!({"phase": "Provisioning", "infrastructureReady": true,
                         "v1beta2": {"conditions": [], "other": 1}});
        let mut new = old.as_object().unwrap().clone();
        assert_eq!(status_patch(Some(&old), &new), None);
        new.insert("phase".into(), json!("Provisioned"));
        set(
            &mut new,
            &Condition::ok("TopologyReconciled", "ReconcileSucceeded"),
            2,
        );
        let patch = status_patch(Some(&old), &new).unwrap();
        let status = patch["status"].as_object().unwrap();
        let keys: Vec<&str> = status.keys().map(String::as_str).collect();
        assert_eq!(keys, ["conditions", "phase", "v1beta2"]);
        assert_eq!(
            status["v1beta2"].as_object().unwrap().len(),
            1,
            "conditions only"
        );
    }

    #[test]
    fn re_setting_the_same_condition_keeps_its_transition_time() {
        let mut status = Map::new();
        let c = Condition::not_ok("TopologyReconciled", "Paused", "Paused", "m".into());
        set(&mut status, &c, 1);
        let first = Value::Object(status.clone());
        // Pretend time moved on: the stored time must survive an identical report.
        status["conditions"][0]["lastTransitionTime"] = json!("2000-01-01T00:00:00Z");
        status["v1beta2"]["conditions"][0]["lastTransitionTime"] = json!("2000-01-01T00:00:00Z");
        let before = Value::Object(status.clone());
        set(&mut status, &c, 1);
        assert_eq!(Value::Object(status.clone()), before);
        assert_eq!(first["conditions"][0]["severity"], json!("Info"));
        // A new status moves the time.
        set(
            &mut status,
            &Condition::ok("TopologyReconciled", "ReconcileSucceeded"),
            1,
        );
        assert_ne!(
            status["conditions"][0]["lastTransitionTime"],
            json!("2000-01-01T00:00:00Z")
        );
        assert_eq!(
            status["conditions"][0],
            json!({"type": "TopologyReconciled", "status": "True", "lastTransitionTime": status["conditions"][0]["lastTransitionTime"]})
        );
    }
}
