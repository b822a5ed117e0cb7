//! The names the NATS chart's Prometheus exporter gives NATS's metrics.

use super::Exported;
use serde_json::Value;

/// The NATS chart's exporter: prometheus-nats-exporter 0.15.0, the image of the NATS Helm
/// chart 1.2.1 (`promExporter`) that deploy/k8s/nats-values.yaml installs, run with `-connz
/// -routez -subz -varz -prefix=nats -use_internal_server_id -jsz=all` by the chart and
/// `-healthz` by nats-values.yaml. The names and labels below are read from its source
/// (github.com/nats-io/prometheus-nats-exporter, tag v0.15.0): `collector/jsz.go`
/// (`newJszCollector`: `prometheus.BuildFQName(system, "server" | "stream" | "consumer", ...)`
/// with the system `jetstream` replaced by the prefix) and `collector/healthz.go` (`healthz`,
/// `status`, label `server_id`). Without `-prefix=nats` they would start with `jetstream_` and
/// `gnatsd_`. The exporter cannot run here (a Go program whose modules this machine cannot
/// fetch), so these names are this list; its `/varz` names come from a real nats-server
/// ([`varz_metrics`]).
pub(super) const NATS_EXPORTER: &[(&str, &[&str])] = &[
    ("nats_server_jetstream_disabled", JSZ_SERVER),
    ("nats_server_total_streams", JSZ_SERVER),
    ("nats_server_total_consumers", JSZ_SERVER),
    ("nats_server_total_messages", JSZ_SERVER),
    ("nats_server_total_message_bytes", JSZ_SERVER),
    ("nats_server_max_memory", JSZ_SERVER),
    ("nats_server_max_storage", JSZ_SERVER),
    ("nats_stream_total_messages", JSZ_STREAM),
    ("nats_stream_total_bytes", JSZ_STREAM),
    ("nats_stream_first_seq", JSZ_STREAM),
    ("nats_stream_last_seq", JSZ_STREAM),
    ("nats_stream_consumer_count", JSZ_STREAM),
    ("nats_consumer_delivered_consumer_seq", JSZ_CONSUMER),
    ("nats_consumer_delivered_stream_seq", JSZ_CONSUMER),
    ("nats_consumer_num_ack_pending", JSZ_CONSUMER),
    ("nats_consumer_num_redelivered", JSZ_CONSUMER),
    ("nats_consumer_num_waiting", JSZ_CONSUMER),
    ("nats_consumer_num_pending", JSZ_CONSUMER),
    ("nats_consumer_ack_floor_stream_seq", JSZ_CONSUMER),
    ("nats_consumer_ack_floor_consumer_seq", JSZ_CONSUMER),
    ("nats_healthz_status", &["server_id"]),
];
pub(super) const JSZ_SERVER: &[&str] = &[
    "server_id",
    "server_name",
    "cluster",
    "domain",
    "meta_leader",
    "is_meta_leader",
];
pub(super) const JSZ_STREAM: &[&str] = &[
    "server_id",
    "server_name",
    "cluster",
    "domain",
    "meta_leader",
    "is_meta_leader",
    "account",
    "account_id",
    "stream_name",
    "stream_leader",
    "is_stream_leader",
];
pub(super) const JSZ_CONSUMER: &[&str] = &[
    "server_id",
    "server_name",
    "cluster",
    "domain",
    "meta_leader",
    "is_meta_leader",
    "account",
    "account_id",
    "stream_name",
    "stream_leader",
    "is_stream_leader",
    "consumer_name",
    "consumer_leader",
    "is_consumer_leader",
    "consumer_desc",
];

/// The exporter's names for a nats-server's `/varz`, by its rule for `/varz`
/// (`collector/collector.go`, `objectToMetrics`, v0.15.0): each number at any depth is a gauge
/// named by its path (`jetstream.stats.storage` -> `nats_varz_jetstream_stats_storage`); a
/// string under one of a few keys is a gauge too, of its time when it is one (`start`), else
/// with the string as its `value` label; arrays and booleans are skipped; every gauge has the
/// label `server_id`.
pub(super) fn varz_metrics(varz: &Value, path: &[String], out: &mut Exported) {
    const SKIP: &[&str] = &[
        "leaf",
        "trusted_operators_claim",
        "cluster_tls_timeout",
        "cluster_cluster_port",
        "cluster_auth_timeout",
        "gateway_port",
        "gateway_auth_timeout",
        "gateway_tls_timeout",
        "gateway_connect_retries",
    ];
    const LABEL_KEYS: &[&str] = &[
        "server_id",
        "server_name",
        "version",
        "domain",
        "leader",
        "name",
        "start",
        "config_load_time",
    ];
    for (key, value) in varz.as_object().into_iter().flatten() {
        let mut path = path.to_vec();
        path.push(key.clone());
        let mut fqn = path.join("_").replace('/', "_");
        while fqn.contains("__") {
            fqn = fqn.replace("__", "_");
        }
        let fqn = fqn.trim_matches('_').to_owned();
        if SKIP.contains(&fqn.as_str()) {
            continue;
        }
        let mut labels = vec!["server_id"];
        match value {
            Value::Number(_) => {}
            Value::String(s) if LABEL_KEYS.contains(&key.as_str()) => {
                // Go's RFC 3339 time: 2026-12-06T02:14:40.123Z.
                let is_time = s.len() > 19 && s.as_bytes()[4] == b'-' && s.as_bytes()[10] == b'T';
                if !is_time {
                    labels.push("value");
                }
            }
            Value::Object(_) => {
                varz_metrics(value, &path, out);
                continue;
            }
            _ => continue,
        }
        let entry = out.entry(format!("nats_varz_{fqn}")).or_default();
        for l in labels {
            entry.entry(l.to_owned()).or_default();
        }
    }
}
