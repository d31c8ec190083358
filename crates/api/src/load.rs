//! Loading manifests: multi-document YAML, JSON, and `kind: List`.
//!
//! Every document is read into JSON first, then ClusterClasses and Clusters are decoded
//! into the model; everything else (provider templates, current objects) stays JSON.
//! Problems are reported with the file, the document number (1-based, as editors count
//! `---`-separated documents) and a field path.

use std::fmt;

use serde_json::Value;

use crate::field::FieldError;
use crate::model::{Cluster, ClusterClass};
use crate::object::{GroupVersion, ObjectExt, set_at};
use crate::{v1beta1, v1beta2};

/// The API group of Cluster API's own kinds.
pub const CLUSTER_API_GROUP: &str = "cluster.x-k8s.io";

/// Where a document came from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    /// The file name as given.
    pub file: String,
    /// 1-based document number within the file.
    pub document: usize,
    /// 1-based item number within a `kind: List` document.
    pub item: Option<usize>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: document {}", self.file, self.document)?;
        if let Some(item) = self.item {
            write!(f, ", item {item}")?;
        }
        Ok(())
    }
}

/// A problem with one document (or a whole file, when `source.document` is 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// Where.
    pub source: Source,
    /// The field of the object the problem is about (`spec.topology.version`); empty
    /// when it is about the document as a whole or the field is not known.
    pub field: String,
    /// What, including the object and field when known.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.source.document == 0 {
            write!(f, "{}: {}", self.source.file, self.message)
        } else {
            write!(f, "{}: {}", self.source, self.message)
        }
    }
}

impl std::error::Error for LoadError {}

/// A value with the place it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded<T> {
    /// Where it was read.
    pub source: Source,
    /// What was read.
    pub value: T,
}

/// Everything read from a set of files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bundle {
    /// ClusterClasses.
    pub cluster_classes: Vec<Loaded<ClusterClass>>,
    /// Clusters.
    pub clusters: Vec<Loaded<Cluster>>,
    /// Every other object: provider templates and current objects.
    pub objects: Vec<Loaded<Value>>,
}

/// One input file.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// Its name, for messages.
    pub name: &'a str,
    /// Its content.
    pub text: &'a str,
}

/// Kinds that have no namespace, so none is defaulted onto them.
const CLUSTER_SCOPED_KINDS: &[&str] = &[
    "Namespace",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "ExtensionConfig",
];

/// Splits YAML text into its documents, with the line each starts on (1-based).
///
/// A line that is `---` (optionally followed by a space and content) or `...` always
/// ends a document in YAML, even inside a block scalar, so a line scan is exact.
fn split_yaml_documents(text: &str) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    let mut current = String::new();
    let mut start_line = 1;
    for (i, line) in text.lines().enumerate() {
        let marker =
            line == "---" || line.starts_with("--- ") || line.starts_with("---\t") || line == "...";
        if marker {
            docs.push((start_line, std::mem::take(&mut current)));
            start_line = i + 1;
            if let Some(rest) = line.strip_prefix("---") {
                current.push_str(rest.trim_start());
                current.push('\n');
            }
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    docs.push((start_line, current));
    // Text before a leading `---` is not a document of its own.
    if docs.len() > 1 && is_blank_yaml(&docs[0].1) {
        docs.remove(0);
    }
    docs
}

fn is_blank_yaml(doc: &str) -> bool {
    doc.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t.starts_with('%')
    })
}

/// A YAML reading error as `sigs.k8s.io/yaml` words it, with its line number made
/// file-relative (go-yaml counts from the start of the document it was given).
fn yaml_error_message(err: &str, start_line: usize) -> String {
    let text = err.strip_prefix(CONVERTING).unwrap_or(err);
    let text = text.strip_prefix("yaml: ").unwrap_or(text);
    if let Some(rest) = text.strip_prefix("line ")
        && let Some((num, tail)) = rest.split_once(':')
        && let Ok(n) = num.parse::<usize>()
    {
        return format!("invalid YAML: line {}:{tail}", n + start_line - 1);
    }
    format!("invalid YAML: {text}")
}

