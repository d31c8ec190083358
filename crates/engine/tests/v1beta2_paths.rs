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

/// A v1beta2 class and Cluster with a MachinePool class and two MachinePools.
const POOLS: &str = "apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: cc, namespace: ns}
spec:
  infrastructure:
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevClusterTemplate, name: infra}
  controlPlane:
    templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp}
  workers:
    machinePools:
    - class: pool
      metadata: {labels: {tier: pool}}
      bootstrap:
        templateRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: boot}
      infrastructure:
        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevMachinePoolTemplate, name: pool}
  variables:
  - name: replicas
    required: false
    schema: {openAPIV3Schema: {type: integer, minimum: 1}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c, namespace: ns}
spec:
  topology:
    classRef: {name: cc}
    version: v1.30.0
    workers:
      machinePools:
      - {class: pool, name: p0, replicas: 1}
      - {class: pool, name: p1}
";

/// MachinePool rules name v1beta2 paths where the version renames a field (naming,
/// the compatibility rule's `templateRef`) and otherwise the paths Cluster API main
/// uses for both versions (its `template` and `ref` segments kept).
#[test]
fn machine_pool_rules_name_v1beta2_paths() {
    assert_eq!(problems(POOLS), Vec::<String>::new());
    // (what to change in POOLS, the problems expected)
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "      - {class: pool, name: p1}\n",
            "      - {class: nope, name: p0}\n",
            &[
                "spec.topology.workers.machinePools[1].class: Invalid value: \"nope\": MachinePoolClass with name \"nope\" does not exist in ClusterClass \"cc\"",
                "spec.topology.workers.machinePools[1].name: Invalid value: \"p0\": name must be unique. MachinePool with name \"p0\" is defined more than once",
            ],
        ),
        (
            "      - {class: pool, name: p1}\n",
            "      - {class: pool, name: p1, metadata: {labels: {\"a b\": x}}}\n",
            &[
                "spec.topology.workers.machinePools[p1].metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
        ),
        (
            "      - {class: pool, name: p1}\n",
            "      - {class: pool, name: p1, variables: {overrides: [{name: replicas, value: 0}]}}\n",
            &[
                "spec.topology.workers.machinePools[p1].variables.overrides[replicas].value: Invalid value: \"0\": should be greater than or equal to 1",
            ],
        ),
        (
            "      - {class: pool, name: p1}\n",
            "      - {class: pool, name: p1, deletion: {nodeDrainTimeoutSeconds: -1}}\n",
            &[
                "Cluster ns/c: spec.topology.workers.machinePools[1].deletion.nodeDrainTimeoutSeconds: invalid value: -1, should be greater than or equal to 0",
            ],
        ),
        (
            "      - {class: pool, name: p1}\n",
            "      - {class: pool, name: p1, minReadySeconds: -1}\n",
            &[
                "Cluster ns/c: spec.topology.workers.machinePools[1].minReadySeconds: invalid value: -1, should be greater than or equal to 0",
            ],
        ),
        (
            "      metadata: {labels: {tier: pool}}\n",
            "      metadata: {labels: {tier: \"a b\"}}\n",
            &[
                "spec.workers.machinePools[pool].template.metadata.labels: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ],
        ),
        (
            "      metadata: {labels: {tier: pool}}\n",
            "      metadata: {labels: {tier: pool}}\n      naming: {template: \"{{ .cluster.name }}_{{ .machinePool.topologyName }}\"}\n",
            &[
                "spec.workers.machinePools[pool].naming.template: Invalid value: \"{{ .cluster.name }}_{{ .machinePool.topologyName }}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ],
        ),
        (
            "kind: KubeadmConfigTemplate, name: boot}",
            "kind: KubeadmConfig, name: boot}",
            &[
                "spec.workers.machinePools[0].template.bootstrap.ref.kind: Invalid value: \"KubeadmConfig\": template kind must be of form \"<name>Template\"",
            ],
        ),
    ];
    for (from, to, want) in cases {
        assert_eq!(POOLS.matches(from).count(), 1, "{from:?} is not unique");
        let got = problems(&POOLS.replacen(from, to, 1));
        assert_eq!(&got, want, "{to:?}");
    }
}

/// On update, v1beta2 names the MachinePool class's `infrastructure.templateRef`; a
/// removed MachinePool class still in use is refused as in v1beta1.
#[test]
fn machine_pool_class_updates_name_v1beta2_paths() {
    let load_one = |text: &str| {
        load(
            &[Input {
                name: "in.yaml",
                text,
            }],
            &LoadOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e:?}"))
    };
    let old = load_one(POOLS);
    let (old_class, cluster) = (&old.cluster_classes[0].value, &old.clusters[0].value);
    let update = |text: String| -> Vec<String> {
        let new = load_one(&text);
        match admit_class(
            new.cluster_classes[0].value.clone(),
            Some(old_class),
            &[cluster],
        ) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        }
    };
    assert_eq!(
        update(POOLS.replacen(
            "kind: DevMachinePoolTemplate",
            "kind: AWSMachinePoolTemplate",
            1
        )),
        vec![
            "spec.workers.machinePools[0].infrastructure.templateRef.kind: Forbidden: kind cannot be changed from \"DevMachinePoolTemplate\" to \"AWSMachinePoolTemplate\" to prevent incompatible changes in the Clusters"
        ]
    );
    assert_eq!(
        update(POOLS.replacen("    - class: pool\n", "    - class: other\n", 1)),
        vec![
            "spec.workers.machinePools: Forbidden: MachinePoolClass \"pool\" cannot be deleted because it is used by Cluster \"c\"",
            "spec.workers.machinePools: Forbidden: MachinePoolClass \"pool\" cannot be deleted because it is used by Cluster \"c\"",
        ]
    );
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
