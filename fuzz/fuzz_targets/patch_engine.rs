//! Fuzzes the patch engine end to end: the input, read as YAML, becomes the
//! `spec.patches` of the quick-start ClusterClass (and, when it is a mapping with
//! `patches` and `variables`, also the Cluster's variables); the Cluster is then
//! rendered with and without the admission checks. Any panic is a bug; errors are fine.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::{ObjectStore, RenderOptions, render_with};

const CLASS: &str = include_str!("../../examples/quick-start/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../examples/quick-start/cluster.yaml");

fn documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text).unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(fuzzed) = serde_saphyr::from_str::<Value>(text) else {
        return;
    };
    let (patches, variables) = match &fuzzed {
        Value::Object(map) if map.contains_key("patches") => {
            (map.get("patches").cloned(), map.get("variables").cloned())
        }
        other => (Some(other.clone()), None),
    };
    let mut class_docs = documents(CLASS);
    let mut cluster_docs = documents(CLUSTER);
    if let (Some(class), Some(patches)) = (class_docs.first_mut(), patches) {
        class["spec"]["patches"] = patches;
    }
    if let (Some(cluster), Some(variables)) = (cluster_docs.first_mut(), variables) {
        cluster["spec"]["topology"]["variables"] = variables;
    }
    let class_text = serde_json::to_string(&class_docs).unwrap_or_default();
    let cluster_text = serde_json::to_string(&cluster_docs).unwrap_or_default();
    let inputs = [
        Input {
            name: "class",
            text: &class_text,
        },
        Input {
            name: "cluster",
            text: &cluster_text,
        },
    ];
    let Ok(bundle) = load(&inputs, &LoadOptions::default()) else {
        return;
    };
    let (Some(cluster), Some(class)) = (bundle.clusters.first(), bundle.cluster_classes.first())
    else {
        return;
    };
    let store = ObjectStore::new(bundle.objects.iter().map(|o| o.value.clone()));
    for admission_checks in [true, false] {
        let _ = render_with(
            &cluster.value,
            &class.value,
            &store,
            RenderOptions { admission_checks },
        );
    }
});
