//! The Cluster's mutating webhook: what it fills in before validation (a `v` before the
//! version, the variables defaulted from the class's schemas), in the typed Cluster and
//! in its document alike.

use serde_json::{Map, Value, json};
use topograph_api::field::FieldError;
use topograph_api::model::{Cluster, ClusterClass, Variable};
use topograph_api::object::set_at;
use topograph_variables::{Scope, default_variables};

use super::super::workers::{WorkerKind, topology_workers};

/// The mutating webhook: `v` before the version, then the variables (and every
/// override list: the control plane's, each MachineDeployment's and MachinePool's)
/// defaulted from the class's schemas. The Cluster's document follows.
pub fn default_cluster(
    cluster: &Cluster,
    class: Option<&ClusterClass>,
) -> Result<Cluster, Vec<FieldError>> {
    let mut out = cluster.clone();
    let Some(topology) = out.topology.as_mut() else {
        return Ok(out);
    };
    if !topology.version.is_empty() && !topology.version.starts_with('v') {
        topology.version = format!("v{}", topology.version);
        set_at(
            &mut out.document,
            &["spec", "topology", "version"],
            json!(topology.version),
        );
    }
    if topology.class.is_empty() {
        let (path, message) = crate::validate::names::names(cluster.wire).class_missing_on_default;
        return Err(vec![FieldError::required(path, message)]);
    }
    let Some(class) = class else {
        return Ok(out);
    };
    let mut errors = Vec::new();
    let mut defaulted = |values: &[Variable], scope: Scope<'_>| -> Option<Vec<Variable>> {
        match default_variables(values, &class.variables, scope) {
            Ok(v) => Some(v),
            Err(e) => {
                errors.extend(e);
                None
            }
        }
    };
    let top = defaulted(&topology.variables, Scope::Cluster);
    let cp = defaulted(
        &topology.control_plane.variable_overrides,
        Scope::ControlPlane,
    );
    let workers: Vec<(WorkerKind, usize, Option<Vec<Variable>>)> = topology_workers(topology)
        .iter()
        .map(|w| (w.kind, w.index, defaulted(w.overrides, w.scope())))
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let as_json = |values: &[Variable]| -> Value {
        Value::Array(
            values
                .iter()
                .map(|v| {
                    // Built in place: `json!` would copy each value by serializing it.
                    let mut item = Map::new();
                    item.insert("name".into(), Value::String(v.name.clone()));
                    item.insert("value".into(), v.value.clone());
                    if let Some(from) = &v.definition_from {
                        item.insert("definitionFrom".into(), Value::String(from.clone()));
                    }
                    Value::Object(item)
                })
                .collect(),
        )
    };
    if let Some(top) = top
        && (top != topology.variables || !top.is_empty())
    {
        if !top.is_empty() {
            set_at(
                &mut out.document,
                &["spec", "topology", "variables"],
                as_json(&top),
            );
        }
        topology.variables = top;
    }
    if let Some(cp) = cp
        && !cp.is_empty()
    {
        set_at(
            &mut out.document,
            &["spec", "topology", "controlPlane", "variables", "overrides"],
            as_json(&cp),
        );
        topology.control_plane.variable_overrides = cp;
    }
    for (kind, i, values) in workers {
        let Some(values) = values.filter(|v| !v.is_empty()) else {
            continue;
        };
        let slot = match kind {
            WorkerKind::MachineDeployment => topology
                .machine_deployments
                .get_mut(i)
                .map(|w| &mut w.variable_overrides),
            WorkerKind::MachinePool => topology
                .machine_pools
                .get_mut(i)
                .map(|w| &mut w.variable_overrides),
        };
        let Some(slot) = slot else { continue };
        if let Some(entry) = out
            .document
            .pointer_mut(&format!("/spec/topology/workers/{}/{i}", kind.list()))
        {
            set_at(entry, &["variables", "overrides"], as_json(&values));
        }
        *slot = values;
    }
    Ok(out)
}
