//! `meta.k8s.io/v1` messages every kind shares: ObjectMeta (owner references, managed
//! fields), ListMeta, Status (errors answered in protobuf) and DeleteOptions (a delete's
//! body from a protobuf client).

use super::gojson::{Reader, Result, Writer};
use k8s_pb::apimachinery::pkg::apis::meta::v1::{
    DeleteOptions, FieldsV1, ListMeta, ManagedFieldsEntry, ObjectMeta, OwnerReference, Status,
    StatusCause, StatusDetails,
};
use serde_json::Value;

pub fn object_meta_from_json(r: &Reader) -> Result<ObjectMeta> {
    let owner_references = r
        .items("ownerReferences")?
        .iter()
        .map(|item| owner_reference_from_json(&item.reader()?))
        .collect::<Result<Vec<_>>>()?;
    let managed_fields = r
        .items("managedFields")?
        .iter()
        .map(|item| managed_fields_entry_from_json(&item.reader()?))
        .collect::<Result<Vec<_>>>()?;
    Ok(ObjectMeta {
        name: r.string("name")?,
        generate_name: r.string("generateName")?,
        namespace: r.string("namespace")?,
        self_link: r.string("selfLink")?,
        uid: r.string("uid")?,
        resource_version: r.string("resourceVersion")?,
        generation: r.int64("generation")?,
        creation_timestamp: r.time("creationTimestamp")?,
        deletion_timestamp: r.time("deletionTimestamp")?,
        deletion_grace_period_seconds: r.int64("deletionGracePeriodSeconds")?,
        labels: r.string_map("labels")?,
        annotations: r.string_map("annotations")?,
        owner_references,
        finalizers: r.strings("finalizers")?,
        managed_fields,
    })
}

pub fn object_meta_to_json(m: ObjectMeta) -> Result<Value> {
    let mut w = Writer::new();
    w.str("name", m.name)
        .str("generateName", m.generate_name)
        .str("namespace", m.namespace)
        .str("selfLink", m.self_link)
        .str("uid", m.uid)
        .str("resourceVersion", m.resource_version)
        .int("generation", m.generation);
    w.time("creationTimestamp", m.creation_timestamp)?
        .time_ptr("deletionTimestamp", m.deletion_timestamp)?
        .int_ptr(
            "deletionGracePeriodSeconds",
            m.deletion_grace_period_seconds,
        )
        .string_map("labels", m.labels)
        .string_map("annotations", m.annotations)
        .list(
            "ownerReferences",
            m.owner_references
                .into_iter()
                .map(owner_reference_to_json)
                .collect(),
        )
        .strings("finalizers", m.finalizers)
        .list(
            "managedFields",
            m.managed_fields
                .into_iter()
                .map(managed_fields_entry_to_json)
                .collect::<Result<Vec<_>>>()?,
        );
    Ok(w.done())
}

fn owner_reference_from_json(r: &Reader) -> Result<OwnerReference> {
    Ok(OwnerReference {
        api_version: r.string("apiVersion")?,
        kind: r.string("kind")?,
        name: r.string("name")?,
        uid: r.string("uid")?,
        controller: r.boolean("controller")?,
        block_owner_deletion: r.boolean("blockOwnerDeletion")?,
    })
}

fn owner_reference_to_json(o: OwnerReference) -> Value {
    let mut w = Writer::new();
    w.str_always("apiVersion", o.api_version)
        .str_always("kind", o.kind)
        .str_always("name", o.name)
        .str_always("uid", o.uid)
        .bool_ptr("controller", o.controller)
        .bool_ptr("blockOwnerDeletion", o.block_owner_deletion);
    w.done()
}

fn managed_fields_entry_from_json(r: &Reader) -> Result<ManagedFieldsEntry> {
    Ok(ManagedFieldsEntry {
        manager: r.string("manager")?,
        operation: r.string("operation")?,
        api_version: r.string("apiVersion")?,
        time: r.time("time")?,
        fields_type: r.string("fieldsType")?,
        // The field set travels as the JSON text kube-apiserver keeps it in.
        fields_v1: r.raw("fieldsV1")?.map(|raw| FieldsV1 { raw: Some(raw) }),
        subresource: r.string("subresource")?,
    })
}

