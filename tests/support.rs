//! Helpers for the end-to-end tests: run the real `topograph` binary and compare its
//! output with golden files (`UPDATE_GOLDEN=1` rewrites them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The binary `name` of the workspace package `package`, built once per test process so
/// the tests never run a stale one (cargo does not build other packages' binaries for a
/// package's tests).
pub fn binary(package: &str, name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !built.iter().any(|p| p == package) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut build = Command::new(cargo);
        build.args(["build", "-q", "-p", package]);
        if PROFILE == "release" {
            build.arg("--release");
        }
        let status = build.current_dir(root()).status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "cargo build -p {package} failed"
        );
        built.push(package.to_string());
    }
    std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join("target"))
        .join(PROFILE)
        .join(name)
}

/// The processes the tests start are built like the tests themselves, so
/// `cargo test --release` measures release binaries.
const PROFILE: &str = if cfg!(debug_assertions) {
    "debug"
} else {
    "release"
};

/// The `topograph` binary built by cargo for this test run.
pub fn topograph() -> Command {
    let mut command = Command::new(binary("topograph-cli", "topograph"));
    command.current_dir(root());
    command
}

/// Runs `topograph` with `args`.
pub fn run(args: &[&str]) -> Output {
    match topograph().args(args).output() {
        Ok(output) => output,
        Err(e) => {
            panic!("cannot run topograph (build it with `cargo build -p topograph-cli`): {e}")
        }
    }
}

/// Compares `actual` with the golden file `name`, or rewrites it under `UPDATE_GOLDEN=1`.
pub fn assert_golden(name: &str, actual: &str) {
    let path = root().join("tests").join("golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        if let Err(e) = std::fs::write(&path, actual) {
            panic!("writing {}: {e}", path.display());
        }
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "reading {}: {e} (UPDATE_GOLDEN=1 creates it)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs from the output; rerun with UPDATE_GOLDEN=1 if the change is intended.\n--- output ---\n{actual}",
        path.display()
    );
}
