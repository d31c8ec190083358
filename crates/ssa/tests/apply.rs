//! Server-side apply cases from Kubernetes' documentation and behaviour, over a
//! Deployment-like custom resource.

use serde_json::{Value, json};
use topograph_ssa::{
    ApplyError, ApplyOptions, FieldSet, Operation, Path, PathElement, Schema, UpdateOptions, apply,
    apply_with, fields_of, read_managed_fields, reset_fields_main_resource, update,
    update_in_place, update_with, write_managed_fields,
};

const V: &str = "example.com/v1";
const T0: &str = "2024-05-01T10:00:00Z";
const T1: &str = "2024-05-01T11:00:00Z";

fn schema() -> Schema {
    Schema::from_crd_schema(&json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "paused": {"type": "boolean"},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "finalizers": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "selector": {
                        "type": "object",
                        "x-kubernetes-map-type": "atomic",
                        "additionalProperties": {"type": "string"}
                    },
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "containers": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "image": {"type": "string"},
                                "ports": {
                                    "type": "array",
                                    "x-kubernetes-list-type": "map",
                                    "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                                    "items": {"type": "object", "properties": {
                                        "containerPort": {"type": "integer"},
                                        "protocol": {"type": "string", "default": "TCP"}
                                    }}
                                }
                            }
                        }
                    }
                }
            },
            "status": {
                "type": "object",
                "properties": {"ready": {"type": "integer"}}
            }
        }
    }))
    .unwrap()
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": spec})
}

fn ok(
    live: Option<&Value>,
    intent: &Value,
    manager: &str,
    force: bool,
    now: &str,
) -> topograph_ssa::Applied {
    apply(live, intent, manager, V, force, &schema(), now).unwrap_or_else(|e| panic!("{e}"))
}

fn conflict_message(live: &Value, intent: &Value, manager: &str) -> String {
    match apply(Some(live), intent, manager, V, false, &schema(), T1) {
        Err(ApplyError::Conflicts(c)) => c.message(),
        other => panic!("expected conflicts, got {other:?}"),
    }
}

fn owners(object: &Value) -> Vec<(String, Operation, String)> {
    read_managed_fields(object)
        .unwrap()
        .into_iter()
        .map(|e| (e.manager, e.operation, e.fields.to_fields_v1_string()))
        .collect()
}

#[test]
fn two_managers_share_a_field_with_the_same_value() {
    let a = ok(None, &obj(json!({"replicas": 3})), "a", false, T0);
    let b = ok(
        Some(&a.object),
        &obj(json!({"replicas": 3})),
        "b",
        false,
        T1,
    );
    assert!(b.changed, "b's entry is new");
    let spec = r#"{"f:spec":{"f:replicas":{}}}"#;
    // The object did not change, so b's entry has no time (and sorts first, as
    // kube-apiserver orders entries by time) and a's keeps its own.
    assert_eq!(
        owners(&b.object),
        vec![
            ("b".to_string(), Operation::Apply, spec.to_string()),
            ("a".to_string(), Operation::Apply, spec.to_string()),
        ]
    );
    assert_eq!(b.managed[0].time, None);
    assert_eq!(b.managed[1].time.as_deref(), Some(T0));
}

#[test]
fn conflict_then_force() {
    let a = ok(
        None,
        &obj(json!({"replicas": 3, "paused": false})),
        "a",
        false,
        T0,
    );
    assert_eq!(
        conflict_message(&a.object, &obj(json!({"replicas": 5})), "b"),
        r#"Apply failed with 1 conflict: conflict with "a": .spec.replicas"#
    );
    let b = ok(Some(&a.object), &obj(json!({"replicas": 5})), "b", true, T1);
    assert_eq!(b.object["spec"]["replicas"], 5);
    assert_eq!(
        owners(&b.object),
        vec![
            (
                "a".to_string(),
                Operation::Apply,
                r#"{"f:spec":{"f:paused":{}}}"#.to_string()
            ),
            (
                "b".to_string(),
                Operation::Apply,
                r#"{"f:spec":{"f:replicas":{}}}"#.to_string()
            ),
        ]
    );
}

