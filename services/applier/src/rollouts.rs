//! The rollout driver of one management cluster (decision 0030), run by the holder of
//! its watch lease beside the watches: a step of every rollout policy each interval,
//! the Clusters it moves handed to the queue at once (a wave's Clusters are queued when
//! they move, never found by polling), and what happened counted in
//! `topograph_rollout_*`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use topograph_management::ManagementCluster;
use topograph_management::keys::ClusterKey;
use topograph_queue::Queue;
use topograph_reconcile::rollout::controller::{Controller, Enqueue};

use crate::metrics::{Metrics, RolloutEventLabels, RolloutLabels, RolloutPhaseLabels, WatchLabels};

/// Steps the rollouts of `management_cluster` every `interval` until dropped (the
/// watch's tasks are aborted when its lease ends).
pub async fn drive<Q: Queue>(
    api: Arc<ManagementCluster>,
    management_cluster: String,
    queue: Arc<Q>,
    to_queue: mpsc::UnboundedSender<Vec<(String, String)>>,
    metrics: Arc<Metrics>,
    interval: Duration,
) {
    let mc = management_cluster.clone();
    let enqueue: Enqueue = Arc::new(move |clusters| {
        // Called inside the step's `rollout` span: the jobs carry its trace, so each
        // moved Cluster's reconcile is part of the rollout's trace. What the queue
        // refuses goes to the watch's enqueuer, which retries.
        let context = topograph_telemetry::trace::current_context();
        let (queue, to_queue, mc) = (queue.clone(), to_queue.clone(), mc.clone());
        tokio::spawn(async move {
            let mut refused = Vec::new();
            for (namespace, name) in clusters {
                let key = ClusterKey::new(&mc, &namespace, &name).to_string();
                if queue
                    .enqueue_traced(&key, context.as_deref())
                    .await
                    .is_err()
                {
                    refused.push((namespace, name));
                }
            }
            if !refused.is_empty() {
                let _ = to_queue.send(refused);
            }
        });
    });
    let mut controller = Controller::new(api.as_ref().clone(), enqueue);
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut phases: std::collections::BTreeMap<String, String> = Default::default();
    loop {
        ticks.tick().await;
        let report = match controller.tick().await {
            Ok(report) => report,
            Err(e) => {
                tracing::warn!(%management_cluster, error = %e, "rollout policies not read");
                continue;
            }
        };
        let rollout = &metrics.rollout;
        if report.revisions > 0 {
            rollout
                .revisions
                .get_or_create(&WatchLabels {
                    management_cluster: management_cluster.clone(),
                })
                .inc_by(report.revisions);
        }
        for (reason, n) in &report.notes {
            rollout
                .events
                .get_or_create(&RolloutEventLabels {
                    management_cluster: management_cluster.clone(),
                    reason: reason.to_string(),
                })
                .inc_by(*n);
        }
        for (policy, pins) in &report.pins {
            rollout
                .pins
                .get_or_create(&RolloutLabels {
                    management_cluster: management_cluster.clone(),
                    policy: policy.clone(),
                })
                .inc_by(*pins);
        }
        for (policy, phase) in &report.phases {
            let label = |phase: &str| RolloutPhaseLabels {
                management_cluster: management_cluster.clone(),
                policy: policy.clone(),
                phase: phase.to_string(),
            };
            if let Some(before) = phases.insert(policy.clone(), phase.clone())
                && &before != phase
            {
                rollout.phase.get_or_create(&label(&before)).set(0);
            }
            rollout.phase.get_or_create(&label(phase)).set(1);
        }
    }
}
