//! The stream's replicas: 3 where NATS is a cluster of 3 or more, 1 on a single server, in
//! compose and in Kubernetes.

use crate::support::{
    BINARIES, CONFIG_MAP, GOOD_DEPLOYMENT, array_at, check, k8s_from, object_at, opens_bus,
    parse_documents, str_at,
};
use serde_json::Value;

/// The variable that sets the stream's replica count. Every binary reads it, because every
/// one creates the stream when it is missing.
pub(crate) const REPLICAS_VAR: &str = "NATS_STREAM_REPLICAS";

/// The replica count the stream must be created with on `nodes` NATS servers: 3 on a
/// cluster (a majority of 2 survives one lost node), 1 on a single server (which refuses
/// more).
fn replicas_for(nodes: u64) -> &'static str {
    if nodes >= 3 { "3" } else { "1" }
}

/// Compose: every arbiter service sets the stream's replicas for the number of NATS nodes
/// (a missing variable means the default, 1).
pub(crate) fn compose_replica_problems(file: &str, c: &Value) -> Vec<String> {
    let services: Vec<(&String, &Value)> =
        object_at(c, "/services").into_iter().flatten().collect();
    let nodes = services
        .iter()
        .filter(|(_, s)| str_at(s, "/image").is_some_and(|i| i == "nats" || i.starts_with("nats:")))
        .count() as u64;
    let want = replicas_for(nodes);
    services
        .iter()
        .filter(|(_, s)| {
            let binary = array_at(s, "/command").first().and_then(Value::as_str);
            BINARIES
                .iter()
                .any(|(n, _)| Some(*n) == binary && opens_bus(n))
        })
        .filter_map(|(name, s)| {
            let got = s
                .pointer(&format!("/environment/{REPLICAS_VAR}"))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .unwrap_or_else(|| "1".to_owned());
            (got != want).then(|| {
                format!(
                    "{file}: service {name}: {REPLICAS_VAR} is {got:?} on {nodes} NATS \
                         node(s), not {want:?}"
                )
            })
        })
        .collect()
}

/// Kubernetes: the ConfigMap (and any container's own `env`) sets the stream's replicas for
/// the NATS chart's cluster size (`values`: nats-values.yaml).
pub(crate) fn k8s_replica_problems(values: &Value, objects: &[(String, Value)]) -> Vec<String> {
    let nodes = if values.pointer("/config/cluster/enabled") == Some(&Value::Bool(true)) {
        values
            .pointer("/config/cluster/replicas")
            .and_then(Value::as_u64)
            .unwrap_or(1)
    } else {
        1
    };
    let want = replicas_for(nodes);
    let mut settings = Vec::new();
    for (file, o) in objects {
        if o["kind"] == "ConfigMap"
            && let Some(v) = str_at(o, &format!("/data/{REPLICAS_VAR}"))
        {
            settings.push((file.clone(), v.to_owned()));
        }
        for c in array_at(o, "/spec/template/spec/containers") {
            for e in array_at(c, "/env") {
                if str_at(e, "/name") == Some(REPLICAS_VAR) {
                    let v = str_at(e, "/value").unwrap_or("").to_owned();
                    settings.push((file.clone(), v));
                }
            }
        }
    }
    if settings.is_empty() && want != "1" {
        return vec![format!(
            "the chart: no {REPLICAS_VAR}: the stream would be created with 1 replica on a \
                 {nodes}-node NATS cluster; set nats.streamReplicas to {want:?}"
        )];
    }
    settings
        .into_iter()
        .filter(|(_, v)| v != want)
        .map(|(file, v)| {
            format!("{file}: {REPLICAS_VAR} is {v:?} on a {nodes}-node NATS cluster, not {want:?}")
        })
        .collect()
}

#[test]
fn the_stream_is_replicated_where_nats_is_a_cluster() {
    let compose = |nodes: usize, replicas: Option<&str>| {
        let mut text = String::from("services:\n");
        for i in 0..nodes {
            text.push_str(&format!("  nats-{i}: {{ image: 'nats:2.10-alpine' }}\n"));
        }
        let env = replicas.map_or(String::new(), |r| format!("{REPLICAS_VAR}: '{r}'"));
        text.push_str(&format!(
            "  judge: {{ command: [impasse-judge], environment: {{ {env} }} }}\n"
        ));
        compose_replica_problems("c.yml", &parse_documents(&text).unwrap()[0])
    };
    check(compose(3, Some("3")), &[]);
    check(compose(1, None), &[]);
    check(compose(1, Some("1")), &[]);
    check(compose(3, None), &["is \"1\" on 3 NATS node(s), not \"3\""]);
    check(compose(3, Some("1")), &["not \"3\""]);
    check(compose(1, Some("3")), &["not \"1\""]);

    let values = |nodes: u64| serde_json::json!({ "config": { "cluster": { "enabled": true, "replicas": nodes } } });
    let config_with =
        |r: &str| CONFIG_MAP.replace("data: {", &format!("data: {{ {REPLICAS_VAR}: '{r}',"));
    let with = |r: &str| k8s_from(&config_with(r));
    check(k8s_replica_problems(&values(3), &with("3")), &[]);
    check(k8s_replica_problems(&values(3), &with("1")), &["not \"3\""]);
    check(
        k8s_replica_problems(&values(3), &k8s_from(CONFIG_MAP)),
        &["no NATS_STREAM_REPLICAS"],
    );
    check(
        k8s_replica_problems(&Value::Null, &k8s_from(CONFIG_MAP)),
        &[],
    );
    check(k8s_replica_problems(&values(1), &with("3")), &["not \"1\""]);
    let overridden = format!(
            "{}---{}",
            config_with("3"),
            GOOD_DEPLOYMENT.replace(
                "envFrom: [{ configMapRef: { name: cfg } }]",
                "envFrom: [{ configMapRef: { name: cfg } }]\n          env: [{ name: NATS_STREAM_REPLICAS, value: '1' }]"
            )
        );
    check(
        k8s_replica_problems(&values(3), &k8s_from(&overridden)),
        &["not \"3\""],
    );
}
