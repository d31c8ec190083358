//! Renders the quick-start example (a Cluster with three MachineDeployments): from
//! parsed inputs (admission included), admitted inputs (the render alone), and from
//! the raw YAML including loading.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::admission::{admit_class, admit_cluster};
use topograph_engine::{ObjectStore, admit_and_render, render};

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
        b.iter(|| admit_and_render(black_box(cluster), black_box(class), &store).expect("renders"))
    });
    // The render alone, as the render service runs it once the class is cached and the
    // Cluster admitted.
    let admitted_class = admit_class(class.clone(), None, &[]).expect("the class is valid");
    let admitted = admit_cluster(cluster, None, &[&admitted_class])
        .admitted
        .expect("the Cluster is valid");
    c.bench_function("render quick-start (admitted)", |b| {
        b.iter(|| {
            render(black_box(&admitted), black_box(&admitted_class), &store).expect("renders")
        })
    });
    c.bench_function("render quick-start (from YAML)", |b| {
        b.iter(|| {
            let bundle = load(black_box(&inputs()), &LoadOptions::default()).expect("loads");
            let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value));
            admit_and_render(
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
