//! Where the desired state comes from. The reconciler asks through
//! [`DesiredStateEngine`]: the engine linked in ([`InProcess`]) or the render service
//! over gRPC ([`RenderService`]), which lets a fleet of appliers share render capacity
//! and the render service's class cache.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tonic::transport::Channel;
use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::{DesiredState, ObjectStore, RenderOptions};
use topograph_proto::balance;
use topograph_proto::render::v1 as pb;
use topograph_proto::render::v1::render_service_client::RenderServiceClient;

use crate::error::ReconcileError;

/// Names the class on the span in force (the worker's `reconcile` span declares a
/// `class` field; the reconcile learns the class only once it read the Cluster).
fn record_class(inputs: &EngineInputs<'_>) -> String {
    use topograph_api::object::ObjectExt;
    let class = format!(
        "{}/{}",
        inputs.class_object.namespace(),
        inputs.class_object.name()
    );
    tracing::Span::current().record("class", class.as_str());
    class
}

/// A boxed future, so engines can be chosen at run time.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a desired state is computed from: the Cluster and its class (decoded, and as
/// read from the API server), and the templates and current objects read for it.
#[derive(Clone, Copy, Debug)]
pub struct EngineInputs<'a> {
    /// The Cluster.
    pub cluster: &'a Cluster,
    /// The Cluster object.
    pub cluster_object: &'a Value,
    /// Its class.
    pub class: &'a ClusterClass,
    /// The class object.
    pub class_object: &'a Value,
    /// Templates and current objects.
    pub objects: &'a [Value],
}

/// Computes a Cluster's desired state.
pub trait DesiredStateEngine: Send + Sync {
    /// The desired state, or the messages saying why there is none.
    fn desired_state<'a>(
        &'a self,
        inputs: EngineInputs<'a>,
    ) -> BoxFuture<'a, Result<DesiredState, Vec<String>>>;
}

/// The engine linked into this process.
#[derive(Clone, Copy, Debug, Default)]
pub struct InProcess;

impl DesiredStateEngine for InProcess {
    fn desired_state<'a>(
        &'a self,
        inputs: EngineInputs<'a>,
    ) -> BoxFuture<'a, Result<DesiredState, Vec<String>>> {
        Box::pin(async move {
            record_class(&inputs);
            let store = ObjectStore::new(inputs.objects.iter().cloned());
            topograph_engine::render_with(
                inputs.cluster,
                inputs.class,
                &store,
                RenderOptions::default(),
            )
            .map(|rendered| rendered.desired)
            .map_err(|e| e.messages)
        })
    }
}

/// The render service (`topograph.render.v1.RenderService`), over gRPC.
#[derive(Clone, Debug)]
pub struct RenderService {
    client: RenderServiceClient<Channel>,
}

impl RenderService {
    /// A client of the render service at `url`: `http://host:port`, `dns:///host:port`
    /// (every replica the name resolves to) or a comma-separated list, calls balanced
    /// over the replicas that answer (`topograph_proto::balance`). Connections are made
    /// on first use and re-made when they break. Call inside a Tokio runtime.
    pub fn connect_lazy(url: &str) -> Result<Self, ReconcileError> {
        let channel = balance::channel(url, balance::Options::default())
            .map_err(|e| ReconcileError::invalid(format!("render service address: {e}")))?;
        Ok(RenderService::new(channel))
    }

    /// A client over `channel` (shared with other clients of the render service).
    pub fn new(channel: Channel) -> Self {
        RenderService {
            client: RenderServiceClient::new(channel),
        }
    }
}

fn encode(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

/// The messages of a failed render: for invalid input, the descriptions of the field
/// violations, which are the texts the engine gives in process.
fn messages(status: &tonic::Status) -> Vec<String> {
    use tonic_types::StatusExt;
    if status.code() == tonic::Code::InvalidArgument
        && let Some(bad_request) = status.get_details_bad_request()
        && !bad_request.field_violations.is_empty()
    {
        return bad_request
            .field_violations
            .into_iter()
            .map(|v| v.description)
            .collect();
    }
    vec![format!(
        "render service: {:?}: {}",
        status.code(),
        status.message()
    )]
}

impl DesiredStateEngine for RenderService {
    fn desired_state<'a>(
        &'a self,
        inputs: EngineInputs<'a>,
    ) -> BoxFuture<'a, Result<DesiredState, Vec<String>>> {
        let class = record_class(&inputs);
        // The client side of the render call; the render service's span is its child.
        let span = tracing::info_span!(
            "render",
            otel.kind = "client",
            rpc.system = "grpc",
            rpc.method = "/topograph.render.v1.RenderService/Render",
            class = %class,
        );
        let call = async move {
            let request = pb::RenderRequest {
                cluster_class: encode(inputs.class_object),
                templates: Vec::new(),
                cluster: encode(inputs.cluster_object),
                current_objects: inputs.objects.iter().map(encode).collect(),
            };
            let mut request = tonic::Request::new(request);
            topograph_telemetry::trace::inject_metadata(request.metadata_mut());
            let response = self
                .client
                .clone()
                .render(request)
                .await
                .map_err(|s| messages(&s))?
                .into_inner();
            serde_json::from_slice(&response.desired_state).map_err(|e| {
                vec![format!(
                    "render service: the response has no readable desired state: {e}"
                )]
            })
        };
        Box::pin(tracing::Instrument::instrument(call, span))
    }
}
