//! A rollout's state machine: one [`step`] takes the policy, its status, the class's
//! live revision, the class's Clusters (with their pins), the gates of the Clusters the
//! step asked about ([`gates_needed`]) and the time, and gives the next status, the
//! Clusters to pin (to move, or to move back) and what to tell people. It reads and
//! writes nothing, so every rule is tested as a table, and a restarted controller
//! continues from the status alone.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::policy::{Member, Policy};

/// Phases a policy's status reports.
pub mod phase {
    /// Nothing in flight: every Cluster renders the stable revision.
    pub const STABLE: &str = "Stable";
    /// A wave is moving Clusters or waiting for their gates.
    pub const PROGRESSING: &str = "Progressing";
    /// A wave passed and soaks before the next one opens.
    pub const SOAKING: &str = "Soaking";
    /// `spec.paused`: nobody is moved.
    pub const PAUSED: &str = "Paused";
    /// A Cluster failed its gate: nobody else is moved until resumed or aborted.
    pub const HALTED: &str = "Halted";
    /// The target was aborted: its Clusters went back to the stable revision.
    pub const ABORTED: &str = "Aborted";
    /// The class is gone: the rollout ended.
    pub const CLASS_DELETED: &str = "ClassDeleted";
}

/// One Cluster of a wave.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaveMember {
    /// `namespace/name`.
    pub cluster: String,
    /// When it was pinned to the target (RFC 3339).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub moved_at: String,
    /// When it passed its gate.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passed_at: String,
}

/// One opened wave.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaveStatus {
    /// The wave's name in the policy.
    pub name: String,
    /// When it opened.
    pub opened_at: String,
    /// When its last Cluster passed (its soak began).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub passed_at: String,
    /// Its Clusters, chosen when it opened.
    #[serde(default)]
    pub clusters: Vec<WaveMember>,
}

/// Why a rollout stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Halt {
    /// The Cluster that failed its gate.
    pub cluster: String,
    /// Why.
    pub reason: String,
    /// When (RFC 3339).
    pub at: String,
}

/// A policy's status: the whole state of its rollout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// The revision unmoved Clusters render.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stable_revision: String,
    /// The revision being rolled out.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target_revision: String,
    /// See [`phase`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// The waves opened so far, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waves: Vec<WaveStatus>,
    /// Set while halted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halted: Option<Halt>,
}

impl Status {
    /// The status of a RolloutPolicy object (none yet: the default), or why it cannot
    /// be read (someone wrote it by hand).
    pub fn of(policy: &serde_json::Value) -> Result<Status, String> {
        match policy.get("status") {
            None | Some(serde_json::Value::Null) => Ok(Status::default()),
            Some(status) => Status::deserialize(status)
                .map_err(|e| format!("status of RolloutPolicy cannot be read: {e}")),
        }
    }
}

/// A Cluster of the class as a step sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterInfo {
    /// Its key and labels.
    pub member: Member,
    /// The revision it is pinned to, if any.
    pub pin: Option<String>,
}

/// Gates by Cluster key: passed, or why not.
pub type Gates = BTreeMap<String, Result<(), String>>;

/// Something to tell people: an Event (on the Cluster when named, else on the class)
/// and the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The Cluster it is about, if any.
    pub cluster: Option<String>,
    /// The Event's reason.
    pub reason: &'static str,
    /// The message.
    pub message: String,
    /// A warning (harm) rather than news.
    pub warning: bool,
}

/// What one step decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// The next status.
    pub status: Status,
    /// Clusters to pin: (key, revision).
    pub pins: Vec<(String, String)>,
    /// What happened.
    pub notes: Vec<Note>,
}

/// Milliseconds since the epoch as RFC 3339 (UTC, milliseconds).
pub fn stamp(ms: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_millisecond(ms)
        .map(|t| format!("{t:.3}"))
        .unwrap_or_default()
}

