//! The gateway: the platform API in front of the management clusters.
//!
//! * [`auth`] authenticates bearer tokens ([`tenancy`]) and spends per-tenant budgets
//!   ([`ratelimit`]) in one tower layer; handlers authorise each management cluster
//!   and namespace they touch through the tenant.
//! * [`apply`] admits (`topograph_engine::Engine`: the render service or the engine
//!   in process)
//!   and writes ClusterClasses, templates and Clusters, then queues the Clusters
//!   concerned ([`state::Jobs`]).
//! * [`clusters`] and [`classes`] read, list ([`pagination`]) and delete them; a
//!   Cluster is read with its topology's objects and [`workers`].
//! * [`watch`] streams Events and condition changes from the management cluster.
//! * [`registration`] adds and removes management clusters; [`plan`] is the place of
//!   Plan and Impact.
//!
//! [`Gateway`] puts it together for the binary and for embedding in another process.

pub mod apply;
pub mod auth;
pub mod certificate;
pub mod classes;
pub mod clusters;
pub mod extensions;
pub mod objects;
pub mod pagination;
pub mod plan;
pub mod ratelimit;
pub mod registration;
pub mod rollouts;
pub mod service;
pub mod state;
pub mod tenancy;
pub mod tenant_source;
pub mod watch;
pub mod workers;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};
use topograph_management::registry::Registry;
use topograph_proto::gateway::v1::gateway_service_server::GatewayServiceServer;
use topograph_telemetry::rpc::{RpcLayer, RpcMetrics};
use tower::ServiceBuilder;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;

pub use crate::state::{Jobs, QueueJobs, Registration};
pub use crate::tenancy::{TenantStore, Tenants};

/// Limits every request is held to.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest a request may take (a shorter client deadline wins); for Watch, the
    /// time until the stream starts.
    pub timeout: Duration,
    /// Requests in flight at most; more are refused with RESOURCE_EXHAUSTED.
    pub max_in_flight: usize,
    /// Largest request message, in bytes.
    pub max_decoding_message_size: usize,
    /// Largest response message, in bytes.
    pub max_encoding_message_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(30),
            max_in_flight: 1024,
            max_decoding_message_size: 8 << 20,
            max_encoding_message_size: 32 << 20,
        }
    }
}

/// TLS for the gRPC server, PEM-encoded.
#[derive(Clone, Debug)]
pub struct Tls {
    /// The server's certificate chain.
    pub cert: Vec<u8>,
    /// Its private key.
    pub key: Vec<u8>,
    /// When given, clients must present a certificate this CA issued (mutual TLS).
    pub client_ca: Option<Vec<u8>>,
}

/// Everything the gateway is made of.
pub struct GatewayConfig {
    /// The management clusters (refreshed by [`Gateway::serve`] every
    /// `registry_refresh`).
    pub registry: Arc<Registry>,
    /// Where written Clusters are queued.
    pub jobs: Arc<dyn Jobs>,
    /// Admission (validation and defaulting) and desired states for Plan and Impact:
    /// the render service or the engine in process, as the appliers use it.
    pub engine: Arc<dyn topograph_engine::Engine>,
    /// The tenants.
    pub tenants: Arc<TenantStore>,
    /// Where registrations are written.
    pub registration: Registration,
    /// Request limits.
    pub limits: Limits,
    /// Request metrics (register them on a metrics endpoint).
    pub metrics: Arc<RpcMetrics>,
    /// How often the registry re-reads its sources.
    pub registry_refresh: Duration,
    /// Apply installs CustomResourceDefinitions for the provider kinds a management
    /// cluster does not serve yet (as `topograph crds` generates them) instead of
    /// refusing them: for the embedded mode's in-memory management cluster, never for
    /// real ones, whose CRDs come from Cluster API and the providers.
    pub install_missing_crds: bool,
}

/// The gateway.
pub struct Gateway {
    config: GatewayConfig,
    state: Arc<state::State>,
    tls: Option<Tls>,
}

