//! `Watch`: a Cluster's (or a namespace's Clusters') reconcile outcomes and condition
//! changes as they happen, from two Kubernetes watches on the management cluster: the
//! Events recorded on Clusters (the appliers' `TopologyCreate`, `TopologyUpdate`,
//! `TopologyDelete`, ...) and the Clusters themselves, whose conditions are compared
//! with what was last seen. The management cluster is the source of truth, so a watch
//! sees every applier's work, whichever process did it.
//!
//! When a watch has to start over (expired resourceVersion, reconnect), the re-listed
//! state is compared with what was seen: nothing is sent twice, nothing lost is
//! skipped.

use std::collections::{BTreeMap, HashMap};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, GroupVersionKind};
use kube::discovery::ApiResource;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use topograph_api::object::{ObjectExt, group_of};
use topograph_proto::gateway::v1 as pb;

use crate::objects::{GROUP, conditions};
use crate::state::State;
use crate::tenancy::Tenant;
use topograph_api::Violation;
use topograph_proto::violations::invalid;

/// The stream Watch answers with.
pub type WatchStream = ReceiverStream<Result<pb::WatchEvent, Status>>;

/// Which Clusters a watch is about.
#[derive(Clone, Debug)]
pub struct Filter {
    /// The namespace.
    pub namespace: String,
    /// One Cluster, or every one (empty).
    pub name: String,
}

impl Filter {
    fn matches(&self, namespace: &str, name: &str) -> bool {
        namespace == self.namespace && (self.name.is_empty() || name == self.name)
    }
}

