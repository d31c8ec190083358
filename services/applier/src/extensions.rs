//! Runtime SDK in the applier: each management cluster's `ExtensionConfig`s discovered
//! and registered, their status written as Cluster API's ExtensionConfig controller
//! writes it (handlers, `Discovered` condition), and the lifecycle hooks of the
//! reconcile answered through them.
//!
//! An ExtensionConfig annotated `runtime.cluster.x-k8s.io/inject-ca-from-secret` gets
//! the named Secret's `ca.crt` as its `caBundle` first, as Cluster API's controller does.
//! A management cluster's ExtensionConfigs are listed again at most every
//! `refresh_every`; only new or changed ones (by uid and generation) are discovered
//! again, and one whose discovery fails is unregistered until it succeeds. Runtime SDK
//! is on for a management cluster only while it has registered handlers, so fleets
//! without extensions reconcile as before (decision 0025).
//!
//! The same registry serves renders: [`RuntimeHooks`] hands the reconcile
//! `RenderExtensions` for classes with external patches (and for DiscoverVariables in
//! the class reconcile): the management cluster's one `BlockingClient` for an engine in
//! process, and the discovered ExtensionConfigs with the namespaces' labels for the
//! render service, which calls the extensions itself (decision 0024's addendum).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use topograph_api::object::ObjectExt;
use topograph_engine::service::RenderExtensions;
use topograph_management::ManagementCluster;
use topograph_reconcile::conditions::{self, Condition};
use topograph_reconcile::hooks::{BoxFuture, Hook, HookAnswer, HookError, LifecycleHooks};
use topograph_runtime::blocking::BlockingClient;
use topograph_runtime::client::Client;
use topograph_runtime::config::ExtensionConfig;
use topograph_runtime::hooks::{self as wire, HookRequest, HookResponse};

/// The API version ExtensionConfigs are read and written in.
pub const API_VERSION: &str = "runtime.cluster.x-k8s.io/v1alpha1";
const KIND: &str = "ExtensionConfig";

/// The Runtime SDK clients of every management cluster.
pub struct RuntimeExtensions {
    refresh_every: Duration,
    clusters: Mutex<HashMap<String, Arc<Entry>>>,
}

/// One management cluster's client and what was last discovered.
struct Entry {
    client: Arc<Client>,
    /// The client behind the engine's synchronous calls, made on first use: one per
    /// management cluster, with its own runtime thread, so a render waiting on an
    /// extension never needs the caller's runtime to make progress.
    blocking: Mutex<Option<Arc<BlockingClient>>>,
    state: tokio::sync::Mutex<State>,
}

impl Entry {
    fn blocking(&self) -> Result<Arc<BlockingClient>, HookError> {
        let mut blocking = self.blocking.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(client) = blocking.as_ref() {
            return Ok(client.clone());
        }
        let client = Arc::new(
            BlockingClient::new(self.client.clone()).map_err(|e| HookError(e.to_string()))?,
        );
        *blocking = Some(client.clone());
        Ok(client)
    }
}

#[derive(Default)]
struct State {
    /// ExtensionConfig name → (uid, generation) of the version registered (or tried).
    seen: BTreeMap<String, (String, i64)>,
    refreshed: Option<Instant>,
    /// ExtensionConfig name → the config as registered (its status' handlers as
    /// discovered), JSON: what a render service registers in turn.
    discovered: BTreeMap<String, Value>,
    /// `discovered`'s values, shared with the hooks handed out until it changes.
    configs: Arc<Vec<Value>>,
    /// ExtensionConfigs whose registration changed since [`RuntimeExtensions::rediscover`]
    /// last reported: whichever refresh found the change, the watcher follows it up.
    unreported: std::collections::BTreeSet<String>,
}

impl RuntimeExtensions {
    /// Clients whose ExtensionConfigs are read again at most every `refresh_every`.
    pub fn new(refresh_every: Duration) -> Self {
        RuntimeExtensions {
            refresh_every,
            clusters: Mutex::new(HashMap::new()),
        }
    }

