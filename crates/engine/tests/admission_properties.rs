//! Property tests of admission: validating any mutation of a valid ClusterClass or
//! Cluster never panics; defaulting is idempotent and keeps a valid Cluster valid.

use proptest::prelude::*;
use serde_json::{Value, json};
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::validate::{default_cluster, validate_cluster, validate_cluster_class};

const CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../../examples/quick-start/cluster.yaml");

fn documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text).unwrap_or_default()
}

/// Leaf values a mutation writes.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-zA-Z0-9 ./*%{}-]{0,12}".prop_map(Value::String),
        Just(json!({})),
        Just(json!([])),
        Just(json!("{{ .x")),
        Just(json!("v1.2.3")),
        Just(json!("50%")),
    ]
}

/// Sets `value` at the `n`-th node (in a fixed walk order) of `doc`.
fn mutate(doc: &mut Value, mut n: usize, value: Value) {
    fn walk(v: &mut Value, n: &mut usize, value: &Value) -> bool {
        if *n == 0 {
            *v = value.clone();
            return true;
        }
        *n -= 1;
        match v {
            Value::Object(map) => map.values_mut().any(|c| walk(c, n, value)),
            Value::Array(items) => items.iter_mut().any(|c| walk(c, n, value)),
            _ => false,
        }
    }
    walk(doc, &mut n, &value);
}

fn load_pair(class: &[Value], cluster: &[Value]) -> Option<topograph_api::load::Bundle> {
    let class = serde_json::to_string(class).ok()?;
    let cluster = serde_json::to_string(cluster).ok()?;
    load(
        &[
            Input {
                name: "class",
                text: &class,
            },
            Input {
                name: "cluster",
                text: &cluster,
            },
        ],
        &LoadOptions::default(),
    )
    .ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn validating_mutations_never_panics(
        class_node in 0usize..400,
        cluster_node in 0usize..60,
        class_value in leaf(),
        cluster_value in leaf(),
    ) {
        let mut class = documents(CLASS);
        let mut cluster = documents(CLUSTER);
        if let Some(first) = class.first_mut() {
            mutate(first, class_node, class_value);
        }
        if let Some(first) = cluster.first_mut() {
            mutate(first, cluster_node, cluster_value);
        }
        let Some(bundle) = load_pair(&class, &cluster) else { return Ok(()); };
        let classes: Vec<_> = bundle.cluster_classes.iter().map(|c| &c.value).collect();
        for c in &classes {
            let clusters: Vec<_> = bundle.clusters.iter().map(|c| &c.value).collect();
            let _ = validate_cluster_class(c, Some(c), &clusters);
        }
        for loaded in &bundle.clusters {
            if let Ok(defaulted) = default_cluster(&loaded.value, classes.first().copied()) {
                let _ = validate_cluster(&defaulted, Some(&loaded.value), &classes);
            }
        }
    }

    #[test]
    fn defaulting_keeps_a_valid_cluster_valid(version in "1\\.(2[5-9]|3[0-3])\\.(0|[1-9][0-9]?)") {
        let cluster = CLUSTER.replace("version: v1.30.0", &format!("version: {version}"));
        let bundle = load(
            &[Input { name: "class", text: CLASS }, Input { name: "cluster", text: &cluster }],
            &LoadOptions::default(),
        ).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let class = &bundle.cluster_classes[0].value;
        let once = default_cluster(&bundle.clusters[0].value, Some(class))
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let twice = default_cluster(&once, Some(class))
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert_eq!(&once, &twice);
        prop_assert!(once.topology.as_ref().is_some_and(|t| t.version.starts_with('v')));
        let v = validate_cluster(&once, None, &[class]);
        prop_assert!(v.errors.is_empty(), "{:?}", v.errors);
    }
}