fn managed_fields_entry_to_json(e: ManagedFieldsEntry) -> Result<Value> {
    let mut w = Writer::new();
    w.str("manager", e.manager)
        .str("operation", e.operation)
        .str("apiVersion", e.api_version);
    w.time_ptr("time", e.time)?
        .str("fieldsType", e.fields_type)
        .raw_ptr("fieldsV1", e.fields_v1.map(|f| f.raw.unwrap_or_default()))?
        .str("subresource", e.subresource);
    Ok(w.done())
}

pub fn list_meta_from_json(r: &Reader) -> Result<ListMeta> {
    Ok(ListMeta {
        self_link: r.string("selfLink")?,
        resource_version: r.string("resourceVersion")?,
        r#continue: r.string("continue")?,
        remaining_item_count: r.int64("remainingItemCount")?,
    })
}

/// A `Status` object (an error, or a delete's success) as its message.
pub fn status_from_json(r: &Reader) -> Result<Status> {
    let metadata = match r.object("metadata")? {
        Some(m) => Some(list_meta_from_json(&m.reader()?)?),
        None => Some(ListMeta::default()),
    };
    let details = match r.object("details")? {
        None => None,
        Some(d) => {
            let d = d.reader()?;
            let causes = d
                .items("causes")?
                .iter()
                .map(|c| {
                    let c = c.reader()?;
                    Ok(StatusCause {
                        reason: c.string("reason")?,
                        message: c.string("message")?,
                        field: c.string("field")?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Some(StatusDetails {
                name: d.string("name")?,
                group: d.string("group")?,
                kind: d.string("kind")?,
                uid: d.string("uid")?,
                causes,
                retry_after_seconds: d.int32("retryAfterSeconds")?,
            })
        }
    };
    Ok(Status {
        metadata,
        status: r.string("status")?,
        message: r.string("message")?,
        reason: r.string("reason")?,
        details,
        code: r.int32("code")?,
    })
}

/// DeleteOptions sent in protobuf, as the JSON body a delete reads.
pub fn delete_options_to_json(o: DeleteOptions) -> Value {
    let mut w = Writer::new();
    w.int_ptr("gracePeriodSeconds", o.grace_period_seconds);
    if let Some(p) = o.preconditions {
        let mut pre = Writer::new();
        pre.str_ptr("uid", p.uid)
            .str_ptr("resourceVersion", p.resource_version);
        w.object("preconditions", pre.done());
    }
    w.bool_ptr("orphanDependents", o.orphan_dependents)
        .str_ptr("propagationPolicy", o.propagation_policy)
        .strings("dryRun", o.dry_run)
        .bool_ptr(
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            o.ignore_store_read_error_with_cluster_breaking_potential,
        );
    w.done()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_meta_round_trips() {
        let meta = json!({
            "name": "a", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
            "generation": 3, "creationTimestamp": "2024-01-02T03:04:05Z",
            "deletionTimestamp": "2024-01-02T03:04:06Z", "deletionGracePeriodSeconds": 0,
            "labels": {"a": "b"}, "annotations": {"c": ""},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                "uid": "u-2", "controller": false}],
            "finalizers": ["f"],
            "managedFields": [{"manager": "m", "operation": "Apply", "apiVersion": "v1",
                "time": "2024-01-02T03:04:05Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:a": {}}}, "subresource": "status"}],
        });
        let pb = object_meta_from_json(&Reader::of(&meta, "metadata").unwrap()).unwrap();
        assert_eq!(object_meta_to_json(pb).unwrap(), meta);
    }

    #[test]
    fn zero_values_are_go_zero_values() {
        // What Go sends for a new object: every non-pointer field, empty.
        let pb = ObjectMeta {
            name: Some("x".into()),
            generate_name: Some(String::new()),
            generation: Some(0),
            creation_timestamp: Some(Default::default()),
            ..Default::default()
        };
        assert_eq!(
            object_meta_to_json(pb).unwrap(),
            json!({"name": "x", "creationTimestamp": null})
        );
        let o = owner_reference_to_json(OwnerReference::default());
        assert_eq!(
            o,
            json!({"apiVersion": "", "kind": "", "name": "", "uid": ""})
        );
    }
}
