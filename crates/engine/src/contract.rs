//! Where Cluster API's contracts put the fields the topology writes and reads in
//! provider objects, per contract ([`Contract`]), following Cluster API main's
//! `internal/contract` accessors.
//!
//! Everything that touches a control plane's or an infrastructure cluster's
//! contract fields asks [`Contract::control_plane`] / [`Contract::infrastructure_cluster`]
//! for the paths and shapes instead of naming them, so one table decides both what a
//! desired object looks like and how a current one is read. Which contract a kind
//! implements comes from the CRDs among a render's inputs ([`crate::ObjectStore::contract_of`]);
//! kinds nobody declared implement the v1beta1 contract.

use serde_json::{Map, Value, json};
use topograph_api::Duration;
use topograph_api::model::ObjectRef;
use topograph_api::object::{ObjectExt, group_of, set_at};

pub use topograph_api::contract::{Contract, Declared};

/// A field path from the object's root.
pub type Path = &'static [&'static str];

/// How a contract writes a reference to another object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefShape {
    /// `{apiVersion, kind, name, namespace}` (Kubernetes' ObjectReference).
    ObjectReference,
    /// `{apiGroup, kind, name}` (Cluster API's ContractVersionedObjectReference): the
    /// version is whichever the contract picks.
    ContractVersioned,
}

/// How a contract writes a timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutUnit {
    /// Go duration text (`10s`, `5m0s`), as `metav1.Duration`.
    GoDuration,
    /// Whole seconds as an integer.
    Seconds,
}

/// A timeout field: where, and in which unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    /// Its path.
    pub path: Path,
    /// Its unit.
    pub unit: TimeoutUnit,
}

impl Timeout {
    /// The timeout as this field holds it.
    pub fn value(&self, timeout: Duration) -> Value {
        match self.unit {
            TimeoutUnit::GoDuration => json!(timeout),
            // A part of a second counts as a whole one, as Cluster API's conversion of
            // a duration to seconds rounds up: never a shorter timeout than asked.
            TimeoutUnit::Seconds => json!(
                timeout.as_nanos().div_euclid(1_000_000_000)
                    + i64::from(timeout.as_nanos().rem_euclid(1_000_000_000) != 0)
            ),
        }
    }
}

/// A reference field: where, and in which shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// Its path.
    pub path: Path,
    /// Its shape.
    pub shape: RefShape,
}

impl Reference {
    /// The path as patches' holder references name it (`spec.machineTemplate.infrastructureRef`).
    pub fn field_path(&self) -> String {
        self.path.join(".")
    }

    /// Writes `r` at this field. An ObjectReference omits empty fields, as Go's
    /// `omitempty` does; a contract-versioned one always has its three fields.
    pub fn set(&self, object: &mut Value, r: &ObjectRef) {
        let value = match self.shape {
            RefShape::ObjectReference => object_reference(r),
            RefShape::ContractVersioned => json!({
                "apiGroup": group_of(&r.api_version),
                "kind": r.kind,
                "name": r.name,
            }),
        };
        set_at(object, self.path, value);
    }

    /// Reads the reference at this field; `None` without one or without a name. A
    /// contract-versioned reference comes back with `group/` as its API version (the
    /// version left to whoever resolves it).
    pub fn get(&self, object: &Value) -> Option<ObjectRef> {
        let r = object.at(self.path)?;
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let api_version = match self.shape {
            RefShape::ObjectReference => s("apiVersion"),
            RefShape::ContractVersioned => format!("{}/", s("apiGroup")),
        };
        let reference = ObjectRef {
            api_version,
            kind: s("kind"),
            namespace: s("namespace"),
            name: s("name"),
        };
        (!reference.name.is_empty()).then_some(reference)
    }
}

