//! The Runtime SDK client, as Cluster API's (`internal/runtime/client`) behaves:
//!
//! * [`Client::discover`] calls an extension's discovery endpoint (10 s timeout),
//!   checks the handlers it lists (unique DNS-1123 names, timeouts 0..=30, failure
//!   policies, hooks the catalog knows), defaults them (10 s, `Fail`) and names them
//!   `<handler>.<ExtensionConfig name>` in the status it returns;
//! * [`Client::call_extension`] calls one registered handler for an object: the hook
//!   must match, the object's namespace must match the ExtensionConfig's selector, the
//!   request carries the ExtensionConfig's settings under its own, the call is bounded
//!   by the handler's timeout (`?timeout=10s` on the URL, as Cluster API sends it);
//!   with failure policy `Ignore` a failed call (refused, TLS, timeout, status code,
//!   undecodable answer) gives a default success response; an answer with status
//!   `Failure` is always an error;
//! * [`Client::call_all_extensions`] calls every handler of a hook whose selector
//!   matches, stopping at the first error, and aggregates the answers (lowest non-zero
//!   `retryAfterSeconds`, messages joined).
//!
//! Only `https` URLs are accepted, as Cluster API accepts only them; the server is
//! verified with the ExtensionConfig's `caBundle`, nothing else. A response whose
//! `kind` is present and not the hook's response kind is refused as undecodable.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::catalog::{self, Hook};
use crate::config::{ClientConfig, ExtensionConfig, ExtensionHandler};
use crate::error::{Error, ErrorKind};
use crate::hooks::{
    self, DEFAULT_HANDLERS_TIMEOUT_SECONDS, DiscoveryRequest, DiscoveryResponse, FailurePolicy,
    HookRequest, HookResponse, ResponseStatus, TypeMeta,
};
use crate::registry::{Registry, aggregate};

/// Discovery's timeout.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest answer read from an extension.
pub const MAX_RESPONSE: usize = 64 * 1024 * 1024;

/// The Runtime SDK client: a registry of handlers and the TLS set-ups per CA bundle.
#[derive(Default)]
pub struct Client {
    registry: RwLock<Registry>,
    tls: Mutex<HashMap<Vec<u8>, Arc<rustls::ClientConfig>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let handlers: Vec<String> = self.registry(|r| r.all().map(|h| h.name.clone()).collect());
        f.debug_struct("Client")
            .field("handlers", &handlers)
            .finish_non_exhaustive()
    }
}

/// Where a call goes.
struct Target {
    url: String,
    host: String,
    port: u16,
    authority: String,
    path_and_query: String,
}

/// A call's failure before the policy is applied: whether `Ignore` may ignore it.
struct CallFailure {
    ignorable: bool,
    message: String,
}

impl CallFailure {
    fn call(message: impl Into<String>) -> Self {
        CallFailure {
            ignorable: true,
            message: message.into(),
        }
    }

    fn config(message: impl Into<String>) -> Self {
        CallFailure {
            ignorable: false,
            message: message.into(),
        }
    }
}

impl Client {
    /// A client with an empty registry.
    pub fn new() -> Self {
        Client::default()
    }

    /// A client over `registry`.
    pub fn with_registry(registry: Registry) -> Self {
        Client {
            registry: RwLock::new(registry),
            tls: Mutex::default(),
        }
    }

    /// Reads the registry.
    pub fn registry<T>(&self, read: impl FnOnce(&Registry) -> T) -> T {
        match self.registry.read() {
            Ok(r) => read(&r),
            Err(poisoned) => read(&poisoned.into_inner()),
        }
    }

    /// Changes the registry.
    pub fn registry_mut<T>(&self, write: impl FnOnce(&mut Registry) -> T) -> T {
        match self.registry.write() {
            Ok(mut r) => write(&mut r),
            Err(poisoned) => write(&mut poisoned.into_inner()),
        }
    }

    /// Registers `config`'s handlers (from its status).
    pub fn register(&self, config: &ExtensionConfig) -> Result<(), Error> {
        self.registry_mut(|r| r.add(config)).map_err(|e| {
            e.wrap(format_args!(
                "failed to register ExtensionConfig {:?}",
                config.metadata.name
            ))
        })
    }

