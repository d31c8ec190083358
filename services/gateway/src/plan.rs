//! `Plan` and `Impact`: the proposed objects go through exactly what Apply does to them
//! (authorisation, merge onto the stored objects, admission and defaulting), then the
//! applier's reconcile runs on a dry-run client of the management cluster
//! ([`topograph_reconcile::plan`]): the answer is what applying and reconciling would
//! write, and nothing is written.
//!
//! Impact streams one item per Cluster of the proposed class, in namespace/name order,
//! limited to the namespaces the tenant may see; a class update that Clusters block is
//! not refused but reported per Cluster.

use std::pin::Pin;

use futures::Stream;
use serde_json::Value;
use tonic::Status;
use topograph_proto::gateway::v1 as pb;
use topograph_reconcile::ReconcileError;
use topograph_reconcile::plan::{self, PlannedObject};

use crate::apply::prepare;
use crate::state::State;
use crate::tenancy::Tenant;
use topograph_api::Violation;
use topograph_proto::violations::invalid;

/// The stream Impact answers with.
pub type ImpactStream = Pin<Box<dyn Stream<Item = Result<pb::ImpactItem, Status>> + Send>>;

fn status(what: &str, e: ReconcileError) -> Status {
    match e {
        ReconcileError::Invalid(message) => Status::invalid_argument(format!("{what}: {message}")),
        other => crate::state::api_status(what, other),
    }
}

fn planned(o: PlannedObject) -> pb::PlannedObject {
    let patch = if o.patch.as_array().is_some_and(|a| !a.is_empty()) {
        serde_json::to_vec(&o.patch).unwrap_or_default()
    } else {
        Vec::new()
    };
    pb::PlannedObject {
        api_version: o.api_version,
        kind: o.kind,
        namespace: o.namespace,
        name: o.name,
        object: serde_json::to_vec(&o.object).unwrap_or_default(),
        patch,
        diff: o.diff,
    }
}

fn response(p: plan::Plan) -> pb::PlanResponse {
    pb::PlanResponse {
        created: p.created.into_iter().map(planned).collect(),
        modified: p.modified.into_iter().map(planned).collect(),
        deleted: p.deleted.into_iter().map(planned).collect(),
        errors: p.errors,
        revision: p.revision,
    }
}

/// The Plan RPC.
pub async fn plan(
    state: &State,
    tenant: &Tenant,
    request: pb::PlanRequest,
) -> Result<pb::PlanResponse, Status> {
    const METHOD: &str = "Plan";
    let mc = request.management_cluster.as_str();
    tenant.authorize(METHOD, mc, Some(&request.namespace))?;
    let mut missing = Vec::new();
    if request.namespace.is_empty() {
        missing.push(Violation::new("namespace", "Required value"));
    }
    if request.name.is_empty() {
        missing.push(Violation::new("name", "Required value"));
    }
    if !missing.is_empty() {
        return Err(invalid(missing));
    }
    let (api, proposed) = if request.proposed.is_empty() {
        (state.cluster(mc)?, Vec::new())
    } else {
        let prepared = prepare(
            state,
            tenant,
            METHOD,
            mc,
            ("proposed", &request.proposed),
            true,
        )
        .await?;
        let objects = prepared.objects();
        (prepared.api, objects)
    };
    let hooks = state.runtime_sdk.plan_hooks(mc, &api);
    let result = plan::plan_cluster(
        &api,
        state.engine.as_ref(),
        &hooks,
        &proposed,
        &request.namespace,
        &request.name,
    )
    .await
    .map_err(|e| status("planning", e))?;
    Ok(response(result))
}

/// The Impact RPC.
pub async fn impact(
    state: &State,
    tenant: &Tenant,
    request: pb::ImpactRequest,
) -> Result<ImpactStream, Status> {
    const METHOD: &str = "Impact";
    let mc = request.management_cluster.as_str();
    let prepared = prepare(
        state,
        tenant,
        METHOD,
        mc,
        ("proposed", &request.proposed),
        false,
    )
    .await?;
    let proposed: Vec<Value> = prepared.objects();
    let classes = proposed
        .iter()
        .filter(|o| o.get("kind").and_then(Value::as_str) == Some("ClusterClass"))
        .count();
    if classes != 1 {
        return Err(invalid(vec![Violation::new(
            "proposed",
            format!("Invalid value: an impact needs exactly one ClusterClass, found {classes}"),
        )]));
    }
    let api = prepared.api.clone();
    let engine = state.engine.clone();
    let hooks = state.runtime_sdk.plan_hooks(mc, &api);
    // Clusters outside the tenant's namespaces are left out, silently: the tenant did
    // not ask about them by name.
    let namespaces = tenant.namespaces.clone();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::ImpactItem, Status>>(16);
    // Each Cluster's plan is a reconcile; sending them as they come lets a client of a
    // large fleet see the first answers long before the last.
    let (items_tx, mut items_rx) = tokio::sync::mpsc::unbounded_channel::<plan::ImpactItem>();
    let errors = tx.clone();
    // The forwarder ends when the impact is done (its sender dropped) or the client is
    // gone; then the impact's next send fails and it stops planning.
    tokio::spawn(async move {
        while let Some(item) = items_rx.recv().await {
            let message = pb::ImpactItem {
                namespace: item.namespace,
                name: item.name,
                plan: Some(response(item.plan)),
                blocking: item.blocking,
                wave: item.wave,
            };
            if tx.send(Ok(message)).await.is_err() {
                return;
            }
        }
    });
    tokio::spawn(async move {
        let visible = |namespace: &str| namespaces.contains(namespace);
        let result = plan::impact(&api, engine.as_ref(), &hooks, &proposed, visible, |item| {
            items_tx.send(item).is_ok()
        })
        .await;
        if let Err(e) = result {
            let _ = errors.send(Err(status("impact", e))).await;
        }
    });
    Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)))
}
