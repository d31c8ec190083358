//! The Runtime SDK client against real HTTPS servers on 127.0.0.1: the example
//! extension (discovery, GeneratePatches, lifecycle answers and their aggregation) and
//! misbehaving servers (slow, garbage, wrong kind, untrusted certificate, refused),
//! with failure policies Fail and Ignore.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Bytes;
use proptest::prelude::*;
use serde_json::json;
use topograph_example_extension::Extension;
use topograph_runtime::client::Client;
use topograph_runtime::config::ExtensionConfig;
use topograph_runtime::hooks::{
    BeforeClusterUpgradeRequest, FailurePolicy, GeneratePatchesRequest, ResponseStatus,
    ValidateTopologyRequest,
};
use topograph_runtime::server::{Answer, Handler};
use topograph_runtime::{ErrorKind, tls};

const NAME: &str = "k8s-upgrade-with-runtimesdk";

/// Serves `handler` over HTTPS on 127.0.0.1:0; its URL and the CA that signed it.
async fn start(handler: Arc<dyn Handler>) -> (String, String) {
    let generated = tls::generate(&["127.0.0.1", "localhost"]).unwrap();
    let config =
        tls::server_config(generated.cert_pem.as_bytes(), generated.key_pem.as_bytes()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(topograph_runtime::server::serve(
        listener,
        Arc::new(config),
        handler,
    ));
    (url, generated.ca_pem)
}

async fn registered(url: &str, ca: &str) -> Client {
    let client = Client::new();
    let config = ExtensionConfig::for_url(NAME, url, ca.as_bytes().to_vec());
    let discovered = client.discover_and_register(&config).await.unwrap();
    assert!(
        discovered
            .status
            .handlers
            .iter()
            .any(|h| h.name == "generate-patches.k8s-upgrade-with-runtimesdk")
    );
    client
}

/// A server answering every request the same way, after a delay.
struct Fixed {
    delay: Duration,
    answer: Answer,
}

impl Handler for Fixed {
    fn handle(&self, path: String, _body: Bytes) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let (delay, answer) = (self.delay, self.answer.clone());
        Box::pin(async move {
            if path.ends_with("/discovery") {
                let discovery = topograph_example_extension::discovery();
                return (200, serde_json::to_vec(&discovery).unwrap());
            }
            tokio::time::sleep(delay).await;
            answer
        })
    }
}

/// Registers the handlers of a [`Fixed`] server with a timeout and failure policy.
async fn fixed(delay: Duration, answer: Answer, timeout: i32, policy: FailurePolicy) -> Client {
    let (url, ca) = start(Arc::new(Fixed { delay, answer })).await;
    let client = Client::new();
    let mut config = client
        .discover(&ExtensionConfig::for_url(NAME, &url, ca.into_bytes()))
        .await
        .unwrap();
    for h in &mut config.status.handlers {
        h.timeout_seconds = Some(timeout);
        h.failure_policy = Some(policy);
    }
    client.register(&config).unwrap();
    client
}

fn validate_request() -> ValidateTopologyRequest {
    ValidateTopologyRequest::default()
}

#[tokio::test]
async fn generate_patches_through_the_example_extension() {
    let (url, ca) = start(Arc::new(Extension::default())).await;
    let client = registered(&url, &ca).await;
    let request: GeneratePatchesRequest = serde_json::from_value(json!({
        "variables": [{"name": "imageRepository", "value": "kindest"}],
        "items": [{
            "uid": "a",
            "holderReference": {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "namespace": "default", "name": "c", "fieldPath": "spec.infrastructureRef"},
            "object": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate", "spec": {"template": {"spec": {}}}}
        }]
    }))
    .unwrap();
    let response = client
        .call_extension(
            "default",
            "c",
            "generate-patches.k8s-upgrade-with-runtimesdk",
            &request,
        )
        .await
        .unwrap();
    assert_eq!(response.items.len(), 1);
    let patch: serde_json::Value = serde_json::from_slice(&response.items[0].patch).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/spec/template/spec/loadBalancer", "value": {"imageRepository": "kindest"}}])
    );
}

