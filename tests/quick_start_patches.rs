//! The quick-start class (spec section 9, written as v1beta1 under `examples/`) rendered
//! by the real binary, with all five patches checked field by field, then with the
//! patches turned off by their variables, and `--explain` naming each change.

use serde_json::{Value, json};
use topograph_tests::{root, run};

const CLASS: &str = "examples/quick-start/clusterclass.yaml";
const CLUSTER: &str = "examples/quick-start/cluster.yaml";

fn render(files: &[&str], extra: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["render", "-o", "json"];
    for f in files {
        args.extend(["-f", f]);
    }
    args.extend(extra);
    let output = run(&args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let objects: Vec<Value> = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("output is not a JSON array: {e}"));
    (objects, stderr)
}

fn kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

fn one<'a>(objects: &'a [Value], k: &str) -> &'a Value {
    let found = kind(objects, k);
    assert_eq!(found.len(), 1, "one {k}");
    found[0]
}

#[test]
fn all_five_patches_take_effect() {
    let (objects, _) = render(&[CLASS, CLUSTER], &[]);
    let kcp = one(&objects, "KubeadmControlPlane");
    let cluster_configuration = &kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"];
    // imageRepository: enabled because the variable is not empty.
    assert_eq!(
        cluster_configuration["imageRepository"],
        json!("registry.example.com/k8s")
    );
    // etcdImageTag and coreDNSImageTag: templates rendered to YAML objects.
    assert_eq!(
        cluster_configuration["etcd"],
        json!({"local": {"imageTag": "3.5.12-0"}})
    );
    assert_eq!(cluster_configuration["dns"], json!({"imageTag": "v1.11.1"}));
    // podSecurityStandard: enabled by the schema default, levels defaulted but
    // `enforce` from the Cluster.
    let api_server = &cluster_configuration["apiServer"];
    assert_eq!(
        api_server["certSANs"],
        json!(["localhost", "127.0.0.1", "0.0.0.0", "host.docker.internal"]),
        "fields of the template stay"
    );
    assert_eq!(
        api_server["extraArgs"],
        json!({"admission-control-config-file": "/etc/kubernetes/kube-apiserver-admission-pss.yaml"})
    );
    assert_eq!(
        api_server["extraVolumes"],
        json!([{
            "name": "admission-pss",
            "hostPath": "/etc/kubernetes/kube-apiserver-admission-pss.yaml",
            "mountPath": "/etc/kubernetes/kube-apiserver-admission-pss.yaml",
            "readOnly": true,
            "pathType": "File"
        }])
    );
    let files = kcp["spec"]["kubeadmConfigSpec"]["files"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(files.len(), 1);
    assert_eq!(
        files[0]["path"],
        json!("/etc/kubernetes/kube-apiserver-admission-pss.yaml")
    );
    let content = files[0]["content"].as_str().unwrap_or_default();
    let expected = "apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: \"restricted\"
      enforce-version: \"latest\"
      audit: \"restricted\"
      audit-version: \"latest\"
      warn: \"restricted\"
      warn-version: \"latest\"
    exemptions:
      usernames: []
      runtimeClasses: []
      namespaces: [kube-system]
";
    assert_eq!(content, expected);
    // The topology's own fields are untouched by the patches.
    assert_eq!(kcp["spec"]["replicas"], json!(3));
    assert_eq!(kcp["spec"]["version"], json!("v1.30.0"));

    // customImage: on the control plane machines and every MachineDeployment's machines.
    let machine_templates = kind(&objects, "DockerMachineTemplate");
    assert_eq!(
        machine_templates.len(),
        4,
        "control plane + md-0, md-1, md-2"
    );
    for template in machine_templates {
        assert_eq!(
            template["spec"]["template"]["spec"]["customImage"],
            json!("kindest/node:v1.30.0"),
            "{}",
            template["metadata"]["name"]
        );
        assert_eq!(
            template["spec"]["template"]["spec"]["extraMounts"][0]["hostPath"],
            json!("/var/run/docker.sock")
        );
    }
    // Patches that select nothing in this Cluster change nothing else.
    for template in kind(&objects, "KubeadmConfigTemplate") {
        assert_eq!(
            template["spec"],
            json!({"template": {"spec": {"joinConfiguration": {"nodeRegistration": {}}}}})
        );
    }
    assert_eq!(
        one(&objects, "DockerCluster")["spec"]["failureDomains"]["fd3"],
        json!({"controlPlane": false})
    );
}

#[test]
fn variables_turn_patches_off() {
    let cluster = std::fs::read_to_string(root().join(CLUSTER))
        .unwrap_or_default()
        .replace("value: registry.example.com/k8s", "value: \"\"")
        .replace("        enforce: restricted\n", "        enabled: false\n");
    let dir = std::env::temp_dir().join(format!("topograph-qs-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("cluster.yaml");
    std::fs::write(&path, cluster).unwrap_or_else(|e| panic!("{e}"));
    let path = path.to_string_lossy().into_owned();
    let (objects, stderr) = render(&[CLASS, &path], &["--explain"]);
    let kcp = one(&objects, "KubeadmControlPlane");
    let cluster_configuration = &kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"];
    assert_eq!(cluster_configuration["imageRepository"], Value::Null);
    assert_eq!(cluster_configuration["apiServer"]["extraArgs"], Value::Null);
    assert_eq!(kcp["spec"]["kubeadmConfigSpec"]["files"], Value::Null);
    // The patches without enabledIf still run.
    assert_eq!(
        cluster_configuration["etcd"],
        json!({"local": {"imageTag": "3.5.12-0"}})
    );
    assert!(
        stderr.contains(
            r#"patch "podSecurityStandard": not enabled for KubeadmControlPlane default/dev-"#
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            r#"patch "imageRepository": not enabled for KubeadmControlPlane default/dev-"#
        ),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explain_names_patch_path_and_object() {
    let (objects, stderr) = render(&[CLASS, CLUSTER], &["--explain"]);
    let kcp_name = one(&objects, "KubeadmControlPlane")["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let line = format!(
        "explain: Cluster default/dev: patch \"etcdImageTag\": add KubeadmControlPlane default/{kcp_name} /spec/kubeadmConfigSpec/clusterConfiguration/etcd [template KubeadmControlPlaneTemplate quick-start-control-plane /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/etcd]"
    );
    assert!(
        stderr.lines().any(|l| l == line),
        "{line}\nnot in\n{stderr}"
    );
    // customImage changes four machine templates: the control plane's and three workers'.
    let custom_image = stderr
        .lines()
        .filter(|l| l.contains("patch \"customImage\": add DockerMachineTemplate"))
        .count();
    assert_eq!(custom_image, 4, "{stderr}");
}
