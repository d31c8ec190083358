//! The current state of a Cluster's topology, read from the objects given: the objects
//! the Cluster references, its topology-owned MachineDeployments (found by label) and
//! the templates those reference, and, for upgrade sequencing, the control plane's
//! versions and each MachineDeployment's Machines and status. Names of objects that
//! exist are always reused.

use std::collections::BTreeMap;

use serde_json::Value;
use topograph_api::model::{Cluster, ObjectRef};
use topograph_api::object::ObjectExt;

use crate::contract::{self, Contract, ContractFields};
use crate::error::RenderError;
use crate::labels;
use crate::store::ObjectStore;
use crate::upgrade::decide::{ControlPlaneState, MachineDeploymentState};
use crate::wire::read_ref;

/// The label Cluster API's MachineSets put on their Machines: the MachineDeployment's
/// object name.
const MACHINE_DEPLOYMENT_NAME: &str = "cluster.x-k8s.io/deployment-name";

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
    /// Its Machines (label `cluster.x-k8s.io/deployment-name`), when the inputs have them.
    pub machines: Vec<&'a Value>,
}

fn string_at<'v>(object: &'v Value, path: &[&str]) -> Option<&'v str> {
    object.at(path).and_then(Value::as_str)
}

fn int_at(object: &Value, path: &[&str]) -> Option<i64> {
    object.at(path).and_then(Value::as_i64)
}

impl CurrentMachineDeployment<'_> {
    /// `spec.template.spec.version`, or "".
    pub fn version(&self) -> &str {
        string_at(self.object, &["spec", "template", "spec", "version"]).unwrap_or("")
    }

    /// Whether the MachineDeployment is still rolling out (decision 0009). As in
    /// Cluster API, any Machine whose `spec.version` differs from the
    /// MachineDeployment's makes it upgrading. Inputs without Machines (a provider
    /// simulator creates none) are judged by the status instead: upgrading while the
    /// controller has not observed the latest generation or some existing replicas are
    /// not updated. Without a version, Machines or status it is not upgrading.
    pub fn is_upgrading(&self) -> bool {
        let version = self.version();
        if version.is_empty() {
            return false;
        }
        if self
            .machines
            .iter()
            .any(|m| string_at(m, &["spec", "version"]) != Some(version))
        {
            return true;
        }
        let Some(status) = self.object.at(&["status"]).filter(|s| s.is_object()) else {
            return false;
        };
        let stale = match (
            int_at(status, &["observedGeneration"]),
            int_at(self.object, &["metadata", "generation"]),
        ) {
            (Some(observed), Some(generation)) => observed < generation,
            _ => false,
        };
        // Go omits zero counts, so an absent count is 0. Machines that exist but are
        // not up to date mean a rollout; fewer machines than desired, all up to date,
        // is a scale-up, which Cluster API (judging by Machine versions) does not count.
        let updated = int_at(status, &["updatedReplicas"])
            .or_else(|| int_at(status, &["upToDateReplicas"]))
            .unwrap_or(0);
        let existing = int_at(status, &["replicas"]).unwrap_or(0);
        stale || updated < existing
    }

    /// What the upgrade decisions need to know about it.
    pub fn versions(&self) -> MachineDeploymentState {
        MachineDeploymentState {
            object_name: self.object.name().to_string(),
            version: self.version().to_string(),
            upgrading: self.is_upgrading(),
        }
    }
}

/// A current MachinePool and the objects it references.
#[derive(Clone, Debug)]
pub struct CurrentMachinePool<'a> {
    /// The MachinePool.
    pub object: &'a Value,
    /// Its bootstrap config object.
    pub bootstrap_object: Referenced<'a>,
    /// Its infrastructure machine pool object.
    pub infrastructure_object: Referenced<'a>,
}

impl CurrentMachinePool<'_> {
    /// `spec.template.spec.version`, or "".
    pub fn version(&self) -> &str {
        string_at(self.object, &["spec", "template", "spec", "version"]).unwrap_or("")
    }

    /// Whether the MachinePool is still rolling out a version. Cluster API compares
    /// the versions of the pool's Nodes in the workload cluster; from the management
    /// cluster the pool's status tells it: the controller has not observed the latest
    /// generation, or it reports fewer up-to-date replicas than replicas. A pool whose
    /// status reports no up-to-date count (v1beta1 without the v1beta2 block) is judged
    /// by the generation alone.
    pub fn is_upgrading(&self) -> bool {
        if self.version().is_empty() {
            return false;
        }
        let Some(status) = self.object.at(&["status"]).filter(|s| s.is_object()) else {
            return false;
        };
        let stale = match (
            int_at(status, &["observedGeneration"]),
            int_at(self.object, &["metadata", "generation"]),
        ) {
            (Some(observed), Some(generation)) => observed < generation,
            _ => false,
        };
        let up_to_date = int_at(status, &["upToDateReplicas"])
            .or_else(|| int_at(status, &["v1beta2", "upToDateReplicas"]));
        let behind = up_to_date.is_some_and(|n| n < int_at(status, &["replicas"]).unwrap_or(0));
        stale || behind
    }

    /// What the upgrade decisions need to know about it.
    pub fn versions(&self) -> MachineDeploymentState {
        MachineDeploymentState {
            object_name: self.object.name().to_string(),
            version: self.version().to_string(),
            upgrading: self.is_upgrading(),
        }
    }
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
    /// The contract the current ControlPlane implements (v1beta1 when there is none).
    pub control_plane_contract: Contract,
    /// MachineDeployments by topology name.
    pub machine_deployments: BTreeMap<String, CurrentMachineDeployment<'a>>,
    /// MachinePools by topology name.
    pub machine_pools: BTreeMap<String, CurrentMachinePool<'a>>,
}

