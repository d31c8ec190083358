//! GeneratePatches as Cluster API's e2e extension does it (`topologymutation` handler):
//! for each template of the request, with the global variables merged under the
//! template's own, change the template and answer the difference as a JSON patch.
//!
//! Kinds it knows, in `v1beta1` and `v1beta2`: DockerClusterTemplate,
//! KubeadmControlPlaneTemplate, KubeadmConfigTemplate, DockerMachineTemplate and
//! DockerMachinePoolTemplate of their groups; any other kind fails the call (the e2e
//! extension fails for types its decoder does not know). Templates are changed as
//! JSON, so the patch holds the fields the handler sets and nothing else (the Go
//! handler's typed round trip may add empty defaults besides).

use serde_json::{Map, Value, json};
use topograph_runtime::catalog::Hook;
use topograph_runtime::hooks::{
    CommonResponse, GeneratePatchesRequest, GeneratePatchesResponse, GeneratePatchesResponseItem,
    PatchType, ResponseStatus, TypeMeta, Variable,
};

/// Answers a GeneratePatches request.
pub fn generate(request: &GeneratePatchesRequest) -> GeneratePatchesResponse {
    let mut response = GeneratePatchesResponse {
        type_meta: TypeMeta::of(&Hook::GeneratePatches.response_kind()),
        ..Default::default()
    };
    let globals = to_map(&request.variables);
    for item in &request.items {
        let variables = merge(&globals, &to_map(&item.variables));
        let mut modified = item.object.clone();
        if let Err(message) = mutate(&mut modified, &variables) {
            response.common = CommonResponse {
                status: ResponseStatus::Failure,
                message,
            };
            response.items.clear();
            return response;
        }
        let mut operations = Vec::new();
        diff(&item.object, &modified, String::new(), &mut operations);
        let patch = serde_json::to_vec(&operations).unwrap_or_else(|_| b"[]".to_vec());
        response.items.push(GeneratePatchesResponseItem {
            uid: item.uid.clone(),
            patch_type: PatchType::JSONPatch,
            patch,
        });
    }
    response.common.status = ResponseStatus::Success;
    response
}

fn to_map(variables: &[Variable]) -> Map<String, Value> {
    variables
        .iter()
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect()
}

/// The template's variables over the global ones; `builtin` merged key by key, as
/// `MergeVariableMaps` does.
fn merge(globals: &Map<String, Value>, item: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = globals.clone();
    for (name, value) in item {
        match (merged.get_mut(name), value) {
            (Some(Value::Object(base)), Value::Object(extra)) if name == "builtin" => {
                for (k, v) in extra {
                    base.insert(k.clone(), v.clone());
                }
            }
            _ => {
                merged.insert(name.clone(), value.clone());
            }
        }
    }
    merged
}

/// A string variable by dotted path (`builtin.controlPlane.version`): `Ok(None)` when
/// absent.
fn string_variable(variables: &Map<String, Value>, path: &str) -> Result<Option<String>, String> {
    let mut parts = path.split('.');
    let Some(first) = parts.next() else {
        return Ok(None);
    };
    let mut value = match variables.get(first) {
        Some(v) => v,
        None => return Ok(None),
    };
    for part in parts {
        match value.get(part) {
            Some(v) => value = v,
            None => return Ok(None),
        }
    }
    match value {
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(format!(
            "failed to unmarshal variable {path:?} as string: got {other}"
        )),
    }
}

/// The object at `path` under `root`, created (as empty objects) where missing or
/// not an object; `None` only if that failed, which it cannot.
fn object_at<'a>(root: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    if !root.is_object() {
        *root = Value::Object(Map::new());
    }
    let map = root.as_object_mut()?;
    match path.split_first() {
        None => Some(map),
        Some((key, rest)) => {
            let next = map
                .entry(key.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            object_at(next, rest)
        }
    }
}

/// Sets `field` of the object at `path` (created where missing).
fn set(root: &mut Value, path: &[&str], field: &str, value: Value) {
    if let Some(map) = object_at(root, path) {
        map.insert(field.to_string(), value);
    }
}

