//! `topograph-render`: the stateless render service (gRPC Render/Validate/Default/Plan).
//!
//! Only the command line exists so far; the service itself is built by its own issue
//! (see docs/architecture.md). It refuses to start rather than pretend to serve.

use std::process::ExitCode;

use clap::Parser;

/// the stateless render service (gRPC Render/Validate/Default/Plan).
#[derive(Parser, Debug)]
#[command(name = "topograph-render", version, about)]
struct Args {}

fn main() -> ExitCode {
    let _args = Args::parse();
    eprintln!(
        "topograph-render: not implemented yet; use `topograph render` for offline rendering"
    );
    ExitCode::from(2)
}
