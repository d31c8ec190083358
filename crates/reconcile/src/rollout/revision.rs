//! Class revisions: a ClusterClass and every template it references, snapshotted into a
//! `ClusterClassRevision` named by a hash of their content, so the same content is
//! always the same revision and recording one twice changes nothing.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use topograph_api::object::ObjectExt;

use super::{API_VERSION, CLASS_LABEL, REVISION_KIND};

/// A revision's content: the class object and its templates.
#[derive(Clone, Debug, PartialEq)]
pub struct Revision {
    /// The revision's name.
    pub name: String,
    /// The class as recorded (spec and status: what it was reconciled with).
    pub class: Value,
    /// Every template the class references, as recorded.
    pub templates: Vec<Value>,
}

/// Writes `value` as JSON with object keys sorted, whatever order the map keeps them
/// in: the hash must not depend on how a server or a file ordered them.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The SHA-256 (hex) of what renders: the class's spec and each template's apiVersion,
/// kind, name and spec, in the class's order.
pub fn hash(class: &Value, templates: &[Value]) -> String {
    let mut text = String::new();
    canonical(class.get("spec").unwrap_or(&Value::Null), &mut text);
    for template in templates {
        text.push('\n');
        canonical(
            &json!([
                template.api_version(),
                template.kind(),
                template.name(),
                template.get("spec").unwrap_or(&Value::Null),
            ]),
            &mut text,
        );
    }
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `<class>-<10 hex of the hash>`, the class name shortened so the whole stays a valid
/// object name.
pub fn name(class: &str, hash: &str) -> String {
    let short = &hash[..hash.len().min(10)];
    let room = 253 - short.len() - 1;
    let base = class.get(..class.len().min(room)).unwrap_or(class);
    format!("{base}-{short}")
}

/// The value of a revision's class label: the class's name when it is a valid label
/// value (63 characters at most), else its first 52 characters and 10 hex of its hash,
/// which a real API server accepts. Readers match `spec.clusterClass` for the name.
pub fn class_label(class: &str) -> String {
    if class.len() <= 63 {
        return class.to_string();
    }
    let digest = Sha256::digest(class.as_bytes());
    let short: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    let base = class
        .get(..52)
        .unwrap_or_default()
        .trim_end_matches(['-', '.']);
    format!("{base}-{short}")
}

/// What a snapshot keeps of an object's metadata: identity and what templates carry
/// into what they stamp out; nothing a server sets on every write.
fn kept_metadata(object: &Value, with_generation: bool) -> Value {
    let mut meta = Map::new();
    for field in ["name", "namespace", "uid", "labels", "annotations"] {
        if let Some(v) = object.pointer(&format!("/metadata/{field}")) {
            meta.insert(field.into(), v.clone());
        }
    }
    if with_generation && let Some(v) = object.pointer("/metadata/generation") {
        meta.insert("generation".into(), v.clone());
    }
    Value::Object(meta)
}

/// The `ClusterClassRevision` of `class` with `templates`, owned by the class.
pub fn object(class: &Value, templates: &[Value]) -> Value {
    let hash = hash(class, templates);
    let name = name(class.name(), &hash);
    let mut snapshot = json!({
        "apiVersion": class.api_version(),
        "kind": class.kind(),
        "metadata": kept_metadata(class, true),
        "spec": class.get("spec").cloned().unwrap_or_else(|| json!({})),
    });
    if let Some(status) = class.get("status") {
        snapshot["status"] = status.clone();
    }
    let templates: Vec<Value> = templates
        .iter()
        .map(|t| {
            json!({
                "apiVersion": t.api_version(),
                "kind": t.kind(),
                "metadata": kept_metadata(t, false),
                "spec": t.get("spec").cloned().unwrap_or_else(|| json!({})),
            })
        })
        .collect();
    let mut owner = json!({
        "apiVersion": class.api_version(),
        "kind": class.kind(),
        "name": class.name(),
    });
    if let Some(uid) = class.pointer("/metadata/uid") {
        owner["uid"] = uid.clone();
    }
    json!({
        "apiVersion": API_VERSION,
        "kind": REVISION_KIND,
        "metadata": {
            "name": name,
            "namespace": class.namespace(),
            "labels": {CLASS_LABEL: class_label(class.name())},
            "ownerReferences": [owner],
        },
        "spec": {
            "clusterClass": class.name(),
            "hash": hash,
            "class": snapshot,
            "templates": templates,
        },
    })
}

/// A stored revision's content, or why it cannot be read.
pub fn read(object: &Value) -> Result<Revision, String> {
    let class = object
        .pointer("/spec/class")
        .filter(|c| c.is_object())
        .cloned()
        .ok_or_else(|| format!("{REVISION_KIND} {} has no spec.class", object.name()))?;
    let templates = match object.pointer("/spec/templates") {
        Some(Value::Array(items)) => items.clone(),
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            return Err(format!(
                "{REVISION_KIND} {}: spec.templates is not a list",
                object.name()
            ));
        }
    };
    Ok(Revision {
        name: object.name().to_string(),
        class,
        templates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(spec: Value) -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
            "metadata": {"name": "quick-start", "namespace": "default", "uid": "u1", "generation": 3,
                         "resourceVersion": "77", "managedFields": [{"manager": "x"}]},
            "spec": spec,
            "status": {"observedGeneration": 3},
        })
    }

    fn template(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate",
               "metadata": {"name": name, "namespace": "default", "resourceVersion": "5"}, "spec": spec})
    }

    #[test]
    fn the_same_content_is_the_same_revision_whatever_the_key_order_or_server_fields() {
        let a = object(
            &class(json!({"a": 1, "b": {"x": 1, "y": 2}})),
            &[template("t", json!({"template": {"spec": {}}}))],
        );
        let mut other_class = class(json!({"b": {"y": 2, "x": 1}, "a": 1}));
        other_class["metadata"]["resourceVersion"] = json!("99");
        let b = object(
            &other_class,
            &[template("t", json!({"template": {"spec": {}}}))],
        );
        assert_eq!(a["metadata"]["name"], b["metadata"]["name"]);
        assert_eq!(a["spec"]["hash"], b["spec"]["hash"]);
        let changed = object(
            &class(json!({"a": 1, "b": {"x": 1, "y": 2}})),
            &[template("t2", json!({"template": {"spec": {}}}))],
        );
        assert_ne!(a["spec"]["hash"], changed["spec"]["hash"]);
        assert!(
            a["metadata"]["name"].as_str().is_some_and(
                |n| n.starts_with("quick-start-") && n.len() == "quick-start-".len() + 10
            )
        );
    }

    #[test]
    fn a_revision_reads_back_what_it_snapshotted_without_server_fields() {
        let stored = object(&class(json!({"a": 1})), &[template("t", json!({"x": 1}))]);
        let Ok(revision) = read(&stored) else {
            panic!("unreadable")
        };
        assert_eq!(revision.class["spec"], json!({"a": 1}));
        assert_eq!(revision.class["status"], json!({"observedGeneration": 3}));
        assert_eq!(revision.class["metadata"].get("resourceVersion"), None);
        assert_eq!(revision.class["metadata"].get("managedFields"), None);
        assert_eq!(revision.templates.len(), 1);
        assert_eq!(revision.templates[0]["metadata"]["name"], "t");
        assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "u1");
        assert!(read(&json!({"metadata": {"name": "x"}})).is_err());
    }

    #[test]
    fn long_class_names_still_give_valid_names() {
        let long = "c".repeat(253);
        let n = name(&long, &"f".repeat(64));
        assert_eq!(n.len(), 253);
        assert!(n.ends_with("-ffffffffff"));
        let label = class_label(&long);
        assert!(label.len() <= 63 && label.starts_with("ccc"), "{label}");
        assert!(
            topograph_variables::labels::label_value(&label).is_empty(),
            "{label}"
        );
        assert_eq!(class_label("quick-start"), "quick-start");
    }
}
