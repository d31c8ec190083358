//! The render service as a [`topograph_engine::Engine`]: the client side of
//! `topograph.render.v1`, beside the generated code. Appliers and gateways that point at
//! a render fleet use it exactly where the embedded mode uses the engine linked in, and
//! get the same verdicts (the service runs the same admission and render functions;
//! refusals come back as violations whose descriptions are the engine's own messages).
//! A render with runtime extensions sends the discovered ExtensionConfigs and the
//! namespaces' labels; the service calls the extensions itself.

use serde_json::Value;
use tonic::transport::Channel;
use topograph_api::Violation;
use topograph_api::field::{ErrorType, FieldError};
use topograph_engine::DesiredState;
use topograph_engine::admission::Verdict;
use topograph_engine::service::{
    BoxFuture, Engine, ObjectName, Plan, RenderFailure, RenderInputs, Unavailable,
};

use crate::balance;
use crate::render::v1 as pb;
use crate::render::v1::render_service_client::RenderServiceClient;

/// The render service (`topograph.render.v1.RenderService`), over gRPC.
#[derive(Clone, Debug)]
pub struct RemoteEngine {
    client: RenderServiceClient<Channel>,
}

impl RemoteEngine {
    /// A client of the render service at `url`: `http://host:port`, `dns:///host:port`
    /// (every replica the name resolves to) or a comma-separated list, calls balanced
    /// over the replicas that answer ([`balance`]). Connections are made on first use
    /// and re-made when they break. Call inside a Tokio runtime.
    pub fn connect_lazy(url: &str) -> Result<Self, String> {
        let channel = balance::channel(url, balance::Options::default())
            .map_err(|e| format!("render service address: {e}"))?;
        Ok(RemoteEngine::new(channel))
    }

    /// A client over `channel` (shared with other clients of the render service).
    pub fn new(channel: Channel) -> Self {
        RemoteEngine {
            client: RenderServiceClient::new(channel),
        }
    }
}

/// A request carrying the current trace context, so the render service's spans join the
/// caller's trace.
fn traced<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    topograph_telemetry::trace::inject_metadata(request.metadata_mut());
    request
}

fn encode(value: &Value) -> Vec<u8> {
    topograph_api::json::to_vec(value)
}

/// A current object as a render reads it: without `metadata.managedFields`, which no
/// render reads (only plans, a separate call, look at ownership) and which is often
/// half of an object's JSON, to write here and to parse there. Written without a copy.
fn encode_for_render(value: &Value) -> Vec<u8> {
    topograph_api::json::to_vec_omitting(value, &["metadata", "managedFields"])
}

fn unavailable(status: &tonic::Status) -> Unavailable {
    Unavailable(format!(
        "render service: {:?}: {}",
        status.code(),
        status.message()
    ))
}

/// A refusal of the request by the render service: the violations about the object
/// itself (request field `object`), relative to it. Violations about any other field
/// mean the service could not read what this client sent: not a verdict on the object.
fn refusal_of_object(status: &tonic::Status) -> Result<Vec<Violation>, Unavailable> {
    let Some(violations) = crate::violations::of_status(status) else {
        return Err(unavailable(status));
    };
    violations
        .into_iter()
        .map(|v| {
            let relative = if v.field == "object" {
                Some(String::new())
            } else {
                v.field.strip_prefix("object.").map(str::to_string)
            };
            match relative {
                Some(field) => Ok(Violation::new(field, v.description)),
                None => Err(Unavailable(format!(
                    "render service refused the request: {}: {}",
                    v.field, v.description
                ))),
            }
        })
        .collect()
}

impl RemoteEngine {
    async fn validate(
        &self,
        object: &Value,
        old: Option<&Value>,
        cluster_classes: &[Value],
        clusters: &[Value],
    ) -> Result<Verdict, Unavailable> {
        let request = pb::ValidateRequest {
            object: encode(object),
            old_object: old.map(encode).unwrap_or_default(),
            cluster_classes: cluster_classes.iter().map(encode).collect(),
            clusters: clusters.iter().map(encode).collect(),
        };
        let response = match self.client.clone().validate(traced(request)).await {
            Ok(response) => response.into_inner(),
            Err(status) => {
                return Ok(Verdict {
                    violations: refusal_of_object(&status)?,
                    errors: Vec::new(),
                    warnings: Vec::new(),
                    object: object.clone(),
                });
            }
        };
        let admitted = if response.object.is_empty() {
            object.clone()
        } else {
            serde_json::from_slice(&response.object).map_err(|e| {
                Unavailable(format!(
                    "render service: the admitted object is not JSON: {e}"
                ))
            })?
        };
        // Violations with a known Kubernetes reason are the admission rules' field
        // errors; the others are problems reading the object.
        let errors = response
            .violations
            .iter()
            .filter_map(|v| {
                Some(FieldError {
                    path: v.field.clone(),
                    error_type: ErrorType::from_reason(&v.r#type)?,
                    bad_value: (!v.bad_value.is_empty()).then(|| v.bad_value.clone()),
                    detail: v.detail.clone(),
                })
            })
            .collect();
        Ok(Verdict {
            violations: response
                .violations
                .into_iter()
                .map(|v| Violation::new(v.field, v.message))
                .collect(),
            errors,
            warnings: response.warnings,
            object: admitted,
        })
    }
}

/// A failed render call: a refusal of the inputs carries the descriptions of its
/// violations, which are the texts the engine gives in process; any other status means
/// the service gave no verdict.
fn render_failure(status: &tonic::Status) -> RenderFailure {
    match crate::violations::of_status(status) {
        Some(violations) => {
            RenderFailure::Refused(violations.into_iter().map(|v| v.description).collect())
        }
        None => RenderFailure::Unavailable(unavailable(status)),
    }
}

fn object_name(name: Option<pb::ObjectName>) -> ObjectName {
    let name = name.unwrap_or_default();
    ObjectName {
        api_version: name.api_version,
        kind: name.kind,
        namespace: name.namespace,
        name: name.name,
    }
}

fn json(field: &str, bytes: &[u8]) -> Result<Value, Unavailable> {
    serde_json::from_slice(bytes)
        .map_err(|e| Unavailable(format!("render service: {field} is not JSON: {e}")))
}

impl Engine for RemoteEngine {
    fn admit_class<'a>(
        &'a self,
        class: &'a Value,
        old: Option<&'a Value>,
        clusters: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>> {
        Box::pin(self.validate(class, old, &[], clusters))
    }

