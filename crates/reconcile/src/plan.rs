//! Plans and impact: what a reconcile would write, found by running the reconcile
//! itself on a dry-run client ([`crate::dry_run`]) with the proposed objects staged
//! first. Nothing reaches the management cluster; the plan is exact for the next
//! reconcile because it is that reconcile, writes and all, minus the sending.
//!
//! A plan lists the objects the reconcile (and the proposed change itself) would
//! create, modify (an RFC 6902 patch and a unified diff of the YAML) and delete,
//! including the objects garbage collection would take with a deleted owner. Status
//! writes and Events are left out: they report, they do not shape the topology.

use std::collections::{BTreeMap, BTreeSet};

use futures::StreamExt;
use serde_json::Value;
use topograph_api::field::FieldError;
use topograph_api::model::Cluster;
use topograph_api::object::{ObjectExt, ObjectKey, group_of};

use crate::class::API_VERSION;
use crate::cluster::reconcile_cluster_with_hooks;
use crate::error::ReconcileError;
use crate::hooks::LifecycleHooks;
use topograph_engine::Engine;
use topograph_management::ManagementCluster;
use topograph_management::dry_run::Touched;

/// One object of a plan.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PlannedObject {
    /// apiVersion.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The object as it would be (created, modified) or as it is (deleted), without
    /// status and server-managed metadata.
    pub object: Value,
    /// For a modified object: RFC 6902 operations from now to then.
    pub patch: Value,
    /// For a modified object: a unified diff of its YAML.
    pub diff: String,
}

/// What applying a change and reconciling would do.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Plan {
    /// Objects that would be created.
    pub created: Vec<PlannedObject>,
    /// Objects that would change.
    pub modified: Vec<PlannedObject>,
    /// Objects that would be deleted.
    pub deleted: Vec<PlannedObject>,
    /// Why the reconcile would fail (it would report this on the Cluster), if it would.
    pub errors: Vec<String>,
    /// With a rollout policy on its class: the class revision the Cluster would get
    /// (and this plan renders) once its wave moves it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub revision: String,
}

impl Plan {
    /// Nothing would change.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.modified.is_empty() && self.deleted.is_empty()
    }
}

/// The plan for the Cluster `namespace/name` once `proposed` (new or changed
/// Clusters, ClusterClasses, templates; as they would be written, i.e. already
/// defaulted) is applied; `hooks` gives the runtime extensions renders call (a plan
/// should hand out ones that call no lifecycle hook: those have effects).
pub async fn plan_cluster(
    api: &ManagementCluster,
    engine: &dyn Engine,
    hooks: &dyn LifecycleHooks,
    proposed: &[Value],
    namespace: &str,
    name: &str,
) -> Result<Plan, ReconcileError> {
    let dry = api.dry_run();
    stage(&dry, proposed).await?;
    let revision = crate::rollout::planned::stage(&dry, proposed, namespace, name).await?;
    let mut errors = Vec::new();
    if let Err(e) = reconcile_cluster_with_hooks(&dry, engine, hooks, namespace, name).await {
        errors.push(e.to_string());
    }
    let mut plan = summarize(&dry, dry.dry_run_writes()).await?;
    plan.errors = errors;
    if let Some(revision) = revision {
        without_rollout_writes(&mut plan);
        plan.revision = revision;
    }
    Ok(plan)
}

/// One Cluster a proposed ClusterClass change reaches.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ImpactItem {
    /// The Cluster's namespace.
    pub namespace: String,
    /// The Cluster's name.
    pub name: String,
    /// What would change in that Cluster's topology (the class and templates proposed
    /// are not repeated here).
    pub plan: Plan,
    /// Why this Cluster makes the class change inadmissible (ClusterClass update
    /// rules that fail only because of it), with field paths.
    pub blocking: Vec<String>,
    /// With a rollout policy on the class: the wave that would move this Cluster to the
    /// proposed revision (`plan.revision`); empty when it is there already.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub wave: String,
}

