//! `GetClusterClass`, `ListClusterClasses`, `DeleteClusterClass`.

use tonic::Status;
use topograph_api::object::ObjectExt;
use topograph_proto::gateway::v1 as pb;

use crate::clusters::{list_in, list_namespaces};
use crate::objects::{API_VERSION, condition_state, conditions, generation, observed_generation};
use crate::pagination::{fingerprint, page, paginate};
use crate::state::{State, api_status, clusters_using, key_of};
use crate::tenancy::Tenant;
use topograph_api::Violation;
use topograph_proto::violations::invalid;

fn required(field: &str, value: &str) -> Result<(), Status> {
    if value.is_empty() {
        Err(invalid(vec![Violation::new(field, "Required value")]))
    } else {
        Ok(())
    }
}

/// The GetClusterClass RPC.
pub async fn get(
    state: &State,
    tenant: &Tenant,
    request: pb::GetClusterClassRequest,
) -> Result<pb::GetClusterClassResponse, Status> {
    let mc = &request.management_cluster;
    required("namespace", &request.namespace)?;
    required("name", &request.name)?;
    tenant.authorize("GetClusterClass", mc, Some(&request.namespace))?;
    let api = state.cluster(mc)?;
    let class = api
        .get(
            API_VERSION,
            "ClusterClass",
            &request.namespace,
            &request.name,
        )
        .await
        .map_err(|e| api_status("reading the ClusterClass", e))?
        .ok_or_else(|| {
            Status::not_found(format!(
                "ClusterClass {}/{} not found",
                request.namespace, request.name
            ))
        })?;
    let users = clusters_using(&api, &request.namespace, &request.name)
        .await
        .map_err(|e| api_status("listing the Clusters using the class", e))?;
    Ok(pb::GetClusterClassResponse {
        conditions: conditions(&class),
        cluster_class: serde_json::to_vec(&class).unwrap_or_default(),
        // Only the users the tenant may see by name.
        clusters: users
            .iter()
            .filter(|c| tenant.namespaces.contains(c.namespace()))
            .map(|c| format!("{}/{}", c.namespace(), c.name()))
            .collect(),
    })
}

/// The ListClusterClasses RPC.
pub async fn list(
    state: &State,
    tenant: &Tenant,
    request: pb::ListClusterClassesRequest,
) -> Result<pb::ListClusterClassesResponse, Status> {
    let mc = &request.management_cluster;
    let namespaces = list_namespaces(tenant, "ListClusterClasses", mc, &request.namespace)?;
    let query = fingerprint(&["clusterclasses", mc, &request.namespace]);
    let page = page(request.page_size, &request.page_token, &query)?;
    let api = state.cluster(mc)?;
    let classes = list_in(&api, "ClusterClass", &namespaces, "").await?;
    let items = classes
        .iter()
        .filter(|c| tenant.namespaces.contains(c.namespace()))
        .map(|c| {
            (
                key_of(c),
                pb::ClusterClassSummary {
                    namespace: c.namespace().to_string(),
                    name: c.name().to_string(),
                    generation: generation(c),
                    observed_generation: observed_generation(c),
                    variables_ready: Some(condition_state(c, "VariablesReady")),
                },
            )
        })
        .collect();
    let (cluster_classes, next_page_token) = paginate(items, &page, &query);
    Ok(pb::ListClusterClassesResponse {
        cluster_classes,
        next_page_token,
    })
}

/// Cluster API's refusal text: the first three users, then `...`.
pub fn in_use_message(users: &[String]) -> String {
    let mut listed = users.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if users.len() > 3 {
        listed.push_str(", ...");
    }
    format!("ClusterClass cannot be deleted because it is used by Cluster(s): {listed}")
}

/// The DeleteClusterClass RPC: refused while any Cluster uses the class.
pub async fn delete(
    state: &State,
    tenant: &Tenant,
    request: pb::DeleteClusterClassRequest,
) -> Result<pb::DeleteResponse, Status> {
    let mc = &request.management_cluster;
    required("namespace", &request.namespace)?;
    required("name", &request.name)?;
    tenant.authorize("DeleteClusterClass", mc, Some(&request.namespace))?;
    let api = state.cluster(mc)?;
    let Some(class) = api
        .get(
            API_VERSION,
            "ClusterClass",
            &request.namespace,
            &request.name,
        )
        .await
        .map_err(|e| api_status("reading the ClusterClass", e))?
    else {
        return Ok(pb::DeleteResponse { deleted: false });
    };
    let users = clusters_using(&api, &request.namespace, &request.name)
        .await
        .map_err(|e| api_status("listing the Clusters using the class", e))?;
    if !users.is_empty() {
        let names: Vec<String> = users
            .iter()
            .map(|c| format!("{}/{}", c.namespace(), c.name()))
            .collect();
        return Err(Status::failed_precondition(in_use_message(&names)));
    }
    api.delete(&class)
        .await
        .map_err(|e| api_status("deleting the ClusterClass", e))?;
    tracing::info!(tenant = %tenant.name, management_cluster = %mc, class = %format!("{}/{}", request.namespace, request.name), "deleted ClusterClass");
    Ok(pb::DeleteResponse { deleted: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_lists_three_users_at_most() {
        let names = |n: usize| (0..n).map(|i| format!("ns/c{i}")).collect::<Vec<_>>();
        assert_eq!(
            in_use_message(&names(2)),
            "ClusterClass cannot be deleted because it is used by Cluster(s): ns/c0, ns/c1"
        );
        assert_eq!(
            in_use_message(&names(5)),
            "ClusterClass cannot be deleted because it is used by Cluster(s): ns/c0, ns/c1, ns/c2, ..."
        );
    }
}
