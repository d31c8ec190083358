//! Management-cluster registration (admin tenants only): a kubeconfig is checked by
//! connecting with it, then written where the registry reads management clusters from
//! (the labelled Secrets when that source is configured, else the directory), and the
//! registry is refreshed so the gateway can use it at once. Appliers pick it up on
//! their own next refresh.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use tonic::Status;
use topograph_management::ManagementCluster;
use topograph_management::registry::SECRET_LABEL;
use topograph_proto::gateway::v1 as pb;

use crate::state::State;
use crate::tenancy::Tenant;
use topograph_api::Violation;
use topograph_proto::violations::invalid;

/// How long the connection check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// A management cluster name: a DNS label (it becomes a file name, a Secret name and a
/// part of every queue key).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

fn check_name(name: &str) -> Result<(), Status> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(invalid(vec![Violation::new(
            "name",
            format!(
                "Invalid value: {name:?}: lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit"
            ),
        )]))
    }
}

/// Writes `text` to `path` whole: a reader sees the old file or the new one, never a
/// part. Only the owner may read it (it holds credentials).
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("kubeconfig");
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let result = (|| {
        let mut file = options.open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn secret(name: &str, namespace: &str, kubeconfig: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            labels: Some([(SECRET_LABEL.to_string(), name.to_string())].into()),
            ..ObjectMeta::default()
        },
        data: Some(
            [(
                "value".to_string(),
                ByteString(kubeconfig.as_bytes().to_vec()),
            )]
            .into(),
        ),
        type_: Some("Opaque".to_string()),
        ..Secret::default()
    }
}

fn secrets_api(home: &ManagementCluster, namespace: &str) -> Api<Secret> {
    Api::namespaced(home.client().clone(), namespace)
}

/// The RegisterManagementCluster RPC.
pub async fn register(
    state: &State,
    tenant: &Tenant,
    request: pb::RegisterManagementClusterRequest,
) -> Result<pb::RegisterManagementClusterResponse, Status> {
    tenant.require_admin("RegisterManagementCluster", &request.name)?;
    check_name(&request.name)?;
    let text = String::from_utf8(request.kubeconfig).map_err(|_| {
        invalid(vec![Violation::new(
            "kubeconfig",
            "Invalid value: not UTF-8",
        )])
    })?;
    let candidate = ManagementCluster::from_kubeconfig_yaml(&text)
        .await
        .map_err(|e| {
            invalid(vec![Violation::new(
                "kubeconfig",
                format!("Invalid value: {e}"),
            )])
        })?;
    match tokio::time::timeout(CHECK_TIMEOUT, candidate.client().apiserver_version()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            return Err(Status::failed_precondition(format!(
                "the kubeconfig does not reach its API server: {e}"
            )));
        }
        Err(_) => {
            return Err(Status::failed_precondition(format!(
                "the kubeconfig's API server did not answer within {CHECK_TIMEOUT:?}"
            )));
        }
    }
    let existed = state.registry.names().contains(&request.name);
    let name = &request.name;
    if let Some((home, namespace)) = &state.registration.secrets {
        let api = secrets_api(home, namespace);
        let wanted = secret(name, namespace, &text);
        match api.get_opt(name).await {
            Ok(Some(current)) => {
                let mut replacement = wanted;
                replacement.metadata.resource_version = current.metadata.resource_version;
                api.replace(name, &PostParams::default(), &replacement)
                    .await
                    .map_err(|e| {
                        Status::unavailable(format!("writing Secret {namespace}/{name}: {e}"))
                    })?;
            }
            Ok(None) => {
                api.create(&PostParams::default(), &wanted)
                    .await
                    .map_err(|e| {
                        Status::unavailable(format!("creating Secret {namespace}/{name}: {e}"))
                    })?;
            }
            Err(e) => {
                return Err(Status::unavailable(format!(
                    "reading Secret {namespace}/{name}: {e}"
                )));
            }
        }
    } else if let Some(dir) = &state.registration.directory {
        let path = dir.join(format!("{name}.kubeconfig"));
        write_atomically(&path, &text)
            .map_err(|e| Status::internal(format!("writing {}: {e}", path.display())))?;
    } else {
        return Err(Status::failed_precondition(
            "this gateway has no place to register management clusters",
        ));
    }
    state.registry.refresh().await;
    tracing::info!(tenant = %tenant.name, management_cluster = %name, replaced = existed, "registered management cluster");
    Ok(pb::RegisterManagementClusterResponse { created: !existed })
}

/// The ListManagementClusters RPC.
pub async fn list(
    state: &State,
    tenant: &Tenant,
) -> Result<pb::ListManagementClustersResponse, Status> {
    tenant.require_admin("ListManagementClusters", "")?;
    let mut names = state.registry.names();
    names.sort();
    Ok(pb::ListManagementClustersResponse { names })
}

/// The UnregisterManagementCluster RPC.
pub async fn unregister(
    state: &State,
    tenant: &Tenant,
    request: pb::UnregisterManagementClusterRequest,
) -> Result<pb::UnregisterManagementClusterResponse, Status> {
    tenant.require_admin("UnregisterManagementCluster", &request.name)?;
    check_name(&request.name)?;
    let name = &request.name;
    let mut removed = false;
    if let Some((home, namespace)) = &state.registration.secrets {
        match secrets_api(home, namespace)
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) => removed = true,
            Err(e) if topograph_management::error::has_code(&e, 404) => {}
            Err(e) => {
                return Err(Status::unavailable(format!(
                    "deleting Secret {namespace}/{name}: {e}"
                )));
            }
        }
    }
    if let Some(dir) = &state.registration.directory {
        let path = dir.join(format!("{name}.kubeconfig"));
        match std::fs::remove_file(&path) {
            Ok(()) => removed = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Status::internal(format!(
                    "removing {}: {e}",
                    path.display()
                )));
            }
        }
    }
    state.registry.refresh().await;
    tracing::info!(tenant = %tenant.name, management_cluster = %name, removed, "unregistered management cluster");
    Ok(pb::UnregisterManagementClusterResponse { removed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        for good in ["mgmt-a", "a", "m1", &"a".repeat(63)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "a_b",
            "a/b",
            "../x",
            "a.b",
            &"a".repeat(64),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn files_are_written_whole_and_private() {
        let dir = std::env::temp_dir().join(format!("topograph-gw-reg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.kubeconfig");
        write_atomically(&path, "one").unwrap();
        write_atomically(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(leftovers.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
