//! Admission, once: what Cluster API's webhooks make of a ClusterClass or a Cluster, as
//! the one step every door runs before anything renders (the CLI, the render service,
//! the gateway's Apply and the applier's reconcile).
//!
//! An admitted object is an [`Admitted`]: only this module makes one, so
//! [`crate::render`] can rely on what admission established instead of checking again
//! — the class is valid, the Cluster is defaulted (version, variables and every override
//! list) and its variables are valid against the class. The rules themselves live in
//! [`crate::validate`]; this module decides what is admitted and phrases the verdicts.
//!
//! Two levels: typed ([`admit_class`], [`admit_cluster`]) for callers that decoded the
//! objects, and over JSON objects ([`admit_class_object`], [`admit_cluster_object`]) for
//! callers holding what an API server stores, where a stored object the engine cannot
//! read (the old version, the Clusters using a class, the candidate classes) is left out
//! of the check with a warning: it is the management cluster's business, not the
//! request's.

use std::ops::Deref;

use serde_json::Value;
use topograph_api::field::FieldError;
use topograph_api::load::{Bundle, LoadOptions, Loaded, Source, load_values};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_api::object::ObjectExt;
use topograph_api::violation::Violation;

use crate::error::RenderError;
use crate::validate;

/// An object admission accepted, as admission left it (a Cluster defaulted).
#[derive(Clone, Debug, PartialEq)]
pub struct Admitted<T>(T);

impl<T> Admitted<T> {
    /// The admitted object.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Admitted<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Admits a ClusterClass: `old` is the stored version on update, `clusters` the Clusters
/// using it (what an update must stay compatible with).
pub fn admit_class(
    class: ClusterClass,
    old: Option<&ClusterClass>,
    clusters: &[&Cluster],
) -> Result<Admitted<ClusterClass>, Vec<FieldError>> {
    let problems = validate::validate_cluster_class(&class, old, clusters);
    if problems.is_empty() {
        Ok(Admitted(class))
    } else {
        Err(problems)
    }
}

/// The one class rule the Runtime SDK lifts: external patches are allowed once the
/// caller supplies extensions (Cluster API's RuntimeSDK feature gate).
fn runtime_sdk_gate(error: &FieldError) -> bool {
    error.error_type == topograph_api::field::ErrorType::Forbidden
        && error.detail == crate::patches::validate::EXTERNAL_NEEDS_RUNTIME_SDK
}

/// A ClusterClass verdict as admission gives it with Runtime SDK on: the same, without
/// the refusals of external patches. Works on a verdict from a remote engine too
/// (its violations carry the rule's text, not the typed errors).
pub fn with_runtime_sdk(mut verdict: Verdict) -> Verdict {
    verdict.errors.retain(|e| !runtime_sdk_gate(e));
    verdict.violations.retain(|v| !runtime_sdk_gate_text(v));
    verdict
}

/// Whether the verdict refuses the class for an external patch: what only Runtime SDK
/// changes (so a caller asks whether it is on only then).
pub fn refused_for_runtime_sdk(verdict: &Verdict) -> bool {
    verdict.violations.iter().any(runtime_sdk_gate_text)
}

fn runtime_sdk_gate_text(violation: &Violation) -> bool {
    violation
        .description
        .strip_suffix(crate::patches::validate::EXTERNAL_NEEDS_RUNTIME_SDK)
        .is_some_and(|rest| rest.ends_with("Forbidden: "))
}

/// One definition of a variable, as a ClusterClass's status lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusVariableDefinition {
    /// `inline`, or the name of the patch whose extension defined it.
    pub from: String,
    /// Whether Clusters must set it.
    pub required: bool,
    /// Its OpenAPI v3 schema.
    pub schema: Value,
    /// Its deprecated metadata.
    pub metadata: topograph_api::model::Metadata,
}

/// A variable with every definition of it (`status.variables[]`).
#[derive(Clone, Debug, PartialEq)]
pub struct StatusVariable {
    /// The variable's name.
    pub name: String,
    /// Whether the definitions differ (then Clusters cannot use the class).
    pub definitions_conflict: bool,
    /// Its definitions: the class's own first, then each extension's in patch order.
    pub definitions: Vec<StatusVariableDefinition>,
}

