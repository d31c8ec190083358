//! Renders the quick-start example many times, for profilers that count instructions
//! (`valgrind --tool=callgrind`, `perf stat -e instructions`), whose counts do not
//! depend on what else the machine is doing. Usage: `render_loop [ITERATIONS]
//! [--no-admission]`; the second form admits the class and the Cluster once and renders
//! the admitted pair, as the render service does once its class cache is warm.

use std::process::ExitCode;

use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::admission::{admit_class, admit_cluster};
use topograph_engine::{ObjectStore, admit_and_render, render};

const CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../../examples/quick-start/cluster.yaml");

fn main() -> ExitCode {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let admit_each_time = !std::env::args().any(|a| a == "--no-admission");
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
    let Ok(bundle) = load(&inputs, &LoadOptions::default()) else {
        eprintln!("the example does not load");
        return ExitCode::FAILURE;
    };
    let store = ObjectStore::new(bundle.objects.iter().map(|o| o.value.clone()));
    let (Some(cluster), Some(class)) = (bundle.clusters.first(), bundle.cluster_classes.first())
    else {
        eprintln!("the example has no Cluster or ClusterClass");
        return ExitCode::FAILURE;
    };
    let admitted_class = match admit_class(class.value.clone(), None, &[]) {
        Ok(admitted) => admitted,
        Err(errors) => {
            eprintln!("the class is refused: {errors:?}");
            return ExitCode::FAILURE;
        }
    };
    let Some(admitted) = admit_cluster(&cluster.value, None, &[&admitted_class]).admitted else {
        eprintln!("the Cluster is refused");
        return ExitCode::FAILURE;
    };
    let mut objects = 0;
    for _ in 0..iterations {
        let rendered = if admit_each_time {
            admit_and_render(&cluster.value, &class.value, &store)
                .map_err(|e| topograph_engine::RenderError::from(e).to_string())
        } else {
            render(&admitted, &admitted_class, &store).map_err(|e| e.to_string())
        };
        match rendered {
            Ok(rendered) => objects += rendered.desired.objects().len(),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{iterations} renders, {objects} objects");
    ExitCode::SUCCESS
}
