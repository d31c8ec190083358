//! External patches through runtime extensions, in process (the network client is
//! tested with the example extension in `services/extension/tests`): the
//! quick-start-runtimesdk real-world class rendered with the example extension's own
//! handlers, conflicting discovered variables, failures worded as Cluster API words
//! them, and answers that do not fit (unknown uids, bad patches) never panicking.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use proptest::prelude::*;
use serde_json::{Value, json};
use topograph_api::load::{Bundle, Input, LoadOptions, load};
use topograph_api::object::ObjectExt;
use topograph_engine::store::ObjectStore;
use topograph_engine::{Extensions, admit_and_render_with};
use topograph_runtime::hooks::{
    ClusterClassVariable, CommonResponse, DiscoverVariablesRequest, DiscoverVariablesResponse,
    GeneratePatchesRequest, GeneratePatchesResponse, GeneratePatchesResponseItem, PatchType,
    ResponseStatus, ValidateTopologyRequest, ValidateTopologyResponse, VariableSchema,
};
use topograph_runtime::{Error, ErrorKind};

fn folder() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-world/providers/capi-e2e-quick-start-runtimesdk-v1beta1");
    dir.exists().then_some(dir).or_else(|| {
        eprintln!("skipped: the real-world folder is absent");
        None
    })
}

