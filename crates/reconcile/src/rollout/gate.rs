//! The health gate a moved Cluster passes before its wave can finish: its reconcile
//! rendered the revision it was moved to, `TopologyReconciled` is True at its
//! generation, and its control plane and every MachineDeployment are at the topology's
//! version, observed at their generation, with every replica updated and ready.
//!
//! Objects are read in `cluster.x-k8s.io/v1beta1` (the control plane in whatever version
//! its reference names); replicas counts are read in either contract's fields.

use serde_json::Value;
use topograph_api::object::ObjectExt;

use super::OBSERVED_ANNOTATION;

fn int(object: &Value, path: &str) -> Option<i64> {
    object.pointer(path).and_then(Value::as_i64)
}

fn text<'a>(object: &'a Value, path: &str) -> Option<&'a str> {
    object.pointer(path).and_then(Value::as_str)
}

fn condition_true(object: &Value, type_: &str) -> bool {
    ["/status/conditions", "/status/v1beta2/conditions"]
        .iter()
        .filter_map(|p| object.pointer(p).and_then(Value::as_array))
        .flatten()
        .any(|c| {
            c.get("type").and_then(Value::as_str) == Some(type_)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
}

/// Generation observed, replicas ready and updated: what rolling machines must reach.
fn replicas_done(object: &Value, what: &str) -> Result<(), String> {
    let generation = int(object, "/metadata/generation").unwrap_or(0);
    let observed = int(object, "/status/observedGeneration");
    if observed.is_some_and(|o| o < generation) {
        return Err(format!(
            "{what} has not observed generation {generation} yet (observed {})",
            observed.unwrap_or(0)
        ));
    }
    let Some(wanted) = int(object, "/spec/replicas") else {
        return Ok(());
    };
    let ready = int(object, "/status/readyReplicas").unwrap_or(0);
    let updated = int(object, "/status/updatedReplicas")
        .or_else(|| int(object, "/status/upToDateReplicas"))
        .unwrap_or(0);
    if ready < wanted || updated < wanted {
        return Err(format!(
            "{what}: {ready} of {wanted} replicas ready, {updated} updated"
        ));
    }
    Ok(())
}

/// Whether `cluster`, moved to `target`, is healthy there; the reason when not.
/// `machine_deployments` are the Cluster's topology-owned MachineDeployments.
pub fn check(
    cluster: &Value,
    target: &str,
    control_plane: Option<&Value>,
    machine_deployments: &[Value],
) -> Result<(), String> {
    let observed = super::pin::annotation(cluster, OBSERVED_ANNOTATION);
    if observed != Some(target) {
        return Err(format!(
            "its topology has not been reconciled at revision {target} yet"
        ));
    }
    let generation = int(cluster, "/metadata/generation").unwrap_or(0);
    if int(cluster, "/status/observedGeneration").unwrap_or(0) < generation
        || !condition_true(cluster, "TopologyReconciled")
    {
        return Err(format!(
            "TopologyReconciled is not True at generation {generation}"
        ));
    }
    let version = text(cluster, "/spec/topology/version").unwrap_or_default();
    let Some(control_plane) = control_plane else {
        return Err("its control plane does not exist".to_string());
    };
    let what = format!(
        "{} {}/{}",
        control_plane.kind(),
        control_plane.namespace(),
        control_plane.name()
    );
    if let Some(wanted) = text(control_plane, "/spec/version") {
        let at = text(control_plane, "/status/version").unwrap_or_default();
        if at != wanted || (!version.is_empty() && wanted != version) {
            return Err(format!("{what} is at version {at:?}, not {version}"));
        }
    }
    replicas_done(control_plane, &what)?;
    for md in machine_deployments {
        let what = format!("MachineDeployment {}/{}", md.namespace(), md.name());
        let at = text(md, "/spec/template/spec/version").unwrap_or_default();
        if !version.is_empty() && at != version {
            return Err(format!("{what} is at version {at:?}, not {version}"));
        }
        replicas_done(md, &what)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(observed: &str, reconciled: &str) -> Value {
        json!({
            "metadata": {"name": "c1", "namespace": "ns", "generation": 2,
                         "annotations": {OBSERVED_ANNOTATION: observed}},
            "spec": {"topology": {"version": "v1.30.0"}},
            "status": {"observedGeneration": 2,
                       "conditions": [{"type": "TopologyReconciled", "status": reconciled}]},
        })
    }

    fn control_plane(at: &str, ready: i64) -> Value {
        json!({"kind": "KubeadmControlPlane", "metadata": {"name": "cp", "namespace": "ns", "generation": 4},
               "spec": {"version": "v1.30.0", "replicas": 3},
               "status": {"version": at, "readyReplicas": ready, "updatedReplicas": 3, "observedGeneration": 4}})
    }

    fn md(generation: i64, observed: i64, ready: i64) -> Value {
        json!({"metadata": {"name": "md", "namespace": "ns", "generation": generation},
               "spec": {"replicas": 2, "template": {"spec": {"version": "v1.30.0"}}},
               "status": {"observedGeneration": observed, "readyReplicas": ready, "updatedReplicas": ready}})
    }

    #[test]
    fn the_gate_names_what_is_not_there_yet() {
        type Case = (Value, Option<Value>, Vec<Value>, Result<(), &'static str>);
        let cases: Vec<Case> = vec![
            (
                cluster("r2", "True"),
                Some(control_plane("v1.30.0", 3)),
                vec![md(2, 2, 2)],
                Ok(()),
            ),
            (
                cluster("r1", "True"),
                Some(control_plane("v1.30.0", 3)),
                vec![],
                Err("its topology has not been reconciled at revision r2 yet"),
            ),
            (
                cluster("r2", "False"),
                Some(control_plane("v1.30.0", 3)),
                vec![],
                Err("TopologyReconciled is not True at generation 2"),
            ),
            (
                cluster("r2", "True"),
                None,
                vec![],
                Err("its control plane does not exist"),
            ),
            (
                cluster("r2", "True"),
                Some(control_plane("v1.29.0", 3)),
                vec![],
                Err("KubeadmControlPlane ns/cp is at version \"v1.29.0\", not v1.30.0"),
            ),
            (
                cluster("r2", "True"),
                Some(control_plane("v1.30.0", 1)),
                vec![],
                Err("KubeadmControlPlane ns/cp: 1 of 3 replicas ready, 3 updated"),
            ),
            (
                cluster("r2", "True"),
                Some(control_plane("v1.30.0", 3)),
                vec![md(3, 2, 2)],
                Err("MachineDeployment ns/md has not observed generation 3 yet (observed 2)"),
            ),
            (
                cluster("r2", "True"),
                Some(control_plane("v1.30.0", 3)),
                vec![md(3, 3, 0)],
                Err("MachineDeployment ns/md: 0 of 2 replicas ready, 0 updated"),
            ),
        ];
        for (cluster, cp, mds, want) in cases {
            assert_eq!(
                check(&cluster, "r2", cp.as_ref(), &mds),
                want.map_err(str::to_string)
            );
        }
    }
}
