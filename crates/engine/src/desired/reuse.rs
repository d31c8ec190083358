//! What the desired objects take from the current ones: existing names (always reused;
//! a template copy whose spec changed is renamed later, by [`super::rotation`]) and the
//! shim owner reference. One place for these rules, shared by every kind of object.

use std::collections::BTreeMap;

use serde_json::Value;
use topograph_api::model::ObjectRef;
use topograph_api::object::{ObjectExt, set_at};

use super::Scope;
use super::clone::{CloneInput, template_to_template};
use crate::current::Referenced;
use crate::names::{self, NameData};
use crate::wire;

/// How an object the Cluster references (InfrastructureCluster, ControlPlane,
/// MachineDeployment) is named when it does not exist yet.
pub(crate) struct ObjectNaming<'a> {
    /// The class's naming template, if it has one.
    pub template: Option<&'a str>,
    /// The template used otherwise.
    pub default_template: &'a str,
    /// Path of the naming template in the ClusterClass, for errors; written out only
    /// when there is one.
    pub template_path: std::fmt::Arguments<'a>,
    /// Data the template sees besides `.cluster.name` and `.random`.
    pub extra: &'a [(&'a str, &'a str)],
    /// The object's role, which the suffix derives from.
    pub role: &'a [&'a str],
}

/// The current name when the object exists, else the rendered naming template.
pub(crate) fn object_name(
    scope: &Scope<'_>,
    current: Option<&str>,
    naming: &ObjectNaming<'_>,
) -> Result<String, String> {
    if let Some(name) = current {
        return Ok(name.to_string());
    }
    let data = naming.extra.iter().fold(
        NameData::new(&scope.cluster.name, &scope.suffix(naming.role)),
        |data, (field, value)| data.with(field, value),
    );
    let overflow_suffix = || {
        let mut role = naming.role.to_vec();
        role.push("overflow");
        scope.suffix(&role)
    };
    names::render_template(
        naming.template.unwrap_or(naming.default_template),
        &data,
        overflow_suffix,
    )
    .map_err(|e| {
        format!(
            "ClusterClass {}/{}: {}: Invalid value: {:?}: {e}",
            scope.blueprint.class.namespace,
            scope.blueprint.class.name,
            naming.template_path,
            naming.template.unwrap_or(naming.default_template)
        )
    })
}

/// A template copy for one Cluster (control plane machines, MachineDeployment
/// templates).
pub(crate) struct TemplateCopy<'a> {
    /// The class template.
    pub template: &'a Value,
    /// The class's reference to it.
    pub cloned_from: &'a ObjectRef,
    /// The current copy, if any.
    pub current: &'a Referenced<'a>,
    /// Name prefix (`<cluster>-` or `<cluster>-<md>-`).
    pub prefix: &'a str,
    /// The copy's role, which the suffix derives from.
    pub role: &'a [&'a str],
    /// Labels to add.
    pub labels: BTreeMap<String, String>,
}

/// The copy, named like the current one (a new copy gets a name derived from its
/// role). Whether its spec changed, and so whether it is rotated, is decided once
/// patches ran ([`super::rotation`]), on the spec the copy will have, as Cluster API
/// compares the patched desired template with the current one.
pub(crate) fn template_copy(scope: &Scope<'_>, input: TemplateCopy<'_>) -> Value {
    let cluster = scope.cluster;
    let name = match input.current.name() {
        Some(name) => name.to_string(),
        None => names::simple(input.prefix, &scope.suffix(input.role)),
    };
    template_to_template(
        CloneInput {
            template: input.template,
            cloned_from: input.cloned_from,
            namespace: &cluster.namespace,
            cluster_name: &cluster.name,
            labels: input.labels,
            annotations: BTreeMap::new(),
            name,
        },
        wire::cluster_owner_ref(cluster),
    )
}

/// Keeps the owner reference to the Cluster's shim Secret that an object created
/// before the Cluster referenced it carries, so applying the desired object does not
/// drop it.
pub(crate) fn carry_over_shim_owner(
    scope: &Scope<'_>,
    current: Option<&Value>,
    desired: &mut Value,
) {
    let shim = format!("{}-shim", scope.cluster.name);
    let Some(owners) = current
        .and_then(|c| c.at(&["metadata", "ownerReferences"]))
        .and_then(Value::as_array)
    else {
        return;
    };
    let shims: Vec<Value> = owners
        .iter()
        .filter(|o| {
            o.get("kind").and_then(Value::as_str) == Some("Secret")
                && o.get("name").and_then(Value::as_str) == Some(shim.as_str())
        })
        .cloned()
        .collect();
    if !shims.is_empty() {
        set_at(
            desired,
            &["metadata", "ownerReferences"],
            Value::Array(shims),
        );
    }
}
