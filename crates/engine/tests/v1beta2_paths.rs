//! v1beta2 documents are refused at the paths the user wrote, with Cluster API main's
//! texts: unknown fields (a v1beta1 field in a v1beta2 document included) and bad
//! `*Seconds` at load, the webhook rules at admission.

use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::admission::{admit_class, admit_cluster};

const CLASS: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: cc, namespace: ns}
spec:
  infrastructure:
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevClusterTemplate, name: infra}
  controlPlane:
    templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp}
  workers:
    machineDeployments:
    - class: default-worker
      bootstrap:
        templateRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: boot}
      infrastructure:
        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevMachineTemplate, name: machine}
";

const CLUSTER: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c, namespace: ns}
spec:
  topology:
    classRef: {name: cc}
    version: v1.30.0
    workers:
      machineDeployments:
      - {class: default-worker, name: md-0}
";

/// Every problem of loading `text`, then admitting its class and Cluster.
fn problems(text: &str) -> Vec<String> {
    let bundle = match load(
        &[Input {
            name: "in.yaml",
            text,
        }],
        &LoadOptions::default(),
    ) {
        Ok(bundle) => bundle,
        Err(errors) => return errors.iter().map(|e| e.message.clone()).collect(),
    };
    let mut out = Vec::new();
    let classes: Vec<_> = bundle.cluster_classes.iter().map(|c| &c.value).collect();
    for class in &classes {
        if let Err(errors) = admit_class((*class).clone(), None, &[]) {
            out.extend(errors.iter().map(ToString::to_string));
        }
    }
    for cluster in &bundle.clusters {
        let admission = admit_cluster(&cluster.value, None, &classes);
        out.extend(admission.errors.iter().map(ToString::to_string));
    }
    out
}

#[test]
fn the_valid_documents_are_admitted() {
    assert_eq!(
        problems(&format!("{CLASS}---\n{CLUSTER}")),
        Vec::<String>::new()
    );
}

#[test]
fn broken_v1beta2_documents_name_v1beta2_paths() {
    // (what to change in CLASS or CLUSTER, the one problem expected)
    let cases: &[(&str, &str, &str)] = &[
        (
            "    templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp}\n",
            "    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp}\n",
            "ClusterClass ns/cc: spec.controlPlane.ref: unknown field `ref`",
        ),
        (
            "  controlPlane:\n",
            "  controlPlane:\n    deletion: {nodeDrainTimeoutSeconds: -1}\n",
            "ClusterClass ns/cc: spec.controlPlane.deletion.nodeDrainTimeoutSeconds: invalid value: -1, should be greater than or equal to 0",
        ),
        (
            "  controlPlane:\n",
            "  controlPlane:\n    deletion: {nodeDeletionTimeoutSeconds: 10s}\n",
            "ClusterClass ns/cc: spec.controlPlane.deletion.nodeDeletionTimeoutSeconds: invalid type: string \"10s\", expected i32",
        ),
        (
            "    - class: default-worker\n",
            "    - class: default-worker\n      machineHealthCheck: {}\n",
            "ClusterClass ns/cc: spec.workers.machineDeployments[0].machineHealthCheck: unknown field `machineHealthCheck`",
        ),
        (
            "  controlPlane:\n",
            "  controlPlane:\n    healthCheck: {checks: {nodeStartupTimeoutSeconds: 40}}\n",
            "spec.controlPlane.healthCheck: Forbidden: can be only set if spec.controlPlane.machineInfrastructure is set",
        ),
        (
            "    - class: default-worker\n",
            "    - class: default-worker\n      healthCheck: {checks: {nodeStartupTimeoutSeconds: 10}}\n",
            "spec.workers.machineDeployments[default-worker].healthCheck.checks.nodeStartupTimeoutSeconds: Invalid value: 10: must be at least 30s",
        ),
        (
            "    - class: default-worker\n",
            "    - class: default-worker\n      healthCheck: {remediation: {maxInFlight: x%}}\n",
            "spec.workers.machineDeployments[default-worker].healthCheck.remediation.maxInFlight: Invalid value: \"x%\": must be either an int or a percentage: invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": invalid syntax",
        ),
        (
            "    - class: default-worker\n",
            "    - class: default-worker\n      rollout: {strategy: {rollingUpdate: {maxSurge: lots}}}\n",
            "spec.workers.machineDeployments[default-worker].rollout.strategy.rollingUpdate.maxSurge: Invalid value: \"lots\": must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage",
        ),
        (
            "    - class: default-worker\n",
            "    - class: default-worker\n      naming: {template: \"{{ .nope \"}\n",
            "spec.workers.machineDeployments[default-worker].naming.template: Invalid value",
        ),
        (
            "name: cp}\n",
            "name: \"\"}\n",
            // Cluster API main keeps v1beta1's `ref` segment in this rule's paths.
            "spec.controlPlane.ref.name: Required value: template name must be defined",
        ),
        (
            "    classRef: {name: cc}\n",
            "    classRef: {name: \"\"}\n",
            "spec.topology.classRef.name: Required value: cannot be empty",
        ),
        (
            "    classRef: {name: cc}\n",
            "    class: cc\n",
            "Cluster ns/c: spec.topology.class: unknown field `class`",
        ),
        (
            "    version: v1.30.0\n",
            "    version: v1.30.0\n    controlPlane: {healthCheck: {enabled: false}}\n",
            "spec.topology.controlPlane.healthCheck: Forbidden: can be only set if spec.controlPlane.machineInfrastructure is set in ClusterClass",
        ),
        (
            "      - {class: default-worker, name: md-0}\n",
            "      - {class: default-worker, name: md-0, healthCheck: {enabled: true}}\n",
            "spec.topology.workers.machineDeployments[md-0].healthCheck.enable: Forbidden: cannot be set to true as healthCheck definition is not available in the Cluster topology or the ClusterClass",
        ),
        (
            "      - {class: default-worker, name: md-0}\n",
            "      - {class: default-worker, name: md-0, deletion: {nodeVolumeDetachTimeoutSeconds: -5}}\n",
            "Cluster ns/c: spec.topology.workers.machineDeployments[0].deletion.nodeVolumeDetachTimeoutSeconds: invalid value: -5, should be greater than or equal to 0",
        ),
    ];
    for (from, to, want) in cases {
        let documents = format!("{CLASS}---\n{CLUSTER}");
        assert_eq!(documents.matches(from).count(), 1, "{from:?} is not unique");
        let got = problems(&documents.replacen(from, to, 1));
        assert!(
            got.len() == 1 && got[0].starts_with(want),
            "{to:?}:\n got {got:#?}\nwant {want:?}"
        );
    }
}

proptest::proptest! {
    /// Loading never panics, whatever a v1beta2 document's lines are shuffled into.
    #[test]
    fn loading_mutated_v1beta2_documents_never_panics(
        cut in 0usize..2000,
        insert in "[ a-zA-Z:{}\\[\\]\\-0-9\"]{0,12}",
    ) {
        let documents = format!("{CLASS}---\n{CLUSTER}");
        let at = documents
            .char_indices()
            .map(|(i, _)| i)
            .nth(cut % documents.chars().count())
            .unwrap_or(0);
        let mutated = format!("{}{insert}{}", &documents[..at], &documents[at..]);
        let _ = problems(&mutated);
    }
}
