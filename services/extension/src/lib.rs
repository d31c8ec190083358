//! An example Runtime SDK extension, speaking Cluster API's protocol, that does what
//! Cluster API's e2e test extension (`test/extension`) does for the
//! `quick-start-runtimesdk` ClusterClass:
//!
//! * discovery lists `generate-patches`, `validate-topology`, `discover-variables` and
//!   one handler per lifecycle hook (`before-cluster-create`, ...);
//! * GeneratePatches ([`patches`]) sets the load balancer's image repository, the
//!   control plane's `v: "2"` extra args and max surge, the workers' kubelet `v: "2"`,
//!   and the Docker machines' and machine pools' kind node images for their versions;
//! * DiscoverVariables defines `kubeadmControlPlaneMaxSurge` and `imageRepository`;
//! * ValidateTopology answers Success;
//! * lifecycle hooks answer what [`Lifecycle`] says: Success by default, or what a
//!   JSON file (re-read on every call, so a test can change it while the extension
//!   runs) gives per hook: `{"BeforeClusterUpgrade": {"status": "Success",
//!   "retryAfterSeconds": 5}}`.
//!
//! Every call can be appended to a log file (one JSON line: hook, handler, request),
//! so tests can tell which hooks were called with what.

pub mod patches;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::pin::Pin;

use hyper::body::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use topograph_runtime::catalog::{self, Hook};
use topograph_runtime::hooks::{
    self, ClusterClassVariable, CommonResponse, DiscoverVariablesResponse, DiscoveryResponse,
    ExtensionHandler, GeneratePatchesRequest, GroupVersionHook, ResponseStatus,
    ValidateTopologyResponse, VariableSchema,
};
use topograph_runtime::server::{Answer, Handler};

/// What a lifecycle hook answers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookAnswer {
    /// `Success` (default) or `Failure`.
    #[serde(default)]
    pub status: Option<ResponseStatus>,
    /// The message.
    #[serde(default)]
    pub message: String,
    /// Non-zero holds the operation that long (blocking hooks only).
    #[serde(default)]
    pub retry_after_seconds: i32,
}

/// Where lifecycle answers come from.
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    /// A JSON file `{"<Hook>": HookAnswer}`, read on every call; hooks it does not
    /// name (or no file) answer Success.
    pub responses: Option<PathBuf>,
}

impl Lifecycle {
    fn answer(&self, hook: Hook) -> Result<HookAnswer, String> {
        let Some(path) = &self.responses else {
            return Ok(HookAnswer::default());
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("failed to read hook responses {}: {e}", path.display()))?;
        let answers: BTreeMap<String, HookAnswer> = serde_json::from_str(&text)
            .map_err(|e| format!("failed to read hook responses {}: {e}", path.display()))?;
        Ok(answers.get(hook.name()).cloned().unwrap_or_default())
    }
}

/// The extension: its lifecycle answers and where calls are logged.
#[derive(Clone, Debug, Default)]
pub struct Extension {
    /// Lifecycle answers.
    pub lifecycle: Lifecycle,
    /// Appends one JSON line per call, when set.
    pub calls_log: Option<PathBuf>,
}

/// The handler names, per hook, as the quick-start-runtimesdk class and Cluster API's
/// e2e tests expect them.
pub fn handler_name(hook: Hook) -> &'static str {
    match hook {
        Hook::Discovery => "",
        Hook::GeneratePatches => "generate-patches",
        Hook::ValidateTopology => "validate-topology",
        Hook::DiscoverVariables => "discover-variables",
        Hook::BeforeClusterCreate => "before-cluster-create",
        Hook::AfterControlPlaneInitialized => "after-control-plane-initialized",
        Hook::BeforeClusterUpgrade => "before-cluster-upgrade",
        Hook::BeforeControlPlaneUpgrade => "before-control-plane-upgrade",
        Hook::AfterControlPlaneUpgrade => "after-control-plane-upgrade",
        Hook::BeforeWorkersUpgrade => "before-workers-upgrade",
        Hook::AfterWorkersUpgrade => "after-workers-upgrade",
        Hook::AfterClusterUpgrade => "after-cluster-upgrade",
        Hook::BeforeClusterDelete => "before-cluster-delete",
        Hook::GenerateUpgradePlan => "generate-upgrade-plan",
    }
}

