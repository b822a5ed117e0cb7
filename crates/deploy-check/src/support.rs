//! What every check shares: the repository's root, the YAML reader (every document, merge keys
//! applied), JSON pointer accessors, the listen-address rules, the fixtures of a good
//! Kubernetes deployment, and the two ways a test states its verdict (`fail_on`, `check`).

use serde::Deserialize as _;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The binaries of the image whose settings the deploy files carry, with the crate that
/// defines each one's flags.
pub(crate) const BINARIES: &[(&str, &str)] = &[
    ("move-validator", "crates/move-validator"),
    ("repetition-watcher", "crates/repetition-watcher"),
    ("impasse-judge", "crates/impasse-judge"),
    ("csa-server", "crates/csa-server"),
];

/// Whether `binary` opens the bus (and so creates the streams when they are missing, with the
/// replicas it is given): every one but the CSA front end, which reaches the arbiter over its
/// gRPC contract only.
pub(crate) fn opens_bus(binary: &str) -> bool {
    binary != "csa-server"
}

/// The prefix of `binary`'s environment variables: its name in upper case with `_` for `-`
/// (`MOVE_VALIDATOR`), but `CSA` for the CSA front end, whose flags `shogi-arbiter serve`
/// shares (`CSA_MAX_MOVES`).
pub(crate) fn env_prefix(binary: &str) -> String {
    if binary == "csa-server" {
        return "CSA".to_owned();
    }
    binary.to_ascii_uppercase().replace('-', "_")
}

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.yml` and `.yaml` file under `dir`, sorted.
pub(crate) fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yml" | "yaml")
            ) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every document of a YAML text, `<<` merge keys applied, as JSON values; empty documents
/// (a file of comments) are skipped.
pub(crate) fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    let mut docs = Vec::new();
    for de in serde_norway::Deserializer::from_str(text) {
        let mut doc = serde_norway::Value::deserialize(de).map_err(|e| e.to_string())?;
        // One pass merges one level: a merged mapping that has its own `<<` (compose's
        // `x-watcher` merging `x-arbiter`) brings that key along, so repeat until none is
        // left, as Compose does.
        for _ in 0..8 {
            doc.apply_merge().map_err(|e| e.to_string())?;
            if !has_merge_key(&doc) {
                break;
            }
        }
        if has_merge_key(&doc) {
            return Err("merge keys (<<) nested more than 8 deep".to_owned());
        }
        if doc.is_null() {
            continue;
        }
        docs.push(serde_json::to_value(&doc).map_err(|e| e.to_string())?);
    }
    Ok(docs)
}

fn has_merge_key(v: &serde_norway::Value) -> bool {
    match v {
        serde_norway::Value::Mapping(m) => m.contains_key("<<") || m.values().any(has_merge_key),
        serde_norway::Value::Sequence(items) => items.iter().any(has_merge_key),
        serde_norway::Value::Tagged(t) => has_merge_key(&t.value),
        _ => false,
    }
}

pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

pub(crate) fn array_at<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub(crate) fn object_at<'a>(
    v: &'a Value,
    pointer: &str,
) -> Option<&'a serde_json::Map<String, Value>> {
    v.pointer(pointer).and_then(Value::as_object)
}

/// The port of a `host:port` listen address, refusing loopback (unreachable from outside
/// the container, so from probes and other containers).
pub(crate) fn listen_port(address: &str) -> Result<u64, String> {
    let (host, port) = address
        .rsplit_once(':')
        .ok_or_else(|| format!("listen address {address:?} has no port"))?;
    if host.starts_with("127.") || host == "localhost" || host == "[::1]" {
        return Err(format!(
            "listen address {address:?} is loopback: probes and other containers cannot reach it"
        ));
    }
    port.parse()
        .map_err(|_| format!("listen address {address:?} has no numeric port"))
}

/// The variable that holds the address `binary`'s health is served on, with its value: its
/// health endpoint (`<PREFIX>_HEALTH_LISTEN`) where it has one of its own, else its gRPC
/// service's (`<PREFIX>_LISTEN`), which serves health beside it.
pub(crate) fn listen_setting<'a>(
    binary: &str,
    env: &'a BTreeMap<String, String>,
) -> Option<&'a str> {
    let prefix = env_prefix(binary);
    env.get(&format!("{prefix}_HEALTH_LISTEN"))
        .or_else(|| env.get(&format!("{prefix}_LISTEN")))
        .map(String::as_str)
}

pub(crate) fn fail_on(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

/// One check on one input: the problems found must contain each expected phrase, and there
/// must be as many problems as phrases (none unexpected).
pub(crate) fn check(problems: Vec<String>, expect: &[&str]) {
    for phrase in expect {
        assert!(
            problems.iter().any(|p| p.contains(phrase)),
            "expected a problem containing {phrase:?}, got {problems:#?}"
        );
    }
    assert_eq!(problems.len(), expect.len(), "problems: {problems:#?}");
}

pub(crate) fn k8s_from(text: &str) -> Vec<(String, Value)> {
    parse_documents(text)
        .expect("test YAML parses")
        .into_iter()
        .map(|d| ("t.yaml".to_owned(), d))
        .collect()
}

pub(crate) const CONFIG_MAP: &str = "
apiVersion: v1
kind: ConfigMap
metadata: { name: cfg, namespace: shogi-arbiter }
data: { MOVE_VALIDATOR_LISTEN: '0.0.0.0:50051' }
";

pub(crate) const GOOD_DEPLOYMENT: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: { name: mv, namespace: shogi-arbiter }
spec:
  selector: { matchLabels: { app: mv } }
  template:
    metadata: { labels: { app: mv } }
    spec:
      securityContext: { runAsNonRoot: true, runAsUser: 10001 }
      containers:
        - name: mv
          image: shogi-arbiter:0.1.0
          args: [move-validator]
          ports: [{ name: grpc, containerPort: 50051 }]
          envFrom: [{ configMapRef: { name: cfg } }]
          readinessProbe: { grpc: { port: 50051 } }
          livenessProbe: { grpc: { port: 50051 } }
          resources:
            requests: { cpu: 100m, memory: 64Mi }
            limits: { memory: 128Mi }
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities: { drop: [ALL] }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: mv, namespace: shogi-arbiter }
spec: { maxUnavailable: 1, selector: { matchLabels: { app: mv } } }
";

#[test]
fn nested_merge_keys_are_resolved() {
    let docs =
        parse_documents("a: &a { x: 1, y: 1 }\nb: &b { <<: *a, y: 2 }\nc: { <<: *b, z: 3 }\n")
            .unwrap();
    assert_eq!(docs[0]["c"], serde_json::json!({ "x": 1, "y": 2, "z": 3 }));
}
