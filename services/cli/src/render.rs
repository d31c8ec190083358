//! `topograph render`: reads ClusterClasses, templates, Clusters and (optionally) the
//! current objects, and prints the desired objects of every Cluster with a topology.

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::Value;
use topograph_api::object::versioned_key;
use topograph_engine::ObjectStore;
use topograph_engine::patches::Explanation;

use topograph_api::convert::{self, Options, Version};
use topograph_api::object::ObjectExt;

use crate::convert::{ApiVersion, api_versions};
use crate::extensions::ExtensionArgs;
use crate::inputs::{EXIT_INVALID, EXIT_USAGE, InputArgs, load_files};

/// Output formats.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Output {
    /// Multi-document YAML.
    Yaml,
    /// One JSON array.
    Json,
}

/// Arguments of `topograph render`.
#[derive(Args, Debug)]
pub struct RenderArgs {
    /// A YAML or JSON file (`-` for standard input); repeat for more.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "yaml")]
    output: Output,
    #[command(flatten)]
    input: InputArgs,
    /// Also say, on standard error, which patch changed which path of which object
    /// (and which patches `enabledIf` turned off).
    #[arg(long = "explain")]
    explain: bool,
    /// The version to print Cluster API's own kinds (Cluster, MachineDeployment,
    /// MachineHealthCheck, MachinePool) in; provider objects are printed as rendered.
    /// Default: the apiVersion of each Cluster's input document.
    #[arg(long = "api-version", value_enum)]
    api_version: Option<ApiVersion>,
    #[command(flatten)]
    extensions: ExtensionArgs,
}

/// Prints what the patches did for one Cluster, one line per change.
fn explain(cluster: &str, explanation: &Explanation) {
    if explanation.changes.is_empty() && explanation.skipped.is_empty() {
        eprintln!("explain: Cluster {cluster}: no patch changed anything");
    }
    for change in &explanation.changes {
        let landed = match &change.object_path {
            Ok(path) => format!("{} {path}", change.object),
            Err(why) => format!("{} ({why})", change.object),
        };
        eprintln!(
            "explain: Cluster {cluster}: patch {:?}: {} {landed} [template {} {}]",
            change.patch, change.op, change.template, change.template_path
        );
    }
    for skipped in &explanation.skipped {
        eprintln!(
            "explain: Cluster {cluster}: patch {:?}: not enabled for {} [template {}]",
            skipped.patch, skipped.object, skipped.template
        );
    }
}

/// The rendered objects of one Cluster with Cluster API's kinds in version `to`: they
/// are new objects, written as that version writes them (no conversion data).
fn in_version(objects: Vec<Value>, to: Version) -> Result<Vec<Value>, topograph_api::FieldError> {
    let known = api_versions(&objects);
    let lookup =
        |group: &str, kind: &str| known.get(&(group.to_string(), kind.to_string())).cloned();
    let options = Options {
        conversion_data: false,
        api_version_of: &lookup,
    };
    objects
        .iter()
        .map(|o| {
            let mut converted = convert::convert(o, to, &options)?;
            // Owner references name the Cluster in the version written, on every object.
            convert::owner_refs_to(&mut converted, to);
            Ok(converted)
        })
        .collect()
}

