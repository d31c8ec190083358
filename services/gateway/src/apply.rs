//! `Apply`: admit every object first, then write them in dependency order (templates,
//! classes, Clusters) and queue the Clusters concerned.
//!
//! An object that exists is replaced by the given one, except what others own on it:
//! server fields (uid, resourceVersion, ...), finalizers and owner references the
//! caller does not set, labels and annotations the caller does not set (the caller's
//! win), and on a Cluster the references and endpoint that the topology controller and
//! the providers write (`spec.controlPlaneRef`, `spec.infrastructureRef`,
//! `spec.controlPlaneEndpoint`) unless the caller sets them. Without that a re-apply
//! of the same file would orphan the topology's objects. Admission sees the object
//! exactly as it will be stored.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use tonic::Status;
use topograph_api::convert::{self, Options, Version};
use topograph_api::object::{ObjectExt, ObjectKey};
use topograph_management::ManagementCluster;
use topograph_management::keys::ClusterKey;
use topograph_proto::gateway::v1 as pb;
use topograph_proto::gateway::v1::applied_object::Action;

use crate::objects::{Role, class_of, role};
use crate::state::{State, api_status, clusters_using};
use crate::tenancy::Tenant;
use topograph_api::Violation;
use topograph_proto::violations::invalid;

const METHOD: &str = "Apply";

/// Metadata the server or other controllers own, kept from the stored object unless
/// the caller gives it.
const KEPT_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "finalizers",
    "ownerReferences",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Cluster fields others write.
const KEPT_CLUSTER_SPEC: &[&str] = &[
    "controlPlaneRef",
    "infrastructureRef",
    "controlPlaneEndpoint",
];

/// Metadata that says nothing about what the caller wants, ignored when deciding
/// whether an object changed.
const SERVER_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
];

/// One object of the request.
struct Item {
    /// The request field the objects came in (`objects`, `proposed`).
    list: &'static str,
    index: usize,
    role: Role,
    /// As given.
    given: Value,
    /// As stored now.
    stored: Option<Value>,
    /// What would be written: the given object on top of the stored one, admitted.
    object: Value,
}

impl Item {
    fn field(&self) -> String {
        format!("{}[{}]", self.list, self.index)
    }
}

/// Parses the request's objects, which came in request field `list`; every problem is
/// reported at its path there.
fn parse(list: &'static str, objects: &[Vec<u8>]) -> Result<Vec<Item>, Vec<Violation>> {
    let mut items = Vec::new();
    let mut violations = Vec::new();
    let mut seen: BTreeMap<ObjectKey, usize> = BTreeMap::new();
    for (index, bytes) in objects.iter().enumerate() {
        let at = format!("{list}[{index}]");
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                violations.push(Violation::new(at, "Invalid value: not a JSON object"));
                continue;
            }
            Err(e) => {
                violations.push(Violation::new(at, format!("Invalid value: not JSON: {e}")));
                continue;
            }
        };
        let mut problems = Vec::new();
        for (field, present) in [
            ("apiVersion", !value.api_version().is_empty()),
            ("kind", !value.kind().is_empty()),
            ("metadata.name", !value.name().is_empty()),
            ("metadata.namespace", !value.namespace().is_empty()),
        ] {
            if !present {
                problems.push(Violation::new(format!("{at}.{field}"), "Required value"));
            }
        }
        let Some(role) = role(&value) else {
            if problems.is_empty() {
                problems.push(Violation::new(
                    format!("{at}.kind"),
                    format!(
                        "Unsupported value: {:?}: Apply takes ClusterClasses, their templates (kinds ending in Template), Clusters and RolloutPolicies",
                        value.kind()
                    ),
                ));
            }
            violations.extend(problems);
            continue;
        };
        if !problems.is_empty() {
            violations.extend(problems);
            continue;
        }
        if let Some(first) = seen.insert(ObjectKey::of(&value), index) {
            violations.push(Violation::new(
                at,
                format!("Duplicate value: the same object as {list}[{first}]"),
            ));
            continue;
        }
        items.push(Item {
            list,
            index,
            role,
            object: value.clone(),
            given: value,
            stored: None,
        });
    }
    if violations.is_empty() {
        Ok(items)
    } else {
        Err(violations)
    }
}

