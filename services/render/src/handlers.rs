//! The `topograph.render.v1.RenderService` handlers, plain functions of the decoded
//! request: read the request's objects, run the engine's own admission and render
//! functions (the ones the embedded engine runs), encode the answer. Everything here is
//! synchronous and CPU-bound; `crate::server` runs it on the blocking pool.
//!
//! A Render (or Plan) request carrying ExtensionConfigs renders with runtime extensions:
//! the handlers listed in their status are registered in a client cached by the
//! request's extension fields ([`Handlers`] keeps a few), the class is admitted with
//! DiscoverVariables, and GeneratePatches / ValidateTopology are called during the
//! render through a `BlockingClient` on the service's runtime (the handlers already run
//! on its blocking pool). Such renders are never answered from the response cache:
//! Cluster API calls the extensions on every reconcile, and their answers may change.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::Value;
use tonic::Status;
use topograph_api::FieldError;
use topograph_api::ObjectExt;
use topograph_api::Violation;
use topograph_api::decoded::DecodedObjects;
use topograph_api::json::to_vec;
use topograph_api::load::{Bundle, Input, LoadOptions, load, parse_documents};
use topograph_api::model::Cluster;
use topograph_engine::admission::{self, Verdict};
use topograph_engine::validate::default_cluster;
use topograph_engine::{ObjectStore, Refusal, plan};
use topograph_proto::render::v1 as pb;
use topograph_proto::violations::invalid;

use crate::cache::{CachedClass, ClassCache, Lru, key, request_key};
use topograph_runtime::blocking::BlockingClient;
use topograph_runtime::client::Client;
use topograph_runtime::config::ExtensionConfig;

/// How many distinct sets of extensions keep a client (a fleet has one per management
/// cluster, give or take the namespaces' labels).
const EXTENSION_CLIENTS: usize = 64;

/// Field errors about the object in request field `field`, as violations.
fn field_violations(field: &str, errors: &[FieldError]) -> Vec<Violation> {
    Violation::from_field_errors(errors)
        .into_iter()
        .map(|v| v.prefixed(field))
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
            Err(e) => violations.push(Violation::new(name, format!("not UTF-8 JSON: {e}"))),
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
            .map(|e| {
                let field = topograph_api::violation::prefix_path(&e.source.file, &e.field);
                Violation::new(field, e.message)
            })
            .collect()
    })
}

/// Exactly one Cluster in `bytes` (request field `field`).
fn one_cluster(field: &str, bytes: &[u8]) -> Result<Cluster, Vec<Violation>> {
    if bytes.is_empty() {
        return Err(vec![Violation::new(
            field,
            "Required value: a Cluster (JSON)",
        )]);
    }
    let mut bundle = load_named(&[(field.to_string(), bytes)], None)?;
    match (
        bundle.clusters.len(),
        bundle.cluster_classes.len() + bundle.objects.len(),
    ) {
        (1, 0) => Ok(bundle.clusters.remove(0).value),
        _ => Err(vec![Violation::new(field, "must hold exactly one Cluster")]),
    }
}

