//! Upgrade sequencing of MachinePools (spec section 7.2) beside MachineDeployments,
//! over the decision inputs, and the pools' rows of the `TopologyReconciled`
//! condition: pools wait for a stable control plane to be created, follow the control
//! plane with their own upgrade concurrency, honour `defer-upgrade` /
//! `hold-upgrade-sequence`, and an upgrading pool holds the control plane back.

use std::collections::BTreeMap;

use topograph_engine::upgrade::decide::{
    ControlPlaneState, MachineDeploymentState, MachineDeploymentTopologyState,
};
use topograph_engine::upgrade::{self, Decision, Inputs, PlanSource};

fn cp(spec: &str, status: &str) -> Option<ControlPlaneState> {
    Some(ControlPlaneState {
        kind: "KubeadmControlPlane".into(),
        spec_version: spec.into(),
        status_version: Some(status.into()),
        status_versions: Vec::new(),
    })
}

/// Current workers by topology name: `(name, version, upgrading)`.
fn current(workers: &[(&str, &str, bool)]) -> BTreeMap<String, MachineDeploymentState> {
    workers
        .iter()
        .map(|(name, version, upgrading)| {
            (
                name.to_string(),
                MachineDeploymentState {
                    object_name: format!("obj-{name}"),
                    version: version.to_string(),
                    upgrading: *upgrading,
                },
            )
        })
        .collect()
}

/// Topology workers: `(name, annotation)`, the annotation `defer` or `hold` or "".
fn topology(workers: &[(&str, &str)]) -> Vec<MachineDeploymentTopologyState> {
    workers
        .iter()
        .map(|(name, annotation)| MachineDeploymentTopologyState {
            name: name.to_string(),
            defer_upgrade: *annotation == "defer",
            hold_upgrade_sequence: *annotation == "hold",
        })
        .collect()
}

struct Case {
    name: &'static str,
    topology: &'static str,
    control_plane: Option<ControlPlaneState>,
    concurrency: usize,
    mds: Vec<(&'static str, &'static str, bool)>,
    md_topology: Vec<(&'static str, &'static str)>,
    pools: Vec<(&'static str, &'static str, bool)>,
    pool_topology: Vec<(&'static str, &'static str)>,
}

impl Case {
    fn decide(&self) -> Result<Decision, String> {
        upgrade::decide(&Inputs {
            topology_version: self.topology,
            plan_source: PlanSource::OneMinor,
            max_concurrency: self.concurrency,
            control_plane: self.control_plane.clone(),
            current_machine_deployments: current(&self.mds),
            topology_machine_deployments: topology(&self.md_topology),
            current_machine_pools: current(&self.pools),
            topology_machine_pools: topology(&self.pool_topology),
        })
    }
}

fn base(name: &'static str) -> Case {
    Case {
        name,
        topology: "v1.31.0",
        control_plane: cp("v1.31.0", "v1.31.0"),
        concurrency: 1,
        mds: Vec::new(),
        md_topology: Vec::new(),
        pools: Vec::new(),
        pool_topology: Vec::new(),
    }
}

