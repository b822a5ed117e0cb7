//! The arbiter's metric instruments, on the global meter provider (the OTLP periodic reader's
//! and the Prometheus reader's when [`crate::init`] was given an endpoint or a metrics
//! address, the API's no-ops otherwise).
//!
//! Names and attributes follow the OpenTelemetry semantic conventions where one covers the
//! measurement (`rpc.*` for the gRPC server, `messaging.*` for the NATS consumers); the
//! arbiter's own are under `shogi.`. Units are UCUM. docs/metrics.md lists each with its
//! Prometheus name.
//!
//! | name | kind | unit | attributes |
//! | --- | --- | --- | --- |
//! | `shogi.moves` | counter | `{move}` | `rpc.method`, `shogi.move.outcome` (accepted, rejected, forfeited), `shogi.illegal_kind` (when not accepted) |
//! | `shogi.verdicts` | counter | `{verdict}` | `shogi.result_code`, `shogi.announcer` |
//! | `rpc.server.call.duration` | histogram | `s` | `rpc.system.name` (grpc), `rpc.method`, `rpc.response.status_code`, `error.type` (when not OK) |
//! | `messaging.process.duration` | histogram | `s` | `messaging.system` (nats), `messaging.operation.name` (process), `messaging.consumer.group.name`, `shogi.role` |
//! | `shogi.verdict.latency` | histogram | `s` | `shogi.result_code`, `shogi.role` |
//! | `shogi.consumer.lag` | gauge | `{message}` | `messaging.system`, `messaging.consumer.group.name`, `shogi.role` |
//! | `shogi.events.set_aside` | counter | `{message}` | `shogi.role`, `shogi.aside.reason` (garbage, unknown_game, void) |
//! | `arbiter.nats.refused` | counter | | `reason` (authorization, tls): connections NATS refused ([`count_nats_refused`]) |
//! | `arbiter.grpc.refused` | counter | | `reason`: gRPC calls and TLS handshakes refused ([`count_grpc_refused`]) |
//! | `shogi.credential.calls` | counter | `{call}` | `shogi.credential`, `rpc.method`: calls a named credential made that its scope and quotas let through |
//! | `shogi.credential.refused` | counter | `{call}` | `shogi.credential`, `shogi.refusal` (scope, games_per_second, live_games, calls_per_second, watch_streams, move_streams) |
//! | `shogi.store.used` | gauge | `By` | `messaging.destination.name` (the stream): the bytes the games' stream takes, polled by the validator |
//! | `shogi.store.limit` | gauge | `By` | `messaging.destination.name`: the store's limit the validator is told of (the stream's own, or `--store-limit-mib`) |
//! | `arbiter.health.serving` | gauge | | `grpc.health.service`: 1 while the service's grpc.health.v1 status is SERVING, 0 otherwise ([`record_serving`]) |
//!
//! The instruments are made on first use: install the meter provider ([`crate::init`]) before.
//! The refusal counters and the health gauge are looked up at each (rare) use instead, so that
//! the provider installed by then records it, not the no-op one of before (a refusal, or the
//! first NOT_SERVING, can come first).

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Gauge, Histogram, ObservableCounter};
use std::sync::{Mutex, OnceLock};

/// Bucket bounds in seconds for the latencies: half a millisecond to ten seconds.
const SECONDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The gRPC service whose methods `rpc.method` names.
const SERVICE: &str = "shogi.v1.MoveValidator";

/// `messaging.system` for the bus.
pub const MESSAGING_SYSTEM: &str = "nats";

