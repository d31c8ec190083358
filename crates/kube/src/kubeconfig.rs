//! The kubeconfig clients use to reach the server: plain HTTP, no credentials.

use std::io::Write;
use std::path::Path;

/// A kubeconfig whose cluster, context and user are all named `topograph-kube`.
pub fn kubeconfig_yaml(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: topograph-kube
  cluster:
    server: {url}
contexts:
- name: topograph-kube
  context:
    cluster: topograph-kube
    namespace: default
    user: topograph-kube
current-context: topograph-kube
users:
- name: topograph-kube
  user: {{}}
preferences: {{}}
"
    )
}

/// Writes a file so readers never see it half-written: a temporary file in the same
/// directory, then a rename over the target.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_points_at_the_server() {
        let y = kubeconfig_yaml("http://127.0.0.1:1234");
        assert!(y.contains("    server: http://127.0.0.1:1234\n"));
        assert!(y.contains("current-context: topograph-kube\n"));
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir =
            std::env::temp_dir().join(format!("topograph-kube-test-{}", crate::util::random_u64()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        write_atomically(&p, b"one").unwrap();
        write_atomically(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
