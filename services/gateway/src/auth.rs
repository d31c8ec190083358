//! Authentication and rate limiting, as one tower layer in front of the gateway
//! service: a request without a known bearer token never reaches a handler. The layer
//! puts the [`Caller`] in the request's extensions; handlers authorise the management
//! cluster and namespace they touch with [`caller`] and [`Tenant::authorize`].
//!
//! Health and reflection stay open: probes carry no tokens and reflection describes
//! the contract only.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::Status;
use tonic::body::Body;
use tonic::codegen::http;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};
use tower::{Layer, Service};

use crate::certificate::subject_common_name;
use crate::ratelimit::RateLimiter;
use crate::tenancy::{Tenant, TenantStore};

/// The path prefix of the methods that need a tenant.
pub const GUARDED_PREFIX: &str = "/topograph.gateway.v1.GatewayService/";

/// Who is calling: put in the request extensions by [`AuthLayer`].
#[derive(Clone, Debug)]
pub struct Caller(pub Arc<Tenant>);

/// The authenticated tenant of a request, or UNAUTHENTICATED when there is none (a
/// router built without [`AuthLayer`] serves nobody).
pub fn caller<T>(request: &tonic::Request<T>) -> Result<Arc<Tenant>, Status> {
    request
        .extensions()
        .get::<Caller>()
        .map(|c| c.0.clone())
        .ok_or_else(|| Status::unauthenticated("no tenant: a bearer token is required"))
}

/// Authenticates bearer tokens and spends the tenant's request budget.
#[derive(Clone, Debug)]
pub struct AuthLayer {
    tenants: Arc<TenantStore>,
    limiter: Arc<RateLimiter>,
}

impl AuthLayer {
    /// The layer.
    pub fn new(tenants: Arc<TenantStore>, limiter: Arc<RateLimiter>) -> Self {
        AuthLayer { tenants, limiter }
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Auth<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Auth {
            inner,
            tenants: self.tenants.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

/// See [`AuthLayer`].
#[derive(Clone, Debug)]
pub struct Auth<S> {
    inner: S,
    tenants: Arc<TenantStore>,
    limiter: Arc<RateLimiter>,
}

/// The token of an `authorization: Bearer <token>` header.
fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl<S> Auth<S> {
    fn admit(&self, request: &http::Request<Body>) -> Result<Arc<Tenant>, Status> {
        let method = request.uri().path();
        let tls = request.extensions().get::<TlsConnectInfo<TcpConnectInfo>>();
        let peer = request
            .extensions()
            .get::<TcpConnectInfo>()
            .or(tls.map(TlsConnectInfo::get_ref))
            .and_then(|i| i.remote_addr())
            .map(|a| a.to_string())
            .unwrap_or_default();
        let Some(token) = bearer(request.headers()) else {
            tracing::warn!(method, peer, "refused: no bearer token");
            return Err(Status::unauthenticated(
                "a bearer token is required (authorization: Bearer <token>)",
            ));
        };
        let Some(tenant) = self.tenants.get().authenticate(token) else {
            tracing::warn!(method, peer, "refused: unknown bearer token");
            return Err(Status::unauthenticated("the bearer token is not valid"));
        };
        if let Some(wanted) = &tenant.client_common_name {
            let presented = tls
                .and_then(TlsConnectInfo::peer_certs)
                .and_then(|certs| certs.first().and_then(|c| subject_common_name(c)));
            if presented.as_deref() != Some(wanted.as_str()) {
                tracing::warn!(tenant = %tenant.name, method, peer, presented = ?presented, "refused: the client certificate is not the tenant's");
                return Err(Status::unauthenticated(
                    "this token needs the tenant's client certificate",
                ));
            }
        }
        if let Some(rate) = tenant.rate
            && let Err(wait) = self.limiter.check(&tenant.name, rate)
        {
            tracing::warn!(tenant = %tenant.name, method, "refused: request rate exceeded");
            return Err(Status::resource_exhausted(format!(
                "tenant {} exceeds its {} requests per second; retry in {} ms",
                tenant.name,
                rate.per_second,
                wait.as_millis().max(1)
            )));
        }
        Ok(tenant)
    }
}

impl<S> Service<http::Request<Body>> for Auth<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<Body>) -> Self::Future {
        if request.uri().path().starts_with(GUARDED_PREFIX) {
            match self.admit(&request) {
                Ok(tenant) => {
                    request.extensions_mut().insert(Caller(tenant));
                }
                Err(status) => return Box::pin(async move { Ok(status.into_http()) }),
            }
        }
        Box::pin(self.inner.call(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_from_the_authorization_header() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(http::header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert(http::header::AUTHORIZATION, "bearer  abc ".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert(http::header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&headers), None);
        headers.insert(http::header::AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }
}
