//! The patch engine (spec section 4): a ClusterClass's patches, in order, change copies
//! of the class's templates; the patched templates then overwrite the desired objects'
//! specs, labels and annotations.
//!
//! * [`request`]: the items (templates) and the variables each sees;
//! * [`inline`]: selectors, `enabledIf` and values of inline patches;
//! * [`external`]: patches and validation by runtime extensions, through the caller's
//!   [`Extensions`] (without one, a class with external patches cannot render);
//! * [`json_patch`]: RFC 6902 application with the reference library's errors;
//! * [`update`]: copying patched templates into the desired objects;
//! * [`builtin`], [`variable_path`], [`template_value`]: what patches read ([`yaml`]:
//!   rendered template output read as Cluster API reads it);
//! * [`validate()`]: the admission rules for patches, checked before rendering.
//!
//! Every error names the patch and the template kind, wrapped the way Cluster API
//! wraps them, so the message matches what a Cluster's `TopologyReconciled` condition
//! would say.

pub mod builtin;
mod external;
mod inline;
pub mod json_patch;
mod request;
mod template_value;
mod update;
pub(crate) mod validate;
pub mod variable_path;

use std::rc::Rc;

use serde_json::Value;
use topograph_api::model::{Cluster, Topology};
use topograph_api::object::{ObjectExt, set_at};
use topograph_gocompat::strconv::quote;

use topograph_runtime::Extensions;

use crate::blueprint::Blueprint;
use crate::desired::DesiredState;
use inline::Outcome;
pub use request::Values;
use request::{Item, Target};
use template_value::TemplateCache;

pub use topograph_gocompat::yaml::yaml_to_json;
pub use validate::validate;

/// What one patch did to one template, in terms of the desired object it feeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The patch's name.
    pub patch: String,
    /// The template patched (`Kind name`).
    pub template: String,
    /// The desired object the template feeds (`Kind namespace/name`).
    pub object: String,
    /// `add`, `replace` or `remove`.
    pub op: String,
    /// The path in the template.
    pub template_path: String,
    /// The path in the object, or why the change does not reach the object.
    pub object_path: Result<String, &'static str>,
}

/// A patch whose selectors matched a template but whose `enabledIf` was false there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The patch's name.
    pub patch: String,
    /// The template (`Kind name`).
    pub template: String,
    /// The desired object the template feeds.
    pub object: String,
}

/// Which patch changed which path of which object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explanation {
    /// Changes, in the order they were applied.
    pub changes: Vec<Change>,
    /// Patches turned off by `enabledIf`, per template.
    pub skipped: Vec<Skipped>,
}

impl Explanation {
    /// Names the desired object `before` as `after` wherever the explanation names it.
    pub(crate) fn rename(&mut self, before: &str, after: &str) {
        let changes = self.changes.iter_mut().map(|c| &mut c.object);
        for object in changes.chain(self.skipped.iter_mut().map(|s| &mut s.object)) {
            if object == before {
                *object = after.to_string();
            }
        }
    }
}

/// How the explanation names a desired object: `Kind namespace/name`.
pub(crate) fn describe(object: &Value) -> String {
    format!("{} {}/{}", object.kind(), object.namespace(), object.name())
}

/// The template (`Kind name`) an item is and the desired object it feeds, as the
/// explanation names them. Neither changes while patches run: they keep only the
/// items' spec, labels and annotations, and the desired objects are written after the
/// last patch.
fn names_of(item: &Item, desired: &DesiredState) -> (String, String) {
    let template = format!("{} {}", item.object.kind(), item.object.name());
    let object = target_object(desired, item.target)
        .map(describe)
        .unwrap_or_default();
    (template, object)
}

fn target_object(desired: &DesiredState, target: Target) -> Option<&Value> {
    match target {
        Target::InfrastructureCluster => desired.infrastructure_cluster.as_ref(),
        Target::ControlPlane => Some(&desired.control_plane.object),
        Target::ControlPlaneMachineTemplate => desired.control_plane.machine_template.as_ref(),
        Target::Bootstrap(i) => desired
            .machine_deployments
            .get(i)
            .map(|m| &m.bootstrap_template),
        Target::Infrastructure(i) => desired
            .machine_deployments
            .get(i)
            .map(|m| &m.infrastructure_template),
        Target::PoolBootstrap(i) => desired.machine_pools.get(i).map(|m| &m.bootstrap_object),
        Target::PoolInfrastructure(i) => desired
            .machine_pools
            .get(i)
            .map(|m| &m.infrastructure_object),
    }
}

