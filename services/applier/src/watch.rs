//! Watchers: per management cluster, watches on Clusters, ClusterClasses, the topology's
//! own kinds and every template kind classes reference, each change mapped to the
//! Cluster keys it affects ([`crate::watch_index`]) and queued; plus a periodic resync
//! of every known Cluster. Exactly one process watches a management cluster at a time:
//! the one holding its lease; the others stand by and take over when it lapses.
//!
//! The leases are shared out: each process counts the appliers alive
//! ([`Lease::members`]) and takes no more than its share of the management clusters
//! (rounded up); one holding more than its share, as the first applier up does until
//! the others arrive, gives the extra leases up at its next renewals.
//!
//! The holder also acts as Cluster API's ExtensionConfig controller and the part of its
//! ClusterClass controller that follows ExtensionConfigs: a changed ExtensionConfig is
//! discovered at once, the classes calling it are reconciled again (their variables
//! may have changed) and their Clusters queued.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use topograph_queue::Queue;

use crate::extensions::RuntimeExtensions;
use crate::lease::Lease;
use crate::metrics::{ErrorLabels, Metrics, WatchLabels};
use crate::seen::Seen;
use crate::watch_index::{ObjectSummary, Summary, WatchIndex};
use topograph_management::ManagementCluster;
use topograph_management::keys::ClusterKey;
use topograph_management::registry::Registry;
use topograph_reconcile::class::API_VERSION;

/// Watcher timing.
#[derive(Clone, Debug)]
pub struct WatchConfig {
    /// How often every known Cluster is queued regardless of changes.
    pub resync: Duration,
    /// How long a watcher lease lasts without renewal.
    pub lease_ttl: Duration,
    /// A changed Cluster is queued once its changes have been quiet this long...
    pub quiet: Duration,
    /// ...or this long after its first unqueued change, whichever comes first, so a
    /// burst of changes costs one reconcile and constant churn still gets reconciled.
    pub max_delay: Duration,
    /// How often the rollouts of a watched management cluster take a step.
    pub rollout_interval: Duration,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            resync: Duration::from_secs(300),
            lease_ttl: Duration::from_secs(15),
            quiet: Duration::from_millis(500),
            max_delay: Duration::from_secs(10),
            rollout_interval: Duration::from_secs(2),
        }
    }
}

/// How long after a class-level change its Clusters are queued again: well beyond the
/// moment every applier's class cache watch delivers it.
const CLASS_CACHE_SETTLE: Duration = Duration::from_secs(2);

/// What a watch task reports: the object's summary, and its resourceVersion (for the
/// owned-object cache's fences).
enum Change {
    Applied(Summary, Option<String>),
    Deleted(Summary),
}

/// The object a change is about, as the owned-object cache fences it: `(group, kind,
/// namespace, name, cluster)`, for a Cluster or an object a Cluster owns.
fn fenced(summary: &Summary) -> Option<(String, String, String, String, String)> {
    match summary {
        Summary::Cluster(cluster) => Some((
            "cluster.x-k8s.io".to_string(),
            "Cluster".to_string(),
            cluster.name.0.clone(),
            cluster.name.1.clone(),
            cluster.name.1.clone(),
        )),
        Summary::Object(ObjectSummary::Owned { cluster, key, .. }) => Some((
            key.group.clone(),
            key.kind.clone(),
            key.namespace.clone(),
            key.name.clone(),
            cluster.1.clone(),
        )),
        _ => None,
    }
}

/// What the watchers of a process share.
pub struct Watchers<Q, L> {
    /// The queue changes go to.
    pub queue: Arc<Q>,
    /// The lease store.
    pub lease: Arc<L>,
    /// This process's lease holder name.
    pub holder: String,
    /// The management clusters.
    pub registry: Arc<Registry>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Timing.
    pub config: WatchConfig,
    /// Runtime SDK: ExtensionConfigs are watched and discovered when they change.
    pub extensions: Option<Arc<RuntimeExtensions>>,
    /// This process's share of the leases.
    pub shares: Shares,
}

/// How many watch leases this process holds, and how many appliers share them.
#[derive(Debug)]
pub struct Shares {
    held: std::sync::atomic::AtomicUsize,
    members: std::sync::atomic::AtomicUsize,
}

impl Default for Shares {
    fn default() -> Self {
        Shares {
            held: std::sync::atomic::AtomicUsize::new(0),
            members: std::sync::atomic::AtomicUsize::new(1),
        }
    }
}

impl Shares {
    /// How many of `total` leases this process may hold.
    fn fair(&self, total: usize) -> usize {
        total.div_ceil(self.members.load(Ordering::Relaxed).max(1))
    }

    /// How many it holds.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Whether another lease may be taken.
    fn may_take(&self, total: usize) -> bool {
        self.held() < self.fair(total)
    }

