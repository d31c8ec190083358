//! kube-rs against the in-memory server: discovery of a CRD's kind, CRUD with the API
//! server's write rules, patches, the status subresource, finalizers, garbage collection,
//! watches through `kube::runtime::watcher`, request counters and simulated providers.

use futures::{StreamExt, TryStreamExt};
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{Discovery, Scope};
use kube::runtime::watcher;
use serde_json::{Value, json};
use std::time::Duration;
use topograph_kube::{Config, RequestCounts, RunningServer, Server};

async fn start_with(config: Config) -> (RunningServer, kube::Client) {
    let server = Server::start(config).await.expect("server starts");
    let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig_yaml()).expect("kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kube config");
    let client = kube::Client::try_from(config).expect("client");
    (server, client)
}

async fn start() -> (RunningServer, kube::Client) {
    start_with(Config {
        bookmark_interval: Duration::from_millis(100),
        ..Config::default()
    })
    .await
}

fn crd(group: &str, kind: &str, versions: &[&str], namespaced: bool) -> Value {
    let plural = format!("{}s", kind.to_lowercase());
    let versions: Vec<Value> = versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            json!({"name": v, "served": true, "storage": i == 0, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}"), "labels": {"cluster.x-k8s.io/v1beta1": "v1beta1"}},
        "spec": {
            "group": group,
            "scope": if namespaced { "Namespaced" } else { "Cluster" },
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "shortNames": ["md"]},
            "versions": versions,
        }
    })
}

fn md_resource(version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cluster.x-k8s.io", version, "MachineDeployment"),
        "machinedeployments",
    )
}

fn crd_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    )
}

fn obj(v: Value) -> DynamicObject {
    serde_json::from_value(v).expect("valid object")
}

/// A watch from `rv` that ends after a second, without bookmarks.
async fn resume(
    api: &Api<DynamicObject>,
    rv: u64,
) -> futures::stream::BoxStream<'static, kube::Result<WatchEvent<DynamicObject>>> {
    api.watch(
        &WatchParams::default().timeout(1).disable_bookmarks(),
        &rv.to_string(),
    )
    .await
    .unwrap()
    .boxed()
}

/// ConfigMaps in `default`: a built-in kind beside the CRD's.
fn configmaps(client: &kube::Client) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("", "v1", "ConfigMap"),
            "configmaps",
        ),
    )
}

async fn create_configmaps(cms: &Api<DynamicObject>, numbers: std::ops::Range<usize>) {
    for i in numbers {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")}});
        cms.create(&PostParams::default(), &obj(cm)).await.unwrap();
    }
}

async fn install_md_crd(client: &kube::Client) -> Api<DynamicObject> {
    let crds: Api<DynamicObject> = Api::all_with(client.clone(), &crd_resource());
    crds.create(
        &PostParams::default(),
        &obj(crd(
            "cluster.x-k8s.io",
            "MachineDeployment",
            &["v1beta1"],
            true,
        )),
    )
    .await
    .expect("CRD created");
    Api::namespaced_with(client.clone(), "default", &md_resource("v1beta1"))
}

fn md(name: &str, replicas: i64) -> DynamicObject {
    obj(
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
        "metadata": {"name": name, "labels": {"app": "web"}}, "spec": {"replicas": replicas}}),
    )
}