/// Exactly one ClusterClass in `bytes`, defaulted into `namespace`.
fn one_class(
    field: &str,
    bytes: &[u8],
    namespace: &str,
) -> Result<topograph_api::model::ClusterClass, Vec<Violation>> {
    if bytes.is_empty() {
        return Err(vec![Violation::new(
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
        _ => Err(vec![Violation::new(
            field,
            "must hold exactly one ClusterClass",
        )]),
    }
}

/// Exactly one object (JSON or YAML) in `bytes`, request field `field`.
fn one_object(field: &str, bytes: &[u8]) -> Result<Value, Vec<Violation>> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| vec![Violation::new(field, format!("not UTF-8 JSON: {e}"))])?;
    let (mut docs, errors) = parse_documents(field, text);
    if !errors.is_empty() {
        return Err(errors
            .into_iter()
            .map(|e| Violation::new(field, e.message))
            .collect());
    }
    match docs.len() {
        1 => Ok(docs.remove(0).value),
        _ => Err(vec![Violation::new(field, "must hold exactly one object")]),
    }
}

/// A stored object of request field `field`, in `namespace` unless it names its own
/// (everything one request carries lives in one namespace).
fn stored(field: &str, bytes: &[u8], namespace: &str) -> Result<Value, Vec<Violation>> {
    let mut object = one_object(field, bytes)?;
    if object.namespace().is_empty() && !namespace.is_empty() {
        topograph_api::object::set_at(
            &mut object,
            &["metadata", "namespace"],
            Value::String(namespace.to_string()),
        );
    }
    Ok(object)
}

/// A verdict as the wire carries it: admission's field errors with Kubernetes' detail,
/// problems reading the object with their text alone.
fn validate_response(verdict: Verdict) -> pb::ValidateResponse {
    let violations: Vec<pb::FieldViolation> = if verdict.errors.is_empty() {
        verdict
            .violations
            .into_iter()
            .map(|v| pb::FieldViolation {
                field: v.field,
                message: v.description,
                ..pb::FieldViolation::default()
            })
            .collect()
    } else {
        verdict
            .errors
            .iter()
            .map(|e| pb::FieldViolation {
                field: e.path.clone(),
                r#type: e.error_type.reason().to_string(),
                bad_value: e.bad_value.clone().unwrap_or_default(),
                detail: e.detail.clone(),
                message: e.to_string(),
            })
            .collect()
    };
    let admitted = violations.is_empty();
    pb::ValidateResponse {
        violations,
        warnings: verdict.warnings,
        object: if admitted {
            serde_json::to_vec(&verdict.object).unwrap_or_default()
        } else {
            Vec::new()
        },
    }
}

/// Parses each of `items` as one JSON object; `field` names the repeated field.
fn json_objects(field: &str, items: &[Vec<u8>]) -> Result<Vec<Value>, Vec<Violation>> {
    let mut out = Vec::with_capacity(items.len());
    let mut violations = Vec::new();
    for (i, bytes) in items.iter().enumerate() {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(v) if v.is_object() => out.push(v),
            Ok(_) => violations.push(Violation::new(format!("{field}[{i}]"), "not a JSON object")),
            Err(e) => violations.push(Violation::new(
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

/// What the handlers share across requests: the caches and the engine-time metric.
#[derive(Debug)]
pub struct Handlers {
    classes: ClassCache,
    /// The templates requests carry, decoded once per text.
    templates: DecodedObjects,
    responses: Lru<[u8; 32], Arc<pb::RenderResponse>>,
    times: Option<ClassTimes>,
    /// Runtime SDK clients by a hash of the request fields they were built from.
    extension_clients: Lru<[u8; 32], Arc<Client>>,
}

/// What a render produced, before encoding.
struct RenderOutcome {
    desired_state: topograph_engine::DesiredState,
    /// The request's templates, then its current objects.
    store: ObjectStore,
    /// How many of the store's objects are templates.
    templates: usize,
    /// Current Clusters and classes the request carried (only a plan reads them).
    current_clusters: Vec<Value>,
    explanation: topograph_engine::patches::Explanation,
}

impl RenderOutcome {
    /// The current objects, as the request gave them: neither templates nor Clusters.
    fn current_objects(&self) -> impl Iterator<Item = &Value> {
        self.store.objects().skip(self.templates)
    }
}

impl Handlers {
    /// Handlers caching up to `class_cache` parsed ClusterClasses and Render responses
    /// up to `response_cache_bytes` of encoded size (0 turns either off).
    pub fn new(class_cache: usize, response_cache_bytes: usize) -> Self {
        Handlers {
            classes: ClassCache::new(class_cache),
            templates: DecodedObjects::default(),
            responses: Lru::new(response_cache_bytes),
            times: None,
            extension_clients: Lru::new(EXTENSION_CLIENTS),
        }
    }

    /// The same handlers, keeping decoded templates up to `bytes` of their text (0:
    /// none; [`topograph_api::decoded::DEFAULT_CAPACITY`] otherwise).
    pub fn with_template_cache(mut self, bytes: usize) -> Self {
        self.templates = DecodedObjects::new(bytes);
        self
    }

    /// The same handlers, timing engine runs by class into `times`.
    pub fn with_class_times(mut self, times: ClassTimes) -> Self {
        self.times = Some(times);
        self
    }

    /// The response a Render whose inputs have `key` ([`render_key`]) gave before, if
    /// cached.
    pub fn cached_render(&self, key: &[u8; 32]) -> Option<Arc<pb::RenderResponse>> {
        self.responses.get(key)
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
        let cached = Arc::new(CachedClass::admit(one_class(field, bytes, namespace)?));
        self.classes.insert(k, cached.clone());
        Ok(cached)
    }

    /// The runtime extensions a request carries, or `None` when it carries no
    /// ExtensionConfigs. The client is built once per distinct set of extension fields:
    /// registered from the configs' status (no discovery: the caller discovered them),
    /// the namespaces' labels recorded for their selectors.
    fn extensions(
        &self,
        request: &pb::RenderRequest,
        at: &dyn Fn(&str) -> String,
    ) -> Result<Option<BlockingClient>, Vec<Violation>> {
        if request.extension_configs.is_empty() {
            return Ok(None);
        }
        let k = extensions_key(request);
        let client = match self.extension_clients.get(&k) {
            Some(client) => client,
            None => {
                let client = Arc::new(extension_client(request, at)?);
                self.extension_clients.insert(k, client.clone());
                client
            }
        };
        // The handlers run on the blocking pool of the service's runtime, whose workers
        // make the calls; without a runtime (a caller of these functions outside one)
        // the client gets its own.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => Ok(Some(BlockingClient::on(client, handle))),
            Err(_) => BlockingClient::new(client)
                .map(Some)
                .map_err(|e| vec![Violation::new(at("extension_configs"), e.to_string())]),
        }
    }

    /// The request's templates decoded into `namespace`: from the cache where the same
    /// text was decoded before (a class's templates come with every Cluster's request),
    /// else loaded with their messages. A template that is a class or a Cluster is refused.
    fn templates(
        &self,
        request: &pb::RenderRequest,
        namespace: &str,
        at: &dyn Fn(&str) -> String,
    ) -> Result<Vec<Arc<Value>>, Vec<Violation>> {
        let decoded: Option<Vec<Arc<Value>>> = request
            .templates
            .iter()
            .map(|t| {
                let text = std::str::from_utf8(t).ok()?;
                self.templates.object(&Input { name: "", text }, namespace)
            })
            .collect();
        if let Some(decoded) = decoded {
            return Ok(decoded);
        }
        let mut inputs: Vec<(String, &[u8])> = Vec::new();
        for (i, t) in request.templates.iter().enumerate() {
            inputs.push((format!("{}[{i}]", at("templates")), t));
        }
        let templates = load_named(&inputs, Some(namespace))?;
        if let Some(other) = templates
            .cluster_classes
            .first()
            .map(|c| &c.source)
            .or(templates.clusters.first().map(|c| &c.source))
        {
            return Err(vec![Violation::new(
                other.file.clone(),
                "a template cannot be a ClusterClass or a Cluster",
            )]);
        }
        Ok(templates
            .objects
            .into_iter()
            .map(|o| Arc::new(o.value))
            .collect())
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
            return Err(vec![Violation::new(
                format!("{}.spec.topology", at("cluster")),
                "Required value: the Cluster has no managed topology to render",
            )]);
        };
        let namespace = cluster.namespace.clone();
        let cached = self.class(&at("cluster_class"), &request.cluster_class, &namespace)?;
        let class = &cached.class;
        let class_namespace = topology.class_namespace_or(&cluster.namespace);
        if topology.class != class.name || class_namespace != class.namespace {
            return Err(vec![Violation::new(
                format!("{}.spec.topology.class", at("cluster")),
                format!(
                    "Invalid value: {:?}: the Cluster uses ClusterClass {class_namespace}/{}, the request carries {}/{}",
                    topology.class, topology.class, class.namespace, class.name
                ),
            )]);
        }
        let extensions = self.extensions(request, &at)?;
        // Without extensions the class's verdict comes from the cache; with them it
        // depends on what DiscoverVariables answers, so it is asked for every render, as
        // the embedded engine's `admit_and_render_with` does. Either way the Cluster is
        // admitted by the embedded engine's own functions, so refusals carry its messages.
        let extended;
        let admitted_class = match (&extensions, &cached.admitted) {
            (Some(extensions), _) => {
                extended =
                    admission::admit_class_with_extensions(class.clone(), None, &[], extensions)
                        .map_err(|refusal| {
                            refusal.violations(&at("cluster_class"), &at("cluster"))
                        })?;
                &extended.class
            }
            (None, Ok(admitted)) => admitted,
            (None, Err(problems)) => {
                return Err(Refusal::class(class, problems.clone())
                    .violations(&at("cluster_class"), &at("cluster")));
            }
        };

        let templates = self.templates(request, &namespace, &at)?;
        let mut inputs: Vec<(String, &[u8])> = Vec::new();
        for (i, c) in request.current_objects.iter().enumerate() {
            inputs.push((format!("{}[{i}]", at("current_objects")), c));
        }
        let current = load_named(&inputs, Some(&namespace))?;
        // The current Cluster and class may come along (a plan compares them too); the
        // engine reads neither from the store.
        let current_clusters = current
            .clusters
            .into_iter()
            .map(|c| c.value.document)
            .collect();
        let templates_count = templates.len();
        let store = ObjectStore::shared(
            templates
                .into_iter()
                .chain(current.objects.into_iter().map(|o| Arc::new(o.value))),
        );
        let started = std::time::Instant::now();
        let rendered = topograph_engine::render_admitting_with(
            &cluster,
            admitted_class,
            &store,
            extensions
                .as_ref()
                .map(|e| e as &dyn topograph_engine::Extensions),
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
        let rendered =
            rendered.map_err(|refusal| refusal.violations(&at("cluster_class"), &at("cluster")))?;
        Ok(RenderOutcome {
            desired_state: rendered.desired,
            store,
            templates: templates_count,
            current_clusters,
            explanation: rendered.explanation,
        })
    }

    /// `Render`, remembered: rendering is a function of the request's bytes.
    pub fn render(&self, request: &pb::RenderRequest) -> Result<pb::RenderResponse, Status> {
        self.render_keyed(render_key(request), request)
    }

    /// [`Handlers::render`] of a request whose [`render_key`] is known already.
    pub fn render_keyed(
        &self,
        key: [u8; 32],
        request: &pb::RenderRequest,
    ) -> Result<pb::RenderResponse, Status> {
        if !request.extension_configs.is_empty() {
            return self.render_uncached(request);
        }
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
        // `DesiredState::objects` gives them sorted already.
        let desired = outcome.desired_state.objects();
        let delete = plan::to_delete(&desired, outcome.current_objects())
            .into_iter()
            .map(object_name)
            .collect();
        if request.desired_only {
            return Ok(pb::RenderResponse {
                objects: Vec::new(),
                delete,
                changes: Vec::new(),
                skipped: Vec::new(),
                desired: Some(topograph_proto::desired::to_message(&outcome.desired_state)),
            });
        }
        // Each object is encoded once; the desired state by role carries the same bytes.
        let objects: Vec<Vec<u8>> = desired.iter().map(|o| to_vec(o)).collect();
        let desired_message =
            topograph_proto::desired::to_message_with(&outcome.desired_state, &mut |object| {
                desired
                    .iter()
                    .position(|o| std::ptr::eq(*o, object))
                    .and_then(|i| objects.get(i))
                    .cloned()
                    .unwrap_or_else(|| to_vec(object))
            });
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
        Ok(pb::RenderResponse {
            objects,
            delete,
            changes,
            skipped,
            desired: Some(desired_message),
        })
    }

    /// `Validate`: the embedded engine's admission over stored objects
    /// ([`admission::admit_class_object`], [`admission::admit_cluster_object`]), so
    /// the verdict, warnings included, is the one the embedded mode gives.
    pub fn validate(&self, request: &pb::ValidateRequest) -> Result<pb::ValidateResponse, Status> {
        if request.object.is_empty() {
            return Err(invalid(vec![Violation::new(
                "object",
                "Required value: a ClusterClass or a Cluster (JSON)",
            )]));
        }
        let object = one_object("object", &request.object).map_err(invalid)?;
        let namespace = object.namespace().to_string();
        let old = if request.old_object.is_empty() {
            None
        } else {
            Some(stored("old_object", &request.old_object, &namespace).map_err(invalid)?)
        };
        let stored_list = |field: &str, items: &[Vec<u8>]| -> Result<Vec<Value>, Status> {
            let mut out = Vec::with_capacity(items.len());
            let mut violations = Vec::new();
            for (i, bytes) in items.iter().enumerate() {
                match stored(&format!("{field}[{i}]"), bytes, &namespace) {
                    Ok(v) => out.push(v),
                    Err(v) => violations.extend(v),
                }
            }
            if violations.is_empty() {
                Ok(out)
            } else {
                Err(invalid(violations))
            }
        };
        let verdict = match (object.kind(), &old) {
            ("ClusterClass", Some(o)) if o.kind() != "ClusterClass" => {
                return Err(invalid(vec![Violation::new(
                    "old_object",
                    "must hold exactly one ClusterClass, the object's stored version",
                )]));
            }
            ("Cluster", Some(o)) if o.kind() != "Cluster" => {
                return Err(invalid(vec![Violation::new(
                    "old_object",
                    "must hold exactly one Cluster, the object's stored version",
                )]));
            }
            ("ClusterClass", _) => {
                let clusters = stored_list("clusters", &request.clusters)?;
                admission::admit_class_object(&object, old.as_ref(), &clusters)
            }
            ("Cluster", _) => {
                let classes = stored_list("cluster_classes", &request.cluster_classes)?;
                admission::admit_cluster_object(&object, old.as_ref(), &classes)
            }
            _ => {
                return Err(invalid(vec![Violation::new(
                    "object",
                    "must hold exactly one ClusterClass or one Cluster",
                )]));
            }
        };
        Ok(validate_response(verdict))
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
            cluster: to_vec(&defaulted.document),
        })
    }

    /// `Plan`.
    pub fn plan(&self, request: &pb::PlanRequest) -> Result<pb::PlanResponse, Status> {
        let (desired, current) = match &request.render {
            Some(render) => {
                if !request.desired.is_empty() || !request.current.is_empty() {
                    return Err(invalid(vec![Violation::new(
                        "desired",
                        "give either render or desired and current, not both",
                    )]));
                }
                let outcome = self.render_inner(render, "render").map_err(invalid)?;
                let desired = outcome
                    .desired_state
                    .objects()
                    .into_iter()
                    .cloned()
                    .collect();
                let current = outcome
                    .current_objects()
                    .cloned()
                    .chain(outcome.current_clusters.iter().cloned())
                    .collect();
                (desired, current)
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
            created: p.created.into_iter().map(to_vec).collect(),
            modified: p
                .modified
                .into_iter()
                .map(|(object, patch)| pb::Modification {
                    object: Some(object_name(object)),
                    patch: to_vec(&patch),
                })
                .collect(),
            deleted: p.deleted.into_iter().map(object_name).collect(),
        })
    }
}

/// A Runtime SDK client with the handlers of the request's ExtensionConfigs registered
/// and its namespaces' labels recorded; problems name the request field.
fn extension_client(
    request: &pb::RenderRequest,
    at: &dyn Fn(&str) -> String,
) -> Result<Client, Vec<Violation>> {
    let client = Client::new();
    let mut violations = Vec::new();
    for (i, bytes) in request.extension_configs.iter().enumerate() {
        let field = format!("{}[{i}]", at("extension_configs"));
        let config = match serde_json::from_slice::<ExtensionConfig>(bytes) {
            Ok(config) => config,
            Err(e) => {
                violations.push(Violation::new(
                    field,
                    format!("not a JSON ExtensionConfig: {e}"),
                ));
                continue;
            }
        };
        if let Err(e) = client.register(&config) {
            violations.push(Violation::new(field, e.to_string()));
        }
    }
    if !violations.is_empty() {
        return Err(violations);
    }
    client.registry_mut(|r| {
        for namespace in &request.namespaces {
            r.set_namespace(
                &namespace.name,
                namespace
                    .labels
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
        }
    });
    Ok(client)
}

/// The request's namespaces and their labels as one canonical document (sorted maps),
/// so the order of a protobuf map does not change a key.
fn namespaces_document(request: &pb::RenderRequest) -> Vec<u8> {
    let namespaces: std::collections::BTreeMap<&str, std::collections::BTreeMap<&str, &str>> =
        request
            .namespaces
            .iter()
            .map(|n| {
                (
                    n.name.as_str(),
                    n.labels
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect(),
                )
            })
            .collect();
    // Maps of strings always serialize.
    serde_json::to_vec(&namespaces).unwrap_or_default()
}

/// The key of a request's extension fields: what its Runtime SDK client is built from.
fn extensions_key(request: &pb::RenderRequest) -> [u8; 32] {
    let count = (request.extension_configs.len() as u64).to_le_bytes();
    let namespaces = namespaces_document(request);
    request_key(
        [count.as_slice(), namespaces.as_slice()]
            .into_iter()
            .chain(request.extension_configs.iter().map(Vec::as_slice)),
    )
}

/// The key of a Render request: every input, in field order.
pub fn render_key(request: &pb::RenderRequest) -> [u8; 32] {
    // Keys of requests without extensions stay what they were; with extensions the key
    // differs from the same request without them (such answers are not cached, and
    // must not be answered from a cached render without extensions either).
    let extensions_part = (!request.extension_configs.is_empty()).then(|| extensions_key(request));
    // An answer without the objects must not answer a request for them, nor the
    // other way round.
    let desired_only_part = request.desired_only.then_some(b"desired_only".as_slice());
    let counts = [
        (request.templates.len() as u64).to_le_bytes(),
        (request.current_objects.len() as u64).to_le_bytes(),
    ];
    request_key(
        [request.cluster_class.as_slice(), request.cluster.as_slice()]
            .into_iter()
            .chain(counts.iter().map(|c| c.as_slice()))
            .chain(request.templates.iter().map(Vec::as_slice))
            .chain(request.current_objects.iter().map(Vec::as_slice))
            .chain(extensions_part.as_ref().map(|k| k.as_slice()))
            .chain(desired_only_part),
    )
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
    fn extension_fields_change_the_key_and_unreadable_configs_are_refused_by_field() {
        let plain = request(2);
        let mut with = request(2);
        with.extension_configs = vec![b"not JSON".to_vec()];
        assert_ne!(render_key(&plain), render_key(&with));
        let mut labelled = with.clone();
        labelled.namespaces = vec![pb::NamespaceLabels {
            name: "default".into(),
            labels: [("team".to_string(), "a".to_string())].into(),
        }];
        assert_ne!(render_key(&with), render_key(&labelled));
        assert_ne!(extensions_key(&with), extensions_key(&labelled));

        let handlers = Handlers::new(4, 64 << 20);
        let status = handlers.render(&with).unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        let violations = topograph_proto::violations::of_status(&status).unwrap();
        assert_eq!(violations[0].field, "extension_configs[0]");
        assert!(
            violations[0]
                .description
                .starts_with("not a JSON ExtensionConfig"),
            "{violations:?}"
        );
        // Renders with extensions are not remembered.
        assert!(handlers.cached_render(&render_key(&with)).is_none());
    }

    #[test]
    fn cached_renders_equal_fresh_ones_and_other_inputs_miss() {
        let cached = Handlers::new(4, 64 << 20);
        let fresh = Handlers::new(4, 0);
        assert!(cached.cached_render(&render_key(&request(2))).is_none());
        let first = cached.render(&request(2)).unwrap();
        let hit = cached
            .cached_render(&render_key(&request(2)))
            .expect("remembered");
        assert_eq!(*hit, first);
        assert_eq!(fresh.render(&request(2)).unwrap(), first);
        assert!(
            fresh.cached_render(&render_key(&request(2))).is_none(),
            "cache off"
        );
        // Any byte of input changes the key.
        assert!(cached.cached_render(&render_key(&request(5))).is_none());
        let other = cached.render(&request(5)).unwrap();
        assert_ne!(other, first);
        let mut moved = request(2);
        let template = moved.templates.remove(0);
        moved.current_objects.push(template);
        assert!(cached.cached_render(&render_key(&moved)).is_none());
    }

    #[test]
    fn templates_are_decoded_once_and_render_as_decoded_afresh() {
        let cached = Handlers::new(4, 0);
        let uncached = Handlers::new(4, 0).with_template_cache(0);
        let first = cached.render(&request(2)).unwrap();
        assert_eq!(cached.templates.len(), request(2).templates.len());
        // Another Cluster of the class: the same templates, nothing decoded again.
        let other = cached.render(&request(5)).unwrap();
        assert_eq!(cached.templates.len(), request(2).templates.len());
        assert_eq!(uncached.render(&request(2)).unwrap(), first);
        assert_eq!(uncached.render(&request(5)).unwrap(), other);
        assert!(uncached.templates.is_empty());
        // A template that is a Cluster is refused as before, by its field.
        let mut bad = request(2);
        bad.templates.insert(1, bad.cluster.clone());
        for handlers in [&cached, &uncached] {
            let refusal = handlers.render(&bad).unwrap_err();
            assert_eq!(refusal.code(), tonic::Code::InvalidArgument);
            let message = format!("{refusal:?}");
            assert!(
                message.contains("templates[1]")
                    && message.contains("a template cannot be a ClusterClass or a Cluster"),
                "{message}"
            );
        }
        // Text that is not UTF-8 is refused by its field, not looked up.
        let mut bytes = request(2);
        bytes.templates[0] = vec![0xff, b'{'];
        let message = format!("{:?}", cached.render(&bytes).unwrap_err());
        assert!(
            message.contains("templates[0]") && message.contains("UTF-8"),
            "{message}"
        );
    }

    /// Every object of a desired state message, as its bytes.
    fn message_objects(desired: &pb::DesiredState) -> Vec<Vec<u8>> {
        let cp = desired.control_plane.clone().unwrap_or_default();
        let mut all = vec![
            desired.cluster.clone(),
            desired.infrastructure_cluster.clone(),
            cp.object,
            cp.machine_template,
            cp.health_check,
        ];
        for md in &desired.machine_deployments {
            all.extend([
                md.object.clone(),
                md.bootstrap_template.clone(),
                md.infrastructure_template.clone(),
                md.health_check.clone(),
            ]);
        }
        all.retain(|b| !b.is_empty());
        all.sort();
        all
    }

    #[test]
    fn desired_only_answers_the_desired_state_alone_and_is_remembered_apart() {
        let mut full_request = request(2);
        // An owned MachineDeployment the topology no longer has: both answers delete it.
        let gone = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "MachineDeployment",
            "metadata": {
                "name": "gone",
                "namespace": "default",
                "labels": {
                    "cluster.x-k8s.io/cluster-name": "dev",
                    "topology.cluster.x-k8s.io/owned": "",
                    "topology.cluster.x-k8s.io/deployment-name": "retired",
                },
            },
        });
        full_request
            .current_objects
            .push(serde_json::to_vec(&gone).unwrap());
        let mut only_request = full_request.clone();
        only_request.desired_only = true;
        assert_ne!(render_key(&full_request), render_key(&only_request));

        let handlers = Handlers::new(4, 64 << 20);
        let full = handlers.render(&full_request).unwrap();
        assert!(
            handlers.cached_render(&render_key(&only_request)).is_none(),
            "a full answer must not answer a desired-only request"
        );
        let only = handlers.render(&only_request).unwrap();
        assert_eq!(only.desired, full.desired);
        assert_eq!(only.delete, full.delete);
        assert_eq!(
            full.delete
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>(),
            ["gone"]
        );
        assert!(only.objects.is_empty() && only.changes.is_empty() && only.skipped.is_empty());
        assert!(
            !full.changes.is_empty(),
            "the quick-start's patches change things"
        );
        // The full answer's objects are the desired state's, byte for byte.
        let mut objects = full.objects.clone();
        objects.sort();
        assert_eq!(objects, message_objects(full.desired.as_ref().unwrap()));
        assert_eq!(
            *handlers
                .cached_render(&render_key(&only_request))
                .expect("remembered"),
            only
        );
    }
}