    fn admit_cluster<'a>(
        &'a self,
        cluster: &'a Value,
        old: Option<&'a Value>,
        classes: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>> {
        Box::pin(self.validate(cluster, old, classes, &[]))
    }

    fn render<'a>(
        &'a self,
        inputs: RenderInputs<'a>,
    ) -> BoxFuture<'a, Result<DesiredState, RenderFailure>> {
        // The client side of the render call; the render service's span is its child.
        let span = tracing::info_span!(
            "render",
            otel.kind = "client",
            rpc.system = "grpc",
            rpc.method = "/topograph.render.v1.RenderService/Render",
            class = %inputs.class_key(),
        );
        let call = async move {
            let request = pb::RenderRequest {
                cluster_class: encode(inputs.class_object),
                templates: Vec::new(),
                cluster: encode(&inputs.cluster.document),
                current_objects: inputs.objects.iter().map(encode_for_render).collect(),
                extension_configs: inputs
                    .extensions
                    .map(|e| e.configs.iter().map(encode).collect())
                    .unwrap_or_default(),
                namespaces: inputs
                    .extensions
                    .map(|e| {
                        e.namespaces
                            .iter()
                            .map(|(name, labels)| pb::NamespaceLabels {
                                name: name.clone(),
                                labels: labels.clone().into_iter().collect(),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                // Only `desired` is read here: the objects again and the patch trace
                // would double the answer for nothing.
                desired_only: true,
            };
            let response = self
                .client
                .clone()
                .render(traced(request))
                .await
                .map_err(|s| render_failure(&s))?
                .into_inner();
            let desired = response.desired.ok_or_else(|| {
                RenderFailure::Unavailable(Unavailable(
                    "render service: the response carries no desired state".to_string(),
                ))
            })?;
            crate::desired::from_message(&desired).map_err(|e| {
                RenderFailure::Unavailable(Unavailable(format!(
                    "render service: the response's desired state is unreadable: {e}"
                )))
            })
        };
        Box::pin(tracing::Instrument::instrument(call, span))
    }

    fn plan<'a>(
        &'a self,
        desired: &'a [Value],
        current: &'a [Value],
    ) -> BoxFuture<'a, Result<Plan, Unavailable>> {
        Box::pin(async move {
            let request = pb::PlanRequest {
                render: None,
                desired: desired.iter().map(encode).collect(),
                current: current.iter().map(encode).collect(),
            };
            let response = self
                .client
                .clone()
                .plan(traced(request))
                .await
                .map_err(|s| unavailable(&s))?
                .into_inner();
            Ok(Plan {
                created: response
                    .created
                    .iter()
                    .map(|b| json("created", b))
                    .collect::<Result<_, _>>()?,
                modified: response
                    .modified
                    .into_iter()
                    .map(|m| Ok((object_name(m.object), json("modified.patch", &m.patch)?)))
                    .collect::<Result<_, Unavailable>>()?,
                deleted: response
                    .deleted
                    .into_iter()
                    .map(|n| object_name(Some(n)))
                    .collect(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_render_gets_the_object_without_its_managed_fields_and_nothing_else_lost() {
        let object = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "MachineDeployment",
            "metadata": {
                "name": "md", "namespace": "ns", "labels": {"a": "b"},
                "managedFields": [{"manager": "topograph", "operation": "Apply"}],
            },
            "spec": {"replicas": 3, "managedFields": "not metadata: kept"},
            "status": {"replicas": 2},
        });
        let sent: Value = serde_json::from_slice(&encode_for_render(&object)).unwrap();
        let mut expected = object.clone();
        expected["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert_eq!(sent, expected);
        // Anything but an object goes as it is.
        assert_eq!(encode_for_render(&json!([1, 2])), b"[1,2]");
    }
}
