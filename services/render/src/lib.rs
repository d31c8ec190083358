//! The render service's library: the `topograph.render.v1.RenderService` handlers as
//! plain functions of decoded requests ([`handlers`]), their caches ([`cache`]) and the
//! gRPC server that runs them on the blocking pool ([`server`]). `main.rs` only wires
//! the server into tonic with its layers; tests call the handlers directly.

pub mod cache;
pub mod handlers;
pub mod server;

pub use handlers::Handlers;
pub use server::RenderServer;
