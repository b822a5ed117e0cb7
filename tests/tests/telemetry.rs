//! `shogi-arbiter serve` with `--otlp-endpoint` and `--log-format json`: a move's spans and the
//! metrics reach an OTLP collector (a fake one on loopback, the real gRPC services), in the
//! caller's trace, and flushed by the shutdown; the log lines are JSON naming the game.

use arbiter_tests::{bin, first_line};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
    metrics_service_server::{MetricsService, MetricsServiceServer},
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
    trace_service_server::{TraceService, TraceServiceServer},
};
use opentelemetry_proto::tonic::trace::v1::Span;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(20);

/// What the collector received.
#[derive(Debug, Default, Clone)]
struct Collector {
    spans: Arc<Mutex<Vec<Span>>>,
    metric_names: Arc<Mutex<Vec<String>>>,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.spans.lock().unwrap();
        for rs in request.into_inner().resource_spans {
            for ss in rs.scope_spans {
                spans.extend(ss.spans);
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

#[tonic::async_trait]
impl MetricsService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let mut names = self.metric_names.lock().unwrap();
        for rm in request.into_inner().resource_metrics {
            for sm in rm.scope_metrics {
                names.extend(sm.metrics.into_iter().map(|m| m.name));
            }
        }
        Ok(tonic::Response::new(ExportMetricsServiceResponse {
            partial_success: None,
        }))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_exports_a_moves_trace_over_otlp_and_logs_json() {
    let collector = Collector::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let otlp = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(collector.clone()))
            .add_service(MetricsServiceServer::new(collector.clone()))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );

    let mut child = Command::new(bin("shogi-arbiter"))
        .args(["serve", "--listen", "127.0.0.1:0", "--grace-secs", "2"])
        .args([
            "--log-format",
            "json",
            "--metrics-addr",
            "127.0.0.1:0",
            "--otlp-endpoint",
        ])
        .arg(format!("http://{otlp}"))
        .env("RUST_LOG", "info")
        // Batches of spans go out every 50 ms instead of 5 s, so that the test sees them soon.
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start shogi-arbiter serve");
    let rx = first_line(child.stdout.take().expect("piped"));
    let stderr = child.stderr.take().expect("piped");
    let (line_tx, line_rx) = std::sync::mpsc::channel();
    let log = std::thread::spawn(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .inspect(|l| {
                let _ = line_tx.send(l.clone());
            })
            .collect::<Vec<_>>()
    });
    let addr = rx.recv_timeout(DEADLINE.get()).expect("the address line");
    // The metrics endpoint was bound on a free port before the gRPC one; its log line says
    // which.
    let metrics_addr = loop {
        let line = line_rx
            .recv_timeout(DEADLINE.get())
            .expect("the metrics endpoint's log line");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if v["fields"]["message"] == "metrics endpoint serving /metrics" {
            break v["fields"]["addr"].as_str().expect("its addr").to_owned();
        }
    };
    let mut client = MoveValidatorClient::connect(format!("http://{}", addr.trim()))
        .await
        .expect("connect");
    client
        .create_game(pb::CreateGameRequest {
            ruleset: None,
            start: None,
            game_id: "exported".into(),
            strict: false,
        })
        .await
        .expect("create");
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let mut request = tonic::Request::new(pb::SubmitMoveRequest {
        game_id: "exported".into(),
        ply: 1,
        usi: "7g7f".into(),
        strict: false,
        comment: String::new(),
    });
    request.metadata_mut().insert(
        "traceparent",
        format!("00-{trace}-b7ad6b7169203331-01").parse().unwrap(),
    );
    let answer = client
        .submit_move(request)
        .await
        .expect("submit")
        .into_inner();
    assert_eq!(answer.outcome, pb::MoveOutcome::Accepted as i32);

    // The call, scraped from the Prometheus endpoint over HTTP.
    let scrape = scrape(&metrics_addr).await;
    let sample = |name: &str, labels: &[&str]| {
        scrape
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && labels.iter().all(|x| l.contains(x)))
            .and_then(|l| l.rsplit(' ').next())
            .map(str::to_owned)
    };
    let submit = r#"rpc_method="shogi.v1.MoveValidator/SubmitMove""#;
    assert_eq!(
        sample(
            "rpc_server_call_duration_seconds_count",
            &[submit, r#"rpc_response_status_code="OK""#]
        )
        .as_deref(),
        Some("1"),
        "{scrape}"
    );
    assert_eq!(
        sample(
            "shogi_moves_total",
            &[submit, r#"shogi_move_outcome="accepted""#]
        )
        .as_deref(),
        Some("1"),
        "{scrape}"
    );

    // The workers' spans end once they have handled the move: wait for both on the collector,
    // then stop the process, which flushes the rest (the metrics).
    let names = |collector: &Collector| -> Vec<String> {
        let spans = collector.spans.lock().unwrap();
        spans
            .iter()
            .filter(|s| hex(&s.trace_id) == trace)
            .map(|s| s.name.clone())
            .collect()
    };
    let deadline = std::time::Instant::now() + DEADLINE.get();
    while !["repetition-watcher process", "impasse-judge process"]
        .iter()
        .all(|w| names(&collector).iter().any(|n| n == w))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the workers' spans were not exported: {:?}",
            names(&collector)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let status = arbiter_tests::terminate(&mut child, DEADLINE.get()).await;
    assert!(status.success(), "{status:?}");
    let log = log.join().expect("the log reader");

    let exported = names(&collector);
    for want in [
        "shogi.v1.MoveValidator/SubmitMove",
        "publish",
        "repetition-watcher process",
        "impasse-judge process",
    ] {
        assert!(
            exported.iter().any(|n| n == want),
            "{want} not exported in trace {trace}: {exported:?}"
        );
    }
    let metrics = collector.metric_names.lock().unwrap().clone();
    for want in [
        "shogi.moves",
        "rpc.server.call.duration",
        "messaging.process.duration",
    ] {
        assert!(
            metrics.iter().any(|n| n == want),
            "{want} not exported: {metrics:?}"
        );
    }

    // Every log line is JSON; the accepted move's names the game and the ply in its span.
    let lines: Vec<serde_json::Value> = log
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect();
    let accepted = lines
        .iter()
        .find(|l| l["fields"]["message"] == "move accepted")
        .unwrap_or_else(|| panic!("no line for the accepted move in {log:?}"));
    assert_eq!(accepted["span"]["game_id"], "exported");
    assert_eq!(accepted["span"]["ply"], 1);
    // And names the trace and the exported span of the call it was logged in.
    let call = collector
        .spans
        .lock()
        .unwrap()
        .iter()
        .find(|s| hex(&s.trace_id) == trace && s.name == "shogi.v1.MoveValidator/SubmitMove")
        .map(|s| hex(&s.span_id))
        .expect("the call's span");
    assert_eq!(accepted["trace_id"], trace);
    assert_eq!(accepted["span_id"], call);
}

/// `GET /metrics` at `addr` over a plain TCP connection: the body.
async fn scrape(addr: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the metrics endpoint");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(DEADLINE.get(), stream.read_to_string(&mut answer))
        .await
        .expect("the scrape within the deadline")
        .unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_owned()
}
