//! Protobuf round trips per kind: request bodies kubectl 1.33 sent (decoded as
//! kube-apiserver reads them), one full object of each kind through the wire and back,
//! Go's normalizations, envelopes, lists, Status and watch frames, and property tests
//! that JSON as Go writes it comes back from protobuf unchanged.

use super::*;
use k8s_pb::api::core::v1::NamespaceList;
use k8s_pb::apimachinery::pkg::apis::meta::v1::Status;
use proptest::prelude::*;
use serde_json::json;

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
        .collect()
}

/// `kubectl create namespace fleet-a` (kubectl 1.33).
const KUBECTL_NAMESPACE: &str = "6b 38 73 00 0a 0f 0a 02 76 31 12 09 4e 61 6d 65 73 70 61 63 65 12 1f 0a 17 0a 07 66 6c 65 65 74 2d 61 12 00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 00 1a 02 0a 00 1a 00 22 00";
/// `kubectl create secret generic s2 --from-literal=user=admin --from-literal=empty=
/// --type=kubernetes.io/basic-auth -n fleet-a`.
const KUBECTL_SECRET: &str = "6b 38 73 00 0a 0c 0a 02 76 31 12 06 53 65 63 72 65 74 12 4f 0a 19 0a 02 73 32 12 00 1a 07 66 6c 65 65 74 2d 61 22 00 2a 00 32 00 38 00 42 00 12 09 0a 05 65 6d 70 74 79 12 00 12 0d 0a 04 75 73 65 72 12 05 61 64 6d 69 6e 1a 18 6b 75 62 65 72 6e 65 74 65 73 2e 69 6f 2f 62 61 73 69 63 2d 61 75 74 68 1a 00 22 00";
/// `kubectl create configmap c3 --from-literal=k=v -n fleet-a`.
const KUBECTL_CONFIGMAP: &str = "6b 38 73 00 0a 0f 0a 02 76 31 12 09 43 6f 6e 66 69 67 4d 61 70 12 23 0a 19 0a 02 63 33 12 00 1a 07 66 6c 65 65 74 2d 61 22 00 2a 00 32 00 38 00 42 00 12 06 0a 01 6b 12 01 76 1a 00 22 00";

#[test]
fn kubectl_bodies_read_as_kube_apiserver_reads_them() {
    let ns = read_object(Kind::Namespace, "v1", "Namespace", &hex(KUBECTL_NAMESPACE)).unwrap();
    assert_eq!(
        ns,
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "fleet-a", "creationTimestamp": null},
            "spec": {}, "status": {}})
    );
    let secret = read_object(Kind::Secret, "v1", "Secret", &hex(KUBECTL_SECRET)).unwrap();
    assert_eq!(
        secret,
        json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s2", "namespace": "fleet-a", "creationTimestamp": null},
            "data": {"empty": "", "user": "YWRtaW4="},
            "type": "kubernetes.io/basic-auth"})
    );
    let cm = read_object(Kind::ConfigMap, "v1", "ConfigMap", &hex(KUBECTL_CONFIGMAP)).unwrap();
    assert_eq!(
        cm,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c3", "namespace": "fleet-a", "creationTimestamp": null},
            "data": {"k": "v"}})
    );
    // Written back, the same object is the same bytes but for the fields Go writes
    // empty and this server leaves out; read again, it is the same JSON.
    let again = write_object(Kind::ConfigMap, &cm).unwrap();
    assert_eq!(
        read_object(Kind::ConfigMap, "v1", "ConfigMap", &again).unwrap(),
        cm
    );
}