/// What reads a worker's counts of events set aside: `(reason, count)`.
type SetAsideReader = Box<dyn Fn() -> Vec<(&'static str, u64)> + Send + Sync>;

static SET_ASIDE: Mutex<Vec<(&'static str, SetAsideReader)>> = Mutex::new(Vec::new());

/// The instruments.
#[derive(Debug)]
pub struct Metrics {
    /// Moves judged, by RPC, outcome and illegal kind.
    pub moves: Counter<u64>,
    /// Verdicts announced (stored on `.verdict`), by result code and announcing service.
    pub verdicts: Counter<u64>,
    /// gRPC call handling time, by method and status code.
    pub rpc_duration: Histogram<f64>,
    /// A worker's handling time of one delivery, by consumer and role.
    pub process_duration: Histogram<f64>,
    /// From the deciding move's storage on the bus to its verdict's announcement by a worker.
    pub verdict_latency: Histogram<f64>,
    /// From a silent side's deadline to its time-up recorded in the game's log.
    pub flag_delay: Histogram<f64>,
    /// Messages a durable consumer has not finished with (not delivered, or delivered and not
    /// acknowledged), polled from the bus on a timer.
    pub consumer_lag: Gauge<u64>,
    /// The bytes the games' stream takes in the store, polled by the validator.
    pub store_used: Gauge<u64>,
    /// The store's limit, when the validator knows it.
    pub store_limit: Gauge<u64>,
    /// Calls of a named credential let through, by credential and method.
    pub credential_calls: Counter<u64>,
    /// Calls of a named credential refused: outside its scope, or over one of its quotas.
    pub credential_refused: Counter<u64>,
    _set_aside: ObservableCounter<u64>,
}

/// Counts one connection to NATS that a server refused, for `reason` (`authorization`, `tls`),
/// on `arbiter.nats.refused`.
pub fn count_nats_refused(reason: &'static str) {
    opentelemetry::global::meter("shogi-arbiter")
        .u64_counter("arbiter.nats.refused")
        .with_description("Connections to NATS refused by the server, by reason")
        .build()
        .add(1, &[KeyValue::new("reason", reason)]);
}

/// Counts one gRPC client refused (a call without the token, a failed TLS handshake), for
/// `reason`, on `arbiter.grpc.refused`.
pub fn count_grpc_refused(reason: &'static str) {
    opentelemetry::global::meter("shogi-arbiter")
        .u64_counter("arbiter.grpc.refused")
        .with_description("gRPC clients refused (calls and TLS handshakes), by reason")
        .build()
        .add(1, &[KeyValue::new("reason", reason)]);
}

/// Records the grpc.health.v1 status of the service `name` (a part of the process:
/// `shogi.v1.MoveValidator`, `repetition-watcher`, `impasse-judge`) on
/// `arbiter.health.serving`: 1 for SERVING, 0 for NOT_SERVING. Health changes are rare (start,
/// a lost bus, the drain), and a scrape then shows what a health check would answer.
pub fn record_serving(name: &'static str, serving: bool) {
    opentelemetry::global::meter("shogi-arbiter")
        .u64_gauge("arbiter.health.serving")
        .with_description("1 while the service's grpc.health.v1 status is SERVING, 0 otherwise")
        .build()
        .record(
            u64::from(serving),
            &[KeyValue::new("grpc.health.service", name)],
        );
}

/// The process's instruments.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let meter = opentelemetry::global::meter("shogi-arbiter");
        Metrics {
            moves: meter
                .u64_counter("shogi.moves")
                .with_unit("{move}")
                .with_description("Moves judged, by outcome and illegal kind")
                .build(),
            verdicts: meter
                .u64_counter("shogi.verdicts")
                .with_unit("{verdict}")
                .with_description("Verdicts announced, by result code")
                .build(),
            rpc_duration: meter
                .f64_histogram("rpc.server.call.duration")
                .with_unit("s")
                .with_description("Duration of RPCs handled by the server")
                .with_boundaries(SECONDS.to_vec())
                .build(),
            process_duration: meter
                .f64_histogram("messaging.process.duration")
                .with_unit("s")
                .with_description("Duration of processing operation")
                .with_boundaries(SECONDS.to_vec())
                .build(),
            verdict_latency: meter
                .f64_histogram("shogi.verdict.latency")
                .with_unit("s")
                .with_description(
                    "From the deciding move's storage on the bus to its verdict's announcement",
                )
                .with_boundaries(SECONDS.to_vec())
                .build(),
            flag_delay: meter
                .f64_histogram("shogi.clock.flag.delay")
                .with_unit("s")
                .with_description(
                    "From a silent side's deadline to its time-up recorded in the game's log",
                )
                .with_boundaries(SECONDS.to_vec())
                .build(),
            consumer_lag: meter
                .u64_gauge("shogi.consumer.lag")
                .with_unit("{message}")
                .with_description(
                    "Messages a durable consumer has not finished with: not delivered, or not acknowledged",
                )
                .build(),
            store_used: meter
                .u64_gauge("shogi.store.used")
                .with_unit("By")
                .with_description("Bytes the games' stream takes in the JetStream store")
                .build(),
            store_limit: meter
                .u64_gauge("shogi.store.limit")
                .with_unit("By")
                .with_description("The JetStream store's limit for the games' stream")
                .build(),
            credential_calls: meter
                .u64_counter("shogi.credential.calls")
                .with_unit("{call}")
                .with_description("Calls a named credential made that its scope and quotas let through")
                .build(),
            credential_refused: meter
                .u64_counter("shogi.credential.refused")
                .with_unit("{call}")
                .with_description("Calls of a named credential refused: outside its scope, or over a quota")
                .build(),
            _set_aside: meter
                .u64_observable_counter("shogi.events.set_aside")
                .with_unit("{message}")
                .with_description("Bus messages a worker set aside, by reason")
                .with_callback(|observer| {
                    let readers = SET_ASIDE.lock().unwrap_or_else(|e| e.into_inner());
                    let mut sums: Vec<(&str, &str, u64)> = Vec::new();
                    for (role, read) in readers.iter() {
                        for (reason, n) in read() {
                            match sums
                                .iter_mut()
                                .find(|(r, why, _)| r == role && *why == reason)
                            {
                                Some(s) => s.2 += n,
                                None => sums.push((role, reason, n)),
                            }
                        }
                    }
                    for (role, reason, n) in sums {
                        observer.observe(
                            n,
                            &[
                                KeyValue::new("shogi.role", role),
                                KeyValue::new("shogi.aside.reason", reason),
                            ],
                        );
                    }
                })
                .build(),
        }
    })
}

