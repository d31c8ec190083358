//! Kinds whose CRD asks for webhook conversion: objects are stored in the storage
//! version and every request sees them in the version it names — reads, lists, watch
//! events, and the answers to creates, updates, patches and applies — as kube-apiserver
//! does with a conversion webhook (here a converter given to the server plays it). A
//! failing conversion is a 500 with kube-apiserver's text, and nothing is stored.

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use topograph_kube::conversion::{ApiVersionOf, Converter};
use topograph_kube::{Config, RunningServer, Server};

const GROUP: &str = "example.com";

/// v1 calls the field `size`, v2 (the storage version) `replicas`; a `size` of -1
/// cannot convert.
fn converter() -> Converter {
    Converter::new(|object: &Value, to: &str, _: ApiVersionOf<'_>| rename(object, to))
}

fn rename(object: &Value, to: &str) -> Result<Value, String> {
    let mut object = object.clone();
    let (from, into) = if to.ends_with("/v2") {
        ("size", "replicas")
    } else {
        ("replicas", "size")
    };
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
        && let Some(value) = spec.remove(from)
    {
        if value == json!(-1) {
            return Err(format!("spec.{from}: -1 has no meaning in {to}"));
        }
        spec.insert(into.to_string(), value);
    }
    object["apiVersion"] = json!(to);
    Ok(object)
}

fn crd(strategy: &str) -> Value {
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage, "subresources": {"status": {}},
               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{GROUP}")},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "conversion": {"strategy": strategy},
            "versions": [version("v1", false), version("v2", true)]
        }
    })
}

async fn start(converter: Option<Converter>, strategy: &str) -> (RunningServer, kube::Client) {
    let server = Server::start(Config {
        converter,
        ..Config::default()
    })
    .await
    .expect("server starts");
    server.seed([crd(strategy)]).expect("CRD accepted");
    let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig_yaml()).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kube config");
    (server, kube::Client::try_from(config).expect("client"))
}

fn api(client: &kube::Client, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(GROUP, version, "Widget");
    Api::namespaced_with(client.clone(), "default", &ApiResource::from_gvk(&gvk))
}

fn widget(version: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/{version}"), "kind": "Widget",
        "metadata": {"name": "w"}, "spec": spec
    }))
    .expect("object")
}

fn spec(o: &DynamicObject) -> Value {
    o.data["spec"].clone()
}

