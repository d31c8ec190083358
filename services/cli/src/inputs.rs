//! Reading the manifests a command is given: files (or `-` for standard input),
//! clusterctl-style `${NAME}` substitution from `--set` and `--env`, and loading into a
//! bundle. Shared by every command so they read input the same way.

use std::collections::BTreeMap;
use std::io::Read;

use clap::Args;
use topograph_api::envsubst;
use topograph_api::load::{self, Bundle, Input, LoadOptions};

/// Exit code for invalid input.
pub const EXIT_INVALID: u8 = 1;
/// Exit code for usage and I/O errors.
pub const EXIT_USAGE: u8 = 2;

/// Placeholder substitution and namespace options.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Namespace for objects that have none (default: the Clusters' namespace).
    #[arg(short = 'n', long = "namespace")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub substitute: SubstituteArgs,
}

/// clusterctl-style placeholder substitution.
#[derive(Args, Debug, Clone)]
pub struct SubstituteArgs {
    /// Substitute `${NAME}` placeholders (clusterctl style) with this value; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Substitute `${NAME}` placeholders from the environment (`--set` wins).
    #[arg(long = "env")]
    pub env: bool,
}

pub(crate) fn read_file(name: &str) -> std::io::Result<String> {
    if name == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(name)
    }
}

/// Reads, substitutes and loads `files`. On failure the problems are already printed
/// and the exit code is returned.
pub fn load_files(files: &[String], args: &InputArgs) -> Result<Bundle, u8> {
    let texts = read_files(files, &args.substitute)?;
    let inputs: Vec<Input<'_>> = texts
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    let options = LoadOptions {
        namespace: args.namespace.clone(),
    };
    load::load(&inputs, &options).map_err(|errors| {
        for e in errors {
            eprintln!("{e}");
        }
        EXIT_INVALID
    })
}

/// Reads `files` (`-` is standard input) and substitutes their `${NAME}` placeholders
/// when asked to: (name, text) in the order given. On failure the problems are already
/// printed and the exit code is returned.
pub fn read_files(files: &[String], args: &SubstituteArgs) -> Result<Vec<(String, String)>, u8> {
    let mut values = BTreeMap::new();
    if args.env {
        values.extend(std::env::vars());
    }
    for pair in &args.set {
        let Some((name, value)) = pair.split_once('=') else {
            eprintln!("error: --set {pair:?}: expected NAME=VALUE");
            return Err(EXIT_USAGE);
        };
        values.insert(name.to_string(), value.to_string());
    }
    let substitute = args.env || !args.set.is_empty();
    let mut texts = Vec::new();
    for name in files {
        match read_file(name) {
            Ok(text) => texts.push((name.clone(), text)),
            Err(e) => {
                eprintln!("error: {name}: {e}");
                return Err(EXIT_USAGE);
            }
        }
    }
    if substitute {
        let mut invalid = false;
        for (name, text) in &mut texts {
            match envsubst::substitute(text, &values) {
                Ok(out) => *text = out,
                Err(missing) => {
                    for m in missing {
                        eprintln!("{name}: {m}");
                    }
                    invalid = true;
                }
            }
        }
        if invalid {
            return Err(EXIT_INVALID);
        }
    }
    Ok(texts)
}