/// The first place two values differ, for failures that print less than both.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, &format!("{path}.{k}")),
                (p, q) => Some(format!("{path}.{k}: {p:?} != {q:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

fn round_trip(kind: Kind, object: &Value) -> Value {
    let bytes = write_object(kind, object).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    let (api_version, kind_name) = type_of(object);
    read_object(kind, api_version, kind_name, &bytes).unwrap_or_else(|e| panic!("{kind:?}: {e}"))
}

fn full_metadata(namespace: Option<&str>) -> Value {
    let mut meta = json!({
        "name": "full", "generateName": "ful", "uid": "0b5e4c1c-1d6f-4b39-9a0e-6a8b3b1c9d10",
        "resourceVersion": "42", "generation": 3, "selfLink": "/x",
        "creationTimestamp": "2024-05-06T07:08:09Z",
        "deletionTimestamp": "2024-05-06T07:08:10Z", "deletionGracePeriodSeconds": 30,
        "labels": {"app": "web", "empty": ""}, "annotations": {"note": "a\nb"},
        "ownerReferences": [
            {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": "c1",
             "uid": "u-1", "controller": true, "blockOwnerDeletion": false},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "c2", "uid": "u-2"}],
        "finalizers": ["kubernetes", "example.com/keep"],
        "managedFields": [
            {"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
             "time": "2024-05-06T07:08:09Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}},
            {"manager": "topograph", "operation": "Update", "apiVersion": "v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}, "subresource": "status"}],
    });
    if let Some(ns) = namespace {
        meta["namespace"] = json!(ns);
    }
    meta
}

/// One object of every kind with every field set survives the wire unchanged.
#[test]
fn every_kind_round_trips_with_every_field() {
    let cases = [
        (
            Kind::Namespace,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": full_metadata(None),
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Terminating", "conditions": [
                    {"type": "NamespaceDeletionContentFailure", "status": "False",
                     "lastTransitionTime": "2024-05-06T07:08:09Z", "reason": "ContentDeleted",
                     "message": "All content successfully deleted"},
                    {"type": "X", "status": "Unknown", "lastTransitionTime": null}]}}),
        ),
        (
            Kind::ConfigMap,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": full_metadata(Some("ns")),
                "immutable": false, "data": {"a": "b", "empty": "", "unicode": "é✓"},
                "binaryData": {"bin": "AAEC/w==", "none": ""}}),
        ),
        (
            Kind::Secret,
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": full_metadata(Some("ns")),
                "immutable": true, "data": {"key": "AP8Q", "empty": ""},
                "stringData": {"plain": "text"}, "type": "Opaque"}),
        ),
        (
            Kind::Event,
            json!({"apiVersion": "v1", "kind": "Event", "metadata": full_metadata(Some("ns")),
                "involvedObject": {"kind": "Cluster", "namespace": "ns", "name": "c1",
                    "uid": "u-1", "apiVersion": "cluster.x-k8s.io/v1beta2",
                    "resourceVersion": "7", "fieldPath": "spec.topology"},
                "reason": "TopologyCreate", "message": "Created", "source":
                    {"component": "topograph", "host": "node-1"},
                "firstTimestamp": "2024-05-06T07:08:09Z", "lastTimestamp": "2024-05-06T07:09:09Z",
                "count": 4, "type": "Normal", "eventTime": "2024-05-06T07:08:09.123456Z",
                "series": {"count": 2, "lastObservedTime": "2024-05-06T07:09:09.000001Z"},
                "action": "Create", "related": {"kind": "Secret", "name": "s"},
                "reportingComponent": "topograph-applier", "reportingInstance": "applier-0"}),
        ),
        (
            Kind::EventsEvent,
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": full_metadata(Some("ns")),
                "eventTime": "2024-05-06T07:08:09.000000Z",
                "series": {"count": 0, "lastObservedTime": null},
                "reportingController": "topograph.io/applier", "reportingInstance": "a-0",
                "action": "Reconcile", "reason": "TopologyUpdate",
                "regarding": {"kind": "Cluster", "name": "c1"},
                "related": {"kind": "MachineDeployment", "name": "md"},
                "note": "Updated", "type": "Warning",
                "deprecatedSource": {"component": "old"},
                "deprecatedFirstTimestamp": "2024-05-06T07:08:09Z",
                "deprecatedLastTimestamp": null, "deprecatedCount": 9}),
        ),
        (Kind::CustomResourceDefinition, full_crd()),
    ];
    for (kind, object) in cases {
        assert_eq!(round_trip(kind, &object), object, "{kind:?}");
    }
}

fn spec_properties() -> Value {
    json!({
                                    "port": {"type": "integer", "format": "int32", "default": 6443,
                                        "minimum": 1, "maximum": 65535, "exclusiveMaximum": true},
                                    "ratio": {"type": "number", "multipleOf": 0.25,
                                        "minimum": -1.5},
                                    "mode": {"type": "string", "enum": ["a", "b", null],
                                        "pattern": "^[ab]$", "minLength": 1, "maxLength": 1,
                                        "example": "a"},
                                    "tags": {"type": "array", "items": {"type": "string"},
                                        "maxItems": 8, "minItems": 0, "uniqueItems": true,
                                        "x-kubernetes-list-type": "set"},
                                    "pair": {"type": "array",
                                        "items": [{"type": "string"}, {"type": "integer"}],
                                        "additionalItems": false},
                                    "ports": {"type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {"type": "object", "properties":
                                            {"name": {"type": "string"}}}},
                                    "labels": {"type": "object",
                                        "additionalProperties": {"type": "string"},
                                        "x-kubernetes-map-type": "atomic",
                                        "maxProperties": 10, "minProperties": 1},
                                    "closed": {"type": "object", "additionalProperties": false},
                                    "open": {"type": "object", "additionalProperties": true,
                                        "x-kubernetes-preserve-unknown-fields": true},
                                    "either": {"x-kubernetes-int-or-string": true,
                                        "anyOf": [{"type": "integer"}, {"type": "string"}]},
                                    "embedded": {"type": "object",
                                        "x-kubernetes-embedded-resource": true,
                                        "x-kubernetes-preserve-unknown-fields": true},
                                    "nullable": {"type": "string", "nullable": true,
                                        "not": {"enum": [""]}, "title": "N"},
                                    "mixed": {"allOf": [{"minLength": 1}], "oneOf": [{"type": "string"}],
                                        "patternProperties": {"^x-": {"type": "string"}},
                                        "dependencies": {"a": ["b", "c"], "d": {"required": ["e"]}},
                                        "definitions": {"d": {"type": "boolean"}},
                                        "externalDocs": {"description": "docs", "url": "https://example.com"},
                                        "id": "mixed", "$schema": "http://json-schema.org/draft-04/schema#",
                                        "$ref": "#/definitions/d"}
    })
}

