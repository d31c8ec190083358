//! `topograph render --extension` against the example extension started as its own
//! process (HTTPS with a generated CA): the quick-start-runtimesdk real-world class
//! renders with the patches Cluster API's e2e extension makes; a CA that did not sign
//! the extension's certificate, or nothing listening, fails the command naming the
//! extension.

use std::path::PathBuf;

use serde_json::Value;
use topograph_tests::{root, start_extension, topograph};

fn folder() -> Option<PathBuf> {
    let dir = root().join("../shared/real-world/providers/capi-e2e-quick-start-runtimesdk-v1beta1");
    dir.exists().then_some(dir)
}

fn render_args(dir: &std::path::Path) -> Vec<String> {
    let mut args = vec!["render".to_string(), "-o".into(), "json".into()];
    for f in [
        "clusterclass-quick-start-runtimesdk.yaml",
        "cluster-template-upgrades-runtimesdk.kustomized.yaml",
    ] {
        args.push("-f".into());
        args.push(dir.join(f).display().to_string());
    }
    let values = std::fs::read_to_string(dir.join("values.env")).unwrap();
    for line in values
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
    {
        args.push("--set".into());
        args.push(line.to_string());
    }
    args
}

#[test]
fn the_runtimesdk_class_renders_through_the_example_extension() {
    let Some(dir) = folder() else {
        eprintln!("skipped: real-world folder absent");
        return;
    };
    let tmp =
        std::env::temp_dir().join(format!("topograph-render-extension-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let extension = start_extension(&tmp, &[]);
    let mut args = render_args(&dir);
    args.extend([
        "--extension".into(),
        extension.url.clone(),
        "--extension-ca".into(),
        extension.ca.display().to_string(),
    ]);
    let out = topograph().args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objects: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let find = |kind: &'static str| objects.iter().filter(move |o| o["kind"] == kind);
    let image = "kindest/node:v1.30.0@sha256:047357ac0cfea04663786a612ba1eaba9702bef25227a794b52890dd8bcd692e";
    assert_eq!(
        find("DockerCluster").next().unwrap()["spec"]["loadBalancer"]["imageRepository"],
        "kindest"
    );
    let kcp = find("KubeadmControlPlane").next().unwrap();
    assert_eq!(
        kcp["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"],
        1
    );
    assert_eq!(
        kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]["extraArgs"]["v"],
        "2"
    );
    assert_eq!(find("DockerMachineTemplate").count(), 2);
    for m in find("DockerMachineTemplate") {
        assert_eq!(m["spec"]["template"]["spec"]["customImage"], image);
    }
    assert_eq!(
        find("DockerMachinePool").next().unwrap()["spec"]["template"]["customImage"],
        image
    );

    // Without extensions the class is refused, as before.
    let out = topograph().args(render_args(&dir)).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("spec.patches[0].external: Forbidden"));

    // A CA that did not sign the extension's certificate.
    let other = tmp.join("other-ca.pem");
    let other_ext = start_extension(&tmp.join("other").tap_mkdir(), &[]);
    std::fs::copy(&other_ext.ca, &other).unwrap();
    let mut args = render_args(&dir);
    args.extend([
        "--extension".into(),
        extension.url.clone(),
        "--extension-ca".into(),
        other.display().to_string(),
    ]);
    let out = topograph().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("failed to discover extension \"k8s-upgrade-with-runtimesdk\""),
        "{stderr}"
    );
    assert!(stderr.contains("invalid peer certificate"), "{stderr}");
}

trait MkDir {
    fn tap_mkdir(self) -> Self;
}

impl MkDir for PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}