#[test]
fn conflict_status_names_update_owners_and_subresources() {
    let a = ok(None, &obj(json!({"replicas": 3})), "a", false, T0);
    let mut edited = a.object.clone();
    edited["spec"]["replicas"] = json!(4);
    edited["spec"]["paused"] = json!(true);
    let managed = update(Some(&a.object), &edited, "kubectl", V, &schema(), T1, None);
    write_managed_fields(&mut edited, &managed);
    let mut status = edited.clone();
    status["status"] = json!({"ready": 1});
    let managed = update(
        Some(&edited),
        &status,
        "ctrl",
        V,
        &schema(),
        T1,
        Some("status"),
    );
    write_managed_fields(&mut status, &managed);

    let intent = json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"replicas": 5, "paused": false}, "status": {"ready": 2}});
    let err = apply(Some(&status), &intent, "b", V, false, &schema(), T1).unwrap_err();
    assert_eq!(err.code(), 409);
    assert_eq!(
        err.to_string(),
        "Apply failed with 3 conflicts: conflicts with \"ctrl\" with subresource \"status\" using example.com/v1:\n\
         - .status.ready\n\
         conflicts with \"kubectl\" using example.com/v1:\n\
         - .spec.paused\n\
         - .spec.replicas"
    );
    let ApplyError::Conflicts(c) = err else {
        unreachable!()
    };
    let status = c.to_status();
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(status["code"], 409);
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "FieldManagerConflict",
               "message": "conflict with \"ctrl\" with subresource \"status\" using example.com/v1",
               "field": ".status.ready"})
    );
}

#[test]
fn released_field_is_removed() {
    let a = ok(
        None,
        &obj(json!({"replicas": 3, "paused": true})),
        "a",
        false,
        T0,
    );
    let a2 = ok(
        Some(&a.object),
        &obj(json!({"replicas": 3})),
        "a",
        false,
        T1,
    );
    assert!(a2.changed);
    assert_eq!(a2.object["spec"], json!({"replicas": 3}));
    assert_eq!(a2.managed[0].time.as_deref(), Some(T1));
}

#[test]
fn released_field_owned_by_another_manager_is_kept() {
    let a = ok(
        None,
        &obj(json!({"replicas": 3, "paused": true})),
        "a",
        false,
        T0,
    );
    let b = ok(
        Some(&a.object),
        &obj(json!({"paused": true})),
        "b",
        false,
        T0,
    );
    let a2 = ok(
        Some(&b.object),
        &obj(json!({"replicas": 3})),
        "a",
        false,
        T1,
    );
    assert_eq!(a2.object["spec"], json!({"replicas": 3, "paused": true}));
    // Entries sort by time: b (T0) before a (T1).
    assert_eq!(
        owners(&a2.object),
        vec![
            (
                "b".to_string(),
                Operation::Apply,
                r#"{"f:spec":{"f:paused":{}}}"#.to_string()
            ),
            (
                "a".to_string(),
                Operation::Apply,
                r#"{"f:spec":{"f:replicas":{}}}"#.to_string()
            ),
        ]
    );
}

#[test]
fn released_struct_is_removed_with_its_last_field() {
    // `extra` is a named field: released with the last field under it.
    let a = ok(
        None,
        &obj(json!({"extra": {"k": 1}, "replicas": 1})),
        "a",
        false,
        T0,
    );
    let a2 = ok(
        Some(&a.object),
        &obj(json!({"replicas": 1})),
        "a",
        false,
        T1,
    );
    assert_eq!(a2.object["spec"], json!({"replicas": 1}));
}

#[test]
fn map_list_merges_by_key() {
    let a = ok(
        None,
        &obj(
            json!({"containers": [{"name": "app", "image": "app:1", "ports": [{"containerPort": 80}]}]}),
        ),
        "a",
        false,
        T0,
    );
    let b = ok(
        Some(&a.object),
        &obj(json!({"containers": [{"name": "sidecar", "image": "side:1"}]})),
        "b",
        false,
        T0,
    );
    assert_eq!(
        b.object["spec"]["containers"],
        json!([{"name": "app", "image": "app:1", "ports": [{"containerPort": 80}]},
               {"name": "sidecar", "image": "side:1"}])
    );
    assert_eq!(
        b.managed[0].fields.to_fields_v1_string(),
        r#"{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}"#
    );
    assert_eq!(
        conflict_message(
            &b.object,
            &obj(json!({"containers": [{"name": "app", "image": "app:2"}]})),
            "b"
        ),
        r#"Apply failed with 1 conflict: conflict with "a": .spec.containers[name="app"].image"#
    );
    // a releases its item: it goes, b's stays.
    let a2 = ok(
        Some(&b.object),
        &obj(json!({"replicas": 1})),
        "a",
        false,
        T1,
    );
    assert_eq!(
        a2.object["spec"]["containers"],
        json!([{"name": "sidecar", "image": "side:1"}])
    );
}

