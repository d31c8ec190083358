//! External patches, ValidateTopology and discovered variables in the reconcile: the
//! quick-start-runtimesdk real-world class reconciled on topograph-kube with the example
//! extension served in process over HTTPS, its handlers handed to the reconcile through
//! `LifecycleHooks::render_extensions` (as the applier's hooks hand them out). The
//! class's status lists the discovered variables, the objects carry the patched fields;
//! an extension answering garbage fails the reconcile naming extension and handler
//! (failure policy Fail) or is skipped (Ignore).

mod support;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Bytes;
use serde_json::{Map, Value, json};
use support::{Env, NS, V1BETA1};
use topograph_api::object::ObjectExt;
use topograph_engine::service::RenderExtensions;
use topograph_example_extension::Extension;
use topograph_reconcile::hooks::{BoxFuture, Hook, HookAnswer, HookError, LifecycleHooks};
use topograph_runtime::blocking::BlockingClient;
use topograph_runtime::client::Client;
use topograph_runtime::config::ExtensionConfig;
use topograph_runtime::hooks::FailurePolicy;
use topograph_runtime::server::{Answer, Handler};
use topograph_runtime::tls;

const EXTENSION: &str = "k8s-upgrade-with-runtimesdk";
const CLUSTER: &str = "capi-qs-rtsdk";

fn folder() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-world/providers/capi-e2e-quick-start-runtimesdk-v1beta1");
    dir.exists().then_some(dir).or_else(|| {
        eprintln!("skipped: the real-world folder is absent");
        None
    })
}

/// The class with its templates, and the Cluster, values.env substituted.
fn objects(dir: &std::path::Path) -> (Vec<Value>, Value) {
    let values: BTreeMap<String, String> = std::fs::read_to_string(dir.join("values.env"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect();
    let read = |file: &str| -> Vec<Value> {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let text = topograph_api::envsubst::substitute(&text, &values).unwrap();
        let (docs, errors) = topograph_api::load::parse_documents(file, &text);
        assert!(errors.is_empty(), "{errors:?}");
        docs.into_iter()
            .map(|d| {
                let mut v = d.value;
                if v.namespace().is_empty() {
                    v["metadata"]["namespace"] = json!(NS);
                }
                v
            })
            .collect()
    };
    let class = read("clusterclass-quick-start-runtimesdk.yaml");
    // The ConfigMap and ClusterResourceSet beside the Cluster play no part in a topology.
    let cluster = read("cluster-template-upgrades-runtimesdk.kustomized.yaml")
        .into_iter()
        .find(|o| o.kind() == "Cluster")
        .unwrap();
    (class, cluster)
}

/// The example extension, except for the handlers `broken` answers for.
struct Misbehaving {
    broken: &'static [&'static str],
    answer: Answer,
    delay: Duration,
}

impl Handler for Misbehaving {
    fn handle(&self, path: String, body: Bytes) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let broken = self.broken.iter().any(|h| path.ends_with(&format!("/{h}")));
        let (answer, delay) = (self.answer.clone(), self.delay);
        Box::pin(async move {
            if broken {
                tokio::time::sleep(delay).await;
                answer
            } else {
                Extension::default().answer(&path, &body)
            }
        })
    }
}

/// Serves `handler` over HTTPS on 127.0.0.1 and registers its handlers (discovered,
/// then given `policy` and a 2 s timeout); the reconcile's extensions.
async fn extensions(handler: Arc<dyn Handler>, policy: FailurePolicy) -> RenderExtensions {
    let generated = tls::generate(&["127.0.0.1", "localhost"]).unwrap();
    let config =
        tls::server_config(generated.cert_pem.as_bytes(), generated.key_pem.as_bytes()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(topograph_runtime::server::serve(
        listener,
        Arc::new(config),
        handler,
    ));
    let client = Client::new();
    let mut discovered = client
        .discover(&ExtensionConfig::for_url(
            EXTENSION,
            &url,
            generated.ca_pem.into_bytes(),
        ))
        .await
        .unwrap();
    for h in &mut discovered.status.handlers {
        h.timeout_seconds = Some(2);
        h.failure_policy = Some(policy);
    }
    client.register(&discovered).unwrap();
    RenderExtensions {
        extensions: Arc::new(BlockingClient::new(Arc::new(client)).unwrap()),
        configs: Arc::new(vec![serde_json::to_value(&discovered).unwrap()]),
        namespaces: BTreeMap::from([(NS.to_string(), BTreeMap::new())]),
    }
}

/// Runtime SDK on with the given extensions and no lifecycle handler registered.
struct WithExtensions(RenderExtensions);

impl LifecycleHooks for WithExtensions {
    fn enabled(&self) -> bool {
        true
    }

    fn registered<'a>(&'a self, _: Hook, _: &'a Value) -> BoxFuture<'a, Result<bool, HookError>> {
        Box::pin(async { Ok(false) })
    }

    fn call<'a>(
        &'a self,
        _: Hook,
        _: &'a Value,
        _: Map<String, Value>,
    ) -> BoxFuture<'a, Result<HookAnswer, HookError>> {
        Box::pin(async { Ok(HookAnswer::default()) })
    }

    fn render_extensions<'a>(
        &'a self,
        _: &'a [String],
    ) -> BoxFuture<'a, Result<Option<RenderExtensions>, HookError>> {
        let extensions = self.0.clone();
        Box::pin(async move { Ok(Some(extensions)) })
    }
}

