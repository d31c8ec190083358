//! `topograph bench render`: how fast the in-process engine renders the given files.
//! Prints one JSON line `{"renders": N, "seconds": S, "ns_per_render": X}`; the command
//! line and that line are a contract (scripts compare them across versions).
//!
//! `--mode bytes` starts every round from JSON bytes and ends it in JSON bytes, as the
//! render service serves a request: the Cluster decoded, the ClusterClass taken from
//! the cache of admitted classes (the service keys it by the class's bytes, so a class
//! is decoded and admitted once), the files' other objects taken as the class's
//! templates from the cache of decoded templates (looked up by their text every round,
//! as the service looks up each request's), the desired objects rendered and encoded. `--mode parsed` decodes once and only renders (the class
//! admitted on every round, as `admit_and_render` does for a caller without a cache).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};

use topograph_api::ObjectExt;
use topograph_api::decoded::DecodedObjects;
use topograph_api::load::{self, Bundle, Input, LoadOptions};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::ObjectStore;
use topograph_engine::admission::Admitted;

use crate::inputs::{EXIT_INVALID, EXIT_USAGE};

/// What `bench` measures.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Render every Cluster of the files in a loop.
    Render(RenderBenchArgs),
}

/// Where a round starts.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Mode {
    /// From JSON bytes: decode, then render.
    Bytes,
    /// From decoded objects: render only.
    Parsed,
}

/// Arguments of `topograph bench render`.
#[derive(Args, Debug)]
pub struct RenderBenchArgs {
    /// A YAML or JSON file (`-` for standard input); repeat for more.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<String>,
    /// How long to measure, in seconds.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Where each round starts.
    #[arg(long, value_enum, default_value = "bytes")]
    mode: Mode,
}

/// Hands every Cluster of `bundle` with a topology to `render` with its class, found
/// among `classes` by `key` (namespace, name); the number rendered, or the first problem.
fn each_cluster<'c, C>(
    bundle: &Bundle,
    classes: &'c [C],
    key: impl Fn(&C) -> (&str, &str),
    mut render: impl FnMut(&Cluster, &'c C) -> Result<(), String>,
) -> Result<u64, String> {
    let mut n = 0;
    for loaded in &bundle.clusters {
        let cluster = &loaded.value;
        let Some(topology) = &cluster.topology else {
            continue;
        };
        let namespace = topology.class_namespace_or(&cluster.namespace);
        let class = classes
            .iter()
            .find(|c| key(c) == (namespace, topology.class.as_str()))
            .ok_or_else(|| {
                format!(
                    "Cluster {}: its ClusterClass is not among the inputs",
                    cluster.name
                )
            })?;
        render(cluster, class).map_err(|e| format!("Cluster {}: {e}", cluster.name))?;
        n += 1;
    }
    Ok(n)
}

/// Renders every Cluster of `bundle` against `store` with the classes admitted once in
/// `classes`, and encodes the desired objects as JSON.
fn render_all_cached(
    bundle: &Bundle,
    classes: &[Admitted<ClusterClass>],
    store: &ObjectStore,
) -> Result<u64, String> {
    fn key(c: &Admitted<ClusterClass>) -> (&str, &str) {
        (&c.namespace, &c.name)
    }
    each_cluster(bundle, classes, key, |cluster, class| {
        let rendered = topograph_engine::render_admitting(cluster, class, store)
            .map_err(|e| e.messages().join("; "))?;
        for object in rendered.desired.objects() {
            // As the render service encodes each object of its answer.
            let bytes = topograph_api::json::to_vec(object);
            std::hint::black_box(bytes);
        }
        Ok(())
    })
}

/// Admits each class and renders every Cluster of `bundle` against `store`.
fn render_all(bundle: &Bundle, store: &ObjectStore) -> Result<u64, String> {
    fn key(c: &topograph_api::load::Loaded<ClusterClass>) -> (&str, &str) {
        (&c.value.namespace, &c.value.name)
    }
    each_cluster(bundle, &bundle.cluster_classes, key, |cluster, class| {
        let rendered = topograph_engine::admit_and_render(cluster, &class.value, store)
            .map_err(|e| e.messages().join("; "))?;
        std::hint::black_box(rendered);
        Ok(())
    })
}

