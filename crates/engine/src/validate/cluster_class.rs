//! ClusterClass admission (spec section 6.1): template references, unique worker
//! classes, rollout strategies, health checks, naming templates, metadata, variables and
//! patches; on update, compatibility with the old class and with the Clusters using it.

use topograph_api::field::FieldError;
use topograph_api::model::{Cluster, ClusterClass, HealthCheck, ObjectRef};
use topograph_api::object::GroupVersion;

use super::common;
use super::compatibility::check_compatibility;
use crate::names::{NameData, render_template};

/// A template reference of the class: `<path>.ref.{name,namespace,kind,apiVersion}`.
fn reference(r: &ObjectRef, namespace: &str, path: &str, errors: &mut Vec<FieldError>) {
    if r.name.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.ref.name"),
            "template name must be defined",
        ));
    }
    if !r.namespace.is_empty() && r.namespace != namespace {
        errors.push(FieldError::invalid(
            format!("{path}.ref.namespace"),
            &r.namespace,
            format!("template must be in the same namespace as the ClusterClass ({namespace})"),
        ));
    }
    if r.kind.len() <= "Template".len() || !r.kind.ends_with("Template") {
        errors.push(FieldError::invalid(
            format!("{path}.ref.kind"),
            &r.kind,
            "template kind must be of form \"<name>Template\"",
        ));
    }
    match GroupVersion::parse(&r.api_version) {
        Err(e) => errors.push(FieldError::invalid(
            format!("{path}.ref.apiVersion"),
            &r.api_version,
            format!("template apiVersion must be a valid Kubernetes apiVersion: {e}"),
        )),
        Ok(gv) if gv.group.is_empty() && gv.version.is_empty() => {
            errors.push(FieldError::required(
                format!("{path}.ref.apiVersion"),
                "template apiVersion must be defined",
            ))
        }
        Ok(_) => {}
    }
}

/// A health check definition at `path`.
pub(crate) fn health_check(check: &HealthCheck, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(timeout) = check.node_startup_timeout
        && timeout.as_nanos() != 0
        && timeout.as_secs() < 30
    {
        errors.push(FieldError::invalid(
            format!("{path}.nodeStartupTimeout"),
            &timeout.to_string(),
            "must be at least 30s",
        ));
    }
    if let Some(max) = &check.max_unhealthy
        && let Err(e) = common::int_or_percent(max)
    {
        let shown = match max {
            topograph_api::model::IntOrString::Int(i) => i.to_string(),
            topograph_api::model::IntOrString::String(s) => s.clone(),
        };
        errors.push(FieldError::invalid(
            format!("{path}.maxUnhealthy"),
            &shown,
            format!("must be either an int or a percentage: {e}"),
        ));
    }
}

/// A rollout strategy's `rollingUpdate.maxUnavailable` / `maxSurge`.
pub(crate) fn strategy(strategy: &serde_json::Value, path: &str, errors: &mut Vec<FieldError>) {
    for field in ["maxUnavailable", "maxSurge"] {
        if let Some(value) = strategy.get("rollingUpdate").and_then(|r| r.get(field))
            && let Err(e) = common::int_or_percent_json(value)
        {
            let shown = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            errors.push(FieldError::invalid(
                format!("{path}.rollingUpdate.{field}"),
                &shown,
                format!("must be either an int or a percentage: {e}"),
            ));
        }
    }
}

/// A naming template, rendered with sample data; the result must be a DNS subdomain.
fn naming(template: &str, what: &str, data: NameData, path: &str, errors: &mut Vec<FieldError>) {
    match render_template(template, &data, || "xxxxx".to_string()) {
        Err(e) => errors.push(FieldError::invalid(
            path,
            template,
            format!("invalid {what} name template: {e}"),
        )),
        Ok(name) => {
            for problem in common::dns1123_subdomain(&name) {
                errors.push(FieldError::invalid(path, template, problem));
            }
        }
    }
}

