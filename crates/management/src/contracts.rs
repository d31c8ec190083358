//! Which Cluster API contract each provider kind implements, from the labels of the
//! kind's CustomResourceDefinition (`cluster.x-k8s.io/<contract>: <versions>`), as
//! Cluster API finds it: the CRD named `<plural>.<group>`, the plural as discovery
//! reports it.
//!
//! Declarations are cached per kind for [`CONTRACT_EXPIRY`], so a reconcile costs no
//! request for them once warm, and a provider upgraded to a newer contract is seen
//! within minutes. A kind whose CRD cannot be found declares nothing (the v1beta1
//! contract, for whoever asks); that answer is cached too, as a missing CRD is
//! rarely installed between two reconciles.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use topograph_api::contract::{self, Declared};
use topograph_api::object::GroupVersion;

use crate::api::ManagementCluster;
use crate::error::Error;

/// How long a kind's declaration is believed before its CRD is read again.
pub const CONTRACT_EXPIRY: Duration = Duration::from_secs(300);

/// Declarations by (group, kind), with when they were read.
#[derive(Default)]
pub(crate) struct Contracts {
    by_kind: HashMap<(String, String), (Declared, Instant)>,
}

/// The shared cache of one management cluster's declarations.
pub(crate) type SharedContracts = Arc<Mutex<Contracts>>;

impl ManagementCluster {
    /// The contracts `kind`'s CRD declares (`api_version` gives the group; its version
    /// does not matter). Read once per [`CONTRACT_EXPIRY`] and kind.
    pub async fn declared_contracts(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<Declared, Error> {
        let gv = GroupVersion::parse(api_version).map_err(Error::invalid)?;
        let key = (gv.group.clone(), kind.to_string());
        if let Some((declared, at)) = self.lock_contracts().by_kind.get(&key)
            && at.elapsed() < CONTRACT_EXPIRY
        {
            return Ok(declared.clone());
        }
        // Built-in and unserved kinds have no CRD to declare anything.
        let declared = match self.crd_name(api_version, kind).await? {
            None => Declared::default(),
            Some(name) => self
                .get(contract::CRD_API_VERSION, contract::CRD_KIND, "", &name)
                .await?
                .as_ref()
                .and_then(contract::from_crd)
                .map(|(_, _, declared)| declared)
                .unwrap_or_default(),
        };
        self.lock_contracts()
            .by_kind
            .insert(key, (declared.clone(), Instant::now()));
        Ok(declared)
    }

    fn lock_contracts(&self) -> std::sync::MutexGuard<'_, Contracts> {
        self.contracts.lock().unwrap_or_else(|e| e.into_inner())
    }
}
