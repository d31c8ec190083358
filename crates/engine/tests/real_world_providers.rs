//! The ClusterClasses providers publish (`../shared/real-world/providers/`, both API
//! versions), each with the Cluster that uses it and its `values.env` substituted:
//! every folder loads, is admitted and renders (or fails with the problem its
//! `EXPECTED-PROBLEMS.txt` names), and vSphere's v1beta1 and v1beta2 editions of the
//! same class render the same objects but for the differences listed here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use topograph_api::load::{Bundle, Input, LoadOptions, load};
use topograph_api::model::WireVersion;
use topograph_api::object::ObjectExt;
use topograph_engine::admission::{admit_class, admit_cluster};
use topograph_engine::store::ObjectStore;
use topograph_engine::validate::validate_cluster;
use topograph_engine::{Rendered, admit_and_render};

fn providers() -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/real-world/providers");
    if dir.exists() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

/// `values.env` as clusterctl reads it: `NAME=value` lines, comments and blanks left out.
fn values(dir: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join("values.env")).unwrap();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains('='))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect()
}

/// The files, substituted with `dir`'s `values.env`.
fn inputs(dir: &Path, files: &[PathBuf]) -> Vec<(String, String)> {
    inputs_with(dir, files, &BTreeMap::new())
}

/// [`inputs`], with `overrides` winning over `values.env`.
fn inputs_with(
    dir: &Path,
    files: &[PathBuf],
    overrides: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut values = values(dir);
    values.extend(overrides.clone());
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let text = topograph_api::envsubst::substitute(&text, &values)
                .unwrap_or_else(|m| panic!("{}: unset variables {m:?}", path.display()));
            (path.display().to_string(), text)
        })
        .collect()
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

fn load_all(inputs: &[(String, String)]) -> Bundle {
    let inputs: Vec<Input<'_>> = inputs
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    load(&inputs, &LoadOptions::default()).unwrap_or_else(|errs| {
        panic!(
            "load: {:#?}",
            errs.iter().map(ToString::to_string).collect::<Vec<_>>()
        )
    })
}

/// Admits the one class and the one Cluster of `bundle` and renders.
fn render(bundle: &Bundle) -> Result<Rendered, Vec<String>> {
    assert_eq!(bundle.cluster_classes.len(), 1, "one class");
    assert_eq!(bundle.clusters.len(), 1, "one Cluster");
    let store = ObjectStore::new(bundle.objects.iter().map(|o| o.value.clone()));
    admit_and_render(
        &bundle.clusters[0].value,
        &bundle.cluster_classes[0].value,
        &store,
    )
    .map_err(|refusal| refusal.messages())
}

const V1BETA2_FOLDERS: &[&str] = &[
    "capa-ci-default-v1beta2-self-hosted",
    "capv-clusterclass-v1beta2",
    "capo-dev-test-v1beta2",
    "capi-e2e-quick-start-v1beta2",
];

const V1BETA1_FOLDERS: &[&str] = &[
    "capa-ci-default",
    "capi-e2e-quick-start-runtimesdk-v1beta1",
    "capi-e2e-quick-start-v1beta1",
    "capv-clusterclass-v1beta1",
    "capx-nutanix-quick-start",
    "capz-aks-clusterclass",
    "turtles-docker-kubeadm-v1beta1",
];

