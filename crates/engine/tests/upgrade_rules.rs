//! Table-driven tests of upgrade sequencing (spec section 7.2) and the upgrade rows of
//! the `TopologyReconciled` condition (7.5), on the quick-start example with current
//! objects added: a KubeadmControlPlane with a spec and status version, topology-owned
//! MachineDeployments and their Machines.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use topograph_api::load::{Input, LoadOptions, load};
use topograph_engine::upgrade::{
    self, ControlPlaneUpgrade, MachineDeploymentUpgrades, UPGRADE_STEP_ANNOTATION,
    UpgradeCondition, UpgradeTracker,
};
use topograph_engine::{DesiredState, ObjectStore, RenderError, admit_and_render};

const CLASS: &str = include_str!("../../../examples/quick-start/clusterclass.yaml");
const CLUSTER: &str = include_str!("../../../examples/quick-start/cluster.yaml");
const MDS: [&str; 3] = ["md-0", "md-1", "md-2"];

/// A current MachineDeployment's status, when it has one.
#[derive(Clone, Copy, Debug, Default)]
enum Status {
    /// No status at all.
    #[default]
    None,
    /// Observed and fully updated.
    Done,
    /// Some existing replicas not updated.
    RollingOut,
    /// Observed, every existing replica updated, fewer than desired.
    ScalingUp,
}

/// The inputs of one case: the topology version, the current objects and annotations.
#[derive(Clone, Debug, Default)]
struct World {
    topology: &'static str,
    /// `(spec.version, status.version)` of the current control plane.
    control_plane: Option<(&'static str, Option<&'static str>)>,
    /// `(topology name, version, status)` of current MachineDeployments.
    machine_deployments: Vec<(&'static str, &'static str, Status)>,
    /// `(topology name, version)` of Machines.
    machines: Vec<(&'static str, &'static str)>,
    cluster_annotations: Vec<(&'static str, &'static str)>,
    /// `(topology name, annotation key)` on the MachineDeployment topologies.
    topology_annotations: Vec<(&'static str, &'static str)>,
    /// A patch appended to the class's patches.
    extra_patch: &'static str,
}

fn md_object_name(topology_name: &str) -> String {
    format!("dev-{topology_name}-current")
}

impl World {
    fn at(topology: &'static str) -> Self {
        World {
            topology,
            ..World::default()
        }
    }

    fn cp(mut self, spec: &'static str, status: Option<&'static str>) -> Self {
        self.control_plane = Some((spec, status));
        self
    }

    fn mds(mut self, version: &'static str) -> Self {
        self.machine_deployments = MDS.iter().map(|n| (*n, version, Status::Done)).collect();
        self
    }

    fn md(mut self, name: &'static str, version: &'static str, status: Status) -> Self {
        self.machine_deployments.retain(|(n, _, _)| *n != name);
        self.machine_deployments.push((name, version, status));
        self
    }

    fn machine(mut self, md: &'static str, version: &'static str) -> Self {
        self.machines.push((md, version));
        self
    }

    fn annotate_cluster(mut self, key: &'static str, value: &'static str) -> Self {
        self.cluster_annotations.push((key, value));
        self
    }

    fn annotate_topology(mut self, md: &'static str, key: &'static str) -> Self {
        self.topology_annotations.push((md, key));
        self
    }

