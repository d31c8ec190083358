//! The queue contract, written once as generic async functions over [`Queue`] and run for
//! every implementation: the in-process queue, Redis Streams on one `redis-server`, and
//! Redis Streams on a three-node Redis Cluster (servers started here, on loopback).
//!
//! The Redis tests need `redis-server` and `redis-cli` on PATH and fail without them: a
//! missing server must not pass as a green run.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use topograph_queue::{
    Job, MemoryQueue, Queue, QueueConfig, QueueError, QueueStats, RedisQueue, ShardBy,
};

/// Long enough that a case taking many keys one after another (coalescing takes 100,
/// several cases share one Redis Cluster at once, on a busy 2-core CI machine) holds
/// the first before its lease runs out; a shorter lease made the queue rightly reclaim
/// and hand a key out again in the middle of such a case.
const LEASE: Duration = Duration::from_millis(2_000);
const BASE: Duration = Duration::from_millis(100);
const MAX: Duration = Duration::from_millis(400);
/// How long a key of a management cluster a consumer does not prefer waits for it.
const FOREIGN_AFTER: Duration = Duration::from_millis(600);
/// A take expected to find nothing waits this long.
const NONE_WAIT: Duration = Duration::from_millis(50);
/// A take expected to find something waits at most this long.
const SOME_WAIT: Duration = Duration::from_secs(5);

fn config() -> QueueConfig {
    QueueConfig {
        lease: LEASE,
        backoff_base: BASE,
        backoff_max: MAX,
        foreign_after: FOREIGN_AFTER,
    }
}

// ---------------------------------------------------------------------------------------
// The cases.

async fn take_some<Q: Queue>(queue: &Q, consumer: &str) -> Job {
    match queue.take(consumer, SOME_WAIT).await {
        Ok(Some(job)) => job,
        other => panic!("{consumer}: expected a job, got {other:?}"),
    }
}

async fn take_none<Q: Queue>(queue: &Q, consumer: &str) {
    match queue.take(consumer, NONE_WAIT).await {
        Ok(None) => {}
        other => panic!("{consumer}: expected nothing, got {other:?}"),
    }
}

async fn stats<Q: Queue>(queue: &Q) -> QueueStats {
    queue.stats().await.expect("stats")
}

async fn assert_empty<Q: Queue>(queue: &Q) {
    let s = stats(queue).await;
    assert_eq!(
        (s.depth, s.delayed, s.in_flight, s.oldest_age),
        (0, 0, 0, Duration::ZERO),
        "{s:?}"
    );
}

fn assert_lease_lost(result: Result<(), QueueError>, what: &str) {
    assert!(
        matches!(result, Err(QueueError::LeaseLost(_))),
        "{what}: {result:?}"
    );
}

/// Repeated enqueues of waiting keys coalesce: `enqueues` enqueues of 100 keys queue 100.
async fn coalescing<Q: Queue>(queue: Arc<Q>, enqueues: usize) {
    let keys: Vec<String> = (0..100).map(|i| format!("mgmt-a/default/c{i}")).collect();
    let started = Instant::now();
    for i in 0..enqueues {
        queue.enqueue(&keys[i % keys.len()]).await.expect("enqueue");
    }
    let elapsed = started.elapsed();
    let s = stats(&*queue).await;
    assert_eq!((s.depth, s.delayed, s.in_flight), (100, 0, 0), "{s:?}");
    let mut seen = HashSet::new();
    let mut jobs = Vec::new();
    for _ in 0..100 {
        let job = take_some(&*queue, "c1").await;
        assert_eq!(job.attempt, 0);
        assert!(seen.insert(job.key.clone()), "{} handed out twice", job.key);
        jobs.push(job);
    }
    take_none(&*queue, "c1").await;
    assert_eq!(stats(&*queue).await.in_flight, 100);
    for job in &jobs {
        queue.ack(job).await.expect("ack");
    }
    take_none(&*queue, "c1").await;
    assert_empty(&*queue).await;
    eprintln!("coalescing: {enqueues} enqueues in {elapsed:?}");
}

