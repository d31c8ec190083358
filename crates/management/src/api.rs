//! The applier's only door to a management cluster's API server.
//!
//! Objects of every kind stay `serde_json::Value`s, as the engine uses them: provider
//! kinds are not known in advance. Kinds are found through discovery and cached: a
//! served kind for the life of the process, a kind the server does not serve only for
//! a short while ([`UNSERVED_KIND_EXPIRY`]), so a CRD installed later becomes visible
//! to a long-running applier or gateway without a restart. Every mutating request is
//! counted, so a reconcile can report exactly how many writes it made (the contract of
//! `topograph reconcile -o json`). Where writes land is chosen when the client is made:
//! the API server, or for a dry run an in-memory overlay (`Writer`, live or dry-run);
//! resolving and counting are the same for both.

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use kube::api::{
    Api, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::{self, ApiCapabilities, ApiResource, Scope};
use kube::{Client, Config};
use serde_json::Value;
use topograph_api::object::{GroupVersion, ObjectExt, ObjectKey, group_of};
use topograph_api::server::{NAME_REQUIRED, Refused, Sub};
use topograph_ssa::schema::Schema;

use crate::class_cache::{Cached, ClassCache, Keep};
use crate::dry_run::{Overlay, Refusal, Touched};
use crate::error::{Error, is_not_found};
use crate::owned_cache::OwnedCache;

/// How many mutating requests were made, by verb.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteCounts {
    /// POSTs.
    pub create: u64,
    /// PUTs (including `/status`).
    pub update: u64,
    /// PATCHes (including `/status`).
    pub patch: u64,
    /// DELETEs.
    pub delete: u64,
}

impl WriteCounts {
    /// All writes.
    pub fn total(&self) -> u64 {
        self.create + self.update + self.patch + self.delete
    }
}

#[derive(Default)]
struct Counters {
    create: AtomicU64,
    update: AtomicU64,
    patch: AtomicU64,
    delete: AtomicU64,
}

type Resolved = Option<(ApiResource, bool)>;

/// Longest a request waits for the next bytes from a management cluster.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// How long "the server does not serve this kind" is believed before discovery is asked
/// again. Short, because installing a provider's CRDs into a running management cluster
/// is ordinary; long enough that reconciles reading a missing kind (e.g. no Machine CRD)
/// do not send a discovery request each time.
pub const UNSERVED_KIND_EXPIRY: Duration = Duration::from_secs(30);

/// A discovery answer and when it was obtained (to expire negative answers).
#[derive(Clone)]
struct CachedKind {
    resolved: Resolved,
    at: Instant,
}

