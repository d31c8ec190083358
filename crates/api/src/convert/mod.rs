//! Conversion of Cluster API's own objects between `cluster.x-k8s.io/v1beta1` and
//! `cluster.x-k8s.io/v1beta2`, on JSON (decision 0020).
//!
//! The kinds the topology reads and writes convert: ClusterClass, Cluster,
//! MachineDeployment, MachineHealthCheck and MachinePool. Renames follow Cluster API's
//! conversion functions (`api/core/v1beta1/conversion.go`); every field a rule does
//! not touch stays as it is, so provider-specific and unknown content survives.
//! Anything else (provider objects, other groups and versions) is returned unchanged.
//!
//! What one version cannot hold is kept in the `cluster.x-k8s.io/conversion-data`
//! annotation when [`Options::conversion_data`] asks for it (module `data`): a
//! v1beta1 → v1beta2 → v1beta1 round trip gives back the same object, byte for byte,
//! and so does v1beta2 → v1beta1 → v1beta2.
//!
//! Problems are [`FieldError`]s with the path of the field in the input; a duration
//! that v1beta2's whole seconds cannot hold names both fields.

mod cluster;
mod cluster_class;
mod common;
mod data;
mod fields;
mod health;
mod machines;
mod refs;
mod status;
mod workers;

use std::fmt;

use serde_json::Value;

use crate::field::FieldError;
use crate::object::ObjectExt;

pub use data::CONVERSION_DATA;

/// The API group of Cluster API's own kinds.
pub const GROUP: &str = "cluster.x-k8s.io";

/// The kinds this module converts.
pub const KINDS: [&str; 5] = [
    "ClusterClass",
    "Cluster",
    "MachineDeployment",
    "MachineHealthCheck",
    "MachinePool",
];

/// A version of Cluster API's group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// `cluster.x-k8s.io/v1beta1`.
    V1Beta1,
    /// `cluster.x-k8s.io/v1beta2`.
    V1Beta2,
}

impl Version {
    /// `cluster.x-k8s.io/<version>`.
    pub fn api_version(self) -> &'static str {
        match self {
            Version::V1Beta1 => "cluster.x-k8s.io/v1beta1",
            Version::V1Beta2 => "cluster.x-k8s.io/v1beta2",
        }
    }

    /// `v1beta1` or `v1beta2`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1Beta1 => "v1beta1",
            Version::V1Beta2 => "v1beta2",
        }
    }

    /// The version an `apiVersion` of Cluster API's group names, if one of these.
    pub fn of_api_version(api_version: &str) -> Option<Version> {
        [Version::V1Beta1, Version::V1Beta2]
            .into_iter()
            .find(|v| v.api_version() == api_version)
    }

    fn other(self) -> Version {
        match self {
            Version::V1Beta1 => Version::V1Beta2,
            Version::V1Beta2 => Version::V1Beta1,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Finds the `apiVersion` of a group and kind: v1beta2's contract references carry no
/// version, and a v1beta1 `ObjectReference` needs one (Cluster API reads it from the
/// provider's CRD).
pub type ApiVersionOf<'a> = &'a dyn Fn(&str, &str) -> Option<String>;

fn no_api_versions(_: &str, _: &str) -> Option<String> {
    None
}

/// How to convert.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// Keep what the target version cannot hold in the `cluster.x-k8s.io/conversion-data`
    /// annotation, so that converting back gives the same object. Off for objects that
    /// are written fresh in the target version (a render's output).
    pub conversion_data: bool,
    /// The `apiVersion` of contract-referenced kinds, for v1beta2 → v1beta1.
    pub api_version_of: ApiVersionOf<'a>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            conversion_data: true,
            api_version_of: &no_api_versions,
        }
    }
}

/// What a conversion function sees besides the object: where it goes and the
/// object's namespace (v1beta1 references carry it).
pub(crate) struct Context<'a> {
    to: Version,
    namespace: String,
    api_version_of: ApiVersionOf<'a>,
}

impl Context<'_> {
    fn to_v1beta2(&self) -> bool {
        self.to == Version::V1Beta2
    }
}

/// The version of `object` if this module converts it: one of [`KINDS`] in
/// `cluster.x-k8s.io/v1beta1` or `v1beta2`.
pub fn version_of(object: &Value) -> Option<Version> {
    if !KINDS.contains(&object.kind()) {
        return None;
    }
    Version::of_api_version(object.api_version())
}

/// Renames the owner references of `object` that name one of Cluster API's objects
/// (any kind) in another version of the group to version `to`: Cluster API writes
/// them in its own version, whatever object they are on. Whether any was renamed.
pub fn owner_refs_to(object: &mut Value, to: Version) -> bool {
    let Some(owners) = object
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let mut renamed = false;
    for owner in owners {
        let other = owner
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(Version::of_api_version)
            .is_some_and(|v| v != to);
        if other {
            owner["apiVersion"] = Value::String(to.api_version().to_string());
            renamed = true;
        }
    }
    renamed
}

/// `object` in version `to`. Objects this module does not convert, and objects already
/// in `to`, come back unchanged.
pub fn convert(object: &Value, to: Version, options: &Options<'_>) -> Result<Value, FieldError> {
    match version_of(object) {
        Some(from) if from != to => data::convert(object, to, options),
        _ => Ok(object.clone()),
    }
}

/// The conversion by the rules alone, without the conversion-data annotation.
fn convert_fields(
    object: &Value,
    to: Version,
    api_version_of: ApiVersionOf<'_>,
) -> Result<Value, FieldError> {
    let mut out = object.clone();
    let ctx = Context {
        to,
        namespace: object.namespace().to_string(),
        api_version_of,
    };
    let kind = object.kind().to_string();
    let root = fields::object_mut(&mut out, "")?;
    root.insert(
        "apiVersion".to_string(),
        Value::String(to.api_version().to_string()),
    );
    type Part = fn(&mut fields::Object, &str, &Context) -> fields::Result<()>;
    let (spec, status): (Part, Part) = match kind.as_str() {
        "ClusterClass" => (cluster_class::spec, cluster_class::status),
        "Cluster" => (cluster::spec, cluster::status),
        "MachineDeployment" => (
            machines::machine_deployment_spec,
            machines::machine_deployment_status,
        ),
        "MachinePool" => (machines::machine_pool_spec, machines::machine_pool_status),
        "MachineHealthCheck" => (
            machines::machine_health_check_spec,
            machines::machine_health_check_status,
        ),
        _ => return Ok(out),
    };
    fields::with_object(root, "spec", "", |map, path| spec(map, path, &ctx))?;
    fields::with_object(root, "status", "", |map, path| status(map, path, &ctx))?;
    Ok(out)
}

#[cfg(test)]
mod tests;
