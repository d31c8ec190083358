//! End-to-end tests of `topograph convert` and `topograph render --api-version`: the
//! real binary on the examples and the published templates (round trips through the
//! command line), input order and untouched provider objects, and bad input (exit
//! codes and messages).

use std::collections::BTreeMap;

use serde_json::Value;
use topograph_tests::{TempDir, root, run};

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `topograph` and returns its standard output, which must be a success.
fn ok(args: &[&str]) -> String {
    let output = run(args);
    assert!(
        output.status.success(),
        "{args:?}: exit {:?}\n{}",
        output.status.code(),
        stderr(&output)
    );
    stdout(&output)
}

fn json_docs(text: &str) -> Vec<Value> {
    serde_json::from_str::<Vec<Value>>(text).expect("a JSON array")
}

/// `--set NAME=VALUE` for every variable of a `values.env`.
fn set_args(values_env: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(values_env).unwrap_or_default();
    let mut values: BTreeMap<String, String> = [
        ("CLUSTER_NAME", "dev"),
        ("NAMESPACE", "default"),
        ("KUBERNETES_VERSION", "v1.30.0"),
        ("CONTROL_PLANE_MACHINE_COUNT", "3"),
        ("WORKER_MACHINE_COUNT", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            values.insert(k.trim().to_string(), v.to_string());
        }
    }
    values
        .into_iter()
        .flat_map(|(k, v)| ["--set".to_string(), format!("{k}={v}")])
        .collect()
}

/// Converts `files` to one version and back to the other through the binary, in both
/// output formats: the documents come back as printing the input in that version gives
/// them (those already in it unchanged, the others converted once).
fn assert_cli_round_trip(dir: &TempDir, files: &[String], extra: &[String]) {
    // Placeholders are substituted on the way in only: printed output has none left,
    // and substituting it again would read its `$`s as clusterctl's.
    let convert = |to: &str, inputs: &[String], format: &str, extra: &[String]| {
        let mut args: Vec<String> = vec!["convert".into(), "--to".into(), to.into()];
        for f in inputs {
            args.extend(["-f".to_string(), f.clone()]);
        }
        args.extend(extra.iter().cloned());
        args.extend(["-o".to_string(), format.to_string()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&argv)
    };
    for format in ["yaml", "json"] {
        for (there, back) in [("v1beta2", "v1beta1"), ("v1beta1", "v1beta2")] {
            let as_is = convert(back, files, format, extra);
            let converted = convert(there, files, format, extra);
            let path = dir.0.join(format!("converted-{there}.{format}"));
            std::fs::write(&path, &converted).unwrap();
            let again = convert(back, &[path.to_str().unwrap().to_string()], format, &[]);
            assert_eq!(
                again, as_is,
                "{files:?} -o {format}: {back} -> {there} -> {back}"
            );
        }
    }
}

#[test]
fn examples_round_trip_through_the_command_line() {
    let dir = TempDir::new("convert-examples");
    for name in ["quick-start", "mixed"] {
        let files = vec![
            format!("examples/{name}/clusterclass.yaml"),
            format!("examples/{name}/cluster.yaml"),
        ];
        assert_cli_round_trip(&dir, &files, &[]);
    }
}

#[test]
fn published_templates_round_trip_with_substitution() {
    let base = root().join("../shared/real-world/providers");
    if !base.exists() {
        eprintln!("skipping: {} is not present", base.display());
        return;
    }
    let dir = TempDir::new("convert-real-world");
    for folder in [
        "capi-e2e-quick-start-v1beta1",
        "capi-e2e-quick-start-v1beta2",
        "capv-clusterclass-v1beta2",
        "capz-aks-clusterclass",
    ] {
        let folder = base.join(folder);
        let mut files: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .map(|p| p.to_str().unwrap().to_string())
            .collect();
        files.sort();
        assert_cli_round_trip(&dir, &files, &set_args(&folder.join("values.env")));
    }
}

#[test]
fn documents_keep_their_order_and_provider_objects_stay_as_they_are() {
    let dir = TempDir::new("convert-order");
    let path = dir.0.join("mixed.yaml");
    let text = "\
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerClusterTemplate
metadata: {name: t, namespace: ns}
spec: {template: {spec: {loadBalancer: {}}}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: cc, namespace: ns}
spec:
  infrastructure:
    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate, name: t}
  controlPlane:
    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}
    nodeDrainTimeout: 5m0s
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns}
data: {nodeDrainTimeout: 1500ms}
";
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    let docs = json_docs(&ok(&[
        "convert", "--to", "v1beta2", "-f", path, "-o", "json",
    ]));
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["DockerClusterTemplate", "ClusterClass", "ConfigMap"]
    );
    assert_eq!(
        docs[0]["apiVersion"],
        "infrastructure.cluster.x-k8s.io/v1beta1"
    );
    assert_eq!(
        docs[0]["spec"],
        serde_json::json!({"template": {"spec": {"loadBalancer": {}}}})
    );
    assert_eq!(docs[2]["data"]["nodeDrainTimeout"], "1500ms");
    let class = &docs[1];
    assert_eq!(class["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(
        class["spec"]["infrastructure"]["templateRef"],
        serde_json::json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate", "name": "t"})
    );
    assert_eq!(
        class["spec"]["controlPlane"]["deletion"]["nodeDrainTimeoutSeconds"],
        300
    );
    // Converting back would give the references the class's namespace, as Cluster API
    // does: the class as written rides in the conversion data.
    let data = class["metadata"]["annotations"]["cluster.x-k8s.io/conversion-data"]
        .as_str()
        .unwrap_or_else(|| panic!("conversion data in {class}"));
    let stored: Value = serde_json::from_str(data).unwrap();
    assert_eq!(stored["spec"]["controlPlane"]["nodeDrainTimeout"], "5m0s");
    assert!(stored.get("metadata").is_none());
}

