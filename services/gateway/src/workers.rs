//! A Cluster's workers as `GetCluster` lists them: its topology-owned
//! MachineDeployments and MachinePools, each with the topology entry it stands for
//! (name, class), its replicas, version and ready replicas.

use serde_json::Value;
use topograph_api::object::ObjectExt;
use topograph_proto::gateway::v1 as pb;

use crate::objects::GROUP;

/// The workers' kinds, each with the label naming its topology entry and the
/// topology list it comes from, in the order they are listed.
const KINDS: &[(&str, &str, &str)] = &[
    (
        "MachineDeployment",
        "topology.cluster.x-k8s.io/deployment-name",
        "machineDeployments",
    ),
    (
        "MachinePool",
        "topology.cluster.x-k8s.io/pool-name",
        "machinePools",
    ),
];

/// The workers among `owned` (the Cluster's topology-owned objects), in topology
/// order per kind; those no topology entry names any more come after the others.
pub fn workers(cluster: &Value, owned: &[Value]) -> Vec<pb::Worker> {
    let mut out = Vec::new();
    for (kind, label, list) in KINDS {
        let entries: Vec<(&str, &str)> = cluster
            .pointer(&format!("/spec/topology/workers/{list}"))
            .and_then(Value::as_array)
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| {
                        (
                            e.get("name").and_then(Value::as_str).unwrap_or_default(),
                            e.get("class").and_then(Value::as_str).unwrap_or_default(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut of_kind: Vec<(usize, pb::Worker)> = owned
            .iter()
            .filter(|o| {
                o.kind() == *kind && topograph_api::object::group_of(o.api_version()) == GROUP
            })
            .map(|o| {
                let topology_name = o.labels().get(*label).cloned().unwrap_or_default();
                let position = entries.iter().position(|(n, _)| *n == topology_name);
                let class = position.map_or("", |i| entries[i].1).to_string();
                (
                    position.unwrap_or(usize::MAX),
                    pb::Worker {
                        kind: (*kind).to_string(),
                        name: o.name().to_string(),
                        topology_name,
                        class,
                        replicas: int(o, "/spec/replicas"),
                        version: o
                            .pointer("/spec/template/spec/version")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        ready_replicas: ready_replicas(o),
                    },
                )
            })
            .collect();
        of_kind.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
        out.extend(of_kind.into_iter().map(|(_, w)| w));
    }
    out
}

fn int(object: &Value, pointer: &str) -> Option<i32> {
    object
        .pointer(pointer)
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
}

/// Ready replicas as read in v1beta1: v1beta2's count (`status.v1beta2`) where the
/// controller reports it, else v1beta1's.
fn ready_replicas(object: &Value) -> i32 {
    int(object, "/status/v1beta2/readyReplicas")
        .or_else(|| int(object, "/status/readyReplicas"))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn worker(kind: &str, name: &str, label: (&str, &str), replicas: Option<i64>) -> Value {
        let mut o = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": kind,
            "metadata": {"name": name, "labels": {label.0: label.1}},
            "spec": {"template": {"spec": {"version": "v1.30.0"}}}});
        if let Some(r) = replicas {
            o["spec"]["replicas"] = json!(r);
        }
        o
    }

    #[test]
    fn workers_in_topology_order_with_their_class_and_counts() {
        let cluster = json!({"spec": {"topology": {"workers": {
            "machineDeployments": [{"name": "md-0", "class": "a"}],
            "machinePools": [{"name": "mp-1", "class": "b"}, {"name": "mp-0", "class": "c"}]
        }}}});
        let md = "topology.cluster.x-k8s.io/deployment-name";
        let mp = "topology.cluster.x-k8s.io/pool-name";
        let mut pool0 = worker("MachinePool", "c-mp-0-x", (mp, "mp-0"), None);
        pool0["status"] = json!({"readyReplicas": 1, "v1beta2": {"readyReplicas": 2}});
        let mut deployment = worker("MachineDeployment", "c-md-0-x", (md, "md-0"), Some(3));
        deployment["status"] = json!({"readyReplicas": 3});
        let owned = [
            worker("MachinePool", "c-old-x", (mp, "old"), Some(1)),
            pool0,
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePool",
                   "metadata": {"name": "c-mp-0-y", "labels": {mp: "mp-0"}}}),
            worker("MachinePool", "c-mp-1-x", (mp, "mp-1"), Some(2)),
            deployment,
        ];
        let listed = workers(&cluster, &owned);
        let rows: Vec<(&str, &str, &str, Option<i32>, i32)> = listed
            .iter()
            .map(|w| {
                (
                    w.kind.as_str(),
                    w.topology_name.as_str(),
                    w.class.as_str(),
                    w.replicas,
                    w.ready_replicas,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("MachineDeployment", "md-0", "a", Some(3), 3),
                ("MachinePool", "mp-1", "b", Some(2), 0),
                ("MachinePool", "mp-0", "c", None, 2),
                ("MachinePool", "old", "", Some(1), 0),
            ]
        );
        assert!(listed.iter().all(|w| w.version == "v1.30.0"));
    }
}
