//! ClusterClass reconciliation, as Cluster API's ClusterClass controller does it (spec
//! 1.12, 4.6, 5.1): `status.variables` from the class's definitions, the
//! `VariablesReady` condition, `status.observedGeneration` once all of it succeeded, and
//! a (non-controller) owner reference from the class to every template it references.
//!
//! Clusters wait for their class: a Cluster whose class's observedGeneration lags its
//! generation, or whose `VariablesReady` is not True, is not reconciled.
//!
//! With runtime extensions ([`reconcile_class_with`]) a class whose patches name a
//! DiscoverVariables extension gets the definitions it answers in `status.variables`
//! (`from` the patch's name, `definitionsConflict` when they differ from another
//! definition of the name), and `VariablesReady` False with Cluster API's
//! `VariableDiscoveryFailed` message when discovery fails or definitions conflict.

use serde_json::{Map, Value, json};
use topograph_api::model::{ClusterClass, ObjectRef};
use topograph_api::object::ObjectExt;

use crate::conditions::{self, Condition};
use crate::error::ReconcileError;
use topograph_engine::admission::{self, StatusVariable};
use topograph_engine::{Extensions, Refusal};
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

/// The ExtensionConfigs whose handlers a class calls (external patches, the upgrade
/// plan): a handler is registered as `<handler>.<ExtensionConfig>`.
pub fn extension_configs_called(class: &ClusterClass) -> std::collections::BTreeSet<String> {
    let handlers = class
        .patches
        .iter()
        .filter_map(|p| p.external.as_ref())
        .flat_map(|e| {
            [
                &e.generate_extension,
                &e.validate_extension,
                &e.discover_variables_extension,
            ]
        })
        .chain([&class.upgrade_plan_extension])
        .filter_map(|h| h.as_deref());
    handlers
        .filter_map(|h| h.split_once('.').map(|(_, config)| config.to_string()))
        .collect()
}

/// `status.variables`: one entry per definition, sorted by name, each with its one
/// inline definition (definitions discovered from external patches are added by
/// [`with_discovered`]).
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

/// `inline` status variables (as [`status_variables`] gives them, from the stored
/// definitions) with the definitions extensions discovered added, in the order
/// admission found them, and each name's conflict flag; sorted by name.
fn with_discovered(inline: Value, discovered: &[StatusVariable]) -> Value {
    let mut variables = match inline {
        Value::Array(variables) => variables,
        _ => Vec::new(),
    };
    for variable in discovered {
        let definitions: Vec<Value> = variable
            .definitions
            .iter()
            .filter(|d| d.from != "inline")
            .map(|d| {
                let mut definition = Map::new();
                definition.insert("from".into(), json!(d.from));
                definition.insert("required".into(), json!(d.required));
                let mut metadata = Map::new();
                if !d.metadata.labels.is_empty() {
                    metadata.insert("labels".into(), json!(d.metadata.labels));
                }
                if !d.metadata.annotations.is_empty() {
                    metadata.insert("annotations".into(), json!(d.metadata.annotations));
                }
                if !metadata.is_empty() {
                    definition.insert("metadata".into(), Value::Object(metadata));
                }
                definition.insert("schema".into(), json!({"openAPIV3Schema": d.schema}));
                Value::Object(definition)
            })
            .collect();
        if definitions.is_empty() {
            continue;
        }
        match variables
            .iter_mut()
            .find(|v| v["name"].as_str() == Some(variable.name.as_str()))
        {
            Some(existing) => {
                if let Some(list) = existing["definitions"].as_array_mut() {
                    list.extend(definitions);
                }
                existing["definitionsConflict"] = json!(variable.definitions_conflict);
            }
            None => variables.push(json!({
                "name": variable.name,
                "definitionsConflict": variable.definitions_conflict,
                "definitions": definitions,
            })),
        }
    }
    variables.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Value::Array(variables)
}

/// What discovery made of a class's variables.
struct Discovery {
    /// `status.variables` to write; `None` keeps what the status has.
    variables: Option<Value>,
    /// Why `VariablesReady` is False, in Cluster API's `VariableDiscovery failed: …`
    /// words.
    failure: Option<String>,
}

/// Calls the class's DiscoverVariables extensions (through the engine's class
/// admission, which records every definition with its origin).
fn discover(class: &ClusterClass, inline: Value, extensions: &dyn Extensions) -> Discovery {
    match admission::admit_class_with_extensions(class.clone(), None, &[], extensions) {
        Ok(extended) => {
            let conflicts: Vec<&str> = extended
                .variables
                .iter()
                .filter(|v| v.definitions_conflict)
                .map(|v| v.name.as_str())
                .collect();
            Discovery {
                failure: (!conflicts.is_empty()).then(|| {
                    format!(
                        "VariableDiscovery failed: the following variables have conflicting schemas: {}",
                        conflicts.join(",")
                    )
                }),
                variables: Some(with_discovered(inline, &extended.variables)),
            }
        }
        Err(Refusal::Render(e)) => {
            // The engine words it as the returned error ("failed to discover variables
            // for ClusterClass NAME: ERRORS"); the condition carries the errors alone.
            let text = e.messages.join("; ");
            let prefix = format!(
                "failed to discover variables for ClusterClass {}: ",
                class.name
            );
            Discovery {
                variables: None,
                failure: Some(format!(
                    "VariableDiscovery failed: {}",
                    text.strip_prefix(&prefix).unwrap_or(&text)
                )),
            }
        }
        // The class rules are the webhook's to report; the variables are read as
        // without extensions.
        Err(Refusal::Class { .. } | Refusal::Cluster(_)) => Discovery {
            variables: Some(inline),
            failure: None,
        },
    }
}

/// Whether any patch of `class` names a DiscoverVariables extension.
fn discovers_variables(class: &ClusterClass) -> bool {
    class.patches.iter().any(|p| {
        p.external
            .as_ref()
            .is_some_and(|e| e.discover_variables_extension.is_some())
    })
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
    reconcile_class_with(cluster, None, namespace, name).await
}

/// [`reconcile_class`] with runtime extensions: DiscoverVariables is called for the
/// patches that name it. Without extensions a class's discovered variables stay
/// unknown (only its inline ones are listed), as before.
pub async fn reconcile_class_with(
    cluster: &ManagementCluster,
    extensions: Option<&dyn Extensions>,
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
    // Discovery (extensions given, a patch asking for it) happens only once the inline
    // definitions are valid, as Cluster API's webhook lets no other class through.
    let discovery = match (&decoded, extensions) {
        (Ok(class), Some(extensions)) if problems.is_empty() && discovers_variables(class) => {
            discover(class, status_variables(&object), extensions)
        }
        _ => Discovery {
            variables: Some(status_variables(&object)),
            failure: None,
        },
    };
    if !problems.is_empty() {
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
    } else {
        // A failed discovery keeps the variables listed before (Cluster API does not
        // decide to drop them); conflicting definitions are listed with their flags.
        if let Some(variables) = discovery.variables {
            status.insert("variables".into(), variables);
        }
        let condition = match &discovery.failure {
            None => Condition::ok(VARIABLES_READY, "VariablesReady"),
            Some(message) => Condition::not_ok(
                VARIABLES_READY,
                "VariableDiscoveryFailed",
                "VariableDiscoveryFailed",
                message.clone(),
            )
            .with_severity("Error"),
        };
        conditions::set(&mut status, &condition, generation);
    }
    let variables_ready = problems.is_empty() && discovery.failure.is_none();
    // observedGeneration says "everything for this generation succeeded".
    if result.is_ok() && variables_ready {
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
