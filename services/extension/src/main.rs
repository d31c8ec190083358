//! `topograph-example-extension`: the example Runtime SDK extension over HTTPS.
//!
//! ```text
//! topograph-example-extension --listen 127.0.0.1:8443 --cert tls.crt --key tls.key
//! topograph-example-extension --listen 127.0.0.1:0 --write-ca ca.crt   # generated pair
//! ```
//!
//! Prints `listening on https://<address>` once it accepts connections (the port the
//! system chose for `:0`), then serves until killed.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use topograph_example_extension::{Extension, Lifecycle};

#[derive(Parser, Debug)]
#[command(name = "topograph-example-extension", version, about)]
struct Args {
    /// Address to serve HTTPS on.
    #[arg(long, default_value = "127.0.0.1:8443")]
    listen: SocketAddr,
    /// PEM serving certificate (with --key); without both, a CA and a certificate it
    /// signs are generated.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// PEM private key of --cert.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
    /// Where to write the generated CA certificate (an ExtensionConfig's caBundle).
    #[arg(long)]
    write_ca: Option<PathBuf>,
    /// Names the generated certificate is valid for.
    #[arg(long, value_delimiter = ',', default_value = "localhost,127.0.0.1")]
    hosts: Vec<String>,
    /// JSON file of lifecycle answers per hook, read on every call:
    /// {"BeforeClusterUpgrade": {"status": "Success", "retryAfterSeconds": 5}}.
    #[arg(long)]
    hook_responses: Option<PathBuf>,
    /// Appends one JSON line per call (hook, handler, request) to this file.
    #[arg(long)]
    calls_log: Option<PathBuf>,
}

fn tls(args: &Args) -> Result<rustls::ServerConfig, String> {
    let (cert, key) = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => (
            std::fs::read(cert).map_err(|e| format!("failed to read {}: {e}", cert.display()))?,
            std::fs::read(key).map_err(|e| format!("failed to read {}: {e}", key.display()))?,
        ),
        _ => {
            let hosts: Vec<&str> = args.hosts.iter().map(String::as_str).collect();
            let generated = topograph_runtime::tls::generate(&hosts)?;
            if let Some(path) = &args.write_ca {
                std::fs::write(path, &generated.ca_pem)
                    .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
            }
            (
                generated.cert_pem.into_bytes(),
                generated.key_pem.into_bytes(),
            )
        }
    };
    topograph_runtime::tls::server_config(&cert, &key)
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let tls = match tls(&args) {
        Ok(tls) => Arc::new(tls),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: failed to start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let extension = Extension {
        lifecycle: Lifecycle {
            responses: args.hook_responses.clone(),
        },
        calls_log: args.calls_log.clone(),
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: failed to listen on {}: {e}", args.listen);
                return ExitCode::from(2);
            }
        };
        match listener.local_addr() {
            Ok(addr) => println!("listening on https://{addr}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
        topograph_runtime::server::serve(listener, tls, Arc::new(extension)).await;
        ExitCode::SUCCESS
    })
}
