//! The `topograph.render.v1.RenderService` handlers: decode the request's JSON objects,
//! run the engine, encode the answer. Everything here is synchronous and CPU-bound;
//! [`RenderServer`] runs it on the blocking pool, bounded by a semaphore so the async
//! runtime stays free for I/O, health checks and metrics.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::Value;
use tokio::sync::Semaphore;
use tonic::{Code, Request, Response, Status};
use tonic_types::{ErrorDetails, StatusExt};
use topograph_api::FieldError;
use topograph_api::ObjectExt;
use topograph_api::load::{Bundle, Input, LoadOptions, load};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::validate::{admit_cluster, default_cluster, validate_cluster_class};
use topograph_engine::{ObjectStore, RenderOptions};
use topograph_proto::render::v1 as pb;
use topograph_proto::render::v1::render_service_server::RenderService;

use crate::cache::{CachedClass, ClassCache, Lru, key, request_key};
use crate::plan;

/// A problem with the request: the request field (and object field) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// `cluster`, `templates[2]`, `cluster.spec.topology.version`, ...
    pub field: String,
    /// What is wrong.
    pub description: String,
}

fn violation(field: impl Into<String>, description: impl Into<String>) -> Violation {
    Violation {
        field: field.into(),
        description: description.into(),
    }
}

/// `INVALID_ARGUMENT` with a `google.rpc.BadRequest` listing `violations`.
pub fn invalid(violations: Vec<Violation>) -> Status {
    let message = match violations.as_slice() {
        [one] => format!("{}: {}", one.field, one.description),
        many => format!("{} problems with the request", many.len()),
    };
    let details = ErrorDetails::with_bad_request(
        violations
            .into_iter()
            .map(|v| tonic_types::FieldViolation::new(v.field, v.description))
            .collect::<Vec<_>>(),
    );
    Status::with_error_details(Code::InvalidArgument, message, details)
}

/// Field errors about the object in request field `field`, as violations.
fn field_violations(field: &str, errors: &[FieldError]) -> Vec<Violation> {
    errors
        .iter()
        .map(|e| violation(format!("{field}.{}", e.path), e.to_string()))
        .collect()
}

/// Loads the named inputs; load problems become violations on the input's field.
fn load_named(
    inputs: &[(String, &[u8])],
    namespace: Option<&str>,
) -> Result<Bundle, Vec<Violation>> {
    let mut violations = Vec::new();
    let mut texts = Vec::new();
    for (name, bytes) in inputs {
        match std::str::from_utf8(bytes) {
            Ok(text) => texts.push(Input { name, text }),
            Err(e) => violations.push(violation(name, format!("not UTF-8 JSON: {e}"))),
        }
    }
    if !violations.is_empty() {
        return Err(violations);
    }
    let options = LoadOptions {
        namespace: namespace.map(str::to_string),
    };
    load(&texts, &options).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| violation(e.source.file.clone(), e.message))
            .collect()
    })
}

/// Exactly one Cluster in `bytes` (request field `field`).
fn one_cluster(field: &str, bytes: &[u8]) -> Result<Cluster, Vec<Violation>> {
    if bytes.is_empty() {
        return Err(vec![violation(field, "Required value: a Cluster (JSON)")]);
    }
    let mut bundle = load_named(&[(field.to_string(), bytes)], None)?;
    match (
        bundle.clusters.len(),
        bundle.cluster_classes.len() + bundle.objects.len(),
    ) {
        (1, 0) => Ok(bundle.clusters.remove(0).value),
        _ => Err(vec![violation(field, "must hold exactly one Cluster")]),
    }
}

/// Exactly one ClusterClass in `bytes`, defaulted into `namespace`.
fn one_class(field: &str, bytes: &[u8], namespace: &str) -> Result<ClusterClass, Vec<Violation>> {
    if bytes.is_empty() {
        return Err(vec![violation(
            field,
            "Required value: a ClusterClass (JSON)",
        )]);
    }
    let mut bundle = load_named(&[(field.to_string(), bytes)], Some(namespace))?;
    match (
        bundle.cluster_classes.len(),
        bundle.clusters.len() + bundle.objects.len(),
    ) {
        (1, 0) => Ok(bundle.cluster_classes.remove(0).value),
        _ => Err(vec![violation(field, "must hold exactly one ClusterClass")]),
    }
}

