//! Applying PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and
//! strategic merge patch, which is applied as a merge patch (see [`PatchType::Strategic`]).

use crate::status::ApiError;
use crate::store::PatchType;
use serde_json::Value;

/// Applies `patch` to `doc` in place; bad patches are 400, failing JSON patch operations
/// (a `test` that does not hold, a missing path) 422 as the API server answers.
pub fn apply(doc: &mut Value, patch_type: PatchType, patch: &Value) -> Result<(), ApiError> {
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