fn api_error(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason.clone(), s.message.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn generation(o: &DynamicObject) -> i64 {
    o.metadata.generation.unwrap_or_default()
}

fn rv(o: &DynamicObject) -> u64 {
    o.metadata
        .resource_version
        .as_deref()
        .unwrap_or("")
        .parse()
        .expect("numeric resourceVersion")
}

#[tokio::test]
async fn discovery_finds_the_kind_a_crd_registers() {
    let (_server, client) = start().await;
    let crds: Api<DynamicObject> = Api::all_with(client.clone(), &crd_resource());
    let created = crds
        .create(
            &PostParams::default(),
            &obj(crd(
                "cluster.x-k8s.io",
                "MachineDeployment",
                &["v1beta1", "v1beta2"],
                true,
            )),
        )
        .await
        .unwrap();
    let conditions = created.data["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    );
    assert_eq!(
        created.data["status"]["acceptedNames"]["kind"],
        "MachineDeployment"
    );

    let legacy = Discovery::new(client.clone())
        .run()
        .await
        .expect("discovery");
    let aggregated = Discovery::new(client.clone())
        .run_aggregated()
        .await
        .expect("aggregated discovery");
    for discovery in [&legacy, &aggregated] {
        for version in ["v1beta1", "v1beta2"] {
            let gvk = GroupVersionKind::gvk("cluster.x-k8s.io", version, "MachineDeployment");
            let (ar, caps) = discovery.resolve_gvk(&gvk).expect("kind discovered");
            assert_eq!(ar.plural, "machinedeployments");
            assert_eq!(caps.scope, Scope::Namespaced);
            assert!(
                caps.subresources
                    .iter()
                    .any(|(sub, _)| sub.plural == "status"),
                "status subresource discovered"
            );
        }
        let group = discovery.get("cluster.x-k8s.io").expect("group");
        assert_eq!(group.preferred_version_or_latest(), "v1beta2");
        assert!(discovery.has_group("apiextensions.k8s.io"));
        let core = discovery.get("").expect("core group");
        assert!(
            core.recommended_resources()
                .iter()
                .any(|(ar, _)| ar.kind == "ConfigMap")
        );
    }

    // One collection across versions: written as v1beta1, read as v1beta2.
    let v1: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &md_resource("v1beta1"));
    let v2: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &md_resource("v1beta2"));
    v1.create(&PostParams::default(), &md("a", 1))
        .await
        .unwrap();
    let through_v2 = v2.get("a").await.unwrap();
    assert_eq!(
        through_v2.types.map(|t| t.api_version).as_deref(),
        Some("cluster.x-k8s.io/v1beta2")
    );
}

