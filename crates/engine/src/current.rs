//! The current state of a Cluster's topology, read from the objects given: the objects
//! the Cluster references, its topology-owned MachineDeployments (found by label) and
//! the templates those reference. Names of objects that exist are always reused.

use std::collections::BTreeMap;

use serde_json::Value;
use topograph_api::model::{Cluster, ObjectRef};
use topograph_api::object::ObjectExt;

use crate::error::RenderError;
use crate::labels;
use crate::store::ObjectStore;
use crate::wire::{self, read_ref};

/// A referenced object: its reference (always known) and the object (when given).
#[derive(Clone, Debug, Default)]
pub struct Referenced<'a> {
    /// The reference.
    pub reference: Option<ObjectRef>,
    /// The object, when it was among the inputs.
    pub object: Option<&'a Value>,
}

impl Referenced<'_> {
    /// The referenced name, if any.
    pub fn name(&self) -> Option<&str> {
        self.reference.as_ref().map(|r| r.name.as_str())
    }
}

/// A current MachineDeployment and its templates.
#[derive(Clone, Debug)]
pub struct CurrentMachineDeployment<'a> {
    /// The MachineDeployment.
    pub object: &'a Value,
    /// Its bootstrap template.
    pub bootstrap_template: Referenced<'a>,
    /// Its infrastructure machine template.
    pub infrastructure_template: Referenced<'a>,
}

/// What exists now.
#[derive(Clone, Debug, Default)]
pub struct CurrentState<'a> {
    /// The InfrastructureCluster.
    pub infrastructure_cluster: Referenced<'a>,
    /// The ControlPlane.
    pub control_plane: Referenced<'a>,
    /// The control plane machines' infrastructure template.
    pub control_plane_machine_template: Referenced<'a>,
    /// MachineDeployments by topology name.
    pub machine_deployments: BTreeMap<String, CurrentMachineDeployment<'a>>,
}

fn referenced<'a>(
    store: &'a ObjectStore,
    reference: Option<ObjectRef>,
    namespace: &str,
) -> Referenced<'a> {
    // A reference without a name refers to nothing, as in Cluster API.
    let reference = reference.filter(|r| !r.name.is_empty());
    let object = reference.as_ref().and_then(|r| store.get(r, namespace));
    Referenced { reference, object }
}

fn check_owned(what: &Referenced<'_>, referrer: &str, errors: &mut RenderError) {
    if let Some(object) = what.object
        && !object.labels().contains_key(labels::TOPOLOGY_OWNED)
    {
        errors.push(format!(
            "{} {}/{} referenced from {referrer} is not topology owned",
            object.kind(),
            object.namespace(),
            object.name()
        ));
    }
}

impl<'a> CurrentState<'a> {
    /// Reads the current state of `cluster` from `store`.
    pub fn read(cluster: &Cluster, store: &'a ObjectStore) -> Result<Self, RenderError> {
        let mut errors = RenderError::default();
        let ns = cluster.namespace.as_str();
        let cluster_desc = format!("Cluster {}", cluster.key());
        let infrastructure_cluster = referenced(store, cluster.infrastructure_ref.clone(), ns);
        check_owned(&infrastructure_cluster, &cluster_desc, &mut errors);
        let control_plane = referenced(store, cluster.control_plane_ref.clone(), ns);
        check_owned(&control_plane, &cluster_desc, &mut errors);
        let control_plane_machine_template = referenced(
            store,
            control_plane.object.and_then(|cp| {
                read_ref(cp, wire::control_plane::INFRASTRUCTURE_REF).or_else(|| {
                    read_ref(
                        cp,
                        &["spec", "machineTemplate", "spec", "infrastructureRef"],
                    )
                })
            }),
            ns,
        );
        if let Some(cp) = control_plane.object {
            let desc = format!("{} {}/{}", cp.kind(), cp.namespace(), cp.name());
            check_owned(&control_plane_machine_template, &desc, &mut errors);
        }

        let mut machine_deployments = BTreeMap::new();
        let owned = store.list(
            "cluster.x-k8s.io",
            "MachineDeployment",
            ns,
            &[
                (labels::CLUSTER_NAME, cluster.name.as_str()),
                (labels::TOPOLOGY_OWNED, ""),
            ],
        );
        for md in owned {
            let md_labels = md.labels();
            let Some(topology_name) = md_labels.get(labels::DEPLOYMENT_NAME) else {
                errors.push(format!(
                    "failed to find label {} in MachineDeployment {}/{}",
                    labels::DEPLOYMENT_NAME,
                    md.namespace(),
                    md.name()
                ));
                continue;
            };
            if machine_deployments.contains_key(topology_name) {
                errors.push(format!(
                    "duplicate MachineDeployment {}/{} found for label {}: {topology_name}",
                    md.namespace(),
                    md.name(),
                    labels::DEPLOYMENT_NAME
                ));
                continue;
            }
            let desc = format!("MachineDeployment {}/{}", md.namespace(), md.name());
            let bootstrap_template = referenced(
                store,
                read_ref(md, &["spec", "template", "spec", "bootstrap", "configRef"]),
                ns,
            );
            check_owned(&bootstrap_template, &desc, &mut errors);
            let infrastructure_template = referenced(
                store,
                read_ref(md, &["spec", "template", "spec", "infrastructureRef"]),
                ns,
            );
            check_owned(&infrastructure_template, &desc, &mut errors);
            machine_deployments.insert(
                topology_name.clone(),
                CurrentMachineDeployment {
                    object: md,
                    bootstrap_template,
                    infrastructure_template,
                },
            );
        }
        if errors.is_empty() {
            Ok(CurrentState {
                infrastructure_cluster,
                control_plane,
                control_plane_machine_template,
                machine_deployments,
            })
        } else {
            Err(errors)
        }
    }
}
