//! End-to-end tests of `topograph validate`: the real binary on the examples, on bad
//! input (each problem on its own line, exit 1) and on updates given with `--old`.

use topograph_tests::run;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn temp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("topograph-validate-cli-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path.to_string_lossy().into_owned()
}

const CLASS: &str = "examples/quick-start/clusterclass.yaml";
const CLUSTER: &str = "examples/quick-start/cluster.yaml";

#[test]
fn the_examples_are_valid() {
    for (class, cluster) in [
        (CLASS, CLUSTER),
        (
            "examples/mixed/clusterclass.yaml",
            "examples/mixed/cluster.yaml",
        ),
    ] {
        let output = run(&["validate", "-f", class, "-f", cluster]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "2 object(s) valid\n"
        );
    }
}

#[test]
fn every_problem_on_its_own_line() {
    let cluster = std::fs::read_to_string(topograph_tests::root().join(CLUSTER))
        .unwrap_or_default()
        .replace("version: v1.30.0", "version: v1.30")
        .replace("name: md-1", "name: md-0")
        .replace(
            "class: default-worker\n        name: md-2",
            "class: gpu\n        name: md-2",
        );
    let path = temp("bad-cluster.yaml", &cluster);
    let output = run(&["validate", "-f", CLASS, "-f", &path]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    let prefix = format!("{path}: document 1: Cluster default/dev: ");
    for want in [
        r#"spec.topology.version: Invalid value: "v1.30": version must be a valid semantic version"#,
        r#"spec.topology.workers.machineDeployments[1].name: Invalid value: "md-0": name must be unique. MachineDeployment with name "md-0" is defined more than once"#,
        r#"spec.topology.workers.machineDeployments[2].class: Invalid value: "gpu": MachineDeploymentClass with name "gpu" does not exist in ClusterClass "quick-start""#,
    ] {
        let line = format!("{prefix}{want}");
        assert!(err.lines().any(|l| l == line), "missing\n{line}\nin\n{err}");
    }
    assert!(
        err.lines().any(|l| l == "3 problem(s) in 2 object(s)"),
        "{err}"
    );
}

#[test]
fn updates_are_checked_against_old() {
    let downgraded = std::fs::read_to_string(topograph_tests::root().join(CLUSTER))
        .unwrap_or_default()
        .replace("version: v1.30.0", "version: v1.29.0");
    let path = temp("downgraded.yaml", &downgraded);
    let output = run(&["validate", "-f", CLASS, "-f", &path, "--old", CLUSTER]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains(r#"Cluster default/dev: spec.topology.version: Invalid value: "v1.29.0": version cannot be decreased from "1.30.0" to "1.29.0""#),
        "{err}"
    );
    // The class may not drop a worker class the Cluster uses.
    let class = std::fs::read_to_string(topograph_tests::root().join(CLASS))
        .unwrap_or_default()
        .replace("    - class: default-worker\n      template:\n        bootstrap:\n          ref:\n            apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\n            kind: KubeadmConfigTemplate\n            name: quick-start-default-worker-bootstraptemplate\n        infrastructure:\n          ref:\n            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n            kind: DockerMachineTemplate\n            name: quick-start-default-worker-machinetemplate\n      machineHealthCheck:", "    - class: renamed-worker\n      template:\n        bootstrap:\n          ref:\n            apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\n            kind: KubeadmConfigTemplate\n            name: quick-start-default-worker-bootstraptemplate\n        infrastructure:\n          ref:\n            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n            kind: DockerMachineTemplate\n            name: quick-start-default-worker-machinetemplate\n      machineHealthCheck:");
    assert!(class.contains("renamed-worker"));
    let class_path = temp("class.yaml", &class);
    let output = run(&[
        "validate",
        "-f",
        &class_path,
        "--old",
        CLASS,
        "--old",
        CLUSTER,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains(r#"ClusterClass default/quick-start: spec.workers.machineDeployments: Forbidden: MachineDeploymentClass "default-worker" cannot be deleted because it is used by Cluster "dev""#),
        "{err}"
    );
}
