//! Watcher leases in Redis, on the queue's own connection: one holder at a time, renewal,
//! release, expiry. Needs `redis-server` on PATH (it listens on a Unix socket in a
//! temporary directory, so no port can clash with other tests).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::AsyncCommands;
use topograph_applier::lease::{Lease, RedisLease};
use topograph_queue::{QueueConfig, RedisQueue};

/// `redis-server` on a Unix socket, killed (and its directory removed) when dropped.
struct Redis {
    child: Child,
    dir: PathBuf,
}

impl Redis {
    fn start() -> Redis {
        // One server per test: tests of this file run at once in one process.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("topograph-lease-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let child = Command::new("redis-server")
            .args(["--port", "0", "--save", "", "--unixsocket"])
            .arg(dir.join("redis.sock"))
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on PATH (apt-get install -y redis-server)");
        Redis { child, dir }
    }

    fn url(&self) -> String {
        format!("unix://{}", self.dir.join("redis.sock").display())
    }

    /// The queue, once the server answers.
    async fn queue(&self, prefix: &str) -> RedisQueue {
        let started = Instant::now();
        loop {
            match RedisQueue::connect(&self.url(), prefix, 1, QueueConfig::default()).await {
                Ok(queue) => return queue,
                Err(e) if started.elapsed() > Duration::from_secs(10) => {
                    panic!("redis-server did not answer: {e}")
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn leases_on_the_queue_connection_have_one_holder_until_released_or_expired() {
    let redis = Redis::start();
    let queue = redis.queue("fleet").await;
    let lease = RedisLease::new(queue.connection(), "fleet");
    let ttl = Duration::from_secs(30);

    assert_eq!(lease.hold("mc-1", "a", ttl).await, Ok(true));
    assert_eq!(lease.hold("mc-1", "b", ttl).await, Ok(false), "held by a");
    assert_eq!(lease.hold("mc-1", "a", ttl).await, Ok(true), "a renews");
    assert_eq!(lease.hold("mc-2", "b", ttl).await, Ok(true), "another name");

    // Only the holder's release counts.
    assert_eq!(lease.release("mc-1", "b").await, Ok(()));
    assert_eq!(lease.hold("mc-1", "b", ttl).await, Ok(false));
    assert_eq!(lease.release("mc-1", "a").await, Ok(()));
    assert_eq!(lease.hold("mc-1", "b", ttl).await, Ok(true), "handed over");

    // A holder that stops renewing loses the lease after its time.
    assert_eq!(
        lease.hold("mc-3", "a", Duration::from_millis(100)).await,
        Ok(true)
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(lease.hold("mc-3", "b", ttl).await, Ok(true), "expired");

    // Under the queue's key prefix, through the same connection.
    let mut connection = queue.connection();
    let holder: Option<String> = connection
        .get("{fleet:lease}:mc-3")
        .await
        .expect("GET on the queue's connection");
    assert_eq!(holder.as_deref(), Some("b"));
}

#[tokio::test]
async fn appliers_alive_are_counted_until_they_leave_or_stop_saying_so() {
    let redis = Redis::start();
    let queue = redis.queue("fleet").await;
    let lease = RedisLease::new(queue.connection(), "fleet");
    let ttl = Duration::from_secs(30);

    assert_eq!(lease.members("a", ttl).await, Ok(1));
    assert_eq!(lease.members("b", ttl).await, Ok(2));
    assert_eq!(lease.members("a", ttl).await, Ok(2), "a again is still a");
    // One that stops saying so is not counted after its time.
    assert_eq!(lease.members("c", Duration::from_millis(100)).await, Ok(3));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(lease.members("a", ttl).await, Ok(2), "c expired");
    // One that leaves is not counted at once.
    assert_eq!(lease.leave("b").await, Ok(()));
    assert_eq!(lease.members("a", ttl).await, Ok(1));
}
