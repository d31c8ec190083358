//! Table-driven tests of the desired-state rules (spec sections 1.2-1.11 as they apply
//! to v1beta1): names, labels and annotations, selectors, health checks, optional
//! infrastructure, name reuse, template rotation.

mod common;

use common::{Fixture, load_fixture};
use serde_json::{Value, json};
use topograph_engine::{DesiredState, RenderError, admit_and_render, render_unadmitted};

const CLASS: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: cc, namespace: ns}
spec:
  infrastructure:
    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate, name: infra}
  controlPlane:
    metadata:
      labels: {cp-class: "1", shared: class}
      annotations: {cp-class-annotation: "1"}
    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}
    machineInfrastructure:
      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp-machines}
    machineHealthCheck:
      unhealthyConditions: [{type: Ready, status: Unknown, timeout: 300s}]
    nodeDrainTimeout: 90s
  workers:
    machineDeployments:
    - class: default-worker
      template:
        metadata:
          labels: {md-class: "1", shared: class}
          annotations: {md-class-annotation: "1"}
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}
      machineHealthCheck:
        maxUnhealthy: 40%
        nodeStartupTimeout: 3m
        unhealthyConditions: [{type: Ready, status: "False", timeout: 5m}]
      nodeDeletionTimeout: 1h
    - class: no-check
      template:
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata: {name: cp, namespace: ns}
spec:
  template:
    metadata:
      labels: {from-template: "1", shared: template}
    spec:
      kubeadmConfigSpec: {}
      machineTemplate:
        metadata:
          labels: {machine-template-label: "1"}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata:
  name: cp-machines
  namespace: ns
  uid: 1234
  resourceVersion: "77"
  labels: {template-label: "1"}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
    keep-me: "1"
  ownerReferences: [{apiVersion: cluster.x-k8s.io/v1beta1, kind: ClusterClass, name: cc, uid: x}]
spec: {template: {spec: {image: cp}}}
"#;

const CLUSTER: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c1, namespace: ns, uid: cluster-uid}
spec:
  topology:
    class: cc
    version: v1.30.1
    controlPlane:
      replicas: 3
      metadata:
        labels: {cp-topology: "1", shared: topology}
    workers:
      machineDeployments:
      - class: default-worker
        name: md-0
        replicas: 2
        metadata:
          labels: {md-topology: "1", shared: topology}
          annotations:
            topology.cluster.x-k8s.io/defer-upgrade: ""
            topology.cluster.x-k8s.io/hold-upgrade-sequence: ""
            md-topology-annotation: "1"
      - class: no-check
        name: md-1
"#;

/// Loads `docs` with the shared templates.
fn fixture(docs: &[&str]) -> Fixture {
    let named: Vec<(&str, &str)> = docs.iter().map(|text| ("t.yaml", *text)).collect();
    load_fixture(&named).unwrap_or_else(|e| panic!("{e:?}"))
}

fn render_docs(docs: &[&str]) -> Result<DesiredState, RenderError> {
    let f = fixture(docs);
    admit_and_render(&f.cluster, &f.class, &f.store)
        .map(|r| r.desired)
        .map_err(RenderError::from)
}

fn desired(docs: &[&str]) -> DesiredState {
    render_docs(docs).unwrap_or_else(|e| panic!("{e}"))
}

fn base() -> DesiredState {
    desired(&[CLASS, CLUSTER])
}

fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer).unwrap_or(&Value::Null)
}

fn name(v: &Value) -> String {
    at(v, "/metadata/name").as_str().unwrap_or("").to_string()
}

fn assert_generated(name: &str, prefix: &str) {
    assert!(
        name.starts_with(prefix),
        "{name} should start with {prefix}"
    );
    let suffix = &name[prefix.len()..];
    assert_eq!(suffix.len(), 5, "{name}");
    assert!(
        suffix
            .bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)),
        "{name}"
    );
}