#[test]
fn set_lists_are_unioned() {
    let a = ok(
        None,
        &obj(json!({"finalizers": ["x", "y"]})),
        "a",
        false,
        T0,
    );
    let b = ok(
        Some(&a.object),
        &obj(json!({"finalizers": ["y", "z"]})),
        "b",
        false,
        T0,
    );
    assert_eq!(b.object["spec"]["finalizers"], json!(["x", "y", "z"]));
    assert_eq!(
        b.managed[1].fields.to_fields_v1_string(),
        r#"{"f:spec":{"f:finalizers":{"v:\"y\"":{},"v:\"z\"":{}}}}"#
    );
    let a2 = ok(Some(&b.object), &obj(json!({})), "a", false, T1);
    assert_eq!(a2.object["spec"]["finalizers"], json!(["y", "z"]));
}

#[test]
fn atomic_list_and_map_are_replaced_whole() {
    let a = ok(
        None,
        &obj(json!({"args": ["a", "b"], "selector": {"x": "1", "y": "2"}})),
        "a",
        false,
        T0,
    );
    assert_eq!(
        a.managed[0].fields.to_fields_v1_string(),
        r#"{"f:spec":{"f:args":{},"f:selector":{}}}"#
    );
    assert_eq!(
        conflict_message(&a.object, &obj(json!({"args": ["c"]})), "b"),
        r#"Apply failed with 1 conflict: conflict with "a": .spec.args"#
    );
    let b = ok(
        Some(&a.object),
        &obj(json!({"args": ["c"], "selector": {"z": "3"}})),
        "b",
        true,
        T1,
    );
    assert_eq!(
        b.object["spec"],
        json!({"args": ["c"], "selector": {"z": "3"}})
    );
    assert_eq!(b.managed.len(), 1, "a lost everything it had");
}

#[test]
fn autoscaler_keeps_replicas_it_took_over() {
    // Kubernetes' documented hand-over: the applier stops setting replicas, a
    // controller updates them, later applies leave them alone.
    let a = ok(
        None,
        &obj(json!({"replicas": 3, "paused": false})),
        "a",
        false,
        T0,
    );
    let mut scaled = a.object.clone();
    scaled["spec"]["replicas"] = json!(7);
    let managed = update(Some(&a.object), &scaled, "hpa", V, &schema(), T1, None);
    write_managed_fields(&mut scaled, &managed);
    assert_eq!(
        owners(&scaled),
        vec![
            (
                "a".to_string(),
                Operation::Apply,
                r#"{"f:spec":{"f:paused":{}}}"#.to_string()
            ),
            (
                "hpa".to_string(),
                Operation::Update,
                r#"{"f:spec":{"f:replicas":{}}}"#.to_string()
            ),
        ]
    );
    let a2 = ok(
        Some(&scaled),
        &obj(json!({"paused": false})),
        "a",
        false,
        T1,
    );
    assert_eq!(a2.object["spec"]["replicas"], 7);
    assert!(!a2.changed);
}

#[test]
fn applying_unchanged_intent_changes_nothing() {
    let intent = obj(json!({"replicas": 2, "containers": [{"name": "c", "image": "i"}]}));
    let a = ok(None, &intent, "a", false, T0);
    let again = ok(Some(&a.object), &intent, "a", false, T1);
    assert!(!again.changed);
    assert_eq!(again.object, a.object);
    assert_eq!(again.managed[0].time.as_deref(), Some(T0));
}

#[test]
fn create_records_update_fields_with_dots() {
    let new = json!({"apiVersion": V, "kind": "Widget",
        "metadata": {"name": "w", "labels": {"app": "x"}},
        "spec": {"replicas": 1, "containers": [{"name": "c", "image": "i"}]}});
    let managed = update(None, &new, "kubectl-create", V, &schema(), T0, None);
    assert_eq!(managed.len(), 1);
    assert_eq!(managed[0].operation, Operation::Update);
    assert_eq!(managed[0].time.as_deref(), Some(T0));
    assert_eq!(
        managed[0].fields.to_fields_v1_string(),
        r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:containers":{".":{},"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}},"f:replicas":{}}}"#
    );
    // Removing a field takes it from every owner.
    let mut newer = new.clone();
    write_managed_fields(&mut newer, &managed);
    let mut edited = newer.clone();
    edited["spec"].as_object_mut().unwrap().remove("replicas");
    let managed = update(Some(&newer), &edited, "other", V, &schema(), T1, None);
    assert_eq!(managed.len(), 1);
    assert!(
        !managed[0]
            .fields
            .has(&Path::fields(&["spec", "replicas"]).0)
    );
}