    /// Counts one lease given up to keep to the share; false when none is over it.
    fn shed_one(&self, total: usize) -> bool {
        let fair = self.fair(total);
        self.held
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |h| {
                (h > fair).then(|| h - 1)
            })
            .is_ok()
    }
}

/// Why a watch ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// The lease was lost, or the loop stopped: counted off by the caller.
    Stopped,
    /// The lease was given up to keep to the share (already counted off).
    Shed,
}

/// One management cluster's supervisor, and the switch that stops it.
struct Supervisor {
    task: JoinHandle<()>,
    stop: watch::Sender<bool>,
}

/// Keeps one supervisor per management cluster of the registry until `shutdown`. A
/// management cluster that leaves the registry has its supervisor stopped the way a
/// shutdown stops it (watches ended, lease released), not aborted: an aborted
/// supervisor would leave its watch tasks retrying against a cluster nobody asked
/// about any more, for the life of the process.
pub async fn run<Q: Queue, L: Lease>(
    watchers: Arc<Watchers<Q, L>>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut supervisors: BTreeMap<String, Supervisor> = BTreeMap::new();
    let heartbeat = {
        let watchers = watchers.clone();
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            let ttl = watchers.config.lease_ttl;
            loop {
                match watchers.lease.members(&watchers.holder, ttl).await {
                    Ok(n) => watchers.shares.members.store(n, Ordering::Relaxed),
                    Err(e) => tracing::warn!(error = %e, "applier membership not renewed"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(ttl / 3) => {}
                    _ = shutdown.changed() => return,
                }
            }
        })
    };
    loop {
        let names: BTreeSet<String> = watchers.registry.names().into_iter().collect();
        supervisors.retain(|name, supervisor| {
            let keep = names.contains(name) && !supervisor.task.is_finished();
            if !keep {
                tracing::info!(management_cluster = %name, "management cluster gone; stopping its watches");
                let _ = supervisor.stop.send(true);
            }
            keep
        });
        for name in names {
            supervisors.entry(name.clone()).or_insert_with(|| {
                let watchers = watchers.clone();
                let (stop, stopped) = watch::channel(false);
                let task = tokio::spawn(async move { supervise(watchers, name, stopped).await });
                Supervisor { task, stop }
            });
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = shutdown.changed() => {}
        }
        if *shutdown.borrow() {
            break;
        }
    }
    for supervisor in supervisors.values() {
        let _ = supervisor.stop.send(true);
    }
    heartbeat.abort();
    if let Err(e) = watchers.lease.leave(&watchers.holder).await {
        tracing::warn!(error = %e, "applier membership not given up");
    }
    // One deadline for all of them, not 5 s per management cluster.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    for (_, supervisor) in supervisors {
        let abort = supervisor.task.abort_handle();
        if tokio::time::timeout_at(deadline, supervisor.task)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
}

/// Watch tasks that end with their owner: dropped (a supervisor's future dropped
/// halfway, say), they are aborted rather than left running on their own.
#[derive(Default)]
struct WatchTasks(Vec<JoinHandle<()>>);

impl Drop for WatchTasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

fn lease_name(management_cluster: &str) -> String {
    format!("watch:{management_cluster}")
}

