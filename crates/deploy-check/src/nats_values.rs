//! The values for the NATS Helm chart: a JetStream cluster of 3 on file storage, a liveness
//! probe on the whole `/healthz`, and servers that restart only when the upgrade says so.

use crate::support::{array_at, parse_documents, str_at};
use serde_json::Value;
use std::path::Path;

/// Checks the values for the NATS Helm chart.
pub(crate) fn nats_values_problems(file: &str, v: &Value) -> Vec<String> {
    let expect: &[(&str, Value)] = &[
        ("/config/cluster/enabled", Value::Bool(true)),
        ("/config/cluster/replicas", Value::from(3)),
        ("/config/jetstream/enabled", Value::Bool(true)),
        ("/config/jetstream/fileStore/enabled", Value::Bool(true)),
        ("/config/jetstream/fileStore/pvc/enabled", Value::Bool(true)),
        ("/config/jetstream/memoryStore/enabled", Value::Bool(false)),
        ("/fullnameOverride", Value::from("nats")),
        // The servers restart only when deploy/k8s/upgrade-nats.sh says so, each once every
        // replica is current (deploy/STREAMS.md, "Upgrading the servers").
        (
            "/statefulSet/merge/spec/updateStrategy/type",
            Value::from("OnDelete"),
        ),
    ];
    let mut problems: Vec<String> = expect
        .iter()
        .filter(|(pointer, want)| v.pointer(pointer) != Some(want))
        .map(|(pointer, want)| format!("{file}: {pointer} is not {want}"))
        .collect();
    // The liveness probe asks the whole /healthz, so that a server that stays behind on
    // its streams and consumers is restarted (deploy/STREAMS.md, "Upgrading the servers").
    let liveness = array_at(v, "/container/patch")
        .iter()
        .find(|op| str_at(op, "/path") == Some("/livenessProbe"));
    match liveness {
        Some(op)
            if str_at(op, "/op") == Some("replace")
                && str_at(op, "/value/httpGet/path") == Some("/healthz")
                && op
                    .pointer("/value/failureThreshold")
                    .and_then(Value::as_u64)
                    .is_some() => {}
        _ => problems.push(format!(
            "{file}: /container/patch does not replace /livenessProbe with one on /healthz"
        )),
    }
    problems
}

#[test]
fn the_nats_values_liveness_probe_asks_the_whole_healthz() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("deploy/k8s/nats-values.yaml"))
        .expect("read nats-values.yaml");
    let shipped = parse_documents(&text).unwrap().remove(0);
    assert_eq!(nats_values_problems("v", &shipped), Vec::<String>::new());
    let mut chart_default = shipped.clone();
    let patch = chart_default["container"]["patch"].as_array_mut().unwrap();
    patch.retain(|op| op["path"] != "/livenessProbe");
    let weaker = {
        let mut v = shipped.clone();
        let patch = v["container"]["patch"].as_array_mut().unwrap();
        for op in patch.iter_mut().filter(|op| op["path"] == "/livenessProbe") {
            op["value"]["httpGet"]["path"] = "/healthz?js-enabled-only=true".into();
        }
        v
    };
    for broken in [chart_default, weaker] {
        let problems = nats_values_problems("v", &broken);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("/livenessProbe"), "{problems:?}");
    }
    let rolling = {
        let mut v = shipped.clone();
        v["statefulSet"]["merge"]["spec"]["updateStrategy"]["type"] = "RollingUpdate".into();
        v
    };
    let problems = nats_values_problems("v", &rolling);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("updateStrategy"), "{problems:?}");
}
