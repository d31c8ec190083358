//! Custom-resource writes against the CRD's structural schema over HTTP, as
//! kube-apiserver answers them: the 422 Status of a refused write (message, reason,
//! details and causes), unknown fields pruned, defaults applied, CEL rules (transition
//! rules too), `/status` writes, patches, the schema of the version written in, and
//! CRDs whose schema accepts anything (or that have none) still accepting anything.

use serde_json::{Value, json};
use topograph_kube::{Config, RunningServer, Server};

const GROUP: &str = "infrastructure.cluster.x-k8s.io";
const BASE: &str = "/apis/infrastructure.cluster.x-k8s.io";

/// Cluster API's `APIEndpoint`: a required host and an int32 port (defaulted here).
fn endpoint_schema() -> Value {
    json!({
        "type": "object",
        "required": ["host"],
        "properties": {
            "host": {"type": "string"},
            "port": {"type": "integer", "format": "int32", "default": 6443}
        }
    })
}

/// A DockerCluster CRD: v1beta1 has the plain schema, v1beta2 the same with CEL rules
/// (the endpoint may not be `localhost`, and cannot change once set).
fn docker_cluster_crd() -> Value {
    let schema = |rules: bool| {
        let mut endpoint = endpoint_schema();
        let mut spec = json!({
            "type": "object",
            "properties": {
                "controlPlaneEndpoint": endpoint.clone(),
                "loadBalancer": {"type": "object", "properties": {"imageTag": {"type": "string", "maxLength": 8}}}
            }
        });
        if rules {
            endpoint["x-kubernetes-validations"] = json!([{"rule": "self == oldSelf", "message": "controlPlaneEndpoint is immutable"}]);
            spec["properties"]["controlPlaneEndpoint"] = endpoint;
            spec["x-kubernetes-validations"] = json!([{
                "rule": "!has(self.controlPlaneEndpoint) || self.controlPlaneEndpoint.host != 'localhost'",
                "message": "the endpoint must be reachable from other machines",
                "fieldPath": ".controlPlaneEndpoint.host"
            }]);
        }
        json!({"openAPIV3Schema": {
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object"},
                "spec": spec,
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
            }
        }})
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "dockerclusters.infrastructure.cluster.x-k8s.io"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "dockerclusters", "kind": "DockerCluster"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": true, "schema": schema(false),
                 "subresources": {"status": {}}},
                {"name": "v1beta2", "served": true, "storage": false, "schema": schema(true),
                 "subresources": {"status": {}}}
            ]
        }
    })
}

/// A CRD like `topograph crds` writes (anything goes), or one with no schema at all.
fn open_crd(kind: &str, schema: Option<Value>) -> Value {
    let plural = format!("{}s", kind.to_lowercase());
    let mut version =
        json!({"name": "v1beta1", "served": true, "storage": true, "subresources": {"status": {}}});
    if let Some(s) = schema {
        version["schema"] = json!({"openAPIV3Schema": s});
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": plural, "kind": kind}, "versions": [version]}
    })
}

async fn start() -> RunningServer {
    let server = Server::start(Config::default())
        .await
        .expect("server starts");
    server
        .seed([
            docker_cluster_crd(),
            open_crd(
                "DockerMachine",
                Some(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
            ),
            open_crd("DockerMachinePool", None),
        ])
        .expect("CRDs accepted");
    server
}

/// One HTTP request with a JSON body; the status code and the JSON answer.
async fn request(
    server: &RunningServer,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connects");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .await
        .expect("request sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response read");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let json = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"));
    (code, json)
}

async fn post(server: &RunningServer, path: &str, body: Value) -> (u16, Value) {
    request(server, "POST", path, "application/json", &body).await
}

fn docker_cluster(version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "DockerCluster",
           "metadata": {"name": name}, "spec": spec})
}

fn collection(version: &str, plural: &str) -> String {
    format!("{BASE}/{version}/namespaces/default/{plural}")
}