/// Applies JSON patch operations to an item; only `spec`, labels and annotations of
/// the result are kept (a field the result lacks leaves the item's alone). The
/// operations' values are moved into the item.
fn apply_to_item(
    item: &mut Item,
    operations: &mut [json_patch::Operation],
    external: bool,
) -> Result<(), String> {
    let applied = if operations.iter().all(stays_in_kept_fields) {
        // Patching the item itself keeps exactly what the copy would have given back,
        // without copying the template twice per patch.
        json_patch::apply_in_place(&mut item.object, operations, external)
    } else {
        let patched = if external {
            json_patch::apply_document(&item.object, operations)
        } else {
            json_patch::apply(&item.object, operations)
        };
        patched.map(|patched| copy_back(item, &patched))
    };
    applied.map_err(|e| match e {
        json_patch::PatchError::Decode(m) => {
            format!("failed to apply patch: error decoding json patch (RFC6902): {m}")
        }
        json_patch::PatchError::Apply(m) => {
            format!("failed to apply patch: error applying json patch (RFC6902): {m}")
        }
    })
}

/// Whether `operation` changes nothing but what [`copy_back`] keeps, and removes none of
/// the kept fields as a whole (the copy would then leave the item's in place).
fn stays_in_kept_fields(operation: &json_patch::Operation) -> bool {
    if !matches!(operation.op.as_str(), "add" | "replace" | "remove")
        || !operation.path.starts_with('/')
    {
        return false;
    }
    // The pointer's tokens as written: an escaped token (`~0`, `~1`) never reads as
    // one of these names, so there is nothing to unescape (nor to allocate).
    let mut tokens = operation.path.split('/').skip(1);
    let kept_depth = match (tokens.next(), tokens.next()) {
        (Some("spec"), _) => 1,
        (Some("metadata"), Some("labels" | "annotations")) => 2,
        _ => return false,
    };
    operation.op != "remove" || operation.path.split('/').skip(1).nth(kept_depth).is_some()
}

/// Keeps `spec`, labels and annotations of `patched` in the item.
fn copy_back(item: &mut Item, patched: &Value) {
    for path in [
        &["spec"][..],
        &["metadata", "labels"][..],
        &["metadata", "annotations"][..],
    ] {
        if let Some(value) = patched.at(path) {
            set_at(&mut item.object, path, value.clone());
        }
    }
}

/// The distinct variable sets of the items (an item's own variables, which it sees
/// over the global ones), and for each item the index of its set. Items of one holder
/// (a MachineDeployment's two templates) share their set.
fn distinct_variables(items: &[Item]) -> (Vec<Rc<serde_json::Map<String, Value>>>, Vec<usize>) {
    let mut distinct: Vec<Rc<serde_json::Map<String, Value>>> = Vec::new();
    let mut of_item = Vec::with_capacity(items.len());
    for item in items {
        let own = &item.variables;
        // A holder's items share their variables: the same map is found without
        // comparing it.
        let index = match distinct
            .iter()
            .position(|seen| Rc::ptr_eq(seen, own) || **seen == **own)
        {
            Some(index) => index,
            None => {
                distinct.push(Rc::clone(own));
                distinct.len() - 1
            }
        };
        of_item.push(index);
    }
    (distinct, of_item)
}

/// The stage of [`apply`] before any patch runs: the request's items, the variables
/// they see (built-in ones computed from the desired objects) and which items share a
/// set. Exposed for the stage benchmarks; returns each item's set.
#[doc(hidden)]
pub fn request_variables(
    cluster: &Cluster,
    topology: &Topology,
    blueprint: &Blueprint<'_>,
    desired: &DesiredState,
    values: &Values<'_>,
) -> Vec<usize> {
    let (_, items) = request::build(cluster, topology, blueprint, desired, values);
    distinct_variables(&items).1
}