/// Appends `{name: v, value: "2"}` to an extra-args list (v1beta2).
fn append_arg(list_owner: Option<&mut Map<String, Value>>, field: &str) {
    let Some(list_owner) = list_owner else { return };
    let entry = list_owner
        .entry(field.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !entry.is_array() {
        *entry = Value::Array(Vec::new());
    }
    if let Value::Array(list) = entry {
        list.push(json!({"name": "v", "value": "2"}));
    }
}

/// `intstr.Parse`: an integer when the text is one, else the text.
fn int_or_string(text: &str) -> Value {
    match text.parse::<i32>() {
        Ok(i) => json!(i),
        Err(_) => json!(text),
    }
}

fn mutate(object: &mut Value, variables: &Map<String, Value>) -> Result<(), String> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
    let v1beta2 = match version {
        "v1beta1" => false,
        "v1beta2" => true,
        _ => return Err(unknown(&kind, &api_version)),
    };
    match (group, kind.as_str()) {
        ("infrastructure.cluster.x-k8s.io", "DockerClusterTemplate") => {
            match string_variable(variables, "imageRepository") {
                Ok(Some(repository)) => {
                    set(
                        object,
                        &["spec", "template", "spec", "loadBalancer"],
                        "imageRepository",
                        json!(repository),
                    );
                    Ok(())
                }
                Ok(None) => Ok(()),
                Err(e) => Err(format!(
                    "error patching DockerClusterTemplate: could not set DockerClusterTemplate loadBalancer imageRepository: {e}"
                )),
            }
        }
        ("controlplane.cluster.x-k8s.io", "KubeadmControlPlaneTemplate") => {
            let base = ["spec", "template", "spec", "kubeadmConfigSpec"];
            for component in ["apiServer", "controllerManager", "scheduler"] {
                let at = [&base[..], &["clusterConfiguration", component]].concat();
                if v1beta2 {
                    append_arg(object_at(object, &at), "extraArgs");
                } else {
                    let at = [&at[..], &["extraArgs"]].concat();
                    set(object, &at, "v", json!("2"));
                }
            }
            for configuration in ["initConfiguration", "joinConfiguration"] {
                let at = [&base[..], &[configuration, "nodeRegistration"]].concat();
                if v1beta2 {
                    append_arg(object_at(object, &at), "kubeletExtraArgs");
                } else {
                    let at = [&at[..], &["kubeletExtraArgs"]].concat();
                    set(object, &at, "v", json!("2"));
                }
            }
            let surge = string_variable(variables, "kubeadmControlPlaneMaxSurge").map_err(|e| {
                format!(
                    "error patching KubeadmControlPlaneTemplate: could not set KubeadmControlPlaneTemplate MaxSurge: {e}"
                )
            })?;
            if let Some(surge) = surge {
                if v1beta2 {
                    set(
                        object,
                        &["spec", "template", "spec", "rollout", "strategy"],
                        "type",
                        json!("RollingUpdate"),
                    );
                    set(
                        object,
                        &[
                            "spec",
                            "template",
                            "spec",
                            "rollout",
                            "strategy",
                            "rollingUpdate",
                        ],
                        "maxSurge",
                        int_or_string(&surge),
                    );
                } else {
                    set(
                        object,
                        &[
                            "spec",
                            "template",
                            "spec",
                            "rolloutStrategy",
                            "rollingUpdate",
                        ],
                        "maxSurge",
                        int_or_string(&surge),
                    );
                }
            }
            Ok(())
        }
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate") => {
            let at = [
                "spec",
                "template",
                "spec",
                "joinConfiguration",
                "nodeRegistration",
            ];
            if v1beta2 {
                append_arg(object_at(object, &at), "kubeletExtraArgs");
            } else {
                let at = [&at[..], &["kubeletExtraArgs"]].concat();
                set(object, &at, "v", json!("2"));
            }
            Ok(())
        }
        ("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate") => {
            let wrap = |e: String| format!("error patching DockerMachineTemplate: {e}");
            let version = match string_variable(variables, "builtin.controlPlane.version")
                .map_err(|e| wrap(format!("could not set customImage to control plane dockerMachineTemplate: {e}")))?
            {
                Some(v) => v,
                None => string_variable(variables, "builtin.machineDeployment.version")
                    .map_err(|e| wrap(format!("could not set customImage to MachineDeployment DockerMachineTemplate: {e}")))?
                    .ok_or_else(|| wrap("no version variables found for DockerMachineTemplate patch".into()))?,
            };
            let image = kind_image(&version).map_err(wrap)?;
            set(
                object,
                &["spec", "template", "spec"],
                "customImage",
                json!(image),
            );
            Ok(())
        }
        ("infrastructure.cluster.x-k8s.io", "DockerMachinePoolTemplate") => {
            let wrap = |e: String| format!("error patching DockerMachinePoolTemplate: {e}");
            let version = string_variable(variables, "builtin.machinePool.version")
                .map_err(|e| {
                    wrap(format!(
                        "could not set customImage to MachinePool DockerMachinePoolTemplate: {e}"
                    ))
                })?
                .ok_or_else(|| {
                    wrap("no version variables found for DockerMachinePoolTemplate patch".into())
                })?;
            let image = kind_image(&version).map_err(wrap)?;
            set(
                object,
                &["spec", "template", "spec", "template"],
                "customImage",
                json!(image),
            );
            Ok(())
        }
        _ => Err(unknown(&kind, &api_version)),
    }
}

