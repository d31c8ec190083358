//! `application/vnd.kubernetes.protobuf` over raw HTTP, so the tests choose every
//! Accept and Content-Type: built-in kinds written and read in protobuf (objects, lists,
//! Status errors, DeleteOptions, watch frames), custom resources answered in JSON or
//! refused with kube-apiserver's 406 and 415, and YAML; and JSON reads answered with the
//! objects' stored text.

use k8s_pb::api::core::v1::{ConfigMap, Namespace, NamespaceList, Secret};
use k8s_pb::apimachinery::pkg::apis::meta::v1::{
    DeleteOptions, ObjectMeta, Preconditions, Status, WatchEvent,
};
use prost::Message;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use topograph_kube::protobuf::{unwrap, wrap};
use topograph_kube::{Config, RunningServer, Server};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What kubectl 1.32+ sends with typed requests.
const KUBECTL_ACCEPT: &str = "application/vnd.kubernetes.protobuf,application/json";

struct Reply {
    code: u16,
    content_type: String,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{} {}: not JSON ({e}): {}",
                self.code,
                self.content_type,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The message inside a protobuf body, checking its envelope's kind.
    fn message<M: Message + Default>(&self, kind: &str) -> M {
        assert!(
            self.content_type.starts_with(PROTOBUF),
            "{} answered {}: {}",
            self.code,
            self.content_type,
            String::from_utf8_lossy(&self.body)
        );
        let env = unwrap(&self.body).expect("an envelope");
        assert_eq!(env.kind, kind);
        M::decode(env.raw.as_slice()).expect("the message")
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&body[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = end + 2;
        out.extend_from_slice(&body[start..start + size]);
        body = &body[start + size + 2..];
    }
}

async fn request(
    server: &RunningServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body).await.expect("write");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.expect("read");
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&response[..split]).to_string();
    let body = &response[split + 4..];
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let header = |name: &str| {
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let body = if header("transfer-encoding").eq_ignore_ascii_case("chunked") {
        dechunk(body)
    } else {
        body.to_vec()
    };
    Reply {
        code,
        content_type: header("content-type"),
        body,
    }
}

async fn start() -> RunningServer {
    Server::start(Config::default()).await.expect("server")
}

fn meta(name: &str, namespace: Option<&str>) -> Option<ObjectMeta> {
    Some(ObjectMeta {
        name: Some(name.into()),
        namespace: namespace.map(str::to_string),
        ..Default::default()
    })
}

