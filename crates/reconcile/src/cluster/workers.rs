//! MachineDeployments (spec 7.1 step 9.6): create the missing ones (templates first,
//! then the MachineDeployment, then its health check), update the existing ones
//! (health check first; templates reconciled or rotated; then the MachineDeployment),
//! and delete those that left the topology with their health checks and templates.
//! MachineDeployments waiting for the control plane (creation deferred, upgrade
//! pending) are left as they are.

use serde_json::{Value, json};
use topograph_api::model::Cluster;
use topograph_api::object::{ObjectExt, set_at};
use topograph_engine::{DesiredState, labels};

use super::Run;
use super::control_plane::{health_check, template_events};
use super::read::{Current, CurrentMachineDeployment};
use super::write::{self, Compatibility};
use crate::error::ReconcileError;
use crate::events::{self, CREATE, DELETE, UPDATE};
use crate::merge;

const BOOTSTRAP_REF: &[&str] = &["spec", "template", "spec", "bootstrap", "configRef"];
const INFRASTRUCTURE_REF: &[&str] = &["spec", "template", "spec", "infrastructureRef"];
const VERSION: &[&str] = &["spec", "template", "spec", "version"];

/// Upgrade gating for MachineDeployments, by topology name.
fn creation_deferred(desired: &DesiredState, topology_name: &str) -> bool {
    desired
        .upgrade
        .must_not_create_machine_deployment(topology_name)
}

fn upgrade_pending(desired: &DesiredState, topology_name: &str) -> bool {
    desired
        .upgrade
        .must_not_update_machine_deployment(topology_name)
}

pub(crate) async fn reconcile(
    run: &mut Run<'_>,
    c: &Cluster,
    current: &Current,
    desired: &DesiredState,
) -> Result<(), ReconcileError> {
    for md in &desired.machine_deployments {
        let name = md.topology_name.as_str();
        match current.machine_deployments.get(name) {
            None if creation_deferred(desired, name) => {}
            None => {
                for template in [&md.infrastructure_template, &md.bootstrap_template] {
                    let created = write::create(run.api, template).await?;
                    run.outcome.created += 1;
                    run.event(
                        CREATE,
                        format!("Created {} {}", created.kind(), events::key(&created)),
                    );
                }
                // No re-check before the apply: the name is derived from the Cluster
                // and the topology entry (decision 0001), so a reconcile racing another
                // applies to the same MachineDeployment instead of making a second one.
                let created = write::create(run.api, &md.object).await?;
                run.outcome.created += 1;
                run.event(
                    CREATE,
                    format!("Created MachineDeployment {}", events::key(&created)),
                );
                health_check(run, None, md.health_check.as_ref()).await?;
            }
            Some(existing) => {
                health_check(
                    run,
                    existing.health_check.as_ref(),
                    md.health_check.as_ref(),
                )
                .await?;
                if existing
                    .object
                    .at(&["metadata", "deletionTimestamp"])
                    .is_some()
                    || upgrade_pending(desired, name)
                {
                    continue;
                }
                update(run, c, current, existing, md).await?;
            }
        }
    }
    for (name, existing) in &current.machine_deployments {
        if desired
            .machine_deployments
            .iter()
            .any(|md| &md.topology_name == name)
        {
            continue;
        }
        remove(run, existing).await?;
    }
    Ok(())
}

async fn update(
    run: &mut Run<'_>,
    c: &Cluster,
    current: &Current,
    existing: &CurrentMachineDeployment,
    md: &topograph_engine::desired::DesiredMachineDeployment,
) -> Result<(), ReconcileError> {
    let prefix = format!("{}-{}-", c.name, md.topology_name);
    let mut object = md.object.clone();
    let mut replaced = Vec::new();
    for (template, current_template, compatibility, path) in [
        (
            &md.infrastructure_template,
            existing.infrastructure_template.as_ref(),
            Compatibility::SameKind,
            INFRASTRUCTURE_REF,
        ),
        (
            &md.bootstrap_template,
            existing.bootstrap_template.as_ref(),
            Compatibility::SameNamespace,
            BOOTSTRAP_REF,
        ),
    ] {
        let outcome =
            write::template(run.api, current_template, template, compatibility, &prefix).await?;
        template_events(run, &outcome, template, current_template).await;
        if outcome.name != template.name() {
            set_at(
                &mut object,
                &[path, &["name"]].concat(),
                json!(outcome.name),
            );
        }
        replaced.extend(outcome.replaced);
    }
    let version_from = existing
        .object
        .at(VERSION)
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(stored) = write::update(run.api, &existing.object, &merge::intent(&object)).await? {
        run.outcome.updated += 1;
        let message = events::updated(&stored, VERSION, version_from.as_deref());
        run.event(UPDATE, message);
    }
    // A replaced template goes once no MachineSet still builds machines from it. While
    // some do (a rollout in progress), the MachineSets become its owners in place of
    // the Cluster, so garbage collection removes it when the last of them goes: no
    // later reconcile has to remember it, and none of them could, since no
    // MachineDeployment names it any more.
    for old in replaced {
        let holders = machine_sets_holding(current, &old);
        if holders.is_empty() {
            run.api.delete(&old).await?;
            run.outcome.deleted += 1;
        } else {
            let owners: Vec<Value> = holders
                .iter()
                .map(|ms| {
                    json!({"apiVersion": ms.api_version(), "kind": ms.kind(),
                           "name": ms.name(), "uid": ms.at(&["metadata", "uid"])})
                })
                .collect();
            // A merge patch replaces the list whole and needs no resourceVersion: the
            // hand-over cannot be lost to a conflict after the holder moved on.
            run.api
                .merge_patch(&old, &json!({"metadata": {"ownerReferences": owners}}))
                .await?;
            run.outcome.updated += 1;
            tracing::info!(
                kind = old.kind(),
                name = old.name(),
                machine_sets = holders.len(),
                "replaced template still in use; handed over to its MachineSets"
            );
        }
    }
    Ok(())
}

/// The live MachineSets that still build machines from `template`.
fn machine_sets_holding<'a>(current: &'a Current, template: &Value) -> Vec<&'a Value> {
    current
        .machine_sets
        .iter()
        .filter(|ms| {
            ms.at(&["metadata", "deletionTimestamp"]).is_none()
                && [BOOTSTRAP_REF, INFRASTRUCTURE_REF].iter().any(|path| {
                    ms.at(path).is_some_and(|r| {
                        r.get("kind").and_then(Value::as_str) == Some(template.kind())
                            && r.get("name").and_then(Value::as_str) == Some(template.name())
                    })
                })
        })
        .collect()
}

async fn remove(
    run: &mut Run<'_>,
    existing: &CurrentMachineDeployment,
) -> Result<(), ReconcileError> {
    health_check(run, existing.health_check.as_ref(), None).await?;
    if existing
        .object
        .at(&["metadata", "deletionTimestamp"])
        .is_none()
    {
        run.api.delete(&existing.object).await?;
        run.outcome.deleted += 1;
        run.event(
            DELETE,
            format!(
                "Deleted MachineDeployment {}",
                events::key(&existing.object)
            ),
        );
    }
    for template in [
        existing.bootstrap_template.as_ref(),
        existing.infrastructure_template.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        if template.labels().contains_key(labels::TOPOLOGY_OWNED) {
            run.api.delete(template).await?;
            run.outcome.deleted += 1;
        }
    }
    Ok(())
}