/// Jobs carry the trace context of the enqueue they come from: a waiting key keeps its
/// first enqueue's; a key enqueued while held re-runs with the first context given
/// during the reconcile; a retry keeps the failed job's unless an enqueue during the
/// backoff brings a new one; a reclaimed job keeps its own; no context stays none.
async fn trace_contexts<Q: Queue>(queue: Arc<Q>) {
    let key = "mgmt-a/default/traced";
    let ctx = |n: u8| format!("00-{:032x}-{:016x}-01", n, n);
    // Waiting: the first enqueue's context wins, a plain enqueue adds nothing.
    queue
        .enqueue_traced(key, Some(&ctx(1)))
        .await
        .expect("enqueue");
    queue
        .enqueue_traced(key, Some(&ctx(2)))
        .await
        .expect("enqueue");
    queue.enqueue(key).await.expect("enqueue");
    let first = take_some(&*queue, "c1").await;
    assert_eq!(first.trace_context, Some(ctx(1)));
    // Held: the dirty re-run carries the first context of the enqueues meanwhile.
    queue
        .enqueue_traced(key, Some(&ctx(3)))
        .await
        .expect("enqueue");
    queue
        .enqueue_traced(key, Some(&ctx(4)))
        .await
        .expect("enqueue");
    queue.ack(&first).await.expect("ack");
    let rerun = take_some(&*queue, "c1").await;
    assert_eq!(rerun.trace_context, Some(ctx(3)));
    // A retry continues the failed job's trace.
    queue.retry(&rerun).await.expect("retry");
    let retried = take_some(&*queue, "c1").await;
    assert_eq!(
        (retried.attempt, retried.trace_context.clone()),
        (1, Some(ctx(3)))
    );
    // An enqueue during the backoff is news: due now, with its own context.
    queue.retry(&retried).await.expect("retry");
    queue
        .enqueue_traced(key, Some(&ctx(5)))
        .await
        .expect("enqueue");
    let news = take_some(&*queue, "c1").await;
    assert_eq!(news.trace_context, Some(ctx(5)));
    // A dirty retry re-runs at once with the enqueue's context.
    queue
        .enqueue_traced(key, Some(&ctx(6)))
        .await
        .expect("enqueue");
    queue.retry(&news).await.expect("retry");
    let dirty = take_some(&*queue, "c1").await;
    assert_eq!(dirty.trace_context, Some(ctx(6)));
    // Reclaimed after its lease: the same context, not a dirty one's.
    queue
        .enqueue_traced(key, Some(&ctx(7)))
        .await
        .expect("enqueue");
    tokio::time::sleep(LEASE + Duration::from_millis(100)).await;
    let reclaimed = take_some(&*queue, "c2").await;
    assert_eq!(reclaimed.trace_context, Some(ctx(6)));
    queue.ack(&reclaimed).await.expect("ack");
    take_none(&*queue, "c1").await;
    // None stays none, and an empty context is none.
    queue.enqueue_traced(key, Some("")).await.expect("enqueue");
    let plain = take_some(&*queue, "c1").await;
    assert_eq!(plain.trace_context, None);
    queue.enqueue(key).await.expect("enqueue");
    queue.ack(&plain).await.expect("ack");
    let plain = take_some(&*queue, "c1").await;
    assert_eq!(plain.trace_context, None);
    queue.ack(&plain).await.expect("ack");
    take_none(&*queue, "c1").await;
    assert_empty(&*queue).await;
}

/// A key enqueued while held is handed out again after the ack, never concurrently; the
/// same after a retry (at once: the enqueue is news).
async fn dirty_rerun<Q: Queue>(queue: Arc<Q>) {
    let key = "mgmt-a/default/dev";
    queue.enqueue(key).await.expect("enqueue");
    let first = take_some(&*queue, "c1").await;
    for _ in 0..3 {
        queue.enqueue(key).await.expect("enqueue while held");
    }
    take_none(&*queue, "c2").await;
    let s = stats(&*queue).await;
    assert_eq!((s.depth, s.in_flight), (0, 1), "{s:?}");
    queue.ack(&first).await.expect("ack");
    let second = take_some(&*queue, "c2").await;
    assert_eq!((second.key.as_str(), second.attempt), (key, 0));
    assert_ne!(second.token, first.token);
    take_none(&*queue, "c1").await;
    queue.ack(&second).await.expect("ack");
    take_none(&*queue, "c1").await;

    queue.enqueue(key).await.expect("enqueue");
    let third = take_some(&*queue, "c1").await;
    queue.enqueue(key).await.expect("enqueue while held");
    queue.retry(&third).await.expect("retry");
    let started = Instant::now();
    let fourth = take_some(&*queue, "c2").await;
    assert_eq!(fourth.attempt, 1);
    assert!(
        started.elapsed() < BASE * 8 / 10,
        "dirty retry waited {:?}",
        started.elapsed()
    );
    queue.ack(&fourth).await.expect("ack");
    assert_empty(&*queue).await;
}