/// Holds the lease of one management cluster and, while held, watches it.
async fn supervise<Q: Queue, L: Lease>(
    watchers: Arc<Watchers<Q, L>>,
    management_cluster: String,
    mut shutdown: watch::Receiver<bool>,
) {
    let name = lease_name(&management_cluster);
    let ttl = watchers.config.lease_ttl;
    loop {
        if *shutdown.borrow() {
            let _ = watchers.lease.release(&name, &watchers.holder).await;
            return;
        }
        let total = watchers.registry.names().len();
        if !watchers.shares.may_take(total) {
            tokio::select! {
                _ = tokio::time::sleep(ttl / 3) => {}
                _ = shutdown.changed() => {}
            }
            continue;
        }
        match watchers.lease.hold(&name, &watchers.holder, ttl).await {
            Ok(true) => {
                let held = watchers.shares.held.fetch_add(1, Ordering::SeqCst) + 1;
                watchers.metrics.watches_held.set(held as i64);
                tracing::info!(%management_cluster, holder = %watchers.holder, "watching");
                let ended = watch_while_held(&watchers, &management_cluster, &mut shutdown).await;
                if ended == Ended::Stopped {
                    watchers.shares.held.fetch_sub(1, Ordering::SeqCst);
                }
                watchers
                    .metrics
                    .watches_held
                    .set(watchers.shares.held() as i64);
                tracing::info!(%management_cluster, holder = %watchers.holder, ?ended, "stopped watching");
                if ended == Ended::Shed {
                    let _ = watchers.lease.release(&name, &watchers.holder).await;
                    // Another applier takes it from here; trying again at once would
                    // race it for the lease just given up.
                    tokio::select! {
                        _ = tokio::time::sleep(ttl) => {}
                        _ = shutdown.changed() => {}
                    }
                    continue;
                }
                // The watch loop saw the shutdown and consumed its notification: waiting
                // for another one below would sleep out the shutdown deadline and leave
                // the lease held until it expires.
                if *shutdown.borrow() {
                    let _ = watchers.lease.release(&name, &watchers.holder).await;
                    return;
                }
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(%management_cluster, error = %e, "lease store unreachable"),
        }
        tokio::select! {
            _ = tokio::time::sleep(ttl / 3) => {}
            _ = shutdown.changed() => {}
        }
    }
}

/// Spawns a watch of one kind, forwarding its changes; `errors` counts the watch's
/// failures (the management cluster's, as the metrics report them).
async fn spawn_watch(
    api: &ManagementCluster,
    api_version: &str,
    kind: &str,
    tx: &mpsc::Sender<Change>,
    errors: &prometheus_client::metrics::counter::Counter,
) -> Option<JoinHandle<()>> {
    let resource = match api.api_all::<Seen>(api_version, kind).await {
        Ok(Some(resource)) => resource,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(api_version, kind, error = %e, "cannot watch");
            errors.inc();
            return None;
        }
    };
    let errors = errors.clone();
    let tx = tx.clone();
    let what = format!("{kind}.{api_version}");
    Some(tokio::spawn(async move {
        let mut stream = watcher::watcher(resource, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(event) = stream.next().await {
            let change = match event {
                Ok(Event::Apply(o) | Event::InitApply(o)) => {
                    let resource_version = o.resource_version().map(str::to_string);
                    Change::Applied(o.summary, resource_version)
                }
                Ok(Event::Delete(o)) => Change::Deleted(o.summary),
                Ok(Event::Init | Event::InitDone) => continue,
                Err(e) => {
                    tracing::info!(watch = %what, error = %e, "watch error; retrying with backoff");
                    errors.inc();
                    continue;
                }
            };
            if tx.send(change).await.is_err() {
                return;
            }
        }
    }))
}

async fn watch_while_held<Q: Queue, L: Lease>(
    watchers: &Watchers<Q, L>,
    management_cluster: &str,
    shutdown: &mut watch::Receiver<bool>,
) -> Ended {
    let Some(api) = watchers.registry.get(management_cluster) else {
        return Ended::Stopped;
    };
    let mut ended = Ended::Stopped;
    // Its Clusters' own objects are read from caches here while this process watches
    // (and queues) them; released below whatever ends the watch.
    let _held = HeldCache::hold(&api);
    let (tx, mut rx) = mpsc::channel::<Change>(1024);
    let mut tasks = WatchTasks::default();
    let watch_errors = watchers
        .metrics
        .management_cluster_errors
        .get_or_create(&ErrorLabels {
            management_cluster: management_cluster.to_string(),
            kind: "watch".to_string(),
        })
        .clone();
    let mut watched: BTreeSet<(String, String)> = BTreeSet::new();
    // Kinds not served (yet: Cluster API may be installed after the fleet starts) or
    // whose watch could not start; tried again at every lease renewal.
    let mut unwatched: BTreeSet<(String, String)> = BTreeSet::new();
    // The index reads a Cluster's and a class's fields in the reconcile's version; of
    // MachineDeployments and MachinePools only names, labels and digests, which any
    // version gives, so those are watched in the version the server stores (no
    // conversion of every provider report).
    let stored = match api.preferred_cluster_api_version().await {
        Ok(version) => version.unwrap_or(API_VERSION),
        Err(e) => {
            tracing::info!(management_cluster, error = %e, "Cluster API's preferred version unknown; watching in {API_VERSION}");
            API_VERSION
        }
    };
    for (api_version, kind) in [
        (API_VERSION, "Cluster"),
        (API_VERSION, "ClusterClass"),
        (stored, "MachineDeployment"),
        (stored, "MachinePool"),
    ] {
        watched.insert((api_version.to_string(), kind.to_string()));
        match spawn_watch(&api, api_version, kind, &tx, &watch_errors).await {
            Some(task) => tasks.0.push(task),
            None => {
                unwatched.insert((api_version.to_string(), kind.to_string()));
            }
        }
    }
    // ExtensionConfig changes are handled beside the loop: discovery calls extensions
    // (up to their timeouts) and must not hold up the watch streams.
    let (configs_changed, configs_done) = match &watchers.extensions {
        Some(extensions) => {
            tasks.0.extend(
                spawn_watch(
                    &api,
                    crate::extensions::API_VERSION,
                    "ExtensionConfig",
                    &tx,
                    &watch_errors,
                )
                .await,
            );
            let (changed_tx, changed_rx) = mpsc::unbounded_channel::<()>();
            let (done_tx, done_rx) = mpsc::unbounded_channel::<Vec<(String, String)>>();
            tasks.0.push(tokio::spawn(follow_extension_configs(
                extensions.clone(),
                management_cluster.to_string(),
                api.clone(),
                changed_rx,
                done_tx,
            )));
            (Some(changed_tx), Some(done_rx))
        }
        None => (None, None),
    };
    let mut configs_done = configs_done;
    let mut index = WatchIndex::default();
    let ttl = watchers.config.lease_ttl;
    let mut renew = tokio::time::interval(ttl / 3);
    let mut resync = tokio::time::interval(watchers.config.resync);
    resync.tick().await;
    let name = lease_name(management_cluster);
    let labels = WatchLabels {
        management_cluster: management_cluster.to_string(),
    };
    let mut pending = Debounce::default();
    // Clusters of a changed class, queued again once every applier's class cache has
    // seen the change (see `Affected::class_level`).
    let mut again: Vec<(Instant, Vec<(String, String)>)> = Vec::new();
    let mut flush = tokio::time::interval(Duration::from_millis(100));
    // Queueing runs beside the event loop, so a slow queue never backs up the watch
    // streams (a watch that is not read falls behind and must list everything again).
    let (to_queue, mut queueing) = mpsc::unbounded_channel::<Vec<(String, String)>>();
    let enqueuer = {
        let queue = watchers.queue.clone();
        let management_cluster = management_cluster.to_string();
        let give_up_after_close = ttl;
        tokio::spawn(async move {
            enqueue_until_queued(
                queue.as_ref(),
                &management_cluster,
                &mut queueing,
                give_up_after_close,
            )
            .await;
        })
    };
    // Rollouts are driven by whoever watches the management cluster: one driver each.
    tasks.0.push(tokio::spawn(crate::rollouts::drive(
        api.clone(),
        management_cluster.to_string(),
        watchers.queue.clone(),
        to_queue.clone(),
        watchers.metrics.clone(),
        watchers.config.rollout_interval,
    )));
    loop {
        tokio::select! {
            change = rx.recv() => {
                let Some(change) = change else { break };
                watchers.metrics.watch_events.get_or_create(&labels).inc();
                let (summary, deleted, resource_version) = match change {
                    Change::Applied(summary, resource_version) => (summary, false, resource_version),
                    Change::Deleted(summary) => (summary, true, None),
                };
                // Why a Cluster was queued, when asked (`RUST_LOG=topograph_applier::watch=trace`).
                let traced = tracing::enabled!(tracing::Level::TRACE).then(|| summary.clone());
                let fence = fenced(&summary);
                let affected = index.changed(summary, deleted);
                // The owned-object cache (fed by watches of its own) never answers with
                // an older version than the index has seen: the reconcile this change
                // queues reads it, and so does one queued for anything later (a Cluster
                // changed only in what another applier's reconcile wrote on it queues
                // nothing, but the next reconcile must read that write).
                if let (Some(cache), Some((group, kind, namespace, name, cluster))) = (api.owned_cache(), fence) {
                    cache.fence(&group, &kind, &namespace, &name, &cluster, resource_version.as_deref());
                }
                if let Some(summary) = traced.filter(|_| !affected.clusters.is_empty()) {
                    tracing::trace!(clusters = ?affected.clusters, deleted, ?summary, "change queues");
                }
                if affected.new_kinds {
                    for (api_version, kind) in index.template_kinds().clone() {
                        if watched.insert((api_version.clone(), kind.clone())) {
                            match spawn_watch(&api, &api_version, &kind, &tx, &watch_errors).await {
                                Some(task) => tasks.0.push(task),
                                None => { unwatched.insert((api_version, kind)); }
                            }
                        }
                    }
                }
                if affected.extension_config && let Some(changed) = &configs_changed {
                    let _ = changed.send(());
                }
                if affected.class_level {
                    again.push((Instant::now() + CLASS_CACHE_SETTLE, affected.clusters.clone()));
                }
                pending.changed(affected.clusters, Instant::now());
            }
            classes = async { configs_done.as_mut()?.recv().await }, if configs_done.is_some() => {
                match classes {
                    Some(classes) => {
                        let affected = classes.iter().flat_map(|c| index.clusters_of(c)).collect();
                        pending.changed(affected, Instant::now());
                    }
                    None => configs_done = None,
                }
            }
            _ = flush.tick() => {
                let now = Instant::now();
                for (_, clusters) in again.extract_if(.., |(at, _)| *at <= now) {
                    pending.changed(clusters, now);
                }
                let due = pending.due_timed(Instant::now(), watchers.config.quiet, watchers.config.max_delay);
                for (_, lag) in &due {
                    watchers.metrics.watch_lagged(management_cluster, *lag);
                }
                let due: Vec<_> = due.into_iter().map(|(name, _)| name).collect();
                if !due.is_empty() {
                    let _ = to_queue.send(due);
                }
            }
            _ = renew.tick() => {
                if watchers.shares.shed_one(watchers.registry.names().len()) {
                    ended = Ended::Shed;
                    break;
                }
                match watchers.lease.hold(&name, &watchers.holder, ttl).await {
                    Ok(true) => {}
                    Ok(false) => { tracing::warn!(management_cluster, "watch lease lost"); break; }
                    Err(e) => { tracing::warn!(management_cluster, error = %e, "watch lease not renewed"); break; }
                }
                for (api_version, kind) in unwatched.clone() {
                    if !api.serves(&api_version, &kind).await.unwrap_or(false) {
                        continue;
                    }
                    if let Some(task) = spawn_watch(&api, &api_version, &kind, &tx, &watch_errors).await {
                        tracing::info!(management_cluster, kind, api_version, "now served: watching");
                        tasks.0.push(task);
                        unwatched.remove(&(api_version, kind));
                    }
                }
            }
            _ = resync.tick() => { let _ = to_queue.send(index.all_clusters()); }
            _ = shutdown.changed() => break,
        }
    }
    drop(tasks);
    // Changes seen but not queued yet are not lost: the next holder's initial listing
    // and the resync cover them, and queue them now too.
    let _ = to_queue.send(pending.due(Instant::now(), Duration::ZERO, Duration::ZERO));
    drop(to_queue);
    let _ = enqueuer.await;
    ended
}

/// The owned-object cache of a management cluster held while its watch runs.
struct HeldCache(Arc<ManagementCluster>);

impl HeldCache {
    fn hold(api: &Arc<ManagementCluster>) -> HeldCache {
        if let Some(cache) = api.owned_cache() {
            cache.hold(true);
        }
        HeldCache(api.clone())
    }
}

impl Drop for HeldCache {
    fn drop(&mut self) {
        if let Some(cache) = self.0.owned_cache() {
            cache.hold(false);
        }
    }
}

/// Discovers a management cluster's ExtensionConfigs whenever one changes (changes
/// arriving together are handled once), reconciles again the ClusterClasses calling
/// those whose registration changed, and reports those classes so their Clusters are
/// queued.
async fn follow_extension_configs(
    extensions: Arc<RuntimeExtensions>,
    management_cluster: String,
    api: Arc<ManagementCluster>,
    mut changed: mpsc::UnboundedReceiver<()>,
    done: mpsc::UnboundedSender<Vec<(String, String)>>,
) {
    use topograph_reconcile::hooks::LifecycleHooks;
    while changed.recv().await.is_some() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        while changed.try_recv().is_ok() {}
        let (hooks, configs) = extensions.rediscover(&management_cluster, &api).await;
        if configs.is_empty() {
            continue;
        }
        let classes = match api.list(API_VERSION, "ClusterClass", "", &[]).await {
            Ok(classes) => classes,
            Err(e) => {
                tracing::warn!(%management_cluster, error = %e, "ClusterClasses not listed after an ExtensionConfig change");
                continue;
            }
        };
        let mut reconciled = Vec::new();
        for class in classes {
            use topograph_api::object::ObjectExt;
            let Ok(decoded) = topograph_api::load::decode_cluster_class(class.clone()) else {
                continue;
            };
            let called = topograph_reconcile::class::extension_configs_called(&decoded);
            if !configs.iter().any(|c| called.contains(c)) {
                continue;
            }
            let (namespace, name) = (class.namespace().to_string(), class.name().to_string());
            let render = match hooks
                .render_extensions(std::slice::from_ref(&namespace))
                .await
            {
                Ok(render) => render,
                Err(e) => {
                    tracing::warn!(class = %format!("{namespace}/{name}"), error = %e, "runtime extensions unavailable");
                    None
                }
            };
            let extensions = render.as_ref().map(|r| r.extensions.as_ref());
            if let Err(e) = topograph_reconcile::class::reconcile_class_with(
                &api, extensions, &namespace, &name,
            )
            .await
            {
                tracing::warn!(class = %format!("{namespace}/{name}"), error = %e, "ClusterClass reconcile failed");
            }
            reconciled.push((namespace, name));
        }
        if !reconciled.is_empty() && done.send(reconciled).is_err() {
            return;
        }
    }
}

