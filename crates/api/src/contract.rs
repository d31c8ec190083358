//! Which Cluster API contract a provider kind implements, as its CustomResourceDefinition
//! declares it.
//!
//! Cluster API reads provider objects (control planes, infrastructure clusters, ...)
//! without knowing their types: what it writes and reads depends on the *contract* the
//! kind implements, and the kind's CRD says which with labels
//! `cluster.x-k8s.io/<contract>: <api versions joined by _>`
//! (`cluster.x-k8s.io/v1beta1: v1beta1_v1beta2`). An object's contract is the one whose
//! label lists the object's API version (the latest such contract when several do); a
//! kind whose CRD lists the version nowhere takes the latest contract it declares. Kinds
//! without a declaration are treated as implementing the v1beta1 contract, as the
//! topology always has; Cluster API itself refuses them.
//!
//! Only the declaration lives here (no I/O): the engine knows the field paths of each
//! contract (`topograph_engine::contract`), the management client reads CRDs.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::object::{GroupVersion, ObjectExt};

/// The label prefix of contract declarations.
pub const LABEL_PREFIX: &str = "cluster.x-k8s.io/";

/// The group and kind of CustomResourceDefinitions.
pub const CRD_API_VERSION: &str = "apiextensions.k8s.io/v1";
/// The kind of CustomResourceDefinitions.
pub const CRD_KIND: &str = "CustomResourceDefinition";

/// A Cluster API contract a provider kind can implement. Ordered oldest first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Contract {
    /// The v1beta1 contract (Cluster API v1.10 and earlier): `status.ready`,
    /// ObjectReferences with `apiVersion`, timeouts as Go durations.
    #[default]
    V1Beta1,
    /// The v1beta2 contract (Cluster API v1.11 and later): `status.initialization.*`,
    /// contract-versioned references `{apiGroup, kind, name}`, timeouts in seconds.
    V1Beta2,
}

impl Contract {
    /// Every contract, oldest first.
    pub const ALL: [Contract; 2] = [Contract::V1Beta1, Contract::V1Beta2];

    /// The contract's name (`v1beta1`), as its label spells it.
    pub fn name(self) -> &'static str {
        match self {
            Contract::V1Beta1 => "v1beta1",
            Contract::V1Beta2 => "v1beta2",
        }
    }

    /// The contract called `name`, if topograph knows it.
    pub fn from_name(name: &str) -> Option<Contract> {
        Contract::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The CRD label key that declares this contract (`cluster.x-k8s.io/v1beta2`).
    pub fn label(self) -> String {
        format!("{LABEL_PREFIX}{}", self.name())
    }
}

impl std::fmt::Display for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The contracts one CRD declares: for each, the API versions of the kind that
/// implement it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    versions: BTreeMap<Contract, Vec<String>>,
}

impl Declared {
    /// The contracts `labels` (a CRD's labels) declare. Labels of contracts topograph
    /// does not know, and empty ones, declare nothing, as in Cluster API.
    pub fn from_labels<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut versions = BTreeMap::new();
        for (key, value) in labels {
            let Some(contract) = key.strip_prefix(LABEL_PREFIX).and_then(Contract::from_name)
            else {
                continue;
            };
            let listed: Vec<String> = value
                .split('_')
                .filter(|v| !v.is_empty())
                .map(str::to_string)
                .collect();
            if !listed.is_empty() {
                versions.insert(contract, listed);
            }
        }
        Declared { versions }
    }

    /// `contract` implemented by `api_versions` (versions only, `v1beta1`).
    pub fn with(mut self, contract: Contract, api_versions: &[&str]) -> Self {
        self.versions.insert(
            contract,
            api_versions.iter().map(|v| v.to_string()).collect(),
        );
        self
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
    }

    /// The latest contract declared, if any.
    pub fn latest(&self) -> Option<Contract> {
        self.versions.keys().next_back().copied()
    }

    /// The newest API version (by Kubernetes' ordering: GA, then beta, then alpha,
    /// higher numbers first) listed for the latest contract declared: the version
    /// Cluster API reads a kind in when nothing else says which.
    pub fn newest_version(&self) -> Option<&str> {
        let latest = self.latest()?;
        self.versions
            .get(&latest)?
            .iter()
            .max_by_key(|v| kube_version_rank(v))
            .map(String::as_str)
    }

    /// The contract objects of API version `version` (`v1beta2`) implement: the latest
    /// contract whose label lists the version, else the latest declared, else v1beta1.
    pub fn for_version(&self, version: &str) -> Contract {
        self.versions
            .iter()
            .rev()
            .find(|(_, versions)| versions.iter().any(|v| v == version))
            .map(|(contract, _)| *contract)
            .or_else(|| self.latest())
            .unwrap_or_default()
    }

    /// The declaration as CRD labels.
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.versions
            .iter()
            .map(|(contract, versions)| (contract.label(), versions.join("_")))
            .collect()
    }

    /// A CustomResourceDefinition of `kind` in `group` (named `plural.group`) that
    /// carries this declaration and nothing else: what a caller passes among a render's
    /// inputs to tell the engine which contract the kind implements.
    pub fn to_crd(&self, group: &str, kind: &str, plural: &str) -> Value {
        json!({
            "apiVersion": CRD_API_VERSION,
            "kind": CRD_KIND,
            "metadata": {"name": format!("{plural}.{group}"), "labels": self.labels()},
            "spec": {"group": group, "names": {"kind": kind, "plural": plural}},
        })
    }
}