    /// Discovers `config`'s handlers and registers them; returns the ExtensionConfig
    /// with its status' handlers filled.
    pub async fn discover_and_register(
        &self,
        config: &ExtensionConfig,
    ) -> Result<ExtensionConfig, Error> {
        let discovered = self.discover(config).await?;
        self.register(&discovered)?;
        Ok(discovered)
    }

    /// Calls the discovery endpoint of `config`'s extension and returns `config` with
    /// the handlers found in its status.
    pub async fn discover(&self, config: &ExtensionConfig) -> Result<ExtensionConfig, Error> {
        let name = &config.metadata.name;
        let wrap = |e: Error| e.wrap(format_args!("failed to discover extension {name:?}"));
        let request = DiscoveryRequest {
            type_meta: TypeMeta::of(&Hook::Discovery.request_kind()),
        };
        let response: DiscoveryResponse = self
            .http_call(
                &config.spec.client_config,
                Hook::Discovery,
                "",
                &request,
                DISCOVERY_TIMEOUT,
            )
            .await
            .map_err(|f| {
                wrap(Error::new(
                    if f.ignorable {
                        ErrorKind::Call
                    } else {
                        ErrorKind::Misconfigured
                    },
                    f.message,
                ))
            })?;
        if response.common.status == ResponseStatus::Failure {
            // Cluster API leaves the message out of the error (it would make every
            // reconcile's error unique); the message still helps a person here.
            return Err(wrap(Error::new(
                ErrorKind::Failure,
                format!(
                    "got failure response with message {:?}",
                    response.common.message
                ),
            )));
        }
        let handlers = validate_discovery(&response).map_err(|e| {
            wrap(Error::new(
                ErrorKind::Discovery,
                format!("failed to validate discovery response: {e}"),
            ))
        })?;
        let mut discovered = config.clone();
        discovered.status.handlers = handlers
            .into_iter()
            .map(|h| ExtensionHandler {
                name: format!("{}.{name}", h.name),
                request_hook: h.request_hook,
                timeout_seconds: h.timeout_seconds,
                failure_policy: h.failure_policy,
            })
            .collect();
        Ok(discovered)
    }

    /// Calls the handler registered as `name` for the object `namespace`/`object`.
    pub async fn call_extension<R: HookRequest>(
        &self,
        namespace: &str,
        object: &str,
        name: &str,
        request: &R,
    ) -> Result<R::Response, Error> {
        let wrap = |e: Error| e.wrap(format_args!("failed to call extension handler {name:?}"));
        let registration = self.registry(|r| -> Result<_, Error> {
            let registration = r.get(name)?.clone();
            if registration.group != catalog::GROUP || registration.hook_name != R::HOOK.name() {
                return Err(Error::new(
                    ErrorKind::NotRegistered,
                    format!(
                        "handler does not match GroupHook {:?}",
                        R::HOOK.group_hook()
                    ),
                ));
            }
            match r.namespace_matches(&registration, namespace) {
                Err(e) => Err(Error::new(ErrorKind::Misconfigured, e)),
                Ok(false) => Err(Error::new(
                    ErrorKind::Misconfigured,
                    format!("namespaceSelector did not match object {namespace}/{object}"),
                )),
                Ok(true) => Ok(registration),
            }
        });
        let registration = registration.map_err(wrap)?;
        let timeout = Duration::from_secs(
            registration
                .timeout_seconds
                .unwrap_or(DEFAULT_HANDLERS_TIMEOUT_SECONDS)
                .max(0) as u64,
        );
        // The ExtensionConfig's settings, overridden by the request's own.
        let mut request = request.clone();
        let mut settings = registration.settings.clone();
        settings.extend(std::mem::take(request.settings_mut()));
        *request.settings_mut() = settings;
        *request.type_meta_mut() = TypeMeta::of(&R::HOOK.request_kind());
        let result: Result<R::Response, CallFailure> = self
            .http_call(
                &registration.client_config,
                R::HOOK,
                registration.handler_name(),
                &request,
                timeout,
            )
            .await;
        let response = match result {
            Ok(response) => response,
            Err(f) if f.ignorable && registration.failure_policy == FailurePolicy::Ignore => {
                #[cfg(feature = "client")]
                tracing::warn!(
                    handler = name,
                    error = %f.message,
                    "ignoring error calling extension handler because of FailurePolicy \"Ignore\""
                );
                let mut response = R::Response::default();
                response.common_mut().status = ResponseStatus::Success;
                response.common_mut().message.clear();
                return Ok(response);
            }
            Err(f) => {
                return Err(wrap(Error::new(
                    if f.ignorable {
                        ErrorKind::Call
                    } else {
                        ErrorKind::Misconfigured
                    },
                    f.message,
                )));
            }
        };
        if response.common().status == ResponseStatus::Failure {
            return Err(wrap(Error::new(
                ErrorKind::Failure,
                format!(
                    "got failure response with message {:?}",
                    response.common().message
                ),
            )));
        }
        Ok(response)
    }

