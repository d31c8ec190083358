//! The state machine's rules, driven over simulated fleets.

use super::*;
use crate::rollout::policy::{self, Wave};
use proptest::prelude::*;
use serde_json::json;
use std::time::Duration;

const S: i64 = 1000;

fn policy(waves: Vec<Wave>, max_rolling: u32, soak: u64) -> Policy {
    Policy {
        namespace: "default".into(),
        name: "quick-start".into(),
        waves,
        max_rolling,
        soak: Duration::from_secs(soak),
        health_deadline: Duration::from_secs(60),
        paused: false,
        abort_revision: String::new(),
        resume_at: String::new(),
    }
}

fn canary_ten_all() -> Vec<Wave> {
    let parsed = policy::parse(&json!({
        "metadata": {"name": "quick-start", "namespace": "default"},
        "spec": {"waves": [
            {"name": "canary", "selector": {"matchLabels": {"canary": "true"}}},
            {"name": "ten", "percent": 10},
            {"name": "all", "percent": 100},
        ]},
    }));
    match parsed {
        Ok(p) => p.waves,
        Err(e) => panic!("{e:?}"),
    }
}

/// A fleet the steps act on: pins are applied at once; a Cluster passes its gate
/// `heal` ms after it was pinned, unless it is in `failing`.
struct Fleet {
    clusters: Vec<ClusterInfo>,
    pinned_at: BTreeMap<String, i64>,
    heal: i64,
    failing: BTreeSet<String>,
    status: Status,
    /// Every (time, key, revision) pin, in order.
    log: Vec<(i64, String, String)>,
    notes: Vec<Note>,
}

