//! Renders the quick-start example many times, for profilers that count instructions
//! (`valgrind --tool=callgrind`, `perf stat -e instructions`), whose counts do not
//! depend on what else the machine is doing. Usage: `render_loop [ITERATIONS]
//! [--no-admission]`; the second form renders as the render service does once it has
//! admitted the class and the Cluster itself.

use std::process::ExitCode;

use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::{ObjectStore, RenderOptions, render_with};

const CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../../examples/quick-start/cluster.yaml");

fn main() -> ExitCode {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let options = RenderOptions {
        admission_checks: !std::env::args().any(|a| a == "--no-admission"),
    };
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
    let mut objects = 0;
    for _ in 0..iterations {
        match render_with(&cluster.value, &class.value, &store, options) {
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
