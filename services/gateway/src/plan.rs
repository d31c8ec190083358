//! `Plan` and `Impact`: dry-run reconciles of one Cluster, or of every Cluster of a
//! proposed ClusterClass. They need the applier's dry-run reconcile
//! (`topograph_applier::plan`), which is being written; until it lands both answer
//! UNIMPLEMENTED after the same authorisation as every other method.

use std::pin::Pin;

use futures::Stream;
use tonic::Status;
use topograph_proto::gateway::v1 as pb;

use crate::state::State;
use crate::tenancy::Tenant;

/// The stream Impact answers with.
pub type ImpactStream = Pin<Box<dyn Stream<Item = Result<pb::ImpactItem, Status>> + Send>>;

/// The Plan RPC.
pub async fn plan(
    _state: &State,
    tenant: &Tenant,
    request: pb::PlanRequest,
) -> Result<pb::PlanResponse, Status> {
    tenant.authorize(
        "Plan",
        &request.management_cluster,
        Some(&request.namespace),
    )?;
    Err(Status::unimplemented(
        "Plan needs the applier's dry-run reconcile, which is not there yet",
    ))
}

/// The Impact RPC.
pub async fn impact(
    _state: &State,
    tenant: &Tenant,
    request: pb::ImpactRequest,
) -> Result<ImpactStream, Status> {
    tenant.authorize("Impact", &request.management_cluster, None)?;
    Err(Status::unimplemented(
        "Impact needs the applier's dry-run reconcile, which is not there yet",
    ))
}
