//! Runtime extensions for `topograph render`: `--extension [NAME=]URL` with
//! `--extension-ca FILE`, or `--extension-config FILE` (an ExtensionConfig, YAML or
//! JSON). Each extension is discovered (its handlers registered under
//! `<handler>.<NAME>`) before anything renders; the engine then calls them through a
//! blocking client running its own runtime (decision 0024).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use serde_json::Value;
use topograph_api::model::ClusterClass;
use topograph_api::object::ObjectExt;
use topograph_runtime::ExtensionConfig;
use topograph_runtime::blocking::BlockingClient;
use topograph_runtime::client::Client;

/// Where the render's runtime extensions are.
#[derive(Args, Debug, Default)]
pub struct ExtensionArgs {
    /// A runtime extension at an https URL, named like the ExtensionConfig the class's
    /// external patches refer to (`generate-patches.<NAME>`); NAME may be left out when
    /// the classes refer to one only. Repeat for more.
    #[arg(long = "extension", value_name = "[NAME=]URL")]
    pub extensions: Vec<String>,
    /// PEM CA certificate(s) verifying the --extension servers.
    #[arg(long = "extension-ca", value_name = "FILE")]
    pub extension_ca: Option<PathBuf>,
    /// An ExtensionConfig (runtime.cluster.x-k8s.io/v1alpha1), YAML or JSON. Repeat
    /// for more.
    #[arg(long = "extension-config", value_name = "FILE")]
    pub extension_configs: Vec<PathBuf>,
}

impl ExtensionArgs {
    /// Whether any extension is given.
    pub fn any(&self) -> bool {
        !self.extensions.is_empty() || !self.extension_configs.is_empty()
    }
}

/// The ExtensionConfig names the classes' external patches refer to.
fn referenced_names(classes: &[&ClusterClass]) -> BTreeSet<String> {
    classes
        .iter()
        .flat_map(|c| c.patches.iter())
        .filter_map(|p| p.external.as_ref())
        .flat_map(|e| {
            [
                &e.generate_extension,
                &e.validate_extension,
                &e.discover_variables_extension,
            ]
        })
        .flatten()
        .filter_map(|handler| handler.split_once('.').map(|(_, name)| name.to_string()))
        .collect()
}

fn read_config(path: &PathBuf) -> Result<ExtensionConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("failed to read {}: {e}", path.display()))?;
    let config: ExtensionConfig = if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?
    };
    if config.kind != topograph_runtime::config::KIND {
        return Err(format!(
            "{}: kind {:?} is not {}",
            path.display(),
            config.kind,
            topograph_runtime::config::KIND
        ));
    }
    Ok(config)
}

/// The ExtensionConfigs the arguments describe.
pub fn configs(
    args: &ExtensionArgs,
    classes: &[&ClusterClass],
) -> Result<Vec<ExtensionConfig>, String> {
    let mut configs = Vec::new();
    for path in &args.extension_configs {
        configs.push(read_config(path)?);
    }
    if args.extensions.is_empty() {
        return Ok(configs);
    }
    let Some(ca_path) = &args.extension_ca else {
        return Err(
            "--extension needs --extension-ca FILE: the CA that signed the extension's certificate"
                .to_string(),
        );
    };
    let ca =
        std::fs::read(ca_path).map_err(|e| format!("failed to read {}: {e}", ca_path.display()))?;
    let referenced = referenced_names(classes);
    for spec in &args.extensions {
        let (name, url) = match spec.split_once('=') {
            Some((name, url)) => (name.to_string(), url.to_string()),
            None => {
                if referenced.len() != 1 {
                    return Err(format!(
                        "--extension {spec}: give it as NAME=URL; the classes refer to {} extensions ({})",
                        referenced.len(),
                        referenced.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                (
                    referenced.iter().next().cloned().unwrap_or_default(),
                    spec.clone(),
                )
            }
        };
        configs.push(ExtensionConfig::for_url(&name, &url, ca.clone()));
    }
    Ok(configs)
}

/// Discovers and registers every extension, and records the namespaces among the
/// inputs (their labels are what `namespaceSelector`s match).
pub fn connect(configs: &[ExtensionConfig], objects: &[&Value]) -> Result<BlockingClient, String> {
    let client = Arc::new(Client::new());
    for namespace in objects
        .iter()
        .filter(|o| o.kind() == "Namespace" && o.api_version() == "v1")
    {
        client.registry_mut(|r| r.set_namespace(namespace.name(), namespace.labels()));
    }
    let blocking = BlockingClient::new(client.clone()).map_err(|e| e.message)?;
    for config in configs {
        let client = client.clone();
        let config = config.clone();
        blocking
            .block_on(async move { client.discover_and_register(&config).await })
            .and_then(|r| r)
            .map_err(|e| e.message)?;
    }
    Ok(blocking)
}
