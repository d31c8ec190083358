//! Property tests: rendering is deterministic, every generated name is a valid DNS-1123
//! name of at most 63 characters, and arbitrary input never panics the engine.

use proptest::prelude::*;
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::names::dns1123_subdomain_problem;
use topograph_engine::{ObjectStore, RenderError, admit_and_render};

const CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");

fn cluster_yaml(name: &str, pools: &[(String, Option<u8>)]) -> String {
    let mut mds = String::new();
    for (pool, replicas) in pools {
        mds.push_str(&format!(
            "      - class: default-worker\n        name: \"{pool}\"\n"
        ));
        if let Some(r) = replicas {
            mds.push_str(&format!("        replicas: {r}\n"));
        }
    }
    format!(
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {{name: \"{name}\", namespace: default}}\nspec:\n  topology:\n    class: quick-start\n    version: v1.30.0\n    workers:\n      machineDeployments:\n{mds}"
    )
}

fn render_json(cluster: &str) -> Result<String, String> {
    let inputs = [
        Input {
            name: "class",
            text: CLASS,
        },
        Input {
            name: "cluster",
            text: cluster,
        },
    ];
    let bundle = load(&inputs, &LoadOptions::default()).map_err(|e| format!("{e:?}"))?;
    let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value));
    let desired = admit_and_render(
        &bundle.clusters[0].value,
        &bundle.cluster_classes[0].value,
        &store,
    )
    .map_err(|e| RenderError::from(e).to_string())?
    .desired;
    serde_json::to_string(&desired.objects()).map_err(|e| e.to_string())
}

/// DNS-1123 labels: what Cluster and pool names are.
fn dns_label(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[a-z]([a-z0-9-]{{0,{}}}[a-z0-9])?", max - 2))
        .expect("valid regex")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rendering_is_deterministic_and_names_are_valid(
        cluster in dns_label(63),
        pools in proptest::collection::btree_map(dns_label(63), proptest::option::of(0u8..10), 0..4),
    ) {
        let pools: Vec<(String, Option<u8>)> = pools.into_iter().collect();
        let yaml = cluster_yaml(&cluster, &pools);
        let first = render_json(&yaml);
        prop_assert_eq!(&first, &render_json(&yaml));
        let objects: Vec<serde_json::Value> = serde_json::from_str(&first.unwrap()).unwrap();
        prop_assert_eq!(objects.len(), 1 + 1 + 3 + 4 * pools.len());
        for object in &objects {
            let name = object["metadata"]["name"].as_str().unwrap_or("");
            prop_assert!(name.len() <= 63, "{} is too long", name);
            prop_assert_eq!(dns1123_subdomain_problem(name), None, "{}", name);
        }
    }

    #[test]
    fn arbitrary_documents_never_panic(
        value in proptest::arbitrary::any::<u8>().prop_flat_map(|_| json_value(3)),
        field in "(metadata|spec|topology|controlPlane|workers|machineDeployments|class|name|replicas|ref)",
    ) {
        // A Cluster and a ClusterClass whose interesting fields hold arbitrary JSON.
        let cluster = serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "c"},
            "spec": {"topology": {"class": "quick-start", "version": "v1.30.0", field.clone(): value.clone()}}
        });
        let _ = render_json(&cluster.to_string());
        let mut class: serde_json::Value = serde_saphyr::from_multiple::<serde_json::Value>(CLASS).unwrap()[0].clone();
        class["spec"][field] = value;
        let text = format!("{}\n", class);
        let inputs = [Input { name: "class", text: &text }, Input { name: "cluster", text: &cluster_yaml("c", &[]) }];
        if let Ok(bundle) = load(&inputs, &LoadOptions::default()) {
            let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value));
            if let (Some(c), Some(cc)) = (bundle.clusters.first(), bundle.cluster_classes.first()) {
                let _ = admit_and_render(&c.value, &cc.value, &store);
            }
        }
    }
}

fn json_value(depth: u32) -> BoxedStrategy<serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-z0-9 .:{}-]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(depth, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}
