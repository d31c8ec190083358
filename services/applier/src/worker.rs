//! Reconcilers: each takes a Cluster key from the queue, reconciles it on its
//! management cluster, and acknowledges it only once the reconcile finished (or hands
//! it back for a retry with backoff). Shutdown stops taking, lets the reconcile in
//! hand finish and acknowledges it, so nothing is lost and nothing is done twice.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use topograph_queue::{Job, Queue, QueueError};

use crate::extensions::RuntimeExtensions;
use crate::metrics::Metrics;
use topograph_engine::Engine;
use topograph_management::keys::ClusterKey;
use topograph_management::registry::Registry;
use topograph_reconcile::reconcile_cluster_with_hooks;

/// What every reconciler of a process shares.
pub struct Context<Q> {
    /// The job queue.
    pub queue: Arc<Q>,
    /// The management clusters.
    pub registry: Arc<Registry>,
    /// Where desired states come from.
    pub engine: Arc<dyn Engine>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Longest time one reconcile may take.
    pub reconcile_timeout: Duration,
    /// How often a reconcile in progress renews its job's lease, so a slow management
    /// cluster never lets a second worker take the same key.
    pub lease_renewal: Duration,
    /// Runtime SDK extensions per management cluster, for the lifecycle hooks.
    pub extensions: Arc<RuntimeExtensions>,
}

/// Runs one reconciler named `consumer` until `shutdown` turns true.
pub async fn run<Q: Queue>(
    context: Arc<Context<Q>>,
    consumer: String,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        if *shutdown.borrow() {
            return;
        }
        // A short wait keeps shutdown prompt without ever dropping a take in the middle.
        let wait = Duration::from_millis(500);
        // With owned-object caches, the Clusters of management clusters this process
        // watches come here first (their reads are cached here); others' once they
        // have waited, so nothing waits on a busy or missing watcher.
        let taken = match context.registry.held_caches() {
            Some(preferred) => {
                context
                    .queue
                    .take_preferring(&consumer, wait, &preferred)
                    .await
            }
            None => context.queue.take(&consumer, wait).await,
        };
        let job = match taken {
            Ok(Some(job)) => job,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "queue: take failed");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = shutdown.changed() => {}
                }
                continue;
            }
        };
        handle(&context, &consumer, &job).await;
    }
}