/// Consumers racing over few keys that keep being enqueued never hold one key twice.
async fn exclusivity<Q: Queue>(queue: Arc<Q>) {
    let held: Arc<Mutex<HashSet<String>>> = Arc::default();
    let taken = Arc::new(AtomicUsize::new(0));
    let producing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut consumers = Vec::new();
    for c in 0..4 {
        let (queue, held, taken, producing) = (
            queue.clone(),
            held.clone(),
            taken.clone(),
            producing.clone(),
        );
        consumers.push(tokio::spawn(async move {
            let name = format!("consumer-{c}");
            loop {
                let job = queue.take(&name, NONE_WAIT).await.expect("take");
                let Some(job) = job else {
                    if producing.load(Ordering::SeqCst) {
                        continue;
                    }
                    break;
                };
                assert!(
                    held.lock().expect("lock").insert(job.key.clone()),
                    "{} held twice at once",
                    job.key
                );
                taken.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(2)).await;
                held.lock().expect("lock").remove(&job.key);
                if job.attempt == 0 && job.key.ends_with('7') {
                    queue.retry(&job).await.expect("retry");
                } else {
                    queue.ack(&job).await.expect("ack");
                }
            }
        }));
    }
    for i in 0..400 {
        queue
            .enqueue(&format!("mgmt/ns/c{}", i % 20))
            .await
            .expect("enqueue");
        if i % 10 == 0 {
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
    }
    // Long enough for the retried keys' backoff, then the consumers drain and stop.
    tokio::time::sleep(MAX + Duration::from_millis(200)).await;
    producing.store(false, Ordering::SeqCst);
    for consumer in consumers {
        consumer.await.expect("consumer");
    }
    assert!(taken.load(Ordering::SeqCst) >= 20);
    assert_empty(&*queue).await;
}

/// Retries come back after `base * 2^attempt` (capped, ±20 %); an ack resets the count.
async fn retry_backoff<Q: Queue>(queue: Arc<Q>) {
    let key = "mgmt-a/default/failing";
    let retries_before = stats(&*queue).await.retries;
    queue.enqueue(key).await.expect("enqueue");
    let mut job = take_some(&*queue, "c1").await;
    assert_eq!(job.attempt, 0);
    for (n, nominal) in [BASE, BASE * 2, MAX, MAX].into_iter().enumerate() {
        let started = Instant::now();
        queue.retry(&job).await.expect("retry");
        let s = stats(&*queue).await;
        assert_eq!((s.depth, s.delayed, s.in_flight), (0, 1, 0), "{s:?}");
        job = take_some(&*queue, "c2").await;
        let waited = started.elapsed();
        assert_eq!(job.attempt as usize, n + 1);
        let low = (nominal * 8 / 10).saturating_sub(Duration::from_millis(5));
        let high = (nominal * 12 / 10).min(MAX) + Duration::from_millis(300);
        assert!(
            waited >= low && waited <= high,
            "retry {n}: waited {waited:?}, nominal {nominal:?}"
        );
    }
    queue.ack(&job).await.expect("ack");
    queue.enqueue(key).await.expect("enqueue");
    let fresh = take_some(&*queue, "c1").await;
    assert_eq!(fresh.attempt, 0, "an ack resets the failure count");
    queue.ack(&fresh).await.expect("ack");
    assert_eq!(stats(&*queue).await.retries, retries_before + 4);
    assert_empty(&*queue).await;
}

/// A reconcile that asks to look again later (a hook said "retry after"): the key comes
/// back after the delay with its attempts cleared, is no retry, and an enqueue meanwhile
/// brings it back at once.
async fn ack_after<Q: Queue>(queue: Arc<Q>) {
    let key = "mgmt-a/default/held";
    let retries_before = stats(&*queue).await.retries;
    queue.enqueue(key).await.expect("enqueue");
    let job = take_some(&*queue, "c1").await;
    queue.retry(&job).await.expect("retry");
    let job = take_some(&*queue, "c1").await;
    assert_eq!(job.attempt, 1);
    let delay = Duration::from_millis(300);
    let started = Instant::now();
    queue.ack_after(&job, delay).await.expect("ack after");
    let s = stats(&*queue).await;
    assert_eq!((s.depth, s.delayed, s.in_flight), (0, 1, 0), "{s:?}");
    take_none(&*queue, "c2").await;
    let job = take_some(&*queue, "c2").await;
    assert!(
        started.elapsed() >= delay,
        "came back after {:?}",
        started.elapsed()
    );
    assert_eq!(job.attempt, 0, "a hold is not a failure");
    // Asked to wait long, but something changed meanwhile: looked at again at once.
    queue
        .ack_after(&job, Duration::from_secs(60))
        .await
        .expect("ack after");
    queue.enqueue(key).await.expect("enqueue");
    let job = take_some(&*queue, "c3").await;
    // Enqueued while held: an ack_after hands it out again at once as well.
    queue.enqueue(key).await.expect("enqueue while held");
    queue
        .ack_after(&job, Duration::from_secs(60))
        .await
        .expect("ack after");
    let job = take_some(&*queue, "c1").await;
    queue.ack(&job).await.expect("ack");
    // Late: the lease is no longer ours.
    assert_lease_lost(queue.ack_after(&job, delay).await, "ack_after after ack");
    assert_eq!(stats(&*queue).await.retries, retries_before + 1);
    assert_empty(&*queue).await;
}

