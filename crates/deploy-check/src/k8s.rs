//! What every Kubernetes workload must do, checked over a set of objects: probes, resources,
//! security context, disruption budgets, Services that select pods, and the partitioned roles
//! run as StatefulSets with their index.

use crate::images::IMAGE_UID;
use crate::support::{
    CONFIG_MAP, GOOD_DEPLOYMENT, array_at, check, env_prefix, k8s_from, listen_port,
    listen_setting, object_at, str_at,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Checks Kubernetes objects (file name, document) as a set: each on its own, then the
/// references between them.
pub(crate) fn k8s_problems(objects: &[(String, Value)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut config: BTreeMap<String, String> = BTreeMap::new();
    let mut config_maps = BTreeSet::new();
    for (_, o) in objects {
        if o["kind"] == "ConfigMap" {
            config_maps.insert(str_at(o, "/metadata/name").unwrap_or("").to_owned());
            for (k, v) in object_at(o, "/data").into_iter().flatten() {
                config.insert(k.clone(), v.as_str().unwrap_or("").to_owned());
            }
        }
    }
    let mut deployments = Vec::new();
    let mut budgets = Vec::new();
    for (file, o) in objects {
        let kind = str_at(o, "/kind").unwrap_or("");
        let Some(name) = str_at(o, "/metadata/name") else {
            problems.push(format!("{file}: a {kind} without metadata.name"));
            continue;
        };
        let what = format!("{file}: {kind} {name}");
        if kind != "Namespace" && str_at(o, "/metadata/namespace") != Some("shogi-arbiter") {
            problems.push(format!("{what} is not in namespace shogi-arbiter"));
        }
        match kind {
            "Deployment" | "StatefulSet" => {
                deployments.push((what.clone(), o));
                workload_problems(&what, o, &config, &config_maps, &mut problems);
            }
            "PodDisruptionBudget" => budgets.push(o),
            _ => {}
        }
    }
    let services: BTreeSet<&str> = objects
        .iter()
        .filter(|(_, o)| o["kind"] == "Service")
        .filter_map(|(_, o)| str_at(o, "/metadata/name"))
        .collect();
    for (what, d) in &deployments {
        if d["kind"] == "StatefulSet"
            && !str_at(d, "/spec/serviceName").is_some_and(|n| services.contains(n))
        {
            problems.push(format!("{what}: serviceName names no Service"));
        }
        let selector = d.pointer("/spec/selector/matchLabels");
        if !budgets
            .iter()
            .any(|b| b.pointer("/spec/selector/matchLabels") == selector)
        {
            problems.push(format!(
                "{what} has no PodDisruptionBudget with its selector"
            ));
        }
    }
    for (file, s) in objects.iter().filter(|(_, o)| o["kind"] == "Service") {
        let name = str_at(s, "/metadata/name").unwrap_or("");
        let selector = object_at(s, "/spec/selector");
        let target = deployments.iter().find(|(_, d)| {
            let labels = object_at(d, "/spec/template/metadata/labels");
            selector.is_some_and(|sel| {
                sel.iter()
                    .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
            })
        });
        let Some((_, d)) = target else {
            problems.push(format!("{file}: Service {name} selects no workload's pods"));
            continue;
        };
        let port_names: BTreeSet<&str> = array_at(d, "/spec/template/spec/containers")
            .iter()
            .flat_map(|c| array_at(c, "/ports"))
            .filter_map(|p| str_at(p, "/name"))
            .collect();
        for p in array_at(s, "/spec/ports") {
            if let Some(target) = str_at(p, "/targetPort")
                && !port_names.contains(target)
            {
                problems.push(format!(
                    "{file}: Service {name} targets port {target:?}, which its pods do not name"
                ));
            }
        }
    }
    problems
}

fn workload_problems(
    what: &str,
    d: &Value,
    config: &BTreeMap<String, String>,
    config_maps: &BTreeSet<String>,
    problems: &mut Vec<String>,
) {
    let pod = &d["spec"]["template"]["spec"];
    let selector = object_at(d, "/spec/selector/matchLabels");
    let labels = object_at(d, "/spec/template/metadata/labels");
    if selector.is_none_or(|s| {
        s.iter()
            .any(|(k, v)| labels.and_then(|l| l.get(k)) != Some(v))
    }) {
        problems.push(format!(
            "{what}: the selector does not match the pod labels"
        ));
    }
    if pod.pointer("/securityContext/runAsNonRoot") != Some(&Value::Bool(true)) {
        problems.push(format!("{what}: the pod does not set runAsNonRoot: true"));
    }
    if pod
        .pointer("/securityContext/runAsUser")
        .and_then(Value::as_u64)
        != Some(IMAGE_UID)
    {
        problems.push(format!(
            "{what}: runAsUser is not the image's user {IMAGE_UID}"
        ));
    }
    let containers = array_at(pod, "/containers");
    if containers.is_empty() {
        problems.push(format!("{what}: no containers"));
    }
    for c in containers {
        let cname = str_at(c, "/name").unwrap_or("?");
        let at = format!("{what}, container {cname}");
        let ports: BTreeSet<u64> = array_at(c, "/ports")
            .iter()
            .filter_map(|p| p["containerPort"].as_u64())
            .collect();
        let mut probe_ports = BTreeSet::new();
        // The kubelet's gRPC probes speak plaintext only: a validator serving TLS can only
        // be probed on its port (deploy/README.md, "Known gaps").
        let serves_tls = array_at(c, "/env")
            .iter()
            .any(|e| e["name"] == "MOVE_VALIDATOR_TLS_CERT")
            || config.contains_key("MOVE_VALIDATOR_TLS_CERT");
        for probe in ["readinessProbe", "livenessProbe"] {
            let grpc = c
                .pointer(&format!("/{probe}/grpc/port"))
                .and_then(Value::as_u64);
            let tcp = c
                .pointer(&format!("/{probe}/tcpSocket/port"))
                .and_then(Value::as_u64)
                .filter(|_| serves_tls);
            match grpc.or(tcp) {
                None => problems.push(format!(
                    "{at}: no {probe} with a native grpc probe (grpc.health.v1)"
                )),
                Some(port) if !ports.contains(&port) => problems.push(format!(
                    "{at}: the {probe} probes port {port}, which the container does not expose"
                )),
                Some(port) => {
                    probe_ports.insert(port);
                }
            }
        }
        for field in ["requests/cpu", "requests/memory", "limits/memory"] {
            if c.pointer(&format!("/resources/{field}")).is_none() {
                problems.push(format!("{at}: no resources.{}", field.replace('/', ".")));
            }
        }
        let sc = &c["securityContext"];
        if sc["readOnlyRootFilesystem"] != Value::Bool(true) {
            problems.push(format!("{at}: the root file system is not read-only"));
        }
        if sc["allowPrivilegeEscalation"] != Value::Bool(false) {
            problems.push(format!("{at}: allowPrivilegeEscalation is not false"));
        }
        if !array_at(sc, "/capabilities/drop").contains(&Value::from("ALL")) {
            problems.push(format!("{at}: capabilities are not all dropped"));
        }
        if c.get("command").is_some() {
            problems.push(format!(
                "{at}: `command` replaces the image's entrypoint (tini); use `args`"
            ));
        }
        for source in array_at(c, "/envFrom") {
            if let Some(name) = str_at(source, "/configMapRef/name")
                && !config_maps.contains(name)
            {
                problems.push(format!("{at}: envFrom names a missing ConfigMap {name}"));
            }
        }
        // The binary is the first argument (the image runs `tini -- <args>`).
        let Some(binary) = array_at(c, "/args").first().and_then(Value::as_str) else {
            problems.push(format!("{at}: no args naming the binary to run"));
            continue;
        };
        instance_problems(&at, d, c, binary, config, problems);
        match listen_setting(binary, config).map(listen_port) {
            None => problems.push(format!(
                "{at}: the ConfigMap sets no listen address for {binary}"
            )),
            Some(Err(e)) => problems.push(format!("{at}: {e}")),
            Some(Ok(port)) if probe_ports.iter().any(|p| *p != port) => problems.push(format!(
                "{at}: {binary} listens on {port} but is probed elsewhere"
            )),
            Some(Ok(_)) => {}
        }
    }
}

/// A partitioned role (its ConfigMap sets `<ROLE>_INSTANCES`) needs a distinct index per
/// pod: a StatefulSet whose replicas equal the count, each pod's `<ROLE>_INSTANCE` taken from
/// its ordinal. A Deployment would give every replica the same index.
fn instance_problems(
    at: &str,
    workload: &Value,
    container: &Value,
    binary: &str,
    config: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
) {
    let prefix = env_prefix(binary);
    let replicas = workload
        .pointer("/spec/replicas")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    // The CSA front end without NATS pairs players in its own memory: two replicas behind one
    // Service would leave players waiting on different pods unpaired. With CSA_NATS_URL its
    // pods share the lobby.
    let shared_lobby = array_at(container, "/env")
        .iter()
        .any(|e| e["name"] == "CSA_NATS_URL")
        || config.contains_key("CSA_NATS_URL");
    if binary == "csa-server" && replicas > 1 && !shared_lobby {
        problems.push(format!(
            "{at}: {replicas} replicas of csa-server without CSA_NATS_URL: its pairing is one \
                 process's (docs/csa.md, \"Running more than one\"); run one"
        ));
    }
    let leased = config
        .get(&format!("{prefix}_LEASES"))
        .is_some_and(|v| v == "true");
    let Some(count) = config.get(&format!("{prefix}_INSTANCES")) else {
        // Without a fixed share, several replicas of a worker role must share by lease;
        // otherwise each would consume every partition.
        if replicas > 1 && !leased && matches!(binary, "repetition-watcher" | "impasse-judge") {
            problems.push(format!(
                "{at}: {replicas} replicas of {binary} with neither {prefix}_LEASES nor \
                     {prefix}_INSTANCES: each would consume every partition"
            ));
        }
        return;
    };
    if leased {
        problems.push(format!(
            "{at}: {binary} sets both {prefix}_LEASES and {prefix}_INSTANCES; choose one"
        ));
    }
    if workload["kind"] != "StatefulSet" {
        problems.push(format!(
            "{at}: {binary} is partitioned ({prefix}_INSTANCES); run it as a StatefulSet, \
                 a Deployment gives every replica the same {prefix}_INSTANCE"
        ));
    }
    if count.parse::<u64>().ok() != Some(replicas) {
        problems.push(format!(
            "{at}: {prefix}_INSTANCES is {count:?} but replicas is {replicas}"
        ));
    }
    let index = array_at(container, "/env").iter().find(|e| {
        e["name"] == format!("{prefix}_INSTANCE").as_str()
            && str_at(e, "/valueFrom/fieldRef/fieldPath")
                == Some("metadata.labels['apps.kubernetes.io/pod-index']")
    });
    if index.is_none() {
        problems.push(format!(
            "{at}: {prefix}_INSTANCE does not come from the pod-index label"
        ));
    }
}

#[test]
fn a_complete_deployment_passes() {
    check(
        k8s_problems(&k8s_from(&format!("{CONFIG_MAP}---{GOOD_DEPLOYMENT}"))),
        &[],
    );
}

#[test]
fn the_csa_front_end_runs_one_replica_probed_on_its_health_port() {
    let config = "
apiVersion: v1
kind: ConfigMap
metadata: { name: cfg, namespace: shogi-arbiter }
data: { CSA_LISTEN: '0.0.0.0:4081', CSA_HEALTH_LISTEN: '0.0.0.0:50063' }
";
    let csa = GOOD_DEPLOYMENT
        .replace("args: [move-validator]", "args: [csa-server]")
        .replace(
            "ports: [{ name: grpc, containerPort: 50051 }]",
            "ports: [{ name: csa, containerPort: 4081 }, { name: health, containerPort: 50063 }]",
        )
        .replace("port: 50051", "port: 50063");
    check(k8s_problems(&k8s_from(&format!("{config}---{csa}"))), &[]);
    let two = csa.replace("spec:\n  selector", "spec:\n  replicas: 2\n  selector");
    check(
        k8s_problems(&k8s_from(&format!("{config}---{two}"))),
        &["2 replicas of csa-server"],
    );
    // Sharing the lobby on NATS, any count.
    let shared = config.replace("data: {", "data: { CSA_NATS_URL: 'nats://nats:4222',");
    check(k8s_problems(&k8s_from(&format!("{shared}---{two}"))), &[]);
    let csa_probed = csa.replace("port: 50063", "port: 4081");
    check(
        k8s_problems(&k8s_from(&format!("{config}---{csa_probed}"))),
        &["listens on 50063 but is probed elsewhere"],
    );
}

#[test]
fn deployment_faults_are_named() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "readinessProbe: { grpc: { port: 50051 } }",
            "",
            &["no readinessProbe"],
        ),
        (
            "livenessProbe: { grpc: { port: 50051 } }",
            "livenessProbe: { tcpSocket: { port: 50051 } }",
            &["no livenessProbe"],
        ),
        (
            "readinessProbe: { grpc: { port: 50051 } }",
            "readinessProbe: { grpc: { port: 9 } }",
            &["probes port 9"],
        ),
        (
            "limits: { memory: 128Mi }",
            "limits: {}",
            &["no resources.limits.memory"],
        ),
        (
            "readOnlyRootFilesystem: true",
            "readOnlyRootFilesystem: false",
            &["read-only"],
        ),
        (
            "image: shogi-arbiter:0.1.0",
            "image: shogi-arbiter:0.1.0\n          command: [x]",
            &["use `args`"],
        ),
        (
            "name: cfg } }]",
            "name: other } }]",
            &["missing ConfigMap other"],
        ),
        ("runAsUser: 10001", "runAsUser: 0", &["runAsUser"]),
        (
            "spec: { maxUnavailable: 1, selector: { matchLabels: { app: mv } } }",
            "spec: { maxUnavailable: 1, selector: { matchLabels: { app: other } } }",
            &["no PodDisruptionBudget"],
        ),
    ];
    for (from, to, expect) in cases {
        assert!(
            GOOD_DEPLOYMENT.contains(from),
            "case text {from:?} not in the fixture"
        );
        let text = format!("{CONFIG_MAP}---{}", GOOD_DEPLOYMENT.replace(from, to));
        check(k8s_problems(&k8s_from(&text)), expect);
    }
    let loopback = CONFIG_MAP.replace("0.0.0.0", "127.0.0.1");
    check(
        k8s_problems(&k8s_from(&format!("{loopback}---{GOOD_DEPLOYMENT}"))),
        &["loopback"],
    );
}