/// The impact of `proposed` (one ClusterClass and any of its templates) on every
/// Cluster of that class in a namespace `visible` accepts, one item per Cluster in
/// namespace/name order, handed to `each` as soon as it is known (large fleets
/// stream); `each` returning false stops the planning (the caller went away). Returns
/// how many of those Clusters use the class.
pub async fn impact(
    api: &ManagementCluster,
    engine: &dyn Engine,
    hooks: &dyn LifecycleHooks,
    proposed: &[Value],
    visible: impl Fn(&str) -> bool,
    mut each: impl FnMut(ImpactItem) -> bool,
) -> Result<usize, ReconcileError> {
    let classes: Vec<&Value> = proposed
        .iter()
        .filter(|o| o.kind() == "ClusterClass")
        .collect();
    let [class] = classes.as_slice() else {
        return Err(ReconcileError::invalid(format!(
            "an impact needs exactly one ClusterClass among the proposed objects, found {}",
            classes.len()
        )));
    };
    let new = topograph_api::load::decode_cluster_class((*class).clone()).map_err(|p| {
        ReconcileError::invalid(format!("the proposed ClusterClass: {}", p.join("; ")))
    })?;
    let old = api
        .get(API_VERSION, "ClusterClass", class.namespace(), class.name())
        .await?
        .map(topograph_api::load::decode_cluster_class)
        .transpose()
        .map_err(|p| {
            ReconcileError::invalid(format!("the current ClusterClass: {}", p.join("; ")))
        })?;
    let mut users = Vec::new();
    for object in api.list(API_VERSION, "Cluster", "", &[]).await? {
        let Ok(cluster) = topograph_api::load::decode_cluster(object) else {
            continue;
        };
        let uses = cluster.topology.as_ref().is_some_and(|t| {
            t.class == new.name && t.class_namespace_or(&cluster.namespace) == new.namespace
        });
        // Clusters the caller may not see are not planned at all (each plan is a
        // reconcile's worth of reads).
        if uses && visible(&cluster.namespace) {
            users.push(cluster);
        }
    }
    users.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let validate = |clusters: &[&Cluster]| -> BTreeSet<String> {
        topograph_engine::validate::validate_cluster_class(&new, old.as_ref(), clusters)
            .iter()
            .map(FieldError::to_string)
            .collect()
    };
    let without_clusters = validate(&[]);
    // Each plan is a dry-run reconcile whose time goes mostly to reads from the
    // management cluster, so several run at once; `buffered` hands them out in the
    // Clusters' order all the same, and dropping the stream (the caller stopped
    // listening) abandons the ones in flight.
    // (By index: a closure taking `&Cluster` would make the stream's future generic
    // over that borrow's lifetime, which a spawned caller's `Send` check rejects.)
    let users = &users;
    let mut plans = futures::stream::iter(0..users.len())
        .map(|i| async move {
            let cluster = &users[i];
            let mut plan = plan_cluster(
                api,
                engine,
                hooks,
                proposed,
                &cluster.namespace,
                &cluster.name,
            )
            .await?;
            retain_cluster_objects(&mut plan, &cluster.name);
            Ok::<_, ReconcileError>((cluster, plan))
        })
        .buffered(IMPACT_CONCURRENCY);
    // The waves are the same for every Cluster's plan: computed with the first one
    // that names the revision.
    let mut waves: Option<BTreeMap<String, String>> = None;
    while let Some(planned) = plans.next().await {
        let (cluster, plan) = planned?;
        if waves.is_none() && !plan.revision.is_empty() {
            waves = Some(
                crate::rollout::planned::waves_of(api, &new.namespace, &new.name, &plan.revision)
                    .await?,
            );
        }
        let wave = waves
            .as_ref()
            .and_then(|w| w.get(&format!("{}/{}", cluster.namespace, cluster.name)))
            .cloned()
            .unwrap_or_default();
        let blocking = validate(&[cluster])
            .difference(&without_clusters)
            .cloned()
            .collect();
        let more = each(ImpactItem {
            namespace: cluster.namespace.clone(),
            name: cluster.name.clone(),
            plan,
            blocking,
            wave,
        });
        if !more {
            break;
        }
    }
    Ok(users.len())
}

/// Leaves out what a plan staged to render a proposed class under a rollout policy:
/// the revision and the Cluster's pin (and the reconcile's record of it).
fn without_rollout_writes(plan: &mut Plan) {
    use crate::rollout::planned::{is_rollout_object, keep_change};
    plan.created.retain(|o| !is_rollout_object(&o.kind));
    plan.modified.retain_mut(|o| {
        let Some(ops) = o.patch.as_array_mut() else {
            return true;
        };
        ops.retain_mut(keep_change);
        !ops.is_empty()
    });
}

/// How many Clusters an impact plans at once.
const IMPACT_CONCURRENCY: usize = 8;

/// Keeps the Cluster itself and the objects of its topology.
fn retain_cluster_objects(plan: &mut Plan, cluster: &str) {
    let ours = |o: &PlannedObject| {
        (o.kind == "Cluster" && o.name == cluster)
            || o.object
                .labels()
                .get("cluster.x-k8s.io/cluster-name")
                .map(String::as_str)
                == Some(cluster)
    };
    plan.created.retain(ours);
    plan.modified.retain(ours);
    plan.deleted.retain(ours);
}

/// Writes the proposed objects into the dry run as the gateway would: created when
/// new, replaced (whatever resourceVersion they carry) when they exist.
async fn stage(dry: &ManagementCluster, proposed: &[Value]) -> Result<(), ReconcileError> {
    for object in proposed {
        stage_one(dry, object).await?;
    }
    Ok(())
}

/// How often staging one object looks again after it appeared or went away between the
/// look and the dry-run write.
const STAGE_ATTEMPTS: usize = 5;