#[tokio::test]
async fn a_create_missing_a_required_field_is_refused_like_kube_apiserver() {
    let server = start().await;
    let (code, status) = post(
        &server,
        &collection("v1beta1", "dockerclusters"),
        docker_cluster(
            "v1beta1",
            "x",
            json!({"controlPlaneEndpoint": {"port": 6443}}),
        ),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "DockerCluster.infrastructure.cluster.x-k8s.io \"x\" is invalid: spec.controlPlaneEndpoint.host: Required value",
            "reason": "Invalid",
            "details": {"name": "x", "group": GROUP, "kind": "DockerCluster", "causes": [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.controlPlaneEndpoint.host"}
            ]},
            "code": 422
        })
    );
    assert!(
        server
            .store()
            .get_object(&format!("{GROUP}/v1beta1"), "DockerCluster", "default", "x")
            .is_none()
    );

    // Several problems: all of them, bracketed, each its own cause.
    let (code, status) = post(
        &server,
        &collection("v1beta1", "dockerclusters"),
        docker_cluster(
            "v1beta1",
            "y",
            json!({"controlPlaneEndpoint": {"port": "6443"}, "loadBalancer": {"imageTag": "v1.2.3-rc.1"}}),
        ),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "DockerCluster.infrastructure.cluster.x-k8s.io \"y\" is invalid: [spec.controlPlaneEndpoint.port: Invalid value: \"string\": spec.controlPlaneEndpoint.port in body must be of type integer: \"string\", spec.controlPlaneEndpoint.host: Required value, spec.loadBalancer.imageTag: Too long: may not be more than 8 bytes]"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([
            {"reason": "FieldValueTypeInvalid", "message": "Invalid value: \"string\": spec.controlPlaneEndpoint.port in body must be of type integer: \"string\"", "field": "spec.controlPlaneEndpoint.port"},
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.controlPlaneEndpoint.host"},
            {"reason": "FieldValueTooLong", "message": "Too long: may not be more than 8 bytes", "field": "spec.loadBalancer.imageTag"}
        ])
    );
}

#[tokio::test]
async fn unknown_fields_are_pruned_and_defaults_applied() {
    let server = start().await;
    let (code, created) = post(
        &server,
        &collection("v1beta1", "dockerclusters"),
        json!({"apiVersion": format!("{GROUP}/v1beta1"), "kind": "DockerCluster",
               "metadata": {"name": "dc", "labels": {"a": "b"}, "madeUp": "x"},
               "spec": {"controlPlaneEndpoint": {"host": "10.0.0.1", "ignored": true}, "failureDomains": {"fd1": {}},
                        "loadBalancer": null},
               "extra": 1}),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        created["spec"],
        json!({"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}})
    );
    assert!(created.get("extra").is_none());
    assert!(created["metadata"].get("madeUp").is_none());
    assert_eq!(created["metadata"]["labels"], json!({"a": "b"}));
    let stored = server
        .store()
        .get_object(
            &format!("{GROUP}/v1beta1"),
            "DockerCluster",
            "default",
            "dc",
        )
        .expect("stored");
    assert_eq!(stored["spec"], created["spec"]);

    // A merge patch removing the port gets it back from the default; one adding an
    // unknown field changes nothing, so it is a no-op write.
    let path = format!("{}/dc", collection("v1beta1", "dockerclusters"));
    let (code, patched) = request(
        &server,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"spec": {"controlPlaneEndpoint": {"port": null}}}),
    )
    .await;
    assert_eq!(
        (
            code,
            patched["spec"]["controlPlaneEndpoint"]["port"].clone()
        ),
        (200, json!(6443))
    );
    let (code, same) = request(
        &server,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"spec": {"unknown": 1}}),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(
        same["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );

    // JSON patches are checked too.
    let (code, status) = request(
        &server,
        "PATCH",
        &path,
        "application/json-patch+json",
        &json!([{"op": "remove", "path": "/spec/controlPlaneEndpoint/host"}]),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "DockerCluster.infrastructure.cluster.x-k8s.io \"dc\" is invalid: spec.controlPlaneEndpoint.host: Required value"
    );
}

#[tokio::test]
async fn status_writes_are_checked_against_the_status_schema() {
    let server = start().await;
    let (code, created) = post(
        &server,
        &collection("v1beta1", "dockerclusters"),
        docker_cluster(
            "v1beta1",
            "dc",
            json!({"controlPlaneEndpoint": {"host": "h"}}),
        ),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    let status_path = format!("{}/dc/status", collection("v1beta1", "dockerclusters"));
    let mut body = created.clone();
    body["status"] = json!({"ready": "yes"});
    let (code, status) = request(&server, "PUT", &status_path, "application/json", &body).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "DockerCluster.infrastructure.cluster.x-k8s.io \"dc\" is invalid: status.ready: Invalid value: \"string\": ready in body must be of type boolean: \"string\""
    );
    assert_eq!(status["details"]["causes"][0]["field"], "status.ready");

    let (code, patched) = request(
        &server,
        "PATCH",
        &status_path,
        "application/merge-patch+json",
        &json!({"status": {"ready": true, "unknown": 1}}),
    )
    .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["status"], json!({"ready": true}));
}

