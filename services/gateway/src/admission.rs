//! Admission: Cluster API's validation (and, for Clusters, defaulting) of the objects
//! Apply writes. [`RenderService`] asks the render service (`Validate`, `Default`),
//! so every gateway replica shares the render fleet's rules and capacity;
//! [`InProcess`] runs the same engine functions in this process (the embedded mode).
//!
//! Violations come back with paths inside the object; the caller prefixes them with
//! the request field the object came in.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tonic::Status;
use tonic::transport::Channel;
use topograph_api::load::{Bundle, Input, LoadOptions, load};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_api::object::ObjectExt;
use topograph_engine::validate::{admit_cluster, validate_cluster_class};
use topograph_proto::render::v1 as render;
use topograph_proto::render::v1::render_service_client::RenderServiceClient;

use crate::objects::class_of;
use crate::violations::Violation;

/// A boxed future, so the admission can be chosen at run time.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What admission made of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Why it is refused; empty when it is admitted.
    pub violations: Vec<Violation>,
    /// What it is admitted with.
    pub warnings: Vec<String>,
    /// The object to write: defaulted for a Cluster, as given otherwise.
    pub object: Value,
}

/// Validates ClusterClasses and admits (defaults and validates) Clusters.
pub trait Admission: Send + Sync {
    /// A ClusterClass; `old` is the stored version on update, `clusters` the Clusters
    /// using it.
    fn admit_class<'a>(
        &'a self,
        class: &'a Value,
        old: Option<&'a Value>,
        clusters: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Status>>;

    /// A Cluster; `old` is the stored version on update, `classes` the ClusterClasses it
    /// may refer to.
    fn admit_cluster<'a>(
        &'a self,
        cluster: &'a Value,
        old: Option<&'a Value>,
        classes: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Status>>;
}

/// The engine's admission, in this process.
#[derive(Clone, Copy, Debug, Default)]
pub struct InProcess;

/// Reads objects the way the engine does (strict fields, defaults).
fn load_values(named: &[(String, &Value)]) -> Result<Bundle, Vec<Violation>> {
    let texts: Vec<(String, String)> = named
        .iter()
        .map(|(name, value)| (name.clone(), value.to_string()))
        .collect();
    let inputs: Vec<Input<'_>> = texts
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    load(&inputs, &LoadOptions::default()).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| Violation::new("", e.message))
            .collect()
    })
}