async fn stage_one(dry: &ManagementCluster, object: &Value) -> Result<(), ReconcileError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let current = dry
            .get(
                object.api_version(),
                object.kind(),
                object.namespace(),
                object.name(),
            )
            .await?;
        let written = match current {
            None => dry.create(object).await.map(drop),
            Some(_) => {
                // Unconditional: the proposal replaces the object as it is when the
                // dry run writes it, not as it was read a moment before (a
                // controller may have written it in between).
                let mut replacement = object.clone();
                if let Some(metadata) = replacement
                    .get_mut("metadata")
                    .and_then(Value::as_object_mut)
                {
                    metadata.remove("resourceVersion");
                }
                dry.replace(&replacement).await.map(drop)
            }
        };
        match written {
            Err(e) if e.has_code(409) && attempt < STAGE_ATTEMPTS => continue,
            other => return other.map_err(ReconcileError::from),
        }
    }
}

/// The dry run's writes as a plan, with garbage collection's cascade added.
async fn summarize(api: &ManagementCluster, touched: Vec<Touched>) -> Result<Plan, ReconcileError> {
    let mut plan = Plan::default();
    let mut written: BTreeSet<ObjectKey> = BTreeSet::new();
    // Kinds and namespaces the reconcile wrote: where owned objects can be.
    let mut kinds: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut deleted_uids: BTreeSet<String> = BTreeSet::new();
    for Touched { before, after, .. } in touched {
        let Some(any) = after.as_ref().or(before.as_ref()) else {
            continue;
        };
        if is_event(any) {
            continue;
        }
        written.insert(ObjectKey::of(any));
        kinds.insert((
            any.api_version().to_string(),
            any.kind().to_string(),
            any.namespace().to_string(),
        ));
        match (before, after) {
            (None, Some(after)) => {
                plan.created
                    .push(planned(&after, Value::Array(Vec::new()), String::new()))
            }
            (Some(before), None) => {
                if let Some(uid) = before.at(&["metadata", "uid"]).and_then(Value::as_str) {
                    deleted_uids.insert(uid.to_string());
                }
                plan.deleted
                    .push(planned(&before, Value::Array(Vec::new()), String::new()));
            }
            (Some(before), Some(after)) => {
                let (from, to) = (clean(&before), clean(&after));
                let patch = json_patch::diff(&from, &to);
                if patch.0.is_empty() {
                    continue;
                }
                let patch = serde_json::to_value(&patch).unwrap_or(Value::Array(Vec::new()));
                plan.modified
                    .push(planned(&after, patch, unified_diff(&from, &to, &after)));
            }
            (None, None) => {}
        }
    }
    // Garbage collection: live objects owned by something deleted go too, transitively.
    let mut candidates: BTreeMap<ObjectKey, Value> = BTreeMap::new();
    for (api_version, kind, namespace) in &kinds {
        for object in api.list(api_version, kind, namespace, &[]).await? {
            candidates.insert(ObjectKey::of(&object), object);
        }
    }
    loop {
        let mut more = Vec::new();
        for (key, object) in &candidates {
            if written.contains(key) {
                continue;
            }
            let owned = object
                .at(&["metadata", "ownerReferences"])
                .and_then(Value::as_array)
                .is_some_and(|owners| {
                    owners.iter().any(|o| {
                        o["uid"]
                            .as_str()
                            .is_some_and(|uid| deleted_uids.contains(uid))
                    })
                });
            if owned {
                more.push(key.clone());
            }
        }
        if more.is_empty() {
            break;
        }
        for key in more {
            written.insert(key.clone());
            if let Some(object) = candidates.get(&key) {
                if let Some(uid) = object.at(&["metadata", "uid"]).and_then(Value::as_str) {
                    deleted_uids.insert(uid.to_string());
                }
                plan.deleted
                    .push(planned(object, Value::Array(Vec::new()), String::new()));
            }
        }
    }
    Ok(plan)
}

fn is_event(object: &Value) -> bool {
    let group = group_of(object.api_version());
    object.kind() == "Event" && (group.is_empty() || group == "events.k8s.io")
}

fn planned(object: &Value, patch: Value, diff: String) -> PlannedObject {
    PlannedObject {
        api_version: object.api_version().to_string(),
        kind: object.kind().to_string(),
        namespace: object.namespace().to_string(),
        name: object.name().to_string(),
        object: clean(object),
        patch,
        diff,
    }
}

/// The object without status and the metadata only the server manages.
pub fn clean(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove("status");
        if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
            for field in [
                "resourceVersion",
                "generation",
                "uid",
                "creationTimestamp",
                "managedFields",
                "selfLink",
            ] {
                metadata.remove(field);
            }
        }
    }
    out
}

fn unified_diff(from: &Value, to: &Value, object: &Value) -> String {
    let yaml = |v: &Value| serde_saphyr::to_string(v).unwrap_or_else(|_| v.to_string());
    let (a, b) = (yaml(from), yaml(to));
    let path = format!("{}/{}/{}", object.kind(), object.namespace(), object.name());
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
