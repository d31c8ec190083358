//! The admission rules for a class's patches, with Cluster API's texts and field paths:
//! names, `enabledIf` and value templates that parse, the operations and paths a JSON
//! patch may use, values, variables that exist, and selectors that match a template of
//! the class. A class that breaks them would never have been admitted, so rendering
//! refuses it up front instead of failing half-way through a patch.

use serde_json::{Map, Value, json};
use topograph_api::field::{ErrorType, FieldError};
use topograph_api::model::{ClusterClass, ObjectRef};
use topograph_api::v1beta1::{JsonPatch, PatchSelector};
use topograph_gocompat::strconv::{atoi, quote};
use topograph_gotemplate::Options;

use super::builtin;

/// Why a class's external patch is refused while Runtime SDK is off: the one class
/// rule Runtime SDK lifts (see `crate::admission`).
pub const EXTERNAL_NEEDS_RUNTIME_SDK: &str =
    "patch.external can be used only if the RuntimeSDK feature flag is enabled";
use super::inline::class_matches;

/// Go's `json.MarshalIndent(v, "", "  ")`.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn json_patch_value(patch: &JsonPatch) -> Value {
    let mut map = Map::new();
    map.insert("op".into(), json!(patch.op));
    map.insert("path".into(), json!(patch.path));
    if let Some(value) = &patch.value {
        map.insert("value".into(), value.clone());
    }
    if let Some(from) = &patch.value_from {
        map.insert("valueFrom".into(), value_from_value(from));
    }
    Value::Object(map)
}

fn value_from_value(from: &topograph_api::v1beta1::JsonPatchValue) -> Value {
    let mut map = Map::new();
    if let Some(v) = &from.variable {
        map.insert("variable".into(), json!(v));
    }
    if let Some(t) = &from.template {
        map.insert("template".into(), json!(t));
    }
    Value::Object(map)
}

fn selector_value(selector: &PatchSelector) -> Value {
    let m = &selector.match_resources;
    let mut matches = Map::new();
    if m.control_plane {
        matches.insert("controlPlane".into(), json!(true));
    }
    if m.infrastructure_cluster {
        matches.insert("infrastructureCluster".into(), json!(true));
    }
    for (key, names) in [
        ("machineDeploymentClass", &m.machine_deployment_class),
        ("machinePoolClass", &m.machine_pool_class),
    ] {
        if let Some(names) = names {
            let mut inner = Map::new();
            if let Some(n) = &names.names {
                inner.insert("names".into(), json!(n));
            }
            matches.insert(key.into(), Value::Object(inner));
        }
    }
    json!({
        "apiVersion": selector.api_version,
        "kind": selector.kind,
        "matchResources": matches,
    })
}

fn parse_error(name: &str, text: &str) -> Option<String> {
    crate::template_cache::parse(name, text, &Options::patch())
        .err()
        .map(|e| format!("template can not be parsed: {e}"))
}

fn matches_ref(selector: &PatchSelector, r: Option<&ObjectRef>) -> bool {
    r.is_some_and(|r| r.kind == selector.kind && r.api_version == selector.api_version)
}

fn is_qualified_name(value: &str) -> bool {
    crate::validate::common::qualified_name(value).is_empty()
}

fn validate_worker_names(
    names: &[String],
    classes: &[(&str, &ObjectRef, &ObjectRef)],
    selector: &PatchSelector,
    path: &str,
    what: &str,
    errors: &mut Vec<FieldError>,
) {
    for (i, name) in names.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if name.contains('*') {
            let problem = if name.matches('*').count() > 1 {
                Some("selector can at most contain a single \"*\" rune")
            } else if !(name.starts_with('*') || name.ends_with('*')) {
                Some("\"*\" rune can only appear at the beginning, or ending of the selector")
            } else if !is_qualified_name(&name.replace('*', "a")) {
                Some("selector does not comply with the Kubernetes naming standards")
            } else {
                None
            };
            if let Some(problem) = problem {
                errors.push(FieldError::invalid(at, name, problem));
                break;
            }
        }
        let matched = classes.iter().any(|(class, bootstrap, infrastructure)| {
            class_matches(name, class)
                && (matches_ref(selector, Some(infrastructure))
                    || matches_ref(selector, Some(bootstrap)))
        });
        if !matched {
            errors.push(FieldError::invalid(
                at,
                name,
                format!(
                    "selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a {what} class"
                ),
            ));
        }
    }
}

