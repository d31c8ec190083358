//! End-to-end tests of `topograph render`: the real binary on the examples, on Cluster
//! API's own published templates, and on bad input (exit codes and messages).

use serde_json::{Value, json};
use topograph_tests::{assert_golden, root, run};

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn render_example(name: &str, format: &str) -> std::process::Output {
    let class = format!("examples/{name}/clusterclass.yaml");
    let cluster = format!("examples/{name}/cluster.yaml");
    run(&["render", "-f", &class, "-f", &cluster, "-o", format])
}

#[test]
fn examples_match_their_golden_files() {
    for name in ["mixed", "quick-start", "quick-start-v1beta2"] {
        let output = render_example(name, "json");
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert_golden(&format!("{name}.json"), &stdout(&output));
        let output = render_example(name, "yaml");
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert_golden(&format!("{name}.yaml"), &stdout(&output));
    }
}

/// The quick-start's v1beta2 edition renders in v1beta2 by default (its Cluster's
/// version) and, asked for v1beta1, exactly what the v1beta1 edition renders.
#[test]
fn the_v1beta2_edition_renders_what_the_v1beta1_edition_renders() {
    let v1beta1 = render_example("quick-start", "json");
    assert!(v1beta1.status.success(), "{}", stderr(&v1beta1));
    let v1beta2 = run(&[
        "render",
        "-f",
        "examples/quick-start-v1beta2/clusterclass.yaml",
        "-f",
        "examples/quick-start-v1beta2/cluster.yaml",
        "-o",
        "json",
        "--api-version",
        "v1beta1",
    ]);
    assert!(v1beta2.status.success(), "{}", stderr(&v1beta2));
    assert_eq!(stdout(&v1beta2), stdout(&v1beta1));

    let native: Vec<Value> =
        serde_json::from_str(&stdout(&render_example("quick-start-v1beta2", "json"))).unwrap();
    let cluster = native.iter().find(|o| o["kind"] == "Cluster").unwrap();
    assert_eq!(cluster["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(
        cluster["spec"]["controlPlaneRef"],
        json!({"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": cluster["spec"]["controlPlaneRef"]["name"]}),
        "a v1beta2 Cluster's references are contract-versioned"
    );
    assert!(
        native
            .iter()
            .filter(|o| o["kind"] == "MachineDeployment")
            .all(|md| md["apiVersion"] == "cluster.x-k8s.io/v1beta2")
    );
    let owners: Vec<&Value> = native
        .iter()
        .filter_map(|o| o["metadata"]["ownerReferences"].as_array())
        .flatten()
        .filter(|r| r["kind"] == "Cluster")
        .collect();
    assert!(!owners.is_empty());
    assert!(
        owners
            .iter()
            .all(|r| r["apiVersion"] == "cluster.x-k8s.io/v1beta2"),
        "owner references name the Cluster in the version written: {owners:?}"
    );
}

#[test]
fn json_output_is_sorted_and_yaml_says_the_same() {
    let json: Value = serde_json::from_str(&stdout(&render_example("mixed", "json"))).unwrap();
    let objects = json.as_array().unwrap();
    let keys: Vec<(String, String, String, String)> = objects
        .iter()
        .map(|o| {
            let s = |p: &str| {
                o.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            (
                s("/apiVersion"),
                s("/kind"),
                s("/metadata/namespace"),
                s("/metadata/name"),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    // 1 Cluster, 1 InfrastructureCluster, 1 ControlPlane + machine template + MHC,
    // 3 MachineDeployments with 2 templates and 1 MHC each.
    assert_eq!(objects.len(), 1 + 1 + 3 + 3 * 4);
    let yaml_docs: Vec<Value> =
        serde_saphyr::from_multiple(&stdout(&render_example("mixed", "yaml"))).unwrap();
    assert_eq!(&yaml_docs, objects);
}

/// Two versions of one object are two inputs: each unused one is reported with its own
/// file, although objects are keyed by group.
#[test]
fn unused_inputs_are_reported_with_their_own_files() {
    let dir = topograph_tests::TempDir::new("render-unused");
    let write = |name: &str, api_version: &str| {
        let path = dir.0.join(name);
        let text = format!(
            "apiVersion: {api_version}\nkind: DockerMachineTemplate\nmetadata: {{name: unused, namespace: default}}\nspec: {{template: {{spec: {{}}}}}}\n"
        );
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let old = write("old.yaml", "infrastructure.cluster.x-k8s.io/v1beta1");
    let new = write("new.yaml", "infrastructure.cluster.x-k8s.io/v1beta2");
    let output = run(&[
        "render",
        "-f",
        "examples/quick-start/clusterclass.yaml",
        "-f",
        "examples/quick-start/cluster.yaml",
        "-f",
        &old,
        "-f",
        &new,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    for file in [&old, &new] {
        let line = format!(
            "warning: {file}: document 1: DockerMachineTemplate default/unused is not referenced by any ClusterClass or Cluster"
        );
        assert!(err.contains(&line), "{line}\n{err}");
    }
}

#[test]
fn crds_among_the_inputs_declare_the_control_planes_contract() {
    let dir = topograph_tests::TempDir::new("render-contract");
    let write = |name: &str, text: &str| {
        let path = dir.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    // The control plane's kind on the v1beta2 contract, the infrastructure's on v1beta1.
    let crds = write(
        "crds.yaml",
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kubeadmcontrolplanes.controlplane.cluster.x-k8s.io
  labels: {cluster.x-k8s.io/v1beta2: v1beta1}
spec:
  group: controlplane.cluster.x-k8s.io
  names: {kind: KubeadmControlPlane, plural: kubeadmcontrolplanes}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: dockerclusters.infrastructure.cluster.x-k8s.io
  labels: {cluster.x-k8s.io/v1beta1: v1beta1}
spec:
  group: infrastructure.cluster.x-k8s.io
  names: {kind: DockerCluster, plural: dockerclusters}
",
    );
    let quick_start = std::fs::read_to_string(root().join("examples/quick-start/cluster.yaml"))
        .unwrap()
        .replace(
            "    controlPlane:\n      replicas: 3\n",
            "    controlPlane:\n      replicas: 3\n      nodeDrainTimeout: 10m\n      nodeVolumeDetachTimeout: 5m\n",
        );
    assert!(quick_start.contains("nodeDrainTimeout"));
    let cluster = write("cluster.yaml", &quick_start);
    let render = |files: &[&str]| {
        let mut args = vec![
            "render",
            "-o",
            "json",
            "-f",
            "examples/quick-start/clusterclass.yaml",
        ];
        for file in files {
            args.extend(["-f", file]);
        }
        let output = run(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(
            !stderr(&output).contains("CustomResourceDefinition"),
            "CRDs are declarations, never unused inputs: {}",
            stderr(&output)
        );
        let objects: Value = serde_json::from_str(&stdout(&output)).unwrap();
        objects
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == "KubeadmControlPlane")
            .unwrap()["spec"]["machineTemplate"]
            .clone()
    };

    let template = render(&[&cluster, &crds]);
    let name = &template["spec"]["infrastructureRef"]["name"];
    assert!(name.is_string(), "{template}");
    assert_eq!(
        template["spec"],
        serde_json::json!({
            "infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io",
                "kind": "DockerMachineTemplate",
                "name": name,
            },
            "deletion": {"nodeDrainTimeoutSeconds": 600, "nodeVolumeDetachTimeoutSeconds": 300},
        })
    );
    assert!(template.get("infrastructureRef").is_none(), "{template}");

    // Without the CRDs: the v1beta1 contract, as always.
    let template = render(&[&cluster]);
    assert_eq!(
        template["infrastructureRef"]["apiVersion"],
        "infrastructure.cluster.x-k8s.io/v1beta1"
    );
    assert_eq!(template["nodeDrainTimeout"], "10m0s");
    assert_eq!(template["nodeVolumeDetachTimeout"], "5m0s");
    assert!(template.get("spec").is_none(), "{template}");
}

#[test]
fn rendering_twice_is_byte_identical() {
    let a = stdout(&render_example("quick-start", "yaml"));
    let b = stdout(&render_example("quick-start", "yaml"));
    assert_eq!(a, b);
}

#[test]
fn renders_cluster_api_published_templates_with_substitution() {
    let dir = root().join("../shared/real-world/cluster-api-v1.10.10");
    if !dir.exists() {
        eprintln!("skipping: {} is not present", dir.display());
        return;
    }
    for (class, cluster) in [
        (
            "clusterclass-quick-start.yaml",
            "cluster-template-development.yaml",
        ),
        (
            "clusterclass-in-memory.yaml",
            "cluster-template-in-memory.yaml",
        ),
    ] {
        let class = dir.join(class);
        let cluster = dir.join(cluster);
        let objects = render_clusterctl_template(&class, &cluster, "v1.30.0", 3, 2);
        let kinds: Vec<&str> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap_or(""))
            .collect();
        for kind in [
            "Cluster",
            "KubeadmControlPlane",
            "MachineDeployment",
            "MachineHealthCheck",
        ] {
            assert!(kinds.contains(&kind), "{kinds:?} lacks {kind}");
        }
        assert!(
            objects
                .iter()
                .all(|o| o["metadata"]["namespace"] == "team-a")
        );
        let md = objects
            .iter()
            .find(|o| o["kind"] == "MachineDeployment")
            .unwrap();
        assert_eq!(md["spec"]["replicas"], 2);
        assert_eq!(md["spec"]["template"]["spec"]["version"], "v1.30.0");
        // Only the quick-start class has the customImage patch.
        let patched = objects.iter().filter(|o| {
            o["kind"] == "DockerMachineTemplate"
                && o["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("quick-start"))
        });
        for template in patched {
            assert_eq!(
                template["spec"]["template"]["spec"]["customImage"], "kindest/node:v1.30.0",
                "the customImage patch of {}",
                template["metadata"]["name"]
            );
        }
    }
}

/// The published quick-start class's patches, as Cluster API applies them to the
/// published development Cluster (empty image variables, pod security on).
#[test]
fn published_quick_start_patches_apply() {
    let dir = root().join("../shared/real-world/cluster-api-v1.10.10");
    if !dir.exists() {
        return;
    }
    let class = dir.join("clusterclass-quick-start.yaml");
    let cluster = dir.join("cluster-template-development.yaml");
    let objects = render_clusterctl_template(&class, &cluster, "v1.24.3", 1, 1);
    let kcp = objects
        .iter()
        .find(|o| o["kind"] == "KubeadmControlPlane")
        .unwrap();
    let spec = &kcp["spec"]["kubeadmConfigSpec"];
    let cluster_configuration = &spec["clusterConfiguration"];
    // imageRepository is empty, so its patch is off; the tag patches render `null`s.
    assert_eq!(cluster_configuration["imageRepository"], Value::Null);
    assert_eq!(
        cluster_configuration["etcd"],
        serde_json::json!({"local": {"imageTag": null}})
    );
    assert_eq!(
        cluster_configuration["dns"],
        serde_json::json!({"imageTag": null})
    );
    // Before v1.25 the admission configuration is the v1beta1 one.
    let content = spec["files"][0]["content"].as_str().unwrap_or_default();
    assert!(
        content.contains("apiVersion: pod-security.admission.config.k8s.io/v1beta1\n"),
        "{content}"
    );
    assert!(content.contains("enforce: \"baseline\""), "{content}");
}

#[test]
fn a_missing_placeholder_value_is_an_input_error() {
    let cluster =
        root().join("../shared/real-world/cluster-api-v1.10.10/cluster-template-development.yaml");
    if !cluster.exists() {
        return;
    }
    let output = run(&[
        "render",
        "-f",
        cluster.to_str().unwrap(),
        "--set",
        "CLUSTER_NAME=x",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains("variable NAMESPACE is not set and has no default"),
        "{err}"
    );
}

#[test]
fn exit_codes_and_messages_for_bad_input() {
    let dir = std::env::temp_dir().join(format!("topograph-render-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    // (files, exit code, a line stderr must contain)
    let bad_yaml = write("bad.yaml", "a: [1\n");
    let old_api = write(
        "old.yaml",
        "apiVersion: cluster.x-k8s.io/v1alpha4\nkind: Cluster\nmetadata: {name: c}\n",
    );
    let no_class = write(
        "noclass.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c, namespace: ns}\nspec:\n  topology: {class: gone, version: v1.30.0}\n",
    );
    let missing_template = write(
        "missing.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: cc, namespace: ns}\nspec:\n  controlPlane:\n    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}\n---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c, namespace: ns}\nspec:\n  topology: {class: cc, version: v1.30.0}\n",
    );
    let cases: Vec<(Vec<String>, i32, String)> = vec![
        (
            vec![bad_yaml.clone()],
            1,
            format!(
                "{bad_yaml}: document 1: invalid YAML: line 1: did not find expected ',' or ']'"
            ),
        ),
        (
            vec![old_api.clone()],
            1,
            format!(
                "{old_api}: document 1: Cluster c: apiVersion: Unsupported value: \"cluster.x-k8s.io/v1alpha4\": supported values: \"cluster.x-k8s.io/v1beta1\""
            ),
        ),
        (
            vec![no_class.clone()],
            1,
            format!(
                "{no_class}: document 1: Cluster ns/c: spec.topology.class: Invalid value: \"gone\": ClusterClass ns/gone is not among the inputs"
            ),
        ),
        (
            vec![missing_template.clone()],
            1,
            format!(
                "{missing_template}: document 2: Cluster ns/c: failed to get control plane template for ClusterClass ns/cc: spec.controlPlane.ref: KubeadmControlPlaneTemplate ns/cp not found"
            ),
        ),
        (
            vec![
                dir.join("does-not-exist.yaml")
                    .to_str()
                    .unwrap()
                    .to_string(),
            ],
            2,
            "does-not-exist.yaml: No such file or directory".to_string(),
        ),
    ];
    for (files, code, line) in cases {
        let mut args = vec!["render".to_string()];
        for f in &files {
            args.push("-f".into());
            args.push(f.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&args);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{files:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(&line),
            "{files:?}: wanted {line:?} in:\n{}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "nothing is printed on failure");
    }
    // Usage errors are exit code 2.
    assert_eq!(run(&["render"]).status.code(), Some(2));
    assert_eq!(
        run(&["render", "-f", "x", "-o", "toml"]).status.code(),
        Some(2)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Renders a published class and a clusterctl Cluster template as JSON, its variables
/// set as `clusterctl generate cluster dev -n team-a` would.
fn render_clusterctl_template(
    class: &std::path::Path,
    cluster: &std::path::Path,
    kubernetes_version: &str,
    control_plane_machines: u32,
    workers: u32,
) -> Vec<Value> {
    let sets = [
        "CLUSTER_NAME=dev".to_string(),
        "NAMESPACE=team-a".to_string(),
        format!("KUBERNETES_VERSION={kubernetes_version}"),
        format!("CONTROL_PLANE_MACHINE_COUNT={control_plane_machines}"),
        format!("WORKER_MACHINE_COUNT={workers}"),
    ];
    let mut args = vec![
        "render",
        "-f",
        class.to_str().unwrap(),
        "-f",
        cluster.to_str().unwrap(),
        "-o",
        "json",
    ];
    for set in &sets {
        args.extend(["--set", set.as_str()]);
    }
    let output = run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}
