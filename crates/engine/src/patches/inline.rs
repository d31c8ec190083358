//! Inline patches: for each item a patch's selectors match, decide `enabledIf`, then
//! compute each JSON patch operation's value (`value`, `valueFrom.variable` or
//! `valueFrom.template`). Errors of all items are gathered, as Cluster API aggregates
//! them.

use serde_json::Value;
use topograph_api::model::Patch;
use topograph_api::object::ObjectExt;
use topograph_api::v1beta1::{JsonPatch, PatchSelector};
use topograph_gocompat::strconv::quote;

use topograph_gotemplate::Data;

use super::json_patch::Operation;
use super::request::{Item, field_path};
use super::template_value::TemplateCache;
use super::variable_path;

/// What a patch does to one item.
#[derive(Debug)]
pub enum Outcome {
    /// JSON patch operations for the item at this index.
    Operations(usize, Vec<Operation>),
    /// The patch's selectors match the item but `enabledIf` turned it off.
    Disabled(usize),
}

/// Whether `name` matches a class-name pattern: exact, `*`, `prefix*` or `*suffix`.
pub(crate) fn class_matches(pattern: &str, class: &str) -> bool {
    pattern == "*"
        || pattern == class
        || pattern
            .strip_prefix('*')
            .is_some_and(|suffix| class.ends_with(suffix))
        || pattern
            .strip_suffix('*')
            .is_some_and(|prefix| class.starts_with(prefix))
}

fn matches(item: &Item, selector: &PatchSelector) -> bool {
    if item.object.api_version() != selector.api_version || item.object.kind() != selector.kind {
        return false;
    }
    let m = &selector.match_resources;
    let holder = &item.holder;
    if m.infrastructure_cluster
        && holder.kind == "Cluster"
        && holder.field_path == field_path::INFRASTRUCTURE_REF
    {
        return true;
    }
    if m.control_plane
        && ((holder.kind == "Cluster" && holder.field_path == field_path::CONTROL_PLANE_REF)
            || holder.field_path == field_path::CONTROL_PLANE_MACHINE_TEMPLATE
            || holder.field_path == field_path::CONTROL_PLANE_MACHINE_TEMPLATE_V1BETA2)
    {
        return true;
    }
    let worker = |holder_kind: &str, builtin_key: &str, names: Option<&Vec<String>>| {
        let Some(names) = names else { return false };
        if holder.kind != holder_kind
            || (holder.field_path != field_path::BOOTSTRAP
                && holder.field_path != field_path::INFRASTRUCTURE)
        {
            return false;
        }
        let class = item
            .variables
            .get(super::builtin::NAME)
            .and_then(|b| b.get(builtin_key))
            .and_then(|w| w.get("class"))
            .and_then(Value::as_str);
        class.is_some_and(|class| names.iter().any(|n| class_matches(n, class)))
    };
    worker(
        "MachineDeployment",
        "machineDeployment",
        m.machine_deployment_class
            .as_ref()
            .and_then(|c| c.names.as_ref()),
    ) || worker(
        "MachinePool",
        "machinePool",
        m.machine_pool_class.as_ref().and_then(|c| c.names.as_ref()),
    )
}

fn enabled(
    enabled_if: Option<&str>,
    data: &Data<'_>,
    templates: &mut TemplateCache,
) -> Result<bool, String> {
    let Some(text) = enabled_if else {
        return Ok(true);
    };
    let value = templates
        .render(text, data)
        .map_err(|e| format!("failed to calculate value for enabledIf: {e}"))?;
    Ok(value == Value::Bool(true))
}

fn value_of(
    patch: &JsonPatch,
    variables: &variable_path::Scope<'_>,
    data: &Data<'_>,
    templates: &mut TemplateCache,
) -> Result<Value, String> {
    let fail = |why: &str| Err(format!("failed to calculate value: {why}"));
    match (&patch.value, &patch.value_from) {
        (None, None) => fail("neither .value nor .valueFrom are set"),
        (Some(_), Some(_)) => fail("both .value and .valueFrom are set"),
        (Some(value), None) => Ok(value.clone()),
        (None, Some(from)) => match (&from.variable, &from.template) {
            (None, None) => fail(
                ".valueFrom is set, but neither .valueFrom.variable nor .valueFrom.template are set",
            ),
            (Some(_), Some(_)) => fail(
                ".valueFrom is set, but both .valueFrom.variable and .valueFrom.template are set",
            ),
            (Some(path), None) => variables
                .lookup(path)
                .map_err(|e| format!("failed to calculate value: {e}")),
            (None, Some(template)) => templates
                .render(template, data)
                .map_err(|e| format!("failed to calculate value for template: {e}")),
        },
    }
}

/// What one item sees: its variables over the global ones, for `valueFrom.variable`
/// and as converted template data.
pub struct ItemVariables<'a> {
    /// The variables.
    pub scope: variable_path::Scope<'a>,
    /// The same, for templates.
    pub data: Data<'a>,
}

/// Runs one inline patch over every item; `variables[i]` is what item `i` sees, the
/// same for every patch.
pub fn generate(
    patch: &Patch,
    items: &[Item],
    variables: &[&ItemVariables<'_>],
    templates: &mut TemplateCache,
) -> Result<Vec<Outcome>, String> {
    let definitions = patch.definitions.as_deref().unwrap_or_default();
    let mut outcomes = Vec::new();
    let mut errors = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let matching: Vec<_> = definitions
            .iter()
            .filter(|d| matches(item, &d.selector))
            .collect();
        if matching.is_empty() {
            continue;
        }
        // Only errors name the kind.
        let kind = || quote(item.object.kind());
        let Some(ItemVariables {
            scope: variables,
            data,
        }) = variables.get(index).copied()
        else {
            continue;
        };
        match enabled(patch.enabled_if.as_deref(), data, templates) {
            Err(e) => {
                errors.push(format!(
                    "failed to calculate if patch is enabled for {}: {e}",
                    kind()
                ));
                continue;
            }
            Ok(false) => {
                outcomes.push(Outcome::Disabled(index));
                continue;
            }
            Ok(true) => {}
        }
        for definition in matching {
            let operations: Result<Vec<_>, String> = definition
                .json_patches
                .iter()
                .map(|p| {
                    let value = match p.op.as_str() {
                        "add" | "replace" => Some(value_of(p, variables, data, templates)?),
                        _ => None,
                    };
                    Ok(Operation {
                        op: p.op.clone(),
                        path: p.path.clone(),
                        value,
                        from: None,
                    })
                })
                .collect();
            match operations {
                Ok(operations) => outcomes.push(Outcome::Operations(index, operations)),
                Err(e) => errors.push(format!(
                    "failed to generate JSON patches for {}: {e}",
                    kind()
                )),
            }
        }
    }
    match errors.len() {
        0 => Ok(outcomes),
        1 => Err(errors.remove(0)),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_name_patterns() {
        for (pattern, class, want) in [
            ("*", "anything", true),
            ("default-worker", "default-worker", true),
            ("default-worker", "default-worker-2", false),
            ("default-*", "default-worker", true),
            ("*-worker", "default-worker", true),
            ("*-worker", "default-workers", false),
            ("gpu-*", "default-worker", false),
            ("", "default-worker", false),
        ] {
            assert_eq!(class_matches(pattern, class), want, "{pattern} vs {class}");
        }
    }
}