#[tokio::test]
async fn every_request_sees_its_own_version_and_the_store_keeps_the_storage_version() {
    let (server, client) = start(Some(converter()), "Webhook").await;
    let (v1, v2) = (api(&client, "v1"), api(&client, "v2"));

    let created = v1
        .create(&PostParams::default(), &widget("v1", json!({"size": 3})))
        .await
        .unwrap();
    assert_eq!(spec(&created), json!({"size": 3}), "answered in v1");
    let stored = server
        .store()
        .get_object(&format!("{GROUP}/v2"), "Widget", "default", "w")
        .unwrap();
    assert_eq!(stored["spec"], json!({"replicas": 3}), "stored in v2");

    assert_eq!(spec(&v2.get("w").await.unwrap()), json!({"replicas": 3}));
    assert_eq!(spec(&v1.get("w").await.unwrap()), json!({"size": 3}));
    let listed = v1.list(&ListParams::default()).await.unwrap();
    assert_eq!(spec(&listed.items[0]), json!({"size": 3}));

    // A merge patch in v1 means v1's field.
    let patched = v1
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 4}})),
        )
        .await
        .unwrap();
    assert_eq!(spec(&patched), json!({"size": 4}));
    assert_eq!(spec(&v2.get("w").await.unwrap()), json!({"replicas": 4}));

    // An apply in v2; the v1 watch sees it in v1.
    let mut events = v1
        .watch(
            &kube::api::WatchParams::default(),
            &patched.metadata.resource_version.clone().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    let applied = v2
        .patch(
            "w",
            &PatchParams::apply("tester").force(),
            &Patch::Apply(
                json!({"apiVersion": format!("{GROUP}/v2"), "kind": "Widget",
                                 "metadata": {"name": "w"}, "spec": {"replicas": 5}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(spec(&applied), json!({"replicas": 5}));
    let event = events.try_next().await.unwrap().unwrap();
    let WatchEvent::Modified(seen) = event else {
        panic!("{event:?}");
    };
    assert_eq!(spec(&seen), json!({"size": 5}), "the v1 watch sees v1");
    assert_eq!(seen.types.unwrap().api_version, format!("{GROUP}/v1"));

    // A PUT in v2 of what a v2 read gave.
    let mut current = v2.get("w").await.unwrap();
    current.data["spec"] = json!({"replicas": 6});
    let replaced = v2
        .replace("w", &PostParams::default(), &current)
        .await
        .unwrap();
    assert_eq!(spec(&replaced), json!({"replicas": 6}));
    assert_eq!(spec(&v1.get("w").await.unwrap()), json!({"size": 6}));
}

#[tokio::test]
async fn a_failed_conversion_is_kube_apiservers_500_and_stores_nothing() {
    let (server, client) = start(Some(converter()), "Webhook").await;
    let v1 = api(&client, "v1");
    let err = v1
        .create(&PostParams::default(), &widget("v1", json!({"size": -1})))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err:?}");
    };
    assert_eq!(status.code, 500);
    assert_eq!(
        status.message,
        format!(
            "conversion webhook for {GROUP}/v2, Kind=Widget failed: spec.size: -1 has no meaning in {GROUP}/v2"
        )
    );
    assert!(
        server
            .store()
            .get_object(&format!("{GROUP}/v2"), "Widget", "default", "w")
            .is_none()
    );
}

#[tokio::test]
async fn without_webhook_conversion_only_the_api_version_differs() {
    let (_server, client) = start(Some(converter()), "None").await;
    let (v1, v2) = (api(&client, "v1"), api(&client, "v2"));
    v1.create(&PostParams::default(), &widget("v1", json!({"size": 3})))
        .await
        .unwrap();
    let read = v2.get("w").await.unwrap();
    assert_eq!(spec(&read), json!({"size": 3}));
    assert_eq!(read.types.unwrap().api_version, format!("{GROUP}/v2"));
}

/// Whether a write changes anything is judged in the storage version, as
/// kube-apiserver judges it: a v1 write that spells a value differently from the v1
/// read, but stores the same, is no change (same resourceVersion and generation).
#[tokio::test]
async fn a_write_that_stores_the_same_is_no_change() {
    // v2 stores `color` lowercase; v1 reads it back as stored.
    let lowercase = Converter::new(|object: &Value, to: &str, _: ApiVersionOf<'_>| {
        let mut object = object.clone();
        if to.ends_with("/v2")
            && let Some(color) = object.pointer("/spec/color").and_then(Value::as_str)
        {
            object["spec"]["color"] = json!(color.to_lowercase());
        }
        object["apiVersion"] = json!(to);
        Ok(object)
    });
    let (_server, client) = start(Some(lowercase), "Webhook").await;
    let v1 = api(&client, "v1");
    let created = v1
        .create(
            &PostParams::default(),
            &widget("v1", json!({"color": "Blue"})),
        )
        .await
        .unwrap();
    assert_eq!(
        spec(&created),
        json!({"color": "blue"}),
        "answered as stored, in the version asked"
    );
    let read = v1.get("w").await.unwrap();
    assert_eq!(spec(&read), json!({"color": "blue"}), "read as stored");
    let mut again = read.clone();
    again.data["spec"] = json!({"color": "BLUE"});
    let replaced = v1
        .replace("w", &PostParams::default(), &again)
        .await
        .unwrap();
    assert_eq!(
        replaced.metadata.resource_version, read.metadata.resource_version,
        "nothing stored changed"
    );
    assert_eq!(replaced.metadata.generation, read.metadata.generation);
}

/// Watches of one version share each change's conversion: with two `v1` watches open, a
/// write in `v2` is converted to `v1` once (by the first watch to send it), and both
/// see the same object; a `v2` watch needs none.
#[tokio::test]
async fn watches_of_one_version_share_each_changes_conversion() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let to_v1 = Arc::new(AtomicUsize::new(0));
    let counted = {
        let to_v1 = to_v1.clone();
        Converter::new(move |object: &Value, to: &str, _: ApiVersionOf<'_>| {
            if to.ends_with("/v1") {
                to_v1.fetch_add(1, Ordering::SeqCst);
            }
            rename(object, to)
        })
    };
    let (_server, client) = start(Some(counted), "Webhook").await;
    let (v1, v2) = (api(&client, "v1"), api(&client, "v2"));
    let created = v2
        .create(
            &PostParams::default(),
            &widget("v2", json!({"replicas": 1})),
        )
        .await
        .unwrap();
    let version = created.metadata.resource_version.clone().unwrap();
    let params = kube::api::WatchParams::default();
    let mut first = v1.watch(&params, &version).await.unwrap().boxed();
    let mut second = v1.watch(&params, &version).await.unwrap().boxed();
    let mut stored = v2.watch(&params, &version).await.unwrap().boxed();

    for replicas in 2..=4 {
        let before = to_v1.load(Ordering::SeqCst);
        v2.patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": replicas}})),
        )
        .await
        .unwrap();
        let mut seen = Vec::new();
        for events in [&mut first, &mut second] {
            match events.try_next().await.unwrap().unwrap() {
                WatchEvent::Modified(object) => seen.push(object),
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            stored.try_next().await.unwrap().unwrap(),
            WatchEvent::Modified(_)
        ));
        assert_eq!(spec(&seen[0]), json!({"size": replicas}));
        assert_eq!(seen[0].data, seen[1].data);
        assert_eq!(seen[0].metadata, seen[1].metadata);
        assert_eq!(
            to_v1.load(Ordering::SeqCst) - before,
            1,
            "one conversion for both v1 watches"
        );
    }
}
