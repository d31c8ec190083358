//! HTTP routing: maps Kubernetes API paths and verbs onto the store, counts each request
//! once under its verb, and renders results and errors as the API server does.

use crate::answer::Answer;
use crate::counts::{Counters, Verb};
use crate::discovery;
use crate::fields::{self, FieldValidation, Write};
use crate::media::{self, Format};
use crate::protobuf;
use crate::selector::{FieldSelector, Filter, LabelSelector};
use crate::status::ApiError;
use crate::store::{DeleteOptions, PatchType, Store, Sub};
use crate::table::{self, Include, Printer, TableRequest};
use crate::types::ResourceType;
use crate::util::meta_str;
use crate::watch::{self, WatchParams};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct AppState {
    pub store: Arc<Store>,
    pub counters: Arc<Counters>,
    pub bookmark_interval: Duration,
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// Apply patches are served (false: answered as a server without server-side
    /// apply answers them).
    pub server_side_apply: bool,
}

pub(crate) fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(64 << 20))
        .with_state(state)
}

pub fn json_response(code: StatusCode, value: &Value) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

async fn handle(
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // The store's writes report their warnings on this thread while the request is
    // dispatched (synchronously), so they reach this response and no other.
    let (result, warnings) =
        crate::warnings::collect(|| dispatch(&app, &method, &uri, &headers, &body));
    let mut response = match result {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    crate::warnings::attach(response.headers_mut(), &warnings);
    // An access log, off unless asked for (`RUST_LOG=topograph_kube::access=debug`):
    // what a client's reconcile costs the server, request by request.
    tracing::debug!(target: "topograph_kube::access", %method, %uri, status = response.status().as_u16());
    response
}

type Params = HashMap<String, String>;

fn dispatch(
    app: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    let query: Params = Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))?
        .0
        .into_iter()
        .collect();
    let ok = |v: Value| Ok(json_response(StatusCode::OK, &v));
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let discovery_get = |v: Option<Value>| {
        app.counters.count(Verb::Discovery);
        if method != Method::GET {
            return Err(ApiError::method_not_allowed());
        }
        v.map(|v| json_response(StatusCode::OK, &v))
            .ok_or_else(ApiError::path_not_found)
    };
    match segs.as_slice() {
        ["_topograph", "requests"] => match *method {
            Method::GET => ok(json!(app.counters.snapshot())),
            Method::DELETE => {
                app.counters.reset();
                ok(json!(app.counters.snapshot()))
            }
            _ => Err(ApiError::method_not_allowed()),
        },
        ["_topograph", "snapshot"] => ok(Value::Array(app.store.snapshot())),
        ["healthz" | "livez" | "readyz"] => Ok((StatusCode::OK, "ok").into_response()),
        ["version"] => discovery_get(Some(discovery::version())),
        ["openapi", "v2"] | ["swagger.json"] => {
            app.counters.count(Verb::Discovery);
            let accept = headers
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if accept.contains("protobuf") {
                let mut r = Response::new(Body::from(discovery::openapi_v2_protobuf()));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(
                        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                    ),
                );
                Ok(r)
            } else {
                ok(discovery::openapi_v2_json())
            }
        }
        ["api" | "apis"] if discovery::wants_aggregated(accept) => {
            app.counters.count(Verb::Discovery);
            if method != Method::GET {
                return Err(ApiError::method_not_allowed());
            }
            let doc = discovery::aggregated(&app.store.types(), segs[0] == "api");
            let mut r = json_response(StatusCode::OK, &doc);
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(discovery::AGGREGATED_CONTENT_TYPE),
            );
            Ok(r)
        }
        ["api"] => discovery_get(Some(discovery::core_versions())),
        ["api", "v1"] => discovery_get(discovery::resource_list(&app.store.types(), "", "v1")),
        ["api", "v1", rest @ ..] => resource(app, method, headers, body, &query, "", "v1", rest),
        ["apis"] => discovery_get(Some(discovery::group_list(&app.store.types()))),
        ["apis", group] => discovery_get(discovery::group(&app.store.types(), group)),
        ["apis", group, version] => {
            discovery_get(discovery::resource_list(&app.store.types(), group, version))
        }
        ["apis", group, version, rest @ ..] => {
            resource(app, method, headers, body, &query, group, version, rest)
        }
        _ => {
            app.counters.count(Verb::Discovery);
            Err(ApiError::path_not_found())
        }
    }
}