/// The prefix `sigs.k8s.io/yaml` puts on every reading error.
const CONVERTING: &str = "error converting YAML to JSON: ";

/// Parses one file into JSON documents, expanding `kind: List`. Blank documents are
/// skipped. JSON files (first character `{` or `[`) are read as a stream of JSON
/// values; a top-level JSON array is a list of objects.
pub fn parse_documents(name: &str, text: &str) -> (Vec<Loaded<Value>>, Vec<LoadError>) {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    let source = |document| Source {
        file: name.to_string(),
        document,
        item: None,
    };
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
        for (i, value) in stream.enumerate() {
            match value {
                Ok(Value::Array(items)) => {
                    let list = serde_json::json!({"kind": "List", "items": items});
                    push_document(source(i + 1), list, &mut docs, &mut errors);
                }
                Ok(value) => push_document(source(i + 1), value, &mut docs, &mut errors),
                Err(e) => {
                    errors.push(LoadError {
                        field: String::new(),
                        source: source(i + 1),
                        message: format!("invalid JSON: {e}"),
                    });
                    break;
                }
            }
        }
        return (docs, errors);
    }
    for (i, (start_line, doc)) in split_yaml_documents(text).into_iter().enumerate() {
        if is_blank_yaml(&doc) {
            continue;
        }
        // Each document is read as kubectl and the API server read it: go-yaml v2
        // (YAML 1.1) through `sigs.k8s.io/yaml`, so `y:` is the key "true" and `1e400`
        // stays text, exactly as the objects would be stored.
        match topograph_gocompat::yaml::yaml_to_json(&doc) {
            Ok(Value::Null) => {}
            Ok(value) => push_document(source(i + 1), value, &mut docs, &mut errors),
            Err(e) => errors.push(LoadError {
                field: String::new(),
                source: source(i + 1),
                message: yaml_error_message(&e, start_line),
            }),
        }
    }
    (docs, errors)
}

fn push_document(
    source: Source,
    value: Value,
    docs: &mut Vec<Loaded<Value>>,
    errors: &mut Vec<LoadError>,
) {
    if !value.is_object() {
        errors.push(LoadError {
            field: String::new(),
            source,
            message: "a document must be a Kubernetes object (a mapping with apiVersion and kind)"
                .to_string(),
        });
        return;
    }
    let is_list = value.kind() == "List" || value.kind().ends_with("List");
    if is_list && let Some(items) = value.get("items").and_then(Value::as_array) {
        for (i, item) in items.iter().enumerate() {
            let item_source = Source {
                item: Some(i + 1),
                ..source.clone()
            };
            if item.is_object() {
                docs.push(Loaded {
                    source: item_source,
                    value: item.clone(),
                });
            } else {
                errors.push(LoadError {
                    field: String::new(),
                    source: item_source,
                    message: "a list item must be a Kubernetes object".to_string(),
                });
            }
        }
        return;
    }
    docs.push(Loaded { source, value });
}

/// The versions of Cluster API's kinds that can be read.
pub const SUPPORTED_VERSIONS: &[&str] = &[v1beta1::API_VERSION, v1beta2::API_VERSION];

/// The wire version of a Cluster API object, from its `apiVersion`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    V1Beta1,
    V1Beta2,
}