/// Parses each of `items` as one JSON object; `field` names the repeated field.
fn json_objects(field: &str, items: &[Vec<u8>]) -> Result<Vec<Value>, Vec<Violation>> {
    let mut out = Vec::with_capacity(items.len());
    let mut violations = Vec::new();
    for (i, bytes) in items.iter().enumerate() {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(v) if v.is_object() => out.push(v),
            Ok(_) => violations.push(violation(format!("{field}[{i}]"), "not a JSON object")),
            Err(e) => violations.push(violation(
                format!("{field}[{i}]"),
                format!("invalid JSON: {e}"),
            )),
        }
    }
    if violations.is_empty() {
        Ok(out)
    } else {
        Err(violations)
    }
}

fn encode(value: &Value) -> Result<Vec<u8>, Status> {
    serde_json::to_vec(value).map_err(|e| Status::internal(format!("encoding an object: {e}")))
}

fn object_name(object: &Value) -> pb::ObjectName {
    pb::ObjectName {
        api_version: object.api_version().to_string(),
        kind: object.kind().to_string(),
        namespace: object.namespace().to_string(),
        name: object.name().to_string(),
    }
}

/// Labels of the engine time metric.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClassLabels {
    /// The ClusterClass's name.
    pub class: String,
    /// `ok` or `error`.
    pub result: String,
}

/// Engine time by ClusterClass (responses served from the cache are not renders).
pub type ClassTimes = Family<ClassLabels, Histogram>;

/// Registers `engine_duration_seconds` (by class and result) in `registry`.
pub fn register_class_times(registry: &mut Registry) -> ClassTimes {
    // 100 µs to about 3 s: renders take around a millisecond.
    let times =
        ClassTimes::new_with_constructor(|| Histogram::new(exponential_buckets(0.0001, 2.0, 16)));
    registry.register(
        "engine_duration_seconds",
        "Time of one engine run (Render, Plan), by ClusterClass and result",
        times.clone(),
    );
    times
}

/// The engine behind the service, shared by all requests.
#[derive(Debug)]
pub struct Engine {
    classes: ClassCache,
    responses: Lru<[u8; 32], Arc<pb::RenderResponse>>,
    times: Option<ClassTimes>,
}

/// What a render produced, before encoding.
struct RenderOutcome {
    desired: Vec<Value>,
    desired_state: topograph_engine::DesiredState,
    current: Vec<Value>,
    explanation: topograph_engine::patches::Explanation,
}

impl Engine {
    /// An engine caching up to `class_cache` parsed ClusterClasses and Render responses
    /// up to `response_cache_bytes` of encoded size (0 turns either off).
    pub fn new(class_cache: usize, response_cache_bytes: usize) -> Self {
        Engine {
            classes: ClassCache::new(class_cache),
            responses: Lru::new(response_cache_bytes),
            times: None,
        }
    }

    /// The same engine, timing its runs by class into `times`.
    pub fn with_class_times(mut self, times: ClassTimes) -> Self {
        self.times = Some(times);
        self
    }

    /// The response a Render of exactly these inputs gave before, if cached.
    pub fn cached_render(&self, request: &pb::RenderRequest) -> Option<Arc<pb::RenderResponse>> {
        self.responses.get(&render_key(request))
    }

    /// The class in `bytes` for Clusters in `namespace`, from the cache when it was seen.
    fn class(
        &self,
        field: &str,
        bytes: &[u8],
        namespace: &str,
    ) -> Result<Arc<CachedClass>, Vec<Violation>> {
        let k = key(bytes, namespace);
        if let Some(hit) = self.classes.get(&k) {
            return Ok(hit);
        }
        let class = one_class(field, bytes, namespace)?;
        let problems = validate_cluster_class(&class, None, &[]);
        let cached = Arc::new(CachedClass { class, problems });
        self.classes.insert(k, cached.clone());
        Ok(cached)
    }

