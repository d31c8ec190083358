//! Which contract provider kinds implement, read from their CRDs' labels on the
//! in-memory API server: each declaration as the CRD has it, nothing for a kind
//! without a CRD, and read once per kind.

use topograph_api::contract::Contract;
use topograph_kube::{Config, Server};
use topograph_management::{ManagementCluster, crds};

#[tokio::test]
async fn declarations_come_from_the_crds_labels_and_are_read_once() {
    let server = Server::start(Config {
        seed: vec![
            crds::crd_declaring(
                "controlplane.cluster.x-k8s.io",
                "KubeadmControlPlane",
                &["v1beta2", "v1beta1"],
                Contract::V1Beta2,
            ),
            crds::crd(
                "infrastructure.cluster.x-k8s.io",
                "DockerCluster",
                &["v1beta1"],
            ),
        ],
        ..Config::default()
    })
    .await
    .unwrap();
    let api = ManagementCluster::from_kubeconfig_yaml(&server.kubeconfig_yaml())
        .await
        .unwrap();

    let cp = api
        .declared_contracts(
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlane",
        )
        .await
        .unwrap();
    assert_eq!(cp.latest(), Some(Contract::V1Beta2));
    assert_eq!(cp.for_version("v1beta1"), Contract::V1Beta2);
    assert_eq!(cp.newest_version(), Some("v1beta2"));
    let infra = api
        .declared_contracts("infrastructure.cluster.x-k8s.io/v1beta1", "DockerCluster")
        .await
        .unwrap();
    assert_eq!(infra.for_version("v1beta1"), Contract::V1Beta1);
    let none = api
        .declared_contracts("infrastructure.example.com/v1", "Nothing")
        .await
        .unwrap();
    assert!(none.is_empty());
    assert_eq!(none.for_version("v1"), Contract::V1Beta1);

    // Cached per kind, whatever version asks.
    let before = server.counts();
    for api_version in [
        "controlplane.cluster.x-k8s.io/v1beta2",
        "controlplane.cluster.x-k8s.io/v1beta1",
    ] {
        api.declared_contracts(api_version, "KubeadmControlPlane")
            .await
            .unwrap();
    }
    api.declared_contracts("infrastructure.example.com/v1", "Nothing")
        .await
        .unwrap();
    assert_eq!(server.counts().reads(), before.reads());
}