fn metadata_mut(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let map = object.as_object_mut()?;
    map.entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// The given object on top of the stored one (see the module documentation).
pub fn merge_onto_stored(stored: &Value, given: &Value, role: Role) -> Value {
    let mut out = given.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove("status");
    }
    let stored_meta = stored.get("metadata").and_then(Value::as_object);
    if let (Some(meta), Some(stored_meta)) = (metadata_mut(&mut out), stored_meta) {
        for key in KEPT_METADATA {
            if !meta.contains_key(*key)
                && let Some(v) = stored_meta.get(*key)
            {
                meta.insert((*key).to_string(), v.clone());
            }
        }
        for key in ["labels", "annotations"] {
            let mut merged = stored_meta
                .get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if let Some(given) = meta.get(key).and_then(Value::as_object) {
                merged.extend(given.clone());
            }
            if !merged.is_empty() {
                meta.insert(key.to_string(), Value::Object(merged));
            }
        }
    }
    if role == Role::Cluster
        && let Some(stored_spec) = stored.get("spec").and_then(Value::as_object)
        && let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut)
    {
        for key in KEPT_CLUSTER_SPEC {
            if !spec.contains_key(*key)
                && let Some(v) = stored_spec.get(*key)
            {
                spec.insert((*key).to_string(), v.clone());
            }
        }
    }
    out
}

/// An object without what the server adds, to compare intents.
fn comparable(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove("status");
    }
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in SERVER_METADATA {
            meta.remove(*key);
        }
        for key in ["labels", "annotations", "finalizers", "ownerReferences"] {
            if meta.get(key).is_some_and(|v| {
                v.as_object().is_some_and(Map::is_empty) || v.as_array().is_some_and(Vec::is_empty)
            }) {
                meta.remove(key);
            }
        }
    }
    out
}

/// Whether writing `object` over `stored` would change nothing the caller controls.
///
/// Cluster API's own kinds are compared as v1beta2, the version today's Cluster API
/// stores them in (on older ones the difference is only text): a v1beta1 file's `timeout: 300s` and the `5m0s` the stored object
/// reads back as are one value, and so are a v1beta1 reference's namespace and its
/// absence. Compared as text they differ, and the replace that follows changes
/// nothing stored but the writer's managed-fields time, a new resourceVersion all the
/// same (kube-apiserver judges the write in the request's version, too).
pub fn unchanged(stored: &Value, object: &Value) -> bool {
    comparable(&as_stored(stored)) == comparable(&as_stored(object))
}

/// `object` in the version Cluster API stores its kinds in; as given when it is not
/// one of them or does not convert (then the write reports why).
fn as_stored(object: &Value) -> std::borrow::Cow<'_, Value> {
    let no_data = Options {
        conversion_data: false,
        ..Options::default()
    };
    match convert::version_of(object) {
        // Without conversion data: what v1beta2 cannot hold, the server does not keep.
        Some(Version::V1Beta1) => convert::convert(object, Version::V1Beta2, &no_data)
            .map_or(std::borrow::Cow::Borrowed(object), std::borrow::Cow::Owned),
        _ => std::borrow::Cow::Borrowed(object),
    }
}

fn applied(item: &Item, action: Action, object: &Value) -> pb::AppliedObject {
    pb::AppliedObject {
        api_version: object.api_version().to_string(),
        kind: object.kind().to_string(),
        namespace: object.namespace().to_string(),
        name: object.name().to_string(),
        action: action as i32,
        object: serde_json::to_vec(object).unwrap_or_default(),
        index: u32::try_from(item.index).unwrap_or(u32::MAX),
    }
}

