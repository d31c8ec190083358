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
use crate::{apply, classes, clusters, plan, registration, rollouts, watch};

/// The caller and what the request is about, recorded on the request's span (see
/// `topograph_telemetry::trace::server_span`), so a trace view can find every call on a
/// management cluster or an object.
fn traced<R: Target>(tenant: Arc<Tenant>, request: &Request<R>) -> Arc<Tenant> {
    let span = tracing::Span::current();
    span.record("tenant", tenant.name.as_str());
    let (management_cluster, object) = request.get_ref().target();
    if !management_cluster.is_empty() {
        span.record("management_cluster", management_cluster);
    }
    if !object.is_empty() {
        span.record("object", object.as_str());
    }
    tenant
}

/// What a request is about: its management cluster, and the object (`namespace/name`)
/// or namespace it names; empty where it names none.
trait Target {
    fn target(&self) -> (&str, String);
}

/// Requests naming a management cluster, a namespace and an object's name.
macro_rules! named_target {
    ($($request:ty),* $(,)?) => {$(
        impl Target for $request {
            fn target(&self) -> (&str, String) {
                (&self.management_cluster, object(&self.namespace, &self.name))
            }
        }
    )*};
}

named_target!(
    pb::GetClusterRequest,
    pb::DeleteClusterRequest,
    pb::GetClusterClassRequest,
    pb::DeleteClusterClassRequest,
    pb::PlanRequest,
    pb::WatchRequest,
    pb::RolloutRequest,
);

/// Requests naming a management cluster and at most a namespace.
macro_rules! namespace_target {
    ($($request:ty),* $(,)?) => {$(
        impl Target for $request {
            fn target(&self) -> (&str, String) {
                (&self.management_cluster, self.namespace.clone())
            }
        }
    )*};
}

namespace_target!(pb::ListClustersRequest, pb::ListClusterClassesRequest);

impl Target for pb::ApplyRequest {
    fn target(&self) -> (&str, String) {
        (&self.management_cluster, String::new())
    }
}

impl Target for pb::ImpactRequest {
    fn target(&self) -> (&str, String) {
        (&self.management_cluster, String::new())
    }
}

impl Target for pb::RegisterManagementClusterRequest {
    fn target(&self) -> (&str, String) {
        (&self.name, String::new())
    }
}

impl Target for pb::UnregisterManagementClusterRequest {
    fn target(&self) -> (&str, String) {
        (&self.name, String::new())
    }
}

impl Target for pb::ListManagementClustersRequest {
    fn target(&self) -> (&str, String) {
        ("", String::new())
    }
}

/// `namespace/name`, `namespace` alone, or nothing.
fn object(namespace: &str, name: &str) -> String {
    match (namespace.is_empty(), name.is_empty()) {
        (_, true) => namespace.to_string(),
        (true, false) => name.to_string(),
        (false, false) => format!("{namespace}/{name}"),
    }
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

    /// What every method does: find the caller's tenant, record it and the request's
    /// target on the span, and hand the request to `handler`.
    async fn serve<R: Target, T>(
        &self,
        request: Request<R>,
        handler: impl AsyncFnOnce(&State, &Tenant, R) -> Result<T, Status>,
    ) -> Result<Response<T>, Status> {
        let tenant = traced(caller(&request)?, &request);
        handler(&self.state, &tenant, request.into_inner())
            .await
            .map(Response::new)
    }
}

#[tonic::async_trait]
impl GatewayService for GatewayServer {
    async fn apply(
        &self,
        request: Request<pb::ApplyRequest>,
    ) -> Result<Response<pb::ApplyResponse>, Status> {
        self.serve(request, apply::apply).await
    }

    async fn get_cluster(
        &self,
        request: Request<pb::GetClusterRequest>,
    ) -> Result<Response<pb::GetClusterResponse>, Status> {
        self.serve(request, clusters::get).await
    }

    async fn list_clusters(
        &self,
        request: Request<pb::ListClustersRequest>,
    ) -> Result<Response<pb::ListClustersResponse>, Status> {
        self.serve(request, clusters::list).await
    }

