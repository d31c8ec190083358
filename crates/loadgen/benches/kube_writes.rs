//! What one write costs topograph-kube's store, by the kinds of write a fleet makes
//! most (per new quick-start Cluster: 13 Event creates, ≈9 server-side applies, the
//! providers' status patches): the store's part of the issue's "≤ 0.2 ms CPU per
//! write", without HTTP, watches or the simulation. Objects are Cluster API's, written
//! in v1beta1 and stored in v1beta2 as the appliers do, against the CRDs loadgen seeds.
//!
//!     cargo bench -p loadgen --bench kube_writes

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use topograph_kube::fields::Write;
use topograph_kube::{PatchType, Store, Sub, conversion::Converter};

/// topograph-kube's own allocator (decision 0034): a third of a write is allocation.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const NS: &str = "fleet";

/// A write that must succeed: a failed one would time the error path.
fn ok(what: &str, written: Result<Value, topograph_kube::ApiError>) -> Value {
    written.unwrap_or_else(|e| panic!("{what}: {e:?}"))
}

fn store() -> Store {
    let store = Store::with_converter(10_000, Some(Converter::cluster_api()));
    let mut seed = topograph_management::crds::cluster_api();
    // The kinds the MachineDeployment references: converting it between versions
    // reads their CRDs.
    let templates = [
        json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate"}),
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate"}),
    ];
    seed.extend(topograph_management::crds::for_objects(&templates));
    seed.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    for object in seed {
        if let Err(e) = store.create_object(object) {
            panic!("seeding the store: {e:?}");
        }
    }
    store
}

/// A MachineDeployment as the topology applies it (quick-start, v1beta1).
fn machine_deployment(name: &str, replicas: i64) -> Value {
    let labels = json!({
        "cluster.x-k8s.io/cluster-name": "c-1",
        "topology.cluster.x-k8s.io/owned": "",
        "topology.cluster.x-k8s.io/deployment-name": "md-0",
    });
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineDeployment",
        "metadata": {"name": name, "namespace": NS, "labels": labels,
            "annotations": {"machineset.cluster.x-k8s.io/skip-preflight-checks": "KubeadmVersionSkew"}},
        "spec": {
            "clusterName": "c-1",
            "replicas": replicas,
            "minReadySeconds": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "clusterName": "c-1",
                    "version": "v1.32.0",
                    "bootstrap": {"configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
                        "kind": "KubeadmConfigTemplate", "name": format!("{name}-bootstrap-x7k2p"),
                        "namespace": NS}},
                    "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                        "kind": "DockerMachineTemplate", "name": format!("{name}-infra-q9w4z"),
                        "namespace": NS},
                    "failureDomain": "fd4",
                    "nodeDrainTimeout": "1m0s"
                }
            }
        }
    })
}

/// An Event as the topology records one.
fn event(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": NS},
        "involvedObject": {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "name": "c-1", "namespace": NS, "uid": "6f1c7c8e-2b0a-4b8e-9a57-3c1d2e4f5a6b",
            "resourceVersion": "1234"},
        "reason": "TopologyCreate",
        "message": "Created MachineDeployment \"fleet/c-1-md-0-x7k2p\"",
        "type": "Normal",
        "source": {"component": "topology/cluster"},
        "reportingComponent": "topology/cluster",
        "firstTimestamp": "2026-11-27T08:00:00Z", "lastTimestamp": "2026-11-27T08:00:00Z",
        "count": 1
    })
}

fn writes(c: &mut Criterion) {
    let store = store();
    let events = store
        .resolve("", "events")
        .unwrap_or_else(|| panic!("Events are built in"));
    let mds = store
        .resolve("cluster.x-k8s.io", "machinedeployments")
        .unwrap_or_else(|| panic!("the MachineDeployment CRD was seeded"));
    let topology = Write::by("capi-topology");
    let mut group = c.benchmark_group("kube_writes");

    let mut n = 0u64;
    group.bench_function("create Event", |b| {
        b.iter(|| {
            n += 1;
            let body = event(&format!("c-1.{n:016x}"));
            black_box(ok(
                "create",
                store.create_as(&events, "v1", NS, body, &topology),
            ))
        })
    });

    let mut n = 0u64;
    group.bench_function("apply new MachineDeployment", |b| {
        b.iter(|| {
            n += 1;
            let name = format!("c-{n}-md-0");
            let body = machine_deployment(&name, 3);
            black_box(ok(
                "apply",
                store.apply(&mds, "v1beta1", NS, &name, body, true, Sub::Main, &topology),
            ))
        })
    });

    let name = "steady-md-0";
    if let Err(e) = store.apply(
        &mds,
        "v1beta1",
        NS,
        name,
        machine_deployment(name, 3),
        true,
        Sub::Main,
        &topology,
    ) {
        panic!("applying {name}: {e:?}");
    }
    group.bench_function("apply unchanged MachineDeployment", |b| {
        b.iter(|| {
            let body = machine_deployment(name, 3);
            black_box(ok(
                "apply",
                store.apply(&mds, "v1beta1", NS, name, body, true, Sub::Main, &topology),
            ))
        })
    });

    let mut replicas = 3;
    group.bench_function("apply changed MachineDeployment", |b| {
        b.iter(|| {
            replicas = if replicas == 3 { 4 } else { 3 };
            let body = machine_deployment(name, replicas);
            black_box(ok(
                "apply",
                store.apply(&mds, "v1beta1", NS, name, body, true, Sub::Main, &topology),
            ))
        })
    });

    let provider = Write::by("capi-controller");
    let mut ready = 0;
    group.bench_function("merge-patch MachineDeployment status", |b| {
        b.iter(|| {
            ready = (ready + 1) % 4;
            let patch = json!({"status": {"observedGeneration": 2, "replicas": 3,
                "readyReplicas": ready, "updatedReplicas": 3, "availableReplicas": ready,
                "phase": "ScalingUp"}});
            black_box(ok(
                "patch",
                store.patch_as(
                    &mds,
                    "v1beta1",
                    NS,
                    name,
                    PatchType::Merge,
                    &patch,
                    Sub::Status,
                    &provider,
                ),
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, writes);
criterion_main!(benches);