fn unknown(kind: &str, api_version: &str) -> String {
    format!(
        "no kind {kind:?} is registered for version {api_version:?} in scheme \"topograph-example-extension\""
    )
}

/// Pre-built kind node images (Kubernetes version, image), newest kind release first,
/// as CAPD's kind mapper lists them for the versions recent classes use.
const KIND_IMAGES: &[((u64, u64, u64), &str)] = &[
    (
        (1, 34, 0),
        "kindest/node:v1.34.0@sha256:7416a61b42b1662ca6ca89f02028ac133a309a2a30ba309614e8ec94d976dc5a",
    ),
    (
        (1, 33, 4),
        "kindest/node:v1.33.4@sha256:25a6018e48dfcaee478f4a59af81157a437f15e6e140bf103f85a2e7cd0cbbf2",
    ),
    (
        (1, 32, 8),
        "kindest/node:v1.32.8@sha256:abd489f042d2b644e2d033f5c2d900bc707798d075e8186cb65e3f1367a9d5a1",
    ),
    (
        (1, 31, 12),
        "kindest/node:v1.31.12@sha256:0f5cc49c5e73c0c2bb6e2df56e7df189240d83cf94edfa30946482eb08ec57d2",
    ),
    (
        (1, 33, 1),
        "kindest/node:v1.33.1@sha256:050072256b9a903bd914c0b2866828150cb229cea0efe5892e2b644d5dd3b34f",
    ),
    (
        (1, 32, 5),
        "kindest/node:v1.32.5@sha256:e3b2327e3a5ab8c76f5ece68936e4cafaa82edf58486b769727ab0b3b97a5b0d",
    ),
    (
        (1, 31, 9),
        "kindest/node:v1.31.9@sha256:b94a3a6c06198d17f59cca8c6f486236fa05e2fb359cbd75dabbfc348a10b211",
    ),
    (
        (1, 30, 13),
        "kindest/node:v1.30.13@sha256:397209b3d947d154f6641f2d0ce8d473732bd91c87d9575ade99049aa33cd648",
    ),
    (
        (1, 33, 0),
        "kindest/node:v1.33.0@sha256:02f73d6ae3f11ad5d543f16736a2cb2a63a300ad60e81dac22099b0b04784a4e",
    ),
    (
        (1, 32, 2),
        "kindest/node:v1.32.2@sha256:f226345927d7e348497136874b6d207e0b32cc52154ad8323129352923a3142f",
    ),
    (
        (1, 31, 6),
        "kindest/node:v1.31.6@sha256:28b7cbb993dfe093c76641a0c95807637213c9109b761f1d422c2400e22b8e87",
    ),
    (
        (1, 30, 10),
        "kindest/node:v1.30.10@sha256:4de75d0e82481ea846c0ed1de86328d821c1e6a6a91ac37bf804e5313670e507",
    ),
    (
        (1, 29, 14),
        "kindest/node:v1.29.14@sha256:8703bd94ee24e51b778d5556ae310c6c0fa67d761fae6379c8e0bb480e6fea29",
    ),
    (
        (1, 32, 0),
        "kindest/node:v1.32.0@sha256:c48c62eac5da28cdadcf560d1d8616cfa6783b58f0d94cf63ad1bf49600cb027",
    ),
    (
        (1, 31, 4),
        "kindest/node:v1.31.4@sha256:2cb39f7295fe7eafee0842b1052a599a4fb0f8bcf3f83d96c7f4864c357c6c30",
    ),
    (
        (1, 30, 8),
        "kindest/node:v1.30.8@sha256:17cd608b3971338d9180b00776cb766c50d0a0b6b904ab4ff52fd3fc5c6369bf",
    ),
    (
        (1, 29, 12),
        "kindest/node:v1.29.12@sha256:62c0672ba99a4afd7396512848d6fc382906b8f33349ae68fb1dbfe549f70dec",
    ),
    (
        (1, 32, 0),
        "kindest/node:v1.32.0@sha256:2458b423d635d7b01637cac2d6de7e1c1dca1148a2ba2e90975e214ca849e7cb",
    ),
    (
        (1, 31, 2),
        "kindest/node:v1.31.2@sha256:18fbefc20a7113353c7b75b5c869d7145a6abd6269154825872dc59c1329912e",
    ),
    (
        (1, 30, 6),
        "kindest/node:v1.30.6@sha256:b6d08db72079ba5ae1f4a88a09025c0a904af3b52387643c285442afb05ab994",
    ),
    (
        (1, 29, 10),
        "kindest/node:v1.29.10@sha256:3b2d8c31753e6c8069d4fc4517264cd20e86fd36220671fb7d0a5855103aa84b",
    ),
    (
        (1, 31, 0),
        "kindest/node:v1.31.0@sha256:53df588e04085fd41ae12de0c3fe4c72f7013bba32a20e7325357a1ac94ba865",
    ),
    (
        (1, 30, 4),
        "kindest/node:v1.30.4@sha256:976ea815844d5fa93be213437e3ff5754cd599b040946b5cca43ca45c2047114",
    ),
    (
        (1, 30, 3),
        "kindest/node:v1.30.3@sha256:bf91e1ef2f7d92bb7734b2b896b3dddea98f0496b34d96e37dd5d7df331b7e56",
    ),
    (
        (1, 29, 8),
        "kindest/node:v1.29.8@sha256:d46b7aa29567e93b27f7531d258c372e829d7224b25e3fc6ffdefed12476d3aa",
    ),
    (
        (1, 29, 7),
        "kindest/node:v1.29.7@sha256:f70ab5d833fca132a100c1f95490be25d76188b053f49a3c0047ff8812360baf",
    ),
    (
        (1, 30, 0),
        "kindest/node:v1.30.0@sha256:047357ac0cfea04663786a612ba1eaba9702bef25227a794b52890dd8bcd692e",
    ),
    (
        (1, 29, 4),
        "kindest/node:v1.29.4@sha256:3abb816a5b1061fb15c6e9e60856ec40d56b7b52bcea5f5f1350bc6e2320b6f8",
    ),
];

