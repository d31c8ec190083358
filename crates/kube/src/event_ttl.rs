//! Events expire, as kube-apiserver's `--event-ttl` (one hour by default) has them
//! dropped an hour after their last write: a management cluster that records every
//! reconcile's Events would otherwise grow without end in a long-running `topograph up`.

use crate::selector::Filter;
use crate::store::{DeleteOptions, Store};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;
use topograph_gocompat::time::rfc3339;

/// The Event kinds: core/v1 and events.k8s.io/v1 (the same objects in Kubernetes).
const EVENT_RESOURCES: [(&str, &str); 2] = [("", "events"), ("events.k8s.io", "events")];

/// Removes expired Events every tenth of `ttl` (between a second and a minute).
pub(crate) async fn run(store: Arc<Store>, ttl: Duration, mut shutdown: watch::Receiver<bool>) {
    let period = (ttl / 10).clamp(Duration::from_secs(1), Duration::from_secs(60));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = shutdown.wait_for(|v| *v) => return,
        }
        let expired = expire(&store, ttl, SystemTime::now());
        if expired > 0 {
            tracing::debug!(expired, "expired Events removed");
        }
    }
}

/// Deletes the Events last written more than `ttl` before `now`; returns how many.
pub(crate) fn expire(store: &Store, ttl: Duration, now: SystemTime) -> usize {
    let cutoff = now
        .checked_sub(ttl)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| rfc3339(i64::try_from(d.as_secs()).unwrap_or(i64::MAX)));
    let Some(cutoff) = cutoff else {
        return 0;
    };
    let mut expired = 0;
    for (group, plural) in EVENT_RESOURCES {
        let Some(rt) = store.resolve(group, plural) else {
            continue;
        };
        // Read one at a time: a fleet's Events parsed all at once were a peak of their own.
        let (events, _) = store.list_stored(&rt, None, &Filter::default());
        for event in events {
            if last_written(&event.value()).is_some_and(|t| t < cutoff.as_str())
                && store
                    .delete(
                        &rt,
                        event.namespace(),
                        event.name(),
                        &DeleteOptions::default(),
                    )
                    .is_ok()
            {
                expired += 1;
            }
        }
    }
    expired
}

/// The latest of an Event's own times. Times this server writes are all
/// `YYYY-MM-DDTHH:MM:SSZ` (and clients' `eventTime` adds a fraction before the `Z`),
/// so they order as strings do.
fn last_written(event: &Value) -> Option<&str> {
    [
        event.pointer("/metadata/creationTimestamp"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.pointer("/series/lastObservedTime"),
        event.pointer("/deprecatedLastTimestamp"),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .filter(|t| !t.is_empty())
    .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::meta_str;
    use serde_json::json;

    fn event(name: &str, created: &str, last: Option<&str>) -> Value {
        let mut e = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": created},
            "involvedObject": {"kind": "Cluster", "name": "c"}, "reason": "TopologyCreate"});
        if let Some(last) = last {
            e["lastTimestamp"] = json!(last);
        }
        e
    }

    #[test]
    fn events_last_written_before_the_ttl_are_removed_and_nothing_else() {
        let store = Store::new(100);
        // Loaded as saved, so they keep the times given.
        store
            .load(vec![
                event("old", "2026-11-26T10:00:00Z", None),
                event("old-but-seen-again", "2026-11-26T10:00:00Z", Some("2026-11-26T11:30:00Z")),
                event("new", "2026-11-26T11:45:00Z", None),
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "old-config", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"}}),
            ])
            .expect("loads");
        let noon = UNIX_EPOCH + Duration::from_secs(1_795_694_400); // 2026-11-26T12:00:00Z
        assert_eq!(rfc3339(1_795_694_400), "2026-11-26T12:00:00Z");

        assert_eq!(expire(&store, Duration::from_secs(3600), noon), 1);
        let left: Vec<String> = store
            .list_objects("v1", "Event", None)
            .iter()
            .map(|e| meta_str(e, "name").to_string())
            .collect();
        assert_eq!(left, ["new", "old-but-seen-again"]);
        assert!(
            store
                .get_object("v1", "ConfigMap", "default", "old-config")
                .is_some()
        );
        // An hour later, the rest.
        assert_eq!(
            expire(
                &store,
                Duration::from_secs(3600),
                noon + Duration::from_secs(3600)
            ),
            2
        );
    }
}
