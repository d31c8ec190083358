//! The applier's job queue: keys of Clusters to reconcile (`<management cluster>/<namespace>/<name>`).
//!
//! One contract ([`Queue`]), two implementations that pass the same contract tests:
//! Redis Streams for a fleet of applier processes, and an in-process queue for the
//! embedded mode. The semantics every implementation keeps:
//!
//! * **coalescing**: a key already waiting is not queued twice;
//! * **dirty re-run**: a key enqueued while it is being reconciled is handed out again
//!   after that reconcile is acknowledged;
//! * **one at a time**: no two consumers hold the same key at once (a lease that expires,
//!   so a dead consumer's keys come back);
//! * **retries**: [`Queue::retry`] brings a key back after a capped exponential backoff
//!   with jitter;
//! * **trace context**: a job carries the trace context of the enqueue it comes from
//!   ([`Queue::enqueue_traced`], [`Job::trace_context`]);
//! * **at least once**: a key is only gone once [`Queue::ack`] was called for it; a
//!   consumer that dies holding it loses nothing (its jobs are reclaimed after
//!   [`QueueConfig::lease`]).
//!
//! Choices the issue left open, the same in both implementations:
//!
//! * a late [`Queue::ack`], [`Queue::retry`] or [`Queue::extend`] of a job whose key was
//!   reclaimed by another consumer fails with [`QueueError::LeaseLost`] and changes
//!   nothing; the new holder's calls are authoritative. A job whose lease expired but that
//!   no one reclaimed yet can still be acknowledged (its work is done, nobody else began);
//! * an enqueue of a key waiting out a retry backoff makes it due now (new information,
//!   as in client-go's workqueue); its failure count is kept. Likewise a retry of a key
//!   enqueued during the failed reconcile brings it back at once;
//! * a reclaimed key keeps its failure count and is no longer dirty (the reconcile that
//!   starts covers the enqueues the lost one missed);
//! * nothing runs in the background: due retries are promoted and expired leases
//!   reclaimed by [`Queue::take`], which consumers call in a loop anyway. Dropping a queue
//!   is its whole shutdown; jobs held then come back after their lease.
//!
//! [`MemoryQueue`] is the in-process queue; [`RedisQueue`] the Redis Streams one (see its
//! module for the data layout and docs/decisions/0011-job-queue.md for the reasoning).
//! [`flags`] holds the command-line flags of every binary that reaches the queue.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

pub mod flags;
pub mod memory;
pub mod redis;

pub use crate::memory::MemoryQueue;
pub use crate::redis::{Endpoint, RedisQueue, ShardBy};

/// Tuning shared by the implementations.
#[derive(Clone, Debug)]
pub struct QueueConfig {
    /// How long a taken job is held before another consumer may reclaim it.
    pub lease: Duration,
    /// First retry delay; doubles per attempt.
    pub backoff_base: Duration,
    /// Longest retry delay.
    pub backoff_max: Duration,
    /// How long a key of a management cluster a consumer does not prefer waits before
    /// that consumer takes it ([`Queue::take_preferring`]).
    pub foreign_after: Duration,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            lease: Duration::from_secs(60),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(300),
            foreign_after: Duration::from_secs(2),
        }
    }
}

/// A job handed to one consumer: reconcile `key`, then [`Queue::ack`] or [`Queue::retry`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The Cluster key.
    pub key: String,
    /// How many times this key failed in a row before this attempt (0 the first time).
    pub attempt: u32,
    /// Implementation-specific handle (stream entry id, lease token).
    pub token: String,
    /// The W3C trace context (opaque to the queue) of the enqueue this job comes from,
    /// so the reconcile continues the trace that asked for it: the first enqueue of a
    /// waiting key; for a key enqueued while in flight, the first enqueue during that
    /// reconcile; a retry keeps the failed job's.
    pub trace_context: Option<String>,
}

/// Gauges and counters for metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Keys waiting to be taken (due now).
    pub depth: u64,
    /// Keys waiting for a retry time.
    pub delayed: u64,
    /// Keys being reconciled.
    pub in_flight: u64,
    /// Age of the oldest waiting key.
    pub oldest_age: Duration,
    /// Retries scheduled since the queue was created (this process's view for Redis).
    pub retries: u64,
}

/// Why a queue operation failed.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The backing store failed (Redis unreachable, ...).
    #[error("queue backend: {0}")]
    Backend(String),
    /// The job's lease was lost (it expired and another consumer took the key).
    #[error("lease lost for {0}")]
    LeaseLost(String),
}

