//! The Cluster itself: the topology owns its two labels, its references to the
//! InfrastructureCluster and the ControlPlane, and the upgrade-step annotation;
//! everything else is the user's.

use serde_json::Value;
use topograph_api::object::{ObjectExt, remove_at, set_annotations, set_at, set_labels};

use super::Scope;
use crate::labels;
use crate::upgrade::{UPGRADE_STEP_ANNOTATION, UpgradeTracker};
use crate::wire::{desired_ref, ref_value_in};

pub(crate) fn compute(
    scope: &Scope<'_>,
    infrastructure_cluster: Option<&Value>,
    control_plane: &Value,
    upgrade: &mut UpgradeTracker,
) -> Value {
    let cluster = scope.cluster;
    let mut object = cluster.document.clone();
    remove_at(&mut object, &["status"]);
    let mut cluster_labels = object.labels();
    cluster_labels.insert(labels::CLUSTER_NAME.to_string(), cluster.name.clone());
    cluster_labels.insert(labels::TOPOLOGY_OWNED.to_string(), String::new());
    set_labels(&mut object, &cluster_labels);
    // References in the shape of the Cluster's own version.
    let version = object.api_version().to_string();
    if let Some(infra) = infrastructure_cluster {
        let r = desired_ref(cluster.infrastructure_ref.as_ref(), infra);
        set_at(
            &mut object,
            &["spec", "infrastructureRef"],
            ref_value_in(&version, &r),
        );
    }
    let r = desired_ref(cluster.control_plane_ref.as_ref(), control_plane);
    set_at(
        &mut object,
        &["spec", "controlPlaneRef"],
        ref_value_in(&version, &r),
    );

    // Control plane providers let machines of the current step's version join while
    // the Cluster says an upgrade is under way; without one the annotation goes.
    let mut annotations = object.annotations();
    let had_step = annotations.contains_key(UPGRADE_STEP_ANNOTATION);
    match &upgrade.upgrade_step {
        Some(step) => {
            annotations.insert(UPGRADE_STEP_ANNOTATION.to_string(), step.clone());
        }
        None => {
            annotations.remove(UPGRADE_STEP_ANNOTATION);
        }
    }
    upgrade.remove_upgrade_step_annotation = had_step && upgrade.upgrade_step.is_none();
    if had_step || upgrade.upgrade_step.is_some() {
        set_annotations(&mut object, &annotations);
    }
    object
}
