//! Upgrade plans (spec section 7.2, Cluster API's `upgrade_plan.go`): the versions the
//! control plane goes through to reach the topology version, and the (fewer) versions
//! the workers go through, never more than three minors apart (Kubernetes' skew rule).
//!
//! The control plane plan comes from a [`PlanSource`]: the default moves one minor at
//! most; a list of available versions (a ClusterClass's `kubernetesVersions`, which
//! v1beta1 does not have yet) allows chained upgrades, and so does a GenerateUpgradePlan
//! extension, which may give the workers' steps too. The workers plan is otherwise
//! derived from the control plane's. Both are validated with Cluster API's error texts.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::version::{Order, Version};

/// A GenerateUpgradePlan extension, asked with the desired version, the control
/// plane's and the lowest worker version (`""` without workers); it answers the
/// control plane's steps and, possibly empty, the workers' steps.
pub type PlanExtension<'a> =
    &'a dyn Fn(&str, &str, &str) -> Result<(Vec<String>, Vec<String>), String>;

/// Where the control plane's plan comes from.
#[derive(Clone, Copy)]
pub enum PlanSource<'a> {
    /// At most one minor per upgrade: the plan is the desired version
    /// (`GetUpgradePlanOneMinor`).
    OneMinor,
    /// The latest available version of every minor up to the desired one
    /// (`GetUpgradePlanFromClusterClassVersions`).
    Versions(&'a [String]),
    /// The class's GenerateUpgradePlan extension (`GetUpgradePlanFromExtension`): both
    /// plans from it, validated (and the workers' defaulted when it gives none) as any.
    Extension(PlanExtension<'a>),
}

impl std::fmt::Debug for PlanSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanSource::OneMinor => f.write_str("OneMinor"),
            PlanSource::Versions(v) => f.debug_tuple("Versions").field(v).finish(),
            PlanSource::Extension(_) => f.write_str("Extension"),
        }
    }
}

/// The plans of one reconcile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plans {
    /// Versions the control plane still goes through, ending at the desired one.
    pub control_plane: Vec<String>,
    /// Versions the workers still go through (empty without current workers).
    pub workers: Vec<String>,
    /// The lowest current worker version, `v`-prefixed, if any worker has one.
    pub min_workers_version: Option<String>,
}

/// A current worker's version, named for error messages.
#[derive(Clone, Copy, Debug)]
pub struct WorkerVersion<'a> {
    /// Its kind (`MachineDeployment`, `MachinePool`).
    pub kind: &'a str,
    /// Its object name.
    pub name: &'a str,
    /// Its `spec.template.spec.version` ("" when unset).
    pub version: &'a str,
}

fn parse(text: &str, context: impl FnOnce() -> String) -> Result<Version, String> {
    Version::parse_tolerant(text).map_err(|e| format!("{}: {e}", context()))
}

/// The control plane plan from `source` (no plan when the control plane is at the
/// desired version already).
pub fn control_plane_plan(
    source: PlanSource<'_>,
    desired: &str,
    current: &str,
) -> Result<Vec<String>, String> {
    let desired_v = parse(desired, || "failed to parse desired version".into())?;
    let current_v = parse(current, || {
        "failed to parse current ControlPlane version".into()
    })?;
    if current_v.to_string() == desired_v.to_string() {
        return Ok(Vec::new());
    }
    match source {
        PlanSource::OneMinor => {
            if desired_v.minor > current_v.minor.saturating_add(1) {
                return Err(format!(
                    "cannot compute an upgrade plan from {current} to {desired}"
                ));
            }
            Ok(vec![desired.to_string()])
        }
        PlanSource::Versions(versions) => from_versions(versions, &desired_v, &current_v),
        PlanSource::Extension(ask) => ask(desired, current, "").map(|(plan, _)| plan),
    }
}

