//! Table-driven cases, one per rule, in both directions, and the conversion-data
//! annotation's round trips.

use serde_json::{Value, json};

use super::*;

fn object(version: Version, kind: &str, body: Value) -> Value {
    let mut out =
        json!({"apiVersion": version.api_version(), "kind": kind, "metadata": {"name": "x"}});
    if let (Value::Object(out), Value::Object(body)) = (&mut out, body) {
        out.extend(body);
    }
    out
}

fn versions(group: &str, kind: &str) -> Option<String> {
    match (group, kind) {
        ("infrastructure.cluster.x-k8s.io", _) => Some(format!("{group}/v1beta1")),
        ("controlplane.cluster.x-k8s.io", _) => Some(format!("{group}/v1beta2")),
        ("bootstrap.cluster.x-k8s.io", _) => Some(format!("{group}/v1beta1")),
        _ => None,
    }
}

/// One rule: the object's fields in v1beta1 and in v1beta2; each converts into the other
/// by the rules alone.
struct Case {
    name: &'static str,
    kind: &'static str,
    v1beta1: Value,
    v1beta2: Value,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "class template references: ref -> templateRef",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {
            "infrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate", "name": "i"}},
            "controlPlane": {
                "ref": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "name": "cp"},
                "machineInfrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "m"}},
                "metadata": {"labels": {"a": "b"}}
            }}}),
            v1beta2: json!({"spec": {
            "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate", "name": "i"}},
            "controlPlane": {
                "templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlaneTemplate", "name": "cp"},
                "machineInfrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "m"}},
                "metadata": {"labels": {"a": "b"}}
            }}}),
        },
        Case {
            name: "class health check: machineHealthCheck -> healthCheck with checks and remediation",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {"controlPlane": {"machineHealthCheck": {
                "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "5m0s"}],
                "unhealthyMachineConditions": [{"type": "NodeReady", "status": "False", "timeout": "10s"}],
                "nodeStartupTimeout": "10m0s",
                "maxUnhealthy": "40%",
                "unhealthyRange": "[1-3]",
                "remediationTemplate": {"apiVersion": "r.io/v1", "kind": "Remediation", "name": "rt"}
            }}}}),
            v1beta2: json!({"spec": {"controlPlane": {"healthCheck": {
                "checks": {
                    "unhealthyNodeConditions": [{"type": "Ready", "status": "Unknown", "timeoutSeconds": 300}],
                    "unhealthyMachineConditions": [{"type": "NodeReady", "status": "False", "timeoutSeconds": 10}],
                    "nodeStartupTimeoutSeconds": 600
                },
                "remediation": {
                    "triggerIf": {"unhealthyLessThanOrEqualTo": "40%", "unhealthyInRange": "[1-3]"},
                    "templateRef": {"apiVersion": "r.io/v1", "kind": "Remediation", "name": "rt"}
                }
            }}}}),
        },
        Case {
            name: "naming strategies -> naming",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {
            "infrastructureNamingStrategy": {"template": "{{ .cluster.name }}-i"},
            "controlPlane": {"namingStrategy": {"template": "{{ .cluster.name }}-cp"}},
            "workers": {
                "machineDeployments": [{"class": "a", "namingStrategy": {"template": "md"}}],
                "machinePools": [{"class": "b", "namingStrategy": {"template": "mp"}}]
            }}}),
            v1beta2: json!({"spec": {
            "infrastructure": {"naming": {"template": "{{ .cluster.name }}-i"}},
            "controlPlane": {"naming": {"template": "{{ .cluster.name }}-cp"}},
            "workers": {
                "machineDeployments": [{"class": "a", "naming": {"template": "md"}}],
                "machinePools": [{"class": "b", "naming": {"template": "mp"}}]
            }}}),
        },
        Case {
            name: "timeouts -> deletion.*Seconds",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {"controlPlane": {
                "nodeDrainTimeout": "1m0s", "nodeVolumeDetachTimeout": "5m0s", "nodeDeletionTimeout": "10s"
            }, "workers": {"machinePools": [{"class": "p", "nodeDrainTimeout": "0s"}]}}}),
            v1beta2: json!({"spec": {"controlPlane": {"deletion": {
                "nodeDrainTimeoutSeconds": 60, "nodeVolumeDetachTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 10
            }}, "workers": {"machinePools": [{"class": "p", "deletion": {"nodeDrainTimeoutSeconds": 0}}]}}}),
        },
        Case {
            name: "worker class template: metadata, bootstrap and infrastructure move up",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {"workers": {"machineDeployments": [{"class": "w", "template": {
                "metadata": {"labels": {"l": "v"}},
                "bootstrap": {"ref": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "b"}},
                "infrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "i"}}
            }}], "machinePools": [{"class": "p", "template": {
                "bootstrap": {"ref": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "b"}},
                "infrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePoolTemplate", "name": "i"}}
            }}]}}}),
            v1beta2: json!({"spec": {"workers": {"machineDeployments": [{"class": "w",
                "metadata": {"labels": {"l": "v"}},
                "bootstrap": {"templateRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "b"}},
                "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "i"}}
            }], "machinePools": [{"class": "p",
                "bootstrap": {"templateRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "b"}},
                "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePoolTemplate", "name": "i"}}
            }]}}}),
        },
        Case {
            name: "MachineDeployment class strategy -> rollout, deletion.order, healthCheck.remediation.maxInFlight",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {"workers": {"machineDeployments": [{"class": "w",
                "strategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "10%", "deletePolicy": "Oldest"},
                    "remediation": {"maxInFlight": 2}},
                "machineHealthCheck": {"maxUnhealthy": 3},
                "failureDomain": "fd1", "minReadySeconds": 5
            }]}}}),
            v1beta2: json!({"spec": {"workers": {"machineDeployments": [{"class": "w",
                "rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "10%"}}},
                "deletion": {"order": "Oldest"},
                "healthCheck": {"remediation": {"maxInFlight": 2, "triggerIf": {"unhealthyLessThanOrEqualTo": 3}}},
                "failureDomain": "fd1", "minReadySeconds": 5
            }]}}}),
        },
        Case {
            name: "variable metadata -> deprecatedV1Beta1Metadata, in spec and status",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {"variables": [{"name": "v", "required": true, "metadata": {"labels": {"a": "b"}},
                "schema": {"openAPIV3Schema": {"type": "string"}}}]},
                "status": {"variables": [{"name": "v", "definitions": [{"from": "inline", "metadata": {"annotations": {"c": "d"}}}]}]}}),
            v1beta2: json!({"spec": {"variables": [{"name": "v", "required": true, "deprecatedV1Beta1Metadata": {"labels": {"a": "b"}},
                "schema": {"openAPIV3Schema": {"type": "string"}}}]},
                "status": {"variables": [{"name": "v", "definitions": [{"from": "inline", "deprecatedV1Beta1Metadata": {"annotations": {"c": "d"}}}]}]}}),
        },
        Case {
            name: "external patches: generateExtension / validateExtension renamed",
            kind: "ClusterClass",
            v1beta1: json!({"spec": {"patches": [{"name": "p", "external": {
                "generateExtension": "g.ext", "validateExtension": "v.ext", "discoverVariablesExtension": "d.ext", "settings": {"k": "v"}}}]}}),
            v1beta2: json!({"spec": {"patches": [{"name": "p", "external": {
                "generatePatchesExtension": "g.ext", "validateTopologyExtension": "v.ext", "discoverVariablesExtension": "d.ext", "settings": {"k": "v"}}}]}}),
        },
        Case {
            name: "class status conditions -> deprecated.v1beta1, v1beta2 conditions up",
            kind: "ClusterClass",
            v1beta1: json!({"status": {"conditions": [{"type": "Ready", "status": "True"}],
                "v1beta2": {"conditions": [{"type": "VariablesReady", "status": "True"}]}, "observedGeneration": 2}}),
            v1beta2: json!({"status": {"deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "True"}]}},
                "conditions": [{"type": "VariablesReady", "status": "True"}], "observedGeneration": 2}}),
        },
        Case {
            name: "Cluster class / classNamespace -> classRef",
            kind: "Cluster",
            v1beta1: json!({"spec": {"topology": {"class": "qs", "classNamespace": "shared", "version": "v1.30.0"}}}),
            v1beta2: json!({"spec": {"topology": {"classRef": {"name": "qs", "namespace": "shared"}, "version": "v1.30.0"}}}),
        },
        Case {
            name: "Cluster references -> contract references {apiGroup, kind, name}",
            kind: "Cluster",
            v1beta1: json!({"spec": {
                "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster", "name": "i"},
                "controlPlaneRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane", "name": "cp"}}}),
            v1beta2: json!({"spec": {
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "i"},
                "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "cp"}}}),
        },
        Case {
            name: "topology health checks: enable -> enabled; worker strategy and timeouts",
            kind: "Cluster",
            v1beta1: json!({"spec": {"topology": {"class": "c", "version": "v1.30.0",
                "controlPlane": {"replicas": 3, "machineHealthCheck": {"enable": false}, "nodeDrainTimeout": "2m0s"},
                "workers": {"machineDeployments": [{"class": "w", "name": "md", "replicas": 1,
                    "machineHealthCheck": {"enable": true, "unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "1m0s"}]},
                    "strategy": {"type": "OnDelete", "remediation": {"maxInFlight": "50%"}},
                    "nodeDeletionTimeout": "30s"}],
                    "machinePools": [{"class": "p", "name": "mp", "nodeVolumeDetachTimeout": "1h0m0s"}]}}}}),
            v1beta2: json!({"spec": {"topology": {"classRef": {"name": "c"}, "version": "v1.30.0",
                "controlPlane": {"replicas": 3, "healthCheck": {"enabled": false}, "deletion": {"nodeDrainTimeoutSeconds": 120}},
                "workers": {"machineDeployments": [{"class": "w", "name": "md", "replicas": 1,
                    "healthCheck": {"enabled": true,
                        "checks": {"unhealthyNodeConditions": [{"type": "Ready", "status": "False", "timeoutSeconds": 60}]},
                        "remediation": {"maxInFlight": "50%"}},
                    "rollout": {"strategy": {"type": "OnDelete"}},
                    "deletion": {"nodeDeletionTimeoutSeconds": 30}}],
                    "machinePools": [{"class": "p", "name": "mp", "deletion": {"nodeVolumeDetachTimeoutSeconds": 3600}}]}}}}),
        },
        Case {
            name: "Cluster status: deprecated conditions, initialization, failure domains list",
            kind: "Cluster",
            v1beta1: json!({"status": {
                "conditions": [{"type": "Ready", "status": "False"}],
                "failureMessage": "boom",
                "controlPlaneReady": true,
                "failureDomains": {"fd1": {"controlPlane": true}, "fd2": {"attributes": {"zone": "b"}}},
                "v1beta2": {"conditions": [{"type": "Available", "status": "True"}], "controlPlane": {"replicas": 3}},
                "phase": "Provisioned"}}),
            v1beta2: json!({"status": {
                "deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "False"}], "failureMessage": "boom"}},
                "initialization": {"controlPlaneInitialized": true},
                "failureDomains": [{"name": "fd1", "controlPlane": true}, {"name": "fd2", "controlPlane": false, "attributes": {"zone": "b"}}],
                "conditions": [{"type": "Available", "status": "True"}], "controlPlane": {"replicas": 3},
                "phase": "Provisioned"}}),
        },
        Case {
            name: "MachineDeployment: strategy, rolloutAfter, naming, minReadySeconds, machine template",
            kind: "MachineDeployment",
            v1beta1: json!({"spec": {"clusterName": "c", "replicas": 2, "minReadySeconds": 10,
                "rolloutAfter": "2025-01-01T00:00:00Z",
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "deletePolicy": "Newest"}, "remediation": {"maxInFlight": 1}},
                "machineNamingStrategy": {"template": "{{ .machineSet.name }}-{{ .random }}"},
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                    "clusterName": "c", "version": "v1.30.0",
                    "bootstrap": {"configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "b"}},
                    "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "i"},
                    "nodeDrainTimeout": "1m0s"}}}}),
            v1beta2: json!({"spec": {"clusterName": "c", "replicas": 2,
                "rollout": {"after": "2025-01-01T00:00:00Z", "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
                "deletion": {"order": "Newest"},
                "remediation": {"maxInFlight": 1},
                "machineNaming": {"template": "{{ .machineSet.name }}-{{ .random }}"},
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                    "clusterName": "c", "version": "v1.30.0", "minReadySeconds": 10,
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "b"}},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "i"},
                    "deletion": {"nodeDrainTimeoutSeconds": 60}}}}}),
        },
        Case {
            name: "MachineDeployment status: counters with a new meaning",
            kind: "MachineDeployment",
            v1beta1: json!({"status": {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 3, "unavailableReplicas": 1,
                "conditions": [{"type": "Available", "status": "True"}],
                "v1beta2": {"readyReplicas": 3, "availableReplicas": 3, "upToDateReplicas": 3, "conditions": [{"type": "Available", "status": "True"}]}}}),
            v1beta2: json!({"status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "upToDateReplicas": 3,
                "conditions": [{"type": "Available", "status": "True"}],
                "deprecated": {"v1beta1": {"readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 3, "unavailableReplicas": 1,
                    "conditions": [{"type": "Available", "status": "True"}]}}}}),
        },
        Case {
            name: "MachineHealthCheck spec: checks and remediation",
            kind: "MachineHealthCheck",
            v1beta1: json!({"spec": {"clusterName": "c", "selector": {"matchLabels": {"a": "b"}},
                "unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "5m0s"}],
                "maxUnhealthy": "100%", "nodeStartupTimeout": "15m0s"},
                "status": {"expectedMachines": 3, "conditions": [{"type": "RemediationAllowed", "status": "True"}]}}),
            v1beta2: json!({"spec": {"clusterName": "c", "selector": {"matchLabels": {"a": "b"}},
                "checks": {"unhealthyNodeConditions": [{"type": "Ready", "status": "False", "timeoutSeconds": 300}], "nodeStartupTimeoutSeconds": 900},
                "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": "100%"}}},
                "status": {"expectedMachines": 3, "deprecated": {"v1beta1": {"conditions": [{"type": "RemediationAllowed", "status": "True"}]}}}}),
        },
        Case {
            name: "MachinePool: minReadySeconds into the template, initialization, counters",
            kind: "MachinePool",
            v1beta1: json!({"spec": {"clusterName": "c", "replicas": 2, "minReadySeconds": 3, "template": {"spec": {
                    "clusterName": "c",
                    "bootstrap": {"configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig", "name": "b"}},
                    "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePool", "name": "i"}}}},
                "status": {"bootstrapReady": true, "infrastructureReady": true, "readyReplicas": 1, "failureReason": "r"}}),
            v1beta2: json!({"spec": {"clusterName": "c", "replicas": 2, "template": {"spec": {
                    "clusterName": "c", "minReadySeconds": 3,
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "b"}},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachinePool", "name": "i"}}}},
                "status": {"initialization": {"bootstrapDataSecretCreated": true, "infrastructureProvisioned": true},
                    "deprecated": {"v1beta1": {"readyReplicas": 1, "failureReason": "r"}}}}),
        },
    ]
}

