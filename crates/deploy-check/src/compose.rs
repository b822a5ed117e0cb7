//! The compose file: healthchecks, declared volumes, three NATS nodes, the partitioned roles'
//! instances.

use crate::support::{
    BINARIES, array_at, check, listen_port, listen_setting, object_at, parse_documents, str_at,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Checks a compose file.
/// More than one `csa-server` shares the lobby only on NATS: every one sets `CSA_NATS_URL`.
fn csa_server_problems<'a>(file: &str, services: impl Iterator<Item = &'a Value>) -> Vec<String> {
    let csa_servers: Vec<&Value> = services
        .filter(|s| array_at(s, "/command").first().and_then(Value::as_str) == Some("csa-server"))
        .collect();
    let shared = csa_servers
        .iter()
        .all(|s| s.pointer("/environment/CSA_NATS_URL").is_some());
    if csa_servers.len() > 1 && !shared {
        return vec![format!(
            "{file}: {} csa-server services without CSA_NATS_URL: their pairing is each \
                 process's (docs/csa.md, \"Running more than one\"); run one",
            csa_servers.len()
        )];
    }
    Vec::new()
}

pub(crate) fn compose_problems(file: &str, c: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(services) = object_at(c, "/services") else {
        return vec![format!("{file}: no services")];
    };
    let volumes: BTreeSet<&str> = object_at(c, "/volumes")
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    let mut nats_nodes = 0;
    for (name, s) in services {
        let at = format!("{file}: service {name}");
        let test = s.pointer("/healthcheck/test");
        let test_text = match test {
            Some(Value::Array(words)) if !words.is_empty() => words
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            Some(Value::String(text)) if !text.is_empty() => text.clone(),
            // A one-shot job (the streams setup) runs to its end; services wait for it to
            // complete, not to be healthy.
            _ if s.get("restart").and_then(Value::as_str) == Some("no") => String::new(),
            _ => {
                problems.push(format!("{at} has no healthcheck"));
                String::new()
            }
        };
        if s.pointer("/healthcheck/disable") == Some(&Value::Bool(true)) {
            problems.push(format!("{at} disables its healthcheck"));
        }
        match str_at(s, "/image") {
            None => problems.push(format!("{at} names no image")),
            Some(image) => {
                if image == "nats" || image.starts_with("nats:") {
                    nats_nodes += 1;
                }
            }
        }
        for v in array_at(s, "/volumes").iter().filter_map(Value::as_str) {
            let source = v.split(':').next().unwrap_or("");
            let is_path = source.starts_with('.') || source.starts_with('/');
            if !is_path && !volumes.contains(source) {
                problems.push(format!(
                    "{at} mounts volume {source:?}, not declared under volumes"
                ));
            }
        }
        for (dep, cond) in object_at(s, "/depends_on").into_iter().flatten() {
            match services.get(dep) {
                None => problems.push(format!("{at} depends on a missing service {dep}")),
                Some(d)
                    if cond["condition"] == "service_healthy" && d.get("healthcheck").is_none() =>
                {
                    problems.push(format!(
                        "{at} waits for {dep} to be healthy, which has no healthcheck"
                    ))
                }
                Some(_) => {}
            }
        }
        // The image runs `tini -- <command>`: the first word is the binary.
        let binary = array_at(s, "/command").first().and_then(Value::as_str);
        if let Some(binary) = binary.filter(|b| BINARIES.iter().any(|(n, _)| n == b)) {
            let env: BTreeMap<String, String> = object_at(s, "/environment")
                .into_iter()
                .flatten()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                    )
                })
                .collect();
            match listen_setting(binary, &env).map(listen_port) {
                None => problems.push(format!("{at} sets no listen address for {binary}")),
                Some(Err(e)) => problems.push(format!("{at}: {e}")),
                Some(Ok(port)) if !test_text.contains(&format!("/{port}")) => problems.push(
                    format!("{at}: {binary} listens on {port} but the healthcheck tests elsewhere"),
                ),
                Some(Ok(_)) => {}
            }
            if s.get("read_only") != Some(&Value::Bool(true)) {
                problems.push(format!("{at} does not run on a read-only root file system"));
            }
        }
        if s.pointer("/deploy/replicas").and_then(Value::as_u64) > Some(1) {
            problems.push(format!(
                "{at}: deploy.replicas would give every replica the same environment"
            ));
        }
    }
    // The partitioned roles: two instances each, indices 0..n, count n.
    for role in ["repetition-watcher", "impasse-judge"] {
        let prefix = role.to_ascii_uppercase().replace('-', "_");
        let instances: Vec<&Value> = services
            .values()
            .filter(|s| array_at(s, "/command").first().and_then(Value::as_str) == Some(role))
            .collect();
        if instances.len() != 2 {
            problems.push(format!(
                "{file}: {} instances of {role}, not 2",
                instances.len()
            ));
        }
        let setting = |s: &Value, key: &str| {
            s.pointer(&format!("/environment/{prefix}_{key}"))
                .and_then(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .or_else(|| v.as_u64().map(|n| n.to_string()))
                })
        };
        let mut indices: Vec<String> = instances
            .iter()
            .map(|s| setting(s, "INSTANCE").unwrap_or_default())
            .collect();
        indices.sort();
        let want: Vec<String> = (0..instances.len()).map(|i| i.to_string()).collect();
        if indices != want {
            problems.push(format!(
                "{file}: {role} instances have {prefix}_INSTANCE {indices:?}, not {want:?}"
            ));
        }
        let count = instances.len().to_string();
        if instances
            .iter()
            .any(|s| setting(s, "INSTANCES") != Some(count.clone()))
        {
            problems.push(format!(
                "{file}: every {role} instance must set {prefix}_INSTANCES to {count}"
            ));
        }
    }
    problems.extend(csa_server_problems(file, services.values()));
    if nats_nodes != 3 {
        problems.push(format!("{file}: {nats_nodes} NATS nodes, not 3"));
    }
    problems
}