fn full_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": full_metadata(None),
        "spec": {
            "group": "infrastructure.cluster.x-k8s.io",
            "names": {"plural": "dockerclusters", "singular": "dockercluster",
                "shortNames": ["dc"], "kind": "DockerCluster", "listKind": "DockerClusterList",
                "categories": ["cluster-api"]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1beta1", "served": true, "storage": false, "deprecated": true,
                "deprecationWarning": "use v1beta2",
                "schema": {"openAPIV3Schema": {
                    "type": "object", "description": "A cluster.",
                    "required": ["spec"],
                    "properties": {
                        "spec": {"type": "object",
                            "properties": spec_properties(),
                            "x-kubernetes-validations": [
                                {"rule": "self.port > 0", "message": "positive",
                                 "messageExpression": "'port ' + string(self.port)",
                                 "reason": "FieldValueInvalid", "fieldPath": ".port",
                                 "optionalOldSelf": true},
                                {"rule": "true"}]},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [{"name": "Ready", "type": "boolean",
                    "description": "Ready?", "priority": 1,
                    "jsonPath": ".status.ready"}],
                "selectableFields": [{"jsonPath": ".spec.mode"}]
            }, {"name": "v1beta2", "served": true, "storage": true}],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": "https://hook.example.com/convert",
                    "service": {"namespace": "capi", "name": "webhook", "path": "/convert",
                        "port": 9443},
                    "caBundle": "LS0tLS1CRUdJTg=="},
                "conversionReviewVersions": ["v1", "v1beta1"]}},
            "preserveUnknownFields": true
        },
        "status": {
            "conditions": [{"type": "Established", "status": "True",
                "lastTransitionTime": "2024-05-06T07:08:09Z", "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted", "observedGeneration": 3}],
            "acceptedNames": {"plural": "dockerclusters", "kind": "DockerCluster"},
            "storedVersions": ["v1beta2"],
            "observedGeneration": 3
        }
    })
}

/// JSON Go would not write comes back as Go writes it: empty omitempty fields dropped,
/// structs always there, times to the second, floats that are whole as integers.
#[test]
fn go_normalizes_what_it_reads() {
    let written = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "n", "generateName": "", "generation": 0, "labels": {},
            "creationTimestamp": "2024-05-06T09:08:09.75+02:00"}});
    assert_eq!(
        round_trip(Kind::Namespace, &written),
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "n", "creationTimestamp": "2024-05-06T07:08:09Z"},
            "spec": {}, "status": {}})
    );
    let event = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}});
    assert_eq!(
        round_trip(Kind::Event, &event),
        json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "creationTimestamp": null},
            "involvedObject": {}, "source": {}, "firstTimestamp": null, "lastTimestamp": null,
            "eventTime": null, "reportingComponent": "", "reportingInstance": ""})
    );
    let mut crd = json!({"apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition", "metadata": {"name": "a.b"},
        "spec": {"versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "number", "maximum": 10.0}}}]}});
    let back = round_trip(Kind::CustomResourceDefinition, &crd);
    crd["metadata"]["creationTimestamp"] = Value::Null;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["maximum"] = json!(10);
    crd["spec"]["group"] = json!("");
    crd["spec"]["scope"] = json!("");
    crd["spec"]["names"] = json!({"plural": "", "kind": ""});
    crd["status"] = json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": null});
    assert_eq!(back, crd);
}

#[test]
fn objects_that_do_not_fit_their_kind_name_the_field() {
    let bad = [
        (
            Kind::Secret,
            json!({"data": {"k": "not base64!"}}),
            "data[k]",
        ),
        (Kind::ConfigMap, json!({"data": {"k": 1}}), "data[k]"),
        (
            Kind::Namespace,
            json!({"metadata": {"creationTimestamp": "yesterday"}}),
            "metadata.creationTimestamp",
        ),
        (Kind::Event, json!({"count": 1.5}), "count"),
        (Kind::Event, json!({"count": 4_294_967_296i64}), "count"),
        (
            Kind::CustomResourceDefinition,
            json!({"spec": {"versions": [{"schema": {"openAPIV3Schema":
                {"additionalProperties": "yes"}}}]}}),
            "spec.versions[0].schema.openAPIV3Schema.additionalProperties",
        ),
        (Kind::Namespace, json!({"metadata": []}), "metadata"),
    ];
    for (kind, object, path) in bad {
        let e = kind.encode(&object).unwrap_err();
        assert_eq!(e.path, path, "{kind:?} {object}: {e}");
    }
}

#[test]
fn envelopes_are_checked() {
    let e = read_object(
        Kind::ConfigMap,
        "v1",
        "ConfigMap",
        b"{\"kind\":\"ConfigMap\"}",
    )
    .unwrap_err();
    assert_eq!(e.code, 400);
    assert!(e.message.contains("expected prefix [107 56 115 0]"), "{e}");
    let e = read_object(Kind::ConfigMap, "v1", "ConfigMap", b"k8s\0\xff\xff\xff").unwrap_err();
    assert_eq!(e.code, 400);
    let secret_body = hex(KUBECTL_SECRET);
    let e = read_object(Kind::ConfigMap, "v1", "ConfigMap", &secret_body).unwrap_err();
    assert_eq!(
        e.message,
        "the kind in the data (Secret) does not match the expected kind (ConfigMap)"
    );
    let mut gz = Unknown::decode(&hex(KUBECTL_CONFIGMAP)[4..]).unwrap();
    gz.content_encoding = Some("gzip".into());
    let mut body = MAGIC.to_vec();
    body.extend(gz.encode_to_vec());
    let e = read_object(Kind::ConfigMap, "v1", "ConfigMap", &body).unwrap_err();
    assert!(e.message.contains("gzip"), "{e}");
    // A message that is not the kind's: a clear 400, never a panic.
    let garbage = wrap("v1", "ConfigMap", vec![0x0a, 0x05, 0x01]);
    assert_eq!(
        read_object(Kind::ConfigMap, "v1", "ConfigMap", &garbage)
            .unwrap_err()
            .code,
        400
    );
}

#[test]
fn lists_status_delete_options_and_watch_frames() {
    let list = json!({"apiVersion": "v1", "kind": "NamespaceList",
        "metadata": {"resourceVersion": "9", "continue": "c"},
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"},
             "status": {"phase": "Active"}}]});
    let bytes = write_list(Kind::Namespace, &list).unwrap();
    let env = unwrap(&bytes).unwrap();
    assert_eq!(
        (env.api_version.as_str(), env.kind.as_str()),
        ("v1", "NamespaceList")
    );
    let decoded = NamespaceList::decode(env.raw.as_slice()).unwrap();
    let meta = decoded.metadata.unwrap();
    assert_eq!(meta.resource_version.as_deref(), Some("9"));
    assert_eq!(meta.r#continue.as_deref(), Some("c"));
    let names: Vec<_> = decoded
        .items
        .iter()
        .filter_map(|n| n.metadata.as_ref()?.name.clone())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let bad = json!({"apiVersion": "v1", "kind": "NamespaceList",
        "items": [{"metadata": {"name": "a"}}, {"metadata": {"labels": {"x": 1}}}]});
    assert_eq!(
        write_list(Kind::Namespace, &bad).unwrap_err().path,
        "items[1].metadata.labels[x]"
    );

    let status = crate::status::ApiError::not_found("", "configmaps", "x").to_status();
    let env = unwrap(&write_status(&status).unwrap()).unwrap();
    assert_eq!(
        (env.api_version.as_str(), env.kind.as_str()),
        ("v1", "Status")
    );
    let s = Status::decode(env.raw.as_slice()).unwrap();
    assert_eq!(s.code, Some(404));
    assert_eq!(s.reason.as_deref(), Some("NotFound"));
    assert_eq!(s.message.as_deref(), Some("configmaps \"x\" not found"));
    let details = s.details.unwrap();
    assert_eq!(
        (details.name.as_deref(), details.kind.as_deref()),
        (Some("x"), Some("configmaps"))
    );

    let options = DeleteOptions {
        grace_period_seconds: Some(0),
        preconditions: Some(k8s_pb::apimachinery::pkg::apis::meta::v1::Preconditions {
            uid: Some("u".into()),
            resource_version: None,
        }),
        propagation_policy: Some("Foreground".into()),
        dry_run: vec!["All".into()],
        ..Default::default()
    };
    let body = wrap("v1", "DeleteOptions", options.encode_to_vec());
    assert_eq!(
        read_delete_options(&body).unwrap(),
        json!({"gracePeriodSeconds": 0, "preconditions": {"uid": "u"},
            "propagationPolicy": "Foreground", "dryRun": ["All"]})
    );

    let object = write_object(
        Kind::ConfigMap,
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}}),
    )
    .unwrap();
    let frame = watch_frame("ADDED", object.clone());
    let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
    assert_eq!(len, frame.len() - 4);
    let event = WatchEvent::decode(&frame[4..]).unwrap();
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    assert_eq!(event.object.and_then(|o| o.raw), Some(object));
}

