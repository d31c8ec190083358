//! Round trips through `topograph_api::convert` on real inputs: the examples, Cluster
//! API's and the providers' published ClusterClasses and Clusters (with their
//! `values.env` substituted, and raw where they parse), and generated variations of
//! them. v1beta1 → v1beta2 → v1beta1 (and v1beta2 → v1beta1 → v1beta2) must give back
//! the same bytes, as YAML and as JSON.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;
use topograph_api::convert::{self, Options, Version};
use topograph_api::object::{ObjectExt, group_of};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn real_world() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/real-world");
    dir.exists().then_some(dir)
}

/// clusterctl's variables from a `values.env` (`NAME=VALUE`, `#` comments).
fn values(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect()
}

fn documents(name: &str, text: &str) -> Vec<Value> {
    let (docs, errors) = topograph_api::load::parse_documents(name, text);
    assert!(errors.is_empty(), "{name}: {errors:?}");
    docs.into_iter().map(|d| d.value).collect()
}

/// The apiVersion of every group and kind among `docs`, for contract references.
fn versions(docs: &[Value]) -> HashMap<(String, String), String> {
    docs.iter()
        .map(|d| {
            (
                (group_of(d.api_version()).to_string(), d.kind().to_string()),
                d.api_version().to_string(),
            )
        })
        .collect()
}

fn yaml(value: &Value) -> String {
    serde_saphyr::to_string(value).expect("YAML")
}

fn json(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON")
}

/// Converts every Cluster API document of `docs` to the other version and back;
/// returns how many round-tripped.
fn round_trip(what: &str, docs: &[Value]) -> Result<usize, String> {
    let known = versions(docs);
    let lookup =
        |group: &str, kind: &str| known.get(&(group.to_string(), kind.to_string())).cloned();
    let options = Options {
        api_version_of: &lookup,
        ..Options::default()
    };
    let mut count = 0;
    for doc in docs {
        let Some(from) = convert::version_of(doc) else {
            continue;
        };
        let to = match from {
            Version::V1Beta1 => Version::V1Beta2,
            Version::V1Beta2 => Version::V1Beta1,
        };
        let key = format!("{what}: {} {}", doc.kind(), doc.name());
        let there = convert::convert(doc, to, &options).map_err(|e| format!("{key}: {e}"))?;
        assert_eq!(there.api_version(), to.api_version(), "{key}");
        let back =
            convert::convert(&there, from, &options).map_err(|e| format!("{key} (back): {e}"))?;
        assert_eq!(
            yaml(&back),
            yaml(doc),
            "{key}: YAML differs after the round trip"
        );
        assert_eq!(
            json(&back),
            json(doc),
            "{key}: JSON differs after the round trip"
        );
        count += 1;
    }
    Ok(count)
}

