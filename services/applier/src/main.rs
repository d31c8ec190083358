//! `topograph-applier`: the applier workers (Redis Streams jobs, reconcile against management clusters).
//!
//! Only the command line exists so far; the service itself is built by its own issue
//! (see docs/architecture.md). It refuses to start rather than pretend to serve.

use std::process::ExitCode;

use clap::Parser;

/// the applier workers (Redis Streams jobs, reconcile against management clusters).
#[derive(Parser, Debug)]
#[command(name = "topograph-applier", version, about)]
struct Args {}

fn main() -> ExitCode {
    let _args = Args::parse();
    eprintln!(
        "topograph-applier: not implemented yet; use `topograph render` for offline rendering"
    );
    ExitCode::from(2)
}