/// A consumer that dies holding a key loses it after the lease; its late ack, retry and
/// extend fail with `LeaseLost` and leave the new holder's lease alone.
async fn reclaim_and_late_ack<Q: Queue>(queue: Arc<Q>) {
    let key = "mgmt-b/prod/edge";
    queue.enqueue(key).await.expect("enqueue");
    let started = Instant::now();
    let dead = take_some(&*queue, "dies").await;
    take_none(&*queue, "survivor").await;
    let reclaimed = take_some(&*queue, "survivor").await;
    let waited = started.elapsed();
    assert!(
        waited >= LEASE - Duration::from_millis(10),
        "reclaimed after {waited:?}"
    );
    assert!(
        waited <= LEASE + Duration::from_millis(800),
        "reclaimed after {waited:?}"
    );
    assert_eq!((reclaimed.key.as_str(), reclaimed.attempt), (key, 0));
    assert_ne!(reclaimed.token, dead.token);

    assert_lease_lost(queue.ack(&dead).await, "late ack");
    assert_lease_lost(queue.retry(&dead).await, "late retry");
    assert_lease_lost(queue.extend(&dead).await, "late extend");
    take_none(&*queue, "third").await;
    let s = stats(&*queue).await;
    assert_eq!((s.depth, s.delayed, s.in_flight), (0, 0, 1), "{s:?}");
    queue.ack(&reclaimed).await.expect("the new holder's ack");
    assert_lease_lost(queue.ack(&reclaimed).await, "second ack");
    take_none(&*queue, "third").await;
    assert_empty(&*queue).await;

    // An expired lease no one reclaimed yet still acknowledges.
    queue.enqueue(key).await.expect("enqueue");
    let slow = take_some(&*queue, "slow").await;
    tokio::time::sleep(LEASE + Duration::from_millis(100)).await;
    queue.ack(&slow).await.expect("ack after expiry, unclaimed");
    take_none(&*queue, "other").await;
    assert_empty(&*queue).await;
}

/// `extend` keeps a long reconcile's key from being reclaimed.
async fn extend_lease<Q: Queue>(queue: Arc<Q>) {
    let key = "mgmt-a/default/slow";
    queue.enqueue(key).await.expect("enqueue");
    let job = take_some(&*queue, "worker").await;
    for _ in 0..4 {
        tokio::time::sleep(LEASE / 2).await;
        queue.extend(&job).await.expect("extend");
        take_none(&*queue, "thief").await;
    }
    queue.ack(&job).await.expect("ack");
    assert_empty(&*queue).await;
}

/// Gauges: depth, delayed, in flight, the oldest waiting key's age, retries.
async fn stats_gauges<Q: Queue>(queue: Arc<Q>) {
    assert_empty(&*queue).await;
    let retries = stats(&*queue).await.retries;
    for key in ["m/a/1", "m/a/2", "m/a/3"] {
        queue.enqueue(key).await.expect("enqueue");
    }
    tokio::time::sleep(Duration::from_millis(60)).await;
    let s = stats(&*queue).await;
    assert_eq!((s.depth, s.delayed, s.in_flight), (3, 0, 0), "{s:?}");
    assert!(
        s.oldest_age >= Duration::from_millis(50) && s.oldest_age < SOME_WAIT,
        "{s:?}"
    );
    let job = take_some(&*queue, "c").await;
    let s = stats(&*queue).await;
    assert_eq!((s.depth, s.delayed, s.in_flight), (2, 0, 1), "{s:?}");
    queue.retry(&job).await.expect("retry");
    let s = stats(&*queue).await;
    assert_eq!(
        (s.depth, s.delayed, s.in_flight, s.retries),
        (2, 1, 0, retries + 1),
        "{s:?}"
    );
    for _ in 0..3 {
        let job = take_some(&*queue, "c").await;
        queue.ack(&job).await.expect("ack");
    }
    assert_empty(&*queue).await;
}

/// 1,000 keys drained by four consumers: each delivered exactly once.
async fn many_keys<Q: Queue>(queue: Arc<Q>) {
    let keys: Vec<String> = (0..1000)
        .map(|i| format!("mgmt-{}/ns/c{i}", i % 7))
        .collect();
    for key in &keys {
        queue.enqueue(key).await.expect("enqueue");
    }
    let delivered: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let mut consumers = Vec::new();
    for c in 0..4 {
        let (queue, delivered) = (queue.clone(), delivered.clone());
        consumers.push(tokio::spawn(async move {
            let name = format!("drain-{c}");
            while let Some(job) = queue
                .take(&name, Duration::from_millis(200))
                .await
                .expect("take")
            {
                *delivered
                    .lock()
                    .expect("lock")
                    .entry(job.key.clone())
                    .or_default() += 1;
                queue.ack(&job).await.expect("ack");
            }
        }));
    }
    for consumer in consumers {
        consumer.await.expect("consumer");
    }
    let delivered = std::mem::take(&mut *delivered.lock().expect("lock"));
    assert_eq!(delivered.len(), keys.len());
    assert!(
        delivered.values().all(|n| *n == 1),
        "a key was delivered twice"
    );
    assert_empty(&*queue).await;
}

