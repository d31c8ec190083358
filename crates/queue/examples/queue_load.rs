//! A tiny load test: enqueue, then take and ack with a few consumers, for the in-process
//! queue and (given a Redis address as the first argument) the Redis queue.
//!
//! `cargo run --release -p topograph-queue --example queue_load -- redis://127.0.0.1:6379`

use std::sync::Arc;
use std::time::{Duration, Instant};

use topograph_queue::{MemoryQueue, Queue, QueueConfig, QueueError, RedisQueue};

const KEYS: usize = 20_000;
const CONSUMERS: usize = 8;

async fn load<Q: Queue>(name: &str, queue: Arc<Q>) -> Result<(), QueueError> {
    let started = Instant::now();
    for i in 0..KEYS {
        queue
            .enqueue(&format!("mgmt-{}/ns/cluster-{i}", i % 10))
            .await?;
    }
    let enqueued = started.elapsed();
    let started = Instant::now();
    let mut consumers = Vec::new();
    for c in 0..CONSUMERS {
        let queue = queue.clone();
        consumers.push(tokio::spawn(async move {
            let consumer = format!("load-{c}");
            let mut done = 0usize;
            while let Some(job) = queue.take(&consumer, Duration::from_millis(100)).await? {
                queue.ack(&job).await?;
                done += 1;
            }
            Ok::<usize, QueueError>(done)
        }));
    }
    let mut done = 0;
    for consumer in consumers {
        done += consumer
            .await
            .map_err(|e| QueueError::Backend(e.to_string()))??;
    }
    let drained = started.elapsed();
    println!(
        "{name}: {KEYS} enqueues in {enqueued:?} ({:.0}/s); {done} take+ack by {CONSUMERS} consumers in {drained:?} ({:.0}/s)",
        KEYS as f64 / enqueued.as_secs_f64(),
        done as f64 / drained.as_secs_f64(),
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), QueueError> {
    let config = QueueConfig::default();
    load("memory", Arc::new(MemoryQueue::new(config.clone()))).await?;
    if let Some(url) = std::env::args().nth(1) {
        let prefix = format!("load-{}", std::process::id());
        let queue = RedisQueue::connect(&url, &prefix, 8, config).await?;
        load("redis", Arc::new(queue)).await?;
    }
    Ok(())
}