#[tokio::test]
async fn cel_rules_of_the_version_written_in_are_enforced() {
    let server = start().await;
    // v1beta1 has no rules: localhost is fine there.
    let (code, _) = post(
        &server,
        &collection("v1beta1", "dockerclusters"),
        docker_cluster(
            "v1beta1",
            "old",
            json!({"controlPlaneEndpoint": {"host": "localhost"}}),
        ),
    )
    .await;
    assert_eq!(code, 201);

    let (code, status) = post(
        &server,
        &collection("v1beta2", "dockerclusters"),
        docker_cluster(
            "v1beta2",
            "new",
            json!({"controlPlaneEndpoint": {"host": "localhost"}}),
        ),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "DockerCluster.infrastructure.cluster.x-k8s.io \"new\" is invalid: spec.controlPlaneEndpoint.host: Invalid value: \"object\": the endpoint must be reachable from other machines"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldValueInvalid",
                "message": "Invalid value: \"object\": the endpoint must be reachable from other machines",
                "field": "spec.controlPlaneEndpoint.host"}])
    );

    // Blocking OpenAPI errors keep the rules from running, and say so.
    let (code, status) = post(
        &server,
        &collection("v1beta2", "dockerclusters"),
        docker_cluster("v1beta2", "new", json!({"controlPlaneEndpoint": {}})),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "DockerCluster.infrastructure.cluster.x-k8s.io \"new\" is invalid: [spec.controlPlaneEndpoint.host: Required value, <nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"
    );

    // A transition rule: the endpoint cannot change once set.
    let (code, created) = post(
        &server,
        &collection("v1beta2", "dockerclusters"),
        docker_cluster(
            "v1beta2",
            "new",
            json!({"controlPlaneEndpoint": {"host": "10.0.0.1"}}),
        ),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    let path = format!("{}/new", collection("v1beta2", "dockerclusters"));
    let (code, status) = request(
        &server,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"spec": {"controlPlaneEndpoint": {"host": "10.0.0.2"}}}),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "DockerCluster.infrastructure.cluster.x-k8s.io \"new\" is invalid: spec.controlPlaneEndpoint: Invalid value: \"object\": controlPlaneEndpoint is immutable"
    );
    let mut update = created.clone();
    update["metadata"]["labels"] = json!({"ok": "yes"});
    let (code, updated) = request(&server, "PUT", &path, "application/json", &update).await;
    assert_eq!(
        (code, updated["metadata"]["labels"].clone()),
        (200, json!({"ok": "yes"}))
    );
}

