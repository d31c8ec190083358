//! The blueprint of a Cluster: its ClusterClass and every template the class
//! references, resolved in the class's namespace.

use std::collections::BTreeMap;

use serde_json::Value;
use topograph_api::model::{ClusterClass, MachineDeploymentClass, MachinePoolClass, ObjectRef};
use topograph_api::object::ObjectExt;

use crate::contract::Contract;

use crate::error::RenderError;
use crate::store::ObjectStore;

/// A MachineDeployment class with its templates.
#[derive(Debug)]
pub struct MachineDeploymentBlueprint<'a> {
    /// The class.
    pub class: &'a MachineDeploymentClass,
    /// Its bootstrap template.
    pub bootstrap_template: &'a Value,
    /// Its infrastructure machine template.
    pub infrastructure_template: &'a Value,
}

/// A MachinePool class with its templates.
#[derive(Debug)]
pub struct MachinePoolBlueprint<'a> {
    /// The class.
    pub class: &'a MachinePoolClass,
    /// Its bootstrap config template.
    pub bootstrap_template: &'a Value,
    /// Its infrastructure machine pool template.
    pub infrastructure_template: &'a Value,
}

/// A class and its templates.
#[derive(Debug)]
pub struct Blueprint<'a> {
    /// The class.
    pub class: &'a ClusterClass,
    /// The InfrastructureCluster template, when the class has one.
    pub infrastructure_cluster_template: Option<&'a Value>,
    /// The ControlPlane template.
    pub control_plane_template: &'a Value,
    /// The control plane machines' infrastructure template, when the class has one.
    pub control_plane_machine_template: Option<&'a Value>,
    /// MachineDeployment classes by class name.
    pub machine_deployments: BTreeMap<&'a str, MachineDeploymentBlueprint<'a>>,
    /// MachinePool classes by class name.
    pub machine_pools: BTreeMap<&'a str, MachinePoolBlueprint<'a>>,
    /// The contract of the ControlPlane the control plane template stamps out.
    pub control_plane_contract: Contract,
}

/// The contract of the objects `template` stamps out: its API version, its kind without
/// `Template`.
fn stamped_contract(store: &ObjectStore, template: &Value) -> Contract {
    let kind = template.kind();
    store.contract_of(
        template.api_version(),
        kind.strip_suffix("Template").unwrap_or(kind),
    )
}

impl<'a> Blueprint<'a> {
    /// Resolves every template of `class` in `store`; all missing templates are
    /// reported, each with the path of its reference in the class.
    pub fn resolve(class: &'a ClusterClass, store: &'a ObjectStore) -> Result<Self, RenderError> {
        let mut errors = RenderError::default();
        let class_key = format!("{}/{}", class.namespace, class.name);
        // Paths in the version the class was written in: `ref` below `template` in
        // v1beta1, `templateRef` in v1beta2.
        let names = crate::validate::names::names(class.wire);
        let reference = names.compatibility_ref;
        let worker_ref = |list: &str, i: usize, part: &str| {
            format!(
                "spec.workers.{list}[{i}].{}.{reference}",
                names.worker_infrastructure.replace("infrastructure", part)
            )
        };
        // `what` as Cluster API words it; `worker` names the worker class it belongs to
        // (`, MachineDeployment class "x"`), if any.
        let mut get = |what: &str, worker: &str, path: &str, r: &ObjectRef| -> Option<&'a Value> {
            let found = store.get(r, &class.namespace);
            if found.is_none() {
                let namespace = if r.namespace.is_empty() {
                    &class.namespace
                } else {
                    &r.namespace
                };
                errors.push(format!(
                    "failed to get {what} for ClusterClass {class_key}{worker}: {path}: {} {namespace}/{} not found",
                    r.kind, r.name
                ));
            }
            found
        };
        let infrastructure_cluster_template = class.infrastructure.as_ref().and_then(|infra| {
            get(
                "infrastructure cluster template",
                "",
                &format!("spec.infrastructure.{reference}"),
                &infra.template,
            )
        });
        let control_plane_template = get(
            "control plane template",
            "",
            &format!("spec.controlPlane.{reference}"),
            &class.control_plane.template,
        );
        let control_plane_machine_template = class
            .control_plane
            .machine_infrastructure
            .as_ref()
            .and_then(|r| {
                get(
                    "control plane's machine template",
                    "",
                    &format!("spec.controlPlane.machineInfrastructure.{reference}"),
                    r,
                )
            });
        let mut machine_deployments = BTreeMap::new();
        for (i, md) in class.machine_deployments.iter().enumerate() {
            let worker = format!(", MachineDeployment class {:?}", md.class);
            let infrastructure = get(
                "infrastructure machine template",
                &worker,
                &worker_ref("machineDeployments", i, "infrastructure"),
                &md.infrastructure,
            );
            let bootstrap = get(
                "bootstrap config template",
                &worker,
                &worker_ref("machineDeployments", i, "bootstrap"),
                &md.bootstrap,
            );
            if let (Some(bootstrap_template), Some(infrastructure_template)) =
                (bootstrap, infrastructure)
            {
                machine_deployments.insert(
                    md.class.as_str(),
                    MachineDeploymentBlueprint {
                        class: md,
                        bootstrap_template,
                        infrastructure_template,
                    },
                );
            }
        }
        let mut machine_pools = BTreeMap::new();
        for (i, mp) in class.machine_pools.iter().enumerate() {
            let worker = format!(", MachinePool class {:?}", mp.class);
            let infrastructure = get(
                "InfrastructureMachinePoolTemplate",
                &worker,
                &worker_ref("machinePools", i, "infrastructure"),
                &mp.infrastructure,
            );
            let bootstrap = get(
                "bootstrap config",
                &worker,
                &worker_ref("machinePools", i, "bootstrap"),
                &mp.bootstrap,
            );
            if let (Some(bootstrap_template), Some(infrastructure_template)) =
                (bootstrap, infrastructure)
            {
                machine_pools.insert(
                    mp.class.as_str(),
                    MachinePoolBlueprint {
                        class: mp,
                        bootstrap_template,
                        infrastructure_template,
                    },
                );
            }
        }
        match (control_plane_template, errors.is_empty()) {
            (Some(control_plane_template), true) => Ok(Blueprint {
                control_plane_contract: stamped_contract(store, control_plane_template),
                class,
                infrastructure_cluster_template,
                control_plane_template,
                control_plane_machine_template,
                machine_deployments,
                machine_pools,
            }),
            _ => Err(errors),
        }
    }
}
