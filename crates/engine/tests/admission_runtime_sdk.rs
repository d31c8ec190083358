//! Admission over stored objects with Runtime SDK: a class with external patches is
//! refused with the gate off and admitted with it on (the verdict of a remote engine
//! too, which carries only texts), and a Cluster is checked against the variables
//! its class's extensions defined, as listed in the class's status, or only warned
//! about while the class is not reconciled (Cluster API's Cluster webhook).

use serde_json::{Value, json};
use topograph_api::violation::Violation;
use topograph_engine::admission::{
    admit_class_object, admit_cluster_object, refused_for_runtime_sdk, with_runtime_sdk,
};

fn class() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "ClusterClass",
        "metadata": {"name": "cc", "namespace": "ns", "generation": 2},
        "spec": {
            "infrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate", "name": "infra"}},
            "controlPlane": {"ref": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "name": "cp"}},
            "variables": [{"name": "region", "required": false, "schema": {"openAPIV3Schema": {"type": "string"}}}],
            "patches": [{
                "name": "ext",
                "external": {
                    "generateExtension": "generate-patches.my-extension",
                    "discoverVariablesExtension": "discover-variables.my-extension"
                }
            }]
        }
    })
}

/// The class as the ClusterClass controller leaves it once `generation` is reconciled:
/// `imageRepository` (a string, defaulted) discovered from patch `ext`.
fn reconciled(mut class: Value, ready: &str) -> Value {
    class["status"] = json!({
        "observedGeneration": 2,
        "variables": [
            {"name": "imageRepository", "definitionsConflict": false, "definitions": [
                {"from": "ext", "required": false, "schema": {"openAPIV3Schema": {"type": "string", "default": "kindest"}}}
            ]},
            {"name": "region", "definitionsConflict": false, "definitions": [
                {"from": "inline", "required": false, "schema": {"openAPIV3Schema": {"type": "string"}}}
            ]}
        ],
        "v1beta2": {"conditions": [{"type": "VariablesReady", "status": ready, "reason": "x", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    });
    class
}

fn cluster(variables: Value) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns"},
        "spec": {"topology": {"class": "cc", "version": "v1.30.1", "variables": variables}}
    })
}

const GATE: &str = "spec.patches[0].external: Forbidden: patch.external can be used only if the RuntimeSDK feature flag is enabled";

#[test]
fn external_patches_are_admitted_with_runtime_sdk_on() {
    let off = admit_class_object(&class(), None, &[]);
    let texts: Vec<&str> = off
        .violations
        .iter()
        .map(|v| v.description.as_str())
        .collect();
    assert_eq!(texts, [GATE]);
    assert!(refused_for_runtime_sdk(&off));
    let on = with_runtime_sdk(off.clone());
    assert!(on.violations.is_empty());
    assert!(!refused_for_runtime_sdk(&on));

    // A remote engine's verdict has the texts only.
    let mut remote = off;
    remote.errors.clear();
    remote.violations = vec![
        Violation::new("spec.patches[0].external", GATE),
        Violation::new("spec.x", "spec.x: Invalid value: \"y\": something else"),
    ];
    let lifted = with_runtime_sdk(remote);
    assert_eq!(lifted.violations.len(), 1);
    assert_eq!(lifted.violations[0].field, "spec.x");
}

#[test]
fn a_cluster_is_checked_against_the_discovered_variables_of_a_reconciled_class() {
    let stored = reconciled(class(), "True");
    let good = admit_cluster_object(&cluster(json!([])), None, std::slice::from_ref(&stored));
    assert!(good.violations.is_empty(), "{:?}", good.violations);
    assert!(good.warnings.is_empty(), "{:?}", good.warnings);
    // Defaulted from the discovered definition.
    assert_eq!(
        good.object["spec"]["topology"]["variables"],
        json!([{"name": "imageRepository", "value": "kindest"}])
    );

    let bad = admit_cluster_object(
        &cluster(json!([{"name": "imageRepository", "value": 5}])),
        None,
        std::slice::from_ref(&stored),
    );
    let fields: Vec<&str> = bad.violations.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(fields, ["spec.topology.variables[imageRepository].value"]);

    // Without the status the variable is unknown: the spec alone does not define it.
    let unknown = admit_cluster_object(
        &cluster(json!([{"name": "nope", "value": "x"}])),
        None,
        std::slice::from_ref(&stored),
    );
    assert!(
        unknown.violations[0]
            .description
            .contains("variable is not defined"),
        "{:?}",
        unknown.violations
    );
}

#[test]
fn a_class_not_reconciled_yet_is_a_warning_and_the_topology_goes_unchecked() {
    let warning = "Cluster refers to ClusterClass ns/cc, but this ClusterClass hasn't been successfully reconciled. Cluster topology has not been fully validated. Please take a look at the ClusterClass status";
    let behind = {
        let mut c = reconciled(class(), "True");
        c["metadata"]["generation"] = json!(3);
        c
    };
    for stored in [class(), reconciled(class(), "False"), behind] {
        let verdict = admit_cluster_object(
            &cluster(json!([{"name": "imageRepository", "value": 5}])),
            None,
            std::slice::from_ref(&stored),
        );
        assert!(verdict.violations.is_empty(), "{:?}", verdict.violations);
        assert_eq!(verdict.warnings, [warning]);
    }
}
