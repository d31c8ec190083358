//! Property tests of the upgrade decisions over random current versions, statuses,
//! annotations and concurrency: they never panic, never start more MachineDeployment
//! upgrades than the concurrency leaves room for, never move a MachineDeployment
//! anywhere but to the control plane's current version (and only while the control
//! plane stays put), and hold back what they mark as held back.

use std::collections::BTreeMap;

use proptest::prelude::*;
use topograph_engine::upgrade::decide::{
    ControlPlaneState, MachineDeploymentState, MachineDeploymentTopologyState,
};
use topograph_engine::upgrade::version::{Order, Version};
use topograph_engine::upgrade::{Decision, Inputs, PlanSource, decide};

fn version() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (28u64..34, 0u64..3).prop_map(|(minor, patch)| format!("v1.{minor}.{patch}")),
        1 => Just("v1.31.0+build.1".to_string()),
        1 => Just("v1.31.0+other".to_string()),
        1 => Just(String::new()),
        1 => Just("garbage".to_string()),
    ]
}

#[derive(Clone, Debug)]
struct Md {
    exists: bool,
    version: String,
    upgrading: bool,
    defer: bool,
    hold: bool,
}

fn md() -> impl Strategy<Value = Md> {
    (
        any::<bool>(),
        version(),
        any::<bool>(),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(exists, version, upgrading, defer, hold)| Md {
            exists,
            version,
            upgrading,
            defer,
            hold,
        })
}

#[derive(Clone, Debug)]
struct Case {
    topology: String,
    control_plane: Option<ControlPlaneState>,
    mds: Vec<Md>,
    concurrency: usize,
    available: Option<Vec<String>>,
}

fn case() -> impl Strategy<Value = Case> {
    let control_plane = prop::option::weighted(
        0.9,
        (version(), prop::option::weighted(0.8, version())).prop_map(|(spec, status)| {
            ControlPlaneState {
                kind: "KubeadmControlPlane".into(),
                spec_version: spec,
                status_version: status,
                status_versions: Vec::new(),
            }
        }),
    );
    let available = prop::option::weighted(
        0.3,
        prop::collection::vec((28u64..35, 0u64..3), 0..8).prop_map(|mut vs| {
            vs.sort_unstable();
            vs.into_iter().map(|(m, p)| format!("v1.{m}.{p}")).collect()
        }),
    );
    (
        version(),
        control_plane,
        prop::collection::vec(md(), 0..6),
        0usize..4,
        available,
    )
        .prop_map(
            |(topology, control_plane, mds, concurrency, available)| Case {
                topology,
                control_plane,
                mds,
                concurrency,
                available,
            },
        )
}

fn inputs(case: &Case) -> Inputs<'_> {
    let mut current = BTreeMap::new();
    for (i, md) in case.mds.iter().enumerate() {
        if md.exists {
            current.insert(
                format!("md-{i}"),
                MachineDeploymentState {
                    object_name: format!("obj-{i}"),
                    version: md.version.clone(),
                    upgrading: md.upgrading,
                },
            );
        }
    }
    Inputs {
        topology_version: &case.topology,
        plan_source: case
            .available
            .as_deref()
            .map_or(PlanSource::OneMinor, PlanSource::Versions),
        max_concurrency: case.concurrency,
        control_plane: case.control_plane.clone(),
        current_machine_deployments: current,
        current_machine_pools: Default::default(),
        topology_machine_pools: Vec::new(),
        topology_machine_deployments: case
            .mds
            .iter()
            .enumerate()
            .map(|(i, md)| MachineDeploymentTopologyState {
                name: format!("md-{i}"),
                defer_upgrade: md.defer,
                hold_upgrade_sequence: md.hold,
            })
            .collect(),
    }
}

fn check(case: &Case, decision: &Decision) -> Result<(), TestCaseError> {
    let tracker = &decision.tracker;
    let max = case.concurrency.max(1);
    prop_assert_eq!(decision.machine_deployment_versions.len(), case.mds.len());
    prop_assert!(tracker.max_concurrency >= 1);

    let cp_current = case
        .control_plane
        .as_ref()
        .map(|cp| cp.spec_version.clone());
    match &cp_current {
        None => prop_assert_eq!(&decision.control_plane_version, &case.topology),
        Some(current) => {
            // The control plane keeps its version or takes its plan's first step.
            let moved = &decision.control_plane_version != current;
            prop_assert_eq!(moved, tracker.control_plane.is_starting_upgrade);
            if moved {
                prop_assert_eq!(
                    Some(&decision.control_plane_version),
                    tracker.control_plane.plan.first()
                );
                prop_assert!(!tracker.control_plane.is_pending_upgrade);
            }
        }
    }

    let already_upgrading = case.mds.iter().filter(|m| m.exists && m.upgrading).count();
    let mut started = 0;
    for (i, (md, desired)) in case
        .mds
        .iter()
        .zip(&decision.machine_deployment_versions)
        .enumerate()
    {
        let name = format!("md-{i}");
        if !md.exists {
            prop_assert_eq!(desired, &case.topology);
            continue;
        }
        if tracker.machine_deployments.pending_upgrade.contains(&name) {
            prop_assert_eq!(desired, &md.version, "pending {} moved", name);
        }
        if md.defer || md.hold || case.mds[..i].iter().any(|m| m.hold) {
            prop_assert!(
                desired == &md.version || md.version.is_empty() || md.version == case.topology
            );
        }
        if desired != &md.version && !md.version.is_empty() {
            // Each start needs room under the concurrency at that moment.
            prop_assert!(
                already_upgrading < max,
                "{} moved with {} already upgrading",
                name,
                already_upgrading
            );
            if !md.upgrading {
                started += 1;
            }
            // Workers only move while the control plane stays where it is, and only to
            // its version: never ahead of it.
            let Some(cp) = &cp_current else {
                return Err(TestCaseError::fail(format!(
                    "{name} moved without a control plane"
                )));
            };
            prop_assert_eq!(&decision.control_plane_version, cp);
            prop_assert_eq!(desired, cp, "{} moved past the control plane", name);
            if let (Ok(to), Ok(cp)) = (
                Version::parse_tolerant(desired),
                Version::parse_tolerant(cp),
            ) {
                prop_assert_eq!(to.compare(&cp), Order::Equal);
            }
            prop_assert!(tracker.machine_deployments.upgrading.contains(&name));
        }
    }
    // New upgrades fit in what the already upgrading ones leave.
    prop_assert!(
        started <= max.saturating_sub(already_upgrading),
        "{} started, {} already upgrading, max {}",
        started,
        already_upgrading,
        max
    );
    // The upgrade-step annotation is there exactly while a plan is.
    let has_plan =
        !tracker.control_plane.plan.is_empty() || !tracker.machine_deployments.plan.is_empty();
    prop_assert_eq!(tracker.upgrade_step.is_some(), has_plan);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decisions_hold_their_invariants(case in case()) {
        // Errors are fine (bad versions, impossible plans); panics are not.
        if let Ok(decision) = decide(&inputs(&case)) {
            check(&case, &decision)?;
        }
    }
}
