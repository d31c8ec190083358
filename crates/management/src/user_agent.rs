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

/// The `--field-manager` flag every binary that writes takes (`TOPOGRAPH_FIELD_MANAGER`),
/// checked as kube-apiserver checks a field manager, so a bad value is refused at
/// start-up with the flag's name rather than by every write.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct FieldManagerArgs {
    /// The field manager the topology's server-side applies own fields as; the
    /// appliers and the gateway must use the same (`capi-topology` takes over what
    /// Cluster API's topology controller managed).
    #[arg(
        long = "field-manager",
        env = "TOPOGRAPH_FIELD_MANAGER",
        default_value = crate::api::DEFAULT_FIELD_MANAGER,
        value_parser = parse_field_manager
    )]
    pub field_manager: String,
}

impl FieldManagerArgs {
    /// Makes it the process's field manager ([`set_field_manager`]).
    pub fn install(&self) {
        set_field_manager(&self.field_manager);
    }
}

/// kube-apiserver's rule for a field manager: 1 to 128 bytes, every character
/// printable.
fn parse_field_manager(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > 128 {
        return Err(format!("must be 1 to 128 bytes, not {}", text.len()));
    }
    match text
        .chars()
        .find(|c| !topograph_gocompat::strconv::is_print(*c))
    {
        Some(c) => Err(format!("invalid character U+{:04X}", c as u32)),
        None => Ok(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        manager: FieldManagerArgs,
    }

    #[test]
    fn the_field_manager_flag_is_checked_as_kube_apiserver_checks_one() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|c| c.manager.field_manager);
        assert_eq!(
            parse(&["x", "--field-manager", "capi-topology"]).unwrap(),
            "capi-topology"
        );
        assert!(parse(&["x", "--field-manager", ""]).is_err());
        assert!(parse(&["x", "--field-manager", &"m".repeat(129)]).is_err());
        assert!(parse(&["x", "--field-manager", "a\tb"]).is_err());
    }
}
