//! A class's GenerateUpgradePlan extension plans upgrades (Cluster API main's chained
//! upgrades): both plans come from it, are validated with Cluster API's texts, and the
//! workers' is defaulted when it gives none; without extensions such a class cannot
//! plan an upgrade, as Cluster API with its RuntimeSDK gate off.

use std::sync::Mutex;

use topograph_api::model::{Cluster, ClusterClass};
use topograph_engine::{Extensions, ObjectStore, admit_and_render, admit_and_render_with};
use topograph_runtime::Error;
use topograph_runtime::error::ErrorKind;
use topograph_runtime::hooks::{
    DiscoverVariablesRequest, DiscoverVariablesResponse, GeneratePatchesRequest,
    GeneratePatchesResponse, GenerateUpgradePlanRequest, GenerateUpgradePlanResponse,
    UpgradeStepInfo, ValidateTopologyRequest, ValidateTopologyResponse,
};

mod common;

const HANDLER: &str = "generate-upgrade-plan.plans";

/// The quick-start naming the GenerateUpgradePlan extension, its Cluster at `version`.
fn load_case(version: &str) -> (Cluster, ClusterClass, ObjectStore) {
    let f = common::quick_start_v1beta2(
        &format!("  upgrade:\n    external:\n      generateUpgradePlanExtension: {HANDLER}\n"),
        version,
    );
    (f.cluster, f.class, f.store)
}

/// The control plane's and the workers' steps, or the extension's failure.
type Answer = Result<(Vec<&'static str>, Vec<&'static str>), String>;

/// Answers GenerateUpgradePlan with fixed plans (or an error), recording requests.
struct Planner {
    answer: Answer,
    asked: Mutex<Vec<(String, String, String, String)>>,
}

impl Planner {
    fn new(answer: Answer) -> Self {
        Planner {
            answer,
            asked: Mutex::default(),
        }
    }
}

fn unused(what: &str) -> Error {
    Error::new(
        ErrorKind::NotRegistered,
        format!("{what} is not served here"),
    )
}

impl Extensions for Planner {
    fn generate_patches(
        &self,
        _: &str,
        _: &str,
        _: &str,
        _: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, Error> {
        Err(unused("GeneratePatches"))
    }

    fn validate_topology(
        &self,
        _: &str,
        _: &str,
        _: &str,
        _: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, Error> {
        Err(unused("ValidateTopology"))
    }

    fn discover_variables(
        &self,
        _: &str,
        _: &str,
        _: &str,
        _: &DiscoverVariablesRequest,
    ) -> Result<DiscoverVariablesResponse, Error> {
        Err(unused("DiscoverVariables"))
    }

    fn generate_upgrade_plan(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &GenerateUpgradePlanRequest,
    ) -> Result<GenerateUpgradePlanResponse, Error> {
        assert_eq!(request.cluster["metadata"]["name"], "dev");
        assert!(request.cluster.get("status").is_none());
        self.asked.lock().unwrap().push((
            format!("{handler} {namespace}/{name}"),
            request.from_control_plane_kubernetes_version.clone(),
            request.from_workers_kubernetes_version.clone(),
            request.to_kubernetes_version.clone(),
        ));
        let (control_plane, workers) = self
            .answer
            .clone()
            .map_err(|m| Error::new(ErrorKind::Failure, m))?;
        let steps = |v: Vec<&str>| {
            v.into_iter()
                .map(|version| UpgradeStepInfo {
                    version: version.to_string(),
                })
                .collect()
        };
        Ok(GenerateUpgradePlanResponse {
            control_plane_upgrades: steps(control_plane),
            workers_upgrades: steps(workers),
            ..Default::default()
        })
    }
}

#[test]
fn the_extension_plans_the_control_plane_through_intermediate_versions() {
    let (cluster, class, store) = load_case("v1.32.2");
    let planner = Planner::new(Ok((vec!["v1.31.7", "v1.32.2"], vec![])));
    let rendered = admit_and_render_with(&cluster, &class, &store, &planner)
        .unwrap_or_else(|e| panic!("{e:?}"));
    let upgrade = &rendered.desired.upgrade.control_plane;
    assert_eq!(upgrade.plan, ["v1.31.7", "v1.32.2"]);
    assert_eq!(upgrade.desired_version, "v1.31.7");
    assert_eq!(
        rendered.desired.control_plane.object["spec"]["version"],
        "v1.31.7"
    );
    assert_eq!(
        planner.asked.lock().unwrap().as_slice(),
        [(
            format!("{HANDLER} default/dev"),
            "v1.30.0".to_string(),
            String::new(),
            "v1.32.2".to_string()
        )]
    );
}

#[test]
fn an_invalid_plan_from_the_extension_is_refused_with_cluster_apis_text() {
    // (answer, the error the render fails with)
    let cases: [(Answer, &str); 4] = [
        (
            Ok((vec!["v1.32.2"], vec![])),
            "invalid ControlPlane upgrade plan: item 0; expecting a version with minor 30 or 31, found version v1.32.2",
        ),
        (
            Ok((vec!["v1.31.7"], vec![])),
            "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version v1.32.2, ends with v1.31.7 instead",
        ),
        (
            Ok((vec!["v1.31.7", "v1.31.2", "v1.32.2"], vec![])),
            "invalid ControlPlane upgrade plan: item 1; version v1.31.2 must be greater than v1.31.7",
        ),
        (
            Err("no path from v1.30.0".to_string()),
            "failed to get upgrade plan from extension: no path from v1.30.0",
        ),
    ];
    for (answer, want) in cases {
        let (cluster, class, store) = load_case("v1.32.2");
        let planner = Planner::new(answer);
        let err = admit_and_render_with(&cluster, &class, &store, &planner).unwrap_err();
        let text = format!("{err:?}");
        assert!(text.contains(want), "{want}\n  in {text}");
    }
}

#[test]
fn without_extensions_the_class_cannot_plan_an_upgrade() {
    let (cluster, class, store) = load_case("v1.31.0");
    let err = admit_and_render(&cluster, &class, &store).unwrap_err();
    let text = format!("{err:?}");
    assert!(
        text.contains(&format!(
            "can not use GenerateUpgradePlan extension \\\"{HANDLER}\\\" if RuntimeSDK feature flag is disabled"
        )),
        "{text}"
    );
    // At the class's version already, there is nothing to plan and nothing to ask.
    let (cluster, class, store) = load_case("v1.30.0");
    admit_and_render(&cluster, &class, &store).unwrap_or_else(|e| panic!("{e:?}"));
}
