//! Cluster admission (spec section 6.2) and the defaulting of its mutating webhook:
//! name, references, networks, the topology (class, version, metadata, workers, health
//! checks, variables) against its class, and on update the changes a Cluster may make
//! (no topology removal, class changes only to a compatible class, no downgrade, at
//! most one minor version up at a time).

use std::net::IpAddr;

use serde_json::{Value, json};
use topograph_api::field::{ErrorType, FieldError};
use topograph_api::model::{Cluster, ClusterClass, HealthCheckOverride, Variable};
use topograph_api::object::set_at;
use topograph_variables::{Scope, default_variables, validate_variables};

use super::cluster_class::{health_check, strategy};
use super::common;
use super::compatibility::check_compatibility;

/// Limits how many upgrades of MachineDeployments run at once.
pub const UPGRADE_CONCURRENCY: &str = "topology.cluster.x-k8s.io/upgrade-concurrency";
/// Skips the version checks on update.
pub const SKIP_VERSION_CHECK: &str =
    "unsafe.topology.cluster.x-k8s.io/disable-update-version-check";
/// Allows giving an existing Cluster a class.
pub const SKIP_CLASS_CHECK: &str =
    "unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check";
/// Cluster autoscaler bounds; a MachineDeployment with them must leave replicas unset.
const AUTOSCALER_ANNOTATIONS: &[&str] = &[
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
];

/// The outcome of validating a Cluster: errors refuse it, warnings do not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validation {
    /// What refuses the Cluster.
    pub errors: Vec<FieldError>,
    /// What could not be checked, or was skipped on purpose.
    pub warnings: Vec<String>,
}

/// Go's `net.ParseCIDR`, as far as accepting or refusing goes.
fn is_cidr(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else {
        return false;
    };
    let Ok(address) = address.parse::<IpAddr>() else {
        return false;
    };
    let max = if address.is_ipv4() { 32 } else { 128 };
    !prefix.is_empty()
        && prefix.len() <= 3
        && prefix.bytes().all(|b| b.is_ascii_digit())
        && !(prefix.len() > 1 && prefix.starts_with('0'))
        && prefix.parse::<u32>().is_ok_and(|p| p <= max)
}

/// `(major, minor, patch)` of a topology version (`v1.30.0`), pre-release ignored.
fn version(text: &str) -> Option<(u64, u64, u64)> {
    common::semver(text.strip_prefix('v')?).map(|(a, b, c, _)| (a, b, c))
}

fn find<'a>(classes: &[&'a ClusterClass], namespace: &str, name: &str) -> Option<&'a ClusterClass> {
    classes
        .iter()
        .copied()
        .find(|c| c.namespace == namespace && c.name == name)
}