impl Metrics {
    /// Counts a call of the credential `name` to `method` (`/shogi.v1.MoveValidator/GetGame`)
    /// that its scope and quotas let through. The name is the credential's, never its secret.
    pub fn count_credential_call(&self, name: &str, method: &'static str) {
        self.credential_calls.add(
            1,
            &[
                KeyValue::new("shogi.credential", name.to_owned()),
                KeyValue::new("rpc.method", method.trim_start_matches('/')),
            ],
        );
    }

    /// Counts a call of the credential `name` refused for `reason`: `scope`, or the quota's
    /// name (`games_per_second`, `live_games`, `calls_per_second`, `watch_streams`, `move_streams`).
    pub fn count_credential_refused(&self, name: &str, reason: &'static str) {
        self.credential_refused.add(
            1,
            &[
                KeyValue::new("shogi.credential", name.to_owned()),
                KeyValue::new("shogi.refusal", reason),
            ],
        );
    }

    /// Counts a move of the call `method` (`SubmitMove`, `ValidateMove`): `kind` is the illegal
    /// kind's name for a move not accepted.
    pub fn count_move(
        &self,
        method: &'static str,
        outcome: &'static str,
        kind: Option<&'static str>,
    ) {
        let mut attrs = vec![
            KeyValue::new("rpc.method", qualified(method)),
            KeyValue::new("shogi.move.outcome", outcome),
        ];
        if let Some(kind) = kind {
            attrs.push(KeyValue::new("shogi.illegal_kind", kind));
        }
        self.moves.add(1, &attrs);
    }

    /// Counts a verdict announced by `announcer` (the service's name).
    pub fn count_verdict(&self, code: &'static str, announcer: &'static str) {
        self.verdicts.add(
            1,
            &[
                KeyValue::new("shogi.result_code", code),
                KeyValue::new("shogi.announcer", announcer),
            ],
        );
    }