/// Reconciles `job` in a `reconcile` span that continues the trace of the enqueue the
/// job comes from (an Apply's, a watcher's), or starts one.
async fn handle<Q: Queue>(context: &Context<Q>, consumer: &str, job: &Job) {
    let key = ClusterKey::parse(&job.key);
    let span = tracing::info_span!(
        "reconcile",
        key = %job.key,
        management_cluster = key.as_ref().map_or("", |k| k.management_cluster.as_str()),
        cluster = %key.as_ref().map_or(String::new(), |k| format!("{}/{}", k.namespace, k.name)),
        class = tracing::field::Empty,
        attempt = job.attempt,
        consumer,
        outcome = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    if let Some(parent) = &job.trace_context {
        topograph_telemetry::trace::set_parent(&span, parent);
    }
    tracing::Instrument::instrument(reconcile_job(context, consumer, job), span).await;
}

/// Records how the reconcile in hand ended on its span.
fn outcome(outcome: &'static str) {
    let span = tracing::Span::current();
    span.record("outcome", outcome);
    // Trace views flag failed reconciles by the span status.
    if matches!(outcome, "error" | "timeout") {
        span.record("otel.status_code", "ERROR");
    }
}

/// How many times a job for a management cluster this process does not know is tried
/// again before it is dropped.
const UNKNOWN_MANAGEMENT_CLUSTER_TRIES: u32 = 4;

async fn reconcile_job<Q: Queue>(context: &Context<Q>, consumer: &str, job: &Job) {
    let started = Instant::now();
    let Some(key) = ClusterKey::parse(&job.key) else {
        tracing::warn!(key = %job.key, "queue: malformed key dropped");
        outcome("dropped");
        ack(context, job).await;
        return;
    };
    let Some(api) = context.registry.get(&key.management_cluster) else {
        // Either just registered (the gateway queues a Cluster applied to a management
        // cluster this applier has not read yet: the registry refreshes every few
        // seconds) or removed. The first few tries back off (0.5 + 1 + 2 + 4 s with
        // the default queue settings) to cover the former; then it is dropped.
        if job.attempt < UNKNOWN_MANAGEMENT_CLUSTER_TRIES {
            tracing::info!(key = %job.key, attempt = job.attempt, "management cluster unknown yet; trying again later");
            outcome("retry");
            if let Err(e) = context.queue.retry(job).await {
                tracing::warn!(key = %job.key, error = %e, "queue: retry failed");
            }
            return;
        }
        tracing::info!(key = %job.key, "management cluster unknown; dropped");
        context.metrics.reconciled("skipped", 0.0, 0);
        outcome("skipped");
        ack(context, job).await;
        return;
    };
    // Writes are counted by kind for the metrics; the registry's client stays as it is.
    let api = api.with_write_observer(context.metrics.write_observer(&key.management_cluster));
    let hooks = context
        .extensions
        .hooks(&key.management_cluster, &api)
        .await;
    let reconcile = reconcile_cluster_with_hooks(
        &api,
        context.engine.as_ref(),
        &hooks,
        &key.namespace,
        &key.name,
    );
    let result = tokio::select! {
        result = tokio::time::timeout(context.reconcile_timeout, reconcile) => result,
        lost = keep_lease(context.queue.as_ref(), job, context.lease_renewal) => {
            // Another worker holds the key now: neither ack nor retry is ours to do.
            tracing::warn!(key = %job.key, consumer, error = %lost, "lease lost; leaving the key to its new holder");
            outcome("lease lost");
            return;
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    match result {
        Ok(Ok(outcome)) => {
            tracing::info!(
                key = %job.key, consumer, created = outcome.created, updated = outcome.updated,
                deleted = outcome.deleted, writes = outcome.writes, seconds, "reconciled"
            );
            context.metrics.reconciled("ok", seconds, outcome.writes);
            self::outcome("ok");
            if outcome.requeue_after_seconds > 0 {
                // A lifecycle hook holds the Cluster: the queue brings it back then, no
                // worker waits for it.
                let delay = Duration::from_secs(outcome.requeue_after_seconds);
                if let Err(e) = context.queue.ack_after(job, delay).await {
                    tracing::warn!(key = %job.key, error = %e, "queue: requeue failed");
                }
            } else {
                ack(context, job).await;
            }
        }
        Ok(Err(e)) if is_gone(&e) => {
            tracing::info!(key = %job.key, consumer, seconds, "reconciled: Cluster gone");
            context.metrics.reconciled("ok", seconds, 0);
            outcome("gone");
            ack(context, job).await;
        }
        Ok(Err(e)) => {
            tracing::info!(key = %job.key, consumer, attempt = job.attempt, error = %e, seconds, "reconcile failed");
            context.metrics.reconciled("error", seconds, 0);
            outcome("error");
            if let Some(kind) = crate::metrics::failure_kind(&e) {
                context
                    .metrics
                    .management_cluster_error(&key.management_cluster, kind);
            }
            if let Err(e) = context.queue.retry(job).await {
                tracing::warn!(key = %job.key, error = %e, "queue: retry failed");
            }
        }
        Err(_) => {
            tracing::warn!(key = %job.key, consumer, seconds, "reconcile timed out");
            outcome("timeout");
            context.metrics.reconciled("error", seconds, 0);
            context
                .metrics
                .management_cluster_error(&key.management_cluster, "timeout");
            if let Err(e) = context.queue.retry(job).await {
                tracing::warn!(key = %job.key, error = %e, "queue: retry failed");
            }
        }
    }
}

/// Renews `job`'s lease every `every` for as long as it is polled; ends only when the
/// lease is lost (another consumer took the key). A queue that is briefly away is
/// tried again at the next renewal: the lease outlives two missed ones.
async fn keep_lease<Q: Queue>(queue: &Q, job: &Job, every: Duration) -> QueueError {
    let mut renew = tokio::time::interval(every.max(Duration::from_millis(10)));
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    renew.tick().await;
    loop {
        renew.tick().await;
        match queue.extend(job).await {
            Ok(()) => {}
            Err(lost @ QueueError::LeaseLost(_)) => return lost,
            Err(e) => tracing::warn!(key = %job.key, error = %e, "queue: lease not renewed"),
        }
    }
}

fn is_gone(e: &topograph_reconcile::ReconcileError) -> bool {
    matches!(e, topograph_reconcile::ReconcileError::ClusterNotFound(_))
}

async fn ack<Q: Queue>(context: &Context<Q>, job: &Job) {
    if let Err(e) = context.queue.ack(job).await {
        tracing::warn!(key = %job.key, error = %e, "queue: ack failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topograph_queue::{MemoryQueue, QueueConfig};

    /// A reconcile that outlasts the job's lease keeps the key: renewals hold off every
    /// other consumer, and once they stop (the process died) another takes it over.
    #[tokio::test(start_paused = true)]
    async fn renewals_keep_a_long_reconcile_s_key_and_end_when_it_is_lost() {
        let queue = Arc::new(MemoryQueue::new(QueueConfig {
            lease: Duration::from_secs(3),
            ..QueueConfig::default()
        }));
        queue.enqueue("mc/ns/c").await.unwrap();
        let job = queue
            .take("a", Duration::from_secs(1))
            .await
            .unwrap()
            .unwrap();
        let renewing = {
            let (queue, job) = (queue.clone(), job.clone());
            tokio::spawn(
                async move { keep_lease(queue.as_ref(), &job, Duration::from_secs(1)).await },
            )
        };
        // Ten leases long: nobody else gets the key.
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert!(
            queue
                .take("b", Duration::from_millis(10))
                .await
                .unwrap()
                .is_none(),
            "another consumer took a key whose lease was being renewed"
        );
        // The holder dies: the lease runs out and another consumer takes over...
        renewing.abort();
        tokio::time::sleep(Duration::from_secs(4)).await;
        let taken = queue.take("b", Duration::from_secs(1)).await.unwrap();
        assert_eq!(taken.map(|j| j.key), Some("mc/ns/c".to_string()));
        // ...and the old holder's renewals end, reporting the loss.
        let lost = tokio::time::timeout(
            Duration::from_secs(5),
            keep_lease(queue.as_ref(), &job, Duration::from_secs(1)),
        )
        .await
        .expect("renewals end once the lease is lost");
        assert!(matches!(lost, QueueError::LeaseLost(_)), "{lost}");
    }

    /// A Cluster applied to a management cluster the registry has not read yet is not
    /// lost to the race: the job comes back with backoff a few times, then goes.
    #[tokio::test]
    async fn a_job_for_an_unknown_management_cluster_is_retried_then_dropped() {
        let queue = Arc::new(MemoryQueue::new(QueueConfig {
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(1),
            ..QueueConfig::default()
        }));
        let context = Context {
            queue: queue.clone(),
            registry: Arc::new(Registry::fixed([])),
            engine: Arc::new(topograph_engine::Local),
            metrics: Arc::new(Metrics::new()),
            reconcile_timeout: Duration::from_secs(1),
            lease_renewal: Duration::from_millis(300),
            extensions: Arc::new(RuntimeExtensions::new(Duration::from_secs(10))),
        };
        let key = ClusterKey::new("new-mc", "ns", "c").to_string();
        queue.enqueue(&key).await.unwrap();
        for attempt in 0..=UNKNOWN_MANAGEMENT_CLUSTER_TRIES {
            let job = queue
                .take("w", Duration::from_secs(1))
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("try {attempt}: the job came back"));
            assert_eq!(job.attempt, attempt);
            reconcile_job(&context, "w", &job).await;
        }
        let stats = queue.stats().await.unwrap();
        assert_eq!((stats.depth, stats.delayed), (0, 0), "dropped at last");
        assert!(
            queue
                .take("w", Duration::from_millis(20))
                .await
                .unwrap()
                .is_none()
        );
    }
}
