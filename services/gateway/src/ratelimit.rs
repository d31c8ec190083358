//! Per-tenant request budgets: one token bucket per tenant name, refilled continuously.
//!
//! Buckets live in one map behind a mutex: a check is a few arithmetic operations, so
//! the lock is held for nanoseconds. Time is tokio's clock, so tests can pause it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::tenancy::Rate;

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
    rate: Rate,
}

/// Token buckets by key (the tenant's name).
#[derive(Debug, Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    /// An empty limiter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one request from `key`'s budget, or says how long until one is available.
    /// A changed rate (tenants reloaded) starts a full bucket at the new rate.
    pub fn check(&self, key: &str, rate: Rate) -> Result<(), Duration> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let bucket = buckets
            .entry(key.to_string())
            .and_modify(|b| {
                if b.rate != rate {
                    *b = Bucket {
                        tokens: f64::from(rate.burst),
                        last: now,
                        rate,
                    };
                }
            })
            .or_insert_with(|| Bucket {
                tokens: f64::from(rate.burst),
                last: now,
                rate,
            });
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * rate.per_second).min(f64::from(rate.burst));
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / rate.per_second;
            Err(Duration::try_from_secs_f64(wait).unwrap_or(Duration::MAX))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: Rate = Rate {
        per_second: 2.0,
        burst: 3,
    };

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_then_the_rate_holds() {
        let limiter = RateLimiter::new();
        for _ in 0..3 {
            assert!(limiter.check("a", RATE).is_ok());
        }
        let wait = limiter.check("a", RATE).unwrap_err();
        assert_eq!(wait, Duration::from_millis(500));
        // Other tenants have their own buckets.
        assert!(limiter.check("b", RATE).is_ok());

        tokio::time::advance(Duration::from_millis(499)).await;
        assert!(limiter.check("a", RATE).is_err());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(limiter.check("a", RATE).is_ok());
        assert!(limiter.check("a", RATE).is_err());

        // A long pause refills up to the burst, no more.
        tokio::time::advance(Duration::from_secs(60)).await;
        for _ in 0..3 {
            assert!(limiter.check("a", RATE).is_ok());
        }
        assert!(limiter.check("a", RATE).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn ten_seconds_admit_the_burst_plus_the_rate() {
        let limiter = RateLimiter::new();
        let mut admitted = 0;
        for _ in 0..1000 {
            if limiter.check("a", RATE).is_ok() {
                admitted += 1;
            }
            tokio::time::advance(Duration::from_millis(10)).await;
        }
        // 3 at once, then 2 per second over 10 s (the last refill may not be spent).
        assert!((22..=23).contains(&admitted), "{admitted}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_rate_starts_a_full_bucket() {
        let limiter = RateLimiter::new();
        for _ in 0..3 {
            assert!(limiter.check("a", RATE).is_ok());
        }
        assert!(limiter.check("a", RATE).is_err());
        let faster = Rate {
            per_second: 10.0,
            burst: 5,
        };
        for _ in 0..5 {
            assert!(limiter.check("a", faster).is_ok());
        }
        assert!(limiter.check("a", faster).is_err());
    }
}
