//! `topograph rollout` and RolloutPolicies through the gateway, on `topograph up`: a bad
//! policy is refused with its field paths, a good one records the stable revision, a
//! paused rollout moves nobody, resume takes the class change to the Cluster, and abort
//! with nothing to abort is refused.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use topograph_tests::{TempDir, binary, root, succeeded, topograph_up};

const TOKEN: &str = "rollout-token";

fn topograph(addr: &str, args: &[&str]) -> Output {
    Command::new(binary("topograph-cli", "topograph"))
        .args(args)
        .args(["--addr", addr, "--token", TOKEN])
        .current_dir(root())
        .output()
        .unwrap()
}

fn json_of(addr: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&succeeded(topograph(addr, &all))).unwrap()
}

fn wait(addr: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let policy = json_of(addr, &["rollout", "status", "quick-start"]);
        if done(&policy) {
            return policy;
        }
        assert!(Instant::now() < deadline, "{what}: {policy:#}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn write(dir: &TempDir, name: &str, value: &Value) -> String {
    let path = dir.0.join(name);
    std::fs::write(&path, serde_json::to_string(value).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

fn policy(waves: Value) -> Value {
    json!({"apiVersion": "topograph.io/v1alpha1", "kind": "RolloutPolicy",
           "metadata": {"name": "quick-start", "namespace": "default"},
           "spec": {"waves": waves, "maxRolling": 1}})
}

#[test]
fn policies_are_admitted_and_rollouts_paused_resumed_and_refused() {
    let (_up, addr, _, _rest) = topograph_up(&["--token", TOKEN]);
    let dir = TempDir::new("rollout-cli");

    // Refused at admission, every problem with its field path; nothing written.
    let bad = write(
        &dir,
        "bad.json",
        &policy(json!([
            {"name": "canary", "selector": {"matchLabels": {"canary": "true"}}},
            {"name": "half", "percent": 50},
            {"name": "some", "percent": 20},
        ])),
    );
    let refused = topograph(&addr, &["apply", "-f", &bad]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    for expected in [
        "objects[0].spec.waves[2].percent",
        "must be greater than the 50 of spec.waves[1].percent",
        "objects[0].spec.waves[2]",
        "the last wave must move every Cluster",
        "objects[0].spec.waves[0].selector",
        "selects no Cluster of ClusterClass default/quick-start",
    ] {
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
    }
    let missing = topograph(&addr, &["rollout", "status", "quick-start"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("has no RolloutPolicy"));

    // A good policy: its first step records the class as it is.
    let good = write(
        &dir,
        "good.json",
        &policy(json!([{"name": "all", "percent": 100}])),
    );
    succeeded(topograph(&addr, &["apply", "-f", &good]));
    let stable = wait(&addr, "stable revision", |p| {
        p["status"]["stableRevision"]
            .as_str()
            .is_some_and(|r| r.starts_with("quick-start-"))
    });
    let first = stable["status"]["stableRevision"]
        .as_str()
        .unwrap()
        .to_string();
    let refused = topograph(&addr, &["rollout", "abort", "quick-start"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no rollout to abort"));

    // The impact of a class change names the revision dev would get, the wave that
    // would move it, and what it would change there (not nothing, as the stable
    // revision dev renders until moved would say).
    let mut class = json_of(&addr, &["get", "clusterclass", "quick-start"]);
    for field in [
        "resourceVersion",
        "uid",
        "generation",
        "creationTimestamp",
        "managedFields",
    ] {
        class["metadata"].as_object_mut().unwrap().remove(field);
    }
    class.as_object_mut().unwrap().remove("status");
    class["spec"]["workers"]["machineDeployments"][0]["template"]["metadata"] =
        json!({"labels": {"rollout": "two"}});
    let changed = write(&dir, "class.json", &class);
    let impact = succeeded(topograph(&addr, &["impact", "-f", &changed, "-o", "json"]));
    let impact: Value = serde_json::from_str(impact.lines().next().unwrap_or_default()).unwrap();
    assert_eq!(impact["name"], "dev", "{impact:#}");
    assert_eq!(impact["wave"], "all", "{impact:#}");
    let planned = impact["revision"].as_str().unwrap_or_default().to_string();
    assert!(
        planned.starts_with("quick-start-") && planned != first,
        "{impact:#}"
    );
    let modified: Vec<&str> = impact["modified"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["kind"].as_str())
        .collect();
    assert!(modified.contains(&"MachineDeployment"), "{impact:#}");
    assert!(
        !modified.contains(&"Cluster"),
        "the pin is the rollout's: {impact:#}"
    );
    let text = succeeded(topograph(&addr, &["impact", "-f", &changed]));
    assert!(
        text.contains(&format!(
            "dev: changes (wave \"all\", to revision {planned})"
        )),
        "{text}"
    );

    // Paused: a class change waits.
    let paused = succeeded(topograph(&addr, &["rollout", "pause", "quick-start"]));
    assert!(paused.contains("(paused)"), "{paused}");
    succeeded(topograph(&addr, &["apply", "-f", &changed]));
    let held = wait(&addr, "paused with a target", |p| {
        p["status"]["phase"] == "Paused" && p["status"]["targetRevision"].is_string()
    });
    let target = held["status"]["targetRevision"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        target, planned,
        "the impact named the revision the rollout made"
    );
    std::thread::sleep(Duration::from_secs(3));
    let dev = json_of(&addr, &["get", "cluster", "dev"]);
    assert_ne!(
        dev["metadata"]["annotations"]["topograph.io/class-revision"], target,
        "a paused rollout moved dev"
    );

    // Resumed: dev moves, renders the new revision, and it becomes the stable one.
    succeeded(topograph(&addr, &["rollout", "resume", "quick-start"]));
    wait(&addr, "rollout complete", |p| {
        p["status"]["stableRevision"] == target.as_str() && p["status"]["phase"] == "Stable"
    });
    let dev = json_of(&addr, &["get", "cluster", "dev"]);
    assert_eq!(
        dev["metadata"]["annotations"]["topograph.io/observed-class-revision"],
        target.as_str()
    );
    let text = succeeded(topograph(&addr, &["rollout", "status", "quick-start"]));
    assert!(
        text.contains(&format!("stable revision  {target}")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("all ")),
        "{text}"
    );
    assert!(text.contains("RolloutHealthy"), "{text}");
}
