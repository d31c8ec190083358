//! The InfrastructureCluster: a clone of the class's infrastructure cluster template.

use serde_json::Value;

use super::Scope;
use super::clone::{CloneInput, template_to_object};
use super::reuse::{ObjectNaming, carry_over_shim_owner, object_name};
use crate::labels;

/// The default naming template.
pub const DEFAULT_NAME_TEMPLATE: &str = "{{ .cluster.name }}-{{ .random }}";

/// `None` when the class has no infrastructure (the control plane provides the
/// endpoint then).
pub(crate) fn compute(scope: &Scope<'_>) -> Result<Option<Value>, String> {
    let (Some(infra), Some(template)) = (
        scope.blueprint.class.infrastructure.as_ref(),
        scope.blueprint.infrastructure_cluster_template,
    ) else {
        return Ok(None);
    };
    let name = object_name(
        scope,
        scope.current.infrastructure_cluster.name(),
        &ObjectNaming {
            template: infra.naming.as_deref(),
            default_template: DEFAULT_NAME_TEMPLATE,
            template_path: format_args!("spec.infrastructureNamingStrategy.template"),
            extra: &[],
            role: &["InfrastructureCluster"],
        },
    )?;
    let mut object = template_to_object(CloneInput {
        template,
        cloned_from: &infra.template,
        namespace: &scope.cluster.namespace,
        cluster_name: &scope.cluster.name,
        labels: [
            (labels::CLUSTER_NAME.to_string(), scope.cluster.name.clone()),
            (labels::TOPOLOGY_OWNED.to_string(), String::new()),
        ]
        .into(),
        annotations: Default::default(),
        name,
    });
    carry_over_shim_owner(
        scope,
        scope.current.infrastructure_cluster.object,
        &mut object,
    );
    Ok(Some(object))
}