/// Every listed version after the current one up to the desired one, then only the
/// last of each minor. The walk mirrors Cluster API's, including its best effort when
/// the current version is not listed.
fn from_versions(
    versions: &[String],
    desired: &Version,
    current: &Version,
) -> Result<Vec<String>, String> {
    let mut picked: Vec<(String, u64)> = Vec::new();
    let (mut start, mut end) = (false, false);
    for v in versions {
        let sem = parse(v, || format!("failed to parse version {v}"))?;
        if (start && !end) || (!start && sem.minor > current.minor) {
            picked.push((v.clone(), sem.minor));
        }
        if sem.to_string() == current.to_string() || current.compare(&sem) == Order::Less {
            start = true;
        }
        if sem.to_string() == desired.to_string() || desired.compare(&sem) == Order::Less {
            end = true;
        }
    }
    let mut plan: Vec<String> = Vec::new();
    let mut minor = current.minor;
    for (v, v_minor) in picked {
        if v_minor > minor {
            plan.push(v);
        } else if v_minor == minor
            && let Some(last) = plan.last_mut()
        {
            *last = v;
        }
        minor = v_minor;
    }
    Ok(plan)
}

/// Cluster API's `isLowerThanMinVersion`: versions that cannot be ordered count as
/// lower unless they are the control plane's version (workers are at it or older).
fn is_lower_than_min(v: &Version, min: &Version, control_plane: &Version) -> bool {
    match v.compare(min) {
        Order::Less => true,
        Order::Different => v.to_string() != control_plane.to_string(),
        Order::Equal | Order::Greater => false,
    }
}

