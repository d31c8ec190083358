//! The queue on Redis Streams, for a fleet of applier processes sharing one Redis (a
//! single server or a Redis Cluster).
//!
//! Keys are spread over `shards` shards by a stable hash (FNV-1a) of the whole key, or
//! of its management cluster (the key up to its first `/`, [`ShardBy`]): then one
//! management cluster's keys wait in one stream, and a consumer preferring it
//! ([`Queue::take_preferring`]) takes them first, others only once they have waited
//! (decision 0037). Every shard's Redis keys share the hash tag `{<prefix>:<shard>}`, so
//! one shard lives in one slot and each Lua transition touches one slot only; different
//! shards land on different slots and so spread over a Redis Cluster's nodes. Per shard:
//!
//! * `{p:s}:stream`: a stream with one consumer group; one entry (`key` field) per key
//!   that is waiting or held;
//! * `{p:s}:state`: hash, key -> `w:<entry id>` (waiting in the stream), `h:<entry
//!   id>:<nonce>:<consumer>` (held), `d` (waiting for a retry time);
//! * `{p:s}:dirty`: set of held keys enqueued again meanwhile;
//! * `{p:s}:delayed`: sorted set of keys by retry due time (ms);
//! * `{p:s}:attempts`: hash, key -> failures in a row;
//! * `{p:s}:seq`: counter for lease nonces;
//! * `{p:s}:cursor`: where the reclaim scan (XAUTOCLAIM) of the pending list resumes;
//! * `{p:s}:contexts`: hash, key -> the trace context of its next job while it is held
//!   (dirty re-run) or delayed (a waiting key's rides in its stream entry, field `ctx`).
//!
//! Every transition is one Lua script (`src/redis/scripts.rs`), with Redis's clock, so
//! appliers' clocks do not matter. See docs/decisions/0011-job-queue.md.
//!
//! `<p>:layout` records the shard count and what picks a shard, as the first process
//! to claim it ([`RedisQueue::claim_layout`]) had them; a process with another layout
//! is refused, so no key is ever held in two shards at once (decision 0039).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use ::redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use ::redis::cluster::ClusterClient;
use ::redis::cluster_async::ClusterConnection;
use ::redis::{Cmd, Pipeline, RedisError, RedisFuture, Script, Value};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::{Job, Queue, QueueConfig, QueueError, QueueStats, backoff_delay, later};

mod scripts;

/// The consumer group every applier joins.
const GROUP: &str = "appliers";

/// How long a command may take before the connection is considered broken.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the Redis is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// One server: `redis://host:port[/db]` (or `rediss://`, `unix://`).
    Single(String),
    /// A Redis Cluster, by seed nodes (`redis://host:port` each).
    Cluster(Vec<String>),
}

impl Endpoint {
    /// Parses the applier's `--redis` value:
    ///
    /// * `redis://host:port` (any URL the redis crate takes): one server;
    /// * `redis://a:7000,redis://b:7001,...` or `a:7000,b:7001` (a comma-separated list of
    ///   nodes, scheme optional): a Redis Cluster, the nodes being seeds;
    /// * `redis+cluster://[user:pass@]a:7000[,b:7001...]` (or `rediss+cluster://`): a Redis
    ///   Cluster, even with a single seed node.
    pub fn parse(spec: &str) -> Result<Endpoint, QueueError> {
        let spec = spec.trim();
        let bad = || QueueError::Backend(format!("invalid Redis address {spec:?}"));
        for (cluster_scheme, scheme) in [
            ("redis+cluster://", "redis://"),
            ("rediss+cluster://", "rediss://"),
        ] {
            if let Some(rest) = spec.strip_prefix(cluster_scheme) {
                let (userinfo, hosts) = match rest.rsplit_once('@') {
                    Some((userinfo, hosts)) => (format!("{userinfo}@"), hosts),
                    None => (String::new(), rest),
                };
                let nodes: Vec<String> = hosts
                    .split(',')
                    .map(str::trim)
                    .filter(|host| !host.is_empty())
                    .map(|host| format!("{scheme}{userinfo}{host}"))
                    .collect();
                if nodes.is_empty() {
                    return Err(bad());
                }
                return Ok(Endpoint::Cluster(nodes));
            }
        }
        if spec.contains(',') {
            let nodes: Vec<String> = spec
                .split(',')
                .map(str::trim)
                .filter(|node| !node.is_empty())
                .map(|node| {
                    if node.contains("://") {
                        node.to_string()
                    } else {
                        format!("redis://{node}")
                    }
                })
                .collect();
            if nodes.is_empty() {
                return Err(bad());
            }
            return Ok(Endpoint::Cluster(nodes));
        }
        if spec.is_empty() {
            return Err(bad());
        }
        if spec.contains("://") {
            Ok(Endpoint::Single(spec.to_string()))
        } else {
            Ok(Endpoint::Single(format!("redis://{spec}")))
        }
    }
}

