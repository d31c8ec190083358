//! Which Clusters a change affects, for the watchers: a Cluster's own changes affect it;
//! its MachineDeployments and MachinePools (objects carrying
//! `cluster.x-k8s.io/cluster-name`), its infrastructure cluster and its control plane
//! (the objects its `spec` references) affect that Cluster; a ClusterClass change, or a
//! change of a template a class references, affects every Cluster of the class.
//!
//! Those are the changes Cluster API's topology controller watches. A Cluster's other
//! objects (template copies, health checks, the objects a MachinePool references, and
//! the Machines' bootstrap configs and infrastructure machines, which share kinds with
//! those) change as providers work on them, and a reconcile acts on none of that:
//! mapping them to their Cluster cost each new Cluster a reconcile or two more, all
//! reads and no writes. A change there is reconciled at the next resync, as Cluster API
//! reconciles it at its next sync.
//!
//! Once a Cluster is settled (its last reconcile saw its current generation, found
//! nothing pending and reported it provisioned, and no lifecycle hook is pending), a
//! change of those objects only in their status affects nothing either: with nothing
//! to upgrade or create, no decision of a reconcile reads their status. Providers
//! report replicas coming up long after a new Cluster's topology is written; each
//! report cost a reconcile that wrote nothing.
//!
//! A Cluster change only in what a reconcile reports on it (its `TopologyReconciled`
//! condition, observed generation, phase) or writes on it (the references to its
//! infrastructure cluster and control plane, the control plane endpoint, the topology's
//! labels, the upgrade step) affects nothing: the reconcile that wrote it had already
//! seen the rest, so a new Cluster converges without a reconcile more for its own
//! writes. (Someone else's edit of those fields is put right at the next resync.)
//!
//! The index is built from the watch streams themselves (Clusters say which class they
//! use, classes say which templates they reference), so it needs no extra reads.
//!
//! It reads objects only as [`Summary`]s, taken by the watch tasks as each object is
//! read off the wire: changes wait in a channel per management cluster between the
//! watch tasks and the index, and a burst of new Clusters filled those channels with
//! whole objects (the applier holding the watches of ten management clusters of 1,000
//! Clusters peaked at 238 MB). A summary is the few names and a hash the index reads.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;
use topograph_api::digest::of_json as hash_of;
use topograph_api::model::ObjectRef;
use topograph_api::object::{ObjectExt, ObjectKey, group_of};

use topograph_reconcile::class::template_refs;

/// `(namespace, name)`.
pub type Name = (String, String);

/// What the index reads of one object, whatever happened to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Summary {
    /// A Cluster.
    Cluster(ClusterSummary),
    /// A ClusterClass.
    Class(ClassSummary),
    /// An ExtensionConfig: any change of one is discovered again, whichever it is.
    ExtensionConfig,
    /// Anything else: a Cluster's object or a class's template.
    Object(ObjectSummary),
}

/// What the index reads of a Cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSummary {
    /// Its `(namespace, name)`.
    pub name: Name,
    /// `(namespace, name)` of its topology's ClusterClass; `None` without a topology.
    pub class: Option<Name>,
    /// Its infrastructure cluster and control plane (`spec.infrastructureRef`,
    /// `spec.controlPlaneRef`), those it names.
    pub refs: Vec<ObjectKey>,
    /// Whether its last reconcile left it settled ([`settled`]).
    pub settled: bool,
    /// A hash of the Cluster without what a reconcile reports or writes on it
    /// ([`topograph_reconcile::cluster::without_report`],
    /// [`topograph_reconcile::cluster::without_topology_fields`]): equal hashes are a
    /// change only in what a reconcile made it.
    pub unreported: u64,
}

/// What the index reads of a ClusterClass: the templates it references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassSummary {
    /// Its `(namespace, name)`.
    pub name: Name,
    /// Every template reference of the class, its namespace filled in (an empty one is
    /// the class's). Empty when the class cannot be read.
    pub templates: Vec<ObjectRef>,
    /// A hash of what its Clusters' reconciles read of it ([`what_clusters_read`]).
    pub read: u64,
    /// A hash of the part of that its reconciles do not write (identity and spec).
    pub spec: u64,
    /// Whether a reconcile of it has reported anything its Clusters read (observed
    /// generation, `VariablesReady`).
    pub reported: bool,
}

/// What the index reads of any other object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectSummary {
    /// An object labelled with its Cluster (`cluster.x-k8s.io/cluster-name`).
    Owned {
        /// `(namespace, cluster name)`.
        cluster: Name,
        /// The object's own key.
        key: ObjectKey,
        /// What a reconcile reads of it.
        digests: Digests,
    },
    /// An unlabelled object: classes may reference it as a template.
    Other(ObjectKey, Digests),
}

/// Hashes of what a reconcile reads of an object ([`Digests::of`]): equal digests are
/// a change in nothing it reads (a resourceVersion, managedFields, an owner reference
/// to something other than a Cluster, such as the one the shim Secret's deletion
/// takes away).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digests {
    /// Spec and the metadata of [`DIGESTED_METADATA`]: what others than providers
    /// change.
    pub unreported: u64,
    /// Status: what providers report.
    pub status: u64,
}

const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

fn name_of(object: &Value) -> Name {
    (object.namespace().to_string(), object.name().to_string())
}

fn is_kind(object: &Value, kind: &str) -> bool {
    object.kind() == kind && group_of(object.api_version()) == "cluster.x-k8s.io"
}

fn is_extension_config(object: &Value) -> bool {
    object.kind() == "ExtensionConfig"
        && group_of(object.api_version()) == "runtime.cluster.x-k8s.io"
}

impl Summary {
    /// The summary of `object`, as the index reads it.
    pub fn of(object: Value) -> Summary {
        Summary::read(object, Digests::of)
    }