#[tokio::test]
async fn built_in_kinds_are_written_and_read_in_protobuf() {
    let server = start().await;
    let ns = Namespace {
        metadata: meta("fleet-a", None),
        ..Default::default()
    };
    let body = wrap("v1", "Namespace", ns.encode_to_vec());
    let created = request(
        &server,
        "POST",
        "/api/v1/namespaces",
        &[("Content-Type", PROTOBUF), ("Accept", KUBECTL_ACCEPT)],
        &body,
    )
    .await;
    assert_eq!(created.code, 201);
    let created: Namespace = created.message("Namespace");
    let created_meta = created.metadata.expect("metadata");
    assert_eq!(created_meta.name.as_deref(), Some("fleet-a"));
    assert!(created_meta.uid.is_some_and(|u| !u.is_empty()));
    assert!(created_meta.creation_timestamp.is_some());
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );

    // Read back in JSON, as a JSON client sees it.
    let read = request(&server, "GET", "/api/v1/namespaces/fleet-a", &[], b"").await;
    assert_eq!(read.code, 200);
    assert_eq!(read.json()["metadata"]["name"], "fleet-a");

    // Secret bytes on the wire are base64 in JSON.
    let secret = Secret {
        metadata: meta("s", Some("fleet-a")),
        data: BTreeMap::from([("key".to_string(), vec![0u8, 255, 16])]),
        r#type: Some("Opaque".into()),
        ..Default::default()
    };
    let body = wrap("v1", "Secret", secret.encode_to_vec());
    let created = request(
        &server,
        "POST",
        "/api/v1/namespaces/fleet-a/secrets",
        &[("Content-Type", PROTOBUF), ("Accept", KUBECTL_ACCEPT)],
        &body,
    )
    .await;
    assert_eq!(created.code, 201);
    let read = request(
        &server,
        "GET",
        "/api/v1/namespaces/fleet-a/secrets/s",
        &[("Accept", "application/json")],
        b"",
    )
    .await
    .json();
    assert_eq!(read["data"], json!({"key": "AP8Q"}));
    assert_eq!(read["type"], "Opaque");
    let read: Secret = request(
        &server,
        "GET",
        "/api/v1/namespaces/fleet-a/secrets/s",
        &[("Accept", KUBECTL_ACCEPT)],
        b"",
    )
    .await
    .message("Secret");
    assert_eq!(read.data["key"], vec![0u8, 255, 16]);

    // A Secret written without a type is stored as Opaque, as kube-apiserver defaults it.
    let untyped = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "untyped", "namespace": "fleet-a"}, "data": {"k": "dg=="}});
    let created = request(
        &server,
        "POST",
        "/api/v1/namespaces/fleet-a/secrets",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ],
        untyped.to_string().as_bytes(),
    )
    .await;
    assert_eq!(created.code, 201);
    assert_eq!(created.json()["type"], "Opaque");

    // A JSON-written ConfigMap read in protobuf; an update sent in protobuf.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "fleet-a"}, "data": {"a": "b"},
        "binaryData": {"bin": "AAE="}});
    let created = request(
        &server,
        "POST",
        "/api/v1/namespaces/fleet-a/configmaps",
        &[("Content-Type", "application/json")],
        cm.to_string().as_bytes(),
    )
    .await;
    assert_eq!(created.code, 201, "{}", created.json());
    let mut read: ConfigMap = request(
        &server,
        "GET",
        "/api/v1/namespaces/fleet-a/configmaps/c",
        &[("Accept", PROTOBUF)],
        b"",
    )
    .await
    .message("ConfigMap");
    assert_eq!(read.binary_data["bin"], vec![0u8, 1]);
    read.data.insert("more".into(), "data".into());
    let updated = request(
        &server,
        "PUT",
        "/api/v1/namespaces/fleet-a/configmaps/c",
        &[("Content-Type", PROTOBUF), ("Accept", "application/json")],
        &wrap("v1", "ConfigMap", read.encode_to_vec()),
    )
    .await;
    assert_eq!(updated.code, 200);
    let updated = updated.json();
    assert_eq!(updated["data"], json!({"a": "b", "more": "data"}));
    assert_eq!(updated["binaryData"], json!({"bin": "AAE="}));

    let list: NamespaceList = request(
        &server,
        "GET",
        "/api/v1/namespaces",
        &[("Accept", KUBECTL_ACCEPT)],
        b"",
    )
    .await
    .message("NamespaceList");
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|n| n.metadata.as_ref()?.name.clone())
        .collect();
    assert!(names.contains(&"fleet-a".to_string()), "{names:?}");
    assert!(list.metadata.and_then(|m| m.resource_version).is_some());
}