#[test]
fn each_rule_converts_both_ways() {
    for case in cases() {
        let v1beta1 = object(Version::V1Beta1, case.kind, case.v1beta1);
        let v1beta2 = object(Version::V1Beta2, case.kind, case.v1beta2);
        let up = convert_fields(&v1beta1, Version::V1Beta2, &versions)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(up, v1beta2, "{}: v1beta1 -> v1beta2", case.name);
        let down = convert_fields(&v1beta2, Version::V1Beta1, &versions)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(down, v1beta1, "{}: v1beta2 -> v1beta1", case.name);
    }
}

/// Rules that lose something one way: what Cluster API's conversion does to them.
#[test]
fn one_way_rules() {
    // Going down, template references gain the object's namespace.
    let v1beta2 = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {"infrastructure": {"templateRef": {"apiVersion": "a/v1", "kind": "K", "name": "n"}}}});
    let down = convert_fields(&v1beta2, Version::V1Beta1, &versions).unwrap();
    assert_eq!(
        down["spec"]["infrastructure"]["ref"],
        json!({"apiVersion": "a/v1", "kind": "K", "name": "n", "namespace": "ns"})
    );
    // Going up, they lose it; durations lose their spelling; definitionFrom,
    // rolloutAfter and progressDeadlineSeconds have no place in v1beta2.
    let v1beta1 = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "x"},
        "spec": {"topology": {"class": "c", "rolloutAfter": "2025-01-01T00:00:00Z",
            "controlPlane": {"nodeDrainTimeout": "300s"},
            "variables": [{"name": "v", "value": 1, "definitionFrom": "inline"}]}}});
    let up = convert_fields(&v1beta1, Version::V1Beta2, &versions).unwrap();
    assert_eq!(
        up["spec"]["topology"],
        json!({"classRef": {"name": "c"}, "controlPlane": {"deletion": {"nodeDrainTimeoutSeconds": 300}},
            "variables": [{"name": "v", "value": 1}]})
    );
    let back = convert_fields(&up, Version::V1Beta1, &versions).unwrap();
    assert_eq!(
        back["spec"]["topology"]["controlPlane"]["nodeDrainTimeout"],
        "5m0s"
    );
    // v1beta2-only fields have no place in v1beta1.
    let v1beta2 = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
        "metadata": {"name": "x"}, "spec": {"kubernetesVersions": ["v1.30.0"], "upgrade": {"external": {"generateUpgradePlanExtension": "e"}}}});
    let down = convert_fields(&v1beta2, Version::V1Beta1, &versions).unwrap();
    assert_eq!(down["spec"], json!({}));
}