/// Now, in milliseconds since the epoch (what [`step`] and [`stamp`] take).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// RFC 3339 as milliseconds since the epoch.
pub fn millis(text: &str) -> Option<i64> {
    text.parse::<k8s_openapi::jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

fn ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The Clusters whose gates the next step reads: moved and not passed yet, and every
/// Cluster of a wave whose soak is over (checked once more before the next wave).
pub fn gates_needed(policy: &Policy, status: &Status, now: i64) -> BTreeSet<String> {
    let mut needed = BTreeSet::new();
    if status.target_revision.is_empty() {
        return needed;
    }
    for wave in &status.waves {
        for m in &wave.clusters {
            if !m.moved_at.is_empty() && m.passed_at.is_empty() {
                needed.insert(m.cluster.clone());
            }
        }
    }
    if let Some(last) = status.waves.last()
        && !policy.soak.is_zero()
        && millis(&last.passed_at).is_some_and(|at| now >= at.saturating_add(ms(policy.soak)))
    {
        needed.extend(last.clusters.iter().map(|m| m.cluster.clone()));
    }
    needed
}

/// One step of the rollout of `policy`'s class, whose live revision is `live`.
/// `clusters` are the class's Clusters (any order).
pub fn step(
    policy: &Policy,
    status: &Status,
    live: &str,
    clusters: &[ClusterInfo],
    gates: &Gates,
    now: i64,
) -> Step {
    let mut out = Step {
        status: status.clone(),
        ..Step::default()
    };
    let s = &mut out.status;
    if s.stable_revision.is_empty() {
        s.stable_revision = live.to_string();
        s.phase = phase::STABLE.into();
        return out;
    }
    let mut sorted: Vec<&ClusterInfo> = clusters.iter().collect();
    sorted.sort_by(|a, b| a.member.key.cmp(&b.member.key));
    let present: BTreeSet<&str> = sorted.iter().map(|c| c.member.key.as_str()).collect();

    if live == s.stable_revision {
        if !s.target_revision.is_empty() {
            let target = std::mem::take(&mut s.target_revision);
            out.pins = pinned_to(&sorted, &target, &s.stable_revision);
            out.notes.push(note(
                None,
                "RolloutReverted",
                format!(
                    "ClusterClass {}/{} is back at revision {}: revision {target} is no longer rolled out",
                    policy.namespace, policy.name, s.stable_revision
                ),
                false,
            ));
            s.halted = None;
        }
        s.phase = phase::STABLE.into();
        return out;
    }
    if s.target_revision != live {
        if s.target_revision.is_empty() {
            out.notes.push(note(
                None,
                "RolloutStarted",
                format!(
                    "rolling out revision {live} of ClusterClass {}/{} (from {})",
                    policy.namespace, policy.name, s.stable_revision
                ),
                false,
            ));
        } else {
            out.notes.push(note(
                None,
                "RolloutSuperseded",
                format!(
                    "revision {live} replaces revision {} in the rollout of ClusterClass {}/{}; its waves start again",
                    s.target_revision, policy.namespace, policy.name
                ),
                false,
            ));
        }
        s.target_revision = live.to_string();
        s.waves.clear();
        s.halted = None;
        s.phase = phase::PROGRESSING.into();
    }
    let target = s.target_revision.clone();
    if s.phase == phase::ABORTED {
        return out;
    }
    if !policy.abort_revision.is_empty() && policy.abort_revision == target {
        out.pins = pinned_to(&sorted, &target, &s.stable_revision);
        out.notes.push(note(
            None,
            "RolloutAborted",
            format!(
                "the rollout of revision {target} was aborted: {} Cluster(s) moved back to revision {}",
                out.pins.len(),
                s.stable_revision
            ),
            true,
        ));
        s.phase = phase::ABORTED.into();
        s.halted = None;
        return out;
    }
    if let Some(halt) = &s.halted {
        let resumed = millis(&policy.resume_at)
            .zip(millis(&halt.at))
            .is_some_and(|(resume, halted)| resume > halted);
        if !resumed {
            s.phase = phase::HALTED.into();
            return out;
        }
        out.notes.push(note(
            None,
            "RolloutResumed",
            format!("the rollout of revision {target} goes on; the Clusters still rolling get a new deadline"),
            false,
        ));
        s.halted = None;
        for m in s.waves.iter_mut().flat_map(|w| w.clusters.iter_mut()) {
            if !m.moved_at.is_empty() && m.passed_at.is_empty() {
                m.moved_at = stamp(now);
            }
        }
    }
    if policy.paused {
        s.phase = phase::PAUSED.into();
        return out;
    }
    s.phase = phase::PROGRESSING.into();
    let deadline = ms(policy.health_deadline);

    // Gates of the moved Clusters: passed, still rolling, or past their deadline.
    for m in s.waves.iter_mut().flat_map(|w| w.clusters.iter_mut()) {
        if m.moved_at.is_empty() || !m.passed_at.is_empty() {
            continue;
        }
        if !present.contains(m.cluster.as_str()) {
            m.passed_at = stamp(now);
            continue;
        }
        match gates.get(&m.cluster) {
            Some(Ok(())) => m.passed_at = stamp(now),
            Some(Err(why)) => {
                let moved = millis(&m.moved_at).unwrap_or(now);
                if now > moved.saturating_add(deadline) {
                    let reason = format!(
                        "did not pass its health gate within {}: {why}",
                        humantime(policy.health_deadline)
                    );
                    let cluster = m.cluster.clone();
                    out.halt(cluster, &target, reason, now);
                    return out;
                }
            }
            None => {}
        }
    }

    loop {
        if s.waves.is_empty() {
            let opened = open(policy, 0, s, &sorted, now);
            s.waves.push(opened);
        }
        let rolling = s
            .waves
            .iter()
            .flat_map(|w| &w.clusters)
            .filter(|m| !m.moved_at.is_empty() && m.passed_at.is_empty())
            .count();
        let mut room = (policy.max_rolling as usize).saturating_sub(rolling);
        let Some(wave) = s.waves.last_mut() else {
            return out;
        };
        for m in wave.clusters.iter_mut().filter(|m| m.moved_at.is_empty()) {
            if room == 0 {
                break;
            }
            if !present.contains(m.cluster.as_str()) {
                m.moved_at = stamp(now);
                m.passed_at = stamp(now);
                continue;
            }
            m.moved_at = stamp(now);
            out.pins.push((m.cluster.clone(), target.clone()));
            room -= 1;
        }
        if wave.clusters.iter().any(|m| m.passed_at.is_empty()) {
            return out;
        }
        if wave.passed_at.is_empty() {
            wave.passed_at = stamp(now);
        }
        let passed = millis(&wave.passed_at).unwrap_or(now);
        if now < passed.saturating_add(ms(policy.soak)) {
            s.phase = phase::SOAKING.into();
            return out;
        }
        if !policy.soak.is_zero() {
            let failing = wave
                .clusters
                .iter()
                .find_map(|m| match gates.get(&m.cluster) {
                    Some(Err(why)) if present.contains(m.cluster.as_str()) => {
                        Some((m.cluster.clone(), why.clone()))
                    }
                    _ => None,
                });
            if let Some((cluster, why)) = failing {
                let reason = format!(
                    "failed its health gate after wave {:?} soaked for {}: {why}",
                    wave.name,
                    humantime(policy.soak)
                );
                out.halt(cluster, &target, reason, now);
                return out;
            }
        }
        let next = s.waves.len();
        if next >= policy.waves.len() {
            out.notes.push(note(
                None,
                "RolloutComplete",
                format!(
                    "revision {target} of ClusterClass {}/{} reached every Cluster",
                    policy.namespace, policy.name
                ),
                false,
            ));
            s.stable_revision = std::mem::take(&mut s.target_revision);
            s.phase = phase::STABLE.into();
            return out;
        }
        let opened = open(policy, next, s, &sorted, now);
        out.notes.push(note(
            None,
            "RolloutWaveOpened",
            format!(
                "wave {:?} of revision {target} opened with {} Cluster(s)",
                opened.name,
                opened.clusters.len()
            ),
            false,
        ));
        s.waves.push(opened);
    }
}

/// The wave each Cluster not yet at `target` would move in, were every wave to pass:
/// what a plan of a class change shows. Clusters already pinned to `target` have none.
pub fn assign(policy: &Policy, clusters: &[ClusterInfo], target: &str) -> BTreeMap<String, String> {
    let mut sorted: Vec<&ClusterInfo> = clusters.iter().collect();
    sorted.sort_by(|a, b| a.member.key.cmp(&b.member.key));
    let mut status = Status {
        target_revision: target.to_string(),
        ..Status::default()
    };
    let mut waves = BTreeMap::new();
    for i in 0..policy.waves.len() {
        let opened = open(policy, i, &status, &sorted, 0);
        for m in &opened.clusters {
            waves.insert(m.cluster.clone(), opened.name.clone());
        }
        status.waves.push(opened);
    }
    waves
}

/// Opens wave `i`: the Clusters not moved yet that its selector takes, as many as its
/// percentage leaves (all of them without one), in key order.
fn open(policy: &Policy, i: usize, s: &Status, sorted: &[&ClusterInfo], now: i64) -> WaveStatus {
    let wave = &policy.waves[i];
    let target = s.target_revision.as_str();
    let in_waves: BTreeSet<&str> = s
        .waves
        .iter()
        .flat_map(|w| w.clusters.iter().map(|m| m.cluster.as_str()))
        .collect();
    let moved = sorted
        .iter()
        .filter(|c| in_waves.contains(c.member.key.as_str()) || c.pin.as_deref() == Some(target))
        .count();
    let quota = match wave.percent {
        Some(p) => (sorted.len() * p as usize)
            .div_ceil(100)
            .saturating_sub(moved),
        None => usize::MAX,
    };
    let clusters = sorted
        .iter()
        .filter(|c| {
            !in_waves.contains(c.member.key.as_str())
                && c.pin.as_deref() != Some(target)
                && wave.selects(&c.member)
        })
        .take(quota)
        .map(|c| WaveMember {
            cluster: c.member.key.clone(),
            ..WaveMember::default()
        })
        .collect();
    WaveStatus {
        name: wave.name.clone(),
        opened_at: stamp(now),
        passed_at: String::new(),
        clusters,
    }
}

/// Pins moving every Cluster pinned to `from` to `to`.
fn pinned_to(sorted: &[&ClusterInfo], from: &str, to: &str) -> Vec<(String, String)> {
    sorted
        .iter()
        .filter(|c| c.pin.as_deref() == Some(from))
        .map(|c| (c.member.key.clone(), to.to_string()))
        .collect()
}

fn note(cluster: Option<String>, reason: &'static str, message: String, warning: bool) -> Note {
    Note {
        cluster,
        reason,
        message,
        warning,
    }
}

impl Step {
    /// Halts the rollout of `target` on `cluster`, for `reason`: the status says so and a
    /// warning names the Cluster.
    fn halt(&mut self, cluster: String, target: &str, reason: String, now: i64) {
        self.notes.push(note(
            Some(cluster.clone()),
            "RolloutHalted",
            format!("the rollout of revision {target} halted: Cluster {cluster} {reason}"),
            true,
        ));
        self.status.halted = Some(Halt {
            cluster,
            reason,
            at: stamp(now),
        });
        self.status.phase = phase::HALTED.into();
    }
}

/// A duration as Go prints short ones (`90s` -> `1m30s`).
fn humantime(d: std::time::Duration) -> String {
    topograph_api::duration::Duration::from_nanos(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .to_string()
}

#[cfg(test)]
mod tests;