    /// The summary of `object`, which may be only the parts the index reads of it,
    /// with `digests` giving its [`Digests`] when it is an [`ObjectSummary`].
    pub(crate) fn read(object: Value, digests: impl FnOnce(&Value) -> Digests) -> Summary {
        if is_kind(&object, "Cluster") {
            Summary::Cluster(ClusterSummary::of(&object))
        } else if is_kind(&object, "ClusterClass") {
            Summary::Class(ClassSummary::of(object))
        } else if is_extension_config(&object) {
            Summary::ExtensionConfig
        } else if let Some(cluster) = object.labels().get(CLUSTER_NAME_LABEL) {
            Summary::Object(ObjectSummary::Owned {
                cluster: (object.namespace().to_string(), cluster.clone()),
                key: ObjectKey::of(&object),
                digests: digests(&object),
            })
        } else {
            Summary::Object(ObjectSummary::Other(
                ObjectKey::of(&object),
                digests(&object),
            ))
        }
    }
}

impl ClusterSummary {
    fn of(cluster: &Value) -> ClusterSummary {
        let mut hasher = DefaultHasher::new();
        let unreported = topograph_reconcile::cluster::without_report(cluster);
        let mut rest = topograph_reconcile::cluster::without_topology_fields(unreported);
        // The generation moves with the spec, which is hashed: a reconcile's own spec
        // write moves it too.
        if let Some(metadata) = rest.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("generation");
        }
        rest.to_string().hash(&mut hasher);
        let class = cluster
            .at(&["spec", "topology", "class"])
            .and_then(Value::as_str)
            .map(|class| {
                let namespace = cluster
                    .at(&["spec", "topology", "classNamespace"])
                    .and_then(Value::as_str)
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or(cluster.namespace());
                (namespace.to_string(), class.to_string())
            });
        let refs = ["infrastructureRef", "controlPlaneRef"]
            .into_iter()
            .filter_map(|field| reference(cluster, field))
            .collect();
        ClusterSummary {
            name: name_of(cluster),
            class,
            refs,
            settled: settled(cluster),
            unreported: hasher.finish(),
        }
    }
}

/// Whether `cluster`'s last reconcile saw its current generation and reported its
/// topology reconciled (nothing pending) and provisioned, no lifecycle hook pending.
pub fn settled(cluster: &Value) -> bool {
    let generation = cluster.at(&["metadata", "generation"]);
    if generation.is_none() || generation != cluster.at(&["status", "observedGeneration"]) {
        return false;
    }
    if cluster.at(&["status", "phase"]).and_then(Value::as_str) != Some("Provisioned")
        || cluster.at(&["metadata", "deletionTimestamp"]).is_some()
        || cluster
            .annotations()
            .contains_key(topograph_reconcile::hooks::PENDING_HOOKS_ANNOTATION)
    {
        return false;
    }
    // Cluster API's conditions in both lists a version keeps.
    let mut reported = false;
    for path in [
        "/status/conditions",
        "/status/v1beta2/conditions",
        "/status/deprecated/v1beta1/conditions",
    ] {
        let conditions = cluster.pointer(path).and_then(Value::as_array);
        for condition in conditions.into_iter().flatten() {
            if condition.get("type").and_then(Value::as_str)
                == Some(topograph_reconcile::cluster::TOPOLOGY_RECONCILED)
            {
                if condition.get("status").and_then(Value::as_str) != Some("True") {
                    return false;
                }
                reported = true;
            }
        }
    }
    reported
}

/// The metadata [`Digests::unreported`] covers, in the order it reads it. Of the owner
/// references only those to a Cluster count: the reconcile reads whether the Cluster
/// owns an object, nothing else of them.
pub(crate) const DIGESTED_METADATA: [&str; 4] = [
    "labels",
    "annotations",
    "ownerReferences",
    "deletionTimestamp",
];

impl Digests {
    /// The digests of a whole object.
    pub fn of(object: &Value) -> Digests {
        Digests::from_parts(
            DIGESTED_METADATA.map(|field| object.at(&["metadata", field])),
            crate::digest::of(object.get("spec")),
            crate::digest::of(object.get("status")),
        )
    }

    /// The digests from their parts: the metadata of [`DIGESTED_METADATA`] and the
    /// hashes of spec and status ([`crate::digest`], `null` when absent).
    pub(crate) fn from_parts(metadata: [Option<&Value>; 4], spec: u64, status: u64) -> Digests {
        let mut hasher = DefaultHasher::new();
        for (field, value) in DIGESTED_METADATA.iter().zip(metadata) {
            if *field == "ownerReferences" {
                crate::digest::value(&mut hasher, &cluster_owners(value));
            } else {
                crate::digest::value(&mut hasher, value.unwrap_or(&Value::Null));
            }
        }
        hasher.write_u64(spec);
        Digests {
            unreported: hasher.finish(),
            status,
        }
    }
}

/// The owner references to a Cluster among `owners`.
fn cluster_owners(owners: Option<&Value>) -> Value {
    let owners = owners.and_then(Value::as_array).into_iter().flatten();
    Value::Array(
        owners
            .filter(|o| o.get("kind").and_then(Value::as_str) == Some("Cluster"))
            .cloned()
            .collect(),
    )
}

/// The object `cluster`'s `spec.<field>` references, as v1beta1 (`apiVersion`) or
/// v1beta2 (`apiGroup`) write a reference; in the Cluster's namespace (a reference
/// cannot leave it).
fn reference(cluster: &Value, field: &str) -> Option<ObjectKey> {
    let r = cluster.at(&["spec", field])?;
    let text = |key: &str| r.get(key).and_then(Value::as_str);
    let group = match (text("apiGroup"), text("apiVersion")) {
        (Some(group), _) => group,
        (None, Some(api_version)) => group_of(api_version),
        (None, None) => return None,
    };
    Some(ObjectKey {
        group: group.to_string(),
        kind: text("kind")?.to_string(),
        namespace: cluster.namespace().to_string(),
        name: text("name")?.to_string(),
    })
}

