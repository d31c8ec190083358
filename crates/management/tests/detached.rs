//! Events recorded without waiting (how reconciles record them), against the in-memory
//! API server: each clone settles its own writes, a settled Event is there and
//! counted, a failed one is only logged, and Events are correlated as client-go's
//! recorder correlates them (aggregated, counted, a patch of a vanished Event created
//! anew).

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::ManagementCluster;

/// An Event about ConfigMap `namespace/owner`, as the recorder builds one at `now`.
fn event(namespace: &str, owner: &str, reason: &str, message: &str, now: Timestamp) -> Value {
    let stamp = topograph_management::event_correlator::timestamp(now);
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{owner}.{:x}", now.as_nanosecond()), "namespace": namespace},
        "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": owner,
                           "namespace": namespace, "uid": format!("uid-{owner}")},
        "reason": reason, "message": message, "type": "Normal",
        "source": {"component": "topology/cluster-controller"},
        "reportingComponent": "topology/cluster-controller",
        "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
    })
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + seconds).unwrap_or(Timestamp::UNIX_EPOCH)
}

async fn start() -> (RunningServer, ManagementCluster) {
    let server = Server::start(Config::default()).await.unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    (server, api)
}

/// The Events about `owner`, as (message, count), by message.
async fn events_about(api: &ManagementCluster, owner: &str) -> Vec<(String, i64)> {
    let mut found: Vec<(String, i64)> = api
        .list("v1", "Event", "default", &[])
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e["involvedObject"]["name"] == owner)
        .map(|e| {
            let message = e["message"].as_str().unwrap_or_default().to_string();
            (message, e["count"].as_i64().unwrap_or(0))
        })
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn recorded_events_are_written_and_counted_once_settled() {
    let (_server, api) = start().await;
    let reconcile = api.counting_apart();
    for (i, owner) in ["a", "b", "c"].into_iter().enumerate() {
        reconcile.record_event_at(
            event("default", owner, "R", "m", at(i as i64)),
            at(i as i64),
        );
    }
    // No such namespace: refused by the server, logged, and settling still ends.
    reconcile.record_event_at(event("missing", "d", "R", "m", at(3)), at(3));
    // Another clone's settle does not wait for (or take) these.
    api.counting_apart().settle().await;
    reconcile.settle().await;
    for owner in ["a", "b", "c"] {
        assert_eq!(events_about(&api, owner).await, vec![("m".to_string(), 1)]);
    }
    assert!(
        api.list("v1", "Event", "missing", &[])
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(reconcile.writes().total(), 4, "every write sent is counted");
    // Settling with nothing in flight returns at once.
    reconcile.settle().await;
}

#[tokio::test]
async fn similar_events_are_aggregated_and_repeated_ones_counted_on_the_server() {
    let (_server, api) = start().await;
    let reconcile = api.counting_apart();
    // Fourteen creations, as a new Cluster of the quick-start records, then one
    // message twice: all sent at once, their writes chained where they must be.
    for i in 0..14 {
        let message = format!("Created Thing \"default/t-{i:02}\"");
        reconcile.record_event_at(
            event("default", "dev", "TopologyCreate", &message, at(i)),
            at(i),
        );
    }
    for i in 14..16 {
        reconcile.record_event_at(
            event("default", "dev", "TopologyUpdate", "Updated X", at(i)),
            at(i),
        );
    }
    reconcile.settle().await;

    let mut expected: Vec<(String, i64)> = (0..9)
        .map(|i| (format!("Created Thing \"default/t-{i:02}\""), 1))
        .collect();
    expected.push((
        "(combined from similar events): Created Thing \"default/t-13\"".to_string(),
        5,
    ));
    expected.push(("Updated X".to_string(), 2));
    expected.sort();
    assert_eq!(events_about(&api, "dev").await, expected);
    assert_eq!(reconcile.writes().create, 11);
    assert_eq!(reconcile.writes().patch, 5);
}

#[tokio::test]
async fn a_repeat_of_a_deleted_event_is_created_anew() {
    let (_server, api) = start().await;
    api.record_event_at(event("default", "gone", "R", "m", at(0)), at(0));
    api.settle().await;
    let written = api.list("v1", "Event", "default", &[]).await.unwrap();
    assert_eq!(written.len(), 1);
    api.delete(&written[0]).await.unwrap();

    api.record_event_at(event("default", "gone", "R", "m", at(5)), at(5));
    api.settle().await;
    let again = api.list("v1", "Event", "default", &[]).await.unwrap();
    assert_eq!(again.len(), 1, "created again, under the first one's name");
    assert_eq!(again[0]["metadata"]["name"], written[0]["metadata"]["name"]);
    assert_eq!(again[0]["count"], 2);
    assert_eq!(again[0]["firstTimestamp"], written[0]["firstTimestamp"]);
}
