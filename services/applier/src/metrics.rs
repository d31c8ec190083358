//! The applier's Prometheus metrics: reconciles by result and their duration, watch
//! events, and the queue's gauges (depth, delayed, in flight, age of the oldest job,
//! retries), read from the queue at scrape time. Also writes by management cluster, kind
//! and verb (counted by `topograph_management::api` through a [`topograph_management::api::WriteObserver`]), errors
//! of the management clusters by kind of failure, watcher lag (a Cluster's first
//! unqueued change to its hand-over to the queue) and the engine's time by class
//! ([`TimedEngine`]).

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use topograph_api::object::ObjectExt;
use topograph_engine::DesiredState;
use topograph_queue::QueueStats;

use serde_json::Value;
use topograph_engine::Engine;
use topograph_engine::admission::Verdict;
use topograph_engine::service::{BoxFuture, Plan, RenderFailure, RenderInputs, Unavailable};
use topograph_management::api::WriteObserver;
use topograph_reconcile::ReconcileError;

/// Labels of the reconcile metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// `ok`, `error` or `skipped` (management cluster unknown).
    pub result: String,
}

/// Labels of the watch metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WatchLabels {
    /// The management cluster.
    pub management_cluster: String,
}

/// Labels of the write metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WriteLabels {
    /// The management cluster written to.
    pub management_cluster: String,
    /// The object's kind.
    pub kind: String,
    /// `create`, `update`, `patch` or `delete` (status subresource writes included).
    pub verb: String,
}

/// Labels of the management-cluster error metric.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    /// The management cluster.
    pub management_cluster: String,
    /// What failed: see [`failure_kind`], plus `timeout` (a reconcile outlived its
    /// deadline) and `watch` (a watch stream broke and is retried).
    pub kind: String,
}

/// Labels of the engine time metric.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RenderLabels {
    /// The ClusterClass's name.
    pub class: String,
    /// `ok` or `error`.
    pub result: String,
}

/// Labels of the rollout metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RolloutLabels {
    /// The management cluster.
    pub management_cluster: String,
    /// The rollout policy (`namespace/name`, the class's).
    pub policy: String,
}

/// Labels of the rollout event metric.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RolloutEventLabels {
    /// The management cluster.
    pub management_cluster: String,
    /// The Event's reason (`RolloutStarted`, `RolloutWaveOpened`, `RolloutHalted`, ...).
    pub reason: String,
}

/// Labels of the rollout phase gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RolloutPhaseLabels {
    /// The management cluster.
    pub management_cluster: String,
    /// The rollout policy.
    pub policy: String,
    /// The phase (1 for the policy's current one, 0 for the others it had).
    pub phase: String,
}

/// Rollout metrics (`topograph_rollout_*`), decision 0030.
pub struct RolloutMetrics {
    /// Clusters pinned to a revision (moved, or moved back).
    pub pins: Family<RolloutLabels, Counter>,
    /// What happened to rollouts, by Event reason.
    pub events: Family<RolloutEventLabels, Counter>,
    /// Class revisions recorded.
    pub revisions: Family<WatchLabels, Counter>,
    /// Each policy's phase.
    pub phase: Family<RolloutPhaseLabels, Gauge>,
    registry: Registry,
}

impl RolloutMetrics {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("topograph_rollout");
        RolloutMetrics {
            pins: registered(
                &mut registry,
                "pins",
                "Clusters pinned to a class revision by a rollout (moved or moved back)",
                Family::default(),
            ),
            events: registered(
                &mut registry,
                "events",
                "Rollout Events by reason",
                Family::default(),
            ),
            revisions: registered(
                &mut registry,
                "revisions",
                "ClusterClass revisions recorded",
                Family::default(),
            ),
            phase: registered(
                &mut registry,
                "phase",
                "1 for each rollout policy's current phase",
                Family::default(),
            ),
            registry,
        }
    }
}