/// An `ObjectReference` as JSON; empty fields are omitted, as Go's `omitempty` does.
pub fn object_reference(r: &ObjectRef) -> Value {
    let mut map = Map::new();
    for (key, value) in [
        ("apiVersion", &r.api_version),
        ("kind", &r.kind),
        ("name", &r.name),
        ("namespace", &r.namespace),
    ] {
        if !value.is_empty() {
            map.insert(key.to_string(), Value::String(value.clone()));
        }
    }
    Value::Object(map)
}

/// The control plane contract's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlPlaneFields {
    /// The machines' infrastructure template reference.
    pub infrastructure_ref: Reference,
    /// The machines' metadata.
    pub machine_metadata: Path,
    /// Replicas.
    pub replicas: Path,
    /// Kubernetes version.
    pub version: Path,
    /// How long to drain a node.
    pub node_drain_timeout: Timeout,
    /// How long to wait for volumes to detach.
    pub node_volume_detach_timeout: Timeout,
    /// How long to wait for a node's deletion.
    pub node_deletion_timeout: Timeout,
    /// The machines' readiness gates.
    pub readiness_gates: Path,
    /// `true` once the control plane is initialized (can serve the API).
    pub initialized: Path,
    /// `true` once the control plane is ready to provide the Cluster's endpoint: what
    /// the Cluster's phase waits for when the class has no infrastructure cluster.
    /// The v1beta2 contract has no `ready`; initialization is what Cluster API waits for.
    pub ready: Path,
    /// Replicas at the desired spec (`updatedReplicas` before v1beta2).
    pub up_to_date_replicas: Path,
    /// The lowest version the machines run.
    pub status_version: Path,
    /// One entry per version the machines run.
    pub status_versions: Path,
}

/// The infrastructure cluster contract's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InfrastructureClusterFields {
    /// `true` once the infrastructure is provisioned.
    pub provisioned: Path,
}

const V1BETA1_CONTROL_PLANE: ControlPlaneFields = ControlPlaneFields {
    infrastructure_ref: Reference {
        path: &["spec", "machineTemplate", "infrastructureRef"],
        shape: RefShape::ObjectReference,
    },
    machine_metadata: &["spec", "machineTemplate", "metadata"],
    replicas: &["spec", "replicas"],
    version: &["spec", "version"],
    node_drain_timeout: Timeout {
        path: &["spec", "machineTemplate", "nodeDrainTimeout"],
        unit: TimeoutUnit::GoDuration,
    },
    node_volume_detach_timeout: Timeout {
        path: &["spec", "machineTemplate", "nodeVolumeDetachTimeout"],
        unit: TimeoutUnit::GoDuration,
    },
    node_deletion_timeout: Timeout {
        path: &["spec", "machineTemplate", "nodeDeletionTimeout"],
        unit: TimeoutUnit::GoDuration,
    },
    readiness_gates: &["spec", "machineTemplate", "readinessGates"],
    initialized: &["status", "initialized"],
    ready: &["status", "ready"],
    up_to_date_replicas: &["status", "updatedReplicas"],
    status_version: &["status", "version"],
    status_versions: &["status", "versions"],
};

const V1BETA2_CONTROL_PLANE: ControlPlaneFields = ControlPlaneFields {
    infrastructure_ref: Reference {
        path: &["spec", "machineTemplate", "spec", "infrastructureRef"],
        shape: RefShape::ContractVersioned,
    },
    machine_metadata: &["spec", "machineTemplate", "metadata"],
    replicas: &["spec", "replicas"],
    version: &["spec", "version"],
    node_drain_timeout: Timeout {
        path: &[
            "spec",
            "machineTemplate",
            "spec",
            "deletion",
            "nodeDrainTimeoutSeconds",
        ],
        unit: TimeoutUnit::Seconds,
    },
    node_volume_detach_timeout: Timeout {
        path: &[
            "spec",
            "machineTemplate",
            "spec",
            "deletion",
            "nodeVolumeDetachTimeoutSeconds",
        ],
        unit: TimeoutUnit::Seconds,
    },
    node_deletion_timeout: Timeout {
        path: &[
            "spec",
            "machineTemplate",
            "spec",
            "deletion",
            "nodeDeletionTimeoutSeconds",
        ],
        unit: TimeoutUnit::Seconds,
    },
    readiness_gates: &["spec", "machineTemplate", "spec", "readinessGates"],
    initialized: &["status", "initialization", "controlPlaneInitialized"],
    ready: &["status", "initialization", "controlPlaneInitialized"],
    up_to_date_replicas: &["status", "upToDateReplicas"],
    status_version: &["status", "version"],
    status_versions: &["status", "versions"],
};