    fn render_inner(
        &self,
        request: &pb::RenderRequest,
        field: &str,
    ) -> Result<RenderOutcome, Vec<Violation>> {
        let at = |name: &str| {
            if field.is_empty() {
                name.to_string()
            } else {
                format!("{field}.{name}")
            }
        };
        let cluster = one_cluster(&at("cluster"), &request.cluster)?;
        let Some(topology) = &cluster.topology else {
            return Err(vec![violation(
                format!("{}.spec.topology", at("cluster")),
                "Required value: the Cluster has no managed topology to render",
            )]);
        };
        let namespace = cluster.namespace.clone();
        let cached = self.class(&at("cluster_class"), &request.cluster_class, &namespace)?;
        let class = &cached.class;
        let class_namespace = topology.class_namespace_or(&cluster.namespace);
        if topology.class != class.name || class_namespace != class.namespace {
            return Err(vec![violation(
                format!("{}.spec.topology.class", at("cluster")),
                format!(
                    "Invalid value: {:?}: the Cluster uses ClusterClass {class_namespace}/{}, the request carries {}/{}",
                    topology.class, topology.class, class.namespace, class.name
                ),
            )]);
        }
        if !cached.problems.is_empty() {
            return Err(field_violations(&at("cluster_class"), &cached.problems));
        }
        // Admission as the API server would run it, done here so the errors keep their
        // field paths; the engine then renders the admitted Cluster.
        let defaulted = match admit_cluster(&cluster, None, &[class]) {
            (Some(admitted), _) => admitted,
            (None, validation) => return Err(field_violations(&at("cluster"), &validation.errors)),
        };

        let mut inputs: Vec<(String, &[u8])> = Vec::new();
        for (i, t) in request.templates.iter().enumerate() {
            inputs.push((format!("{}[{i}]", at("templates")), t));
        }
        let templates = load_named(&inputs, Some(&namespace))?;
        if let Some(other) = templates
            .cluster_classes
            .first()
            .map(|c| &c.source)
            .or(templates.clusters.first().map(|c| &c.source))
        {
            return Err(vec![violation(
                other.file.clone(),
                "a template cannot be a ClusterClass or a Cluster",
            )]);
        }
        inputs.clear();
        for (i, c) in request.current_objects.iter().enumerate() {
            inputs.push((format!("{}[{i}]", at("current_objects")), c));
        }
        let current = load_named(&inputs, Some(&namespace))?;
        let mut current_values: Vec<Value> =
            current.objects.iter().map(|o| o.value.clone()).collect();
        // The current Cluster and class may come along (a plan compares them too); the
        // engine reads neither from the store.
        current_values.extend(current.clusters.into_iter().map(|c| c.value.document));

        let store = ObjectStore::new(
            templates
                .objects
                .into_iter()
                .map(|o| o.value)
                .chain(current.objects.into_iter().map(|o| o.value)),
        );
        let started = std::time::Instant::now();
        let rendered = topograph_engine::render_with(
            &defaulted,
            class,
            &store,
            RenderOptions {
                admission_checks: false,
            },
        );
        if let Some(times) = &self.times {
            let result = if rendered.is_ok() { "ok" } else { "error" };
            times
                .get_or_create(&ClassLabels {
                    class: class.name.clone(),
                    result: result.to_string(),
                })
                .observe(started.elapsed().as_secs_f64());
        }
        let rendered = rendered.map_err(|e| {
            e.messages
                .into_iter()
                .map(|m| violation(at("cluster"), m))
                .collect::<Vec<_>>()
        })?;
        Ok(RenderOutcome {
            desired: rendered.desired.objects().into_iter().cloned().collect(),
            desired_state: rendered.desired,
            current: current_values,
            explanation: rendered.explanation,
        })
    }