/// The mutating webhook: `v` before the version, then the variables (and every
/// override list) defaulted from the class's schemas. The Cluster's document follows.
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
        return Err(vec![FieldError::required(
            "spec.topology.class",
            "class cannot be empty",
        )]);
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
    let mds: Vec<Option<Vec<Variable>>> = topology
        .machine_deployments
        .iter()
        .map(|md| defaulted(&md.variable_overrides, Scope::MachineDeployment(&md.name)))
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let as_json = |values: &[Variable]| -> Value {
        Value::Array(
            values
                .iter()
                .map(|v| {
                    let mut item = json!({"name": v.name, "value": v.value});
                    if let Some(from) = &v.definition_from {
                        item["definitionFrom"] = json!(from);
                    }
                    item
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
    for (i, md) in mds.into_iter().enumerate() {
        if let (Some(md), Some(slot)) = (md, topology.machine_deployments.get_mut(i))
            && !md.is_empty()
        {
            if let Some(entry) = out
                .document
                .pointer_mut(&format!("/spec/topology/workers/machineDeployments/{i}"))
            {
                set_at(entry, &["variables", "overrides"], as_json(&md));
            }
            slot.variable_overrides = md;
        }
    }
    Ok(out)
}

fn health_check_override(
    check: Option<&HealthCheckOverride>,
    class_defines: bool,
    class_allows: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(check) = check else { return };
    if !class_allows {
        errors.push(FieldError::forbidden(
            path,
            "can be only set if spec.controlPlane.machineInfrastructure is set in ClusterClass",
        ));
    }
    health_check(&check.check, path, errors);
    if check.enabled == Some(true) && check.check.is_zero() && !class_defines {
        errors.push(FieldError::forbidden(
            format!("{path}.enable"),
            "cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology or the ClusterClass",
        ));
    }
}

/// Every problem with `cluster` (already defaulted); `old` is the Cluster before an
/// update; `classes` are the ClusterClasses known, looked up by the Cluster's class.
pub fn validate_cluster(
    cluster: &Cluster,
    old: Option<&Cluster>,
    classes: &[&ClusterClass],
) -> Validation {
    let mut v = Validation::default();
    let errors = &mut v.errors;
    for problem in common::label_value(&cluster.name) {
        errors.push(FieldError::invalid(
            "metadata.name",
            &cluster.name,
            format!("must be a valid label value {problem}"),
        ));
    }
    if let Some(old) = old {
        if old.infrastructure_ref.is_some() && cluster.infrastructure_ref.is_none() {
            errors.push(FieldError::forbidden(
                "spec.infrastructureRef",
                "cannot be removed",
            ));
        }
        if old.control_plane_ref.is_some() && cluster.control_plane_ref.is_none() {
            errors.push(FieldError::forbidden(
                "spec.controlPlaneRef",
                "cannot be removed",
            ));
        }
        if old.topology.is_some() && cluster.topology.is_none() {
            errors.push(FieldError::forbidden(
                "spec.topology",
                "cannot be removed from an existing Cluster",
            ));
        }
    }
    if cluster.infrastructure_ref.is_none()
        && cluster.control_plane_ref.is_none()
        && cluster.topology.is_none()
    {
        errors.push(FieldError::forbidden(
            "spec",
            "one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set",
        ));
    }
    for (field, blocks) in [
        ("pods", &cluster.network.pods),
        ("services", &cluster.network.services),
    ] {
        for (i, cidr) in blocks.iter().flatten().enumerate() {
            if !is_cidr(cidr) {
                errors.push(FieldError::invalid(
                    format!("spec.clusterNetwork.{field}.cidrBlocks[{i}]"),
                    cidr,
                    format!("invalid CIDR address: {cidr}"),
                ));
            }
        }
    }
    if let Some(value) = cluster.metadata.annotations.get(UPGRADE_CONCURRENCY) {
        let path = format!("metadata.annotations[{UPGRADE_CONCURRENCY}]");
        match topograph_gocompat::strconv::atoi(value) {
            Err(e) => errors.push(FieldError::invalid(
                path,
                value,
                format!("could not parse the value of the annotation: {e}"),
            )),
            Ok(n) if n < 1 => errors.push(FieldError::invalid(
                path,
                value,
                "value cannot be less than 1",
            )),
            Ok(_) => {}
        }
    }
    let Some(topology) = &cluster.topology else {
        return v;
    };
    if topology.class.is_empty() {
        errors.push(FieldError::required(
            "spec.topology.class",
            "class cannot be empty",
        ));
    }
    if !topology.version.starts_with('v') {
        errors.push(FieldError::invalid(
            "spec.topology.version",
            &topology.version,
            "version must start with v",
        ));
    } else if version(&topology.version).is_none() {
        errors.push(FieldError::invalid(
            "spec.topology.version",
            &topology.version,
            "version must be a valid semantic version",
        ));
    }
    errors.extend(common::metadata(
        &topology.control_plane.metadata.labels,
        &topology.control_plane.metadata.annotations,
        "spec.topology.controlPlane.metadata",
    ));
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        let base = format!("spec.topology.workers.machineDeployments[{i}]");
        errors.extend(common::metadata(
            &md.metadata.labels,
            &md.metadata.annotations,
            &format!("{base}.metadata"),
        ));
        if let Some(s) = &md.strategy {
            strategy(s, &format!("{base}.strategy"), errors);
        }
    }

    let class_namespace = topology.class_namespace_or(&cluster.namespace);
    let class = find(classes, class_namespace, &topology.class);
    if let Some(old) = old
        && let Some(old_topology) = &old.topology
    {
        if class.is_none() {
            errors.push(FieldError::new(
                "spec.topology.class",
                ErrorType::Internal,
                None,
                format!(
                    "ClusterClass {class_namespace}/{} not found",
                    topology.class
                ),
            ));
        }
        let old_namespace = old_topology.class_namespace_or(&old.namespace);
        if (old_topology.class.as_str(), old_namespace)
            != (topology.class.as_str(), class_namespace)
        {
            match (find(classes, old_namespace, &old_topology.class), class) {
                (Some(old_class), Some(new_class)) => {
                    errors.extend(check_compatibility(old_class, new_class));
                }
                // A missing new class is reported above.
                (Some(_), None) => {}
                (None, _) => errors.push(FieldError::forbidden(
                    "spec.topology.class",
                    format!(
                        "valid ClusterClass with name {:?} could not be retrieved, change from class {:?} to class {:?} cannot be validated. Error: ClusterClass {old_namespace}/{} not found",
                        old_topology.class, old_topology.class, topology.class, old_topology.class
                    ),
                )),
            }
        }
        if cluster
            .metadata
            .annotations
            .contains_key(SKIP_VERSION_CHECK)
        {
            v.warnings.push(format!(
                "Skipping version validation for Cluster because annotation {SKIP_VERSION_CHECK:?} is set."
            ));
        } else if let (Some(from), Some(to)) =
            (version(&old_topology.version), version(&topology.version))
        {
            let text = |(a, b, c): (u64, u64, u64)| format!("{a}.{b}.{c}");
            if to < from {
                errors.push(FieldError::invalid(
                    "spec.topology.version",
                    &topology.version,
                    format!(
                        "version cannot be decreased from {:?} to {:?}",
                        text(from),
                        text(to)
                    ),
                ));
            } else if to >= (from.0, from.1 + 2, 0) {
                errors.push(FieldError::invalid(
                    "spec.topology.version",
                    &topology.version,
                    format!(
                        "version cannot be increased from {:?} to {:?}",
                        text(from),
                        text(to)
                    ),
                ));
            }
        }
    } else if let Some(old) = old
        && old.topology.is_none()
        && !cluster.metadata.annotations.contains_key(SKIP_CLASS_CHECK)
    {
        errors.push(FieldError::forbidden(
            "spec.topology.class",
            "class cannot be set on an existing Cluster",
        ));
    }

    let Some(class) = class else {
        if old.is_none() {
            v.warnings.push(format!(
                "Cluster refers to ClusterClass {class_namespace}/{}, but this ClusterClass does not exist. Cluster topology has not been fully validated. The ClusterClass must be created to reconcile the Cluster",
                topology.class
            ));
        }
        return v;
    };
    let errors = &mut v.errors;
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        let base = format!("spec.topology.workers.machineDeployments[{i}]");
        let md_class = class
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class);
        if md_class.is_none() {
            errors.push(FieldError::invalid(
                format!("{base}.class"),
                &md.class,
                format!(
                    "MachineDeploymentClass with name {:?} does not exist in ClusterClass {:?}",
                    md.class, class.name
                ),
            ));
        }
        if md.name.is_empty() {
            errors.push(FieldError::required(
                format!("{base}.name"),
                "name must not be empty",
            ));
        } else if topology.machine_deployments[..i]
            .iter()
            .any(|m| m.name == md.name)
        {
            errors.push(FieldError::invalid(
                format!("{base}.name"),
                &md.name,
                format!(
                    "name must be unique. MachineDeployment with name {:?} is defined more than once",
                    md.name
                ),
            ));
        }
        health_check_override(
            md.health_check.as_ref(),
            md_class.is_some_and(|c| c.health_check.is_some()),
            true,
            &format!("{base}.machineHealthCheck"),
            errors,
        );
    }
    for (i, mp) in topology.machine_pools.iter().enumerate() {
        if !class.machine_pools.iter().any(|c| c.class == mp.class) {
            errors.push(FieldError::invalid(
                format!("spec.topology.workers.machinePools[{i}].class"),
                &mp.class,
                format!(
                    "MachinePoolClass with name {:?} does not exist in ClusterClass {:?}",
                    mp.class, class.name
                ),
            ));
        }
    }
    errors.extend(autoscaler(cluster, class));
    health_check_override(
        topology.control_plane.health_check.as_ref(),
        class.control_plane.health_check.is_some(),
        class.control_plane.machine_infrastructure.is_some(),
        "spec.topology.controlPlane.machineHealthCheck",
        errors,
    );

    let old_topology = old.and_then(|o| o.topology.as_ref());
    errors.extend(validate_variables(
        &topology.variables,
        old_topology.map(|t| t.variables.as_slice()),
        &class.variables,
        Scope::Cluster,
    ));
    errors.extend(validate_variables(
        &topology.control_plane.variable_overrides,
        old_topology.map(|t| t.control_plane.variable_overrides.as_slice()),
        &class.variables,
        Scope::ControlPlane,
    ));
    for md in &topology.machine_deployments {
        let old_md = old_topology
            .and_then(|t| t.machine_deployments.iter().find(|o| o.name == md.name))
            .map(|o| o.variable_overrides.as_slice());
        errors.extend(validate_variables(
            &md.variable_overrides,
            old_md,
            &class.variables,
            Scope::MachineDeployment(&md.name),
        ));
    }
    v
}

