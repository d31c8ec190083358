//! Persisting the store for the embedded mode: a JSON array of all objects, loaded at
//! start and written back periodically when changed and at shutdown.

use crate::kubeconfig::write_atomically;
use crate::store::Store;
use anyhow::Context;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Reads a snapshot file: a JSON array of objects, or a List with `items`.
pub fn read(path: &Path) -> anyhow::Result<Vec<Value>> {
    let bytes =
        std::fs::read(path).with_context(|| format!("reading snapshot {}", path.display()))?;
    let value: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("parsing snapshot {}", path.display()))?;
    match value {
        Value::Array(items) => Ok(items),
        Value::Object(mut m) => match m.remove("items") {
            Some(Value::Array(items)) => Ok(items),
            _ => anyhow::bail!("snapshot {} is neither an array nor a List", path.display()),
        },
        _ => anyhow::bail!("snapshot {} is not a JSON array", path.display()),
    }
}

pub fn write(path: &Path, store: &Store) -> anyhow::Result<u64> {
    let rv = store.current_rv();
    let bytes = serde_json::to_vec_pretty(&store.snapshot())?;
    write_atomically(path, &bytes)
        .with_context(|| format!("writing snapshot {}", path.display()))?;
    Ok(rv)
}

/// Writes the snapshot whenever the store changed since the last write, every `interval`,
/// and once more when shutdown is signalled.
pub(crate) async fn run(
    store: Arc<Store>,
    path: PathBuf,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut written = store.current_rv();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = shutdown.wait_for(|v| *v) => break,
        }
        if store.current_rv() != written {
            match write(&path, &store) {
                Ok(rv) => written = rv,
                Err(e) => tracing::warn!("{e:#}"),
            }
        }
    }
    if let Err(e) = write(&path, &store) {
        tracing::warn!("{e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snapshot_round_trips_crds_and_objects() {
        let a = Store::new(100);
        a.create_object(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "foos", "kind": "Foo"},
                "versions": [{"name": "v1", "served": true, "storage": true}]}}))
            .unwrap();
        a.create_object(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}),
        )
        .unwrap();
        let foo = a
            .create_object(json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "f", "namespace": "ns1"}, "spec": {"x": 1}}))
            .unwrap();
        let path = std::env::temp_dir().join(format!(
            "topograph-kube-snap-{}.json",
            crate::util::random_u64()
        ));
        write(&path, &a).unwrap();
        let b = Store::new(100);
        b.load(read(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(b.get_object("example.com/v1", "Foo", "ns1", "f"), Some(foo));
        assert!(b.current_rv() >= a.current_rv());
    }
}
