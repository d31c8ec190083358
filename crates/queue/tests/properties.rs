//! Model checks of the in-process queue: for random interleavings of enqueue, take, ack
//! and retry, no key is ever held twice, nothing waits twice, and every key enqueued after
//! its last delivery is delivered again.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use proptest::prelude::*;
use topograph_queue::{Job, MemoryQueue, Queue, QueueConfig};

#[derive(Clone, Debug)]
enum Op {
    Enqueue(usize),
    Take(usize),
    Ack(usize),
    Retry(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..6usize).prop_map(Op::Enqueue),
        3 => (0..3usize).prop_map(Op::Take),
        2 => any::<usize>().prop_map(Op::Ack),
        1 => any::<usize>().prop_map(Op::Retry),
    ]
}

fn key(index: usize) -> String {
    format!("mgmt/ns/c{index}")
}

async fn check(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let queue = MemoryQueue::new(QueueConfig {
        // Never expires during a case: reclaim is the contract suite's business.
        lease: Duration::from_secs(600),
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(4),
        ..QueueConfig::default()
    });
    let mut held: Vec<Job> = Vec::new();
    // Keys enqueued (or failed) since their last delivery.
    let mut owed: HashSet<String> = HashSet::new();
    let mut known: HashSet<String> = HashSet::new();
    for op in ops {
        match op {
            Op::Enqueue(k) => {
                queue
                    .enqueue(&key(k))
                    .await
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                owed.insert(key(k));
                known.insert(key(k));
            }
            Op::Take(c) => {
                let taken = queue.take(&format!("c{c}"), Duration::ZERO).await;
                let taken = taken.map_err(|e| TestCaseError::fail(e.to_string()))?;
                if let Some(job) = taken {
                    prop_assert!(
                        held.iter().all(|h| h.key != job.key),
                        "{} held twice",
                        job.key
                    );
                    owed.remove(&job.key);
                    held.push(job);
                }
            }
            Op::Ack(i) if !held.is_empty() => {
                let job = held.remove(i % held.len());
                prop_assert!(queue.ack(&job).await.is_ok());
                prop_assert!(queue.ack(&job).await.is_err(), "acknowledged twice");
            }
            Op::Retry(i) if !held.is_empty() => {
                let job = held.remove(i % held.len());
                prop_assert!(queue.retry(&job).await.is_ok());
                owed.insert(job.key.clone());
            }
            Op::Ack(_) | Op::Retry(_) => {}
        }
        let stats = queue
            .stats()
            .await
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(stats.in_flight as usize, held.len());
        prop_assert!(
            (stats.depth + stats.delayed + stats.in_flight) as usize <= known.len(),
            "a key waits twice: {:?} for {} keys",
            stats,
            known.len()
        );
    }
    // Finish the reconciles in flight, then drain: each key comes at most once more, and
    // every key owed comes.
    for job in held.drain(..) {
        prop_assert!(queue.ack(&job).await.is_ok());
    }
    let mut delivered: HashMap<String, usize> = HashMap::new();
    loop {
        let stats = queue
            .stats()
            .await
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        if stats.depth + stats.delayed + stats.in_flight == 0 {
            break;
        }
        let taken = queue.take("drain", Duration::from_millis(20)).await;
        if let Some(job) = taken.map_err(|e| TestCaseError::fail(e.to_string()))? {
            *delivered.entry(job.key.clone()).or_default() += 1;
            owed.remove(&job.key);
            prop_assert!(queue.ack(&job).await.is_ok());
        }
    }
    prop_assert!(owed.is_empty(), "never delivered: {:?}", owed);
    prop_assert!(
        delivered.values().all(|n| *n == 1),
        "delivered twice: {:?}",
        delivered
    );
    Ok(())
}

proptest! {
    #[test]
    fn random_interleavings_keep_the_invariants(ops in prop::collection::vec(op(), 1..80)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        runtime.block_on(check(ops))?;
    }
}
