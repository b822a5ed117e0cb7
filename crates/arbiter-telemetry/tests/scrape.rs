//! The Prometheus endpoint, scraped over real HTTP on loopback, its text read by the Prometheus
//! project's own Python parser (`prometheus-client`, installed by tools/setup.sh); and the JSON
//! log lines' trace ids without the OpenTelemetry layer (no OTLP endpoint: the caller's trace
//! carried through).

use arbiter_telemetry::{Builder, Config, LogFormat, metrics, propagation};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;
use test_support::LogBuffer;

struct Installed {
    guard: arbiter_telemetry::Guard,
    log: LogBuffer,
    _runtime: tokio::runtime::Runtime,
}

/// The telemetry of this test binary: JSON logs into a buffer, metrics served on a free port,
/// no OTLP endpoint; on a runtime of its own, which every test shares.
fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let log = LogBuffer::default();
        let mut config = Config::new("scrape-test");
        config.log_format = LogFormat::Json;
        config.metrics_addr = Some("127.0.0.1:0".parse().unwrap());
        let buffer = log.clone();
        let guard = runtime.block_on(async {
            Builder::new(config)
                .log_writer(move || buffer.clone())
                .install()
                .expect("install telemetry")
        });
        Installed {
            guard,
            log,
            _runtime: runtime,
        }
    })
}

fn addr() -> SocketAddr {
    installed()
        .guard
        .metrics_addr()
        .expect("the metrics endpoint is served")
}

/// One HTTP/1.1 request over a plain TCP connection: the status line's code, the headers
/// (lower-case names) and the body.
fn http(request: &str) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(addr()).expect("connect to the metrics endpoint");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8(raw).expect("an answer in UTF-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn get(path: &str) -> (u16, Vec<(String, String)>, String) {
    http(&format!(
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    ))
}

/// The samples of a scrape as the Prometheus Python client parses them: `(name, labels,
/// value)`, one a line.
fn parse_with_prometheus_client(text: &str) -> Vec<(String, serde_json::Value, f64)> {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        print(json.dumps([s.name, s.labels, s.value]))
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is needed to parse the scrape (make setup installs prometheus-client)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the Prometheus client's parser refused the scrape (or is missing: `make setup` \
         installs prometheus-client): {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v[0].as_str().unwrap().to_owned(),
                v[1].clone(),
                v[2].as_f64().unwrap(),
            )
        })
        .collect()
}

fn sample(
    samples: &[(String, serde_json::Value, f64)],
    name: &str,
    labels: &[(&str, &str)],
) -> Option<f64> {
    samples
        .iter()
        .find(|(n, l, _)| n == name && labels.iter().all(|(k, v)| l[*k] == *v))
        .map(|(_, _, v)| *v)
}

