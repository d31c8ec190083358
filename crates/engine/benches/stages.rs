//! The stages of one render of the quick-start example (a ClusterClass with 7 inline
//! patches, a Cluster with 3 MachineDeployments), each alone, so a change to one stage
//! shows in its own number rather than in the noise of the whole render:
//!
//! * `admission`: the Cluster admitted against its (already admitted) class, as every
//!   render through `render_admitting` does;
//! * `desired`: blueprint, current state and desired state, before any patch;
//! * `variables`: the builtin and user variables every template of the patch request
//!   sees;
//! * `patches`: the class's patches applied to a desired state (its copy made outside
//!   the clock);
//! * `output`: the rendered objects encoded as JSON, as the render service answers.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::admission::{admit_class, admit_cluster};
use topograph_engine::blueprint::Blueprint;
use topograph_engine::current::CurrentState;
use topograph_engine::{ObjectStore, desired, patches, render, variables};

/// The allocator the CLI and the render service run with: most of a render is
/// allocating and freeing small JSON values, so the system allocator would weigh the
/// stages differently from a real render.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../../examples/quick-start/cluster.yaml");

fn bench(c: &mut Criterion) {
    let inputs = [
        Input {
            name: "class",
            text: CLASS,
        },
        Input {
            name: "cluster",
            text: CLUSTER,
        },
    ];
    let bundle = load(&inputs, &LoadOptions::default()).expect("example loads");
    let store = ObjectStore::new(bundle.objects.iter().map(|o| o.value.clone()));
    let cluster = &bundle.clusters[0].value;
    let class = admit_class(bundle.cluster_classes[0].value.clone(), None, &[])
        .expect("the class is valid");
    let mut group = c.benchmark_group("stages");

    group.bench_function("admission", |b| {
        b.iter(|| admit_cluster(black_box(cluster), None, &[&class]))
    });

    let admitted = admit_cluster(cluster, None, &[&class])
        .admitted
        .expect("the Cluster is valid");
    let topology = admitted.topology.as_ref().expect("a topology");
    group.bench_function("desired", |b| {
        b.iter(|| {
            let blueprint = Blueprint::resolve(&class, &store).expect("resolves");
            let current = CurrentState::read(&admitted, &store).expect("reads");
            desired::compute(black_box(&admitted), &blueprint, &current, None).expect("computes")
        })
    });

    let blueprint = Blueprint::resolve(&class, &store).expect("resolves");
    let current = CurrentState::read(&admitted, &store).expect("reads");
    let unpatched = desired::compute(&admitted, &blueprint, &current, None).expect("computes");
    let values = variables::as_given(topology);
    group.bench_function("variables", |b| {
        b.iter(|| {
            patches::request_variables(
                black_box(&admitted),
                topology,
                &blueprint,
                &unpatched,
                &values,
            )
        })
    });

    group.bench_function("patches", |b| {
        b.iter_batched(
            || unpatched.clone(),
            |mut desired| {
                patches::apply(&admitted, topology, &blueprint, &mut desired, &values, None)
                    .expect("patches apply");
                desired
            },
            BatchSize::SmallInput,
        )
    });

    let rendered = render(&admitted, &class, &store).expect("renders");
    group.bench_function("output", |b| {
        b.iter(|| {
            for object in black_box(&rendered.desired).objects() {
                black_box(serde_json::to_vec(object).expect("encodes"));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
