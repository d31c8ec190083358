//! Reconciles against the in-memory API server through kube-rs: creation, scaling,
//! pools coming and going, upgrades in Cluster API's order, class and variable changes
//! rolled out by template rotation, drift, conflicts, paused and invalid Clusters, and
//! zero writes once converged.

mod support;

use serde_json::{Value, json};
use support::{Env, V1BETA1};
use topograph_api::object::ObjectExt;

const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta1";
const BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io/v1beta1";

#[tokio::test]
async fn creates_the_topology_from_scratch_then_converges_to_zero_writes() {
    let env = Env::quick_start().await;
    let first = env.reconcile("dev").await.unwrap();
    // DockerCluster, KubeadmControlPlane, its DockerMachineTemplate and health check,
    // three MachineDeployments with two templates each, health checks for md-0 and
    // md-2 (md-1 turns its off), and the shim Secret.
    assert_eq!(first.created, 4 + 3 * 3 + 2 + 1, "{first:?}");
    assert_eq!(first.deleted, 0);

    let cluster = env.cluster("dev").await;
    assert_eq!(
        cluster["spec"]["controlPlaneRef"]["kind"],
        "KubeadmControlPlane"
    );
    assert_eq!(
        cluster["spec"]["infrastructureRef"]["kind"],
        "DockerCluster"
    );
    assert_eq!(cluster.labels()["topology.cluster.x-k8s.io/owned"], "");
    let cp = env.control_plane("dev").await;
    assert_eq!(cp["spec"]["version"], "v1.30.0");
    assert_eq!(cp["spec"]["replicas"], 3);
    assert_eq!(
        cp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["imageRepository"],
        "registry.example.com/k8s"
    );
    let mds = env.owned(V1BETA1, "MachineDeployment", "dev").await;
    assert_eq!(mds.len(), 3);
    let md2 = env.machine_deployment("dev", "md-2").await.unwrap();
    assert_eq!(md2["spec"]["replicas"], 3);
    assert_eq!(md2["spec"]["template"]["spec"]["failureDomain"], "fd3");
    let mhcs = env.owned(V1BETA1, "MachineHealthCheck", "dev").await;
    assert_eq!(mhcs.len(), 3, "control plane, md-0 and md-2");
    let condition = env.condition("dev").await;
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "ReconcileSucceeded");
    let events = env.events().await;
    assert!(
        events
            .iter()
            .any(|e| e.starts_with("TopologyCreate: Created KubeadmControlPlane \"default/dev-")),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e == "TopologyUpdate: Updated Cluster \"default/dev\""),
        "{events:?}"
    );
    // The class was reconciled on the way: variables in its status, owner references on
    // its templates.
    let class = env
        .get(V1BETA1, "ClusterClass", "quick-start")
        .await
        .unwrap();
    assert_eq!(class["status"]["variables"].as_array().unwrap().len(), 4);
    assert_eq!(
        class["status"]["observedGeneration"],
        class["metadata"]["generation"]
    );
    let template = env
        .get(INFRA, "DockerClusterTemplate", "quick-start-cluster")
        .await
        .unwrap();
    assert_eq!(
        template["metadata"]["ownerReferences"][0]["kind"],
        "ClusterClass"
    );

    assert_eq!(cluster["status"]["phase"], "Provisioning");
    // One reconcile wrote everything, status included: nothing changed since, so the
    // second writes nothing.
    let before = env.server.counts();
    let again = env.reconcile("dev").await.unwrap();
    assert_eq!(again, topograph_reconcile::Outcome::default());
    let after = env.server.counts();
    assert_eq!(
        after.writes(),
        before.writes(),
        "a converged Cluster costs reads only"
    );
    assert!(after.reads() > before.reads());
}

/// Replaces the Cluster's MachineDeployment list.
async fn set_machine_deployments(env: &Env, mds: Value) {
    env.edit_topology(json!({"workers": {"machineDeployments": mds}}))
        .await;
}

fn quick_start_pools() -> Value {
    json!([
        {"class": "default-worker", "name": "md-0", "replicas": 2},
        {"class": "default-worker", "name": "md-1", "replicas": 1, "machineHealthCheck": {"enable": false}},
        {"class": "default-worker", "name": "md-2", "replicas": 3, "failureDomain": "fd3"}
    ])
}

#[tokio::test]
async fn scaling_a_pool_updates_only_its_machine_deployment() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let mut pools = quick_start_pools();
    pools[0]["replicas"] = json!(5);
    set_machine_deployments(&env, pools).await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(
        (outcome.created, outcome.updated, outcome.deleted),
        (0, 1, 0),
        "{outcome:?}"
    );
    let md0 = env.machine_deployment("dev", "md-0").await.unwrap();
    assert_eq!(md0["spec"]["replicas"], 5);
    assert!(env.events().await.iter().any(|e| e.starts_with("TopologyUpdate: Updated MachineDeployment \"default/dev-md-0-")));
    env.converge("dev").await;
}

