//! `topograph convert`: prints every document of the input files, Cluster API's kinds
//! (ClusterClass, Cluster, MachineDeployment, MachineHealthCheck, MachinePool) in
//! `cluster.x-k8s.io/v1beta1` or `v1beta2`, everything else as it was, in input order.
//! `kind: List` documents are printed as their items.

use std::collections::HashMap;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::Value;
use topograph_api::convert::{self, Options, Version};
use topograph_api::load::parse_documents;
use topograph_api::object::{ObjectExt, ObjectKey, group_of};

use crate::inputs::{EXIT_INVALID, SubstituteArgs, read_files};
use crate::render::{Output, print_objects};

/// A version of Cluster API's group, as the command line names it.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ApiVersion {
    /// `cluster.x-k8s.io/v1beta1`.
    V1beta1,
    /// `cluster.x-k8s.io/v1beta2`.
    V1beta2,
}

impl ApiVersion {
    /// The version it names.
    pub fn version(self) -> Version {
        match self {
            ApiVersion::V1beta1 => Version::V1Beta1,
            ApiVersion::V1beta2 => Version::V1Beta2,
        }
    }
}

/// Arguments of `topograph convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// A YAML or JSON file (`-` for standard input); repeat for more.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// The version to write Cluster API's kinds in.
    #[arg(long = "to", value_enum)]
    to: ApiVersion,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "yaml")]
    output: Output,
    #[command(flatten)]
    substitute: SubstituteArgs,
}

/// The apiVersion of every group and kind among `objects` (the last one seen wins):
/// what v1beta2's version-less contract references become in v1beta1.
pub fn api_versions(objects: &[Value]) -> HashMap<(String, String), String> {
    objects
        .iter()
        .map(|o| {
            (
                (group_of(o.api_version()).to_string(), o.kind().to_string()),
                o.api_version().to_string(),
            )
        })
        .collect()
}

/// Runs the command; prints the documents on stdout and problems on stderr.
pub fn run(args: &ConvertArgs) -> ExitCode {
    let texts = match read_files(&args.files, &args.substitute) {
        Ok(texts) => texts,
        Err(code) => return ExitCode::from(code),
    };
    let mut invalid = false;
    let mut documents = Vec::new();
    for (name, text) in &texts {
        let (docs, errors) = parse_documents(name, text);
        for e in &errors {
            eprintln!("{e}");
        }
        invalid |= !errors.is_empty();
        documents.extend(docs);
    }
    if invalid {
        return ExitCode::from(EXIT_INVALID);
    }
    let values: Vec<Value> = documents.iter().map(|d| d.value.clone()).collect();
    let known = api_versions(&values);
    let lookup =
        |group: &str, kind: &str| known.get(&(group.to_string(), kind.to_string())).cloned();
    let options = Options {
        conversion_data: true,
        api_version_of: &lookup,
    };
    let mut out = Vec::with_capacity(documents.len());
    for document in &documents {
        match convert::convert(&document.value, args.to.version(), &options) {
            Ok(converted) => out.push(converted),
            Err(e) => {
                eprintln!(
                    "{}: {}: {e}",
                    document.source,
                    ObjectKey::of(&document.value)
                );
                invalid = true;
            }
        }
    }
    if invalid {
        return ExitCode::from(EXIT_INVALID);
    }
    print_objects(&out, args.output)
}
