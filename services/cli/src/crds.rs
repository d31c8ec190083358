//! `topograph crds`: the CustomResourceDefinitions a management cluster needs for
//! Cluster API's kinds and for the provider kinds the given files use, as one JSON
//! `List` to pipe into `kubectl create -f -` (for `topograph-kube` or a test cluster;
//! real clusters get their CRDs from Cluster API and the providers).

use std::process::ExitCode;

use clap::Args;
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
}

pub fn run(args: &CrdsArgs) -> ExitCode {
    let bundle = match load_files(&args.files, &args.input) {
        Ok(bundle) => bundle,
        Err(code) => return ExitCode::from(code),
    };
    let mut items = crds::cluster_api();
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
