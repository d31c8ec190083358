//! `GetCluster` (with the topology's objects and workers), `ListClusters`,
//! `DeleteCluster`.

use std::collections::BTreeSet;

use serde_json::Value;
use tonic::Status;
use topograph_api::object::ObjectExt;
use topograph_management::ManagementCluster;
use topograph_proto::gateway::v1 as pb;

use crate::objects::{
    API_VERSION, CLUSTER_NAME_LABEL, OWNED_LABEL, class_of, condition_state, conditions,
    generation, observed_generation, references, version_of,
};
use crate::pagination::{fingerprint, page, paginate};
use crate::state::{State, api_status, key_of};
use crate::tenancy::{Scope, Tenant};
use crate::workers::workers;
use topograph_api::Violation;
use topograph_proto::violations::invalid;

/// Kinds the topology creates whatever the class: Cluster API's own.
const CAPI_OWNED_KINDS: &[&str] = &["MachineDeployment", "MachineHealthCheck", "MachinePool"];

fn required(field: &str, value: &str) -> Result<(), Status> {
    if value.is_empty() {
        Err(invalid(vec![Violation::new(field, "Required value")]))
    } else {
        Ok(())
    }
}

/// The namespaces a List looks in: the one asked for, or every namespace the tenant
/// may see (`None`: all of them).
pub fn list_namespaces(
    tenant: &Tenant,
    method: &str,
    mc: &str,
    namespace: &str,
) -> Result<Option<Vec<String>>, Status> {
    if !namespace.is_empty() {
        tenant.authorize(method, mc, Some(namespace))?;
        return Ok(Some(vec![namespace.to_string()]));
    }
    tenant.authorize(method, mc, None)?;
    Ok(match &tenant.namespaces {
        Scope::All => None,
        Scope::Only(names) => Some(names.iter().cloned().collect()),
    })
}

/// Lists `kind` in the namespaces given (`None`: all), with a label selector.
pub async fn list_in(
    api: &ManagementCluster,
    kind: &str,
    namespaces: &Option<Vec<String>>,
    selector: &str,
) -> Result<Vec<Value>, Status> {
    let what = format!("listing {kind}s");
    let to_status = |e: topograph_management::Error| {
        let status = api_status(&what, e);
        if status.code() == tonic::Code::InvalidArgument && !selector.is_empty() {
            invalid(vec![Violation::new("label_selector", status.message())])
        } else {
            status
        }
    };
    match namespaces {
        None => api
            .list_selected(API_VERSION, kind, "", selector)
            .await
            .map_err(to_status),
        Some(namespaces) => {
            let mut out = Vec::new();
            for namespace in namespaces {
                out.extend(
                    api.list_selected(API_VERSION, kind, namespace, selector)
                        .await
                        .map_err(to_status)?,
                );
            }
            Ok(out)
        }
    }
}

/// The objects the Cluster's topology owns, sorted by kind and name.
async fn owned_objects(api: &ManagementCluster, cluster: &Value) -> Result<Vec<Value>, Status> {
    let mut kinds: Vec<(String, String)> = CAPI_OWNED_KINDS
        .iter()
        .map(|k| (API_VERSION.to_string(), (*k).to_string()))
        .collect();
    for reference in ["controlPlaneRef", "infrastructureRef"] {
        if let Some(r) = cluster.get("spec").and_then(|s| s.get(reference))
            && let (Some(a), Some(k)) = (
                r.get("apiVersion").and_then(Value::as_str),
                r.get("kind").and_then(Value::as_str),
            )
        {
            kinds.push((a.to_string(), k.to_string()));
        }
    }
    if let Some((namespace, name)) = class_of(cluster)
        && let Some(class) = api
            .get(API_VERSION, "ClusterClass", &namespace, &name)
            .await
            .map_err(|e| api_status("reading the Cluster's ClusterClass", e))?
    {
        kinds.extend(references(&class));
        // A MachinePool's bootstrap config and infrastructure machine pool are objects
        // of the kinds its class's templates stamp out.
        if let Some(pools) = class.pointer("/spec/workers/machinePools") {
            kinds.extend(references(pools).into_iter().filter_map(|(a, k)| {
                k.strip_suffix("Template")
                    .filter(|stamped| !stamped.is_empty())
                    .map(|stamped| (a, stamped.to_string()))
            }));
        }
    }
    let mut seen = BTreeSet::new();
    kinds.retain(|k| seen.insert(k.clone()));
    let labels = [(CLUSTER_NAME_LABEL, cluster.name()), (OWNED_LABEL, "")];
    // One list per kind, all at once: a Get waits for the slowest, not for the sum.
    let lists = futures::future::try_join_all(kinds.iter().map(|(api_version, kind)| {
        let labels = &labels;
        async move {
            api.list(api_version, kind, cluster.namespace(), labels)
                .await
                .map_err(|e| api_status(&format!("listing {kind}s"), e))
        }
    }))
    .await?;
    let mut owned: Vec<Value> = lists.into_iter().flatten().collect();
    owned.sort_by(|a, b| (a.kind(), a.name()).cmp(&(b.kind(), b.name())));
    Ok(owned)
}