/// Cluster API's `ComputeUpgradePlan` once the control plane exists: the lowest worker
/// version, then both plans when anything is away from `desired`.
pub fn compute(
    source: PlanSource<'_>,
    desired: &str,
    control_plane: &str,
    workers: &[WorkerVersion<'_>],
) -> Result<Plans, String> {
    let desired_v = parse(desired, || {
        format!("failed to parse Cluster version {desired}")
    })?;
    let control_plane_v = parse(control_plane, || {
        format!("failed to parse ControlPlane version {control_plane}")
    })?;
    let mut min_workers: Option<Version> = None;
    for worker in workers.iter().filter(|w| !w.version.is_empty()) {
        let v = parse(worker.version, || {
            format!(
                "failed to parse version {} of {} {}",
                worker.version, worker.kind, worker.name
            )
        })?;
        if min_workers
            .as_ref()
            .is_none_or(|min| is_lower_than_min(&v, min, &control_plane_v))
        {
            min_workers = Some(v);
        }
    }
    let min_workers_version = min_workers.as_ref().map(Version::tagged);
    let mut plans = Plans {
        min_workers_version: min_workers_version.clone(),
        ..Plans::default()
    };
    let at_desired = |v: &Version| v.to_string() == desired_v.to_string();
    if at_desired(&control_plane_v) && min_workers.as_ref().is_none_or(at_desired) {
        return Ok(plans);
    }
    let (control_plane_plan, workers_given) = match source {
        PlanSource::Extension(ask) => ask(
            desired,
            control_plane,
            min_workers_version.as_deref().unwrap_or(""),
        )?,
        other => (
            control_plane_plan(other, desired, control_plane)?,
            Vec::new(),
        ),
    };
    let workers_plan = default_and_validate(
        desired,
        control_plane,
        min_workers_version.as_deref(),
        &control_plane_plan,
        workers_given,
    )?;
    plans.control_plane = control_plane_plan;
    if !workers.is_empty() {
        plans.workers = workers_plan;
    }
    Ok(plans)
}

/// Cluster API's `DefaultAndValidateUpgradePlans`: validates the control plane plan,
/// defaults an empty workers plan (a step every three minors, then the desired version)
/// and validates it.
pub fn default_and_validate(
    desired: &str,
    control_plane: &str,
    min_workers: Option<&str>,
    control_plane_plan: &[String],
    mut workers_plan: Vec<String>,
) -> Result<Vec<String>, String> {
    let desired_v = parse(desired, || {
        format!("failed to parse Cluster version {desired}")
    })?;
    let control_plane_v = parse(control_plane, || {
        format!("failed to parse ControlPlane version {control_plane}")
    })?;
    let min_workers_v = min_workers
        .map(|m| parse(m, || format!("failed to parse min workers version {m}")))
        .transpose()?;

    // The known version of each minor, to pick intermediate worker steps from; the
    // control plane's own version serves workers lagging behind it.
    let mut minors: BTreeMap<u64, String> = BTreeMap::new();
    minors.insert(control_plane_v.minor, control_plane.to_string());
    // Versions differing only by build metadata are ordered by their place in the plan.
    let mut order: HashMap<String, i64> = HashMap::new();
    order.insert(control_plane.to_string(), -1);

    if control_plane_v.compare(&desired_v) != Order::Equal {
        let mut current = control_plane_v.clone();
        for (i, target) in control_plane_plan.iter().enumerate() {
            order.insert(target.clone(), i64::try_from(i).unwrap_or(i64::MAX));
            let target_v = parse(target, || {
                format!(
                    "invalid ControlPlane upgrade plan: item {i}; failed to parse version {target}"
                )
            })?;
            if matches!(target_v.compare(&current), Order::Less | Order::Equal) {
                return Err(format!(
                    "invalid ControlPlane upgrade plan: item {i}; version {target} must be greater than v{current}"
                ));
            }
            if current.minor != target_v.minor && current.minor.saturating_add(1) != target_v.minor
            {
                return Err(format!(
                    "invalid ControlPlane upgrade plan: item {i}; expecting a version with minor {} or {}, found version {target}",
                    current.minor,
                    current.minor.saturating_add(1)
                ));
            }
            minors.insert(target_v.minor, target.clone());
            current = target_v;
        }
        if current.compare(&desired_v) != Order::Equal {
            return Err(format!(
                "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version {desired}, ends with v{current} instead"
            ));
        }
    } else if !control_plane_plan.is_empty() {
        return Err(
            "invalid ControlPlane upgrade plan: control plane is already at the desired version"
                .into(),
        );
    }

    let Some(min_workers_v) = min_workers_v.filter(|m| m.compare(&desired_v) != Order::Equal)
    else {
        if !workers_plan.is_empty() {
            return Err("invalid worker upgrade plan; there are no workers or workers already at the desired version".into());
        }
        return Ok(workers_plan);
    };

    if !control_plane_plan.is_empty() {
        let mut allowed: BTreeSet<&str> = control_plane_plan.iter().map(String::as_str).collect();
        allowed.insert(control_plane);
        let unknown: BTreeSet<&str> = workers_plan
            .iter()
            .map(String::as_str)
            .filter(|v| !allowed.contains(v))
            .collect();
        if !unknown.is_empty() {
            return Err(format!(
                "invalid workers upgrade plan: versions {} doesn't match any versions in the control plane upgrade plan nor the control plane version",
                unknown.into_iter().collect::<Vec<_>>().join(",")
            ));
        }
    }

    if workers_plan.is_empty() {
        let from = min_workers_v.minor;
        for i in 1..desired_v.minor.saturating_sub(from) {
            if i % 3 == 0 {
                let Some(target) = minors.get(&(from + i)) else {
                    // Cluster API wraps a nil error here, so the call "succeeds" with no
                    // workers plan; the MachineDeployment decision then reports it.
                    return Ok(Vec::new());
                };
                workers_plan.push(target.clone());
            }
        }
        if workers_plan.last().map(String::as_str) != Some(desired) {
            workers_plan.push(desired.to_string());
        }
    }

    let mut current = min_workers_v;
    for (i, target) in workers_plan.iter().enumerate() {
        let target_v = parse(target, || {
            format!("invalid workers upgrade plan, item {i}; failed to parse version {target}")
        })?;
        match target_v.compare(&current) {
            Order::Less | Order::Equal => {
                return Err(format!(
                    "invalid workers upgrade plan, item {i}; version {target} must be greater than v{current}"
                ));
            }
            Order::Different => {
                let Some(target_order) = order.get(target) else {
                    return Err(format!(
                        "invalid workers upgrade plan, item {i}; failer to determine version {target} order"
                    ));
                };
                let Some(current_order) = order.get(&current.tagged()) else {
                    return Err(format!("failer to determine version v{current} order"));
                };
                if target_order < current_order {
                    return Err(format!(
                        "invalid workers upgrade plan, item {i}; version {target} must be before v{current}"
                    ));
                }
            }
            Order::Greater => {}
        }
        // Unsigned like Go's: a lower minor (with a higher major) wraps and fails too.
        if target_v.minor.wrapping_sub(current.minor) > 3 {
            return Err(format!(
                "invalid workers upgrade plan, item {i}; workers cannot go from minor {} ({}) to minor {} ({target}), an intermediate step is required to comply with Kubernetes version skew rules",
                current.minor,
                current.tagged(),
                target_v.minor
            ));
        }
        current = target_v;
    }
    if current.compare(&desired_v) != Order::Equal {
        return Err(format!(
            "invalid workers upgrade plan; workers upgrade plan must end with version {desired}, ends with v{current} instead"
        ));
    }
    Ok(workers_plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn one_minor_plans() {
        // (desired, current, plan or error)
        type Case<'a> = (&'a str, &'a str, Result<Vec<&'a str>, &'a str>);
        let cases: [Case<'_>; 4] = [
            ("v1.31.0", "v1.31.0", Ok(vec![])),
            ("v1.31.2", "v1.31.0", Ok(vec!["v1.31.2"])),
            ("v1.32.0", "v1.31.5", Ok(vec!["v1.32.0"])),
            (
                "v1.33.0",
                "v1.31.0",
                Err("cannot compute an upgrade plan from v1.31.0 to v1.33.0"),
            ),
        ];
        for (desired, current, want) in cases {
            let got = control_plane_plan(PlanSource::OneMinor, desired, current);
            assert_eq!(
                got,
                want.map(|p| strings(&p)).map_err(ToString::to_string),
                "{current} -> {desired}"
            );
        }
    }

    #[test]
    fn plans_from_available_versions() {
        // (available, desired, current, plan) — Cluster API's own table.
        let cases: [(&[&str], &str, &str, &[&str]); 8] = [
            (&["v1.31.0"], "v1.31.0", "v1.31.0", &[]),
            (
                &["v1.31.0", "v1.32.0", "v1.32.1"],
                "v1.32.0",
                "v1.31.0",
                &["v1.32.0"],
            ),
            (
                &["v1.31.0", "v1.32.0", "v1.33.0"],
                "v1.33.0",
                "v1.31.0",
                &["v1.32.0", "v1.33.0"],
            ),
            (
                &[
                    "v1.31.0", "v1.31.1", "v1.32.0", "v1.32.2", "v1.32.3", "v1.33.0", "v1.33.1",
                ],
                "v1.33.1",
                "v1.31.0",
                &["v1.32.3", "v1.33.1"],
            ),
            (
                &[
                    "v1.31.0",
                    "v1.31.1",
                    "v1.32.0-alpha.0",
                    "v1.32.0-alpha.1",
                    "v1.32.0-alpha.2",
                    "v1.33.0",
                    "v1.33.1",
                ],
                "v1.33.1",
                "v1.31.0",
                &["v1.32.0-alpha.2", "v1.33.1"],
            ),
            (
                &[
                    "v1.31.0",
                    "v1.31.1",
                    "v1.32.0+foo.1-bar.1",
                    "v1.32.0+foo.2-bar.1",
                    "v1.32.0+foo.2-bar.2",
                    "v1.33.0",
                    "v1.33.1",
                ],
                "v1.33.1",
                "v1.31.0",
                &["v1.32.0+foo.2-bar.2", "v1.33.1"],
            ),
            (
                &["v1.31.1", "v1.32.0", "v1.33.0"],
                "v1.33.0",
                "v1.31.0",
                &["v1.32.0", "v1.33.0"],
            ),
            (
                &["v1.32.0", "v1.33.0"],
                "v1.33.0",
                "v1.30.2",
                &["v1.32.0", "v1.33.0"],
            ),
        ];
        for (available, desired, current, want) in cases {
            let available = strings(available);
            let got = control_plane_plan(PlanSource::Versions(&available), desired, current);
            assert_eq!(
                got,
                Ok(strings(want)),
                "{available:?}: {current} -> {desired}"
            );
        }
        // A gap in the list is caught by validation.
        let available = strings(&["v1.32.0", "v1.33.0"]);
        let got = compute(PlanSource::Versions(&available), "v1.33.0", "v1.30.2", &[]);
        assert_eq!(
            got,
            Err("invalid ControlPlane upgrade plan: item 0; expecting a version with minor 30 or 31, found version v1.32.0".into())
        );
    }

    #[test]
    fn computed_plans() {
        // (desired, control plane, worker versions, available versions, cp plan, workers plan)
        type Case<'a> = (
            &'a str,
            &'a str,
            &'a [&'a str],
            Option<&'a [&'a str]>,
            &'a [&'a str],
            &'a [&'a str],
        );
        let cases: [Case<'_>; 7] = [
            ("v1.33.1", "v1.33.1", &["v1.33.1"], None, &[], &[]),
            ("v1.31.0", "v1.30.0", &[], None, &["v1.31.0"], &[]),
            (
                "v1.31.0",
                "v1.30.0",
                &["v1.30.0", "v1.29.3"],
                None,
                &["v1.31.0"],
                &["v1.31.0"],
            ),
            (
                "v1.31.0",
                "v1.31.0",
                &["v1.30.0", "v1.31.0"],
                None,
                &[],
                &["v1.31.0"],
            ),
            // Chained: workers skip intermediate minors within the skew.
            (
                "v1.33.1",
                "v1.30.0",
                &["v1.30.0"],
                Some(&["v1.30.0", "v1.31.1", "v1.32.0", "v1.33.1"]),
                &["v1.31.1", "v1.32.0", "v1.33.1"],
                &["v1.33.1"],
            ),
            (
                "v1.35.0",
                "v1.30.0",
                &["v1.30.0"],
                Some(&["v1.31.0", "v1.32.0", "v1.33.2", "v1.34.0", "v1.35.0"]),
                &["v1.31.0", "v1.32.0", "v1.33.2", "v1.34.0", "v1.35.0"],
                &["v1.33.2", "v1.35.0"],
            ),
            // Workers without a version do not count.
            ("v1.31.0", "v1.31.0", &[""], None, &[], &[]),
        ];
        for (desired, cp, workers, available, want_cp, want_workers) in cases {
            let available = available.map(strings);
            let source = available
                .as_deref()
                .map_or(PlanSource::OneMinor, PlanSource::Versions);
            let workers: Vec<WorkerVersion<'_>> = workers
                .iter()
                .map(|v| WorkerVersion {
                    kind: "MachineDeployment",
                    name: "md",
                    version: v,
                })
                .collect();
            let got = compute(source, desired, cp, &workers).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got.control_plane, strings(want_cp), "{cp} -> {desired}");
            assert_eq!(got.workers, strings(want_workers), "{cp} -> {desired}");
        }
    }

    #[test]
    fn minimum_worker_version_with_build_metadata() {
        // A version that cannot be ordered against the minimum is lower unless it is
        // the control plane's.
        let workers = [
            WorkerVersion {
                kind: "MachineDeployment",
                name: "a",
                version: "v1.31.1+foo.2-bar.1",
            },
            WorkerVersion {
                kind: "MachineDeployment",
                name: "b",
                version: "v1.31.1+foo.1-bar.1",
            },
        ];
        let plans = compute(
            PlanSource::OneMinor,
            "v1.32.0",
            "v1.31.1+foo.2-bar.1",
            &workers,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            plans.min_workers_version.as_deref(),
            Some("v1.31.1+foo.1-bar.1")
        );
    }

    #[test]
    fn validation_errors() {
        // (desired, control plane, min workers, cp plan, workers plan, error)
        type Case<'a> = (
            &'a str,
            &'a str,
            Option<&'a str>,
            &'a [&'a str],
            &'a [&'a str],
            &'a str,
        );
        let cases: [Case<'_>; 12] = [
            (
                "v1.33.1",
                "v1.30.0",
                None,
                &["foo"],
                &[],
                "invalid ControlPlane upgrade plan: item 0; failed to parse version foo: Invalid character(s) found in major number \"0foo\"",
            ),
            (
                "v1.33.1",
                "v1.30.0",
                None,
                &["v1.30.0"],
                &[],
                "invalid ControlPlane upgrade plan: item 0; version v1.30.0 must be greater than v1.30.0",
            ),
            (
                "v1.33.1",
                "v1.30.0",
                None,
                &["v1.32.1"],
                &[],
                "invalid ControlPlane upgrade plan: item 0; expecting a version with minor 30 or 31, found version v1.32.1",
            ),
            (
                "v1.33.1",
                "v1.30.0",
                None,
                &["v1.31.1", "v1.30.0"],
                &[],
                "invalid ControlPlane upgrade plan: item 1; version v1.30.0 must be greater than v1.31.1",
            ),
            (
                "v1.33.1",
                "v1.30.0",
                None,
                &["v1.31.1", "v1.32.0"],
                &[],
                "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version v1.33.1, ends with v1.32.0 instead",
            ),
            (
                "v1.33.1",
                "v1.33.1",
                Some("v1.30.0"),
                &["v1.33.1"],
                &[],
                "invalid ControlPlane upgrade plan: control plane is already at the desired version",
            ),
            (
                "v1.33.1",
                "v1.30.0",
                Some("v1.30.0"),
                &["v1.31.1", "v1.32.0", "v1.33.1"],
                &["v1.32.2"],
                "invalid workers upgrade plan: versions v1.32.2 doesn't match any versions in the control plane upgrade plan nor the control plane version",
            ),
            (
                "v1.33.1",
                "v1.30.0",
                Some("v1.30.0"),
                &["v1.31.1", "v1.32.0", "v1.33.1"],
                &["v1.33.1", "v1.32.0"],
                "invalid workers upgrade plan, item 1; version v1.32.0 must be greater than v1.33.1",
            ),
            (
                "v1.33.1",
                "v1.33.1",
                Some("v1.30.0"),
                &[],
                &["v1.30.0"],
                "invalid workers upgrade plan, item 0; version v1.30.0 must be greater than v1.30.0",
            ),
            (
                "v1.33.1",
                "v1.33.1",
                Some("v1.30.0"),
                &[],
                &["v1.32.1"],
                "invalid workers upgrade plan; workers upgrade plan must end with version v1.33.1, ends with v1.32.1 instead",
            ),
            (
                "v1.34.1",
                "v1.34.1",
                Some("v1.30.0"),
                &[],
                &["v1.34.1"],
                "invalid workers upgrade plan, item 0; workers cannot go from minor 30 (v1.30.0) to minor 34 (v1.34.1), an intermediate step is required to comply with Kubernetes version skew rules",
            ),
            (
                "v1.33.1",
                "v1.30.0",
                None,
                &["v1.31.1", "v1.32.0", "v1.33.1"],
                &["v1.35.1"],
                "invalid worker upgrade plan; there are no workers or workers already at the desired version",
            ),
        ];
        for (desired, cp, min, cp_plan, workers_plan, want) in cases {
            let got =
                default_and_validate(desired, cp, min, &strings(cp_plan), strings(workers_plan));
            assert_eq!(got, Err(want.to_string()), "{cp_plan:?} / {workers_plan:?}");
        }
    }
}