#[test]
fn examples_round_trip() {
    for name in ["quick-start", "mixed"] {
        let mut docs = Vec::new();
        for file in ["clusterclass.yaml", "cluster.yaml"] {
            let path = workspace().join("examples").join(name).join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            docs.extend(documents(&path.display().to_string(), &text));
        }
        let n = round_trip(name, &docs).unwrap();
        assert!(n >= 2, "{name}: {n} Cluster API documents");
    }
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(yaml_files(&path));
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn real_world_round_trips() {
    let Some(dir) = real_world() else {
        eprintln!("skipping: ../shared/real-world is not present");
        return;
    };
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir.join("providers"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.push(dir.join("cluster-api-v1.10.10"));
    folders.sort();
    let defaults: BTreeMap<String, String> = [
        ("CLUSTER_NAME", "dev"),
        ("NAMESPACE", "default"),
        ("KUBERNETES_VERSION", "v1.30.0"),
        ("CONTROL_PLANE_MACHINE_COUNT", "3"),
        ("WORKER_MACHINE_COUNT", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut total = 0;
    for folder in folders {
        let mut vars = defaults.clone();
        vars.extend(values(&folder.join("values.env")));
        let mut substituted = Vec::new();
        for file in yaml_files(&folder) {
            let name = file.display().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            let text = topograph_api::envsubst::substitute(&text, &vars)
                .unwrap_or_else(|missing| panic!("{name}: unset {missing:?}"));
            substituted.extend(documents(&name, &text));
            // Raw, placeholders and all, where the YAML parses.
            let raw_text = std::fs::read_to_string(&file).unwrap();
            let (raw, errors) = topograph_api::load::parse_documents(&name, &raw_text);
            if errors.is_empty() {
                let raw: Vec<Value> = raw.into_iter().map(|d| d.value).collect();
                match round_trip(&format!("{name} (raw)"), &raw) {
                    Ok(n) => total += n,
                    // A placeholder where a duration goes is not a duration.
                    Err(e) => eprintln!("raw {name}: {e}"),
                }
            }
        }
        total += round_trip(&folder.display().to_string(), &substituted).unwrap();
    }
    assert!(total > 40, "{total} documents round-tripped");
}

mod generated {
    use super::*;
    use proptest::prelude::*;

    /// The examples' and (when present) Cluster API's own documents to vary.
    fn seeds() -> Vec<Value> {
        let mut docs = Vec::new();
        for name in ["quick-start", "mixed"] {
            for file in ["clusterclass.yaml", "cluster.yaml"] {
                let path = workspace().join("examples").join(name).join(file);
                docs.extend(documents(file, &std::fs::read_to_string(path).unwrap()));
            }
        }
        let v1beta2 = real_world().map(|d| d.join("providers/capi-e2e-quick-start-v1beta2"));
        if let Some(dir) = v1beta2.filter(|d| d.exists()) {
            let vars = values(&dir.join("values.env"));
            for file in yaml_files(&dir) {
                let text = std::fs::read_to_string(&file).unwrap();
                if let Ok(text) = topograph_api::envsubst::substitute(&text, &vars) {
                    docs.extend(documents("seed", &text));
                }
            }
        }
        docs.retain(|d| convert::version_of(d).is_some());
        docs.extend(synthetic());
        docs
    }

    /// Objects of the kinds the examples have none of, in both versions.
    fn synthetic() -> Vec<Value> {
        let text = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md, namespace: ns}
spec:
  clusterName: c
  minReadySeconds: 4
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, deletePolicy: Oldest}, remediation: {maxInFlight: 1}}
  template:
    spec:
      clusterName: c
      bootstrap: {configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: b, namespace: ns}}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: i, namespace: ns}
      nodeDrainTimeout: 90s
status: {readyReplicas: 1, conditions: [{type: Ready, status: "True"}], v1beta2: {readyReplicas: 2}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineHealthCheck
metadata: {name: mhc}
spec:
  clusterName: c
  unhealthyConditions: [{type: Ready, status: "False", timeout: 300s}]
  maxUnhealthy: 40%
  remediationTemplate: {apiVersion: r.io/v1, kind: R, name: r}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata: {name: mp}
spec:
  template:
    spec:
      minReadySeconds: 3
      taints: [{key: a, effect: NoSchedule}]
      bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: b}}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachinePool, name: i}
