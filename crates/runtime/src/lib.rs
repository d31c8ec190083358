//! Cluster API's Runtime SDK: extensions (HTTPS services registered by
//! `ExtensionConfig`s) that generate patches, validate topologies, define variables
//! and hold a Cluster's lifecycle with hooks.
//!
//! * [`hooks`]: `hooks.runtime.cluster.x-k8s.io/v1alpha1` requests and responses;
//! * [`config`]: the `runtime.cluster.x-k8s.io/v1alpha1` ExtensionConfig;
//! * [`catalog`]: the hooks and their handler paths;
//! * [`registry`]: handlers by name and by hook, namespaces' labels for selectors;
//! * [`extensions`]: the synchronous [`Extensions`] trait the engine calls;
//! * with the `client` feature: [`client`] (the async HTTPS client: discovery, calls
//!   with timeouts and failure policies), [`blocking`] (the client behind
//!   [`Extensions`]), [`tls`] (certificates, server and client TLS set-ups) and
//!   [`server`] (a minimal HTTPS server for extensions written here).

pub mod catalog;
pub mod config;
pub mod error;
pub mod extensions;
pub mod hooks;
pub mod registry;
pub mod selector;

#[cfg(feature = "client")]
pub mod blocking;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod server;
#[cfg(feature = "client")]
pub mod tls;

pub use catalog::Hook;
pub use config::ExtensionConfig;
pub use error::{Error, ErrorKind};
pub use extensions::Extensions;
pub use registry::{Registration, Registry};
