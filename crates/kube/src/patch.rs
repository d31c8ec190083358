//! Applying PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and
//! strategic merge patch, which is applied as a merge patch (see [`PatchType::Strategic`]).

use crate::status::ApiError;
use crate::store::PatchType;
use serde_json::Value;

/// How deeply a patched object may nest. A request body's depth is bounded when it is
/// decoded, but many JSON patch operations can build a deeper document step by step;
/// the recursive walks every write goes through (pruning, validation, managed fields,
/// encoding) must not run out of stack on one.
pub const MAX_DEPTH: usize = 512;

/// Applies `patch` to `doc` in place; bad patches are 400, failing JSON patch operations
/// (a `test` that does not hold, a missing path) 422 as the API server answers.
pub fn apply(doc: &mut Value, patch_type: PatchType, patch: &Value) -> Result<(), ApiError> {
    apply_unbounded(doc, patch_type, patch)?;
    if depth(doc) > MAX_DEPTH {
        return Err(ApiError::bad_request(format!(
            "the patched object nests deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(())
}

/// How deeply `value` nests (a scalar is 1), without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

fn apply_unbounded(doc: &mut Value, patch_type: PatchType, patch: &Value) -> Result<(), ApiError> {
    match patch_type {
        PatchType::Merge | PatchType::Strategic => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            json_patch::merge(doc, patch);
            Ok(())
        }
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(doc, &ops).map_err(|e| ApiError {
                code: 422,
                reason: "Invalid",
                message: format!(
                    "the server rejected our request due to an error in our request: {e}"
                ),
                details: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_patch_may_not_nest_the_object_without_bound() {
        let mut doc = json!({});
        let mut path = String::new();
        let mut refused = None;
        for _ in 0..MAX_DEPTH + 2 {
            path.push_str("/a");
            let op = json!([{"op": "add", "path": path, "value": {}}]);
            if let Err(e) = apply(&mut doc, PatchType::Json, &op) {
                refused = Some(e);
                break;
            }
        }
        let refused = refused.expect("refused before it nests without bound");
        assert_eq!(refused.code, 400);
        assert!(depth(&doc) <= MAX_DEPTH + 1);
    }

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut doc = json!({"a": {"b": 1, "c": 2}, "l": [1, 2], "k": "v"});
        apply(
            &mut doc,
            PatchType::Merge,
            &json!({"a": {"b": null, "d": 3}, "l": [3], "n": {"x": null}}),
        )
        .unwrap();
        assert_eq!(
            doc,
            json!({"a": {"c": 2, "d": 3}, "l": [3], "k": "v", "n": {}})
        );
        let again = doc.clone();
        apply(
            &mut doc,
            PatchType::Strategic,
            &json!({"a": {"b": null, "d": 3}, "l": [3]}),
        )
        .unwrap();
        assert_eq!(doc, again, "re-applying is idempotent");
        assert_eq!(
            apply(&mut doc, PatchType::Merge, &json!([1]))
                .unwrap_err()
                .code,
            400
        );
    }

    #[test]
    fn json_patch_follows_rfc_6902() {
        let mut doc = json!({"spec": {"replicas": 1, "list": ["a"]}});
        let ops = json!([
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/replicas", "value": 2},
            {"op": "add", "path": "/spec/list/-", "value": "b"},
        ]);
        apply(&mut doc, PatchType::Json, &ops).unwrap();
        assert_eq!(doc, json!({"spec": {"replicas": 2, "list": ["a", "b"]}}));
        let failing = json!([{"op": "test", "path": "/spec/replicas", "value": 1}]);
        assert_eq!(
            apply(&mut doc, PatchType::Json, &failing).unwrap_err().code,
            422
        );
        assert_eq!(
            apply(&mut doc, PatchType::Json, &json!({"op": "x"}))
                .unwrap_err()
                .code,
            400
        );
    }
}
