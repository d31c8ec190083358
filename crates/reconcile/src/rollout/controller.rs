//! Drives every `RolloutPolicy` of one management cluster: each [`Controller::tick`]
//! records the live revision of every class, then steps each policy's rollout
//! ([`super::waves::step`]) and writes what the step decided, status first (with the
//! resourceVersion it read, so two drivers never both win), then the pins, then Events
//! and the `RolloutHealthy` condition on the policy and the class. Everything a rollout
//! knows is in the policy's status and the Clusters' pins, so a new driver (another
//! process, after a restart) goes on where the last one stopped.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};
use topograph_api::object::ObjectExt;
use topograph_management::ManagementCluster;

use super::pin::annotation;
use super::policy::{self, Member};
use super::revision;
use super::waves::{self, ClusterInfo, Gates, Note, Status, phase};
use super::{API_VERSION, CONDITION, PIN_ANNOTATION, POLICY_KIND, REVISION_KIND, class_of};
use crate::class;
use crate::conditions::{self, Condition};
use crate::error::ReconcileError;
use crate::events;

/// Queues Clusters `(namespace, name)` for a reconcile.
pub type Enqueue = Arc<dyn Fn(Vec<(String, String)>) + Send + Sync>;

/// What one tick did, for metrics and logs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Clusters pinned (moved forward or back), by policy `namespace/name`.
    pub pins: BTreeMap<String, u64>,
    /// Revisions recorded.
    pub revisions: u64,
    /// Notes by reason (`RolloutHalted`, `RolloutWaveOpened`, ...).
    pub notes: BTreeMap<&'static str, u64>,
    /// Each policy's phase after the tick, by `namespace/name`.
    pub phases: BTreeMap<String, String>,
}

/// The rollout driver of one management cluster.
pub struct Controller {
    api: ManagementCluster,
    enqueue: Enqueue,
    /// Revisions known to exist (names), so a tick creates each at most once.
    recorded: HashSet<String>,
    ticks: u64,
}

fn key(object: &Value) -> String {
    format!("{}/{}", object.namespace(), object.name())
}

impl Controller {
    /// A driver for `api`, queueing the Clusters it moves through `enqueue`.
    pub fn new(api: ManagementCluster, enqueue: Enqueue) -> Self {
        Controller {
            api,
            enqueue,
            recorded: HashSet::new(),
            ticks: 0,
        }
    }

    /// One pass over the management cluster's classes and policies.
    pub async fn tick(&mut self) -> Result<Report, ReconcileError> {
        self.tick_at(waves::now_ms()).await
    }

    /// [`Controller::tick`] at a given time (milliseconds since the epoch).
    pub async fn tick_at(&mut self, now: i64) -> Result<Report, ReconcileError> {
        let mut report = Report::default();
        let policies = self.api.list(API_VERSION, POLICY_KIND, "", &[]).await?;
        let with_policy: BTreeSet<String> = policies.iter().map(key).collect();
        // Classes without a policy get their revisions recorded too, less often.
        if self.ticks.is_multiple_of(10) {
            for class in self
                .api
                .list(class::API_VERSION, "ClusterClass", "", &[])
                .await?
            {
                if !with_policy.contains(&key(&class)) {
                    self.live_revision(&class, &mut report).await?;
                }
            }
        }
        self.ticks += 1;
        let mut clusters: Option<Vec<Value>> = None;
        for policy in policies {
            let name = key(&policy);
            match self.drive(&policy, &mut clusters, now, &mut report).await {
                Ok(()) => {}
                Err(e) => tracing::warn!(policy = %name, error = %e, "rollout step failed"),
            }
        }
        Ok(report)
    }

