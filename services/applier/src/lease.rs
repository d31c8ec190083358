//! Leases: exactly one holder of a name at a time, until it stops renewing. The
//! watchers of a management cluster run only in the applier process holding its lease;
//! a standby takes over when the lease lapses.

use std::future::Future;
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;

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

#[derive(Clone)]
enum Connection {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

/// Leases in Redis (a single server, or a Redis Cluster: each lease is one key).
#[derive(Clone)]
pub struct RedisLease {
    connection: Connection,
    prefix: String,
}

impl RedisLease {
    /// Connects to the same Redis the queue uses (`--redis`, see
    /// [`topograph_queue::Endpoint::parse`]).
    pub async fn connect(redis: &str, prefix: &str) -> Result<Self, String> {
        let endpoint = topograph_queue::Endpoint::parse(redis).map_err(|e| e.to_string())?;
        let connection = match endpoint {
            topograph_queue::Endpoint::Cluster(nodes) => {
                let client =
                    redis::cluster::ClusterClient::new(nodes).map_err(|e| e.to_string())?;
                Connection::Cluster(
                    client
                        .get_async_connection()
                        .await
                        .map_err(|e| e.to_string())?,
                )
            }
            topograph_queue::Endpoint::Single(url) => {
                let client = redis::Client::open(url.as_str()).map_err(|e| e.to_string())?;
                Connection::Single(
                    client
                        .get_connection_manager()
                        .await
                        .map_err(|e| e.to_string())?,
                )
            }
        };
        Ok(RedisLease {
            connection,
            prefix: prefix.to_string(),
        })
    }

    async fn run(&self, script: &str, name: &str, args: &[String]) -> Result<i64, String> {
        let script = redis::Script::new(script);
        let mut invocation = script.key(format!("{{{}:lease}}:{name}", self.prefix));
        for arg in args {
            invocation.arg(arg);
        }
        let result = match &self.connection {
            Connection::Single(c) => invocation.invoke_async(&mut c.clone()).await,
            Connection::Cluster(c) => invocation.invoke_async(&mut c.clone()).await,
        };
        result.map_err(|e| e.to_string())
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
}
