//! Compiles `proto/` with protox (pure Rust), so building needs no system `protoc`.
//! The descriptor set is also written out for the server's reflection service.

use std::path::PathBuf;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    println!("cargo:rerun-if-changed={}", root.display());
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    // One descriptor set per service, so each server reflects only its own contract.
    for (file, descriptor) in [
        ("topograph/render/v1/render.proto", "render_descriptor.bin"),
        (
            "topograph/gateway/v1/gateway.proto",
            "gateway_descriptor.bin",
        ),
    ] {
        let fds = protox::compile([file], [&root])?;
        std::fs::write(out.join(descriptor), fds.encode_to_vec())?;
        tonic_prost_build::configure().compile_fds(fds)?;
    }
    Ok(())
}