/// Admission of a Cluster as the API server runs it: defaulted against its class (looked
/// up in `classes` by its topology), then validated. The defaulted Cluster comes back only
/// when nothing refused it; defaulting errors come back alone, as the mutating webhook
/// stops there.
pub fn admit_cluster(
    cluster: &Cluster,
    old: Option<&Cluster>,
    classes: &[&ClusterClass],
) -> (Option<Cluster>, Validation) {
    let class = cluster
        .topology
        .as_ref()
        .and_then(|t| find(classes, t.class_namespace_or(&cluster.namespace), &t.class));
    match default_cluster(cluster, class) {
        Err(errors) => (
            None,
            Validation {
                errors,
                warnings: Vec::new(),
            },
        ),
        Ok(defaulted) => {
            let validation = validate_cluster(&defaulted, old, classes);
            let admitted = validation.errors.is_empty().then_some(defaulted);
            (admitted, validation)
        }
    }
}

/// A MachineDeployment whose replicas are set may not carry the autoscaler's
/// annotations, on its topology or on its class (spec 6.2 #10).
pub(crate) fn autoscaler(cluster: &Cluster, class: &ClusterClass) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(topology) = &cluster.topology else {
        return errors;
    };
    for (i, md) in topology.machine_deployments.iter().enumerate() {
        let Some(replicas) = md.replicas else {
            continue;
        };
        let md_class = class
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class);
        let has = |annotations: &std::collections::BTreeMap<String, String>| {
            AUTOSCALER_ANNOTATIONS
                .iter()
                .any(|a| annotations.contains_key(*a))
        };
        let source = if has(&md.metadata.annotations) {
            "the same MachineDeploymentTopology has autoscaler annotations".to_string()
        } else if md_class.is_some_and(|c| has(&c.metadata.annotations)) {
            format!(
                "the source class {:?} of this MachineDeploymentTopology has autoscaler annotations",
                md.class
            )
        } else {
            continue;
        };
        errors.push(FieldError::new(
            format!("spec.topology.workers.machineDeployments[{i}].replicas"),
            ErrorType::Invalid,
            Some(replicas.to_string()),
            format!(
                "cannot be set for cluster {:?} in namespace {:?} if {source}",
                cluster.name, cluster.namespace
            ),
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidrs() {
        for ok in ["10.0.0.0/8", "192.168.0.0/16", "fd00::/64", "0.0.0.0/0"] {
            assert!(is_cidr(ok), "{ok}");
        }
        for bad in [
            "10.0.0.0",
            "10.0.0.0/33",
            "10.0.0/8",
            "x/8",
            "10.0.0.0/08",
            "fd00::/129",
            "10.0.0.0/",
        ] {
            assert!(!is_cidr(bad), "{bad}");
        }
    }
}