/// A request's objects parsed, authorised, merged onto what is stored and admitted:
/// what Apply would write (Plan and Impact start from the same), in write order.
pub(crate) struct Prepared {
    /// The management cluster.
    pub api: std::sync::Arc<ManagementCluster>,
    items: Vec<Item>,
    /// Admission's warnings.
    pub warnings: Vec<String>,
}

impl Prepared {
    /// The objects as they would be written.
    pub fn objects(&self) -> Vec<Value> {
        self.items.iter().map(|i| i.object.clone()).collect()
    }
}

/// Prepares `objects`, which came in request field `list`, for `method` on management
/// cluster `mc`. A ClusterClass update is checked against the Clusters using it only
/// with `class_against_users` (Impact reports those Clusters one by one instead of
/// refusing).
pub(crate) async fn prepare(
    state: &State,
    tenant: &Tenant,
    method: &str,
    mc: &str,
    (list, objects): (&'static str, &[Vec<u8>]),
    class_against_users: bool,
) -> Result<Prepared, Status> {
    tenant.authorize(method, mc, None)?;
    if objects.is_empty() {
        return Err(invalid(vec![Violation::new(
            list,
            "Required value: at least one object",
        )]));
    }
    let mut items = parse(list, objects).map_err(invalid)?;
    // Every namespace is authorised before anything is read.
    for item in &items {
        tenant.authorize(method, mc, Some(item.given.namespace()))?;
    }
    for item in &items {
        if item.role == Role::Cluster
            && let Some((namespace, _)) = class_of(&item.given)
        {
            tenant.authorize(method, mc, Some(&namespace))?;
        }
    }
    let api = state.cluster(mc)?;

    // A kind the management cluster does not serve would fail its write halfway
    // through the objects; refuse it before anything is read or written (or, in the
    // embedded mode, install its CRD first).
    let mut unserved = Vec::new();
    let mut to_install = Vec::new();
    for item in &items {
        let given = &item.given;
        let served = api
            .serves(given.api_version(), given.kind())
            .await
            .map_err(|e| api_status("reading the management cluster's API discovery", e))?;
        if served {
            continue;
        }
        if state.install_missing_crds && method == METHOD {
            to_install.push(given.clone());
            continue;
        }
        unserved.push(Violation::new(
            format!("{}.kind", item.field()),
            format!(
                "Unsupported value: {:?}: management cluster {mc:?} does not serve {} in {}; its CustomResourceDefinition must be installed first (the provider's installation brings it; for a test cluster, `topograph crds -f <file> | kubectl create -f -`)",
                given.kind(),
                given.kind(),
                given.api_version()
            ),
        ));
    }
    if !to_install.is_empty() {
        install_crds(&api, &to_install).await?;
    }
    if !unserved.is_empty() {
        return Err(invalid(unserved));
    }

    for item in &mut items {
        let given = &item.given;
        item.stored = api
            .get(
                given.api_version(),
                given.kind(),
                given.namespace(),
                given.name(),
            )
            .await
            .map_err(|e| {
                api_status(
                    &format!(
                        "reading {} {}/{}",
                        given.kind(),
                        given.namespace(),
                        given.name()
                    ),
                    e,
                )
            })?;
        if let Some(stored) = &item.stored {
            item.object = merge_onto_stored(stored, &item.given, item.role);
        }
    }

    let (violations, warnings) = admit(state, &api, &mut items, class_against_users).await?;
    if !violations.is_empty() {
        return Err(invalid(violations));
    }
    items.sort_by_key(|i| (i.role, i.index));
    Ok(Prepared {
        api,
        items,
        warnings,
    })
}

/// The Apply RPC.
#[tracing::instrument(
    name = "apply",
    skip_all,
    fields(
        tenant = %tenant.name,
        management_cluster = %request.management_cluster,
        objects = request.objects.len(),
        dry_run = request.dry_run,
    )
)]
pub async fn apply(
    state: &State,
    tenant: &Tenant,
    request: pb::ApplyRequest,
) -> Result<pb::ApplyResponse, Status> {
    let mc = request.management_cluster.as_str();
    let Prepared {
        api,
        items,
        warnings,
    } = prepare(
        state,
        tenant,
        METHOD,
        mc,
        ("objects", &request.objects),
        true,
    )
    .await?;
    let mut response = pb::ApplyResponse {
        objects: Vec::new(),
        warnings,
    };

    if request.dry_run {
        for item in &items {
            let action = match &item.stored {
                None => Action::Created,
                Some(stored) if unchanged(stored, &item.object) => Action::Unchanged,
                Some(_) => Action::Updated,
            };
            response.objects.push(applied(item, action, &item.object));
        }
        return Ok(response);
    }

    let mut keys = BTreeSet::new();
    for (n, item) in items.iter().enumerate() {
        let (action, written) = write(&api, item).await.map_err(|status| {
            let done: Vec<String> = response
                .objects
                .iter()
                .map(|o| format!("{} {}/{}", o.kind, o.namespace, o.name))
                .collect();
            Status::new(
                status.code(),
                format!(
                    "{} ({} of {} objects written before: {})",
                    status.message(),
                    n,
                    items.len(),
                    if done.is_empty() {
                        "none".to_string()
                    } else {
                        done.join(", ")
                    }
                ),
            )
        })?;
        if action != Action::Unchanged {
            match item.role {
                Role::Cluster => {
                    keys.insert(ClusterKey::new(mc, written.namespace(), written.name()));
                }
                Role::Class => match clusters_using(&api, written.namespace(), written.name()).await {
                    Ok(users) => keys.extend(
                        users
                            .iter()
                            .map(|c| ClusterKey::new(mc, c.namespace(), c.name())),
                    ),
                    Err(e) => response.warnings.push(format!(
                        "the Clusters of ClusterClass {}/{} could not be listed to queue them ({e}); the appliers' watches will pick them up",
                        written.namespace(),
                        written.name()
                    )),
                },
                // The appliers' rollout driver reads the policy at its next step.
                Role::Template | Role::Policy => {}
            }
        }
        tracing::info!(
            tenant = %tenant.name,
            management_cluster = mc,
            kind = written.kind(),
            object = %format!("{}/{}", written.namespace(), written.name()),
            action = action.as_str_name(),
            "applied"
        );
        response.objects.push(applied(item, action, &written));
    }
    let warnings = state.enqueue(&keys).await;
    response.warnings.extend(warnings);
    Ok(response)
}