#[test]
fn status_is_ignored_where_kube_resets_it() {
    let ignored = reset_fields_main_resource();
    let mut live = obj(json!({"replicas": 1}));
    live["status"] = json!({"ready": 1});
    let intent = json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"replicas": 1}, "status": {"ready": 9}});
    let s = schema();
    let opts = ApplyOptions {
        manager: "a",
        api_version: V,
        force: false,
        schema: &s,
        now: T0,
        subresource: None,
        ignored: Some(&ignored),
    };
    let a = apply_with(Some(&live), &intent, &opts).unwrap();
    assert_eq!(a.object["status"], json!({"ready": 1}));
    assert_eq!(
        a.managed[0].fields.to_fields_v1_string(),
        r#"{"f:spec":{"f:replicas":{}}}"#
    );
    let u = update_with(
        Some(&live),
        &intent,
        &UpdateOptions {
            manager: "u",
            api_version: V,
            schema: &s,
            now: T0,
            subresource: None,
            ignored: Some(&ignored),
        },
    );
    assert!(u.is_empty());
}

#[test]
fn an_update_in_place_records_what_an_update_does_and_leaves_both_objects() {
    let mut live = obj(json!({"replicas": 1, "paused": true}));
    live["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Update", "apiVersion": V,
        "time": T0, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:paused": {}}}}]);
    let broken = {
        let mut b = live.clone();
        b["metadata"]["managedFields"][0]["fieldsV1"] = json!({"nope": {}});
        b
    };
    let s = schema();
    let ignored = reset_fields_main_resource();
    for (old, mut new, subresource, ignored) in [
        (Some(&live), obj(json!({"replicas": 2})), None, None),
        (
            Some(&live),
            obj(json!({"replicas": 1, "paused": true})),
            None,
            None,
        ),
        (
            Some(&live),
            obj(json!({"replicas": 3})),
            Some("status"),
            Some(&ignored),
        ),
        (None, obj(json!({"replicas": 3})), None, None),
        (Some(&broken), obj(json!({"replicas": 2})), None, None),
        (Some(&live), live.clone(), None, None),
    ] {
        if new == live {
            new["metadata"]["managedFields"] = json!([{"manager": "y", "operation": "Update",
                "apiVersion": V, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:paused": {}}}}]);
        }
        let o = UpdateOptions {
            manager: "u",
            api_version: V,
            schema: &s,
            now: T1,
            subresource,
            ignored,
        };
        let expected = update_with(old, &new, &o);
        let (mut old_lent, new_before) = (old.cloned(), new.clone());
        let got = update_in_place(old_lent.as_mut(), &mut new, &o);
        assert_eq!(got, expected, "{new}");
        assert_eq!(old_lent.as_ref(), old);
        assert_eq!(new, new_before);
    }
}

#[test]
fn bad_requests_and_broken_managed_fields() {
    let mut intent = obj(json!({}));
    intent["metadata"]["managedFields"] = json!([]);
    let err = apply(None, &intent, "a", V, false, &schema(), T0).unwrap_err();
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        (400, "metadata.managedFields must be nil")
    );

    let err = apply(
        None,
        &obj(json!({})),
        "a",
        "example.com/v2",
        false,
        &schema(),
        T0,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Incorrect version specified in apply patch. Specified patch version: example.com/v1, expected: example.com/v2"
    );

    let mut live = obj(json!({}));
    live["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Apply", "apiVersion": V, "fieldsType": "FieldsV1", "fieldsV1": {"nope": {}}}]);
    let err = apply(Some(&live), &obj(json!({})), "a", V, false, &schema(), T0).unwrap_err();
    assert_eq!(err.code(), 500);
    assert!(
        err.to_string()
            .starts_with("failed to decode managed fields: "),
        "{err}"
    );
    assert!(
        update(
            Some(&live),
            &obj(json!({"replicas": 1})),
            "u",
            V,
            &schema(),
            T0,
            None
        )
        .is_empty()
    );
}

#[test]
fn fields_of_leaves_out_identity_and_bookkeeping() {
    let o = json!({"apiVersion": V, "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n", "uid": "1", "resourceVersion": "2", "generation": 3,
                     "creationTimestamp": "x", "labels": {"a": "b"}, "finalizers": ["f"],
                     "ownerReferences": [{"uid": "u1", "name": "o", "kind": "K", "apiVersion": "v1"}]},
        "spec": {"replicas": 1}});
    assert_eq!(
        fields_of(&o, &schema()).to_fields_v1_string(),
        r#"{"f:metadata":{"f:finalizers":{"v:\"f\"":{}},"f:labels":{"f:a":{}},"f:ownerReferences":{"k:{\"uid\":\"u1\"}":{".":{},"f:apiVersion":{},"f:kind":{},"f:name":{},"f:uid":{}}}},"f:spec":{"f:replicas":{}}}"#
    );
    // With no schema every map key is a node of its own.
    assert_eq!(
        fields_of(&obj(json!({"replicas": 1})), &Schema::unknown()).to_fields_v1_string(),
        r#"{"f:spec":{".":{},"f:replicas":{}}}"#
    );
}