/// A class admitted with runtime extensions: its variables include those the
/// extensions defined.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtendedClass {
    /// The class; its `variables` are the inline ones, then the discovered ones.
    pub class: Admitted<ClusterClass>,
    /// Every variable with its definitions, by name (what `status.variables` holds).
    pub variables: Vec<StatusVariable>,
}

/// Admits a ClusterClass whose external patches run on `extensions`: the class rules
/// without the RuntimeSDK gate, then the DiscoverVariables hook of every patch that
/// has one (as Cluster API's ClusterClass controller calls it), the definitions found
/// added to the class's variables. Definitions of one name that differ conflict; a
/// Cluster using the class is then refused with Cluster API's message.
pub fn admit_class_with_extensions(
    class: ClusterClass,
    old: Option<&ClusterClass>,
    clusters: &[&Cluster],
    extensions: &dyn topograph_runtime::Extensions,
) -> Result<ExtendedClass, Refusal> {
    let problems: Vec<FieldError> = validate::validate_cluster_class(&class, old, clusters)
        .into_iter()
        .filter(|e| !runtime_sdk_gate(e))
        .collect();
    if !problems.is_empty() {
        return Err(Refusal::class(&class, problems));
    }
    let mut variables: Vec<StatusVariable> = class
        .variables
        .iter()
        .map(|d| StatusVariable {
            name: d.name.clone(),
            definitions_conflict: false,
            definitions: vec![StatusVariableDefinition {
                from: "inline".to_string(),
                required: d.required,
                schema: d.schema.clone(),
                metadata: d.metadata.clone(),
            }],
        })
        .collect();
    let mut discovered = Vec::new();
    let mut errors = Vec::new();
    for patch in &class.patches {
        let Some(handler) = patch
            .external
            .as_ref()
            .and_then(|e| e.discover_variables_extension.as_deref())
        else {
            continue;
        };
        let request = topograph_runtime::hooks::DiscoverVariablesRequest {
            type_meta: topograph_runtime::hooks::TypeMeta::of("DiscoverVariablesRequest"),
            settings: patch
                .external
                .as_ref()
                .and_then(|e| e.settings.clone())
                .unwrap_or_default(),
        };
        let response =
            match extensions.discover_variables(handler, &class.namespace, &class.name, &request) {
                Ok(r) => r,
                Err(e) => {
                    errors.push(format!(
                        "failed to call DiscoverVariables for patch {}: {}",
                        patch.name, e.message
                    ));
                    continue;
                }
            };
        if response.common.status != topograph_runtime::hooks::ResponseStatus::Success {
            let status = serde_json::to_value(response.common.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            errors.push(format!(
                "patch {} returned status {:?} with message {:?}",
                patch.name, status, response.common.message
            ));
            continue;
        }
        let mut seen: Vec<&str> = Vec::new();
        for variable in &response.variables {
            if seen.contains(&variable.name.as_str()) {
                errors.push(format!(
                    "variable {:?} is defined multiple times in variable discovery response from patch {:?}",
                    variable.name, patch.name
                ));
                continue;
            }
            seen.push(&variable.name);
            let definition = topograph_api::model::VariableDefinition {
                name: variable.name.clone(),
                required: variable.required,
                schema: variable.schema.open_api_v3_schema.clone(),
                metadata: metadata(variable.metadata.as_ref()),
            };
            let status = StatusVariableDefinition {
                from: patch.name.clone(),
                required: definition.required,
                schema: definition.schema.clone(),
                metadata: definition.metadata.clone(),
            };
            match variables.iter_mut().find(|v| v.name == variable.name) {
                Some(existing) => {
                    let first = &existing.definitions[0];
                    if first.required != status.required
                        || !topograph_variables::same_schema(&first.schema, &status.schema)
                        || first.metadata != status.metadata
                    {
                        existing.definitions_conflict = true;
                    }
                    existing.definitions.push(status);
                }
                None => variables.push(StatusVariable {
                    name: variable.name.clone(),
                    definitions_conflict: false,
                    definitions: vec![status],
                }),
            }
            discovered.push(definition);
        }
    }
    if !errors.is_empty() {
        return Err(Refusal::Render(RenderError::new(format!(
            "failed to discover variables for ClusterClass {}: {}",
            class.name,
            topograph_runtime::registry::aggregate(&errors)
        ))));
    }
    variables.sort_by(|a, b| a.name.cmp(&b.name));
    let mut class = class;
    class.variables.extend(discovered);
    Ok(ExtendedClass {
        class: Admitted(class),
        variables,
    })
}

fn metadata(value: Option<&Value>) -> topograph_api::model::Metadata {
    let map = |key: &str| -> std::collections::BTreeMap<String, String> {
        value
            .and_then(|v| v.get(key))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    };
    topograph_api::model::Metadata {
        labels: map("labels"),
        annotations: map("annotations"),
    }
}

/// What admission made of a Cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterAdmission {
    /// The defaulted Cluster, when nothing refused it.
    pub admitted: Option<Admitted<Cluster>>,
    /// Why it is refused.
    pub errors: Vec<FieldError>,
    /// What could not be checked, or was skipped on purpose.
    pub warnings: Vec<String>,
}

