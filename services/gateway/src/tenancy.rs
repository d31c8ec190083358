//! Tenants: who may call the gateway, on which management clusters and namespaces, and
//! how often.
//!
//! The tenants document (a file, or the data key `tenants.yaml` of a Secret) lists each
//! tenant with the SHA-256 digest of its bearer token, never the token itself:
//!
//! ```yaml
//! tenants:
//! - name: team-a
//!   tokenSha256: 5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8
//!   managementClusters: [mgmt-a]      # or ["*"]
//!   namespaces: [team-a, team-a-dev]  # or ["*"]
//!   admin: false                      # may register management clusters
//!   requestsPerSecond: 20             # optional; no limit without it
//!   burst: 40
//! ```
//!
//! A presented token is hashed and compared with every tenant's digest in constant
//! time, so neither the comparison nor the position of the match tells an attacker how
//! close a guess was.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, RwLock};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tonic::Status;

/// One tenant as the document gives it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TenantSpec {
    name: String,
    #[serde(default)]
    token_sha256: Option<String>,
    #[serde(default)]
    client_common_name: Option<String>,
    #[serde(default)]
    management_clusters: Vec<String>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default)]
    admin: bool,
    #[serde(default)]
    requests_per_second: Option<f64>,
    #[serde(default)]
    burst: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantsDocument {
    #[serde(default)]
    tenants: Vec<TenantSpec>,
}

/// A set of names, or every name (`["*"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Any name.
    All,
    /// These names only.
    Only(BTreeSet<String>),
}

impl Scope {
    fn from_list(list: Vec<String>) -> Scope {
        if list.iter().any(|n| n == "*") {
            Scope::All
        } else {
            Scope::Only(list.into_iter().collect())
        }
    }

    /// Whether `name` is in the scope.
    pub fn contains(&self, name: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Only(names) => names.contains(name),
        }
    }
}

/// A request budget: a token bucket refilled at `per_second`, holding at most `burst`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    /// Sustained requests per second.
    pub per_second: f64,
    /// Requests that may arrive at once.
    pub burst: u32,
}

/// A tenant.
#[derive(Debug)]
pub struct Tenant {
    /// Its name, as logs and metrics show it.
    pub name: String,
    digest: Option<[u8; 32]>,
    /// The common name a client certificate must carry, when mutual TLS binds the
    /// tenant to a certificate as well as a token.
    pub client_common_name: Option<String>,
    /// The management clusters it may use.
    pub management_clusters: Scope,
    /// The namespaces it may use.
    pub namespaces: Scope,
    /// Whether it may register and unregister management clusters.
    pub admin: bool,
    /// Its request budget; `None`: unlimited.
    pub rate: Option<Rate>,
}

impl Tenant {
    /// Refuses (PERMISSION_DENIED, logged) unless the tenant may use `namespace` (when
    /// given) on `management_cluster`. `method` names the RPC for the log.
    pub fn authorize(
        &self,
        method: &str,
        management_cluster: &str,
        namespace: Option<&str>,
    ) -> Result<(), Status> {
        if !self.management_clusters.contains(management_cluster) {
            tracing::warn!(tenant = %self.name, method, management_cluster, "denied: management cluster outside the tenant");
            return Err(Status::permission_denied(format!(
                "tenant {} may not use management cluster {management_cluster:?}",
                self.name
            )));
        }
        if let Some(namespace) = namespace
            && !self.namespaces.contains(namespace)
        {
            tracing::warn!(tenant = %self.name, method, management_cluster, namespace, "denied: namespace outside the tenant");
            return Err(Status::permission_denied(format!(
                "tenant {} may not use namespace {namespace:?} of management cluster {management_cluster:?}",
                self.name
            )));
        }
        Ok(())
    }

    /// Refuses (PERMISSION_DENIED, logged) unless the tenant is an admin.
    pub fn require_admin(&self, method: &str, target: &str) -> Result<(), Status> {
        if self.admin {
            return Ok(());
        }
        tracing::warn!(tenant = %self.name, method, target, "denied: not an admin tenant");
        Err(Status::permission_denied(format!(
            "tenant {} may not manage management clusters",
            self.name
        )))
    }
}