// ---------------------------------------------------------------------------------------
// Redis servers on loopback.

fn require_redis() {
    for tool in ["redis-server", "redis-cli"] {
        if Command::new(tool).arg("--version").output().is_err() {
            panic!(
                "{tool} is not on PATH: the Redis queue tests need it. Install the Debian package \
                 redis-server (apt-get install -y redis-server, which brings redis-tools)"
            );
        }
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!(
        "topograph-queue-{tag}-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A loopback port whose cluster bus port (+10000) is free too.
fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        if port < 55000 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
}

fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut reply = [0u8; 5];
    stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG"
}

/// A `redis-server` child, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
    extra: Vec<String>,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        require_redis();
        for _ in 0..5 {
            let port = free_port();
            let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
            if let Some(server) = Server::spawn(dir, port, extra) {
                return server;
            }
        }
        panic!(
            "redis-server did not start (see the logs in {})",
            dir.display()
        );
    }

    fn spawn(dir: &Path, port: u16, extra: Vec<String>) -> Option<Server> {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .arg("--dir")
            .arg(dir)
            .arg("--logfile")
            .arg(dir.join(format!("redis-{port}.log")))
            .args(&extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let mut server = Server {
            child,
            port,
            dir: dir.to_path_buf(),
            extra,
        };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if ping(port) {
                return Some(server);
            }
            if let Ok(Some(_)) = server.child.try_wait() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A clean shutdown (the AOF flushed), then the same server again.
    fn restart(mut self) -> Server {
        let status = Command::new("redis-cli")
            .args(["-p", &self.port.to_string(), "shutdown"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        assert!(status.is_ok(), "redis-cli shutdown");
        let _ = self.child.wait();
        let (dir, port, extra) = (self.dir.clone(), self.port, std::mem::take(&mut self.extra));
        drop(self);
        Server::spawn(&dir, port, extra).expect("redis-server restarts")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Removes a test's directory once its servers are gone.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A single server and its directory (fields drop in order: server first).
struct Single {
    server: Server,
    _dir: TempDir,
}

fn single(extra: &[&str]) -> Single {
    // Guarded before the server starts, so a failed start removes it too.
    let dir = TempDir(temp_dir("single"));
    let server = Server::start(&dir.0, extra);
    Single { server, _dir: dir }
}

/// A three-primary Redis Cluster.
struct Cluster {
    servers: Vec<Server>,
    _dir: TempDir,
}

impl Cluster {
    fn start() -> Cluster {
        // Dropped after the servers (declared later), even when a start fails.
        let guard = TempDir(temp_dir("cluster"));
        let dir = guard.0.clone();
        let servers: Vec<Server> = (0..3)
            .map(|n| {
                let conf = dir.join(format!("nodes-{n}.conf"));
                let conf = conf.to_string_lossy().into_owned();
                Server::start(
                    &dir,
                    &[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        &conf,
                        "--appendonly",
                        "no",
                    ],
                )
            })
            .collect();
        let nodes: Vec<String> = servers
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        let output = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&nodes)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli --cluster create");
        assert!(
            output.status.success(),
            "cluster create: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let started = Instant::now();
        for server in &servers {
            loop {
                let info = Command::new("redis-cli")
                    .args(["-p", &server.port.to_string(), "cluster", "info"])
                    .output()
                    .expect("redis-cli cluster info");
                if String::from_utf8_lossy(&info.stdout).contains("cluster_state:ok") {
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(20),
                    "the cluster never got ok"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Cluster {
            servers,
            _dir: guard,
        }
    }

    fn url(&self) -> String {
        self.servers
            .iter()
            .map(Server::url)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Preferences: a consumer preferring a management cluster takes its keys before older
/// ones of another, takes another's only once they have waited `FOREIGN_AFTER`, and a
/// consumer stating no preference takes anything at once.
async fn preference(queue: Arc<RedisQueue>, shards: usize) {
    let index = |mc: &str| {
        topograph_queue::redis::shard_index(
            &format!("{mc}/ns/x"),
            shards,
            ShardBy::ManagementCluster,
        )
    };
    let a = "mc-a".to_string();
    let b = (0..)
        .map(|i| format!("mc-{i}"))
        .find(|b| index(b) != index(&a))
        .expect("another shard");
    let (prefers_a, prefers_b) = (std::slice::from_ref(&a), std::slice::from_ref(&b));

    queue.enqueue(&format!("{b}/ns/x")).await.unwrap();
    queue.enqueue(&format!("{a}/ns/y")).await.unwrap();
    let first = take_preferred(&queue, "pa", prefers_a).await;
    assert_eq!(first.key, format!("{a}/ns/y"), "its own first");
    let none = queue
        .take_preferring("pa", NONE_WAIT, prefers_a)
        .await
        .unwrap();
    assert_eq!(none, None, "another's key, not yet waited long enough");
    let job = queue
        .take_preferring("pb", NONE_WAIT, prefers_b)
        .await
        .unwrap();
    assert_eq!(
        job.as_ref().map(|j| j.key.clone()),
        Some(format!("{b}/ns/x"))
    );
    queue.ack(&job.unwrap()).await.unwrap();

    // Nobody prefers it: it goes to whoever asks once it has waited.
    let enqueued = Instant::now();
    queue.enqueue(&format!("{b}/ns/z")).await.unwrap();
    let job = queue
        .take_preferring("pa", SOME_WAIT, prefers_a)
        .await
        .unwrap();
    assert_eq!(
        job.as_ref().map(|j| j.key.clone()),
        Some(format!("{b}/ns/z"))
    );
    assert!(
        enqueued.elapsed() + Duration::from_millis(50) >= FOREIGN_AFTER,
        "handed out after {:?}",
        enqueued.elapsed()
    );
    queue.ack(&job.unwrap()).await.unwrap();

    // An empty preference defers to everyone; no preference takes at once.
    queue.enqueue(&format!("{b}/ns/w")).await.unwrap();
    let none = queue.take_preferring("idle", NONE_WAIT, &[]).await.unwrap();
    assert_eq!(none, None);
    let job = queue.take("plain", NONE_WAIT).await.unwrap();
    assert_eq!(
        job.as_ref().map(|j| j.key.clone()),
        Some(format!("{b}/ns/w"))
    );
    queue.ack(&job.unwrap()).await.unwrap();
    queue.ack(&first).await.unwrap();
    assert_empty(&*queue).await;
}

async fn take_preferred(queue: &RedisQueue, consumer: &str, preferred: &[String]) -> Job {
    queue
        .take_preferring(consumer, SOME_WAIT, preferred)
        .await
        .expect("take")
        .expect("a job")
}

async fn redis_queue(url: &str, prefix: &str, shards: usize) -> Arc<RedisQueue> {
    let queue = RedisQueue::connect(url, prefix, shards, config())
        .await
        .expect("connect");
    Arc::new(queue.with_poll_interval(Duration::from_millis(25)))
}

// ---------------------------------------------------------------------------------------
// The suites.

macro_rules! suite {
    ($backend:ident, $fixture:expr, $coalesce:expr) => {
        mod $backend {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn coalescing() {
                let (queue, _guard) = $fixture.await;
                super::coalescing(queue, $coalesce).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn dirty_rerun() {
                let (queue, _guard) = $fixture.await;
                super::dirty_rerun(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn exclusivity() {
                let (queue, _guard) = $fixture.await;
                super::exclusivity(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn retry_backoff() {
                let (queue, _guard) = $fixture.await;
                super::retry_backoff(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn ack_after() {
                let (queue, _guard) = $fixture.await;
                super::ack_after(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn reclaim_and_late_ack() {
                let (queue, _guard) = $fixture.await;
                super::reclaim_and_late_ack(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn extend_lease() {
                let (queue, _guard) = $fixture.await;
                super::extend_lease(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn stats_gauges() {
                let (queue, _guard) = $fixture.await;
                super::stats_gauges(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn trace_contexts() {
                let (queue, _guard) = $fixture.await;
                super::trace_contexts(queue).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn many_keys() {
                let (queue, _guard) = $fixture.await;
                super::many_keys(queue).await;
            }
        }
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_single_node_preference() {
    let single = single(&["--appendonly", "no"]);
    let queue = by_management_cluster(&single.server.url(), "t", 3).await;
    preference(queue, 3).await;
}

/// Spread by Cluster key (the default), a preference is not followed: every shard
/// mixes management clusters, and deferring would only delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_by_cluster_ignores_preferences() {
    let single = single(&["--appendonly", "no"]);
    let queue = redis_queue(&single.server.url(), "t", 3).await;
    queue.enqueue("mc-b/ns/x").await.unwrap();
    let job = queue
        .take_preferring("pa", NONE_WAIT, &["mc-a".to_string()])
        .await
        .unwrap();
    assert_eq!(job.map(|j| j.key), Some("mc-b/ns/x".to_string()));
}

/// Processes sharing a queue (the appliers, the gateway) connect through `QueueArgs`:
/// the first records the layout, one that disagrees is refused and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn processes_sharing_a_queue_must_agree_on_its_layout() {
    use topograph_queue::flags::QueueArgs;
    let single = single(&["--appendonly", "no"]);
    let args = |prefix: &str, shards: usize, by: ShardBy| QueueArgs {
        redis: single.server.url(),
        redis_prefix: prefix.to_string(),
        redis_shards: shards,
        redis_shard_by: by,
    };
    let refusal = |args: QueueArgs| async move {
        match args.connect(config()).await {
            Ok(_) => panic!("{args:?} was let in"),
            Err(e) => e.to_string(),
        }
    };
    args("laid", 3, ShardBy::Cluster)
        .connect(config())
        .await
        .expect("the first records its layout");
    args("laid", 3, ShardBy::Cluster)
        .connect(config())
        .await
        .expect("one like it joins");
    for other in [
        args("laid", 4, ShardBy::Cluster),
        args("laid", 3, ShardBy::ManagementCluster),
    ] {
        let error = refusal(other).await;
        assert!(
            error.contains("laid out in 3 shards by cluster (laid:layout)"),
            "{error}"
        );
    }
    // Another prefix is another queue.
    args("other", 4, ShardBy::ManagementCluster)
        .connect(config())
        .await
        .expect("another queue");
    // Drained and laid out anew: with the record gone, the next layout is recorded.
    assert_eq!(command(single.server.port, "DEL laid:layout"), ":1");
    args("laid", 16, ShardBy::ManagementCluster)
        .connect(config())
        .await
        .expect("laid out anew");
    let error = refusal(args("laid", 3, ShardBy::Cluster)).await;
    assert!(error.contains("16 shards by management-cluster"), "{error}");
    assert_eq!(
        command(single.server.port, "GET laid:layout"),
        "$31\r\n16 shards by management-cluster"
    );
}

/// One inline command's first reply line(s), as Redis sends them (`:1`, `$n\r\n…`).
fn command(port: u16, line: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    stream
        .write_all(format!("{line}\r\n").as_bytes())
        .expect("send");
    // A bulk string is a length line and the text; any other reply one line.
    let lines = |reply: &[u8]| reply.windows(2).filter(|w| *w == b"\r\n").count();
    let wanted = |reply: &[u8]| {
        if reply.starts_with(b"$") && !reply.starts_with(b"$-") {
            2
        } else {
            1
        }
    };
    let mut reply = Vec::new();
    let mut buf = [0u8; 256];
    while reply.is_empty() || lines(&reply) < wanted(&reply) {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => reply.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&reply).trim_end().to_string()
}

async fn by_management_cluster(url: &str, prefix: &str, shards: usize) -> Arc<RedisQueue> {
    let queue = RedisQueue::connect(url, prefix, shards, config())
        .await
        .expect("connect")
        .with_shard_by(ShardBy::ManagementCluster);
    Arc::new(queue.with_poll_interval(Duration::from_millis(25)))
}

async fn memory() -> (Arc<MemoryQueue>, ()) {
    (Arc::new(MemoryQueue::new(config())), ())
}

async fn redis_single() -> (Arc<RedisQueue>, Single) {
    let single = single(&["--appendonly", "no"]);
    (redis_queue(&single.server.url(), "t", 3).await, single)
}

suite!(memory_queue, memory(), 10_000);
suite!(redis_single_node, redis_single(), 1_000);

/// Every case against one three-node Cluster, each with its own key prefix, all at once:
/// a cluster per case would cost seconds each, and one shared by the whole test binary
/// would outlive it (no destructor runs for statics).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_cluster_three_nodes() {
    let cluster = tokio::task::spawn_blocking(Cluster::start)
        .await
        .expect("cluster");
    let url = cluster.url();
    let queue = |prefix: &'static str| {
        let url = url.clone();
        async move { redis_queue(&url, prefix, 8).await }
    };
    tokio::join!(
        async { coalescing(queue("coalescing").await, 1_000).await },
        async { dirty_rerun(queue("dirty").await).await },
        async { exclusivity(queue("exclusivity").await).await },
        async { retry_backoff(queue("retry").await).await },
        async { ack_after(queue("held").await).await },
        async { reclaim_and_late_ack(queue("reclaim").await).await },
        async { extend_lease(queue("extend").await).await },
        async { stats_gauges(queue("stats").await).await },
        async { many_keys(queue("many").await).await },
        async { trace_contexts(queue("traced").await).await },
        async { preference(by_management_cluster(&url, "preference", 8).await, 8).await },
    );
    // Every shard of a prefix spread over the nodes: 8 hash tags, 3 primaries.
    let mut nodes = HashSet::new();
    for shard in 0..8 {
        let output = Command::new("redis-cli")
            .args([
                "-p",
                &cluster.servers[0].port.to_string(),
                "cluster",
                "keyslot",
            ])
            .arg(format!("{{many:{shard}}}:stream"))
            .output()
            .expect("redis-cli cluster keyslot");
        let slot: u16 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("slot");
        nodes.insert(slot / 5462);
    }
    assert!(nodes.len() >= 2, "8 shards all on one node");
}

/// The memory queue coalesces cheaply: 10,000 enqueues of 100 keys well under a second
/// even in a debug build.
#[tokio::test]
async fn memory_enqueue_is_cheap() {
    let queue = MemoryQueue::new(config());
    let started = Instant::now();
    for i in 0..10_000 {
        queue
            .enqueue(&format!("m/n/c{}", i % 100))
            .await
            .expect("enqueue");
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(queue.stats().await.expect("stats").depth, 100);
}

/// With an append-only file, waiting and held keys survive a Redis restart: the waiting
/// key is handed out, the held one after its lease (the pending list is persisted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_restart_keeps_keys() {
    let Single { server, _dir } = single(&["--appendonly", "yes"]);
    let queue = redis_queue(&server.url(), "durable", 2).await;
    queue.enqueue("m/n/held").await.expect("enqueue");
    let held = take_some(&*queue, "before").await;
    assert_eq!(held.key, "m/n/held");
    queue.enqueue("m/n/delayed").await.expect("enqueue");
    let failed = take_some(&*queue, "before").await;
    assert_eq!(failed.key, "m/n/delayed");
    queue.retry(&failed).await.expect("retry");
    queue.enqueue("m/n/waiting").await.expect("enqueue");
    let s = stats(&*queue).await;
    assert_eq!((s.depth, s.delayed, s.in_flight), (1, 1, 1), "{s:?}");

    let server = tokio::task::spawn_blocking(move || server.restart())
        .await
        .expect("restart");
    // The same queue: its connections come back by themselves; until then operations fail
    // with backend errors (the applier retries them).
    let started = Instant::now();
    let s = loop {
        match queue.stats().await {
            Ok(s) => break s,
            Err(QueueError::Backend(_)) if started.elapsed() < Duration::from_secs(10) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(err) => panic!("no reconnect after the restart: {err}"),
        }
    };
    assert_eq!((s.depth + s.delayed, s.in_flight), (2, 1), "{s:?}");
    let mut keys = HashSet::new();
    for _ in 0..3 {
        let job = loop {
            match queue.take("after", SOME_WAIT).await {
                Ok(Some(job)) => break job,
                Ok(None) => panic!("a key was lost in the restart"),
                // The blocking connection may still be reconnecting.
                Err(QueueError::Backend(_)) if started.elapsed() < Duration::from_secs(10) => {}
                Err(err) => panic!("take after the restart: {err}"),
            }
        };
        keys.insert(job.key.clone());
        queue.ack(&job).await.expect("ack");
    }
    let expected: HashSet<String> = ["m/n/held", "m/n/waiting", "m/n/delayed"]
        .map(String::from)
        .into();
    assert_eq!(keys, expected);
    assert_empty(&*queue).await;
    drop(server);
}

/// A dead consumer's key behind a long pending list of live, extended leases is still
/// reclaimed: the reclaim scan resumes across takes instead of rescanning the head.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_reclaims_behind_a_long_pending_list() {
    let single = single(&["--appendonly", "no"]);
    // A longer lease than the other cases: 300 leases are taken one by one first.
    let config = QueueConfig {
        lease: Duration::from_secs(1),
        ..config()
    };
    let queue = RedisQueue::connect(&single.server.url(), "long", 1, config)
        .await
        .expect("connect");
    let mut alive = Vec::new();
    for i in 0..300 {
        queue
            .enqueue(&format!("m/n/alive{i}"))
            .await
            .expect("enqueue");
        alive.push(take_some(&queue, "alive").await);
        if i % 50 == 49 {
            for job in &alive {
                queue.extend(job).await.expect("extend");
            }
        }
    }
    queue.enqueue("m/n/dead").await.expect("enqueue");
    let dead = take_some(&queue, "dies").await;
    assert_eq!(dead.key, "m/n/dead");
    let started = Instant::now();
    let reclaimed = loop {
        for job in &alive {
            queue.extend(job).await.expect("extend");
        }
        if let Some(job) = queue.take("rescuer", NONE_WAIT).await.expect("take") {
            break job;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the dead consumer's key never came back"
        );
    };
    assert_eq!(reclaimed.key, dead.key);
}

/// Losing the data (FLUSHALL, a restart without persistence) loses the keys but not the
/// queue: the consumer group is made again and new keys flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_recovers_from_a_flushed_server() {
    let single = single(&["--appendonly", "no"]);
    let queue = redis_queue(&single.server.url(), "flushed", 2).await;
    queue.enqueue("m/n/lost").await.expect("enqueue");
    let status = Command::new("redis-cli")
        .args(["-p", &single.server.port.to_string(), "flushall"])
        .stdout(Stdio::null())
        .status()
        .expect("redis-cli flushall");
    assert!(status.success());
    take_none(&*queue, "c").await;
    queue.enqueue("m/n/new").await.expect("enqueue");
    let job = take_some(&*queue, "c").await;
    assert_eq!(job.key, "m/n/new");
    queue.ack(&job).await.expect("ack");
    assert_empty(&*queue).await;
}