/// Runs the command; prints the objects on stdout and problems on stderr.
pub fn run(args: &RenderArgs) -> ExitCode {
    let bundle = match load_files(&args.files, &args.input) {
        Ok(bundle) => bundle,
        Err(code) => return ExitCode::from(code),
    };
    let mut invalid = false;

    // Extensions are discovered before anything renders: one that cannot be reached
    // fails the command once, not every Cluster.
    let extensions = if args.extensions.any() {
        let classes: Vec<_> = bundle.cluster_classes.iter().map(|c| &c.value).collect();
        let objects: Vec<&Value> = bundle.objects.iter().map(|o| &o.value).collect();
        let connected = crate::extensions::configs(&args.extensions, &classes)
            .and_then(|configs| crate::extensions::connect(&configs, &objects));
        match connected {
            Ok(client) => Some(client),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    } else {
        None
    };

    // By apiVersion as written too: two versions of one object are two inputs.
    let mut sources = HashMap::new();
    let store = ObjectStore::new(bundle.objects.into_iter().map(|o| {
        sources.insert(versioned_key(&o.value), o.source);
        o.value
    }));
    let mut objects: Vec<Value> = Vec::new();
    let mut used_classes = vec![false; bundle.cluster_classes.len()];
    let mut rendered_any = false;
    for loaded in &bundle.clusters {
        let cluster = &loaded.value;
        let Some(topology) = &cluster.topology else {
            eprintln!(
                "warning: {}: Cluster {} has no spec.topology; nothing to render for it",
                loaded.source,
                cluster.key()
            );
            continue;
        };
        let class_namespace = topology.class_namespace_or(&cluster.namespace);
        let Some(class_index) = bundle
            .cluster_classes
            .iter()
            .position(|c| c.value.name == topology.class && c.value.namespace == class_namespace)
        else {
            eprintln!(
                "{}: Cluster {}: spec.topology.class: Invalid value: {:?}: ClusterClass {class_namespace}/{} is not among the inputs",
                loaded.source,
                cluster.key(),
                topology.class,
                topology.class
            );
            invalid = true;
            continue;
        };
        used_classes[class_index] = true;
        let class = &bundle.cluster_classes[class_index].value;
        let rendered = match &extensions {
            Some(extensions) => {
                topograph_engine::admit_and_render_with(cluster, class, &store, extensions)
            }
            None => topograph_engine::admit_and_render(cluster, class, &store),
        };
        match rendered {
            Ok(rendered) => {
                rendered_any = true;
                if args.explain {
                    explain(&cluster.key(), &rendered.explanation);
                }
                let rendered: Vec<Value> =
                    rendered.desired.objects().into_iter().cloned().collect();
                let to = args
                    .api_version
                    .map(ApiVersion::version)
                    .unwrap_or_else(|| {
                        Version::of_api_version(cluster.document.api_version())
                            .unwrap_or(Version::V1Beta1)
                    });
                match in_version(rendered, to) {
                    Ok(converted) => objects.extend(converted),
                    Err(e) => {
                        eprintln!("{}: Cluster {}: {e}", loaded.source, cluster.key());
                        invalid = true;
                    }
                }
            }
            Err(refusal) => {
                for message in &refusal.messages() {
                    eprintln!("{}: Cluster {}: {message}", loaded.source, cluster.key());
                }
                invalid = true;
            }
        }
    }
    if invalid {
        return ExitCode::from(EXIT_INVALID);
    }
    if !rendered_any {
        eprintln!("error: no Cluster with spec.topology among the inputs; nothing to render");
        return ExitCode::from(EXIT_INVALID);
    }

    for (loaded, used) in bundle.cluster_classes.iter().zip(&used_classes) {
        let class = &loaded.value;
        if !used {
            eprintln!(
                "warning: {}: ClusterClass {}/{} is not used by any Cluster",
                loaded.source, class.namespace, class.name
            );
        }
    }
    for object in store.unread() {
        let versioned = versioned_key(object);
        if let Some(source) = sources.get(&versioned) {
            let key = &versioned.1;
            eprintln!("warning: {source}: {key} is not referenced by any ClusterClass or Cluster");
        }
    }

    objects.sort_by_cached_key(versioned_key);
    print_objects(&objects, args.output)
}

/// Prints `objects` on stdout: YAML documents, or one JSON array.
pub fn print_objects(objects: &[Value], output: Output) -> ExitCode {
    let printed = match output {
        Output::Json => serde_json::to_string_pretty(objects)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string()),
        Output::Yaml => objects
            .iter()
            .map(|o| serde_saphyr::to_string(o).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()
            .map(|docs| docs.iter().map(|d| format!("---\n{d}")).collect::<String>()),
    };
    match printed {
        Ok(text) => {
            if let Err(e) = std::io::stdout().lock().write_all(text.as_bytes()) {
                eprintln!("error: writing output: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: encoding output: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