/// The shared connection: one multiplexed connection for every operation but the
/// blocking wake-up read.
#[derive(Clone)]
enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(conn) => conn.req_packed_command(cmd),
            Conn::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(conn) => conn.get_db(),
            Conn::Cluster(conn) => conn.get_db(),
        }
    }
}

impl Conn {
    /// The shared connection, with [`RESPONSE_TIMEOUT`].
    async fn connect(endpoint: &Endpoint) -> Result<Conn, QueueError> {
        match endpoint {
            Endpoint::Single(url) => {
                let client = ::redis::Client::open(url.as_str()).map_err(backend)?;
                let config =
                    ConnectionManagerConfig::new().set_response_timeout(Some(RESPONSE_TIMEOUT));
                let conn = client
                    .get_connection_manager_with_config(config)
                    .await
                    .map_err(backend)?;
                Ok(Conn::Single(conn))
            }
            Endpoint::Cluster(nodes) => {
                let client = ClusterClient::builder(nodes.clone())
                    .response_timeout(RESPONSE_TIMEOUT)
                    .build()
                    .map_err(backend)?;
                Ok(Conn::Cluster(
                    client.get_async_connection().await.map_err(backend)?,
                ))
            }
        }
    }
}

/// The queue's connection (see [`RedisQueue::connection`]), for what else lives in the
/// queue's Redis. Clones share one multiplexed connection.
#[derive(Clone)]
pub struct Connection(Conn);

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        self.0.req_packed_command(cmd)
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        self.0.req_packed_commands(pipeline, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.0.get_db()
    }
}

/// What a key's shard is hashed from. Every process sharing a queue must agree, as on
/// the shard count: changing either moves keys to other shards, so drain the queue
/// (stop what enqueues, let the appliers finish) before restarting with new values
/// ([`RedisQueue::claim_layout`] refuses a process that disagrees).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ShardBy {
    /// The whole Cluster key: keys spread evenly; preferences are not followed.
    #[default]
    Cluster,
    /// The management cluster of the key: preferences are followed.
    ManagementCluster,
}

/// The Redis keys of one shard.
#[derive(Debug)]
struct Shard {
    keys: [String; 8],
}

impl Shard {
    fn new(prefix: &str, index: usize) -> Shard {
        let tag = format!("{{{prefix}:{index}}}");
        Shard {
            keys: [
                "stream", "state", "dirty", "delayed", "attempts", "seq", "cursor", "contexts",
            ]
            .map(|name| format!("{tag}:{name}")),
        }
    }

    fn stream(&self) -> &str {
        &self.keys[0]
    }
}

/// A [`Queue`] on Redis Streams (see the module docs for the layout).
///
/// Late `ack`/`retry`/`extend` of a job whose key another consumer reclaimed fail with
/// [`QueueError::LeaseLost`] and change nothing; a job whose lease expired but that no one
/// reclaimed yet may still be acknowledged.
///
/// Cheap to share: wrap it in an `Arc`; all methods take `&self`.
pub struct RedisQueue {
    conn: Conn,
    /// Single server only: a connection of its own for `XREAD BLOCK`, so a waiting
    /// consumer never stalls the commands others pipeline on `conn`.
    waker: Option<tokio::sync::Mutex<ConnectionManager>>,
    shards: Vec<Shard>,
    shard_by: ShardBy,
    /// `<prefix>:layout`.
    layout_key: String,
    config: QueueConfig,
    poll: Duration,
    next_shard: AtomicUsize,
    /// Wakes this process's waiting consumers (local enqueues, the waker's reads).
    changed: Notify,
    retries: AtomicU64,
}

impl std::fmt::Debug for RedisQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisQueue")
            .field("cluster", &matches!(self.conn, Conn::Cluster(_)))
            .field("shards", &self.shards.len())
            .field("config", &self.config)
            .field("poll", &self.poll)
            .finish()
    }
}