impl Gateway {
    /// A gateway.
    pub fn new(config: GatewayConfig) -> Self {
        let state = Arc::new(state::State {
            registry: config.registry.clone(),
            jobs: config.jobs.clone(),
            engine: config.engine.clone(),
            registration: config.registration.clone(),
            install_missing_crds: config.install_missing_crds,
            runtime_sdk: Default::default(),
            stopping: tokio::sync::watch::channel(false).0,
        });
        Gateway {
            config,
            state,
            tls: None,
        }
    }

    /// Serves TLS (mutual TLS when `tls.client_ca` is given) instead of plain HTTP/2.
    pub fn with_tls(mut self, tls: Tls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The bare gRPC service, with message size limits. It serves nobody without
    /// [`auth::AuthLayer`] in front of it (every method asks for the caller).
    pub fn service(&self) -> GatewayServiceServer<service::GatewayServer> {
        GatewayServiceServer::new(service::GatewayServer::new(self.state.clone()))
            .max_decoding_message_size(self.config.limits.max_decoding_message_size)
            .max_encoding_message_size(self.config.limits.max_encoding_message_size)
    }

    /// Serves on `listener` with health, reflection, metrics, deadlines, load
    /// shedding and authentication until `shutdown` resolves; then stops accepting and
    /// lets requests in flight finish (open watches end).
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let registry = self.config.registry.clone();
        let every = self.config.registry_refresh;
        let refresher = tokio::spawn(async move {
            loop {
                let changes = registry.refresh().await;
                if !changes.added.is_empty() || !changes.removed.is_empty() {
                    tracing::info!(added = ?changes.added, removed = ?changes.removed, "management clusters changed");
                }
                tokio::time::sleep(every).await;
            }
        });

        let gateway = self.service();
        let (health, health_service) = tonic_health::server::health_reporter();
        health
            .set_serving::<GatewayServiceServer<service::GatewayServer>>()
            .await;
        // Reflection v1, and v1alpha for the clients that still ask only that (Python's
        // grpcio reflection, Postman, grpcui, older grpcurl).
        let reflection = || {
            tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(
                    topograph_proto::gateway::v1::FILE_DESCRIPTOR_SET,
                )
                .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        };
        let reflection_v1alpha = reflection().build_v1alpha()?;
        let reflection = reflection().build_v1()?;
        let limits = self.config.limits;
        let layers = ServiceBuilder::new()
            .layer(RpcLayer::new(self.config.metrics.clone(), limits.timeout))
            .layer(LoadShedLayer::new())
            .layer(GlobalConcurrencyLimitLayer::new(
                limits.max_in_flight.max(1),
            ))
            .layer(auth::AuthLayer::new(
                self.config.tenants.clone(),
                Arc::new(ratelimit::RateLimiter::new()),
            ))
            .into_inner();
        let state = self.state.clone();
        let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
        let mut builder = Server::builder();
        if let Some(tls) = &self.tls {
            let mut config =
                ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert, &tls.key));
            if let Some(ca) = &tls.client_ca {
                config = config.client_ca_root(Certificate::from_pem(ca));
            }
            builder = builder.tls_config(config)?;
        }
        let result = builder
            // The request's span continues the caller's trace (`traceparent` metadata).
            .trace_fn(topograph_telemetry::trace::server_span)
            .layer(layers)
            .add_service(health_service)
            .add_service(reflection)
            .add_service(reflection_v1alpha)
            .add_service(gateway)
            .serve_with_incoming_shutdown(incoming, async move {
                shutdown.await;
                tracing::info!("shutting down: no new requests; in-flight requests finish");
                state.stopping.send_replace(true);
                health
                    .set_not_serving::<GatewayServiceServer<service::GatewayServer>>()
                    .await;
            })
            .await;
        refresher.abort();
        result.map_err(Into::into)
    }
}