fn json_answer(value: &impl Serialize) -> Answer {
    match serde_json::to_vec(value) {
        Ok(body) => (200, body),
        Err(e) => (500, format!("failed to encode response: {e}").into_bytes()),
    }
}

fn failure(kind: &str, message: String) -> Value {
    json!({
        "apiVersion": hooks::API_VERSION,
        "kind": kind,
        "status": "Failure",
        "message": message,
    })
}

impl Extension {
    /// Answers one request: `path` as Cluster API builds it, `body` its JSON.
    pub fn answer(&self, path: &str, body: &[u8]) -> Answer {
        if path == Hook::Discovery.path("") {
            return json_answer(&discovery());
        }
        let Some(hook) = Hook::ALL
            .into_iter()
            .filter(|h| *h != Hook::Discovery)
            .find(|h| path == h.path(handler_name(*h)))
        else {
            return (404, format!("no handler at {path}").into_bytes());
        };
        let request: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                return json_answer(&failure(
                    &hook.response_kind(),
                    format!("failed to decode request: {e}"),
                ));
            }
        };
        self.log(hook, &request);
        match hook {
            Hook::GeneratePatches => {
                match serde_json::from_value::<GeneratePatchesRequest>(request) {
                    Ok(request) => json_answer(&patches::generate(&request)),
                    Err(e) => json_answer(&failure(
                        &hook.response_kind(),
                        format!("failed to decode request: {e}"),
                    )),
                }
            }
            Hook::ValidateTopology => json_answer(&ValidateTopologyResponse {
                type_meta: hooks::TypeMeta::of(&hook.response_kind()),
                common: CommonResponse {
                    status: ResponseStatus::Success,
                    message: String::new(),
                },
            }),
            Hook::DiscoverVariables => json_answer(&discover_variables()),
            Hook::GenerateUpgradePlan => json_answer(&upgrade_plan(&request)),
            _ => match self.lifecycle.answer(hook) {
                Err(e) => json_answer(&failure(&hook.response_kind(), e)),
                Ok(answer) => {
                    let mut body = json!({
                        "apiVersion": hooks::API_VERSION,
                        "kind": hook.response_kind(),
                        "status": answer.status.unwrap_or(ResponseStatus::Success),
                    });
                    if !answer.message.is_empty() {
                        body["message"] = json!(answer.message);
                    }
                    if hook != Hook::AfterControlPlaneInitialized {
                        body["retryAfterSeconds"] = json!(answer.retry_after_seconds);
                    }
                    json_answer(&body)
                }
            },
        }
    }

    fn log(&self, hook: Hook, request: &Value) {
        let Some(path) = &self.calls_log else { return };
        let line = json!({"hook": hook.name(), "handler": handler_name(hook), "request": request});
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            tracing::warn!(error = %e, "failed to log call");
        }
    }
}

impl Handler for Extension {
    fn handle(&self, path: String, body: Bytes) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        let answer = self.answer(&path, &body);
        Box::pin(async move { answer })
    }
}

/// The discovery answer: every handler, default timeout and failure policy.
pub fn discovery() -> DiscoveryResponse {
    DiscoveryResponse {
        type_meta: hooks::TypeMeta::of(&Hook::Discovery.response_kind()),
        common: CommonResponse {
            status: ResponseStatus::Success,
            message: String::new(),
        },
        handlers: Hook::ALL
            .into_iter()
            .filter(|h| *h != Hook::Discovery)
            .map(|hook| ExtensionHandler {
                name: handler_name(hook).to_string(),
                request_hook: GroupVersionHook {
                    api_version: format!("{}/{}", catalog::GROUP, catalog::VERSION),
                    hook: hook.name().to_string(),
                },
                timeout_seconds: None,
                failure_policy: None,
            })
            .collect(),
    }
}