// Property tests: JSON in the form Go writes it (every field of every kind, chosen at
// random) goes to protobuf and back unchanged.

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ._/:é✓-]{1,12}"
}

fn any_text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ._/:é✓-]{0,8}"
}

fn seconds() -> impl Strategy<Value = i64> {
    -62_135_596_800i64..=253_402_300_799
}

fn time_text() -> impl Strategy<Value = Value> {
    seconds().prop_map(|s| Value::String(time::format_seconds(s).unwrap_or_default()))
}

fn micro_text() -> impl Strategy<Value = Value> {
    (seconds(), 0u32..1_000_000)
        .prop_map(|(s, us)| Value::String(time::format_micro(s, us * 1_000).unwrap_or_default()))
}

/// A time field that is not a pointer: null when unset.
fn time_or_null() -> impl Strategy<Value = Value> {
    prop_oneof![Just(Value::Null), time_text()]
}

fn micro_or_null() -> impl Strategy<Value = Value> {
    prop_oneof![Just(Value::Null), micro_text()]
}

fn string_map() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map("[a-z0-9.-]{1,8}", any_text(), 1..4).prop_map(|m| json!(m))
}

fn bytes_map() -> impl Strategy<Value = Value> {
    use base64::Engine as _;
    proptest::collection::btree_map(
        "[a-z0-9.-]{1,8}",
        proptest::collection::vec(any::<u8>(), 0..12),
        1..4,
    )
    .prop_map(|m| {
        let encoded: serde_json::Map<String, Value> = m
            .into_iter()
            .map(|(k, b)| {
                let text = base64::engine::general_purpose::STANDARD.encode(b);
                (k, Value::String(text))
            })
            .collect();
        Value::Object(encoded)
    })
}

/// Sets `key` when the value is there.
fn put(object: &mut Value, key: &str, value: Option<Value>) {
    if let (Some(v), Some(map)) = (value, object.as_object_mut()) {
        map.insert(key.to_string(), v);
    }
}

fn opt<S: Strategy<Value = Value>>(s: S) -> impl Strategy<Value = Option<Value>> {
    proptest::option::of(s)
}

fn opt_text() -> impl Strategy<Value = Option<Value>> {
    opt(text().prop_map(Value::String))
}

fn fields_v1() -> impl Strategy<Value = Value> {
    let leaf = Just(json!({}));
    leaf.prop_recursive(3, 12, 3, |inner| {
        proptest::collection::btree_map("(f|k|v):[a-z]{1,5}|\\.", inner, 1..3)
            .prop_map(|m| json!(m))
    })
}

fn owner_reference() -> impl Strategy<Value = Value> {
    (
        any_text(),
        any_text(),
        any_text(),
        any_text(),
        proptest::option::of(any::<bool>()),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(|(api_version, kind, name, uid, controller, block)| {
            let mut o = json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid});
            put(&mut o, "controller", controller.map(Value::Bool));
            put(&mut o, "blockOwnerDeletion", block.map(Value::Bool));
            o
        })
}