    /// Records one gRPC call's handling time (`method`: `SubmitMove`, ...).
    pub fn record_rpc(&self, method: &'static str, code: tonic::Code, seconds: f64) {
        let status = status_name(code);
        let mut attrs = vec![
            KeyValue::new("rpc.system.name", "grpc"),
            KeyValue::new("rpc.method", qualified(method)),
            KeyValue::new("rpc.response.status_code", status),
        ];
        if code != tonic::Code::Ok {
            attrs.push(KeyValue::new("error.type", status));
        }
        self.rpc_duration.record(seconds, &attrs);
    }

    /// Records a worker's handling time of one delivery from the durable consumer `consumer`.
    pub fn record_process(&self, consumer: &str, role: &'static str, seconds: f64) {
        let [system, group, role] = consumer_attrs(consumer, role);
        self.process_duration.record(
            seconds,
            &[
                system,
                KeyValue::new("messaging.operation.name", "process"),
                group,
                role,
            ],
        );
    }

    /// Records how late a silent side was flagged: from its deadline to its time-up recorded.
    pub fn record_flag(&self, seconds: f64) {
        self.flag_delay.record(seconds, &[]);
    }

    /// Records the bytes the stream `stream` takes in its store, and the store's limit when
    /// known.
    pub fn record_store(&self, stream: &str, used: u64, limit: Option<u64>) {
        let attrs = [KeyValue::new(
            "messaging.destination.name",
            stream.to_owned(),
        )];
        self.store_used.record(used, &attrs);
        if let Some(limit) = limit {
            self.store_limit.record(limit, &attrs);
        }
    }

    /// Records a durable consumer's lag.
    pub fn record_lag(&self, consumer: &str, role: &'static str, lag: u64) {
        self.consumer_lag
            .record(lag, &consumer_attrs(consumer, role));
    }

    /// Counts, for the `shogi.events.set_aside` counter, what `read` reports for a worker of
    /// `role`: `(reason, count so far)` pairs, summed over the process's workers by role.
    pub fn observe_set_aside(
        &self,
        role: &'static str,
        read: impl Fn() -> Vec<(&'static str, u64)> + Send + Sync + 'static,
    ) {
        SET_ASIDE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((role, Box::new(read)));
    }
}

/// The attributes of a measurement about the durable consumer `consumer` of `role`.
fn consumer_attrs(consumer: &str, role: &'static str) -> [KeyValue; 3] {
    [
        KeyValue::new("messaging.system", MESSAGING_SYSTEM),
        KeyValue::new("messaging.consumer.group.name", consumer.to_owned()),
        KeyValue::new("shogi.role", role),
    ]
}

/// A gRPC status code as `rpc.response.status_code` names it: the code's name in
/// `SCREAMING_SNAKE_CASE`, as in `grpc/status.proto`.
pub fn status_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// `rpc.method` for the call `method` of the service: fully qualified, as the semantic
/// conventions name it; the service's own methods without an allocation per call.
fn qualified(method: &'static str) -> opentelemetry::StringValue {
    macro_rules! methods {
        ($($m:literal),*) => {
            match method {
                $($m => concat!("shogi.v1.MoveValidator/", $m).into(),)*
                other => format!("{SERVICE}/{other}").into(),
            }
        };
    }
    methods!(
        "CreateGame",
        "SubmitMove",
        "ValidateMove",
        "Declare",
        "EvaluateImpasse",
        "GetGame",
        "WatchGame",
        "EndGame",
        "LegalMoves",
        "ListGames",
        "AnalyzeGame"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_fully_qualified() {
        for m in ["SubmitMove", "EndGame", "SomethingNew"] {
            assert_eq!(qualified(m).as_str(), format!("shogi.v1.MoveValidator/{m}"));
        }
        assert_eq!(
            status_name(tonic::Code::DeadlineExceeded),
            "DEADLINE_EXCEEDED"
        );
    }
}