    /// Calls every handler of the request's hook whose selector serves `namespace`, in
    /// name order, stopping at the first error; the answers are aggregated: status
    /// Success, the lowest non-zero `retryAfterSeconds`, messages joined by `, `.
    pub async fn call_all_extensions<R: HookRequest>(
        &self,
        namespace: &str,
        object: &str,
        request: &R,
    ) -> Result<R::Response, Error> {
        let hook = R::HOOK;
        let registrations = self.registry(|r| -> Result<Vec<String>, Error> {
            let mut names = Vec::new();
            for registration in r.list(hook) {
                let matches = r.namespace_matches(registration, namespace).map_err(|e| {
                    Error::new(
                        ErrorKind::Misconfigured,
                        format!(
                            "failed to call extension handler {:?}: {e}",
                            registration.name
                        ),
                    )
                })?;
                if matches {
                    names.push(registration.name.clone());
                }
            }
            Ok(names)
        });
        let wrap = |e: Error| {
            e.wrap(format_args!(
                "failed to call extension handlers for hook {:?}",
                hook.group_hook()
            ))
        };
        let mut aggregated = R::Response::default();
        aggregated.common_mut().status = ResponseStatus::Success;
        let mut messages = Vec::new();
        let mut retry = 0;
        for name in registrations.map_err(wrap)? {
            let response = self
                .call_extension(namespace, object, &name, request)
                .await
                .map_err(wrap)?;
            retry = lowest_non_zero(retry, response.retry_after_seconds().unwrap_or(0));
            if !response.common().message.is_empty() {
                messages.push(response.common().message.clone());
            }
        }
        aggregated.set_retry_after_seconds(retry);
        aggregated.common_mut().message = messages.join(", ");
        Ok(aggregated)
    }

    fn tls_for(&self, ca_bundle: &[u8]) -> Result<Arc<rustls::ClientConfig>, String> {
        let mut cache = match self.tls.lock() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(config) = cache.get(ca_bundle) {
            return Ok(config.clone());
        }
        let config = Arc::new(crate::tls::client_config(ca_bundle)?);
        cache.insert(ca_bundle.to_vec(), config.clone());
        Ok(config)
    }

    /// POSTs `request` to the handler's URL and decodes the answer.
    async fn http_call<Q: Serialize, A: HookResponse>(
        &self,
        config: &ClientConfig,
        hook: Hook,
        handler: &str,
        request: &Q,
        timeout: Duration,
    ) -> Result<A, CallFailure> {
        let target = url_for_extension(config, hook, handler, timeout)
            .map_err(|e| CallFailure::config(format!("http call failed: {e}")))?;
        let tls = self.tls_for(&config.ca_bundle).map_err(|e| {
            CallFailure::config(format!(
                "http call failed: failed to create tls config: {e}"
            ))
        })?;
        let body = serde_json::to_vec(request).map_err(|e| {
            CallFailure::config(format!(
                "http call failed: failed to marshall request object: {e}"
            ))
        })?;
        let post = post(&target, tls, body);
        let outcome = if timeout.is_zero() {
            post.await
        } else {
            match tokio::time::timeout(timeout, post).await {
                Ok(outcome) => outcome,
                Err(_) => Err(format!(
                    "context deadline exceeded (no answer within the handler's timeout of {}s)",
                    timeout.as_secs()
                )),
            }
        };
        let (status, body) = outcome.map_err(|e| {
            CallFailure::call(format!("http call failed: Post {:?}: {e}", target.url))
        })?;
        if status != 200 {
            return Err(CallFailure::call(format!(
                "http call failed: got response with status code {status} != 200: response: {:?}",
                String::from_utf8_lossy(&body)
            )));
        }
        let response: A = serde_json::from_slice(&body).map_err(|e| {
            CallFailure::call(format!("http call failed: failed to decode response: {e}"))
        })?;
        let kind = &response.type_meta().kind;
        let want = hook.response_kind();
        if !kind.is_empty() && *kind != want {
            return Err(CallFailure::call(format!(
                "http call failed: failed to decode response: got kind {kind:?}, expected {want:?}"
            )));
        }
        let api_version = &response.type_meta().api_version;
        if !api_version.is_empty() && api_version != hooks::API_VERSION {
            return Err(CallFailure::call(format!(
                "http call failed: failed to decode response: got apiVersion {api_version:?}, expected {:?}",
                hooks::API_VERSION
            )));
        }
        Ok(response)
    }
}