/// Runs the command.
pub fn run(command: &BenchCommand) -> ExitCode {
    let BenchCommand::Render(args) = command;
    let budget = match Duration::try_from_secs_f64(args.duration) {
        Ok(budget) if !budget.is_zero() => budget,
        _ => {
            eprintln!("error: --duration must be a positive number of seconds");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut documents = Vec::new();
    for file in &args.files {
        let text = match crate::inputs::read_file(file) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("error: {file}: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        let (docs, errors) = load::parse_documents(file, &text);
        if !errors.is_empty() {
            for e in errors {
                eprintln!("{e}");
            }
            return ExitCode::from(EXIT_INVALID);
        }
        documents.extend(docs);
    }
    // The namespace `load` defaults the objects into.
    let namespace = load::default_namespace(&documents);
    // Every document as JSON text (the form requests carry objects in), with its kind.
    let mut decoded = Vec::new();
    for doc in &documents {
        let kind = doc.value.kind().to_string();
        match serde_json::to_string(&doc.value) {
            Ok(json) => decoded.push((doc.source.to_string(), json, kind)),
            Err(e) => {
                eprintln!("error: {}: encoding as JSON: {e}", doc.source);
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    fn input((name, text, _): &(String, String, String)) -> Input<'_> {
        Input { name, text }
    }
    let inputs: Vec<Input<'_>> = decoded.iter().map(input).collect();
    // What a request carries besides the class: its Cluster, decoded on every bytes
    // round, and its templates, looked up in the cache of decoded ones.
    let (cluster_inputs, template_inputs): (Vec<Input<'_>>, Vec<Input<'_>>) = {
        let (clusters, templates): (Vec<_>, Vec<_>) = decoded
            .iter()
            .filter(|(_, _, kind)| kind != "ClusterClass")
            .partition(|(_, _, kind)| kind == "Cluster");
        (
            clusters.into_iter().map(input).collect(),
            templates.into_iter().map(input).collect(),
        )
    };
    let options = LoadOptions::default();
    let bundle = match load::load(&inputs, &options) {
        Ok(bundle) => bundle,
        Err(errors) => {
            for e in errors {
                eprintln!("{e}");
            }
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let store = ObjectStore::new(bundle.objects.iter().map(|o| o.value.clone()));
    let templates = DecodedObjects::default();
    let mut classes = Vec::new();
    for loaded in &bundle.cluster_classes {
        match topograph_engine::admission::admit_class(loaded.value.clone(), None, &[]) {
            Ok(admitted) => classes.push(admitted),
            Err(errors) => {
                for e in errors {
                    eprintln!("ClusterClass {}: {e}", loaded.value.name);
                }
                return ExitCode::from(EXIT_INVALID);
            }
        }
    }

    let round = || -> Result<u64, String> {
        match args.mode {
            Mode::Parsed => render_all(&bundle, &store),
            Mode::Bytes => {
                let joined = |errors: Vec<load::LoadError>| {
                    errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                let fresh = load::load(&cluster_inputs, &options).map_err(joined)?;
                let mut objects = Vec::with_capacity(template_inputs.len());
                for input in &template_inputs {
                    match templates.object(input, &namespace) {
                        Some(object) => objects.push(object),
                        // Not one plain object: decoded as the service decodes it.
                        None => {
                            let options = LoadOptions {
                                namespace: Some(namespace.clone()),
                            };
                            let loaded = load::load(std::slice::from_ref(input), &options)
                                .map_err(joined)?;
                            objects.extend(loaded.objects.into_iter().map(|o| Arc::new(o.value)));
                        }
                    }
                }
                let store = ObjectStore::shared(objects);
                render_all_cached(&fresh, &classes, &store)
            }
        }
    };
    // One round outside the clock: it reports broken input before measuring.
    match round() {
        Ok(0) => {
            eprintln!("error: no Cluster with spec.topology among the inputs; nothing to render");
            return ExitCode::from(EXIT_INVALID);
        }
        Ok(_) => {}
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    }
    let start = Instant::now();
    let mut renders = 0u64;
    while start.elapsed() < budget {
        match round() {
            Ok(n) => renders += n,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(EXIT_INVALID);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let ns_per_render = seconds * 1e9 / renders.max(1) as f64;
    println!(
        "{{\"renders\": {renders}, \"seconds\": {seconds:.3}, \"ns_per_render\": {ns_per_render:.0}}}"
    );
    ExitCode::SUCCESS
}