/// Changed Clusters not queued yet, with when they first and last changed.
#[derive(Debug, Default)]
struct Debounce {
    waiting: HashMap<(String, String), (Instant, Instant)>,
}

impl Debounce {
    fn changed(&mut self, names: Vec<(String, String)>, now: Instant) {
        for name in names {
            self.waiting
                .entry(name)
                .and_modify(|(_, last)| *last = now)
                .or_insert((now, now));
        }
    }

    /// The Clusters to queue now: quiet for `quiet`, or waiting for `max_delay`.
    fn due(&mut self, now: Instant, quiet: Duration, max_delay: Duration) -> Vec<(String, String)> {
        self.due_timed(now, quiet, max_delay)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// [`Debounce::due`] with how long each waited since its first change (the
    /// watcher lag the metrics report).
    fn due_timed(
        &mut self,
        now: Instant,
        quiet: Duration,
        max_delay: Duration,
    ) -> Vec<((String, String), Duration)> {
        let mut due = Vec::new();
        self.waiting.retain(|name, (first, last)| {
            let ready =
                now.duration_since(*last) >= quiet || now.duration_since(*first) >= max_delay;
            if ready {
                due.push((name.clone(), now.duration_since(*first)));
            }
            !ready
        });
        due.sort();
        due
    }
}

/// Queues every name received, holding on to the ones the queue refused (Redis
/// restarting, a failover) and trying them again with backoff: a change seen is never
/// dropped for a queue that is briefly away, which would leave its Cluster unreconciled
/// until the next resync. Enqueueing twice is harmless (the queue coalesces). Once the
/// watch stops (the channel closes) the leftovers get `give_up_after` more time: the
/// next lease holder's initial listing queues every Cluster anyway.
async fn enqueue_until_queued<Q: Queue>(
    queue: &Q,
    management_cluster: &str,
    names: &mut mpsc::UnboundedReceiver<Vec<(String, String)>>,
    give_up_after: Duration,
) {
    const FIRST_BACKOFF: Duration = Duration::from_millis(100);
    const MAX_BACKOFF: Duration = Duration::from_secs(5);
    let mut waiting: BTreeSet<(String, String)> = BTreeSet::new();
    let mut backoff = FIRST_BACKOFF;
    // Tokio's clock, so paused-time tests see the same waits.
    let mut closed_at: Option<tokio::time::Instant> = None;
    loop {
        if closed_at.is_none() {
            let received = if waiting.is_empty() {
                names.recv().await
            } else {
                tokio::select! {
                    received = names.recv() => received,
                    _ = tokio::time::sleep(backoff) => Some(Vec::new()),
                }
            };
            match received {
                Some(batch) => waiting.extend(batch),
                None => closed_at = Some(tokio::time::Instant::now()),
            }
        } else {
            tokio::time::sleep(backoff).await;
        }
        waiting = enqueue(queue, management_cluster, std::mem::take(&mut waiting)).await;
        backoff = if waiting.is_empty() {
            FIRST_BACKOFF
        } else {
            (backoff * 2).min(MAX_BACKOFF)
        };
        if let Some(closed) = closed_at {
            if waiting.is_empty() {
                return;
            }
            if closed.elapsed() >= give_up_after {
                tracing::warn!(
                    management_cluster,
                    keys = waiting.len(),
                    "queue unreachable; leaving these changes to the next watcher's listing"
                );
                return;
            }
        }
    }
}

/// Queues `names`, returning the ones the queue refused.
async fn enqueue<Q: Queue>(
    queue: &Q,
    management_cluster: &str,
    names: BTreeSet<(String, String)>,
) -> BTreeSet<(String, String)> {
    let mut refused = BTreeSet::new();
    let mut names = names.into_iter();
    while let Some((namespace, name)) = names.next() {
        let key = ClusterKey::new(management_cluster, &namespace, &name).to_string();
        // A root span per change seen, so a watch-triggered reconcile is one trace too.
        let span = tracing::info_span!(parent: None, "enqueue", key = %key, source = "watch");
        let context = span.in_scope(topograph_telemetry::trace::current_context);
        let queued = queue.enqueue_traced(&key, context.as_deref());
        if let Err(e) = tracing::Instrument::instrument(queued, span).await {
            tracing::warn!(%key, error = %e, "queue: enqueue failed; will retry");
            // The queue is most likely away for all of them: keep the rest for the next try.
            refused.insert((namespace, name));
            refused.extend(names);
            break;
        }
    }
    refused
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use topograph_queue::{Job, MemoryQueue, QueueConfig, QueueError, QueueStats};

    /// A queue whose first `refuse` enqueues fail, like Redis while it restarts.
    struct Away {
        inner: MemoryQueue,
        refuse: AtomicU32,
    }

    impl Queue for Away {
        async fn enqueue(&self, key: &str) -> Result<(), QueueError> {
            if self
                .refuse
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Err(QueueError::Backend("connection refused".into()));
            }
            self.inner.enqueue(key).await
        }
        async fn take(&self, consumer: &str, wait: Duration) -> Result<Option<Job>, QueueError> {
            self.inner.take(consumer, wait).await
        }
        async fn ack(&self, job: &Job) -> Result<(), QueueError> {
            self.inner.ack(job).await
        }
        async fn retry(&self, job: &Job) -> Result<(), QueueError> {
            self.inner.retry(job).await
        }
        async fn ack_after(&self, job: &Job, delay: Duration) -> Result<(), QueueError> {
            self.inner.ack_after(job, delay).await
        }
        async fn stats(&self) -> Result<QueueStats, QueueError> {
            self.inner.stats().await
        }
    }