/// The runtimesdk class and Cluster, substituted; `edit` changes the class's text.
fn bundle(dir: &Path, edit: impl Fn(String) -> String) -> Bundle {
    let values: BTreeMap<String, String> = std::fs::read_to_string(dir.join("values.env"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect();
    let texts: Vec<(String, String)> = [
        "clusterclass-quick-start-runtimesdk.yaml",
        "cluster-template-upgrades-runtimesdk.kustomized.yaml",
    ]
    .iter()
    .map(|f| {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        let text = topograph_api::envsubst::substitute(&text, &values).unwrap();
        let text = if f.starts_with("clusterclass") {
            edit(text)
        } else {
            text
        };
        (f.to_string(), text)
    })
    .collect();
    let inputs: Vec<Input<'_>> = texts
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    load(&inputs, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e:?}"))
}

/// How the fake answers GeneratePatches.
type Generate =
    Box<dyn Fn(&GeneratePatchesRequest) -> Result<GeneratePatchesResponse, Error> + Send + Sync>;

/// Extensions answering in process: GeneratePatches by a function, DiscoverVariables
/// per handler; every call recorded.
struct Fake {
    generate: Generate,
    variables: BTreeMap<String, Vec<ClusterClassVariable>>,
    validate: Result<(), String>,
    calls: Mutex<Vec<String>>,
}

impl Fake {
    /// The example extension's handlers.
    fn example() -> Self {
        let defined = topograph_example_extension::discover_variables().variables;
        Fake {
            generate: Box::new(|r| Ok(topograph_example_extension::patches::generate(r))),
            variables: [(
                "discover-variables.k8s-upgrade-with-runtimesdk".to_string(),
                defined,
            )]
            .into(),
            validate: Ok(()),
            calls: Mutex::default(),
        }
    }
}

impl Extensions for Fake {
    fn generate_patches(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, Error> {
        self.calls
            .lock()
            .unwrap()
            .push(format!("GeneratePatches {handler} {namespace}/{name}"));
        (self.generate)(request)
    }

    fn validate_topology(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, Error> {
        self.calls.lock().unwrap().push(format!(
            "ValidateTopology {handler} {namespace}/{name} {} items",
            request.items.len()
        ));
        match &self.validate {
            Ok(()) => Ok(ValidateTopologyResponse::default()),
            Err(m) => Err(Error::new(
                ErrorKind::Failure,
                format!(
                    "failed to call extension handler {handler:?}: got failure response with message {m:?}"
                ),
            )),
        }
    }

    fn generate_upgrade_plan(
        &self,
        handler: &str,
        _: &str,
        _: &str,
        _: &topograph_runtime::hooks::GenerateUpgradePlanRequest,
    ) -> Result<topograph_runtime::hooks::GenerateUpgradePlanResponse, Error> {
        Err(Error::new(
            ErrorKind::NotRegistered,
            format!("{handler}: not served by this fake"),
        ))
    }

    fn discover_variables(
        &self,
        handler: &str,
        namespace: &str,
        name: &str,
        _: &DiscoverVariablesRequest,
    ) -> Result<DiscoverVariablesResponse, Error> {
        self.calls
            .lock()
            .unwrap()
            .push(format!("DiscoverVariables {handler} {namespace}/{name}"));
        Ok(DiscoverVariablesResponse {
            common: CommonResponse {
                status: ResponseStatus::Success,
                message: String::new(),
            },
            variables: self.variables.get(handler).cloned().unwrap_or_default(),
            ..Default::default()
        })
    }
}

fn render(bundle: &Bundle, extensions: &dyn Extensions) -> Result<Vec<Value>, Vec<String>> {
    let store = ObjectStore::new(bundle.objects.iter().map(|o| o.value.clone()));
    admit_and_render_with(
        &bundle.clusters[0].value,
        &bundle.cluster_classes[0].value,
        &store,
        extensions,
    )
    .map(|r| r.desired.objects().into_iter().cloned().collect())
    .map_err(|r| r.messages())
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o.kind() == kind).collect()
}

#[test]
fn the_runtimesdk_class_renders_with_the_example_extension() {
    let Some(dir) = folder() else { return };
    let fake = Fake::example();
    let objects = render(&bundle(&dir, |t| t), &fake).unwrap();
    let image = "kindest/node:v1.30.0@sha256:047357ac0cfea04663786a612ba1eaba9702bef25227a794b52890dd8bcd692e";
    let cluster = of_kind(&objects, "DockerCluster");
    assert_eq!(
        cluster[0]["spec"]["loadBalancer"]["imageRepository"],
        json!("kindest")
    );
    let kcp = of_kind(&objects, "KubeadmControlPlane")[0];
    assert_eq!(
        kcp["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"],
        json!(1)
    );
    for component in ["apiServer", "controllerManager", "scheduler"] {
        assert_eq!(
            kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"][component]["extraArgs"]["v"],
            json!("2"),
            "{component}"
        );
    }
    assert_eq!(
        kcp["spec"]["kubeadmConfigSpec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"]
            ["v"],
        json!("2")
    );
    // Control plane and MachineDeployment machine templates, both for v1.30.0.
    let machines = of_kind(&objects, "DockerMachineTemplate");
    assert_eq!(machines.len(), 2);
    for m in machines {
        assert_eq!(m["spec"]["template"]["spec"]["customImage"], json!(image));
    }
    assert_eq!(
        of_kind(&objects, "DockerMachinePool")[0]["spec"]["template"]["customImage"],
        json!(image)
    );
    assert_eq!(
        of_kind(&objects, "KubeadmConfigTemplate")[0]["spec"]["template"]["spec"]["joinConfiguration"]
            ["nodeRegistration"]["kubeletExtraArgs"]["v"],
        json!("2")
    );
    assert_eq!(
        of_kind(&objects, "KubeadmConfig")[0]["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"]
            ["v"],
        json!("2")
    );
    let calls = fake.calls.lock().unwrap().clone();
    assert_eq!(
        calls,
        [
            "DiscoverVariables discover-variables.k8s-upgrade-with-runtimesdk default/quick-start-runtimesdk",
            "GeneratePatches generate-patches.k8s-upgrade-with-runtimesdk default/capi-qs-rtsdk",
            "ValidateTopology validate-topology.k8s-upgrade-with-runtimesdk default/capi-qs-rtsdk 7 items",
        ]
    );
}

#[test]
fn a_required_discovered_variable_is_required() {
    let Some(dir) = folder() else { return };
    let mut b = bundle(&dir, |t| t);
    let topology = b.clusters[0].value.topology.as_mut().unwrap();
    topology.variables.retain(|v| v.name != "imageRepository");
    let e = render(&b, &Fake::example()).unwrap_err();
    assert!(e.iter().any(|m| m.contains("spec.topology.variables: Required value: required variable \"imageRepository\" must be set")), "{e:?}");
}

#[test]
fn conflicting_discovered_variables_refuse_the_cluster() {
    let Some(dir) = folder() else { return };
    let second = "  - name: other-patch\n    external:\n      validateExtension: validate-topology.other\n      discoverVariablesExtension: discover-variables.other\n";
    let b = bundle(&dir, |t| {
        t.replacen("  patches:\n", &format!("  patches:\n{second}"), 1)
    });
    let mut fake = Fake::example();
    fake.variables.insert(
        "discover-variables.other".into(),
        vec![ClusterClassVariable {
            name: "imageRepository".into(),
            required: false,
            metadata: None,
            schema: VariableSchema {
                open_api_v3_schema: json!({"type": "integer"}),
            },
        }],
    );
    let e = render(&b, &fake).unwrap_err();
    assert!(
        e.iter().any(|m| m.contains("variable definitions in the ClusterClass not valid: variable \"imageRepository\" has conflicting definitions")),
        "{e:?}"
    );
}

/// Definitions conflict when their required flag, schema (false flags aside) or
/// deprecated metadata differ, as Cluster API compares them.
#[test]
fn what_makes_discovered_definitions_conflict() {
    let Some(dir) = folder() else { return };
    let second = "  - name: other-patch\n    external:\n      validateExtension: validate-topology.other\n      discoverVariablesExtension: discover-variables.other\n";
    let b = bundle(&dir, |t| {
        t.replacen("  patches:\n", &format!("  patches:\n{second}"), 1)
    });
    let base = Fake::example()
        .variables
        .get("discover-variables.k8s-upgrade-with-runtimesdk")
        .and_then(|v| v.iter().find(|v| v.name == "imageRepository"))
        .cloned()
        .unwrap();
    let with_false_flag = {
        let mut v = base.clone();
        v.schema.open_api_v3_schema["x-kubernetes-preserve-unknown-fields"] = json!(false);
        v.schema.open_api_v3_schema["uniqueItems"] = json!(false);
        v
    };
    let with_metadata = {
        let mut v = base.clone();
        v.metadata = Some(json!({"labels": {"a": "b"}}));
        v
    };
    let required = ClusterClassVariable {
        required: !base.required,
        ..base.clone()
    };
    for (second_definition, conflicts) in [
        (base.clone(), false),
        (with_false_flag, false),
        (with_metadata, true),
        (required, true),
    ] {
        let mut fake = Fake::example();
        fake.variables.insert(
            "discover-variables.other".into(),
            vec![second_definition.clone()],
        );
        let refused = render(&b, &fake)
            .err()
            .unwrap_or_default()
            .iter()
            .any(|m| m.contains("variable \"imageRepository\" has conflicting definitions"));
        assert_eq!(refused, conflicts, "{second_definition:?}");
    }
}

#[test]
fn failures_are_worded_as_cluster_api_words_them() {
    let Some(dir) = folder() else { return };
    let b = bundle(&dir, |t| t);
    let mut fake = Fake::example();
    fake.generate = Box::new(|_| {
        Err(Error::new(
            ErrorKind::Call,
            "failed to call extension handler \"generate-patches.k8s-upgrade-with-runtimesdk\": http call failed: Post \"https://x\": context deadline exceeded",
        ))
    });
    assert_eq!(
        render(&b, &fake).unwrap_err(),
        ["Cluster default/capi-qs-rtsdk: error computing the desired state of the Cluster topology: failed to apply patches: failed to generate patches for patch \"test-patch\": failed to call extension handler \"generate-patches.k8s-upgrade-with-runtimesdk\": http call failed: Post \"https://x\": context deadline exceeded"]
            .map(|m| m.strip_prefix("Cluster default/capi-qs-rtsdk: ").unwrap().to_string())
    );
    let mut fake = Fake::example();
    fake.validate = Err("no".into());
    let e = render(&b, &fake).unwrap_err();
    assert_eq!(
        e,
        [
            "error computing the desired state of the Cluster topology: failed to apply patches: validation of patch \"test-patch\" failed: failed to call extension handler \"validate-topology.k8s-upgrade-with-runtimesdk\": got failure response with message \"no\""
        ]
    );
    let mut fake = Fake::example();
    fake.generate = Box::new(|_| {
        Ok(GeneratePatchesResponse {
            items: vec![GeneratePatchesResponseItem {
                uid: "nope".into(),
                patch_type: PatchType::JSONPatch,
                patch: b"[]".to_vec(),
            }],
            ..Default::default()
        })
    });
    assert_eq!(
        render(&b, &fake).unwrap_err(),
        [
            "error computing the desired state of the Cluster topology: failed to apply patches: unable to find corresponding request item for patch"
        ]
    );
}

#[test]
fn merge_patches_apply() {
    let Some(dir) = folder() else { return };
    let b = bundle(&dir, |t| t);
    let mut fake = Fake::example();
    fake.generate = Box::new(|r| {
        Ok(GeneratePatchesResponse {
        items: r.items.iter().filter(|i| i.object["kind"] == "DockerClusterTemplate").map(|i| GeneratePatchesResponseItem {
            uid: i.uid.clone(),
            patch_type: PatchType::JSONMergePatch,
            patch: br#"{"spec":{"template":{"spec":{"loadBalancer":{"imageRepository":"merged"},"failureDomains":null}}}}"#.to_vec(),
        }).collect(),
        ..Default::default()
    })
    });
    let objects = render(&b, &fake).unwrap();
    let cluster = of_kind(&objects, "DockerCluster")[0];
    assert_eq!(
        cluster["spec"]["loadBalancer"]["imageRepository"],
        json!("merged")
    );
    assert!(cluster["spec"].get("failureDomains").is_none());
}

fn arbitrary_item() -> impl Strategy<Value = GeneratePatchesResponseItem> {
    (
        prop_oneof![
            Just("00000000-0000-4000-8000-000000000000".to_string()),
            Just("00000000-0000-4000-8000-000000000003".to_string()),
            "[a-z0-9-]{0,8}"
        ],
        prop_oneof![
            Just(PatchType::JSONPatch),
            Just(PatchType::JSONMergePatch),
            "[A-Za-z]{0,6}".prop_map(PatchType::Other)
        ],
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..64),
            Just(br#"[{"op":"add","path":"/spec/x","value":1}]"#.to_vec()),
            Just(br#"[{"op":"move","from":"/spec","path":"/x"}]"#.to_vec()),
            Just(br#"[{"op":"test","path":"/kind","value":"y"}]"#.to_vec()),
            Just(br#"{"spec":null}"#.to_vec()),
            Just(br#"[1, {"op": 2}]"#.to_vec()),
        ],
    )
        .prop_map(|(uid, patch_type, patch)| GeneratePatchesResponseItem {
            uid,
            patch_type,
            patch,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever an extension answers, the render ends with objects or an error.
    #[test]
    fn bad_responses_never_panic(items in proptest::collection::vec(arbitrary_item(), 0..4)) {
        let Some(dir) = folder() else { return Ok(()) };
        let b = bundle(&dir, |t| t);
        let mut fake = Fake::example();
        fake.generate = Box::new(move |_| Ok(GeneratePatchesResponse { items: items.clone(), ..Default::default() }));
        let _ = render(&b, &fake);
    }
}
