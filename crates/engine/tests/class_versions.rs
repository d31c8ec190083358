//! A v1beta2 class's `kubernetesVersions`: upgrades are planned through the versions it
//! lists (the latest patch of every minor up to the Cluster's version), and a Cluster
//! may then move more than one minor at once; without them the plan is one minor at a
//! time and admission refuses a bigger step, as Cluster API does.

use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::validate::validate_cluster;
use topograph_engine::{ObjectStore, admit_and_render};

mod common;

const VERSIONS: &str = "  kubernetesVersions: [v1.30.0, v1.31.0, v1.31.4, v1.32.0, v1.33.0]\n";

/// The quick-start with `kubernetesVersions` when `versions`, its Cluster at `version`.
fn load_case(versions: bool, version: &str) -> (Cluster, ClusterClass, ObjectStore) {
    let f = common::quick_start_v1beta2(if versions { VERSIONS } else { "" }, version);
    (f.cluster, f.class, f.store)
}

#[test]
fn listed_versions_plan_the_control_plane_through_every_minor() {
    let (cluster, class, store) = load_case(true, "v1.32.0");
    let rendered = admit_and_render(&cluster, &class, &store).unwrap_or_else(|e| panic!("{e:?}"));
    let upgrade = &rendered.desired.upgrade.control_plane;
    // The latest listed patch of the next minor first, then the Cluster's version.
    assert_eq!(upgrade.plan, ["v1.31.4", "v1.32.0"]);
    assert_eq!(upgrade.desired_version, "v1.31.4");
    assert_eq!(
        rendered.desired.control_plane.object["spec"]["version"],
        "v1.31.4"
    );
}

#[test]
fn without_listed_versions_two_minors_cannot_be_planned() {
    let (cluster, class, store) = load_case(false, "v1.32.0");
    let err = admit_and_render(&cluster, &class, &store).unwrap_err();
    let text = format!("{err:?}");
    assert!(
        text.contains("cannot compute an upgrade plan from v1.30.0 to v1.32.0"),
        "{text}"
    );
}

#[test]
fn admission_lets_a_class_with_listed_versions_move_several_minors() {
    for (versions, want) in [
        (
            false,
            vec![
                "spec.topology.version: Invalid value: \"v1.32.0\": version cannot be increased from \"1.30.0\" to \"1.32.0\"",
            ],
        ),
        (true, vec![]),
    ] {
        let (old, class, _) = load_case(versions, "v1.30.0");
        let (new, _, _) = load_case(versions, "v1.32.0");
        let verdict = validate_cluster(&new, Some(&old), &[&class]);
        let errors: Vec<String> = verdict.errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors, want, "kubernetesVersions listed: {versions}");
    }
}