#[tokio::test]
async fn adding_and_removing_pools_creates_and_deletes_their_objects() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    // New MachineDeployments wait while the control plane is provisioning.
    set_machine_deployments(
        &env,
        json!([{"class": "default-worker", "name": "md-3", "replicas": 1}]),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(outcome.created, 0, "{outcome:?}");
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "ClusterUpgrading");
    assert!(
        condition["message"].as_str().unwrap().ends_with(
            "MachineDeployment md-3 creation deferred while control plane upgrade is in progress"
        ),
        "{condition}"
    );
    set_machine_deployments(&env, quick_start_pools()).await;
    env.control_plane_reports().await;
    env.converge("dev").await;
    let md1 = env.machine_deployment("dev", "md-1").await.unwrap();
    let md1_templates = [
        md1["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
            .as_str()
            .unwrap()
            .to_string(),
        md1["spec"]["template"]["spec"]["infrastructureRef"]["name"]
            .as_str()
            .unwrap()
            .to_string(),
    ];
    let mut pools = quick_start_pools();
    let list = pools.as_array_mut().unwrap();
    list.remove(1);
    list.push(json!({"class": "default-worker", "name": "md-3", "replicas": 1}));
    set_machine_deployments(&env, pools).await;
    let outcome = env.reconcile("dev").await.unwrap();
    // md-3: two templates, the MachineDeployment and its health check; md-1: the
    // MachineDeployment and its two templates (it had no health check).
    assert_eq!((outcome.created, outcome.deleted), (4, 3), "{outcome:?}");
    assert!(env.machine_deployment("dev", "md-1").await.is_none());
    assert!(env.machine_deployment("dev", "md-3").await.is_some());
    assert!(
        env.get(BOOTSTRAP, "KubeadmConfigTemplate", &md1_templates[0])
            .await
            .is_none()
    );
    assert!(
        env.get(INFRA, "DockerMachineTemplate", &md1_templates[1])
            .await
            .is_none()
    );
    assert!(env.events().await.iter().any(|e| e.starts_with("TopologyDelete: Deleted MachineDeployment \"default/dev-md-1-")));
    // Removing md-2 also removes its health check.
    let md2 = env.machine_deployment("dev", "md-2").await.unwrap();
    let mut pools = quick_start_pools();
    pools.as_array_mut().unwrap().truncate(1);
    set_machine_deployments(&env, pools).await;
    env.reconcile("dev").await.unwrap();
    assert!(
        env.get(V1BETA1, "MachineHealthCheck", md2.name())
            .await
            .is_none()
    );
    env.converge("dev").await;
}

#[tokio::test]
async fn upgrades_the_control_plane_first_then_one_machine_deployment_at_a_time() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    env.control_plane_reports().await;
    for md in ["md-0", "md-1", "md-2"] {
        env.machine_deployment_reports(md).await;
    }
    env.converge("dev").await;

    env.edit_topology(json!({"version": "v1.31.0"})).await;
    env.reconcile("dev").await.unwrap();
    let cp = env.control_plane("dev").await;
    assert_eq!(cp["spec"]["version"], "v1.31.0");
    for md in ["md-0", "md-1", "md-2"] {
        assert_eq!(
            env.md_version(md).await,
            "v1.30.0",
            "{md} waits for the control plane"
        );
    }
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "ClusterUpgrading");
    // Pending upgrades are listed by MachineDeployment object name, as Cluster API does.
    let names: Vec<String> = {
        let mut names = Vec::new();
        for md in ["md-0", "md-1", "md-2"] {
            names.push(
                env.machine_deployment("dev", md)
                    .await
                    .unwrap()
                    .name()
                    .to_string(),
            );
        }
        names
    };
    assert_eq!(
        condition["message"].as_str().unwrap(),
        format!(
            "Cluster is upgrading to v1.31.0\n  * KubeadmControlPlane upgrading to version v1.31.0\n  * MachineDeployments {} pending upgrade to version v1.31.0",
            names.join(", ")
        )
    );
    assert_eq!(
        env.cluster("dev").await.annotations()["topology.internal.cluster.x-k8s.io/upgrade-step"],
        "v1.31.0"
    );
    assert!(env.events().await.iter().any(|e| {
        e.ends_with("with version change from v1.30.0 to v1.31.0")
            && e.contains("KubeadmControlPlane")
    }));

    // While the control plane has not reported the new version, nothing moves.
    env.reconcile("dev").await.unwrap();
    assert_eq!(env.md_version("md-0").await, "v1.30.0");

    env.control_plane_reports().await;
    // Concurrency 1: the MachineDeployments upgrade one after the other, in topology
    // order, each once the previous one reported its rollout done.
    for (i, md) in ["md-0", "md-1", "md-2"].iter().enumerate() {
        env.reconcile("dev").await.unwrap();
        assert_eq!(env.md_version(md).await, "v1.31.0", "{md} upgrades");
        for later in ["md-0", "md-1", "md-2"].iter().skip(i + 1) {
            assert_eq!(
                env.md_version(later).await,
                "v1.30.0",
                "{later} waits for {md}"
            );
        }
        let message = env.condition("dev").await["message"]
            .as_str()
            .unwrap()
            .to_string();
        let object = env.machine_deployment("dev", md).await.unwrap();
        assert!(
            message.contains(&format!(
                "MachineDeployment {} upgrading to version v1.31.0",
                object.name()
            )),
            "{message}"
        );
        env.machine_deployment_reports(md).await;
    }
    env.converge("dev").await;
    let condition = env.condition("dev").await;
    assert_eq!(condition["status"], "True", "{condition}");
    assert!(
        !env.cluster("dev")
            .await
            .annotations()
            .contains_key("topology.internal.cluster.x-k8s.io/upgrade-step")
    );
}

