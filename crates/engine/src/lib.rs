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
//! * [`wire`]: how Cluster API's own kinds and references are written (v1beta1);
//! * [`contract`]: where each Cluster API contract puts the provider objects' fields,
//!   and which contract a kind implements (the CRDs among the inputs declare it).
//!
//! * [`admission`]: what Cluster API's webhooks make of a class or a Cluster, run once
//!   before a render; [`render`] takes what it admitted;
//! * [`service`]: the [`Engine`] every door calls (admit, render, plan), [`Local`] here
//!   and the render service remotely; [`plan`] compares desired with current objects.
//!
//! Start with [`admit_and_render`]: admission, then the whole flow for one Cluster.

pub mod admission;
pub mod blueprint;
pub mod contract;
pub mod current;
pub mod desired;
pub mod error;
pub mod labels;
pub mod names;
pub mod patches;
pub mod plan;
pub mod service;
pub mod store;
mod template_cache;
pub mod upgrade;
pub mod validate;
#[doc(hidden)]
pub mod variables;
pub mod wire;

use topograph_api::model::{Cluster, ClusterClass};

pub use admission::{Admitted, ExtendedClass, Refusal};
pub use desired::DesiredState;
pub use error::RenderError;
pub use service::{Engine, Local};
pub use store::ObjectStore;
/// Runtime extensions as the engine calls them (external patches, topology validation,
/// variable discovery); see [`render_with`] and [`admit_and_render_with`].
pub use topograph_runtime::Extensions;

/// A render and how the class's patches shaped it.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The desired objects.
    pub desired: DesiredState,
    /// Which patch changed which path of which object.
    pub explanation: patches::Explanation,
}

/// Admits `class` and `cluster` as the API server's webhooks would have, then renders:
/// what a reconcile of these objects computes.
pub fn admit_and_render(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
) -> Result<Rendered, Refusal> {
    let class = admission::admit_class(class.clone(), None, &[])
        .map_err(|errors| Refusal::class(class, errors))?;
    render_admitting(cluster, &class, store)
}

/// [`admit_and_render`] with runtime extensions: the class's external patches are
/// allowed, its DiscoverVariables extensions define variables the Cluster is validated
/// against, and its GeneratePatches / ValidateTopology extensions run during the render.
pub fn admit_and_render_with(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
    extensions: &dyn Extensions,
) -> Result<Rendered, Refusal> {
    let extended = admission::admit_class_with_extensions(class.clone(), None, &[], extensions)?;
    render_admitting_with(cluster, &extended.class, store, Some(extensions))
}

/// Admits `cluster` against its admitted class, then renders it. A Cluster of another
/// class is refused: admission would only warn that its class is unknown, and its
/// variables would then be neither defaulted nor validated against the class used.
pub fn render_admitting(
    cluster: &Cluster,
    class: &Admitted<ClusterClass>,
    store: &ObjectStore,
) -> Result<Rendered, Refusal> {
    render_admitting_with(cluster, class, store, None)
}

/// [`render_admitting`], external patches running on `extensions` when given.
pub fn render_admitting_with(
    cluster: &Cluster,
    class: &Admitted<ClusterClass>,
    store: &ObjectStore,
    extensions: Option<&dyn Extensions>,
) -> Result<Rendered, Refusal> {
    if let Some(topology) = &cluster.topology {
        let namespace = topology.class_namespace_or(&cluster.namespace);
        if topology.class != class.name || namespace != class.namespace {
            return Err(Refusal::Cluster(vec![
                topograph_api::field::FieldError::invalid(
                    "spec.topology.class",
                    &topology.class,
                    format!(
                        "the Cluster uses ClusterClass {namespace}/{}, not {}/{}",
                        topology.class, class.namespace, class.name
                    ),
                ),
            ]));
        }
    }
    let admission = admission::admit_cluster(cluster, None, &[class]);
    let Some(cluster) = admission.admitted else {
        return Err(Refusal::Cluster(admission.errors));
    };
    render_with(&cluster, class, store, extensions).map_err(Refusal::Render)
}

/// Renders the desired state of an admitted Cluster of an admitted class, reading
/// templates and current objects from `store`. Admission defaulted and validated the
/// Cluster's variables; they are used as they are.
pub fn render(
    cluster: &Admitted<Cluster>,
    class: &Admitted<ClusterClass>,
    store: &ObjectStore,
) -> Result<Rendered, RenderError> {
    render_inner(cluster, class, store, Variables::Admitted, None)
}

/// [`render`], external patches and validations running on `extensions` (none: a
/// class with external patches cannot render, as without Cluster API's RuntimeSDK).
pub fn render_with(
    cluster: &Admitted<Cluster>,
    class: &Admitted<ClusterClass>,
    store: &ObjectStore,
    extensions: Option<&dyn Extensions>,
) -> Result<Rendered, RenderError> {
    render_inner(cluster, class, store, Variables::Admitted, extensions)
}

/// Renders objects that bypassed admission (written with the webhooks off, or before a
/// class existed), as Cluster API's topology controller meets them at reconcile time:
/// the class is taken as it is and the Cluster's variables are defaulted and validated
/// here, before any patch runs.
pub fn render_unadmitted(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
) -> Result<Rendered, RenderError> {
    render_inner(cluster, class, store, Variables::Unchecked, None)
}

/// Whether admission has already defaulted and validated the variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variables {
    Admitted,
    Unchecked,
}

fn render_inner(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
    variables: Variables,
    extensions: Option<&dyn Extensions>,
) -> Result<Rendered, RenderError> {
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
    let mut desired = desired::compute(cluster, &blueprint, &current, extensions)?;
    let Some(topology) = cluster.topology.as_ref() else {
        return Err(RenderError::new(format!(
            "Cluster {} has no spec.topology",
            cluster.key()
        )));
    };
    let resolved;
    let values = match variables {
        Variables::Admitted => variables::as_given(topology),
        Variables::Unchecked => {
            resolved = variables::resolve(topology, class)?;
            resolved.as_patch_values()
        }
    };
    let mut explanation = patches::apply(
        cluster,
        topology,
        &blueprint,
        &mut desired,
        &values,
        extensions,
    )
        .map_err(|e| {
            RenderError::new(format!(
                "error computing the desired state of the Cluster topology: failed to apply patches: {e}"
            ))
        })?;
    // Templates whose patched spec changed get their new names now; the explanation
    // names the objects as they will be written.
    for renamed in desired::rotation::apply(cluster, &blueprint, &current, &mut desired) {
        explanation.rename(&renamed.before, &renamed.after);
    }
    Ok(Rendered {
        desired,
        explanation,
    })
}
