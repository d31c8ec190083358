//! What a v1beta2 class and topology say about a MachineDeployment's rollout and
//! remediation, and where it lands: `rollout` (a topology's replaces the class's as a
//! whole, `after` included), `deletion.order` and the health check's
//! `remediation.maxInFlight` (the topology's over the class's), and the control
//! plane's own `rollout.after`, at the path its contract has.

use serde_json::{Value, json};
use topograph_api::contract::{Contract, Declared};
use topograph_api::convert::{self, Options, Version};
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::{DesiredState, ObjectStore, admit_and_render};

const CLASS: &str = include_str!("../../../examples/quick-start-v1beta2/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../../examples/quick-start-v1beta2/cluster.yaml");

fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the example has {from:?}");
    text.replacen(from, to, 1)
}

fn render() -> DesiredState {
    render_with(Vec::new())
}

/// [`render`], with `extra` objects (CRDs) among the inputs.
fn render_with(extra: Vec<Value>) -> DesiredState {
    let class = edit(
        CLASS,
        "      class: default-worker\n      healthCheck:\n        checks:",
        "      class: default-worker\n      deletion: {order: Oldest}\n      rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}\n      healthCheck:\n        remediation: {maxInFlight: 2}\n        checks:",
    );
    let cluster = edit(
        CLUSTER,
        "        name: md-0\n",
        "        name: md-0\n        rollout: {after: \"2026-01-01T00:00:00Z\"}\n",
    );
    let cluster = edit(
        &cluster,
        "        name: md-1\n",
        "        name: md-1\n        deletion: {order: Newest}\n",
    );
    let cluster = edit(
        &cluster,
        "    controlPlane:\n",
        "    controlPlane:\n      rollout: {after: \"2026-02-01T00:00:00Z\"}\n",
    );
    let inputs = [
        Input {
            name: "class.yaml",
            text: &class,
        },
        Input {
            name: "cluster.yaml",
            text: &cluster,
        },
    ];
    let bundle = load(&inputs, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
    let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value).chain(extra));
    admit_and_render(
        &bundle.clusters[0].value,
        &bundle.cluster_classes[0].value,
        &store,
    )
    .unwrap_or_else(|e| panic!("{e:?}"))
    .desired
}

fn machine_deployment<'a>(desired: &'a DesiredState, topology_name: &str) -> &'a Value {
    &desired
        .machine_deployments
        .iter()
        .find(|md| md.topology_name == topology_name)
        .unwrap_or_else(|| panic!("{topology_name}"))
        .object
}

fn v1beta2(object: &Value) -> Value {
    let options = Options {
        conversion_data: false,
        ..Options::default()
    };
    convert::convert(object, Version::V1Beta2, &options).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn rollout_deletion_order_and_remediation_reach_the_machine_deployments() {
    let desired = render();
    // (topology name, v1beta2 spec.rollout, spec.deletion.order)
    let cases = [
        // The topology's rollout replaces the class's: no class strategy.
        ("md-0", json!({"after": "2026-01-01T00:00:00Z"}), "Oldest"),
        // The class's strategy; the topology's deletion order.
        (
            "md-1",
            json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}),
            "Newest",
        ),
        (
            "md-2",
            json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}),
            "Oldest",
        ),
    ];
    for (name, rollout, order) in cases {
        let md = v1beta2(machine_deployment(&desired, name));
        assert_eq!(md["spec"]["rollout"], rollout, "{name}: {md}");
        assert_eq!(md["spec"]["deletion"]["order"], order, "{name}");
        // The class's maxInFlight goes to the MachineDeployment (even with md-1's
        // check switched off), never to the MachineHealthCheck.
        assert_eq!(md["spec"]["remediation"]["maxInFlight"], 2, "{name}");
    }
    for md in &desired.machine_deployments {
        if let Some(check) = &md.health_check {
            assert!(
                check.pointer("/spec/remediation/maxInFlight").is_none(),
                "{check}"
            );
        }
    }
}

#[test]
fn the_control_plane_gets_its_own_rollout_after_where_its_contract_has_it() {
    // (contract the KubeadmControlPlane CRD declares, where the time goes, where not)
    let cases = [
        (None, "/spec/rolloutAfter", "/spec/rollout"),
        (
            Some(Contract::V1Beta1),
            "/spec/rolloutAfter",
            "/spec/rollout",
        ),
        (
            Some(Contract::V1Beta2),
            "/spec/rollout/after",
            "/spec/rolloutAfter",
        ),
    ];
    for (contract, at, not_at) in cases {
        let extra = contract
            .map(|c| {
                Declared::default().with(c, &["v1beta1"]).to_crd(
                    "controlplane.cluster.x-k8s.io",
                    "KubeadmControlPlane",
                    "kubeadmcontrolplanes",
                )
            })
            .into_iter()
            .collect();
        let cp = render_with(extra).control_plane.object;
        assert_eq!(
            cp.pointer(at),
            Some(&json!("2026-02-01T00:00:00Z")),
            "{contract:?}"
        );
        assert_eq!(cp.pointer(not_at), None, "{contract:?}: {cp}");
    }
}