/// A resource path after `/api/v1` or `/apis/{group}/{version}`.
struct Target {
    rt: Arc<ResourceType>,
    namespace: Option<String>,
    name: Option<String>,
    sub: Sub,
}

fn parse_target(
    store: &Store,
    group: &str,
    version: &str,
    rest: &[&str],
) -> Result<Target, ApiError> {
    let namespaced_path = rest.len() >= 3
        && rest[0] == "namespaces"
        && store.resolve(group, rest[2]).is_some_and(|t| t.namespaced);
    let (namespace, rest) = if namespaced_path {
        (Some(rest[1].to_string()), &rest[2..])
    } else {
        (None, rest)
    };
    let plural = rest.first().ok_or_else(ApiError::path_not_found)?;
    let rt = store
        .resolve(group, plural)
        .filter(|t| t.serves(version))
        .ok_or_else(ApiError::path_not_found)?;
    let name = rest.get(1).map(|s| s.to_string());
    let sub = match rest.get(2) {
        None => Sub::Main,
        Some(&"status") if rt.status_subresource => Sub::Status,
        Some(_) => return Err(ApiError::path_not_found()),
    };
    if rest.len() > 3
        || (namespace.is_some() && !rt.namespaced)
        || (rt.namespaced && name.is_some() && namespace.is_none())
    {
        return Err(ApiError::path_not_found());
    }
    Ok(Target {
        rt,
        namespace,
        name,
        sub,
    })
}

fn filter(rt: &ResourceType, query: &Params) -> Result<Filter, ApiError> {
    let labels = LabelSelector::parse(query.get("labelSelector").map_or("", String::as_str))
        .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
    let fields = FieldSelector::parse_for(
        query.get("fieldSelector").map_or("", String::as_str),
        crate::selector::fields_of(&rt.group, &rt.kind),
    )
    .map_err(ApiError::bad_request)?;
    Ok(Filter { labels, fields })
}

/// A list of objects as stored: what `serde_json` writes for the list object (keys in
/// order), with the items' stored text.
fn stored_list(
    rt: &ResourceType,
    api_version: &str,
    items: &[Arc<crate::stored::Stored>],
    rv: u64,
) -> Vec<u8> {
    let text = |s: &str| Value::String(s.to_string()).to_string();
    let mut list = Vec::with_capacity(items.iter().map(|o| o.json_len() + 1).sum::<usize>() + 128);
    list.extend_from_slice(b"{\"apiVersion\":");
    list.extend_from_slice(text(api_version).as_bytes());
    list.extend_from_slice(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            list.push(b',');
        }
        item.write_json(&mut list);
    }
    list.extend_from_slice(b"],\"kind\":");
    list.extend_from_slice(text(&rt.list_kind).as_bytes());
    list.extend_from_slice(b",\"metadata\":{\"resourceVersion\":\"");
    list.extend_from_slice(rv.to_string().as_bytes());
    list.extend_from_slice(b"\"}}");
    list
}

fn truthy(query: &Params, key: &str) -> bool {
    matches!(query.get(key).map(String::as_str), Some("true" | "1"))
}

fn json_body(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn yaml_body(body: &Bytes) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: invalid UTF-8: {e}")))?;
    // kube-apiserver reads YAML bodies through sigs.k8s.io/yaml: go-yaml v2's YAML 1.1.
    let value: Value = topograph_gocompat::yaml::yaml_to_json(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the body is not an object",
        ));
    }
    Ok(value)
}

/// The object a create or update sends, in JSON, YAML or (built-in kinds) protobuf.
fn object_body(
    headers: &HeaderMap,
    body: &Bytes,
    rt: &ResourceType,
    version: &str,
    kind: Option<protobuf::Kind>,
) -> Result<Value, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    match (media::body_format(content_type, kind.is_some())?, kind) {
        (Format::Protobuf, Some(kind)) => {
            protobuf::read_object(kind, &rt.api_version(version), &rt.kind, body)
        }
        (Format::Yaml, _) => yaml_body(body),
        _ => json_body(body),
    }
}