    /// The live revision of `class`, recorded if new; `None` while the class is not
    /// reconciled or a template is missing (nothing to roll out yet).
    async fn live_revision(
        &mut self,
        class: &Value,
        report: &mut Report,
    ) -> Result<Option<String>, ReconcileError> {
        if class::not_reconciled(class).is_some() {
            return Ok(None);
        }
        let Some(templates) = super::templates_of(&self.api, class).await? else {
            return Ok(None);
        };
        let object = revision::object(class, &templates);
        let name = object.name().to_string();
        if !self.recorded.contains(&name) {
            if self
                .api
                .get(API_VERSION, REVISION_KIND, class.namespace(), &name)
                .await?
                .is_none()
            {
                match self.api.create(&object).await {
                    Ok(_) => {
                        report.revisions += 1;
                        if let Err(e) = self.prune(class, &name).await {
                            tracing::warn!(class = %key(class), error = %e, "old revisions not pruned");
                        }
                    }
                    Err(e) if e.has_code(409) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            self.recorded.insert(name.clone());
        }
        Ok(Some(name))
    }

    /// Deletes the class's revisions beyond the newest [`KEPT_REVISIONS`] that nothing
    /// names: not the policy's stable or target revision, no Cluster's pin or record of
    /// what it rendered, not `newest`.
    async fn prune(&mut self, class: &Value, newest: &str) -> Result<(), ReconcileError> {
        let (namespace, name) = (class.namespace(), class.name());
        let mut revisions = self
            .api
            .list(
                API_VERSION,
                REVISION_KIND,
                namespace,
                &[(super::CLASS_LABEL, &revision::class_label(name))],
            )
            .await?;
        // A shortened label may be shared: the revision's spec names its class.
        revisions.retain(|r| r.pointer("/spec/clusterClass").and_then(Value::as_str) == Some(name));
        if revisions.len() <= KEPT_REVISIONS {
            return Ok(());
        }
        let mut named: BTreeSet<String> = BTreeSet::from([newest.to_string()]);
        if let Some(policy) = self
            .api
            .get(API_VERSION, POLICY_KIND, namespace, name)
            .await?
        {
            for field in ["stableRevision", "targetRevision"] {
                if let Some(r) = policy
                    .pointer(&format!("/status/{field}"))
                    .and_then(Value::as_str)
                {
                    named.insert(r.to_string());
                }
            }
        }
        let class_key = (namespace.to_string(), name.to_string());
        for cluster in self
            .api
            .list(class::API_VERSION, "Cluster", "", &[])
            .await?
        {
            if class_of(&cluster).as_ref() == Some(&class_key) {
                for a in [PIN_ANNOTATION, super::OBSERVED_ANNOTATION] {
                    named.extend(annotation(&cluster, a).map(str::to_string));
                }
            }
        }
        // Newest first; the name breaks ties of the same second.
        revisions.sort_by(|a, b| {
            let at = |o: &Value| {
                o.pointer("/metadata/creationTimestamp")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            at(b).cmp(&at(a)).then_with(|| b.name().cmp(a.name()))
        });
        for old in revisions.iter().skip(KEPT_REVISIONS) {
            if named.contains(old.name()) {
                continue;
            }
            self.api.delete(old).await?;
            self.recorded.remove(old.name());
            tracing::info!(class = %key(class), revision = old.name(), "revision pruned");
        }
        Ok(())
    }

    async fn drive(
        &mut self,
        policy_object: &Value,
        clusters: &mut Option<Vec<Value>>,
        now: i64,
        report: &mut Report,
    ) -> Result<(), ReconcileError> {
        let (namespace, name) = (policy_object.namespace(), policy_object.name());
        // A status someone garbled is left alone: stepping from an empty one would
        // forget the rollout in flight.
        let status = Status::of(policy_object).map_err(ReconcileError::invalid)?;
        let Some(class) = self
            .api
            .get(class::API_VERSION, "ClusterClass", namespace, name)
            .await?
        else {
            let message = if status.target_revision.is_empty() {
                format!("ClusterClass {namespace}/{name} does not exist")
            } else {
                format!(
                    "ClusterClass {namespace}/{name} was deleted during the rollout of revision {}: the rollout ended",
                    status.target_revision
                )
            };
            let mut ended = status.clone();
            ended.target_revision.clear();
            ended.phase = phase::CLASS_DELETED.into();
            let condition = Condition::not_ok(
                CONDITION,
                "ClusterClassDeleted",
                "ClusterClassDeleted",
                message,
            );
            // Written once: what it says then (the rollout it ended) stays.
            if status.phase != ended.phase {
                self.write_status(policy_object, &ended, &condition).await?;
            }
            report.phases.insert(key(policy_object), ended.phase);
            return Ok(());
        };
        let policy = match policy::parse(policy_object) {
            Ok(policy) => policy,
            Err(errors) => {
                let message = errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ");
                let condition =
                    Condition::not_ok(CONDITION, "InvalidPolicy", "InvalidPolicy", message);
                if !has_condition(policy_object, &condition) {
                    self.write_status(policy_object, &status, &condition)
                        .await?;
                }
                return Ok(());
            }
        };
        let Some(live) = self.live_revision(&class, report).await? else {
            return Ok(());
        };
        // Nothing in flight and nothing new: no need to read the fleet.
        let settled = status.target_revision.is_empty() && status.stable_revision == live;
        if settled && has_condition(policy_object, &condition_for(&status)) {
            report
                .phases
                .insert(key(policy_object), status.phase.clone());
            return Ok(());
        }
        let all = match clusters {
            Some(all) => all,
            None => clusters.insert(
                self.api
                    .list(class::API_VERSION, "Cluster", "", &[])
                    .await?,
            ),
        };
        let class_key = (namespace.to_string(), name.to_string());
        let members: Vec<&Value> = all
            .iter()
            .filter(|c| class_of(c).as_ref() == Some(&class_key))
            .collect();
        let infos: Vec<ClusterInfo> = members
            .iter()
            .map(|c| ClusterInfo {
                member: Member {
                    key: key(c),
                    labels: c
                        .pointer("/metadata/labels")
                        .and_then(Value::as_object)
                        .map(|l| {
                            l.iter()
                                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                                .collect()
                        })
                        .unwrap_or_default(),
                },
                pin: annotation(c, PIN_ANNOTATION).map(str::to_string),
            })
            .collect();
        let mut gates = Gates::new();
        for wanted in waves::gates_needed(&policy, &status, now) {
            if let Some(cluster) = members.iter().find(|c| key(c) == wanted) {
                let gate = self.gate(cluster, &status.target_revision).await?;
                gates.insert(wanted, gate);
            }
        }
        let mut step = waves::step(&policy, &status, &live, &infos, &gates, now);
        // A driver that died between writing the status and the pins left moved
        // Clusters unpinned: pin them again.
        if step.status.phase != phase::ABORTED && !step.status.target_revision.is_empty() {
            let target = step.status.target_revision.clone();
            for m in step.status.waves.iter().flat_map(|w| &w.clusters) {
                let pinned = infos
                    .iter()
                    .find(|c| c.member.key == m.cluster)
                    .map(|c| c.pin.as_deref());
                if !m.moved_at.is_empty()
                    && matches!(pinned, Some(p) if p != Some(target.as_str()))
                    && !step.pins.iter().any(|(k, _)| k == &m.cluster)
                {
                    step.pins.push((m.cluster.clone(), target.clone()));
                }
            }
        }
        let condition = condition_for(&step.status);
        if step.status != status || !has_condition(policy_object, &condition) {
            match self
                .write_status(policy_object, &step.status, &condition)
                .await
            {
                Ok(()) => {}
                // Someone else wrote the policy in between: this step is void; the next
                // one starts from what they wrote.
                Err(ReconcileError::Api(e)) if topograph_management::error::has_code(&e, 409) => {
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        // A step that moves Clusters or has news is a trace of its own, which the
        // reconciles of the Clusters it queues continue.
        if step.pins.is_empty() && step.notes.is_empty() {
            self.set_class_condition(&class, &condition).await;
            report
                .phases
                .insert(key(policy_object), step.status.phase.clone());
            return Ok(());
        }
        let span = tracing::info_span!(
            parent: None,
            "rollout",
            policy = %key(policy_object),
            target = %step.status.target_revision,
            phase = %step.status.phase,
            pins = step.pins.len(),
        );
        let pins = async {
            let mut queued = Vec::new();
            for (cluster_key, revision) in &step.pins {
                let Some(cluster) = members.iter().find(|c| &key(c) == cluster_key) else {
                    continue;
                };
                let patch = json!({"metadata": {"annotations": {PIN_ANNOTATION: revision}}});
                self.api.merge_patch(cluster, &patch).await?;
                tracing::info!(cluster = %cluster_key, revision, "pinned");
                queued.push((cluster.namespace().to_string(), cluster.name().to_string()));
                *report.pins.entry(key(policy_object)).or_default() += 1;
            }
            if !queued.is_empty() {
                (self.enqueue)(queued);
            }
            for note in &step.notes {
                *report.notes.entry(note.reason).or_default() += 1;
                self.tell(&class, &members, note);
            }
            Ok::<_, ReconcileError>(())
        };
        tracing::Instrument::instrument(pins, span).await?;
        self.set_class_condition(&class, &condition).await;
        report
            .phases
            .insert(key(policy_object), step.status.phase.clone());
        Ok(())
    }

    /// The gate of a moved Cluster: its control plane and MachineDeployments read now.
    async fn gate(
        &self,
        cluster: &Value,
        target: &str,
    ) -> Result<Result<(), String>, ReconcileError> {
        let control_plane = match cluster.pointer("/spec/controlPlaneRef") {
            Some(r) => {
                let get = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or_default();
                let ns = Some(get("namespace"))
                    .filter(|n| !n.is_empty())
                    .unwrap_or(cluster.namespace());
                self.api
                    .get(get("apiVersion"), get("kind"), ns, get("name"))
                    .await?
            }
            None => None,
        };
        let machine_deployments = self
            .api
            .list(
                class::API_VERSION,
                "MachineDeployment",
                cluster.namespace(),
                &[
                    ("cluster.x-k8s.io/cluster-name", cluster.name()),
                    ("topology.cluster.x-k8s.io/owned", ""),
                ],
            )
            .await?;
        Ok(super::gate::check(
            cluster,
            target,
            control_plane.as_ref(),
            &machine_deployments,
        ))
    }

    async fn write_status(
        &self,
        policy: &Value,
        status: &Status,
        condition: &Condition,
    ) -> Result<(), ReconcileError> {
        let mut written = serde_json::to_value(status)
            .map_err(|e| ReconcileError::invalid(format!("rollout status: {e}")))?;
        let generation = policy
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if let Some(fields) = written.as_object_mut() {
            // The policy's own conditions are metav1 Conditions under `conditions`.
            let mut holder = serde_json::Map::new();
            if let Some(old) = policy.pointer("/status/v1beta2") {
                holder.insert("v1beta2".into(), old.clone());
            }
            if let Some(old) = policy.pointer("/status/conditions") {
                holder.insert("conditions".into(), old.clone());
            }
            conditions::set(&mut holder, condition, generation);
            if let Some(v) = holder
                .remove("v1beta2")
                .and_then(|mut v| v.get_mut("conditions").map(Value::take))
            {
                fields.insert("conditions".into(), v);
            }
            fields.insert("observedGeneration".into(), json!(generation));
        }
        let mut object = policy.clone();
        object["status"] = written;
        self.api.replace_status(&object).await?;
        Ok(())
    }

    /// An Event on the Cluster a note names, else on the class; warnings as Warning.
    fn tell(&self, class: &Value, members: &[&Value], note: &Note) {
        let involved = note
            .cluster
            .as_ref()
            .and_then(|k| members.iter().find(|c| &key(c) == k).copied())
            .unwrap_or(class);
        if note.warning {
            tracing::warn!(reason = note.reason, class = %key(class), "{}", note.message);
        } else {
            tracing::info!(reason = note.reason, class = %key(class), "{}", note.message);
        }
        let event = |on: &Value| {
            events::event_from(COMPONENT, on, note.reason, &note.message, note.warning)
        };
        self.api.record_event(event(involved));
        if note.cluster.is_some() {
            // The class hears of its Clusters' harm too.
            self.api.record_event(event(class));
        }
    }

    /// `RolloutHealthy` on the class's status, when it changed.
    async fn set_class_condition(&self, class: &Value, condition: &Condition) {
        let mut status = class
            .get("status")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let generation = class
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        conditions::set(&mut status, condition, generation);
        let Some(patch) = conditions::status_patch(class.get("status"), &status) else {
            return;
        };
        if let Err(e) = self.api.merge_patch_status(class, &patch).await {
            tracing::warn!(class = %key(class), error = %e, "RolloutHealthy not written on the class");
        }
    }
}

/// Revisions of a class kept besides those something names.
pub const KEPT_REVISIONS: usize = 10;

/// The component rollout Events are reported by.
pub const COMPONENT: &str = "topograph/rollout-controller";

/// `RolloutHealthy` for a status: False while halted or aborted, True otherwise.
fn condition_for(status: &Status) -> Condition {
    match status.phase.as_str() {
        phase::HALTED => {
            let (cluster, reason) = status
                .halted
                .as_ref()
                .map(|h| (h.cluster.as_str(), h.reason.as_str()))
                .unwrap_or_default();
            Condition::not_ok(
                CONDITION,
                "RolloutHalted",
                "RolloutHalted",
                format!(
                    "the rollout of revision {} halted: Cluster {cluster} {reason}",
                    status.target_revision
                ),
            )
            .with_severity("Warning")
        }
        phase::ABORTED => Condition::not_ok(
            CONDITION,
            "RolloutAborted",
            "RolloutAborted",
            format!(
                "the rollout of revision {} was aborted; Clusters render revision {}",
                status.target_revision, status.stable_revision
            ),
        ),
        phase::PAUSED => Condition::not_ok(
            CONDITION,
            "RolloutPaused",
            "RolloutPaused",
            format!(
                "the rollout of revision {} is paused",
                status.target_revision
            ),
        ),
        _ => {
            // Soaking or progressing alike: the class's status is written only when
            // the rollout starts, halts, aborts or ends.
            let reason = if status.target_revision.is_empty() {
                phase::STABLE
            } else {
                "RolloutProgressing"
            };
            let mut ok = Condition::ok(CONDITION, reason);
            ok.message = if status.target_revision.is_empty() {
                format!("every Cluster renders revision {}", status.stable_revision)
            } else {
                format!(
                    "rolling out revision {} (from {})",
                    status.target_revision, status.stable_revision
                )
            };
            ok
        }
    }
}

fn has_condition(policy: &Value, condition: &Condition) -> bool {
    policy
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some(&condition.type_)
                    && c.get("status").and_then(Value::as_str)
                        == Some(if condition.status { "True" } else { "False" })
                    && c.get("reason").and_then(Value::as_str) == Some(&condition.reason)
                    && c.get("message").and_then(Value::as_str) == Some(&condition.message)
            })
        })
}