/// Stored objects the engine cannot read are left out of the check, with a warning:
/// they are the management cluster's business, not this request's.
fn load_stored(values: &[Value], warnings: &mut Vec<String>) -> Bundle {
    let mut bundle = Bundle::default();
    for value in values {
        match load_values(&[(
            format!("{} {}/{}", value.kind(), value.namespace(), value.name()),
            value,
        )]) {
            Ok(b) => {
                bundle.clusters.extend(b.clusters);
                bundle.cluster_classes.extend(b.cluster_classes);
            }
            Err(problems) => warnings.push(format!(
                "{} {}/{} is not readable and was not checked against: {}",
                value.kind(),
                value.namespace(),
                value.name(),
                problems
                    .into_iter()
                    .map(|p| p.description)
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    bundle
}

fn refused(violations: Vec<Violation>, object: &Value) -> Verdict {
    Verdict {
        violations,
        warnings: Vec::new(),
        object: object.clone(),
    }
}

fn field_violations(errors: &[topograph_api::FieldError]) -> Vec<Violation> {
    errors
        .iter()
        .map(|e| Violation::new(e.path.clone(), e.to_string()))
        .collect()
}

impl InProcess {
    fn class_verdict(class: &Value, old: Option<&Value>, clusters: &[Value]) -> Verdict {
        let new = match load_values(&[("object".to_string(), class)]) {
            Ok(mut b) if b.cluster_classes.len() == 1 => b.cluster_classes.remove(0).value,
            Ok(_) => return refused(vec![Violation::new("", "not a ClusterClass")], class),
            Err(v) => return refused(v, class),
        };
        let mut warnings = Vec::new();
        let before: Option<ClusterClass> = old.and_then(|o| {
            load_stored(std::slice::from_ref(o), &mut warnings)
                .cluster_classes
                .pop()
                .map(|c| c.value)
        });
        let users = load_stored(clusters, &mut warnings);
        let users: Vec<&Cluster> = users.clusters.iter().map(|c| &c.value).collect();
        Verdict {
            violations: field_violations(&validate_cluster_class(&new, before.as_ref(), &users)),
            warnings,
            object: class.clone(),
        }
    }

    fn cluster_verdict(cluster: &Value, old: Option<&Value>, classes: &[Value]) -> Verdict {
        let new = match load_values(&[("object".to_string(), cluster)]) {
            Ok(mut b) if b.clusters.len() == 1 => b.clusters.remove(0).value,
            Ok(_) => return refused(vec![Violation::new("", "not a Cluster")], cluster),
            Err(v) => return refused(v, cluster),
        };
        let mut warnings = Vec::new();
        let before: Option<Cluster> = old.and_then(|o| {
            load_stored(std::slice::from_ref(o), &mut warnings)
                .clusters
                .pop()
                .map(|c| c.value)
        });
        let candidates = load_stored(classes, &mut warnings);
        let candidates: Vec<&ClusterClass> = candidates
            .cluster_classes
            .iter()
            .map(|c| &c.value)
            .collect();
        let (admitted, validation) = admit_cluster(&new, before.as_ref(), &candidates);
        warnings.extend(validation.warnings);
        Verdict {
            violations: field_violations(&validation.errors),
            warnings,
            object: admitted.map_or_else(|| cluster.clone(), |c| c.document),
        }
    }
}

impl Admission for InProcess {
    fn admit_class<'a>(
        &'a self,
        class: &'a Value,
        old: Option<&'a Value>,
        clusters: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Status>> {
        Box::pin(async move { Ok(InProcess::class_verdict(class, old, clusters)) })
    }

    fn admit_cluster<'a>(
        &'a self,
        cluster: &'a Value,
        old: Option<&'a Value>,
        classes: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Status>> {
        Box::pin(async move { Ok(InProcess::cluster_verdict(cluster, old, classes)) })
    }
}

/// The render service's `Validate` and `Default`, over gRPC.
#[derive(Clone, Debug)]
pub struct RenderService {
    client: RenderServiceClient<Channel>,
}

impl RenderService {
    /// A client over `channel` (shared with other clients of the render service).
    pub fn new(channel: Channel) -> Self {
        RenderService {
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
    serde_json::to_vec(value).unwrap_or_default()
}

/// The render service's refusal of the request itself: problems with the object
/// (request fields `object`, `cluster`) become violations on it; anything else means
/// stored objects or the service are at fault.
fn from_render_status(status: Status) -> Result<Vec<Violation>, Status> {
    use tonic_types::StatusExt;
    if status.code() == tonic::Code::InvalidArgument
        && let Some(bad) = status.get_details_bad_request()
    {
        let mut violations = Vec::new();
        for v in bad.field_violations {
            let relative = ["object", "cluster"].iter().find_map(|f| {
                if v.field == *f {
                    Some(String::new())
                } else {
                    v.field.strip_prefix(&format!("{f}.")).map(str::to_string)
                }
            });
            match relative {
                Some(field) => violations.push(Violation::new(field, v.description)),
                None => {
                    return Err(Status::failed_precondition(format!(
                        "a stored object cannot be read: {}: {}",
                        v.field, v.description
                    )));
                }
            }
        }
        return Ok(violations);
    }
    Err(Status::unavailable(format!(
        "render service: {:?}: {}",
        status.code(),
        status.message()
    )))
}

fn to_violations(list: Vec<render::FieldViolation>) -> Vec<Violation> {
    list.into_iter()
        .map(|v| Violation::new(v.field, v.message))
        .collect()
}

impl Admission for RenderService {
    fn admit_class<'a>(
        &'a self,
        class: &'a Value,
        old: Option<&'a Value>,
        clusters: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Status>> {
        Box::pin(async move {
            let request = render::ValidateRequest {
                object: encode(class),
                old_object: old.map(encode).unwrap_or_default(),
                cluster_classes: Vec::new(),
                clusters: clusters.iter().map(encode).collect(),
            };
            match self.client.clone().validate(traced(request)).await {
                Ok(response) => {
                    let response = response.into_inner();
                    Ok(Verdict {
                        violations: to_violations(response.violations),
                        warnings: response.warnings,
                        object: class.clone(),
                    })
                }
                Err(status) => Ok(refused(from_render_status(status)?, class)),
            }
        })
    }

    fn admit_cluster<'a>(
        &'a self,
        cluster: &'a Value,
        old: Option<&'a Value>,
        classes: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Status>> {
        Box::pin(async move {
            let request = render::ValidateRequest {
                object: encode(cluster),
                old_object: old.map(encode).unwrap_or_default(),
                cluster_classes: classes.iter().map(encode).collect(),
                clusters: Vec::new(),
            };
            let response = match self.client.clone().validate(traced(request)).await {
                Ok(response) => response.into_inner(),
                Err(status) => return Ok(refused(from_render_status(status)?, cluster)),
            };
            if !response.violations.is_empty() {
                return Ok(Verdict {
                    violations: to_violations(response.violations),
                    warnings: response.warnings,
                    object: cluster.clone(),
                });
            }
            // Validation defaulted a copy to check it; `Default` returns that copy.
            let class = class_of(cluster).and_then(|(namespace, name)| {
                classes
                    .iter()
                    .find(|c| c.namespace() == namespace && c.name() == name)
            });
            let request = render::DefaultRequest {
                cluster: encode(cluster),
                cluster_class: class.map(encode).unwrap_or_default(),
            };
            let defaulted = match self.client.clone().default(traced(request)).await {
                Ok(response) => response.into_inner().cluster,
                Err(status) => return Ok(refused(from_render_status(status)?, cluster)),
            };
            let object = serde_json::from_slice(&defaulted).map_err(|e| {
                Status::unavailable(format!(
                    "render service: the defaulted Cluster is not JSON: {e}"
                ))
            })?;
            Ok(Verdict {
                violations: Vec::new(),
                warnings: response.warnings,
                object,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_refusals_of_the_object_become_relative_violations() {
        let status = crate::violations::invalid(vec![
            Violation::new("object", "invalid JSON"),
            Violation::new("cluster.spec.x", "bad"),
        ]);
        let violations = from_render_status(status).unwrap();
        assert_eq!(
            violations,
            [
                Violation::new("", "invalid JSON"),
                Violation::new("spec.x", "bad")
            ]
        );
        let stored = crate::violations::invalid(vec![Violation::new("old_object", "bad")]);
        assert_eq!(
            from_render_status(stored).unwrap_err().code(),
            tonic::Code::FailedPrecondition
        );
        assert_eq!(
            from_render_status(Status::unavailable("down"))
                .unwrap_err()
                .code(),
            tonic::Code::Unavailable
        );
    }
}