/// Admits a Cluster: defaulted against its class (found in `classes` by its topology),
/// then validated; `old` is the stored version on update.
pub fn admit_cluster(
    cluster: &Cluster,
    old: Option<&Cluster>,
    classes: &[&ClusterClass],
) -> ClusterAdmission {
    let (admitted, validation) = validate::admit_cluster(cluster, old, classes);
    ClusterAdmission {
        admitted: admitted.map(Admitted),
        errors: validation.errors,
        warnings: validation.warnings,
    }
}

/// Why a render did not happen: its class or its Cluster was refused by admission, or
/// the engine could not compute the desired state.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// The ClusterClass `namespace/name` is not valid.
    Class {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// What is wrong, at paths inside the class.
        errors: Vec<FieldError>,
    },
    /// The Cluster is refused, at paths inside it.
    Cluster(Vec<FieldError>),
    /// The desired state could not be computed.
    Render(RenderError),
}

impl Refusal {
    /// A refused class.
    pub fn class(class: &ClusterClass, errors: Vec<FieldError>) -> Self {
        Refusal::Class {
            namespace: class.namespace.clone(),
            name: class.name.clone(),
            errors,
        }
    }

    /// One message per problem, the texts a Cluster's `TopologyReconciled` condition
    /// and the CLI report: a class's problems name the class.
    pub fn messages(&self) -> Vec<String> {
        match self {
            Refusal::Class {
                namespace,
                name,
                errors,
            } => errors
                .iter()
                .map(|e| format!("ClusterClass {namespace}/{name}: {e}"))
                .collect(),
            Refusal::Cluster(errors) => errors.iter().map(ToString::to_string).collect(),
            Refusal::Render(e) => e.messages.clone(),
        }
    }

    /// The problems as violations of a request that carried the class in `class_field`
    /// and the Cluster in `cluster_field`; each description is the matching
    /// [`Refusal::messages`] text, so a remote caller reports exactly what an
    /// in-process one does.
    pub fn violations(&self, class_field: &str, cluster_field: &str) -> Vec<Violation> {
        let messages = self.messages();
        let fields: Vec<String> = match self {
            Refusal::Class { errors, .. } => errors
                .iter()
                .map(|e| topograph_api::violation::prefix_path(class_field, &e.path))
                .collect(),
            Refusal::Cluster(errors) => errors
                .iter()
                .map(|e| topograph_api::violation::prefix_path(cluster_field, &e.path))
                .collect(),
            Refusal::Render(e) => vec![cluster_field.to_string(); e.messages.len()],
        };
        fields
            .into_iter()
            .zip(messages)
            .map(|(field, description)| Violation::new(field, description))
            .collect()
    }
}

impl From<Refusal> for RenderError {
    fn from(refusal: Refusal) -> Self {
        RenderError {
            messages: refusal.messages(),
        }
    }
}

