//! Runtime SDK in the gateway: whether a management cluster uses it, and the
//! extensions a Plan or Impact renders with.
//!
//! The gateway does not discover extensions: the appliers do, and record what each
//! ExtensionConfig offers in its `status.handlers`. The gateway registers those
//! handlers as they stand, the way the render service registers the configs a request
//! carries, so a plan of a class with external patches calls the same handlers a
//! reconcile would.
//!
//! Runtime SDK is on for a management cluster, as far as admission goes, once it has
//! an ExtensionConfig: the ClusterClass webhook then admits external patches (Cluster
//! API's RuntimeSDK feature gate), and the class's status says whether its extensions
//! answered. Lifecycle hooks are off in a plan: a hook's answer is a decision with side
//! effects on the extension's side, which a dry run must not cause; the plan shows the
//! topology as if no hook held it. The ExtensionConfigs are read only when a render of
//! the plan needs extensions.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use topograph_api::object::ObjectExt;
use topograph_engine::service::RenderExtensions;
use topograph_management::ManagementCluster;
use topograph_reconcile::ReconcileError;
use topograph_reconcile::hooks::{BoxFuture, Hook, HookAnswer, HookError, LifecycleHooks, NoHooks};
use topograph_runtime::blocking::BlockingClient;
use topograph_runtime::client::Client;
use topograph_runtime::config::ExtensionConfig;

const API_VERSION: &str = "runtime.cluster.x-k8s.io/v1alpha1";
const KIND: &str = "ExtensionConfig";

/// The ExtensionConfigs of each management cluster, as the gateway last registered them.
#[derive(Default)]
pub struct RuntimeSdk {
    /// Management cluster → the configs' fingerprint and the client registered from
    /// them: a client is rebuilt only when an ExtensionConfig changes.
    clients: Mutex<HashMap<String, Registered>>,
}

/// A client registered from a management cluster's ExtensionConfigs: their names and
/// resourceVersions, the client, and the configs as registered.
type Registered = (Vec<(String, String)>, Arc<Client>, Arc<Vec<Value>>);

/// A registered client and the configs registered in it.
type Registration = (Arc<Client>, Arc<Vec<Value>>);

/// The ExtensionConfigs of `api`; none when it does not serve the kind.
async fn extension_configs(api: &ManagementCluster) -> Result<Vec<Value>, ReconcileError> {
    Ok(if api.serves(API_VERSION, KIND).await? {
        api.list(API_VERSION, KIND, "", &[]).await?
    } else {
        Vec::new()
    })
}

impl RuntimeSdk {
    /// Whether management cluster `api` uses Runtime SDK: it has an ExtensionConfig
    /// (the ClusterClass webhook admits external patches then).
    pub async fn on(api: &ManagementCluster) -> Result<bool, ReconcileError> {
        Ok(!extension_configs(api).await?.is_empty())
    }

    /// The hooks a plan of management cluster `name` reconciles with. Its
    /// ExtensionConfigs are read only if a render asks for extensions (a class with
    /// external patches), and then once for all the plan's renders.
    pub fn plan_hooks(self: &Arc<Self>, name: &str, api: &Arc<ManagementCluster>) -> PlanHooks {
        PlanHooks {
            sdk: self.clone(),
            management_cluster: name.to_string(),
            api: api.clone(),
            registered: Arc::default(),
        }
    }

    /// The client registered from the handlers the appliers recorded in the
    /// ExtensionConfigs' status, and the configs registered.
    async fn registered(
        &self,
        name: &str,
        api: &ManagementCluster,
    ) -> Result<Registration, ReconcileError> {
        let discovered: Vec<Value> = extension_configs(api)
            .await?
            .into_iter()
            .filter(|o| {
                o.at(&["status", "handlers"])
                    .and_then(Value::as_array)
                    .is_some_and(|h| !h.is_empty())
            })
            .collect();
        let fingerprint: Vec<(String, String)> = discovered
            .iter()
            .map(|o| {
                let version = o
                    .at(&["metadata", "resourceVersion"])
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                (o.name().to_string(), version.to_string())
            })
            .collect();
        let cached = self
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .filter(|(f, _, _)| *f == fingerprint)
            .map(|(_, client, configs)| (client.clone(), configs.clone()));
        if let Some(hit) = cached {
            return Ok(hit);
        }
        let client = Arc::new(Client::new());
        let mut registered = Vec::new();
        for object in discovered {
            let config = serde_json::from_value::<ExtensionConfig>(object.clone())
                .map_err(|e| e.to_string())
                .and_then(|c| client.register(&c).map_err(|e| e.to_string()));
            match config {
                Ok(()) => registered.push(object),
                // The appliers report it in the ExtensionConfig's status; here it is
                // one extension less, as it is for them.
                Err(e) => {
                    tracing::warn!(extension_config = %object.name(), error = %e, "not registered")
                }
            }
        }
        let configs = Arc::new(registered);
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                name.to_string(),
                (fingerprint, client.clone(), configs.clone()),
            );
        Ok((client, configs))
    }
}

/// Lifecycle hooks for a plan: the management cluster's extensions render (external
/// patches, ValidateTopology, DiscoverVariables, GenerateUpgradePlan); lifecycle hooks
/// are off, as with Runtime SDK off, so the plan neither calls them nor records them
/// pending.
#[derive(Clone)]
pub struct PlanHooks {
    sdk: Arc<RuntimeSdk>,
    management_cluster: String,
    api: Arc<ManagementCluster>,
    /// The registration, read on the first render that needs it.
    registered: Arc<tokio::sync::OnceCell<Registration>>,
}

impl LifecycleHooks for PlanHooks {
    fn enabled(&self) -> bool {
        false
    }

    fn registered<'a>(
        &'a self,
        hook: Hook,
        cluster: &'a Value,
    ) -> BoxFuture<'a, Result<bool, HookError>> {
        NoHooks.registered(hook, cluster)
    }

    fn call<'a>(
        &'a self,
        hook: Hook,
        cluster: &'a Value,
        fields: Map<String, Value>,
    ) -> BoxFuture<'a, Result<HookAnswer, HookError>> {
        NoHooks.call(hook, cluster, fields)
    }

    fn render_extensions<'a>(
        &'a self,
        namespaces: &'a [String],
    ) -> BoxFuture<'a, Result<Option<RenderExtensions>, HookError>> {
        Box::pin(async move {
            let (client, configs) = self
                .registered
                .get_or_try_init(|| self.sdk.registered(&self.management_cluster, &self.api))
                .await
                .map_err(|e| HookError(format!("reading the ExtensionConfigs: {e}")))?;
            if configs.is_empty() {
                return Ok(None);
            }
            let mut labels = BTreeMap::new();
            for namespace in namespaces {
                let found =
                    topograph_reconcile::hooks::namespace_labels(&self.api, namespace).await?;
                client.registry_mut(|r| r.set_namespace(namespace, found.clone()));
                labels.insert(namespace.clone(), found);
            }
            // Calls run on the gateway's runtime; the engine waits for them off the
            // async workers (`BlockingClient::block_on`).
            let handle = tokio::runtime::Handle::try_current()
                .map_err(|e| HookError(format!("no runtime for the Runtime SDK client: {e}")))?;
            Ok(Some(RenderExtensions {
                extensions: Arc::new(BlockingClient::on(client.clone(), handle)),
                configs: configs.clone(),
                namespaces: labels,
            }))
        })
    }
}
