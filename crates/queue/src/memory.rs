//! The in-process queue: the embedded mode's queue and the reference the Redis queue is
//! tested against.
//!
//! All state sits behind one `std::sync::Mutex` (every operation is a few map and set
//! updates, never awaited while held); a `tokio::sync::Notify` wakes consumers waiting in
//! [`Queue::take`] when something changes. Timers (retry due times, lease expiries) are
//! ordered sets the next `take` consults, so no background task is needed.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::{Job, Queue, QueueConfig, QueueError, QueueStats, backoff_delay, later};

/// An in-process [`Queue`] (see the crate docs for the semantics).
///
/// Late `ack`/`retry`/`extend` of a job whose key another consumer reclaimed fail with
/// [`QueueError::LeaseLost`] and change nothing; a job whose lease expired but that no one
/// reclaimed yet may still be acknowledged.
#[derive(Debug)]
pub struct MemoryQueue {
    config: QueueConfig,
    inner: Mutex<Inner>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    keys: HashMap<String, Entry>,
    /// Keys in [`State::Ready`], oldest first; each such key exactly once.
    ready: VecDeque<String>,
    /// Keys in [`State::Delayed`] by due time.
    delayed: BTreeSet<(Instant, String)>,
    /// Keys in [`State::Held`] by lease expiry.
    leases: BTreeSet<(Instant, String)>,
    next_token: u64,
    retries: u64,
}

#[derive(Debug)]
struct Entry {
    /// Failures in a row.
    attempt: u32,
    state: State,
    /// The trace context the next job of this key carries: a waiting key's (its first
    /// enqueue's), a delayed key's (the failed job's, or a later enqueue's), a held
    /// key's dirty re-run's (the first enqueue during the reconcile).
    context: Option<String>,
}

#[derive(Debug)]
enum State {
    Ready {
        since: Instant,
    },
    Delayed {
        due: Instant,
    },
    Held {
        token: u64,
        expires: Instant,
        dirty: bool,
        /// The held job's own context, for a consumer that reclaims it.
        context: Option<String>,
    },
}