impl Wire {
    fn of(api_version: &str) -> Result<Self, FieldError> {
        match api_version {
            v1beta1::API_VERSION => Ok(Wire::V1Beta1),
            v1beta2::API_VERSION => Ok(Wire::V1Beta2),
            other => Err(FieldError::new(
                "apiVersion",
                crate::field::ErrorType::NotSupported,
                Some(format!("{other:?}")),
                format!(
                    "supported values: {}",
                    SUPPORTED_VERSIONS
                        .iter()
                        .map(|v| format!("{v:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}

/// Decodes a ClusterClass of either version; decoding errors come with their path,
/// conversion errors as field errors.
fn decode_class_at(value: Value) -> Result<ClusterClass, ClassProblems> {
    match Wire::of(value.api_version()).map_err(|e| ClassProblems::Fields(vec![e]))? {
        Wire::V1Beta1 => {
            let wire = decode_at::<v1beta1::ClusterClass>(&value).map_err(ClassProblems::Decode)?;
            ClusterClass::from_v1beta1(&wire).map_err(ClassProblems::Fields)
        }
        Wire::V1Beta2 => {
            let wire = decode_at::<v1beta2::ClusterClass>(&value).map_err(ClassProblems::Decode)?;
            Ok(ClusterClass::from_v1beta2(&wire))
        }
    }
}

/// Why a ClusterClass could not be read.
enum ClassProblems {
    /// The document does not decode: `(path, message)`.
    Decode((String, String)),
    /// It decodes, but lacks what every topology needs.
    Fields(Vec<FieldError>),
}

/// Decodes a Cluster of either version, with the failing field's path apart.
fn decode_cluster_at(value: Value) -> Result<Cluster, (String, String)> {
    match Wire::of(value.api_version()).map_err(|e| (e.path.clone(), e.to_string()))? {
        Wire::V1Beta1 => {
            let wire = decode_at::<v1beta1::Cluster>(&value)?;
            Ok(Cluster::from_v1beta1(&wire, value))
        }
        Wire::V1Beta2 => {
            let wire = decode_at::<v1beta2::Cluster>(&value)?;
            Ok(Cluster::from_v1beta2(&wire, value))
        }
    }
}

/// Reads one Cluster object (either version), as a management cluster returns it
/// (status and server-set metadata included). The error names the failing field.
pub fn decode_cluster(value: Value) -> Result<Cluster, String> {
    decode_cluster_at(value).map_err(|(_, message)| message)
}

/// Reads one ClusterClass object (either version), as a management cluster returns
/// it. Every problem is reported, each with its field path.
pub fn decode_cluster_class(value: Value) -> Result<ClusterClass, Vec<String>> {
    decode_class_at(value).map_err(|problems| match problems {
        ClassProblems::Decode((_, message)) => vec![message],
        ClassProblems::Fields(errs) => errs.iter().map(ToString::to_string).collect(),
    })
}

/// [`decode`], with the failing field's path apart (empty for the document itself).
/// Reads `value` as `T` (from a reference: the caller keeps the document, and a
/// copy of the whole tree first would cost more than the strings `T` copies).
fn decode_at<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, (String, String)> {
    // Tracking the path costs on every field; it is only needed to name a failing one,
    // so a document is read again with it only when it fails.
    if let Ok(decoded) = <T as serde::Deserialize>::deserialize(value) {
        return Ok(decoded);
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            (String::new(), e.inner().to_string())
        } else {
            let message = format!("{path}: {}", e.inner());
            (path, message)
        }
    })
}

/// Options of [`load`].
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Namespace for objects that have none. Without it, the namespace of the
    /// Clusters (when they agree on one), else `default`.
    pub namespace: Option<String>,
}

/// Reads every input into a [`Bundle`]. All problems are returned, not only the first.
pub fn load(inputs: &[Input<'_>], options: &LoadOptions) -> Result<Bundle, Vec<LoadError>> {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    for input in inputs {
        let (d, e) = parse_documents(input.name, input.text);
        docs.extend(d);
        errors.extend(e);
    }
    let files: Vec<&str> = inputs.iter().map(|i| i.name).collect();
    decode_documents(docs, errors, &files, options)
}

/// [`load`] of documents already read as JSON (objects an API server returned, a
/// request's objects): decoded the same way, without printing and parsing them again.
pub fn load_values(
    docs: Vec<Loaded<Value>>,
    options: &LoadOptions,
) -> Result<Bundle, Vec<LoadError>> {
    let mut files: Vec<String> = Vec::new();
    for doc in &docs {
        if !files.contains(&doc.source.file) {
            files.push(doc.source.file.clone());
        }
    }
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    decode_documents(docs, Vec::new(), &files, options)
}

/// Namespace defaulting and decoding of every document; problems (`errors` holds the
/// parsing ones) are reported in the order of `files`, then of the documents.
fn decode_documents(
    docs: Vec<Loaded<Value>>,
    mut errors: Vec<LoadError>,
    files: &[&str],
    options: &LoadOptions,
) -> Result<Bundle, Vec<LoadError>> {
    let namespace = options
        .namespace
        .clone()
        .unwrap_or_else(|| default_namespace(&docs));

    let mut bundle = Bundle::default();
    for Loaded { source, mut value } in docs {
        let fail_at = |errors: &mut Vec<LoadError>, field: &str, message: String| {
            errors.push(LoadError {
                field: field.to_string(),
                source: source.clone(),
                message,
            });
        };
        let fail = |errors: &mut Vec<LoadError>, message: String| fail_at(errors, "", message);
        let (api_version, kind) = (value.api_version().to_string(), value.kind().to_string());
        if api_version.is_empty() || kind.is_empty() {
            let missing = if api_version.is_empty() {
                "apiVersion"
            } else {
                "kind"
            };
            fail(&mut errors, format!("{missing}: Required value"));
            continue;
        }
        let gv = match GroupVersion::parse(&api_version) {
            Ok(gv) => gv,
            Err(e) => {
                fail(&mut errors, format!("apiVersion: Invalid value: {e}"));
                continue;
            }
        };
        if value.namespace().is_empty() && !CLUSTER_SCOPED_KINDS.contains(&kind.as_str()) {
            set_at(
                &mut value,
                &["metadata", "namespace"],
                Value::String(namespace.clone()),
            );
        }
        if gv.group != CLUSTER_API_GROUP {
            bundle.objects.push(Loaded { source, value });
            continue;
        }
        if let Err(e) = Wire::of(&api_version) {
            fail(&mut errors, format!("{kind} {}: {e}", value.name()));
            continue;
        }
        let what = format!("{kind} {}/{}", value.namespace(), value.name());
        match kind.as_str() {
            "ClusterClass" => match decode_class_at(value) {
                Ok(cc) => bundle.cluster_classes.push(Loaded { source, value: cc }),
                Err(ClassProblems::Fields(errs)) => {
                    for e in errs {
                        fail_at(&mut errors, &e.path, format!("{what}: {e}"));
                    }
                }
                Err(ClassProblems::Decode((field, e))) => {
                    fail_at(&mut errors, &field, format!("{what}: {e}"))
                }
            },
            "Cluster" => match decode_cluster_at(value) {
                Ok(cluster) => bundle.clusters.push(Loaded {
                    source,
                    value: cluster,
                }),
                Err((field, e)) => fail_at(&mut errors, &field, format!("{what}: {e}")),
            },
            _ => bundle.objects.push(Loaded { source, value }),
        }
    }
    if errors.is_empty() {
        Ok(bundle)
    } else {
        // Report in the order of the inputs, then of the documents.
        let file_order = |file: &str| files.iter().position(|f| *f == file);
        errors.sort_by_key(|e| (file_order(&e.source.file), e.source.document, e.source.item));
        Err(errors)
    }
}

/// The namespace [`load`] defaults objects into when no namespace is given: the
/// Clusters' when they agree on one, else `default`.
pub fn default_namespace(docs: &[Loaded<Value>]) -> String {
    let mut namespaces = docs
        .iter()
        .filter(|d| {
            d.value.kind() == "Cluster"
                && crate::object::group_of(d.value.api_version()) == CLUSTER_API_GROUP
                && !d.value.namespace().is_empty()
        })
        .map(|d| d.value.namespace().to_string());
    match namespaces.next() {
        Some(first) if namespaces.all(|n| n == first) => first,
        _ => "default".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_one(text: &str) -> Result<Bundle, Vec<String>> {
        load(
            &[Input {
                name: "in.yaml",
                text,
            }],
            &LoadOptions::default(),
        )
        .map_err(|errs| errs.iter().map(ToString::to_string).collect())
    }

    const CLASS: &str = "apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: cc}
spec:
  controlPlane:
    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}
";

    #[test]
    fn reads_multi_document_yaml_and_lists() {
        let text = format!(
            "{CLASS}---\n# comment only\n---\napiVersion: v1\nkind: List\nitems:\n- {{apiVersion: x.io/v1, kind: A, metadata: {{name: a}}}}\n- {{apiVersion: x.io/v1, kind: B, metadata: {{name: b, namespace: other}}}}\n---\n"
        );
        let bundle = load_one(&text).unwrap();
        assert_eq!(bundle.cluster_classes.len(), 1);
        assert_eq!(bundle.cluster_classes[0].value.namespace, "default");
        assert_eq!(bundle.objects.len(), 2);
        assert_eq!(
            bundle.objects[0].source.to_string(),
            "in.yaml: document 3, item 1"
        );
        assert_eq!(bundle.objects[0].value.namespace(), "default");
        assert_eq!(bundle.objects[1].value.namespace(), "other");
    }

    #[test]
    fn objects_take_the_clusters_namespace() {
        let text = format!(
            "{CLASS}---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {{name: c, namespace: team-a}}\n"
        );
        let bundle = load_one(&text).unwrap();
        assert_eq!(bundle.cluster_classes[0].value.namespace, "team-a");
        let with_flag = load(
            &[Input {
                name: "in.yaml",
                text: &text,
            }],
            &LoadOptions {
                namespace: Some("ops".into()),
            },
        )
        .unwrap();
        assert_eq!(with_flag.cluster_classes[0].value.namespace, "ops");
        assert_eq!(with_flag.clusters[0].value.namespace, "team-a");
    }

    #[test]
    fn reads_json_streams_and_arrays() {
        let text = r#"{"apiVersion":"x.io/v1","kind":"A","metadata":{"name":"a"}}
[{"apiVersion":"x.io/v1","kind":"B","metadata":{"name":"b"}}]"#;
        let bundle = load_one(text).unwrap();
        assert_eq!(bundle.objects.len(), 2);
        assert_eq!(
            bundle.objects[1].source.to_string(),
            "in.yaml: document 2, item 1"
        );
    }

    #[test]
    fn reports_every_bad_document_with_file_index_and_path() {
        let cases: &[(&str, &str)] = &[
            (
                "a: [1\n",
                "in.yaml: document 1: invalid YAML: line 1: did not find expected ',' or ']'",
            ),
            (
                "---\nkind: X\n---\na: 1\n  b: 2\n",
                "in.yaml: document 1: apiVersion: Required value",
            ),
            (
                "- 1\n",
                "in.yaml: document 1: a document must be a Kubernetes object (a mapping with apiVersion and kind)",
            ),
            (
                "apiVersion: cluster.x-k8s.io/v1alpha4\nkind: Cluster\nmetadata: {name: c}\n",
                "in.yaml: document 1: Cluster c: apiVersion: Unsupported value: \"cluster.x-k8s.io/v1alpha4\": supported values: \"cluster.x-k8s.io/v1beta1\", \"cluster.x-k8s.io/v1beta2\"",
            ),
            (
                "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: cc}\nspec:\n  controlPlane: {}\n",
                "in.yaml: document 1: ClusterClass default/cc: spec.controlPlane.ref: Required value: template reference must be defined",
            ),
            (
                "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  topology: {class: a, version: v1.30.0, controlPlane: {replicas: three}}\n",
                "in.yaml: document 1: Cluster default/c: spec.topology.controlPlane.replicas: invalid type: string \"three\", expected i32",
            ),
        ];
        for (text, want) in cases {
            let errs = load_one(text).unwrap_err();
            assert_eq!(&errs[0], want, "input {text:?}");
        }
        // The second document's YAML error is reported with its file line.
        let errs = load_one("---\nkind: X\n---\na: 1\n  b: 2\n").unwrap_err();
        assert_eq!(
            errs[1],
            "in.yaml: document 2: invalid YAML: line 5: mapping values are not allowed in this context"
        );
    }

    #[test]
    fn files_are_read_with_yaml_1_1_as_kubectl_reads_them() {
        // kubectl and the API server read manifests through sigs.k8s.io/yaml (go-yaml
        // v2): `y`, `on`, `No` are booleans, as keys too, and a number float64 cannot
        // hold stays text.
        let text = "apiVersion: x.io/v1\nkind: A\nmetadata:\n  name: a\n  labels: {y: v, off: w}\nspec:\n  flags: [y, n, yes, on, Off, NO, yeS, 'y']\n  big: 1e400\n  octal: 010\n  folded: >-\n    a\n    b\n";
        let bundle = load_one(text).unwrap();
        let object = &bundle.objects[0].value;
        assert_eq!(
            object["metadata"]["labels"],
            serde_json::json!({"true": "v", "false": "w"})
        );
        assert_eq!(
            object["spec"]["flags"],
            serde_json::json!([true, false, true, true, false, false, "yeS", "y"])
        );
        assert_eq!(object["spec"]["big"], serde_json::json!("1e400"));
        assert_eq!(object["spec"]["octal"], serde_json::json!(8));
        assert_eq!(object["spec"]["folded"], serde_json::json!("a b"));
    }

    #[test]
    fn unknown_fields_of_cluster_api_kinds_are_errors() {
        let text = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: cc}\nspec:\n  controlPlane:\n    machineHealthChek: {}\n";
        let errs = load_one(text).unwrap_err();
        assert!(
            errs[0].starts_with(
                "in.yaml: document 1: ClusterClass default/cc: spec.controlPlane.machineHealthChek: unknown field `machineHealthChek`"
            ),
            "{}",
            errs[0]
        );
    }

    #[test]
    fn v1beta2_fields_of_one_kind_of_object_are_unknown_on_another() {
        // Cluster API's v1beta2 gives the control plane and MachinePools their own
        // deletion, remediation and rollout types, without what only a
        // MachineDeployment has.
        let class = |control_plane: &str, pool: &str| {
            format!(
                "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {{name: cc}}\nspec:\n  controlPlane:\n    templateRef: {{apiVersion: a/v1, kind: KT, name: t}}\n{control_plane}  workers:\n    machinePools:\n    - class: p\n      bootstrap: {{templateRef: {{apiVersion: b/v1, kind: BT, name: b}}}}\n      infrastructure: {{templateRef: {{apiVersion: i/v1, kind: IT, name: i}}}}\n{pool}    machineDeployments:\n    - class: m\n      bootstrap: {{templateRef: {{apiVersion: b/v1, kind: BT, name: b}}}}\n      infrastructure: {{templateRef: {{apiVersion: i/v1, kind: IT, name: i}}}}\n      deletion: {{order: Oldest}}\n      healthCheck: {{remediation: {{maxInFlight: 2}}}}\n"
            )
        };
        // (text, the unknown field's path, or None when it loads)
        let cases = [
            (class("", ""), None),
            (
                class("    deletion: {order: Oldest}\n", ""),
                Some("spec.controlPlane.deletion.order"),
            ),
            (
                class("    healthCheck: {remediation: {maxInFlight: 1}}\n", ""),
                Some("spec.controlPlane.healthCheck.remediation.maxInFlight"),
            ),
            (
                class("", "      deletion: {order: Newest}\n"),
                Some("spec.workers.machinePools[0].deletion.order"),
            ),
            (
                "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: c}\nspec:\n  topology:\n    classRef: {name: cc}\n    version: v1.30.0\n    controlPlane:\n      rollout: {strategy: {type: RollingUpdate}}\n".to_string(),
                Some("spec.topology.controlPlane.rollout.strategy"),
            ),
        ];
        for (text, unknown) in cases {
            match (load_one(&text), unknown) {
                (Ok(_), None) => {}
                (Err(errs), Some(path)) => assert!(
                    errs[0].contains(&format!("{path}: unknown field")),
                    "{path}: {errs:?}"
                ),
                (outcome, want) => panic!("{want:?}: {:?}", outcome.map(|_| "loaded")),
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = load_one(&text);
        }

        #[test]
        fn arbitrary_yamlish_text_never_panics(
            lines in proptest::collection::vec("[ a-z:\\-\\[\\]{}'\"#0-9.]{0,20}", 0..12)
        ) {
            let _ = load_one(&lines.join("\n"));
        }
    }
}