#[test]
fn errors_name_the_fields() {
    let cases = [
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass", "metadata": {"name": "x"},
                "spec": {"controlPlane": {"machineHealthCheck": {"unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "1500ms"}]}}}}),
            Version::V1Beta2,
            "spec.controlPlane.machineHealthCheck.unhealthyConditions[0].timeout: Invalid value: \"1500ms\": spec.controlPlane.healthCheck.checks.unhealthyNodeConditions[0].timeoutSeconds holds whole seconds and this duration is not a whole number of seconds",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "x"},
                "spec": {"topology": {"workers": {"machineDeployments": [{"nodeDrainTimeout": "2.5s"}]}}}}),
            Version::V1Beta2,
            "spec.topology.workers.machineDeployments[0].nodeDrainTimeout: Invalid value: \"2.5s\": spec.topology.workers.machineDeployments[0].deletion.nodeDrainTimeoutSeconds holds whole seconds",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineHealthCheck", "metadata": {"name": "x"},
                "spec": {"nodeStartupTimeout": "ten minutes"}}),
            Version::V1Beta2,
            "spec.nodeStartupTimeout: Invalid value: \"ten minutes\": time: invalid duration",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass", "metadata": {"name": "x"},
                "spec": {"controlPlane": "nope"}}),
            Version::V1Beta2,
            "spec.controlPlane: Invalid value: \"nope\": must be an object",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass", "metadata": {"name": "x"},
                "spec": {"workers": {"machineDeployments": [{"class": "a"}, 7]}}}),
            Version::V1Beta2,
            "spec.workers.machineDeployments[1]: Invalid value: 7: must be an object",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "metadata": {"name": "x"},
                "spec": {"template": {"spec": {"deletion": {"nodeDrainTimeoutSeconds": 1.5}}}}}),
            Version::V1Beta1,
            "spec.template.spec.deletion.nodeDrainTimeoutSeconds: Invalid value: 1.5: must be an integer number of seconds (int32)",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "x"},
                "spec": {"infrastructureRef": {"apiGroup": "example.com", "kind": "Thing", "name": "t"}}}),
            Version::V1Beta1,
            "spec.infrastructureRef: Invalid value: \"Thing.example.com\": failed to convert object: the apiVersion of Thing.example.com is not known",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "x"},
                "spec": {"infrastructureRef": {"apiVersion": "a/b/c", "kind": "K", "name": "n"}}}),
            Version::V1Beta2,
            "spec.infrastructureRef.apiVersion: Invalid value: \"a/b/c\": failed to convert object: failed to parse apiVersion: unexpected GroupVersion string: a/b/c",
        ),
        (
            json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "x",
                "annotations": {"cluster.x-k8s.io/conversion-data": "{not json"}}}),
            Version::V1Beta2,
            "metadata.annotations[cluster.x-k8s.io/conversion-data]: Invalid value: \"{not json\": must be a JSON object",
        ),
    ];
    let options = Options {
        api_version_of: &versions,
        ..Options::default()
    };
    for (object, to, want) in cases {
        let err = convert(&object, to, &options).expect_err(want).to_string();
        assert!(err.starts_with(want), "wanted {want:?}\n   got {err:?}");
    }
}