/// The applier's metrics.
pub struct Metrics {
    /// Rollouts.
    pub rollout: RolloutMetrics,
    /// Reconciles by result.
    pub reconciles: Family<ResultLabels, Counter>,
    /// Reconcile duration in seconds.
    pub duration: Histogram,
    /// Objects written by reconciles.
    pub writes: Counter,
    /// Watch events mapped to Cluster keys.
    pub watch_events: Family<WatchLabels, Counter>,
    /// Writes sent to management clusters by kind and verb (dry runs excluded).
    pub object_writes: Family<WriteLabels, Counter>,
    /// Failures talking to management clusters, by kind of failure.
    pub management_cluster_errors: Family<ErrorLabels, Counter>,
    /// Seconds from a Cluster's first unqueued change to its hand-over to the queue.
    pub watch_lag: Family<WatchLabels, Histogram>,
    /// Seconds the engine took for one desired state, by class.
    pub render_duration: Family<RenderLabels, Histogram>,
    /// Management clusters this process watches (holds the watch lease of).
    pub watches_held: Gauge,
    owned_cache_objects: Gauge,
    owned_cache_bytes: Gauge,
    queue_depth: Gauge,
    queue_delayed: Gauge,
    queue_in_flight: Gauge,
    queue_oldest_seconds: Gauge<f64, AtomicU64>,
    queue_retries: Gauge,
    registry: Registry,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// Registers `metric` under `name` and hands it back for the [`Metrics`] field.
fn registered<M: prometheus_client::registry::Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    metric: M,
) -> M {
    registry.register(name, help, metric.clone());
    metric
}

