//! Table tests of the admission rules (spec section 6): each rule's exact text and
//! field path, on create and, where it applies, on update; several problems in one
//! object are all reported, in a stable order.

use topograph_api::load::{Input, LoadOptions, load};
use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::validate::{
    check_compatibility, default_cluster, validate_cluster, validate_cluster_class,
};

const CLASS: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: cc, namespace: ns}
spec:
  infrastructure:
    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate, name: infra}
  controlPlane:
    metadata: {labels: {cp: "1"}}
    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}
    machineInfrastructure:
      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp-machines}
    machineHealthCheck:
      unhealthyConditions: [{type: Ready, status: Unknown, timeout: 300s}]
  workers:
    machineDeployments:
    - class: default-worker
      template:
        metadata: {labels: {md: "1"}}
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}
      machineHealthCheck:
        unhealthyConditions: [{type: Ready, status: "False", timeout: 300s}]
    - class: other-worker
      template:
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}
    machinePools:
    - class: pool
      template:
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}
  variables:
  - name: region
    required: true
    schema: {openAPIV3Schema: {type: string, default: us-east-1}}
  - name: replicas
    required: false
    schema: {openAPIV3Schema: {type: integer, minimum: 1}}
"#;

const CLUSTER: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c1, namespace: ns}
spec:
  clusterNetwork:
    pods: {cidrBlocks: [192.168.0.0/16]}
    services: {cidrBlocks: [10.128.0.0/12]}
  topology:
    class: cc
    version: v1.30.1
    controlPlane:
      replicas: 3
    variables:
    - {name: replicas, value: 2}
    workers:
      machineDeployments:
      - {class: default-worker, name: md-0, replicas: 2}
      - {class: other-worker, name: md-1}
"#;

