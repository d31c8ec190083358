//! The one place admission learns how the API version a user wrote names things.
//!
//! The rules are the same for every version; only some field paths, a few words of
//! their messages and one prefix differ (`machineHealthCheck` / `healthCheck`, `strategy` /
//! `rollout.strategy`, `class` / `classRef`, Go durations / integer seconds). Each
//! validator asks the table of the object's [`WireVersion`] for those pieces, so a
//! v1beta2 document is refused at the paths and with the texts of Cluster API's
//! v1beta2 webhooks, and a v1beta1 document exactly as before.

use topograph_api::Duration;
use topograph_api::model::WireVersion;

/// The version-specific pieces of admission's paths and messages.
pub(crate) struct Names {
    /// A health check of a class or topology (`…machineHealthCheck`).
    pub health_check: &'static str,
    /// Its node startup timeout, below the health check.
    pub node_startup_timeout: &'static str,
    /// How a node startup timeout is shown as the invalid value (a quoted Go duration,
    /// or a bare integer as Go prints an `int32`).
    pub node_startup_timeout_value: fn(Duration) -> String,
    /// The remediation limit, below the health check.
    pub max_unhealthy: &'static str,
    /// How messages name a health check definition.
    pub health_check_definition: &'static str,
    /// A MachineDeployment's rollout strategy, below the class or topology entry.
    pub strategy: &'static str,
    /// A naming template, below the object class it names.
    pub naming_template: &'static str,
    /// The InfrastructureCluster's naming template.
    pub infrastructure_naming_template: &'static str,
    /// A template reference in the compatibility rules (`<prefix>.<ref>.kind`).
    pub compatibility_ref: &'static str,
    /// Where a worker class keeps its infrastructure template, below the worker class.
    pub worker_infrastructure: &'static str,
    /// The defaulting webhook's refusal of a topology without a class: path, message.
    pub class_missing_on_default: (&'static str, &'static str),
    /// The validating webhook's refusal of a topology without a class.
    pub class_missing: &'static str,
    /// Giving an existing Cluster a class.
    pub class_set_on_existing: &'static str,
    /// An external patch without extensions.
    pub external_patch_without_extension: &'static str,
    /// What every JSON patch path starts with: `/spec/` in v1.10's webhook (the seeds'
    /// rule), a plain `/spec` prefix in Cluster API main's, which v1beta2 documents
    /// are written for (CAPV's v1beta2 class patches `/spec` itself).
    pub json_patch_path_prefix: &'static str,
}

fn go_duration(d: Duration) -> String {
    topograph_api::field::go_quote(&d.to_string())
}

fn whole_seconds(d: Duration) -> String {
    d.as_secs().to_string()
}

const V1BETA1: Names = Names {
    health_check: "machineHealthCheck",
    node_startup_timeout: "nodeStartupTimeout",
    node_startup_timeout_value: go_duration,
    max_unhealthy: "maxUnhealthy",
    health_check_definition: "MachineHealthCheck",
    strategy: "strategy",
    naming_template: "namingStrategy.template",
    infrastructure_naming_template: "spec.infrastructureNamingStrategy.template",
    compatibility_ref: "ref",
    worker_infrastructure: "template.infrastructure",
    class_missing_on_default: ("spec.topology.class", "class cannot be empty"),
    class_missing: "class cannot be empty",
    class_set_on_existing: "class cannot be set on an existing Cluster",
    external_patch_without_extension: "one of validateExtension and generateExtension must be defined",
    json_patch_path_prefix: "/spec/",
};

const V1BETA2: Names = Names {
    health_check: "healthCheck",
    node_startup_timeout: "checks.nodeStartupTimeoutSeconds",
    node_startup_timeout_value: whole_seconds,
    max_unhealthy: "remediation.triggerIf.unhealthyLessThanOrEqualTo",
    health_check_definition: "healthCheck",
    strategy: "rollout.strategy",
    naming_template: "naming.template",
    infrastructure_naming_template: "spec.infrastructure.naming.template",
    compatibility_ref: "templateRef",
    worker_infrastructure: "infrastructure",
    class_missing_on_default: ("spec.topology.classRef.name", "cannot be empty"),
    class_missing: "classRef.name cannot be empty",
    class_set_on_existing: "classRef cannot be set on an existing Cluster",
    external_patch_without_extension: "one of validateTopologyExtension and generatePatchesExtension must be defined",
    json_patch_path_prefix: "/spec",
};

/// The names of `version`.
pub(crate) fn names(version: WireVersion) -> &'static Names {
    match version {
        WireVersion::V1Beta1 => &V1BETA1,
        WireVersion::V1Beta2 => &V1BETA2,
    }
}