fn validate_selector(
    selector: &PatchSelector,
    class: &ClusterClass,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let m = &selector.match_resources;
    let names = |c: &Option<topograph_api::v1beta1::ClassNames>| {
        c.as_ref()
            .and_then(|c| c.names.clone())
            .filter(|n| !n.is_empty())
    };
    let md_names = names(&m.machine_deployment_class);
    let mp_names = names(&m.machine_pool_class);
    if !(m.infrastructure_cluster || m.control_plane || md_names.is_some() || mp_names.is_some()) {
        errors.push(FieldError::invalid(
            path,
            &pretty(&selector_value(selector)),
            "no selector enabled",
        ));
        return;
    }
    if m.infrastructure_cluster
        && !matches_ref(selector, class.infrastructure.as_ref().map(|i| &i.template))
    {
        errors.push(FieldError::new(
            format!("{path}.matchResources.infrastructureCluster"),
            ErrorType::Invalid,
            Some("true".into()),
            "selector is enabled but does not match the infrastructure ref",
        ));
    }
    if m.control_plane
        && !matches_ref(selector, Some(&class.control_plane.template))
        && !matches_ref(
            selector,
            class.control_plane.machine_infrastructure.as_ref(),
        )
    {
        errors.push(FieldError::new(
            format!("{path}.matchResources.controlPlane"),
            ErrorType::Invalid,
            Some("true".into()),
            "selector is enabled but matches neither the controlPlane ref nor the controlPlane machineInfrastructure ref",
        ));
    }
    let md_classes = class
        .machine_deployments
        .iter()
        .map(|md| (md.class.as_str(), &md.bootstrap, &md.infrastructure));
    let mp_classes = class
        .machine_pools
        .iter()
        .map(|mp| (mp.class.as_str(), &mp.bootstrap, &mp.infrastructure));
    // (selected names, the classes they may match, field, kind named in errors)
    let workers = [
        (
            md_names,
            md_classes.collect::<Vec<_>>(),
            "machineDeploymentClass",
            "MachineDeployment",
        ),
        (
            mp_names,
            mp_classes.collect(),
            "machinePoolClass",
            "MachinePool",
        ),
    ];
    for (names, classes, field, what) in workers {
        if let Some(names) = names {
            validate_worker_names(
                &names,
                &classes,
                selector,
                &format!("{path}.matchResources.{field}.names"),
                what,
                errors,
            );
        }
    }
}