/// Every problem with `class`; on update (`old` set) also its compatibility with the
/// old class and with `clusters`, the Clusters using it.
pub fn validate_cluster_class(
    class: &ClusterClass,
    old: Option<&ClusterClass>,
    clusters: &[&Cluster],
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ns = class.namespace.as_str();
    if let Some(infra) = &class.infrastructure {
        reference(&infra.template, ns, "spec.infrastructure", &mut errors);
    }
    let cp = &class.control_plane;
    reference(&cp.template, ns, "spec.controlPlane", &mut errors);
    if let Some(machine) = &cp.machine_infrastructure {
        reference(
            machine,
            ns,
            "spec.controlPlane.machineInfrastructure",
            &mut errors,
        );
    }
    for (i, md) in class.machine_deployments.iter().enumerate() {
        let base = format!("spec.workers.machineDeployments[{i}].template");
        reference(&md.bootstrap, ns, &format!("{base}.bootstrap"), &mut errors);
        reference(
            &md.infrastructure,
            ns,
            &format!("{base}.infrastructure"),
            &mut errors,
        );
    }
    for (i, mp) in class.machine_pools.iter().enumerate() {
        let base = format!("spec.workers.machinePools[{i}].template");
        reference(&mp.bootstrap, ns, &format!("{base}.bootstrap"), &mut errors);
        reference(
            &mp.infrastructure,
            ns,
            &format!("{base}.infrastructure"),
            &mut errors,
        );
    }

    for (i, md) in class.machine_deployments.iter().enumerate() {
        if class.machine_deployments[..i]
            .iter()
            .any(|m| m.class == md.class)
        {
            errors.push(FieldError::invalid(
                format!("spec.workers.machineDeployments[{i}].class"),
                &md.class,
                format!(
                    "MachineDeployment class must be unique. MachineDeployment with class {:?} is defined more than once",
                    md.class
                ),
            ));
        }
    }
    for (i, mp) in class.machine_pools.iter().enumerate() {
        if class.machine_pools[..i].iter().any(|m| m.class == mp.class) {
            errors.push(FieldError::invalid(
                format!("spec.workers.machinePools[{i}].class"),
                &mp.class,
                format!(
                    "MachinePool class must be unique. MachinePool with class {:?} is defined more than once",
                    mp.class
                ),
            ));
        }
    }

    // Rules about one worker class name it by its class (`[default-worker]`), as the
    // webhook does; rules about the list use the index.
    for md in &class.machine_deployments {
        if let Some(s) = &md.strategy {
            strategy(
                s,
                &format!("spec.workers.machineDeployments[{}].strategy", md.class),
                &mut errors,
            );
        }
    }

    if let Some(check) = &cp.health_check {
        if cp.machine_infrastructure.is_none() {
            errors.push(FieldError::forbidden(
                "spec.controlPlane.machineHealthCheck",
                "can be only set if spec.controlPlane.machineInfrastructure is set",
            ));
        }
        health_check(check, "spec.controlPlane.machineHealthCheck", &mut errors);
    }
    for md in &class.machine_deployments {
        if let Some(check) = &md.health_check {
            health_check(
                check,
                &format!(
                    "spec.workers.machineDeployments[{}].machineHealthCheck",
                    md.class
                ),
                &mut errors,
            );
        }
    }

    let sample = || NameData::new("cluster", "xxxxx");
    if let Some(template) = class
        .infrastructure
        .as_ref()
        .and_then(|i| i.naming.as_deref())
    {
        naming(
            template,
            "InfraCluster",
            sample(),
            "spec.infrastructureNamingStrategy.template",
            &mut errors,
        );
    }
    if let Some(template) = cp.naming.as_deref() {
        naming(
            template,
            "ControlPlane",
            sample(),
            "spec.controlPlane.namingStrategy.template",
            &mut errors,
        );
    }
    for md in &class.machine_deployments {
        if let Some(template) = md.naming.as_deref() {
            naming(
                template,
                "MachineDeployment",
                sample().with("machineDeployment.topologyName", "mdtopology"),
                &format!(
                    "spec.workers.machineDeployments[{}].namingStrategy.template",
                    md.class
                ),
                &mut errors,
            );
        }
    }
    for mp in &class.machine_pools {
        if let Some(template) = mp.naming.as_deref() {
            naming(
                template,
                "MachinePool",
                sample().with("machinePool.topologyName", "mptopology"),
                &format!(
                    "spec.workers.machinePools[{}].namingStrategy.template",
                    mp.class
                ),
                &mut errors,
            );
        }
    }

    errors.extend(common::metadata(
        &cp.metadata.labels,
        &cp.metadata.annotations,
        "spec.controlPlane.metadata",
    ));
    for md in &class.machine_deployments {
        errors.extend(common::metadata(
            &md.metadata.labels,
            &md.metadata.annotations,
            &format!(
                "spec.workers.machineDeployments[{}].template.metadata",
                md.class
            ),
        ));
    }
    for mp in &class.machine_pools {
        errors.extend(common::metadata(
            &mp.metadata.labels,
            &mp.metadata.annotations,
            &format!("spec.workers.machinePools[{}].template.metadata", mp.class),
        ));
    }

    errors.extend(topograph_variables::validate_definitions(
        &class.variables,
        old.map(|o| o.variables.as_slice()),
    ));
    errors.extend(crate::patches::validate(class));

    if let Some(old) = old {
        errors.extend(check_compatibility(old, class));
        errors.extend(in_use(old, class, clusters));
        for cluster in clusters {
            errors.extend(super::cluster::autoscaler(cluster, class));
        }
        errors.extend(variables_in_use(old, class, clusters));
    }
    errors
}

