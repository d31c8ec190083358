//! The engine's `DesiredState` as the render contract's typed `DesiredState` message
//! and back: objects travel as JSON bytes (provider schemas are open), everything else
//! — roles, topology names, the upgrade decisions — as fields a client in any language
//! can read without knowing the engine's serialization.

use serde_json::Value;
use topograph_engine::DesiredState;
use topograph_engine::desired::{
    DesiredControlPlane, DesiredMachineDeployment, DesiredMachinePool,
};
use topograph_engine::upgrade::{ControlPlaneUpgrade, MachineDeploymentUpgrades, UpgradeTracker};

use crate::render::v1 as pb;

fn bytes(object: &Value) -> Vec<u8> {
    topograph_api::json::to_vec(object)
}

/// The message for `desired`.
pub fn to_message(desired: &DesiredState) -> pb::DesiredState {
    to_message_with(desired, &mut bytes)
}

/// The message for `desired`, each object's bytes from `encode` (a caller that has
/// encoded the objects already hands those bytes out again rather than encoding twice).
pub fn to_message_with(
    desired: &DesiredState,
    encode: &mut dyn FnMut(&Value) -> Vec<u8>,
) -> pb::DesiredState {
    let upgrade = &desired.upgrade;
    let cp = &upgrade.control_plane;
    let mut optional = |object: Option<&Value>| object.map(&mut *encode).unwrap_or_default();
    let infrastructure_cluster = optional(desired.infrastructure_cluster.as_ref());
    let machine_template = optional(desired.control_plane.machine_template.as_ref());
    let health_check = optional(desired.control_plane.health_check.as_ref());
    pb::DesiredState {
        cluster: encode(&desired.cluster),
        infrastructure_cluster,
        control_plane: Some(pb::DesiredControlPlane {
            object: encode(&desired.control_plane.object),
            machine_template,
            health_check,
        }),
        machine_deployments: desired
            .machine_deployments
            .iter()
            .map(|md| pb::DesiredMachineDeployment {
                topology_name: md.topology_name.clone(),
                object: encode(&md.object),
                bootstrap_template: encode(&md.bootstrap_template),
                infrastructure_template: encode(&md.infrastructure_template),
                health_check: md
                    .health_check
                    .as_ref()
                    .map(&mut *encode)
                    .unwrap_or_default(),
            })
            .collect(),
        machine_pools: desired
            .machine_pools
            .iter()
            .map(|mp| pb::DesiredMachinePool {
                topology_name: mp.topology_name.clone(),
                object: encode(&mp.object),
                bootstrap_object: encode(&mp.bootstrap_object),
                infrastructure_object: encode(&mp.infrastructure_object),
            })
            .collect(),
        upgrade: Some(pb::UpgradeTracker {
            control_plane: Some(pb::ControlPlaneUpgrade {
                is_provisioning: cp.is_provisioning,
                is_pending_upgrade: cp.is_pending_upgrade,
                is_starting_upgrade: cp.is_starting_upgrade,
                is_upgrading: cp.is_upgrading,
                is_waiting_for_workers: cp.is_waiting_for_workers,
                plan: cp.plan.clone(),
                desired_version: cp.desired_version.clone(),
                current_version: cp.current_version.clone(),
                kind: cp.kind.clone(),
            }),
            machine_deployments: Some(workers_message(&upgrade.machine_deployments)),
            machine_pools: Some(workers_message(&upgrade.machine_pools)),
            max_concurrency: u32::try_from(upgrade.max_concurrency).unwrap_or(u32::MAX),
            min_workers_version: upgrade.min_workers_version.clone(),
            upgrade_step: upgrade.upgrade_step.clone(),
            remove_upgrade_step_annotation: upgrade.remove_upgrade_step_annotation,
        }),
    }
}

fn workers_message(w: &MachineDeploymentUpgrades) -> pb::MachineDeploymentUpgrades {
    pb::MachineDeploymentUpgrades {
        pending_create: w.pending_create.iter().cloned().collect(),
        pending_upgrade: w.pending_upgrade.iter().cloned().collect(),
        deferred: w.deferred.iter().cloned().collect(),
        upgrading: w.upgrading.iter().cloned().collect(),
        plan: w.plan.clone(),
        object_names: w
            .object_names
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

fn workers_from(w: pb::MachineDeploymentUpgrades) -> MachineDeploymentUpgrades {
    MachineDeploymentUpgrades {
        pending_create: w.pending_create.into_iter().collect(),
        pending_upgrade: w.pending_upgrade.into_iter().collect(),
        deferred: w.deferred.into_iter().collect(),
        upgrading: w.upgrading.into_iter().collect(),
        plan: w.plan,
        object_names: w.object_names.into_iter().collect(),
    }
}

/// Reads one JSON object of field `field`.
fn object(field: &str, bytes: &[u8]) -> Result<Value, String> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err(format!("{field}: not a JSON object")),
        Err(e) => Err(format!("{field}: {e}")),
    }
}

fn optional_object(field: &str, bytes: &[u8]) -> Result<Option<Value>, String> {
    if bytes.is_empty() {
        Ok(None)
    } else {
        object(field, bytes).map(Some)
    }
}

