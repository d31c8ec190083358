//! `topograph validate`: Cluster API's admission for everything it is given. Without
//! `--old` every object is checked as created; with `--old`, an object that is also
//! among the old ones (same kind, namespace and name) is checked as an update of it.
//! ClusterClasses are checked against the Clusters that use them, Clusters are
//! defaulted (as the mutating webhook does) and checked against their class.

use std::process::ExitCode;

use clap::Args;
use topograph_api::load::{Bundle, Loaded};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::admission::{admit_class, admit_cluster};

use crate::inputs::{EXIT_INVALID, InputArgs, load_files};

/// Arguments of `topograph validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// A YAML or JSON file (`-` for standard input); repeat for more.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// The objects as they are now, to check the files' objects as updates of them.
    #[arg(long = "old", value_name = "FILE")]
    old: Vec<String>,
    #[command(flatten)]
    input: InputArgs,
}

fn old_class<'a>(old: &'a Bundle, class: &ClusterClass) -> Option<&'a ClusterClass> {
    old.cluster_classes
        .iter()
        .map(|c| &c.value)
        .find(|c| c.namespace == class.namespace && c.name == class.name)
}

fn old_cluster<'a>(old: &'a Bundle, cluster: &Cluster) -> Option<&'a Cluster> {
    old.clusters
        .iter()
        .map(|c| &c.value)
        .find(|c| c.namespace == cluster.namespace && c.name == cluster.name)
}

fn uses(cluster: &Cluster, class: &ClusterClass) -> bool {
    cluster.topology.as_ref().is_some_and(|t| {
        t.class == class.name && t.class_namespace_or(&cluster.namespace) == class.namespace
    })
}

/// Runs the command; prints each problem on its own line, exits 1 if there are any.
pub fn run(args: &ValidateArgs) -> ExitCode {
    let new = match load_files(&args.files, &args.input) {
        Ok(bundle) => bundle,
        Err(code) => return ExitCode::from(code),
    };
    let old = if args.old.is_empty() {
        Bundle::default()
    } else {
        match load_files(&args.old, &args.input) {
            Ok(bundle) => bundle,
            Err(code) => return ExitCode::from(code),
        }
    };
    // Classes the Clusters may refer to: the new ones, then old ones not replaced.
    let mut classes: Vec<&ClusterClass> = new.cluster_classes.iter().map(|c| &c.value).collect();
    for c in &old.cluster_classes {
        if old_class(&new, &c.value).is_none() {
            classes.push(&c.value);
        }
    }
    let mut problems = 0;
    let mut checked = 0;
    for Loaded {
        source,
        value: class,
    } in &new.cluster_classes
    {
        checked += 1;
        let before = old_class(&old, class);
        // On update, the Clusters that use the class now (as stored).
        let users: Vec<&Cluster> = old
            .clusters
            .iter()
            .chain(&new.clusters)
            .map(|c| &c.value)
            .filter(|c| uses(c, class))
            .collect();
        let errors = admit_class(class.clone(), before, &users)
            .err()
            .unwrap_or_default();
        for e in errors {
            eprintln!(
                "{source}: ClusterClass {}/{}: {e}",
                class.namespace, class.name
            );
            problems += 1;
        }
    }
    for Loaded {
        source,
        value: cluster,
    } in &new.clusters
    {
        checked += 1;
        let key = format!("{}/{}", cluster.namespace, cluster.name);
        let result = admit_cluster(cluster, old_cluster(&old, cluster), &classes);
        for w in &result.warnings {
            eprintln!("warning: {source}: Cluster {key}: {w}");
        }
        for e in &result.errors {
            eprintln!("{source}: Cluster {key}: {e}");
            problems += 1;
        }
    }
    if problems > 0 {
        eprintln!("{problems} problem(s) in {checked} object(s)");
        return ExitCode::from(EXIT_INVALID);
    }
    println!("{checked} object(s) valid");
    ExitCode::SUCCESS
}
