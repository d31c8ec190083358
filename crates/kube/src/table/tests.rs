//! The Table JSON of each printer, `includeObject`'s variants and the duration printer,
//! checked against kube-apiserver's outputs and apimachinery's own test cases.

use super::*;
use crate::types::ResourceType;

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;
const M: i64 = 60 * S;
const H: i64 = 60 * M;
const D: i64 = 24 * H;

/// 2026-01-01T00:00:00Z, in nanoseconds.
const T0: i128 = 1_767_225_600 * 1_000_000_000;

#[test]
fn human_duration_matches_apimachinery() {
    // apimachinery's TestHumanDuration and TestHumanDurationBoundaries.
    let cases: &[(i64, &str)] = &[
        (S, "1s"),
        (70 * S, "70s"),
        (190 * S, "3m10s"),
        (70 * M, "70m"),
        (47 * H, "47h"),
        (49 * H, "2d1h"),
        ((8 * 24 + 2) * H, "8d"),
        (367 * D, "367d"),
        ((365 * 2 * 24 + 25) * H, "2y1d"),
        ((365 * 8 * 24 + 2) * H, "8y"),
        (-2 * S, "<invalid>"),
        (-2 * S + 1, "0s"),
        (0, "0s"),
        (S - MS, "0s"),
        (2 * M - MS, "119s"),
        (2 * M, "2m"),
        (2 * M + S, "2m1s"),
        (10 * M - MS, "9m59s"),
        (10 * M, "10m"),
        (10 * M + S, "10m"),
        (3 * H - MS, "179m"),
        (3 * H, "3h"),
        (3 * H + M, "3h1m"),
        (8 * H - MS, "7h59m"),
        (8 * H, "8h"),
        (8 * H + 59 * M, "8h"),
        (2 * D - MS, "47h"),
        (2 * D, "2d"),
        (2 * D + H, "2d1h"),
        (8 * D - MS, "7d23h"),
        (8 * D, "8d"),
        (8 * D + 23 * H, "8d"),
        (2 * 365 * D - MS, "729d"),
        (2 * 365 * D, "2y"),
        (2 * 365 * D + 23 * H, "2y"),
        (2 * 365 * D + 23 * H + 59 * M, "2y"),
        (2 * 365 * D + D - MS, "2y"),
        (2 * 365 * D + D, "2y1d"),
        (3 * 365 * D, "3y"),
        (4 * 365 * D, "4y"),
        (5 * 365 * D, "5y"),
        (6 * 365 * D, "6y"),
        (7 * 365 * D, "7y"),
        (8 * 365 * D - MS, "7y364d"),
        (8 * 365 * D, "8y"),
        (8 * 365 * D + 364 * D, "8y"),
        (9 * 365 * D, "9y"),
    ];
    for (d, want) in cases {
        assert_eq!(human_duration(*d), *want, "{d}ns");
    }
}

fn builtin(group: &str, plural: &str) -> Printer {
    let rt = ResourceType::builtins()
        .into_iter()
        .find(|t| t.group == group && t.plural == plural)
        .unwrap();
    Printer::builtin(&rt).unwrap()
}

fn headers(printer: &Printer) -> Vec<(String, i64)> {
    printer
        .columns()
        .iter()
        .map(|c| (c.name.clone(), c.priority))
        .collect()
}

const V1: TableRequest = TableRequest {
    api_version: "meta.k8s.io/v1",
    include: Include::Metadata,
};

#[test]
fn namespace_table_with_each_include_object() {
    let ns = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "fleet-a", "resourceVersion": "7", "labels": {"team": "a"},
                     "creationTimestamp": "2025-12-31T23:56:58Z"},
        "status": {"phase": "Active"},
    });
    let printer = builtin("", "namespaces");
    let table = printer.table(V1, std::slice::from_ref(&ns), "9", true, T0);
    assert_eq!(
        table,
        json!({
            "kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": "9"},
            "columnDefinitions": [
                {"name": "Name", "type": "string", "format": "name", "description": NAME_DOC, "priority": 0},
                {"name": "Status", "type": "string", "format": "", "description": "The status of the namespace", "priority": 0},
                {"name": "Age", "type": "string", "format": "", "description": CREATED_DOC, "priority": 0},
            ],
            "rows": [{
                "cells": ["fleet-a", "Active", "3m2s"],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                           "metadata": ns["metadata"]},
            }],
        })
    );
    let beta = TableRequest {
        api_version: "meta.k8s.io/v1beta1",
        include: Include::Metadata,
    };
    let table = printer.table(beta, std::slice::from_ref(&ns), "9", true, T0);
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        table["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    let none = TableRequest {
        include: Include::None,
        ..V1
    };
    let table = printer.table(none, std::slice::from_ref(&ns), "9", true, T0);
    assert_eq!(table["rows"][0]["object"], Value::Null);
    let whole = TableRequest {
        include: Include::Object,
        ..V1
    };
    let table = printer.table(whole, std::slice::from_ref(&ns), "9", false, T0);
    assert_eq!(table["rows"][0]["object"], ns);
    // A watch's later events: no column definitions.
    assert_eq!(table["columnDefinitions"], Value::Null);
    let empty = printer.table(V1, &[], "", true, T0);
    assert_eq!(empty["rows"], json!([]));
    assert_eq!(empty["metadata"], json!({}));
}

