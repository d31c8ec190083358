//! `topograph`: the command line of the topology engine.
//!
//! Exit codes are a contract: 0 success, 1 invalid input (the problems on stderr, one
//! per line), 2 usage or I/O errors.

mod bench;
mod client;
mod convert;
mod crds;
mod extensions;
mod inputs;
mod reconcile;
mod render;
mod up;
mod validate;

use std::process::ExitCode;

/// Rendering allocates and frees many small JSON values; mimalloc halves what the
/// system allocator costs there (see the render service).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// Keeps fleets of Kubernetes clusters in the shape their ClusterClass says.
#[derive(Parser, Debug)]
#[command(name = "topograph", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the objects a Cluster's topology consists of.
    Render(render::RenderArgs),
    /// Check ClusterClasses and Clusters against Cluster API's admission rules.
    Validate(validate::ValidateArgs),
    /// Print documents with Cluster API's kinds converted to cluster.x-k8s.io/v1beta1
    /// or v1beta2 (losslessly: what a version cannot hold rides in an annotation).
    Convert(convert::ConvertArgs),
    /// Print CRDs for Cluster API's kinds and the provider kinds the files use.
    Crds(crds::CrdsArgs),
    /// Reconcile one Cluster against a management cluster, once.
    Reconcile(reconcile::ReconcileArgs),
    /// Measure the in-process engine.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Run gateway, applier and engine in one process with an in-memory management
    /// cluster (simulated providers) preloaded with the quick-start example.
    Up(up::UpArgs),
    #[command(flatten)]
    Client(client::ClientCommand),
}

/// Runs `work` to completion on a Tokio runtime (all threads with `multi_thread`, else
/// the calling thread's alone); a runtime that cannot start is a usage-level failure.
fn block_on(multi_thread: bool, work: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    let mut builder = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    match builder.enable_all().build() {
        Ok(runtime) => runtime.block_on(work),
        Err(e) => {
            eprintln!("starting the runtime: {e}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    topograph_management::user_agent::set("topograph", env!("CARGO_PKG_VERSION"));
    let cli = Cli::parse();
    match cli.command {
        Command::Render(args) => render::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Reconcile(args) => reconcile::run(&args),
        Command::Crds(args) => crds::run(&args),
        Command::Bench(command) => bench::run(&command),
        Command::Up(args) => up::run(&args),
        Command::Client(command) => client::run(&command),
    }
}