fn managed_fields_entry() -> impl Strategy<Value = Value> {
    (
        opt_text(),
        opt(prop_oneof![Just(json!("Apply")), Just(json!("Update"))]),
        opt_text(),
        opt(time_text()),
        opt(Just(json!("FieldsV1"))),
        opt(fields_v1()),
        opt_text(),
    )
        .prop_map(|(manager, operation, api_version, time, ty, fields, sub)| {
            let mut e = json!({});
            put(&mut e, "manager", manager);
            put(&mut e, "operation", operation);
            put(&mut e, "apiVersion", api_version);
            put(&mut e, "time", time);
            put(&mut e, "fieldsType", ty);
            put(&mut e, "fieldsV1", fields);
            put(&mut e, "subresource", sub);
            e
        })
}

fn object_meta() -> impl Strategy<Value = Value> {
    let names = (
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt((1i64..1_000_000).prop_map(Value::from)),
    );
    let rest = (
        time_or_null(),
        opt(time_text()),
        opt((0i64..1_000).prop_map(Value::from)),
        opt(string_map()),
        opt(string_map()),
        proptest::collection::vec(owner_reference(), 0..3),
        proptest::collection::vec(text(), 0..3),
        proptest::collection::vec(managed_fields_entry(), 0..3),
    );
    (names, rest).prop_map(
        |(
            (name, generate_name, namespace, self_link, uid, rv, generation),
            (created, deleted, grace, labels, annotations, owners, finalizers, managed),
        )| {
            let mut m = json!({"creationTimestamp": created});
            put(&mut m, "name", name);
            put(&mut m, "generateName", generate_name);
            put(&mut m, "namespace", namespace);
            put(&mut m, "selfLink", self_link);
            put(&mut m, "uid", uid);
            put(&mut m, "resourceVersion", rv);
            put(&mut m, "generation", generation);
            put(&mut m, "deletionTimestamp", deleted);
            put(&mut m, "deletionGracePeriodSeconds", grace);
            put(&mut m, "labels", labels);
            put(&mut m, "annotations", annotations);
            put(&mut m, "ownerReferences", non_empty(owners));
            put(
                &mut m,
                "finalizers",
                non_empty(finalizers.into_iter().map(Value::String).collect()),
            );
            put(&mut m, "managedFields", non_empty(managed));
            m
        },
    )
}

fn non_empty(items: Vec<Value>) -> Option<Value> {
    (!items.is_empty()).then_some(Value::Array(items))
}

fn object(api_version: &str, kind: &str, meta: Value) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "metadata": meta})
}

fn namespace() -> impl Strategy<Value = Value> {
    let condition = (
        any_text(),
        any_text(),
        time_or_null(),
        opt_text(),
        opt_text(),
    )
        .prop_map(|(ty, status, time, reason, message)| {
            let mut c = json!({"type": ty, "status": status, "lastTransitionTime": time});
            put(&mut c, "reason", reason);
            put(&mut c, "message", message);
            c
        });
    (
        object_meta(),
        proptest::collection::vec(text(), 0..3),
        opt_text(),
        proptest::collection::vec(condition, 0..3),
    )
        .prop_map(|(meta, finalizers, phase, conditions)| {
            let mut o = object("v1", "Namespace", meta);
            let mut spec = json!({});
            put(
                &mut spec,
                "finalizers",
                non_empty(finalizers.into_iter().map(Value::String).collect()),
            );
            let mut status = json!({});
            put(&mut status, "phase", phase);
            put(&mut status, "conditions", non_empty(conditions));
            o["spec"] = spec;
            o["status"] = status;
            o
        })
}

fn config_map() -> impl Strategy<Value = Value> {
    (
        object_meta(),
        opt(any::<bool>().prop_map(Value::Bool)),
        opt(string_map()),
        opt(bytes_map()),
    )
        .prop_map(|(meta, immutable, data, binary)| {
            let mut o = object("v1", "ConfigMap", meta);
            put(&mut o, "immutable", immutable);
            put(&mut o, "data", data);
            put(&mut o, "binaryData", binary);
            o
        })
}

fn secret() -> impl Strategy<Value = Value> {
    (
        object_meta(),
        opt(any::<bool>().prop_map(Value::Bool)),
        opt(bytes_map()),
        opt(string_map()),
        opt_text(),
    )
        .prop_map(|(meta, immutable, data, string_data, ty)| {
            let mut o = object("v1", "Secret", meta);
            put(&mut o, "immutable", immutable);
            put(&mut o, "data", data);
            put(&mut o, "stringData", string_data);
            put(&mut o, "type", ty);
            o
        })
}

fn object_reference() -> impl Strategy<Value = Value> {
    (
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
    )
        .prop_map(|(kind, ns, name, uid, api_version, rv, field_path)| {
            let mut r = json!({});
            put(&mut r, "kind", kind);
            put(&mut r, "namespace", ns);
            put(&mut r, "name", name);
            put(&mut r, "uid", uid);
            put(&mut r, "apiVersion", api_version);
            put(&mut r, "resourceVersion", rv);
            put(&mut r, "fieldPath", field_path);
            r
        })
}

fn event_source() -> impl Strategy<Value = Value> {
    (opt_text(), opt_text()).prop_map(|(component, host)| {
        let mut s = json!({});
        put(&mut s, "component", component);
        put(&mut s, "host", host);
        s
    })
}

fn positive() -> impl Strategy<Value = Option<Value>> {
    opt((1i32..i32::MAX).prop_map(Value::from))
}

