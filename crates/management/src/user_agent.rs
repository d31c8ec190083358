//! Who this process is to a management cluster: the `User-Agent` of every request (the
//! process and its version: `topograph-applier/0.1.0`, `topograph-gateway/0.1.0`,
//! `topograph/0.1.0`), which API servers show in audit logs, and the field manager its
//! writes own fields as. Each binary's `main` sets both once, before it builds a client.

use std::sync::OnceLock;

static AGENT: OnceLock<String> = OnceLock::new();

/// Sets the process's User-Agent to `<program>/<version>`; the first call wins (a
/// process is one program).
pub fn set(program: &str, version: &str) {
    let _ = AGENT.set(format!("{program}/{version}"));
}

static FIELD_MANAGER: OnceLock<String> = OnceLock::new();

/// Sets the field manager every client of this process writes as, unless a client is
/// told otherwise (`--field-manager`; `capi-topology` takes over what Cluster API's
/// topology controller managed). The first call wins.
pub fn set_field_manager(manager: &str) {
    let _ = FIELD_MANAGER.set(manager.to_string());
}

/// The process's field manager: what [`set_field_manager`] was given, else `topograph`.
pub fn field_manager() -> String {
    FIELD_MANAGER
        .get()
        .cloned()
        .unwrap_or_else(|| crate::api::DEFAULT_FIELD_MANAGER.to_string())
}

/// The User-Agent: what [`set`] was given, else `topograph/<this crate's version>`.
pub fn get() -> String {
    AGENT
        .get()
        .cloned()
        .unwrap_or_else(|| format!("topograph/{}", env!("CARGO_PKG_VERSION")))
}