fn text(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// What one watch event means to a tracker.
enum Seen {
    /// An object as listed or changed; true when it came with the first listing.
    Object(Value, bool),
    /// An object deleted.
    Gone(Value),
    /// Nothing to look at (the listing's start or end).
    Nothing,
}

/// Reads a watch event, noting in `started` when the first listing is complete (both
/// trackers tell objects that existed before the watch from new ones this way).
fn seen(started: &mut bool, event: Event<Value>) -> Seen {
    match event {
        Event::Init => Seen::Nothing,
        Event::InitDone => {
            *started = true;
            Seen::Nothing
        }
        Event::InitApply(o) => Seen::Object(o, !*started),
        Event::Apply(o) => Seen::Object(o, false),
        Event::Delete(o) => Seen::Gone(o),
    }
}

/// Turns the Events of a namespace into reconcile events, once each.
#[derive(Debug, Default)]
pub struct EventTracker {
    /// Event uid (or name) -> the count last seen: a repeated Event counts up.
    seen: HashMap<String, i64>,
    /// Whether the first listing has been taken in.
    started: bool,
}

impl EventTracker {
    /// What to send for one watch event.
    pub fn handle(
        &mut self,
        event: Event<Value>,
        filter: &Filter,
        include_existing: bool,
    ) -> Vec<pb::WatchEvent> {
        let (object, initial) = match seen(&mut self.started, event) {
            Seen::Object(o, initial) => (o, initial),
            Seen::Gone(_) | Seen::Nothing => return Vec::new(),
        };
        let involved = object.get("involvedObject").cloned().unwrap_or(Value::Null);
        let namespace = text(involved.get("namespace"));
        let name = text(involved.get("name"));
        if text(involved.get("kind")) != "Cluster"
            || group_of(&text(involved.get("apiVersion"))) != GROUP
            || !filter.matches(&namespace, &name)
        {
            return Vec::new();
        }
        let id = object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            .unwrap_or(object.name())
            .to_string();
        let count = object.get("count").and_then(Value::as_i64).unwrap_or(1);
        if self.seen.get(&id).is_some_and(|c| *c >= count) {
            return Vec::new();
        }
        self.seen.insert(id, count);
        if initial && !include_existing {
            return Vec::new();
        }
        let time = ["lastTimestamp", "eventTime", "firstTimestamp"]
            .iter()
            .map(|k| text(object.get(*k)))
            .find(|t| !t.is_empty())
            .unwrap_or_else(|| text(object.pointer("/metadata/creationTimestamp")));
        vec![pb::WatchEvent {
            time,
            namespace,
            name,
            event: Some(pb::watch_event::Event::Reconcile(pb::ReconcileEvent {
                reason: text(object.get("reason")),
                message: text(object.get("message")),
                r#type: text(object.get("type")),
            })),
        }]
    }
}

/// Compares Clusters' conditions with what was last seen.
#[derive(Debug, Default)]
pub struct ConditionTracker {
    /// `(namespace, name)` -> condition type -> the condition last seen.
    known: HashMap<(String, String), BTreeMap<String, pb::ConditionChange>>,
    started: bool,
}

impl ConditionTracker {
    /// What to send for one watch event.
    pub fn handle(
        &mut self,
        event: Event<Value>,
        filter: &Filter,
        include_existing: bool,
    ) -> Vec<pb::WatchEvent> {
        let (object, initial) = match seen(&mut self.started, event) {
            Seen::Object(o, initial) => (o, initial),
            Seen::Gone(o) => {
                self.known
                    .remove(&(o.namespace().to_string(), o.name().to_string()));
                return Vec::new();
            }
            Seen::Nothing => return Vec::new(),
        };
        if !filter.matches(object.namespace(), object.name()) {
            return Vec::new();
        }
        let key = (object.namespace().to_string(), object.name().to_string());
        let known = self.known.entry(key.clone()).or_default();
        let mut out = Vec::new();
        for c in conditions(&object) {
            let change = pb::ConditionChange {
                r#type: c.r#type.clone(),
                status: c.status,
                reason: c.reason,
                message: c.message,
                observed_generation: c.observed_generation,
            };
            if known.get(&c.r#type) == Some(&change) {
                continue;
            }
            known.insert(c.r#type.clone(), change.clone());
            if initial && !include_existing {
                continue;
            }
            out.push(pb::WatchEvent {
                time: c.last_transition_time,
                namespace: key.0.clone(),
                name: key.1.clone(),
                event: Some(pb::watch_event::Event::Condition(change)),
            });
        }
        out
    }
}

/// The Watch RPC: starts the watches and returns the stream they feed. The watches
/// stop when the client goes away.
pub async fn watch(
    state: &State,
    tenant: &Tenant,
    request: pb::WatchRequest,
) -> Result<WatchStream, Status> {
    let mc = &request.management_cluster;
    if request.namespace.is_empty() {
        return Err(invalid(vec![Violation::new("namespace", "Required value")]));
    }
    tenant.authorize("Watch", mc, Some(&request.namespace))?;
    let api = state.cluster(mc)?;
    // Both resource names are fixed (core Events, Cluster API's Clusters), so no
    // discovery: the watch starts as before even while the management cluster is
    // unreachable or lacks the CRD, and its watchers retry until it answers.
    let in_namespace = |group: &str, version: &str, kind: &str, plural: &str| {
        Api::<DynamicObject>::namespaced_with(
            api.watch_client().clone(),
            &request.namespace,
            &ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk(group, version, kind),
                plural,
            ),
        )
    };
    let events = in_namespace("", "v1", "Event", "events");
    let clusters = in_namespace(GROUP, "v1beta1", "Cluster", "clusters");
    let filter = Filter {
        namespace: request.namespace.clone(),
        name: request.name.clone(),
    };
    let (tx, rx) = mpsc::channel(256);
    tracing::info!(tenant = %tenant.name, management_cluster = %mc, namespace = %filter.namespace, name = %filter.name, "watch started");
    let stopping = state.stopping.subscribe();
    tokio::spawn(run(
        events,
        clusters,
        filter,
        request.include_existing,
        tx,
        stopping,
    ));
    Ok(ReceiverStream::new(rx))
}

fn values(
    api: Api<DynamicObject>,
) -> impl futures::Stream<Item = Result<Event<Value>, watcher::Error>> + Send {
    watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .map(|event| event.map(ToValue::map_to_value))
}

/// `Event<DynamicObject>` -> `Event<Value>`.
trait ToValue {
    fn map_to_value(self) -> Event<Value>;
}

impl ToValue for Event<DynamicObject> {
    fn map_to_value(self) -> Event<Value> {
        let value = |o: DynamicObject| serde_json::to_value(o).unwrap_or(Value::Null);
        match self {
            Event::Init => Event::Init,
            Event::InitDone => Event::InitDone,
            Event::InitApply(o) => Event::InitApply(value(o)),
            Event::Apply(o) => Event::Apply(value(o)),
            Event::Delete(o) => Event::Delete(value(o)),
        }
    }
}

async fn run(
    events: Api<DynamicObject>,
    clusters: Api<DynamicObject>,
    filter: Filter,
    include_existing: bool,
    tx: mpsc::Sender<Result<pb::WatchEvent, Status>>,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    let mut event_stream = values(events).boxed();
    let mut cluster_stream = values(clusters).boxed();
    let mut event_tracker = EventTracker::default();
    let mut condition_tracker = ConditionTracker::default();
    loop {
        let out = tokio::select! {
            _ = tx.closed() => break,
            // The guard `wait_for` returns is not Send; drop it where it is made.
            _ = async { drop(stopping.wait_for(|s| *s).await) } => {
                let _ = tx.send(Err(Status::unavailable("the gateway is shutting down; watch again"))).await;
                break;
            }
            next = event_stream.next() => match next {
                Some(Ok(e)) => event_tracker.handle(e, &filter, include_existing),
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "watching Events; retrying");
                    continue;
                }
                None => break,
            },
            next = cluster_stream.next() => match next {
                Some(Ok(e)) => condition_tracker.handle(e, &filter, include_existing),
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "watching Clusters; retrying");
                    continue;
                }
                None => break,
            },
        };
        for event in out {
            if tx.send(Ok(event)).await.is_err() {
                return;
            }
        }
    }
    tracing::info!(namespace = %filter.namespace, name = %filter.name, "watch ended");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn filter() -> Filter {
        Filter {
            namespace: "team-a".into(),
            name: "dev".into(),
        }
    }

    fn event(uid: &str, name: &str, count: i64) -> Value {
        json!({"apiVersion": "v1", "kind": "Event",
               "metadata": {"name": uid, "namespace": "team-a", "uid": uid},
               "involvedObject": {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": name, "namespace": "team-a"},
               "reason": "TopologyCreate", "message": "Created", "type": "Normal", "count": count,
               "lastTimestamp": "2026-01-01T00:00:00Z"})
    }

    #[test]
    fn events_are_sent_once_and_existing_ones_only_when_asked() {
        let mut t = EventTracker::default();
        let f = filter();
        assert!(t.handle(Event::Init, &f, false).is_empty());
        assert!(
            t.handle(Event::InitApply(event("e1", "dev", 1)), &f, false)
                .is_empty()
        );
        assert!(t.handle(Event::InitDone, &f, false).is_empty());
        let out = t.handle(Event::Apply(event("e2", "dev", 1)), &f, false);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].time, "2026-01-01T00:00:00Z");
        // Another Cluster's Event, and a re-list after a reconnect, send nothing.
        assert!(
            t.handle(Event::Apply(event("e3", "prod", 1)), &f, false)
                .is_empty()
        );
        t.handle(Event::Init, &f, false);
        assert!(
            t.handle(Event::InitApply(event("e2", "dev", 1)), &f, false)
                .is_empty()
        );
        // ... but what was missed while away is sent.
        assert_eq!(
            t.handle(Event::InitApply(event("e4", "dev", 1)), &f, false)
                .len(),
            1
        );
        // A repeated Event (count up) is sent again.
        assert_eq!(
            t.handle(Event::Apply(event("e2", "dev", 2)), &f, false)
                .len(),
            1
        );

        let mut all = EventTracker::default();
        assert_eq!(
            all.handle(Event::InitApply(event("e1", "dev", 1)), &f, true)
                .len(),
            1
        );
    }

    fn cluster(status: &str, generation: i64) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
               "metadata": {"name": "dev", "namespace": "team-a"},
               "status": {"v1beta2": {"conditions": [
                   {"type": "TopologyReconciled", "status": status, "reason": "R", "message": "",
                    "observedGeneration": generation, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}})
    }

    #[test]
    fn only_condition_changes_are_sent() {
        let mut t = ConditionTracker::default();
        let f = filter();
        t.handle(Event::Init, &f, false);
        assert!(
            t.handle(Event::InitApply(cluster("False", 1)), &f, false)
                .is_empty()
        );
        t.handle(Event::InitDone, &f, false);
        assert!(
            t.handle(Event::Apply(cluster("False", 1)), &f, false)
                .is_empty()
        );
        let out = t.handle(Event::Apply(cluster("True", 1)), &f, false);
        let Some(pb::watch_event::Event::Condition(c)) = &out[0].event else {
            panic!("{out:?}");
        };
        assert_eq!(
            (c.r#type.as_str(), c.status.as_str()),
            ("TopologyReconciled", "True")
        );
        // A newer generation reconciled is a change too.
        assert_eq!(
            t.handle(Event::Apply(cluster("True", 2)), &f, false).len(),
            1
        );
        assert!(
            t.handle(Event::Apply(cluster("True", 2)), &f, false)
                .is_empty()
        );
    }
}