#[test]
fn the_metrics_are_served_with_their_prometheus_names() {
    installed();
    let m = metrics();
    m.count_move("SubmitMove", "accepted", None);
    m.count_move("SubmitMove", "rejected", Some("two_pawns"));
    m.count_move("SubmitMove", "rejected", Some("two_pawns"));
    m.record_rpc("SubmitMove", tonic::Code::Ok, 0.003);
    m.record_rpc("SubmitMove", tonic::Code::NotFound, 0.2);
    m.record_process("impasse-judge-p3", "impasse-judge", 0.0007);
    m.record_lag("impasse-judge-p3", "impasse-judge", 42);
    m.count_verdict("repetition", "repetition-watcher");

    let (status, headers, body) = get("/metrics");
    assert_eq!(status, 200, "{body}");
    let content_type = headers.iter().find(|(k, _)| k == "content-type");
    assert_eq!(
        content_type.map(|(_, v)| v.as_str()),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let samples = parse_with_prometheus_client(&body);
    let submit = "shogi.v1.MoveValidator/SubmitMove";
    assert_eq!(
        sample(
            &samples,
            "shogi_moves_total",
            &[
                ("rpc_method", submit),
                ("shogi_move_outcome", "rejected"),
                ("shogi_illegal_kind", "two_pawns")
            ]
        ),
        Some(2.0),
        "{body}"
    );
    assert_eq!(
        sample(
            &samples,
            "shogi_moves_total",
            &[("shogi_move_outcome", "accepted")]
        ),
        Some(1.0)
    );
    // The histogram: seconds, by method and status name, with its buckets.
    let ok = [
        ("rpc_system_name", "grpc"),
        ("rpc_method", submit),
        ("rpc_response_status_code", "OK"),
    ];
    assert_eq!(
        sample(&samples, "rpc_server_call_duration_seconds_count", &ok),
        Some(1.0),
        "{body}"
    );
    assert_eq!(
        sample(
            &samples,
            "rpc_server_call_duration_seconds_bucket",
            &[("rpc_response_status_code", "OK"), ("le", "0.005")]
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &samples,
            "rpc_server_call_duration_seconds_count",
            &[
                ("rpc_response_status_code", "NOT_FOUND"),
                ("error_type", "NOT_FOUND")
            ]
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &samples,
            "messaging_process_duration_seconds_count",
            &[
                ("messaging_system", "nats"),
                ("messaging_operation_name", "process"),
                ("messaging_consumer_group_name", "impasse-judge-p3"),
                ("shogi_role", "impasse-judge"),
            ]
        ),
        Some(1.0),
        "{body}"
    );
    assert_eq!(
        sample(
            &samples,
            "shogi_consumer_lag",
            &[("messaging_consumer_group_name", "impasse-judge-p3")]
        ),
        Some(42.0),
        "{body}"
    );
    assert_eq!(
        sample(
            &samples,
            "shogi_verdicts_total",
            &[
                ("shogi_result_code", "repetition"),
                ("shogi_announcer", "repetition-watcher")
            ]
        ),
        Some(1.0)
    );
    // The resource: the service's name.
    assert_eq!(
        sample(&samples, "target_info", &[("service_name", "scrape-test")]),
        Some(1.0),
        "{body}"
    );

    // A gauge shows its latest value at the next scrape.
    m.record_lag("impasse-judge-p3", "impasse-judge", 5);
    let (_, _, body) = get("/metrics");
    assert_eq!(
        sample(
            &parse_with_prometheus_client(&body),
            "shogi_consumer_lag",
            &[("messaging_consumer_group_name", "impasse-judge-p3")]
        ),
        Some(5.0)
    );
}

#[test]
fn other_paths_methods_and_garbage_are_answered_and_harmless() {
    installed();
    assert_eq!(get("/").0, 404);
    assert_eq!(get("/metrics/x").0, 404);
    let (status, headers, _) = http(
        "POST /metrics HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 405);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "allow" && v == "GET, HEAD")
    );
    // Not HTTP at all: answered 400 (or closed), and the endpoint goes on serving.
    let mut stream = TcpStream::connect(addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(b"\x00\xff garbage\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 400"),
        "{answer}"
    );
    assert_eq!(get("/metrics").0, 200);
}

#[test]
fn a_metrics_address_in_use_fails_the_start() {
    let taken = addr();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut config = Config::new("scrape-test");
    config.metrics_addr = Some(taken);
    let err = runtime
        .block_on(async { Builder::new(config).install() })
        .expect_err("the port is taken");
    assert!(
        matches!(err, arbiter_telemetry::Error::MetricsBind { addr, .. } if addr == taken),
        "{err}"
    );
}

#[test]
fn json_lines_name_the_callers_trace_without_the_opentelemetry_layer() {
    let installed = installed();
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let headers = vec![(
        "traceparent".to_owned(),
        format!("00-{trace}-b7ad6b7169203331-01"),
    )];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(propagation::within(
        tracing::info_span!("work", game_id = "g-traced"),
        propagation::from_headers(&headers),
        async { tracing::info!("inside the caller's trace") },
    ));
    tracing::info!("outside any trace");
    let lines: Vec<serde_json::Value> = String::from_utf8(installed.log.bytes())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect();
    let find = |message: &str| {
        lines
            .iter()
            .find(|l| l["fields"]["message"] == message)
            .unwrap_or_else(|| panic!("no line {message:?} in {lines:#?}"))
            .clone()
    };
    let inside = find("inside the caller's trace");
    assert_eq!(inside["trace_id"], trace);
    // No span of ours is exported without the layer: no span id to point at.
    assert!(inside.get("span_id").is_none(), "{inside}");
    assert_eq!(inside["span"]["game_id"], "g-traced");
    let outside = find("outside any trace");
    assert!(outside.get("trace_id").is_none(), "{outside}");
}