/// The desired state a message carries; the error names the field that is wrong.
pub fn from_message(message: &pb::DesiredState) -> Result<DesiredState, String> {
    let cp = message
        .control_plane
        .as_ref()
        .ok_or("control_plane: missing")?;
    let upgrade = message.upgrade.clone().unwrap_or_default();
    let cp_upgrade = upgrade.control_plane.unwrap_or_default();
    let machine_deployments = message
        .machine_deployments
        .iter()
        .enumerate()
        .map(|(i, md)| {
            let at = |name: &str| format!("machine_deployments[{i}].{name}");
            Ok(DesiredMachineDeployment {
                topology_name: md.topology_name.clone(),
                object: object(&at("object"), &md.object)?,
                bootstrap_template: object(&at("bootstrap_template"), &md.bootstrap_template)?,
                infrastructure_template: object(
                    &at("infrastructure_template"),
                    &md.infrastructure_template,
                )?,
                health_check: optional_object(&at("health_check"), &md.health_check)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let machine_pools = message
        .machine_pools
        .iter()
        .enumerate()
        .map(|(i, mp)| {
            let at = |name: &str| format!("machine_pools[{i}].{name}");
            Ok(DesiredMachinePool {
                topology_name: mp.topology_name.clone(),
                object: object(&at("object"), &mp.object)?,
                bootstrap_object: object(&at("bootstrap_object"), &mp.bootstrap_object)?,
                infrastructure_object: object(
                    &at("infrastructure_object"),
                    &mp.infrastructure_object,
                )?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(DesiredState {
        cluster: object("cluster", &message.cluster)?,
        infrastructure_cluster: optional_object(
            "infrastructure_cluster",
            &message.infrastructure_cluster,
        )?,
        control_plane: DesiredControlPlane {
            object: object("control_plane.object", &cp.object)?,
            machine_template: optional_object(
                "control_plane.machine_template",
                &cp.machine_template,
            )?,
            health_check: optional_object("control_plane.health_check", &cp.health_check)?,
        },
        machine_deployments,
        machine_pools,
        upgrade: UpgradeTracker {
            control_plane: ControlPlaneUpgrade {
                is_provisioning: cp_upgrade.is_provisioning,
                is_pending_upgrade: cp_upgrade.is_pending_upgrade,
                is_starting_upgrade: cp_upgrade.is_starting_upgrade,
                is_upgrading: cp_upgrade.is_upgrading,
                is_waiting_for_workers: cp_upgrade.is_waiting_for_workers,
                plan: cp_upgrade.plan,
                desired_version: cp_upgrade.desired_version,
                current_version: cp_upgrade.current_version,
                kind: cp_upgrade.kind,
            },
            machine_deployments: workers_from(upgrade.machine_deployments.unwrap_or_default()),
            machine_pools: workers_from(upgrade.machine_pools.unwrap_or_default()),
            max_concurrency: upgrade.max_concurrency as usize,
            min_workers_version: upgrade.min_workers_version,
            upgrade_step: upgrade.upgrade_step,
            remove_upgrade_step_annotation: upgrade.remove_upgrade_step_annotation,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use topograph_api::load::{Input, LoadOptions, load};
    use topograph_engine::{ObjectStore, admit_and_render};

    fn quick_start() -> DesiredState {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/quick-start/");
        let texts: Vec<(String, String)> = ["clusterclass.yaml", "cluster.yaml"]
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(format!("{root}{f}")).expect("example");
                (f.to_string(), text)
            })
            .collect();
        let inputs: Vec<Input<'_>> = texts
            .iter()
            .map(|(name, text)| Input { name, text })
            .collect();
        let options = LoadOptions {
            namespace: Some("default".into()),
        };
        let bundle = load(&inputs, &options).expect("loads");
        let store = ObjectStore::new(bundle.objects.into_iter().map(|o| o.value));
        admit_and_render(
            &bundle.clusters[0].value,
            &bundle.cluster_classes[0].value,
            &store,
        )
        .expect("renders")
        .desired
    }

    #[test]
    fn a_desired_state_survives_the_wire() {
        let mut desired = quick_start();
        // Exercise every upgrade field, not only the quiet defaults of a new Cluster.
        desired.upgrade.control_plane.is_upgrading = true;
        desired.upgrade.control_plane.plan = vec!["v1.31.0".into(), "v1.32.0".into()];
        desired.upgrade.control_plane.current_version = Some("v1.30.0".into());
        desired
            .upgrade
            .machine_deployments
            .pending_upgrade
            .insert("md-0".into());
        desired
            .upgrade
            .machine_deployments
            .object_names
            .insert("md-0".into(), "quick-start-md-0-abcde".into());
        desired.upgrade.max_concurrency = 3;
        desired.upgrade.upgrade_step = Some("v1.31.0".into());
        desired.upgrade.remove_upgrade_step_annotation = true;
        let message = to_message(&desired);
        let encoded = prost::Message::encode_to_vec(&message);
        let decoded: pb::DesiredState =
            prost::Message::decode(encoded.as_slice()).expect("decodes");
        assert_eq!(from_message(&decoded), Ok(desired));
    }

    #[test]
    fn a_broken_message_names_its_field() {
        let mut message = to_message(&quick_start());
        message.machine_deployments[0].object = b"[1]".to_vec();
        assert_eq!(
            from_message(&message).unwrap_err(),
            "machine_deployments[0].object: not a JSON object"
        );
        message.control_plane = None;
        assert_eq!(
            from_message(&message).unwrap_err(),
            "control_plane: missing"
        );
    }
}
