//! ClusterClass reconciliation, as Cluster API's ClusterClass controller does it (spec
//! 1.12, 4.6, 5.1): `status.variables` from the class's definitions, the
//! `VariablesReady` condition, `status.observedGeneration` once all of it succeeded, and
//! a (non-controller) owner reference from the class to every template it references.
//!
//! Clusters wait for their class: a Cluster whose class's observedGeneration lags its
//! generation, or whose `VariablesReady` is not True, is not reconciled.

use serde_json::{Map, Value, json};
use topograph_api::model::{ClusterClass, ObjectRef};
use topograph_api::object::ObjectExt;

use crate::conditions::{self, Condition};
use crate::error::ReconcileError;
use topograph_management::ManagementCluster;

/// The API version of Cluster API objects the applier reads and writes.
pub const API_VERSION: &str = "cluster.x-k8s.io/v1beta1";
/// The condition saying the class's variables are known.
pub const VARIABLES_READY: &str = "VariablesReady";

/// Why a class is not ready for its Clusters, or `None` when it is.
pub fn not_reconciled(class: &Value) -> Option<String> {
    let generation = class
        .at(&["metadata", "generation"])
        .and_then(Value::as_i64);
    let observed = class
        .at(&["status", "observedGeneration"])
        .and_then(Value::as_i64);
    let ready = conditions::find(class, VARIABLES_READY)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str);
    if ready != Some("True") {
        return Some(format!(
            "ClusterClass is not successfully reconciled: status of {VARIABLES_READY} condition on ClusterClass must be \"True\""
        ));
    }
    if generation != observed {
        return Some(format!(
            "ClusterClass is not successfully reconciled: ClusterClass.status.observedGeneration must be {}, but is {}",
            generation.unwrap_or_default(),
            observed.unwrap_or_default()
        ));
    }
    None
}

/// Every template a class references, in the class's order.
pub fn template_refs(class: &ClusterClass) -> Vec<ObjectRef> {
    let mut refs = Vec::new();
    refs.extend(class.infrastructure.as_ref().map(|i| i.template.clone()));
    refs.push(class.control_plane.template.clone());
    refs.extend(class.control_plane.machine_infrastructure.clone());
    for md in &class.machine_deployments {
        refs.push(md.bootstrap.clone());
        refs.push(md.infrastructure.clone());
    }
    for mp in &class.machine_pools {
        refs.push(mp.bootstrap.clone());
        refs.push(mp.infrastructure.clone());
    }
    refs
}