fn lowest_non_zero(a: i32, b: i32) -> i32 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// The handler's URL: the ExtensionConfig's `url` (https only) or its Service
/// (`https://<name>.<namespace>.svc[:port]`), its path joined with the hook's path, and
/// `?timeout=<d>` when the call has a timeout.
fn url_for_extension(
    config: &ClientConfig,
    hook: Hook,
    handler: &str,
    timeout: Duration,
) -> Result<Target, String> {
    let (host, port, prefix) = if let Some(service) = &config.service {
        let port = service.port.unwrap_or(443);
        let port = u16::try_from(port)
            .map_err(|_| format!("failed to compute URL: invalid port {port}"))?;
        (
            format!("{}.{}.svc", service.name, service.namespace),
            port,
            service.path.clone().unwrap_or_default(),
        )
    } else {
        let Some(url) = &config.url else {
            return Err(
                "failed to compute URL: at least one of service and url should be defined in config".into(),
            );
        };
        let uri: http::Uri = url.parse().map_err(|e| {
            format!("failed to compute URL: failed to parse url from clientConfig: {e}")
        })?;
        let scheme = uri.scheme_str().unwrap_or_default();
        if scheme != "https" {
            return Err(format!(
                "failed to compute URL: expected https scheme, got {scheme}"
            ));
        }
        let Some(authority) = uri.authority() else {
            return Err(
                "failed to compute URL: failed to parse url from clientConfig: no host".into(),
            );
        };
        if uri.query().is_some() || authority.as_str().contains('@') {
            return Err(
                "failed to compute URL: failed to parse url from clientConfig: user info and query are not allowed".into(),
            );
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        (
            host,
            authority.port_u16().unwrap_or(443),
            uri.path().to_string(),
        )
    };
    let mut path = format!("{}{}", prefix.trim_end_matches('/'), hook.path(handler));
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let mut path_and_query = path.clone();
    if !timeout.is_zero() {
        path_and_query.push_str(&format!("?timeout={}s", timeout.as_secs()));
    }
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Ok(Target {
        url: format!("https://{authority}{path_and_query}"),
        host,
        port,
        authority,
        path_and_query,
    })
}

/// One POST over a fresh TLS connection; the answer's status and body.
async fn post(
    target: &Target,
    tls: Arc<rustls::ClientConfig>,
    body: Vec<u8>,
) -> Result<(u16, Bytes), String> {
    let tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| format!("dial tcp {}: {e}", target.authority))?;
    let server_name = rustls_pki_types::ServerName::try_from(target.host.clone())
        .map_err(|e| format!("invalid server name {:?}: {e}", target.host))?;
    let stream = TlsConnector::from(tls)
        .connect(server_name, tcp)
        .await
        .map_err(|e| {
            format!("tls: failed to verify the extension's certificate or handshake: {e}")
        })?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = hyper::Request::post(target.path_and_query.as_str())
        .header(http::header::HOST, target.authority.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("failed to create http request: {e}"))?;
    let outcome = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = Limited::new(response.into_body(), MAX_RESPONSE)
            .collect()
            .await
            .map_err(|e| format!("failed to read response body: {e}"))?
            .to_bytes();
        Ok((status, body))
    }
    .await;
    driver.abort();
    outcome
}