fn delete_options(
    query: &Params,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<DeleteOptions, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let opts = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        // DeleteOptions is a meta type: protobuf whatever the resource.
        match media::body_format(content_type, true)? {
            Format::Protobuf => protobuf::read_delete_options(body)?,
            Format::Yaml => yaml_body(body)?,
            Format::Json => json_body(body)?,
        }
    };
    let policy = opts
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or(query.get("propagationPolicy").map(String::as_str))
        .unwrap_or("Background");
    let orphan =
        policy == "Orphan" || opts.get("orphanDependents").and_then(Value::as_bool) == Some(true);
    let pre = |f: &str| {
        opts.pointer(&format!("/preconditions/{f}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Ok(DeleteOptions {
        orphan,
        precondition_uid: pre("uid"),
        precondition_rv: pre("resourceVersion"),
    })
}

#[allow(clippy::too_many_arguments)]
fn resource(
    app: &AppState,
    method: &Method,
    headers: &HeaderMap,
    body: &Bytes,
    query: &Params,
    group: &str,
    version: &str,
    rest: &[&str],
) -> Result<Response, ApiError> {
    // Counted before anything can fail, so every request counts exactly once.
    let verb = match *method {
        Method::GET if is_collection(&app.store, group, rest) => {
            if truthy(query, "watch") {
                Verb::Watch
            } else {
                Verb::List
            }
        }
        Method::GET => Verb::Get,
        Method::POST => Verb::Create,
        Method::PUT => Verb::Update,
        Method::PATCH => Verb::Patch,
        Method::DELETE => Verb::Delete,
        _ => {
            app.counters.count(Verb::Discovery);
            return Err(ApiError::method_not_allowed());
        }
    };
    app.counters.count(verb);
    let target = parse_target(&app.store, group, version, rest)?;
    let kind = protobuf::Kind::for_type(&target.rt, version);
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let answer = Answer {
        negotiated: media::negotiate_read(
            accept,
            kind.is_some(),
            verb == Verb::Watch,
            matches!(verb, Verb::Get | Verb::List | Verb::Watch),
        )?,
        kind,
    };
    let request = Request {
        headers,
        body,
        query,
        version,
        verb,
    };
    Ok(serve(app, &request, &target, &answer).unwrap_or_else(|e| answer.error(e)))
}

/// What a resource request carries, past routing.
struct Request<'a> {
    headers: &'a HeaderMap,
    body: &'a Bytes,
    query: &'a Params,
    version: &'a str,
    verb: Verb,
}