/// What Clusters of the class still use: removed worker classes and health checks.
fn in_use(old: &ClusterClass, new: &ClusterClass, clusters: &[&Cluster]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for removed in old
        .machine_deployments
        .iter()
        .filter(|o| !new.machine_deployments.iter().any(|n| n.class == o.class))
    {
        for cluster in clusters {
            let uses = cluster.topology.as_ref().is_some_and(|t| {
                t.machine_deployments
                    .iter()
                    .any(|md| md.class == removed.class)
            });
            if uses {
                errors.push(FieldError::forbidden(
                    "spec.workers.machineDeployments",
                    format!(
                        "MachineDeploymentClass {:?} cannot be deleted because it is used by Cluster {:?}",
                        removed.class, cluster.name
                    ),
                ));
            }
        }
    }
    for removed in old
        .machine_pools
        .iter()
        .filter(|o| !new.machine_pools.iter().any(|n| n.class == o.class))
    {
        for cluster in clusters {
            let uses = cluster
                .topology
                .as_ref()
                .is_some_and(|t| t.machine_pools.iter().any(|mp| mp.class == removed.class));
            if uses {
                errors.push(FieldError::forbidden(
                    "spec.workers.machinePools",
                    format!(
                        "MachinePoolClass {:?} cannot be deleted because it is used by Cluster {:?}",
                        removed.class, cluster.name
                    ),
                ));
            }
        }
    }
    // A Cluster that switches the check on without defining its own relies on the class's.
    let relies = |o: Option<&topograph_api::model::HealthCheckOverride>| {
        o.is_some_and(|o| o.enabled == Some(true) && o.check.is_zero())
    };
    if old.control_plane.health_check.is_some() && new.control_plane.health_check.is_none() {
        let users: Vec<&str> = clusters
            .iter()
            .filter(|c| {
                c.topology
                    .as_ref()
                    .is_some_and(|t| relies(t.control_plane.health_check.as_ref()))
            })
            .map(|c| c.name.as_str())
            .collect();
        if !users.is_empty() {
            errors.push(FieldError::forbidden(
                "spec.controlPlane.machineHealthCheck",
                format!(
                    "MachineHealthCheck cannot be deleted because it is used by Cluster(s) {:?}",
                    users.join(",")
                ),
            ));
        }
    }
    for md in &new.machine_deployments {
        let Some(old_md) = old.machine_deployments.iter().find(|o| o.class == md.class) else {
            continue;
        };
        if old_md.health_check.is_none() || md.health_check.is_some() {
            continue;
        }
        let users: Vec<&str> = clusters
            .iter()
            .filter(|c| {
                c.topology.as_ref().is_some_and(|t| {
                    t.machine_deployments
                        .iter()
                        .any(|m| m.class == md.class && relies(m.health_check.as_ref()))
                })
            })
            .map(|c| c.name.as_str())
            .collect();
        if !users.is_empty() {
            errors.push(FieldError::forbidden(
                format!(
                    "spec.workers.machineDeployments[{}].machineHealthCheck",
                    md.class
                ),
                format!(
                    "MachineHealthCheck cannot be deleted because it is used by Cluster(s) {:?}",
                    users.join(",")
                ),
            ));
        }
    }
    errors
}