/// Defaults and checks a discovery response's handlers as Cluster API does.
fn validate_discovery(
    response: &DiscoveryResponse,
) -> Result<Vec<hooks::ExtensionHandler>, String> {
    let mut errors = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let mut handlers = Vec::new();
    for handler in &response.handlers {
        let mut handler = handler.clone();
        handler.failure_policy.get_or_insert(FailurePolicy::Fail);
        handler
            .timeout_seconds
            .get_or_insert(DEFAULT_HANDLERS_TIMEOUT_SECONDS);
        if names.contains(&handler.name.as_str()) {
            errors.push(format!("duplicate name for handler {} found", handler.name));
        }
        if let Err(e) = dns1123_label(&handler.name) {
            errors.push(format!("handler name {} is not valid: [{e}]", handler.name));
        }
        if let Some(t) = handler.timeout_seconds
            && !(0..=30).contains(&t)
        {
            errors.push(format!(
                "handler {} timeoutSeconds {t} must be between 0 and 30",
                handler.name
            ));
        }
        match catalog::parse_group_version(&handler.request_hook.api_version) {
            Err(e) => errors.push(format!(
                "handler {} requestHook APIVersion {} is not valid: {e}",
                handler.name, handler.request_hook.api_version
            )),
            Ok((group, version)) => {
                if group != catalog::GROUP
                    || version != catalog::VERSION
                    || Hook::from_name(&handler.request_hook.hook)
                        .is_none_or(|h| h == Hook::Discovery)
                {
                    errors.push(format!(
                        "handler {} requestHook {}/{} is not in the Runtime SDK catalog",
                        handler.name, handler.request_hook.api_version, handler.request_hook.hook
                    ));
                }
            }
        }
        names.push(&response.handlers[handlers.len()].name);
        handlers.push(handler);
    }
    if errors.is_empty() {
        Ok(handlers)
    } else {
        Err(aggregate(&errors))
    }
}

/// Kubernetes' `IsDNS1123Label`: lowercase alphanumerics and `-`, alphanumeric at both
/// ends, at most 63 characters.
fn dns1123_label(name: &str) -> Result<(), String> {
    let mut problems = Vec::new();
    if name.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let ok_ends = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !ok_chars || !ok_ends {
        problems.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string(),
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServiceReference;

    #[test]
    fn urls() {
        let config = ClientConfig {
            url: Some("https://127.0.0.1:8443/prefix/".into()),
            ..Default::default()
        };
        let t = url_for_extension(
            &config,
            Hook::GeneratePatches,
            "Gen",
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(
            t.url,
            "https://127.0.0.1:8443/prefix/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/gen?timeout=10s"
        );
        let config = ClientConfig {
            service: Some(ServiceReference {
                namespace: "ns".into(),
                name: "svc".into(),
                path: None,
                port: None,
            }),
            ..Default::default()
        };
        let t = url_for_extension(&config, Hook::Discovery, "", Duration::ZERO).unwrap();
        assert_eq!(
            t.url,
            "https://svc.ns.svc:443/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery"
        );
        let config = ClientConfig {
            url: Some("http://127.0.0.1:8080".into()),
            ..Default::default()
        };
        assert_eq!(
            url_for_extension(&config, Hook::Discovery, "", Duration::ZERO)
                .err()
                .unwrap(),
            "failed to compute URL: expected https scheme, got http"
        );
    }

    #[test]
    fn discovery_validation() {
        let response: DiscoveryResponse = serde_json::from_value(serde_json::json!({
            "status": "Success",
            "handlers": [
                {"name": "ok", "requestHook": {"apiVersion": hooks::API_VERSION, "hook": "GeneratePatches"}},
                {"name": "ok", "requestHook": {"apiVersion": hooks::API_VERSION, "hook": "GeneratePatches"}},
                {"name": "Bad_Name", "requestHook": {"apiVersion": hooks::API_VERSION, "hook": "NoSuchHook"}, "timeoutSeconds": 31}
            ]
        }))
        .unwrap();
        let e = validate_discovery(&response).unwrap_err();
        assert!(e.contains("duplicate name for handler ok found"), "{e}");
        assert!(
            e.contains("handler Bad_Name timeoutSeconds 31 must be between 0 and 30"),
            "{e}"
        );
        assert!(e.contains("requestHook hooks.runtime.cluster.x-k8s.io/v1alpha1/NoSuchHook is not in the Runtime SDK catalog"), "{e}");
    }
}