#[test]
fn other_objects_pass_through() {
    let options = Options::default();
    for object in [
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster", "spec": {"x": 1}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1alpha4", "kind": "Cluster", "spec": {"x": 1}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine", "spec": {"nodeDrainTimeout": "1s"}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "spec": {"x": 1}}),
        json!("not even an object"),
    ] {
        assert_eq!(
            convert(&object, Version::V1Beta2, &options).unwrap(),
            object
        );
    }
}

#[test]
fn conversion_data_makes_round_trips_exact() {
    let options = Options {
        api_version_of: &versions,
        ..Options::default()
    };
    let v1beta1 = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "x", "namespace": "ns", "annotations": {"keep": "me"}},
        "spec": {
            "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta9", "kind": "DockerCluster", "name": "i", "namespace": "ns"},
            "topology": {"class": "c", "controlPlane": {"nodeDrainTimeout": "300s"}}}});
    let up = convert(&v1beta1, Version::V1Beta2, &options).unwrap();
    assert_eq!(
        up["spec"]["topology"]["controlPlane"]["deletion"]["nodeDrainTimeoutSeconds"],
        300
    );
    let data = up["metadata"]["annotations"][CONVERSION_DATA]
        .as_str()
        .unwrap();
    let stored: Value = serde_json::from_str(data).unwrap();
    assert_eq!(
        stored["spec"], v1beta1["spec"],
        "the v1beta1 object without metadata"
    );
    assert!(stored.get("metadata").is_none());
    assert_eq!(convert(&up, Version::V1Beta1, &options).unwrap(), v1beta1);

    // Nothing lost, nothing stored.
    let plain = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "x"}, "spec": {"topology": {"class": "c", "controlPlane": {"nodeDrainTimeout": "5m0s"}}}});
    let up = convert(&plain, Version::V1Beta2, &options).unwrap();
    assert!(up["metadata"].get("annotations").is_none(), "{up}");
    assert_eq!(convert(&up, Version::V1Beta1, &options).unwrap(), plain);

    // v1beta2-only fields ride along the other way.
    let v1beta2 = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
        "metadata": {"name": "x", "annotations": {}}, "spec": {"kubernetesVersions": ["v1.30.0", "v1.31.0"]}});
    let down = convert(&v1beta2, Version::V1Beta1, &options).unwrap();
    assert!(down["spec"].get("kubernetesVersions").is_none());
    assert_eq!(convert(&down, Version::V1Beta2, &options).unwrap(), v1beta2);

    // An object changed since it was converted: the rules win, and Cluster API's
    // v1beta2-only fields still come back.
    let mut edited = down.clone();
    edited["spec"]["workers"] = json!({"machineDeployments": [{"class": "new"}]});
    let up = convert(&edited, Version::V1Beta2, &options).unwrap();
    assert_eq!(
        up["spec"]["workers"],
        json!({"machineDeployments": [{"class": "new"}]})
    );
    assert_eq!(
        up["spec"]["kubernetesVersions"],
        json!(["v1.30.0", "v1.31.0"])
    );

    // Without conversion data, nothing is added.
    let fresh = Options {
        conversion_data: false,
        api_version_of: &versions,
    };
    let up = convert(&v1beta1, Version::V1Beta2, &fresh).unwrap();
    assert_eq!(up["metadata"]["annotations"], json!({"keep": "me"}));
}