const JUDGE: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: { name: cfg, namespace: shogi-arbiter }
data: { IMPASSE_JUDGE_HEALTH_LISTEN: '0.0.0.0:50062', IMPASSE_JUDGE_INSTANCES: '2' }
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: ij, namespace: shogi-arbiter }
spec:
  replicas: 2
  serviceName: ij
  selector: { matchLabels: { app: ij } }
  template:
    metadata: { labels: { app: ij } }
    spec:
      securityContext: { runAsNonRoot: true, runAsUser: 10001 }
      containers:
        - name: ij
          image: shogi-arbiter:0.1.0
          args: [impasse-judge]
          ports: [{ name: health, containerPort: 50062 }]
          env:
            - name: IMPASSE_JUDGE_INSTANCE
              valueFrom:
                fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" }
          readinessProbe: { grpc: { port: 50062 } }
          livenessProbe: { grpc: { port: 50062 } }
          resources: { requests: { cpu: 100m, memory: 64Mi }, limits: { memory: 128Mi } }
          securityContext:
            { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
---
apiVersion: v1
kind: Service
metadata: { name: ij, namespace: shogi-arbiter }
spec: { clusterIP: None, selector: { app: ij }, ports: [{ port: 50062, targetPort: health }] }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: ij, namespace: shogi-arbiter }
spec: { maxUnavailable: 1, selector: { matchLabels: { app: ij } } }
"#;

