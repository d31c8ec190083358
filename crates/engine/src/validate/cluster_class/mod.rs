//! ClusterClass admission (spec section 6.1): template references, unique worker
//! classes, rollout strategies, health checks, naming templates, metadata, variables and
//! patches; on update, compatibility with the old class and with the Clusters using it.
//!
//! [`validate_cluster_class`] is the list of steps, in the order Cluster API's webhook
//! reports them; the template rules are in [`templates`], the machines' rollout and
//! remediation in [`machines`], the update rules in [`update`].

mod machines;
mod templates;
mod update;

use topograph_api::field::FieldError;
use topograph_api::model::{Cluster, ClusterClass, Metadata, ObjectRef};

use super::common;
use super::compatibility::check_compatibility;
use super::names::names;
use super::workers::WorkerKind;

pub(crate) use machines::{health_check, strategy};

/// Every problem with `class`; on update (`old` set) also its compatibility with the
/// old class and with `clusters`, the Clusters using it.
pub fn validate_cluster_class(
    class: &ClusterClass,
    old: Option<&ClusterClass>,
    clusters: &[&Cluster],
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let names = names(class.wire);
    let workers = workers(class);
    templates::references(class, &workers, &mut errors);
    unique_worker_classes(&workers, &mut errors);
    machines::rollout_strategies(class, names, &mut errors);
    machines::health_checks(class, names, &mut errors);
    templates::naming_templates(class, &workers, names, &mut errors);
    metadata(class, &workers, &mut errors);
    variable_definitions(class, old, &mut errors);
    patches(class, &mut errors);

    if let Some(old) = old {
        errors.extend(check_compatibility(old, class));
        update::removed_worker_classes(old, &workers, clusters, &mut errors);
        update::removed_health_checks(old, class, clusters, names, &mut errors);
        update::autoscaler_annotations(class, clusters, &mut errors);
        update::removed_variables(old, class, clusters, &mut errors);
        update::changed_variables(old, class, clusters, &mut errors);
    }
    errors
}

/// A worker class, as the rules that treat both kinds alike read it.
struct Worker<'a> {
    kind: WorkerKind,
    /// Its position in its list.
    index: usize,
    class: &'a str,
    metadata: &'a Metadata,
    bootstrap: &'a ObjectRef,
    infrastructure: &'a ObjectRef,
    naming: Option<&'a str>,
}

impl Worker<'_> {
    /// Its path for the rules about the list: `spec.workers.<list>[<index>]`.
    fn indexed(&self) -> String {
        format!("spec.workers.{}[{}]", self.kind.list(), self.index)
    }

    /// Its path for the rules about the one worker class: `spec.workers.<list>[<class>]`
    /// (`[default-worker]`), as the webhook names it there.
    fn named(&self) -> String {
        format!("spec.workers.{}[{}]", self.kind.list(), self.class)
    }
}

/// The worker classes of `class`: its MachineDeployments, then its MachinePools, each
/// in list order.
fn workers(class: &ClusterClass) -> Vec<Worker<'_>> {
    // The two worker class types have these fields alike but no common trait.
    macro_rules! of {
        ($kind:expr, $list:expr) => {
            $list.iter().enumerate().map(|(index, w)| Worker {
                kind: $kind,
                index,
                class: &w.class,
                metadata: &w.metadata,
                bootstrap: &w.bootstrap,
                infrastructure: &w.infrastructure,
                naming: w.naming.as_deref(),
            })
        };
    }
    of!(WorkerKind::MachineDeployment, class.machine_deployments)
        .chain(of!(WorkerKind::MachinePool, class.machine_pools))
        .collect()
}

/// A worker class name may stand only once in its list: Clusters pick worker classes
/// by name.
fn unique_worker_classes(workers: &[Worker<'_>], errors: &mut Vec<FieldError>) {
    for (j, worker) in workers.iter().enumerate() {
        if workers[..j]
            .iter()
            .any(|w| w.kind == worker.kind && w.class == worker.class)
        {
            let kind = worker.kind.name();
            errors.push(FieldError::invalid(
                format!("{}.class", worker.indexed()),
                worker.class,
                format!(
                    "{kind} class must be unique. {kind} with class {:?} is defined more than once",
                    worker.class
                ),
            ));
        }
    }
}

/// The labels and annotations of the control plane and of every worker class's
/// template must be valid.
fn metadata(class: &ClusterClass, workers: &[Worker<'_>], errors: &mut Vec<FieldError>) {
    let cp = &class.control_plane;
    errors.extend(common::metadata(
        &cp.metadata.labels,
        &cp.metadata.annotations,
        "spec.controlPlane.metadata",
    ));
    for worker in workers {
        errors.extend(common::metadata(
            &worker.metadata.labels,
            &worker.metadata.annotations,
            &format!("{}.template.metadata", worker.named()),
        ));
    }
}

/// The variable definitions must be valid; on update, CEL rules the old class already
/// had skip the stricter checks only new rules get (see
/// [`topograph_variables::validate_definitions`]).
fn variable_definitions(
    class: &ClusterClass,
    old: Option<&ClusterClass>,
    errors: &mut Vec<FieldError>,
) {
    errors.extend(topograph_variables::validate_definitions(
        &class.variables,
        old.map(|o| o.variables.as_slice()),
    ));
}

/// The patches must be valid (see [`crate::patches::validate`]).
fn patches(class: &ClusterClass, errors: &mut Vec<FieldError>) {
    errors.extend(crate::patches::validate(class));
}