/// The SHA-256 digest of a token, in lower-case hex (what `tokenSha256` holds).
pub fn token_sha256_hex(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

fn parse_digest(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let pair = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

/// Equality whose running time does not depend on where the inputs differ. Written
/// out rather than taken from a crate: it is the whole of what is needed, and
/// `black_box` keeps the optimiser from turning it back into an early exit.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= std::hint::black_box(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// The tenants of one document.
#[derive(Debug, Default)]
pub struct Tenants {
    tenants: Vec<Arc<Tenant>>,
}

impl Tenants {
    /// Reads a tenants document (YAML or JSON). Every problem is reported at once.
    pub fn from_yaml(text: &str) -> Result<Tenants, String> {
        let document: TenantsDocument =
            serde_saphyr::from_str(text).map_err(|e| format!("tenants document: {e}"))?;
        let mut problems = Vec::new();
        let mut names = HashSet::new();
        let mut digests = HashSet::new();
        let mut tenants = Vec::new();
        for (i, spec) in document.tenants.into_iter().enumerate() {
            let at = format!("tenants[{i}]");
            if spec.name.is_empty() {
                problems.push(format!("{at}.name: required"));
            } else if !names.insert(spec.name.clone()) {
                problems.push(format!("{at}.name: {:?} appears twice", spec.name));
            }
            let digest = match &spec.token_sha256 {
                Some(text) => match parse_digest(text) {
                    Some(d) => {
                        if !digests.insert(d) {
                            problems.push(format!(
                                "{at}.tokenSha256: another tenant has the same token"
                            ));
                        }
                        Some(d)
                    }
                    None => {
                        problems.push(format!(
                            "{at}.tokenSha256: must be 64 hex digits (a SHA-256 digest, not the token)"
                        ));
                        None
                    }
                },
                None => None,
            };
            if digest.is_none() && spec.token_sha256.is_none() {
                problems.push(format!("{at}.tokenSha256: required"));
            }
            let rate = match (spec.requests_per_second, spec.burst) {
                (None, None) => None,
                (Some(r), burst) if r.is_finite() && r > 0.0 => Some(Rate {
                    per_second: r,
                    // A burst of at least one request, or nothing could ever pass.
                    burst: burst
                        .unwrap_or_else(|| r.ceil().min(f64::from(u32::MAX)) as u32)
                        .max(1),
                }),
                (Some(_), _) => {
                    problems.push(format!("{at}.requestsPerSecond: must be a positive number"));
                    None
                }
                (None, Some(_)) => {
                    problems.push(format!("{at}.burst: needs requestsPerSecond"));
                    None
                }
            };
            tenants.push(Arc::new(Tenant {
                name: spec.name,
                digest,
                client_common_name: spec.client_common_name,
                management_clusters: Scope::from_list(spec.management_clusters),
                namespaces: Scope::from_list(spec.namespaces),
                admin: spec.admin,
                rate,
            }));
        }
        if problems.is_empty() {
            Ok(Tenants { tenants })
        } else {
            Err(format!("tenants document: {}", problems.join("; ")))
        }
    }

    /// The tenant whose token this is. Every digest is compared, whatever matches.
    pub fn authenticate(&self, token: &str) -> Option<Arc<Tenant>> {
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for tenant in &self.tenants {
            if let Some(digest) = &tenant.digest
                && constant_time_eq(digest, &presented)
            {
                found = Some(tenant.clone());
            }
        }
        found
    }

    /// How many tenants there are.
    pub fn len(&self) -> usize {
        self.tenants.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tenants.is_empty()
    }
}

/// The current tenants, replaced whole when their source changes.
#[derive(Debug, Default)]
pub struct TenantStore {
    current: RwLock<Arc<Tenants>>,
}

impl TenantStore {
    /// A store holding `tenants`.
    pub fn new(tenants: Tenants) -> Self {
        TenantStore {
            current: RwLock::new(Arc::new(tenants)),
        }
    }

    /// The tenants now.
    pub fn get(&self) -> Arc<Tenants> {
        self.current
            .read()
            .map(|t| t.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// Replaces the tenants.
    pub fn set(&self, tenants: Tenants) {
        match self.current.write() {
            Ok(mut current) => *current = Arc::new(tenants),
            Err(e) => *e.into_inner() = Arc::new(tenants),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> String {
        format!(
            "tenants:\n\
             - name: team-a\n  tokenSha256: {}\n  managementClusters: [mgmt-a]\n  namespaces: [team-a]\n\
             - name: ops\n  tokenSha256: {}\n  managementClusters: ['*']\n  namespaces: ['*']\n  admin: true\n  requestsPerSecond: 2\n  burst: 3\n",
            token_sha256_hex("secret-a"),
            token_sha256_hex("secret-ops")
        )
    }

    #[test]
    fn tokens_match_by_digest_only() {
        let tenants = Tenants::from_yaml(&document()).unwrap();
        assert_eq!(tenants.authenticate("secret-a").unwrap().name, "team-a");
        assert_eq!(tenants.authenticate("secret-ops").unwrap().name, "ops");
        assert!(tenants.authenticate("secret-b").is_none());
        assert!(tenants.authenticate("").is_none());
        // The digest itself is not a token.
        assert!(
            tenants
                .authenticate(&token_sha256_hex("secret-a"))
                .is_none()
        );
    }

    #[test]
    fn digests_are_sha256_hex() {
        assert_eq!(
            token_sha256_hex("password"),
            "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"
        );
        assert_eq!(
            parse_digest(&token_sha256_hex("x")),
            Some(Sha256::digest(b"x").into())
        );
        assert_eq!(parse_digest("zz"), None);
        assert_eq!(parse_digest(&"g".repeat(64)), None);
    }

    #[test]
    fn constant_time_comparison_is_equality() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"bbc"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn scopes_limit_clusters_and_namespaces() {
        let tenants = Tenants::from_yaml(&document()).unwrap();
        let a = tenants.authenticate("secret-a").unwrap();
        assert!(a.authorize("m", "mgmt-a", Some("team-a")).is_ok());
        assert!(a.authorize("m", "mgmt-a", None).is_ok());
        let other_ns = a.authorize("m", "mgmt-a", Some("team-b")).unwrap_err();
        assert_eq!(other_ns.code(), tonic::Code::PermissionDenied);
        let other_mc = a.authorize("m", "mgmt-b", Some("team-a")).unwrap_err();
        assert_eq!(other_mc.code(), tonic::Code::PermissionDenied);
        assert_eq!(
            a.require_admin("m", "x").unwrap_err().code(),
            tonic::Code::PermissionDenied
        );
        let ops = tenants.authenticate("secret-ops").unwrap();
        assert!(ops.authorize("m", "anything", Some("any")).is_ok());
        assert!(ops.require_admin("m", "x").is_ok());
        assert_eq!(
            ops.rate,
            Some(Rate {
                per_second: 2.0,
                burst: 3
            })
        );
        assert_eq!(a.rate, None);
    }

    #[test]
    fn bad_documents_name_every_problem() {
        let text = format!(
            "tenants:\n- name: a\n  tokenSha256: nothex\n- name: a\n  tokenSha256: {d}\n- name: b\n  tokenSha256: {d}\n  requestsPerSecond: -1\n- name: c\n",
            d = token_sha256_hex("t")
        );
        let e = Tenants::from_yaml(&text).unwrap_err();
        assert!(
            e.contains("tenants[0].tokenSha256: must be 64 hex digits"),
            "{e}"
        );
        assert!(e.contains("tenants[1].name: \"a\" appears twice"), "{e}");
        assert!(
            e.contains("tenants[2].tokenSha256: another tenant has the same token"),
            "{e}"
        );
        assert!(e.contains("tenants[2].requestsPerSecond"), "{e}");
        assert!(e.contains("tenants[3].tokenSha256: required"), "{e}");
        assert!(Tenants::from_yaml("tenants:\n- name: a\n  tokn: x\n").is_err());
    }
}