/// The variables Cluster API's e2e extension defines.
pub fn discover_variables() -> DiscoverVariablesResponse {
    let image_repository_metadata = json!({
        "labels": {"objects": "DockerCluster"},
        "annotations": {"description": "Gets set at DockerCluster.Spec.Template.Spec.LoadBalancer.ImageRepository"}
    });
    DiscoverVariablesResponse {
        type_meta: hooks::TypeMeta::of(&Hook::DiscoverVariables.response_kind()),
        common: CommonResponse {
            status: ResponseStatus::Success,
            message: String::new(),
        },
        variables: vec![
            ClusterClassVariable {
                name: "kubeadmControlPlaneMaxSurge".into(),
                required: false,
                metadata: None,
                schema: VariableSchema {
                    open_api_v3_schema: json!({
                        "type": "string",
                        "default": "",
                        "example": "0",
                        "description": "kubeadmControlPlaneMaxSurge is the maximum number of control planes that can be scheduled above or under the desired number of control plane machines.",
                        "x-kubernetes-validations": [{
                            "rule": "self == \"\" || self != \"\"",
                            "messageExpression": "'just a test expression, got %s'.format([self])"
                        }]
                    }),
                },
            },
            ClusterClassVariable {
                name: "imageRepository".into(),
                required: true,
                metadata: Some(image_repository_metadata.clone()),
                schema: VariableSchema {
                    open_api_v3_schema: json!({
                        "type": "string",
                        "example": "kindest",
                        "x-metadata": image_repository_metadata,
                    }),
                },
            },
        ],
    }
}

/// GenerateUpgradePlan: one step per minor, the `.0` patch of every minor between the
/// control plane's version and the target, then the target; the workers' plan is left
/// to the topology (Cluster API derives it).
pub fn upgrade_plan(request: &Value) -> Value {
    let text = |key: &str| request.get(key).and_then(Value::as_str).unwrap_or_default();
    let minor_of = |version: &str| -> Option<(u64, u64)> {
        let mut parts = version.trim_start_matches('v').split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some((major, minor))
    };
    let (from, to) = (
        text("fromControlPlaneKubernetesVersion"),
        text("toKubernetesVersion"),
    );
    let (Some((major, from_minor)), Some((to_major, to_minor))) = (minor_of(from), minor_of(to))
    else {
        return failure(
            &Hook::GenerateUpgradePlan.response_kind(),
            format!("cannot plan an upgrade from {from:?} to {to:?}"),
        );
    };
    let mut steps: Vec<Value> = Vec::new();
    if major == to_major {
        for minor in from_minor + 1..to_minor {
            steps.push(json!({"version": format!("v{major}.{minor}.0")}));
        }
    }
    if from != to {
        steps.push(json!({"version": to}));
    }
    json!({
        "apiVersion": hooks::API_VERSION,
        "kind": Hook::GenerateUpgradePlan.response_kind(),
        "status": "Success",
        "controlPlaneUpgrades": steps,
    })
}

#[cfg(test)]
mod upgrade_plan_tests {
    use super::*;

    #[test]
    fn plans_step_through_every_minor_to_the_target() {
        let plan = |from: &str, to: &str| {
            upgrade_plan(
                &json!({"fromControlPlaneKubernetesVersion": from, "toKubernetesVersion": to}),
            )
        };
        assert_eq!(
            plan("v1.30.3", "v1.33.1")["controlPlaneUpgrades"],
            json!([{"version": "v1.31.0"}, {"version": "v1.32.0"}, {"version": "v1.33.1"}])
        );
        assert_eq!(
            plan("v1.30.3", "v1.30.5")["controlPlaneUpgrades"],
            json!([{"version": "v1.30.5"}])
        );
        assert_eq!(
            plan("v1.30.3", "v1.30.3")["controlPlaneUpgrades"],
            json!([])
        );
        assert_eq!(plan("garbage", "v1.30.3")["status"], "Failure");
    }
}