#[tokio::test]
async fn crds_that_accept_anything_still_do() {
    let server = start().await;
    let anything =
        json!({"spec": {"any": [1, "two", {"three": null}], "nested": {"x": {}}}, "top": true});
    for (plural, kind) in [
        ("dockermachines", "DockerMachine"),
        ("dockermachinepools", "DockerMachinePool"),
    ] {
        let mut body = anything.clone();
        body["apiVersion"] = json!(format!("{GROUP}/v1beta1"));
        body["kind"] = json!(kind);
        body["metadata"] = json!({"name": "m"});
        let (code, created) = post(&server, &collection("v1beta1", plural), body).await;
        assert_eq!(code, 201, "{created}");
        assert_eq!(created["spec"], anything["spec"], "{kind}");
        assert_eq!(created["top"], true, "{kind}");
        let (code, patched) = request(
            &server,
            "PATCH",
            &format!("{}/m/status", collection("v1beta1", plural)),
            "application/merge-patch+json",
            &json!({"status": {"whatever": [{"a": 1}]}}),
        )
        .await;
        assert_eq!(code, 200, "{patched}");
        assert_eq!(patched["status"], json!({"whatever": [{"a": 1}]}), "{kind}");
    }
}

#[tokio::test]
async fn updates_are_ratcheted_once_a_crd_tightens_its_schema() {
    let server = start().await;
    let dc = |tag: &str| {
        docker_cluster(
            "v1beta1",
            "tight",
            json!({"controlPlaneEndpoint": {"host": "h"}, "loadBalancer": {"imageTag": tag}}),
        )
    };
    let (code, created) = post(
        &server,
        &collection("v1beta1", "dockerclusters"),
        dc("v1.2.3"),
    )
    .await;
    assert_eq!(code, 201, "{created}");

    // The CRD's v1beta1 now allows image tags of 3 characters at most.
    let crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dockerclusters.infrastructure.cluster.x-k8s.io";
    let (code, mut crd) = request(&server, "GET", crd_path, "application/json", &json!({})).await;
    assert_eq!(code, 200, "{crd}");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["loadBalancer"]
        ["properties"]["imageTag"]["maxLength"] = json!(3);
    let (code, answer) = request(&server, "PUT", crd_path, "application/json", &crd).await;
    assert_eq!(code, 200, "{answer}");

    let object_path = format!("{}/tight", collection("v1beta1", "dockerclusters"));
    let patch = |body: Value| {
        let path = object_path.clone();
        let server = &server;
        async move {
            request(
                server,
                "PATCH",
                &path,
                "application/merge-patch+json",
                &body,
            )
            .await
        }
    };
    // The stored tag stays as it was: an update elsewhere is accepted...
    let (code, answer) = patch(json!({"spec": {"controlPlaneEndpoint": {"port": 6444}}})).await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["spec"]["loadBalancer"]["imageTag"], "v1.2.3");
    // ...and so is a status report.
    let status_path = format!("{object_path}/status");
    let (code, answer) = request(
        &server,
        "PATCH",
        &status_path,
        "application/merge-patch+json",
        &json!({"status": {"ready": true}}),
    )
    .await;
    assert_eq!(code, 200, "{answer}");

    // Changing the tag holds it to the new schema, as does a new object.
    let too_long = "DockerCluster.infrastructure.cluster.x-k8s.io \"tight\" is invalid: spec.loadBalancer.imageTag: Too long: may not be more than 3 bytes";
    let (code, answer) = patch(json!({"spec": {"loadBalancer": {"imageTag": "v1.2.4"}}})).await;
    assert_eq!(code, 422, "{answer}");
    assert_eq!(answer["message"], too_long);
    request(
        &server,
        "DELETE",
        &object_path,
        "application/json",
        &json!({}),
    )
    .await;
    let (code, answer) = post(
        &server,
        &collection("v1beta1", "dockerclusters"),
        dc("v1.2.3"),
    )
    .await;
    assert_eq!(code, 422, "{answer}");
    assert_eq!(answer["message"], too_long);
}
