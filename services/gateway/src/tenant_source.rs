//! Where the tenants document comes from: a file, or the data key `tenants.yaml` of a
//! Secret. Sources are re-read periodically so tokens can be rotated without a
//! restart; a document that cannot be read or is invalid keeps the previous tenants.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use topograph_management::ManagementCluster;

use crate::tenancy::{TenantStore, Tenants};

/// The Secret data key holding the document.
pub const SECRET_KEY: &str = "tenants.yaml";

/// A place the tenants document is read from.
#[derive(Clone)]
pub enum TenantSource {
    /// A YAML file.
    File(PathBuf),
    /// A Secret of a cluster, data key [`SECRET_KEY`].
    Secret {
        /// The cluster.
        home: Arc<ManagementCluster>,
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
    },
}

impl TenantSource {
    /// Reads and checks the document.
    pub async fn read(&self) -> Result<Tenants, String> {
        match self {
            TenantSource::File(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("reading {}: {e}", path.display()))?;
                Tenants::from_yaml(&text).map_err(|e| format!("{}: {e}", path.display()))
            }
            TenantSource::Secret {
                home,
                namespace,
                name,
            } => {
                let api: Api<Secret> = Api::namespaced(home.client().clone(), namespace);
                let secret = api
                    .get(name)
                    .await
                    .map_err(|e| format!("reading Secret {namespace}/{name}: {e}"))?;
                let bytes = secret
                    .data
                    .as_ref()
                    .and_then(|d| d.get(SECRET_KEY))
                    .map(|b| b.0.clone())
                    .ok_or_else(|| {
                        format!("Secret {namespace}/{name} has no data key {SECRET_KEY}")
                    })?;
                let text = String::from_utf8(bytes)
                    .map_err(|_| format!("Secret {namespace}/{name}: {SECRET_KEY} is not UTF-8"))?;
                Tenants::from_yaml(&text).map_err(|e| format!("Secret {namespace}/{name}: {e}"))
            }
        }
    }
}

/// Re-reads `source` every `every` into `store`, until the task is dropped.
pub async fn keep_reloading(source: TenantSource, store: Arc<TenantStore>, every: Duration) {
    let mut last_error = None;
    loop {
        tokio::time::sleep(every).await;
        match source.read().await {
            Ok(tenants) => {
                store.set(tenants);
                last_error = None;
            }
            Err(e) => {
                // Logged once per distinct problem, not every few seconds.
                if last_error.as_ref() != Some(&e) {
                    tracing::warn!(error = %e, "tenants not reloaded; the previous ones stay");
                    last_error = Some(e);
                }
            }
        }
    }
}
