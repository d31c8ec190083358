//! The `cluster.x-k8s.io/conversion-data` annotation: what the target version cannot
//! hold, kept so that converting back restores it.
//!
//! Cluster API writes it on v1beta1 objects it converts from v1beta2: the v1beta2
//! object as JSON without its metadata. We write the same thing in both directions
//! (the object as it was in the other version, metadata left out), and only when the
//! conversion loses something: converting the result back by the rules alone would
//! not give the input. Reading it back, the stored object wins as a whole when the
//! object still converts to what it was (nobody changed it since); otherwise the
//! object is converted by the rules and, as Cluster API does, the fields only the
//! target version has are restored from the stored object.

use serde_json::{Map, Value};

use super::fields::{Object, Result};
use super::{Options, Version, cluster_class, convert_fields, machines};
use crate::field::FieldError;
use crate::object::ObjectExt;

/// The annotation's name.
pub const CONVERSION_DATA: &str = "cluster.x-k8s.io/conversion-data";

fn annotation_path() -> String {
    format!("metadata.annotations[{CONVERSION_DATA}]")
}

/// An object without the annotation, and what the annotation held.
struct Split {
    bare: Value,
    stored: Option<Object>,
}

fn split(mut bare: Value) -> Result<Split> {
    let Some(metadata) = bare.get_mut("metadata") else {
        return Ok(Split { bare, stored: None });
    };
    let Value::Object(metadata) = metadata else {
        return Err(super::fields::wrong_type("metadata", metadata, "an object"));
    };
    let Some(annotations) = metadata.get_mut("annotations") else {
        return Ok(Split { bare, stored: None });
    };
    let Value::Object(annotations) = annotations else {
        if annotations.is_null() {
            return Ok(Split { bare, stored: None });
        }
        return Err(super::fields::wrong_type(
            "metadata.annotations",
            annotations,
            "an object",
        ));
    };
    let Some(text) = annotations.remove(CONVERSION_DATA) else {
        return Ok(Split { bare, stored: None });
    };
    let Value::String(text) = text else {
        return Err(super::fields::wrong_type(
            &annotation_path(),
            &text,
            "a string",
        ));
    };
    let stored = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(stored)) => stored,
        Ok(_) => {
            return Err(FieldError::invalid(
                annotation_path(),
                &text,
                "must be a JSON object",
            ));
        }
        Err(e) => {
            return Err(FieldError::invalid(
                annotation_path(),
                &text,
                format!("must be a JSON object: {e}"),
            ));
        }
    };
    // Maps made for the annotation alone go with it; the stored object says which of
    // them the object had, empty, before (see `stored_form`).
    let hint = stored.get("metadata");
    let kept_empty = hint
        .and_then(|m| m.get("annotations"))
        .is_some_and(|a| a.as_object().is_some_and(Map::is_empty));
    if annotations.is_empty() && !kept_empty {
        metadata.remove("annotations");
    }
    let drop_metadata = metadata.is_empty() && hint.is_some_and(Value::is_null);
    if drop_metadata && let Value::Object(root) = &mut bare {
        root.remove("metadata");
    }
    Ok(Split {
        bare,
        stored: Some(stored),
    })
}

/// The stored object with the metadata of the object it came with.
fn candidate(stored: &Object, bare: &Value, to: Version) -> Value {
    let mut out = stored.clone();
    out.remove("metadata");
    out.insert(
        "apiVersion".to_string(),
        Value::String(to.api_version().to_string()),
    );
    out.insert("kind".to_string(), Value::String(bare.kind().to_string()));
    if let Some(metadata) = bare.get("metadata") {
        out.insert("metadata".to_string(), metadata.clone());
    }
    Value::Object(out)
}

/// `bare` (the input, annotation removed) as it is stored in the annotation: without
/// its metadata, as Cluster API stores it, except for a hint when the object had no
/// metadata (`null`) or an empty annotation map (`{"annotations": {}}`), which adding
/// and removing the annotation would otherwise not give back.
fn stored_form(bare: &Value) -> Object {
    let mut out = bare.as_object().cloned().unwrap_or_default();
    let hint = match out.remove("metadata") {
        None => Some(Value::Null),
        Some(metadata) => metadata
            .get("annotations")
            .is_some_and(|a| a.as_object().is_some_and(Map::is_empty))
            .then(|| serde_json::json!({"annotations": {}})),
    };
    if let Some(hint) = hint {
        out.insert("metadata".to_string(), hint);
    }
    out
}

/// An object's `metadata.managedFields` and a copy of the object without them, when
/// its metadata holds something besides them and annotations (so taking them out
/// leaves it as it reads to every rule here: no rule reads them or writes them).
fn without_managed_fields(object: &Value) -> Option<(Value, &Value)> {
    let root = object.as_object()?;
    let metadata = root.get("metadata")?.as_object()?;
    let entries = metadata.get("managedFields")?;
    if !metadata
        .keys()
        .any(|k| k != "managedFields" && k != "annotations")
    {
        return None;
    }
    let mut copy = Map::new();
    for (key, value) in root {
        let value = match (key.as_str(), value) {
            ("metadata", Value::Object(metadata)) => Value::Object(
                metadata
                    .iter()
                    .filter(|(k, _)| *k != "managedFields")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            _ => value.clone(),
        };
        copy.insert(key.clone(), value);
    }
    Some((Value::Object(copy), entries))
}

pub(crate) fn convert(object: &Value, to: Version, options: &Options<'_>) -> Result<Value> {
    // Managed fields are half of a stored object and every step below copies or
    // compares the object: converted without them, then given them back.
    let Some((bare, entries)) = without_managed_fields(object) else {
        return convert_split(split(object.clone())?, to, options);
    };
    let mut converted = convert_split(split(bare)?, to, options)?;
    if let Some(metadata) = converted.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.insert("managedFields".to_string(), entries.clone());
    }
    Ok(converted)
}

fn convert_split(split: Split, to: Version, options: &Options<'_>) -> Result<Value> {
    let from = to.other();
    let Split { bare, stored } = split;
    if let Some(stored) = &stored {
        let restored = candidate(stored, &bare, to);
        if convert_fields(&restored, from, options.api_version_of).as_ref() == Ok(&bare) {
            return Ok(restored);
        }
    }
    let mut converted = convert_fields(&bare, to, options.api_version_of)?;
    if to == Version::V1Beta2
        && let Some(stored) = &stored
        && let Value::Object(map) = &mut converted
    {
        match bare.kind() {
            "ClusterClass" => cluster_class::restore(map, stored),
            "MachineDeployment" | "MachinePool" => machines::restore(map, stored),
            _ => {}
        }
    }
    if options.conversion_data
        && convert_fields(&converted, from, options.api_version_of).as_ref() != Ok(&bare)
    {
        let text = serde_json::to_string(&Value::Object(stored_form(&bare)))
            .map_err(|e| FieldError::internal(annotation_path(), e.to_string()))?;
        let root = super::fields::object_mut(&mut converted, "")?;
        let metadata = super::fields::entry(root, "metadata");
        super::fields::entry(metadata, "annotations")
            .insert(CONVERSION_DATA.to_string(), Value::String(text));
    }
    Ok(converted)
}