#[test]
fn names_follow_cluster_api_formats() {
    let d = base();
    let md = &d.machine_deployments[0];
    // (object name, expected prefix before the 5-character suffix)
    let cases = [
        (name(d.infrastructure_cluster.as_ref().unwrap()), "c1-"),
        (name(&d.control_plane.object), "c1-"),
        (
            name(d.control_plane.machine_template.as_ref().unwrap()),
            "c1-",
        ),
        (name(&md.object), "c1-md-0-"),
        (name(&md.bootstrap_template), "c1-md-0-"),
        (name(&md.infrastructure_template), "c1-md-0-"),
    ];
    for (n, prefix) in &cases {
        assert_generated(n, prefix);
    }
    // Health checks are named exactly like their targets.
    assert_eq!(
        name(d.control_plane.health_check.as_ref().unwrap()),
        name(&d.control_plane.object)
    );
    assert_eq!(name(md.health_check.as_ref().unwrap()), name(&md.object));
    // Distinct roles get distinct names.
    let mut all: Vec<&String> = cases.iter().map(|(n, _)| n).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), cases.len());
}

#[test]
fn long_names_are_cut_to_58_and_suffixed() {
    let long = "c".repeat(55);
    let cluster = CLUSTER.replace("name: c1,", &format!("name: {long},"));
    let d = desired(&[CLASS, &cluster]);
    let md = &d.machine_deployments[0];
    // (generated name, base before the suffix)
    let cases = [
        // The name template's output exceeds 63: its first 58 characters and a suffix.
        (name(&md.object), format!("{long}-md-0-")[..58].to_string()),
        // Simple prefixes are cut to 58.
        (
            name(&md.bootstrap_template),
            format!("{long}-md-0-")[..58].to_string(),
        ),
        // A 61-character name fits: not cut.
        (name(&d.control_plane.object), format!("{long}-")),
    ];
    for (n, base) in cases {
        assert!(n.len() <= 63, "{n}");
        assert_generated(&n, &base);
    }
}

#[test]
fn naming_strategies_are_used() {
    let class = CLASS
        .replace(
            "    nodeDrainTimeout: 90s\n",
            "    nodeDrainTimeout: 90s\n    namingStrategy: {template: \"{{ .cluster.name }}-cp-{{ .random }}\"}\n",
        )
        .replace(
            "      nodeDeletionTimeout: 1h\n",
            "      nodeDeletionTimeout: 1h\n      namingStrategy: {template: \"{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-w\"}\n",
        )
        .replace(
            "spec:\n  infrastructure:\n",
            "spec:\n  infrastructureNamingStrategy: {template: \"infra-{{ .cluster.name }}\"}\n  infrastructure:\n",
        );
    let d = desired(&[&class, CLUSTER]);
    assert_generated(&name(&d.control_plane.object), "c1-cp-");
    assert_eq!(name(&d.machine_deployments[0].object), "c1-md-0-w");
    assert_eq!(name(d.infrastructure_cluster.as_ref().unwrap()), "infra-c1");
    let bad = class.replace("infra-{{ .cluster.name }}", "{{ .cluster.nope }}");
    let err = render_docs(&[&bad, CLUSTER]).unwrap_err().to_string();
    assert!(err.contains("map has no entry for key \"nope\""), "{err}");
}