const V1BETA1_INFRASTRUCTURE_CLUSTER: InfrastructureClusterFields = InfrastructureClusterFields {
    provisioned: &["status", "ready"],
};

const V1BETA2_INFRASTRUCTURE_CLUSTER: InfrastructureClusterFields = InfrastructureClusterFields {
    provisioned: &["status", "initialization", "provisioned"],
};

/// The fields of each contract.
pub trait ContractFields {
    /// The control plane contract's fields.
    fn control_plane(self) -> &'static ControlPlaneFields;
    /// The infrastructure cluster contract's fields.
    fn infrastructure_cluster(self) -> &'static InfrastructureClusterFields;
}

impl ContractFields for Contract {
    fn control_plane(self) -> &'static ControlPlaneFields {
        match self {
            Contract::V1Beta1 => &V1BETA1_CONTROL_PLANE,
            Contract::V1Beta2 => &V1BETA2_CONTROL_PLANE,
        }
    }

    fn infrastructure_cluster(self) -> &'static InfrastructureClusterFields {
        match self {
            Contract::V1Beta1 => &V1BETA1_INFRASTRUCTURE_CLUSTER,
            Contract::V1Beta2 => &V1BETA2_INFRASTRUCTURE_CLUSTER,
        }
    }
}

/// A current control plane's machine template reference: where `contract` puts it,
/// else where another contract does, so that a control plane written before its
/// provider moved contracts keeps its template's name.
pub fn machine_template_ref(contract: Contract, control_plane: &Value) -> Option<ObjectRef> {
    contract
        .control_plane()
        .infrastructure_ref
        .get(control_plane)
        .or_else(|| {
            Contract::ALL
                .into_iter()
                .filter(|other| *other != contract)
                .find_map(|other| other.control_plane().infrastructure_ref.get(control_plane))
        })
}