impl CurrentState<'_> {
    /// The control plane's versions, when it exists with a `spec.version`. One without
    /// a version is treated like one that does not exist yet: it gets the topology's
    /// version (Cluster API would fail to read it).
    pub fn control_plane_versions(&self) -> Option<ControlPlaneState> {
        let cp = self.control_plane.object?;
        let fields = self.control_plane_contract.control_plane();
        let spec_version = string_at(cp, fields.version).filter(|v| !v.is_empty())?;
        let status_versions = cp
            .at(fields.status_versions)
            .and_then(Value::as_array)
            .map(|versions| {
                versions
                    .iter()
                    .filter_map(|v| v.as_str().or_else(|| string_at(v, &["version"])))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Some(ControlPlaneState {
            kind: cp.kind().to_string(),
            spec_version: spec_version.to_string(),
            status_version: string_at(cp, fields.status_version)
                .filter(|v| !v.is_empty())
                .map(str::to_string),
            status_versions,
        })
    }
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
        let control_plane_contract = control_plane
            .object
            .map(|cp| store.contract_of_object(cp))
            .unwrap_or_default();
        let control_plane_machine_template = referenced(
            store,
            control_plane
                .object
                .and_then(|cp| contract::machine_template_ref(control_plane_contract, cp)),
            ns,
        );
        if let Some(cp) = control_plane.object {
            let desc = format!("{} {}/{}", cp.kind(), cp.namespace(), cp.name());
            check_owned(&control_plane_machine_template, &desc, &mut errors);
        }

        let machine_deployments = owned_workers(
            cluster,
            store,
            "MachineDeployment",
            labels::DEPLOYMENT_NAME,
            &mut errors,
        )
        .into_iter()
        .map(|(topology_name, w)| {
            let machines = store.list(
                "cluster.x-k8s.io",
                "Machine",
                ns,
                &[
                    (labels::CLUSTER_NAME, cluster.name.as_str()),
                    (MACHINE_DEPLOYMENT_NAME, w.object.name()),
                ],
            );
            let md = CurrentMachineDeployment {
                object: w.object,
                bootstrap_template: w.bootstrap,
                infrastructure_template: w.infrastructure,
                machines,
            };
            (topology_name, md)
        })
        .collect();
        let machine_pools = owned_workers(
            cluster,
            store,
            "MachinePool",
            labels::POOL_NAME,
            &mut errors,
        )
        .into_iter()
        .map(|(topology_name, w)| {
            let mp = CurrentMachinePool {
                object: w.object,
                bootstrap_object: w.bootstrap,
                infrastructure_object: w.infrastructure,
            };
            (topology_name, mp)
        })
        .collect();
        if errors.is_empty() {
            Ok(CurrentState {
                infrastructure_cluster,
                control_plane,
                control_plane_machine_template,
                control_plane_contract,
                machine_deployments,
                machine_pools,
            })
        } else {
            Err(errors)
        }
    }
}

/// A topology-owned worker (MachineDeployment or MachinePool) and what it references.
struct OwnedWorker<'a> {
    object: &'a Value,
    /// Its bootstrap template (MachineDeployment) or config (MachinePool).
    bootstrap: Referenced<'a>,
    /// Its infrastructure machine template or machine pool.
    infrastructure: Referenced<'a>,
}

/// The Cluster's topology-owned workers of `kind` by topology name (label
/// `name_label`), each with the bootstrap and infrastructure objects it references,
/// which must be topology owned too. Cluster API's texts for a missing or duplicate
/// topology name.
fn owned_workers<'a>(
    cluster: &Cluster,
    store: &'a ObjectStore,
    kind: &str,
    name_label: &str,
    errors: &mut RenderError,
) -> BTreeMap<String, OwnedWorker<'a>> {
    let ns = cluster.namespace.as_str();
    let mut workers = BTreeMap::new();
    let owned = store.list(
        "cluster.x-k8s.io",
        kind,
        ns,
        &[
            (labels::CLUSTER_NAME, cluster.name.as_str()),
            (labels::TOPOLOGY_OWNED, ""),
        ],
    );
    for object in owned {
        let object_labels = object.labels();
        let Some(topology_name) = object_labels.get(name_label) else {
            errors.push(format!(
                "failed to find label {name_label} in {kind} {}/{}",
                object.namespace(),
                object.name()
            ));
            continue;
        };
        if workers.contains_key(topology_name) {
            errors.push(format!(
                "duplicate {kind} {}/{} found for label {name_label}: {topology_name}",
                object.namespace(),
                object.name(),
            ));
            continue;
        }
        let desc = format!("{kind} {}/{}", object.namespace(), object.name());
        let mut reference = |path: &[&str]| {
            let found = referenced(store, read_ref(object, path), ns);
            check_owned(&found, &desc, errors);
            found
        };
        let bootstrap = reference(&["spec", "template", "spec", "bootstrap", "configRef"]);
        let infrastructure = reference(&["spec", "template", "spec", "infrastructureRef"]);
        workers.insert(
            topology_name.clone(),
            OwnedWorker {
                object,
                bootstrap,
                infrastructure,
            },
        );
    }
    workers
}