    fn documents(&self) -> Vec<String> {
        let mut cluster =
            CLUSTER.replace("version: v1.30.0", &format!("version: {}", self.topology));
        if self.control_plane.is_some() {
            cluster = cluster.replace(
                "spec:\n  clusterNetwork:",
                "spec:\n  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: dev-cp, namespace: default}\n  clusterNetwork:",
            );
        }
        if !self.cluster_annotations.is_empty() {
            let annotations: Vec<String> = self
                .cluster_annotations
                .iter()
                .map(|(k, v)| format!("{k}: {v:?}"))
                .collect();
            cluster = cluster.replace(
                "  namespace: default\nspec:",
                &format!(
                    "  namespace: default\n  annotations: {{{}}}\nspec:",
                    annotations.join(", ")
                ),
            );
        }
        for md in MDS {
            let keys: Vec<String> = self
                .topology_annotations
                .iter()
                .filter(|(n, _)| *n == md)
                .map(|(_, k)| format!("{k}: \"\""))
                .collect();
            if !keys.is_empty() {
                cluster = cluster.replace(
                    &format!("        name: {md}\n"),
                    &format!(
                        "        name: {md}\n        metadata: {{annotations: {{{}}}}}\n",
                        keys.join(", ")
                    ),
                );
            }
        }
        let mut class = CLASS.to_string();
        if !self.extra_patch.is_empty() {
            class = class.replace("  patches:\n", &format!("  patches:\n{}", self.extra_patch));
        }
        let mut docs = vec![class, cluster];
        if let Some((spec, status)) = self.control_plane {
            let status = status.map_or(String::new(), |s| format!("status: {{version: {s}}}\n"));
            docs.push(format!(
                "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\nmetadata:\n  name: dev-cp\n  namespace: default\n  labels: {{cluster.x-k8s.io/cluster-name: dev, topology.cluster.x-k8s.io/owned: \"\"}}\nspec:\n  version: {spec}\n  replicas: 3\n{status}"
            ));
        }
        for (md, version, status) in &self.machine_deployments {
            let status = match status {
                Status::None => "",
                Status::Done => {
                    "status: {observedGeneration: 2, updatedReplicas: 2, replicas: 2}\n"
                }
                Status::RollingOut => {
                    "status: {observedGeneration: 2, updatedReplicas: 1, replicas: 2}\n"
                }
                Status::ScalingUp => {
                    "status: {observedGeneration: 2, updatedReplicas: 1, replicas: 1}\n"
                }
            };
            docs.push(format!(
                "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata:\n  name: {}\n  namespace: default\n  generation: 2\n  labels: {{cluster.x-k8s.io/cluster-name: dev, topology.cluster.x-k8s.io/owned: \"\", topology.cluster.x-k8s.io/deployment-name: {md}}}\nspec:\n  clusterName: dev\n  replicas: 2\n  template:\n    spec:\n      clusterName: dev\n      version: {version}\n{status}",
                md_object_name(md)
            ));
        }
        for (i, (md, version)) in self.machines.iter().enumerate() {
            docs.push(format!(
                "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata:\n  name: machine-{i}\n  namespace: default\n  labels: {{cluster.x-k8s.io/cluster-name: dev, cluster.x-k8s.io/deployment-name: {}}}\nspec:\n  clusterName: dev\n  version: {version}\n",
                md_object_name(md)
            ));
        }
        docs
    }

    fn render(&self) -> Result<DesiredState, RenderError> {
        let docs = self.documents();
        let inputs: Vec<Input<'_>> = docs
            .iter()
            .map(|text| Input {
                name: "t.yaml",
                text,
            })
            .collect();
        let bundle = load(&inputs, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
        let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value));
        admit_and_render(
            &bundle.clusters[0].value,
            &bundle.cluster_classes[0].value,
            &store,
        )
        .map(|r| r.desired)
        .map_err(RenderError::from)
    }

    fn desired(&self) -> DesiredState {
        self.render().unwrap_or_else(|e| panic!("{e}"))
    }
}

fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer).unwrap_or(&Value::Null)
}

fn cp_version(d: &DesiredState) -> &str {
    at(&d.control_plane.object, "/spec/version")
        .as_str()
        .unwrap_or("")
}

fn md_versions(d: &DesiredState) -> Vec<&str> {
    d.machine_deployments
        .iter()
        .map(|md| {
            at(&md.object, "/spec/template/spec/version")
                .as_str()
                .unwrap_or("")
        })
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(ToString::to_string).collect()
}

/// What a case expects of the tracker.
#[derive(Debug, Default)]
struct Expect {
    cp: &'static str,
    mds: [&'static str; 3],
    provisioning: bool,
    pending: bool,
    starting: bool,
    upgrading: bool,
    waiting: bool,
    cp_plan: &'static [&'static str],
    md_plan: &'static [&'static str],
    pending_create: &'static [&'static str],
    pending_upgrade: &'static [&'static str],
    deferred: &'static [&'static str],
    md_upgrading: &'static [&'static str],
}

