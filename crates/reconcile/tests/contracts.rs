//! Provider kinds whose CRDs declare the v1beta2 contract: the ControlPlane is written
//! by that contract (contract-versioned machine template reference, timeouts in
//! seconds), a converged Cluster costs no writes, template rotation renames the
//! reference where the contract keeps it, and provisioning and upgrades read the
//! v1beta2 contract's status (the simulated providers report nothing else).

mod support;

use serde_json::{Value, json};
use support::Env;
use topograph_api::contract::Contract;

const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

/// The quick-start Cluster with control plane timeouts and readiness gates.
fn quick_start() -> (Vec<Value>, Value) {
    let (class, mut cluster) = support::quick_start();
    let control_plane = &mut cluster["spec"]["topology"]["controlPlane"];
    control_plane["nodeDrainTimeout"] = json!("10m");
    control_plane["nodeDeletionTimeout"] = json!("30s");
    control_plane["readinessGates"] = json!([{"conditionType": "Ready"}]);
    (class, cluster)
}

#[tokio::test]
async fn a_v1beta2_contract_control_plane_is_written_by_its_contract_and_converges() {
    let (class, cluster) = quick_start();
    let env = Env::start_declaring(class, vec![cluster], None, Contract::V1Beta2).await;
    env.converge("dev").await;

    let cp = env.control_plane("dev").await;
    let template = &cp["spec"]["machineTemplate"];
    let reference = &template["spec"]["infrastructureRef"];
    assert_eq!(
        reference,
        &json!({
            "apiGroup": "infrastructure.cluster.x-k8s.io",
            "kind": "DockerMachineTemplate",
            "name": reference["name"],
        })
    );
    assert_eq!(
        template["spec"]["deletion"],
        json!({"nodeDrainTimeoutSeconds": 600, "nodeDeletionTimeoutSeconds": 30})
    );
    assert_eq!(
        template["spec"]["readinessGates"],
        json!([{"conditionType": "Ready"}])
    );
    for v1beta1_field in [
        "infrastructureRef",
        "nodeDrainTimeout",
        "nodeDeletionTimeout",
        "readinessGates",
    ] {
        assert!(
            template.get(v1beta1_field).is_none(),
            "{v1beta1_field}: {cp}"
        );
    }
    let name = reference["name"].as_str().unwrap();
    assert!(
        env.get(INFRA, "DockerMachineTemplate", name)
            .await
            .is_some(),
        "the reference names the machine template copy"
    );

    // Converged: the v1beta2 contract's shapes read back as written.
    let before = env.server.counts();
    let again = env.reconcile("dev").await.unwrap();
    assert_eq!(again, topograph_reconcile::Outcome::default());
    assert_eq!(env.server.counts().writes(), before.writes());
}

#[tokio::test]
async fn a_machine_template_rotation_renames_the_reference_where_the_contract_keeps_it() {
    let (class, cluster) = quick_start();
    let env = Env::start_declaring(class, vec![cluster], None, Contract::V1Beta2).await;
    env.converge("dev").await;
    let old = env.control_plane("dev").await["spec"]["machineTemplate"]["spec"]
        ["infrastructureRef"]["name"]
        .clone();

    // The class's control plane machine template changes: the copy is rotated.
    let template = env
        .get(INFRA, "DockerMachineTemplate", "quick-start-control-plane")
        .await
        .unwrap();
    env.other
        .merge_patch(
            &template,
            &json!({"spec": {"template": {"spec": {"extraMounts": [{"containerPath": "/x", "hostPath": "/x"}]}}}}),
        )
        .await
        .unwrap();
    env.converge("dev").await;

    let cp = env.control_plane("dev").await;
    let new = &cp["spec"]["machineTemplate"]["spec"]["infrastructureRef"]["name"];
    assert_ne!(new, &old, "rotated");
    assert!(
        cp["spec"]["machineTemplate"]
            .get("infrastructureRef")
            .is_none(),
        "{cp}"
    );
    let copy = env
        .get(INFRA, "DockerMachineTemplate", new.as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(
        copy["spec"]["template"]["spec"]["extraMounts"][0]["containerPath"],
        "/x"
    );
    assert!(
        env.get(INFRA, "DockerMachineTemplate", old.as_str().unwrap())
            .await
            .is_none(),
        "the old copy is gone"
    );
}

async fn reconcile_until(env: &Env, what: &str, mut done: impl AsyncFnMut(&Env) -> bool) {
    for _ in 0..100 {
        env.reconcile("dev").await.unwrap();
        if done(env).await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    }
    panic!(
        "{what}: not reached; condition {}",
        env.condition("dev").await
    );
}

#[tokio::test]
async fn provisioning_and_upgrades_read_the_v1beta2_contracts_status() {
    let (class, cluster) = quick_start();
    let env = Env::start_declaring(
        class,
        vec![cluster],
        Some(std::time::Duration::from_millis(50)),
        Contract::V1Beta2,
    )
    .await;
    reconcile_until(&env, "provisioned", async |env| {
        env.cluster("dev").await["status"]["phase"] == "Provisioned"
    })
    .await;
    // The providers reported in the v1beta2 contract's fields alone.
    let cluster = env.cluster("dev").await;
    let infra = &cluster["spec"]["infrastructureRef"];
    let infra = env
        .get(
            INFRA,
            infra["kind"].as_str().unwrap(),
            infra["name"].as_str().unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        infra["status"],
        json!({"initialization": {"provisioned": true}})
    );
    let cp = env.control_plane("dev").await;
    assert_eq!(
        cp["status"]["initialization"]["controlPlaneInitialized"],
        true
    );
    assert_eq!(cp["status"]["upToDateReplicas"], 3);
    for v1beta1_field in ["ready", "initialized", "updatedReplicas"] {
        assert!(cp["status"].get(v1beta1_field).is_none(), "{cp}");
    }

    env.edit_topology(json!({"version": "v1.31.0"})).await;
    let mut seen_cp_first = false;
    reconcile_until(&env, "upgraded", async |env| {
        let cp = env.control_plane("dev").await;
        let mut old = 0;
        for md in ["md-0", "md-1", "md-2"] {
            old += usize::from(env.md_version(md).await == "v1.30.0");
        }
        if cp["spec"]["version"] == "v1.31.0" && old == 3 {
            seen_cp_first = true;
        }
        old == 0 && env.condition("dev").await["status"] == "True"
    })
    .await;
    assert!(seen_cp_first, "the control plane moved first");
    assert_eq!(
        env.control_plane("dev").await["status"]["version"],
        "v1.31.0"
    );
    env.converge("dev").await;
}