#[tokio::test]
async fn errors_and_deletes_in_protobuf() {
    let server = start().await;
    let missing = request(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps/nope",
        &[("Accept", KUBECTL_ACCEPT)],
        b"",
    )
    .await;
    assert_eq!(missing.code, 404);
    let status: Status = missing.message("Status");
    assert_eq!(status.reason.as_deref(), Some("NotFound"));
    assert_eq!(
        status.message.as_deref(),
        Some("configmaps \"nope\" not found")
    );

    let cm = ConfigMap {
        metadata: meta("c", Some("default")),
        ..Default::default()
    };
    let created = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[("Content-Type", PROTOBUF), ("Accept", "application/json")],
        &wrap("v1", "ConfigMap", cm.encode_to_vec()),
    )
    .await;
    assert_eq!(created.code, 201);
    let uid = created.json()["metadata"]["uid"].clone();
    // A protobuf DeleteOptions whose precondition fails: the 409 comes back in protobuf.
    let stale = DeleteOptions {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let refused = request(
        &server,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/c",
        &[("Content-Type", PROTOBUF), ("Accept", KUBECTL_ACCEPT)],
        &wrap("v1", "DeleteOptions", stale.encode_to_vec()),
    )
    .await;
    assert_eq!(refused.code, 409);
    let status: Status = refused.message("Status");
    assert_eq!(status.reason.as_deref(), Some("Conflict"));
    let options = DeleteOptions {
        preconditions: Some(Preconditions {
            uid: uid.as_str().map(str::to_string),
            resource_version: None,
        }),
        ..Default::default()
    };
    let deleted = request(
        &server,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/c",
        &[("Content-Type", PROTOBUF), ("Accept", KUBECTL_ACCEPT)],
        &wrap("v1", "DeleteOptions", options.encode_to_vec()),
    )
    .await;
    assert_eq!(deleted.code, 200);

    // A body that is not protobuf at all, sent as protobuf: a 400, in protobuf.
    let garbage = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[("Content-Type", PROTOBUF), ("Accept", KUBECTL_ACCEPT)],
        b"{\"metadata\":{}}",
    )
    .await;
    assert_eq!(garbage.code, 400);
    let status: Status = garbage.message("Status");
    assert!(
        status
            .message
            .is_some_and(|m| m.contains("does not appear to be a protobuf message"))
    );

    // Nothing acceptable: 406 in JSON, naming what is served.
    let refused = request(
        &server,
        "GET",
        "/api/v1/namespaces",
        &[("Accept", "text/html")],
        b"",
    )
    .await;
    assert_eq!(refused.code, 406);
    assert_eq!(
        refused.json()["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let yaml = request(
        &server,
        "GET",
        "/api/v1/namespaces/default",
        &[("Accept", "application/yaml")],
        b"",
    )
    .await;
    assert_eq!(yaml.content_type, "application/yaml");
    let text = String::from_utf8_lossy(&yaml.body);
    assert!(text.contains("name: default"), "{text}");
}

