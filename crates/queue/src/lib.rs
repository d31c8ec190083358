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
//! * **at least once**: a key is only gone once [`Queue::ack`] was called for it; a
//!   consumer that dies holding it loses nothing (its jobs are reclaimed after
//!   [`QueueConfig::lease`]).

use std::future::Future;
use std::time::Duration;

/// Tuning shared by the implementations.
#[derive(Clone, Debug)]
pub struct QueueConfig {
    /// How long a taken job is held before another consumer may reclaim it.
    pub lease: Duration,
    /// First retry delay; doubles per attempt.
    pub backoff_base: Duration,
    /// Longest retry delay.
    pub backoff_max: Duration,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            lease: Duration::from_secs(60),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(300),
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

    /// Takes the next due key for `consumer`, waiting up to `wait` for one.
    fn take(
        &self,
        consumer: &str,
        wait: Duration,
    ) -> impl Future<Output = Result<Option<Job>, QueueError>> + Send;

    /// The reconcile of `job` finished: forget it (or hand it out again if it was
    /// enqueued meanwhile).
    fn ack(&self, job: &Job) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// The reconcile of `job` failed: bring the key back after a backoff.
    fn retry(&self, job: &Job) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// Current gauges and counters.
    fn stats(&self) -> impl Future<Output = Result<QueueStats, QueueError>> + Send;
}
