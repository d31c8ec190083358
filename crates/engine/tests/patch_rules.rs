//! Table-driven tests of the patch engine (spec section 4): selectors, `enabledIf`,
//! values, builtin variables, overrides, copy-back rules, and every error text of the
//! section, each asserted in full as a Cluster's condition would carry it.

mod common;

use common::load_fixture;
use serde_json::{Value, json};
use topograph_engine::{DesiredState, RenderError, Rendered, admit_and_render, render_unadmitted};

const CLASS: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: cc, namespace: ns}
spec:
  infrastructure:
    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate, name: infra}
  controlPlane:
    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}
    machineInfrastructure:
      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp-machines}
  workers:
    machineDeployments:
    - class: default-worker
      template:
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}
    - class: gpu-worker
      template:
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}
  variables:
  - name: tag
    required: false
    schema: {openAPIV3Schema: {type: string, default: "v1"}}
  - name: flag
    required: false
    schema: {openAPIV3Schema: {type: boolean}}
  - name: count
    required: false
    schema: {openAPIV3Schema: {type: integer}}
  - name: obj
    required: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          a: {type: string}
          list: {type: array, items: {type: string}}
  patches: PATCHES
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata: {name: cp, namespace: ns}
spec:
  template:
    spec:
      kubeadmConfigSpec: {clusterConfiguration: {}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata: {name: cp-machines, namespace: ns}
spec: {template: {spec: {image: cp}}}
"#;

const CLUSTER: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c1, namespace: ns, uid: cluster-uid, labels: {team: a}}
spec:
  clusterNetwork:
    services: {cidrBlocks: [10.128.0.0/12]}
    pods: {cidrBlocks: [192.168.0.0/16]}
    serviceDomain: cluster.local
  topology:
    class: cc
    version: v1.30.1+build.1
    controlPlane:
      replicas: 3
    variables: VARIABLES
    workers:
      machineDeployments:
      - class: default-worker
        name: md-0
        replicas: 2
      - class: gpu-worker
        name: md-1
        variables:
          overrides:
          - name: tag
            value: gpu
"#;

const CP: &str = "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\n        kind: KubeadmControlPlaneTemplate\n        matchResources: {controlPlane: true}";

fn render_checked(
    patches: &str,
    variables: &str,
    admission_checks: bool,
) -> Result<Rendered, String> {
    let class = CLASS.replace("PATCHES", &patches.replace('\n', "\n  "));
    let cluster = CLUSTER.replace("VARIABLES", variables);
    let f = load_fixture(&[("class.yaml", &class), ("cluster.yaml", &cluster)])
        .map_err(|e| format!("{e:?}"))?;
    if admission_checks {
        admit_and_render(&f.cluster, &f.class, &f.store)
            .map_err(|e| RenderError::from(e).to_string())
    } else {
        render_unadmitted(&f.cluster, &f.class, &f.store).map_err(|e| e.to_string())
    }
}

/// Renders as a reconcile would, after admission.
fn render(patches: &str, variables: &str) -> Result<Rendered, String> {
    render_checked(patches, variables, true)
}

fn desired(patches: &str, variables: &str) -> DesiredState {
    render(patches, variables)
        .unwrap_or_else(|e| panic!("{e}"))
        .desired
}

/// The reconcile-time error of a class that bypassed admission (the texts Cluster API
/// produces when its webhooks did not run).
fn error(patches: &str, variables: &str) -> String {
    match render_checked(patches, variables, false) {
        Ok(_) => panic!("expected an error for patches {patches}"),
        Err(e) => e,
    }
}

fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer).unwrap_or(&Value::Null)
}

/// A one-definition inline patch on the control plane template.
fn cp_patch(name: &str, enabled_if: Option<&str>, json_patches: &str) -> String {
    let enabled = enabled_if
        .map(|e| {
            format!(
                "\n  enabledIf: {}",
                serde_json::to_string(e).unwrap_or_default()
            )
        })
        .unwrap_or_default();
    format!(
        "\n- name: {name}{enabled}\n  definitions:\n  - selector:\n        {CP}\n    jsonPatches: {json_patches}\n"
    )
}

