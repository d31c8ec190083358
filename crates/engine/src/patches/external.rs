//! External patches (Runtime SDK): the request items as Cluster API builds them for
//! its GeneratePatches and ValidateTopology hooks, the call through the caller's
//! [`Extensions`], and the generated JSON / JSON merge patches applied to the items.
//!
//! The items are the ones inline patches see ([`super::request`]); uids are the item's
//! position, so a render is reproducible (Cluster API draws random ones).

use serde_json::{Map, Value};
use topograph_api::model::{Cluster, Patch};
use topograph_runtime::Extensions;
use topograph_runtime::catalog::Hook;
use topograph_runtime::hooks::{
    GeneratePatchesRequest, GeneratePatchesRequestItem, GeneratePatchesResponse, HolderReference,
    PatchType, TypeMeta, ValidateTopologyRequest, ValidateTopologyRequestItem, Variable,
};

use super::builtin;
use super::json_patch;
use super::request::Item;

/// The uid of the item at `index`.
pub fn uid(index: usize) -> String {
    format!("00000000-0000-4000-8000-{index:012x}")
}

/// Variables as the hooks carry them: `builtin` first, then the others by name.
fn variables(map: &Map<String, Value>) -> Vec<Variable> {
    let mut out: Vec<Variable> = map
        .iter()
        .filter(|(name, _)| *name == builtin::NAME)
        .chain(map.iter().filter(|(name, _)| *name != builtin::NAME))
        .map(|(name, value)| Variable {
            name: name.clone(),
            value: value.clone(),
        })
        .collect();
    out.dedup_by(|a, b| a.name == b.name);
    out
}

fn holder(cluster: &Cluster, item: &Item) -> HolderReference {
    HolderReference {
        api_version: item.holder.api_version.clone(),
        kind: item.holder.kind.clone(),
        namespace: cluster.namespace.clone(),
        name: item.holder.name.clone(),
        field_path: item.holder.field_path.clone(),
    }
}

/// The GeneratePatches request for the items as they are now.
pub fn generate_request(
    cluster: &Cluster,
    globals: &Map<String, Value>,
    items: &[Item],
    patch: &Patch,
) -> GeneratePatchesRequest {
    GeneratePatchesRequest {
        type_meta: TypeMeta::of(&Hook::GeneratePatches.request_kind()),
        settings: settings(patch),
        variables: variables(globals),
        items: items
            .iter()
            .enumerate()
            .map(|(index, item)| GeneratePatchesRequestItem {
                uid: uid(index),
                holder_reference: holder(cluster, item),
                object: item.object.clone(),
                variables: variables(&item.variables),
            })
            .collect(),
    }
}

/// The ValidateTopology request for the patched items.
pub fn validate_request(
    cluster: &Cluster,
    globals: &Map<String, Value>,
    items: &[Item],
    patch: &Patch,
) -> ValidateTopologyRequest {
    ValidateTopologyRequest {
        type_meta: TypeMeta::of(&Hook::ValidateTopology.request_kind()),
        settings: settings(patch),
        variables: variables(globals),
        items: items
            .iter()
            .map(|item| ValidateTopologyRequestItem {
                holder_reference: holder(cluster, item),
                object: item.object.clone(),
                variables: variables(&item.variables),
            })
            .collect(),
    }
}

fn settings(patch: &Patch) -> std::collections::BTreeMap<String, String> {
    patch
        .external
        .as_ref()
        .and_then(|e| e.settings.clone())
        .unwrap_or_default()
}

/// Calls the patch's GeneratePatches extension.
pub fn generate(
    extensions: &dyn Extensions,
    handler: &str,
    cluster: &Cluster,
    request: &GeneratePatchesRequest,
) -> Result<GeneratePatchesResponse, String> {
    extensions
        .generate_patches(handler, &cluster.namespace, &cluster.name, request)
        .map_err(|e| e.message)
}

/// What one generated patch does to one item.
pub enum Applied {
    /// A JSON patch: its operations.
    Operations(Vec<json_patch::Operation>),
    /// A JSON merge patch: the item's template as it became.
    Merged(Value),
}

/// Decodes one response item's patch against the item's template: the operations of a
/// JSON patch (applied by the caller), or the merged template.
pub fn decode(patch_type: &PatchType, patch: &[u8], template: &Value) -> Result<Applied, String> {
    match patch_type {
        PatchType::JSONPatch => json_patch::decode_document(patch)
            .map(Applied::Operations)
            .map_err(|e| {
                format!("failed to apply patch: error decoding json patch (RFC6902): {e}")
            }),
        PatchType::JSONMergePatch => json_patch::merge_patch(template, patch)
            .map(Applied::Merged)
            .map_err(|e| {
                format!("failed to apply patch: error applying json merge patch (RFC7386): {e}")
            }),
        PatchType::Other(other) => Err(format!(
            "failed to apply patch to template: unknown patch type {other:?}"
        )),
    }
}
