//! The topology engine: from a ClusterClass, its templates and a Cluster to the objects
//! the Cluster's topology consists of.
//!
//! The flow follows the data, as Cluster API's topology controller does:
//! * [`blueprint`]: the class and the templates it references;
//! * [`current`]: what exists now (objects the Cluster references, owned
//!   MachineDeployments found by label), whose names are always reused;
//! * [`desired`]: the desired objects, with [`names`] for generated names;
//! * [`patches`]: the class's patches, over the Cluster's (defaulted, validated)
//!   variables and the builtin variables;
//! * [`upgrade`]: which versions the control plane and the MachineDeployments get, and
//!   what a reconciler must hold back while an upgrade is sequenced;
//! * [`wire`]: how Cluster API's own kinds and references are written (v1beta1).
//!
//! Start with [`render`]: it runs the whole flow for one Cluster.

pub mod blueprint;
pub mod current;
pub mod desired;
pub mod error;
pub mod labels;
pub mod names;
pub mod patches;
pub mod store;
mod template_cache;
pub mod upgrade;
pub mod validate;
mod variables;
pub mod wire;

use topograph_api::model::{Cluster, ClusterClass};

pub use desired::DesiredState;
pub use error::RenderError;
pub use store::ObjectStore;

/// A render and how the class's patches shaped it.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The desired objects.
    pub desired: DesiredState,
    /// Which patch changed which path of which object.
    pub explanation: patches::Explanation,
}

/// Renders the desired state of `cluster`, whose class is `class`, reading templates
/// and current objects from `store`.
pub fn render(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
) -> Result<DesiredState, RenderError> {
    render_explained(cluster, class, store).map(|r| r.desired)
}

/// How a render treats its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// Run Cluster API's admission first, as an API server with its webhooks would
    /// have: validate the class, default and validate the Cluster. Turned off only to
    /// reproduce what objects that bypassed admission do at reconcile time.
    pub admission_checks: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            admission_checks: true,
        }
    }
}

/// [`render`], also saying what each patch did.
pub fn render_explained(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
) -> Result<Rendered, RenderError> {
    render_with(cluster, class, store, RenderOptions::default())
}

/// What the API server's admission would make of the class and the Cluster: the class
/// must be valid, the Cluster is defaulted (version, variables) and must be valid
/// against its class.
fn admit(cluster: &Cluster, class: &ClusterClass) -> Result<Cluster, RenderError> {
    let problems = validate::validate_cluster_class(class, None, &[]);
    if !problems.is_empty() {
        return Err(RenderError {
            messages: problems
                .iter()
                .map(|p| format!("ClusterClass {}/{}: {p}", class.namespace, class.name))
                .collect(),
        });
    }
    match validate::admit_cluster(cluster, None, &[class]) {
        (Some(admitted), _) => Ok(admitted),
        (None, validation) => Err(RenderError {
            messages: validation.errors.iter().map(ToString::to_string).collect(),
        }),
    }
}

/// [`render_explained`] with explicit options.
pub fn render_with(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
    options: RenderOptions,
) -> Result<Rendered, RenderError> {
    let admitted;
    let cluster = if options.admission_checks {
        admitted = admit(cluster, class)?;
        &admitted
    } else {
        cluster
    };
    let blueprint = blueprint::Blueprint::resolve(class, store);
    let current = current::CurrentState::read(cluster, store);
    let (blueprint, current) = match (blueprint, current) {
        (Ok(blueprint), Ok(current)) => (blueprint, current),
        (blueprint, current) => {
            let mut errors = RenderError::default();
            if let Err(e) = blueprint {
                errors.extend(e);
            }
            if let Err(e) = current {
                errors.extend(e);
            }
            return Err(errors);
        }
    };
    let mut desired = desired::compute(cluster, &blueprint, &current)?;
    let Some(topology) = cluster.topology.as_ref() else {
        return Err(RenderError::new(format!(
            "Cluster {} has no spec.topology",
            cluster.key()
        )));
    };
    let values = variables::resolve(topology, class, options.admission_checks)?;
    let explanation = patches::apply(cluster, topology, &blueprint, &mut desired, &values.as_patch_values())
        .map_err(|e| {
            RenderError::new(format!(
                "error computing the desired state of the Cluster topology: failed to apply patches: {e}"
            ))
        })?;
    Ok(Rendered {
        desired,
        explanation,
    })
}