#[test]
fn managed_fields_ride_along_as_they_are() {
    let entries = json!([{"manager": "m", "operation": "Update", "apiVersion": "cluster.x-k8s.io/v1beta1",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:topology": {}}}}]);
    for conversion_data in [true, false] {
        let options = Options {
            conversion_data,
            api_version_of: &versions,
        };
        for metadata in [
            json!({"name": "x", "annotations": {"keep": "me"}}),
            json!({"name": "x"}),
            // Nothing else in the metadata: converted as it is, entries and all.
            json!({}),
            json!({"annotations": {}}),
        ] {
            let bare = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
                "metadata": metadata, "spec": {
                    "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta9", "kind": "DockerCluster", "name": "i"},
                    "topology": {"class": "c", "controlPlane": {"nodeDrainTimeout": "300s"}}}});
            let mut managed = bare.clone();
            managed["metadata"]["managedFields"] = entries.clone();
            let up = convert(&managed, Version::V1Beta2, &options).unwrap();
            assert_eq!(up["metadata"]["managedFields"], entries, "{up}");
            let mut expected = convert(&bare, Version::V1Beta2, &options).unwrap();
            expected["metadata"]["managedFields"] = entries.clone();
            assert_eq!(up, expected);
            let down = convert(&up, Version::V1Beta1, &options).unwrap();
            let mut up_bare = up.clone();
            if let Some(m) = up_bare["metadata"].as_object_mut() {
                m.remove("managedFields");
            }
            let mut expected = convert(&up_bare, Version::V1Beta1, &options).unwrap();
            expected["metadata"]["managedFields"] = entries.clone();
            assert_eq!(down, expected);
        }
    }
}