#[test]
fn include_object_values() {
    assert_eq!(Include::parse(None), Ok(Include::Metadata));
    assert_eq!(Include::parse(Some("")), Ok(Include::Metadata));
    assert_eq!(Include::parse(Some("None")), Ok(Include::None));
    assert_eq!(Include::parse(Some("Object")), Ok(Include::Object));
    let e = Include::parse(Some("object")).unwrap_err();
    assert_eq!(e.code, 400);
    assert_eq!(
        e.message,
        "Unable to convert to Table as requested: includeObject: Unsupported value: \"object\": supported values: \"Metadata\", \"None\", \"Object\""
    );
}

#[test]
fn secret_and_configmap_cells() {
    let secret = json!({"metadata": {"name": "creds", "creationTimestamp": "2025-12-29T21:00:00Z"},
        "type": "Opaque", "data": {"a": "", "b": ""}});
    let printer = builtin("", "secrets");
    assert_eq!(
        headers(&printer),
        [("Name", 0), ("Type", 0), ("Data", 0), ("Age", 0)].map(|(n, p)| (n.to_string(), p))
    );
    assert_eq!(
        printer.cells(&secret, T0),
        vec![json!("creds"), json!("Opaque"), json!(2), json!("2d3h")]
    );
    let cm = json!({"metadata": {"name": "settings"}, "data": {"a": "b"}, "binaryData": {"c": ""}});
    let printer = builtin("", "configmaps");
    assert_eq!(
        printer.cells(&cm, T0),
        vec![json!("settings"), json!(2), json!("<unknown>")]
    );
}

#[test]
fn event_cells_of_both_apis() {
    let printer = builtin("", "events");
    assert_eq!(
        headers(&printer),
        [
            ("Last Seen", 0),
            ("Type", 0),
            ("Reason", 0),
            ("Object", 0),
            ("Subobject", 1),
            ("Source", 1),
            ("Message", 0),
            ("First Seen", 1),
            ("Count", 1),
            ("Name", 1),
        ]
        .map(|(n, p)| (n.to_string(), p))
    );
    let core = json!({
        "metadata": {"name": "settings.1"},
        "involvedObject": {"kind": "ConfigMap", "name": "settings", "fieldPath": "data"},
        "reason": "Tested", "message": " read \n", "type": "Normal",
        "firstTimestamp": "2025-12-31T22:00:00Z", "lastTimestamp": "2025-12-31T23:59:00Z",
        "count": 4, "source": {"component": "kubectl-test", "host": "node-1"},
    });
    assert_eq!(
        printer.cells(&core, T0),
        vec![
            json!("60s"),
            json!("Normal"),
            json!("Tested"),
            json!("configmap/settings"),
            json!("data"),
            json!("kubectl-test, node-1"),
            json!("read"),
            json!("120m"),
            json!(4),
            json!("settings.1"),
        ]
    );
    // A new-API event: eventTime for both times, count 1, the reporting controller.
    let new = json!({
        "metadata": {"name": "e2"},
        "regarding": {"kind": "Namespace"},
        "reason": "Scheduled", "note": "done", "type": "Warning",
        "eventTime": "2025-12-31T23:59:50.123456Z",
        "reportingController": "topograph", "reportingInstance": "topograph-1",
    });
    let printer = builtin("events.k8s.io", "events");
    assert_eq!(
        printer.cells(&new, T0),
        vec![
            json!("9s"),
            json!("Warning"),
            json!("Scheduled"),
            json!("namespace"),
            json!(""),
            json!("topograph, topograph-1"),
            json!("done"),
            json!("9s"),
            json!(1),
            json!("e2"),
        ]
    );
    let mut series = new.clone();
    series["series"] = json!({"count": 5, "lastObservedTime": "2025-12-31T23:59:58.000000Z"});
    let cells = printer.cells(&series, T0);
    assert_eq!(
        (cells[0].clone(), cells[8].clone()),
        (json!("2s"), json!(5))
    );
}