#[tokio::test]
async fn a_class_template_edit_rolls_out_to_every_cluster_of_the_class() {
    let (class, dev) = support::quick_start();
    let mut prod = dev.clone();
    prod["metadata"]["name"] = json!("prod");
    let env = Env::start(class, vec![dev, prod]).await;
    env.converge("dev").await;
    env.converge("prod").await;
    let before: Vec<String> = futures_names(&env).await;

    let template = env
        .get(
            INFRA,
            "DockerMachineTemplate",
            "quick-start-default-worker-machinetemplate",
        )
        .await
        .unwrap();
    env.patch(&template, json!({"spec": {"template": {"spec": {"extraMounts": [{"containerPath": "/data", "hostPath": "/data"}]}}}})).await;
    for cluster in ["dev", "prod"] {
        let outcome = env.reconcile(cluster).await.unwrap();
        // Each MachineDeployment gets a new infrastructure template (created), points at
        // it (updated), and the old template goes (deleted).
        assert_eq!(
            (outcome.created, outcome.updated, outcome.deleted),
            (3, 3, 3),
            "{cluster}: {outcome:?}"
        );
        for md in env.owned(V1BETA1, "MachineDeployment", cluster).await {
            let name = md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
                .as_str()
                .unwrap();
            let copy = env.get(INFRA, "DockerMachineTemplate", name).await.unwrap();
            assert_eq!(
                copy["spec"]["template"]["spec"]["extraMounts"][0]["hostPath"],
                "/data"
            );
        }
    }
    let after: Vec<String> = futures_names(&env).await;
    assert!(
        before.iter().all(|n| !after.contains(n)),
        "old templates replaced: {before:?} {after:?}"
    );
    // Taking the field out of the class template takes it out of the copies again
    // (another rotation): the topology set it, so it does not stay behind.
    let template = env
        .get(
            INFRA,
            "DockerMachineTemplate",
            "quick-start-default-worker-machinetemplate",
        )
        .await
        .unwrap();
    env.patch(
        &template,
        json!({"spec": {"template": {"spec": {"extraMounts": null}}}}),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(
        (outcome.created, outcome.updated, outcome.deleted),
        (3, 3, 3),
        "{outcome:?}"
    );
    for md in env.owned(V1BETA1, "MachineDeployment", "dev").await {
        let name = md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
            .as_str()
            .unwrap();
        let copy = env.get(INFRA, "DockerMachineTemplate", name).await.unwrap();
        assert!(
            copy["spec"]["template"]["spec"]
                .get("extraMounts")
                .is_none(),
            "{name}: {copy}"
        );
    }
    assert!(
        env.events()
            .await
            .iter()
            .any(|e| e.contains("as a replacement for") && e.ends_with("(template rotation)"))
    );
    env.converge("dev").await;
    env.converge("prod").await;
}

/// A template rotation while a MachineSet still builds machines from the old copy (a
/// rollout in progress): the copy stays, owned by that MachineSet instead of the
/// Cluster, and garbage collection takes it when the MachineSet goes.
#[tokio::test]
async fn a_replaced_template_a_machine_set_still_uses_goes_with_that_machine_set() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let md0 = env.machine_deployment("dev", "md-0").await.unwrap();
    let held = md0["spec"]["template"]["spec"]["infrastructureRef"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    // The MachineDeployment controller's MachineSet for md-0 (with the selector
    // MachineSet's schema requires, the MachineDeployment's).
    let machine_set = env
        .other
        .create(&json!({
            "apiVersion": V1BETA1, "kind": "MachineSet",
            "metadata": {"name": "dev-md-0-ms", "namespace": "default",
                         "labels": {"cluster.x-k8s.io/cluster-name": "dev"}},
            "spec": {"clusterName": "dev", "selector": md0["spec"]["selector"].clone(),
                     "template": md0["spec"]["template"].clone()}
        }))
        .await
        .unwrap();

    let template = env
        .get(
            INFRA,
            "DockerMachineTemplate",
            "quick-start-default-worker-machinetemplate",
        )
        .await
        .unwrap();
    env.patch(&template, json!({"spec": {"template": {"spec": {"extraMounts": [{"containerPath": "/data", "hostPath": "/data"}]}}}})).await;
    let outcome = env.reconcile("dev").await.unwrap();
    // Three new copies, three MachineDeployments pointed at them, two old copies
    // deleted and the held one handed over (an update).
    assert_eq!(
        (outcome.created, outcome.updated, outcome.deleted),
        (3, 4, 2),
        "{outcome:?}"
    );
    let old = env
        .get(INFRA, "DockerMachineTemplate", &held)
        .await
        .expect("the copy md-0's MachineSet uses is kept");
    assert_eq!(
        old["metadata"]["ownerReferences"],
        json!([{"apiVersion": V1BETA1, "kind": "MachineSet", "name": "dev-md-0-ms",
                "uid": machine_set["metadata"]["uid"]}]),
        "owned by the MachineSet alone"
    );

    env.other.delete(&machine_set).await.unwrap();
    assert!(
        env.get(INFRA, "DockerMachineTemplate", &held)
            .await
            .is_none(),
        "collected with its last MachineSet"
    );
    env.converge("dev").await;
}

/// Names of the worker infrastructure templates of both Clusters.
async fn futures_names(env: &Env) -> Vec<String> {
    let mut names = Vec::new();
    for cluster in ["dev", "prod"] {
        for md in env.owned(V1BETA1, "MachineDeployment", cluster).await {
            names.push(
                md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
    }
    names
}

#[tokio::test]
async fn a_variable_change_rotates_the_templates_it_patches() {
    let (mut class, cluster) = support::quick_start();
    // A variable the worker bootstrap templates use.
    let cc = class
        .iter_mut()
        .find(|o| o.kind() == "ClusterClass")
        .unwrap();
    cc["spec"]["variables"].as_array_mut().unwrap().push(json!({
        "name": "workerBanner", "required": false,
        "schema": {"openAPIV3Schema": {"type": "string", "default": "hello"}}
    }));
    cc["spec"]["patches"].as_array_mut().unwrap().push(json!({
        "name": "workerBanner",
        "definitions": [{
            "selector": {"apiVersion": BOOTSTRAP, "kind": "KubeadmConfigTemplate",
                         "matchResources": {"machineDeploymentClass": {"names": ["default-worker"]}}},
            "jsonPatches": [{"op": "add", "path": "/spec/template/spec/preKubeadmCommands",
                             "valueFrom": {"template": "- echo {{ .workerBanner }}"}}]
        }]
    }));
    let env = Env::start(class, vec![cluster]).await;
    env.converge("dev").await;
    let md0 = env.machine_deployment("dev", "md-0").await.unwrap();
    let old = md0["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let cluster = env.cluster("dev").await;
    let mut variables = cluster["spec"]["topology"]["variables"]
        .as_array()
        .unwrap()
        .clone();
    variables.push(json!({"name": "workerBanner", "value": "goodbye"}));
    env.edit_topology(json!({"variables": variables})).await;

    env.reconcile("dev").await.unwrap();
    let md0 = env.machine_deployment("dev", "md-0").await.unwrap();
    let new = md0["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
        .as_str()
        .unwrap();
    assert_ne!(new, old, "the bootstrap template was rotated");
    let template = env
        .get(BOOTSTRAP, "KubeadmConfigTemplate", new)
        .await
        .unwrap();
    assert_eq!(
        template["spec"]["template"]["spec"]["preKubeadmCommands"],
        json!(["echo goodbye"])
    );
    assert!(
        env.get(BOOTSTRAP, "KubeadmConfigTemplate", &old)
            .await
            .is_none()
    );
    // The infrastructure templates did not change, so they were not rotated.
    assert_eq!(
        md0["spec"]["template"]["spec"]["infrastructureRef"]["name"],
        env.machine_deployment("dev", "md-0").await.unwrap()["spec"]["template"]["spec"]["infrastructureRef"]
            ["name"]
    );
    env.converge("dev").await;
}

#[tokio::test]
async fn a_patch_replacing_a_template_field_rotates_nothing_once_created() {
    let (mut class, cluster) = support::quick_start();
    // The workers' template sets the image the quick-start's customImage patch
    // replaces: the copy differs from the class template from the start.
    let template = class
        .iter_mut()
        .find(|o| o.name() == "quick-start-default-worker-machinetemplate")
        .unwrap();
    template["spec"]["template"]["spec"]["customImage"] = json!("kindest/node:from-the-template");
    let env = Env::start(class, vec![cluster]).await;
    env.reconcile("dev").await.unwrap();
    let infrastructure_ref = |md: Value| {
        md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let created = infrastructure_ref(env.machine_deployment("dev", "md-0").await.unwrap());
    env.converge("dev").await;
    assert_eq!(
        infrastructure_ref(env.machine_deployment("dev", "md-0").await.unwrap()),
        created,
        "a copy that holds the patched spec is not rotated"
    );
    let copy = env
        .get(INFRA, "DockerMachineTemplate", &created)
        .await
        .unwrap();
    assert_ne!(
        copy["spec"]["template"]["spec"]["customImage"],
        json!("kindest/node:from-the-template"),
        "the patch replaced the template's image"
    );
}

#[tokio::test]
async fn drift_is_restored_where_the_topology_sets_fields_and_kept_elsewhere() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let cp = env.control_plane("dev").await;
    let mut sans =
        cp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]["certSANs"].clone();
    sans.as_array_mut()
        .unwrap()
        .push(json!("drift.example.com"));
    env.patch(
        &cp,
        json!({
            "metadata": {"labels": {"team": "blue"}},
            "spec": {
                "replicas": 7,
                "kubeadmConfigSpec": {"clusterConfiguration": {"apiServer": {
                    "certSANs": sans,
                    "extraArgs": {"audit-log-maxage": "30"}
                }}}
            }
        }),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(outcome.updated, 1, "{outcome:?}");
    let cp = env.control_plane("dev").await;
    assert_eq!(cp["spec"]["replicas"], 3, "an enforced field is restored");
    assert_eq!(
        cp.labels()["team"],
        "blue",
        "a map entry another writer added is kept"
    );
    let api_server = &cp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"];
    assert_eq!(
        api_server["extraArgs"]["audit-log-maxage"], "30",
        "a map entry is kept"
    );
    assert_eq!(
        api_server["extraArgs"]["admission-control-config-file"],
        "/etc/kubernetes/kube-apiserver-admission-pss.yaml"
    );
    assert!(
        !api_server["certSANs"]
            .as_array()
            .unwrap()
            .contains(&json!("drift.example.com")),
        "a list item another writer added is removed"
    );
    env.converge("dev").await;
}

/// As Cluster API's server-side apply does: what the topology set and no longer sets
/// is removed (a disabled patch's fields, a dropped label), what others set is kept.
#[tokio::test]
async fn fields_the_topology_stops_setting_are_removed_and_others_kept() {
    let env = Env::quick_start().await;
    env.edit_topology(json!({"controlPlane": {"metadata": {"labels": {"tier": "gold"}}}}))
        .await;
    env.converge("dev").await;
    let cp = env.control_plane("dev").await;
    assert_eq!(cp.labels()["tier"], "gold");
    let api_server = &cp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"];
    assert!(api_server["extraArgs"]["admission-control-config-file"].is_string());
    assert!(api_server["extraVolumes"].is_array());
    // Someone else adds a label and an argument of their own.
    env.patch(
        &cp,
        json!({
            "metadata": {"labels": {"team": "blue"}},
            "spec": {"kubeadmConfigSpec": {"clusterConfiguration": {"apiServer": {
                "extraArgs": {"audit-log-maxage": "30"}
            }}}}
        }),
    )
    .await;

    // The label leaves the topology and the PodSecurity patch is turned off.
    let cluster = env.cluster("dev").await;
    let variables: Vec<Value> = cluster["spec"]["topology"]["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            if v["name"] == "podSecurityStandard" {
                json!({"name": "podSecurityStandard", "value": {"enabled": false}})
            } else {
                v.clone()
            }
        })
        .collect();
    env.edit_topology(
        json!({"controlPlane": {"metadata": {"labels": {"tier": null}}}, "variables": variables}),
    )
    .await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(
        outcome.updated, 1,
        "the control plane, in place: {outcome:?}"
    );
    let cp = env.control_plane("dev").await;
    assert!(
        !cp.labels().contains_key("tier"),
        "a label the topology stopped setting is removed: {:?}",
        cp.labels()
    );
    assert_eq!(
        cp.labels()["team"],
        "blue",
        "another writer's label is kept"
    );
    let api_server = &cp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"];
    assert!(
        api_server["extraArgs"]
            .get("admission-control-config-file")
            .is_none(),
        "the disabled patch's argument is removed: {api_server}"
    );
    assert_eq!(
        api_server["extraArgs"]["audit-log-maxage"], "30",
        "another writer's argument is kept"
    );
    assert!(
        api_server.get("extraVolumes").is_none(),
        "the disabled patch's volumes are removed: {api_server}"
    );
    env.converge("dev").await;
}

/// A write from a stale read loses no one's change: a server-side apply carries no
/// resourceVersion, so it needs no re-read and no retry, and what another writer did
/// in between stays (it owns those fields).
#[tokio::test]
async fn a_write_from_a_stale_read_keeps_a_concurrent_change() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let stale = env.control_plane("dev").await;
    // Another writer moves the object on: the stale copy's resourceVersion is old.
    env.patch(&stale, json!({"metadata": {"labels": {"other": "writer"}}}))
        .await;
    let before = env.server.counts();
    let stored =
        topograph_reconcile::apply_intent(&env.api, &stale, &json!({"spec": {"replicas": 4}}))
            .await
            .unwrap()
            .expect("written");
    let after = env.server.counts();
    assert_eq!(after.patch - before.patch, 1, "one apply, no retry");
    assert_eq!(after.update - before.update, 0, "no PUT");
    assert_eq!(stored["spec"]["replicas"], 4);
    assert_eq!(
        stored.labels()["other"],
        "writer",
        "the other writer's change survives"
    );
}

#[tokio::test]
async fn a_paused_cluster_is_left_alone() {
    let env = Env::quick_start().await;
    let cluster = env.cluster("dev").await;
    env.patch(&cluster, json!({"spec": {"paused": true}})).await;
    let outcome = env.reconcile("dev").await.unwrap();
    assert_eq!(
        (outcome.created, outcome.updated, outcome.deleted),
        (0, 0, 0)
    );
    assert_eq!(outcome.writes, 1, "only the condition");
    let condition = env.condition("dev").await;
    assert_eq!(condition["reason"], "Paused");
    assert_eq!(condition["message"], "Cluster spec.paused is set to true");
    assert!(
        env.owned(V1BETA1, "MachineDeployment", "dev")
            .await
            .is_empty()
    );
    assert_eq!(env.reconcile("dev").await.unwrap().writes, 0);
}

#[tokio::test]
async fn an_invalid_cluster_is_reported_on_its_condition_and_nothing_is_written() {
    let env = Env::quick_start().await;
    env.edit_topology(
        json!({"workers": {"machineDeployments": [{"class": "no-such-class", "name": "md-0"}]}}),
    )
    .await;
    let error = env.reconcile("dev").await.unwrap_err();
    assert!(error.contains("no-such-class"), "{error}");
    let condition = env.condition("dev").await;
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "ReconcileFailed");
    assert_eq!(condition["message"], error);
    assert!(
        env.owned(V1BETA1, "MachineDeployment", "dev")
            .await
            .is_empty()
    );
    assert!(env.get("v1", "Secret", "dev-shim").await.is_none());
    assert!(
        env.cluster("dev").await["spec"]
            .get("controlPlaneRef")
            .is_none()
    );
}

/// Reconciles every `pause` until `done` holds (at most 100 rounds).
async fn reconcile_until(env: &Env, what: &str, mut done: impl AsyncFnMut(&Env) -> bool) {
    for _ in 0..100 {
        env.reconcile("dev").await.unwrap();
        if done(env).await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    }
    panic!(
        "{what}: not reached; condition {}",
        env.condition("dev").await
    );
}

#[tokio::test]
async fn with_simulated_providers_a_cluster_is_provisioned_and_upgraded_end_to_end() {
    let (class, cluster) = support::quick_start();
    let env = Env::start_with(
        class,
        vec![cluster],
        Some(std::time::Duration::from_millis(50)),
    )
    .await;
    reconcile_until(&env, "provisioned", async |env| {
        let cluster = env.cluster("dev").await;
        cluster["status"]["phase"] == "Provisioned"
            && env.get("v1", "Secret", "dev-shim").await.is_none()
    })
    .await;
    let cluster = env.cluster("dev").await;
    assert_eq!(
        cluster["spec"]["controlPlaneEndpoint"]["port"], 6443,
        "{cluster}"
    );
    assert_eq!(env.condition("dev").await["status"], "True");

    env.edit_topology(json!({"version": "v1.31.0"})).await;
    let mut seen_cp_first = false;
    reconcile_until(&env, "upgraded", async |env| {
        let cp = env.control_plane("dev").await;
        let mds_old = [
            env.md_version("md-0").await,
            env.md_version("md-1").await,
            env.md_version("md-2").await,
        ]
        .iter()
        .filter(|v| *v == "v1.30.0")
        .count();
        if cp["spec"]["version"] == "v1.31.0" && mds_old == 3 {
            seen_cp_first = true;
        }
        mds_old == 0 && env.condition("dev").await["status"] == "True"
    })
    .await;
    assert!(
        seen_cp_first,
        "the control plane moved before any MachineDeployment"
    );
    assert_eq!(
        env.control_plane("dev").await["status"]["version"],
        "v1.31.0"
    );
    env.converge("dev").await;
}

#[tokio::test]
async fn rollout_after_reaches_the_control_plane_first_then_the_machine_deployments() {
    // `spec.topology.rolloutAfter` is a v1beta1 field (v1beta2 dropped it, and a
    // management cluster storing v1beta2 drops it too, as Cluster API's does).
    let (class, cluster) = support::quick_start();
    let env = Env::start_v1beta1(class, vec![cluster]).await;
    env.converge("dev").await;
    env.control_plane_reports().await;
    env.converge("dev").await;
    let after = "2026-12-01T00:00:00Z";
    env.edit_topology(json!({"rolloutAfter": after})).await;
    env.reconcile("dev").await.unwrap();
    let cp = env.control_plane("dev").await;
    assert_eq!(cp["spec"]["rolloutAfter"], after);
    for md in ["md-0", "md-1", "md-2"] {
        let md = env.machine_deployment("dev", md).await.unwrap();
        assert!(
            md["spec"].get("rolloutAfter").is_none(),
            "workers wait for the control plane"
        );
    }
    // The control plane reports its rollout done.
    env.patch_status(
        &cp,
        json!({"observedGeneration": cp["metadata"]["generation"], "updatedReplicas": 3}),
    )
    .await;
    env.reconcile("dev").await.unwrap();
    for md in ["md-0", "md-1", "md-2"] {
        let md = env.machine_deployment("dev", md).await.unwrap();
        assert_eq!(md["spec"]["rolloutAfter"], after);
    }
    env.converge("dev").await;
}

#[tokio::test]
async fn objects_a_crashed_reconcile_created_but_never_recorded_are_adopted() {
    let env = Env::quick_start().await;
    env.reconcile("dev").await.unwrap();
    let infra_before = env.owned(INFRA, "DockerCluster", "dev").await;
    // As if the reconcile died after creating the objects but before the Cluster
    // recorded its references: the next one finds them under the same names.
    let cluster = env.cluster("dev").await;
    env.patch(
        &cluster,
        json!({"spec": {"infrastructureRef": null, "controlPlaneRef": null}}),
    )
    .await;
    env.reconcile("dev").await.unwrap();
    let infra_after = env.owned(INFRA, "DockerCluster", "dev").await;
    assert_eq!(infra_after.len(), 1, "no second InfrastructureCluster");
    assert_eq!(infra_after[0].name(), infra_before[0].name());
    assert_eq!(
        env.cluster("dev").await["spec"]["infrastructureRef"]["name"],
        infra_before[0].name()
    );
    env.converge("dev").await;
}

#[tokio::test]
async fn a_converged_reconcile_reads_each_object_once_and_lists_each_kind_once() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    let before = env.server.counts();
    assert_eq!(env.reconcile("dev").await.unwrap().writes, 0);
    let after = env.server.counts();
    // The Cluster, its class, the class's six templates, the RolloutPolicy lookup, the
    // DockerCluster, the KubeadmControlPlane and its machine template, and the two
    // templates of each of the three MachineDeployments: one read each. Health checks
    // come with one list, not one read per MachineDeployment (most "not found").
    assert_eq!(after.get - before.get, 1 + 1 + 6 + 1 + 3 + 3 * 2, "GETs");
    // MachineDeployments, MachineSets, Machines, MachineHealthChecks, MachinePools.
    assert_eq!(after.list - before.list, 5, "lists");
}