    fn names(list: &[&str]) -> Vec<(String, String)> {
        list.iter()
            .map(|n| ("ns".to_string(), n.to_string()))
            .collect()
    }

    async fn queued(queue: &Away) -> BTreeSet<String> {
        let mut keys = BTreeSet::new();
        while let Ok(Some(job)) = queue.take("test", Duration::from_millis(10)).await {
            keys.insert(job.key.clone());
        }
        keys
    }

    #[tokio::test(start_paused = true)]
    async fn changes_seen_while_the_queue_is_away_are_queued_once_it_is_back() {
        let queue = Away {
            inner: MemoryQueue::new(QueueConfig::default()),
            refuse: AtomicU32::new(5),
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        tx.send(names(&["a", "b"])).unwrap();
        tx.send(names(&["c"])).unwrap();
        drop(tx);
        enqueue_until_queued(&queue, "mgmt", &mut rx, Duration::from_secs(60)).await;
        assert_eq!(
            queued(&queue).await,
            BTreeSet::from(["mgmt/ns/a".into(), "mgmt/ns/b".into(), "mgmt/ns/c".into()])
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_queue_away_for_good_is_given_up_on_after_the_watch_stops() {
        let queue = Away {
            inner: MemoryQueue::new(QueueConfig::default()),
            refuse: AtomicU32::new(u32::MAX),
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        tx.send(names(&["a"])).unwrap();
        drop(tx);
        let started = tokio::time::Instant::now();
        enqueue_until_queued(&queue, "mgmt", &mut rx, Duration::from_secs(15)).await;
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(15) && waited < Duration::from_secs(25),
            "{waited:?}"
        );
        queue.refuse.store(0, Ordering::SeqCst);
        assert!(queued(&queue).await.is_empty());
    }

    /// Leases held and released, as a shared store would see them.
    #[derive(Default)]
    struct Recorded {
        held: std::sync::Mutex<BTreeSet<String>>,
    }

    impl Lease for Recorded {
        async fn hold(&self, name: &str, _: &str, _: Duration) -> Result<bool, String> {
            self.held.lock().unwrap().insert(name.to_string());
            Ok(true)
        }
        async fn release(&self, name: &str, _: &str) -> Result<(), String> {
            self.held.lock().unwrap().remove(name);
            Ok(())
        }
    }

    /// In-memory management clusters serving Cluster API's CRDs, by name, and their
    /// servers (which stop when dropped).
    async fn management_clusters(
        names: &[&str],
    ) -> (
        Vec<(String, Arc<ManagementCluster>)>,
        Vec<topograph_kube::RunningServer>,
    ) {
        let mut clusters = Vec::new();
        let mut servers = Vec::new();
        for name in names {
            let server = topograph_kube::Server::start(topograph_kube::Config {
                seed: topograph_management::crds::cluster_api(),
                ..topograph_kube::Config::default()
            })
            .await
            .unwrap();
            let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
                .await
                .unwrap();
            clusters.push((name.to_string(), Arc::new(api)));
            servers.push(server);
        }
        (clusters, servers)
    }

    /// A shutdown while watching releases every watch lease at once, well inside the
    /// shutdown deadline, so another applier can take the watches over immediately; the
    /// owned-object caches are held while watching and released with the leases.
    #[tokio::test]
    async fn a_shutdown_releases_every_watch_lease_at_once() {
        let (clusters, _servers) = management_clusters(&["mgmt-a", "mgmt-b"]).await;
        let clusters: Vec<(String, Arc<ManagementCluster>)> = clusters
            .into_iter()
            .map(|(name, api)| (name, Arc::new(api.with_owned_cache())))
            .collect();
        let caches: Vec<Arc<ManagementCluster>> =
            clusters.iter().map(|(_, api)| api.clone()).collect();
        let held = || {
            caches
                .iter()
                .filter(|api| api.owned_cache().is_some_and(|c| c.is_held()))
                .count()
        };
        assert_eq!(held(), 0);
        let lease = Arc::new(Recorded::default());
        let watchers = Arc::new(Watchers {
            queue: Arc::new(MemoryQueue::new(QueueConfig::default())),
            lease: lease.clone(),
            holder: "applier-0".to_string(),
            registry: Arc::new(Registry::fixed(clusters)),
            metrics: Arc::new(Metrics::default()),
            config: WatchConfig {
                lease_ttl: Duration::from_secs(30),
                ..WatchConfig::default()
            },
            extensions: None,
            shares: Shares::default(),
        });
        let (stop, stopped) = watch::channel(false);
        let running = tokio::spawn(run(watchers, stopped));
        let started = Instant::now();
        while lease.held.lock().unwrap().len() < 2 {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "leases never taken"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Let the watches start before the shutdown comes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(held(), 2, "caches held while watching");
        let stopping = Instant::now();
        stop.send(true).unwrap();
        running.await.unwrap();
        assert!(
            stopping.elapsed() < Duration::from_secs(3),
            "shutdown took {:?}",
            stopping.elapsed()
        );
        assert!(
            lease.held.lock().unwrap().is_empty(),
            "still held: {:?}",
            lease.held.lock().unwrap()
        );
        assert_eq!(held(), 0, "caches released with the watches");
    }

    /// A lease store shared by several appliers in one test: leases by name with their
    /// holder, and the holders alive.
    #[derive(Default)]
    struct SharedLeases {
        leases: std::sync::Mutex<BTreeMap<String, String>>,
        members: std::sync::Mutex<BTreeSet<String>>,
    }

    impl SharedLeases {
        fn held_by(&self, holder: &str) -> usize {
            self.leases
                .lock()
                .unwrap()
                .values()
                .filter(|h| *h == holder)
                .count()
        }
    }

    impl Lease for Arc<SharedLeases> {
        async fn hold(&self, name: &str, holder: &str, _: Duration) -> Result<bool, String> {
            let mut leases = self.leases.lock().unwrap();
            let owner = leases
                .entry(name.to_string())
                .or_insert_with(|| holder.to_string());
            Ok(owner == holder)
        }
        async fn release(&self, name: &str, holder: &str) -> Result<(), String> {
            let mut leases = self.leases.lock().unwrap();
            if leases.get(name).is_some_and(|h| h == holder) {
                leases.remove(name);
            }
            Ok(())
        }
        async fn members(&self, holder: &str, _: Duration) -> Result<usize, String> {
            let mut members = self.members.lock().unwrap();
            members.insert(holder.to_string());
            Ok(members.len())
        }
        async fn leave(&self, holder: &str) -> Result<(), String> {
            self.members.lock().unwrap().remove(holder);
            Ok(())
        }
    }

    /// The first applier up takes every watch lease; a second one arriving gets half of
    /// them, the first giving up what is over its share.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watch_leases_are_shared_out_among_the_appliers() {
        let (clusters, _servers) =
            management_clusters(&["mgmt-0", "mgmt-1", "mgmt-2", "mgmt-3"]).await;
        let registry = Arc::new(Registry::fixed(clusters));
        let store = Arc::new(SharedLeases::default());
        let applier = |holder: &str| {
            Arc::new(Watchers {
                queue: Arc::new(MemoryQueue::new(QueueConfig::default())),
                lease: Arc::new(store.clone()),
                holder: holder.to_string(),
                registry: registry.clone(),
                metrics: Arc::new(Metrics::default()),
                config: WatchConfig {
                    lease_ttl: Duration::from_millis(900),
                    ..WatchConfig::default()
                },
                extensions: None,
                shares: Shares::default(),
            })
        };
        let wait = async |what: &str, check: &dyn Fn() -> bool| {
            let started = Instant::now();
            while !check() {
                assert!(started.elapsed() < Duration::from_secs(15), "{what}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        let (stop, stopped) = watch::channel(false);
        let first = tokio::spawn(run(applier("applier-a"), stopped.clone()));
        wait("the first applier takes all four", &|| {
            store.held_by("applier-a") == 4
        })
        .await;
        let second = tokio::spawn(run(applier("applier-b"), stopped));
        wait("two each", &|| {
            store.held_by("applier-a") == 2 && store.held_by("applier-b") == 2
        })
        .await;
        // And it stays so.
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(store.held_by("applier-a"), 2);
        assert_eq!(store.held_by("applier-b"), 2);
        stop.send(true).unwrap();
        first.await.unwrap();
        second.await.unwrap();
        assert!(store.leases.lock().unwrap().is_empty());
        assert!(store.members.lock().unwrap().is_empty());
    }

    #[test]
    fn a_burst_is_queued_once_after_it_goes_quiet_and_churn_within_the_max_delay() {
        let mut d = Debounce::default();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let a = ("ns".to_string(), "a".to_string());
        for i in 0..10 {
            d.changed(vec![a.clone()], t0 + ms(i * 100));
            assert!(d.due(t0 + ms(i * 100 + 50), ms(500), ms(5000)).is_empty());
        }
        assert!(d.due(t0 + ms(1200), ms(500), ms(5000)).is_empty());
        assert_eq!(
            d.due(t0 + ms(1400), ms(500), ms(5000)),
            std::slice::from_ref(&a)
        );
        assert!(
            d.due(t0 + ms(9000), ms(500), ms(5000)).is_empty(),
            "queued once"
        );
        // Constant churn: queued after the max delay anyway.
        for i in 0..60 {
            d.changed(vec![a.clone()], t0 + ms(10_000 + i * 100));
        }
        assert_eq!(d.due(t0 + ms(15_950), ms(500), ms(5000)), [a]);
    }
}