#[test]
fn labels_and_annotations_precedence() {
    let d = base();
    let cp = &d.control_plane.object;
    let md = &d.machine_deployments[0].object;
    // (object, pointer, expected)
    let cases: Vec<(&Value, &str, Value)> = vec![
        // ControlPlane: topology wins over class, class over the template's own.
        (cp, "/metadata/labels/shared", json!("topology")),
        (cp, "/metadata/labels/cp-class", json!("1")),
        (cp, "/metadata/labels/cp-topology", json!("1")),
        (cp, "/metadata/labels/from-template", json!("1")),
        (
            cp,
            "/metadata/labels/cluster.x-k8s.io~1cluster-name",
            json!("c1"),
        ),
        (
            cp,
            "/metadata/labels/topology.cluster.x-k8s.io~1owned",
            json!(""),
        ),
        (cp, "/metadata/annotations/cp-class-annotation", json!("1")),
        (
            cp,
            "/metadata/annotations/cluster.x-k8s.io~1cloned-from-name",
            json!("cp"),
        ),
        (
            cp,
            "/metadata/annotations/cluster.x-k8s.io~1cloned-from-groupkind",
            json!("KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io"),
        ),
        // The control plane machines get the ControlPlane's labels over the template's.
        (
            cp,
            "/spec/machineTemplate/metadata/labels/shared",
            json!("topology"),
        ),
        (
            cp,
            "/spec/machineTemplate/metadata/labels/machine-template-label",
            json!("1"),
        ),
        (
            cp,
            "/spec/machineTemplate/metadata/annotations/cp-class-annotation",
            json!("1"),
        ),
        // MachineDeployment: topology wins over class; both on the object and its machines.
        (md, "/metadata/labels/shared", json!("topology")),
        (md, "/metadata/labels/md-class", json!("1")),
        (
            md,
            "/metadata/labels/topology.cluster.x-k8s.io~1deployment-name",
            json!("md-0"),
        ),
        (
            md,
            "/spec/template/metadata/labels/shared",
            json!("topology"),
        ),
        (md, "/metadata/annotations/md-class-annotation", json!("1")),
        (
            md,
            "/metadata/annotations/md-topology-annotation",
            json!("1"),
        ),
        (
            md,
            "/spec/template/metadata/annotations/md-topology-annotation",
            json!("1"),
        ),
        // Upgrade-sequencing annotations are never propagated.
        (
            md,
            "/metadata/annotations/topology.cluster.x-k8s.io~1defer-upgrade",
            Value::Null,
        ),
        (
            md,
            "/metadata/annotations/topology.cluster.x-k8s.io~1hold-upgrade-sequence",
            Value::Null,
        ),
    ];
    for (object, pointer, want) in cases {
        assert_eq!(at(object, pointer), &want, "{pointer} of {}", name(object));
    }
}

#[test]
fn template_copies_are_owned_by_the_cluster_and_cleaned() {
    let d = base();
    let copy = d.control_plane.machine_template.as_ref().unwrap();
    let cases: Vec<(&str, Value)> = vec![
        (
            "/metadata/ownerReferences",
            json!([{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "c1", "uid": "cluster-uid"}]),
        ),
        ("/metadata/uid", Value::Null),
        ("/metadata/resourceVersion", Value::Null),
        ("/metadata/labels/template-label", json!("1")),
        (
            "/metadata/labels/topology.cluster.x-k8s.io~1owned",
            json!(""),
        ),
        ("/metadata/annotations/keep-me", json!("1")),
        (
            "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
            Value::Null,
        ),
        (
            "/metadata/annotations/cluster.x-k8s.io~1cloned-from-name",
            json!("cp-machines"),
        ),
        ("/metadata/namespace", json!("ns")),
        ("/spec/template/spec/image", json!("cp")),
    ];
    for (pointer, want) in cases {
        assert_eq!(at(copy, pointer), &want, "{pointer}");
    }
    let md = &d.machine_deployments[0];
    assert_eq!(
        at(
            &md.bootstrap_template,
            "/metadata/labels/topology.cluster.x-k8s.io~1deployment-name"
        ),
        &json!("md-0")
    );
    // Objects the Cluster references get no owner from the topology.
    for object in [
        &d.control_plane.object,
        d.infrastructure_cluster.as_ref().unwrap(),
        &md.object,
    ] {
        assert_eq!(
            at(object, "/metadata/ownerReferences"),
            &Value::Null,
            "{}",
            name(object)
        );
    }
}

