//! The rollout driver of one management cluster (decision 0030), run by the holder of
//! its watch lease beside the watches: a step of every rollout policy each interval,
//! the Clusters it moves handed to the queue at once (a wave's Clusters are queued when
//! they move, never found by polling), and what happened counted in
//! `topograph_rollout_*`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use topograph_management::ManagementCluster;
use topograph_reconcile::rollout::controller::{Controller, Enqueue};

use crate::metrics::{Metrics, RolloutEventLabels, RolloutLabels, RolloutPhaseLabels, WatchLabels};

/// Steps the rollouts of `management_cluster` every `interval` until dropped (the
/// watch's tasks are aborted when its lease ends).
pub async fn drive(
    api: Arc<ManagementCluster>,
    management_cluster: String,
    to_queue: mpsc::UnboundedSender<Vec<(String, String)>>,
    metrics: Arc<Metrics>,
    interval: Duration,
) {
    let enqueue: Enqueue = Arc::new(move |clusters| {
        let _ = to_queue.send(clusters);
    });
    let mut controller = Controller::new(api.as_ref().clone(), enqueue);
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut phases: std::collections::BTreeMap<String, String> = Default::default();
    loop {
        ticks.tick().await;
        let span = tracing::info_span!("rollouts", management_cluster = %management_cluster);
        let report = match tracing::Instrument::instrument(controller.tick(), span).await {
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
