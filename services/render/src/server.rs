//! The gRPC face of the handlers: each call runs on the blocking pool, bounded by a
//! semaphore so the async runtime stays free for I/O, health checks and metrics; a
//! cached Render answer is served without taking a worker.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tonic::{Request, Response, Status};
use topograph_proto::render::v1 as pb;
use topograph_proto::render::v1::render_service_server::RenderService;

use crate::handlers::{self, Handlers};

/// The gRPC service: runs the [`crate::handlers`] on the blocking pool.
#[derive(Debug, Clone)]
pub struct RenderServer {
    handlers: Arc<Handlers>,
    workers: Arc<Semaphore>,
}

impl RenderServer {
    /// A server running at most `workers` handler calls at once.
    pub fn new(handlers: Handlers, workers: usize) -> Self {
        RenderServer {
            handlers: Arc::new(handlers),
            workers: Arc::new(Semaphore::new(workers.max(1))),
        }
    }

    async fn run<Req, Resp>(
        &self,
        request: Request<Req>,
        work: impl FnOnce(&Handlers, &Req) -> Result<Resp, Status> + Send + 'static,
    ) -> Result<Response<Resp>, Status>
    where
        Req: Send + 'static,
        Resp: Send + 'static,
    {
        let request = request.into_inner();
        let permit = self
            .workers
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Status::unavailable("the server is shutting down"))?;
        let handlers = self.handlers.clone();
        // The permit moves into the blocking task, so a request whose caller went away
        // still counts until the engine is done with it: the bound is on CPU work, not
        // on waiting callers.
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work(&handlers, &request)
        });
        match task.await {
            Ok(result) => result.map(Response::new),
            Err(e) => {
                tracing::error!(error = %e, "engine task failed");
                Err(Status::internal(
                    "the engine failed unexpectedly on this request",
                ))
            }
        }
    }
}

#[tonic::async_trait]
impl RenderService for RenderServer {
    async fn render(
        &self,
        request: Request<pb::RenderRequest>,
    ) -> Result<Response<pb::RenderResponse>, Status> {
        // A cached response needs no engine worker: answered here, it never queues
        // behind renders that do.
        let key = handlers::render_key(request.get_ref());
        if let Some(hit) = self.handlers.cached_render(&key) {
            return Ok(Response::new((*hit).clone()));
        }
        self.run(request, move |h, r| h.render_keyed(key, r)).await
    }

    async fn validate(
        &self,
        request: Request<pb::ValidateRequest>,
    ) -> Result<Response<pb::ValidateResponse>, Status> {
        self.run(request, Handlers::validate).await
    }

    async fn default(
        &self,
        request: Request<pb::DefaultRequest>,
    ) -> Result<Response<pb::DefaultResponse>, Status> {
        self.run(request, Handlers::default_cluster).await
    }

    async fn plan(
        &self,
        request: Request<pb::PlanRequest>,
    ) -> Result<Response<pb::PlanResponse>, Status> {
        self.run(request, Handlers::plan).await
    }
}