#[test]
fn compose_faults_are_named() {
    let good = "
services:
  nats-1: { image: 'nats:2.10-alpine', healthcheck: { test: [CMD, wget, x] }, volumes: ['n1:/data'] }
  nats-2: { image: 'nats:2.10-alpine', healthcheck: { test: [CMD, wget, x] } }
  nats-3: { image: 'nats:2.10-alpine', healthcheck: { test: [CMD, wget, x] } }
  judge-0: &judge
    image: shogi-arbiter:0.1.0
    command: [impasse-judge]
    read_only: true
    environment: &judge-env
      { IMPASSE_JUDGE_HEALTH_LISTEN: '0.0.0.0:50062', IMPASSE_JUDGE_INSTANCES: '2', IMPASSE_JUDGE_INSTANCE: '0' }
    healthcheck: { test: [CMD, bash, -c, 'exec 3<>/dev/tcp/127.0.0.1/50062'] }
    depends_on: { nats-1: { condition: service_healthy } }
  judge-1: { <<: *judge, environment: { <<: *judge-env, IMPASSE_JUDGE_INSTANCE: '1' } }
  watcher-0: &watcher
    image: shogi-arbiter:0.1.0
    command: [repetition-watcher]
    read_only: true
    environment: &watcher-env
      { REPETITION_WATCHER_HEALTH_LISTEN: '0.0.0.0:50061', REPETITION_WATCHER_INSTANCES: '2', REPETITION_WATCHER_INSTANCE: '0' }
    healthcheck: { test: [CMD, bash, -c, 'exec 3<>/dev/tcp/127.0.0.1/50061'] }
  watcher-1: { <<: *watcher, environment: { <<: *watcher-env, REPETITION_WATCHER_INSTANCE: '1' } }
  csa-server: &csa
    image: shogi-arbiter:0.1.0
    command: [csa-server]
    read_only: true
    environment: { CSA_LISTEN: '0.0.0.0:4081', CSA_HEALTH_LISTEN: '0.0.0.0:50063' }
    healthcheck: { test: [CMD, bash, -c, 'exec 3<>/dev/tcp/127.0.0.1/50063'] }
volumes: { n1: }
";
    let compose = |text: &str| compose_problems("c.yml", &parse_documents(text).unwrap()[0]);
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "healthcheck: { test: [CMD, wget, x] }, volumes",
            "volumes",
            &[
                "nats-1 has no healthcheck",
                "waits for nats-1",
                "waits for nats-1",
            ],
        ),
        ("volumes: { n1: }", "", &["volume \"n1\""]),
        (
            "IMPASSE_JUDGE_INSTANCE: '1'",
            "IMPASSE_JUDGE_INSTANCE: '0'",
            &["[\"0\", \"0\"]"],
        ),
        (
            "  judge-1:",
            "  #judge-1:",
            &[
                "1 instances of impasse-judge",
                "IMPASSE_JUDGE_INSTANCES to 1",
            ],
        ),
        (
            "    read_only: true\n    environment: &judge-env",
            "    read_only: true\n    deploy: { replicas: 2 }\n    environment: &judge-env",
            &["deploy.replicas", "deploy.replicas"],
        ),
        (
            "tcp/127.0.0.1/50062",
            "tcp/127.0.0.1/1",
            &["healthcheck tests elsewhere", "healthcheck tests elsewhere"],
        ),
        ("  nats-3:", "  #nats-3:", &["2 NATS nodes"]),
        (
            "volumes: { n1: }",
            "  csa-server-2: { <<: *csa }\nvolumes: { n1: }",
            &["2 csa-server services"],
        ),
    ];
    check(compose(good), &[]);
    for (from, to, expect) in cases {
        assert!(good.contains(from), "case text {from:?} not in the fixture");
        check(compose(&good.replace(from, to)), expect);
    }
}
