//! Upgrades that wait, as the chart promises them (deploy/STREAMS.md, "Upgrading the servers";
//! deploy/README.md, "Disruption"): the arbiter's pods roll one new pod ready before an old one
//! goes (`maxUnavailable: 0`), a pod that takes calls through a Service is taken out of it
//! before it is told to stop (a `preStop` wait), and each pod's termination grace covers that wait and the
//! service's own drain (`<PREFIX>_GRACE_SECS`); the NATS servers' check between two servers,
//! `shogi-arbiter streams replicas --wait` as `admin`, is a suspended CronJob that
//! `deploy/k8s/upgrade-nats.sh` makes a Job of, naming it as the chart does.

use crate::support::{array_at, object_at, str_at};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The procedure that restarts the NATS servers one at a time (deploy/STREAMS.md).
pub(crate) const UPGRADE_SCRIPT: &str = "deploy/k8s/upgrade-nats.sh";

/// What the chart promises for upgrades, in `objects` (a rendering) with `config` (its
/// ConfigMaps' data), and what `script` (the text of [`UPGRADE_SCRIPT`]) must name.
pub(crate) fn upgrade_problems(
    objects: &[(String, Value)],
    config: &BTreeMap<String, String>,
    script: &str,
) -> Vec<String> {
    let mut problems = Vec::new();
    let selected: Vec<&serde_json::Map<String, Value>> = objects
        .iter()
        .filter(|(_, o)| o["kind"] == "Service")
        .filter_map(|(_, s)| object_at(s, "/spec/selector"))
        .collect();
    for (file, d) in objects.iter().filter(|(_, o)| o["kind"] == "Deployment") {
        let what = format!(
            "{file}: Deployment {}",
            str_at(d, "/metadata/name").unwrap_or("?")
        );
        rollout(&what, d, &selected, config, &mut problems);
    }
    replicas_check(objects, script, &mut problems);
    problems
}

/// One Deployment's rollout and its pods' stop.
fn rollout(
    what: &str,
    d: &Value,
    selected: &[&serde_json::Map<String, Value>],
    config: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
) {
    let unavailable = d.pointer("/spec/strategy/rollingUpdate/maxUnavailable");
    // The CSA front end pairs players in one process's memory: two pods at once would split
    // its lobby, so it is recreated, never rolled (docs/csa.md, "Running more than one").
    let one_lobby = array_at(d, "/spec/template/spec/containers")
        .iter()
        .any(|c| array_at(c, "/args").first().and_then(Value::as_str) == Some("csa-server"));
    let recreated = one_lobby && str_at(d, "/spec/strategy/type") == Some("Recreate");
    if !recreated
        && (str_at(d, "/spec/strategy/type") != Some("RollingUpdate")
            || !matches!(unavailable, Some(v) if v == 0 || v == "0%"))
    {
        problems.push(format!(
            "{what}: its rollout may take a pod away before its replacement is ready \
             (strategy RollingUpdate with maxUnavailable: 0 wanted, found {:?} and {unavailable:?})",
            str_at(d, "/spec/strategy/type")
        ));
    }
    let labels = object_at(d, "/spec/template/metadata/labels");
    let behind_service = selected.iter().any(|sel| {
        sel.iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
    });
    let pod = &d["spec"]["template"]["spec"];
    let termination = pod["terminationGracePeriodSeconds"].as_u64().unwrap_or(30);
    for c in array_at(pod, "/containers") {
        let name = str_at(c, "/name").unwrap_or("?");
        let pre_stop = pre_stop_seconds(c);
        // Clients' calls come through a Service to the port named `grpc` (the workers'
        // Services carry only their metrics).
        let serves_calls = array_at(c, "/ports").iter().any(|p| p["name"] == "grpc");
        if behind_service && serves_calls && pre_stop.unwrap_or(0) == 0 {
            problems.push(format!(
                "{what}: container {name} takes calls through a Service and has no preStop wait: \
                 it is told to stop while the Service may still send it calls"
            ));
        }
        let grace = grace_seconds(c, config);
        let Some(grace) = grace else {
            problems.push(format!(
                "{what}: container {name} sets no <PREFIX>_GRACE_SECS, its drain's bound"
            ));
            continue;
        };
        let needed = pre_stop.unwrap_or(0) + grace;
        if termination <= needed {
            problems.push(format!(
                "{what}: terminationGracePeriodSeconds {termination} leaves no margin over the \
                 preStop wait and the drain ({} s + {grace} s): the kubelet kills it mid-drain",
                pre_stop.unwrap_or(0)
            ));
        }
    }
}