    /// The lifecycle hooks of management cluster `name`, its ExtensionConfigs read
    /// again first when that is due. A management cluster that cannot be read keeps
    /// what it had: its hooks still answer from the last discovery.
    pub async fn hooks(&self, name: &str, api: &ManagementCluster) -> RuntimeHooks {
        self.hooks_refreshed(name, api, false).await.0
    }

    /// Reads management cluster `name`'s ExtensionConfigs now, as Cluster API's
    /// ExtensionConfig controller does on a change, and returns the hooks with the
    /// names of the ExtensionConfigs whose registration changed (discovered anew,
    /// failed, or gone) since the last call, whichever refresh found the change: the
    /// ClusterClasses calling them have variables to discover again.
    pub async fn rediscover(
        &self,
        name: &str,
        api: &ManagementCluster,
    ) -> (RuntimeHooks, Vec<String>) {
        self.hooks_refreshed(name, api, true).await
    }

    async fn hooks_refreshed(
        &self,
        name: &str,
        api: &ManagementCluster,
        now: bool,
    ) -> (RuntimeHooks, Vec<String>) {
        let entry = {
            let mut clusters = self
                .clusters
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            clusters
                .entry(name.to_string())
                .or_insert_with(|| {
                    Arc::new(Entry {
                        client: Arc::new(Client::new()),
                        blocking: Mutex::new(None),
                        state: tokio::sync::Mutex::new(State::default()),
                    })
                })
                .clone()
        };
        let (configs, changed) = {
            let mut state = entry.state.lock().await;
            let due = now
                || state
                    .refreshed
                    .is_none_or(|at| at.elapsed() >= self.refresh_every);
            if due {
                match refresh(api, &entry.client, &mut state).await {
                    Ok(names) => state.unreported.extend(names),
                    Err(e) => {
                        tracing::warn!(management_cluster = name, error = %e, "ExtensionConfigs not read")
                    }
                }
                state.refreshed = Some(Instant::now());
            }
            let changed = if now {
                std::mem::take(&mut state.unreported).into_iter().collect()
            } else {
                Vec::new()
            };
            (state.configs.clone(), changed)
        };
        let hooks = RuntimeHooks {
            entry,
            configs,
            api: api.clone(),
            namespaces: Arc::default(),
        };
        (hooks, changed)
    }
}

/// Reads the ExtensionConfigs, discovers new and changed ones, writes their status and
/// keeps the registry to what discovered; returns the names of those it discovered
/// again or dropped.
async fn refresh(
    api: &ManagementCluster,
    client: &Client,
    state: &mut State,
) -> Result<Vec<String>, String> {
    if !api
        .serves(API_VERSION, KIND)
        .await
        .map_err(|e| e.to_string())?
    {
        return Ok(Vec::new());
    }
    let mut changed = Vec::new();
    let objects = api
        .list(API_VERSION, KIND, "", &[])
        .await
        .map_err(|e| e.to_string())?;
    let mut present = BTreeMap::new();
    for mut object in objects {
        let name = object.name().to_string();
        match inject_ca(api, &object).await {
            Ok(Some(patched)) => object = patched,
            Ok(None) => {}
            Err(e) => {
                // Cluster API fails this ExtensionConfig's reconcile before discovery:
                // what was registered stays as it was.
                tracing::warn!(extension_config = %name, error = %e, "caBundle not injected");
                if let Some(seen) = state.seen.get(&name).cloned() {
                    present.insert(name, seen);
                }
                continue;
            }
        }
        let version = (
            object
                .at(&["metadata", "uid"])
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            object
                .at(&["metadata", "generation"])
                .and_then(Value::as_i64)
                .unwrap_or_default(),
        );
        present.insert(name.clone(), version.clone());
        if state.seen.get(&name) == Some(&version) {
            continue;
        }
        state.seen.insert(name.clone(), version.clone());
        changed.push(name.clone());
        match discover(api, client, &object, version.1).await {
            Some(config) => state.discovered.insert(name.clone(), config),
            None => state.discovered.remove(&name),
        };
    }
    let gone: Vec<String> = state
        .seen
        .keys()
        .filter(|name| !present.contains_key(*name))
        .cloned()
        .collect();
    for name in gone {
        state.seen.remove(&name);
        state.discovered.remove(&name);
        client.registry_mut(|r| r.remove(&name));
        changed.push(name);
    }
    if state.configs.len() != state.discovered.len()
        || state.configs.iter().ne(state.discovered.values())
    {
        state.configs = Arc::new(state.discovered.values().cloned().collect());
    }
    Ok(changed)
}