#[tokio::test]
async fn crud_follows_the_api_server_rules() {
    let (_server, client) = start().await;
    let mds = install_md_crd(&client).await;

    let mut generated = md("", 1);
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("md-".into());
    let created = mds
        .create(&PostParams::default(), &generated)
        .await
        .unwrap();
    let name = created.metadata.name.clone().unwrap();
    assert!(name.starts_with("md-") && name.len() == 8, "{name}");
    assert_eq!(created.metadata.uid.as_ref().map(String::len), Some(36));
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(generation(&created), 1);
    assert_eq!(
        mds.get(&name).await.unwrap().metadata.uid,
        created.metadata.uid
    );

    mds.create(&PostParams::default(), &md("b", 1))
        .await
        .unwrap();
    let mut other = md("c", 1);
    other.metadata.labels = Some([("app".to_string(), "db".to_string())].into());
    mds.create(&PostParams::default(), &other).await.unwrap();

    let names = |l: kube::core::ObjectList<DynamicObject>| {
        l.items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect::<Vec<_>>()
    };
    let all = names(mds.list(&ListParams::default()).await.unwrap());
    assert_eq!(all.len(), 3);
    assert_eq!(
        names(
            mds.list(&ListParams::default().labels("app=db"))
                .await
                .unwrap()
        ),
        vec!["c"]
    );
    assert_eq!(
        names(
            mds.list(&ListParams::default().labels("app notin (db)"))
                .await
                .unwrap()
        )
        .len(),
        2
    );
    assert_eq!(
        names(
            mds.list(&ListParams::default().labels("app in (db,web),app!=web"))
                .await
                .unwrap()
        ),
        vec!["c"]
    );
    assert_eq!(
        names(
            mds.list(&ListParams::default().fields("metadata.name=b"))
                .await
                .unwrap()
        ),
        vec!["b"]
    );
    let bad = mds
        .list(&ListParams::default().labels("app in (x"))
        .await
        .unwrap_err();
    assert_eq!(api_error(bad).0, 400);

    let (code, reason, message) = api_error(
        mds.create(&PostParams::default(), &md("b", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(
        message,
        "machinedeployments.cluster.x-k8s.io \"b\" already exists"
    );

    let (code, _, message) = api_error(mds.get("nope").await.unwrap_err());
    assert_eq!(
        (code, message.as_str()),
        (
            404,
            "machinedeployments.cluster.x-k8s.io \"nope\" not found"
        )
    );

    let elsewhere: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "missing", &md_resource("v1beta1"));
    let (code, _, message) = api_error(
        elsewhere
            .create(&PostParams::default(), &md("x", 1))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (404, "namespaces \"missing\" not found")
    );

    // Replace with a stale resourceVersion conflicts; with the current one it succeeds.
    let current = mds.get("b").await.unwrap();
    let mut stale = current.clone();
    stale.metadata.resource_version = Some((rv(&current) - 1).to_string());
    stale.data["spec"]["replicas"] = json!(5);
    let (code, reason, message) = api_error(
        mds.replace("b", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert_eq!(
        message,
        "Operation cannot be fulfilled on machinedeployments.cluster.x-k8s.io \"b\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let mut fresh = current.clone();
    fresh.data["spec"]["replicas"] = json!(5);
    let replaced = mds
        .replace("b", &PostParams::default(), &fresh)
        .await
        .unwrap();
    assert_eq!(replaced.data["spec"]["replicas"], 5);
    assert_eq!(generation(&replaced), 2);
    assert!(rv(&replaced) > rv(&current));
    assert_eq!(
        replaced.metadata.uid, current.metadata.uid,
        "server-managed fields kept"
    );

    // Deleting without finalizers removes at once.
    mds.delete("c", &DeleteParams::default()).await.unwrap();
    assert_eq!(api_error(mds.get("c").await.unwrap_err()).0, 404);
}

#[tokio::test]
async fn patches_generation_and_the_status_subresource() {
    let (_server, client) = start().await;
    let mds = install_md_crd(&client).await;
    let pp = PatchParams::default();
    let created = mds
        .create(&PostParams::default(), &md("a", 1))
        .await
        .unwrap();

    let merged = mds
        .patch(
            "a",
            &pp,
            &Patch::Merge(json!({"spec": {"replicas": 2, "paused": true}})),
        )
        .await
        .unwrap();
    assert_eq!(
        (merged.data["spec"]["replicas"].clone(), generation(&merged)),
        (json!(2), 2)
    );

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "remove", "path": "/spec/paused"},
    ]))
    .unwrap();
    let patched = mds.patch("a", &pp, &Patch::Json::<()>(ops)).await.unwrap();
    assert!(patched.data["spec"].get("paused").is_none());
    assert_eq!(generation(&patched), 3);
    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/spec/replicas", "value": 9}]))
            .unwrap();
    assert_eq!(
        api_error(
            mds.patch("a", &pp, &Patch::Json::<()>(failing))
                .await
                .unwrap_err()
        )
        .0,
        422
    );

    // Metadata changes do not bump the generation.
    let labelled = mds
        .patch(
            "a",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(generation(&labelled), 3);

    // The status subresource changes only status, and not the generation.
    let status = mds
        .patch_status(
            "a",
            &pp,
            &Patch::Merge(json!({"spec": {"replicas": 7}, "status": {"replicas": 2}})),
        )
        .await
        .unwrap();
    assert_eq!(status.data["status"]["replicas"], 2);
    assert_eq!(
        status.data["spec"]["replicas"], 2,
        "spec ignored on /status"
    );
    assert_eq!(generation(&status), 3);
    assert!(rv(&status) > rv(&labelled));

    // The main resource ignores status.
    let mut with_status = status.clone();
    with_status.data["status"] = json!({"replicas": 99});
    let replaced = mds
        .replace("a", &PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(replaced.data["status"]["replicas"], 2);
    assert_eq!(
        rv(&replaced),
        rv(&status),
        "nothing changed: no new resourceVersion"
    );

    let mut new_status = replaced.clone();
    new_status.data["status"] = json!({"replicas": 3, "phase": "Running"});
    let replaced = mds
        .replace_status("a", &PostParams::default(), &new_status)
        .await
        .unwrap();
    assert_eq!(
        replaced.data["status"],
        json!({"replicas": 3, "phase": "Running"})
    );
    assert_eq!(generation(&replaced), 3);

    // A patch that changes nothing keeps the resourceVersion.
    let same = mds
        .patch("a", &pp, &Patch::Merge(json!({"spec": {"replicas": 2}})))
        .await
        .unwrap();
    assert_eq!(rv(&same), rv(&replaced));
    assert_eq!(same.metadata.uid, created.metadata.uid);

    // Server-side apply through kube-rs: the manager takes what it applies.
    let applied = mds
        .patch(
            "a",
            &PatchParams::apply("test"),
            &Patch::Apply(json!({"apiVersion": "cluster.x-k8s.io/v1beta1",
                "kind": "MachineDeployment", "metadata": {"labels": {"team": "t"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        applied
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("team"))
            .map(String::as_str),
        Some("t")
    );
    let managers: Vec<(Option<String>, Option<String>)> = applied
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| (e.manager.clone(), e.operation.clone()))
        .collect();
    assert!(
        managers.contains(&(Some("test".into()), Some("Apply".into()))),
        "{managers:?}"
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_and_owners_collect_dependents() {
    let (_server, client) = start().await;
    let mds = install_md_crd(&client).await;
    let cms = configmaps(&client);
    let mut owner = md("owner", 1);
    owner.metadata.finalizers = Some(vec!["example.com/cleanup".into()]);
    let owner = mds.create(&PostParams::default(), &owner).await.unwrap();
    let uid = owner.metadata.uid.clone().unwrap();
    for name in ["dep-1", "dep-2"] {
        cms.create(
            &PostParams::default(),
            &obj(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "ownerReferences": [
                {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "name": "owner", "uid": uid}]}})),
        )
        .await
        .unwrap();
    }
    cms.create(
        &PostParams::default(),
        &obj(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated"}})),
    )
    .await
    .unwrap();

    let deleted = mds
        .delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    let held = deleted
        .left()
        .expect("the object comes back while finalizers hold it");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(generation(&held), 2);
    assert!(
        mds.get("owner")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    assert!(
        cms.get("dep-1").await.is_ok(),
        "dependents wait for the owner to go"
    );

    mds.patch(
        "owner",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(api_error(mds.get("owner").await.unwrap_err()).0, 404);
    assert_eq!(api_error(cms.get("dep-1").await.unwrap_err()).0, 404);
    assert_eq!(api_error(cms.get("dep-2").await.unwrap_err()).0, 404);
    assert!(cms.get("unrelated").await.is_ok());
}

#[tokio::test]
async fn watcher_sees_changes_in_order() {
    for streaming in [false, true] {
        let (_server, client) = start().await;
        let mds = install_md_crd(&client).await;
        mds.create(&PostParams::default(), &md("before", 1))
            .await
            .unwrap();
        let config = if streaming {
            watcher::Config::default().streaming_lists()
        } else {
            watcher::Config::default()
        };
        let mut events = watcher(mds.clone(), config).boxed();
        let mut initial = Vec::new();
        loop {
            match tokio::time::timeout(Duration::from_secs(5), events.try_next()).await {
                Ok(Ok(Some(watcher::Event::InitApply(o)))) => {
                    initial.push(o.metadata.name.unwrap_or_default())
                }
                Ok(Ok(Some(watcher::Event::InitDone))) => break,
                Ok(Ok(Some(_))) => {}
                other => panic!("initial list (streaming: {streaming}) ended with {other:?}"),
            }
        }
        assert_eq!(initial, vec!["before"]);

        mds.create(&PostParams::default(), &md("a", 1))
            .await
            .unwrap();
        mds.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
        mds.delete("a", &DeleteParams::default()).await.unwrap();
        let mut seen = Vec::new();
        while seen.len() < 3 {
            match tokio::time::timeout(Duration::from_secs(5), events.try_next()).await {
                Ok(Ok(Some(watcher::Event::Apply(o)))) => seen.push(format!(
                    "apply {} {}",
                    o.metadata.name.unwrap_or_default(),
                    o.data["spec"]["replicas"]
                )),
                Ok(Ok(Some(watcher::Event::Delete(o)))) => {
                    seen.push(format!("delete {}", o.metadata.name.unwrap_or_default()))
                }
                Ok(Ok(Some(_))) => {}
                other => panic!("watch (streaming: {streaming}) ended with {other:?}"),
            }
        }
        assert_eq!(
            seen,
            vec!["apply a 1", "apply a 3", "delete a"],
            "streaming: {streaming}"
        );
    }
}

#[tokio::test]
async fn watch_from_an_expired_resource_version_is_gone() {
    let (server, client) = start_with(Config {
        history_limit: 5,
        ..Config::default()
    })
    .await;
    let mds = install_md_crd(&client).await;
    for i in 0..10 {
        mds.create(&PostParams::default(), &md(&format!("m{i}"), 1))
            .await
            .unwrap();
    }
    let mut stream = mds
        .watch(&WatchParams::default(), "1")
        .await
        .unwrap()
        .boxed();
    match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        Ok(Some(Ok(WatchEvent::Error(e)))) => {
            assert_eq!((e.code, e.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected a 410 event, got {other:?}"),
    }
    // A recent resourceVersion replays what came after it.
    let rv = server.store().current_rv() - 1;
    let mut stream = resume(&mds, rv).await;
    match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        Ok(Some(Ok(WatchEvent::Added(o)))) => assert_eq!(o.metadata.name.as_deref(), Some("m9")),
        other => panic!("expected the replayed ADDED, got {other:?}"),
    }
    // timeoutSeconds ends the stream.
    match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        Ok(None) => {}
        other => panic!("expected the stream to end after its timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn watches_filter_by_selector_and_send_bookmarks() {
    let (server, client) = start().await;
    let mds = install_md_crd(&client).await;
    let from = server.store().current_rv().to_string();
    let params = WatchParams::default().labels("app=db").timeout(10);
    let mut stream = mds.watch(&params, &from).await.unwrap().boxed();
    mds.create(&PostParams::default(), &md("web", 1))
        .await
        .unwrap();
    let mut db = md("db", 1);
    db.metadata.labels = Some([("app".to_string(), "db".to_string())].into());
    mds.create(&PostParams::default(), &db).await.unwrap();
    // Relabelling the web one into the selection is an ADDED for this watch.
    mds.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "db"}}})),
    )
    .await
    .unwrap();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
            Ok(Some(Ok(WatchEvent::Added(o)))) => {
                seen.push(format!("added {}", o.metadata.name.unwrap_or_default()))
            }
            Ok(Some(Ok(WatchEvent::Bookmark(b)))) => {
                assert_eq!(b.types.kind, "MachineDeployment");
                seen.push("bookmark".to_string());
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, vec!["added db", "added web", "bookmark"]);
}

/// A watch hears only its own kind's changes, yet its bookmarks reach as far as the
/// store: a client resuming from one after other kinds changed is not sent back to a
/// version the history may have dropped, nor replayed anything it already had.
#[tokio::test]
async fn bookmarks_reach_past_other_kinds_changes() {
    let (server, client) = start().await;
    let mds = install_md_crd(&client).await;
    let cms = configmaps(&client);
    mds.create(&PostParams::default(), &md("before", 1))
        .await
        .unwrap();
    let from = server.store().current_rv().to_string();
    let mut stream = mds
        .watch(&WatchParams::default().timeout(10), &from)
        .await
        .unwrap()
        .boxed();
    create_configmaps(&cms, 0..5).await;
    mds.create(&PostParams::default(), &md("after", 1))
        .await
        .unwrap();
    create_configmaps(&cms, 5..10).await;
    let last = server.store().current_rv();
    let mut seen = Vec::new();
    let bookmark_rv = loop {
        match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
            Ok(Some(Ok(WatchEvent::Added(o)))) => seen.push(o.metadata.name.unwrap_or_default()),
            Ok(Some(Ok(WatchEvent::Bookmark(b)))) => {
                let rv: u64 = b.metadata.resource_version.parse().unwrap();
                if rv >= last {
                    break rv;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(seen, vec!["after"], "only its own kind, each change once");
    assert_eq!(bookmark_rv, last);
    // Resuming from the bookmark replays nothing it already had.
    let mut resumed = resume(&mds, bookmark_rv).await;
    match tokio::time::timeout(Duration::from_secs(5), resumed.next()).await {
        Ok(None) => {}
        other => panic!("expected nothing before the timeout, got {other:?}"),
    }
}

/// Counters over HTTP, as scripts read them.
async fn http_counts(server: &RunningServer) -> RequestCounts {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    stream
        .write_all(
            b"GET /_topograph/requests HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"))
}

#[tokio::test]
async fn request_counters_are_exact() {
    let (server, client) = start().await;
    let mds = install_md_crd(&client).await;
    mds.create(&PostParams::default(), &md("a", 1))
        .await
        .unwrap();
    server.reset_counts();

    // A converged reconcile only reads.
    mds.get("a").await.unwrap();
    mds.list(&ListParams::default()).await.unwrap();
    let _ = mds.get("missing").await;
    let counts = server.counts();
    assert_eq!((counts.get, counts.list, counts.writes()), (2, 1, 0));

    mds.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    mds.patch_status(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"ready": true}})),
    )
    .await
    .unwrap();
    mds.create(&PostParams::default(), &md("b", 1))
        .await
        .unwrap();
    let b = mds.get("b").await.unwrap();
    mds.replace("b", &PostParams::default(), &b).await.unwrap();
    mds.delete("b", &DeleteParams::default()).await.unwrap();
    // Library access is not counted.
    server
        .store()
        .get_object(
            "cluster.x-k8s.io/v1beta1",
            "MachineDeployment",
            "default",
            "a",
        )
        .unwrap();
    server
        .seed([json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seeded", "namespace": "default"}})])
        .unwrap();

    let expected = RequestCounts {
        get: 3,
        list: 1,
        watch: 0,
        create: 1,
        update: 1,
        patch: 2,
        delete: 1,
        discovery: 0,
    };
    assert_eq!(server.counts(), expected);
    assert_eq!(
        http_counts(&server).await,
        expected,
        "reading the counters is not counted"
    );
    assert_eq!(server.counts().writes(), 5);
}

#[tokio::test]
async fn simulated_providers_make_clusters_ready() {
    let (server, client) = start_with(Config {
        simulate_providers: Some(Duration::from_millis(300)),
        ..Config::default()
    })
    .await;
    for (group, kind) in [
        ("cluster.x-k8s.io", "Cluster"),
        ("cluster.x-k8s.io", "MachineDeployment"),
        ("infrastructure.cluster.x-k8s.io", "DockerCluster"),
        ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
    ] {
        server.seed([crd(group, kind, &["v1beta1"], true)]).unwrap();
    }
    let ar = |group: &str, kind: &str| {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, "v1beta1", kind),
            &format!("{}s", kind.to_lowercase()),
        )
    };
    let api = |group: &str, kind: &str| {
        Api::<DynamicObject>::namespaced_with(client.clone(), "default", &ar(group, kind))
    };
    let pp = PostParams::default();
    let infra = api("infrastructure.cluster.x-k8s.io", "DockerCluster");
    let cps = api("controlplane.cluster.x-k8s.io", "KubeadmControlPlane");
    let clusters = api("cluster.x-k8s.io", "Cluster");
    let mds = api("cluster.x-k8s.io", "MachineDeployment");
    infra.create(&pp, &obj(json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster", "metadata": {"name": "c1"}, "spec": {}}))).await.unwrap();
    cps.create(&pp, &obj(json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "metadata": {"name": "c1"}, "spec": {"version": "v1.33.0", "replicas": 3}}))).await.unwrap();
    let cluster = clusters
        .create(&pp, &obj(json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "c1"}, "spec": {
            "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster", "name": "c1"},
            "controlPlaneRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "name": "c1"}}})))
        .await
        .unwrap();
    mds.create(&pp, &obj(json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": {"name": "md", "labels": {"cluster.x-k8s.io/cluster-name": "c1"}}, "spec": {"replicas": 2}}))).await.unwrap();
    server.reset_counts();

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let c = clusters.get("c1").await.unwrap();
        if c.data["status"]["infrastructureReady"] == true
            && c.data["status"]["controlPlaneReady"] == true
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "cluster never became ready: {:?}",
            c.data
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let dc = infra.get("c1").await.unwrap();
    assert_eq!(
        dc.data["spec"]["controlPlaneEndpoint"],
        json!({"host": "c1.sim.local", "port": 6443})
    );
    let owner_uid = |o: &DynamicObject| {
        o.metadata
            .owner_references
            .as_ref()
            .and_then(|r| r.first())
            .map(|r| r.uid.clone())
    };
    assert_eq!(owner_uid(&dc), cluster.metadata.uid);
    let cp = cps.get("c1").await.unwrap();
    assert_eq!(cp.data["status"]["version"], "v1.33.0");
    assert_eq!(cp.data["status"]["readyReplicas"], 3);
    assert_eq!(owner_uid(&cp), cluster.metadata.uid);
    let md = mds.get("md").await.unwrap();
    assert_eq!(owner_uid(&md), cluster.metadata.uid);
    assert_eq!(md.data["status"]["readyReplicas"], 2);
    assert_eq!(md.data["status"]["observedGeneration"], generation(&md));

    // An upgrade is reported only after the delay.
    cps.patch(
        "c1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"version": "v1.34.0"}})),
    )
    .await
    .unwrap();
    assert_eq!(
        cps.get("c1").await.unwrap().data["status"]["version"],
        "v1.33.0"
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while cps.get("c1").await.unwrap().data["status"]["version"] != "v1.34.0" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "upgrade never finished"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The providers' writes are not client requests.
    assert_eq!(server.counts().writes(), 1);
}