#[test]
fn partitioned_roles_run_as_statefulsets_with_their_index() {
    check(k8s_problems(&k8s_from(JUDGE)), &[]);
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "replicas: 2",
            "replicas: 3",
            &["INSTANCES is \"2\" but replicas is 3"],
        ),
        (
            "kind: StatefulSet",
            "kind: Deployment",
            &["run it as a StatefulSet"],
        ),
        (
            "fieldPath: \"metadata.labels",
            "fieldPath: \"metadata.annotations",
            &["pod-index"],
        ),
        (
            "serviceName: ij",
            "serviceName: other",
            &["serviceName names no Service"],
        ),
    ];
    for (from, to, expect) in cases {
        assert!(
            JUDGE.contains(from),
            "case text {from:?} not in the fixture"
        );
        check(k8s_problems(&k8s_from(&JUDGE.replace(from, to))), expect);
    }
}

#[test]
fn leased_roles_run_as_deployments_and_several_replicas_share_somehow() {
    // The fixed share turned into leases: a Deployment, no index, any replica count.
    let leased = JUDGE
        .replace(
            "IMPASSE_JUDGE_INSTANCES: '2'",
            "IMPASSE_JUDGE_LEASES: 'true'",
        )
        .replace("kind: StatefulSet", "kind: Deployment")
        .replace("  serviceName: ij\n", "")
        .replace("replicas: 2", "replicas: 3");
    let leased = {
        let start = leased.find("          env:").unwrap();
        let end = leased.find("          readinessProbe").unwrap();
        format!("{}{}", &leased[..start], &leased[end..])
    };
    check(k8s_problems(&k8s_from(&leased)), &[]);
    // Neither way of sharing: every replica would consume every partition.
    check(
        k8s_problems(&k8s_from(&leased.replace(
            "IMPASSE_JUDGE_LEASES: 'true'",
            "IMPASSE_JUDGE_LEASES: 'false'",
        ))),
        &["with neither IMPASSE_JUDGE_LEASES nor IMPASSE_JUDGE_INSTANCES"],
    );
    // Both ways at once.
    check(
        k8s_problems(&k8s_from(&JUDGE.replace(
            "IMPASSE_JUDGE_INSTANCES: '2'",
            "IMPASSE_JUDGE_INSTANCES: '2', IMPASSE_JUDGE_LEASES: 'true'",
        ))),
        &["sets both"],
    );
}