/// Admits every object; returns the violations (prefixed by the request field) and the
/// warnings. Clusters are checked against the classes of this request where it has
/// them, so a class and its Clusters can be applied together.
async fn admit(
    state: &State,
    api: &ManagementCluster,
    items: &mut [Item],
    class_against_users: bool,
) -> Result<(Vec<Violation>, Vec<String>), Status> {
    let mut runtime_sdk: Option<bool> = None;
    let mut violations = Vec::new();
    let mut warnings = Vec::new();
    let proposed_classes: Vec<Value> = items
        .iter()
        .filter(|i| i.role == Role::Class)
        .map(|i| i.object.clone())
        .collect();
    // Stored classes read for the request's Clusters: many Clusters of one class read it
    // once.
    let mut stored_classes: BTreeMap<(String, String), Option<Value>> = BTreeMap::new();
    for n in 0..items.len() {
        if items[n].role == Role::Policy {
            let problems = admit_policy(api, &items[n], items).await?;
            let field = items[n].field();
            violations.extend(problems.into_iter().map(|v| v.prefixed(&field)));
        }
    }
    for item in items.iter_mut() {
        let verdict = match item.role {
            Role::Template | Role::Policy => continue,
            Role::Class => {
                // Only an update is checked against the Clusters using the class.
                let users = match &item.stored {
                    Some(_) if class_against_users => {
                        clusters_using(api, item.object.namespace(), item.object.name())
                            .await
                            .map_err(|e| api_status("listing the Clusters using the class", e))?
                    }
                    _ => Vec::new(),
                };
                let verdict = state
                    .engine
                    .admit_class(&item.object, item.stored.as_ref(), &users)
                    .await
                    .map_err(|e| Status::unavailable(format!("admitting {}: {e}", item.field())))?;
                // Only a class refused for an external patch asks whether the
                // management cluster uses Runtime SDK, once per request.
                if !topograph_engine::admission::refused_for_runtime_sdk(&verdict) {
                    verdict
                } else {
                    let on = match runtime_sdk {
                        Some(on) => on,
                        None => {
                            let on = crate::extensions::RuntimeSdk::on(api)
                                .await
                                .map_err(|e| api_status("reading the ExtensionConfigs", e))?;
                            *runtime_sdk.insert(on)
                        }
                    };
                    if on {
                        topograph_engine::admission::with_runtime_sdk(verdict)
                    } else {
                        verdict
                    }
                }
            }
            Role::Cluster => {
                let mut classes = Vec::new();
                if let Some((namespace, name)) = class_of(&item.object) {
                    match proposed_classes
                        .iter()
                        .find(|c| c.namespace() == namespace && c.name() == name)
                    {
                        Some(c) => classes.push(c.clone()),
                        None => {
                            let key = (namespace, name);
                            if !stored_classes.contains_key(&key) {
                                let read = api
                                    .get(
                                        crate::objects::API_VERSION,
                                        "ClusterClass",
                                        &key.0,
                                        &key.1,
                                    )
                                    .await
                                    .map_err(|e| {
                                        api_status("reading the Cluster's ClusterClass", e)
                                    })?;
                                stored_classes.insert(key.clone(), read);
                            }
                            classes.extend(stored_classes.get(&key).cloned().flatten());
                        }
                    }
                }
                state
                    .engine
                    .admit_cluster(&item.object, item.stored.as_ref(), &classes)
                    .await
                    .map_err(|e| Status::unavailable(format!("admitting {}: {e}", item.field())))?
            }
        };
        let field = item.field();
        violations.extend(verdict.violations.into_iter().map(|v| v.prefixed(&field)));
        warnings.extend(
            verdict
                .warnings
                .into_iter()
                .map(|w| format!("{field}: {w}")),
        );
        item.object = verdict.object;
    }
    Ok((violations, warnings))
}