#[test]
fn object_fields_from_topology_and_class() {
    let d = base();
    let cp = &d.control_plane.object;
    let md0 = &d.machine_deployments[0].object;
    let md1 = &d.machine_deployments[1].object;
    let cp_copy = d.control_plane.machine_template.as_ref().unwrap();
    let cases: Vec<(&Value, &str, Value)> = vec![
        (cp, "/kind", json!("KubeadmControlPlane")),
        (cp, "/spec/replicas", json!(3)),
        (cp, "/spec/version", json!("v1.30.1")),
        (cp, "/spec/machineTemplate/nodeDrainTimeout", json!("1m30s")),
        (
            cp,
            "/spec/machineTemplate/infrastructureRef",
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": name(cp_copy), "namespace": "ns"}),
        ),
        (
            d.infrastructure_cluster.as_ref().unwrap(),
            "/kind",
            json!("DockerCluster"),
        ),
        (
            d.infrastructure_cluster.as_ref().unwrap(),
            "/spec",
            json!({"loadBalancer": {}}),
        ),
        (md0, "/spec/clusterName", json!("c1")),
        (md0, "/spec/replicas", json!(2)),
        (md0, "/spec/template/spec/clusterName", json!("c1")),
        (md0, "/spec/template/spec/version", json!("v1.30.1")),
        (
            md0,
            "/spec/template/spec/nodeDeletionTimeout",
            json!("1h0m0s"),
        ),
        (
            md0,
            "/spec/selector",
            json!({"matchLabels": {"cluster.x-k8s.io/cluster-name": "c1", "topology.cluster.x-k8s.io/owned": "", "topology.cluster.x-k8s.io/deployment-name": "md-0"}}),
        ),
        (
            md0,
            "/spec/template/spec/bootstrap/configRef",
            json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": name(&d.machine_deployments[0].bootstrap_template), "namespace": "ns"}),
        ),
        // Replicas unset in the topology stay unset (an autoscaler owns them).
        (md1, "/spec/replicas", Value::Null),
        (&d.cluster, "/spec/controlPlaneRef/name", json!(name(cp))),
        (
            &d.cluster,
            "/spec/controlPlaneRef/kind",
            json!("KubeadmControlPlane"),
        ),
        (
            &d.cluster,
            "/spec/infrastructureRef/kind",
            json!("DockerCluster"),
        ),
        (
            &d.cluster,
            "/metadata/labels/topology.cluster.x-k8s.io~1owned",
            json!(""),
        ),
    ];
    for (object, pointer, want) in cases {
        assert_eq!(at(object, pointer), &want, "{pointer} of {}", name(object));
    }
    let no_replicas = CLUSTER.replace("      replicas: 3\n", "");
    let d = desired(&[CLASS, &no_replicas]);
    assert_eq!(at(&d.control_plane.object, "/spec/replicas"), &Value::Null);
}