fn core_event() -> impl Strategy<Value = Value> {
    let series = (positive(), micro_or_null()).prop_map(|(count, last)| {
        let mut s = json!({"lastObservedTime": last});
        put(&mut s, "count", count);
        s
    });
    (
        (
            object_meta(),
            object_reference(),
            opt_text(),
            opt_text(),
            event_source(),
            time_or_null(),
            time_or_null(),
        ),
        (
            positive(),
            opt_text(),
            micro_or_null(),
            opt(series),
            opt_text(),
            opt(object_reference()),
            any_text(),
            any_text(),
        ),
    )
        .prop_map(
            |(
                (meta, involved, reason, message, source, first, last),
                (count, ty, event_time, series, action, related, component, instance),
            )| {
                let mut o = object("v1", "Event", meta);
                o["involvedObject"] = involved;
                put(&mut o, "reason", reason);
                put(&mut o, "message", message);
                o["source"] = source;
                o["firstTimestamp"] = first;
                o["lastTimestamp"] = last;
                put(&mut o, "count", count);
                put(&mut o, "type", ty);
                o["eventTime"] = event_time;
                put(&mut o, "series", series);
                put(&mut o, "action", action);
                put(&mut o, "related", related);
                o["reportingComponent"] = json!(component);
                o["reportingInstance"] = json!(instance);
                o
            },
        )
}

fn events_event() -> impl Strategy<Value = Value> {
    let series = (any::<i32>(), micro_or_null())
        .prop_map(|(count, last)| json!({"count": count, "lastObservedTime": last}));
    (
        (
            object_meta(),
            micro_or_null(),
            opt(series),
            opt_text(),
            opt_text(),
            opt_text(),
            opt_text(),
            object_reference(),
        ),
        (
            opt(object_reference()),
            opt_text(),
            opt_text(),
            event_source(),
            time_or_null(),
            time_or_null(),
            positive(),
        ),
    )
        .prop_map(
            |(
                (meta, event_time, series, controller, instance, action, reason, regarding),
                (related, note, ty, source, first, last, count),
            )| {
                let mut o = object("events.k8s.io/v1", "Event", meta);
                o["eventTime"] = event_time;
                put(&mut o, "series", series);
                put(&mut o, "reportingController", controller);
                put(&mut o, "reportingInstance", instance);
                put(&mut o, "action", action);
                put(&mut o, "reason", reason);
                o["regarding"] = regarding;
                put(&mut o, "related", related);
                put(&mut o, "note", note);
                put(&mut o, "type", ty);
                o["deprecatedSource"] = source;
                o["deprecatedFirstTimestamp"] = first;
                o["deprecatedLastTimestamp"] = last;
                put(&mut o, "deprecatedCount", count);
                o
            },
        )
}

/// Any JSON value that is not null (a schema's `default` or `example`).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Few digits: serde_json (without float_roundtrip) reads 17-digit decimals to
        // the nearest float only approximately, on the way in as much as back.
        (-100_000_000i64..100_000_000).prop_map(|n| json!(n as f64 / 100.0)),
        any_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,4}", inner, 0..3).prop_map(|m| json!(m)),
        ]
    })
}