/// A RolloutPolicy's problems (decision 0030): its spec's, and those its class's
/// Clusters show (a selector matching none of them, two waves selecting one). The
/// class and its Clusters may come in the same request.
async fn admit_policy(
    api: &ManagementCluster,
    policy: &Item,
    items: &[Item],
) -> Result<Vec<Violation>, Status> {
    use topograph_reconcile::rollout::policy::{self, Member};
    let (namespace, name) = (policy.object.namespace(), policy.object.name());
    let class_in_request = items.iter().any(|i| {
        i.role == Role::Class && i.object.namespace() == namespace && i.object.name() == name
    });
    if !class_in_request
        && api
            .get(crate::objects::API_VERSION, "ClusterClass", namespace, name)
            .await
            .map_err(|e| api_status("reading the policy's ClusterClass", e))?
            .is_none()
    {
        return Ok(vec![Violation::new(
            "metadata.name",
            format!(
                "Not found: {name:?}: a RolloutPolicy is named like the ClusterClass it rolls out, and there is no ClusterClass {namespace}/{name}"
            ),
        )]);
    }
    let mut clusters: BTreeMap<String, Value> = clusters_using(api, namespace, name)
        .await
        .map_err(|e| api_status("listing the Clusters of the policy's class", e))?
        .into_iter()
        .map(|c| (format!("{}/{}", c.namespace(), c.name()), c))
        .collect();
    for item in items.iter().filter(|i| i.role == Role::Cluster) {
        let key = format!("{}/{}", item.object.namespace(), item.object.name());
        if class_of(&item.object) == Some((namespace.to_string(), name.to_string())) {
            clusters.insert(key, item.object.clone());
        } else {
            clusters.remove(&key);
        }
    }
    let members: Vec<Member> = clusters
        .into_iter()
        .map(|(key, c)| Member {
            key,
            labels: c.labels().clone().into_iter().collect(),
        })
        .collect();
    Ok(match policy::admit(&policy.object, &members) {
        Ok(_) => Vec::new(),
        Err(errors) => Violation::from_field_errors(&errors),
    })
}

