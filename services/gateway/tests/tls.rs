//! Mutual TLS in front of the gateway, served in process: a tenant bound to a client
//! certificate's common name gets in with its token and its certificate only.
//!
//! `tests/tls/` holds throw-away test certificates (a CA, a server certificate for
//! localhost and 127.0.0.1, two client certificates), made with openssl for these tests
//! alone and valid for a century so the test never expires.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};
use tonic::{Code, Request};
use topograph_gateway::tenancy::token_sha256_hex;
use topograph_gateway::{
    Gateway, GatewayConfig, Limits, QueueJobs, Registration, TenantStore, Tenants, Tls,
};
use topograph_management::registry::Registry;
use topograph_proto::gateway::v1 as pb;
use topograph_proto::gateway::v1::gateway_service_client::GatewayServiceClient;
use topograph_queue::QueueConfig;
use topograph_queue::memory::MemoryQueue;
use topograph_telemetry::rpc::RpcMetrics;

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tls")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

async fn start() -> (String, tokio::sync::oneshot::Sender<()>) {
    let tenants = Tenants::from_yaml(&format!(
        "tenants:\n- name: ops\n  tokenSha256: {}\n  clientCommonName: team-a-client\n  managementClusters: ['*']\n  namespaces: ['*']\n  admin: true\n",
        token_sha256_hex("ops-token")
    ))
    .unwrap();
    let gateway = Gateway::new(GatewayConfig {
        registry: Arc::new(Registry::fixed([])),
        jobs: Arc::new(QueueJobs(Arc::new(
            MemoryQueue::new(QueueConfig::default()),
        ))),
        engine: Arc::new(topograph_engine::Local),
        tenants: Arc::new(TenantStore::new(tenants)),
        registration: Registration::default(),
        limits: Limits::default(),
        metrics: Arc::new(RpcMetrics::new("topograph_gateway")),
        registry_refresh: Duration::from_secs(60),
        install_missing_crds: false,
    })
    .with_tls(Tls {
        cert: fixture("server.pem"),
        key: fixture("server.key"),
        client_ca: Some(fixture("ca.pem")),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(gateway.serve(listener, async move {
        let _ = stopped.await;
    }));
    (format!("https://localhost:{}", addr.port()), stop)
}

async fn client(
    url: &str,
    identity: Option<&str>,
) -> Result<GatewayServiceClient<Channel>, tonic::transport::Error> {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(fixture("ca.pem")))
        .domain_name("localhost");
    if let Some(name) = identity {
        tls = tls.identity(Identity::from_pem(
            fixture(&format!("{name}.pem")),
            fixture(&format!("{name}.key")),
        ));
    }
    let channel = Channel::from_shared(url.to_string())
        .unwrap()
        .tls_config(tls)?
        .connect()
        .await?;
    Ok(GatewayServiceClient::new(channel))
}

fn list(token: &str) -> Request<pb::ListManagementClustersRequest> {
    let mut request = Request::new(pb::ListManagementClustersRequest {});
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

#[tokio::test]
async fn a_certificate_bound_tenant_needs_its_certificate_and_its_token() {
    let (url, _stop) = start().await;

    let mut right = client(&url, Some("team-a-client")).await.unwrap();
    let names = right
        .list_management_clusters(list("ops-token"))
        .await
        .unwrap();
    assert!(names.into_inner().names.is_empty());
    let e = right
        .list_management_clusters(list("wrong"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);

    // A certificate from the same CA with another name does not carry the tenant.
    let mut other = client(&url, Some("someone-else")).await.unwrap();
    let e = other
        .list_management_clusters(list("ops-token"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");

    // Without a client certificate the handshake (or the first call) fails.
    match client(&url, None).await {
        Err(_) => {}
        Ok(mut none) => {
            let e = none
                .list_management_clusters(list("ops-token"))
                .await
                .unwrap_err();
            assert_ne!(e.code(), Code::Ok);
        }
    }
}