const WIDGET_CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {"group": "example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "kind": "Widget"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}"#;

#[tokio::test]
async fn custom_resources_are_never_protobuf() {
    let server = start().await;
    // The CRD itself is a built-in kind: protobuf.
    let crd = request(
        &server,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &[
            ("Content-Type", "application/json"),
            ("Accept", KUBECTL_ACCEPT),
        ],
        WIDGET_CRD.as_bytes(),
    )
    .await;
    assert_eq!(crd.code, 201);
    assert_eq!(crd.content_type, PROTOBUF);
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": 1}});
    let created = request(
        &server,
        "POST",
        widgets,
        &[
            ("Content-Type", "application/json"),
            ("Accept", KUBECTL_ACCEPT),
        ],
        widget.to_string().as_bytes(),
    )
    .await;
    assert_eq!(created.code, 201);
    // Protobuf preferred, JSON answered.
    assert_eq!(created.content_type, "application/json");
    assert_eq!(created.json()["spec"]["size"], 1);

    let only_protobuf = request(
        &server,
        "GET",
        &format!("{widgets}/w"),
        &[("Accept", PROTOBUF)],
        b"",
    )
    .await;
    assert_eq!(only_protobuf.code, 406);
    assert_eq!(
        only_protobuf.json()["message"],
        "only the following media types are accepted: application/json, application/yaml"
    );
    let body = wrap("example.com/v1", "Widget", vec![]);
    let sent = request(
        &server,
        "POST",
        widgets,
        &[("Content-Type", PROTOBUF), ("Accept", KUBECTL_ACCEPT)],
        &body,
    )
    .await;
    assert_eq!(sent.code, 415);
    assert_eq!(
        sent.json()["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
}

#[tokio::test]
async fn watches_stream_length_prefixed_watch_events() {
    let server = start().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "watched", "namespace": "default"}, "data": {"k": "v"}});
    let created = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[("Content-Type", "application/json")],
        cm.to_string().as_bytes(),
    )
    .await;
    assert_eq!(created.code, 201);
    let watch = request(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
        &[(
            "Accept",
            "application/vnd.kubernetes.protobuf;stream=watch, application/json",
        )],
        b"",
    )
    .await;
    assert_eq!(watch.code, 200);
    assert_eq!(
        watch.content_type,
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let mut frames = Vec::new();
    let mut rest = watch.body.as_slice();
    while rest.len() >= 4 {
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        frames.push(WatchEvent::decode(&rest[4..4 + len]).expect("a WatchEvent"));
        rest = &rest[4 + len..];
    }
    assert!(rest.is_empty(), "trailing bytes");
    let first = frames.first().expect("an event");
    assert_eq!(first.r#type.as_deref(), Some("ADDED"));
    let raw = first
        .object
        .as_ref()
        .and_then(|o| o.raw.clone())
        .unwrap_or_default();
    let env = unwrap(&raw).expect("the object's envelope");
    assert_eq!(
        (env.api_version.as_str(), env.kind.as_str()),
        ("v1", "ConfigMap")
    );
    let object = ConfigMap::decode(env.raw.as_slice()).expect("a ConfigMap");
    assert_eq!(object.data["k"], "v");
}

/// Reads in the storage version are answered with the stored JSON text, written by
/// hand around it for lists and watch events: each answer must be exactly what
/// serializing its parsed value gives, and hold the objects a parse-and-write read does.
#[tokio::test]
async fn json_reads_served_as_stored_are_what_writing_the_objects_gives() {
    let server = start().await;
    for (name, tier) in [("a", "web"), ("b", "db"), ("c", "web")] {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "labels": {"tier": tier}},
            "data": {"k": "v \"quoted\" \u{e9}"}});
        let created = request(
            &server,
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &[("Content-Type", "application/json")],
            cm.to_string().as_bytes(),
        )
        .await;
        assert_eq!(created.code, 201);
    }
    let canonical = |body: &[u8]| {
        let value: Value = serde_json::from_slice(body).expect("JSON");
        assert_eq!(
            serde_json::to_vec(&value).expect("written"),
            body,
            "{}",
            String::from_utf8_lossy(body)
        );
        value
    };
    let json = [("Accept", "application/json")];
    let get = |name: &'static str| {
        let server = &server;
        async move {
            let path = format!("/api/v1/namespaces/default/configmaps/{name}");
            let reply = request(server, "GET", &path, &json, b"").await;
            assert_eq!(reply.code, 200);
            assert_eq!(reply.content_type, "application/json");
            canonical(&reply.body)
        }
    };
    let a = get("a").await;
    assert_eq!(a["data"]["k"], "v \"quoted\" \u{e9}");
    let c = get("c").await;

    let list = request(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps?labelSelector=tier%3Dweb",
        &json,
        b"",
    )
    .await;
    let list = canonical(&list.body);
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    assert!(list["metadata"]["resourceVersion"].is_string());
    assert_eq!(list["items"], json!([a, c]));
    let empty = request(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps?labelSelector=tier%3Dnone",
        &json,
        b"",
    )
    .await;
    assert_eq!(canonical(&empty.body)["items"], json!([]));

    let watch = request(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&labelSelector=tier%3Dweb",
        &json,
        b"",
    )
    .await;
    // Events are written as kube-apiserver writes them, `type` first, the object as a
    // GET gives it.
    let events: Vec<Value> = watch
        .body
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let object = line
                .strip_prefix(br#"{"type":"ADDED","object":"#.as_slice())
                .and_then(|rest| rest.strip_suffix(b"}"))
                .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(line)));
            canonical(object)
        })
        .collect();
    assert_eq!(events, [a, c]);
}
