//! `topograph-gateway`: the platform API gateway (tenancy, plans, impact).
//!
//! Only the command line exists so far; the service itself is built by its own issue
//! (see docs/architecture.md). It refuses to start rather than pretend to serve.

use std::process::ExitCode;

use clap::Parser;

/// the platform API gateway (tenancy, plans, impact).
#[derive(Parser, Debug)]
#[command(name = "topograph-gateway", version, about)]
struct Args {}

fn main() -> ExitCode {
    let _args = Args::parse();
    eprintln!(
        "topograph-gateway: not implemented yet; use `topograph render` for offline rendering"
    );
    ExitCode::from(2)
}