fn validate_json_patch(
    patch: &JsonPatch,
    class: &ClusterClass,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let shown = || pretty(&json_patch_value(patch));
    if !matches!(patch.op.as_str(), "add" | "replace" | "remove") {
        errors.push(FieldError::new(
            format!("{path}.op"),
            ErrorType::NotSupported,
            Some(quote(&shown())),
            "supported values: \"add\", \"remove\", \"replace\"",
        ));
    }
    let prefix = crate::validate::names::names(class.wire).json_patch_path_prefix;
    if !patch.path.starts_with(prefix) {
        errors.push(FieldError::invalid(
            format!("{path}.path"),
            &shown(),
            format!("jsonPatch path must start with {prefix:?}"),
        ));
    }
    for part in patch.path.split('/') {
        let Ok(index) = atoi(part) else {
            continue;
        };
        if patch.op == "add" && index != 0 {
            errors.push(FieldError::invalid(
                format!("{path}.path"),
                &patch.path,
                "arrays can only be accessed using \"0\" (prepend) or \"-\" (append)",
            ));
        }
        if patch.op == "replace" || patch.op == "remove" {
            errors.push(FieldError::invalid(
                format!("{path}.path"),
                &patch.path,
                format!(
                    "elements in arrays can not be accessed in a {} operation",
                    patch.op
                ),
            ));
        }
    }
    if patch.op != "add" && patch.op != "replace" {
        return;
    }
    match (&patch.value, &patch.value_from) {
        (None, None) => errors.push(FieldError::invalid(
            path,
            &shown(),
            "jsonPatch must define one of value or valueFrom",
        )),
        (Some(_), Some(_)) => errors.push(FieldError::invalid(
            path,
            &shown(),
            "jsonPatch can not define both value and valueFrom",
        )),
        _ => {}
    }
    let Some(from) = &patch.value_from else {
        return;
    };
    let from_path = format!("{path}.valueFrom");
    match (&from.variable, &from.template) {
        (None, None) => errors.push(FieldError::invalid(
            &from_path,
            &pretty(&value_from_value(from)),
            "valueFrom must set either template or variable",
        )),
        (Some(_), Some(_)) => errors.push(FieldError::invalid(
            &from_path,
            &pretty(&value_from_value(from)),
            "valueFrom can not set both template and variable",
        )),
        _ => {}
    }
    if let Some(template) = &from.template
        && let Some(problem) = parse_error("valueFrom.template", template)
    {
        errors.push(FieldError::invalid(
            format!("{from_path}.template"),
            template,
            problem,
        ));
    }
    if let Some(variable) = &from.variable {
        let at = format!("{from_path}.variable");
        if variable.starts_with("builtin.") {
            if !builtin::is_allowed_path(variable) {
                errors.push(FieldError::invalid(
                    at,
                    variable,
                    "not a defined builtin variable",
                ));
            }
        } else {
            let name = variable
                .split(['[', '.'])
                .find(|s| !s.is_empty())
                .unwrap_or_default();
            if !class.variables.iter().any(|d| d.name == name) {
                errors.push(FieldError::invalid(
                    at,
                    variable,
                    format!("variable with name {variable} cannot be found"),
                ));
            }
        }
    }
}

/// Every problem with the patches of `class`, paths under `spec.patches`.
pub fn validate(class: &ClusterClass) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, patch) in class.patches.iter().enumerate() {
        let path = format!("spec.patches[{i}]");
        if patch.name.is_empty() {
            errors.push(FieldError::required(
                format!("{path}.name"),
                "patch name must be defined",
            ));
        }
        if patch.name == "inline" {
            errors.push(FieldError::required(
                format!("{path}.name"),
                "\"inline\" can not be used as the name of a patch",
            ));
        }
        if names.contains(&patch.name.as_str()) {
            errors.push(FieldError::invalid(
                format!("{path}.name"),
                &patch.name,
                format!(
                    "patch names must be unique. Patch with name {:?} is defined more than once",
                    patch.name
                ),
            ));
        }
        names.push(&patch.name);
        if let Some(enabled_if) = &patch.enabled_if
            && let Some(problem) = parse_error("enabledIf", enabled_if)
        {
            errors.push(FieldError::invalid(
                format!("{path}.enabledIf"),
                enabled_if,
                problem,
            ));
        }
        match (&patch.definitions, &patch.external) {
            (None, None) => errors.push(FieldError::required(
                &path,
                "one of definitions or external must be defined",
            )),
            (Some(_), Some(_)) => errors.push(FieldError::new(
                &path,
                ErrorType::Invalid,
                None,
                "only one of definitions or external can be defined",
            )),
            _ => {}
        }
        for (d, definition) in patch.definitions.iter().flatten().enumerate() {
            let base = format!("{path}.definitions[{d}]");
            for (j, json_patch) in definition.json_patches.iter().enumerate() {
                validate_json_patch(
                    json_patch,
                    class,
                    &format!("{base}.jsonPatches[{j}]"),
                    &mut errors,
                );
            }
            validate_selector(
                &definition.selector,
                class,
                &format!("{base}.selector"),
                &mut errors,
            );
        }
        if let Some(external) = &patch.external {
            errors.push(FieldError::forbidden(
                format!("{path}.external"),
                EXTERNAL_NEEDS_RUNTIME_SDK,
            ));
            if external.validate_extension.is_none() && external.generate_extension.is_none() {
                errors.push(FieldError::new(
                    format!("{path}.external"),
                    ErrorType::Invalid,
                    None,
                    crate::validate::names::names(class.wire).external_patch_without_extension,
                ));
            }
        }
    }
    errors
}
