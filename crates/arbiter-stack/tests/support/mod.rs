//! What the telemetry tests share: the telemetry installed once per test binary with in-memory
//! exporters and a captured JSON log, and the whole arbiter in one process on the embedded bus.

#![allow(dead_code)]

use arbiter_bus::{Bus, MemoryBus};
use opentelemetry_sdk::metrics::InMemoryMetricExporter;
use opentelemetry_sdk::trace::InMemorySpanExporter;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use test_support::LogBuffer;
use tonic::transport::Channel;

/// How long anything may take to show up.
pub const DEADLINE: test_support::Deadline = test_support::Deadline::secs(10);

/// The process's telemetry, as a test sees it.
pub struct Telemetry {
    pub spans: InMemorySpanExporter,
    pub metrics: InMemoryMetricExporter,
    pub guard: arbiter_telemetry::Guard,
    log: LogBuffer,
}

impl Telemetry {
    /// The JSON log lines written so far.
    pub fn log_lines(&self) -> Vec<serde_json::Value> {
        self.log
            .text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
            .collect()
    }
}

/// The telemetry of this test binary, installed on first use: what `init` installs, with the
/// exporters and the log writer replaced.
pub fn telemetry() -> &'static Telemetry {
    static TELEMETRY: OnceLock<Telemetry> = OnceLock::new();
    TELEMETRY.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let metrics = InMemoryMetricExporter::default();
        let log = LogBuffer::default();
        let mut config = arbiter_telemetry::Config::new("telemetry-test");
        config.log_format = arbiter_telemetry::LogFormat::Json;
        let buffer = log.clone();
        let guard = arbiter_telemetry::Builder::new(config)
            .span_exporter(spans.clone())
            .metric_exporter(metrics.clone())
            .log_writer(move || buffer.clone())
            .install()
            .expect("install telemetry");
        Telemetry {
            spans,
            metrics,
            guard,
            log,
        }
    })
}

/// The whole arbiter as `shogi-arbiter serve` assembles it, over one embedded bus.
pub struct Arbiter {
    pub bus: Bus,
    pub client: MoveValidatorClient<Channel>,
    _stack: arbiter_stack::Stack,
}

pub async fn start() -> Arbiter {
    let bus: Bus = Arc::new(MemoryBus::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    // The lag gauge read often, so that a test sees it settle within its deadline.
    let mut config = arbiter_stack::StackConfig::default();
    for w in &mut config.workers {
        w.lag_interval = Duration::from_millis(100);
    }
    config.validator.lag_interval = Duration::from_millis(100);
    let stack = arbiter_stack::Stack::start(listener, bus.clone(), config)
        .await
        .unwrap();
    let client = MoveValidatorClient::connect(format!("http://{}", stack.addr()))
        .await
        .unwrap();
    Arbiter {
        bus,
        client,
        _stack: stack,
    }
}

/// Creates game `id` from the start position under `preset`.
pub async fn create(client: &mut MoveValidatorClient<Channel>, id: &str, preset: &str) {
    client
        .create_game(pb::CreateGameRequest {
            ruleset: Some(pb::Ruleset {
                preset: preset.to_owned(),
                overrides: None,
            }),
            start: None,
            game_id: id.to_owned(),
            strict: false,
        })
        .await
        .unwrap_or_else(|e| panic!("create {id}: {e}"));
}

/// Submits a move, with the W3C `traceparent` given if any.
pub async fn submit(
    client: &mut MoveValidatorClient<Channel>,
    id: &str,
    ply: u32,
    usi: &str,
    traceparent: Option<&str>,
) -> pb::SubmitMoveResponse {
    let mut request = tonic::Request::new(pb::SubmitMoveRequest {
        game_id: id.to_owned(),
        ply,
        usi: usi.to_owned(),
        strict: false,
        comment: String::new(),
    });
    if let Some(tp) = traceparent {
        request
            .metadata_mut()
            .insert("traceparent", tp.parse().unwrap());
    }
    client
        .submit_move(request)
        .await
        .unwrap_or_else(|e| panic!("{id} ply {ply} {usi}: {e}"))
        .into_inner()
}

/// Polls `check` until it gives a value, within [`DEADLINE`]; `what` names it in the failure.
pub async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