/// Whether the boolean at `path` of `object` is `true`.
pub fn flag(object: &Value, path: Path) -> bool {
    object.at(path).and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn timeouts_in_seconds_round_a_part_of_a_second_up() {
        let seconds = super::Timeout {
            path: &["spec"],
            unit: super::TimeoutUnit::Seconds,
        };
        for (text, want) in [
            ("10s", 10),
            ("1500ms", 2),
            ("1ns", 1),
            ("0s", 0),
            ("5m0s", 300),
        ] {
            let d = topograph_api::Duration::parse(text).unwrap();
            assert_eq!(seconds.value(d), serde_json::json!(want), "{text}");
        }
    }

    use super::*;

    fn dotted(path: Path) -> String {
        path.join(".")
    }

    /// (field, its path as read from a contract's fields, v1beta1 path, v1beta2 path).
    type Row = (
        &'static str,
        fn(&ControlPlaneFields) -> String,
        &'static str,
        &'static str,
    );

    #[test]
    fn control_plane_paths_per_contract() {
        // (field, v1beta1 contract, v1beta2 contract), as Cluster API main's accessors.
        let table: &[Row] = &[
            (
                "infrastructureRef",
                |f| f.infrastructure_ref.field_path(),
                "spec.machineTemplate.infrastructureRef",
                "spec.machineTemplate.spec.infrastructureRef",
            ),
            (
                "metadata",
                |f| dotted(f.machine_metadata),
                "spec.machineTemplate.metadata",
                "spec.machineTemplate.metadata",
            ),
            (
                "replicas",
                |f| dotted(f.replicas),
                "spec.replicas",
                "spec.replicas",
            ),
            (
                "version",
                |f| dotted(f.version),
                "spec.version",
                "spec.version",
            ),
            (
                "drain",
                |f| dotted(f.node_drain_timeout.path),
                "spec.machineTemplate.nodeDrainTimeout",
                "spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds",
            ),
            (
                "volume detach",
                |f| dotted(f.node_volume_detach_timeout.path),
                "spec.machineTemplate.nodeVolumeDetachTimeout",
                "spec.machineTemplate.spec.deletion.nodeVolumeDetachTimeoutSeconds",
            ),
            (
                "deletion",
                |f| dotted(f.node_deletion_timeout.path),
                "spec.machineTemplate.nodeDeletionTimeout",
                "spec.machineTemplate.spec.deletion.nodeDeletionTimeoutSeconds",
            ),
            (
                "readinessGates",
                |f| dotted(f.readiness_gates),
                "spec.machineTemplate.readinessGates",
                "spec.machineTemplate.spec.readinessGates",
            ),
            (
                "initialized",
                |f| dotted(f.initialized),
                "status.initialized",
                "status.initialization.controlPlaneInitialized",
            ),
            (
                "ready",
                |f| dotted(f.ready),
                "status.ready",
                "status.initialization.controlPlaneInitialized",
            ),
            (
                "upToDateReplicas",
                |f| dotted(f.up_to_date_replicas),
                "status.updatedReplicas",
                "status.upToDateReplicas",
            ),
            (
                "status version",
                |f| dotted(f.status_version),
                "status.version",
                "status.version",
            ),
            (
                "status versions",
                |f| dotted(f.status_versions),
                "status.versions",
                "status.versions",
            ),
        ];
        for (field, get, v1beta1, v1beta2) in table {
            assert_eq!(
                get(Contract::V1Beta1.control_plane()),
                *v1beta1,
                "{field} (v1beta1)"
            );
            assert_eq!(
                get(Contract::V1Beta2.control_plane()),
                *v1beta2,
                "{field} (v1beta2)"
            );
        }
        assert_eq!(
            dotted(Contract::V1Beta1.infrastructure_cluster().provisioned),
            "status.ready"
        );
        assert_eq!(
            dotted(Contract::V1Beta2.infrastructure_cluster().provisioned),
            "status.initialization.provisioned"
        );
    }

    #[test]
    fn references_and_timeouts_take_each_contracts_shape() {
        let r = ObjectRef {
            api_version: "infrastructure.cluster.x-k8s.io/v1beta2".into(),
            kind: "DockerMachineTemplate".into(),
            namespace: "default".into(),
            name: "t".into(),
        };
        let mut v1 = json!({});
        let f1 = Contract::V1Beta1.control_plane();
        f1.infrastructure_ref.set(&mut v1, &r);
        assert_eq!(
            v1,
            json!({"spec": {"machineTemplate": {"infrastructureRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
                "kind": "DockerMachineTemplate", "name": "t", "namespace": "default"}}}})
        );
        assert_eq!(f1.infrastructure_ref.get(&v1), Some(r.clone()));

        let mut v2 = json!({});
        let f2 = Contract::V1Beta2.control_plane();
        f2.infrastructure_ref.set(&mut v2, &r);
        assert_eq!(
            v2,
            json!({"spec": {"machineTemplate": {"spec": {"infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io",
                "kind": "DockerMachineTemplate", "name": "t"}}}}})
        );
        let read = f2.infrastructure_ref.get(&v2).unwrap();
        assert_eq!(
            (read.api_version.as_str(), read.name.as_str()),
            ("infrastructure.cluster.x-k8s.io/", "t")
        );

        let ten_minutes = Duration::from_secs(600);
        assert_eq!(f1.node_drain_timeout.value(ten_minutes), json!("10m0s"));
        assert_eq!(f2.node_drain_timeout.value(ten_minutes), json!(600));
    }
}
