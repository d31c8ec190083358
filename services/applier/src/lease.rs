//! Leases: exactly one holder of a name at a time, until it stops renewing. The
//! watchers of a management cluster run only in the applier process holding its lease;
//! a standby takes over when the lease lapses. Holders also say they are alive
//! ([`Lease::members`]), so each can keep to its share of the leases.

use std::future::Future;
use std::time::Duration;

use topograph_queue::redis::Connection;

/// A lease store.
pub trait Lease: Send + Sync + 'static {
    /// Takes or renews `name` for `holder` for `ttl`; true when `holder` holds it now.
    fn hold(
        &self,
        name: &str,
        holder: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<bool, String>> + Send;

    /// Gives `name` up if `holder` holds it (a clean shutdown hands over at once).
    fn release(&self, name: &str, holder: &str) -> impl Future<Output = Result<(), String>> + Send;

    /// Says `holder` is alive for `ttl` and returns how many holders are (itself
    /// included): what the watch leases are shared out among. One process alone by
    /// default.
    fn members(
        &self,
        holder: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<usize, String>> + Send {
        let _ = (holder, ttl);
        async { Ok(1) }
    }

    /// Says `holder` is gone (a clean shutdown), so the others' shares grow at once.
    fn leave(&self, holder: &str) -> impl Future<Output = Result<(), String>> + Send {
        let _ = holder;
        async { Ok(()) }
    }
}

/// One process: every lease is always held.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalLease;

impl Lease for LocalLease {
    async fn hold(&self, _: &str, _: &str, _: Duration) -> Result<bool, String> {
        Ok(true)
    }

    async fn release(&self, _: &str, _: &str) -> Result<(), String> {
        Ok(())
    }
}

const HOLD: &str = r"
local v = redis.call('GET', KEYS[1])
if v == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
";

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// Holders alive: a sorted set scored by when each one's word expires (the server's
/// clock, so holders' clocks need not agree). The set itself never expires: holders
/// with different times share it, and expired names are dropped on every call.
const MEMBERS: &str = r"
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
return redis.call('ZCARD', KEYS[1])
";

const LEAVE: &str = r"
return redis.call('ZREM', KEYS[1], ARGV[1])
";

/// Leases in Redis (a single server, or a Redis Cluster: each lease is one key).
#[derive(Clone)]
pub struct RedisLease {
    connection: Connection,
    prefix: String,
}

impl RedisLease {
    /// Leases in the queue's Redis under its key prefix, on the queue's connection
    /// ([`topograph_queue::RedisQueue::connection`]): a Redis that stops answering fails
    /// a renewal after the same response timeout as the queue's own calls, on a single
    /// server as on a Cluster.
    pub fn new(connection: Connection, prefix: &str) -> Self {
        RedisLease {
            connection,
            prefix: prefix.to_string(),
        }
    }

    async fn run(&self, script: &str, name: &str, args: &[String]) -> Result<i64, String> {
        let script = redis::Script::new(script);
        let mut invocation = script.key(format!("{{{}:lease}}:{name}", self.prefix));
        for arg in args {
            invocation.arg(arg);
        }
        invocation
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(|e| e.to_string())
    }
}

impl Lease for RedisLease {
    async fn hold(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool, String> {
        let held = self
            .run(
                HOLD,
                name,
                &[holder.to_string(), ttl.as_millis().to_string()],
            )
            .await?;
        Ok(held == 1)
    }

    async fn release(&self, name: &str, holder: &str) -> Result<(), String> {
        self.run(RELEASE, name, &[holder.to_string()])
            .await
            .map(|_| ())
    }

    async fn members(&self, holder: &str, ttl: Duration) -> Result<usize, String> {
        let n = self
            .run(
                MEMBERS,
                "members",
                &[holder.to_string(), ttl.as_millis().to_string()],
            )
            .await?;
        Ok(usize::try_from(n).unwrap_or(1).max(1))
    }

    async fn leave(&self, holder: &str) -> Result<(), String> {
        self.run(LEAVE, "members", &[holder.to_string()])
            .await
            .map(|_| ())
    }
}