    /// `Render`, remembered: rendering is a function of the request's bytes.
    pub fn render(&self, request: &pb::RenderRequest) -> Result<pb::RenderResponse, Status> {
        let key = render_key(request);
        if let Some(hit) = self.responses.get(&key) {
            return Ok((*hit).clone());
        }
        let response = self.render_uncached(request)?;
        self.responses.insert_weighing(
            key,
            Arc::new(response.clone()),
            prost::Message::encoded_len(&response),
        );
        Ok(response)
    }

    fn render_uncached(&self, request: &pb::RenderRequest) -> Result<pb::RenderResponse, Status> {
        let outcome = self.render_inner(request, "").map_err(invalid)?;
        let mut desired = outcome.desired;
        desired.sort_by_cached_key(|o| o.key());
        let delete = plan::to_delete(&desired, &outcome.current)
            .into_iter()
            .map(object_name)
            .collect();
        let changes = outcome
            .explanation
            .changes
            .into_iter()
            .map(|c| {
                let (object_path, not_applied) = match c.object_path {
                    Ok(path) => (path, String::new()),
                    Err(why) => (String::new(), why.to_string()),
                };
                pb::PatchChange {
                    patch: c.patch,
                    template: c.template,
                    object: c.object,
                    op: c.op,
                    template_path: c.template_path,
                    object_path,
                    not_applied,
                }
            })
            .collect();
        let skipped = outcome
            .explanation
            .skipped
            .into_iter()
            .map(|s| pb::SkippedPatch {
                patch: s.patch,
                template: s.template,
                object: s.object,
            })
            .collect();
        let desired_state = serde_json::to_vec(&outcome.desired_state)
            .map_err(|e| Status::internal(format!("encoding the desired state: {e}")))?;
        Ok(pb::RenderResponse {
            objects: desired.iter().map(encode).collect::<Result<_, _>>()?,
            delete,
            changes,
            skipped,
            desired_state,
        })
    }

    /// `Validate`.
    pub fn validate(&self, request: &pb::ValidateRequest) -> Result<pb::ValidateResponse, Status> {
        if request.object.is_empty() {
            return Err(invalid(vec![violation(
                "object",
                "Required value: a ClusterClass or a Cluster (JSON)",
            )]));
        }
        let object =
            load_named(&[("object".to_string(), &request.object)], None).map_err(invalid)?;
        let namespace = object
            .clusters
            .first()
            .map(|c| c.value.namespace.clone())
            .or(object
                .cluster_classes
                .first()
                .map(|c| c.value.namespace.clone()))
            .unwrap_or_default();
        let load_list = |field: &str, items: &[Vec<u8>]| {
            let inputs: Vec<(String, &[u8])> = items
                .iter()
                .enumerate()
                .map(|(i, b)| (format!("{field}[{i}]"), b.as_slice()))
                .collect();
            load_named(&inputs, Some(&namespace))
        };
        let old = if request.old_object.is_empty() {
            Bundle::default()
        } else {
            load_named(
                &[("old_object".to_string(), &request.old_object)],
                Some(&namespace),
            )
            .map_err(invalid)?
        };
        let classes = load_list("cluster_classes", &request.cluster_classes).map_err(invalid)?;
        let clusters = load_list("clusters", &request.clusters).map_err(invalid)?;

        let (violations, warnings) = match (
            &object.cluster_classes[..],
            &object.clusters[..],
            object.objects.is_empty(),
        ) {
            ([class], [], true) => {
                let class = &class.value;
                let before = match (
                    &old.cluster_classes[..],
                    old.clusters.is_empty() && old.objects.is_empty(),
                ) {
                    ([], true) if request.old_object.is_empty() => None,
                    ([o], true) => Some(&o.value),
                    _ => {
                        return Err(invalid(vec![violation(
                            "old_object",
                            "must hold exactly one ClusterClass, the object's stored version",
                        )]));
                    }
                };
                let users: Vec<&Cluster> = clusters.clusters.iter().map(|c| &c.value).collect();
                (validate_cluster_class(class, before, &users), Vec::new())
            }
            ([], [cluster], true) => {
                let cluster = &cluster.value;
                let before = match (
                    &old.clusters[..],
                    old.cluster_classes.is_empty() && old.objects.is_empty(),
                ) {
                    ([], true) if request.old_object.is_empty() => None,
                    ([o], true) => Some(&o.value),
                    _ => {
                        return Err(invalid(vec![violation(
                            "old_object",
                            "must hold exactly one Cluster, the object's stored version",
                        )]));
                    }
                };
                let candidates: Vec<&ClusterClass> =
                    classes.cluster_classes.iter().map(|c| &c.value).collect();
                let (_, result) = admit_cluster(cluster, before, &candidates);
                (result.errors, result.warnings)
            }
            _ => {
                return Err(invalid(vec![violation(
                    "object",
                    "must hold exactly one ClusterClass or one Cluster",
                )]));
            }
        };
        Ok(pb::ValidateResponse {
            violations: violations
                .iter()
                .map(|e| pb::FieldViolation {
                    field: e.path.clone(),
                    r#type: e.error_type.reason().to_string(),
                    bad_value: e.bad_value.clone().unwrap_or_default(),
                    detail: e.detail.clone(),
                    message: e.to_string(),
                })
                .collect(),
            warnings,
        })
    }