#[test]
fn version_decisions() {
    let cases: Vec<(&str, World, Expect)> = vec![
        (
            "control plane not created yet: the topology version everywhere",
            World::at("v1.31.0"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.31.0"; 3],
                ..Expect::default()
            },
        ),
        (
            "control plane provisioning: it keeps its version, new MachineDeployments wait",
            World::at("v1.31.0").cp("v1.30.0", None),
            Expect {
                cp: "v1.30.0",
                mds: ["v1.31.0"; 3],
                provisioning: true,
                pending: true,
                cp_plan: &["v1.31.0"],
                pending_create: &["md-0", "md-1", "md-2"],
                ..Expect::default()
            },
        ),
        (
            "control plane provisioning at the topology version: nothing pending",
            World::at("v1.30.0").cp("v1.30.0", None),
            Expect {
                cp: "v1.30.0",
                mds: ["v1.30.0"; 3],
                provisioning: true,
                pending_create: &["md-0", "md-1", "md-2"],
                ..Expect::default()
            },
        ),
        (
            "control plane upgrading: it keeps its version, MachineDeployments pending",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.30.0"))
                .mds("v1.30.0"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.30.0"; 3],
                upgrading: true,
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-0", "md-1", "md-2"],
                ..Expect::default()
            },
        ),
        (
            "control plane stable and behind: it starts, MachineDeployments wait",
            World::at("v1.31.0")
                .cp("v1.30.0", Some("v1.30.0"))
                .mds("v1.30.0"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.30.0"; 3],
                starting: true,
                cp_plan: &["v1.31.0"],
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-0", "md-1", "md-2"],
                ..Expect::default()
            },
        ),
        (
            "control plane upgraded and stable: the first MachineDeployment upgrades",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.30.0"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.31.0", "v1.30.0", "v1.30.0"],
                waiting: true,
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-1", "md-2"],
                md_upgrading: &["md-0"],
                ..Expect::default()
            },
        ),
        (
            "concurrency 2: two MachineDeployments upgrade",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.30.0")
                .annotate_cluster(upgrade::UPGRADE_CONCURRENCY_ANNOTATION, "2"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.31.0", "v1.31.0", "v1.30.0"],
                waiting: true,
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-2"],
                md_upgrading: &["md-0", "md-1"],
                ..Expect::default()
            },
        ),
        (
            "defer-upgrade skips that MachineDeployment only",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.30.0")
                .annotate_topology("md-0", "topology.cluster.x-k8s.io/defer-upgrade"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.30.0", "v1.31.0", "v1.30.0"],
                waiting: true,
                md_plan: &["v1.31.0"],
                deferred: &["md-0"],
                pending_upgrade: &["md-0", "md-2"],
                md_upgrading: &["md-1"],
                ..Expect::default()
            },
        ),
        (
            "hold-upgrade-sequence holds that MachineDeployment and every later one",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.30.0")
                .annotate_cluster(upgrade::UPGRADE_CONCURRENCY_ANNOTATION, "3")
                .annotate_topology("md-1", "topology.cluster.x-k8s.io/hold-upgrade-sequence"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.31.0", "v1.30.0", "v1.30.0"],
                waiting: true,
                md_plan: &["v1.31.0"],
                deferred: &["md-1", "md-2"],
                pending_upgrade: &["md-1", "md-2"],
                md_upgrading: &["md-0"],
                ..Expect::default()
            },
        ),
        (
            "a MachineDeployment whose Machines lag counts against the concurrency",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.30.0")
                .md("md-2", "v1.31.0", Status::None)
                .machine("md-2", "v1.30.0")
                .machine("md-2", "v1.31.0"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.30.0", "v1.30.0", "v1.31.0"],
                waiting: true,
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-0", "md-1"],
                md_upgrading: &["md-2"],
                ..Expect::default()
            },
        ),
        (
            "Machines at the MachineDeployment's version: not upgrading",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.30.0")
                .md("md-2", "v1.31.0", Status::None)
                .machine("md-2", "v1.31.0"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.31.0", "v1.30.0", "v1.31.0"],
                waiting: true,
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-1"],
                md_upgrading: &["md-0"],
                ..Expect::default()
            },
        ),
        (
            "a MachineDeployment rolling out by its status holds the control plane back",
            World::at("v1.31.0")
                .cp("v1.30.0", Some("v1.30.0"))
                .mds("v1.30.0")
                .md("md-1", "v1.30.0", Status::RollingOut),
            Expect {
                cp: "v1.30.0",
                mds: ["v1.30.0"; 3],
                pending: true,
                cp_plan: &["v1.31.0"],
                md_plan: &["v1.31.0"],
                // Already upgrading counts against the concurrency, itself included.
                pending_upgrade: &["md-0", "md-1", "md-2"],
                md_upgrading: &["md-1"],
                ..Expect::default()
            },
        ),
        (
            "a MachineDeployment scaling up is not upgrading: the control plane goes ahead",
            World::at("v1.31.0")
                .cp("v1.30.0", Some("v1.30.0"))
                .mds("v1.30.0")
                .md("md-1", "v1.30.0", Status::ScalingUp),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.30.0"; 3],
                starting: true,
                cp_plan: &["v1.31.0"],
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-0", "md-1", "md-2"],
                ..Expect::default()
            },
        ),
        (
            "new MachineDeployments wait while the control plane upgrades",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.30.0"))
                .md("md-0", "v1.30.0", Status::Done),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.30.0", "v1.31.0", "v1.31.0"],
                upgrading: true,
                md_plan: &["v1.31.0"],
                pending_upgrade: &["md-0"],
                pending_create: &["md-1", "md-2"],
                ..Expect::default()
            },
        ),
        (
            "everything at the topology version: nothing to do",
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.31.0"),
            Expect {
                cp: "v1.31.0",
                mds: ["v1.31.0"; 3],
                ..Expect::default()
            },
        ),
    ];
    for (name, world, want) in cases {
        let d = world.desired();
        let t = &d.upgrade;
        let cp = &t.control_plane;
        let md = &t.machine_deployments;
        assert_eq!(cp_version(&d), want.cp, "{name}: control plane version");
        assert_eq!(
            md_versions(&d),
            want.mds,
            "{name}: MachineDeployment versions"
        );
        assert_eq!(cp.desired_version, want.cp, "{name}");
        assert_eq!(
            (
                cp.is_provisioning,
                cp.is_pending_upgrade,
                cp.is_starting_upgrade,
                cp.is_upgrading,
                cp.is_waiting_for_workers
            ),
            (
                want.provisioning,
                want.pending,
                want.starting,
                want.upgrading,
                want.waiting
            ),
            "{name}: (provisioning, pending, starting, upgrading, waiting)"
        );
        assert_eq!(
            cp.plan,
            set(want.cp_plan).into_iter().collect::<Vec<_>>(),
            "{name}: control plane plan"
        );
        assert_eq!(
            md.plan,
            set(want.md_plan).into_iter().collect::<Vec<_>>(),
            "{name}: workers plan"
        );
        assert_eq!(
            md.pending_create,
            set(want.pending_create),
            "{name}: pending create"
        );
        assert_eq!(
            md.pending_upgrade,
            set(want.pending_upgrade),
            "{name}: pending upgrade"
        );
        assert_eq!(md.deferred, set(want.deferred), "{name}: deferred");
        assert_eq!(md.upgrading, set(want.md_upgrading), "{name}: upgrading");
        assert_eq!(t.must_not_touch_control_plane(), want.pending, "{name}");
        for n in MDS {
            assert_eq!(
                t.must_not_create_machine_deployment(n),
                want.pending_create.contains(&n),
                "{name}: {n}"
            );
            assert_eq!(
                t.must_not_update_machine_deployment(n),
                want.pending_upgrade.contains(&n),
                "{name}: {n}"
            );
        }
    }
}

