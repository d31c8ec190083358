//! The hooks Cluster API's Runtime SDK knows (its catalog) and the HTTP paths of their
//! handlers: `/<group>/<version>/<hook, lowercase>[/<handler name, lowercase>]`, the
//! discovery endpoint being the one without a handler name.

use std::fmt;

/// The group of every hook.
pub const GROUP: &str = "hooks.runtime.cluster.x-k8s.io";
/// The version of every hook this crate speaks.
pub const VERSION: &str = "v1alpha1";

/// A hook of the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hook {
    /// `Discovery`.
    Discovery,
    /// `GeneratePatches`.
    GeneratePatches,
    /// `ValidateTopology`.
    ValidateTopology,
    /// `DiscoverVariables`.
    DiscoverVariables,
    /// `BeforeClusterCreate`.
    BeforeClusterCreate,
    /// `AfterControlPlaneInitialized`.
    AfterControlPlaneInitialized,
    /// `BeforeClusterUpgrade`.
    BeforeClusterUpgrade,
    /// `BeforeControlPlaneUpgrade`.
    BeforeControlPlaneUpgrade,
    /// `AfterControlPlaneUpgrade`.
    AfterControlPlaneUpgrade,
    /// `BeforeWorkersUpgrade`.
    BeforeWorkersUpgrade,
    /// `AfterWorkersUpgrade`.
    AfterWorkersUpgrade,
    /// `AfterClusterUpgrade`.
    AfterClusterUpgrade,
    /// `BeforeClusterDelete`.
    BeforeClusterDelete,
    /// `GenerateUpgradePlan`.
    GenerateUpgradePlan,
}

impl Hook {
    /// Every hook.
    pub const ALL: [Hook; 14] = [
        Hook::Discovery,
        Hook::GeneratePatches,
        Hook::ValidateTopology,
        Hook::DiscoverVariables,
        Hook::BeforeClusterCreate,
        Hook::AfterControlPlaneInitialized,
        Hook::BeforeClusterUpgrade,
        Hook::BeforeControlPlaneUpgrade,
        Hook::AfterControlPlaneUpgrade,
        Hook::BeforeWorkersUpgrade,
        Hook::AfterWorkersUpgrade,
        Hook::AfterClusterUpgrade,
        Hook::BeforeClusterDelete,
        Hook::GenerateUpgradePlan,
    ];

    /// The hook's name, as discovery responses and ExtensionConfigs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Hook::Discovery => "Discovery",
            Hook::GeneratePatches => "GeneratePatches",
            Hook::ValidateTopology => "ValidateTopology",
            Hook::DiscoverVariables => "DiscoverVariables",
            Hook::BeforeClusterCreate => "BeforeClusterCreate",
            Hook::AfterControlPlaneInitialized => "AfterControlPlaneInitialized",
            Hook::BeforeClusterUpgrade => "BeforeClusterUpgrade",
            Hook::BeforeControlPlaneUpgrade => "BeforeControlPlaneUpgrade",
            Hook::AfterControlPlaneUpgrade => "AfterControlPlaneUpgrade",
            Hook::BeforeWorkersUpgrade => "BeforeWorkersUpgrade",
            Hook::AfterWorkersUpgrade => "AfterWorkersUpgrade",
            Hook::AfterClusterUpgrade => "AfterClusterUpgrade",
            Hook::BeforeClusterDelete => "BeforeClusterDelete",
            Hook::GenerateUpgradePlan => "GenerateUpgradePlan",
        }
    }

    /// The hook of this name, if the catalog has it.
    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.name() == name)
    }

    /// The request's kind (`<Hook>Request`).
    pub fn request_kind(self) -> String {
        format!("{}Request", self.name())
    }

    /// The response's kind (`<Hook>Response`).
    pub fn response_kind(self) -> String {
        format!("{}Response", self.name())
    }

    /// The path of a handler of this hook; `handler` is the name the extension gave it
    /// (without the ExtensionConfig's name), empty for discovery.
    pub fn path(self, handler: &str) -> String {
        gvh_to_path(GROUP, VERSION, self.name(), handler)
    }

    /// `GroupHook`'s text: `<hook>.<group>`.
    pub fn group_hook(self) -> String {
        format!("{}.{GROUP}", self.name())
    }
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A handler's path: `/<group>/<version>/<hook lowercase>[/<name lowercase>]`.
pub fn gvh_to_path(group: &str, version: &str, hook: &str, name: &str) -> String {
    if name.is_empty() {
        format!("/{group}/{version}/{}", hook.to_lowercase())
    } else {
        format!(
            "/{group}/{version}/{}/{}",
            hook.to_lowercase(),
            name.to_lowercase()
        )
    }
}

/// Splits `group/version` as Kubernetes' `schema.ParseGroupVersion` does.
pub fn parse_group_version(text: &str) -> Result<(String, String), String> {
    if text.is_empty() || text == "/" {
        return Ok((String::new(), String::new()));
    }
    match text.split('/').collect::<Vec<_>>().as_slice() {
        [version] => Ok((String::new(), (*version).to_string())),
        [group, version] => Ok(((*group).to_string(), (*version).to_string())),
        _ => Err(format!("unexpected GroupVersion string: {text}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_cluster_api_builds_them() {
        assert_eq!(
            Hook::Discovery.path(""),
            "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery"
        );
        assert_eq!(
            Hook::GeneratePatches.path("Generate-Patches"),
            "/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/generate-patches"
        );
        assert_eq!(
            Hook::BeforeClusterUpgrade.group_hook(),
            "BeforeClusterUpgrade.hooks.runtime.cluster.x-k8s.io"
        );
    }

    #[test]
    fn group_versions() {
        assert_eq!(
            parse_group_version("hooks.runtime.cluster.x-k8s.io/v1alpha1").unwrap(),
            ("hooks.runtime.cluster.x-k8s.io".into(), "v1alpha1".into())
        );
        assert_eq!(parse_group_version("v1").unwrap(), ("".into(), "v1".into()));
        assert!(parse_group_version("a/b/c").is_err());
    }
}