fn load_class(text: &str) -> ClusterClass {
    let bundle = load(
        &[Input {
            name: "class.yaml",
            text,
        }],
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    bundle.cluster_classes[0].value.clone()
}

fn load_cluster(text: &str) -> Cluster {
    let bundle = load(
        &[Input {
            name: "cluster.yaml",
            text,
        }],
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    bundle.clusters[0].value.clone()
}

fn replaced(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "fixture lacks {from:?}");
    base.replacen(from, to, 1)
}

fn class_errors(class: &str, old: Option<&str>, clusters: &[&str]) -> Vec<String> {
    let class = load_class(class);
    let old = old.map(load_class);
    let clusters: Vec<Cluster> = clusters.iter().map(|c| load_cluster(c)).collect();
    let refs: Vec<&Cluster> = clusters.iter().collect();
    validate_cluster_class(&class, old.as_ref(), &refs)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Defaults then validates, as admission does; defaulting errors come back alone.
fn cluster_outcome(
    cluster: &str,
    old: Option<&str>,
    class: Option<&str>,
) -> (Vec<String>, Vec<String>) {
    let class = class.map(load_class);
    let cluster = load_cluster(cluster);
    let old = old.map(load_cluster);
    let defaulted = match default_cluster(&cluster, class.as_ref()) {
        Ok(c) => c,
        Err(errors) => return (errors.iter().map(ToString::to_string).collect(), vec![]),
    };
    let classes: Vec<&ClusterClass> = class.iter().collect();
    let v = validate_cluster(&defaulted, old.as_ref(), &classes);
    (
        v.errors.iter().map(ToString::to_string).collect(),
        v.warnings,
    )
}

fn cluster_errors(cluster: &str, old: Option<&str>) -> Vec<String> {
    cluster_outcome(cluster, old, Some(CLASS)).0
}

#[test]
fn the_fixtures_are_valid() {
    assert_eq!(class_errors(CLASS, None, &[]), Vec::<String>::new());
    assert_eq!(
        class_errors(CLASS, Some(CLASS), &[CLUSTER]),
        Vec::<String>::new()
    );
    assert_eq!(cluster_errors(CLUSTER, None), Vec::<String>::new());
    assert_eq!(cluster_errors(CLUSTER, Some(CLUSTER)), Vec::<String>::new());
}

/// Every template reference of the class, with each way it can be wrong.
#[test]
fn template_references() {
    // (the reference as written in the fixture, its path)
    let refs = [
        (
            "{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate, name: infra}",
            "spec.infrastructure",
            "DockerClusterTemplate",
            "infra",
        ),
        (
            "{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}",
            "spec.controlPlane",
            "KubeadmControlPlaneTemplate",
            "cp",
        ),
        (
            "{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp-machines}",
            "spec.controlPlane.machineInfrastructure",
            "DockerMachineTemplate",
            "cp-machines",
        ),
        (
            "{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}",
            "spec.workers.machinePools[0].template.infrastructure",
            "DockerMachinePoolTemplate",
            "pool",
        ),
        (
            "{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}",
            "spec.workers.machineDeployments[0].template.bootstrap",
            "KubeadmConfigTemplate",
            "boot",
        ),
    ];
    let mut cases = 0;
    for (written, path, kind, name) in refs {
        let group_version = written
            .split("apiVersion: ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap_or_default();
        // (replacement, expected error)
        let variants = [
            (
                written.replace(&format!("kind: {kind}"), "kind: Template"),
                format!(
                    r#"{path}.ref.kind: Invalid value: "Template": template kind must be of form "<name>Template""#
                ),
            ),
            (
                written.replace(&format!("kind: {kind}"), "kind: DockerCluster"),
                format!(
                    r#"{path}.ref.kind: Invalid value: "DockerCluster": template kind must be of form "<name>Template""#
                ),
            ),
            (
                written.replace(group_version, "a/b/c"),
                format!(
                    r#"{path}.ref.apiVersion: Invalid value: "a/b/c": template apiVersion must be a valid Kubernetes apiVersion: unexpected GroupVersion string: a/b/c"#
                ),
            ),
            (
                written.replace(
                    &format!("name: {name}}}"),
                    "name: other, namespace: elsewhere}",
                ),
                format!(
                    r#"{path}.ref.namespace: Invalid value: "elsewhere": template must be in the same namespace as the ClusterClass (ns)"#
                ),
            ),
        ];
        for (replacement, want) in variants {
            let class = replaced(CLASS, written, &replacement);
            assert_eq!(class_errors(&class, None, &[]), vec![want], "{replacement}");
            cases += 1;
        }
    }
    assert_eq!(cases, 20);
}

/// A reference missing a field is refused when the class is read, with the webhook's
/// texts, since no topology can be computed from it.
#[test]
fn incomplete_references_are_refused_on_load() {
    let cases = [
        (
            "kind: DockerClusterTemplate, name: infra}",
            "kind: DockerClusterTemplate}",
            "spec.infrastructure.ref.name: Required value: template name must be defined",
        ),
        (
            "{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}",
            "{kind: KubeadmControlPlaneTemplate, name: cp}",
            "spec.controlPlane.ref.apiVersion: Required value: template apiVersion must be defined",
        ),
        (
            "{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}",
            "{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, name: pool}",
            r#"spec.workers.machinePools[0].template.infrastructure.ref.kind: Invalid value: "": template kind must be of form "<name>Template""#,
        ),
    ];
    for (from, to, want) in cases {
        let class = replaced(CLASS, from, to);
        let errors = load(
            &[Input {
                name: "class.yaml",
                text: &class,
            }],
            &LoadOptions::default(),
        )
        .err()
        .unwrap_or_default();
        let messages: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
        assert_eq!(
            messages,
            vec![format!("ClusterClass ns/cc: {want}")],
            "{to}"
        );
    }
}

#[test]
fn worker_classes_health_checks_strategies_and_metadata() {
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            replaced(
                CLASS,
                "    - class: other-worker",
                "    - class: default-worker",
            ),
            vec![
                r#"spec.workers.machineDeployments[1].class: Invalid value: "default-worker": MachineDeployment class must be unique. MachineDeployment with class "default-worker" is defined more than once"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "    machinePools:\n    - class: pool\n",
                "    machinePools:\n    - class: pool\n      template:\n        bootstrap:\n          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}\n    - class: pool\n",
            ),
            vec![
                r#"spec.workers.machinePools[1].class: Invalid value: "pool": MachinePool class must be unique. MachinePool with class "pool" is defined more than once"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "    machineInfrastructure:\n      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp-machines}\n",
                "",
            ),
            vec![
                "spec.controlPlane.machineHealthCheck: Forbidden: can be only set if spec.controlPlane.machineInfrastructure is set",
            ],
        ),
        (
            replaced(
                CLASS,
                "      unhealthyConditions: [{type: Ready, status: Unknown, timeout: 300s}]",
                "      nodeStartupTimeout: 10s",
            ),
            vec![
                r#"spec.controlPlane.machineHealthCheck.nodeStartupTimeout: Invalid value: "10s": must be at least 30s"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "      unhealthyConditions: [{type: Ready, status: Unknown, timeout: 300s}]",
                "      nodeStartupTimeout: 0s",
            ),
            vec![],
        ),
        (
            replaced(
                CLASS,
                "      unhealthyConditions: [{type: Ready, status: Unknown, timeout: 300s}]",
                "      nodeStartupTimeout: 30s",
            ),
            vec![],
        ),
        (
            replaced(
                CLASS,
                "        unhealthyConditions: [{type: Ready, status: \"False\", timeout: 300s}]",
                "        maxUnhealthy: \"40\"",
            ),
            vec![
                r#"spec.workers.machineDeployments[default-worker].machineHealthCheck.maxUnhealthy: Invalid value: "40": must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "        unhealthyConditions: [{type: Ready, status: \"False\", timeout: 300s}]",
                "        maxUnhealthy: \"x%\"",
            ),
            vec![
                r#"spec.workers.machineDeployments[default-worker].machineHealthCheck.maxUnhealthy: Invalid value: "x%": must be either an int or a percentage: invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "        unhealthyConditions: [{type: Ready, status: \"False\", timeout: 300s}]",
                "        maxUnhealthy: 3",
            ),
            vec![],
        ),
        (
            replaced(
                CLASS,
                "    - class: other-worker\n",
                "    - class: other-worker\n      strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: \"1\", maxUnavailable: \"50%\"}}\n",
            ),
            vec![
                r#"spec.workers.machineDeployments[other-worker].strategy.rollingUpdate.maxSurge: Invalid value: "1": must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "    metadata: {labels: {cp: \"1\"}}",
                "    metadata: {labels: {\"-bad\": \"1\"}}",
            ),
            vec![
                r#"spec.controlPlane.metadata.labels: Invalid value: "-bad": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "        metadata: {labels: {md: \"1\"}}",
                "        metadata: {labels: {md: \"a b\"}}",
            ),
            vec![
                r#"spec.workers.machineDeployments[default-worker].template.metadata.labels: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "        metadata: {labels: {md: \"1\"}}",
                "        metadata: {annotations: {\"a/b/c\": x}}",
            ),
            vec![
                r#"spec.workers.machineDeployments[default-worker].template.metadata.annotations: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "    metadata: {labels: {cp: \"1\"}}",
                "    metadata: {labels: {\"Example.com/x\": \"1\"}}",
            ),
            vec![
                r#"spec.controlPlane.metadata.labels: Invalid value: "Example.com/x": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ],
        ),
    ];
    for (class, want) in cases {
        assert_eq!(class_errors(&class, None, &[]), want);
    }
}

/// Variable definitions are checked by the variables crate; admission reports them.
#[test]
fn variable_definitions_in_admission() {
    let class = replaced(CLASS, "  - name: replicas\n", "  - name: builtin\n");
    assert_eq!(
        class_errors(&class, None, &[]),
        vec![r#"spec.variables[builtin].name: Invalid value: "builtin": "builtin" is a reserved variable name"#.to_string()]
    );
    let class = replaced(CLASS, "  - name: replicas\n", "  - name: region\n");
    assert_eq!(
        class_errors(&class, None, &[]),
        vec![r#"spec.variables[region].name: Invalid value: "region": variable name must be unique. Variable with name "region" is defined more than once"#.to_string()]
    );
}

#[test]
fn naming_templates() {
    let cases = [
        (
            "  infrastructure:\n",
            "  infrastructureNamingStrategy: {template: \"{{ .cluster.name }}-{{ .nope }}\"}\n  infrastructure:\n",
            r#"spec.infrastructureNamingStrategy.template: Invalid value: "{{ .cluster.name }}-{{ .nope }}": invalid InfraCluster name template: rendering template: template: template name generator:1:23: executing "template name generator" at <.nope>: map has no entry for key "nope""#,
        ),
        (
            "  controlPlane:\n",
            "  controlPlane:\n    namingStrategy: {template: \"{{ .cluster.name\"}\n",
            r#"spec.controlPlane.namingStrategy.template: Invalid value: "{{ .cluster.name": invalid ControlPlane name template: parsing template "{{ .cluster.name": template: template name generator:1: unclosed action"#,
        ),
        (
            "    - class: other-worker\n",
            "    - class: other-worker\n      namingStrategy: {template: \"{{ .cluster.name }}_{{ .machineDeployment.topologyName }}\"}\n",
            r#"spec.workers.machineDeployments[other-worker].namingStrategy.template: Invalid value: "{{ .cluster.name }}_{{ .machineDeployment.topologyName }}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
        ),
        (
            "    - class: pool\n",
            "    - class: pool\n      namingStrategy: {template: \"{{ .machineDeployment.topologyName }}\"}\n",
            r#"spec.workers.machinePools[pool].namingStrategy.template: Invalid value: "{{ .machineDeployment.topologyName }}": invalid MachinePool name template: rendering template: template: template name generator:1:21: executing "template name generator" at <.machineDeployment.topologyName>: map has no entry for key "machineDeployment""#,
        ),
    ];
    for (from, to, want) in cases {
        let class = replaced(CLASS, from, to);
        assert_eq!(
            class_errors(&class, None, &[]),
            vec![want.to_string()],
            "{to}"
        );
    }
    // Valid templates pass.
    let class = replaced(
        CLASS,
        "    - class: other-worker\n",
        "    - class: other-worker\n      namingStrategy: {template: \"{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}\"}\n",
    );
    assert_eq!(class_errors(&class, None, &[]), Vec::<String>::new());
}

#[test]
fn cluster_create_rules() {
    let topology_md0 = "      - {class: default-worker, name: md-0, replicas: 2}";
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            replaced(
                CLUSTER,
                "metadata: {name: c1, namespace: ns}",
                "metadata: {name: \"c1-\", namespace: ns}",
            ),
            vec![
                r#"metadata.name: Invalid value: "c1-": must be a valid label value a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "pods: {cidrBlocks: [192.168.0.0/16]}",
                "pods: {cidrBlocks: [192.168.0.0/16, 10.0.0.0]}",
            ),
            vec![
                r#"spec.clusterNetwork.pods.cidrBlocks[1]: Invalid value: "10.0.0.0": invalid CIDR address: 10.0.0.0"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "services: {cidrBlocks: [10.128.0.0/12]}",
                "services: {cidrBlocks: [\"fd00::/129\"]}",
            ),
            vec![
                r#"spec.clusterNetwork.services.cidrBlocks[0]: Invalid value: "fd00::/129": invalid CIDR address: fd00::/129"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "metadata: {name: c1, namespace: ns}",
                "metadata: {name: c1, namespace: ns, annotations: {topology.cluster.x-k8s.io/upgrade-concurrency: \"x\"}}",
            ),
            vec![
                r#"metadata.annotations[topology.cluster.x-k8s.io/upgrade-concurrency]: Invalid value: "x": could not parse the value of the annotation: strconv.Atoi: parsing "x": invalid syntax"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "metadata: {name: c1, namespace: ns}",
                "metadata: {name: c1, namespace: ns, annotations: {topology.cluster.x-k8s.io/upgrade-concurrency: \"0\"}}",
            ),
            vec![
                r#"metadata.annotations[topology.cluster.x-k8s.io/upgrade-concurrency]: Invalid value: "0": value cannot be less than 1"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "metadata: {name: c1, namespace: ns}",
                "metadata: {name: c1, namespace: ns, annotations: {topology.cluster.x-k8s.io/upgrade-concurrency: \"4\"}}",
            ),
            vec![],
        ),
        (
            replaced(CLUSTER, "version: v1.30.1", "version: v1.30"),
            vec![
                r#"spec.topology.version: Invalid value: "v1.30": version must be a valid semantic version"#,
            ],
        ),
        (
            replaced(CLUSTER, "version: v1.30.1", "version: v1.30.1-rc.0+build.1"),
            vec![],
        ),
        (
            replaced(
                CLUSTER,
                "      replicas: 3\n",
                "      replicas: 3\n      metadata: {labels: {\"a/b/c\": x}}\n",
            ),
            vec![
                r#"spec.topology.controlPlane.metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                topology_md0,
                "      - {class: default-worker, name: md-0, replicas: 2, strategy: {rollingUpdate: {maxUnavailable: \"1\"}}}",
            ),
            vec![
                r#"spec.topology.workers.machineDeployments[md-0].strategy.rollingUpdate.maxUnavailable: Invalid value: "1": must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                topology_md0,
                "      - {class: nope, name: md-0, replicas: 2}",
            ),
            vec![
                r#"spec.topology.workers.machineDeployments[0].class: Invalid value: "nope": MachineDeploymentClass with name "nope" does not exist in ClusterClass "cc""#,
            ],
        ),
        (
            replaced(CLUSTER, "name: md-1}", "name: md-0}"),
            vec![
                r#"spec.topology.workers.machineDeployments[1].name: Invalid value: "md-0": name must be unique. MachineDeployment with name "md-0" is defined more than once"#,
            ],
        ),
        (
            replaced(CLUSTER, "name: md-1}", "name: \"\"}"),
            vec![
                "spec.topology.workers.machineDeployments[1].name: Required value: name must not be empty",
            ],
        ),
        (
            replaced(
                CLUSTER,
                "      machineDeployments:\n",
                "      machinePools: [{class: nope, name: p0}]\n      machineDeployments:\n",
            ),
            vec![
                r#"spec.topology.workers.machinePools[0].class: Invalid value: "nope": MachinePoolClass with name "nope" does not exist in ClusterClass "cc""#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "name: md-1}",
                "name: md-1, machineHealthCheck: {enable: true}}",
            ),
            vec![
                "spec.topology.workers.machineDeployments[md-1].machineHealthCheck.enable: Forbidden: cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology or the ClusterClass",
            ],
        ),
        (
            replaced(
                CLUSTER,
                "name: md-1}",
                "name: md-1, machineHealthCheck: {enable: true, nodeStartupTimeout: 5m}}",
            ),
            vec![],
        ),
        (
            replaced(
                CLUSTER,
                topology_md0,
                "      - {class: default-worker, name: md-0, replicas: 2, machineHealthCheck: {enable: true}}",
            ),
            vec![],
        ),
        (
            replaced(
                CLUSTER,
                topology_md0,
                "      - {class: default-worker, name: md-0, replicas: 2, machineHealthCheck: {nodeStartupTimeout: 5s}}",
            ),
            vec![
                r#"spec.topology.workers.machineDeployments[md-0].machineHealthCheck.nodeStartupTimeout: Invalid value: "5s": must be at least 30s"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                topology_md0,
                "      - {class: default-worker, name: md-0, replicas: 2, machineHealthCheck: {maxUnhealthy: \"1\"}}",
            ),
            vec![
                r#"spec.topology.workers.machineDeployments[md-0].machineHealthCheck.maxUnhealthy: Invalid value: "1": must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                topology_md0,
                "      - {class: default-worker, name: md-0, replicas: 2, metadata: {annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: \"5\"}}}",
            ),
            vec![
                r#"spec.topology.workers.machineDeployments[md-0].replicas: Invalid value: 2: cannot be set for cluster "c1" in namespace "ns" if the same MachineDeploymentTopology has autoscaler annotations"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                topology_md0,
                "      - {class: default-worker, name: md-0, metadata: {annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: \"5\"}}}",
            ),
            vec![],
        ),
        (
            replaced(
                CLUSTER,
                "    - {name: replicas, value: 2}",
                "    - {name: replicas, value: 0}",
            ),
            vec![
                r#"spec.topology.variables[replicas].value: Invalid value: "0": should be greater than or equal to 1"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "    - {name: replicas, value: 2}",
                "    - {name: replicas, value: 2}\n    - {name: zone, value: a}",
            ),
            vec![
                r#"spec.topology.variables[zone]: Invalid value: "\"a\"": variable is not defined"#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "name: md-1}",
                "name: md-1, variables: {overrides: [{name: replicas, value: \"x\"}]}}",
            ),
            vec![
                r#"spec.topology.workers.machineDeployments[md-1].variables.overrides[replicas].value: Invalid value: "\"x\"": must be of type integer: "string""#,
            ],
        ),
        (
            replaced(
                CLUSTER,
                "      replicas: 3\n",
                "      replicas: 3\n      variables: {overrides: [{name: replicas, value: -1}]}\n",
            ),
            vec![
                r#"spec.topology.controlPlane.variables.overrides[replicas].value: Invalid value: "-1": should be greater than or equal to 1"#,
            ],
        ),
    ];
    for (cluster, want) in cases {
        assert_eq!(cluster_errors(&cluster, None), want, "{cluster}");
    }
}

/// Cluster API keys the rules about one MachineDeployment by its name in the topology
/// (`machineDeployments[md-0]`), the rules about the list (class, name) by its index.
#[test]
fn machine_deployment_rules_name_their_machine_deployment() {
    let topology_md0 = "      - {class: default-worker, name: md-0, replicas: 2}";
    let autoscaled_class = replaced(
        CLASS,
        "        metadata: {labels: {md: \"1\"}}",
        "        metadata: {labels: {md: \"1\"}, annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: \"1\"}}",
    );
    let annotated_md0 = replaced(
        CLUSTER,
        topology_md0,
        "      - {class: default-worker, name: md-0, replicas: 2, metadata: {annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: \"1\"}}}",
    );
    // (Cluster, class, problems)
    let cases: Vec<(String, Option<&str>, Vec<&str>)> = vec![
        (
            replaced(
                CLUSTER,
                "name: md-1}",
                "name: md-1, metadata: {labels: {\"a b\": x}}}",
            ),
            Some(CLASS),
            vec![
                r#"spec.topology.workers.machineDeployments[md-1].metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
            ],
        ),
        // The class's annotations apply to every MachineDeployment of the class that
        // sets replicas.
        (
            CLUSTER.to_string(),
            Some(&autoscaled_class),
            vec![
                r#"spec.topology.workers.machineDeployments[md-0].replicas: Invalid value: 2: cannot be set for cluster "c1" in namespace "ns" if the source class "default-worker" of this MachineDeploymentTopology has autoscaler annotations"#,
            ],
        ),
        // Annotations in both places: both are reported.
        (
            annotated_md0.clone(),
            Some(&autoscaled_class),
            vec![
                r#"spec.topology.workers.machineDeployments[md-0].replicas: Invalid value: 2: cannot be set for cluster "c1" in namespace "ns" if the same MachineDeploymentTopology has autoscaler annotations"#,
                r#"spec.topology.workers.machineDeployments[md-0].replicas: Invalid value: 2: cannot be set for cluster "c1" in namespace "ns" if the source class "default-worker" of this MachineDeploymentTopology has autoscaler annotations"#,
            ],
        ),
        // Without its class, what the topology itself says is still checked.
        (
            annotated_md0,
            None,
            vec![
                r#"spec.topology.workers.machineDeployments[md-0].replicas: Invalid value: 2: cannot be set for cluster "c1" in namespace "ns" if the same MachineDeploymentTopology has autoscaler annotations"#,
            ],
        ),
        // Whether switching the check on is backed by a definition cannot be told for
        // an unknown worker class; only the unknown class is reported.
        (
            replaced(
                CLUSTER,
                "{class: other-worker, name: md-1}",
                "{class: nope, name: md-1, machineHealthCheck: {enable: true}}",
            ),
            Some(CLASS),
            vec![
                r#"spec.topology.workers.machineDeployments[1].class: Invalid value: "nope": MachineDeploymentClass with name "nope" does not exist in ClusterClass "cc""#,
            ],
        ),
    ];
    for (cluster, class, want) in cases {
        assert_eq!(cluster_outcome(&cluster, None, class).0, want, "{cluster}");
    }
}

#[test]
fn cluster_defaulting() {
    let cluster = replaced(CLUSTER, "version: v1.30.1", "version: 1.30.1");
    let defaulted = default_cluster(&load_cluster(&cluster), Some(&load_class(CLASS)))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let topology = defaulted
        .topology
        .as_ref()
        .unwrap_or_else(|| panic!("topology"));
    assert_eq!(topology.version, "v1.30.1");
    assert_eq!(defaulted.document["spec"]["topology"]["version"], "v1.30.1");
    // The required variable with a default is created after the given ones.
    let names: Vec<(&str, &serde_json::Value)> = topology
        .variables
        .iter()
        .map(|v| (v.name.as_str(), &v.value))
        .collect();
    assert_eq!(
        names,
        vec![
            ("replicas", &serde_json::json!(2)),
            ("region", &serde_json::json!("us-east-1"))
        ]
    );
    assert_eq!(
        defaulted.document["spec"]["topology"]["variables"],
        serde_json::json!([{"name": "replicas", "value": 2}, {"name": "region", "value": "us-east-1"}])
    );
    // Defaulting twice changes nothing more.
    let again =
        default_cluster(&defaulted, Some(&load_class(CLASS))).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(again, defaulted);
    // An empty class is refused by defaulting.
    let no_class = replaced(CLUSTER, "class: cc", "class: \"\"");
    assert_eq!(
        cluster_outcome(&no_class, None, Some(CLASS)).0,
        vec!["spec.topology.class: Required value: class cannot be empty".to_string()]
    );
    // Without the class the Cluster is defaulted as far as it can be, with a warning.
    let (errors, warnings) = cluster_outcome(CLUSTER, None, None);
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        warnings,
        vec!["Cluster refers to ClusterClass ns/cc, but this ClusterClass does not exist. Cluster topology has not been fully validated. The ClusterClass must be created to reconcile the Cluster".to_string()]
    );
    // A required variable without a default must be set.
    let class = replaced(
        CLASS,
        "schema: {openAPIV3Schema: {type: string, default: us-east-1}}",
        "schema: {openAPIV3Schema: {type: string}}",
    );
    assert_eq!(
        cluster_outcome(CLUSTER, None, Some(&class)).0,
        vec![
            r#"spec.topology.variables: Required value: required variable "region" must be set"#
                .to_string()
        ]
    );
}

#[test]
fn cluster_update_rules() {
    let version = |v: &str| replaced(CLUSTER, "version: v1.30.1", &format!("version: {v}"));
    let cases: Vec<(String, String, Vec<&str>)> = vec![
        (
            version("v1.29.0"),
            CLUSTER.to_string(),
            vec![
                r#"spec.topology.version: Invalid value: "v1.29.0": version cannot be decreased from "1.30.1" to "1.29.0""#,
            ],
        ),
        (
            version("v1.30.0"),
            CLUSTER.to_string(),
            vec![
                r#"spec.topology.version: Invalid value: "v1.30.0": version cannot be decreased from "1.30.1" to "1.30.0""#,
            ],
        ),
        (version("v1.31.5"), CLUSTER.to_string(), vec![]),
        (
            version("v1.32.0"),
            CLUSTER.to_string(),
            vec![
                r#"spec.topology.version: Invalid value: "v1.32.0": version cannot be increased from "1.30.1" to "1.32.0""#,
            ],
        ),
        (
            version("v2.0.0"),
            CLUSTER.to_string(),
            vec![
                r#"spec.topology.version: Invalid value: "v2.0.0": version cannot be increased from "1.30.1" to "2.0.0""#,
            ],
        ),
        (version("v1.30.1-rc.1"), CLUSTER.to_string(), vec![]),
        (
            replaced(
                &version("v1.29.0"),
                "metadata: {name: c1, namespace: ns}",
                "metadata: {name: c1, namespace: ns, annotations: {unsafe.topology.cluster.x-k8s.io/disable-update-version-check: \"\"}}",
            ),
            CLUSTER.to_string(),
            vec![],
        ),
        (
            replaced(
                CLUSTER,
                "  topology:\n    class: cc\n    version: v1.30.1\n    controlPlane:\n      replicas: 3\n    variables:\n    - {name: replicas, value: 2}\n    workers:\n      machineDeployments:\n      - {class: default-worker, name: md-0, replicas: 2}\n      - {class: other-worker, name: md-1}\n",
                "  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp}\n",
            ),
            CLUSTER.to_string(),
            vec!["spec.topology: Forbidden: cannot be removed from an existing Cluster"],
        ),
        (
            CLUSTER.to_string(),
            replaced(
                CLUSTER,
                "  topology:\n    class: cc\n    version: v1.30.1\n    controlPlane:\n      replicas: 3\n    variables:\n    - {name: replicas, value: 2}\n    workers:\n      machineDeployments:\n      - {class: default-worker, name: md-0, replicas: 2}\n      - {class: other-worker, name: md-1}\n",
                "  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp}\n",
            ),
            vec![
                "spec.controlPlaneRef: Forbidden: cannot be removed",
                "spec.topology.class: Forbidden: class cannot be set on an existing Cluster",
            ],
        ),
        (
            replaced(
                CLUSTER,
                "spec:\n",
                "spec:\n  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerCluster, name: i}\n",
            ),
            CLUSTER.to_string(),
            vec![],
        ),
        (
            CLUSTER.to_string(),
            replaced(
                CLUSTER,
                "spec:\n",
                "spec:\n  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerCluster, name: i}\n  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp}\n",
            ),
            vec![
                "spec.infrastructureRef: Forbidden: cannot be removed",
                "spec.controlPlaneRef: Forbidden: cannot be removed",
            ],
        ),
        (
            replaced(CLUSTER, "class: cc", "class: other"),
            CLUSTER.to_string(),
            vec!["spec.topology.class: Internal error: ClusterClass ns/other not found"],
        ),
    ];
    for (new, old, want) in cases {
        let (errors, _) = cluster_outcome(&new, Some(&old), Some(CLASS));
        assert_eq!(errors, want, "{new}");
    }
}

#[test]
fn class_changes_of_a_cluster() {
    let rebased = replaced(CLUSTER, "class: cc", "class: cc2");
    let compatible = replaced(CLASS, "name: cc, namespace: ns", "name: cc2, namespace: ns");
    let incompatible = replaced(
        &compatible,
        "kind: KubeadmControlPlaneTemplate",
        "kind: K0sControlPlaneTemplate",
    );
    let validate = |classes: &[&str]| -> Vec<String> {
        let loaded: Vec<ClusterClass> = classes.iter().map(|c| load_class(c)).collect();
        let refs: Vec<&ClusterClass> = loaded.iter().collect();
        let new = default_cluster(&load_cluster(&rebased), loaded.get(1))
            .unwrap_or_else(|e| panic!("{e:?}"));
        validate_cluster(&new, Some(&load_cluster(CLUSTER)), &refs)
            .errors
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(validate(&[CLASS, &compatible]), Vec::<String>::new());
    assert_eq!(
        validate(&[CLASS, &incompatible]),
        vec![r#"spec.controlPlane.ref.kind: Forbidden: kind cannot be changed from "KubeadmControlPlaneTemplate" to "K0sControlPlaneTemplate" to prevent incompatible changes in the Clusters"#.to_string()]
    );
    let other_namespace = replaced(
        CLASS,
        "name: cc, namespace: ns",
        "name: cc, namespace: elsewhere",
    );
    assert_eq!(
        validate(&[&other_namespace, &compatible]),
        vec![r#"spec.topology.class: Forbidden: valid ClusterClass with name "cc" could not be retrieved, change from class "cc" to class "cc2" cannot be validated. Error: ClusterClass ns/cc not found"#.to_string()]
    );
}

#[test]
fn a_cluster_needs_a_topology_or_references() {
    let bare = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c1, namespace: ns}\nspec: {}\n";
    assert_eq!(
        cluster_outcome(bare, None, None).0,
        vec!["spec: Forbidden: one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set".to_string()]
    );
    let big = format!(
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {{name: c1, namespace: ns}}\nspec:\n  controlPlaneRef: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp}}\n  topology:\n    class: cc\n    version: v1.30.1\n    controlPlane:\n      metadata: {{annotations: {{big: \"{}\"}}}}\n",
        "x".repeat(256 * 1024)
    );
    assert_eq!(
        cluster_outcome(&big, None, Some(CLASS)).0,
        vec!["spec.topology.controlPlane.metadata.annotations: Too long: may not be more than 262144 bytes".to_string()]
    );
}

#[test]
fn class_compatibility() {
    // (class after the update, problems)
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            replaced(
                CLASS,
                "infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate",
                "infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate",
            ),
            vec![],
        ),
        (replaced(CLASS, "name: infra}", "name: infra-v2}"), vec![]),
        (
            replaced(
                CLASS,
                "infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate",
                "infrastructure.example.com/v1beta1, kind: DockerClusterTemplate",
            ),
            vec![
                r#"spec.infrastructure.ref.apiVersion: Forbidden: group of apiVersion cannot be changed from "infrastructure.cluster.x-k8s.io" to "infrastructure.example.com" to prevent incompatible changes in the Clusters"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "kind: DockerClusterTemplate",
                "kind: AWSClusterTemplate",
            ),
            vec![
                r#"spec.infrastructure.ref.kind: Forbidden: kind cannot be changed from "DockerClusterTemplate" to "AWSClusterTemplate" to prevent incompatible changes in the Clusters"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "kind: KubeadmControlPlaneTemplate",
                "kind: K0sControlPlaneTemplate",
            ),
            vec![
                r#"spec.controlPlane.ref.kind: Forbidden: kind cannot be changed from "KubeadmControlPlaneTemplate" to "K0sControlPlaneTemplate" to prevent incompatible changes in the Clusters"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "kind: DockerMachineTemplate, name: cp-machines",
                "kind: DevMachineTemplate, name: cp-machines",
            ),
            vec![
                r#"spec.controlPlane.machineInfrastructure.ref.kind: Forbidden: kind cannot be changed from "DockerMachineTemplate" to "DevMachineTemplate" to prevent incompatible changes in the Clusters"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "kind: DockerMachineTemplate, name: workers}\n      machineHealthCheck",
                "kind: DevMachineTemplate, name: workers}\n      machineHealthCheck",
            ),
            vec![
                r#"spec.workers.machineDeployments[0].template.infrastructure.ref.kind: Forbidden: kind cannot be changed from "DockerMachineTemplate" to "DevMachineTemplate" to prevent incompatible changes in the Clusters"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "kind: KubeadmConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}\n      machineHealthCheck",
                "kind: OtherConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}\n      machineHealthCheck",
            ),
            vec![],
        ),
        (
            replaced(
                CLASS,
                "kind: DockerMachinePoolTemplate",
                "kind: DevMachinePoolTemplate",
            ),
            vec![
                r#"spec.workers.machinePools[0].template.infrastructure.ref.kind: Forbidden: kind cannot be changed from "DockerMachinePoolTemplate" to "DevMachinePoolTemplate" to prevent incompatible changes in the Clusters"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "    machineInfrastructure:\n      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp-machines}\n    machineHealthCheck:\n      unhealthyConditions: [{type: Ready, status: Unknown, timeout: 300s}]\n",
                "",
            ),
            vec![
                r#"spec.controlPlane.machineInfrastructure.ref.apiVersion: Forbidden: group of apiVersion cannot be changed from "infrastructure.cluster.x-k8s.io" to "" to prevent incompatible changes in the Clusters"#,
                r#"spec.controlPlane.machineInfrastructure.ref.kind: Forbidden: kind cannot be changed from "DockerMachineTemplate" to "" to prevent incompatible changes in the Clusters"#,
            ],
        ),
    ];
    let old = load_class(CLASS);
    for (new, want) in cases {
        let got: Vec<String> = check_compatibility(&old, &load_class(&new))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, want, "{new}");
        // The same problems come with the class's update admission.
        let admission = class_errors(&new, Some(CLASS), &[]);
        for w in &want {
            assert!(admission.iter().any(|a| a == w), "{w} not in {admission:?}");
        }
    }
}

#[test]
fn class_updates_against_the_clusters_using_it() {
    let without_other = replaced(
        CLASS,
        "    - class: other-worker\n      template:\n        bootstrap:\n          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}\n",
        "",
    );
    assert_eq!(
        class_errors(&without_other, Some(CLASS), &[CLUSTER]),
        vec![r#"spec.workers.machineDeployments: Forbidden: MachineDeploymentClass "other-worker" cannot be deleted because it is used by Cluster "c1""#.to_string()]
    );
    // Unused: fine.
    let unused = replaced(CLUSTER, "      - {class: other-worker, name: md-1}\n", "");
    assert_eq!(
        class_errors(&without_other, Some(CLASS), &[&unused]),
        Vec::<String>::new()
    );

    let with_pool = replaced(
        CLUSTER,
        "      machineDeployments:\n",
        "      machinePools: [{class: pool, name: p0}]\n      machineDeployments:\n",
    );
    let without_pool = replaced(
        CLASS,
        "    machinePools:\n    - class: pool\n      template:\n        bootstrap:\n          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}\n",
        "",
    );
    assert_eq!(
        class_errors(&without_pool, Some(CLASS), &[&with_pool]),
        vec![r#"spec.workers.machinePools: Forbidden: MachinePoolClass "pool" cannot be deleted because it is used by Cluster "c1""#.to_string()]
    );

    // Removing a health check a Cluster switched on without its own definition.
    let relies_cp = replaced(
        CLUSTER,
        "      replicas: 3\n",
        "      replicas: 3\n      machineHealthCheck: {enable: true}\n",
    );
    let relies_md = replaced(
        CLUSTER,
        "name: md-0, replicas: 2}",
        "name: md-0, replicas: 2, machineHealthCheck: {enable: true}}",
    );
    let no_cp_check = replaced(
        CLASS,
        "    machineHealthCheck:\n      unhealthyConditions: [{type: Ready, status: Unknown, timeout: 300s}]\n",
        "",
    );
    let no_md_check = replaced(
        CLASS,
        "      machineHealthCheck:\n        unhealthyConditions: [{type: Ready, status: \"False\", timeout: 300s}]\n",
        "",
    );
    assert_eq!(
        class_errors(&no_cp_check, Some(CLASS), &[&relies_cp, CLUSTER]),
        vec![r#"spec.controlPlane.machineHealthCheck: Forbidden: MachineHealthCheck cannot be deleted because it is used by Cluster(s) "c1""#.to_string()]
    );
    assert_eq!(
        class_errors(&no_md_check, Some(CLASS), &[&relies_md]),
        vec![r#"spec.workers.machineDeployments[default-worker].machineHealthCheck: Forbidden: MachineHealthCheck cannot be deleted because it is used by Cluster(s) "c1""#.to_string()]
    );
    assert_eq!(
        class_errors(&no_md_check, Some(CLASS), &[CLUSTER]),
        Vec::<String>::new()
    );
}

#[test]
fn several_problems_are_all_reported_in_a_stable_order() {
    let class = replaced(
        &replaced(CLASS, "kind: DockerClusterTemplate", "kind: DockerCluster"),
        "    - class: other-worker",
        "    - class: default-worker",
    );
    let class = replaced(
        &class,
        "    metadata: {labels: {cp: \"1\"}}",
        "    metadata: {labels: {cp: \"a b\"}}",
    );
    let first = class_errors(&class, None, &[]);
    assert_eq!(first.len(), 3, "{first:?}");
    assert!(first[0].starts_with("spec.infrastructure.ref.kind"));
    assert!(first[1].starts_with("spec.workers.machineDeployments[1].class"));
    assert!(first[2].starts_with("spec.controlPlane.metadata.labels"));
    assert_eq!(class_errors(&class, None, &[]), first);
}

/// [`CLUSTER`] with MachinePools (`pools`, as YAML flow entries) beside its
/// MachineDeployments.
fn with_pools(pools: &[&str]) -> String {
    let entries: String = pools.iter().map(|p| format!("      - {p}\n")).collect();
    replaced(
        CLUSTER,
        "      machineDeployments:\n",
        &format!("      machinePools:\n{entries}      machineDeployments:\n"),
    )
}

/// The MachinePool class `pool` of [`CLASS`], as written there.
const POOL_CLASS: &str = "    machinePools:\n    - class: pool\n      template:\n        bootstrap:\n          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}\n";

/// Cluster API's rules about a Cluster's MachinePools: metadata (keyed by the pool's
/// name), class and name (by index), variable overrides; and what it does not ask of
/// them.
#[test]
fn machine_pool_rules_of_a_cluster() {
    let label_problem = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    // (the Cluster's MachinePools, problems)
    let cases: Vec<(Vec<&str>, Vec<String>)> = vec![
        (vec!["{class: pool, name: p0}"], vec![]),
        (vec!["{class: pool, name: p0, replicas: 3}"], vec![]),
        // A MachinePool may share its name with a MachineDeployment: names are unique
        // per kind.
        (vec!["{class: pool, name: md-0}"], vec![]),
        (
            vec!["{class: pool, name: p0, metadata: {labels: {\"a/b/c\": x}}}"],
            vec![format!(
                r#"spec.topology.workers.machinePools[p0].metadata.labels: Invalid value: "a/b/c": {label_problem}"#
            )],
        ),
        (
            vec!["{class: pool, name: p0, metadata: {annotations: {\"a/b/c\": x}}}"],
            vec![format!(
                r#"spec.topology.workers.machinePools[p0].metadata.annotations: Invalid value: "a/b/c": {label_problem}"#
            )],
        ),
        (
            vec!["{class: pool, name: p0, metadata: {labels: {ok: \"a b\"}}}"],
            vec![
                r#"spec.topology.workers.machinePools[p0].metadata.labels: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#.to_string(),
            ],
        ),
        (
            vec!["{class: nope, name: p0}"],
            vec![
                r#"spec.topology.workers.machinePools[0].class: Invalid value: "nope": MachinePoolClass with name "nope" does not exist in ClusterClass "cc""#.to_string(),
            ],
        ),
        // A MachineDeployment class is not a MachinePool class.
        (
            vec!["{class: default-worker, name: p0}"],
            vec![
                r#"spec.topology.workers.machinePools[0].class: Invalid value: "default-worker": MachinePoolClass with name "default-worker" does not exist in ClusterClass "cc""#.to_string(),
            ],
        ),
        (
            vec!["{class: pool, name: p0}", "{class: pool, name: \"\"}"],
            vec!["spec.topology.workers.machinePools[1].name: Required value: name must not be empty".to_string()],
        ),
        (
            vec![
                "{class: pool, name: p0}",
                "{class: pool, name: p1}",
                "{class: pool, name: p0}",
            ],
            vec![
                r#"spec.topology.workers.machinePools[2].name: Invalid value: "p0": name must be unique. MachinePool with name "p0" is defined more than once"#.to_string(),
            ],
        ),
        // Both problems of one pool, class first; a pool without a name is not
        // compared with the others.
        (
            vec!["{class: nope, name: \"\"}", "{class: pool, name: \"\"}"],
            vec![
                r#"spec.topology.workers.machinePools[0].class: Invalid value: "nope": MachinePoolClass with name "nope" does not exist in ClusterClass "cc""#.to_string(),
                "spec.topology.workers.machinePools[0].name: Required value: name must not be empty".to_string(),
                "spec.topology.workers.machinePools[1].name: Required value: name must not be empty".to_string(),
            ],
        ),
        (
            vec!["{class: pool, name: p0, variables: {overrides: [{name: replicas, value: \"x\"}]}}"],
            vec![
                r#"spec.topology.workers.machinePools[p0].variables.overrides[replicas].value: Invalid value: "\"x\"": must be of type integer: "string""#.to_string(),
            ],
        ),
        (
            vec!["{class: pool, name: p0, variables: {overrides: [{name: replicas, value: 0}]}}"],
            vec![
                r#"spec.topology.workers.machinePools[p0].variables.overrides[replicas].value: Invalid value: "0": should be greater than or equal to 1"#.to_string(),
            ],
        ),
        (
            vec!["{class: pool, name: p0, variables: {overrides: [{name: zone, value: a}]}}"],
            vec![
                r#"spec.topology.workers.machinePools[p0].variables.overrides[zone]: Invalid value: "\"a\"": variable is not defined"#.to_string(),
            ],
        ),
        (
            vec!["{class: pool, name: p0, variables: {overrides: [{name: replicas, value: 4}]}}"],
            vec![],
        ),
        // Cluster API's autoscaler rule is about MachineDeployments only.
        (
            vec![
                "{class: pool, name: p0, replicas: 3, metadata: {annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: \"5\"}}}",
            ],
            vec![],
        ),
    ];
    for (pools, want) in cases {
        let cluster = with_pools(&pools);
        assert_eq!(cluster_errors(&cluster, None), want, "{pools:?}");
    }

    // Nor does the class's metadata on a MachinePool class count for the autoscaler.
    let annotated_pool_class = replaced(
        CLASS,
        "    - class: pool\n",
        "    - class: pool\n      template:\n        metadata: {annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: \"1\"}}\n",
    );
    let annotated_pool_class = replaced(
        &annotated_pool_class,
        "        metadata: {annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: \"1\"}}\n      template:\n",
        "        metadata: {annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: \"1\"}}\n",
    );
    let cluster = with_pools(&["{class: pool, name: p0, replicas: 3}"]);
    assert_eq!(
        cluster_outcome(&cluster, None, Some(&annotated_pool_class)).0,
        Vec::<String>::new()
    );
}

/// MachinePool problems come after the MachineDeployments', each list in its order.
#[test]
fn machine_pool_problems_follow_machine_deployment_problems() {
    let cluster = replaced(
        &with_pools(&["{class: nope, name: p0, metadata: {labels: {ok: \"a b\"}}}"]),
        "name: md-1}",
        "name: md-0, metadata: {labels: {ok: \"a b\"}}}",
    );
    let errors = cluster_errors(&cluster, None);
    let paths: Vec<&str> = errors
        .iter()
        .map(|e| e.split(": ").next().unwrap_or_default())
        .collect();
    assert_eq!(
        paths,
        vec![
            "spec.topology.workers.machineDeployments[md-0].metadata.labels",
            "spec.topology.workers.machinePools[p0].metadata.labels",
            "spec.topology.workers.machineDeployments[1].name",
            "spec.topology.workers.machinePools[0].class",
        ],
        "{errors:#?}"
    );
}

/// The mutating webhook defaults a MachinePool's overrides as it does a
/// MachineDeployment's, in the Cluster and in its document.
#[test]
fn machine_pool_overrides_are_defaulted() {
    let class = replaced(
        CLASS,
        "  variables:\n",
        "  variables:\n  - name: machine\n    required: false\n    schema: {openAPIV3Schema: {type: object, properties: {size: {type: string, default: small}}}}\n",
    );
    let cluster = with_pools(&[
        "{class: pool, name: p0}",
        "{class: pool, name: p1, variables: {overrides: [{name: machine, value: {}}]}}",
    ]);
    let defaulted = default_cluster(&load_cluster(&cluster), Some(&load_class(&class)))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let topology = defaulted
        .topology
        .as_ref()
        .unwrap_or_else(|| panic!("topology"));
    assert!(topology.machine_pools[0].variable_overrides.is_empty());
    assert_eq!(
        topology.machine_pools[1].variable_overrides[0].value,
        serde_json::json!({"size": "small"})
    );
    let pools = &defaulted.document["spec"]["topology"]["workers"]["machinePools"];
    assert_eq!(pools[0].get("variables"), None);
    assert_eq!(
        pools[1]["variables"]["overrides"],
        serde_json::json!([{"name": "machine", "value": {"size": "small"}}])
    );
    // Admitted as defaulted.
    let classes = [load_class(&class)];
    let refs: Vec<&ClusterClass> = classes.iter().collect();
    assert_eq!(validate_cluster(&defaulted, None, &refs).errors, Vec::new());
    // A value the schema refuses is refused at the pool's path.
    let cluster = with_pools(&[
        "{class: pool, name: p0, variables: {overrides: [{name: machine, value: {size: 1}}]}}",
    ]);
    let (errors, _) = cluster_outcome(&cluster, None, Some(&class));
    assert_eq!(
        errors,
        vec![
            r#"spec.topology.workers.machinePools[p0].variables.overrides[machine].value.size: Invalid value: "{\"size\":1}": size in body must be of type string: "integer""#
                .to_string()
        ]
    );
}

/// Cluster API's rules about a class's MachinePool classes: template references (the
/// bootstrap template's kind must be a `<name>Template`, its kind is not otherwise
/// checked), unique classes, metadata, naming, patch selectors; on update, compatible
/// infrastructure templates and no removal of a class a Cluster still uses.
#[test]
fn machine_pool_rules_of_a_class() {
    let pool_bootstrap = "          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate, name: pool}";
    // (the class, problems on create)
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            replaced(
                CLASS,
                pool_bootstrap,
                &pool_bootstrap.replace("kind: KubeadmConfigTemplate", "kind: KubeadmConfig"),
            ),
            vec![
                r#"spec.workers.machinePools[0].template.bootstrap.ref.kind: Invalid value: "KubeadmConfig": template kind must be of form "<name>Template""#,
            ],
        ),
        // Any `<name>Template` kind passes as a bootstrap template: Cluster API does not
        // ask that it be a bootstrap config template.
        (
            replaced(
                CLASS,
                pool_bootstrap,
                &pool_bootstrap.replace(
                    "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate",
                    "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate",
                ),
            ),
            vec![],
        ),
        (
            replaced(
                CLASS,
                "    - class: pool\n      template:\n",
                "    - class: pool\n      template:\n        metadata: {labels: {\"a/b/c\": x}}\n",
            ),
            vec![
                r#"spec.workers.machinePools[pool].template.metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "    - class: pool\n",
                "    - class: pool\n      namingStrategy: {template: \"{{ .cluster.name }}_{{ .machinePool.topologyName }}\"}\n",
            ),
            vec![
                r#"spec.workers.machinePools[pool].namingStrategy.template: Invalid value: "{{ .cluster.name }}_{{ .machinePool.topologyName }}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ],
        ),
        (
            replaced(
                CLASS,
                "    - class: pool\n",
                "    - class: pool\n      namingStrategy: {template: \"{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}\"}\n",
            ),
            vec![],
        ),
        // A MachinePool class may share its name with a MachineDeployment class.
        (replaced(CLASS, "    - class: pool\n", "    - class: default-worker\n"), vec![]),
        (
            replaced(
                CLASS,
                "  variables:\n",
                "  patches:\n  - name: pools\n    definitions:\n    - selector:\n        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n        kind: DockerMachinePoolTemplate\n        matchResources: {machinePoolClass: {names: [pool, nope, \"p*\"]}}\n      jsonPatches: [{op: add, path: /spec/template/spec/x, value: 1}]\n  variables:\n",
            ),
            vec![
                r#"spec.patches[0].definitions[0].selector.matchResources.machinePoolClass.names[1]: Invalid value: "nope": selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a MachinePool class"#,
            ],
        ),
    ];
    for (class, want) in cases {
        assert_eq!(class_errors(&class, None, &[]), want, "{class}");
    }

    // Compatibility on update: the infrastructure template's group and kind stay, the
    // bootstrap template may change kind.
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            replaced(
                CLASS,
                pool_bootstrap,
                &pool_bootstrap.replace("kind: KubeadmConfigTemplate", "kind: TalosConfigTemplate"),
            ),
            vec![],
        ),
        (
            replaced(
                CLASS,
                "kind: DockerMachinePoolTemplate, name: pool}",
                "kind: DockerMachinePoolTemplate, name: pool-v2}",
            ),
            vec![],
        ),
        (
            replaced(
                CLASS,
                "infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachinePoolTemplate",
                "infrastructure.example.com/v1beta1, kind: DockerMachinePoolTemplate",
            ),
            vec![
                r#"spec.workers.machinePools[0].template.infrastructure.ref.apiVersion: Forbidden: group of apiVersion cannot be changed from "infrastructure.cluster.x-k8s.io" to "infrastructure.example.com" to prevent incompatible changes in the Clusters"#,
            ],
        ),
        // Paths carry the class's index after the update.
        (
            replaced(
                CLASS,
                POOL_CLASS,
                &format!(
                    "{}{}",
                    POOL_CLASS.replace("class: pool", "class: first"),
                    POOL_CLASS.replace("    machinePools:\n", "").replace(
                        "kind: DockerMachinePoolTemplate",
                        "kind: DevMachinePoolTemplate"
                    ),
                ),
            ),
            vec![
                r#"spec.workers.machinePools[1].template.infrastructure.ref.kind: Forbidden: kind cannot be changed from "DockerMachinePoolTemplate" to "DevMachinePoolTemplate" to prevent incompatible changes in the Clusters"#,
            ],
        ),
    ];
    for (class, want) in cases {
        assert_eq!(class_errors(&class, Some(CLASS), &[]), want, "{class}");
    }
}

/// A worker class may not be removed while a Cluster still uses it: one error per
/// worker made from it, MachineDeployments first, Cluster by Cluster.
#[test]
fn removed_worker_classes_still_in_use() {
    let without_pool = replaced(CLASS, POOL_CLASS, "");
    let two_pools = with_pools(&["{class: pool, name: p0}", "{class: pool, name: p1}"]);
    let c2 = replaced(
        &with_pools(&["{class: pool, name: p0}"]),
        "metadata: {name: c1, namespace: ns}",
        "metadata: {name: c2, namespace: ns}",
    );
    assert_eq!(
        class_errors(&without_pool, Some(CLASS), &[&two_pools, &c2, CLUSTER]),
        vec![
            r#"spec.workers.machinePools: Forbidden: MachinePoolClass "pool" cannot be deleted because it is used by Cluster "c1""#,
            r#"spec.workers.machinePools: Forbidden: MachinePoolClass "pool" cannot be deleted because it is used by Cluster "c1""#,
            r#"spec.workers.machinePools: Forbidden: MachinePoolClass "pool" cannot be deleted because it is used by Cluster "c2""#,
        ]
    );
    // Unused: fine.
    assert_eq!(
        class_errors(&without_pool, Some(CLASS), &[CLUSTER]),
        Vec::<String>::new()
    );

    let without_other_and_pool = replaced(
        &without_pool,
        "    - class: other-worker\n      template:\n        bootstrap:\n          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: boot}\n        infrastructure:\n          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: workers}\n",
        "",
    );
    let c2_with_other = replaced(
        &c2,
        "      - {class: default-worker, name: md-0, replicas: 2}\n",
        "",
    );
    assert_eq!(
        class_errors(
            &without_other_and_pool,
            Some(CLASS),
            &[&two_pools, &c2_with_other]
        ),
        vec![
            r#"spec.workers.machineDeployments: Forbidden: MachineDeploymentClass "other-worker" cannot be deleted because it is used by Cluster "c1""#,
            r#"spec.workers.machineDeployments: Forbidden: MachineDeploymentClass "other-worker" cannot be deleted because it is used by Cluster "c2""#,
            r#"spec.workers.machinePools: Forbidden: MachinePoolClass "pool" cannot be deleted because it is used by Cluster "c1""#,
            r#"spec.workers.machinePools: Forbidden: MachinePoolClass "pool" cannot be deleted because it is used by Cluster "c1""#,
            r#"spec.workers.machinePools: Forbidden: MachinePoolClass "pool" cannot be deleted because it is used by Cluster "c2""#,
        ]
    );

    // A variable a MachinePool overrides is in use too, and a changed schema must still
    // accept the pool's value.
    let overriding = with_pools(&[
        "{class: pool, name: p0, variables: {overrides: [{name: replicas, value: 4}]}}",
    ]);
    let without_replicas = replaced(
        CLASS,
        "  - name: replicas\n    required: false\n    schema: {openAPIV3Schema: {type: integer, minimum: 1}}\n",
        "",
    );
    let unused = replaced(
        &overriding,
        "    variables:\n    - {name: replicas, value: 2}\n",
        "",
    );
    assert_eq!(
        class_errors(&without_replicas, Some(CLASS), &[&unused]),
        vec![
            r#"spec.variables: Forbidden: variable "replicas" cannot be removed because it is used by Cluster(s) "c1""#
        ]
    );
    let at_most_three = replaced(
        CLASS,
        "type: integer, minimum: 1}",
        "type: integer, minimum: 1, maximum: 3}",
    );
    assert_eq!(
        class_errors(&at_most_three, Some(CLASS), &[&overriding]),
        vec![
            r#"spec.variables[1]: Forbidden: the changed definition of variable "replicas" is not valid for the values of Cluster(s) "c1""#
        ]
    );
}
