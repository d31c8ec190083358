//! The Cluster itself: the topology owns its two labels and its references to the
//! InfrastructureCluster and the ControlPlane; everything else is the user's.

use serde_json::Value;
use topograph_api::object::{ObjectExt, remove_at, set_at, set_labels};

use super::Scope;
use crate::labels;
use crate::wire::{desired_ref, ref_value};

pub(crate) fn compute(
    scope: &Scope<'_>,
    infrastructure_cluster: Option<&Value>,
    control_plane: &Value,
) -> Value {
    let cluster = scope.cluster;
    let mut object = cluster.document.clone();
    remove_at(&mut object, &["status"]);
    let mut cluster_labels = object.labels();
    cluster_labels.insert(labels::CLUSTER_NAME.to_string(), cluster.name.clone());
    cluster_labels.insert(labels::TOPOLOGY_OWNED.to_string(), String::new());
    set_labels(&mut object, &cluster_labels);
    if let Some(infra) = infrastructure_cluster {
        let r = desired_ref(cluster.infrastructure_ref.as_ref(), infra);
        set_at(&mut object, &["spec", "infrastructureRef"], ref_value(&r));
    }
    let r = desired_ref(cluster.control_plane_ref.as_ref(), control_plane);
    set_at(&mut object, &["spec", "controlPlaneRef"], ref_value(&r));
    object
}
