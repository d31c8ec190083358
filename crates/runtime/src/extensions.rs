//! The topology mutation hooks as the engine calls them: synchronously, by registered
//! handler name, for objects of a namespace. The engine stays free of I/O; whoever
//! renders supplies an implementation (`blocking::BlockingClient` drives the HTTPS
//! client; tests may answer in process).

use crate::error::Error;
use crate::hooks::{
    DiscoverVariablesRequest, DiscoverVariablesResponse, GeneratePatchesRequest,
    GeneratePatchesResponse, GenerateUpgradePlanRequest, GenerateUpgradePlanResponse,
    ValidateTopologyRequest, ValidateTopologyResponse,
};

/// Runtime extensions reachable by handler name (`<handler>.<ExtensionConfig name>`).
///
/// Each call behaves as Cluster API's `CallExtension`: the handler's failure policy is
/// already applied (an ignored failure comes back as a default success response), and
/// an answer with status `Failure` is an error.
pub trait Extensions: Send + Sync {
    /// GeneratePatches for the Cluster in `namespace`/`name`.
    fn generate_patches(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, Error>;

    /// ValidateTopology for the Cluster in `namespace`/`name`.
    fn validate_topology(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, Error>;

    /// DiscoverVariables for the ClusterClass in `namespace`/`name`.
    fn discover_variables(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &DiscoverVariablesRequest,
    ) -> Result<DiscoverVariablesResponse, Error>;

    /// GenerateUpgradePlan for the Cluster in `namespace`/`name`.
    fn generate_upgrade_plan(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &GenerateUpgradePlanRequest,
    ) -> Result<GenerateUpgradePlanResponse, Error>;
}