/// The job contract.
pub trait Queue: Send + Sync + 'static {
    /// Queues `key` (coalesced with a waiting one; marked dirty if in flight).
    fn enqueue(&self, key: &str) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// [`Queue::enqueue`] with a trace context for the job (see [`Job::trace_context`];
    /// an enqueue that coalesces with a waiting key keeps the waiting one's). An empty
    /// context is none.
    ///
    /// The default drops the context: right for test fakes.
    fn enqueue_traced(
        &self,
        key: &str,
        context: Option<&str>,
    ) -> impl Future<Output = Result<(), QueueError>> + Send {
        let _ = context;
        self.enqueue(key)
    }

    /// Takes the next due key for `consumer`, waiting up to `wait` for one.
    fn take(
        &self,
        consumer: &str,
        wait: Duration,
    ) -> impl Future<Output = Result<Option<Job>, QueueError>> + Send;

    /// [`Queue::take`] for a consumer that serves some management clusters better than
    /// others (it holds their caches): keys of `preferred` management clusters (the
    /// part of a key before its first `/`) are handed to it at once, keys of others only
    /// once they have waited [`QueueConfig::foreign_after`], so a consumer preferring
    /// them takes them first and nothing waits much longer when none does.
    ///
    /// The default ignores the preference: right for a queue in one process.
    fn take_preferring(
        &self,
        consumer: &str,
        wait: Duration,
        preferred: &[String],
    ) -> impl Future<Output = Result<Option<Job>, QueueError>> + Send {
        let _ = preferred;
        self.take(consumer, wait)
    }

    /// The reconcile of `job` finished: forget it (or hand it out again if it was
    /// enqueued meanwhile).
    fn ack(&self, job: &Job) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// The reconcile of `job` failed: bring the key back after a backoff.
    fn retry(&self, job: &Job) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// The reconcile of `job` succeeded but asks to look again after `delay` (a
    /// lifecycle hook answered "retry after N seconds"): the key comes back then, not
    /// counted as a failure (its attempts start again from zero). An enqueue meanwhile
    /// brings it back at once, as for a key waiting out a retry.
    fn ack_after(
        &self,
        job: &Job,
        delay: Duration,
    ) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// Current gauges and counters.
    fn stats(&self) -> impl Future<Output = Result<QueueStats, QueueError>> + Send;

    /// Renews the lease of `job` for another [`QueueConfig::lease`], for reconciles that
    /// may outlast one lease. Fails with [`QueueError::LeaseLost`] when another consumer
    /// already holds the key.
    ///
    /// The default does nothing: right for queues whose leases never expire (test fakes).
    fn extend(&self, job: &Job) -> impl Future<Output = Result<(), QueueError>> + Send {
        let _ = job;
        async { Ok(()) }
    }
}

/// The delay before retry number `attempt + 1` of a key that failed `attempt` times in a
/// row before: `backoff_base * 2^attempt` capped at `backoff_max`, then jittered by ±20 %
/// (and capped again, so no delay exceeds `backoff_max`).
///
/// Jitter spreads the retries of keys that failed together (a management cluster's API
/// server was down) so they do not all come back in the same instant.
pub fn backoff_delay(config: &QueueConfig, attempt: u32) -> Duration {
    jittered(config, attempt, jitter_unit())
}

/// [`backoff_delay`] with the random part given: `unit` in `[0, 1)` maps to `[-20 %, +20 %)`.
pub fn jittered(config: &QueueConfig, attempt: u32, unit: f64) -> Duration {
    let base = config.backoff_base.as_secs_f64();
    let max = config.backoff_max.as_secs_f64();
    // 2^attempt overflows nothing in f64 for any u32 we will see; `min` caps it.
    let raw = (base * 2f64.powi(attempt.min(1024) as i32)).min(max);
    let factor = 0.8 + 0.4 * unit.clamp(0.0, 1.0);
    // Near Duration::MAX the f64 round trip can overflow: then the cap is the answer.
    Duration::try_from_secs_f64((raw * factor).min(max).max(0.0)).unwrap_or(config.backoff_max)
}

/// `now + duration`, saturating at about 30 years ahead instead of panicking on overflow
/// (a `Duration::MAX` wait or lease means "forever").
pub(crate) fn later(now: tokio::time::Instant, duration: Duration) -> tokio::time::Instant {
    const FAR: Duration = Duration::from_secs(86_400 * 365 * 30);
    now.checked_add(duration.min(FAR)).unwrap_or(now)
}

/// A random number in `[0, 1)`: std's per-process random hash keys are enough for jitter
/// and spare a dependency on a random number crate.
fn jitter_unit() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default(),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_caps_and_jitters_within_twenty_percent() {
        let config = QueueConfig {
            lease: Duration::from_secs(1),
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_millis(1000),
            ..QueueConfig::default()
        };
        assert_eq!(jittered(&config, 0, 0.5), Duration::from_millis(100));
        assert_eq!(jittered(&config, 3, 0.5), Duration::from_millis(800));
        assert_eq!(jittered(&config, 4, 0.5), Duration::from_millis(1000));
        assert_eq!(jittered(&config, 40, 0.99), Duration::from_millis(1000));
        let huge = QueueConfig {
            backoff_max: Duration::MAX,
            ..config.clone()
        };
        assert_eq!(jittered(&huge, u32::MAX, 0.99), Duration::MAX);
        assert_eq!(jittered(&config, 0, 0.0), Duration::from_millis(80));
        assert!(jittered(&config, 1, 0.999_999) <= Duration::from_millis(240));
        for attempt in 0..10 {
            let d = backoff_delay(&config, attempt);
            let raw = (100u64 << attempt).min(1000);
            assert!(
                d >= Duration::from_millis(raw * 8 / 10 - 1),
                "{attempt}: {d:?}"
            );
            assert!(
                d <= Duration::from_millis((raw * 12 / 10).min(1000)),
                "{attempt}: {d:?}"
            );
        }
    }
}
