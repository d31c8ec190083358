//! The `User-Agent` of every request to a management cluster: the process and its
//! version (`topograph-applier/0.1.0`, `topograph-gateway/0.1.0`, `topograph/0.1.0`),
//! set once by each binary's `main` before it builds a client. API servers show it in
//! audit logs and name a write's field manager after it when the write names none.

use std::sync::OnceLock;

static AGENT: OnceLock<String> = OnceLock::new();

/// Sets the process's User-Agent to `<program>/<version>`; the first call wins (a
/// process is one program).
pub fn set(program: &str, version: &str) {
    let _ = AGENT.set(format!("{program}/{version}"));
}

/// The User-Agent: what [`set`] was given, else `topograph/<this crate's version>`.
pub fn get() -> String {
    AGENT
        .get()
        .cloned()
        .unwrap_or_else(|| format!("topograph/{}", env!("CARGO_PKG_VERSION")))
}
