//! Cluster API's own kinds written in the version the management cluster prefers.
//!
//! The engine and the reconcile speak one version of Cluster API's kinds; a management
//! cluster may prefer another (Cluster API 1.11 and later store `v1beta2`). Cluster
//! API's topology controller applies in the preferred version, so its field manager's
//! `managedFields` entry is in that version's field paths: an apply in another version
//! would change the ownership record (and a takeover of its objects would write every
//! one of them once) even when no value changes. So applies and their local predictions
//! of Cluster API's kinds are converted ([`topograph_api::convert`]) to the version the
//! server prefers, and what comes back is converted back to the caller's version.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use kube::discovery;
use serde_json::Value;
use topograph_api::convert::{self, GROUP, Options, Version};
use topograph_api::object::ObjectExt;

use crate::api::ManagementCluster;
use crate::error::Error;

/// What discovery said of Cluster API's group, and when.
#[derive(Clone, Debug)]
pub(crate) struct Preferred {
    version: Option<Version>,
    at: Instant,
}

/// `(group, kind)` -> the apiVersion the server serves it in, for references that
/// carry only a group (v1beta2's contract references going down to v1beta1).
pub(crate) type RefVersions = HashMap<(String, String), String>;

impl ManagementCluster {
    /// The version of Cluster API's group the server prefers, when it is one the
    /// conversion knows; asked again after the unserved-kind expiry, so an upgrade of
    /// Cluster API is seen without a restart.
    async fn preferred_cluster_api(&self) -> Result<Option<Version>, Error> {
        if let Some(known) = self.preferred_cache().clone()
            && known.at.elapsed() < self.unserved_expiry()
        {
            return Ok(known.version);
        }
        let version = match discovery::group(self.client(), GROUP).await {
            Ok(group) => {
                Version::of_api_version(&format!("{GROUP}/{}", group.preferred_version_or_latest()))
            }
            Err(kube::Error::Discovery(_)) => None,
            Err(e) if crate::error::is_not_found(&e) => None,
            Err(e) => return Err(e.into()),
        };
        *self.preferred_cache() = Some(Preferred {
            version,
            at: Instant::now(),
        });
        Ok(version)
    }

    /// The apiVersion of Cluster API's group the server prefers (`cluster.x-k8s.io/v1beta2`
    /// on Cluster API 1.11 and later); None when discovery names none the conversion
    /// knows. Watching in it spares the server a conversion of every event, as Cluster
    /// API's own controllers watch in their storage version.
    pub async fn preferred_cluster_api_version(&self) -> Result<Option<&'static str>, Error> {
        Ok(self
            .preferred_cluster_api()
            .await?
            .map(Version::api_version))
    }

    /// The version `object` is to be written in, when it is one of Cluster API's
    /// converted kinds and the server prefers another version of them.
    pub(crate) async fn write_version(&self, object: &Value) -> Result<Option<Version>, Error> {
        let Some(own) = convert::version_of(object) else {
            return Ok(None);
        };
        Ok(self
            .preferred_cluster_api()
            .await?
            .filter(|preferred| *preferred != own))
    }

    /// `object` with its owner references to Cluster API's objects naming the version
    /// the server prefers (Cluster API writes them in its own version; an owner
    /// reference in another one would be a difference the next apply has to write).
    /// `None` when nothing needs renaming.
    pub(crate) async fn with_preferred_owner_refs(
        &self,
        object: &Value,
    ) -> Result<Option<Value>, Error> {
        let names_cluster_api = object
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|owners| {
                owners.iter().any(|r| {
                    r.get("apiVersion")
                        .and_then(Value::as_str)
                        .and_then(Version::of_api_version)
                        .is_some()
                })
            });
        if !names_cluster_api {
            return Ok(None);
        }
        let Some(preferred) = self.preferred_cluster_api().await? else {
            return Ok(None);
        };
        let mut renamed = object.clone();
        Ok(convert::owner_refs_to(&mut renamed, preferred).then_some(renamed))
    }

    /// `intent` in `to`, to be written: a new intent, so no conversion data.
    pub(crate) fn for_writing(intent: &Value, to: Version) -> Result<Value, Error> {
        let options = Options {
            conversion_data: false,
            ..Options::default()
        };
        convert::convert(intent, to, &options).map_err(|e| {
            Error::invalid(format!(
                "{} {}: converting to {}: {e}",
                intent.kind(),
                intent.name(),
                to.api_version()
            ))
        })
    }

    /// `object`, answered by the server (or computed) in another version, back in
    /// `version`, with the conversion data a round trip needs, as the server would
    /// answer a read in that version.
    pub(crate) async fn read_back(&self, object: &Value, version: Version) -> Result<Value, Error> {
        if convert::version_of(object).is_none_or(|own| own == version) {
            return Ok(object.clone());
        }
        let versions = self.ref_versions(object).await?;
        let lookup = |group: &str, kind: &str| {
            versions
                .get(&(group.to_string(), kind.to_string()))
                .cloned()
        };
        let options = Options {
            conversion_data: true,
            api_version_of: &lookup,
        };
        convert::convert(object, version, &options).map_err(|e| {
            Error::invalid(format!(
                "{} {}: converting to {}: {e}",
                object.kind(),
                object.name(),
                version.api_version()
            ))
        })
    }

    /// The apiVersion of every `{apiGroup, kind}` reference in `object`, from
    /// discovery (cached for the process).
    async fn ref_versions(&self, object: &Value) -> Result<RefVersions, Error> {
        let mut wanted = BTreeSet::new();
        group_kind_refs(object, &mut wanted);
        let mut found = RefVersions::new();
        for (group, kind) in wanted {
            let key = (group.clone(), kind.clone());
            if let Some(known) = self.ref_versions_cache().get(&key).cloned() {
                found.insert(key, known);
                continue;
            }
            let api_version = match discovery::group(self.client(), &group).await {
                Ok(g) => g.recommended_kind(&kind).map(|(r, _)| r.api_version),
                Err(kube::Error::Discovery(_)) => None,
                Err(e) if crate::error::is_not_found(&e) => None,
                Err(e) => return Err(e.into()),
            };
            if let Some(api_version) = api_version {
                self.ref_versions_cache()
                    .insert(key.clone(), api_version.clone());
                found.insert(key, api_version);
            }
        }
        Ok(found)
    }
}

/// Every `(apiGroup, kind)` pair of a map holding both, anywhere in `value`.
fn group_kind_refs(value: &Value, out: &mut BTreeSet<(String, String)>) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(group)), Some(Value::String(kind))) =
                (map.get("apiGroup"), map.get("kind"))
            {
                out.insert((group.clone(), kind.clone()));
            }
            map.values().for_each(|v| group_kind_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| group_kind_refs(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_by_group_are_found_anywhere() {
        let md = json!({"spec": {"template": {"spec": {
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "a"}},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "b"}}}},
            "status": {"conditions": [{"kind": "not a reference"}]}});
        let mut found = BTreeSet::new();
        group_kind_refs(&md, &mut found);
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            [
                (
                    "bootstrap.cluster.x-k8s.io".to_string(),
                    "KubeadmConfigTemplate".to_string()
                ),
                (
                    "infrastructure.cluster.x-k8s.io".to_string(),
                    "DockerMachineTemplate".to_string()
                ),
            ]
        );
    }
}