/// Whether a change of `key`, an object of a Cluster whose spec references `refs`, is
/// one its topology reconcile acts on (see the module's documentation).
fn triggers(key: &ObjectKey, refs: Option<&Vec<ObjectKey>>) -> bool {
    let worker = key.group == "cluster.x-k8s.io"
        && matches!(key.kind.as_str(), "MachineDeployment" | "MachinePool");
    worker || refs.is_some_and(|refs| refs.contains(key))
}

impl ClassSummary {
    fn of(class: Value) -> ClassSummary {
        let name = name_of(&class);
        let read = what_clusters_read(&class);
        let spec = hash_of(&read[..SPEC_PARTS]);
        let reported = !read[OBSERVED_GENERATION].is_null() || !read[VARIABLES_READY].is_null();
        let read = hash_of(&read[..]);
        let templates = match topograph_api::load::decode_cluster_class(class) {
            Ok(decoded) => template_refs(&decoded)
                .into_iter()
                .map(|mut r| {
                    if r.namespace.is_empty() {
                        r.namespace.clone_from(&name.0);
                    }
                    r
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        ClassSummary {
            name,
            templates,
            read,
            spec,
            reported,
        }
    }
}

/// What one change means to the watchers.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Affected {
    /// The Clusters to reconcile.
    pub clusters: Vec<Name>,
    /// Classes reference template kinds not seen before: watch them too.
    pub new_kinds: bool,
    /// An ExtensionConfig changed: discover them again.
    pub extension_config: bool,
    /// The change is of what every Cluster of a class reads alike (the class, a template
    /// it references): appliers read those from caches their own watches keep, so the
    /// Clusters are queued once more a little later (see `class_cache` in
    /// topograph-management).
    pub class_level: bool,
}

/// The index of one management cluster.
#[derive(Debug, Default)]
pub struct WatchIndex {
    cluster_class: HashMap<Name, Name>,
    /// [`ClusterSummary::refs`] of each Cluster, as last seen.
    cluster_refs: HashMap<Name, Vec<ObjectKey>>,
    /// The Clusters last seen settled.
    settled: HashSet<Name>,
    /// The [`Digests`] of each object whose changes affect its Cluster, by a hash of
    /// its key (the holder of a fleet's watches keeps them for each of thousands of
    /// Clusters' objects).
    owned_seen: HashMap<u64, Digests>,
    /// [`ClusterSummary::unreported`] of each Cluster, as last seen.
    seen: HashMap<Name, u64>,
    /// The templates each class references.
    class_templates: HashMap<Name, BTreeSet<ObjectKey>>,
    /// Class templates seen so far (to tell a change from a first sighting).
    templates_seen: HashMap<ObjectKey, Digests>,
    /// `(apiVersion, kind)` of every template kind classes reference.
    template_kinds: BTreeSet<(String, String)>,
    /// Of each class as last seen: [`ClassSummary::read`], [`ClassSummary::spec`],
    /// [`ClassSummary::reported`].
    class_seen: HashMap<Name, (u64, u64, bool)>,
}

/// How many of [`what_clusters_read`]'s items are the class's identity and spec, and
/// where its observed generation and `VariablesReady` are.
const SPEC_PARTS: usize = 4;
const OBSERVED_GENERATION: usize = 4;
const VARIABLES_READY: usize = 6;

/// What a Cluster's reconcile reads of its class: its identity and spec (the first
/// [`SPEC_PARTS`] items), and whether it is ready for its Clusters (observed generation, variables,
/// `VariablesReady` as status and message).
fn what_clusters_read(class: &Value) -> [Value; 7] {
    let ready =
        topograph_reconcile::conditions::find(class, topograph_reconcile::class::VARIABLES_READY)
            .or_else(|| {
                class
                    .at(&["status", "conditions"])
                    .and_then(Value::as_array)?
                    .iter()
                    .find(|c| {
                        c.get("type").and_then(Value::as_str)
                            == Some(topograph_reconcile::class::VARIABLES_READY)
                    })
            })
            .map(|c| serde_json::json!([c.get("status"), c.get("message")]));
    let at = |path: &[&str]| class.at(path).cloned().unwrap_or(Value::Null);
    [
        at(&["metadata", "generation"]),
        at(&["metadata", "labels"]),
        at(&["metadata", "annotations"]),
        class.get("spec").cloned().unwrap_or(Value::Null),
        at(&["status", "observedGeneration"]),
        at(&["status", "variables"]),
        ready.unwrap_or(Value::Null),
    ]
}

impl WatchIndex {
    /// An object was added or changed (`deleted` false) or deleted.
    pub fn changed(&mut self, summary: Summary, deleted: bool) -> Affected {
        let clusters = match (summary, deleted) {
            (Summary::Cluster(cluster), false) => self.cluster_applied(cluster),
            (Summary::Cluster(cluster), true) => {
                self.cluster_deleted(&cluster.name);
                Vec::new()
            }
            (Summary::Class(class), false) => {
                // A class seen for the first time (a watch's listing) is no change a
                // cache could have missed.
                let known = self.class_seen.contains_key(&class.name);
                let (clusters, new_kinds) = self.class_applied(class);
                return Affected {
                    class_level: known && !clusters.is_empty(),
                    clusters,
                    new_kinds,
                    ..Affected::default()
                };
            }
            (Summary::Class(class), true) => self.class_deleted(&class.name),
            (Summary::Object(ObjectSummary::Other(id, digests)), deleted) => {
                return self.template_changed(id, digests, deleted);
            }
            (Summary::ExtensionConfig, _) => {
                return Affected {
                    extension_config: true,
                    ..Affected::default()
                };
            }
            (
                Summary::Object(ObjectSummary::Owned {
                    cluster,
                    key,
                    digests,
                }),
                deleted,
            ) => self.owned_changed(cluster, &key, digests, deleted),
        };
        Affected {
            clusters,
            ..Affected::default()
        }
    }

    /// An object of `cluster` changed: the Cluster is affected if its topology
    /// reconcile acts on such changes, unless nothing it reads of the object changed,
    /// or the Cluster is settled and the object changed only in its status.
    fn owned_changed(
        &mut self,
        cluster: Name,
        key: &ObjectKey,
        digests: Digests,
        deleted: bool,
    ) -> Vec<Name> {
        if !triggers(key, self.cluster_refs.get(&cluster)) {
            return Vec::new();
        }
        let id = {
            let mut hasher = DefaultHasher::new();
            key.hash(&mut hasher);
            hasher.finish()
        };
        if deleted {
            self.owned_seen.remove(&id);
            return vec![cluster];
        }
        let previous = self.owned_seen.insert(id, digests);
        let reported = previous.is_some_and(|p| p.unreported == digests.unreported);
        if previous == Some(digests) || (reported && self.settled.contains(&cluster)) {
            Vec::new()
        } else {
            vec![cluster]
        }
    }

    /// A Cluster was added or changed: it is affected, unless only its reported status
    /// changed.
    pub fn cluster_applied(&mut self, cluster: ClusterSummary) -> Vec<Name> {
        let ClusterSummary {
            name,
            class,
            refs,
            settled,
            unreported,
        } = cluster;
        let unchanged = self.seen.insert(name.clone(), unreported) == Some(unreported);
        self.cluster_refs.insert(name.clone(), refs);
        // A Cluster no longer settled is reconciled once more: its objects' status
        // reports that came in before this change (the watches of different kinds keep
        // no order between them) were taken for a settled Cluster's and passed over.
        let unsettled = if settled {
            self.settled.insert(name.clone());
            false
        } else {
            self.settled.remove(&name)
        };
        let unchanged = unchanged && !unsettled;
        match class {
            Some(class) => {
                self.cluster_class.insert(name.clone(), class);
            }
            None => {
                self.cluster_class.remove(&name);
            }
        }
        if unchanged { Vec::new() } else { vec![name] }
    }

    /// A Cluster was deleted: nothing to reconcile (its objects go with it).
    pub fn cluster_deleted(&mut self, cluster: &Name) {
        self.cluster_class.remove(cluster);
        self.cluster_refs.remove(cluster);
        self.settled.remove(cluster);
        self.seen.remove(cluster);
    }

    /// A ClusterClass was added or changed: every Cluster of it is affected. Returns
    /// also whether new template kinds appeared (the watchers then watch them too).
    pub fn class_applied(&mut self, class: ClassSummary) -> (Vec<Name>, bool) {
        // A change of what no Cluster reads of its class (other controllers' conditions,
        // a rollout's `RolloutHealthy`) affects none of them. Nor does its first report:
        // a Cluster's reconcile reconciles a class that has none before it renders, so
        // no Cluster waited for it (a class created with its Clusters was reported by
        // the first of their reconciles, and every other one was queued again for it,
        // twice with the class caches' second round).
        let previous = self
            .class_seen
            .insert(class.name.clone(), (class.read, class.spec, class.reported));
        let unchanged = previous.is_some_and(|(read, _, _)| read == class.read);
        let first_report = previous
            .is_some_and(|(_, spec, reported)| spec == class.spec && !reported && class.reported);
        let unchanged = unchanged || first_report;
        let mut templates = BTreeSet::new();
        let mut new_kinds = false;
        for r in class.templates {
            if let Some(stamped) = r.kind.strip_suffix("Template") {
                new_kinds |= self
                    .template_kinds
                    .insert((r.api_version.clone(), stamped.to_string()));
            }
            templates.insert(ObjectKey::new(
                &r.api_version,
                &r.kind,
                &r.namespace,
                &r.name,
            ));
            new_kinds |= self.template_kinds.insert((r.api_version, r.kind));
        }
        self.class_templates.insert(class.name.clone(), templates);
        if unchanged {
            return (Vec::new(), new_kinds);
        }
        (self.clusters_of(&class.name), new_kinds)
    }

    /// A ClusterClass was deleted: its Clusters are affected (they report the error).
    pub fn class_deleted(&mut self, class: &Name) -> Vec<Name> {
        self.class_seen.remove(class);
        self.class_templates.remove(class);
        self.clusters_of(class)
    }

    /// An object no Cluster owns changed: the Clusters of the classes that reference it
    /// (a template), queued once more later when it is a change of a template seen
    /// before (see [`Affected::class_level`]; a watch's first listing is no change a
    /// cache could have missed).
    fn template_changed(&mut self, id: ObjectKey, digests: Digests, deleted: bool) -> Affected {
        let clusters = self.referencing(&id);
        let known = if deleted || clusters.is_empty() {
            self.templates_seen.remove(&id).is_some()
        } else {
            match self.templates_seen.insert(id, digests) {
                // Nothing a render reads of it changed (the class's reconcile made
                // itself its owner, say).
                Some(previous) if previous == digests => return Affected::default(),
                previous => previous.is_some(),
            }
        };
        Affected {
            class_level: known && !clusters.is_empty(),
            clusters,
            ..Affected::default()
        }
    }

    /// The Clusters of the classes that reference `id`.
    fn referencing(&self, id: &ObjectKey) -> Vec<Name> {
        let mut affected = BTreeSet::new();
        for (class, templates) in &self.class_templates {
            if templates.contains(id) {
                affected.extend(self.clusters_of(class));
            }
        }
        affected.into_iter().collect()
    }

    /// The Clusters of ClusterClass `class` seen so far.
    pub fn clusters_of(&self, class: &Name) -> Vec<Name> {
        let mut clusters: Vec<Name> = self
            .cluster_class
            .iter()
            .filter(|(_, c)| *c == class)
            .map(|(cluster, _)| cluster.clone())
            .collect();
        clusters.sort();
        clusters
    }

    /// Every Cluster with a topology seen so far (for the periodic resync).
    pub fn all_clusters(&self) -> Vec<Name> {
        let mut all: Vec<Name> = self.cluster_class.keys().cloned().collect();
        all.sort();
        all
    }

    /// `(apiVersion, kind)` of the templates classes reference and of the objects they
    /// stamp out.
    pub fn template_kinds(&self) -> &BTreeSet<(String, String)> {
        &self.template_kinds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn class() -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
            "metadata": {"name": "cc", "namespace": "ns"},
            "spec": {"controlPlane": {"ref": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "name": "cp"}}}})
    }

    /// What the index makes of `object` added or changed, read as the watch tasks read it.
    fn applied(index: &mut WatchIndex, object: &Value) -> Vec<Name> {
        index.changed(Summary::of(object.clone()), false).clusters
    }

    fn deleted(index: &mut WatchIndex, object: &Value) -> Vec<Name> {
        index.changed(Summary::of(object.clone()), true).clusters
    }

    fn cluster(name: &str) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"topology": {"class": "cc", "version": "v1.30.0"}}})
    }

    #[test]
    fn changes_map_to_the_clusters_they_affect() {
        let mut index = WatchIndex::default();
        assert_eq!(
            applied(&mut index, &cluster("a")),
            [("ns".into(), "a".into())]
        );
        applied(&mut index, &cluster("b"));
        let Affected {
            clusters: affected,
            new_kinds,
            ..
        } = index.changed(Summary::of(class()), false);
        assert!(new_kinds);
        assert_eq!(affected.len(), 2);
        assert!(index.template_kinds().contains(&(
            "controlplane.cluster.x-k8s.io/v1beta1".to_string(),
            "KubeadmControlPlane".to_string()
        )));
        // The class's template, in another version of its group: both Clusters.
        let template = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate", "metadata": {"name": "cp", "namespace": "ns"}});
        assert_eq!(applied(&mut index, &template).len(), 2);
        // An owned object: its Cluster only.
        let owned = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": {"name": "a-md", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "a"}}});
        assert_eq!(applied(&mut index, &owned), [("ns".into(), "a".into())]);
        // A topology-owned MachinePool, and the infrastructure machine pool it
        // references (a kind stamped from a class template): their Cluster.
        let pool = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachinePool", "metadata": {"name": "b-mp-0-x", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "b", "topology.cluster.x-k8s.io/owned": "", "topology.cluster.x-k8s.io/pool-name": "mp-0"}}});
        assert_eq!(applied(&mut index, &pool), [("ns".into(), "b".into())]);
        // What its MachinePool references, template copies, health checks, Machines'
        // bootstrap configs: providers' business, nothing a reconcile acts on.
        for (api_version, kind) in [
            (
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "DockerMachinePool",
            ),
            (
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "DockerMachineTemplate",
            ),
            ("cluster.x-k8s.io/v1beta1", "MachineHealthCheck"),
            ("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig"),
            ("infrastructure.cluster.x-k8s.io/v1beta1", "DockerCluster"),
        ] {
            let object = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "b-x", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "b"}}});
            assert!(applied(&mut index, &object).is_empty(), "{kind}");
            assert!(deleted(&mut index, &object).is_empty(), "{kind}");
        }
        // The infrastructure cluster and control plane the Cluster's spec references
        // (v1beta1 by apiVersion, v1beta2 by apiGroup), in any version of their group.
        let mut b = cluster("b");
        b["spec"]["infrastructureRef"] = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster", "name": "b-x", "namespace": "ns"});
        b["spec"]["controlPlaneRef"] = json!({"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "b-cp"});
        assert!(
            applied(&mut index, &b).is_empty(),
            "references the topology wrote"
        );
        let infra = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerCluster", "metadata": {"name": "b-x", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "b"}}});
        assert_eq!(applied(&mut index, &infra), [("ns".into(), "b".into())]);
        let cp = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "metadata": {"name": "b-cp", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "b"}}});
        assert_eq!(deleted(&mut index, &cp), [("ns".into(), "b".into())]);
        // Another control plane of the same kind, not the one referenced: nothing.
        let mut other_cp = cp.clone();
        other_cp["metadata"]["name"] = json!("b-old");
        assert!(applied(&mut index, &other_cp).is_empty());
        // Unrelated: nothing.
        let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ns"}});
        assert!(applied(&mut index, &other).is_empty());
        deleted(&mut index, &cluster("a"));
        assert_eq!(index.all_clusters(), [("ns".into(), "b".into())]);
        assert_eq!(deleted(&mut index, &class()), [("ns".into(), "b".into())]);
    }

    #[test]
    fn class_and_template_changes_are_class_level_and_owned_objects_are_not() {
        let mut index = WatchIndex::default();
        applied(&mut index, &cluster("a"));
        // First sightings (a watch's listing): no change a cache could have missed.
        let first = index.changed(Summary::of(class()), false);
        assert!(!first.class_level);
        assert_eq!(first.clusters, [("ns".into(), "a".into())]);
        let mut changed = class();
        changed["spec"]["controlPlane"]["ref"]["name"] = json!("cp2");
        let class_change = index.changed(Summary::of(changed), false);
        assert!(class_change.class_level);
        let class_back = index.changed(Summary::of(class()), false);
        assert!(class_back.class_level);
        let template = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "metadata": {"name": "cp", "namespace": "ns"}});
        let first = index.changed(Summary::of(template.clone()), false);
        assert!(!first.class_level);
        assert_eq!(first.clusters, [("ns".into(), "a".into())]);
        // Owned by its class now (the class's reconcile), a new resourceVersion: nothing
        // a render reads.
        let mut owned_by_class = template.clone();
        owned_by_class["metadata"]["ownerReferences"] =
            json!([{"kind": "ClusterClass", "name": "cc"}]);
        owned_by_class["metadata"]["resourceVersion"] = json!("2");
        let nothing = index.changed(Summary::of(owned_by_class.clone()), false);
        assert_eq!(nothing, Affected::default());
        let mut edited = owned_by_class;
        edited["spec"] = json!({"template": {"spec": {"replicas": 3}}});
        let template_change = index.changed(Summary::of(edited), false);
        assert!(template_change.class_level);
        assert_eq!(template_change.clusters, [("ns".into(), "a".into())]);
        // Deleted, then back: a first sighting again.
        assert!(
            index
                .changed(Summary::of(template.clone()), true)
                .class_level
        );
        assert!(!index.changed(Summary::of(template), false).class_level);
        let owned = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": {"name": "a-md", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "a"}}});
        assert!(!index.changed(Summary::of(owned), false).class_level);
        assert!(!index.changed(Summary::of(cluster("b")), false).class_level);
        // A template no class references affects nothing, so nothing is queued again.
        let other = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "metadata": {"name": "unused", "namespace": "ns"}});
        assert!(!index.changed(Summary::of(other), false).class_level);
    }

    #[test]
    fn a_class_changed_only_in_what_no_cluster_reads_affects_nothing() {
        let mut index = WatchIndex::default();
        applied(&mut index, &cluster("a"));
        let mut class = class();
        assert_eq!(applied(&mut index, &class).len(), 1);
        // Another controller's condition (a rollout's RolloutHealthy): nothing.
        class["status"] = json!({"conditions": [{"type": "RolloutHealthy", "status": "True"}],
                                 "v1beta2": {"conditions": [{"type": "RolloutHealthy", "status": "True"}]}});
        assert!(applied(&mut index, &class).is_empty());
        // Its first report (a Cluster's reconcile reconciled it before rendering): no
        // Cluster waited for it.
        class["status"]["v1beta2"]["conditions"] = json!([
            {"type": "RolloutHealthy", "status": "False"}, {"type": "VariablesReady", "status": "False"}]);
        assert!(applied(&mut index, &class).is_empty());
        // The class becoming ready for its Clusters after that: they are affected.
        class["status"]["v1beta2"]["conditions"] = json!([
            {"type": "RolloutHealthy", "status": "True"}, {"type": "VariablesReady", "status": "True"}]);
        assert_eq!(applied(&mut index, &class).len(), 1);
        class["status"]["observedGeneration"] = json!(2);
        assert_eq!(applied(&mut index, &class).len(), 1);
        class["spec"]["variables"] = json!([]);
        assert_eq!(applied(&mut index, &class).len(), 1);
        assert!(
            applied(&mut index, &class).is_empty(),
            "the same class again"
        );
    }

    #[test]
    fn a_class_s_first_report_affects_nothing_unless_its_spec_changed_too() {
        let mut index = WatchIndex::default();
        applied(&mut index, &cluster("a"));
        assert_eq!(applied(&mut index, &class()).len(), 1, "first sighting");
        let mut reported = class();
        reported["metadata"]["generation"] = json!(1);
        reported["status"] = json!({"observedGeneration": 1, "variables": [],
            "v1beta2": {"conditions": [{"type": "VariablesReady", "status": "True"}]}});
        // The generation appearing counts as a spec change: start from a class that has one.
        let mut unreported = class();
        unreported["metadata"]["generation"] = json!(1);
        let mut index = WatchIndex::default();
        applied(&mut index, &cluster("a"));
        applied(&mut index, &unreported);
        let first = index.changed(Summary::of(reported.clone()), false);
        assert!(first.clusters.is_empty() && !first.class_level, "{first:?}");
        // Reported and edited at once (seen together): the Clusters.
        let mut index = WatchIndex::default();
        applied(&mut index, &cluster("a"));
        applied(&mut index, &unreported);
        let mut edited = reported.clone();
        edited["spec"]["controlPlane"]["ref"]["name"] = json!("cp2");
        assert_eq!(applied(&mut index, &edited).len(), 1);
    }

    #[test]
    fn a_cluster_changed_only_in_its_reported_status_affects_nothing() {
        let mut index = WatchIndex::default();
        let mut c = cluster("a");
        assert_eq!(applied(&mut index, &c).len(), 1);
        // A new Cluster's first report, where there was no status at all.
        c["status"] = json!({"observedGeneration": 1, "conditions": [{"type": "TopologyReconciled", "status": "False"}]});
        assert!(applied(&mut index, &c).is_empty(), "{c}");
        c["status"] = json!({"infrastructureReady": false, "conditions": [{"type": "Ready", "status": "False"}]});
        assert_eq!(applied(&mut index, &c).len(), 1);
        // The same again (a resync's re-list): nothing new.
        assert!(applied(&mut index, &c).is_empty());
        // A reconcile's report, in both condition lists, and a new resourceVersion.
        c["metadata"]["resourceVersion"] = json!("7");
        c["status"]["observedGeneration"] = json!(1);
        c["status"]["phase"] = json!("Provisioned");
        c["status"]["conditions"] = json!([{"type": "Ready", "status": "False"}, {"type": "TopologyReconciled", "status": "True"}]);
        c["status"]["v1beta2"] = json!({"conditions": [{"type": "TopologyReconciled", "status": "True", "observedGeneration": 1}]});
        assert!(applied(&mut index, &c).is_empty(), "{c}");
        // Anything else: the Cluster is affected.
        let changes: [(&str, Value); 4] = [
            ("/status/infrastructureReady", json!(true)),
            ("/status/conditions/0/status", json!("True")),
            ("/spec/topology/version", json!("v1.31.0")),
            ("/metadata/name", json!("a")),
        ];
        for (path, value) in changes {
            if path == "/metadata/name" {
                c["metadata"]["annotations"] = json!({"x": "y"});
            } else if let Some(field) = c.pointer_mut(path) {
                *field = value;
            }
            assert_eq!(applied(&mut index, &c).len(), 1, "{path}");
        }
        // What a reconcile writes on it: nothing.
        c["spec"]["infrastructureRef"] = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster", "name": "a-x"});
        c["spec"]["controlPlaneRef"] = json!({"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "a-cp"});
        assert!(applied(&mut index, &c).is_empty(), "references");
        c["spec"]["controlPlaneEndpoint"] = json!({"host": "10.0.0.1", "port": 6443});
        c["metadata"]["labels"] =
            json!({"cluster.x-k8s.io/cluster-name": "a", "topology.cluster.x-k8s.io/owned": ""});
        c["metadata"]["annotations"]["topology.internal.cluster.x-k8s.io/upgrade-step"] =
            json!("x");
        c["metadata"]["generation"] = json!(7);
        assert!(
            applied(&mut index, &c).is_empty(),
            "endpoint, labels, upgrade step and the generation they moved"
        );
        // ...but the references are read: the control plane now triggers.
        let cp = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
            "metadata": {"name": "a-cp", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "a"}}});
        assert_eq!(applied(&mut index, &cp).len(), 1);
        // Deleted and created again: affected.
        deleted(&mut index, &c);
        assert_eq!(applied(&mut index, &c).len(), 1);
    }

    /// A Cluster as its last reconcile leaves it when nothing is pending.
    fn settled_cluster(name: &str) -> Value {
        let mut c = cluster(name);
        c["metadata"]["generation"] = json!(2);
        c["spec"]["controlPlaneRef"] = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "name": "cp", "namespace": "ns"});
        c["status"] = json!({"observedGeneration": 2, "phase": "Provisioned",
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "TopologyReconciled", "status": "True"}],
            "v1beta2": {"conditions": [{"type": "TopologyReconciled", "status": "True"}]}});
        c
    }

    #[test]
    fn settled_means_reconciled_at_this_generation_provisioned_and_no_hook_pending() {
        let c = settled_cluster("a");
        assert!(settled(&c));
        let mut v1beta2 = c.clone();
        v1beta2["status"] = json!({"observedGeneration": 2, "phase": "Provisioned",
            "conditions": [{"type": "TopologyReconciled", "status": "True"}],
            "deprecated": {"v1beta1": {"conditions": [{"type": "TopologyReconciled", "status": "True"}]}}});
        assert!(settled(&v1beta2));
        let unsettled: [(&str, Value); 7] = [
            ("/metadata/generation", json!(3)),
            ("/status/phase", json!("Provisioning")),
            ("/status/conditions/1/status", json!("False")),
            ("/status/v1beta2/conditions/0/status", json!("False")),
            (
                "/metadata/annotations",
                json!({"runtime.cluster.x-k8s.io/pending-hooks": "AfterControlPlaneInitialized"}),
            ),
            ("/metadata/deletionTimestamp", json!("2026-01-01T00:00:00Z")),
            (
                "/status",
                json!({"observedGeneration": 2, "phase": "Provisioned"}),
            ),
        ];
        for (path, value) in unsettled {
            let mut changed = c.clone();
            let (parent, field) = path.rsplit_once('/').unwrap_or_default();
            match changed.pointer_mut(path) {
                Some(at) => *at = value,
                None => {
                    changed.pointer_mut(parent).unwrap()[field] = value;
                }
            }
            assert!(!settled(&changed), "{path}");
        }
    }

    #[test]
    fn a_settled_cluster_ignores_its_objects_status_reports() {
        let mut index = WatchIndex::default();
        let mut c = settled_cluster("a");
        applied(&mut index, &c);
        let mut md = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
            "metadata": {"name": "a-md", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "a"}},
            "spec": {"replicas": 3}});
        let mut cp = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
            "metadata": {"name": "cp", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "a"}},
            "spec": {"replicas": 1}});
        let a = vec![("ns".to_string(), "a".to_string())];
        // First sightings count.
        assert_eq!(applied(&mut index, &md), a);
        assert_eq!(applied(&mut index, &cp), a);
        // Status reports: nothing.
        md["status"] = json!({"readyReplicas": 2});
        cp["status"] = json!({"ready": true});
        assert!(applied(&mut index, &md).is_empty());
        assert!(applied(&mut index, &cp).is_empty());
        // Spec and metadata changes, and deletions: the Cluster.
        md["spec"]["replicas"] = json!(4);
        assert_eq!(applied(&mut index, &md), a);
        cp["metadata"]["ownerReferences"] = json!([{"kind": "Cluster", "name": "a"}]);
        assert_eq!(applied(&mut index, &cp), a);
        assert_eq!(deleted(&mut index, &md), a);
        // No longer settled (an upgrade under way): the Cluster once more, since reports
        // may have been passed over before the index saw the change; then every report
        // counts.
        cp["status"] = json!({"ready": true, "initialized": true});
        assert!(applied(&mut index, &cp).is_empty());
        c["status"]["conditions"][1]["status"] = json!("False");
        assert_eq!(applied(&mut index, &c), a);
        assert!(applied(&mut index, &c).is_empty(), "the same again");
        cp["status"] = json!({"ready": true, "version": "v1.31.0"});
        assert_eq!(applied(&mut index, &cp), a);
        cp["status"]["updatedReplicas"] = json!(1);
        assert_eq!(applied(&mut index, &cp), a);
        // Even then, a change in nothing a reconcile reads affects nothing: the garbage
        // collector taking away the deleted shim Secret's owner reference.
        cp["metadata"]["ownerReferences"] = json!([{"kind": "Cluster", "name": "a"},
            {"kind": "Secret", "name": "a-shim"}]);
        assert!(applied(&mut index, &cp).is_empty());
        cp["metadata"]["ownerReferences"] = json!([{"kind": "Cluster", "name": "a"}]);
        cp["metadata"]["resourceVersion"] = json!("99");
        assert!(applied(&mut index, &cp).is_empty());
    }

    #[test]
    fn pool_classes_make_their_objects_kinds_watched() {
        let mut index = WatchIndex::default();
        let class = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
        "metadata": {"name": "cc", "namespace": "ns"},
        "spec": {
            "controlPlane": {"ref": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "name": "cp"}},
            "workers": {"machinePools": [{"class": "pool", "template": {
                "bootstrap": {"ref": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "b"}},
                "infrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePoolTemplate", "name": "i"}}
            }}]}
        }});
        let new_kinds = index.changed(Summary::of(class), false).new_kinds;
        assert!(new_kinds);
        for (api_version, kind) in [
            (
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "DockerMachinePool",
            ),
            ("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig"),
        ] {
            assert!(
                index
                    .template_kinds()
                    .contains(&(api_version.to_string(), kind.to_string())),
                "{kind} watched"
            );
        }
    }

    #[test]
    fn summaries_keep_what_the_index_reads() {
        // A Cluster and the same Cluster after a reconcile's report: the same summary,
        // so the report maps to nothing.
        let mut c = cluster("a");
        c["metadata"]["managedFields"] =
            json!([{"manager": "topograph", "fieldsV1": {"f:spec": {}}}]);
        let before = Summary::of(c.clone());
        let Summary::Cluster(summary) = &before else {
            panic!("{before:?}")
        };
        assert_eq!(summary.name, ("ns".to_string(), "a".to_string()));
        assert_eq!(summary.class, Some(("ns".to_string(), "cc".to_string())));
        c["metadata"]["resourceVersion"] = json!("9");
        c["metadata"]["managedFields"] = json!([]);
        c["status"] = json!({"observedGeneration": 2, "phase": "Provisioned",
            "conditions": [{"type": "TopologyReconciled", "status": "True"}]});
        assert_eq!(Summary::of(c.clone()), before);
        let mut index = WatchIndex::default();
        assert_eq!(index.changed(before, false).clusters.len(), 1);
        assert!(
            index
                .changed(Summary::of(c.clone()), false)
                .clusters
                .is_empty()
        );
        // Anything else of the Cluster is a different summary.
        c["status"]["infrastructureReady"] = json!(true);
        assert_eq!(index.changed(Summary::of(c), false).clusters.len(), 1);
        // A class in another namespace.
        let mut elsewhere = cluster("b");
        elsewhere["spec"]["topology"]["classNamespace"] = json!("classes");
        let Summary::Cluster(summary) = Summary::of(elsewhere) else {
            panic!("a Cluster")
        };
        assert_eq!(
            summary.class,
            Some(("classes".to_string(), "cc".to_string()))
        );

        // An owned object: its Cluster, and nothing else of it.
        let owned = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
            "metadata": {"name": "a-md", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "a"}},
            "spec": {"replicas": 3, "template": {"spec": {"clusterName": "a"}}}});
        let Summary::Object(ObjectSummary::Owned {
            cluster,
            key,
            digests,
        }) = Summary::of(owned.clone())
        else {
            panic!("owned")
        };
        let unreported = digests.unreported;
        let owned_digest = |object: &Value| Digests::of(object).unreported;
        assert_eq!(cluster, ("ns".to_string(), "a".to_string()));
        assert_eq!(
            key,
            ObjectKey::new(
                "cluster.x-k8s.io/v1beta2",
                "MachineDeployment",
                "ns",
                "a-md"
            )
        );
        // Its status and what every write changes do not count; spec and labels do.
        let mut reported = owned.clone();
        reported["status"] = json!({"readyReplicas": 3});
        reported["metadata"]["resourceVersion"] = json!("12");
        reported["metadata"]["managedFields"] = json!([{"manager": "capd"}]);
        assert_eq!(owned_digest(&reported), unreported);
        assert_ne!(Digests::of(&reported).status, digests.status);
        // Owner references other than a Cluster's do not count either.
        let mut owners = owned.clone();
        owners["metadata"]["ownerReferences"] = json!([{"kind": "Secret", "name": "a-shim"}]);
        assert_eq!(Digests::of(&owners), digests);
        owners["metadata"]["ownerReferences"] = json!([{"kind": "Secret", "name": "a-shim"},
            {"kind": "Cluster", "name": "a"}]);
        assert_ne!(owned_digest(&owners), unreported);
        for (path, value) in [
            ("/spec/replicas", json!(4)),
            ("/metadata/labels/x", json!("y")),
        ] {
            let mut changed = owned.clone();
            if let Some(field) = changed.pointer_mut(path) {
                *field = value;
            } else if let Some(labels) = changed["metadata"]["labels"].as_object_mut() {
                labels.insert("x".into(), value);
            }
            assert_ne!(owned_digest(&changed), unreported, "{path}");
        }
        for field in ["annotations", "deletionTimestamp"] {
            let mut changed = owned.clone();
            changed["metadata"][field] = json!("set");
            assert_ne!(owned_digest(&changed), unreported, "{field}");
        }
        // A template: its key, in any version of its group.
        let template = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate",
            "metadata": {"name": "cp", "namespace": "ns"}, "spec": {"template": {}}});
        assert_eq!(
            Summary::of(template.clone()),
            Summary::Object(ObjectSummary::Other(
                ObjectKey::new(
                    "controlplane.cluster.x-k8s.io/v1beta1",
                    "KubeadmControlPlaneTemplate",
                    "ns",
                    "cp"
                ),
                Digests::of(&template)
            ))
        );
        // A class: its template references, in its namespace when they name none.
        assert_eq!(
            Summary::of(class()),
            Summary::Class(ClassSummary {
                name: ("ns".to_string(), "cc".to_string()),
                templates: vec![ObjectRef {
                    api_version: "controlplane.cluster.x-k8s.io/v1beta1".to_string(),
                    kind: "KubeadmControlPlaneTemplate".to_string(),
                    namespace: "ns".to_string(),
                    name: "cp".to_string(),
                }],
                read: hash_of(&what_clusters_read(&class())[..]),
                spec: hash_of(&what_clusters_read(&class())[..4]),
                reported: false,
            })
        );
        // An ExtensionConfig: only that one changed.
        let config = json!({"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig",
            "metadata": {"name": "ext"}, "spec": {"clientConfig": {"url": "https://ext"}}});
        assert_eq!(Summary::of(config), Summary::ExtensionConfig);
    }
}