impl MemoryQueue {
    /// An empty queue.
    pub fn new(config: QueueConfig) -> Self {
        MemoryQueue {
            config,
            inner: Mutex::new(Inner::default()),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // No operation panics halfway through a transition, so a poisoned lock still
        // guards consistent state.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Inner {
    /// Hands out the next job, or tells when the next timer fires.
    fn try_take(&mut self, lease: Duration, now: Instant) -> Result<Job, Option<Instant>> {
        // A reclaimed key first: it has waited longest.
        if let Some((expires, key)) = self.leases.first().cloned()
            && expires <= now
        {
            self.leases.remove(&(expires, key.clone()));
            // The reclaimed job's context; the dirty re-run's is covered like its enqueue.
            let context = self.keys.get_mut(&key).and_then(|entry| {
                entry.context = None;
                match &entry.state {
                    State::Held { context, .. } => context.clone(),
                    _ => None,
                }
            });
            return Ok(self.hold(key, lease, now, context));
        }
        while let Some((due, key)) = self.delayed.first().cloned() {
            if due > now {
                break;
            }
            self.delayed.remove(&(due, key.clone()));
            if let Some(entry) = self.keys.get_mut(&key) {
                entry.state = State::Ready { since: due };
                self.ready.push_back(key);
            }
        }
        if let Some(key) = self.ready.pop_front() {
            let context = self
                .keys
                .get_mut(&key)
                .and_then(|entry| entry.context.take());
            return Ok(self.hold(key, lease, now, context));
        }
        let next_due = self.delayed.first().map(|(due, _)| *due);
        let next_expiry = self.leases.first().map(|(expires, _)| *expires);
        Err(match (next_due, next_expiry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    fn hold(&mut self, key: String, lease: Duration, now: Instant, context: Option<String>) -> Job {
        self.next_token += 1;
        let token = self.next_token;
        let expires = later(now, lease);
        self.leases.insert((expires, key.clone()));
        let attempt = match self.keys.get_mut(&key) {
            Some(entry) => {
                // A reclaimed key's earlier enqueues are covered by the reconcile starting
                // now, so it is not dirty.
                entry.state = State::Held {
                    token,
                    expires,
                    dirty: false,
                    context: context.clone(),
                };
                entry.attempt
            }
            None => {
                self.keys.insert(
                    key.clone(),
                    Entry {
                        attempt: 0,
                        state: State::Held {
                            token,
                            expires,
                            dirty: false,
                            context: context.clone(),
                        },
                        context: None,
                    },
                );
                0
            }
        };
        Job {
            key,
            attempt,
            token: token.to_string(),
            trace_context: context,
        }
    }

    /// The entry `job` refers to, if `job` still holds its lease.
    fn held(&mut self, job: &Job) -> Result<(&mut Entry, Instant, bool), QueueError> {
        // The job's own context is in `job`; the entry's is the dirty re-run's.
        let lost = || QueueError::LeaseLost(job.key.clone());
        let token: u64 = job.token.parse().map_err(|_| lost())?;
        let entry = self.keys.get_mut(&job.key).ok_or_else(lost)?;
        match entry.state {
            State::Held {
                token: held,
                expires,
                dirty,
                ..
            } if held == token => Ok((entry, expires, dirty)),
            _ => Err(lost()),
        }
    }
}

impl Queue for MemoryQueue {
    async fn enqueue(&self, key: &str) -> Result<(), QueueError> {
        self.enqueue_traced(key, None).await
    }

    async fn enqueue_traced(&self, key: &str, context: Option<&str>) -> Result<(), QueueError> {
        let context = context.filter(|c| !c.is_empty()).map(str::to_string);
        let now = Instant::now();
        let mut inner = self.lock();
        let inner = &mut *inner;
        match inner.keys.get_mut(key) {
            None => {
                inner.keys.insert(
                    key.to_string(),
                    Entry {
                        attempt: 0,
                        state: State::Ready { since: now },
                        context,
                    },
                );
                inner.ready.push_back(key.to_string());
            }
            Some(entry) => match &mut entry.state {
                State::Ready { .. } => return Ok(()),
                State::Held { dirty, .. } => {
                    if !*dirty {
                        *dirty = true;
                        entry.context = context;
                    }
                    return Ok(());
                }
                // New information about a key waiting out a backoff makes it due now (as
                // client-go's workqueue does); its failure count is kept.
                State::Delayed { due } => {
                    inner.delayed.remove(&(*due, key.to_string()));
                    entry.state = State::Ready { since: now };
                    entry.context = context;
                    inner.ready.push_back(key.to_string());
                }
            },
        }
        self.changed.notify_waiters();
        Ok(())
    }

    async fn take(&self, _consumer: &str, wait: Duration) -> Result<Option<Job>, QueueError> {
        let deadline = later(Instant::now(), wait);
        loop {
            // Registered before looking, so a change between the look and the wait wakes us.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let now = Instant::now();
            let next = match self.lock().try_take(self.config.lease, now) {
                Ok(job) => return Ok(Some(job)),
                Err(next) => next,
            };
            if now >= deadline {
                return Ok(None);
            }
            let until = next.map_or(deadline, |next| next.min(deadline));
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(until) => {}
            }
        }
    }

    async fn ack(&self, job: &Job) -> Result<(), QueueError> {
        let now = Instant::now();
        let mut inner = self.lock();
        let (entry, expires, dirty) = inner.held(job)?;
        if dirty {
            entry.attempt = 0;
            entry.state = State::Ready { since: now };
        }
        inner.leases.remove(&(expires, job.key.clone()));
        if dirty {
            inner.ready.push_back(job.key.clone());
            drop(inner);
            self.changed.notify_waiters();
        } else {
            inner.keys.remove(&job.key);
        }
        Ok(())
    }

    async fn ack_after(&self, job: &Job, delay: Duration) -> Result<(), QueueError> {
        let now = Instant::now();
        let mut inner = self.lock();
        let (entry, expires, dirty) = inner.held(job)?;
        entry.attempt = 0;
        // Enqueued meanwhile: something changed, so look now rather than at the time
        // asked for.
        let due = if dirty { None } else { Some(later(now, delay)) };
        entry.state = match due {
            None => State::Ready { since: now },
            Some(due) => State::Delayed { due },
        };
        inner.leases.remove(&(expires, job.key.clone()));
        match due {
            None => inner.ready.push_back(job.key.clone()),
            Some(due) => {
                inner.delayed.insert((due, job.key.clone()));
            }
        }
        drop(inner);
        self.changed.notify_waiters();
        Ok(())
    }

    async fn retry(&self, job: &Job) -> Result<(), QueueError> {
        let now = Instant::now();
        let mut inner = self.lock();
        let (entry, expires, dirty) = inner.held(job)?;
        let delay = backoff_delay(&self.config, entry.attempt);
        entry.attempt = entry.attempt.saturating_add(1);
        // Enqueued while failing: the new information deserves a prompt look, as with an
        // enqueue during a backoff.
        let due = if dirty { None } else { Some(later(now, delay)) };
        if !dirty {
            // The retry continues the failed job's trace.
            entry.context = job.trace_context.clone();
        }
        entry.state = match due {
            None => State::Ready { since: now },
            Some(due) => State::Delayed { due },
        };
        inner.leases.remove(&(expires, job.key.clone()));
        match due {
            None => inner.ready.push_back(job.key.clone()),
            Some(due) => {
                inner.delayed.insert((due, job.key.clone()));
            }
        }
        inner.retries += 1;
        drop(inner);
        // Waiters sleeping until their deadline must learn about the new timer.
        self.changed.notify_waiters();
        Ok(())
    }

    async fn extend(&self, job: &Job) -> Result<(), QueueError> {
        let now = Instant::now();
        let lease = self.config.lease;
        let mut inner = self.lock();
        let (entry, expires, _) = inner.held(job)?;
        let renewed = later(now, lease);
        if let State::Held { expires: held, .. } = &mut entry.state {
            *held = renewed;
        }
        inner.leases.remove(&(expires, job.key.clone()));
        inner.leases.insert((renewed, job.key.clone()));
        Ok(())
    }

    async fn stats(&self) -> Result<QueueStats, QueueError> {
        let now = Instant::now();
        let inner = self.lock();
        let due = inner
            .delayed
            .iter()
            .take_while(|(due, _)| *due <= now)
            .count() as u64;
        let oldest_ready = inner
            .ready
            .front()
            .and_then(|key| match inner.keys.get(key) {
                Some(Entry {
                    state: State::Ready { since },
                    ..
                }) => Some(*since),
                _ => None,
            });
        let oldest_due = inner
            .delayed
            .first()
            .map(|(due, _)| *due)
            .filter(|due| *due <= now);
        let oldest = match (oldest_ready, oldest_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Ok(QueueStats {
            depth: inner.ready.len() as u64 + due,
            delayed: inner.delayed.len() as u64 - due,
            in_flight: inner.leases.len() as u64,
            oldest_age: oldest.map_or(Duration::ZERO, |since| now.saturating_duration_since(since)),
            retries: inner.retries,
        })
    }
}