    /// `Default`.
    pub fn default_cluster(
        &self,
        request: &pb::DefaultRequest,
    ) -> Result<pb::DefaultResponse, Status> {
        let cluster = one_cluster("cluster", &request.cluster).map_err(invalid)?;
        let cached = if request.cluster_class.is_empty() {
            None
        } else {
            Some(
                self.class("cluster_class", &request.cluster_class, &cluster.namespace)
                    .map_err(invalid)?,
            )
        };
        let defaulted = default_cluster(&cluster, cached.as_ref().map(|c| &c.class))
            .map_err(|errors| invalid(field_violations("cluster", &errors)))?;
        Ok(pb::DefaultResponse {
            cluster: encode(&defaulted.document)?,
        })
    }

    /// `Plan`.
    pub fn plan(&self, request: &pb::PlanRequest) -> Result<pb::PlanResponse, Status> {
        let (desired, current) = match &request.render {
            Some(render) => {
                if !request.desired.is_empty() || !request.current.is_empty() {
                    return Err(invalid(vec![violation(
                        "desired",
                        "give either render or desired and current, not both",
                    )]));
                }
                let outcome = self.render_inner(render, "render").map_err(invalid)?;
                (outcome.desired, outcome.current)
            }
            None => {
                let desired = json_objects("desired", &request.desired);
                let current = json_objects("current", &request.current);
                match (desired, current) {
                    (Ok(d), Ok(c)) => (d, c),
                    (d, c) => {
                        let mut all = d.err().unwrap_or_default();
                        all.extend(c.err().unwrap_or_default());
                        return Err(invalid(all));
                    }
                }
            }
        };
        let p = plan::plan(&desired, &current);
        Ok(pb::PlanResponse {
            created: p
                .created
                .into_iter()
                .map(encode)
                .collect::<Result<_, _>>()?,
            modified: p
                .modified
                .into_iter()
                .map(|(object, patch)| {
                    Ok(pb::Modification {
                        object: Some(object_name(object)),
                        patch: encode(&patch)?,
                    })
                })
                .collect::<Result<_, Status>>()?,
            deleted: p.deleted.into_iter().map(object_name).collect(),
        })
    }
}

/// The key of a Render request: every input, in field order.
fn render_key(request: &pb::RenderRequest) -> [u8; 32] {
    let counts = [
        (request.templates.len() as u64).to_le_bytes(),
        (request.current_objects.len() as u64).to_le_bytes(),
    ];
    request_key(
        [request.cluster_class.as_slice(), request.cluster.as_slice()]
            .into_iter()
            .chain(counts.iter().map(|c| c.as_slice()))
            .chain(request.templates.iter().map(Vec::as_slice))
            .chain(request.current_objects.iter().map(Vec::as_slice)),
    )
}

/// The gRPC service: runs [`Engine`] calls on the blocking pool.
#[derive(Debug, Clone)]
pub struct RenderServer {
    engine: Arc<Engine>,
    workers: Arc<Semaphore>,
}

