//! Fixtures the engine's table tests share: the provider templates their ClusterClasses
//! reference under the same names, and the loading of YAML documents into what a
//! render takes.

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