#[tokio::test]
async fn lifecycle_answers_come_from_the_file_and_aggregate() {
    let dir = std::env::temp_dir().join(format!("topograph-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let responses = dir.join("responses.json");
    std::fs::write(&responses, r#"{"BeforeClusterUpgrade": {"status": "Success", "retryAfterSeconds": 7, "message": "wait"}}"#).unwrap();
    let extension = Extension {
        lifecycle: topograph_example_extension::Lifecycle {
            responses: Some(responses.clone()),
        },
        calls_log: None,
    };
    let (url, ca) = start(Arc::new(extension)).await;
    let client = registered(&url, &ca).await;
    let request = BeforeClusterUpgradeRequest {
        cluster: json!({"metadata": {"name": "c", "namespace": "default"}}),
        from_kubernetes_version: "v1.30.0".into(),
        to_kubernetes_version: "v1.31.0".into(),
        ..Default::default()
    };
    let response = client
        .call_all_extensions("default", "c", &request)
        .await
        .unwrap();
    assert_eq!(response.retry.retry_after_seconds, 7);
    assert_eq!(response.retry.common.message, "wait");
    // The extension says go.
    std::fs::write(&responses, "{}").unwrap();
    let response = client
        .call_all_extensions("default", "c", &request)
        .await
        .unwrap();
    assert_eq!(response.retry.retry_after_seconds, 0);
    // A Failure answer is an error with its message, whatever the failure policy.
    std::fs::write(
        &responses,
        r#"{"BeforeClusterUpgrade": {"status": "Failure", "message": "not now"}}"#,
    )
    .unwrap();
    let e = client
        .call_all_extensions("default", "c", &request)
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failure);
    assert_eq!(
        e.message,
        "failed to call extension handlers for hook \"BeforeClusterUpgrade.hooks.runtime.cluster.x-k8s.io\": failed to call extension handler \"before-cluster-upgrade.k8s-upgrade-with-runtimesdk\": got failure response with message \"not now\""
    );
}

#[tokio::test]
async fn a_slow_extension_times_out_or_is_ignored() {
    let slow = (200, br#"{"status":"Success"}"#.to_vec());
    let client = fixed(Duration::from_secs(5), slow.clone(), 1, FailurePolicy::Fail).await;
    let started = std::time::Instant::now();
    let e = client
        .call_extension(
            "ns",
            "c",
            "validate-topology.k8s-upgrade-with-runtimesdk",
            &validate_request(),
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "waited past the timeout"
    );
    assert_eq!(e.kind, ErrorKind::Call);
    assert!(e.message.starts_with("failed to call extension handler \"validate-topology.k8s-upgrade-with-runtimesdk\": http call failed: Post \"https://127.0.0.1:"), "{e}");
    assert!(
        e.message.contains(
            "/hooks.runtime.cluster.x-k8s.io/v1alpha1/validatetopology/validate-topology?timeout=1s"
        ),
        "{e}"
    );
    assert!(e.message.contains("context deadline exceeded"), "{e}");

    let client = fixed(Duration::from_secs(5), slow, 1, FailurePolicy::Ignore).await;
    let response = client
        .call_extension(
            "ns",
            "c",
            "validate-topology.k8s-upgrade-with-runtimesdk",
            &validate_request(),
        )
        .await
        .unwrap();
    assert_eq!(response.common.status, ResponseStatus::Success);
}

#[tokio::test]
async fn garbage_wrong_kinds_and_status_codes() {
    for (answer, want) in [
        (
            (200, b"not json".to_vec()),
            "http call failed: failed to decode response: expected ident",
        ),
        (
            (
                200,
                br#"{"kind":"GeneratePatchesResponse","status":"Success"}"#.to_vec(),
            ),
            "http call failed: failed to decode response: got kind \"GeneratePatchesResponse\", expected \"ValidateTopologyResponse\"",
        ),
        (
            (500, b"boom".to_vec()),
            "http call failed: got response with status code 500 != 200: response: \"boom\"",
        ),
    ] {
        let client = fixed(Duration::ZERO, answer.clone(), 5, FailurePolicy::Fail).await;
        let e = client
            .call_extension(
                "ns",
                "c",
                "validate-topology.k8s-upgrade-with-runtimesdk",
                &validate_request(),
            )
            .await
            .unwrap_err();
        assert!(
            e.message.starts_with(&format!(
                "failed to call extension handler \"validate-topology.k8s-upgrade-with-runtimesdk\": {want}"
            )),
            "{e}"
        );
        let client = fixed(Duration::ZERO, answer, 5, FailurePolicy::Ignore).await;
        assert!(
            client
                .call_extension(
                    "ns",
                    "c",
                    "validate-topology.k8s-upgrade-with-runtimesdk",
                    &validate_request()
                )
                .await
                .is_ok()
        );
    }
}

#[tokio::test]
async fn untrusted_certificates_refused_urls_and_plain_http() {
    let (url, _) = start(Arc::new(Extension::default())).await;
    let other_ca = tls::generate(&["127.0.0.1"]).unwrap().ca_pem;
    let client = Client::new();
    let e = client
        .discover(&ExtensionConfig::for_url(NAME, &url, other_ca.into_bytes()))
        .await
        .unwrap_err();
    assert!(
        e.message.starts_with(
            "failed to discover extension \"k8s-upgrade-with-runtimesdk\": http call failed: Post"
        ),
        "{e}"
    );
    assert!(e.message.contains("tls: failed to verify"), "{e}");
    assert!(e.message.contains("invalid peer certificate"), "{e}");

    // Nothing listens there any more once the listener is dropped.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let ca = tls::generate(&["127.0.0.1"]).unwrap().ca_pem;
    let e = client
        .discover(&ExtensionConfig::for_url(
            NAME,
            &format!("https://{closed}"),
            ca.clone().into_bytes(),
        ))
        .await
        .unwrap_err();
    assert!(e.message.contains(&format!("dial tcp {closed}")), "{e}");

    let e = client
        .discover(&ExtensionConfig::for_url(
            NAME,
            &format!("http://{closed}"),
            ca.into_bytes(),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        e.message,
        "failed to discover extension \"k8s-upgrade-with-runtimesdk\": http call failed: failed to compute URL: expected https scheme, got http"
    );
    assert_eq!(e.kind, ErrorKind::Misconfigured);
}

#[tokio::test]
async fn unregistered_handlers_and_wrong_hooks() {
    let client = Client::new();
    let e = client
        .call_extension("ns", "c", "nope.x", &validate_request())
        .await
        .unwrap_err();
    assert_eq!(
        e.message,
        "failed to call extension handler \"nope.x\": failed to get extension handler \"nope.x\" from registry: handler with name \"nope.x\" has not been registered"
    );
    let (url, ca) = start(Arc::new(Extension::default())).await;
    let client = registered(&url, &ca).await;
    let e = client
        .call_extension(
            "ns",
            "c",
            "generate-patches.k8s-upgrade-with-runtimesdk",
            &validate_request(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.message,
        "failed to call extension handler \"generate-patches.k8s-upgrade-with-runtimesdk\": handler does not match GroupHook \"ValidateTopology.hooks.runtime.cluster.x-k8s.io\""
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Whatever an extension answers, the client returns an answer or an error.
    #[test]
    fn any_answer_is_handled(body in proptest::collection::vec(any::<u8>(), 0..256), status in prop_oneof![Just(200u16), Just(404u16), Just(503u16)]) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let client = fixed(Duration::ZERO, (status, body), 5, FailurePolicy::Fail).await;
            let _ = client
                .call_extension("ns", "c", "generate-patches.k8s-upgrade-with-runtimesdk", &GeneratePatchesRequest::default())
                .await;
        });
    }
}