fn backend(err: RedisError) -> QueueError {
    QueueError::Backend(err.to_string())
}

impl RedisQueue {
    /// Connects to `redis` (see [`Endpoint::parse`]) and creates the consumer groups.
    ///
    /// `prefix` namespaces the Redis keys (two queues with different prefixes share
    /// nothing); `shards` (at least 1) is how many streams the keys spread over: it must be
    /// the same in every process sharing `prefix`. A Cluster wants a few shards per primary
    /// node (e.g. 16); a single server is fine with 1 to 4.
    pub async fn connect(
        redis: &str,
        prefix: &str,
        shards: usize,
        config: QueueConfig,
    ) -> Result<RedisQueue, QueueError> {
        RedisQueue::connect_endpoint(Endpoint::parse(redis)?, prefix, shards, config).await
    }

    /// [`RedisQueue::connect`] with the address parsed.
    pub async fn connect_endpoint(
        endpoint: Endpoint,
        prefix: &str,
        shards: usize,
        config: QueueConfig,
    ) -> Result<RedisQueue, QueueError> {
        if shards == 0 {
            return Err(QueueError::Backend(
                "a queue needs at least one shard".into(),
            ));
        }
        // Short polls keep reclaim and retry latency a fraction of their own durations.
        let poll = (config.lease / 4)
            .min(config.backoff_base)
            .clamp(Duration::from_millis(20), Duration::from_millis(250));
        let conn = Conn::connect(&endpoint).await?;
        let waker = match &endpoint {
            Endpoint::Single(url) => {
                let client = ::redis::Client::open(url.as_str()).map_err(backend)?;
                let blocking = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(RESPONSE_TIMEOUT + Duration::from_millis(250)));
                let waker = client
                    .get_connection_manager_with_config(blocking)
                    .await
                    .map_err(backend)?;
                Some(tokio::sync::Mutex::new(waker))
            }
            // A blocking read can only name one shard's stream in a Cluster (one slot per
            // command), so consumers poll there instead.
            Endpoint::Cluster(_) => None,
        };
        let queue = RedisQueue {
            conn,
            waker,
            shards: (0..shards).map(|index| Shard::new(prefix, index)).collect(),
            shard_by: ShardBy::default(),
            layout_key: format!("{prefix}:layout"),
            config,
            poll,
            next_shard: AtomicUsize::new(0),
            changed: Notify::new(),
            retries: AtomicU64::new(0),
        };
        for shard in &queue.shards {
            queue.create_group(shard).await?;
        }
        Ok(queue)
    }

    /// The connection the queue's own commands use: its response timeout, its
    /// reconnection. The appliers' watcher leases live in the same Redis and go through
    /// it rather than a connection of their own built differently.
    pub fn connection(&self) -> Connection {
        Connection(self.conn.clone())
    }

    /// How often a waiting `take` looks again for due retries and expired leases (and, on
    /// a Cluster, for new keys). Defaults to a quarter of the lease or the backoff base,
    /// between 20 and 250 ms.
    pub fn with_poll_interval(mut self, poll: Duration) -> RedisQueue {
        self.poll = poll.max(Duration::from_millis(1));
        self
    }

    /// What picks a key's shard (see [`ShardBy`]); the whole key by default.
    pub fn with_shard_by(mut self, shard_by: ShardBy) -> RedisQueue {
        self.shard_by = shard_by;
        self
    }

    /// This queue's layout, as `<prefix>:layout` records it: `4 shards by cluster`.
    pub fn layout(&self) -> String {
        // Named as `--redis-shard-by` spells it, so the refusal's advice can be followed.
        let by = clap::ValueEnum::to_possible_value(&self.shard_by).map_or_else(
            || format!("{:?}", self.shard_by),
            |v| v.get_name().to_string(),
        );
        format!("{} shards by {by}", self.shards.len())
    }

    /// Records this queue's layout under `<prefix>:layout` if none is recorded, and
    /// fails, changing nothing, if another is: processes sharing a queue must agree on
    /// where each key waits, or one Cluster could be held in two shards at once. A
    /// queue that is laid out anew is drained first; then the key is deleted and every
    /// process restarted with the new values.
    pub async fn claim_layout(&self) -> Result<(), QueueError> {
        let mine = self.layout();
        let mut conn = self.conn.clone();
        // SET NX, then GET: `SET NX GET` needs Redis 7, and a key deleted in between is
        // claimed on the next try.
        for _ in 0..3 {
            let set: Value = ::redis::cmd("SET")
                .arg(&self.layout_key)
                .arg(&mine)
                .arg("NX")
                .query_async(&mut conn)
                .await
                .map_err(backend)?;
            if !matches!(set, Value::Nil) {
                return Ok(());
            }
            let recorded: Option<String> = ::redis::cmd("GET")
                .arg(&self.layout_key)
                .query_async(&mut conn)
                .await
                .map_err(backend)?;
            match recorded {
                Some(recorded) if recorded == mine => return Ok(()),
                Some(recorded) => {
                    return Err(QueueError::Backend(format!(
                        "the queue is laid out in {recorded} ({key}), this process in {mine}: \
                         give every process the same --redis-shards and --redis-shard-by, or \
                         drain the queue, delete {key} and restart every process with the new \
                         values",
                        key = self.layout_key
                    )));
                }
                None => continue,
            }
        }
        Err(QueueError::Backend(format!(
            "{} kept disappearing while it was claimed",
            self.layout_key
        )))
    }

    async fn create_group(&self, shard: &Shard) -> Result<(), QueueError> {
        let mut conn = self.conn.clone();
        let created: Result<Value, RedisError> = ::redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(shard.stream())
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(&mut conn)
            .await;
        match created {
            Ok(_) => Ok(()),
            Err(err) if err.code() == Some("BUSYGROUP") => Ok(()),
            Err(err) => Err(backend(err)),
        }
    }

    fn shard_of(&self, key: &str) -> &Shard {
        &self.shards[shard_index(key, self.shards.len(), self.shard_by)]
    }

    async fn run(
        &self,
        script: &Script,
        shard: &Shard,
        args: &[&str],
    ) -> Result<Value, QueueError> {
        let mut invocation = script.prepare_invoke();
        for key in &shard.keys {
            invocation.key(key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let mut conn = self.conn.clone();
        invocation.invoke_async(&mut conn).await.map_err(backend)
    }

    /// Runs a lease-checked transition (`ack`, `retry`, `extend`) for `job`.
    async fn transition(
        &self,
        script: &Script,
        job: &Job,
        extra: &[&str],
    ) -> Result<i64, QueueError> {
        let lost = || QueueError::LeaseLost(job.key.clone());
        let (id, nonce) = job.token.split_once(':').ok_or_else(lost)?;
        let mut args = vec![GROUP, job.key.as_str(), id, nonce];
        args.extend_from_slice(extra);
        let reply = self.run(script, self.shard_of(&job.key), &args).await?;
        match int(&reply) {
            Some(0) => Err(lost()),
            Some(n) => Ok(n),
            None => Err(unexpected(&reply)),
        }
    }

    /// One pass over the shards: a job, or each shard's last stream entry id (for the
    /// wake-up read). With `preferred` management clusters, their shards come first and
    /// the others hand out only entries older than [`QueueConfig::foreign_after`].
    async fn take_once(
        &self,
        consumer: &str,
        preferred: Option<&[String]>,
    ) -> Result<Result<Job, Vec<String>>, QueueError> {
        let lease = self.config.lease.as_millis().max(1).to_string();
        let count = self.shards.len();
        let start = self.next_shard.fetch_add(1, Ordering::Relaxed);
        let mut last_ids = vec![String::new(); count];
        let mut order: Vec<(usize, bool)> = (0..count)
            .map(|offset| ((start + offset) % count, true))
            .collect();
        if let Some(preferred) = preferred {
            let mine: Vec<usize> = preferred
                .iter()
                .map(|mc| shard_index(mc, count, ShardBy::ManagementCluster))
                .collect();
            for (index, at_once) in &mut order {
                *at_once = mine.contains(index);
            }
            // Stable: the preferred shards first, each group still in rotation.
            order.sort_by_key(|(_, at_once)| !*at_once);
        }
        let foreign_after = self.config.foreign_after.as_millis().max(1).to_string();
        for (index, at_once) in order {
            let shard = &self.shards[index];
            let min_age = if at_once { "0" } else { foreign_after.as_str() };
            let args = [GROUP, consumer, &lease, min_age];
            let reply = match self.run(&scripts::TAKE, shard, &args).await {
                // The group is gone with the data (a Redis restarted without persistence,
                // FLUSHALL): make it again rather than fail every take from now on.
                Err(QueueError::Backend(message)) if message.contains("NOGROUP") => {
                    tracing::warn!(
                        stream = shard.stream(),
                        "consumer group missing; recreating it"
                    );
                    self.create_group(shard).await?;
                    self.run(&scripts::TAKE, shard, &args).await?
                }
                reply => reply?,
            };
            let items = match &reply {
                Value::Array(items) => items.as_slice(),
                _ => return Err(unexpected(&reply)),
            };
            match items {
                [tag, key, token, attempt, context] if int(tag) == Some(1) => {
                    let (Some(key), Some(token), Some(attempt)) =
                        (string(key), string(token), int(attempt))
                    else {
                        return Err(unexpected(&reply));
                    };
                    let attempt = u32::try_from(attempt).unwrap_or(u32::MAX);
                    return Ok(Ok(Job {
                        key,
                        attempt,
                        token,
                        trace_context: string(context).filter(|c| !c.is_empty()),
                    }));
                }
                [tag, last] if int(tag) == Some(0) => {
                    last_ids[index] = string(last).ok_or_else(|| unexpected(&reply))?;
                }
                _ => return Err(unexpected(&reply)),
            }
        }
        Ok(Err(last_ids))
    }

    /// [`Queue::take`], preferring `preferred`'s shards when given.
    async fn take_with(
        &self,
        consumer: &str,
        wait: Duration,
        preferred: Option<&[String]>,
    ) -> Result<Option<Job>, QueueError> {
        let deadline = later(Instant::now(), wait);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let last_ids = match self.take_once(consumer, preferred).await? {
                Ok(job) => return Ok(Some(job)),
                Err(last_ids) => last_ids,
            };
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.nap(self.poll.min(deadline - now), &last_ids, changed)
                .await?;
        }
    }

    /// Waits up to `nap` for news: a new stream entry on any shard (single server), a
    /// local change, or just the time passing (due retries and expired leases).
    async fn nap(
        &self,
        nap: Duration,
        last_ids: &[String],
        changed: std::pin::Pin<&mut tokio::sync::futures::Notified<'_>>,
    ) -> Result<(), QueueError> {
        let waker = match &self.waker {
            Some(waker) => waker.try_lock().ok(),
            None => None,
        };
        let Some(mut waker) = waker else {
            // Another consumer of this process holds the blocking read and will wake us.
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep(nap) => {}
            }
            return Ok(());
        };
        // XREAD (not XREADGROUP): it only signals; delivery stays inside the TAKE script,
        // atomic with the state transition.
        let mut cmd = ::redis::cmd("XREAD");
        cmd.arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            // Well inside the connection's response timeout, whatever the poll interval.
            .arg(nap.min(RESPONSE_TIMEOUT / 2).as_millis().max(1) as u64)
            .arg("STREAMS");
        for shard in &self.shards {
            cmd.arg(shard.stream());
        }
        for last in last_ids {
            cmd.arg(last);
        }
        let read: Value = cmd.query_async(&mut *waker).await.map_err(backend)?;
        drop(waker);
        if !matches!(read, Value::Nil) {
            self.changed.notify_waiters();
        }
        Ok(())
    }
}

