//! Cluster admission (spec section 6.2) and the defaulting of its mutating webhook:
//! name, references, networks, the topology (class, version, metadata, workers, health
//! checks, variables) against its class, and on update the changes a Cluster may make
//! (no topology removal, class changes only to a compatible class, no downgrade, at
//! most one minor version up at a time).
//!
//! [`validate_cluster`] is the list of steps, in the order Cluster API's webhook reports
//! them; the rules outside the topology are here, the others in [`topology`],
//! [`workers`] and [`update`]. The defaulting is in [`defaults`].

mod defaults;
mod topology;
mod update;
mod workers;

use std::net::IpAddr;

use topograph_api::field::FieldError;
use topograph_api::model::{Cluster, ClusterClass};

use super::common;
use super::names::names;

pub use defaults::default_cluster;
pub use topology::class_not_found_warning;
pub(crate) use topology::variable_lists;
pub(crate) use workers::autoscaler;

/// Limits how many upgrades of MachineDeployments run at once.
pub const UPGRADE_CONCURRENCY: &str = "topology.cluster.x-k8s.io/upgrade-concurrency";
/// Skips the version checks on update.
pub const SKIP_VERSION_CHECK: &str =
    "unsafe.topology.cluster.x-k8s.io/disable-update-version-check";
/// Allows giving an existing Cluster a class.
pub const SKIP_CLASS_CHECK: &str =
    "unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check";

/// The outcome of validating a Cluster: errors refuse it, warnings do not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validation {
    /// What refuses the Cluster.
    pub errors: Vec<FieldError>,
    /// What could not be checked, or was skipped on purpose.
    pub warnings: Vec<String>,
}

/// `(major, minor, patch)` of a topology version (`v1.30.0`), pre-release ignored.
fn version(text: &str) -> Option<(u64, u64, u64)> {
    common::semver(text.strip_prefix('v')?).map(|(a, b, c, _)| (a, b, c))
}

/// The ClusterClass `namespace/name` among `classes`.
fn find<'a>(classes: &[&'a ClusterClass], namespace: &str, name: &str) -> Option<&'a ClusterClass> {
    classes
        .iter()
        .copied()
        .find(|c| c.namespace == namespace && c.name == name)
}

/// Every problem with `cluster` (already defaulted); `old` is the Cluster before an
/// update; `classes` are the ClusterClasses known, looked up by the Cluster's class.
pub fn validate_cluster(
    cluster: &Cluster,
    old: Option<&Cluster>,
    classes: &[&ClusterClass],
) -> Validation {
    let mut v = Validation::default();
    let Validation { errors, warnings } = &mut v;
    name(cluster, errors);
    if let Some(old) = old {
        update::removals(cluster, old, errors);
    }
    references(cluster, errors);
    cluster_network(cluster, errors);
    upgrade_concurrency(cluster, errors);

    let Some(topology) = &cluster.topology else {
        return v;
    };
    let names = names(cluster.wire);
    topology::class_and_version(topology, names, errors);
    topology::control_plane_metadata(topology, errors);
    workers::fields(topology, names, errors);

    let class_namespace = topology.class_namespace_or(&cluster.namespace);
    let class = find(classes, class_namespace, &topology.class);
    if let Some(old) = old {
        match &old.topology {
            Some(old_topology) => {
                update::class_exists(topology, class_namespace, class, errors);
                update::class_change(old, topology, class_namespace, class, classes, errors);
                update::version_change(cluster, class, topology, old_topology, errors, warnings);
            }
            None => update::class_set(cluster, errors),
        }
    }

    match class {
        Some(class) => {
            workers::defined_in_class(topology, class, errors);
            topology::control_plane_health_check(topology, class, names, errors);
            workers::machine_deployment_health_checks(topology, class, names, errors);
        }
        None if old.is_none() => topology::class_not_found(topology, class_namespace, warnings),
        None => {}
    }
    // What the topology says about the autoscaler is checked even without its class.
    errors.extend(autoscaler(cluster, class));
    if let Some(class) = class {
        let old_topology = old.and_then(|o| o.topology.as_ref());
        topology::variables(topology, old_topology, class, errors);
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

/// The name must be a valid label value: Cluster API labels every object of the Cluster
/// with it (`cluster.x-k8s.io/cluster-name`).
fn name(cluster: &Cluster, errors: &mut Vec<FieldError>) {
    for problem in common::label_value(&cluster.name) {
        errors.push(FieldError::invalid(
            "metadata.name",
            &cluster.name,
            format!("must be a valid label value {problem}"),
        ));
    }
}

/// A Cluster is defined by its infrastructure and control plane references or by a
/// topology; it needs at least one of them.
fn references(cluster: &Cluster, errors: &mut Vec<FieldError>) {
    if cluster.infrastructure_ref.is_none()
        && cluster.control_plane_ref.is_none()
        && cluster.topology.is_none()
    {
        errors.push(FieldError::forbidden(
            "spec",
            "one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set",
        ));
    }
}

/// The pod and service networks' CIDR blocks must parse as CIDRs.
fn cluster_network(cluster: &Cluster, errors: &mut Vec<FieldError>) {
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
}

/// The [`UPGRADE_CONCURRENCY`] annotation, when set, must be an integer of at least 1.
fn upgrade_concurrency(cluster: &Cluster, errors: &mut Vec<FieldError>) {
    let Some(value) = cluster.metadata.annotations.get(UPGRADE_CONCURRENCY) else {
        return;
    };
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