#[tokio::test]
async fn a_shim_secret_left_behind_is_taken_over_without_a_second_create() {
    let env = Env::quick_start().await;
    let cluster = env.cluster("dev").await;
    // What an earlier attempt that failed half way leaves: the shim, nothing else.
    let shim = env
        .other
        .create(&json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "cluster.x-k8s.io/secret",
            "metadata": {
                "name": "dev-shim",
                "namespace": "default",
                "labels": {"cluster.x-k8s.io/cluster-name": "dev"},
                "ownerReferences": [{
                    "apiVersion": V1BETA1, "kind": "Cluster", "name": "dev",
                    "uid": cluster["metadata"]["uid"],
                }],
            },
        }))
        .await
        .unwrap();
    let first = env.reconcile("dev").await.unwrap();
    assert_eq!(
        first.created,
        4 + 3 * 3 + 2,
        "everything but the shim: {first:?}"
    );
    let owners = |object: &Value| object["metadata"]["ownerReferences"].clone();
    let shim_uid = &shim["metadata"]["uid"];
    let cp = env.control_plane("dev").await;
    assert!(
        owners(&cp)
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["kind"] == "Secret" && &o["uid"] == shim_uid),
        "{cp}"
    );
}

#[tokio::test]
async fn what_a_reconcile_applied_is_known_unchanged_to_the_next_until_someone_writes_it() {
    let env = Env::quick_start().await;
    let first = env.reconcile("dev").await.unwrap();
    assert!(first.created > 0, "{first:?}");
    // Nothing written since but the Cluster (the shim's removal is the second
    // reconcile's): every object the first applied is found unchanged from memory, the
    // infrastructure cluster, the control plane and its template, three
    // MachineDeployments and their six templates, three health checks (the control
    // plane's, md-0's and md-2's).
    let before = env.api.remembered_no_changes();
    let second = env.reconcile("dev").await.unwrap();
    let hits = env.api.remembered_no_changes() - before;
    assert_eq!(second.updated, 0, "{second:?}");
    assert_eq!(hits, 15, "{hits} predictions answered from memory");

    // A write by someone else is a new resourceVersion: predicted afresh, and repaired.
    let cp = env.control_plane("dev").await;
    env.patch(&cp, json!({"spec": {"replicas": 5}})).await;
    let before = env.api.remembered_no_changes();
    let repair = env.reconcile("dev").await.unwrap();
    assert_eq!(repair.updated, 1, "{repair:?}");
    assert_eq!(env.control_plane("dev").await["spec"]["replicas"], 3);
    // Everything but the control plane still from memory.
    let hits = env.api.remembered_no_changes() - before;
    assert_eq!(hits, 14, "{hits} predictions answered from memory");
}