const PREFIX: &str =
    "error computing the desired state of the Cluster topology: failed to apply patches: ";

#[test]
fn value_errors_carry_the_whole_chain() {
    let add = |value: &str| format!("[{{op: add, path: /spec/template/spec/x, {value}}}]");
    let cases = [
        (
            add("valueFrom: {variable: foo}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value: variable "foo" does not exist"#,
        ),
        (
            "[{op: add, path: /spec/template/spec/x}]".to_string(),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value: neither .value nor .valueFrom are set"#,
        ),
        (
            add("value: 1, valueFrom: {variable: tag}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value: both .value and .valueFrom are set"#,
        ),
        (
            add("valueFrom: {}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value: .valueFrom is set, but neither .valueFrom.variable nor .valueFrom.template are set"#,
        ),
        (
            add("valueFrom: {variable: tag, template: x}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value: .valueFrom is set, but both .valueFrom.variable and .valueFrom.template are set"#,
        ),
        (
            add("valueFrom: {variable: obj.nope}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value: variable "obj.nope" does not exist: failed to lookup segment "nope""#,
        ),
        (
            add("valueFrom: {variable: \"obj.list[5]\"}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value: variable "obj.list[5]" is invalid: array does not have index 5"#,
        ),
        (
            add("valueFrom: {template: \"{{ .tag\"}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value for template: failed to parse template: "{{ .tag": template: tpl:1: unclosed action"#,
        ),
        (
            add("valueFrom: {template: \"{{ fail \\\"boom\\\" }}\"}"),
            r#"failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value for template: failed to render template: "{{ fail \"boom\" }}": template: tpl:1:3: executing "tpl" at <fail "boom">: error calling fail: boom"#,
        ),
        (
            "[{op: move, path: /spec/template/spec/x}]".to_string(),
            r#"failed to apply patches for patch "p1": failed to apply patch: error decoding json patch (RFC6902): invalid operation {"op":"move","path":"/spec/template/spec/x"}: unsupported operation"#,
        ),
        (
            add("value: 1}, {op: add, path: /spec/template/spec/nope/deeper, value: 2"),
            r#"failed to apply patches for patch "p1": failed to apply patch: error applying json patch (RFC6902): add operation does not apply: doc is missing path: "/spec/template/spec/nope/deeper": missing value"#,
        ),
        (
            "[{op: remove, path: /spec/template/spec/nope}]".to_string(),
            r#"failed to apply patches for patch "p1": failed to apply patch: error applying json patch (RFC6902): error in remove for path: '/spec/template/spec/nope': unable to remove nonexistent key: nope: missing value"#,
        ),
        (
            "[{op: replace, path: /spec/template/spec/nope, value: 1}]".to_string(),
            r#"failed to apply patches for patch "p1": failed to apply patch: error applying json patch (RFC6902): replace operation does not apply: doc is missing key: /spec/template/spec/nope: missing value"#,
        ),
    ];
    for (json_patches, want) in cases {
        let got = error(
            &cp_patch("p1", None, &json_patches),
            "[{name: obj, value: {a: x, list: [l0]}}]",
        );
        assert_eq!(got, format!("{PREFIX}{want}"), "patches {json_patches}");
    }
}

#[test]
fn unmarshal_errors_name_the_rendered_text() {
    let got = error(
        &cp_patch(
            "p1",
            None,
            "[{op: add, path: /spec/template/spec/x, valueFrom: {template: \"a: b: c\"}}]",
        ),
        "[]",
    );
    let want = format!(
        r#"{PREFIX}failed to generate patches for patch "p1": failed to generate JSON patches for "KubeadmControlPlaneTemplate": failed to calculate value for template: failed to unmarshal rendered template: "a: b: c": "#
    );
    assert!(got.starts_with(&want), "{got}");
}

#[test]
fn enabled_if_errors_and_generator_errors() {
    let add = "[{op: add, path: /spec/template/spec/x, value: 1}]";
    assert_eq!(
        error(&cp_patch("p1", Some("{{ .tag "), add), "[]"),
        format!(
            r#"{PREFIX}failed to generate patches for patch "p1": failed to calculate if patch is enabled for "KubeadmControlPlaneTemplate": failed to calculate value for enabledIf: failed to parse template: "{{{{ .tag ": template: tpl:1: unclosed action"#
        )
    );
    assert_eq!(
        error(
            "\n- name: ext\n  external: {generateExtension: gen.my-extension}\n",
            "[]"
        ),
        format!(
            r#"{PREFIX}can not use external patch "ext" if RuntimeSDK feature flag is disabled"#
        )
    );
    assert_eq!(
        error("\n- name: empty\n  definitions: []\n", "[]"),
        format!(r#"{PREFIX}failed to create patch generator for patch "empty""#)
    );
}

#[test]
fn errors_of_several_items_are_aggregated() {
    let patches = r#"
- name: workers
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      matchResources: {machineDeploymentClass: {names: ["*"]}}
    jsonPatches: [{op: add, path: /spec/template/spec/x, valueFrom: {variable: missing}}]
"#;
    let one = r#"failed to generate JSON patches for "DockerMachineTemplate": failed to calculate value: variable "missing" does not exist"#;
    assert_eq!(
        error(patches, "[]"),
        format!(r#"{PREFIX}failed to generate patches for patch "workers": [{one}, {one}]"#)
    );
}

#[test]
fn enabled_if_is_true_only_for_a_yaml_true() {
    // (enabledIf, variables, enabled?)
    let cases = [
        ("true", "[]", true),
        ("True", "[]", true),
        ("yes", "[]", true),
        (" on\n", "[]", true),
        ("{{ .flag }}", "[{name: flag, value: true}]", true),
        ("{{ .flag }}", "[{name: flag, value: false}]", false),
        ("{{ if .flag }}true{{ end }}", "[]", false),
        (
            "{{ if .flag }}true{{ end }}",
            "[{name: flag, value: true}]",
            true,
        ),
        ("\"true\"", "[]", false),
        ("1", "[]", false),
        ("", "[]", false),
        ("{{ .nothing }}", "[]", false),
        ("{{ ne .tag \"\" }}", "[]", true),
        ("{{ eq .tag \"v1\" }}", "[{name: tag, value: v2}]", false),
    ];
    for (enabled_if, variables, want) in cases {
        let d = desired(
            &cp_patch(
                "p",
                Some(enabled_if),
                "[{op: add, path: /spec/template/spec/marker, value: here}]",
            ),
            variables,
        );
        let got = at(&d.control_plane.object, "/spec/marker") == &json!("here");
        assert_eq!(got, want, "enabledIf {enabled_if:?} with {variables}");
    }
}

#[test]
fn values_from_variables_templates_and_builtins() {
    let patches = cp_patch(
        "p",
        None,
        r#"
    - {op: add, path: /spec/template/spec/tag, valueFrom: {variable: tag}}
    - {op: add, path: /spec/template/spec/first, valueFrom: {variable: "obj.list[0]"}}
    - {op: add, path: /spec/template/spec/obj, valueFrom: {variable: obj}}
    - {op: add, path: /spec/template/spec/count, valueFrom: {template: "{{ .count }}"}}
    - {op: add, path: /spec/template/spec/big, valueFrom: {template: "{{ mul .count 1000000.0 }}"}}
    - {op: add, path: /spec/template/spec/image, valueFrom: {template: "kindest/node:{{ .builtin.controlPlane.version | replace \"+\" \"_\" }}"}}
    - {op: add, path: /spec/template/spec/cluster, valueFrom: {variable: builtin.cluster}}
    - {op: add, path: /spec/template/spec/cp, valueFrom: {variable: builtin.controlPlane}}
    - {op: add, path: /spec/template/spec/list, valueFrom: {template: "- a\n- {{ .obj.a }}"}}
    - {op: add, path: /spec/template/spec/literal, value: {k: [1, "2"]}}
"#,
    );
    let d = desired(
        &patches,
        "[{name: count, value: 3}, {name: obj, value: {a: x, list: [l0, l1]}}]",
    );
    let spec = &d.control_plane.object["spec"];
    assert_eq!(spec["tag"], json!("v1"), "defaulted from the schema");
    assert_eq!(spec["first"], json!("l0"));
    assert_eq!(spec["obj"], json!({"a": "x", "list": ["l0", "l1"]}));
    assert_eq!(spec["count"], json!(3));
    assert_eq!(spec["image"], json!("kindest/node:v1.30.1_build.1"));
    assert_eq!(spec["list"], json!(["a", "x"]));
    assert_eq!(spec["literal"], json!({"k": [1, "2"]}));
    assert_eq!(
        spec["cluster"],
        json!({
            "name": "c1",
            "namespace": "ns",
            "uid": "cluster-uid",
            "metadata": {"labels": {
                "team": "a",
                "cluster.x-k8s.io/cluster-name": "c1",
                "topology.cluster.x-k8s.io/owned": ""
            }},
            "topology": {
                "version": "v1.30.1+build.1",
                "classRef": {"name": "cc", "namespace": "ns"},
                "class": "cc",
                "classNamespace": "ns"
            },
            "network": {
                "serviceDomain": "cluster.local",
                "services": ["10.128.0.0/12"],
                "pods": ["192.168.0.0/16"]
            }
        })
    );
    let cp = &d.control_plane.object;
    assert_eq!(
        spec["cp"],
        json!({
            "version": "v1.30.1+build.1",
            "metadata": {"labels": {
                "cluster.x-k8s.io/cluster-name": "c1",
                "topology.cluster.x-k8s.io/owned": ""
            }, "annotations": at(cp, "/metadata/annotations").clone()},
            "name": at(cp, "/metadata/name").clone(),
            "replicas": 3,
            "machineTemplate": {"infrastructureRef": {
                "name": at(d.control_plane.machine_template.as_ref().unwrap_or(&Value::Null), "/metadata/name").clone()
            }}
        })
    );
}

#[test]
fn selectors_and_per_machine_deployment_variables() {
    let patches = r#"
- name: workers
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      matchResources: {machineDeploymentClass: {names: ["*-worker"]}}
    jsonPatches:
    - {op: add, path: /spec/template/spec/tag, valueFrom: {variable: tag}}
    - {op: add, path: /spec/template/spec/md, valueFrom: {template: "{{ .builtin.machineDeployment.topologyName }}/{{ .builtin.machineDeployment.class }}/{{ .builtin.machineDeployment.replicas }}"}}
- name: gpu-only
  definitions:
  - selector:
      apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
      kind: KubeadmConfigTemplate
      matchResources: {machineDeploymentClass: {names: ["gpu-*"]}}
    jsonPatches: [{op: add, path: /spec/template/spec/gpu, value: true}]
- name: control-plane-machines
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      matchResources: {controlPlane: true}
    jsonPatches: [{op: add, path: /spec/template/spec/cp, value: true}]
- name: wrong-version
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
      kind: DockerMachineTemplate
      matchResources: {controlPlane: true, machineDeploymentClass: {names: ["*"]}}
    jsonPatches: [{op: add, path: /spec/template/spec/never, value: true}]
- name: infrastructure
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerClusterTemplate
      matchResources: {infrastructureCluster: true}
    jsonPatches: [{op: add, path: /spec/template/spec/loadBalancer/image, valueFrom: {variable: builtin.cluster.name}}]
"#;
    // The `wrong-version` selector matches no template of the class, which admission
    // refuses; rendering without admission shows it also matches nothing at reconcile.
    let d = render_checked(patches, "[{name: tag, value: cluster-wide}]", false)
        .unwrap_or_else(|e| panic!("{e}"))
        .desired;
    let md0 = &d.machine_deployments[0];
    let md1 = &d.machine_deployments[1];
    assert_eq!(
        at(&md0.infrastructure_template, "/spec/template/spec/tag"),
        &json!("cluster-wide")
    );
    assert_eq!(
        at(&md1.infrastructure_template, "/spec/template/spec/tag"),
        &json!("gpu"),
        "override wins for md-1 only"
    );
    assert_eq!(
        at(&md0.infrastructure_template, "/spec/template/spec/md"),
        &json!("md-0/default-worker/2")
    );
    assert_eq!(
        at(&md1.infrastructure_template, "/spec/template/spec/md"),
        &json!("md-1/gpu-worker/<no value>")
    );
    assert_eq!(
        at(&md0.bootstrap_template, "/spec/template/spec/gpu"),
        &Value::Null
    );
    assert_eq!(
        at(&md1.bootstrap_template, "/spec/template/spec/gpu"),
        &json!(true)
    );
    let cp_machines = d
        .control_plane
        .machine_template
        .as_ref()
        .unwrap_or(&Value::Null);
    assert_eq!(at(cp_machines, "/spec/template/spec/cp"), &json!(true));
    assert_eq!(
        at(&md0.infrastructure_template, "/spec/template/spec/cp"),
        &Value::Null
    );
    for object in d.objects() {
        assert_eq!(at(object, "/spec/template/spec/never"), &Value::Null);
        assert_eq!(at(object, "/spec/never"), &Value::Null);
    }
    let infra = d.infrastructure_cluster.as_ref().unwrap_or(&Value::Null);
    assert_eq!(at(infra, "/spec/loadBalancer/image"), &json!("c1"));
}

#[test]
fn patches_accumulate_in_order_and_topology_fields_win() {
    let patches = format!(
        "{}{}",
        cp_patch(
            "first",
            None,
            r#"
    - {op: add, path: /spec/template/spec/chain, value: [a]}
    - {op: add, path: /spec/template/spec/replicas, value: 99}
    - {op: add, path: /spec/template/spec/version, value: v0.0.1}
    - {op: add, path: /spec/template/metadata/labels/patched, value: "yes"}
    - {op: add, path: /spec/template/metadata/labels/cluster.x-k8s.io~1cluster-name, value: hijacked}
    - {op: add, path: /metadata/name, value: renamed}
"#
        ),
        cp_patch(
            "second",
            None,
            "[{op: add, path: /spec/template/spec/chain/-, value: b}]"
        )
    );
    let rendered = render_checked(&patches, "[]", false).unwrap_or_else(|e| panic!("{e}"));
    let cp = &rendered.desired.control_plane.object;
    assert_eq!(
        at(cp, "/spec/chain"),
        &json!(["a", "b"]),
        "later patches see earlier results"
    );
    assert_eq!(
        at(cp, "/spec/replicas"),
        &json!(3),
        "replicas stay the topology's"
    );
    assert_eq!(at(cp, "/spec/version"), &json!("v1.30.1+build.1"));
    assert_eq!(
        at(cp, "/metadata/labels/patched"),
        &json!("yes"),
        "labels travel"
    );
    assert_eq!(
        at(cp, "/metadata/labels/cluster.x-k8s.io~1cluster-name"),
        &json!("c1")
    );
    assert_ne!(at(cp, "/metadata/name"), &json!("renamed"));
    assert!(at(cp, "/spec/machineTemplate/infrastructureRef/name").is_string());

    let explained: Vec<(String, String, Result<String, &str>)> = rendered
        .explanation
        .changes
        .iter()
        .map(|c| {
            (
                c.patch.clone(),
                c.template_path.clone(),
                c.object_path.clone(),
            )
        })
        .collect();
    assert!(explained.contains(&(
        "second".into(),
        "/spec/template/spec/chain/-".into(),
        Ok("/spec/chain/-".into())
    )));
    assert!(explained.contains(&(
        "first".into(),
        "/spec/template/spec/replicas".into(),
        Err("overridden: the topology sets this field")
    )));
    assert!(explained.contains(&(
        "first".into(),
        "/metadata/name".into(),
        Err("not copied: only spec.template.spec, labels and annotations reach the object")
    )));
}

#[test]
fn variables_are_validated_before_patches_run() {
    let patch = cp_patch(
        "p",
        None,
        "[{op: add, path: /spec/template/spec/x, value: 1}]",
    );
    // (variables, the error; defaulting errors stop before validation, as in the webhook)
    let cases = [
        (
            "[{name: count, value: three}]",
            r#"spec.topology.variables[count].value: Invalid value: "\"three\"": must be of type integer: "string""#,
        ),
        (
            "[{name: nope, value: 1}, {name: count, value: three}]",
            r#"spec.topology.variables[nope]: Invalid value: "1": variable is not defined"#,
        ),
        (
            "[{name: tag, value: a}, {name: tag, value: b}]",
            r#"spec.topology.variables[tag]: Invalid value: "\"b\"": variable "tag" is set more than once"#,
        ),
    ];
    for (variables, want) in cases {
        let got = error(&patch, variables);
        assert_eq!(got, want, "{variables}");
    }
}

/// A class whose patches break the admission rules is refused before anything renders,
/// with every problem and its field path.
#[test]
fn admission_rules_for_patches() {
    let sel_cp = format!("      {CP}");
    let case = |definitions: &str| format!("\n- name: p\n  definitions:\n{definitions}\n");
    let def =
        |json_patches: &str| format!("  - selector:\n  {sel_cp}\n    jsonPatches: {json_patches}");
    let jp = "spec.patches[0].definitions[0].jsonPatches[0]";
    let cases: Vec<(String, Vec<String>)> = vec![
        (
            case(&def("[{op: move, path: /spec/template/spec/x}]")),
            vec![format!(
                r#"{jp}.op: Unsupported value: "{{\n  \"op\": \"move\",\n  \"path\": \"/spec/template/spec/x\"\n}}": supported values: "add", "remove", "replace""#
            )],
        ),
        (
            case(&def("[{op: add, path: /metadata/name, value: x}]")),
            vec![format!(
                r#"{jp}.path: Invalid value: "{{\n  \"op\": \"add\",\n  \"path\": \"/metadata/name\",\n  \"value\": \"x\"\n}}": jsonPatch path must start with "/spec/""#
            )],
        ),
        (
            case(&def("[{op: add, path: /spec/template/spec/list/1, value: x}]")),
            vec![format!(
                r#"{jp}.path: Invalid value: "/spec/template/spec/list/1": arrays can only be accessed using "0" (prepend) or "-" (append)"#
            )],
        ),
        (
            case(&def("[{op: remove, path: /spec/template/spec/list/0}]")),
            vec![format!(
                r#"{jp}.path: Invalid value: "/spec/template/spec/list/0": elements in arrays can not be accessed in a remove operation"#
            )],
        ),
        (
            case(&def("[{op: add, path: /spec/template/spec/x}]")),
            vec![format!(
                r#"{jp}: Invalid value: "{{\n  \"op\": \"add\",\n  \"path\": \"/spec/template/spec/x\"\n}}": jsonPatch must define one of value or valueFrom"#
            )],
        ),
        (
            case(&def("[{op: add, path: /spec/template/spec/x, valueFrom: {}}]")),
            vec![format!(
                r#"{jp}.valueFrom: Invalid value: "{{}}": valueFrom must set either template or variable"#
            )],
        ),
        (
            case(&def("[{op: add, path: /spec/template/spec/x, valueFrom: {template: \"{{ .tag\"}}]")),
            vec![format!(
                r#"{jp}.valueFrom.template: Invalid value: "{{{{ .tag": template can not be parsed: template: valueFrom.template:1: unclosed action"#
            )],
        ),
        (
            case(&def("[{op: add, path: /spec/template/spec/x, valueFrom: {variable: builtin.cluster.metadata}}]")),
            vec![format!(
                r#"{jp}.valueFrom.variable: Invalid value: "builtin.cluster.metadata": not a defined builtin variable"#
            )],
        ),
        (
            case(&def("[{op: add, path: /spec/template/spec/x, valueFrom: {variable: \"nope[0].x\"}}]")),
            vec![format!(
                r#"{jp}.valueFrom.variable: Invalid value: "nope[0].x": variable with name nope[0].x cannot be found"#
            )],
        ),
        (
            "\n- name: p\n  enabledIf: \"{{ .tag\"\n  definitions: []\n".to_string(),
            vec![r#"spec.patches[0].enabledIf: Invalid value: "{{ .tag": template can not be parsed: template: enabledIf:1: unclosed action"#.to_string()],
        ),
        (
            case("  - selector: {apiVersion: v1, kind: K, matchResources: {}}\n    jsonPatches: []"),
            vec![r#"spec.patches[0].definitions[0].selector: Invalid value: "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"K\",\n  \"matchResources\": {}\n}": no selector enabled"#.to_string()],
        ),
        (
            case("  - selector: {apiVersion: v1, kind: K, matchResources: {controlPlane: true, infrastructureCluster: true}}\n    jsonPatches: []"),
            vec![
                "spec.patches[0].definitions[0].selector.matchResources.infrastructureCluster: Invalid value: true: selector is enabled but does not match the infrastructure ref".to_string(),
                "spec.patches[0].definitions[0].selector.matchResources.controlPlane: Invalid value: true: selector is enabled but matches neither the controlPlane ref nor the controlPlane machineInfrastructure ref".to_string(),
            ],
        ),
        (
            case("  - selector:\n      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n      kind: DockerMachineTemplate\n      matchResources: {machineDeploymentClass: {names: [\"a*b\", \"**\", \"other\", \"*-worker\"]}}\n    jsonPatches: []"),
            vec![
                r#"spec.patches[0].definitions[0].selector.matchResources.machineDeploymentClass.names[0]: Invalid value: "a*b": "*" rune can only appear at the beginning, or ending of the selector"#.to_string(),
            ],
        ),
        (
            case("  - selector:\n      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n      kind: DockerMachineTemplate\n      matchResources: {machineDeploymentClass: {names: [\"other\", \"*-worker\"]}}\n    jsonPatches: []"),
            vec![
                r#"spec.patches[0].definitions[0].selector.matchResources.machineDeploymentClass.names[0]: Invalid value: "other": selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a MachineDeployment class"#.to_string(),
            ],
        ),
        (
            "\n- name: \"\"\n  definitions: []\n- name: \"\"\n  external: {generateExtension: x}\n- name: z\n- name: inline\n  definitions: []\n".to_string(),
            vec![
                r#"spec.patches[3].name: Required value: "inline" can not be used as the name of a patch"#.to_string(),
                "spec.patches[0].name: Required value: patch name must be defined".to_string(),
                r#"spec.patches[1].name: Invalid value: "": patch names must be unique. Patch with name "" is defined more than once"#.to_string(),
                "spec.patches[1].external: Forbidden: patch.external can be used only if the RuntimeSDK feature flag is enabled".to_string(),
                "spec.patches[2]: Required value: one of definitions or external must be defined".to_string(),
            ],
        ),
    ];
    for (patches, wants) in cases {
        let got = match render(&patches, "[]") {
            Ok(_) => panic!("patches {patches} should be refused"),
            Err(e) => e,
        };
        for want in wants {
            let line = format!("ClusterClass ns/cc: {want}");
            assert!(got.lines().any(|l| l == line), "missing\n{line}\nin\n{got}");
        }
    }
}
