//! `topograph reconcile`: one reconcile of one Cluster against a management cluster.
//!
//! The output is a contract: `-o json` prints
//! `{"created": N, "updated": N, "deleted": N, "writes": N}`; a failed reconcile exits 1
//! with the error on stderr (the same text the Cluster's `TopologyReconciled` condition
//! carries).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use topograph_engine::{Engine, Local};
use topograph_management::ManagementCluster;
use topograph_proto::remote::RemoteEngine;
use topograph_reconcile::reconcile_cluster;

/// Output formats.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Output {
    /// One JSON object.
    Json,
    /// One line for people.
    Text,
}

/// Reconciles one Cluster once: reconciles its ClusterClass if needed, then creates,
/// updates and deletes what its topology says, and reports on its status.
#[derive(Args, Debug)]
pub struct ReconcileArgs {
    #[command(flatten)]
    field_manager: topograph_management::user_agent::FieldManagerArgs,
    /// kubeconfig of the management cluster (its current context is used).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: PathBuf,
    /// The Cluster, as NAMESPACE/NAME.
    #[arg(long)]
    cluster: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    output: Output,
    /// Render through this render service (e.g. http://127.0.0.1:50051) instead of the
    /// engine linked into this binary.
    #[arg(long, env = "TOPOGRAPH_RENDER_SERVICE")]
    render_service: Option<String>,
}

pub fn run(args: &ReconcileArgs) -> ExitCode {
    args.field_manager.install();
    let Some((namespace, name)) = args
        .cluster
        .split_once('/')
        .filter(|(ns, n)| !ns.is_empty() && !n.is_empty() && !n.contains('/'))
    else {
        eprintln!("--cluster: expected NAMESPACE/NAME, got {:?}", args.cluster);
        return ExitCode::from(2);
    };
    crate::block_on(false, async {
        // Warnings unless RUST_LOG asks for more (`topograph_management::reads=debug`
        // lists every read the reconcile makes).
        let _tracing = topograph_telemetry::trace::init_with("topograph-reconcile", "warn");
        let api = match ManagementCluster::from_kubeconfig(&args.kubeconfig).await {
            Ok(api) => api,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        let remote = match args
            .render_service
            .as_deref()
            .map(RemoteEngine::connect_lazy)
        {
            None => None,
            Some(Ok(remote)) => Some(remote),
            Some(Err(e)) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        let engine: &dyn Engine = match &remote {
            Some(remote) => remote,
            None => &Local,
        };
        match reconcile_cluster(&api, engine, namespace, name).await {
            Ok(outcome) => {
                match args.output {
                    Output::Json => match serde_json::to_string(&outcome) {
                        Ok(line) => println!("{line}"),
                        Err(e) => {
                            eprintln!("{e}");
                            return ExitCode::from(2);
                        }
                    },
                    Output::Text => println!(
                        "Cluster {namespace}/{name}: {} created, {} updated, {} deleted, {} writes",
                        outcome.created, outcome.updated, outcome.deleted, outcome.writes
                    ),
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(1)
            }
        }
    })
}