impl Metrics {
    /// Registers the metrics.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("topograph_applier");
        let reconciles = registered(
            &mut registry,
            "reconciles",
            "Cluster reconciles by result",
            Family::<ResultLabels, Counter>::default(),
        );
        let duration = registered(
            &mut registry,
            "reconcile_duration_seconds",
            "Time of one Cluster reconcile",
            Histogram::new(exponential_buckets(0.001, 2.0, 16)),
        );
        let writes = registered(
            &mut registry,
            "writes",
            "Write requests made by reconciles",
            Counter::default(),
        );
        let watch_events = registered(
            &mut registry,
            "watch_events",
            "Changes seen by the watchers, by management cluster",
            Family::<WatchLabels, Counter>::default(),
        );
        let object_writes = registered(
            &mut registry,
            "object_writes",
            "Writes sent to management clusters by kind and verb",
            Family::<WriteLabels, Counter>::default(),
        );
        let management_cluster_errors = registered(
            &mut registry,
            "management_cluster_errors",
            "Failures talking to management clusters, by kind of failure",
            Family::<ErrorLabels, Counter>::default(),
        );
        // 10 ms to about 80 s: the quiet period (500 ms) and the maximum delay (10 s)
        // are the expected range; beyond is a watcher falling behind.
        let watch_lag = registered(
            &mut registry,
            "watch_lag_seconds",
            "Time from a Cluster's first unqueued change to its hand-over to the queue",
            Family::<WatchLabels, Histogram>::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.01, 2.0, 14))
            }),
        );
        // 500 µs to about 16 s.
        let render_duration = registered(
            &mut registry,
            "render_duration_seconds",
            "Time of one desired state from the engine, by ClusterClass",
            Family::<RenderLabels, Histogram>::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.0005, 2.0, 16))
            }),
        );
        let watches_held = registered(
            &mut registry,
            "watches_held",
            "Management clusters this applier watches (their watch leases held)",
            Gauge::default(),
        );
        let owned_cache_objects = registered(
            &mut registry,
            "owned_cache_objects",
            "Objects kept in the owned-object caches of the management clusters this applier watches",
            Gauge::default(),
        );
        let owned_cache_bytes = registered(
            &mut registry,
            "owned_cache_bytes",
            "Bytes of the owned-object caches' compressed texts and dictionaries",
            Gauge::default(),
        );
        let queue_depth = registered(
            &mut registry,
            "queue_depth",
            "Cluster keys waiting",
            Gauge::default(),
        );
        let queue_delayed = registered(
            &mut registry,
            "queue_delayed",
            "Cluster keys waiting for a retry",
            Gauge::default(),
        );
        let queue_in_flight = registered(
            &mut registry,
            "queue_in_flight",
            "Cluster keys being reconciled",
            Gauge::default(),
        );
        let queue_oldest_seconds = registered(
            &mut registry,
            "queue_oldest_job_age_seconds",
            "Age of the oldest waiting key",
            Gauge::<f64, AtomicU64>::default(),
        );
        let queue_retries = registered(
            &mut registry,
            "queue_retries",
            "Retries scheduled",
            Gauge::default(),
        );
        Metrics {
            rollout: RolloutMetrics::new(),
            reconciles,
            duration,
            writes,
            watch_events,
            object_writes,
            management_cluster_errors,
            watch_lag,
            render_duration,
            watches_held,
            owned_cache_objects,
            owned_cache_bytes,
            queue_depth,
            queue_delayed,
            queue_in_flight,
            queue_oldest_seconds,
            queue_retries,
            registry,
        }
    }

    /// Counts one reconcile.
    pub fn reconciled(&self, result: &str, seconds: f64, writes: u64) {
        self.reconciles
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .inc();
        self.duration.observe(seconds);
        self.writes.inc_by(writes);
    }

    /// Publishes the queue's gauges.
    pub fn queue(&self, stats: &QueueStats) {
        self.queue_depth.set(gauge_value(stats.depth));
        self.queue_delayed.set(gauge_value(stats.delayed));
        self.queue_in_flight.set(gauge_value(stats.in_flight));
        self.queue_oldest_seconds
            .set(stats.oldest_age.as_secs_f64());
        self.queue_retries.set(gauge_value(stats.retries));
    }

    /// Publishes the owned-object caches' gauges.
    pub fn owned_caches(&self, size: topograph_management::owned_cache::CacheSize) {
        self.owned_cache_objects.set(gauge_value(size.objects));
        self.owned_cache_bytes.set(gauge_value(size.bytes));
    }

    /// The OpenMetrics text.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Two registries (two prefixes); the OpenMetrics `# EOF` ends only the whole.
        let mut rollout = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err()
            || prometheus_client::encoding::text::encode(&mut rollout, &self.rollout.registry)
                .is_err()
        {
            return String::new();
        }
        if let Some(body) = out.strip_suffix("# EOF\n") {
            let mut joined = body.to_string();
            joined.push_str(&rollout);
            return joined;
        }
        out
    }

    /// Reconciles so far with `result`.
    pub fn reconcile_count(&self, result: &str) -> u64 {
        self.reconciles
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .get()
    }

    /// Counts one failure of `management_cluster` of kind `kind`.
    pub fn management_cluster_error(&self, management_cluster: &str, kind: &str) {
        self.management_cluster_errors
            .get_or_create(&ErrorLabels {
                management_cluster: management_cluster.to_string(),
                kind: kind.to_string(),
            })
            .inc();
    }

    /// Observes the lag of a Cluster handed to the queue.
    pub fn watch_lagged(&self, management_cluster: &str, lag: Duration) {
        self.watch_lag
            .get_or_create(&WatchLabels {
                management_cluster: management_cluster.to_string(),
            })
            .observe(lag.as_secs_f64());
    }

    /// An observer counting the writes sent to `management_cluster`.
    pub fn write_observer(self: &Arc<Self>, management_cluster: &str) -> WriteObserver {
        let metrics = self.clone();
        let management_cluster = management_cluster.to_string();
        Arc::new(move |kind: &str, verb: &'static str| {
            metrics
                .object_writes
                .get_or_create(&WriteLabels {
                    management_cluster: management_cluster.clone(),
                    kind: kind.to_string(),
                    verb: verb.to_string(),
                })
                .inc();
        })
    }
}

/// The kind of failure a reconcile error is, when the management cluster failed (the
/// API server refused, or could not be reached); `None` for failures of the Cluster's
/// own content (render errors, a missing Cluster, unexpected objects).
pub fn failure_kind(e: &ReconcileError) -> Option<&'static str> {
    match e {
        ReconcileError::Api(e) => Some(kube_failure_kind(e)),
        ReconcileError::Render(_)
        | ReconcileError::ClusterNotFound(_)
        | ReconcileError::EngineUnavailable(_) => None,
        ReconcileError::Invalid(_) => None,
        // An extension failed, not the management cluster.
        ReconcileError::Hook(_) => None,
    }
}