/// Names the Secret (`<namespace>/<name>`) whose `ca.crt` becomes the ExtensionConfig's
/// `caBundle`, as cert-manager's CA injector does for webhooks.
pub const INJECT_CA_FROM_SECRET_ANNOTATION: &str = "runtime.cluster.x-k8s.io/inject-ca-from-secret";

/// Copies the CA of the Secret the annotation names into `spec.clientConfig.caBundle`
/// when it differs; returns the object as written then.
async fn inject_ca(api: &ManagementCluster, object: &Value) -> Result<Option<Value>, String> {
    let Some(raw) = object
        .annotations()
        .get(INJECT_CA_FROM_SECRET_ANNOTATION)
        .cloned()
    else {
        return Ok(None);
    };
    let (namespace, name) = raw.split_once('/').unwrap_or(("", raw.as_str()));
    if namespace.is_empty() || name.is_empty() {
        return Err(format!(
            "failed to reconcile caBundle: secret name {raw:?} must be in the form <namespace>/<name>"
        ));
    }
    let secret = api
        .get("v1", "Secret", namespace, name)
        .await
        .map_err(|e| format!("failed to reconcile caBundle: failed to get secret {raw:?}: {e}"))?
        .ok_or_else(|| {
            format!(
                "failed to reconcile caBundle: failed to get secret {raw:?}: secrets {name:?} not found"
            )
        })?;
    let Some(ca) = secret.at(&["data", "ca.crt"]).and_then(Value::as_str) else {
        return Err(format!(
            "failed to reconcile caBundle: secret {raw} does not contain a \"ca.crt\" entry"
        ));
    };
    if object
        .at(&["spec", "clientConfig", "caBundle"])
        .and_then(Value::as_str)
        == Some(ca)
    {
        return Ok(None);
    }
    api.merge_patch(object, &json!({"spec": {"clientConfig": {"caBundle": ca}}}))
        .await
        .map(Some)
        .map_err(|e| format!("failed to reconcile caBundle: {e}"))
}