#[test]
fn plan_errors_fail_the_render() {
    // (world, expected message)
    let cases = [
        (
            World::at("v1.32.0").cp("v1.30.0", Some("v1.30.0")),
            "error computing the desired state of the Cluster topology: failed to compute upgrade plan: cannot compute an upgrade plan from v1.30.0 to v1.32.0",
        ),
        (
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.27.0"),
            // Workers four minors behind: no intermediate version is known, so (as in
            // Cluster API) there is no workers plan and the MachineDeployment fails.
            "error computing the desired state of the Cluster topology: failed to compute MachineDeployments: failed to compute MachineDepoyment for topology \"md-0\": cannot compute the machine deployment version if the machine deployment is pending upgrade and the upgrade plan is not set",
        ),
    ];
    for (world, want) in cases {
        let err = world.render().unwrap_err();
        assert!(
            err.messages.iter().any(|m| m == want),
            "wanted {want:?} in {:?}",
            err.messages
        );
    }
}

#[test]
fn upgrade_step_annotation_follows_the_plan() {
    let step = |d: &DesiredState| {
        at(
            &d.cluster,
            &format!(
                "/metadata/annotations/{}",
                UPGRADE_STEP_ANNOTATION.replace('/', "~1")
            ),
        )
        .clone()
    };
    // The control plane starts: the step is the version it moves to.
    let starting = World::at("v1.31.0")
        .cp("v1.30.0", Some("v1.30.0"))
        .mds("v1.30.0")
        .desired();
    assert_eq!(step(&starting), json!("v1.31.0"));
    assert_eq!(starting.upgrade.upgrade_step.as_deref(), Some("v1.31.0"));
    // The control plane is done but workers are not: still an upgrade.
    let workers = World::at("v1.31.0")
        .cp("v1.31.0", Some("v1.31.0"))
        .mds("v1.30.0")
        .desired();
    assert_eq!(step(&workers), json!("v1.31.0"));
    // Held back by a rolling MachineDeployment: the step is the current version.
    let held = World::at("v1.31.0")
        .cp("v1.30.0", Some("v1.30.0"))
        .mds("v1.30.0")
        .md("md-0", "v1.30.0", Status::RollingOut)
        .desired();
    assert_eq!(step(&held), json!("v1.30.0"));
    // Done: the annotation left on the Cluster goes, and the tracker says so.
    let done = World::at("v1.31.0")
        .cp("v1.31.0", Some("v1.31.0"))
        .mds("v1.31.0")
        .annotate_cluster(UPGRADE_STEP_ANNOTATION, "v1.31.0")
        .annotate_cluster("keep-me", "1")
        .desired();
    assert_eq!(step(&done), Value::Null);
    assert_eq!(
        at(&done.cluster, "/metadata/annotations/keep-me"),
        &json!("1")
    );
    assert!(done.upgrade.remove_upgrade_step_annotation);
    assert!(!workers.upgrade.remove_upgrade_step_annotation);
    // No annotation before, none after, nothing to remove.
    let quiet = World::at("v1.31.0")
        .cp("v1.31.0", Some("v1.31.0"))
        .mds("v1.31.0")
        .desired();
    assert_eq!(at(&quiet.cluster, "/metadata/annotations"), &Value::Null);
    assert!(!quiet.upgrade.remove_upgrade_step_annotation);
}