#[test]
fn health_checks() {
    let d = base();
    let cp_check = d.control_plane.health_check.as_ref().unwrap();
    let md_check = d.machine_deployments[0].health_check.as_ref().unwrap();
    let cases: Vec<(&Value, &str, Value)> = vec![
        (
            cp_check,
            "/spec/selector/matchLabels",
            json!({"topology.cluster.x-k8s.io/owned": "", "cluster.x-k8s.io/control-plane": ""}),
        ),
        (cp_check, "/spec/clusterName", json!("c1")),
        // Defaults as the MachineHealthCheck webhook sets them.
        (cp_check, "/spec/maxUnhealthy", json!("100%")),
        (cp_check, "/spec/nodeStartupTimeout", json!("10m0s")),
        (
            cp_check,
            "/spec/unhealthyConditions",
            json!([{"type": "Ready", "status": "Unknown", "timeout": "5m0s"}]),
        ),
        (
            cp_check,
            "/metadata/labels",
            json!({"topology.cluster.x-k8s.io/owned": "", "cluster.x-k8s.io/cluster-name": "c1"}),
        ),
        (
            cp_check,
            "/metadata/ownerReferences/0/kind",
            json!("Cluster"),
        ),
        (
            md_check,
            "/spec/selector/matchLabels",
            json!({"topology.cluster.x-k8s.io/owned": "", "topology.cluster.x-k8s.io/deployment-name": "md-0"}),
        ),
        (md_check, "/spec/maxUnhealthy", json!("40%")),
        (md_check, "/spec/nodeStartupTimeout", json!("3m0s")),
    ];
    for (object, pointer, want) in cases {
        assert_eq!(at(object, pointer), &want, "{pointer}");
    }
    // A class without a health check gives none.
    assert!(d.machine_deployments[1].health_check.is_none());

    // (topology health check setting for md-0 / md-1, md-0 has one?, md-1 has one?)
    let cases = [
        ("{enable: false}", "{}", false, false),
        ("{enable: true}", "{}", true, false),
        (
            "{nodeStartupTimeout: 1m}",
            "{nodeStartupTimeout: 2m}",
            true,
            true,
        ),
        // (`enable: true` on md-1, whose class has no check, is refused by admission.)
        (
            "{enable: false, nodeStartupTimeout: 1m}",
            "{}",
            false,
            false,
        ),
    ];
    for (md0, md1, want0, want1) in cases {
        let cluster = CLUSTER
            .replace(
                "        name: md-0\n",
                &format!("        name: md-0\n        machineHealthCheck: {md0}\n"),
            )
            .replace(
                "        name: md-1\n",
                &format!("        name: md-1\n        machineHealthCheck: {md1}\n"),
            );
        let d = desired(&[CLASS, &cluster]);
        assert_eq!(
            d.machine_deployments[0].health_check.is_some(),
            want0,
            "{md0}"
        );
        assert_eq!(
            d.machine_deployments[1].health_check.is_some(),
            want1,
            "{md1}"
        );
        // A topology definition replaces the class's as a whole.
        if md0.contains("nodeStartupTimeout: 1m") && want0 {
            let check = d.machine_deployments[0].health_check.as_ref().unwrap();
            assert_eq!(at(check, "/spec/nodeStartupTimeout"), &json!("1m0s"));
            assert_eq!(at(check, "/spec/maxUnhealthy"), &json!("100%"));
            assert_eq!(at(check, "/spec/unhealthyConditions"), &Value::Null);
        }
    }
    // No control plane machine infrastructure: no control plane health check. Admission
    // refuses the class's check then; without admission the check is left out.
    let class = CLASS.replace(
        "    machineInfrastructure:\n      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp-machines}\n",
        "",
    );
    let refused = render_docs(&[&class, CLUSTER]).unwrap_err();
    assert_eq!(
        refused.messages,
        vec!["ClusterClass ns/cc: spec.controlPlane.machineHealthCheck: Forbidden: can be only set if spec.controlPlane.machineInfrastructure is set".to_string()]
    );
    let f = fixture(&[&class, CLUSTER]);
    let d = render_unadmitted(&f.cluster, &f.class, &f.store)
        .unwrap_or_else(|e| panic!("{e}"))
        .desired;
    assert!(d.control_plane.health_check.is_none());
    assert!(d.control_plane.machine_template.is_none());
    assert_eq!(
        at(
            &d.control_plane.object,
            "/spec/machineTemplate/infrastructureRef"
        ),
        &Value::Null
    );
}

#[test]
fn infrastructure_is_optional() {
    let class = CLASS.replace(
        "  infrastructure:\n    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate, name: infra}\n",
        "",
    );
    let d = desired(&[&class, CLUSTER]);
    assert!(d.infrastructure_cluster.is_none());
    assert_eq!(at(&d.cluster, "/spec/infrastructureRef"), &Value::Null);
    assert_eq!(
        at(&d.cluster, "/spec/controlPlaneRef/kind"),
        &json!("KubeadmControlPlane")
    );
}

