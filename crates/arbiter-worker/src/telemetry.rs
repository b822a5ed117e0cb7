//! The worker's telemetry, kept out of the pipeline's logic: a span per delivery continuing the
//! publisher's trace (the W3C context in the message's headers), its handling time, the
//! consumers' lag (polled from the bus on a timer of its own), the verdicts and their latency,
//! and the events set aside.

use crate::pipeline::config::{Role, Stats, WorkerConfig};
use arbiter_bus::{Bus, Delivery};
use arbiter_telemetry::{metrics, propagation};
use opentelemetry::KeyValue;
use std::future::Future;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// One delivery being handled.
pub(crate) struct Handling {
    span: tracing::Span,
    parent: opentelemetry::Context,
    consumer: String,
    role: Role,
    started: Instant,
}

impl Handling {
    /// Opens the delivery's span (a consumer span whose parent is the publish of the message).
    pub(crate) fn start(consumer: &str, role: Role, d: &Delivery) -> Handling {
        let m = &d.message;
        let span = tracing::info_span!(
            "handle_event",
            otel.name = match role {
                Role::Watcher => "repetition-watcher process",
                Role::Judge => "impasse-judge process",
                Role::Both => "arbiter-pipeline process",
            },
            otel.kind = "consumer",
            messaging.system = "nats",
            messaging.destination.name = %m.subject,
            role = role.name(),
            seq = m.sequence,
            delivered = d.delivered,
            game_id = tracing::field::Empty,
            ply = tracing::field::Empty,
        );
        Handling {
            span,
            parent: propagation::from_headers(&m.headers),
            consumer: consumer.to_owned(),
            role,
            started: Instant::now(),
        }
    }

    /// Runs the handling in the delivery's span and records how long it took.
    pub(crate) async fn run<T>(self, work: impl Future<Output = T>) -> T {
        let out = propagation::within(self.span, self.parent, work).await;
        metrics().record_process(
            &self.consumer,
            self.role.name(),
            self.started.elapsed().as_secs_f64(),
        );
        out
    }
}

/// Names the game (and the ply) on the span of the delivery being handled, so that every line
/// logged while judging it names them too.
pub(crate) fn record_game(game_id: &str, ply: Option<u32>) {
    let span = tracing::Span::current();
    span.record("game_id", game_id);
    if let Some(ply) = ply {
        span.record("ply", ply);
    }
}

/// Counts a verdict `role` announced, and the time since its deciding move was stored.
pub(crate) fn verdict_announced(role: Role, code: &'static str, decided_at: Option<SystemTime>) {
    metrics().count_verdict(code, role.name());
    if let Some(latency) = decided_at.and_then(|t| t.elapsed().ok()) {
        metrics().verdict_latency.record(
            latency.as_secs_f64(),
            &[
                KeyValue::new("shogi.result_code", code),
                KeyValue::new("shogi.role", role.name()),
            ],
        );
    }
}

/// Reports the worker's counts of events set aside on the `shogi.events.set_aside` counter.
pub(crate) fn observe(role: Role, stats: Arc<Stats>) {
    metrics().observe_set_aside(role.name(), move || {
        vec![
            ("garbage", Stats::get(&stats.garbage)),
            ("unknown_game", Stats::get(&stats.unknown_game)),
            ("void", Stats::get(&stats.void)),
        ]
    });
}

/// Reports the lag of every durable consumer of `config`'s role (one per partition) on the
/// `shogi.consumer.lag` gauge, as the bus reports it, every `config.lag_interval` until `stop`
/// turns true ([`arbiter_runtime::lag::poll`]). The workers' process (`spawn_workers`) runs it
/// beside the workers. Every instance reports every partition of its role, not only those it
/// holds, so that the partitions an instance has let go of are not left at their last value.
pub async fn poll_lag(bus: Bus, config: WorkerConfig, stop: tokio::sync::watch::Receiver<bool>) {
    let consumers: Vec<String> = (0..shogi_proto::PARTITIONS)
        .map(|p| config.durable(p).name)
        .collect();
    arbiter_runtime::lag::poll(
        bus,
        config.role.name(),
        consumers,
        config.lag_interval,
        stop,
    )
    .await;
}