const VERSION_PATCH: &str = r#"  - name: versions
    definitions:
    - selector:
        apiVersion: controlplane.cluster.x-k8s.io/v1beta1
        kind: KubeadmControlPlaneTemplate
        matchResources: {controlPlane: true}
      jsonPatches:
      - {op: add, path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/kubernetesVersion, valueFrom: {variable: builtin.controlPlane.version}}
      - {op: add, path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/clusterName, valueFrom: {variable: builtin.cluster.topology.version}}
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        matchResources: {machineDeploymentClass: {names: [default-worker]}}
      jsonPatches:
      - {op: add, path: /spec/template/spec/joinConfiguration/nodeRegistration/name, valueFrom: {variable: builtin.machineDeployment.version}}
"#;

#[test]
fn builtin_variables_carry_the_decided_versions() {
    let world = World {
        extra_patch: VERSION_PATCH,
        ..World::at("v1.31.0")
            .cp("v1.30.0", Some("v1.30.0"))
            .mds("v1.30.0")
    };
    let d = world.desired();
    let config = |p: &str| {
        at(
            &d.control_plane.object,
            &format!("/spec/kubeadmConfigSpec/clusterConfiguration/{p}"),
        )
        .clone()
    };
    // The control plane starts its upgrade: it sees its new version...
    assert_eq!(config("kubernetesVersion"), json!("v1.31.0"));
    // ...while the Cluster's topology version stays what the user asked for.
    assert_eq!(config("clusterName"), json!("v1.31.0"));
    for md in &d.machine_deployments {
        // Pending MachineDeployments see (and keep) their current version.
        assert_eq!(
            at(
                &md.bootstrap_template,
                "/spec/template/spec/joinConfiguration/nodeRegistration/name"
            ),
            &json!("v1.30.0"),
            "{}",
            md.topology_name
        );
        // The class's own template patch reads the same builtin.
        assert_eq!(
            at(
                &md.infrastructure_template,
                "/spec/template/spec/customImage"
            ),
            &json!("kindest/node:v1.30.0")
        );
    }
    // Provisioning: the control plane keeps its version, the topology says otherwise.
    let provisioning = World {
        extra_patch: VERSION_PATCH,
        ..World::at("v1.31.0").cp("v1.30.0", None)
    }
    .desired();
    let config = |p: &str| {
        at(
            &provisioning.control_plane.object,
            &format!("/spec/kubeadmConfigSpec/clusterConfiguration/{p}"),
        )
        .clone()
    };
    assert_eq!(config("kubernetesVersion"), json!("v1.30.0"));
    assert_eq!(config("clusterName"), json!("v1.31.0"));
    assert_eq!(
        at(
            d.control_plane
                .machine_template
                .as_ref()
                .unwrap_or(&Value::Null),
            "/spec/template/spec/customImage"
        ),
        &json!("kindest/node:v1.31.0")
    );
}