/// The shard of `key` among `shards`: a hash of the key, or of its management cluster
/// (the key up to its first `/`). FNV-1a: stable across processes and versions, unlike
/// std's hasher.
pub fn shard_index(key: &str, shards: usize, by: ShardBy) -> usize {
    let partition = match by {
        ShardBy::Cluster => key,
        ShardBy::ManagementCluster => key.split('/').next().unwrap_or(key),
    };
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in partition.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash % shards.max(1) as u64) as usize
}

fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(n) => Some(*n),
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?.parse().ok(),
        Value::SimpleString(text) => text.parse().ok(),
        _ => None,
    }
}

fn string(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(text) => Some(text.clone()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

fn unexpected(reply: &Value) -> QueueError {
    QueueError::Backend(format!("unexpected reply from a queue script: {reply:?}"))
}

impl Queue for RedisQueue {
    async fn enqueue(&self, key: &str) -> Result<(), QueueError> {
        self.enqueue_traced(key, None).await
    }

    async fn enqueue_traced(&self, key: &str, context: Option<&str>) -> Result<(), QueueError> {
        let context = context.unwrap_or_default();
        let reply = self
            .run(&scripts::ENQUEUE, self.shard_of(key), &[key, context])
            .await?;
        if int(&reply) == Some(1) {
            self.changed.notify_waiters();
        }
        Ok(())
    }

    async fn take(&self, consumer: &str, wait: Duration) -> Result<Option<Job>, QueueError> {
        self.take_with(consumer, wait, None).await
    }

    async fn take_preferring(
        &self,
        consumer: &str,
        wait: Duration,
        preferred: &[String],
    ) -> Result<Option<Job>, QueueError> {
        // Keys spread by Cluster mix management clusters in every shard: nothing to prefer.
        let preferred = (self.shard_by == ShardBy::ManagementCluster).then_some(preferred);
        self.take_with(consumer, wait, preferred).await
    }

    async fn ack(&self, job: &Job) -> Result<(), QueueError> {
        if self.transition(&scripts::ACK, job, &[]).await? == 2 {
            self.changed.notify_waiters();
        }
        Ok(())
    }

    async fn ack_after(&self, job: &Job, delay: Duration) -> Result<(), QueueError> {
        let delay = delay.as_millis().max(1).to_string();
        self.transition(&scripts::ACK_AFTER, job, &[&delay]).await?;
        self.changed.notify_waiters();
        Ok(())
    }

    async fn retry(&self, job: &Job) -> Result<(), QueueError> {
        let delay = backoff_delay(&self.config, job.attempt)
            .as_millis()
            .max(1)
            .to_string();
        let context = job.trace_context.as_deref().unwrap_or_default();
        self.transition(&scripts::RETRY, job, &[&delay, context])
            .await?;
        self.retries.fetch_add(1, Ordering::Relaxed);
        self.changed.notify_waiters();
        Ok(())
    }

    async fn extend(&self, job: &Job) -> Result<(), QueueError> {
        self.transition(&scripts::EXTEND, job, &[]).await.map(drop)
    }

    async fn stats(&self) -> Result<QueueStats, QueueError> {
        let mut stats = QueueStats {
            retries: self.retries.load(Ordering::Relaxed),
            ..QueueStats::default()
        };
        for shard in &self.shards {
            let reply = self.run(&scripts::STATS, shard, &[GROUP]).await?;
            let Value::Array(items) = &reply else {
                return Err(unexpected(&reply));
            };
            let numbers: Option<Vec<i64>> = items.iter().map(int).collect();
            let Some([depth, delayed, in_flight, oldest_ms, now_ms]) =
                numbers.and_then(|numbers| <[i64; 5]>::try_from(numbers).ok())
            else {
                return Err(unexpected(&reply));
            };
            let count = |n: i64| u64::try_from(n).unwrap_or(0);
            stats.depth += count(depth);
            stats.delayed += count(delayed);
            stats.in_flight += count(in_flight);
            if oldest_ms >= 0 {
                let age = Duration::from_millis(count(now_ms - oldest_ms));
                stats.oldest_age = stats.oldest_age.max(age);
            }
        }
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(
            Endpoint::parse("redis://127.0.0.1:6379").ok(),
            Some(Endpoint::Single("redis://127.0.0.1:6379".into()))
        );
        assert_eq!(
            Endpoint::parse("10.0.0.1:6379").ok(),
            Some(Endpoint::Single("redis://10.0.0.1:6379".into()))
        );
        assert_eq!(
            Endpoint::parse("redis://a:7000, b:7001").ok(),
            Some(Endpoint::Cluster(vec![
                "redis://a:7000".into(),
                "redis://b:7001".into()
            ]))
        );
        assert_eq!(
            Endpoint::parse("redis+cluster://u:p@a:7000,b:7001").ok(),
            Some(Endpoint::Cluster(vec![
                "redis://u:p@a:7000".into(),
                "redis://u:p@b:7001".into()
            ]))
        );
        assert_eq!(
            Endpoint::parse("rediss+cluster://a:7000").ok(),
            Some(Endpoint::Cluster(vec!["rediss://a:7000".into()]))
        );
        assert!(Endpoint::parse("").is_err());
        assert!(Endpoint::parse("redis+cluster://").is_err());
    }

    #[test]
    fn shard_keys_share_one_hash_tag() {
        let shard = Shard::new("q", 3);
        for key in &shard.keys {
            assert!(key.starts_with("{q:3}:"), "{key}");
        }
    }
}