    async fn delete_cluster(
        &self,
        request: Request<pb::DeleteClusterRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        self.serve(request, clusters::delete).await
    }

    async fn get_cluster_class(
        &self,
        request: Request<pb::GetClusterClassRequest>,
    ) -> Result<Response<pb::GetClusterClassResponse>, Status> {
        self.serve(request, classes::get).await
    }

    async fn list_cluster_classes(
        &self,
        request: Request<pb::ListClusterClassesRequest>,
    ) -> Result<Response<pb::ListClusterClassesResponse>, Status> {
        self.serve(request, classes::list).await
    }

    async fn delete_cluster_class(
        &self,
        request: Request<pb::DeleteClusterClassRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        self.serve(request, classes::delete).await
    }

    async fn plan(
        &self,
        request: Request<pb::PlanRequest>,
    ) -> Result<Response<pb::PlanResponse>, Status> {
        self.serve(request, plan::plan).await
    }

    type ImpactStream = plan::ImpactStream;

    async fn impact(
        &self,
        request: Request<pb::ImpactRequest>,
    ) -> Result<Response<Self::ImpactStream>, Status> {
        self.serve(request, plan::impact).await
    }

    async fn get_rollout(
        &self,
        request: Request<pb::RolloutRequest>,
    ) -> Result<Response<pb::Rollout>, Status> {
        self.serve(request, async |state, tenant, r| {
            rollouts::serve(state, tenant, r, rollouts::Action::Get).await
        })
        .await
    }

    async fn pause_rollout(
        &self,
        request: Request<pb::RolloutRequest>,
    ) -> Result<Response<pb::Rollout>, Status> {
        self.serve(request, async |state, tenant, r| {
            rollouts::serve(state, tenant, r, rollouts::Action::Pause).await
        })
        .await
    }

    async fn resume_rollout(
        &self,
        request: Request<pb::RolloutRequest>,
    ) -> Result<Response<pb::Rollout>, Status> {
        self.serve(request, async |state, tenant, r| {
            rollouts::serve(state, tenant, r, rollouts::Action::Resume).await
        })
        .await
    }

    async fn abort_rollout(
        &self,
        request: Request<pb::RolloutRequest>,
    ) -> Result<Response<pb::Rollout>, Status> {
        self.serve(request, async |state, tenant, r| {
            rollouts::serve(state, tenant, r, rollouts::Action::Abort).await
        })
        .await
    }

    type WatchStream = watch::WatchStream;

    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        self.serve(request, watch::watch).await
    }

    async fn register_management_cluster(
        &self,
        request: Request<pb::RegisterManagementClusterRequest>,
    ) -> Result<Response<pb::RegisterManagementClusterResponse>, Status> {
        self.serve(request, registration::register).await
    }

    async fn list_management_clusters(
        &self,
        request: Request<pb::ListManagementClustersRequest>,
    ) -> Result<Response<pb::ListManagementClustersResponse>, Status> {
        self.serve(request, async |state, tenant, _| {
            registration::list(state, tenant).await
        })
        .await
    }

    async fn unregister_management_cluster(
        &self,
        request: Request<pb::UnregisterManagementClusterRequest>,
    ) -> Result<Response<pb::UnregisterManagementClusterResponse>, Status> {
        self.serve(request, registration::unregister).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_name_their_management_cluster_and_object() {
        let get = pb::GetClusterRequest {
            management_cluster: "mc".into(),
            namespace: "ns".into(),
            name: "c".into(),
        };
        assert_eq!(get.target(), ("mc", "ns/c".to_string()));
        let list = pb::ListClustersRequest {
            management_cluster: "mc".into(),
            namespace: "ns".into(),
            ..Default::default()
        };
        assert_eq!(list.target(), ("mc", "ns".to_string()));
        let register = pb::RegisterManagementClusterRequest {
            name: "east".into(),
            ..Default::default()
        };
        assert_eq!(register.target(), ("east", String::new()));
        assert_eq!(object("", ""), "");
        assert_eq!(object("", "x"), "x");
    }
}