#[test]
fn render_prints_cluster_api_kinds_in_the_asked_version() {
    let render = |extra: &[&str]| {
        let mut args = vec![
            "render",
            "-f",
            "examples/quick-start/clusterclass.yaml",
            "-f",
            "examples/quick-start/cluster.yaml",
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        json_docs(&ok(&args))
    };
    let v1beta1 = render(&[]);
    assert_eq!(
        v1beta1,
        render(&["--api-version", "v1beta1"]),
        "the input Cluster's version is the default"
    );
    let v1beta2 = render(&["--api-version", "v1beta2"]);
    assert_eq!(v1beta1.len(), v1beta2.len());
    let mds: Vec<&Value> = v1beta2
        .iter()
        .filter(|o| o["kind"] == "MachineDeployment")
        .collect();
    assert!(!mds.is_empty());
    for md in &mds {
        assert_eq!(md["apiVersion"], "cluster.x-k8s.io/v1beta2", "{md}");
        let spec = &md["spec"]["template"]["spec"];
        assert_eq!(
            spec["bootstrap"]["configRef"]["apiGroup"], "bootstrap.cluster.x-k8s.io",
            "{md}"
        );
        assert_eq!(
            spec["infrastructureRef"]["apiGroup"], "infrastructure.cluster.x-k8s.io",
            "{md}"
        );
        assert!(
            spec["infrastructureRef"].get("apiVersion").is_none(),
            "{md}"
        );
        assert!(
            md["metadata"]
                .get("annotations")
                .and_then(|a| a.get("cluster.x-k8s.io/conversion-data"))
                .is_none()
        );
    }
    for mhc in v1beta2.iter().filter(|o| o["kind"] == "MachineHealthCheck") {
        assert_eq!(mhc["apiVersion"], "cluster.x-k8s.io/v1beta2");
        assert!(
            mhc["spec"]["checks"]["unhealthyNodeConditions"][0]["timeoutSeconds"].is_number(),
            "{mhc}"
        );
    }
    let cluster = v1beta2.iter().find(|o| o["kind"] == "Cluster").unwrap();
    assert_eq!(cluster["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert!(
        cluster["spec"]["topology"]["classRef"]["name"].is_string(),
        "{cluster}"
    );
    // Owner references name the Cluster in the version printed, on every object.
    for o in &v1beta2 {
        for owner in o["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if owner["kind"] == "Cluster" {
                assert_eq!(owner["apiVersion"], "cluster.x-k8s.io/v1beta2", "{o}");
            }
        }
    }
    // Provider objects are printed as rendered, but for that.
    let providers = |docs: &[Value]| -> Vec<Value> {
        docs.iter()
            .filter(|o| {
                !o["apiVersion"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("cluster.x-k8s.io/")
            })
            .map(without_owner_versions)
            .collect()
    };
    assert_eq!(providers(&v1beta1), providers(&v1beta2));
    // Back down, the rendered v1beta2 objects are what v1beta1 rendered.
    let dir = TempDir::new("convert-render");
    let path = dir.0.join("rendered.json");
    std::fs::write(&path, serde_json::to_string(&v1beta2).unwrap()).unwrap();
    let down = json_docs(&ok(&[
        "convert",
        "--to",
        "v1beta1",
        "-f",
        path.to_str().unwrap(),
        "-o",
        "json",
    ]));
    let mut down_sorted = down.clone();
    let key = |o: &Value| {
        (
            o["apiVersion"].to_string(),
            o["kind"].to_string(),
            o["metadata"]["name"].to_string(),
        )
    };
    down_sorted.sort_by_key(key);
    let mut want = v1beta1.clone();
    want.sort_by_key(key);
    for (got, want) in down_sorted.iter().zip(&want) {
        if got["kind"] == "MachineDeployment" || got["kind"] == "MachineHealthCheck" {
            // Conversion leaves owner references as they are, as Cluster API's does.
            assert_eq!(without_owner_versions(got), without_owner_versions(want));
        }
    }
}

#[test]
fn exit_codes_and_messages_for_bad_input() {
    let dir = TempDir::new("convert-bad");
    let write = |name: &str, text: &str| {
        let path = dir.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let bad_yaml = write("bad.yaml", "a: [1\n");
    let millis = write(
        "millis.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: cc, namespace: ns}\nspec:\n  controlPlane:\n    machineHealthCheck:\n      unhealthyConditions: [{type: Ready, status: \"False\", timeout: 1500ms}]\n",
    );
    let wrong_type = write(
        "wrong.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c, namespace: ns}\nspec:\n  topology: {class: cc, controlPlane: {nodeDrainTimeout: 5}}\n",
    );
    let no_version = write(
        "noversion.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: c, namespace: ns}\nspec:\n  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerCluster, name: c}\n",
    );
    let placeholder = write(
        "placeholder.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: \"${CLUSTER_NAME}\"}\n",
    );
    let missing = dir
        .0
        .join("does-not-exist.yaml")
        .to_str()
        .unwrap()
        .to_string();
    // (args, exit code, a line stderr must contain)
    let cases: Vec<(Vec<String>, i32, String)> = vec![
        (
            vec![
                "-f".into(),
                bad_yaml.clone(),
                "--to".into(),
                "v1beta2".into(),
            ],
            1,
            format!(
                "{bad_yaml}: document 1: invalid YAML: line 1: did not find expected ',' or ']'"
            ),
        ),
        (
            vec!["-f".into(), millis.clone(), "--to".into(), "v1beta2".into()],
            1,
            format!(
                "{millis}: document 1: ClusterClass ns/cc: spec.controlPlane.machineHealthCheck.unhealthyConditions[0].timeout: Invalid value: \"1500ms\": spec.controlPlane.healthCheck.checks.unhealthyNodeConditions[0].timeoutSeconds holds whole seconds and this duration is not a whole number of seconds"
            ),
        ),
        (
            vec![
                "-f".into(),
                wrong_type.clone(),
                "--to".into(),
                "v1beta2".into(),
            ],
            1,
            format!(
                "{wrong_type}: document 2: Cluster ns/c: spec.topology.controlPlane.nodeDrainTimeout: Invalid value: 5: must be a duration string"
            ),
        ),
        (
            vec![
                "-f".into(),
                no_version.clone(),
                "--to".into(),
                "v1beta1".into(),
            ],
            1,
            format!(
                "{no_version}: document 1: Cluster ns/c: spec.infrastructureRef: Invalid value: \"DockerCluster.infrastructure.cluster.x-k8s.io\": failed to convert object: the apiVersion of DockerCluster.infrastructure.cluster.x-k8s.io is not known"
            ),
        ),
        (
            vec![
                "-f".into(),
                placeholder.clone(),
                "--to".into(),
                "v1beta2".into(),
                "--set".into(),
                "OTHER=x".into(),
            ],
            1,
            format!("{placeholder}: "),
        ),
        (
            vec![
                "-f".into(),
                placeholder.clone(),
                "--to".into(),
                "v1beta2".into(),
                "--set".into(),
                "NOEQUALS".into(),
            ],
            2,
            "error: --set \"NOEQUALS\": expected NAME=VALUE".to_string(),
        ),
        (
            vec![
                "-f".into(),
                missing.clone(),
                "--to".into(),
                "v1beta2".into(),
            ],
            2,
            "does-not-exist.yaml: No such file or directory".to_string(),
        ),
        (
            vec![
                "-f".into(),
                millis.clone(),
                "--to".into(),
                "v1alpha4".into(),
            ],
            2,
            "invalid value 'v1alpha4' for '--to <TO>'".to_string(),
        ),
    ];
    for (args, code, line) in cases {
        let mut argv = vec!["convert"];
        argv.extend(args.iter().map(String::as_str));
        let output = run(&argv);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(&line),
            "{args:?}: wanted {line:?} in:\n{}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "nothing is printed on failure");
    }
}

/// `topograph crds` declares Cluster API's converted kinds as today's Cluster API
/// installs them (v1beta2 stored, v1beta1 served, webhook conversion), or as 1.10 did.
#[test]
fn crds_serve_both_versions_or_v1beta1_alone() {
    let class = root().join("examples/quick-start/clusterclass.yaml");
    let class = class.to_str().unwrap();
    let crd_of = |list: &Value, kind: &str| -> Value {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["spec"]["names"]["kind"] == kind)
            .cloned()
            .unwrap_or_else(|| panic!("no CRD for {kind}"))
    };
    let versions = |crd: &Value| -> Vec<(String, bool)> {
        crd["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap().to_string(),
                    v["storage"] == true,
                )
            })
            .collect()
    };
    let today: Value = serde_json::from_str(&ok(&["crds", "-f", class])).unwrap();
    for kind in [
        "Cluster",
        "ClusterClass",
        "MachineDeployment",
        "MachineHealthCheck",
        "MachinePool",
    ] {
        let crd = crd_of(&today, kind);
        assert_eq!(
            versions(&crd),
            [
                ("v1beta2".to_string(), true),
                ("v1beta1".to_string(), false)
            ],
            "{kind}"
        );
        assert_eq!(crd["spec"]["conversion"]["strategy"], "Webhook", "{kind}");
    }
    assert_eq!(
        versions(&crd_of(&today, "DockerClusterTemplate")),
        [("v1beta1".to_string(), true)],
        "provider kinds as the files use them"
    );
    // A MachinePool class's templates bring the kinds a pool's objects are made of.
    for kind in ["DockerMachinePool", "KubeadmConfig"] {
        assert_eq!(
            versions(&crd_of(&today, kind)),
            [("v1beta1".to_string(), true)],
            "{kind}"
        );
    }
    let old: Value = serde_json::from_str(&ok(&[
        "crds",
        "-f",
        class,
        "--cluster-api-storage",
        "v1beta1",
    ]))
    .unwrap();
    let cluster = crd_of(&old, "Cluster");
    assert_eq!(versions(&cluster), [("v1beta1".to_string(), true)]);
    assert!(cluster["spec"].get("conversion").is_none());
}

/// `object` with the apiVersion of its owner references to Clusters left out.
fn without_owner_versions(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(owners) = object
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    {
        for owner in owners {
            if owner["kind"] == "Cluster"
                && let Some(o) = owner.as_object_mut()
            {
                o.remove("apiVersion");
            }
        }
    }
    object
}