impl RenderServer {
    /// A server running at most `workers` engine calls at once.
    pub fn new(engine: Engine, workers: usize) -> Self {
        RenderServer {
            engine: Arc::new(engine),
            workers: Arc::new(Semaphore::new(workers.max(1))),
        }
    }

    async fn run<Req, Resp>(
        &self,
        request: Request<Req>,
        work: fn(&Engine, &Req) -> Result<Resp, Status>,
    ) -> Result<Response<Resp>, Status>
    where
        Req: Send + 'static,
        Resp: Send + 'static,
    {
        let request = request.into_inner();
        let permit = self
            .workers
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Status::unavailable("the server is shutting down"))?;
        let engine = self.engine.clone();
        // The permit moves into the blocking task, so a request whose caller went away
        // still counts until the engine is done with it: the bound is on CPU work, not
        // on waiting callers.
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work(&engine, &request)
        });
        match task.await {
            Ok(result) => result.map(Response::new),
            Err(e) => {
                tracing::error!(error = %e, "engine task failed");
                Err(Status::internal(
                    "the engine failed unexpectedly on this request",
                ))
            }
        }
    }
}

#[tonic::async_trait]
impl RenderService for RenderServer {
    async fn render(
        &self,
        request: Request<pb::RenderRequest>,
    ) -> Result<Response<pb::RenderResponse>, Status> {
        // A cached response needs no engine worker: answered here, it never queues
        // behind renders that do.
        if let Some(hit) = self.engine.cached_render(request.get_ref()) {
            return Ok(Response::new((*hit).clone()));
        }
        self.run(request, Engine::render).await
    }

    async fn validate(
        &self,
        request: Request<pb::ValidateRequest>,
    ) -> Result<Response<pb::ValidateResponse>, Status> {
        self.run(request, Engine::validate).await
    }

    async fn default(
        &self,
        request: Request<pb::DefaultRequest>,
    ) -> Result<Response<pb::DefaultResponse>, Status> {
        self.run(request, Engine::default_cluster).await
    }

    async fn plan(
        &self,
        request: Request<pb::PlanRequest>,
    ) -> Result<Response<pb::PlanResponse>, Status> {
        self.run(request, Engine::plan).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick-start request, with `replicas` for the first MachineDeployment.
    fn request(replicas: u64) -> pb::RenderRequest {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/quick-start/");
        let mut out = pb::RenderRequest::default();
        for file in ["clusterclass.yaml", "cluster.yaml"] {
            let text = std::fs::read_to_string(format!("{root}{file}")).unwrap();
            let (docs, errors) = topograph_api::load::parse_documents(file, &text);
            assert!(errors.is_empty(), "{errors:?}");
            for doc in docs {
                let mut value = doc.value;
                if value.namespace().is_empty() {
                    value["metadata"]["namespace"] = "default".into();
                }
                match value.kind() {
                    "ClusterClass" => out.cluster_class = serde_json::to_vec(&value).unwrap(),
                    "Cluster" => {
                        value["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] =
                            replicas.into();
                        out.cluster = serde_json::to_vec(&value).unwrap();
                    }
                    _ => out.templates.push(serde_json::to_vec(&value).unwrap()),
                }
            }
        }
        out
    }

    #[test]
    fn cached_renders_equal_fresh_ones_and_other_inputs_miss() {
        let cached = Engine::new(4, 64 << 20);
        let fresh = Engine::new(4, 0);
        assert!(cached.cached_render(&request(2)).is_none());
        let first = cached.render(&request(2)).unwrap();
        let hit = cached.cached_render(&request(2)).expect("remembered");
        assert_eq!(*hit, first);
        assert_eq!(fresh.render(&request(2)).unwrap(), first);
        assert!(fresh.cached_render(&request(2)).is_none(), "cache off");
        // Any byte of input changes the key.
        assert!(cached.cached_render(&request(5)).is_none());
        let other = cached.render(&request(5)).unwrap();
        assert_ne!(other, first);
        let mut moved = request(2);
        let template = moved.templates.remove(0);
        moved.current_objects.push(template);
        assert!(cached.cached_render(&moved).is_none());
    }
}