const CURRENT: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: existing-md
  namespace: ns
  labels:
    cluster.x-k8s.io/cluster-name: c1
    topology.cluster.x-k8s.io/owned: ""
    topology.cluster.x-k8s.io/deployment-name: md-0
spec:
  template:
    spec:
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: existing-boot}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: existing-infra}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata:
  name: existing-infra
  namespace: ns
  labels: {topology.cluster.x-k8s.io/owned: ""}
spec: {template: {spec: {image: SPEC}}}
"#;

#[test]
fn names_of_existing_objects_are_reused() {
    let cluster = CLUSTER.replace(
        "spec:\n  topology:",
        "spec:\n  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerCluster, name: existing-infra-cluster, namespace: ns}\n  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, name: existing-cp, namespace: ns}\n  topology:",
    );
    let current = CURRENT.replace("SPEC", "worker");
    let d = desired(&[CLASS, &cluster, &current]);
    let md = &d.machine_deployments[0];
    assert_eq!(
        name(d.infrastructure_cluster.as_ref().unwrap()),
        "existing-infra-cluster"
    );
    assert_eq!(name(&d.control_plane.object), "existing-cp");
    assert_eq!(name(&md.object), "existing-md");
    assert_eq!(name(&md.bootstrap_template), "existing-boot");
    assert_eq!(name(&md.infrastructure_template), "existing-infra");
    // A newer apiVersion of the same group and kind in a current reference is kept.
    assert_eq!(
        at(&d.cluster, "/spec/controlPlaneRef/apiVersion"),
        &json!("controlplane.cluster.x-k8s.io/v1beta2")
    );
    assert_eq!(
        at(
            &md.object,
            "/spec/template/spec/bootstrap/configRef/apiVersion"
        ),
        &json!("bootstrap.cluster.x-k8s.io/v1beta2")
    );
    // md-1 does not exist yet: generated name.
    assert_generated(&name(&d.machine_deployments[1].object), "c1-md-1-");
}

#[test]
fn a_changed_template_spec_rotates_the_copy() {
    let unchanged = desired(&[CLASS, CLUSTER, &CURRENT.replace("SPEC", "worker")]);
    assert_eq!(
        name(&unchanged.machine_deployments[0].infrastructure_template),
        "existing-infra"
    );
    let changed = desired(&[CLASS, CLUSTER, &CURRENT.replace("SPEC", "old-image")]);
    let md = &changed.machine_deployments[0];
    let rotated = name(&md.infrastructure_template);
    assert_generated(&rotated, "c1-md-0-");
    assert_eq!(
        at(&md.object, "/spec/template/spec/infrastructureRef/name"),
        &json!(rotated)
    );
    // The same change always gives the same new name.
    let again = desired(&[CLASS, CLUSTER, &CURRENT.replace("SPEC", "old-image")]);
    assert_eq!(
        name(&again.machine_deployments[0].infrastructure_template),
        rotated
    );
}

#[test]
fn shim_owner_reference_is_carried_over() {
    let cluster = CLUSTER.replace(
        "spec:\n  topology:",
        "spec:\n  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp-now, namespace: ns}\n  topology:",
    );
    let cp = r#"
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: cp-now
  namespace: ns
  labels: {topology.cluster.x-k8s.io/owned: ""}
  ownerReferences: [{apiVersion: v1, kind: Secret, name: c1-shim, uid: s}, {apiVersion: x/v1, kind: Other, name: o, uid: o}]
"#;
    let d = desired(&[CLASS, &cluster, cp]);
    assert_eq!(
        at(&d.control_plane.object, "/metadata/ownerReferences"),
        &json!([{"apiVersion": "v1", "kind": "Secret", "name": "c1-shim", "uid": "s"}])
    );
}