/// The GetCluster RPC.
pub async fn get(
    state: &State,
    tenant: &Tenant,
    request: pb::GetClusterRequest,
) -> Result<pb::GetClusterResponse, Status> {
    let mc = &request.management_cluster;
    required("namespace", &request.namespace)?;
    required("name", &request.name)?;
    tenant.authorize("GetCluster", mc, Some(&request.namespace))?;
    let api = state.cluster(mc)?;
    let cluster = api
        .get(API_VERSION, "Cluster", &request.namespace, &request.name)
        .await
        .map_err(|e| api_status("reading the Cluster", e))?
        .ok_or_else(|| {
            Status::not_found(format!(
                "Cluster {}/{} not found",
                request.namespace, request.name
            ))
        })?;
    let owned = owned_objects(&api, &cluster).await?;
    Ok(pb::GetClusterResponse {
        conditions: conditions(&cluster),
        workers: workers(&cluster, &owned),
        owned: owned
            .iter()
            .map(|object| pb::OwnedObject {
                api_version: object.api_version().to_string(),
                kind: object.kind().to_string(),
                namespace: object.namespace().to_string(),
                name: object.name().to_string(),
                object: serde_json::to_vec(object).unwrap_or_default(),
            })
            .collect(),
        cluster: serde_json::to_vec(&cluster).unwrap_or_default(),
    })
}

/// The summary of one Cluster.
pub fn summary(cluster: &Value) -> pb::ClusterSummary {
    pb::ClusterSummary {
        namespace: cluster.namespace().to_string(),
        name: cluster.name().to_string(),
        class: class_of(cluster).map(|(_, n)| n).unwrap_or_default(),
        version: version_of(cluster).to_string(),
        topology_reconciled: Some(condition_state(cluster, "TopologyReconciled")),
        generation: generation(cluster),
        observed_generation: observed_generation(cluster),
    }
}

/// The ListClusters RPC.
pub async fn list(
    state: &State,
    tenant: &Tenant,
    request: pb::ListClustersRequest,
) -> Result<pb::ListClustersResponse, Status> {
    let mc = &request.management_cluster;
    let namespaces = list_namespaces(tenant, "ListClusters", mc, &request.namespace)?;
    let query = fingerprint(&[
        "clusters",
        mc,
        &request.namespace,
        &request.class,
        &request.label_selector,
    ]);
    let page = page(request.page_size, &request.page_token, &query)?;
    let api = state.cluster(mc)?;
    let clusters = list_in(&api, "Cluster", &namespaces, &request.label_selector).await?;
    let items = clusters
        .iter()
        .filter(|c| tenant.namespaces.contains(c.namespace()))
        .filter(|c| {
            request.class.is_empty() || class_of(c).is_some_and(|(_, n)| n == request.class)
        })
        .map(|c| (key_of(c), summary(c)))
        .collect();
    let (clusters, next_page_token) = paginate(items, &page, &query);
    Ok(pb::ListClustersResponse {
        clusters,
        next_page_token,
    })
}

/// The DeleteCluster RPC.
pub async fn delete(
    state: &State,
    tenant: &Tenant,
    request: pb::DeleteClusterRequest,
) -> Result<pb::DeleteResponse, Status> {
    let mc = &request.management_cluster;
    required("namespace", &request.namespace)?;
    required("name", &request.name)?;
    tenant.authorize("DeleteCluster", mc, Some(&request.namespace))?;
    let api = state.cluster(mc)?;
    let Some(cluster) = api
        .get(API_VERSION, "Cluster", &request.namespace, &request.name)
        .await
        .map_err(|e| api_status("reading the Cluster", e))?
    else {
        return Ok(pb::DeleteResponse { deleted: false });
    };
    api.delete(&cluster)
        .await
        .map_err(|e| api_status("deleting the Cluster", e))?;
    tracing::info!(tenant = %tenant.name, management_cluster = %mc, cluster = %format!("{}/{}", request.namespace, request.name), "deleted Cluster");
    Ok(pb::DeleteResponse { deleted: true })
}
