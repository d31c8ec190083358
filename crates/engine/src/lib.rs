//! The topology engine: from a ClusterClass, its templates and a Cluster to the objects
//! the Cluster's topology consists of.
//!
//! The flow follows the data, as Cluster API's topology controller does:
//! * [`blueprint`]: the class and the templates it references;
//! * [`current`]: what exists now (objects the Cluster references, owned
//!   MachineDeployments found by label), whose names are always reused;
//! * [`desired`]: the desired objects, with [`names`] for generated names;
//! * [`wire`]: how Cluster API's own kinds and references are written (v1beta1).
//!
//! Start with [`render`]: it runs the whole flow for one Cluster.

pub mod blueprint;
pub mod current;
pub mod desired;
pub mod error;
pub mod labels;
pub mod names;
pub mod store;
pub mod wire;

use topograph_api::model::{Cluster, ClusterClass};

pub use desired::DesiredState;
pub use error::RenderError;
pub use store::ObjectStore;

/// Renders the desired state of `cluster`, whose class is `class`, reading templates
/// and current objects from `store`.
pub fn render(
    cluster: &Cluster,
    class: &ClusterClass,
    store: &ObjectStore,
) -> Result<DesiredState, RenderError> {
    let blueprint = blueprint::Blueprint::resolve(class, store);
    let current = current::CurrentState::read(cluster, store);
    match (blueprint, current) {
        (Ok(blueprint), Ok(current)) => desired::compute(cluster, &blueprint, &current),
        (blueprint, current) => {
            let mut errors = RenderError::default();
            if let Err(e) = blueprint {
                errors.extend(e);
            }
            if let Err(e) = current {
                errors.extend(e);
            }
            Err(errors)
        }
    }
}