/// The kind node image for a Kubernetes version, as CAPD's `kind.GetMapping` picks
/// it: the pre-built image of that exact version, else `kindest/node:<version>`.
pub fn kind_image(version: &str) -> Result<String, String> {
    let text = version.trim().trim_start_matches('v');
    let (core, pre) = match text.split_once(['-', '+']) {
        Some((core, _)) => (core, text.contains('-')),
        None => (text, false),
    };
    let numbers: Vec<u64> = core
        .split('.')
        .map(|p| p.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("could not parse version {version:?}"))?;
    let (major, minor, patch) = match numbers.as_slice() {
        [a] => (*a, 0, 0),
        [a, b] => (*a, *b, 0),
        [a, b, c] => (*a, *b, *c),
        _ => return Err(format!("could not parse version {version:?}")),
    };
    let fallback = format!("kindest/node:v{}", text.replace('+', "_"));
    for ((m, n, p), image) in KIND_IMAGES {
        if (*m, *n) != (major, minor) {
            continue;
        }
        if *p == patch && !pre {
            return Ok(image.to_string());
        }
        if patch > *p {
            return Ok(fallback);
        }
    }
    Ok(fallback)
}

/// RFC 6902 operations turning `from` into `to` (add, replace, remove), objects
/// compared key by key, anything else replaced whole.
pub fn diff(from: &Value, to: &Value, path: String, out: &mut Vec<Value>) {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let at = format!("{path}/{}", escape(key));
                match b.get(key) {
                    None => out.push(json!({"op": "remove", "path": at})),
                    Some(other) => diff(value, other, at, out),
                }
            }
            for (key, value) in b {
                if !a.contains_key(key) {
                    out.push(json!({"op": "add", "path": format!("{path}/{}", escape(key)), "value": value}));
                }
            }
        }
        (a, b) if a == b => {}
        (_, b) => out.push(json!({"op": "replace", "path": path, "value": b})),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_images() {
        assert_eq!(
            kind_image("v1.30.0").unwrap(),
            "kindest/node:v1.30.0@sha256:047357ac0cfea04663786a612ba1eaba9702bef25227a794b52890dd8bcd692e"
        );
        assert_eq!(kind_image("v1.30.99").unwrap(), "kindest/node:v1.30.99");
        assert_eq!(
            kind_image("v1.40.1+build").unwrap(),
            "kindest/node:v1.40.1_build"
        );
        assert!(kind_image("vX").is_err());
    }

    #[test]
    fn diff_adds_what_is_new() {
        let mut ops = Vec::new();
        diff(
            &json!({"spec": {"a": 1, "b": {"c": 1}}}),
            &json!({"spec": {"a": 2, "b": {"c": 1, "d/e": true}}}),
            String::new(),
            &mut ops,
        );
        assert_eq!(
            ops,
            vec![
                json!({"op": "replace", "path": "/spec/a", "value": 2}),
                json!({"op": "add", "path": "/spec/b/d~1e", "value": true}),
            ]
        );
    }

    #[test]
    fn unknown_kinds_fail() {
        let request: GeneratePatchesRequest = serde_json::from_value(json!({
            "items": [{"uid": "1", "holderReference": {}, "object": {"apiVersion": "x.io/v1beta1", "kind": "Other"}}]
        }))
        .unwrap();
        let response = generate(&request);
        assert_eq!(response.common.status, ResponseStatus::Failure);
        assert!(response.common.message.contains("no kind \"Other\""));
    }
}