#[test]
fn conditions_of_rendered_upgrades() {
    // (world, reason, message)
    let cases = [
        (
            World::at("v1.31.0")
                .cp("v1.30.0", Some("v1.30.0"))
                .mds("v1.30.0"),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.31.0\n  * KubeadmControlPlane upgrading to version v1.31.0\n  * MachineDeployments dev-md-0-current, dev-md-1-current, dev-md-2-current pending upgrade to version v1.31.0",
        ),
        (
            World::at("v1.31.0").cp("v1.30.0", None),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.31.0\n  * KubeadmControlPlane pending upgrade to version v1.31.0\n  * MachineDeployments md-0, md-1, md-2 creation deferred while control plane upgrade is in progress",
        ),
        (
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.30.0"),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.31.0\n  * MachineDeployment dev-md-0-current upgrading to version v1.31.0\n  * MachineDeployments dev-md-1-current, dev-md-2-current pending upgrade to version v1.31.0",
        ),
        (
            World::at("v1.31.0")
                .cp("v1.31.0", Some("v1.31.0"))
                .mds("v1.31.0")
                .md("md-1", "v1.30.0", Status::Done)
                .annotate_topology("md-1", "topology.cluster.x-k8s.io/defer-upgrade"),
            "MachineDeploymentsUpgradeDeferred",
            "Cluster is upgrading to v1.31.0\n  * MachineDeployment dev-md-1-current upgrade to version v1.31.0 deferred using defer-upgrade or hold-upgrade-sequence annotations",
        ),
    ];
    for (world, reason, message) in cases {
        let d = world.desired();
        let got = upgrade::condition(world.topology, &d.upgrade);
        assert_eq!(
            got,
            Some(UpgradeCondition {
                reason: match reason {
                    "ClusterUpgrading" => upgrade::message::REASON_CLUSTER_UPGRADING,
                    _ => upgrade::message::REASON_MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED,
                },
                message: message.to_string(),
            })
        );
    }
    let done = World::at("v1.31.0")
        .cp("v1.31.0", Some("v1.31.0"))
        .mds("v1.31.0")
        .desired();
    assert_eq!(upgrade::condition("v1.31.0", &done.upgrade), None);
}