/// Runs every patch of the class over `desired`, returning what changed where;
/// external patches and validations go through `extensions`.
pub fn apply(
    cluster: &Cluster,
    topology: &Topology,
    blueprint: &Blueprint<'_>,
    desired: &mut DesiredState,
    values: &Values<'_>,
    extensions: Option<&dyn Extensions>,
) -> Result<Explanation, String> {
    let patches = &blueprint.class.patches;
    let mut explanation = Explanation::default();
    if patches.is_empty() {
        return Ok(explanation);
    }
    let (globals, mut items) = request::build(cluster, topology, blueprint, desired, values);
    let empty = serde_json::Map::new();
    // The global variables are most of every item's data: convert them once, and read
    // each item's own over them.
    let globals_json = Value::Object(globals);
    let globals = globals_json.as_object().unwrap_or(&empty);
    let globals_data = topograph_gotemplate::Data::new(&globals_json);
    // What each item sees does not change from one patch to the next.
    let (own, of_item) = distinct_variables(&items);
    let distinct: Vec<inline::ItemVariables<'_>> = own
        .iter()
        .map(|own| inline::ItemVariables {
            scope: variable_path::Scope::new(own, globals),
            data: topograph_gotemplate::Data::layered(own, &globals_data, variable_path::MERGED),
        })
        .collect();
    // Items of one set share its converted data too.
    let variables: Vec<&inline::ItemVariables<'_>> =
        of_item.iter().map(|index| &distinct[*index]).collect();
    let mut templates = TemplateCache::default();
    // What the explanation calls each item and its object, formatted at its first
    // change.
    let mut named: Vec<Option<(String, String)>> = vec![None; items.len()];
    for patch in patches {
        // Only errors name the patch.
        let name = || quote(&patch.name);
        let generate_extension = patch
            .external
            .as_ref()
            .and_then(|e| e.generate_extension.as_deref());
        if patch.definitions.as_ref().is_none_or(Vec::is_empty)
            && let (Some(handler), Some(extensions)) = (generate_extension, extensions)
        {
            let request = external::generate_request(cluster, globals, &items, patch);
            let response = external::generate(extensions, handler, cluster, &request)
                .map_err(|e| format!("failed to generate patches for patch {}: {e}", name()))?;
            for generated in response.items {
                let Some(index) = (0..items.len()).find(|i| external::uid(*i) == generated.uid)
                else {
                    return Err("unable to find corresponding request item for patch".to_string());
                };
                let item = &mut items[index];
                let template = format!("{} {}", item.object.kind(), item.object.name());
                let object = target_object(desired, item.target)
                    .map(describe)
                    .unwrap_or_default();
                let applied =
                    external::decode(&generated.patch_type, &generated.patch, &item.object)
                        .map_err(|e| {
                            format!("failed to apply patches for patch {}: {e}", name())
                        })?;
                match applied {
                    external::Applied::Operations(mut operations) => {
                        apply_to_item(item, &mut operations, true).map_err(|e| {
                            format!("failed to apply patches for patch {}: {e}", name())
                        })?;
                        explanation
                            .changes
                            .extend(operations.into_iter().map(|op| Change {
                                patch: patch.name.clone(),
                                template: template.clone(),
                                object: object.clone(),
                                object_path: update::object_path(item.target, &op.path),
                                op: op.op,
                                template_path: op.path,
                            }));
                    }
                    external::Applied::Merged(merged) => {
                        copy_back(item, &merged);
                        explanation.changes.push(Change {
                            patch: patch.name.clone(),
                            template,
                            object,
                            object_path: update::object_path(item.target, "/spec"),
                            op: "merge".to_string(),
                            template_path: "/spec".to_string(),
                        });
                    }
                }
            }
            continue;
        }
        if patch.definitions.as_ref().is_none_or(Vec::is_empty) {
            return Err(
                if patch
                    .external
                    .as_ref()
                    .is_some_and(|e| e.generate_extension.is_some())
                {
                    format!(
                        "can not use external patch {} if RuntimeSDK feature flag is disabled",
                        name()
                    )
                } else {
                    format!("failed to create patch generator for patch {}", name())
                },
            );
        }
        let outcomes = inline::generate(patch, &items, &variables, &mut templates)
            .map_err(|e| format!("failed to generate patches for patch {}: {e}", name()))?;
        for outcome in outcomes {
            let index = match &outcome {
                Outcome::Operations(index, _) | Outcome::Disabled(index) => *index,
            };
            let Some(item) = items.get_mut(index) else {
                return Err("unable to find corresponding request item for patch".to_string());
            };
            let Some(slot) = named.get_mut(index) else {
                return Err("unable to find corresponding request item for patch".to_string());
            };
            let (template, object) = &*slot.get_or_insert_with(|| names_of(item, desired));
            match outcome {
                Outcome::Disabled(_) => explanation.skipped.push(Skipped {
                    patch: patch.name.clone(),
                    template: template.clone(),
                    object: object.clone(),
                }),
                Outcome::Operations(_, mut operations) => {
                    apply_to_item(item, &mut operations, false).map_err(|e| {
                        format!("failed to apply patches for patch {}: {e}", name())
                    })?;
                    explanation
                        .changes
                        .extend(operations.into_iter().map(|op| Change {
                            patch: patch.name.clone(),
                            template: template.clone(),
                            object: object.clone(),
                            object_path: update::object_path(item.target, &op.path),
                            op: op.op,
                            template_path: op.path,
                        }));
                }
            }
        }
    }
    // Validation by extensions, once every patch has run, in class order.
    if let Some(extensions) = extensions {
        for patch in patches {
            let Some(handler) = patch
                .external
                .as_ref()
                .and_then(|e| e.validate_extension.as_deref())
            else {
                continue;
            };
            let request = external::validate_request(cluster, globals, &items, patch);
            extensions
                .validate_topology(handler, &cluster.namespace, &cluster.name, &request)
                .map_err(|e| {
                    format!(
                        "validation of patch {} failed: {}",
                        quote(&patch.name),
                        e.message
                    )
                })?;
        }
    }
    update::apply(items, desired)
        .map_err(|e| format!("failed to apply patches to desired state: {e}"))?;
    Ok(explanation)
}
