//! Renders the quick-start example (a Cluster with three MachineDeployments): from
//! parsed inputs, and from the raw YAML including loading.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::{ObjectStore, render};

const CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../../examples/quick-start/cluster.yaml");

fn inputs() -> [Input<'static>; 2] {
    [
        Input {
            name: "class",
            text: CLASS,
        },
        Input {
            name: "cluster",
            text: CLUSTER,
        },
    ]
}

fn bench(c: &mut Criterion) {
    let bundle = load(&inputs(), &LoadOptions::default()).expect("example loads");
    let store = ObjectStore::new(bundle.objects.iter().map(|o| o.value.clone()));
    let cluster = &bundle.clusters[0].value;
    let class = &bundle.cluster_classes[0].value;
    c.bench_function("render quick-start (parsed)", |b| {
        b.iter(|| render(black_box(cluster), black_box(class), &store).expect("renders"))
    });
    c.bench_function("render quick-start (from YAML)", |b| {
        b.iter(|| {
            let bundle = load(black_box(&inputs()), &LoadOptions::default()).expect("loads");
            let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value));
            render(
                &bundle.clusters[0].value,
                &bundle.cluster_classes[0].value,
                &store,
            )
            .expect("renders")
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
