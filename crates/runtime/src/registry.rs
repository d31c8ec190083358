//! The registry of extension handlers: every handler an ExtensionConfig's status lists
//! (named `<handler>.<ExtensionConfig name>`), with what calling it needs (client
//! config, timeout, failure policy, settings, namespace selector), looked up by name or
//! by hook. It also knows the namespaces' labels, which `namespaceSelector`s match.
//!
//! Unlike Cluster API's registry (a Go map), handlers are listed in name order, so
//! calling all handlers of a hook is deterministic.

use std::collections::BTreeMap;

use crate::catalog::{Hook, parse_group_version};
use crate::config::{ClientConfig, ExtensionConfig, LabelSelector};
use crate::error::{Error, ErrorKind};
use crate::hooks::FailurePolicy;
use crate::selector;

/// One registered handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// `<handler>.<ExtensionConfig name>`.
    pub name: String,
    /// The ExtensionConfig's name.
    pub extension_config_name: String,
    /// The hook's group.
    pub group: String,
    /// The hook's version.
    pub version: String,
    /// The hook's name (as discovery gave it; [`Registration::hook`] if the catalog
    /// knows it).
    pub hook_name: String,
    /// Which namespaces' objects the handler is called for.
    pub namespace_selector: Option<LabelSelector>,
    /// How to reach the extension.
    pub client_config: ClientConfig,
    /// Call timeout in seconds (10 when not set; 0 means none).
    pub timeout_seconds: Option<i32>,
    /// Fail (default) or Ignore.
    pub failure_policy: FailurePolicy,
    /// The ExtensionConfig's settings.
    pub settings: BTreeMap<String, String>,
}

impl Registration {
    /// The catalog's hook, if it knows this one.
    pub fn hook(&self) -> Option<Hook> {
        Hook::from_name(&self.hook_name)
    }

    /// The handler's own name (what the extension calls it, used in its path).
    pub fn handler_name(&self) -> &str {
        self.name
            .strip_suffix(&format!(".{}", self.extension_config_name))
            .unwrap_or(&self.name)
    }
}

/// Registered handlers and the namespaces' labels.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    items: BTreeMap<String, Registration>,
    namespaces: BTreeMap<String, BTreeMap<String, String>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Registers the handlers of `config`'s status, replacing what was registered for
    /// it before; nothing is registered if any handler is unusable (all or nothing).
    pub fn add(&mut self, config: &ExtensionConfig) -> Result<(), Error> {
        let name = &config.metadata.name;
        if let Some(selector) = &config.spec.namespace_selector {
            selector::validate(selector).map_err(|e| {
                Error::new(
                    ErrorKind::Misconfigured,
                    format!(
                        "failed to add ExtensionConfig {name:?} to registry: failed to create namespaceSelector: {e}"
                    ),
                )
            })?;
        }
        let mut registrations = Vec::new();
        let mut errors = Vec::new();
        for handler in &config.status.handlers {
            match parse_group_version(&handler.request_hook.api_version) {
                Err(e) => errors.push(format!(
                    "failed to add extension handler {:?} to registry: failed to parse GroupVersion {:?} of handler {:?}: {e}",
                    handler.name, handler.request_hook.api_version, handler.name
                )),
                Ok((group, version)) => registrations.push(Registration {
                    name: handler.name.clone(),
                    extension_config_name: name.clone(),
                    group,
                    version,
                    hook_name: handler.request_hook.hook.clone(),
                    namespace_selector: config.spec.namespace_selector.clone(),
                    client_config: config.spec.client_config.clone(),
                    timeout_seconds: handler.timeout_seconds,
                    failure_policy: handler.failure_policy.unwrap_or_default(),
                    settings: config.spec.settings.clone(),
                }),
            }
        }
        if !errors.is_empty() {
            return Err(Error::new(
                ErrorKind::Misconfigured,
                format!(
                    "failed to add ExtensionConfig {name:?} to registry: {}",
                    aggregate(&errors)
                ),
            ));
        }
        self.remove(name);
        for registration in registrations {
            self.items.insert(registration.name.clone(), registration);
        }
        Ok(())
    }

    /// Forgets every handler of the ExtensionConfig `name`.
    pub fn remove(&mut self, name: &str) {
        self.items.retain(|_, r| r.extension_config_name != name);
    }

    /// The handler registered as `name`.
    pub fn get(&self, name: &str) -> Result<&Registration, Error> {
        self.items.get(name).ok_or_else(|| {
            Error::new(
                ErrorKind::NotRegistered,
                format!(
                    "failed to get extension handler {name:?} from registry: handler with name {name:?} has not been registered"
                ),
            )
        })
    }

    /// Every handler of `hook`, by name.
    pub fn list(&self, hook: Hook) -> Vec<&Registration> {
        self.items
            .values()
            .filter(|r| r.hook_name == hook.name() && r.group == crate::catalog::GROUP)
            .collect()
    }

    /// Every registered handler, by name.
    pub fn all(&self) -> impl Iterator<Item = &Registration> {
        self.items.values()
    }

    /// Records a namespace's labels (what `namespaceSelector`s are matched against).
    pub fn set_namespace(&mut self, namespace: &str, labels: BTreeMap<String, String>) {
        self.namespaces.insert(namespace.to_string(), labels);
    }

    /// Whether `registration` serves objects of `namespace`. A selector that selects
    /// something needs the namespace's labels; a namespace never recorded is an error,
    /// as a namespace the API server does not have is in Cluster API.
    pub fn namespace_matches(
        &self,
        registration: &Registration,
        namespace: &str,
    ) -> Result<bool, String> {
        let selector = registration.namespace_selector.as_ref();
        if selector::is_empty(selector) {
            return Ok(true);
        }
        let Some(labels) = self.namespaces.get(namespace) else {
            return Err(format!(
                "failed to match namespace: failed to get namespace {namespace}: namespaces {namespace:?} not found"
            ));
        };
        Ok(selector.is_some_and(|s| selector::matches(s, labels)))
    }
}