#[tokio::test]
async fn status_reports_since_the_last_reconcile_need_no_prediction() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    // Providers report on the control plane and a MachineDeployment: new
    // resourceVersions, nothing an apply touches.
    let cp = env.control_plane("dev").await;
    env.patch_status(&cp, json!({"replicas": 3, "readyReplicas": 3}))
        .await;
    let md = env.machine_deployment("dev", "md-0").await.unwrap();
    env.patch_status(&md, json!({"replicas": 2, "phase": "Running"}))
        .await;
    let before = env.api.remembered_no_changes();
    let quiet = env.reconcile("dev").await.unwrap();
    let hits = env.api.remembered_no_changes() - before;
    // (The Cluster's own status may follow the control plane's report: no object of
    // the topology is written.)
    assert_eq!((quiet.created, quiet.updated), (0, 0), "{quiet:?}");
    assert_eq!(hits, 15, "{hits} predictions answered from memory");

    // A label someone adds is metadata an apply reads: predicted afresh (and kept, as
    // the topology does not own it).
    env.patch(&md, json!({"metadata": {"labels": {"team": "a"}}}))
        .await;
    let before = env.api.remembered_no_changes();
    let labelled = env.reconcile("dev").await.unwrap();
    assert_eq!((labelled.created, labelled.updated), (0, 0), "{labelled:?}");
    let hits = env.api.remembered_no_changes() - before;
    assert_eq!(hits, 14, "{hits} predictions answered from memory");
}

#[tokio::test]
async fn a_converged_reconcile_reuses_what_it_found_unchanged_and_still_repairs_drift() {
    let env = Env::quick_start().await;
    env.converge("dev").await;
    // The converging reconciles found some objects unchanged; a converged one finds all
    // of them so, from memory: the infrastructure cluster, the control plane and its
    // template, three MachineDeployments and their six templates, three health checks.
    let before = env.api.remembered_no_changes();
    assert_eq!(env.reconcile("dev").await.unwrap().writes, 0);
    let hits = env.api.remembered_no_changes() - before;
    assert!(hits >= 15, "{hits} predictions answered from memory");

    // Someone changes a field the topology owns: a new resourceVersion, so the next
    // reconcile predicts afresh and puts it back.
    let cp = env.control_plane("dev").await;
    env.patch(&cp, json!({"spec": {"replicas": 5}})).await;
    let repair = env.reconcile("dev").await.unwrap();
    assert_eq!(repair.updated, 1, "{repair:?}");
    assert_eq!(env.control_plane("dev").await["spec"]["replicas"], 3);
}
