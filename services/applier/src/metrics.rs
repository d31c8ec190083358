//! The applier's Prometheus metrics: reconciles by result and their duration, watch
//! events, and the queue's gauges (depth, delayed, in flight, age of the oldest job,
//! retries), read from the queue at scrape time.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use topograph_queue::QueueStats;

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

/// The applier's metrics.
pub struct Metrics {
    /// Reconciles by result.
    pub reconciles: Family<ResultLabels, Counter>,
    /// Reconcile duration in seconds.
    pub duration: Histogram,
    /// Objects written by reconciles.
    pub writes: Counter,
    /// Watch events mapped to Cluster keys.
    pub watch_events: Family<WatchLabels, Counter>,
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

impl Metrics {
    /// Registers the metrics.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("topograph_applier");
        let reconciles = Family::<ResultLabels, Counter>::default();
        registry.register(
            "reconciles",
            "Cluster reconciles by result",
            reconciles.clone(),
        );
        let duration = Histogram::new(exponential_buckets(0.001, 2.0, 16));
        registry.register(
            "reconcile_duration_seconds",
            "Time of one Cluster reconcile",
            duration.clone(),
        );
        let writes = Counter::default();
        registry.register(
            "writes",
            "Write requests made by reconciles",
            writes.clone(),
        );
        let watch_events = Family::<WatchLabels, Counter>::default();
        registry.register(
            "watch_events",
            "Changes seen by the watchers, by management cluster",
            watch_events.clone(),
        );
        let queue_depth = Gauge::default();
        registry.register("queue_depth", "Cluster keys waiting", queue_depth.clone());
        let queue_delayed = Gauge::default();
        registry.register(
            "queue_delayed",
            "Cluster keys waiting for a retry",
            queue_delayed.clone(),
        );
        let queue_in_flight = Gauge::default();
        registry.register(
            "queue_in_flight",
            "Cluster keys being reconciled",
            queue_in_flight.clone(),
        );
        let queue_oldest_seconds = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "queue_oldest_job_age_seconds",
            "Age of the oldest waiting key",
            queue_oldest_seconds.clone(),
        );
        let queue_retries = Gauge::default();
        registry.register("queue_retries", "Retries scheduled", queue_retries.clone());
        Metrics {
            reconciles,
            duration,
            writes,
            watch_events,
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
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.queue_depth.set(clamp(stats.depth));
        self.queue_delayed.set(clamp(stats.delayed));
        self.queue_in_flight.set(clamp(stats.in_flight));
        self.queue_oldest_seconds
            .set(stats.oldest_age.as_secs_f64());
        self.queue_retries.set(clamp(stats.retries));
    }

    /// The OpenMetrics text.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
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
}

/// Shared metrics.
pub type SharedMetrics = Arc<Metrics>;