/// Orders Kubernetes API versions as `k8s.io/apimachinery` does: GA above beta above
/// alpha, then by major and minor number (`v2` > `v1` > `v2beta1` > `v1beta2` >
/// `v1alpha1`); any of them above a version of another form, those by text.
fn kube_version_rank(version: &str) -> (u8, u8, u64, u64, std::cmp::Reverse<String>) {
    let parsed = version.strip_prefix('v').and_then(|rest| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((major, 2, 0));
        }
        let (stage, minor) = if let Some(minor) = tail.strip_prefix("beta") {
            (1, minor)
        } else {
            (0, tail.strip_prefix("alpha")?)
        };
        Some((major, stage, minor.parse().ok()?))
    });
    match parsed {
        Some((major, stage, minor)) => (1, stage, major, minor, std::cmp::Reverse(String::new())),
        None => (0, 0, 0, 0, std::cmp::Reverse(version.to_string())),
    }
}

/// A CRD's group, kind and declared contracts; `None` for anything else, or a CRD
/// without `spec.group` and `spec.names.kind`.
pub fn from_crd(object: &Value) -> Option<(String, String, Declared)> {
    let gv = GroupVersion::parse(object.api_version()).ok()?;
    if gv.group != "apiextensions.k8s.io" || object.kind() != CRD_KIND {
        return None;
    }
    let group = object.at(&["spec", "group"]).and_then(Value::as_str)?;
    let kind = object
        .at(&["spec", "names", "kind"])
        .and_then(Value::as_str)?;
    let labels = object.labels();
    let declared = Declared::from_labels(labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    Some((group.to_string(), kind.to_string(), declared))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(labels: &[(&str, &str)]) -> Declared {
        Declared::from_labels(labels.iter().copied())
    }

    /// CRD labels.
    type Labels = &'static [(&'static str, &'static str)];

    #[test]
    fn the_contract_listing_the_version_wins_and_the_latest_among_several() {
        // (labels, object version, contract)
        let cases: &[(Labels, &str, Contract)] = &[
            (&[], "v1beta1", Contract::V1Beta1),
            (
                &[("cluster.x-k8s.io/v1beta1", "v1beta1")],
                "v1beta1",
                Contract::V1Beta1,
            ),
            (
                &[("cluster.x-k8s.io/v1beta2", "v1beta2")],
                "v1beta2",
                Contract::V1Beta2,
            ),
            (
                &[
                    ("cluster.x-k8s.io/v1beta1", "v1beta1_v1beta2"),
                    ("cluster.x-k8s.io/v1beta2", "v1beta2"),
                ],
                "v1beta2",
                Contract::V1Beta2,
            ),
            (
                &[
                    ("cluster.x-k8s.io/v1beta1", "v1beta1_v1beta2"),
                    ("cluster.x-k8s.io/v1beta2", "v1beta2"),
                ],
                "v1beta1",
                Contract::V1Beta1,
            ),
            // A version no label lists: the latest contract declared.
            (
                &[
                    ("cluster.x-k8s.io/v1beta1", "v1alpha4"),
                    ("cluster.x-k8s.io/v1beta2", "v1beta2"),
                ],
                "v1beta3",
                Contract::V1Beta2,
            ),
            // Empty values and unknown contracts declare nothing.
            (
                &[("cluster.x-k8s.io/v1beta2", "")],
                "v1beta2",
                Contract::V1Beta1,
            ),
            (&[("cluster.x-k8s.io/v1", "v1")], "v1", Contract::V1Beta1),
            (
                &[("example.com/v1beta2", "v1beta2")],
                "v1beta2",
                Contract::V1Beta1,
            ),
        ];
        for (labels, version, want) in cases {
            assert_eq!(
                declared(labels).for_version(version),
                *want,
                "{labels:?} {version}"
            );
        }
    }

    #[test]
    fn the_newest_version_of_the_latest_contract() {
        let d = declared(&[
            ("cluster.x-k8s.io/v1beta1", "v1alpha4_v1beta1"),
            ("cluster.x-k8s.io/v1beta2", "v1alpha1_v1beta2_v1beta1"),
        ]);
        assert_eq!(d.newest_version(), Some("v1beta2"));
        let d = declared(&[("cluster.x-k8s.io/v1beta2", "v1beta2_v1_v2alpha1")]);
        assert_eq!(d.newest_version(), Some("v1"));
        assert_eq!(Declared::default().newest_version(), None);
    }

    #[test]
    fn a_declaration_survives_its_crd() {
        let d = Declared::default()
            .with(Contract::V1Beta1, &["v1beta1"])
            .with(Contract::V1Beta2, &["v1beta2"]);
        let crd = d.to_crd(
            "controlplane.cluster.x-k8s.io",
            "KubeadmControlPlane",
            "kubeadmcontrolplanes",
        );
        assert_eq!(
            crd.name(),
            "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io"
        );
        let (group, kind, read) = from_crd(&crd).unwrap();
        assert_eq!(
            (group.as_str(), kind.as_str()),
            ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane")
        );
        assert_eq!(read, d);
        assert_eq!(read.latest(), Some(Contract::V1Beta2));
        assert!(from_crd(&json!({"apiVersion": "v1", "kind": "ConfigMap"})).is_none());
    }
}