/// Installs CRDs for the provider kinds of `objects` (each object's kind and, for a
/// template, the kind it stamps out) and waits until discovery serves them.
async fn install_crds(api: &ManagementCluster, objects: &[Value]) -> Result<(), Status> {
    for crd in topograph_management::crds::for_objects(objects) {
        match api.create(&crd).await {
            Ok(_) => {}
            // Installed meanwhile (another request, or the stamped kind of a template
            // whose CRD exists): what matters is that it is served.
            Err(e) if e.has_code(409) => {}
            Err(e) => return Err(api_status(&format!("installing {}", crd.name()), e)),
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    for object in objects {
        loop {
            let served = api
                .serves(object.api_version(), object.kind())
                .await
                .map_err(|e| api_status("reading the management cluster's API discovery", e))?;
            if served {
                break;
            }
            if std::time::Instant::now() > deadline {
                return Err(Status::unavailable(format!(
                    "the CustomResourceDefinition for {} in {} was installed but is not served yet",
                    object.kind(),
                    object.api_version()
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// Creates or replaces one object; a conflict (someone wrote in between) is retried
/// once on top of the newer version.
async fn write(api: &ManagementCluster, item: &Item) -> Result<(Action, Value), Status> {
    let what = format!(
        "writing {} {}/{}",
        item.object.kind(),
        item.object.namespace(),
        item.object.name()
    );
    let mut stored = item.stored.clone();
    for attempt in 0..2 {
        let result = match &stored {
            None => {
                let mut object = item.object.clone();
                if let Some(meta) = metadata_mut(&mut object) {
                    meta.remove("resourceVersion");
                }
                api.create(&object).await.map(|v| (Action::Created, v))
            }
            Some(current) => {
                let object = merge_onto_stored(current, &item.object, item.role);
                if unchanged(current, &object) {
                    return Ok((Action::Unchanged, current.clone()));
                }
                let mut object = object;
                if let (Some(meta), Some(rv)) = (
                    metadata_mut(&mut object),
                    current.pointer("/metadata/resourceVersion").cloned(),
                ) {
                    meta.insert("resourceVersion".to_string(), rv);
                }
                // The server is the judge: what it stores may not be byte for byte what
                // was sent (a version it converts to and back, defaults), and an update
                // that changes nothing keeps the resourceVersion.
                let rv = current.pointer("/metadata/resourceVersion").cloned();
                api.replace(&object).await.map(|v| {
                    if v.pointer("/metadata/resourceVersion").cloned() == rv {
                        (Action::Unchanged, v)
                    } else {
                        (Action::Updated, v)
                    }
                })
            }
        };
        match result {
            Ok(done) => return Ok(done),
            Err(e) if attempt == 0 && e.has_code(409) => {
                let o = &item.object;
                stored = api
                    .get(o.api_version(), o.kind(), o.namespace(), o.name())
                    .await
                    .map_err(|e| api_status(&what, e))?;
            }
            Err(e) => return Err(api_status(&what, e)),
        }
    }
    Err(Status::aborted(format!(
        "{what}: the object kept changing; retry"
    )))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parse_reports_every_problem_with_its_field() {
        let objects = vec![
            b"{".to_vec(),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a", "namespace": "n"}}).to_string().into_bytes(),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "a"}}).to_string().into_bytes(),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "b", "namespace": "n"}}).to_string().into_bytes(),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "b", "namespace": "n"}}).to_string().into_bytes(),
        ];
        let violations = parse("objects", &objects).err().unwrap();
        let fields: Vec<&str> = violations.iter().map(|v| v.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "objects[0]",
                "objects[1].kind",
                "objects[2].metadata.namespace",
                "objects[4]"
            ]
        );
        // Plan and Impact carry their objects in `proposed`: paths name that field.
        let violations = parse("proposed", &objects).err().unwrap();
        assert_eq!(violations[0].field, "proposed[0]");
        assert!(
            violations[3]
                .description
                .ends_with("the same object as proposed[3]")
        );
    }

    #[test]
    fn merging_keeps_what_others_own() {
        let stored = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "a", "namespace": "n", "uid": "u", "resourceVersion": "7",
                         "labels": {"x": "1", "y": "old"}, "finalizers": ["f"]},
            "spec": {"controlPlaneRef": {"name": "cp"}, "topology": {"version": "v1.30.0"}},
            "status": {"phase": "Provisioned"}
        });
        let given = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "a", "namespace": "n", "labels": {"y": "new"}},
            "spec": {"topology": {"version": "v1.31.0"}}
        });
        let merged = merge_onto_stored(&stored, &given, Role::Cluster);
        assert_eq!(merged["metadata"]["uid"], "u");
        assert_eq!(merged["metadata"]["finalizers"], json!(["f"]));
        assert_eq!(merged["metadata"]["labels"], json!({"x": "1", "y": "new"}));
        assert_eq!(merged["spec"]["controlPlaneRef"], json!({"name": "cp"}));
        assert_eq!(merged["spec"]["topology"]["version"], "v1.31.0");
        assert!(merged.get("status").is_none());
        assert!(!unchanged(&stored, &merged));

        // Applying the stored content again changes nothing.
        let same = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "a", "namespace": "n", "labels": {"y": "old"}},
            "spec": {"topology": {"version": "v1.30.0"}}
        });
        assert!(unchanged(
            &stored,
            &merge_onto_stored(&stored, &same, Role::Cluster)
        ));
        // A template keeps no spec fields from the stored one.
        let template = merge_onto_stored(
            &json!({"kind": "XTemplate", "spec": {"a": 1, "b": 2}}),
            &json!({"kind": "XTemplate", "spec": {"a": 1}}),
            Role::Template,
        );
        assert_eq!(template["spec"], json!({"a": 1}));
    }

    #[test]
    fn a_class_is_compared_as_the_server_stores_it() {
        // What a v1beta2 management cluster gives back for a v1beta1 class written
        // with `300s` and namespaced references.
        let stored = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
            "metadata": {"name": "c", "namespace": "n", "resourceVersion": "9"},
            "spec": {
                "infrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                    "kind": "DockerClusterTemplate", "name": "t", "namespace": "n"}},
                "controlPlane": {
                    "ref": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                        "kind": "KubeadmControlPlaneTemplate", "name": "cp", "namespace": "n"},
                    "machineHealthCheck": {"unhealthyConditions": [
                        {"type": "Ready", "status": "False", "timeout": "5m0s"}]}
                }
            },
            "status": {"observedGeneration": 1}
        });
        let mut given = stored.clone();
        given["spec"]["controlPlane"]["machineHealthCheck"]["unhealthyConditions"][0]["timeout"] =
            json!("300s");
        for r in ["/spec/infrastructure/ref", "/spec/controlPlane/ref"] {
            given
                .pointer_mut(r)
                .unwrap()
                .as_object_mut()
                .unwrap()
                .remove("namespace");
        }
        let merged = merge_onto_stored(&stored, &given, Role::Class);
        assert_ne!(comparable(&stored), comparable(&merged), "differs as text");
        assert!(unchanged(&stored, &merged));

        given["spec"]["controlPlane"]["machineHealthCheck"]["unhealthyConditions"][0]["timeout"] =
            json!("301s");
        assert!(!unchanged(
            &stored,
            &merge_onto_stored(&stored, &given, Role::Class)
        ));
    }
}