/// A float as Go writes it: whole values as integers.
fn float() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-1_000i64..1_000).prop_map(Value::from),
        (-1_000i64..1_000).prop_map(|n| json!(n as f64 + 0.25)),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    (
        (
            opt_text(),
            opt_text(),
            opt_text(),
            opt_text(),
            opt(prop_oneof![
                Just(json!("object")),
                Just(json!("string")),
                Just(json!("integer"))
            ]),
            opt_text(),
            opt_text(),
            opt(json_value()),
            opt(float()),
            any::<bool>(),
            opt(float()),
            any::<bool>(),
        ),
        (
            opt((0i64..100).prop_map(Value::from)),
            opt((0i64..100).prop_map(Value::from)),
            opt_text(),
            opt((0i64..100).prop_map(Value::from)),
            opt((0i64..100).prop_map(Value::from)),
            any::<bool>(),
            opt(float()),
            proptest::collection::vec(prop_oneof![Just(Value::Null), json_value()], 0..3),
            opt((0i64..100).prop_map(Value::from)),
            opt((0i64..100).prop_map(Value::from)),
            proptest::collection::vec(text(), 0..3),
        ),
        (
            opt(json_value()),
            any::<bool>(),
            opt(any::<bool>().prop_map(Value::Bool)),
            any::<bool>(),
            any::<bool>(),
            proptest::collection::vec(text(), 0..3),
            opt(prop_oneof![Just(json!("atomic")), Just(json!("map"))]),
            opt(prop_oneof![Just(json!("granular")), Just(json!("atomic"))]),
            proptest::collection::vec(validation_rule(), 0..2),
            opt((opt_text(), opt_text()).prop_map(|(d, u)| {
                let mut e = json!({});
                put(&mut e, "description", d);
                put(&mut e, "url", u);
                e
            })),
        ),
    )
        .prop_map(|(a, b, c)| {
            let (
                id,
                schema_url,
                reference,
                description,
                ty,
                format,
                title,
                default,
                max,
                xmax,
                min,
                xmin,
            ) = a;
            let (
                max_len,
                min_len,
                pattern,
                max_items,
                min_items,
                unique,
                multiple,
                enums,
                max_props,
                min_props,
                required,
            ) = b;
            let (
                example,
                nullable,
                preserve,
                embedded,
                int_or_string,
                map_keys,
                list_type,
                map_type,
                rules,
                docs,
            ) = c;
            let flag = |b: bool| b.then_some(Value::Bool(true));
            let mut s = json!({});
            put(&mut s, "id", id);
            put(&mut s, "$schema", schema_url);
            put(&mut s, "$ref", reference);
            put(&mut s, "description", description);
            put(&mut s, "type", ty);
            put(&mut s, "format", format);
            put(&mut s, "title", title);
            put(&mut s, "default", default);
            put(&mut s, "maximum", max);
            put(&mut s, "exclusiveMaximum", flag(xmax));
            put(&mut s, "minimum", min);
            put(&mut s, "exclusiveMinimum", flag(xmin));
            put(&mut s, "maxLength", max_len);
            put(&mut s, "minLength", min_len);
            put(&mut s, "pattern", pattern);
            put(&mut s, "maxItems", max_items);
            put(&mut s, "minItems", min_items);
            put(&mut s, "uniqueItems", flag(unique));
            put(&mut s, "multipleOf", multiple);
            put(&mut s, "enum", non_empty(enums));
            put(&mut s, "maxProperties", max_props);
            put(&mut s, "minProperties", min_props);
            put(
                &mut s,
                "required",
                non_empty(required.into_iter().map(Value::String).collect()),
            );
            put(&mut s, "externalDocs", docs);
            put(&mut s, "example", example);
            put(&mut s, "nullable", flag(nullable));
            put(&mut s, "x-kubernetes-preserve-unknown-fields", preserve);
            put(&mut s, "x-kubernetes-embedded-resource", flag(embedded));
            put(&mut s, "x-kubernetes-int-or-string", flag(int_or_string));
            put(
                &mut s,
                "x-kubernetes-list-map-keys",
                non_empty(map_keys.into_iter().map(Value::String).collect()),
            );
            put(&mut s, "x-kubernetes-list-type", list_type);
            put(&mut s, "x-kubernetes-map-type", map_type);
            put(&mut s, "x-kubernetes-validations", non_empty(rules));
            s
        })
        .prop_recursive(3, 12, 3, |inner| {
            let map = proptest::collection::btree_map("[a-z^$-]{1,6}", inner.clone(), 1..3)
                .prop_map(|m| json!(m));
            let list = proptest::collection::vec(inner.clone(), 1..3).prop_map(Value::Array);
            let or_bool = prop_oneof![any::<bool>().prop_map(Value::Bool), inner.clone()];
            let dependency = prop_oneof![
                proptest::collection::vec(text().prop_map(Value::String), 1..3)
                    .prop_map(Value::Array),
                inner.clone()
            ];
            (
                inner.clone(),
                opt(map.clone()),
                opt(prop_oneof![inner.clone(), list.clone()]),
                opt(list.clone()),
                opt(list.clone()),
                opt(list),
                opt(inner.clone()),
                opt(or_bool.clone()),
                opt(map.clone()),
                opt(
                    proptest::collection::btree_map("[a-z]{1,4}", dependency, 1..3)
                        .prop_map(|m| json!(m)),
                ),
                opt(or_bool),
                opt(map),
            )
                .prop_map(
                    |(
                        base,
                        props,
                        items,
                        all,
                        one,
                        any_of,
                        not,
                        additional,
                        pattern,
                        deps,
                        more,
                        defs,
                    )| {
                        let mut s = base;
                        put(&mut s, "properties", props);
                        put(&mut s, "items", items);
                        put(&mut s, "allOf", all);
                        put(&mut s, "oneOf", one);
                        put(&mut s, "anyOf", any_of);
                        put(&mut s, "not", not);
                        put(&mut s, "additionalProperties", additional);
                        put(&mut s, "patternProperties", pattern);
                        put(&mut s, "dependencies", deps);
                        put(&mut s, "additionalItems", more);
                        put(&mut s, "definitions", defs);
                        s
                    },
                )
        })
}

fn validation_rule() -> impl Strategy<Value = Value> {
    (
        any_text(),
        opt_text(),
        opt_text(),
        opt(any_text().prop_map(Value::String)),
        opt_text(),
        opt(any::<bool>().prop_map(Value::Bool)),
    )
        .prop_map(
            |(rule, message, expression, reason, field_path, old_self)| {
                let mut r = json!({"rule": rule});
                put(&mut r, "message", message);
                put(&mut r, "messageExpression", expression);
                put(&mut r, "reason", reason);
                put(&mut r, "fieldPath", field_path);
                put(&mut r, "optionalOldSelf", old_self);
                r
            },
        )
}

fn crd_names() -> impl Strategy<Value = Value> {
    (
        any_text(),
        opt_text(),
        proptest::collection::vec(text(), 0..3),
        any_text(),
        opt_text(),
        proptest::collection::vec(text(), 0..3),
    )
        .prop_map(|(plural, singular, short, kind, list_kind, categories)| {
            let mut n = json!({"plural": plural, "kind": kind});
            put(&mut n, "singular", singular);
            put(
                &mut n,
                "shortNames",
                non_empty(short.into_iter().map(Value::String).collect()),
            );
            put(&mut n, "listKind", list_kind);
            put(
                &mut n,
                "categories",
                non_empty(categories.into_iter().map(Value::String).collect()),
            );
            n
        })
}