/// The seconds of a container's `preStop: exec: ["sleep", N]`, if it has one.
fn pre_stop_seconds(c: &Value) -> Option<u64> {
    let command: Vec<&str> = array_at(c, "/lifecycle/preStop/exec/command")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match command.as_slice() {
        ["sleep", n] => n.parse().ok(),
        _ => None,
    }
}

/// The container's drain bound: the value of the one `*_GRACE_SECS` it reads from its own
/// environment or the ConfigMaps it loads.
fn grace_seconds(c: &Value, config: &BTreeMap<String, String>) -> Option<u64> {
    let own = array_at(c, "/env")
        .iter()
        .filter_map(|e| Some((str_at(e, "/name")?, str_at(e, "/value")?)));
    let from_config = array_at(c, "/envFrom")
        .iter()
        .any(|e| e.get("configMapRef").is_some())
        .then(|| config.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .into_iter()
        .flatten();
    // Its own prefix: the binary it runs, upper-cased (move-validator -> MOVE_VALIDATOR), or
    // CSA for the CSA front end.
    let binary = array_at(c, "/args").first().and_then(Value::as_str)?;
    let want = format!("{}_GRACE_SECS", crate::support::env_prefix(binary));
    own.chain(from_config)
        .find(|(k, _)| *k == want)
        .and_then(|(_, v)| v.parse().ok())
}

/// The check between two NATS servers: a suspended CronJob running `shogi-arbiter streams
/// replicas --wait N` as `admin`, with the image of the other workloads, which the upgrade
/// script names.
fn replicas_check(objects: &[(String, Value)], script: &str, problems: &mut Vec<String>) {
    let crons: Vec<&Value> = objects
        .iter()
        .filter(|(_, o)| o["kind"] == "CronJob")
        .map(|(_, o)| o)
        .collect();
    let images: BTreeSet<&str> = objects
        .iter()
        .filter(|(_, o)| o["kind"] == "Deployment")
        .flat_map(|(_, o)| array_at(o, "/spec/template/spec/containers"))
        .filter_map(|c| str_at(c, "/image"))
        .collect();
    let checks: Vec<&Value> = crons
        .iter()
        .copied()
        .filter(|o| {
            array_at(o, "/spec/jobTemplate/spec/template/spec/containers")
                .iter()
                .any(|c| {
                    let args: Vec<&str> = array_at(c, "/args")
                        .iter()
                        .filter_map(Value::as_str)
                        .collect();
                    args.starts_with(&["shogi-arbiter", "streams", "replicas", "--wait"])
                        && args
                            .get(4)
                            .and_then(|w| w.parse::<u64>().ok())
                            .is_some_and(|w| w > 0)
                })
        })
        .collect();
    let [check] = checks.as_slice() else {
        problems.push(format!(
            "{} CronJobs run `shogi-arbiter streams replicas --wait <seconds>`, not one: the NATS \
             servers' upgrade ({UPGRADE_SCRIPT}) has no check to run between two servers",
            checks.len()
        ));
        return;
    };
    let name = str_at(check, "/metadata/name").unwrap_or("?");
    let what = format!("CronJob {name}");
    if check["spec"]["suspend"] != true {
        problems.push(format!(
            "{what} is not suspended: it would run on its schedule, not between two servers"
        ));
    }
    let job = &check["spec"]["jobTemplate"]["spec"];
    if job["backoffLimit"] != 0 {
        problems.push(format!(
            "{what}: backoffLimit is not 0: a check that runs out is the script's answer, not \
             something to try again unseen"
        ));
    }
    for c in array_at(job, "/template/spec/containers") {
        let user = array_at(c, "/env")
            .iter()
            .find(|e| e["name"] == "NATS_USER")
            .and_then(|e| str_at(e, "/value"));
        if user.is_some_and(|u| u != "admin") {
            problems.push(format!(
                "{what}: connects to NATS as {user:?}, not admin, whose rights read every consumer"
            ));
        }
        if let Some(image) = str_at(c, "/image")
            && !images.is_empty()
            && !images.contains(image)
        {
            problems.push(format!(
                "{what}: runs image {image}, not the services' {images:?}"
            ));
        }
    }
    if !script.contains(&format!("CHECK:-{name}}}")) {
        problems.push(format!(
            "{UPGRADE_SCRIPT} does not run {what} between two servers (CHECK:-{name})"
        ));
    }
    if !script.contains("OnDelete") || !script.contains("create job") {
        problems.push(format!(
            "{UPGRADE_SCRIPT} neither insists on updateStrategy OnDelete nor makes a Job of the \
             check"
        ));
    }
}

/// The upgrade script's text.
pub(crate) fn upgrade_script(root: &Path) -> String {
    std::fs::read_to_string(root.join(UPGRADE_SCRIPT))
        .unwrap_or_else(|e| panic!("read {UPGRADE_SCRIPT}: {e}"))
}

/// A `kubectl` for [`UPGRADE_SCRIPT`] without a cluster: three NATS pods at revision `old`, a
/// StatefulSet whose update revision is `new`, pod deletions that bring a pod back at `new`,
/// and checks (Jobs) that succeed or fail in the order of the lines of `$FAKE/checks`; every
/// deletion and check is written to `$FAKE/log`.
#[cfg(test)]
const FAKE_KUBECTL: &str = r#"#!/bin/sh
shift 2 # -n <namespace>
case "$*" in
    *updateStrategy*) echo OnDelete ;;
    *spec.replicas*) echo 3 ;;
    *updateRevision*) echo new ;;
    "get pod "*" -o jsonpath="*) cat "$FAKE/$3" ;;
    "get pod "*) : ;;
    "delete pod "*) echo "delete $3" >> "$FAKE/log"; echo new > "$FAKE/$3" ;;
    "wait "*) : ;;
    "create job "*)
        result=$(head -n 1 "$FAKE/checks"); sed -i 1d "$FAKE/checks"
        echo "$result" > "$FAKE/$3"; echo "check $result" >> "$FAKE/log" ;;
    "get job "*) if [ "$(cat "$FAKE/$3")" = ok ]; then echo 1//; else echo /1/True; fi ;;
    "logs "* | "delete job "*) : ;;
    *) echo "fake kubectl: $*" >&2; exit 2 ;;