#[test]
fn crds_print_their_creation_time() {
    let printer = builtin(CRD_GROUP, CRD_PLURAL);
    assert_eq!(
        printer.columns()[1],
        Column::new("Created At", "date", "", CREATED_DOC, 0)
    );
    let crd = json!({"metadata": {"name": "clusters.cluster.x-k8s.io",
        "creationTimestamp": "2025-12-31T10:00:00+02:00"}});
    assert_eq!(
        printer.cells(&crd, T0),
        vec![
            json!("clusters.cluster.x-k8s.io"),
            json!("2025-12-31T08:00:00Z")
        ]
    );
    // kube-apiserver's default convertor leaves an empty list's rows null.
    assert_eq!(printer.table(V1, &[], "3", true, T0)["rows"], Value::Null);
}

#[test]
fn custom_resources_print_their_printer_columns() {
    let columns = json!([
        {"name": "ClusterClass", "type": "string", "jsonPath": ".spec.topology.class",
         "description": "ClusterClass of this Cluster"},
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "Replicas", "type": "integer", "format": "int32", "jsonPath": ".spec.replicas", "priority": 1},
        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
        {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
        {"name": "Labels", "type": "string", "jsonPath": ".metadata.labels"},
        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
        {"name": "Bad", "type": "integer", "jsonPath": ".spec.topology.class"},
    ]);
    let printer = Printer::custom(columns.as_array().unwrap());
    let defs = printer.table(V1, &[], "", true, T0)["columnDefinitions"].clone();
    assert_eq!(
        defs[0],
        json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DOC, "priority": 0})
    );
    assert_eq!(
        defs[1],
        json!({"name": "ClusterClass", "type": "string", "format": "", "description": "ClusterClass of this Cluster", "priority": 0})
    );
    assert_eq!(
        defs[2]["description"],
        "Custom resource definition column (in JSONPath format): .status.phase"
    );
    assert_eq!(
        (defs[4]["format"].clone(), defs[4]["priority"].clone()),
        (json!("int32"), json!(1))
    );
    let cluster = json!({
        "metadata": {"name": "c1", "creationTimestamp": "2025-12-31T23:00:00Z",
                     "labels": {"b": "<2>", "a": "1"}},
        "spec": {"topology": {"class": "quick-start"}, "replicas": 3.7, "ratio": 2, "paused": false},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    });
    assert_eq!(
        printer.cells(&cluster, T0),
        vec![
            json!("c1"),
            json!("quick-start"),
            Value::Null,
            json!("60m"),
            json!(3),
            json!(2),
            json!(false),
            json!(r#"{"a":"1","b":"\u003c2\u003e"}"#),
            json!("True"),
            Value::Null,
        ]
    );
    let mut odd = cluster.clone();
    odd["metadata"]["creationTimestamp"] = json!("yesterday");
    assert_eq!(printer.cells(&odd, T0)[3], json!("<invalid>"));

    // No printer columns: Name and Age, the age a date column.
    let printer = Printer::custom(&[]);
    assert_eq!(
        headers(&printer),
        [("Name", 0), ("Age", 0)].map(|(n, p)| (n.to_string(), p))
    );
    assert_eq!(printer.columns()[1].type_, "date");
    assert_eq!(printer.columns()[1].description, CREATED_DOC);
    assert_eq!(printer.cells(&cluster, T0), vec![json!("c1"), json!("60m")]);

    // The columns stop at a path kube-apiserver cannot read.
    let columns = json!([
        {"name": "A", "type": "string", "jsonPath": ".a"},
        {"name": "B", "type": "string", "jsonPath": "..b"},
        {"name": "C", "type": "string", "jsonPath": ".c"},
    ]);
    let printer = Printer::custom(columns.as_array().unwrap());
    assert_eq!(
        headers(&printer),
        [("Name", 0), ("A", 0)].map(|(n, p)| (n.to_string(), p))
    );
}