/// The kind of failure of a kube-rs error: the API server's answer by class, or how
/// reaching it failed.
pub fn kube_failure_kind(e: &kube::Error) -> &'static str {
    match e {
        kube::Error::Api(status) => match status.code {
            401 => "unauthorized",
            403 => "forbidden",
            404 => "not_found",
            409 => "conflict",
            429 => "throttled",
            500..=599 => "server_error",
            _ => "refused",
        },
        kube::Error::SerdeError(_) => "decode",
        kube::Error::Auth(_) => "auth",
        kube::Error::Discovery(_) => "discovery",
        _ => "unreachable",
    }
}

/// Shared metrics.
pub type SharedMetrics = Arc<Metrics>;

/// An engine whose renders are timed by class into [`Metrics::render_duration`].
pub struct TimedEngine {
    inner: Arc<dyn Engine>,
    metrics: Arc<Metrics>,
}

impl TimedEngine {
    /// Times `inner`'s calls.
    pub fn new(inner: Arc<dyn Engine>, metrics: Arc<Metrics>) -> Self {
        TimedEngine { inner, metrics }
    }
}

impl Engine for TimedEngine {
    fn admit_class<'a>(
        &'a self,
        class: &'a Value,
        old: Option<&'a Value>,
        clusters: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>> {
        self.inner.admit_class(class, old, clusters)
    }

    fn admit_cluster<'a>(
        &'a self,
        cluster: &'a Value,
        old: Option<&'a Value>,
        classes: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>> {
        self.inner.admit_cluster(cluster, old, classes)
    }

    fn plan<'a>(
        &'a self,
        desired: &'a [Value],
        current: &'a [Value],
    ) -> BoxFuture<'a, Result<Plan, Unavailable>> {
        self.inner.plan(desired, current)
    }

    fn render<'a>(
        &'a self,
        inputs: RenderInputs<'a>,
    ) -> BoxFuture<'a, Result<DesiredState, RenderFailure>> {
        Box::pin(async move {
            let started = Instant::now();
            let result = self.inner.render(inputs).await;
            let outcome = match &result {
                Ok(_) => "ok",
                Err(RenderFailure::Refused(_)) => "error",
                Err(RenderFailure::Unavailable(_)) => "unavailable",
            };
            self.metrics
                .render_duration
                .get_or_create(&RenderLabels {
                    class: inputs.class_object.name().to_string(),
                    result: outcome.to_string(),
                })
                .observe(started.elapsed().as_secs_f64());
            result
        })
    }
}

/// A count as a gauge holds it (`i64`), the largest gauge for a count beyond it.
fn gauge_value(count: impl TryInto<i64>) -> i64 {
    count.try_into().unwrap_or(i64::MAX)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_errors_and_lag_appear_in_the_exposition() {
        let metrics = Arc::new(Metrics::new());
        let observe = metrics.write_observer("mc-a");
        observe("MachineDeployment", "create");
        observe("MachineDeployment", "create");
        observe("Cluster", "patch");
        metrics.management_cluster_error("mc-a", "timeout");
        metrics.watch_lagged("mc-a", Duration::from_millis(600));
        let text = metrics.encode();
        for line in [
            "topograph_applier_object_writes_total{management_cluster=\"mc-a\",kind=\"MachineDeployment\",verb=\"create\"} 2",
            "topograph_applier_object_writes_total{management_cluster=\"mc-a\",kind=\"Cluster\",verb=\"patch\"} 1",
            "topograph_applier_management_cluster_errors_total{management_cluster=\"mc-a\",kind=\"timeout\"} 1",
            "topograph_applier_watch_lag_seconds_count{management_cluster=\"mc-a\"} 1",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
    }

    #[test]
    fn failures_are_classified() {
        let api = |code: u16| {
            ReconcileError::Api(kube::Error::Api(Box::new(
                kube::core::Status::failure("no", "Reason").with_code(code),
            )))
        };
        assert_eq!(failure_kind(&api(409)), Some("conflict"));
        assert_eq!(failure_kind(&api(403)), Some("forbidden"));
        assert_eq!(failure_kind(&api(503)), Some("server_error"));
        assert_eq!(failure_kind(&api(422)), Some("refused"));
        assert_eq!(
            failure_kind(&ReconcileError::Render(vec!["x".into()])),
            None
        );
        assert_eq!(failure_kind(&ReconcileError::invalid("x")), None);
    }
}