esac
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{CHART_RENDERINGS, render_chart};
    use crate::support::{check, repo_root};

    /// A chart's objects as rendered, each with its template.
    type Rendering = Vec<(String, Value)>;

    fn config_of(objects: &[(String, Value)]) -> BTreeMap<String, String> {
        objects
            .iter()
            .filter(|(_, o)| o["kind"] == "ConfigMap")
            .flat_map(|(_, o)| object_at(o, "/data").into_iter().flatten())
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
            .collect()
    }

    fn changed(
        mut objects: Vec<(String, Value)>,
        kind: &str,
        name: &str,
        change: impl FnOnce(&mut Value),
    ) -> Vec<(String, Value)> {
        let (_, o) = objects
            .iter_mut()
            .find(|(_, o)| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in the rendering"));
        change(o);
        objects
    }

    #[test]
    fn the_chart_rolls_without_a_refused_call_and_checks_the_nats_replicas() {
        let root = repo_root();
        let script = upgrade_script(&root);
        for (label, args) in CHART_RENDERINGS {
            let objects = render_chart(&root, args).unwrap_or_else(|e| panic!("{label}: {e}"));
            let config = config_of(&objects);
            check(upgrade_problems(&objects, &config, &script), &[]);
        }
        let full = render_chart(&root, CHART_RENDERINGS[1].1).unwrap();
        let config = config_of(&full);
        let cases: Vec<(Rendering, &str, &[&str])> = vec![
            (
                changed(full.clone(), "Deployment", "move-validator", |o| {
                    o["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] = 1.into();
                }),
                &script,
                &["maxUnavailable: 0 wanted"],
            ),
            (
                changed(full.clone(), "Deployment", "move-validator", |o| {
                    o["spec"]["template"]["spec"]["containers"][0]
                        .as_object_mut()
                        .unwrap()
                        .remove("lifecycle");
                }),
                &script,
                &["no preStop wait"],
            ),
            (
                changed(full.clone(), "Deployment", "impasse-judge", |o| {
                    o["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 10.into();
                }),
                &script,
                &["kills it mid-drain"],
            ),
            (
                changed(
                    full.clone(),
                    "CronJob",
                    "shogi-arbiter-nats-replicas",
                    |o| {
                        o["spec"]["suspend"] = false.into();
                    },
                ),
                &script,
                &["not suspended"],
            ),
            (
                changed(
                    full.clone(),
                    "CronJob",
                    "shogi-arbiter-nats-replicas",
                    |o| {
                        let c = &mut o["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
                            [0];
                        c["args"] = serde_json::json!(["shogi-arbiter", "streams", "replicas"]);
                    },
                ),
                &script,
                &["not one"],
            ),
            (
                full.clone(),
                "kubectl rollout restart statefulset/nats",
                &["does not run CronJob", "neither insists"],
            ),
        ];
        for (objects, script, expect) in cases {
            check(upgrade_problems(&objects, &config, script), expect);
        }
    }

    /// Runs the upgrade script on [`FAKE_KUBECTL`] with the checks' answers `checks`: whether
    /// it succeeded, and the deletions and checks it made, in order.
    fn upgrade_with(checks: &[&str]) -> (bool, Vec<String>) {
        let fake = tempfile::tempdir().expect("a temporary directory");
        let bin = fake.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let kubectl = bin.join("kubectl");
        std::fs::write(&kubectl, FAKE_KUBECTL).unwrap();
        let chmod = std::process::Command::new("chmod")
            .arg("+x")
            .arg(&kubectl)
            .status()
            .expect("chmod");
        assert!(chmod.success());
        for pod in ["nats-0", "nats-1", "nats-2"] {
            std::fs::write(fake.path().join(pod), "old\n").unwrap();
        }
        std::fs::write(fake.path().join("checks"), checks.join("\n") + "\n").unwrap();
        std::fs::write(fake.path().join("log"), "").unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = std::process::Command::new("sh")
            .arg(repo_root().join(UPGRADE_SCRIPT))
            .env("PATH", path)
            .env("FAKE", fake.path())
            .output()
            .expect("run sh");
        let log = std::fs::read_to_string(fake.path().join("log")).unwrap();
        (
            out.status.success(),
            log.lines().map(str::to_owned).collect(),
        )
    }

    #[test]
    fn the_upgrade_script_restarts_one_server_at_a_time_between_checks() {
        let ok = |n| vec!["ok"; n];
        assert_eq!(
            upgrade_with(&ok(4)),
            (
                true,
                [
                    "check ok",
                    "delete nats-2",
                    "check ok",
                    "delete nats-1",
                    "check ok",
                    "delete nats-0",
                    "check ok"
                ]
                .map(str::to_owned)
                .to_vec()
            )
        );
        // A server still behind when its check runs out is restarted once more.
        let (done, log) = upgrade_with(&["ok", "ok", "fail", "ok", "ok"]);
        assert!(done, "{log:?}");
        assert_eq!(
            log[4..7],
            ["check fail", "delete nats-1", "check ok"].map(str::to_owned)
        );
        // Twice behind: the upgrade stops there, nats-0 untouched.
        let (done, log) = upgrade_with(&["ok", "ok", "fail", "fail"]);
        assert!(!done, "{log:?}");
        assert_eq!(log.last().map(String::as_str), Some("check fail"));
        assert!(!log.contains(&"delete nats-0".to_owned()), "{log:?}");
        // Not every replica current before the upgrade: nothing restarted.
        assert_eq!(
            upgrade_with(&["fail"]),
            (false, vec!["check fail".to_owned()])
        );
    }
}
