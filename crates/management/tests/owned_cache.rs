//! A Cluster's own objects read through the owned-object cache against topograph-kube:
//! nothing is cached until the cache is held; once held and listed, reads and a
//! Cluster's lists cost no request; this client's writes (and fences set for changes
//! seen elsewhere) are never read back out of date; other writers' changes arrive
//! through the watch; releasing the cache, or a dry run, reads live; a registry names
//! the management clusters whose caches are held.

use std::time::Duration;

use serde_json::{Value, json};
use topograph_kube::{Config, RunningServer, Server};
use topograph_management::ManagementCluster;

const CLUSTER: &str = "cluster.x-k8s.io/cluster-name";

fn config_map(name: &str, cluster: &str, data: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default",
            "labels": {CLUSTER: cluster, "role": name}},
        "data": {"k": data}})
}

async fn start() -> (RunningServer, ManagementCluster) {
    let server = Server::start(Config::default()).await.unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    (server, api)
}

async fn get(api: &ManagementCluster, name: &str) -> Option<Value> {
    api.get_owned("v1", "ConfigMap", "default", name)
        .await
        .unwrap()
}

async fn list(api: &ManagementCluster, cluster: &str, labels: &[(&str, &str)]) -> Vec<String> {
    let mut selector = vec![(CLUSTER, cluster)];
    selector.extend_from_slice(labels);
    let mut names: Vec<String> = api
        .list_owned("v1", "ConfigMap", "default", &selector)
        .await
        .unwrap()
        .iter()
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

fn data(object: &Option<Value>) -> Option<&str> {
    object.as_ref()?.pointer("/data/k")?.as_str()
}

/// Reads requests the server counted (gets, lists).
fn reads(server: &RunningServer) -> (u64, u64) {
    let counts = server.counts();
    (counts.get, counts.list)
}

/// Holds `api`'s cache and waits until a read of `name` costs no request.
async fn held_and_listed(server: &RunningServer, api: &ManagementCluster, name: &str) {
    api.owned_cache().unwrap().hold(true);
    for _ in 0..200 {
        list(api, "dev", &[]).await;
        let before = reads(server);
        get(api, name).await;
        list(api, "dev", &[]).await;
        if reads(server) == before {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the cache never listed");
}

#[tokio::test]
async fn a_held_cache_answers_reads_and_a_clusters_lists_without_requests() {
    let (server, api) = start().await;
    let api = api.with_owned_cache();
    for (name, cluster) in [("a", "dev"), ("b", "dev"), ("c", "prod")] {
        api.create(&config_map(name, cluster, name)).await.unwrap();
    }

    // Not held: live, every time, and nothing is watched.
    for _ in 0..3 {
        let before = reads(&server);
        assert_eq!(data(&get(&api, "a").await), Some("a"));
        assert_eq!(list(&api, "dev", &[]).await, ["a", "b"]);
        assert_eq!(reads(&server), (before.0 + 1, before.1 + 1));
    }

    held_and_listed(&server, &api, "a").await;
    let before = reads(&server);
    assert_eq!(data(&get(&api, "a").await), Some("a"));
    assert_eq!(list(&api, "dev", &[]).await, ["a", "b"]);
    assert_eq!(list(&api, "dev", &[("role", "b")]).await, ["b"]);
    assert_eq!(list(&api, "prod", &[]).await, ["c"]);
    assert_eq!(list(&api, "none", &[]).await, Vec::<String>::new());
    assert_eq!(reads(&server), before, "all answered by the cache");
    let size = api.owned_cache().unwrap().size();
    assert_eq!(size.objects, 3, "{size:?}");
    assert!(size.bytes > 0, "{size:?}");

    // Not found is never answered from the cache.
    let before = reads(&server);
    assert_eq!(get(&api, "absent").await, None);
    assert_eq!(reads(&server), (before.0 + 1, before.1));

    // Released: live again, and nothing kept.
    api.owned_cache().unwrap().hold(false);
    assert_eq!(api.owned_cache().unwrap().size().objects, 0);
    let before = reads(&server);
    assert_eq!(data(&get(&api, "a").await), Some("a"));
    assert_eq!(reads(&server), (before.0 + 1, before.1));

    // A dry run reads live, its own writes first.
    api.owned_cache().unwrap().hold(true);
    held_and_listed(&server, &api, "a").await;
    let dry = api.dry_run();
    dry.apply(&config_map("a", "dev", "planned")).await.unwrap();
    assert_eq!(data(&get(&dry, "a").await), Some("planned"));
    let before = reads(&server);
    assert_eq!(data(&get(&dry, "b").await), Some("b"));
    assert_eq!(list(&dry, "dev", &[]).await, ["a", "b"]);
    assert_eq!(reads(&server), (before.0 + 1, before.1 + 1));
}

#[tokio::test]
async fn this_clients_writes_are_never_read_back_out_of_date() {
    let (server, api) = start().await;
    let api = api.with_owned_cache();
    api.create(&config_map("a", "dev", "0")).await.unwrap();
    held_and_listed(&server, &api, "a").await;

    // Each write is read back at once, before its watch event can have arrived.
    for round in 1..=20 {
        let text = round.to_string();
        api.apply(&config_map("a", "dev", &text)).await.unwrap();
        assert_eq!(data(&get(&api, "a").await), Some(text.as_str()));
        let name = format!("new-{round}");
        api.create(&config_map(&name, "dev", "x")).await.unwrap();
        assert!(list(&api, "dev", &[]).await.contains(&name), "{name}");
        api.delete(&config_map(&name, "dev", "")).await.unwrap();
        assert!(!list(&api, "dev", &[]).await.contains(&name), "{name}");
        assert_eq!(get(&api, &name).await, None);
    }

    // Once the watch has caught up, the fences are gone and reads are free again.
    for _ in 0..200 {
        get(&api, "a").await;
        list(&api, "dev", &[]).await;
        if api.owned_cache().unwrap().fences() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(api.owned_cache().unwrap().fences(), 0);
    let before = reads(&server);
    assert_eq!(data(&get(&api, "a").await), Some("20"));
    assert_eq!(list(&api, "dev", &[]).await, ["a"]);
    assert_eq!(reads(&server), before);
}

#[tokio::test]
async fn a_fence_keeps_reads_of_its_object_and_its_clusters_lists_live() {
    let (server, api) = start().await;
    let api = api.with_owned_cache();
    api.create(&config_map("a", "dev", "0")).await.unwrap();
    api.create(&config_map("c", "prod", "0")).await.unwrap();
    held_and_listed(&server, &api, "a").await;
    get(&api, "c").await;

    // A version the cache has not reached (as the watch index fences the change that
    // queued a Cluster): that object, and its Cluster's lists, are read live.
    let cache = api.owned_cache().unwrap();
    cache.fence("", "ConfigMap", "default", "a", "dev", Some("999999999"));
    let before = reads(&server);
    assert_eq!(data(&get(&api, "a").await), Some("0"));
    assert_eq!(list(&api, "dev", &[]).await, ["a"]);
    assert_eq!(reads(&server), (before.0 + 1, before.1 + 1));
    // Others are not held up.
    let before = reads(&server);
    assert_eq!(data(&get(&api, "c").await), Some("0"));
    assert_eq!(list(&api, "prod", &[]).await, ["c"]);
    assert_eq!(reads(&server), before);

    // Someone else's change arrives through the watch, and reaches the fence once its
    // version is the fence's or later (a version already reached holds nothing).
    let other = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();
    let changed = other.apply(&config_map("c", "prod", "1")).await.unwrap();
    let version = changed["metadata"]["resourceVersion"].as_str().unwrap();
    cache.fence("", "ConfigMap", "default", "c", "prod", Some(version));
    for _ in 0..200 {
        let before = reads(&server);
        let got = get(&api, "c").await;
        if reads(&server) == before {
            assert_eq!(data(&got), Some("1"), "answered at the fence's version");
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the fence was never reached");
}

/// The management clusters a process prefers on the queue (decision 0037): none to
/// state without owned-object caches; with them, exactly those whose cache is held.
#[tokio::test]
async fn a_registry_names_the_management_clusters_whose_caches_it_holds() {
    use std::sync::Arc;
    use topograph_management::registry::Registry;
    let (_server, api) = start().await;
    let plain = Registry::fixed([("a".to_string(), Arc::new(api.clone()))]);
    assert_eq!(plain.held_caches(), None);

    let (a, b) = (api.with_owned_cache(), api.with_owned_cache());
    let cached = Registry::fixed([
        ("a".to_string(), Arc::new(a.clone())),
        ("b".to_string(), Arc::new(b.clone())),
    ]);
    assert_eq!(cached.held_caches(), Some(vec![]), "kept, none held");
    b.owned_cache().unwrap().hold(true);
    assert_eq!(cached.held_caches(), Some(vec!["b".to_string()]));
    b.owned_cache().unwrap().hold(false);
    assert_eq!(cached.held_caches(), Some(vec![]));
}
