//! Class-level reads through the class cache against topograph-kube: the first read of a
//! kind is live and starts its watch; once the watch has listed, reads cost no request;
//! changes and deletions arrive through the watch; a Cluster's own (labelled) copies and
//! objects the cache does not know are read live; a kind kept whole answers "not found"
//! without a request. A client without a cache, or a dry run, reads live.

use std::time::Duration;

use serde_json::{Value, json};
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::ManagementCluster;
use topograph_management::class_cache::Keep;

fn config_map(name: &str, labels: Value, data: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "data": {"k": data}})
}

async fn start() -> (RunningServer, ManagementCluster) {
    let server = Server::start(Config::default()).await.unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    (server, api)
}

async fn read(api: &ManagementCluster, keep: Keep, name: &str) -> Option<Value> {
    api.get_class_level("v1", "ConfigMap", keep, "default", name)
        .await
        .unwrap()
}

/// Reads `name` until `done` holds for what is read (the watch delivers in moments).
async fn eventually(
    api: &ManagementCluster,
    keep: Keep,
    name: &str,
    done: impl Fn(&Option<Value>) -> bool,
) -> Option<Value> {
    for _ in 0..200 {
        let got = read(api, keep, name).await;
        if done(&got) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{name}: never as expected");
}

fn data(object: &Option<Value>) -> Option<&str> {
    object.as_ref()?.pointer("/data/k")?.as_str()
}

#[tokio::test]
async fn class_level_reads_come_from_the_watch_once_it_has_listed() {
    let (server, api) = start().await;
    let cached = api.with_class_cache();
    api.create(&config_map("template", json!({}), "one"))
        .await
        .unwrap();
    api.create(&config_map(
        "copy",
        json!({"cluster.x-k8s.io/cluster-name": "dev"}),
        "mine",
    ))
    .await
    .unwrap();

    // The first read starts the watch and is answered live.
    let before = server.counts().get;
    assert_eq!(
        data(&read(&cached, Keep::Unowned, "template").await),
        Some("one")
    );
    assert_eq!(server.counts().get, before + 1);

    // Once listed: no request.
    eventually(&cached, Keep::Unowned, "template", |_| true).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = server.counts().get;
    for _ in 0..5 {
        assert_eq!(
            data(&read(&cached, Keep::Unowned, "template").await),
            Some("one")
        );
    }
    assert_eq!(server.counts().get, before, "served from the cache");

    // A Cluster's own copy is never kept: read live, every time.
    let before = server.counts().get;
    assert_eq!(
        data(&read(&cached, Keep::Unowned, "copy").await),
        Some("mine")
    );
    assert_eq!(server.counts().get, before + 1);

    // An object the cache does not keep whole is looked up live when missing.
    let before = server.counts().get;
    assert_eq!(read(&cached, Keep::Unowned, "absent").await, None);
    assert_eq!(server.counts().get, before + 1);

    // Changes arrive through the watch.
    api.apply(&config_map("template", json!({}), "two"))
        .await
        .unwrap();
    eventually(&cached, Keep::Unowned, "template", |o| {
        data(o) == Some("two")
    })
    .await;

    // Labelled since: a Cluster's object now, read live (and still found).
    api.apply(&config_map(
        "template",
        json!({"cluster.x-k8s.io/cluster-name": "dev"}),
        "two",
    ))
    .await
    .unwrap();
    for _ in 0..100 {
        let before = server.counts().get;
        let got = read(&cached, Keep::Unowned, "template").await;
        assert_eq!(data(&got), Some("two"));
        if server.counts().get == before + 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = server.counts().get;
    read(&cached, Keep::Unowned, "template").await;
    assert_eq!(server.counts().get, before + 1, "read live once labelled");

    // Deleted: gone, and not answered from the cache.
    api.delete(&config_map("template", json!({}), ""))
        .await
        .unwrap();
    eventually(&cached, Keep::Unowned, "template", Option::is_none).await;
}

#[tokio::test]
async fn a_kind_kept_whole_answers_not_found_without_a_request() {
    let (server, api) = start().await;
    let cached = api.with_class_cache();
    api.create(&config_map("policy", json!({}), "p"))
        .await
        .unwrap();
    assert_eq!(data(&read(&cached, Keep::All, "policy").await), Some("p"));
    eventually(&cached, Keep::All, "policy", |_| true).await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let before = server.counts().get;
    assert_eq!(read(&cached, Keep::All, "none").await, None);
    assert_eq!(data(&read(&cached, Keep::All, "policy").await), Some("p"));
    assert_eq!(server.counts().get, before, "both answered by the cache");

    // Created later: the watch brings it.
    api.create(&config_map("later", json!({}), "l"))
        .await
        .unwrap();
    eventually(&cached, Keep::All, "later", |o| data(o) == Some("l")).await;
}

#[tokio::test]
async fn without_a_cache_and_in_dry_runs_class_level_reads_are_live() {
    let (server, api) = start().await;
    api.create(&config_map("template", json!({}), "one"))
        .await
        .unwrap();
    for client in [api.clone(), api.with_class_cache().dry_run()] {
        for _ in 0..3 {
            let before = server.counts().get;
            assert_eq!(
                data(&read(&client, Keep::All, "template").await),
                Some("one")
            );
            assert_eq!(server.counts().get, before + 1);
        }
    }
    // A dry run sees its own writes first, as for any read.
    let dry = api.with_class_cache().dry_run();
    dry.apply(&config_map("template", json!({}), "planned"))
        .await
        .unwrap();
    assert_eq!(
        data(&read(&dry, Keep::All, "template").await),
        Some("planned")
    );
}