#[test]
fn errors_name_the_problem() {
    // (documents, expected message)
    let unknown_class = CLUSTER.replace("class: no-check", "class: nope");
    let not_owned = CLUSTER.replace(
        "spec:\n  topology:",
        "spec:\n  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp-now, namespace: ns}\n  topology:",
    );
    let cp = "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\nmetadata: {name: cp-now, namespace: ns}\n";
    let unlabelled_md = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata:\n  name: md-x\n  namespace: ns\n  labels: {cluster.x-k8s.io/cluster-name: c1, topology.cluster.x-k8s.io/owned: \"\"}\n";
    let with_pools = CLUSTER.replace(
        "      machineDeployments:",
        "      machinePools: [{class: p, name: p0}]\n      machineDeployments:",
    );
    let class_with_pools = CLASS.replace(
        "  workers:\n",
        "  workers:\n    machinePools:\n    - class: p\n      template:\n        bootstrap: {ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}}\n        infrastructure: {ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}}\n",
    ) + "---\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: DockerMachinePoolTemplate\nmetadata: {name: pool, namespace: ns}\nspec: {template: {spec: {}}}\n";
    let missing_template = CLASS.replace("name: workers}", "name: gone}");
    let pool_template_gone = class_with_pools.replace("name: pool}", "name: gone}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![CLASS, &unknown_class],
            "spec.topology.workers.machineDeployments[1].class: Invalid value: \"nope\": MachineDeploymentClass with name \"nope\" does not exist in ClusterClass \"cc\"",
        ),
        (
            vec![CLASS, &not_owned, cp],
            "KubeadmControlPlane ns/cp-now referenced from Cluster ns/c1 is not topology owned",
        ),
        (
            vec![CLASS, CLUSTER, unlabelled_md],
            "failed to find label topology.cluster.x-k8s.io/deployment-name in MachineDeployment ns/md-x",
        ),
        (
            vec![CLASS, &with_pools],
            "spec.topology.workers.machinePools[0].class: Invalid value: \"p\": MachinePoolClass with name \"p\" does not exist in ClusterClass \"cc\"",
        ),
        (
            vec![&pool_template_gone, &with_pools],
            "failed to get InfrastructureMachinePoolTemplate for ClusterClass ns/cc, MachinePool class \"p\": spec.workers.machinePools[0].template.infrastructure.ref: DockerMachinePoolTemplate ns/gone not found",
        ),
        (
            vec![&missing_template, CLUSTER],
            "failed to get infrastructure machine template for ClusterClass ns/cc, MachineDeployment class \"default-worker\": spec.workers.machineDeployments[0].template.infrastructure.ref: DockerMachineTemplate ns/gone not found",
        ),
    ];
    for (docs, want) in cases {
        let err = render_docs(&docs).unwrap_err();
        assert!(
            err.messages.iter().any(|m| m.contains(want)),
            "wanted {want:?} in {:?}",
            err.messages
        );
    }

    // With its templates the pool renders: a MachinePool and two objects (not
    // template copies) created from the class's templates, owned by the Cluster.
    let desired =
        render_docs(&[&class_with_pools, &with_pools]).unwrap_or_else(|e| panic!("{e:?}"));
    let [pool] = desired.machine_pools.as_slice() else {
        panic!("one pool: {:?}", desired.machine_pools)
    };
    assert_eq!(pool.topology_name, "p0");
    let mp = &pool.object;
    assert_eq!(mp["kind"], "MachinePool");
    assert!(
        mp["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("c1-p0-")
    );
    for labels in [
        &mp["metadata"]["labels"],
        &mp["spec"]["template"]["metadata"]["labels"],
    ] {
        assert_eq!(labels["topology.cluster.x-k8s.io/pool-name"], "p0");
        assert_eq!(labels["topology.cluster.x-k8s.io/owned"], "");
        assert_eq!(labels["cluster.x-k8s.io/cluster-name"], "c1");
    }
    assert!(mp["spec"].get("selector").is_none(), "no selector: {mp}");
    let spec = &mp["spec"]["template"]["spec"];
    for (object, kind, reference) in [
        (
            &pool.bootstrap_object,
            "KubeadmConfig",
            &spec["bootstrap"]["configRef"],
        ),
        (
            &pool.infrastructure_object,
            "DockerMachinePool",
            &spec["infrastructureRef"],
        ),
    ] {
        assert_eq!(object["kind"], kind);
        assert_eq!(reference["kind"], kind);
        assert_eq!(reference["name"], object["metadata"]["name"]);
        assert!(
            object["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with("c1-p0-")
        );
        assert_eq!(
            object["metadata"]["labels"]["topology.cluster.x-k8s.io/pool-name"],
            "p0"
        );
        assert_eq!(object["metadata"]["ownerReferences"][0]["kind"], "Cluster");
        assert_eq!(
            object["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-groupkind"],
            format!(
                "{kind}Template.{}",
                object["apiVersion"]
                    .as_str()
                    .unwrap()
                    .split('/')
                    .next()
                    .unwrap()
            )
        );
    }
}

#[test]
fn a_reference_without_a_name_does_not_name_the_object() {
    let cluster = CLUSTER.replace(
        "spec:\n  topology:",
        "spec:\n  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane}\n  topology:",
    );
    let d = desired(&[CLASS, &cluster]);
    assert_generated(&name(&d.control_plane.object), "c1-");
}

/// CLASS with a patch replacing the image the workers' DockerMachineTemplate sets.
fn class_patching_the_worker_image() -> String {
    CLASS.replacen(
        "  workers:\n    machineDeployments:",
        "  patches:\n  - name: image\n    definitions:\n    - selector:\n        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n        kind: DockerMachineTemplate\n        matchResources:\n          machineDeploymentClass: {names: [default-worker]}\n      jsonPatches:\n      - {op: replace, path: /spec/template/spec/image, value: patched}\n  workers:\n    machineDeployments:",
        1,
    )
}

#[test]
fn rotation_is_decided_on_the_patched_spec() {
    let class = class_patching_the_worker_image();
    // The current copy holds what the patch makes of the template: no rotation, though
    // the class template's own image differs.
    let d = desired(&[&class, CLUSTER, &CURRENT.replace("SPEC", "patched")]);
    let md = &d.machine_deployments[0];
    assert_eq!(
        at(&md.infrastructure_template, "/spec/template/spec/image"),
        &json!("patched")
    );
    assert_eq!(name(&md.infrastructure_template), "existing-infra");
    assert_eq!(
        at(&md.object, "/spec/template/spec/infrastructureRef/name"),
        &json!("existing-infra")
    );

    // The current copy holds the unpatched image: the patched spec changed, so it
    // rotates, the MachineDeployment follows, and the explanation names the new copy.
    let f = fixture(&[&class, CLUSTER, &CURRENT.replace("SPEC", "worker")]);
    let rendered = admit_and_render(&f.cluster, &f.class, &f.store).unwrap();
    let md = &rendered.desired.machine_deployments[0];
    let rotated = name(&md.infrastructure_template);
    assert_generated(&rotated, "c1-md-0-");
    assert_eq!(
        at(&md.object, "/spec/template/spec/infrastructureRef/name"),
        &json!(rotated)
    );
    let patched: Vec<&str> = rendered
        .explanation
        .changes
        .iter()
        .filter(|c| c.patch == "image" && c.template.contains("workers"))
        .map(|c| c.object.as_str())
        .collect();
    assert_eq!(
        patched,
        [format!("DockerMachineTemplate ns/{rotated}").as_str()]
    );
    // Once written, the rotated copy holds: the next render keeps its name.
    let current = CURRENT
        .replace("SPEC", "patched")
        .replace("existing-infra", &rotated);
    let again = desired(&[&class, CLUSTER, &current]);
    assert_eq!(
        name(&again.machine_deployments[0].infrastructure_template),
        rotated
    );
}