fn crd_version() -> impl Strategy<Value = Value> {
    let scale = (any_text(), any_text(), opt_text()).prop_map(|(spec, status, selector)| {
        let mut s = json!({"specReplicasPath": spec, "statusReplicasPath": status});
        put(&mut s, "labelSelectorPath", selector);
        s
    });
    let subresources = (any::<bool>(), opt(scale)).prop_map(|(status, scale)| {
        let mut s = json!({});
        put(&mut s, "status", status.then(|| json!({})));
        put(&mut s, "scale", scale);
        s
    });
    let column = (
        any_text(),
        any_text(),
        opt_text(),
        opt_text(),
        positive(),
        any_text(),
    )
        .prop_map(|(name, ty, format, description, priority, path)| {
            let mut c = json!({"name": name, "type": ty, "jsonPath": path});
            put(&mut c, "format", format);
            put(&mut c, "description", description);
            put(&mut c, "priority", priority);
            c
        });
    (
        any_text(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        opt(any_text().prop_map(Value::String)),
        proptest::option::of(opt(schema())),
        opt(subresources),
        proptest::collection::vec(column, 0..2),
        proptest::collection::vec(any_text().prop_map(|p| json!({"jsonPath": p})), 0..2),
    )
        .prop_map(
            |(
                name,
                served,
                storage,
                deprecated,
                warning,
                schema,
                subresources,
                columns,
                fields,
            )| {
                let mut v = json!({"name": name, "served": served, "storage": storage});
                put(
                    &mut v,
                    "deprecated",
                    deprecated.then_some(Value::Bool(true)),
                );
                put(&mut v, "deprecationWarning", warning);
                put(
                    &mut v,
                    "schema",
                    schema.map(|s| {
                        let mut wrapper = json!({});
                        put(&mut wrapper, "openAPIV3Schema", s);
                        wrapper
                    }),
                );
                put(&mut v, "subresources", subresources);
                put(&mut v, "additionalPrinterColumns", non_empty(columns));
                put(&mut v, "selectableFields", non_empty(fields));
                v
            },
        )
}

fn crd() -> impl Strategy<Value = Value> {
    let service = (
        any_text(),
        any_text(),
        opt_text(),
        opt((1i32..65536).prop_map(Value::from)),
    )
        .prop_map(|(ns, name, path, port)| {
            let mut s = json!({"namespace": ns, "name": name});
            put(&mut s, "path", path);
            put(&mut s, "port", port);
            s
        });
    let client = (
        opt(any_text().prop_map(Value::String)),
        opt(service),
        proptest::collection::vec(any::<u8>(), 0..8),
    )
        .prop_map(|(url, service, ca)| {
            use base64::Engine as _;
            let mut c = json!({});
            put(&mut c, "url", url);
            put(&mut c, "service", service);
            put(
                &mut c,
                "caBundle",
                (!ca.is_empty())
                    .then(|| json!(base64::engine::general_purpose::STANDARD.encode(ca))),
            );
            c
        });
    let webhook =
        (opt(client), proptest::collection::vec(text(), 0..3)).prop_map(|(client, versions)| {
            let mut h = json!({"conversionReviewVersions":
                non_empty(versions.into_iter().map(Value::String).collect())});
            put(&mut h, "clientConfig", client);
            h
        });
    let conversion = (any_text(), opt(webhook)).prop_map(|(strategy, webhook)| {
        let mut c = json!({"strategy": strategy});
        put(&mut c, "webhook", webhook);
        c
    });
    let condition = (
        any_text(),
        any_text(),
        time_or_null(),
        opt_text(),
        opt_text(),
        opt((1i64..100).prop_map(Value::from)),
    )
        .prop_map(|(ty, status, time, reason, message, generation)| {
            let mut c = json!({"type": ty, "status": status, "lastTransitionTime": time});
            put(&mut c, "reason", reason);
            put(&mut c, "message", message);
            put(&mut c, "observedGeneration", generation);
            c
        });
    (
        object_meta(),
        (
            any_text(),
            crd_names(),
            any_text(),
            proptest::collection::vec(crd_version(), 0..3),
            opt(conversion),
            any::<bool>(),
        ),
        (
            proptest::collection::vec(condition, 0..2),
            crd_names(),
            proptest::collection::vec(text(), 0..3),
            opt((1i64..100).prop_map(Value::from)),
        ),
    )
        .prop_map(|(meta, spec, status)| {
            let (group, names, scope, versions, conversion, preserve) = spec;
            let (conditions, accepted, stored, generation) = status;
            let mut o = object("apiextensions.k8s.io/v1", "CustomResourceDefinition", meta);
            let mut s = json!({"group": group, "names": names, "scope": scope,
                "versions": non_empty(versions)});
            put(&mut s, "conversion", conversion);
            put(
                &mut s,
                "preserveUnknownFields",
                preserve.then_some(Value::Bool(true)),
            );
            let mut st = json!({"acceptedNames": accepted,
                "storedVersions": non_empty(stored.into_iter().map(Value::String).collect())});
            put(&mut st, "conditions", non_empty(conditions));
            put(&mut st, "observedGeneration", generation);
            o["spec"] = s;
            o["status"] = st;
            o
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn namespaces_round_trip(o in namespace()) {
        prop_assert_eq!(round_trip(Kind::Namespace, &o), o);
    }

    #[test]
    fn config_maps_round_trip(o in config_map()) {
        prop_assert_eq!(round_trip(Kind::ConfigMap, &o), o);
    }

    #[test]
    fn secrets_round_trip(o in secret()) {
        prop_assert_eq!(round_trip(Kind::Secret, &o), o);
    }

    #[test]
    fn core_events_round_trip(o in core_event()) {
        prop_assert_eq!(round_trip(Kind::Event, &o), o);
    }

    #[test]
    fn events_v1_round_trip(o in events_event()) {
        prop_assert_eq!(round_trip(Kind::EventsEvent, &o), o);
    }

    #[test]
    fn crds_round_trip(o in crd()) {
        let back = round_trip(Kind::CustomResourceDefinition, &o);
        prop_assert!(back == o, "{:?}", first_difference(&back, &o, ""));
    }

    /// Whatever bytes arrive, reading them is an answer or an error, never a panic.
    #[test]
    fn arbitrary_bodies_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut body = MAGIC.to_vec();
        body.extend(bytes);
        for kind in [Kind::Namespace, Kind::Secret, Kind::CustomResourceDefinition] {
            let _ = read_object(kind, "v1", "", &body);
        }
        let _ = read_delete_options(&body);
    }
}