/// Told of every write sent to an API server: the object's kind and the verb
/// (`create`, `update`, `patch`, `delete`). Metrics count writes by kind through it.
pub type WriteObserver = Arc<dyn Fn(&str, &'static str) + Send + Sync>;

/// A management cluster, reached through kube-rs. Clones share the client and the
/// discovery cache; [`ManagementCluster::counting_apart`] gives a clone with counters of
/// its own, so concurrent reconciles each report their own writes.
#[derive(Clone)]
pub struct ManagementCluster {
    // Requests: a read that waits longer than `REQUEST_TIMEOUT` for the server fails,
    // so a management cluster that accepts connections but stops answering costs a
    // worker seconds, not the whole reconcile timeout.
    client: Client,
    // Watches: long-lived streams that may be quiet for minutes, so no read timeout.
    watch_client: Client,
    // (apiVersion, kind) -> resource and whether it is namespaced; `None` when the
    // server does not serve the kind (e.g. no Machine CRD installed), believed for
    // `unserved_expiry` only. A served kind stays cached: kinds are rarely removed,
    // and a removed one fails the requests that use it anyway.
    resources: Arc<Mutex<HashMap<(String, String), CachedKind>>>,
    unserved_expiry: Duration,
    writes: Arc<Counters>,
    // Where writes land: the API server, or a dry run's overlay (which reads then see).
    writer: Arc<dyn Writer>,
    observer: Option<WriteObserver>,
    // The field manager of server-side applies.
    field_manager: Arc<str>,
    // (apiVersion, kind) -> the structural schema its CRD declares, for predicting
    // applies without asking the server.
    schemas: Arc<Mutex<Schemas>>,
    // (group, kind) -> the contracts its CRD declares (`crate::contracts`).
    pub(crate) contracts: crate::contracts::SharedContracts,
    // The server's URL, to name it in errors about the server itself.
    server: Arc<str>,
    // The version of Cluster API's group the server prefers (see `crate::versions`).
    preferred: Arc<Mutex<Option<crate::versions::Preferred>>>,
    // The apiVersion of group-only references' kinds (see `crate::versions`).
    ref_versions: Arc<Mutex<crate::versions::RefVersions>>,
    // Event writes sent without waiting for their answer, until `settle`.
    detached: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    // What Events were recorded, shared by every clone but a dry run's
    // (`crate::event_correlator`).
    events: Arc<crate::event_correlator::Correlator>,
    // Class-level objects kept by watches (`crate::class_cache`); `None` reads them live.
    class_cache: Option<Arc<ClassCache>>,
    // A Cluster's own objects kept by watches while this process holds the management
    // cluster's watch lease (`crate::owned_cache`); `None` reads them live.
    owned_cache: Option<Arc<OwnedCache>>,
    // Applies found to change nothing (`crate::no_change`), shared by every clone.
    no_change: Arc<crate::no_change::NoChange>,
}

/// What a server-side apply would do ([`ManagementCluster::predict_apply`]).
#[derive(Clone, Debug)]
pub struct Prediction {
    /// The object as the apply would leave it (the current one when unchanged).
    pub object: Value,
    /// Whether the object or its ownership (times aside) would change.
    pub changed: bool,
    /// Fields other managers own that the forced apply would take from them.
    pub overridden: topograph_ssa::Conflicts,
}

/// Structural schemas by (apiVersion, kind).
type Schemas = HashMap<(String, String), Arc<Schema>>;

/// The field manager server-side applies use unless told otherwise.
pub const DEFAULT_FIELD_MANAGER: &str = "topograph";

impl ManagementCluster {
    /// Wraps a client (used for requests and watches alike).
    pub fn new(client: Client) -> Self {
        ManagementCluster {
            watch_client: client.clone(),
            client,
            resources: Arc::default(),
            unserved_expiry: UNSERVED_KIND_EXPIRY,
            writes: Arc::default(),
            writer: Arc::new(Live),
            observer: None,
            field_manager: Arc::from(crate::user_agent::field_manager()),
            schemas: Arc::default(),
            contracts: Arc::default(),
            server: Arc::from("(in process)"),
            preferred: Arc::default(),
            ref_versions: Arc::default(),
            detached: Arc::default(),
            events: Arc::default(),
            class_cache: None,
            owned_cache: None,
            no_change: Arc::default(),
        }
    }

    /// The same management cluster, reading class-level objects
    /// ([`ManagementCluster::get_class_level`]) from caches its watches keep: for a
    /// long-running process reconciling many Clusters of few classes (the applier).
    pub fn with_class_cache(&self) -> Self {
        ManagementCluster {
            class_cache: Some(Arc::default()),
            ..self.clone()
        }
    }

    /// The same management cluster, reading a Cluster's own objects
    /// ([`ManagementCluster::get_owned`], [`ManagementCluster::list_owned`]) from
    /// caches its watches keep while [`OwnedCache::hold`] holds them: for the process
    /// that watches the management cluster (the applier holding its watch lease).
    pub fn with_owned_cache(&self) -> Self {
        ManagementCluster {
            owned_cache: Some(Arc::default()),
            ..self.clone()
        }
    }

    /// The cache of a Cluster's own objects, when this client has one (held or not).
    pub fn owned_cache(&self) -> Option<&OwnedCache> {
        self.owned_cache.as_deref()
    }

    /// The owned-object cache to read from and fence: held, and this is no dry run
    /// (whose overlay must come first).
    fn owned_cache_in_use(&self) -> Option<&OwnedCache> {
        self.owned_cache
            .as_deref()
            .filter(|cache| cache.is_held() && !self.is_dry_run())
    }

    /// Tells the owned-object cache of a write's answer: reads of the object wait for
    /// its watch to deliver that version.
    fn fence_written(&self, answer: &Value) {
        if let Some(cache) = self.owned_cache_in_use() {
            cache.fence(
                group_of(answer.api_version()),
                answer.kind(),
                answer.namespace(),
                answer.name(),
                &crate::owned_cache::cluster_of(answer),
                answer
                    .at(&["metadata", "resourceVersion"])
                    .and_then(Value::as_str),
            );
        }
    }

    /// The same management cluster, writing server-side applies as `manager` (Cluster
    /// API's topology controller is `capi-topology`: using its name takes over what it
    /// managed, ownership intact).
    pub fn with_field_manager(&self, manager: &str) -> Self {
        ManagementCluster {
            field_manager: Arc::from(manager),
            ..self.clone()
        }
    }

    /// The field manager of this client's server-side applies.
    pub fn field_manager(&self) -> &str {
        &self.field_manager
    }

    /// The same management cluster, asking discovery again about a kind it found
    /// unserved once `expiry` has passed (default [`UNSERVED_KIND_EXPIRY`]).
    pub fn with_unserved_kind_expiry(&self, expiry: Duration) -> Self {
        ManagementCluster {
            unserved_expiry: expiry,
            ..self.clone()
        }
    }

    /// The same management cluster, counting writes apart from every other clone (and
    /// settling its own detached creates).
    pub fn counting_apart(&self) -> Self {
        ManagementCluster {
            writes: Arc::default(),
            detached: Arc::default(),
            ..self.clone()
        }
    }

    /// A client of the same management cluster whose writes are kept in memory and
    /// never sent; its reads see the live objects with those writes on top
    /// ([`crate::dry_run`]). Writes are counted apart.
    pub fn dry_run(&self) -> Self {
        ManagementCluster {
            writes: Arc::default(),
            writer: Arc::new(DryRun::default()),
            observer: None,
            detached: Arc::default(),
            events: Arc::default(),
            ..self.clone()
        }
    }

    /// The same management cluster, telling `observer` of every write it sends.
    pub fn with_write_observer(&self, observer: WriteObserver) -> Self {
        ManagementCluster {
            observer: Some(observer),
            ..self.clone()
        }
    }

    /// Counts a write about to be made, and tells the observer of one about to be sent.
    fn count(&self, counter: &AtomicU64, kind: &str, verb: &'static str) {
        counter.fetch_add(1, Ordering::Relaxed);
        // The observer feeds metrics of writes sent; a dry run sends none.
        if !self.is_dry_run()
            && let Some(observer) = &self.observer
        {
            observer(kind, verb);
        }
    }

    /// Whether writes land in a dry run's overlay instead of the API server.
    fn is_dry_run(&self) -> bool {
        self.writer.overlay().is_some()
    }

    /// What a dry-run client wrote, in the order first written (empty for a live one).
    pub fn dry_run_writes(&self) -> Vec<Touched> {
        self.writer
            .overlay()
            .and_then(|o| o.lock().ok().map(|o| o.touched()))
            .unwrap_or_default()
    }

    /// Connects with the current context of a kubeconfig file.
    pub async fn from_kubeconfig(path: &Path) -> Result<Self, Error> {
        let kubeconfig = Kubeconfig::read_from(path)
            .map_err(|e| Error::invalid(format!("reading kubeconfig {}: {e}", path.display())))?;
        Self::from_kubeconfig_value(kubeconfig, REQUEST_TIMEOUT).await
    }

    /// Connects with the current context of a kubeconfig given as YAML text.
    pub async fn from_kubeconfig_yaml(text: &str) -> Result<Self, Error> {
        Self::from_kubeconfig_yaml_with_request_timeout(text, REQUEST_TIMEOUT).await
    }

    /// [`ManagementCluster::from_kubeconfig_yaml`] with requests waiting at most
    /// `request_timeout` for each read from the server.
    pub async fn from_kubeconfig_yaml_with_request_timeout(
        text: &str,
        request_timeout: Duration,
    ) -> Result<Self, Error> {
        let kubeconfig = Kubeconfig::from_yaml(text)
            .map_err(|e| Error::invalid(format!("reading kubeconfig: {e}")))?;
        Self::from_kubeconfig_value(kubeconfig, request_timeout).await
    }

    /// Connects as a process in a cluster would: the in-cluster service account, else
    /// `$KUBECONFIG` or `~/.kube/config`.
    pub async fn infer() -> Result<Self, Error> {
        let config = Config::infer()
            .await
            .map_err(|e| Error::invalid(format!("no cluster configuration: {e}")))?;
        Self::from_config(config, REQUEST_TIMEOUT)
    }

    async fn from_kubeconfig_value(
        kubeconfig: Kubeconfig,
        request_timeout: Duration,
    ) -> Result<Self, Error> {
        let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|e| Error::invalid(format!("kubeconfig: {e}")))?;
        Self::from_config(config, request_timeout)
    }

    /// A request client with `request_timeout` and a watch client without one.
    fn from_config(mut config: Config, request_timeout: Duration) -> Result<Self, Error> {
        // A management cluster that went away must fail fast, not hold a worker.
        config.connect_timeout = Some(Duration::from_secs(3));
        // API servers log and audit by User-Agent, and name the field manager of a write
        // without one after it: every request says which topograph process sent it.
        if let Ok(agent) = http::HeaderValue::from_str(&crate::user_agent::get()) {
            config.headers.push((http::header::USER_AGENT, agent));
        }
        let watch_client = Client::try_from(config.clone())?;
        config.read_timeout = Some(request_timeout);
        let server = Arc::from(config.cluster_url.to_string());
        let client = Client::try_from(config)?;
        Ok(ManagementCluster {
            watch_client,
            server,
            ..Self::new(client)
        })
    }

    /// The client for requests (reads time out, see [`REQUEST_TIMEOUT`]).
    pub fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn unserved_expiry(&self) -> Duration {
        self.unserved_expiry
    }

    pub(crate) fn preferred_cache(&self) -> MutexGuard<'_, Option<crate::versions::Preferred>> {
        self.preferred.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn ref_versions_cache(&self) -> MutexGuard<'_, crate::versions::RefVersions> {
        self.ref_versions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client for watches and other long-lived streams (no read timeout).
    pub fn watch_client(&self) -> &Client {
        &self.watch_client
    }

    /// Writes made through this value so far.
    pub fn writes(&self) -> WriteCounts {
        WriteCounts {
            create: self.writes.create.load(Ordering::Relaxed),
            update: self.writes.update.load(Ordering::Relaxed),
            patch: self.writes.patch.load(Ordering::Relaxed),
            delete: self.writes.delete.load(Ordering::Relaxed),
        }
    }

    async fn resolve(&self, api_version: &str, kind: &str) -> Result<Resolved, Error> {
        let key = (api_version.to_string(), kind.to_string());
        if let Ok(cache) = self.resources.lock()
            && let Some(found) = cache.get(&key)
            && (found.resolved.is_some() || found.at.elapsed() < self.unserved_expiry)
        {
            return Ok(found.resolved.clone());
        }
        let gv = GroupVersion::parse(api_version).map_err(Error::invalid)?;
        let gvk = GroupVersionKind::gvk(&gv.group, &gv.version, kind);
        let found = match discovery::pinned_kind(&self.client, &gvk).await {
            Ok((resource, ApiCapabilities { scope, .. })) => {
                Some((resource, matches!(scope, Scope::Namespaced)))
            }
            // An unknown group answers 404; a known group without the kind is a
            // discovery error. Both mean: this server does not serve the kind.
            Err(kube::Error::Discovery(_)) => None,
            Err(e) if is_not_found(&e) => None,
            Err(e) => return Err(e.into()),
        };
        if let Ok(mut cache) = self.resources.lock() {
            cache.insert(
                key,
                CachedKind {
                    resolved: found.clone(),
                    at: Instant::now(),
                },
            );
        }
        Ok(found)
    }

    /// The write of `object`, its kind resolved; an unserved kind is an error, as the
    /// server would refuse the write.
    async fn target<'a>(&self, object: &'a Value) -> Result<Target<'a>, Error> {
        let (api_version, kind) = (object.api_version(), object.kind());
        self.target_opt(object).await?.ok_or_else(|| {
            Error::invalid(format!("the server does not serve {kind} in {api_version}"))
        })
    }

    /// The write of `object`, or `None` when its kind is not served.
    async fn target_opt<'a>(&self, object: &'a Value) -> Result<Option<Target<'a>>, Error> {
        let (api_version, kind, namespace) =
            (object.api_version(), object.kind(), object.namespace());
        let resource = self.resource(api_version, kind, namespace).await?;
        let manager = self.field_manager.clone();
        Ok(resource.map(|resource| Target {
            object,
            resource,
            manager,
        }))
    }

    async fn resource(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
    ) -> Result<Option<Resource>, Error> {
        Ok(self
            .resolve(api_version, kind)
            .await?
            .map(|(resource, namespaced)| {
                // No namespace on a namespaced kind: every namespace (lists).
                let api: Api<DynamicObject> = if namespaced && !namespace.is_empty() {
                    Api::namespaced_with(self.client.clone(), namespace, &resource)
                } else {
                    Api::all_with(self.client.clone(), &resource)
                };
                Resource {
                    request: kube::core::Request::new(api.resource_url()),
                    client: self.client.clone(),
                    group: resource.group,
                    plural: resource.plural,
                }
            }))
    }

    /// The kind across all namespaces (for watches), or `None` when it is not served.
    /// `K` is what its objects are read into: a watch may read them into less than a
    /// `DynamicObject`.
    pub async fn api_all<K: kube::Resource<DynamicType = ApiResource>>(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<Option<Api<K>>, Error> {
        Ok(self
            .resolve(api_version, kind)
            .await?
            .map(|(resource, _)| Api::all_with(self.watch_client.clone(), &resource)))
    }

    /// Whether the server serves `kind` in `api_version` (its CRD is installed). A
    /// remembered "no" is checked again with the server first: whoever asks is about to
    /// refuse a request over it, and the CRD may have been installed a moment ago.
    pub async fn serves(&self, api_version: &str, kind: &str) -> Result<bool, Error> {
        let key = (api_version.to_string(), kind.to_string());
        if let Ok(mut cache) = self.resources.lock()
            && cache.get(&key).is_some_and(|k| k.resolved.is_none())
        {
            cache.remove(&key);
        }
        Ok(self.resolve(api_version, kind).await?.is_some())
    }

    /// One object, or `None` when it (or its kind) does not exist.
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, Error> {
        if let Some(overlay) = self.writer.overlay() {
            let key = ObjectKey::new(api_version, kind, namespace, name);
            let known = overlay.lock().ok().and_then(|o| o.get(&key));
            if let Some(known) = known {
                return match known {
                    Some(object) => self.in_version(object, api_version).await.map(Some),
                    None => Ok(None),
                };
            }
        }
        let Some(resource) = self.resource(api_version, kind, namespace).await? else {
            return Ok(None);
        };
        tracing::debug!(target: "topograph_management::reads", verb = "get", kind, namespace, name);
        resource.get_live(name).await
    }

    /// One object that every Cluster of a class reads alike (its ClusterClass, a
    /// template it references, its RolloutPolicy or a revision), from the class cache
    /// when this client has one and the cache knows the answer (see
    /// [`crate::class_cache`] for what `keep` keeps); otherwise as [`ManagementCluster::get`].
    pub async fn get_class_level(
        &self,
        api_version: &str,
        kind: &str,
        keep: Keep,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, Error> {
        if let Some(cache) = &self.class_cache
            && !self.is_dry_run()
        {
            match cache
                .get(self, api_version, kind, keep, namespace, name)
                .await
            {
                Cached::Found(object) => return Ok(Some(object)),
                Cached::Missing => return Ok(None),
                Cached::Unknown => {}
            }
        }
        self.get(api_version, kind, namespace, name).await
    }

    /// One of a Cluster's own objects (the Cluster itself, or an object labelled with
    /// its name), from the owned-object cache when it is held and has reached what this
    /// process knows of the object ([`crate::owned_cache`]); otherwise as
    /// [`ManagementCluster::get`].
    pub async fn get_owned(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, Error> {
        if let Some(cache) = self.owned_cache_in_use()
            && let Some(object) = cache.get(self, api_version, kind, namespace, name).await
        {
            return Ok(Some(object));
        }
        self.get(api_version, kind, namespace, name).await
    }

    /// [`ManagementCluster::list`] of a Cluster's own objects: `labels` name the Cluster
    /// (`cluster.x-k8s.io/cluster-name`). From the owned-object cache when it is held
    /// and has reached what this process knows of that Cluster's objects of the kind.
    pub async fn list_owned(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        labels: &[(&str, &str)],
    ) -> Result<Vec<Value>, Error> {
        let cluster = labels
            .iter()
            .find(|(key, _)| *key == crate::owned_cache::CLUSTER_NAME_LABEL)
            .map(|(_, value)| *value);
        if let (Some(cache), Some(cluster)) = (self.owned_cache_in_use(), cluster)
            && !namespace.is_empty()
            && let Some(objects) = cache
                .list(self, api_version, kind, namespace, cluster, labels)
                .await
        {
            return Ok(objects);
        }
        self.list(api_version, kind, namespace, labels).await
    }

    /// Objects of a kind in a namespace (`""`: in all of them) carrying every given
    /// label (an empty value means the label is present with an empty value). An
    /// unserved kind has none.
    pub async fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        labels: &[(&str, &str)],
    ) -> Result<Vec<Value>, Error> {
        let selector = labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let live = self
            .list_live(api_version, kind, namespace, &selector)
            .await?;
        let listed = match self.writer.overlay() {
            Some(overlay) => match overlay.lock() {
                Ok(overlay) => overlay.list(live, api_version, kind, namespace, labels),
                Err(_) => return Err(Error::invalid("dry run state poisoned")),
            },
            None => return Ok(live),
        };
        // A dry run's own applies are kept in the version they were written in.
        let mut out = Vec::with_capacity(listed.len());
        for object in listed {
            out.push(self.in_version(object, api_version).await?);
        }
        Ok(out)
    }

    /// `object` in `api_version` when it is one of Cluster API's converted kinds in
    /// another version (a dry run's apply in the server's preferred version).
    async fn in_version(&self, object: Value, api_version: &str) -> Result<Value, Error> {
        match topograph_api::convert::Version::of_api_version(api_version) {
            Some(version) if object.api_version() != api_version => {
                self.read_back(&object, version).await
            }
            _ => Ok(object),
        }
    }

    /// Objects of a kind in a namespace (`""`: in all of them) matching a label
    /// selector in Kubernetes syntax (`a=b,!c`, `env in (x,y)`; empty: every object).
    /// The API server evaluates it and refuses a malformed one (400). An unserved kind
    /// has none.
    ///
    /// A dry-run client takes an empty selector only: its own writes must match too,
    /// and it matches them by label pairs ([`ManagementCluster::list`]), not by
    /// selector expressions.
    pub async fn list_selected(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<Value>, Error> {
        if self.is_dry_run() {
            if selector.is_empty() {
                return self.list(api_version, kind, namespace, &[]).await;
            }
            return Err(Error::invalid(format!(
                "a dry run cannot list {kind}s by the label selector {selector:?}; list by label pairs"
            )));
        }
        self.list_live(api_version, kind, namespace, selector).await
    }

    /// What the API server lists (no overlay).
    async fn list_live(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<Value>, Error> {
        let Some(resource) = self.resource(api_version, kind, namespace).await? else {
            return Ok(Vec::new());
        };
        tracing::debug!(target: "topograph_management::reads", verb = "list", kind, namespace, selector);
        let request = resource
            .request
            .list(&ListParams::default().labels(selector));
        match resource
            .send(request, "list")
            .await?
            .get_mut("items")
            .map(Value::take)
        {
            Some(Value::Array(items)) => Ok(items),
            // Go writes an empty list's items as null.
            Some(Value::Null) | None => Ok(Vec::new()),
            Some(other) => Err(Error::invalid(format!(
                "the {} list's items are not an array: {other}",
                resource.plural
            ))),
        }
    }

    /// Creates `object`; returns it as stored.
    #[tracing::instrument(name = "write", skip_all, fields(verb = "create", kind = %object.kind(), namespace = %object.namespace(), name = %object.name(), dry_run = self.is_dry_run()))]
    pub async fn create(&self, object: &Value) -> Result<Value, Error> {
        let renamed = self.with_preferred_owner_refs(object).await?;
        let object = renamed.as_ref().unwrap_or(object);
        let target = self.target(object).await?;
        self.count(&self.writes.create, object.kind(), "create");
        let created = self.writer.create(target).await?;
        self.fence_written(&created);
        Ok(created)
    }

    /// Records an Event as Cluster API's event recorder does: correlated with those
    /// recorded before (`crate::event_correlator`: aggregated, counted, or dropped as
    /// spam), then written without waiting for the answer, so the caller goes on with
    /// its next request. A failure is logged, never returned.
    /// [`ManagementCluster::settle`] waits for every write sent so from this clone.
    pub fn record_event(&self, event: Value) {
        self.record_event_at(event, k8s_openapi::jiff::Timestamp::now());
    }

    /// [`ManagementCluster::record_event`] at `now`.
    pub fn record_event_at(&self, event: Value, now: k8s_openapi::jiff::Timestamp) {
        use tracing::Instrument;
        let Some(write) = self.events.correlate(event, now) else {
            tracing::debug!("an Event dropped: too many about its object");
            return;
        };
        let api = self.clone();
        let send = async move {
            if let Some(before) = write.after {
                // Ended or abandoned alike: this write may go.
                let _ = before.await;
            }
            let written = match &write.patch {
                Some(patch) => match api.merge_patch(&write.event, patch).await {
                    // Gone (deleted, or its create failed): written anew, as client-go does.
                    Err(e) if e.has_code(404) => api.create(&write.event).await,
                    other => other,
                },
                None => api.create(&write.event).await,
            };
            if let Err(e) = written {
                tracing::warn!(error = %e, "could not record an Event");
            }
            drop(write.done);
        };
        let handle = tokio::spawn(send.instrument(tracing::Span::current()));
        self.detached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(handle);
    }

    /// Waits for the Event writes [`ManagementCluster::record_event`] sent.
    pub async fn settle(&self) {
        loop {
            let pending =
                std::mem::take(&mut *self.detached.lock().unwrap_or_else(|e| e.into_inner()));
            if pending.is_empty() {
                return;
            }
            for write in pending {
                // A panicked write was a failed Event: nothing to give back.
                let _ = write.await;
            }
        }
    }

    /// Replaces `object`; its `metadata.resourceVersion` makes this fail with 409 when
    /// someone else wrote in between.
    #[tracing::instrument(name = "write", skip_all, fields(verb = "update", kind = %object.kind(), namespace = %object.namespace(), name = %object.name(), dry_run = self.is_dry_run()))]
    pub async fn replace(&self, object: &Value) -> Result<Value, Error> {
        self.replace_sub(object, Sub::Main).await
    }

    /// Replaces `object`'s status; 409 on a stale resourceVersion.
    #[tracing::instrument(name = "write", skip_all, fields(verb = "update status", kind = %object.kind(), namespace = %object.namespace(), name = %object.name(), dry_run = self.is_dry_run()))]
    pub async fn replace_status(&self, object: &Value) -> Result<Value, Error> {
        self.replace_sub(object, Sub::Status).await
    }

    async fn replace_sub(&self, object: &Value, sub: Sub) -> Result<Value, Error> {
        let target = self.target(object).await?;
        self.count(&self.writes.update, object.kind(), "update");
        let replaced = self.writer.replace(target, sub).await?;
        self.fence_written(&replaced);
        Ok(replaced)
    }

    /// Applies a JSON merge patch (RFC 7386) to the object.
    #[tracing::instrument(name = "write", skip_all, fields(verb = "patch", kind = %of.kind(), namespace = %of.namespace(), name = %of.name(), dry_run = self.is_dry_run()))]
    pub async fn merge_patch(&self, of: &Value, patch: &Value) -> Result<Value, Error> {
        self.merge_patch_sub(of, patch, Sub::Main).await
    }

    /// Applies a JSON merge patch to the object's status subresource.
    #[tracing::instrument(name = "write", skip_all, fields(verb = "patch status", kind = %of.kind(), namespace = %of.namespace(), name = %of.name(), dry_run = self.is_dry_run()))]
    pub async fn merge_patch_status(&self, of: &Value, patch: &Value) -> Result<Value, Error> {
        self.merge_patch_sub(of, patch, Sub::Status).await
    }

    async fn merge_patch_sub(&self, of: &Value, patch: &Value, sub: Sub) -> Result<Value, Error> {
        let target = self.target(of).await?;
        self.count(&self.writes.patch, of.kind(), "patch");
        let patched = self.writer.merge_patch(target, patch, sub).await?;
        self.fence_written(&patched);
        Ok(patched)
    }

    /// The structural schema of a kind, as the API server merges applies with it: from
    /// the CustomResourceDefinition that serves it, read once per process. Built-in kinds
    /// and CRDs that cannot be read get no hints (every list atomic), which is what the
    /// server does for untyped fields too.
    pub async fn schema(&self, api_version: &str, kind: &str) -> Result<Arc<Schema>, Error> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(known) = self.lock_schemas().get(&key) {
            return Ok(known.clone());
        }
        let gv = GroupVersion::parse(api_version).map_err(Error::invalid)?;
        let (schema, lasting) = match self.crd_name(api_version, kind).await? {
            Some(name) => {
                let read = self
                    .get(CRD_API_VERSION, "CustomResourceDefinition", "", &name)
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|crd| crd.ok_or_else(|| "not found".to_string()))
                    .and_then(|crd| Schema::from_crd(&crd, &gv.version).map_err(|e| e.to_string()));
                match read {
                    Ok(schema) => (schema, true),
                    // Predicting without list-type hints costs at most a needless apply;
                    // the next reconcile asks again (a CRD may be readable or fixed by
                    // then), so a failure is never remembered.
                    Err(e) => {
                        tracing::warn!(crd = %name, error = %e, "no schema for predicting applies; every list taken as atomic");
                        (Schema::unknown(), false)
                    }
                }
            }
            _ => (Schema::unknown(), true),
        };
        let schema = Arc::new(schema);
        if lasting {
            self.lock_schemas().insert(key, schema.clone());
        }
        Ok(schema)
    }

    /// The name of the CustomResourceDefinition serving `kind` (`<plural>.<group>`, the
    /// plural as discovery reports it), or `None` for a built-in or unserved kind.
    pub(crate) async fn crd_name(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<Option<String>, Error> {
        let gv = GroupVersion::parse(api_version).map_err(Error::invalid)?;
        if gv.group.is_empty() {
            return Ok(None);
        }
        Ok(self
            .resource(api_version, kind, "")
            .await?
            .map(|resource| format!("{}.{}", resource.plural, gv.group)))
    }

    /// How many apply predictions were answered by an earlier "changes nothing"
    /// ([`crate::no_change`]), across every clone of this client.
    pub fn remembered_no_changes(&self) -> u64 {
        self.no_change.hits()
    }

    fn lock_schemas(&self) -> MutexGuard<'_, Schemas> {
        self.schemas.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a server-side apply of `intent` by this client's field manager, with force,
    /// would make of `current` (`None`: it does not exist): computed here, no request.
    /// `changed == false` means the apply would write nothing, ownership included.
    /// An apply found to change nothing is remembered ([`crate::no_change`]): the same
    /// intent over the same object, but for its status, is answered without predicting
    /// again.
    pub async fn predict_apply(
        &self,
        current: Option<&Value>,
        intent: &Value,
    ) -> Result<Prediction, Error> {
        use crate::no_change::NoChange;
        let unchanged = |current: &Value| Prediction {
            object: current.clone(),
            changed: false,
            overridden: topograph_ssa::Conflicts(Vec::new()),
        };
        // A dry run's overlay names its own resourceVersions: nothing remembered there.
        let current_known = current.filter(|_| !self.is_dry_run());
        let digested = current_known.map(|c| (c, NoChange::intent(intent)));
        let key = digested.and_then(|(c, digest)| NoChange::key(&self.field_manager, c, digest));
        let mut content_key = None;
        if let (Some(key), Some((current, digest))) = (key, digested) {
            if self.no_change.contains(key) {
                return Ok(unchanged(current));
            }
            content_key = NoChange::content_key(&self.field_manager, current, digest);
            if content_key.is_some_and(|content| self.no_change.contains(content)) {
                // This resourceVersion is known now too: the next look costs nothing.
                self.no_change.insert(key);
                return Ok(unchanged(current));
            }
        }
        let applied = self.predict_apply_in_version(current, intent).await?;
        tracing::trace!(target: "topograph_management::no_change", kind = intent.kind(), name = intent.name(), keyed = key.is_some(), changed = applied.changed, "predicted");
        if !applied.changed && applied.overridden.is_empty() {
            for key in key.into_iter().chain(content_key) {
                self.no_change.insert(key);
            }
        }
        Ok(Prediction {
            object: applied.object,
            changed: applied.changed,
            overridden: applied.overridden,
        })
    }

    /// Remembers that `intent`, just applied by this client's field manager and answered
    /// with `stored`, changes nothing if applied again over `stored`, or over `stored`
    /// with only its status moved since: server-side apply is idempotent, so the
    /// prediction a later reconcile would make is known. A new Cluster's second
    /// reconcile finds most of its objects (templates, health checks) as its first wrote
    /// them; those that only earned status reports since are known as well.
    pub fn remember_applied(&self, stored: &Value, intent: &Value) {
        use crate::no_change::NoChange;
        if self.is_dry_run() {
            return;
        }
        let digest = NoChange::intent(intent);
        let keys = [
            NoChange::key(&self.field_manager, stored, digest),
            NoChange::content_key(&self.field_manager, stored, digest),
        ];
        for key in keys.into_iter().flatten() {
            self.no_change.insert(key);
        }
    }

    async fn predict_apply_in_version(
        &self,
        current: Option<&Value>,
        intent: &Value,
    ) -> Result<topograph_ssa::Applied, Error> {
        // Predicted in the version the apply will be sent in, where the ownership
        // record lives; the object predicted is given back in the caller's version.
        let (own, to) = match (
            topograph_api::convert::version_of(intent),
            self.write_version(intent).await?,
        ) {
            (Some(own), Some(to)) => (own, to),
            _ => {
                let renamed = self.with_preferred_owner_refs(intent).await?;
                return self
                    .predict_apply_as_is(current, renamed.as_ref().unwrap_or(intent))
                    .await;
            }
        };
        let intent = Self::for_writing(intent, to)?;
        let renamed = self.with_preferred_owner_refs(&intent).await?;
        let intent = renamed.unwrap_or(intent);
        // The current object as the server stores it: a read in another version
        // carries what that version cannot hold in its conversion data, which going
        // back up restores.
        let current_there = current
            .map(|current| Self::for_writing(current, to))
            .transpose()?;
        let mut applied = self
            .predict_apply_as_is(current_there.as_ref(), &intent)
            .await?;
        // Unchanged, the object is the current one as the caller read it: no conversion
        // back (the converged reconcile's path).
        applied.object = match current {
            Some(current) if !applied.changed => current.clone(),
            _ => self.read_back(&applied.object, own).await?,
        };
        Ok(applied)
    }

    async fn predict_apply_as_is(
        &self,
        current: Option<&Value>,
        intent: &Value,
    ) -> Result<topograph_ssa::Applied, Error> {
        let schema = self.schema(intent.api_version(), intent.kind()).await?;
        let (manager, api_version) = (&*self.field_manager, intent.api_version());
        topograph_ssa::apply(
            current,
            intent,
            manager,
            api_version,
            true,
            &schema,
            &topograph_gocompat::time::now(),
        )
        .map_err(|e| apply_refused(intent, &e))
    }

    /// Server-side apply of `intent` as this client's field manager, with force (the
    /// topology takes over fields other managers set, as Cluster API's does); creates the
    /// object when it does not exist. Returns it as stored.
    #[tracing::instrument(name = "write", skip_all, fields(verb = "apply", kind = %intent.kind(), namespace = %intent.namespace(), name = %intent.name(), dry_run = self.is_dry_run()))]
    pub async fn apply(&self, intent: &Value) -> Result<Value, Error> {
        let renamed = self.with_preferred_owner_refs(intent).await?;
        let intent = renamed.as_ref().unwrap_or(intent);
        // Cluster API's kinds go in the version the server prefers, as Cluster API
        // applies them; the answer comes back in the caller's version.
        if let (Some(own), Some(to)) = (
            topograph_api::convert::version_of(intent),
            self.write_version(intent).await?,
        ) {
            let converted = Self::for_writing(intent, to)?;
            let stored = self.apply_as_is(&converted).await?;
            return self.read_back(&stored, own).await;
        }
        self.apply_as_is(intent).await
    }

    async fn apply_as_is(&self, intent: &Value) -> Result<Value, Error> {
        let target = self.target(intent).await?;
        let schema = self.schema(intent.api_version(), intent.kind()).await?;
        self.count(&self.writes.patch, intent.kind(), "apply");
        match self.writer.apply(target, schema).await {
            Ok(applied) => {
                self.fence_written(&applied);
                Ok(applied)
            }
            Err(Error::Api(kube::Error::Api(status))) if status.code == 415 => {
                Err(Error::NoServerSideApply {
                    server: self.server.to_string(),
                    object: format!("{} {}/{}", intent.kind(), intent.namespace(), intent.name()),
                    message: status.message,
                })
            }
            other => other,
        }
    }

    /// Deletes the object; one already gone (or of a kind not served) is not an error.
    #[tracing::instrument(name = "write", skip_all, fields(verb = "delete", kind = %object.kind(), namespace = %object.namespace(), name = %object.name(), dry_run = self.is_dry_run()))]
    /// Answers whether there was an object to delete, so a caller need not read it first.
    pub async fn delete(&self, object: &Value) -> Result<bool, Error> {
        let Some(target) = self.target_opt(object).await? else {
            return Ok(false);
        };
        self.count(&self.writes.delete, object.kind(), "delete");
        // Fenced before it is sent: from now on the object may be gone at any moment.
        if let Some(cache) = self.owned_cache_in_use() {
            cache.fence(
                group_of(object.api_version()),
                object.kind(),
                object.namespace(),
                object.name(),
                &crate::owned_cache::cluster_of(object),
                None,
            );
        }
        self.writer.delete(target).await
    }
}

/// A resolved kind, in one namespace or all: the requests for it, and its group and
/// plural for the API server's messages.
struct Resource {
    /// Requests on the kind's collection (in one namespace, or all).
    request: kube::core::Request,
    client: Client,
    group: String,
    plural: String,
}

impl Resource {
    /// Sends a request on this kind and reads the answer straight into JSON values.
    /// (kube-rs' typed `Api<DynamicObject>` parsed each answer into typed metadata
    /// and the caller wrote that back into a value: two copies of every object read
    /// or written, ≈15 % of an applier's CPU.)
    async fn send(
        &self,
        request: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
        verb: &'static str,
    ) -> Result<Value, Error> {
        let mut request = request.map_err(kube::Error::BuildRequest)?;
        // kube-rs' own name for the verb, which its tracing layer reads.
        request.extensions_mut().insert(verb);
        Ok(self.client.request::<Value>(request).await?)
    }

    /// The object as the API server has it.
    async fn get_live(&self, name: &str) -> Result<Option<Value>, Error> {
        let request = self.request.get(name, &Default::default());
        match self.send(request, "get").await {
            Ok(object) => Ok(Some(object)),
            Err(Error::Api(e)) if is_not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The object a write addresses, its kind resolved.
struct Target<'a> {
    object: &'a Value,
    resource: Resource,
    // Every write names its field manager, so the server's record of who owns what
    // names this client rather than its User-Agent.
    manager: Arc<str>,
}

impl Target<'_> {
    fn post_params(&self) -> PostParams {
        PostParams {
            field_manager: Some(self.manager.to_string()),
            ..PostParams::default()
        }
    }

    fn patch_params(&self) -> PatchParams {
        PatchParams {
            field_manager: Some(self.manager.to_string()),
            ..PatchParams::default()
        }
    }
}

/// A write on its way; boxed, as kube-rs' futures are, so writers can be trait objects.
type Write<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// Where a [`ManagementCluster`]'s writes land, chosen when it is made: the API server
/// ([`Live`]) or a dry run's overlay ([`DryRun`]), as Cluster API's PatchHelper has a
/// live and a dry-run form. The cluster resolves the kind and counts the write before
/// handing it over, so both are counted alike and differ only in where the write lands.
trait Writer: Send + Sync {
    fn create<'a>(&'a self, to: Target<'a>) -> Write<'a, Value>;
    fn replace<'a>(&'a self, to: Target<'a>, sub: Sub) -> Write<'a, Value>;
    fn merge_patch<'a>(&'a self, to: Target<'a>, patch: &'a Value, sub: Sub) -> Write<'a, Value>;
    fn apply<'a>(&'a self, to: Target<'a>, schema: Arc<Schema>) -> Write<'a, Value>;
    /// Whether there was an object to delete.
    fn delete<'a>(&'a self, to: Target<'a>) -> Write<'a, bool>;
    /// The overlay reads must see, for a dry run.
    fn overlay(&self) -> Option<&Mutex<Overlay>>;
}

/// Writes sent to the API server.
struct Live;

impl Writer for Live {
    fn create<'a>(&'a self, to: Target<'a>) -> Write<'a, Value> {
        Box::pin(async move {
            let body = body_of(to.object)?;
            let request = to.resource.request.create(&to.post_params(), body);
            to.resource.send(request, "create").await
        })
    }

    fn replace<'a>(&'a self, to: Target<'a>, sub: Sub) -> Write<'a, Value> {
        Box::pin(async move {
            let (name, body) = (to.object.name(), body_of(to.object)?);
            let (r, params) = (&to.resource.request, to.post_params());
            match sub {
                Sub::Main => to.resource.send(r.replace(name, &params, body), "replace"),
                Sub::Status => to.resource.send(
                    r.replace_subresource("status", name, &params, body),
                    "replace_status",
                ),
            }
            .await
        })
    }

    fn merge_patch<'a>(&'a self, to: Target<'a>, patch: &'a Value, sub: Sub) -> Write<'a, Value> {
        Box::pin(async move {
            let (name, patch) = (to.object.name(), Patch::Merge(patch));
            let (r, params) = (&to.resource.request, to.patch_params());
            match sub {
                Sub::Main => to.resource.send(r.patch(name, &params, &patch), "patch"),
                Sub::Status => to.resource.send(
                    r.patch_subresource("status", name, &params, &patch),
                    "patch_status",
                ),
            }
            .await
        })
    }

    fn apply<'a>(&'a self, to: Target<'a>, _: Arc<Schema>) -> Write<'a, Value> {
        Box::pin(async move {
            // The body is written by `body_of`, as creates and replaces are: kube-rs would
            // serialise the intent with serde_json's slower writer, to the same bytes.
            let (name, body) = (to.object.name(), body_of(to.object)?);
            let params = PatchParams::apply(&to.manager).force();
            let request = to
                .resource
                .request
                .patch(name, &params, &Patch::Apply(()))
                .map(|mut request| {
                    *request.body_mut() = body;
                    request
                });
            to.resource.send(request, "patch").await
        })
    }

    fn delete<'a>(&'a self, to: Target<'a>) -> Write<'a, bool> {
        Box::pin(async move {
            let request = to
                .resource
                .request
                .delete(to.object.name(), &DeleteParams::background());
            // The answer (the object, or a Status) is not needed: read as any JSON.
            match to.resource.send(request, "delete").await {
                Ok(_) => Ok(true),
                Err(Error::Api(e)) if is_not_found(&e) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    fn overlay(&self) -> Option<&Mutex<Overlay>> {
        None
    }
}

/// Writes kept in an overlay ([`crate::dry_run`]) over the live objects: each reads the
/// object as a read through the dry-run client sees it now, then writes the overlay.
#[derive(Default)]
struct DryRun {
    overlay: Mutex<Overlay>,
}

impl DryRun {
    /// The object as a read sees it now: the overlay's, else the live one.
    async fn current(&self, to: &Target<'_>) -> Result<Option<Value>, Error> {
        let known = self.lock()?.get(&ObjectKey::of(to.object));
        match known {
            Some(known) => Ok(known),
            None => to.resource.get_live(to.object.name()).await,
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, Overlay>, Error> {
        self.overlay
            .lock()
            .map_err(|_| Error::invalid("dry run state poisoned"))
    }

    /// Runs `write` on the overlay, a refusal answered as the API server would.
    fn apply<T>(
        &self,
        to: &Target<'_>,
        write: impl FnOnce(&mut Overlay) -> Result<T, Refusal>,
    ) -> Result<T, Error> {
        write(&mut *self.lock()?).map_err(|refusal| refused(to, refusal))
    }
}

impl Writer for DryRun {
    fn create<'a>(&'a self, to: Target<'a>) -> Write<'a, Value> {
        Box::pin(async move {
            // Only a named object can exist already; a generated name is new.
            let current = if to.object.name().is_empty() {
                None
            } else {
                self.current(&to).await?
            };
            self.apply(&to, |o| o.create(to.object, current))
        })
    }

    fn replace<'a>(&'a self, to: Target<'a>, sub: Sub) -> Write<'a, Value> {
        Box::pin(async move {
            let current = self.current(&to).await?;
            self.apply(&to, |o| o.replace(to.object, current, sub == Sub::Status))
        })
    }

    fn merge_patch<'a>(&'a self, to: Target<'a>, patch: &'a Value, sub: Sub) -> Write<'a, Value> {
        Box::pin(async move {
            let current = self.current(&to).await?;
            self.apply(&to, |o| o.merge_patch(patch, current, sub == Sub::Status))
        })
    }

    fn apply<'a>(&'a self, to: Target<'a>, schema: Arc<Schema>) -> Write<'a, Value> {
        Box::pin(async move {
            let current = self.current(&to).await?;
            let intent = to.object;
            if let Some(why) = topograph_api::server::uid_mismatch(intent, current.as_ref()) {
                return self.apply(&to, |_| Err::<Value, _>(Refusal::Precondition(why)));
            }
            let applied = topograph_ssa::apply(
                current.as_ref(),
                intent,
                &to.manager,
                intent.api_version(),
                true,
                &schema,
                &topograph_gocompat::time::now(),
            )
            .map_err(|e| apply_refused(intent, &e))?;
            if !applied.changed
                && let Some(current) = current
            {
                return Ok(current);
            }
            match current {
                None => self.apply(&to, |o| o.create(&applied.object, None)),
                Some(current) => {
                    self.apply(&to, |o| o.replace(&applied.object, Some(current), false))
                }
            }
        })
    }

    fn delete<'a>(&'a self, to: Target<'a>) -> Write<'a, bool> {
        Box::pin(async move {
            let current = self.current(&to).await?;
            let existed = current.is_some();
            self.apply(&to, |o| {
                o.delete(current);
                Ok(existed)
            })
        })
    }

    fn overlay(&self) -> Option<&Mutex<Overlay>> {
        Some(&self.overlay)
    }
}

/// The API server's answer for an overlay refusal, texts and all, so callers handle
/// dry runs and real writes alike (conflict retries, adoption on AlreadyExists).
fn refused(to: &Target<'_>, refusal: Refusal) -> Error {
    let (group, plural) = (&to.resource.group, &to.resource.plural);
    let (kind, name) = (to.object.kind(), to.object.name());
    let Refused {
        code,
        reason,
        message,
    } = match refusal {
        Refusal::NotFound => Refused::not_found(group, plural, name),
        Refusal::AlreadyExists => Refused::already_exists(group, plural, name),
        Refusal::Conflict => Refused::conflict(group, plural, name),
        Refusal::NameRequired => Refused::invalid(group, kind, name, NAME_REQUIRED),
        Refusal::Precondition(why) => Refused::conflict_because(group, plural, name, &why),
    };
    Error::Api(kube::Error::Api(Box::new(kube::core::Status {
        code,
        reason: reason.to_string(),
        message,
        ..kube::core::Status::failure("", "")
    })))
}

/// The API server's answer to an apply it refuses (a conflict, a body it cannot merge).
fn apply_refused(intent: &Value, e: &topograph_ssa::ApplyError) -> Error {
    let message = format!("{} {}: {e}", intent.kind(), intent.name());
    Error::Api(kube::Error::Api(Box::new(kube::core::Status {
        code: e.code(),
        reason: if e.code() == 409 {
            "Conflict"
        } else {
            "Invalid"
        }
        .to_string(),
        message,
        ..kube::core::Status::failure("", "")
    })))
}

/// Where CustomResourceDefinitions are served.
const CRD_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// The request body of a write: the object as JSON. Whether its fields are right is
/// the API server's to say (it answers 400 or 422 naming them).
fn body_of(object: &Value) -> Result<Vec<u8>, Error> {
    if !object.is_object() {
        return Err(Error::invalid(format!(
            "{} {}/{} is not a Kubernetes object: not a JSON object",
            object.kind(),
            object.namespace(),
            object.name()
        )));
    }
    Ok(topograph_api::json::to_vec(object))
}