fn tracker(cp: ControlPlaneUpgrade, mds: MachineDeploymentUpgrades) -> UpgradeTracker {
    UpgradeTracker {
        control_plane: ControlPlaneUpgrade {
            kind: "GenericControlPlane".into(),
            ..cp
        },
        machine_deployments: mds,
        max_concurrency: 1,
        ..UpgradeTracker::default()
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

#[test]
fn condition_messages() {
    // (tracker, reason, message); topology version v1.22.0. Cluster API's own cases,
    // with names as topology names (no object names known).
    let cases: Vec<(UpgradeTracker, &str, &str)> = vec![
        (
            tracker(
                ControlPlaneUpgrade {
                    is_upgrading: true,
                    desired_version: "v1.22.0".into(),
                    ..ControlPlaneUpgrade::default()
                },
                MachineDeploymentUpgrades {
                    plan: strings(&["v1.22.0"]),
                    pending_upgrade: set(&["md1", "md2", "md3", "md4"]),
                    pending_create: set(&["md5"]),
                    ..MachineDeploymentUpgrades::default()
                },
            ),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.22.0\n  * GenericControlPlane upgrading to version v1.22.0\n  * MachineDeployments md1, md2, md3, ... (1 more) pending upgrade to version v1.22.0\n  * MachineDeployment md5 creation deferred while control plane upgrade is in progress",
        ),
        (
            tracker(
                ControlPlaneUpgrade {
                    is_starting_upgrade: true,
                    desired_version: "v1.21.2".into(),
                    plan: strings(&["v1.21.2", "v1.22.0"]),
                    ..ControlPlaneUpgrade::default()
                },
                MachineDeploymentUpgrades::default(),
            ),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.22.0\n  * GenericControlPlane upgrading to version v1.21.2 (v1.22.0 pending)",
        ),
        (
            tracker(
                ControlPlaneUpgrade {
                    is_pending_upgrade: true,
                    desired_version: "v1.21.0".into(),
                    plan: strings(&["v1.21.2", "v1.22.0"]),
                    ..ControlPlaneUpgrade::default()
                },
                MachineDeploymentUpgrades {
                    plan: strings(&["v1.22.0"]),
                    upgrading: set(&["md1"]),
                    ..MachineDeploymentUpgrades::default()
                },
            ),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.22.0\n  * GenericControlPlane pending upgrade to version v1.21.2, v1.22.0\n  * MachineDeployment md1 upgrading to version v1.21.0 (v1.22.0 pending)",
        ),
        (
            // Upgrading wins over deferred wins over pending; pending without a plan
            // has no line.
            tracker(
                ControlPlaneUpgrade {
                    desired_version: "v1.22.0".into(),
                    ..ControlPlaneUpgrade::default()
                },
                MachineDeploymentUpgrades {
                    upgrading: set(&["a", "b"]),
                    deferred: set(&["b", "c", "d", "e", "f"]),
                    pending_upgrade: set(&["b", "c", "d", "e", "f", "g"]),
                    ..MachineDeploymentUpgrades::default()
                },
            ),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.22.0\n  * MachineDeployments a, b upgrading to version v1.22.0\n  * MachineDeployments c, d, e, ... (1 more) upgrade to version v1.22.0 deferred using defer-upgrade or hold-upgrade-sequence annotations",
        ),
        (
            tracker(
                ControlPlaneUpgrade {
                    desired_version: "v1.22.0".into(),
                    ..ControlPlaneUpgrade::default()
                },
                MachineDeploymentUpgrades {
                    plan: strings(&["v1.22.0"]),
                    deferred: set(&["z", "y", "x"]),
                    pending_upgrade: set(&["z", "y", "x"]),
                    object_names: [("x".to_string(), "dev-x-abcde".to_string())].into(),
                    ..MachineDeploymentUpgrades::default()
                },
            ),
            "MachineDeploymentsUpgradeDeferred",
            "Cluster is upgrading to v1.22.0\n  * MachineDeployments dev-x-abcde, y, z upgrade to version v1.22.0 deferred using defer-upgrade or hold-upgrade-sequence annotations",
        ),
        (
            // Something else merely pending: deferred is not all that is left.
            tracker(
                ControlPlaneUpgrade {
                    desired_version: "v1.22.0".into(),
                    ..ControlPlaneUpgrade::default()
                },
                MachineDeploymentUpgrades {
                    plan: strings(&["v1.22.0"]),
                    deferred: set(&["a"]),
                    pending_upgrade: set(&["a", "b", "c", "d", "e", "f", "g"]),
                    ..MachineDeploymentUpgrades::default()
                },
            ),
            "ClusterUpgrading",
            "Cluster is upgrading to v1.22.0\n  * MachineDeployments b, c, d, ... (3 more) pending upgrade to version v1.22.0\n  * MachineDeployment a upgrade to version v1.22.0 deferred using defer-upgrade or hold-upgrade-sequence annotations",
        ),
    ];
    for (t, reason, message) in cases {
        let got = upgrade::condition("v1.22.0", &t).unwrap_or_else(|| panic!("{message}"));
        assert_eq!(got.message, message);
        assert_eq!(got.reason, reason, "{message}");
    }
    assert_eq!(
        upgrade::condition(
            "v1.22.0",
            &tracker(
                ControlPlaneUpgrade::default(),
                MachineDeploymentUpgrades::default()
            )
        ),
        None
    );
}