status: {initialization: {bootstrapDataSecretCreated: true}, deprecated: {v1beta1: {readyReplicas: 1}}}
"#;
        documents("synthetic", text)
    }

    /// Every path (object keys and list indices) of `value`.
    fn paths(value: &Value, prefix: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    prefix.push(PathStep::Key(k.clone()));
                    out.push(prefix.clone());
                    paths(v, prefix, out);
                    prefix.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    prefix.push(PathStep::Index(i));
                    out.push(prefix.clone());
                    paths(v, prefix, out);
                    prefix.pop();
                }
            }
            _ => {}
        }
    }

    #[derive(Clone, Debug)]
    enum PathStep {
        Key(String),
        Index(usize),
    }

    fn at_mut<'a>(value: &'a mut Value, path: &[PathStep]) -> Option<&'a mut Value> {
        path.iter().try_fold(value, |v, step| match step {
            PathStep::Key(k) => v.as_object_mut()?.get_mut(k),
            PathStep::Index(i) => v.as_array_mut()?.get_mut(*i),
        })
    }

    fn remove(value: &mut Value, path: &[PathStep]) {
        if let Some((last, parents)) = path.split_last()
            && let Some(parent) = at_mut(value, parents)
        {
            match (parent, last) {
                (Value::Object(m), PathStep::Key(k)) => {
                    m.remove(k);
                }
                (Value::Array(a), PathStep::Index(i)) if *i < a.len() => {
                    a.remove(*i);
                }
                _ => {}
            }
        }
    }

    fn interesting() -> Vec<Value> {
        serde_json::from_str(
            r#"["300s", "5m", "1h0m0s", "1500ms", "0s", "bogus", 0, 7, -3, 1.5, 4000000000,
               true, false, null, "", {}, [], {"x": 1}, [1, "a"], "a/b/c", "apps/v1",
               {"apiVersion": "x.io/v1", "kind": "K", "name": "n"},
               {"apiGroup": "x.io", "kind": "K", "name": "n"},
               {"template": ""}, {"template": "t"},
               [{"type": "Ready", "status": "False", "timeout": "10s"}],
               [{"type": "Ready", "status": "False", "timeoutSeconds": 10}]]"#,
        )
        .expect("literal")
    }

    /// A seed with some of its fields removed or replaced.
    fn varied() -> impl Strategy<Value = Value> {
        let seeds = seeds();
        let pool = interesting();
        let n = seeds.len();
        (0..n, proptest::collection::vec((any::<usize>(), any::<usize>(), any::<bool>()), 0..6))
            .prop_map(move |(i, edits)| {
                let mut doc = seeds[i].clone();
                for (where_, what, delete) in edits {
                    let mut all = Vec::new();
                    paths(&doc, &mut Vec::new(), &mut all);
                    // Keep the object what it is: identity and metadata are not under test.
                    all.retain(|p| {
                        !matches!(p.first(), Some(PathStep::Key(k)) if k == "apiVersion" || k == "kind" || k == "metadata")
                    });
                    if all.is_empty() {
                        break;
                    }
                    let path = &all[where_ % all.len()];
                    if delete {
                        remove(&mut doc, path);
                    } else if let Some(slot) = at_mut(&mut doc, path) {
                        *slot = pool[what % pool.len()].clone();
                    }
                }
                doc
            })
    }

    fn lookup(group: &str, kind: &str) -> Option<String> {
        (!group.is_empty() && !kind.is_empty()).then(|| format!("{group}/v1beta1"))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Whatever the input, a conversion returns: an object or field errors.
        #[test]
        fn never_panics(doc in varied(), to_v1beta2 in any::<bool>()) {
            let to = if to_v1beta2 { Version::V1Beta2 } else { Version::V1Beta1 };
            let options = Options { api_version_of: &lookup, ..Options::default() };
            let _ = convert::convert(&doc, to, &options);
            let fresh = Options { conversion_data: false, api_version_of: &lookup };
            let _ = convert::convert(&doc, to, &fresh);
        }

        /// Whatever converts converts back to the same bytes.
        #[test]
        fn round_trips(doc in varied()) {
            let Some(from) = convert::version_of(&doc) else { return Ok(()); };
            let to = match from { Version::V1Beta1 => Version::V1Beta2, Version::V1Beta2 => Version::V1Beta1 };
            let options = Options { api_version_of: &lookup, ..Options::default() };
            if let Ok(there) = convert::convert(&doc, to, &options) {
                let back = convert::convert(&there, from, &options);
                prop_assert!(back.is_ok(), "{:?}", back);
                let back = back.unwrap_or_default();
                prop_assert_eq!(json(&back), json(&doc));
                prop_assert_eq!(yaml(&back), yaml(&doc));
            }
        }
    }
}