/// Discovers one ExtensionConfig, registers what it offers (or unregisters it when
/// discovery fails) and writes its status; returns the config as registered (JSON),
/// `None` when nothing is.
async fn discover(
    api: &ManagementCluster,
    client: &Client,
    object: &Value,
    generation: i64,
) -> Option<Value> {
    let name = object.name().to_string();
    let config: Result<ExtensionConfig, String> =
        serde_json::from_value(object.clone()).map_err(|e| format!("cannot be read: {e}"));
    let discovered = match config {
        Ok(config) => client.discover(&config).await.map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    let mut status = object
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut registered = None;
    let condition = match &discovered {
        Ok(config) => {
            let added = client.registry_mut(|r| {
                r.remove(&name);
                r.add(config)
            });
            match added {
                Ok(()) => registered = serde_json::to_value(config).ok(),
                Err(e) => {
                    tracing::warn!(extension_config = %name, error = %e, "handlers not registered");
                }
            }
            let handlers = serde_json::to_value(&config.status.handlers).unwrap_or(json!([]));
            status.insert("handlers".into(), handlers);
            Condition::ok("Discovered", "Discovered")
        }
        Err(e) => {
            client.registry_mut(|r| r.remove(&name));
            tracing::warn!(extension_config = %name, error = %e, "discovery failed");
            Condition::not_ok(
                "Discovered",
                "NotDiscovered",
                "DiscoveryFailed",
                format!("Error in discovery: {e}"),
            )
            .with_severity("Error")
        }
    };
    conditions::set(&mut status, &condition, generation);
    if let Some(patch) = conditions::status_patch(object.get("status"), &status)
        && let Err(e) = api.merge_patch_status(object, &patch).await
    {
        tracing::warn!(extension_config = %name, error = %e, "status not written");
    }
    registered
}

/// The lifecycle hooks of one management cluster, answered by its extensions.
#[derive(Clone)]
pub struct RuntimeHooks {
    entry: Arc<Entry>,
    /// The registered ExtensionConfigs when these hooks were handed out.
    configs: Arc<Vec<Value>>,
    api: ManagementCluster,
    /// Namespaces' labels read by these hooks: handed out per reconcile, they read each
    /// namespace once however many hooks that reconcile asks.
    namespaces: Arc<Mutex<BTreeMap<String, BTreeMap<String, String>>>>,
}

impl RuntimeHooks {
    /// Records the labels of the Cluster's namespace for the handlers' namespace
    /// selectors, as Cluster API's client reads them.
    async fn namespace_labels(&self, cluster: &Value) -> Result<(), HookError> {
        self.record_namespace(cluster.namespace()).await.map(drop)
    }

    /// Reads `namespace`'s labels into the registry and returns them.
    async fn record_namespace(
        &self,
        namespace: &str,
    ) -> Result<BTreeMap<String, String>, HookError> {
        let read = self
            .namespaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(namespace)
            .cloned();
        if let Some(labels) = read {
            return Ok(labels);
        }
        let labels = topograph_reconcile::hooks::namespace_labels(&self.api, namespace).await?;
        self.entry
            .client
            .registry_mut(|r| r.set_namespace(namespace, labels.clone()));
        self.namespaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(namespace.to_string(), labels.clone());
        Ok(labels)
    }

    async fn call_typed<R: HookRequest + DeserializeOwned>(
        &self,
        cluster: &Value,
        fields: Map<String, Value>,
    ) -> Result<HookAnswer, HookError>
    where
        R::Response: HookResponse,
    {
        let request: R = serde_json::from_value(Value::Object(fields))
            .map_err(|e| HookError(format!("{} request: {e}", R::HOOK.name())))?;
        let response = self
            .entry
            .client
            .call_all_extensions(cluster.namespace(), cluster.name(), &request)
            .await
            .map_err(|e| HookError(e.to_string()))?;
        Ok(HookAnswer {
            retry_after_seconds: u32::try_from(response.retry_after_seconds().unwrap_or(0))
                .unwrap_or(0),
            message: response.common().message.clone(),
        })
    }
}

impl LifecycleHooks for RuntimeHooks {
    fn enabled(&self) -> bool {
        self.entry.client.registry(|r| r.all().next().is_some())
    }

    fn render_extensions<'a>(
        &'a self,
        namespaces: &'a [String],
    ) -> BoxFuture<'a, Result<Option<RenderExtensions>, HookError>> {
        Box::pin(async move {
            if !self.enabled() {
                return Ok(None);
            }
            let mut labels = BTreeMap::new();
            for namespace in namespaces {
                labels.insert(namespace.clone(), self.record_namespace(namespace).await?);
            }
            Ok(Some(RenderExtensions {
                extensions: self.entry.blocking()?,
                configs: self.configs.clone(),
                namespaces: labels,
            }))
        })
    }

    fn registered<'a>(
        &'a self,
        hook: Hook,
        cluster: &'a Value,
    ) -> BoxFuture<'a, Result<bool, HookError>> {
        Box::pin(async move {
            if self.entry.client.registry(|r| r.list(hook).is_empty()) {
                return Ok(false);
            }
            self.namespace_labels(cluster).await?;
            let namespace = cluster.namespace();
            self.entry.client.registry(|r| {
                r.list(hook)
                    .into_iter()
                    .map(|registration| r.namespace_matches(registration, namespace))
                    .try_fold(false, |any, matches| Ok(any || matches?))
                    .map_err(HookError)
            })
        })
    }

    fn call<'a>(
        &'a self,
        hook: Hook,
        cluster: &'a Value,
        fields: Map<String, Value>,
    ) -> BoxFuture<'a, Result<HookAnswer, HookError>> {
        Box::pin(async move {
            self.namespace_labels(cluster).await?;
            match hook {
                Hook::BeforeClusterCreate => {
                    self.call_typed::<wire::BeforeClusterCreateRequest>(cluster, fields)
                        .await
                }
                Hook::AfterControlPlaneInitialized => {
                    self.call_typed::<wire::AfterControlPlaneInitializedRequest>(cluster, fields)
                        .await
                }
                Hook::BeforeClusterUpgrade => {
                    self.call_typed::<wire::BeforeClusterUpgradeRequest>(cluster, fields)
                        .await
                }
                Hook::BeforeControlPlaneUpgrade => {
                    self.call_typed::<wire::BeforeControlPlaneUpgradeRequest>(cluster, fields)
                        .await
                }
                Hook::AfterControlPlaneUpgrade => {
                    self.call_typed::<wire::AfterControlPlaneUpgradeRequest>(cluster, fields)
                        .await
                }
                Hook::BeforeWorkersUpgrade => {
                    self.call_typed::<wire::BeforeWorkersUpgradeRequest>(cluster, fields)
                        .await
                }
                Hook::AfterWorkersUpgrade => {
                    self.call_typed::<wire::AfterWorkersUpgradeRequest>(cluster, fields)
                        .await
                }
                Hook::AfterClusterUpgrade => {
                    self.call_typed::<wire::AfterClusterUpgradeRequest>(cluster, fields)
                        .await
                }
                Hook::BeforeClusterDelete => {
                    self.call_typed::<wire::BeforeClusterDeleteRequest>(cluster, fields)
                        .await
                }
                other => Err(HookError(format!(
                    "{} is not a lifecycle hook",
                    other.name()
                ))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

    /// The example extension served in process over HTTPS; its URL and CA.
    async fn extension() -> (String, String) {
        let generated = topograph_runtime::tls::generate(&["127.0.0.1"]).unwrap();
        let tls = topograph_runtime::tls::server_config(
            generated.cert_pem.as_bytes(),
            generated.key_pem.as_bytes(),
        )
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let extension = topograph_example_extension::Extension {
            lifecycle: topograph_example_extension::Lifecycle { responses: None },
            calls_log: None,
        };
        tokio::spawn(topograph_runtime::server::serve(
            listener,
            Arc::new(tls),
            Arc::new(extension),
        ));
        (format!("https://{addr}"), generated.ca_pem)
    }

    async fn management_cluster() -> (topograph_kube::RunningServer, ManagementCluster) {
        let server = topograph_kube::Server::start(topograph_kube::Config {
            seed: topograph_management::crds::cluster_api(),
            ..topograph_kube::Config::default()
        })
        .await
        .unwrap();
        let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
            .await
            .unwrap();
        for ns in ["certs"] {
            api.create(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
                .await
                .unwrap();
        }
        (server, api)
    }

    fn config(name: &str, url: &str, ca: Option<&str>, annotations: Value) -> Value {
        let mut client_config = json!({"url": url});
        if let Some(ca) = ca {
            client_config["caBundle"] = json!(B64.encode(ca));
        }
        json!({
            "apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"clientConfig": client_config}
        })
    }

    async fn read(api: &ManagementCluster, name: &str) -> Value {
        api.get(API_VERSION, KIND, "", name).await.unwrap().unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn extension_configs_are_discovered_with_their_status_and_answer_hooks() {
        let (_server, api) = management_cluster().await;
        let (url, ca) = extension().await;
        let cluster = json!({"metadata": {"name": "c", "namespace": "default"}});
        let extensions = RuntimeExtensions::new(Duration::ZERO);

        // Without ExtensionConfigs Runtime SDK stays off.
        let hooks = extensions.hooks("mc", &api).await;
        assert!(!hooks.enabled());

        // One discovered with its CA, one whose CA comes from a Secret, one whose
        // CA did not sign the extension's certificate.
        let other_ca = topograph_runtime::tls::generate(&["127.0.0.1"])
            .unwrap()
            .ca_pem;
        api.create(&json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "ext-ca", "namespace": "certs"},
            "data": {"ca.crt": B64.encode(&ca)}}))
            .await
            .unwrap();
        for object in [
            config("direct", &url, Some(&ca), json!({})),
            config(
                "injected",
                &url,
                None,
                json!({INJECT_CA_FROM_SECRET_ANNOTATION: "certs/ext-ca"}),
            ),
            config("untrusted", &url, Some(&other_ca), json!({})),
        ] {
            api.create(&object).await.unwrap();
        }
        let hooks = extensions.hooks("mc", &api).await;
        assert!(hooks.enabled());

        let direct = read(&api, "direct").await;
        let handlers: Vec<&str> = direct["status"]["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|h| h["name"].as_str())
            .collect();
        assert!(
            handlers.contains(&"before-cluster-create.direct"),
            "{handlers:?}"
        );
        assert!(
            handlers.contains(&"generate-patches.direct"),
            "{handlers:?}"
        );
        assert_eq!(direct["status"]["conditions"][0]["status"], "True");
        assert_eq!(
            direct["status"]["v1beta2"]["conditions"][0]["reason"],
            "Discovered"
        );

        let injected = read(&api, "injected").await;
        assert_eq!(
            injected["spec"]["clientConfig"]["caBundle"],
            json!(B64.encode(&ca))
        );
        assert_eq!(injected["status"]["conditions"][0]["status"], "True");

        let untrusted = read(&api, "untrusted").await;
        let condition = &untrusted["status"]["v1beta2"]["conditions"][0];
        assert_eq!(condition["status"], "False");
        assert_eq!(condition["reason"], "NotDiscovered");
        assert!(
            condition["message"]
                .as_str()
                .unwrap()
                .starts_with("Error in discovery: "),
            "{condition}"
        );
        assert_eq!(
            untrusted["status"]["conditions"][0]["reason"],
            "DiscoveryFailed"
        );

        // The hooks answer through the discovered handlers.
        assert!(
            hooks
                .registered(Hook::BeforeClusterCreate, &cluster)
                .await
                .unwrap()
        );
        let answer = hooks
            .call(
                Hook::BeforeClusterCreate,
                &cluster,
                Map::from_iter([("cluster".to_string(), cluster.clone())]),
            )
            .await
            .unwrap();
        assert_eq!(answer.retry_after_seconds, 0);

        // A deleted ExtensionConfig takes its handlers with it.
        for name in ["direct", "injected", "untrusted"] {
            api.delete(&read(&api, name).await).await.unwrap();
        }
        assert_eq!(
            api.list(API_VERSION, KIND, "", &[]).await.unwrap(),
            Vec::<Value>::new()
        );
        let hooks = extensions.hooks("mc", &api).await;
        let left: Vec<String> = hooks.entry.client.registry(|r| {
            r.all()
                .map(|x| format!("{} of {}", x.name, x.extension_config_name))
                .collect()
        });
        assert!(left.is_empty(), "{left:?}");
    }

    #[tokio::test]
    async fn a_secret_without_a_ca_leaves_the_config_undiscovered() {
        let (_server, api) = management_cluster().await;
        api.create(&json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "empty", "namespace": "certs"}, "data": {}}))
            .await
            .unwrap();
        let object = config(
            "needs-ca",
            "https://127.0.0.1:1",
            None,
            json!({INJECT_CA_FROM_SECRET_ANNOTATION: "certs/empty"}),
        );
        let created = api.create(&object).await.unwrap();
        let err = inject_ca(&api, &created).await.unwrap_err();
        assert_eq!(
            err,
            "failed to reconcile caBundle: secret certs/empty does not contain a \"ca.crt\" entry"
        );
        let bad = config(
            "bad-name",
            "https://127.0.0.1:1",
            None,
            json!({INJECT_CA_FROM_SECRET_ANNOTATION: "no-namespace"}),
        );
        assert_eq!(
            inject_ca(&api, &bad).await.unwrap_err(),
            "failed to reconcile caBundle: secret name \"no-namespace\" must be in the form <namespace>/<name>"
        );
        let extensions = RuntimeExtensions::new(Duration::ZERO);
        assert!(!extensions.hooks("mc", &api).await.enabled());
        assert!(read(&api, "needs-ca").await["status"]["handlers"].is_null());
    }
}
