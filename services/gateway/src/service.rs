//! The `topograph.gateway.v1.GatewayService` implementation: every method finds the
//! caller's tenant (put there by [`crate::auth::AuthLayer`]) and hands over to the
//! module that does the work.

use std::sync::Arc;

use tonic::{Request, Response, Status};
use topograph_proto::gateway::v1 as pb;
use topograph_proto::gateway::v1::gateway_service_server::GatewayService;

use crate::auth::caller;
use crate::state::State;
use crate::tenancy::Tenant;
use crate::{apply, classes, clusters, plan, registration, watch};

/// The caller, recorded on the request's span (see `topograph_telemetry::trace::server_span`).
fn traced(tenant: Arc<Tenant>) -> Arc<Tenant> {
    tracing::Span::current().record("tenant", tenant.name.as_str());
    tenant
}

/// The gateway service.
#[derive(Clone)]
pub struct GatewayServer {
    state: Arc<State>,
}

impl GatewayServer {
    /// A service over `state`.
    pub fn new(state: Arc<State>) -> Self {
        GatewayServer { state }
    }
}

#[tonic::async_trait]
impl GatewayService for GatewayServer {
    async fn apply(
        &self,
        request: Request<pb::ApplyRequest>,
    ) -> Result<Response<pb::ApplyResponse>, Status> {
        let tenant = traced(caller(&request)?);
        apply::apply(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn get_cluster(
        &self,
        request: Request<pb::GetClusterRequest>,
    ) -> Result<Response<pb::GetClusterResponse>, Status> {
        let tenant = traced(caller(&request)?);
        clusters::get(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_clusters(
        &self,
        request: Request<pb::ListClustersRequest>,
    ) -> Result<Response<pb::ListClustersResponse>, Status> {
        let tenant = traced(caller(&request)?);
        clusters::list(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn delete_cluster(
        &self,
        request: Request<pb::DeleteClusterRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        let tenant = traced(caller(&request)?);
        clusters::delete(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn get_cluster_class(
        &self,
        request: Request<pb::GetClusterClassRequest>,
    ) -> Result<Response<pb::GetClusterClassResponse>, Status> {
        let tenant = traced(caller(&request)?);
        classes::get(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_cluster_classes(
        &self,
        request: Request<pb::ListClusterClassesRequest>,
    ) -> Result<Response<pb::ListClusterClassesResponse>, Status> {
        let tenant = traced(caller(&request)?);
        classes::list(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn delete_cluster_class(
        &self,
        request: Request<pb::DeleteClusterClassRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        let tenant = traced(caller(&request)?);
        classes::delete(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn plan(
        &self,
        request: Request<pb::PlanRequest>,
    ) -> Result<Response<pb::PlanResponse>, Status> {
        let tenant = traced(caller(&request)?);
        plan::plan(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    type ImpactStream = plan::ImpactStream;

    async fn impact(
        &self,
        request: Request<pb::ImpactRequest>,
    ) -> Result<Response<Self::ImpactStream>, Status> {
        let tenant = traced(caller(&request)?);
        plan::impact(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    type WatchStream = watch::WatchStream;

    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let tenant = traced(caller(&request)?);
        watch::watch(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn register_management_cluster(
        &self,
        request: Request<pb::RegisterManagementClusterRequest>,
    ) -> Result<Response<pb::RegisterManagementClusterResponse>, Status> {
        let tenant = traced(caller(&request)?);
        registration::register(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_management_clusters(
        &self,
        request: Request<pb::ListManagementClustersRequest>,
    ) -> Result<Response<pb::ListManagementClustersResponse>, Status> {
        let tenant = traced(caller(&request)?);
        registration::list(&self.state, &tenant)
            .await
            .map(Response::new)
    }

    async fn unregister_management_cluster(
        &self,
        request: Request<pb::UnregisterManagementClusterRequest>,
    ) -> Result<Response<pb::UnregisterManagementClusterResponse>, Status> {
        let tenant = traced(caller(&request)?);
        registration::unregister(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }
}