/// `status.variables`: one entry per definition, sorted by name, each with its one
/// inline definition (definitions discovered from external patches need the Runtime
/// SDK, which is not supported).
fn status_variables(class: &Value) -> Value {
    let mut variables: Vec<Value> = class
        .at(&["spec", "variables"])
        .and_then(Value::as_array)
        .map(|defs| {
            defs.iter()
                .map(|def| {
                    let mut definition = Map::new();
                    definition.insert("from".into(), json!("inline"));
                    definition.insert(
                        "required".into(),
                        def.get("required").cloned().unwrap_or(json!(false)),
                    );
                    for key in ["metadata", "schema"] {
                        if let Some(v) = def.get(key) {
                            definition.insert(key.into(), v.clone());
                        }
                    }
                    json!({
                        "name": def.get("name").cloned().unwrap_or(json!("")),
                        "definitionsConflict": false,
                        "definitions": [Value::Object(definition)],
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    variables.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Value::Array(variables)
}

/// What a class reconcile did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassOutcome {
    /// Templates that got the class's owner reference.
    pub templates_owned: u64,
    /// Whether the status was written.
    pub status_written: bool,
}

/// Reconciles the ClusterClass `namespace/name`. A class that does not exist is not an
/// error (there is nothing to do).
pub async fn reconcile_class(
    cluster: &ManagementCluster,
    namespace: &str,
    name: &str,
) -> Result<ClassOutcome, ReconcileError> {
    let mut outcome = ClassOutcome::default();
    let Some(object) = cluster
        .get(API_VERSION, "ClusterClass", namespace, name)
        .await?
    else {
        return Ok(outcome);
    };
    let generation = object
        .at(&["metadata", "generation"])
        .and_then(Value::as_i64)
        .unwrap_or_default();
    let decoded = topograph_api::load::decode_cluster_class(object.clone());
    let result = match &decoded {
        Ok(class) => own_templates(cluster, &object, class, &mut outcome).await,
        Err(problems) => Err(ReconcileError::invalid(format!(
            "ClusterClass {namespace}/{name} cannot be read: {}",
            problems.join("; ")
        ))),
    };

    let mut status = object
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let problems = decoded
        .as_ref()
        .map(|class| topograph_variables::validate_definitions(&class.variables, None))
        .unwrap_or_default();
    if problems.is_empty() {
        status.insert("variables".into(), status_variables(&object));
        conditions::set(
            &mut status,
            &Condition::ok(VARIABLES_READY, "VariablesReady"),
            generation,
        );
    } else {
        let message = problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        conditions::set(
            &mut status,
            &Condition::not_ok(
                VARIABLES_READY,
                "VariablesNotReady",
                "VariablesReconcileFailed",
                message,
            )
            .with_severity("Error"),
            generation,
        );
    }
    // observedGeneration says "everything for this generation succeeded".
    if result.is_ok() && problems.is_empty() {
        status.insert("observedGeneration".into(), json!(generation));
    }
    if let Some(patch) = conditions::status_patch(object.get("status"), &status) {
        cluster.merge_patch_status(&object, &patch).await?;
        outcome.status_written = true;
    }
    result.map(|()| outcome)
}

async fn own_templates(
    cluster: &ManagementCluster,
    object: &Value,
    class: &ClusterClass,
    outcome: &mut ClassOutcome,
) -> Result<(), ReconcileError> {
    let owner = json!({
        "apiVersion": API_VERSION,
        "kind": "ClusterClass",
        "name": object.name(),
        "uid": object.at(&["metadata", "uid"]).cloned().unwrap_or(Value::Null),
    });
    let mut seen = std::collections::BTreeSet::new();
    for r in template_refs(class) {
        let namespace = if r.namespace.is_empty() {
            object.namespace()
        } else {
            r.namespace.as_str()
        };
        if !seen.insert((
            r.api_version.clone(),
            r.kind.clone(),
            namespace.to_string(),
            r.name.clone(),
        )) {
            continue;
        }
        let Some(template) = cluster
            .get(&r.api_version, &r.kind, namespace, &r.name)
            .await?
        else {
            return Err(ReconcileError::invalid(format!(
                "failed to get {} {namespace}/{} referenced by ClusterClass {}/{}: not found",
                r.kind,
                r.name,
                object.namespace(),
                object.name()
            )));
        };
        let intent = json!({"metadata": {"ownerReferences": [owner]}});
        if crate::cluster::write::update(cluster, &template, &intent)
            .await?
            .is_some()
        {
            outcome.templates_owned += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_variables_are_sorted_and_marked_inline() {
        let class = json!({"spec": {"variables": [
            {"name": "b", "required": true, "schema": {"openAPIV3Schema": {"type": "string"}}},
            {"name": "a", "required": false, "schema": {"openAPIV3Schema": {"type": "integer"}}}
        ]}});
        assert_eq!(
            status_variables(&class),
            json!([
                {"name": "a", "definitionsConflict": false, "definitions": [{"from": "inline", "required": false, "schema": {"openAPIV3Schema": {"type": "integer"}}}]},
                {"name": "b", "definitionsConflict": false, "definitions": [{"from": "inline", "required": true, "schema": {"openAPIV3Schema": {"type": "string"}}}]}
            ])
        );
    }

    #[test]
    fn a_class_is_ready_once_its_generation_is_observed_with_variables_ready() {
        let mut class = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 1,
            "v1beta2": {"conditions": [{"type": "VariablesReady", "status": "True"}]}}});
        assert_eq!(
            not_reconciled(&class).as_deref(),
            Some(
                "ClusterClass is not successfully reconciled: ClusterClass.status.observedGeneration must be 2, but is 1"
            )
        );
        class["status"]["observedGeneration"] = json!(2);
        assert_eq!(not_reconciled(&class), None);
        class["status"]["v1beta2"]["conditions"][0]["status"] = json!("False");
        assert!(
            not_reconciled(&class)
                .unwrap()
                .contains("VariablesReady condition")
        );
    }
}
