//! Which Clusters a change affects, for the watchers: a Cluster's own changes affect it;
//! an object carrying `cluster.x-k8s.io/cluster-name` (everything the topology owns)
//! affects that Cluster; a ClusterClass change, or a change of a template a class
//! references, affects every Cluster of the class.
//!
//! A Cluster change only in what a reconcile reports on it (its `TopologyReconciled`
//! condition, observed generation, phase) affects nothing: the reconcile that wrote it
//! had already seen the rest, so a new Cluster converges without a reconcile more for
//! its own report.
//!
//! The index is built from the watch streams themselves (Clusters say which class they
//! use, classes say which templates they reference), so it needs no extra reads.

use std::collections::{BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;
use topograph_api::object::{ObjectExt, ObjectKey};

use topograph_reconcile::class::template_refs;

/// `(namespace, name)`.
pub type Name = (String, String);

/// The index of one management cluster.
#[derive(Debug, Default)]
pub struct WatchIndex {
    cluster_class: HashMap<Name, Name>,
    /// A hash of each Cluster without its reported status (see
    /// [`topograph_reconcile::cluster::without_report`]), as last seen.
    seen: HashMap<Name, u64>,
    /// The templates each class references.
    class_templates: HashMap<Name, BTreeSet<ObjectKey>>,
    /// `(apiVersion, kind)` of every template kind classes reference.
    template_kinds: BTreeSet<(String, String)>,
    /// A hash of what Clusters read of each class, as last seen.
    class_seen: HashMap<Name, u64>,
}

fn hash_of(value: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    hasher.finish()
}

/// What a Cluster's reconcile reads of its class: its identity and spec, and whether it
/// is ready for its Clusters (observed generation, variables, `VariablesReady`).
fn what_clusters_read(class: &Value) -> Value {
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
            .map(|c| (c.get("status").cloned(), c.get("message").cloned()));
    serde_json::json!([
        class.at(&["metadata", "generation"]),
        class.at(&["metadata", "labels"]),
        class.at(&["metadata", "annotations"]),
        class.get("spec"),
        class.at(&["status", "observedGeneration"]),
        class.at(&["status", "variables"]),
        ready,
    ])
}

fn name_of(object: &Value) -> Name {
    (object.namespace().to_string(), object.name().to_string())
}

impl WatchIndex {
    /// A Cluster was added or changed: it is affected, unless only its reported status
    /// changed.
    pub fn cluster_applied(&mut self, cluster: &Value) -> Vec<Name> {
        let name = name_of(cluster);
        let mut hasher = DefaultHasher::new();
        topograph_reconcile::cluster::without_report(cluster)
            .to_string()
            .hash(&mut hasher);
        let unreported = hasher.finish();
        let unchanged = self.seen.insert(name.clone(), unreported) == Some(unreported);
        if let Some(class) = cluster
            .at(&["spec", "topology", "class"])
            .and_then(Value::as_str)
        {
            let namespace = cluster
                .at(&["spec", "topology", "classNamespace"])
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
                .unwrap_or(cluster.namespace());
            self.cluster_class
                .insert(name.clone(), (namespace.to_string(), class.to_string()));
        } else {
            self.cluster_class.remove(&name);
        }
        if unchanged { Vec::new() } else { vec![name] }
    }

    /// A Cluster was deleted: nothing to reconcile (its objects go with it).
    pub fn cluster_deleted(&mut self, cluster: &Value) {
        self.cluster_class.remove(&name_of(cluster));
        self.seen.remove(&name_of(cluster));
    }

    /// A ClusterClass was added or changed: every Cluster of it is affected. Returns
    /// also whether new template kinds appeared (the watchers then watch them too).
    pub fn class_applied(&mut self, class: &Value) -> (Vec<Name>, bool) {
        let name = name_of(class);
        // A change of what no Cluster reads of its class (other controllers' conditions,
        // a rollout's `RolloutHealthy`) affects none of them.
        let read = hash_of(&what_clusters_read(class));
        let unchanged = self.class_seen.insert(name.clone(), read) == Some(read);
        let mut templates = BTreeSet::new();
        let mut new_kinds = false;
        if let Ok(decoded) = topograph_api::load::decode_cluster_class(class.clone()) {
            for r in template_refs(&decoded) {
                let namespace = if r.namespace.is_empty() {
                    name.0.clone()
                } else {
                    r.namespace.clone()
                };
                new_kinds |= self
                    .template_kinds
                    .insert((r.api_version.clone(), r.kind.clone()));
                if let Some(stamped) = r.kind.strip_suffix("Template") {
                    new_kinds |= self
                        .template_kinds
                        .insert((r.api_version.clone(), stamped.to_string()));
                }
                templates.insert(ObjectKey::new(&r.api_version, &r.kind, &namespace, &r.name));
            }
        }
        self.class_templates.insert(name.clone(), templates);
        if unchanged {
            return (Vec::new(), new_kinds);
        }
        (self.clusters_of(&name), new_kinds)
    }

    /// A ClusterClass was deleted: its Clusters are affected (they report the error).
    pub fn class_deleted(&mut self, class: &Value) -> Vec<Name> {
        let name = name_of(class);
        self.class_seen.remove(&name);
        self.class_templates.remove(&name);
        self.clusters_of(&name)
    }

    /// Any other object changed: the Cluster named by its label, or the Clusters of the
    /// classes that reference it.
    pub fn object_changed(&self, object: &Value) -> Vec<Name> {
        if let Some(cluster) = object.labels().get("cluster.x-k8s.io/cluster-name") {
            return vec![(object.namespace().to_string(), cluster.clone())];
        }
        let id = ObjectKey::of(object);
        let mut affected = BTreeSet::new();
        for (class, templates) in &self.class_templates {
            if templates.contains(&id) {
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

    fn cluster(name: &str) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"topology": {"class": "cc", "version": "v1.30.0"}}})
    }

    #[test]
    fn changes_map_to_the_clusters_they_affect() {
        let mut index = WatchIndex::default();
        assert_eq!(
            index.cluster_applied(&cluster("a")),
            [("ns".into(), "a".into())]
        );
        index.cluster_applied(&cluster("b"));
        let (affected, new_kinds) = index.class_applied(&class());
        assert!(new_kinds);
        assert_eq!(affected.len(), 2);
        assert!(index.template_kinds().contains(&(
            "controlplane.cluster.x-k8s.io/v1beta1".to_string(),
            "KubeadmControlPlane".to_string()
        )));
        // The class's template, in another version of its group: both Clusters.
        let template = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate", "metadata": {"name": "cp", "namespace": "ns"}});
        assert_eq!(index.object_changed(&template).len(), 2);
        // An owned object: its Cluster only.
        let owned = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": {"name": "a-md", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "a"}}});
        assert_eq!(index.object_changed(&owned), [("ns".into(), "a".into())]);
        // A topology-owned MachinePool, and the infrastructure machine pool it
        // references (a kind stamped from a class template): their Cluster.
        let pool = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachinePool", "metadata": {"name": "b-mp-0-x", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "b", "topology.cluster.x-k8s.io/owned": "", "topology.cluster.x-k8s.io/pool-name": "mp-0"}}});
        assert_eq!(index.object_changed(&pool), [("ns".into(), "b".into())]);
        let infra = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePool", "metadata": {"name": "b-mp-0-y", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "b"}}});
        assert_eq!(index.object_changed(&infra), [("ns".into(), "b".into())]);
        // Unrelated: nothing.
        let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ns"}});
        assert!(index.object_changed(&other).is_empty());
        index.cluster_deleted(&cluster("a"));
        assert_eq!(index.all_clusters(), [("ns".into(), "b".into())]);
        assert_eq!(index.class_deleted(&class()), [("ns".into(), "b".into())]);
    }

    #[test]
    fn a_class_changed_only_in_what_no_cluster_reads_affects_nothing() {
        let mut index = WatchIndex::default();
        index.cluster_applied(&cluster("a"));
        let mut class = class();
        assert_eq!(index.class_applied(&class).0.len(), 1);
        // Another controller's condition (a rollout's RolloutHealthy): nothing.
        class["status"] = json!({"conditions": [{"type": "RolloutHealthy", "status": "True"}],
                                 "v1beta2": {"conditions": [{"type": "RolloutHealthy", "status": "True"}]}});
        assert!(index.class_applied(&class).0.is_empty());
        // The class becoming ready for its Clusters: they are affected.
        class["status"]["v1beta2"]["conditions"] = json!([
            {"type": "RolloutHealthy", "status": "True"}, {"type": "VariablesReady", "status": "True"}]);
        assert_eq!(index.class_applied(&class).0.len(), 1);
        class["status"]["observedGeneration"] = json!(2);
        assert_eq!(index.class_applied(&class).0.len(), 1);
        class["spec"]["variables"] = json!([]);
        assert_eq!(index.class_applied(&class).0.len(), 1);
        assert!(
            index.class_applied(&class).0.is_empty(),
            "the same class again"
        );
    }

    #[test]
    fn a_cluster_changed_only_in_its_reported_status_affects_nothing() {
        let mut index = WatchIndex::default();
        let mut c = cluster("a");
        assert_eq!(index.cluster_applied(&c).len(), 1);
        // A new Cluster's first report, where there was no status at all.
        c["status"] = json!({"observedGeneration": 1, "conditions": [{"type": "TopologyReconciled", "status": "False"}]});
        assert!(index.cluster_applied(&c).is_empty(), "{c}");
        c["status"] = json!({"infrastructureReady": false, "conditions": [{"type": "Ready", "status": "False"}]});
        assert_eq!(index.cluster_applied(&c).len(), 1);
        // The same again (a resync's re-list): nothing new.
        assert!(index.cluster_applied(&c).is_empty());
        // A reconcile's report, in both condition lists, and a new resourceVersion.
        c["metadata"]["resourceVersion"] = json!("7");
        c["status"]["observedGeneration"] = json!(1);
        c["status"]["phase"] = json!("Provisioned");
        c["status"]["conditions"] = json!([{"type": "Ready", "status": "False"}, {"type": "TopologyReconciled", "status": "True"}]);
        c["status"]["v1beta2"] = json!({"conditions": [{"type": "TopologyReconciled", "status": "True", "observedGeneration": 1}]});
        assert!(index.cluster_applied(&c).is_empty(), "{c}");
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
            assert_eq!(index.cluster_applied(&c).len(), 1, "{path}");
        }
        // Deleted and created again: affected.
        index.cluster_deleted(&c);
        assert_eq!(index.cluster_applied(&c).len(), 1);
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
        let (_, new_kinds) = index.class_applied(&class);
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
}