#[test]
fn every_provider_folder_loads_is_admitted_and_renders() {
    let Some(root) = providers() else { return };
    let mut failures = Vec::new();
    for folder in V1BETA2_FOLDERS.iter().chain(V1BETA1_FOLDERS) {
        let dir = root.join(folder);
        let bundle = load_all(&inputs(&dir, &yaml_files(&dir)));
        let cluster = bundle.clusters[0].value.clone();
        if V1BETA2_FOLDERS.contains(folder) {
            assert_eq!(cluster.wire, WireVersion::V1Beta2, "{folder}");
            assert_eq!(bundle.cluster_classes[0].value.wire, WireVersion::V1Beta2);
        }
        let bundle = with_provider_defaults(folder, bundle);
        let expected_refusal = ENGINE_LIMITS
            .iter()
            .find(|(f, _)| f == folder)
            .map(|(_, message)| *message);
        let rendered = match (render(&bundle), expected_refusal) {
            (Ok(rendered), None) => rendered,
            (Err(e), Some(want)) if e == [want] => continue,
            (outcome, _) => {
                failures.push(format!(
                    "{folder}: {:#?}",
                    outcome.map(|_| "rendered").map_err(|e| e.join("; "))
                ));
                continue;
            }
        };
        let desired = &rendered.desired;
        assert!(
            !desired.control_plane.object.name().is_empty(),
            "{folder}: a named control plane"
        );
        let topology = cluster.topology.as_ref().unwrap();
        assert_eq!(
            desired.machine_deployments.len(),
            topology.machine_deployments.len(),
            "{folder}: one MachineDeployment per topology entry"
        );
        assert_eq!(
            desired.machine_pools.len(),
            topology.machine_pools.len(),
            "{folder}: one MachinePool per topology entry"
        );
        for (pool, entry) in desired.machine_pools.iter().zip(&topology.machine_pools) {
            let spec = &pool.object["spec"]["template"]["spec"];
            assert_eq!(spec["version"], json!(topology.version), "{folder}");
            for (object, reference) in [
                (&pool.bootstrap_object, &spec["bootstrap"]["configRef"]),
                (&pool.infrastructure_object, &spec["infrastructureRef"]),
            ] {
                assert_eq!(reference["name"], json!(object.name()), "{folder}");
                assert!(
                    !object.kind().ends_with("Template"),
                    "{folder}: an object, not a template: {}",
                    object.kind()
                );
                assert_eq!(
                    object.labels().get("topology.cluster.x-k8s.io/pool-name"),
                    Some(&entry.name),
                    "{folder}"
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The names of the template copies a render gives: the control plane's machine
/// template, then each MachineDeployment's bootstrap and infrastructure templates.
fn template_names(rendered: &Rendered) -> Vec<String> {
    let desired = &rendered.desired;
    let mut names: Vec<String> = desired
        .control_plane
        .machine_template
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    for md in &desired.machine_deployments {
        names.push(md.bootstrap_template.name().to_string());
        names.push(md.infrastructure_template.name().to_string());
    }
    names
}

/// What a render writes, read back as the current state, renders the same template
/// copies: no class's patches make a copy look changed against what it patched it
/// into (which would rotate it, and roll its machines, right after creation).
#[test]
fn a_render_taken_as_the_current_state_rotates_no_template() {
    let Some(root) = providers() else { return };
    let mut checked = 0;
    for folder in V1BETA2_FOLDERS.iter().chain(V1BETA1_FOLDERS) {
        if ENGINE_LIMITS.iter().any(|(f, _)| f == folder) {
            continue;
        }
        let dir = root.join(folder);
        let bundle = with_provider_defaults(folder, load_all(&inputs(&dir, &yaml_files(&dir))));
        let first = render(&bundle).unwrap_or_else(|e| panic!("{folder}: {e:?}"));
        // The Cluster as the topology wrote it (its references set), and every object
        // the render created, as they would exist.
        let cluster = topograph_api::load::decode_cluster(first.desired.cluster.clone())
            .unwrap_or_else(|e| panic!("{folder}: {e}"));
        let written = first
            .desired
            .objects()
            .into_iter()
            .filter(|o| o.kind() != "Cluster")
            .cloned();
        let store = ObjectStore::new(
            bundle
                .objects
                .iter()
                .map(|o| o.value.clone())
                .chain(written),
        );
        let again = admit_and_render(&cluster, &bundle.cluster_classes[0].value, &store)
            .unwrap_or_else(|refusal| panic!("{folder}: {:?}", refusal.messages()));
        assert_eq!(template_names(&again), template_names(&first), "{folder}");
        assert_eq!(
            again.desired.control_plane.object.name(),
            first.desired.control_plane.object.name(),
            "{folder}: the current control plane was found"
        );
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} folders rendered");
}

/// Folders the engine refuses on purpose, with the refusal: what needs a Runtime SDK
/// extension (external patches), which an offline render cannot call.
const ENGINE_LIMITS: &[(&str, &str)] = &[(
    "capi-e2e-quick-start-runtimesdk-v1beta1",
    "ClusterClass default/quick-start-runtimesdk: spec.patches[0].external: Forbidden: patch.external can be used only if the RuntimeSDK feature flag is enabled",
)];

/// The folders whose Clusters have MachinePools pass admission whole, class and
/// Cluster, on create and on an update to themselves: nothing in them is a problem
/// Cluster API's webhooks would report, whatever the render makes of the pools.
#[test]
fn folders_with_machine_pools_pass_admission() {
    let Some(root) = providers() else { return };
    for folder in [
        "capz-aks-clusterclass",
        "capi-e2e-quick-start-v1beta1",
        "capi-e2e-quick-start-v1beta2",
    ] {
        let dir = root.join(folder);
        let bundle = load_all(&inputs(&dir, &yaml_files(&dir)));
        let class = &bundle.cluster_classes[0].value;
        let cluster = &bundle.clusters[0].value;
        let pools = cluster
            .topology
            .as_ref()
            .map_or(0, |t| t.machine_pools.len());
        assert!(pools > 0, "{folder}: the Cluster has MachinePools");
        for old in [None, Some(class)] {
            if let Err(errors) = admit_class(class.clone(), old, &[cluster]) {
                panic!("{folder}: class refused: {errors:#?}");
            }
        }
        for old in [None, Some(cluster)] {
            let admission = admit_cluster(cluster, old, &[class]);
            assert_eq!(
                (admission.errors, admission.warnings),
                (Vec::new(), Vec::<String>::new()),
                "{folder}: Cluster refused"
            );
            assert!(admission.admitted.is_some(), "{folder}");
        }
    }
}

/// CAPA's `limitAZ` patch replaces `network.vpc.availabilityZoneUsageLimit`, which only
/// CAPA's template defaulting (CRD default 3) puts in the AWSClusterTemplate of a live
/// cluster; the raw file lacks it. The defaulted template is what the topology
/// controller reads there.
fn with_provider_defaults(folder: &str, mut bundle: Bundle) -> Bundle {
    if folder.starts_with("capa-") {
        for object in &mut bundle.objects {
            if object.value.kind() == "AWSClusterTemplate" {
                let spec = &mut object.value["spec"]["template"]["spec"];
                if spec
                    .pointer("/network/vpc/availabilityZoneUsageLimit")
                    .is_none()
                {
                    spec["network"]["vpc"]["availabilityZoneUsageLimit"] = json!(3);
                }
            }
        }
    }
    bundle
}

#[test]
fn capa_v1beta2_without_capas_template_defaults_is_refused_as_cluster_api_refuses_it() {
    let Some(root) = providers() else { return };
    let dir = root.join("capa-ci-default-v1beta2-self-hosted");
    let bundle = load_all(&inputs(&dir, &yaml_files(&dir)));
    let Err(messages) = render(&bundle) else {
        panic!("the raw template lacks the path, yet it rendered");
    };
    assert_eq!(
        messages,
        vec![
            "error computing the desired state of the Cluster topology: failed to apply patches: failed to apply patches for patch \"limitAZ\": failed to apply patch: error applying json patch (RFC6902): replace operation does not apply: doc is missing path: /spec/template/spec/network/vpc/availabilityZoneUsageLimit: missing value"
                .to_string()
        ]
    );
}

#[test]
fn capmox_as_published_is_refused_with_its_expected_problem_and_the_corrected_copy_renders() {
    let Some(root) = providers() else { return };
    let dir = root.join("capmox-clusterclass-v1beta1");
    let expected = std::fs::read_to_string(dir.join("EXPECTED-PROBLEMS.txt")).unwrap();
    let problem = expected
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap();
    // `cluster <name>: <field error>`.
    let (_, want) = problem.split_once(": ").unwrap();

    // The text is the validating webhook's; admission as a whole gets past it, because
    // the mutating webhook first puts the `v` in front of the version.
    let raw = load_all(&inputs(&dir, &yaml_files(&dir)));
    let class = &raw.cluster_classes[0].value;
    // The fixture's oracle reports the semantic-version text; the validating webhook's
    // first check (the one the engine reports) is the `v` prefix, at the same field
    // with the same value.
    let validation = validate_cluster(&raw.clusters[0].value, None, &[class]);
    let messages: Vec<String> = validation.errors.iter().map(ToString::to_string).collect();
    let field_and_value = |m: &str| m.rsplit_once(": ").map(|(head, _)| head.to_string());
    assert_eq!(
        messages
            .iter()
            .map(|m| field_and_value(m))
            .collect::<Vec<_>>(),
        vec![field_and_value(want)],
        "{messages:?} against {want:?}"
    );
    render(&raw).unwrap_or_else(|e| panic!("defaulted raw Cluster: {e:#?}"));

    let derived: Vec<PathBuf> = yaml_files(&dir)
        .into_iter()
        .filter(|p| !p.ends_with("cluster.yaml"))
        .chain(yaml_files(&dir.join("derived")))
        .collect();
    let fixed = load_all(&inputs(&dir, &derived));
    render(&fixed).unwrap_or_else(|e| panic!("derived: {e:#?}"));
}

/// `kind/name` → object.
fn by_kind_and_name(rendered: &Rendered) -> BTreeMap<String, Value> {
    rendered
        .desired
        .objects()
        .into_iter()
        .map(|o| (format!("{}/{}", o.kind(), o.name()), o.clone()))
        .collect()
}

#[test]
fn capv_v1beta1_and_v1beta2_editions_render_the_same_objects() {
    let Some(root) = providers() else { return };
    // The same values for both (the v1beta2 folder names its Cluster `capv-cc2`), so
    // that generated names agree.
    let shared = values(&root.join("capv-clusterclass-v1beta1"));
    let render_folder = |folder: &str| {
        let dir = root.join(folder);
        let bundle = load_all(&inputs_with(&dir, &yaml_files(&dir), &shared));
        render(&bundle).unwrap_or_else(|e| panic!("{folder}: {e:#?}"))
    };
    let old = by_kind_and_name(&render_folder("capv-clusterclass-v1beta1"));
    let new = by_kind_and_name(&render_folder("capv-clusterclass-v1beta2"));
    assert_eq!(
        old.keys().collect::<Vec<_>>(),
        new.keys().collect::<Vec<_>>(),
        "the same objects"
    );

    // Every difference, as `kind/name pointer`: what the provider changed between its
    // two editions (its own templates moved to v1beta2 contracts: apiVersions,
    // KubeadmConfig's `extraArgs` as name/value lists, an empty `postKubeadmCommands`
    // dropped, the bare `/spec` patch on the VSphereClusterTemplate), and the Cluster
    // document itself, which is the v1beta2 one the user wrote (`classRef`,
    // `apiGroup` references). Nothing else may differ.
    let mut differences = Vec::new();
    for (key, a) in &old {
        diff(key, "", a, &new[key], &mut differences);
    }
    let expected: Vec<String> = KNOWN_CAPV_DIFFERENCES
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(differences, expected, "{differences:#?}");
}

/// The pointers at which `a` and `b` differ, as deep as both are objects.
fn diff(key: &str, pointer: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                diff(key, &format!("{pointer}/{k}"), va, vb, out);
            }
        }
        _ if a != b => out.push(format!("{key} {pointer}")),
        _ => {}
    }
}

/// What differs between the capv editions, and why.
const KNOWN_CAPV_DIFFERENCES: &[&str] = &[
    // The Cluster document is the one the user wrote: v1beta2's apiVersion, `classRef`
    // for `class`, and the v1beta2 template's own variables and worker fields; the
    // references the engine writes are v1beta2's contract-versioned `{apiGroup, kind,
    // name}` instead of v1beta1's `{apiVersion, kind, name, namespace}`.
    "Cluster/capv-cc /apiVersion",
    "Cluster/capv-cc /spec/controlPlaneRef/apiGroup",
    "Cluster/capv-cc /spec/controlPlaneRef/apiVersion",
    "Cluster/capv-cc /spec/controlPlaneRef/namespace",
    "Cluster/capv-cc /spec/infrastructureRef/apiGroup",
    "Cluster/capv-cc /spec/infrastructureRef/apiVersion",
    "Cluster/capv-cc /spec/infrastructureRef/namespace",
    "Cluster/capv-cc /spec/topology/class",
    "Cluster/capv-cc /spec/topology/classRef",
    "Cluster/capv-cc /spec/topology/variables",
    "Cluster/capv-cc /spec/topology/workers/machineDeployments",
    // CABPK v1beta2: `extraArgs` as name/value lists, no empty `postKubeadmCommands`.
    "KubeadmConfigTemplate/capv-cc-md-0-5gq84 /apiVersion",
    "KubeadmConfigTemplate/capv-cc-md-0-5gq84 /spec/template/spec/joinConfiguration/nodeRegistration/kubeletExtraArgs",
    "KubeadmConfigTemplate/capv-cc-md-0-5gq84 /spec/template/spec/postKubeadmCommands",
    // KCP v1beta2 likewise, and its files patch writes the v1beta2 shape.
    "KubeadmControlPlane/capv-cc-7xxjn /apiVersion",
    "KubeadmControlPlane/capv-cc-7xxjn /spec/kubeadmConfigSpec/clusterConfiguration/controllerManager/extraArgs",
    "KubeadmControlPlane/capv-cc-7xxjn /spec/kubeadmConfigSpec/files",
    "KubeadmControlPlane/capv-cc-7xxjn /spec/kubeadmConfigSpec/initConfiguration/nodeRegistration/kubeletExtraArgs",
    "KubeadmControlPlane/capv-cc-7xxjn /spec/kubeadmConfigSpec/joinConfiguration/nodeRegistration/kubeletExtraArgs",
    "KubeadmControlPlane/capv-cc-7xxjn /spec/kubeadmConfigSpec/postKubeadmCommands",
    "KubeadmControlPlane/capv-cc-7xxjn /spec/machineTemplate/infrastructureRef/apiVersion",
    // The v1beta2 class adds `deletion.nodeDeletionTimeoutSeconds: 0` on CP and MD.
    "KubeadmControlPlane/capv-cc-7xxjn /spec/machineTemplate/nodeDeletionTimeout",
    "MachineDeployment/capv-cc-md-0-qmd87 /spec/template/spec/bootstrap/configRef/apiVersion",
    "MachineDeployment/capv-cc-md-0-qmd87 /spec/template/spec/infrastructureRef/apiVersion",
    "MachineDeployment/capv-cc-md-0-qmd87 /spec/template/spec/nodeDeletionTimeout",
    // CAPV v1beta2 templates: new apiVersion, network devices in the new shape.
    "VSphereCluster/capv-cc-htg82 /apiVersion",
    "VSphereMachineTemplate/capv-cc-md-0-7gjfp /apiVersion",
    "VSphereMachineTemplate/capv-cc-md-0-7gjfp /spec/template/spec/network/devices",
    "VSphereMachineTemplate/capv-cc-qzwz9 /apiVersion",
    "VSphereMachineTemplate/capv-cc-qzwz9 /spec/template/spec/network/devices",
];
