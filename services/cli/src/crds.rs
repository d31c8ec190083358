//! `topograph crds`: the CustomResourceDefinitions a management cluster needs for
//! Cluster API's kinds, topograph's own (rollout policies, class revisions) and the
//! provider kinds the given files use, as one JSON
//! `List` to pipe into `kubectl create -f -` (for `topograph-kube` or a test cluster;
//! real clusters get their CRDs from Cluster API and the providers).

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::json;
use topograph_management::crds;

use crate::inputs::{InputArgs, load_files};

/// Print CRDs for Cluster API's kinds and the provider kinds the files use.
#[derive(Args, Debug)]
pub struct CrdsArgs {
    /// Files with provider templates or objects (YAML or JSON; `-` is stdin).
    #[arg(short = 'f', long = "filename")]
    files: Vec<String>,
    #[command(flatten)]
    input: InputArgs,
    /// The Cluster API release line to imitate: `v1beta2` serves its converted kinds
    /// in v1beta2 (stored) and v1beta1, as Cluster API 1.11 and later install them;
    /// `v1beta1` serves v1beta1 alone, as Cluster API 1.10 and earlier.
    #[arg(long = "cluster-api-storage", value_enum, default_value = "v1beta2")]
    storage: Storage,
}

/// Which version stores Cluster API's kinds.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Storage {
    /// Cluster API 1.11 and later.
    V1beta2,
    /// Cluster API 1.10 and earlier.
    V1beta1,
}

pub fn run(args: &CrdsArgs) -> ExitCode {
    let bundle = match load_files(&args.files, &args.input) {
        Ok(bundle) => bundle,
        Err(code) => return ExitCode::from(code),
    };
    let mut items = match args.storage {
        Storage::V1beta2 => crds::cluster_api(),
        Storage::V1beta1 => crds::cluster_api_v1beta1(),
    };
    items.extend(crds::topograph());
    items.extend(crds::for_objects(bundle.objects.iter().map(|o| &o.value)));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    match serde_json::to_string_pretty(&list) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