/// Kubernetes' aggregate error text: one error as itself, several in brackets.
pub fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ExtensionHandler, LabelSelector};
    use crate::hooks::GroupVersionHook;

    fn config(name: &str, handlers: &[(&str, &str)]) -> ExtensionConfig {
        let mut c = ExtensionConfig::for_url(name, "https://127.0.0.1:1", Vec::new());
        c.status.handlers = handlers
            .iter()
            .map(|(h, hook)| ExtensionHandler {
                name: format!("{h}.{name}"),
                request_hook: GroupVersionHook {
                    api_version: crate::hooks::API_VERSION.into(),
                    hook: hook.to_string(),
                },
                timeout_seconds: None,
                failure_policy: None,
            })
            .collect();
        c
    }

    #[test]
    fn add_list_get_remove() {
        let mut registry = Registry::new();
        registry
            .add(&config(
                "ext-a",
                &[("gen", "GeneratePatches"), ("bcc", "BeforeClusterCreate")],
            ))
            .unwrap();
        registry
            .add(&config("ext-b", &[("bcc", "BeforeClusterCreate")]))
            .unwrap();
        let names: Vec<_> = registry
            .list(Hook::BeforeClusterCreate)
            .iter()
            .map(|r| r.name.clone())
            .collect();
        assert_eq!(names, ["bcc.ext-a", "bcc.ext-b"]);
        let generate = registry.get("gen.ext-a").unwrap();
        assert_eq!(generate.handler_name(), "gen");
        assert_eq!(generate.failure_policy, FailurePolicy::Fail);
        // Re-adding replaces: the handler dropped from the status is gone.
        registry
            .add(&config("ext-a", &[("bcc", "BeforeClusterCreate")]))
            .unwrap();
        assert_eq!(
            registry.get("gen.ext-a").unwrap_err().message,
            "failed to get extension handler \"gen.ext-a\" from registry: handler with name \"gen.ext-a\" has not been registered"
        );
        registry.remove("ext-b");
        assert_eq!(registry.list(Hook::BeforeClusterCreate).len(), 1);
    }

    #[test]
    fn namespace_selector() {
        let mut registry = Registry::new();
        let mut c = config("ext", &[("bcc", "BeforeClusterCreate")]);
        c.spec.namespace_selector = Some(LabelSelector {
            match_labels: [("team".to_string(), "a".to_string())].into(),
            match_expressions: Vec::new(),
        });
        registry.add(&c).unwrap();
        registry.set_namespace("a", [("team".to_string(), "a".to_string())].into());
        registry.set_namespace("b", BTreeMap::new());
        let r = registry.get("bcc.ext").unwrap().clone();
        assert_eq!(registry.namespace_matches(&r, "a"), Ok(true));
        assert_eq!(registry.namespace_matches(&r, "b"), Ok(false));
        assert!(registry.namespace_matches(&r, "c").is_err());
    }
}