/// Variables the Clusters set must stay defined, and their values must stay valid under
/// the changed schemas (top level and every override list).
fn variables_in_use(
    old: &ClusterClass,
    new: &ClusterClass,
    clusters: &[&Cluster],
) -> Vec<FieldError> {
    use std::collections::BTreeMap;
    use topograph_variables::{Scope, validate_variables};

    let mut errors = Vec::new();
    // Removed definitions, with the Clusters that still set them.
    let mut removed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for definition in &old.variables {
        if new.variables.iter().any(|d| d.name == definition.name) {
            continue;
        }
        for cluster in clusters {
            let Some(topology) = &cluster.topology else {
                continue;
            };
            let sets = topology
                .variables
                .iter()
                .chain(&topology.control_plane.variable_overrides)
                .chain(
                    topology
                        .machine_deployments
                        .iter()
                        .flat_map(|md| &md.variable_overrides),
                )
                .any(|v| v.name == definition.name);
            if sets {
                removed
                    .entry(definition.name.as_str())
                    .or_default()
                    .push(cluster.name.as_str());
            }
        }
    }
    for (name, users) in removed {
        errors.push(FieldError::forbidden(
            "spec.variables",
            format!(
                "variable {name:?} cannot be removed because it is used by Cluster(s) {:?}",
                users.join(",")
            ),
        ));
    }
    // Changed schemas must still accept the values the Clusters set.
    for (i, definition) in new.variables.iter().enumerate() {
        let Some(before) = old.variables.iter().find(|d| d.name == definition.name) else {
            continue;
        };
        if before.schema == definition.schema && before.required == definition.required {
            continue;
        }
        let only = std::slice::from_ref(definition);
        let mut invalid_for = Vec::new();
        for cluster in clusters {
            let Some(topology) = &cluster.topology else {
                continue;
            };
            let pick =
                |values: &[topograph_api::model::Variable]| -> Vec<topograph_api::model::Variable> {
                    values
                        .iter()
                        .filter(|v| v.name == definition.name)
                        .cloned()
                        .collect()
                };
            let mut problems =
                validate_variables(&pick(&topology.variables), None, only, Scope::Cluster);
            problems.extend(validate_variables(
                &pick(&topology.control_plane.variable_overrides),
                None,
                only,
                Scope::ControlPlane,
            ));
            for md in &topology.machine_deployments {
                problems.extend(validate_variables(
                    &pick(&md.variable_overrides),
                    None,
                    only,
                    Scope::MachineDeployment(&md.name),
                ));
            }
            if !problems.is_empty() {
                invalid_for.push(cluster.name.as_str());
            }
        }
        if !invalid_for.is_empty() {
            errors.push(FieldError::forbidden(
                format!("spec.variables[{i}]"),
                format!(
                    "the changed definition of variable {:?} is not valid for the values of Cluster(s) {:?}",
                    definition.name,
                    invalid_for.join(",")
                ),
            ));
        }
    }
    errors
}
