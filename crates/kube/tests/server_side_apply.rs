//! Server-side apply and `metadata.managedFields` over raw HTTP, so the tests choose
//! every header (Content-Type, User-Agent) and query parameter themselves: apply as an
//! upsert, idempotent re-apply, shared ownership, conflicts and `force`, pruning of
//! what an applier stops applying, Update entries of other writes, `dryRun=All`, keyed
//! list merging from the CRD schema, and kube-apiserver's error texts.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use topograph_kube::{Config, RunningServer, Server};

const APPLY: &str = "application/apply-patch+yaml";
const MERGE: &str = "application/merge-patch+json";
const BASE: &str = "/apis/example.com/v1/namespaces/default/widgets";

struct Reply {
    code: u16,
    body: Value,
}

/// One request on its own connection; `user_agent` None sends no User-Agent.
async fn request(
    server: &RunningServer,
    method: &str,
    path: &str,
    content_type: &str,
    user_agent: Option<&str>,
    body: &str,
) -> Reply {
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(ua) = user_agent {
        head.push_str(&format!("User-Agent: {ua}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body.as_bytes()).await.expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {response}"));
    let text = response.split("\r\n\r\n").nth(1).unwrap_or("");
    let body = serde_json::from_str(text).unwrap_or(Value::Null);
    Reply { code, body }
}

async fn apply(server: &RunningServer, query: &str, body: &Value) -> Reply {
    request(
        server,
        "PATCH",
        &format!("{BASE}/w{query}"),
        APPLY,
        Some("test/1"),
        &body.to_string(),
    )
    .await
}

async fn get(server: &RunningServer) -> Reply {
    request(server, "GET", &format!("{BASE}/w"), "", None, "").await
}

/// A `POST` of `object` to the widgets collection, as JSON.
async fn create(server: &RunningServer, object: &Value) -> Reply {
    request(
        server,
        "POST",
        BASE,
        "application/json",
        None,
        &object.to_string(),
    )
    .await
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

/// (manager, operation, subresource, fieldsV1) of every entry.
fn entries(o: &Value) -> Vec<(String, String, String, Value)> {
    o["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (
                s("manager"),
                s("operation"),
                s("subresource"),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

fn fields_of(o: &Value, manager: &str, operation: &str) -> Option<Value> {
    entries(o)
        .into_iter()
        .find(|(m, op, _, _)| m == manager && op == operation)
        .map(|(_, _, _, f)| f)
}

fn rv(o: &Value) -> String {
    o["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

async fn start() -> RunningServer {
    let server = Server::start(Config::default())
        .await
        .expect("server starts");
    let item = json!({"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                        "replicas": {"type": "integer"},
                        "items": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"], "items": item},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "args": {"type": "array", "items": {"type": "string"}}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}});
    server.seed([crd]).expect("CRD seeded");
    server
}

#[tokio::test]
async fn apply_creates_and_reapplying_changes_nothing() {
    let server = start().await;
    let config = widget(json!({"replicas": 1, "args": ["a"]}));
    let created = apply(&server, "?fieldManager=a", &config).await;
    assert_eq!(created.code, 201, "{}", created.body);
    assert_eq!(created.body["spec"], json!({"replicas": 1, "args": ["a"]}));
    assert_eq!(
        fields_of(&created.body, "a", "Apply"),
        Some(json!({"f:spec": {"f:args": {}, "f:replicas": {}}}))
    );
    assert_eq!(entries(&created.body).len(), 1);

    let again = apply(&server, "?fieldManager=a", &config).await;
    assert_eq!(again.code, 200, "{}", again.body);
    assert_eq!(rv(&again.body), rv(&created.body), "a no-op apply");
    assert_eq!(again.body, created.body);

    // YAML, as the content type says, is read too.
    let yaml = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  replicas: 2\n  args: [a]\n";
    let r = request(
        &server,
        "PATCH",
        &format!("{BASE}/w?fieldManager=a"),
        APPLY,
        None,
        yaml,
    )
    .await;
    assert_eq!(
        (r.code, r.body["spec"]["replicas"].clone()),
        (200, json!(2))
    );
    assert_ne!(rv(&r.body), rv(&created.body));
}

#[tokio::test]
async fn managers_share_conflict_and_force() {
    let server = start().await;
    apply(&server, "?fieldManager=a", &widget(json!({"replicas": 1}))).await;

    // Same value: no conflict, both own the field.
    let shared = apply(&server, "?fieldManager=b", &widget(json!({"replicas": 1}))).await;
    assert_eq!(shared.code, 200, "{}", shared.body);
    let replicas = json!({"f:spec": {"f:replicas": {}}});
    assert_eq!(
        fields_of(&shared.body, "a", "Apply"),
        Some(replicas.clone())
    );
    assert_eq!(
        fields_of(&shared.body, "b", "Apply"),
        Some(replicas.clone())
    );

    // Another value: 409 with kube-apiserver's message and causes.
    let c = apply(&server, "?fieldManager=c", &widget(json!({"replicas": 5}))).await;
    assert_eq!(c.code, 409, "{}", c.body);
    assert_eq!(c.body["reason"], "Conflict");
    assert_eq!(
        c.body["message"],
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.replicas\nconflicts with \"b\":\n- .spec.replicas"
    );
    assert_eq!(
        c.body["details"]["causes"],
        json!([
            {"reason": "FieldManagerConflict", "message": "conflict with \"a\"", "field": ".spec.replicas"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"b\"", "field": ".spec.replicas"}
        ])
    );
    assert_eq!(get(&server).await.body["spec"]["replicas"], 1);

    // One owner, conflicting with an Update entry: `using <apiVersion>` in the text.
    let patched = request(
        &server,
        "PATCH",
        &format!("{BASE}/w?fieldManager=d"),
        MERGE,
        None,
        r#"{"spec": {"note": "x"}}"#,
    )
    .await;
    assert_eq!(patched.code, 200, "{}", patched.body);
    let e = apply(&server, "?fieldManager=e", &widget(json!({"note": "y"}))).await;
    assert_eq!(
        (e.code, e.body["message"].clone()),
        (
            409,
            json!(
                "Apply failed with 1 conflict: conflict with \"d\" using example.com/v1: .spec.note"
            )
        )
    );

    // force=true takes the field from both.
    let forced = apply(
        &server,
        "?fieldManager=c&force=true",
        &widget(json!({"replicas": 5})),
    )
    .await;
    assert_eq!(forced.code, 200, "{}", forced.body);
    assert_eq!(forced.body["spec"]["replicas"], 5);
    assert_eq!(fields_of(&forced.body, "c", "Apply"), Some(replicas));
    assert_eq!(
        fields_of(&forced.body, "a", "Apply"),
        None,
        "a owned nothing else"
    );
    assert_eq!(fields_of(&forced.body, "b", "Apply"), None);
}

#[tokio::test]
async fn a_field_the_applier_drops_is_removed_unless_another_manager_owns_it() {
    let server = start().await;
    let first = apply(
        &server,
        "?fieldManager=a",
        &widget(json!({"replicas": 1, "paused": true, "note": "n"})),
    )
    .await;
    assert_eq!(first.code, 201);
    // b takes spec.replicas through an Update (a merge patch with another value).
    let b = request(
        &server,
        "PATCH",
        &format!("{BASE}/w?fieldManager=b"),
        MERGE,
        None,
        r#"{"spec": {"replicas": 3}}"#,
    )
    .await;
    assert_eq!(
        fields_of(&b.body, "b", "Update"),
        Some(json!({"f:spec": {"f:replicas": {}}}))
    );
    let dropped = apply(&server, "?fieldManager=a", &widget(json!({"note": "n"}))).await;
    assert_eq!(dropped.code, 200, "{}", dropped.body);
    assert_eq!(
        dropped.body["spec"],
        json!({"replicas": 3, "note": "n"}),
        "paused, owned by a alone, is gone; replicas, owned by b, stays"
    );
}

#[tokio::test]
async fn other_writes_record_update_entries() {
    let server = start().await;
    let created = request(
        &server,
        "POST",
        BASE,
        "application/json",
        Some("my-tool/1.2 (linux)"),
        &widget(json!({"replicas": 1})).to_string(),
    )
    .await;
    assert_eq!(created.code, 201, "{}", created.body);
    let e = &created.body["metadata"]["managedFields"][0];
    assert_eq!(
        (
            e["manager"].clone(),
            e["operation"].clone(),
            e["apiVersion"].clone()
        ),
        (json!("my-tool"), json!("Update"), json!("example.com/v1"))
    );
    assert!(e["time"].is_string());

    // PUT with an explicit manager: a second entry for what it changed.
    let mut put = created.body.clone();
    put["spec"]["note"] = json!("x");
    let put = request(
        &server,
        "PUT",
        &format!("{BASE}/w?fieldManager=explicit"),
        "application/json",
        Some("my-tool/1.2"),
        &put.to_string(),
    )
    .await;
    assert_eq!(put.code, 200, "{}", put.body);
    assert_eq!(
        fields_of(&put.body, "explicit", "Update"),
        Some(json!({"f:spec": {"f:note": {}}}))
    );
    assert_eq!(
        fields_of(&put.body, "my-tool", "Update"),
        Some(json!({"f:spec": {".": {}, "f:replicas": {}}}))
    );

    // The status subresource records `subresource: status`.
    let status = request(
        &server,
        "PATCH",
        &format!("{BASE}/w/status"),
        MERGE,
        Some("ctrl/0"),
        r#"{"status": {"ready": true}}"#,
    )
    .await;
    assert!(
        entries(&status.body).contains(&(
            "ctrl".into(),
            "Update".into(),
            "status".into(),
            json!({"f:status": {".": {}, "f:ready": {}}})
        )),
        "{:?}",
        entries(&status.body)
    );

    // Setting managedFields moves ownership; an empty list resets them.
    let moved = json!({"metadata": {"managedFields": [{"manager": "owner", "operation": "Apply",
        "apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}, "f:note": {}}}}]}});
    let moved = request(
        &server,
        "PATCH",
        &format!("{BASE}/w"),
        MERGE,
        None,
        &moved.to_string(),
    )
    .await;
    assert_eq!(
        entries(&moved.body),
        vec![(
            "owner".into(),
            "Apply".into(),
            String::new(),
            json!({"f:spec": {"f:note": {}, "f:replicas": {}}})
        )]
    );
    let reset = request(
        &server,
        "PATCH",
        &format!("{BASE}/w"),
        "application/json-patch+json",
        None,
        r#"[{"op": "replace", "path": "/metadata/managedFields", "value": []}]"#,
    )
    .await;
    assert_eq!(reset.code, 200, "{}", reset.body);
    assert!(
        reset.body["metadata"].get("managedFields").is_none(),
        "{}",
        reset.body
    );
    // `[{}]` resets them too (kube-apiserver's isResetManagedFields).
    let again = apply(
        &server,
        "?fieldManager=owner",
        &widget(json!({"replicas": 9})),
    )
    .await;
    assert!(
        again.body["metadata"].get("managedFields").is_some(),
        "{}",
        again.body
    );
    let reset = request(
        &server,
        "PATCH",
        &format!("{BASE}/w"),
        "application/json-patch+json",
        None,
        r#"[{"op": "replace", "path": "/metadata/managedFields", "value": [{}]}]"#,
    )
    .await;
    assert_eq!(reset.code, 200, "{}", reset.body);
    assert!(
        reset.body["metadata"].get("managedFields").is_none(),
        "{}",
        reset.body
    );
}

#[tokio::test]
async fn lists_merge_as_the_schema_says() {
    let server = start().await;
    apply(
        &server,
        "?fieldManager=a",
        &widget(json!({"items": [{"name": "x", "v": 1}], "tags": ["t1"], "args": ["a1"]})),
    )
    .await;
    let b = apply(
        &server,
        "?fieldManager=b",
        &widget(json!({"items": [{"name": "y", "v": 2}], "tags": ["t2"]})),
    )
    .await;
    assert_eq!(b.code, 200, "{}", b.body);
    assert_eq!(
        b.body["spec"],
        json!({"items": [{"name": "x", "v": 1}, {"name": "y", "v": 2}], "tags": ["t1", "t2"], "args": ["a1"]})
    );
    // An atomic list belongs whole to one manager: another value conflicts.
    let c = apply(&server, "?fieldManager=c", &widget(json!({"args": ["c1"]}))).await;
    assert_eq!(
        (c.code, c.body["message"].clone()),
        (
            409,
            json!("Apply failed with 1 conflict: conflict with \"a\": .spec.args")
        )
    );
}

#[tokio::test]
async fn dry_run_and_refusals() {
    let server = start().await;
    let before = server.store().current_rv();
    let dry = apply(
        &server,
        "?fieldManager=a&dryRun=All",
        &widget(json!({"replicas": 1})),
    )
    .await;
    assert_eq!(dry.code, 201, "{}", dry.body);
    assert_eq!(dry.body["spec"]["replicas"], 1);
    assert_eq!(get(&server).await.code, 404, "a dry run stores nothing");
    assert_eq!(server.store().current_rv(), before);

    let created = apply(&server, "?fieldManager=a", &widget(json!({"replicas": 1}))).await;
    let dry = apply(
        &server,
        "?fieldManager=a&dryRun=All",
        &widget(json!({"replicas": 7})),
    )
    .await;
    assert_eq!(
        (dry.code, dry.body["spec"]["replicas"].clone()),
        (200, json!(7))
    );
    assert_eq!(rv(&dry.body), rv(&created.body));
    assert_eq!(get(&server).await.body, created.body);

    let no_manager = apply(&server, "", &widget(json!({}))).await;
    assert_eq!(no_manager.code, 422);
    assert_eq!(
        no_manager.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let unknown = request(
        &server,
        "PATCH",
        &format!("{BASE}/w"),
        "text/plain",
        None,
        "{}",
    )
    .await;
    assert_eq!(
        (
            unknown.code,
            unknown.body["reason"].clone(),
            unknown.body["message"].clone()
        ),
        (
            415,
            json!("UnsupportedMediaType"),
            json!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
            )
        )
    );
    let forced_merge = request(
        &server,
        "PATCH",
        &format!("{BASE}/w?force=true"),
        MERGE,
        None,
        "{}",
    )
    .await;
    assert_eq!(forced_merge.code, 422);
    assert_eq!(
        forced_merge.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
    for (body, code) in [
        ("[1]".to_string(), 400),
        ("a: [".to_string(), 400),
        (
            widget(json!({})).to_string().replace("\"w\"", "\"other\""),
            400,
        ),
        (
            widget(json!({})).to_string().replace("Widget", "Gadget"),
            400,
        ),
        (
            widget(json!({}))
                .to_string()
                .replace("example.com/v1", "example.com/v2"),
            400,
        ),
        (
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w",
            "managedFields": [{"manager": "x"}]}})
            .to_string(),
            400,
        ),
    ] {
        let r = request(
            &server,
            "PATCH",
            &format!("{BASE}/w?fieldManager=a"),
            APPLY,
            None,
            &body,
        )
        .await;
        assert_eq!(r.code, code, "{body}: {}", r.body);
        assert_eq!(r.body["kind"], "Status", "{body}");
    }
}

/// A body that names a uid addresses that very object: it creates nothing and lands on
/// no other object of the name (kube-apiserver's texts).
#[tokio::test]
async fn an_apply_naming_a_uid_must_find_that_object() {
    let server = start().await;
    let mut config = widget(json!({"replicas": 1}));
    config["metadata"]["uid"] = json!("0000-gone");
    let refused = apply(&server, "?fieldManager=a", &config).await;
    assert_eq!(refused.code, 409, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "Operation cannot be fulfilled on widgets.example.com \"w\": uid mismatch: the provided object specified uid 0000-gone, and no existing object was found"
    );

    config["metadata"].as_object_mut().unwrap().remove("uid");
    let created = apply(&server, "?fieldManager=a", &config).await;
    assert_eq!(created.code, 201, "{}", created.body);
    let uid = created.body["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    config["metadata"]["uid"] = json!("another");
    let refused = apply(&server, "?fieldManager=a", &config).await;
    assert_eq!(refused.code, 409, "{}", refused.body);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .ends_with(&format!(
                "Precondition failed: UID in precondition: another, UID in object meta: {uid}"
            )),
        "{}",
        refused.body
    );
    config["metadata"]["uid"] = json!(uid);
    assert_eq!(apply(&server, "?fieldManager=a", &config).await.code, 200);
}

/// A field the schema does not declare (and whose object does not keep unknown fields)
/// is refused before anything merges, with kube-apiserver's 500 text; it is not
/// applied, pruned afterwards and left owned.
#[tokio::test]
async fn an_apply_with_an_undeclared_field_is_refused() {
    let server = start().await;
    let mut config = widget(json!({"items": [{"name": "a", "bogus": 1}]}));
    let refused = apply(&server, "?fieldManager=a", &config).await;
    assert_eq!(refused.code, 500, "{}", refused.body);
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.starts_with("failed to create typed patch object ("),
        "{message}"
    );
    assert!(
        message.ends_with(r#".spec.items[name="a"].bogus: field not declared in schema"#),
        "{message}"
    );
    config["spec"] = json!({"items": [{"name": "a"}]});
    config["extra"] = json!(1);
    let refused = apply(&server, "?fieldManager=a", &config).await;
    assert_eq!(refused.code, 500, "{}", refused.body);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .ends_with(".extra: field not declared in schema")
    );
    // Under x-kubernetes-preserve-unknown-fields anything goes.
    config.as_object_mut().unwrap().remove("extra");
    config["spec"]["anything"] = json!({"at": "all"});
    assert_eq!(apply(&server, "?fieldManager=a", &config).await.code, 201);
}

/// Write options are checked as kube-apiserver checks them: a field manager of at most
/// 128 printable bytes, `dryRun` only `All`, `force` read as Go reads a boolean query
/// parameter; custom resources take no strategic merge patch.
#[tokio::test]
async fn write_options_are_checked_as_kube_apiserver_does() {
    let server = start().await;
    let config = widget(json!({"replicas": 1}));
    let long = "m".repeat(129);
    let refused = apply(&server, &format!("?fieldManager={long}"), &config).await;
    assert_eq!(refused.code, 422, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
    );
    let refused = apply(&server, "?fieldManager=a&dryRun=Some", &config).await;
    assert_eq!(refused.code, 422, "{}", refused.body);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .starts_with("PatchOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value")
    );
    assert_eq!(
        apply(&server, "?fieldManager=a&force=TRUE", &config)
            .await
            .code,
        201
    );
    let smp = request(
        &server,
        "PATCH",
        &format!("{BASE}/w"),
        "application/strategic-merge-patch+json",
        None,
        r#"{"spec":{"replicas":2}}"#,
    )
    .await;
    assert_eq!(smp.code, 415, "{}", smp.body);
}

/// Preconditions kube-apiserver's storage enforces: a create names no resourceVersion;
/// a custom resource is only replaced by a PUT naming the version it replaces.
#[tokio::test]
async fn creates_and_updates_carry_the_resource_version_kube_requires() {
    let server = start().await;
    let mut object = widget(json!({"replicas": 1}));
    object["metadata"]["resourceVersion"] = json!("7");
    let refused = create(&server, &object).await;
    assert_eq!(refused.code, 500, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "resourceVersion should not be set on objects to be created"
    );
    object["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let created = create(&server, &object).await;
    assert_eq!(created.code, 201, "{}", created.body);

    let path = format!("{BASE}/w");
    let refused = request(
        &server,
        "PUT",
        &path,
        "application/json",
        None,
        &object.to_string(),
    )
    .await;
    assert_eq!(refused.code, 422, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "Widget.example.com \"w\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    object["metadata"]["resourceVersion"] = created.body["metadata"]["resourceVersion"].clone();
    object["spec"]["replicas"] = json!(2);
    let replaced = request(
        &server,
        "PUT",
        &path,
        "application/json",
        None,
        &object.to_string(),
    )
    .await;
    assert_eq!(replaced.code, 200, "{}", replaced.body);
}

/// An object's name is a DNS-1123 subdomain, whatever its schema (ValidateObjectMeta).
#[tokio::test]
async fn a_name_that_is_not_a_dns_subdomain_is_refused() {
    let server = start().await;
    let mut object = widget(json!({}));
    object["metadata"]["name"] = json!("Bad_Name");
    let refused = create(&server, &object).await;
    assert_eq!(refused.code, 422, "{}", refused.body);
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.starts_with("Widget.example.com \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of"),
        "{message}"
    );
    assert_eq!(
        refused.body["details"]["causes"][0]["field"],
        "metadata.name"
    );
}

/// Label keys are qualified names and values at most 63 characters, on create and on
/// every later write (ValidateObjectMeta), whatever the schema.
#[tokio::test]
async fn labels_kube_apiserver_would_refuse_are_refused() {
    let server = start().await;
    let long = "c".repeat(64);
    let mut object = widget(json!({}));
    object["metadata"]["labels"] = json!({ "topograph.io/cluster-class": long });
    let refused = create(&server, &object).await;
    assert_eq!(refused.code, 422, "{}", refused.body);
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "metadata.labels: Invalid value: \"{long}\": must be no more than 63 characters"
        )),
        "{message}"
    );
    assert_eq!(
        refused.body["details"]["causes"][0]["field"],
        "metadata.labels"
    );

    object["metadata"]["labels"] = json!({ "ok": "yes" });
    let created = create(&server, &object).await;
    assert_eq!(created.code, 201, "{}", created.body);
    let path = format!("{BASE}/{}", object["metadata"]["name"].as_str().unwrap());
    let patched = request(
        &server,
        "PATCH",
        &path,
        "application/merge-patch+json",
        None,
        &json!({"metadata": {"labels": {"bad key/x/y": "v"}}}).to_string(),
    )
    .await;
    assert_eq!(patched.code, 422, "{}", patched.body);
    assert_eq!(
        patched.body["details"]["causes"][0]["field"],
        "metadata.labels"
    );
}

/// Labels and annotations decode into Go's `map[string]string`: a number, or a string
/// where the map should be, is refused with the decoder's words before any validation.
#[tokio::test]
async fn labels_and_annotations_that_are_not_string_maps_are_refused_as_undecodable() {
    let server = start().await;
    for (metadata, expected) in [
        (
            json!({"name": "w", "labels": {"n": 5}}),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            json!({"name": "w", "labels": "no"}),
            "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string",
        ),
        (
            json!({"name": "w", "annotations": {"a": true}}),
            "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type string",
        ),
    ] {
        let mut object = widget(json!({}));
        object["metadata"] = metadata;
        let refused = create(&server, &object).await;
        assert_eq!(refused.code, 400, "{}", refused.body);
        assert_eq!(
            refused.body["message"],
            format!("Widget in version \"v1\" cannot be handled as a Widget: {expected}")
        );
    }
    // Strings are fine, and so is a null value (Go decodes it as "").
    let mut object = widget(json!({}));
    object["metadata"]["labels"] = json!({"a": "b", "c": null});
    assert_eq!(create(&server, &object).await.code, 201);
}