/// What admission made of an object held as JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Why it is refused, at paths inside the object; empty when it is admitted.
    pub violations: Vec<Violation>,
    /// The admission rules' errors among the violations, with Kubernetes' detail
    /// (type, bad value); empty when the object could not even be read.
    pub errors: Vec<FieldError>,
    /// What it is admitted with.
    pub warnings: Vec<String>,
    /// The object to write: defaulted for a Cluster, as given otherwise.
    pub object: Value,
}

impl Verdict {
    fn refused(violations: Vec<Violation>, object: &Value) -> Self {
        Verdict {
            violations,
            errors: Vec::new(),
            warnings: Vec::new(),
            object: object.clone(),
        }
    }
}

/// Reads one object the way every input is read (strict fields, defaults), from the
/// JSON it already is.
fn load_value(name: &str, value: &Value) -> Result<Bundle, Vec<Violation>> {
    let doc = Loaded {
        source: Source {
            file: name.to_string(),
            document: 1,
            item: None,
        },
        value: value.clone(),
    };
    load_values(vec![doc], &LoadOptions::default()).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| Violation::new(e.field, e.message))
            .collect()
    })
}

/// Stored objects, each read alone; one that cannot be read is left out with a warning.
fn load_stored(values: &[Value], warnings: &mut Vec<String>) -> Bundle {
    let mut bundle = Bundle::default();
    for value in values {
        let name = format!("{} {}/{}", value.kind(), value.namespace(), value.name());
        match load_value(&name, value) {
            Ok(b) => {
                bundle.clusters.extend(b.clusters);
                bundle.cluster_classes.extend(b.cluster_classes);
            }
            Err(problems) => warnings.push(format!(
                "{name} is not readable and was not checked against: {}",
                problems
                    .into_iter()
                    .map(|p| p.description)
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    bundle
}

fn classes(bundle: Bundle) -> Vec<ClusterClass> {
    bundle
        .cluster_classes
        .into_iter()
        .map(|c| c.value)
        .collect()
}

fn clusters(bundle: Bundle) -> Vec<Cluster> {
    bundle.clusters.into_iter().map(|c| c.value).collect()
}

/// The object under admission, exactly one `what` (`take` picks those from what was
/// read), and its stored version when that can be read; a refusal otherwise.
fn read_with_old<T>(
    object: &Value,
    old: Option<&Value>,
    what: &str,
    take: fn(Bundle) -> Vec<T>,
    warnings: &mut Vec<String>,
) -> Result<(T, Option<T>), Verdict> {
    let mut read = match load_value("object", object) {
        Ok(bundle) => take(bundle),
        Err(v) => return Err(Verdict::refused(v, object)),
    };
    if read.len() != 1 {
        let problem = Violation::new("", format!("not a {what}"));
        return Err(Verdict::refused(vec![problem], object));
    }
    let before = old.and_then(|o| take(load_stored(std::slice::from_ref(o), warnings)).pop());
    Ok((read.remove(0), before))
}

/// [`admit_class`] over JSON: `old` the stored version on update, `clusters` the
/// Clusters using it, as an API server stores them.
pub fn admit_class_object(class: &Value, old: Option<&Value>, users: &[Value]) -> Verdict {
    let mut warnings = Vec::new();
    let (new, before) = match read_with_old(class, old, "ClusterClass", classes, &mut warnings) {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let users = clusters(load_stored(users, &mut warnings));
    let users: Vec<&Cluster> = users.iter().collect();
    let errors = admit_class(new, before.as_ref(), &users)
        .err()
        .unwrap_or_default();
    Verdict {
        violations: Violation::from_field_errors(&errors),
        errors,
        warnings,
        object: class.clone(),
    }
}

/// Whether a stored class has a patch whose extension defines variables.
fn discovers_variables(class: &Value) -> bool {
    class
        .at(&["spec", "patches"])
        .and_then(Value::as_array)
        .is_some_and(|patches| {
            patches.iter().any(|p| {
                p.at(&["external", "discoverVariablesExtension"])
                    .and_then(Value::as_str)
                    .is_some_and(|h| !h.is_empty())
            })
        })
}

/// Cluster API's webhook test of a class Clusters can be checked against: its
/// observedGeneration caught up with its generation, and `VariablesReady` not False
/// (in either the v1beta2 conditions or the v1beta1 ones a v1beta1 read carries).
fn reconciled_for_clusters(class: &Value) -> bool {
    let generation = class
        .at(&["metadata", "generation"])
        .and_then(Value::as_i64);
    let observed = class
        .at(&["status", "observedGeneration"])
        .and_then(Value::as_i64);
    let not_ready = [
        &["status", "conditions"][..],
        &["status", "v1beta2", "conditions"][..],
    ]
    .iter()
    .filter_map(|path| class.at(path).and_then(Value::as_array))
    .flatten()
    .any(|c| c["type"] == "VariablesReady" && c["status"] == "False");
    generation.is_some() && generation == observed && !not_ready
}

/// Adds to a class's variables the definitions its status lists from extensions
/// (`from` other than `inline`; the first one of each name not defined inline), as
/// the webhook validates Clusters against `status.variables`.
fn add_discovered_variables(class: &mut ClusterClass, stored: &Value) {
    let Some(variables) = stored
        .at(&["status", "variables"])
        .and_then(Value::as_array)
    else {
        return;
    };
    for variable in variables {
        let Some(name) = variable.get("name").and_then(Value::as_str) else {
            continue;
        };
        if class.variables.iter().any(|d| d.name == name) {
            continue;
        }
        let Some(definition) = variable
            .get("definitions")
            .and_then(Value::as_array)
            .and_then(|d| d.first())
            .filter(|d| d.get("from").and_then(Value::as_str) != Some("inline"))
        else {
            continue;
        };
        let metadata_value = definition
            .get("metadata")
            .or_else(|| definition.get("deprecatedV1Beta1Metadata"));
        class
            .variables
            .push(topograph_api::model::VariableDefinition {
                name: name.to_string(),
                required: definition
                    .get("required")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                schema: definition
                    .at(&["schema", "openAPIV3Schema"])
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Default::default())),
                metadata: metadata(metadata_value),
            });
    }
}

/// [`admit_cluster`] over JSON: `old` the stored version on update, `classes` the
/// ClusterClasses it may refer to, as an API server stores them. An admitted Cluster
/// comes back defaulted.
pub fn admit_cluster_object(cluster: &Value, old: Option<&Value>, candidates: &[Value]) -> Verdict {
    let mut warnings = Vec::new();
    let (new, before) = match read_with_old(cluster, old, "Cluster", clusters, &mut warnings) {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    // A class whose extensions define variables is known to Clusters only through its
    // status, as the ClusterClass controller left it: one not reconciled yet is a
    // warning, as Cluster API's webhook has it, and the topology goes unchecked.
    let (usable, unreconciled): (Vec<&Value>, Vec<&Value>) = candidates
        .iter()
        .partition(|c| !discovers_variables(c) || reconciled_for_clusters(c));
    let usable: Vec<Value> = usable.into_iter().cloned().collect();
    let mut loaded = classes(load_stored(&usable, &mut warnings));
    for class in &mut loaded {
        if let Some(stored) = usable
            .iter()
            .find(|c| c.namespace() == class.namespace && c.name() == class.name)
        {
            add_discovered_variables(class, stored);
        }
    }
    let loaded: Vec<&ClusterClass> = loaded.iter().collect();
    let mut admission = admit_cluster(&new, before.as_ref(), &loaded);
    for class in unreconciled {
        let not_found = validate::class_not_found_warning(class.namespace(), class.name());
        for warning in &mut admission.warnings {
            if *warning == not_found {
                *warning = format!(
                    "Cluster refers to ClusterClass {}/{}, but this ClusterClass hasn't been successfully reconciled. Cluster topology has not been fully validated. Please take a look at the ClusterClass status",
                    class.namespace(),
                    class.name()
                );
            }
        }
    }
    warnings.extend(admission.warnings);
    Verdict {
        violations: Violation::from_field_errors(&admission.errors),
        errors: admission.errors,
        warnings,
        object: admission
            .admitted
            .map_or_else(|| cluster.clone(), |c| c.into_inner().document),
    }
}