#[test]
fn pool_versions_follow_the_control_plane() {
    // (case, control plane version, pool versions, pending create, pending upgrade,
    //  upgrading, deferred)
    type Want = (
        &'static str,
        Vec<&'static str>,
        Vec<&'static str>,
        Vec<&'static str>,
        Vec<&'static str>,
        Vec<&'static str>,
    );
    let cases: Vec<(Case, Want)> = vec![
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false)],
                pool_topology: vec![("mp-0", "")],
                control_plane: cp("v1.30.0", "v1.30.0"),
                ..base("the control plane goes first")
            },
            (
                "v1.31.0",
                vec!["v1.30.0"],
                vec![],
                vec!["mp-0"],
                vec![],
                vec![],
            ),
        ),
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false), ("mp-1", "v1.30.0", false)],
                pool_topology: vec![("mp-0", ""), ("mp-1", "")],
                ..base("then the pools, one at a time")
            },
            (
                "v1.31.0",
                vec!["v1.31.0", "v1.30.0"],
                vec![],
                vec!["mp-1"],
                vec!["mp-0"],
                vec![],
            ),
        ),
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false), ("mp-1", "v1.30.0", false)],
                pool_topology: vec![("mp-0", ""), ("mp-1", "")],
                mds: vec![("md-0", "v1.30.0", false)],
                md_topology: vec![("md-0", "")],
                ..base("pools and MachineDeployments each have their own concurrency")
            },
            (
                "v1.31.0",
                vec!["v1.31.0", "v1.30.0"],
                vec![],
                vec!["mp-1"],
                vec!["mp-0"],
                vec![],
            ),
        ),
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false), ("mp-1", "v1.30.0", false)],
                pool_topology: vec![("mp-0", "hold"), ("mp-1", "")],
                ..base("a hold reaches the pools after it")
            },
            (
                "v1.31.0",
                vec!["v1.30.0", "v1.30.0"],
                vec![],
                vec!["mp-0", "mp-1"],
                vec![],
                vec!["mp-0", "mp-1"],
            ),
        ),
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false), ("mp-1", "v1.30.0", false)],
                pool_topology: vec![("mp-0", "defer"), ("mp-1", "")],
                ..base("a defer holds back its own pool only")
            },
            (
                "v1.31.0",
                vec!["v1.30.0", "v1.31.0"],
                vec![],
                vec!["mp-0"],
                vec!["mp-1"],
                vec!["mp-0"],
            ),
        ),
        (
            Case {
                control_plane: cp("v1.31.0", "v1.30.0"),
                pool_topology: vec![("mp-new", "")],
                ..base("a new pool waits for the control plane to settle")
            },
            (
                "v1.31.0",
                vec!["v1.31.0"],
                vec!["mp-new"],
                vec![],
                vec![],
                vec![],
            ),
        ),
        (
            Case {
                topology: "v1.32.0",
                pools: vec![("mp-0", "v1.31.0", true)],
                pool_topology: vec![("mp-0", "")],
                ..base("a rolling pool holds the control plane back")
            },
            // Still rolling the last version, it counts against the concurrency: it is
            // pending the next one too.
            (
                "v1.31.0",
                vec!["v1.31.0"],
                vec![],
                vec!["mp-0"],
                vec!["mp-0"],
                vec![],
            ),
        ),
    ];
    for (case, (cp_version, versions, create, pending, upgrading, deferred)) in cases {
        let decision = case
            .decide()
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let pools = &decision.tracker.machine_pools;
        let names = |set: &std::collections::BTreeSet<String>| -> Vec<String> {
            set.iter().cloned().collect()
        };
        let strings = |v: Vec<&str>| -> Vec<String> { v.into_iter().map(String::from).collect() };
        assert_eq!(decision.control_plane_version, cp_version, "{}", case.name);
        assert_eq!(
            decision.machine_pool_versions,
            strings(versions),
            "{}",
            case.name
        );
        assert_eq!(
            names(&pools.pending_create),
            strings(create),
            "{}",
            case.name
        );
        assert_eq!(
            names(&pools.pending_upgrade),
            strings(pending),
            "{}",
            case.name
        );
        assert_eq!(names(&pools.upgrading), strings(upgrading), "{}", case.name);
        assert_eq!(names(&pools.deferred), strings(deferred), "{}", case.name);
        // A decision about pools never touches the MachineDeployments' record.
        if case.mds.is_empty() && case.md_topology.is_empty() {
            assert_eq!(
                decision.tracker.machine_deployments,
                Default::default(),
                "{}",
                case.name
            );
        }
    }
}

#[test]
fn pools_in_the_condition() {
    // (case, reason, message)
    let cases = vec![
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false), ("mp-1", "v1.30.0", false)],
                pool_topology: vec![("mp-0", ""), ("mp-1", "")],
                ..base("upgrading and pending")
            },
            "ClusterUpgrading",
            "Cluster is upgrading to v1.31.0\n  * MachinePool obj-mp-0 upgrading to version v1.31.0\n  * MachinePool obj-mp-1 pending upgrade to version v1.31.0",
        ),
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false)],
                pool_topology: vec![("mp-0", "defer")],
                ..base("only deferred pools are left")
            },
            "MachinePoolsUpgradeDeferred",
            "Cluster is upgrading to v1.31.0\n  * MachinePool obj-mp-0 upgrade to version v1.31.0 deferred using topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations",
        ),
        (
            Case {
                pools: vec![("mp-0", "v1.30.0", false)],
                pool_topology: vec![("mp-0", "defer")],
                mds: vec![("md-0", "v1.30.0", false)],
                md_topology: vec![("md-0", "defer")],
                ..base("deferred MachineDeployments name the reason first")
            },
            "MachineDeploymentsUpgradeDeferred",
            "Cluster is upgrading to v1.31.0\n  * MachineDeployment obj-md-0 upgrade to version v1.31.0 deferred using defer-upgrade or hold-upgrade-sequence annotations\n  * MachinePool obj-mp-0 upgrade to version v1.31.0 deferred using topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations",
        ),
        (
            Case {
                control_plane: cp("v1.31.0", "v1.30.0"),
                pool_topology: vec![("mp-new", "")],
                ..base("creation deferred")
            },
            "ClusterUpgrading",
            "Cluster is upgrading to v1.31.0\n  * KubeadmControlPlane upgrading to version v1.31.0\n  * MachinePool mp-new creation deferred while control plane upgrade is in progress",
        ),
    ];
    for (case, reason, message) in cases {
        let decision = case
            .decide()
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let condition = upgrade::condition(case.topology, &decision.tracker)
            .unwrap_or_else(|| panic!("{}: no condition", case.name));
        assert_eq!(condition.reason, reason, "{}", case.name);
        assert_eq!(condition.message, message, "{}", case.name);
    }
}

#[test]
fn a_pool_version_that_does_not_parse_is_named() {
    let case = Case {
        topology: "v1.32.0",
        pools: vec![("mp-0", "not-a-version", false)],
        pool_topology: vec![("mp-0", "")],
        ..base("bad version")
    };
    let err = case.decide().unwrap_err();
    assert!(
        err.contains("failed to parse version not-a-version of MachinePool obj-mp-0"),
        "{err}"
    );
}