/// Serves a resource request; errors are answered by the caller in the negotiated format.
fn serve(
    app: &AppState,
    request: &Request,
    target: &Target,
    answer: &Answer,
) -> Result<Response, ApiError> {
    let Request {
        headers,
        body,
        query,
        version,
        verb,
    } = *request;
    let w = writer(query, headers, verb)?;
    let store = &app.store;
    let rt = &target.rt;
    let api_version = rt.api_version(version);
    let ns = target.namespace.clone().unwrap_or_default();
    // Objects are answered in the version the request named (writes already are).
    let render = |code: StatusCode, obj: Value| -> Result<Response, ApiError> {
        Ok(answer.object(code, &store.view(rt, obj, &api_version)?))
    };
    // A read answered as a Table: rows of the objects in the requested version.
    let tabulate = match answer.negotiated.table {
        Some(api_version) => Some((
            Printer::for_resource(store, rt, version),
            TableRequest {
                api_version,
                include: Include::parse(query.get("includeObject").map(String::as_str))?,
            },
        )),
        None => None,
    };
    // Reads in the version objects are stored in, as JSON, are answered with the stored
    // text: nothing parsed, converted or written.
    let as_stored = tabulate.is_none() && api_version == rt.api_version(&rt.storage_version);
    match (verb, &target.name) {
        (Verb::List, None) => {
            let (items, rv) =
                store.list_stored(rt, target.namespace.as_deref(), &filter(rt, query)?);
            if as_stored
                && items.iter().all(|o| o.is_in(&api_version))
                && let Some(response) =
                    answer.json_text(StatusCode::OK, stored_list(rt, &api_version, &items, rv))
            {
                return Ok(response);
            }
            let items = items
                .iter()
                .map(|o| store.view(rt, o.value(), &api_version))
                .collect::<Result<Vec<Value>, ApiError>>()?;
            if let Some((printer, request)) = &tabulate {
                let table = printer.table(*request, &items, &rv.to_string(), true, table::now());
                return Ok(answer.object(StatusCode::OK, &table));
            }
            Ok(answer.list(
                &json!({"kind": rt.list_kind, "apiVersion": api_version, "metadata": {"resourceVersion": rv.to_string()}, "items": items}),
            ))
        }
        (Verb::Watch, None) => {
            let send_initial_events = truthy(query, "sendInitialEvents");
            let rv = query.get("resourceVersion").map_or("", String::as_str);
            let since = if send_initial_events || rv.is_empty() || rv == "0" {
                None
            } else {
                Some(rv.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("invalid resourceVersion \"{rv}\""))
                })?)
            };
            let timeout = match query.get("timeoutSeconds") {
                Some(t) => Some(Duration::from_secs(t.parse().map_err(|_| {
                    ApiError::bad_request(format!("invalid timeoutSeconds \"{t}\""))
                })?)),
                None => None,
            };
            let params = WatchParams {
                api_version,
                namespace: target.namespace.clone(),
                filter: filter(rt, query)?,
                since,
                send_initial_events,
                bookmarks: truthy(query, "allowWatchBookmarks"),
                bookmark_interval: app.bookmark_interval,
                timeout,
                table: tabulate,
            };
            let encoding = match (answer.format(), answer.kind) {
                (Format::Protobuf, Some(kind)) => watch::Encoding::Protobuf(kind),
                _ => watch::Encoding::Json,
            };
            Ok(watch::start(
                store,
                rt.clone(),
                params,
                encoding,
                app.shutdown.clone(),
            ))
        }
        (Verb::Get, Some(name)) => {
            let stored = store.get_stored(rt, &ns, name)?;
            if as_stored
                && stored.is_in(&api_version)
                && let Some(response) = answer.json_text(StatusCode::OK, stored.json().into_owned())
            {
                return Ok(response);
            }
            let obj = stored.value();
            match &tabulate {
                Some((printer, request)) => {
                    let obj = store.view(rt, obj, &api_version)?;
                    let rv = meta_str(&obj, "resourceVersion").to_string();
                    let table = printer.table(*request, &[obj], &rv, true, table::now());
                    Ok(answer.object(StatusCode::OK, &table))
                }
                None => render(StatusCode::OK, obj),
            }
        }
        (Verb::Create, None) => {
            if rt.namespaced && target.namespace.is_none() {
                return Err(ApiError::method_not_allowed());
            }
            let body = object_body(headers, body, rt, version, answer.kind)?;
            // kube-apiserver's storage refuses a create that carries a resourceVersion.
            if !meta_str(&body, "resourceVersion").is_empty() {
                return Err(ApiError::internal(
                    "resourceVersion should not be set on objects to be created",
                ));
            }
            let created = store.create_as(rt, version, &ns, body, &w)?;
            render(StatusCode::CREATED, created)
        }
        (Verb::Update, Some(name)) => {
            let body = object_body(headers, body, rt, version, answer.kind)?;
            // Custom resources allow no unconditional update: a PUT names the version it
            // replaces (customResourceStrategy.AllowUnconditionalUpdate is false).
            if !rt.group.is_empty() && meta_str(&body, "resourceVersion").is_empty() {
                return Err(ApiError::invalid(
                    &rt.group,
                    &rt.kind,
                    name,
                    "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
                ));
            }
            render(
                StatusCode::OK,
                store.update_as(rt, version, &ns, name, body, target.sub, &w)?,
            )
        }
        (Verb::Patch, Some(name)) => {
            let force = query.get("force");
            let patch_type = match content_type(headers).as_str() {
                "application/merge-patch+json" => PatchType::Merge,
                "application/json-patch+json" => PatchType::Json,
                "application/strategic-merge-patch+json" if rt.group.is_empty() => {
                    PatchType::Strategic
                }
                "application/apply-patch+yaml" if app.server_side_apply => {
                    // Required explicitly: the User-Agent does not stand in for it here.
                    if query.get("fieldManager").is_none_or(|m| m.is_empty()) {
                        return Err(fields::invalid_options(
                            "PatchOptions",
                            "fieldManager: Required value: is required for apply patch",
                        ));
                    }
                    let force = fields::query_bool(force.map(String::as_str));
                    let config = fields::parse_apply_body(body)?;
                    // 201 when the apply created the object, as kube-apiserver answers.
                    let existed = store.get_stored(rt, &ns, name).is_ok();
                    let applied =
                        store.apply(rt, version, &ns, name, config, force, target.sub, &w)?;
                    let code = if existed {
                        StatusCode::OK
                    } else {
                        StatusCode::CREATED
                    };
                    return render(code, applied);
                }
                _ => {
                    // kube-apiserver's text, listing what the kind accepts: custom
                    // resources take no strategic merge patch (a built-in kind's is
                    // applied here as a merge patch).
                    let mut accepted = vec![
                        "application/json-patch+json",
                        "application/merge-patch+json",
                    ];
                    if rt.group.is_empty() {
                        accepted.push("application/strategic-merge-patch+json");
                    }
                    if app.server_side_apply {
                        accepted.push("application/apply-patch+yaml");
                    }
                    return Err(ApiError::unsupported_media_type(format!(
                        "the body of the request was in an unknown format - accepted media types include: {}",
                        accepted.join(", ")
                    )));
                }
            };
            if force.is_some() {
                return Err(fields::invalid_options(
                    "PatchOptions",
                    "force: Forbidden: may not be specified for non-apply patch",
                ));
            }
            let patched = store.patch_as(
                rt,
                version,
                &ns,
                name,
                patch_type,
                &json_body(body)?,
                target.sub,
                &w,
            )?;
            render(StatusCode::OK, patched)
        }
        (Verb::Delete, Some(name)) => {
            if target.sub != Sub::Main {
                return Err(ApiError::method_not_allowed());
            }
            let deleted = store.delete(rt, &ns, name, &delete_options(query, headers, body)?)?;
            // 202 like the API server when finalizers keep the object for now.
            let still_there = deleted.pointer("/metadata/deletionTimestamp").is_some()
                && store.get_stored(rt, &ns, name).is_ok();
            render(
                if still_there {
                    StatusCode::ACCEPTED
                } else {
                    StatusCode::OK
                },
                deleted,
            )
        }
        (Verb::Delete, None) => {
            let opts = delete_options(query, headers, body)?;
            let items = store
                .delete_collection(rt, target.namespace.as_deref(), &filter(rt, query)?, &opts)
                .into_iter()
                .map(|o| store.view(rt, o, &api_version))
                .collect::<Result<Vec<Value>, ApiError>>()?;
            Ok(answer.list(
                &json!({"kind": rt.list_kind, "apiVersion": api_version, "metadata": {"resourceVersion": store.current_rv().to_string()}, "items": items}),
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// Who writes and how: the `fieldManager` query parameter or, without one, the
/// User-Agent's product name (kube-apiserver's rule), and `dryRun=All`, which only
/// writes (create, update, patch) accept here.
fn writer(query: &Params, headers: &HeaderMap, verb: Verb) -> Result<Write, ApiError> {
    let options = match verb {
        Verb::Create => "CreateOptions",
        Verb::Update => "UpdateOptions",
        Verb::Patch => "PatchOptions",
        _ => "DeleteOptions",
    };
    let manager = match query.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(m) => {
            let problems = fields::field_manager_problems(m);
            if !problems.is_empty() {
                let causes = if problems.len() == 1 {
                    problems.concat()
                } else {
                    format!("[{}]", problems.join(", "))
                };
                return Err(fields::invalid_options(options, &causes));
            }
            m.clone()
        }
        None => fields::manager_from_user_agent(
            headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or(""),
        ),
    };
    let dry_run = match query.get("dryRun").map(String::as_str) {
        None | Some("") => false,
        Some("All") if matches!(verb, Verb::Create | Verb::Update | Verb::Patch) => true,
        Some("All") => {
            return Err(ApiError::bad_request(
                "dryRun is supported by topograph-kube only on create, update and patch",
            ));
        }
        Some(other) => {
            return Err(fields::invalid_options(
                options,
                &format!(
                    "dryRun: Unsupported value: []string{{\"{other}\"}}: supported values: \"All\""
                ),
            ));
        }
    };
    let field_validation = match verb {
        Verb::Create | Verb::Update | Verb::Patch => {
            FieldValidation::parse(query.get("fieldValidation").map(String::as_str))
                .map_err(|causes| fields::invalid_options(options, &causes))?
        }
        _ => FieldValidation::Ignore,
    };
    Ok(Write {
        manager,
        dry_run,
        field_validation,
    })
}

/// Whether a GET addresses a collection (list or watch) rather than one object.
fn is_collection(store: &Store, group: &str, rest: &[&str]) -> bool {
    let namespaced_path = rest.len() >= 3
        && rest[0] == "namespaces"
        && store.resolve(group, rest[2]).is_some_and(|t| t.namespaced);
    if namespaced_path {
        rest.len() == 3
    } else {
        rest.len() == 1
    }
}
