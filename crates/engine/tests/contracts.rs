//! The desired ControlPlane is written by the contract its kind's CRD declares, and the
//! current one read by it: the quick-start rendered with and without a CRD that puts
//! `KubeadmControlPlane` on the v1beta2 contract.

use serde_json::{Value, json};
use topograph_api::contract::{Contract, Declared};
use topograph_api::load::{Input, LoadOptions, load};
use topograph_api::object::ObjectExt;
use topograph_engine::{ObjectStore, admit_and_render};

const CP_GROUP: &str = "controlplane.cluster.x-k8s.io";

fn quick_start() -> (String, String) {
    let read = |file: &str| {
        std::fs::read_to_string(format!(
            "{}/../../examples/quick-start/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    // Timeouts and readiness gates on the control plane, which the contracts place
    // differently.
    let cluster = read("cluster.yaml").replace(
        "    controlPlane:\n      replicas: 3\n",
        "    controlPlane:\n      replicas: 3\n      nodeDrainTimeout: 10m\n      nodeDeletionTimeout: 30s\n      readinessGates: [{conditionType: Ready}]\n",
    );
    assert!(cluster.contains("nodeDrainTimeout"), "fixture edited");
    (read("clusterclass.yaml"), cluster)
}

fn control_plane_crd(contract: Contract) -> Value {
    Declared::default().with(contract, &["v1beta1"]).to_crd(
        CP_GROUP,
        "KubeadmControlPlane",
        "kubeadmcontrolplanes",
    )
}

/// The desired ControlPlane, with `extra` objects among the inputs.
fn render_control_plane(extra: Vec<Value>) -> Value {
    let (class, cluster) = quick_start();
    let bundle = load(
        &[
            Input {
                name: "clusterclass.yaml",
                text: &class,
            },
            Input {
                name: "cluster.yaml",
                text: &cluster,
            },
        ],
        &LoadOptions::default(),
    )
    .unwrap();
    let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value).chain(extra));
    let rendered = admit_and_render(
        &bundle.clusters[0].value,
        &bundle.cluster_classes[0].value,
        &store,
    )
    .unwrap();
    assert!(
        store
            .unread()
            .iter()
            .all(|o| o.kind() != "CustomResourceDefinition")
    );
    rendered.desired.control_plane.object
}

#[test]
fn without_a_declaration_the_control_plane_is_written_by_the_v1beta1_contract() {
    for extra in [vec![], vec![control_plane_crd(Contract::V1Beta1)]] {
        let cp = render_control_plane(extra);
        let template = &cp["spec"]["machineTemplate"];
        assert_eq!(
            template["infrastructureRef"]["apiVersion"],
            "infrastructure.cluster.x-k8s.io/v1beta1"
        );
        assert_eq!(template["nodeDrainTimeout"], "10m0s");
        assert_eq!(template["nodeDeletionTimeout"], "30s");
        assert_eq!(
            template["readinessGates"],
            json!([{"conditionType": "Ready"}])
        );
        assert!(template.get("spec").is_none(), "{template}");
    }
}

#[test]
fn a_v1beta2_contract_control_plane_gets_a_contract_versioned_reference_and_seconds() {
    let cp = render_control_plane(vec![control_plane_crd(Contract::V1Beta2)]);
    let template = &cp["spec"]["machineTemplate"];
    let name = template["spec"]["infrastructureRef"]["name"].clone();
    assert!(
        name.as_str().is_some_and(|n| n.starts_with("dev-")),
        "{template}"
    );
    assert_eq!(
        template["spec"],
        json!({
            "infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io",
                "kind": "DockerMachineTemplate",
                "name": name,
            },
            "deletion": {"nodeDrainTimeoutSeconds": 600, "nodeDeletionTimeoutSeconds": 30},
            "readinessGates": [{"conditionType": "Ready"}],
        })
    );
    // Nothing at the v1beta1 contract's places; the machines' metadata stays where both
    // contracts keep it.
    for gone in [
        "infrastructureRef",
        "nodeDrainTimeout",
        "nodeDeletionTimeout",
        "readinessGates",
    ] {
        assert!(template.get(gone).is_none(), "{gone}: {template}");
    }
    assert!(template["metadata"]["labels"].is_object());
}