async fn class_status(env: &Env) -> Value {
    env.get(V1BETA1, "ClusterClass", "quick-start-runtimesdk")
        .await
        .unwrap()["status"]
        .clone()
}

async fn docker_cluster(env: &Env) -> Value {
    let cluster = env.cluster(CLUSTER).await;
    let r = &cluster["spec"]["infrastructureRef"];
    env.get(
        r["apiVersion"].as_str().unwrap(),
        r["kind"].as_str().unwrap(),
        r["name"].as_str().unwrap(),
    )
    .await
    .unwrap()
}

// The extension is served on this test's runtime while the engine waits for it on a
// worker: two workers, so one stays free to answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtimesdk_class_reconciles_through_the_example_extension() {
    let Some(dir) = folder() else { return };
    let (class, cluster) = objects(&dir);
    let env = Env::start(class, vec![cluster]).await;
    let hooks =
        WithExtensions(extensions(Arc::new(Extension::default()), FailurePolicy::Fail).await);

    let outcome = env.reconcile_with_hooks(CLUSTER, &hooks).await.unwrap();
    assert!(outcome.created > 0, "{outcome:?}");

    // The class reconcile called DiscoverVariables: the extension's variables are listed
    // from the patch that discovered them.
    let status = class_status(&env).await;
    let variables = status["variables"].as_array().unwrap();
    let image = variables
        .iter()
        .find(|v| v["name"] == "imageRepository")
        .unwrap_or_else(|| panic!("{status:#}"));
    assert_eq!(image["definitionsConflict"], false);
    assert_eq!(image["definitions"][0]["from"], "test-patch");
    assert!(image["definitions"][0]["schema"]["openAPIV3Schema"].is_object());
    assert!(
        variables
            .iter()
            .all(|v| v["definitions"][0]["from"] == "test-patch"),
        "{status:#}"
    );
    let ready = status["v1beta2"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "VariablesReady")
        .unwrap();
    assert_eq!(ready["status"], "True");

    // GeneratePatches' fields reached the objects.
    assert_eq!(
        docker_cluster(&env).await["spec"]["loadBalancer"]["imageRepository"],
        "kindest"
    );
    let kcp = env.control_plane(CLUSTER).await;
    assert_eq!(
        kcp["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"],
        1
    );
    assert_eq!(
        kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]["extraArgs"]["v"],
        "2"
    );
    let condition = env.condition(CLUSTER).await;
    assert_eq!(condition["status"], "True", "{condition:#}");

    // A second reconcile with the same answers changes nothing.
    let again = env.reconcile_with_hooks(CLUSTER, &hooks).await.unwrap();
    assert_eq!((again.created, again.updated, again.deleted), (0, 0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_extensions_the_class_is_refused() {
    let Some(dir) = folder() else { return };
    let (class, cluster) = objects(&dir);
    let env = Env::start(class, vec![cluster]).await;
    let error = env.reconcile(CLUSTER).await.unwrap_err();
    assert!(
        error.contains("spec.patches[0].external: Forbidden"),
        "{error}"
    );
    assert!(env.cluster(CLUSTER).await["spec"]["infrastructureRef"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_answer_fails_the_reconcile_with_policy_fail() {
    let Some(dir) = folder() else { return };
    let (class, cluster) = objects(&dir);
    let env = Env::start(class, vec![cluster]).await;
    let broken = Misbehaving {
        broken: &["generate-patches"],
        answer: (200, b"this is not JSON".to_vec()),
        delay: Duration::ZERO,
    };
    let hooks = WithExtensions(extensions(Arc::new(broken), FailurePolicy::Fail).await);
    let error = env.reconcile_with_hooks(CLUSTER, &hooks).await.unwrap_err();
    let handler = format!("generate-patches.{EXTENSION}");
    assert!(error.contains(&handler), "{error}");
    let condition = env.condition(CLUSTER).await;
    assert_eq!(condition["status"], "False");
    let message = condition["message"].as_str().unwrap();
    assert!(message.contains(&handler), "{message}");
    // Nothing of the topology was written.
    assert!(env.cluster(CLUSTER).await["spec"]["infrastructureRef"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_fails_the_reconcile_with_policy_fail_and_is_skipped_with_ignore() {
    let Some(dir) = folder() else { return };
    let slow = || Misbehaving {
        broken: &["generate-patches", "validate-topology"],
        answer: (200, b"{}".to_vec()),
        delay: Duration::from_secs(4),
    };

    let (class, cluster) = objects(&dir);
    let env = Env::start(class, vec![cluster]).await;
    let hooks = WithExtensions(extensions(Arc::new(slow()), FailurePolicy::Fail).await);
    let started = std::time::Instant::now();
    let error = env.reconcile_with_hooks(CLUSTER, &hooks).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "bounded by the 2 s timeout"
    );
    assert!(
        error.contains(&format!("generate-patches.{EXTENSION}")),
        "{error}"
    );

    let (class, cluster) = objects(&dir);
    let env = Env::start(class, vec![cluster]).await;
    let hooks = WithExtensions(extensions(Arc::new(slow()), FailurePolicy::Ignore).await);
    let outcome = env.reconcile_with_hooks(CLUSTER, &hooks).await.unwrap();
    assert!(outcome.created > 0);
    // The patches were skipped: the template's own value stays.
    assert!(
        docker_cluster(&env).await["spec"]["loadBalancer"]["imageRepository"].is_null(),
        "{:#}",
        docker_cluster(&env).await
    );
    assert_eq!(env.condition(CLUSTER).await["status"], "True");
}
