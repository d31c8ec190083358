//! Fixtures the engine's table tests share: the provider templates their ClusterClasses
//! reference under the same names, and the loading of YAML documents into what a
//! render takes.

// Each test binary uses some of these.
#![allow(dead_code)]

use topograph_api::load::{Input, LoadError, LoadOptions, load};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::ObjectStore;

/// Provider templates the test classes reference with the same content: the
/// infrastructure cluster (`infra`), the worker machines (`workers`, image `worker`)
/// and their bootstrap config (`boot`).
pub const TEMPLATES: &str = r#"
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerClusterTemplate
metadata: {name: infra, namespace: ns}
spec: {template: {spec: {loadBalancer: {}}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata: {name: workers, namespace: ns}
spec: {template: {spec: {image: worker}}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata: {name: boot, namespace: ns}
spec: {template: {spec: {joinConfiguration: {}}}}
"#;

/// A loaded Cluster, its ClusterClass, and every other object as a store.
pub struct Fixture {
    pub cluster: Cluster,
    pub class: ClusterClass,
    pub store: ObjectStore,
}

/// Loads `(name, text)` documents together with [`TEMPLATES`]; the names are the
/// ones load errors give.
pub fn load_fixture(docs: &[(&str, &str)]) -> Result<Fixture, Vec<LoadError>> {
    let inputs: Vec<Input<'_>> = docs
        .iter()
        .chain(&[("templates.yaml", TEMPLATES)])
        .map(|&(name, text)| Input { name, text })
        .collect();
    let bundle = load(&inputs, &LoadOptions::default())?;
    Ok(Fixture {
        cluster: bundle.clusters[0].value.clone(),
        class: bundle.cluster_classes[0].value.clone(),
        store: ObjectStore::new(bundle.objects.into_iter().map(|o| o.value)),
    })
}

const QUICK_START_V1BETA2_CLASS: &str =
    include_str!("../../../../examples/quick-start-v1beta2/clusterclass.yaml");
const QUICK_START_V1BETA2_CLUSTER: &str =
    include_str!("../../../../examples/quick-start-v1beta2/cluster.yaml");

/// The control plane that exists: KubeadmControlPlane `dev-cp` at v1.30.0, settled.
const SETTLED_CONTROL_PLANE: &str = r#"
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: dev-cp
  namespace: default
  generation: 1
  labels: {cluster.x-k8s.io/cluster-name: dev, topology.cluster.x-k8s.io/owned: ""}
spec: {version: v1.30.0, replicas: 3}
status: {version: v1.30.0, observedGeneration: 1, replicas: 3, updatedReplicas: 3}
"#;

/// The v1beta2 quick-start with `spec_prefix` (indented class spec fields) at the top
/// of its class's spec, and its Cluster at `version` referencing the settled control
/// plane `dev-cp` at v1.30.0.
pub fn quick_start_v1beta2(spec_prefix: &str, version: &str) -> Fixture {
    let class = QUICK_START_V1BETA2_CLASS.replacen("spec:\n", &format!("spec:\n{spec_prefix}"), 1);
    let cluster = QUICK_START_V1BETA2_CLUSTER
        .replace("version: v1.30.0", &format!("version: {version}"))
        .replacen(
            "  topology:\n",
            "  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: dev-cp}\n  topology:\n",
            1,
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
        Input {
            name: "current.yaml",
            text: SETTLED_CONTROL_PLANE,
        },
    ];
    let bundle = load(&inputs, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
    Fixture {
        cluster: bundle.clusters[0].value.clone(),
        class: bundle.cluster_classes[0].value.clone(),
        store: ObjectStore::new(bundle.objects.into_iter().map(|o| o.value)),
    }
}