#[test]
fn paths_print_as_kube_apiserver_prints_them() {
    let key = PathElement::key([("name", json!("nginx"))]);
    let p = Path(vec![
        PathElement::Field("spec".into()),
        PathElement::Field("template".into()),
        PathElement::Field("spec".into()),
        PathElement::Field("containers".into()),
        key,
        PathElement::Field("image".into()),
    ]);
    assert_eq!(
        p.to_string(),
        r#".spec.template.spec.containers[name="nginx"].image"#
    );
    assert_eq!(
        Path::fields(&["metadata", "labels", "app"]).to_string(),
        ".metadata.labels.app"
    );
    let set_item = Path(vec![
        PathElement::Field("spec".into()),
        PathElement::Field("finalizers".into()),
        PathElement::Value(json!("a")),
    ]);
    assert_eq!(set_item.to_string(), r#".spec.finalizers[="a"]"#);
    let ports = PathElement::key([("protocol", json!("TCP")), ("containerPort", json!(80))]);
    assert_eq!(ports.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
}

/// managedFields as kube-apiserver wrote them for a Deployment created with
/// `kubectl apply` (client side) and then reconciled by the controller.
const KUBECTL_DEPLOYMENT: &str = r#"{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}"#;
const CONTROLLER_STATUS: &str = r#"{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}"#;
const FINALIZERS_AND_OWNERS: &str = r#"{"f:metadata":{"f:finalizers":{".":{},"v:\"kubernetes.io/pvc-protection\"":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5c3e2d9a-3b7e-4a55-9d0c-6f1a2b3c4d5e\"}":{}}}}"#;

#[test]
fn fields_v1_round_trips_byte_for_byte() {
    for text in [
        KUBECTL_DEPLOYMENT,
        CONTROLLER_STATUS,
        FINALIZERS_AND_OWNERS,
        "{}",
    ] {
        let set = FieldSet::from_fields_v1_str(text).unwrap();
        assert_eq!(set.to_fields_v1_string(), text);
        assert_eq!(FieldSet::from_fields_v1(&set.to_fields_v1()).unwrap(), set);
    }
    let set = FieldSet::from_fields_v1_str(KUBECTL_DEPLOYMENT).unwrap();
    let paths: Vec<String> = set.paths().iter().map(ToString::to_string).collect();
    assert!(paths.contains(&r#".spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].containerPort"#.to_string()));
    assert!(paths.contains(&".metadata.labels".to_string()));
    assert_eq!(paths[0], ".metadata.annotations");
}

#[test]
fn managed_fields_entries_round_trip() {
    let entry = json!({
        "manager": "kube-controller-manager",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": "2024-05-01T10:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": serde_json::from_str::<Value>(CONTROLLER_STATUS).unwrap(),
        "subresource": "status"
    });
    let o = json!({"metadata": {"managedFields": [entry.clone()]}});
    let entries = read_managed_fields(&o).unwrap();
    assert_eq!(entries[0].subresource.as_deref(), Some("status"));
    let mut back = json!({"metadata": {}});
    write_managed_fields(&mut back, &entries);
    assert_eq!(back, o);
}

#[test]
fn applied_items_need_their_keys_once() {
    let dup = obj(json!({"containers": [{"name": "a"}, {"name": "a"}]}));
    let err = apply(None, &dup, "m", V, false, &schema(), T0).unwrap_err();
    assert_eq!(err.code(), 500);
    assert_eq!(
        err.to_string(),
        r#"failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.containers: duplicate entries for key [name="a"]"#
    );
    let keyless = obj(json!({"containers": [{"image": "x"}]}));
    let err = apply(None, &keyless, "m", V, false, &schema(), T0).unwrap_err();
    assert!(
        err.to_string().ends_with(
            r#".spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn't have default value)"#
        ),
        "{err}"
    );
}
