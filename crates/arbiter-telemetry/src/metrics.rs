//! The arbiter's metric instruments, on the global meter provider (the OTLP periodic reader's
//! when [`crate::init`] was given an endpoint, the API's no-ops otherwise).
//!
//! | name | kind | unit | attributes |
//! | --- | --- | --- | --- |
//! | `shogi.moves` | counter | `{move}` | `rpc`, `outcome` (accepted, rejected, forfeited), `kind` (the `IllegalKind` name, when not accepted) |
//! | `shogi.verdicts` | counter | `{verdict}` | `code` (the result code), `service` (who announced it) |
//! | `rpc.server.call.duration` | histogram | `s` | `rpc.method`, `rpc.grpc.status_code` |
//! | `shogi.event.duration` | histogram | `s` | `role` |
//! | `shogi.verdict.latency` | histogram | `s` | `code`, `role` |
//! | `shogi.consumer.pending` | gauge | `{message}` | `consumer` |
//! | `shogi.events.set_aside` | counter | `{message}` | `role`, `reason` (garbage, unknown_game, void) |
//!
//! The instruments are made on first use: install the meter provider ([`crate::init`]) before.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Gauge, Histogram, ObservableCounter};
use std::sync::{Mutex, OnceLock};

/// Bucket bounds in seconds for the latencies: half a millisecond to ten seconds.
const SECONDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

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
    /// A worker's handling time of one delivery, by role.
    pub event_duration: Histogram<f64>,
    /// From the deciding move's storage on the bus to its verdict's announcement by a worker.
    pub verdict_latency: Histogram<f64>,
    /// Messages matching a durable consumer not yet delivered, as of its last delivery.
    pub consumer_pending: Gauge<u64>,
    _set_aside: ObservableCounter<u64>,
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
                .with_description("gRPC call handling time")
                .with_boundaries(SECONDS.to_vec())
                .build(),
            event_duration: meter
                .f64_histogram("shogi.event.duration")
                .with_unit("s")
                .with_description("A pipeline worker's handling time of one delivery")
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
            consumer_pending: meter
                .u64_gauge("shogi.consumer.pending")
                .with_unit("{message}")
                .with_description("Messages for a durable consumer not yet delivered")
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
                            &[KeyValue::new("role", role), KeyValue::new("reason", reason)],
                        );
                    }
                })
                .build(),
        }
    })
}

impl Metrics {
    /// Counts a move: `kind` is the illegal kind's name for a move not accepted.
    pub fn count_move(&self, rpc: &'static str, outcome: &'static str, kind: Option<&'static str>) {
        let mut attrs = vec![KeyValue::new("rpc", rpc), KeyValue::new("outcome", outcome)];
        if let Some(kind) = kind {
            attrs.push(KeyValue::new("kind", kind));
        }
        self.moves.add(1, &attrs);
    }

    /// Counts a verdict announced by `service`.
    pub fn count_verdict(&self, code: &'static str, service: &'static str) {
        self.verdicts.add(
            1,
            &[
                KeyValue::new("code", code),
                KeyValue::new("service", service),
            ],
        );
    }

    /// Records one gRPC call's handling time.
    pub fn record_rpc(&self, method: &'static str, code: tonic::Code, seconds: f64) {
        self.rpc_duration.record(
            seconds,
            &[
                KeyValue::new("rpc.method", method),
                KeyValue::new("rpc.grpc.status_code", code as i64),
            ],
        );
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