impl Fleet {
    fn new(n: usize, canaries: usize, heal: i64) -> Self {
        let clusters = (0..n)
            .map(|i| ClusterInfo {
                member: Member {
                    key: format!("default/c{i:03}"),
                    labels: if i < canaries {
                        [("canary".to_string(), "true".to_string())].into()
                    } else {
                        BTreeMap::new()
                    },
                },
                pin: None,
            })
            .collect();
        Fleet {
            clusters,
            pinned_at: BTreeMap::new(),
            heal,
            failing: BTreeSet::new(),
            status: Status::default(),
            log: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn run(&mut self, policy: &Policy, live: &str, now: i64) {
        let needed = gates_needed(policy, &self.status, now);
        let gates: Gates = needed
            .into_iter()
            .map(|k| {
                let healed = self
                    .pinned_at
                    .get(&k)
                    .is_some_and(|at| now >= at + self.heal);
                let ok = healed && !self.failing.contains(&k);
                (
                    k,
                    if ok {
                        Ok(())
                    } else {
                        Err("MachineDeployment not ready".into())
                    },
                )
            })
            .collect();
        let step = step(policy, &self.status, live, &self.clusters, &gates, now);
        for (key, revision) in &step.pins {
            if let Some(c) = self.clusters.iter_mut().find(|c| &c.member.key == key) {
                c.pin = Some(revision.clone());
            }
            self.pinned_at.insert(key.clone(), now);
            self.log.push((now, key.clone(), revision.clone()));
        }
        self.notes.extend(step.notes);
        self.status = step.status;
    }

    /// Rolling at `now`: pinned to `target`, not healed yet.
    fn rolling(&self, target: &str, now: i64) -> usize {
        self.clusters
            .iter()
            .filter(|c| c.pin.as_deref() == Some(target))
            .filter(|c| {
                self.failing.contains(&c.member.key)
                    || self
                        .pinned_at
                        .get(&c.member.key)
                        .is_some_and(|at| now < at + self.heal)
            })
            .count()
    }

    fn on(&self, revision: &str) -> usize {
        self.clusters
            .iter()
            .filter(|c| c.pin.as_deref() == Some(revision))
            .count()
    }

    fn reasons(&self) -> Vec<&'static str> {
        self.notes.iter().map(|n| n.reason).collect()
    }
}

#[test]
fn the_first_revision_seen_becomes_stable_and_nobody_moves() {
    let p = policy(canary_ten_all(), 5, 0);
    let mut fleet = Fleet::new(10, 1, S);
    fleet.run(&p, "r1", 0);
    assert_eq!(fleet.status.stable_revision, "r1");
    assert_eq!(fleet.status.phase, phase::STABLE);
    assert!(fleet.log.is_empty());
    fleet.run(&p, "r1", S);
    assert!(fleet.log.is_empty() && fleet.notes.is_empty());
}

#[test]
fn a_hundred_clusters_move_canary_then_ten_percent_then_all_at_most_five_at_a_time() {
    let p = policy(canary_ten_all(), 5, 0);
    let mut fleet = Fleet::new(100, 1, 3 * S);
    fleet.run(&p, "r1", 0);
    let mut now = 0;
    let mut most_rolling = 0;
    while fleet.status.phase != phase::STABLE || fleet.status.stable_revision != "r2" {
        now += S;
        assert!(now < 1000 * S, "no end: {:?}", fleet.status.phase);
        fleet.run(&p, "r2", now);
        most_rolling = most_rolling.max(fleet.rolling("r2", now));
    }
    assert_eq!(most_rolling, 5);
    assert_eq!(fleet.on("r2"), 100);
    // The canary moved alone and first, passed, and only then the next wave opened.
    let (canary_at, canary, _) = &fleet.log[0];
    assert_eq!(canary, "default/c000");
    assert!(fleet.log[1].0 >= canary_at + 3 * S);
    // The 10% wave stopped at ten Clusters moved in all.
    let waves: Vec<(&str, usize)> = fleet
        .status
        .waves
        .iter()
        .map(|w| (w.name.as_str(), w.clusters.len()))
        .collect();
    assert_eq!(waves, [("canary", 1), ("ten", 9), ("all", 90)]);
    let ten_done = fleet.status.waves[1]
        .clusters
        .iter()
        .filter_map(|m| millis(&m.passed_at))
        .max()
        .unwrap_or(i64::MAX);
    let all_first_move = fleet.status.waves[2]
        .clusters
        .iter()
        .filter_map(|m| millis(&m.moved_at))
        .min()
        .unwrap_or(0);
    assert!(all_first_move >= ten_done);
    assert_eq!(
        fleet.reasons(),
        [
            "RolloutStarted",
            "RolloutWaveOpened",
            "RolloutWaveOpened",
            "RolloutComplete"
        ]
    );
}

#[test]
fn a_cluster_failing_its_gate_halts_the_rollout_in_its_wave_and_abort_moves_back() {
    let mut p = policy(canary_ten_all(), 5, 0);
    let mut fleet = Fleet::new(100, 1, 2 * S);
    fleet.run(&p, "r1", 0);
    fleet.failing.insert("default/c005".into());
    let mut now = 0;
    while fleet.status.phase != phase::HALTED {
        now += S;
        assert!(now < 1000 * S, "never halted");
        fleet.run(&p, "r2", now);
    }
    let halt = fleet.status.halted.clone().unwrap_or_default();
    assert_eq!(halt.cluster, "default/c005");
    assert!(
        halt.reason
            .starts_with("did not pass its health gate within 1m0s: MachineDeployment not ready"),
        "{}",
        halt.reason
    );
    // Halted in the 10% wave: the last wave never opened, and nothing moves any more.
    assert_eq!(fleet.status.waves.len(), 2);
    let moved = fleet.on("r2");
    assert!(moved <= 10);
    for _ in 0..5 {
        now += S;
        fleet.run(&p, "r2", now);
    }
    assert_eq!(fleet.on("r2"), moved);
    let warning = fleet.notes.iter().find(|n| n.reason == "RolloutHalted");
    assert!(warning.is_some_and(|n| n.warning && n.cluster.as_deref() == Some("default/c005")));

    p.abort_revision = "r2".into();
    now += S;
    fleet.run(&p, "r2", now);
    assert_eq!(fleet.status.phase, phase::ABORTED);
    assert_eq!(fleet.on("r2"), 0);
    assert_eq!(fleet.on("r1"), moved);
    now += S;
    let pins = fleet.log.len();
    fleet.run(&p, "r2", now);
    assert_eq!(fleet.log.len(), pins, "an aborted rollout moves nobody");
    // A newer class revision starts a new rollout.
    now += S;
    fleet.failing.clear();
    fleet.run(&p, "r3", now);
    assert_eq!(fleet.status.target_revision, "r3");
    assert_eq!(fleet.status.phase, phase::PROGRESSING);
}

#[test]
fn a_resumed_rollout_gives_the_halted_cluster_a_new_deadline() {
    let mut p = policy(canary_ten_all(), 5, 0);
    let mut fleet = Fleet::new(20, 1, S);
    fleet.run(&p, "r1", 0);
    fleet.failing.insert("default/c000".into());
    let mut now = 0;
    while fleet.status.phase != phase::HALTED {
        now += S;
        assert!(now < 1000 * S);
        fleet.run(&p, "r2", now);
    }
    fleet.failing.clear();
    p.resume_at = stamp(now - 10 * S);
    now += S;
    fleet.run(&p, "r2", now);
    assert_eq!(
        fleet.status.phase,
        phase::HALTED,
        "a resume older than the halt changes nothing"
    );
    p.resume_at = stamp(now + 1);
    while fleet.status.stable_revision != "r2" {
        now += S;
        assert!(now < 1000 * S);
        fleet.run(&p, "r2", now);
    }
    assert_eq!(fleet.on("r2"), 20);
    assert!(fleet.reasons().contains(&"RolloutResumed"));
}

#[test]
fn paused_moves_nobody_and_soak_waits_then_checks_again() {
    let mut p = policy(canary_ten_all(), 5, 10);
    p.paused = true;
    let mut fleet = Fleet::new(20, 1, S);
    fleet.run(&p, "r1", 0);
    fleet.run(&p, "r2", S);
    assert_eq!(fleet.status.phase, phase::PAUSED);
    assert!(fleet.log.is_empty());
    p.paused = false;
    fleet.run(&p, "r2", 2 * S);
    assert_eq!(fleet.on("r2"), 1);
    fleet.run(&p, "r2", 4 * S);
    assert_eq!(fleet.status.phase, phase::SOAKING);
    fleet.run(&p, "r2", 8 * S);
    assert_eq!(fleet.status.phase, phase::SOAKING);
    assert_eq!(fleet.on("r2"), 1);
    // The canary broke while soaking: the check after the soak halts the rollout.
    fleet.failing.insert("default/c000".into());
    fleet.run(&p, "r2", 15 * S);
    assert_eq!(fleet.status.phase, phase::HALTED);
    let reason = fleet.status.halted.map(|h| h.reason).unwrap_or_default();
    assert!(
        reason.starts_with("failed its health gate after wave \"canary\" soaked for 10s"),
        "{reason}"
    );
}

#[test]
fn a_class_changed_back_ends_the_rollout_and_a_newer_one_supersedes_it() {
    let p = policy(canary_ten_all(), 5, 0);
    let mut fleet = Fleet::new(20, 1, 100 * S);
    fleet.run(&p, "r1", 0);
    fleet.run(&p, "r2", S);
    assert_eq!(fleet.on("r2"), 1);
    fleet.run(&p, "r3", 2 * S);
    assert_eq!(fleet.status.target_revision, "r3");
    assert!(fleet.reasons().contains(&"RolloutSuperseded"));
    assert_eq!(
        fleet.on("r3"),
        1,
        "the canary moves on to the newest revision"
    );
    fleet.run(&p, "r1", 3 * S);
    assert_eq!(fleet.status.phase, phase::STABLE);
    assert_eq!(fleet.status.target_revision, "");
    assert_eq!(fleet.on("r1"), 1);
    assert!(fleet.reasons().contains(&"RolloutReverted"));
}

#[test]
fn deleted_clusters_do_not_hold_a_wave() {
    let p = policy(canary_ten_all(), 2, 0);
    let mut fleet = Fleet::new(10, 1, S);
    fleet.run(&p, "r1", 0);
    fleet.run(&p, "r2", S);
    fleet.clusters.retain(|c| c.member.key != "default/c000");
    fleet.run(&p, "r2", 2 * S);
    assert_eq!(
        fleet.status.waves.len(),
        2,
        "the canary's wave passed without it"
    );
}

#[test]
fn the_status_round_trips_through_json() {
    let p = policy(canary_ten_all(), 5, 0);
    let mut fleet = Fleet::new(10, 1, S);
    fleet.run(&p, "r1", 0);
    fleet.run(&p, "r2", S);
    let text = serde_json::to_value(&fleet.status).unwrap_or_default();
    let back: Status = serde_json::from_value(text).unwrap_or_default();
    assert_eq!(back, fleet.status);
}

proptest! {
    /// Whatever the fleet, the policy's limits hold and a healthy fleet completes: never
    /// more than maxRolling Clusters rolling, every Cluster moved exactly once, and the
    /// waves moved in order.
    #[test]
    fn limits_hold_and_healthy_rollouts_complete(
        n in 0usize..60,
        canaries in 0usize..4,
        max_rolling in 1u32..8,
        heal in 0i64..4,
        percents in proptest::collection::btree_set(1u32..100, 0..3),
        soak in 0u64..3,
    ) {
        let canaries = canaries.min(n);
        let mut waves = Vec::new();
        if canaries > 0 {
            waves.push(Wave { name: "canary".into(), selector: Some(topograph_runtime::config::LabelSelector {
                match_labels: [("canary".to_string(), "true".to_string())].into(),
                match_expressions: Vec::new(),
            }), percent: None });
        }
        for (i, p) in percents.iter().enumerate() {
            waves.push(Wave { name: format!("w{i}"), selector: None, percent: Some(*p) });
        }
        waves.push(Wave { name: "all".into(), selector: None, percent: Some(100) });
        let p = policy(waves, max_rolling, soak);
        let mut fleet = Fleet::new(n, canaries, heal * S);
        fleet.run(&p, "r1", 0);
        let mut now = 0;
        while fleet.status.stable_revision != "r2" {
            now += S;
            prop_assert!(now < 10_000 * S, "no end");
            fleet.run(&p, "r2", now);
            prop_assert!(fleet.rolling("r2", now) <= max_rolling as usize);
        }
        prop_assert_eq!(fleet.on("r2"), n);
        prop_assert_eq!(fleet.log.len(), n);
        let order: Vec<usize> = fleet.log.iter().map(|(_, key, _)| {
            fleet.status.waves.iter().position(|w| w.clusters.iter().any(|m| &m.cluster == key)).unwrap_or(usize::MAX)
        }).collect();
        prop_assert!(order.windows(2).all(|w| w[0] <= w[1]), "waves out of order: {:?}", order);
    }
}

#[test]
fn a_plan_assigns_each_cluster_the_wave_it_would_move_in() {
    let p = policy(canary_ten_all(), 5, 0);
    let mut fleet = Fleet::new(100, 1, S);
    fleet.clusters[50].pin = Some("r2".into());
    let waves = assign(&p, &fleet.clusters, "r2");
    assert_eq!(
        waves.get("default/c000").map(String::as_str),
        Some("canary")
    );
    assert_eq!(waves.get("default/c050"), None, "already there");
    let count = |name: &str| waves.values().filter(|w| *w == name).count();
    // The pinned one counts as moved: the 10% wave takes eight more.
    assert_eq!((count("canary"), count("ten"), count("all")), (1, 8, 90));
}
