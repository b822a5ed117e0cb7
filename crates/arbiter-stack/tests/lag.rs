//! The consumers' lag gauge keeps moving when a consumer stalls: on a real nats-server, a
//! partition's durable consumer is handed messages that nobody acknowledges and is then left
//! alone, while messages keep arriving; the gauge (`shogi.consumer.lag`, read from an
//! in-memory exporter) follows what the server says, not the last delivery.

mod support;

use arbiter_bus::{Bus, JetStreamBus, Outgoing};
use arbiter_worker::{Role, WorkerConfig};
use futures::StreamExt as _;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use std::sync::Arc;
use std::time::Duration;
use support::{eventually, telemetry};

/// The latest value of `shogi.consumer.lag` for `consumer`, if exported.
fn lag(consumer: &str) -> Option<u64> {
    let t = telemetry();
    t.guard.flush();
    let batches = t.metrics.get_finished_metrics().unwrap();
    let metric = batches
        .last()?
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == "shogi.consumer.lag")?;
    let AggregatedMetrics::U64(MetricData::Gauge(gauge)) = metric.data() else {
        panic!("shogi.consumer.lag is not a u64 gauge: {:?}", metric.data());
    };
    gauge
        .data_points()
        .find(|p| {
            p.attributes().any(|kv| {
                kv.key.as_str() == "messaging.consumer.group.name" && kv.value.as_str() == consumer
            })
        })
        .map(|p| p.value())
}

async fn lag_becomes(consumer: &str, want: u64) {
    eventually(&format!("{consumer}'s lag at {want}"), || {
        (lag(consumer) == Some(want)).then_some(())
    })
    .await;
}

async fn publish(bus: &Bus, game_id: &str, ply: u32) {
    let out = Outgoing::new(
        shogi_proto::subject::moves(game_id),
        shogi_proto::MOVE_ACCEPTED_TYPE,
        format!("{game_id}:{ply}"),
        Vec::new(),
    );
    bus.publish(out).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lag_gauge_moves_while_a_consumer_is_stalled() {
    telemetry();
    let nats = test_support::NatsServer::start();
    let bus: Bus = Arc::new(
        JetStreamBus::connect(
            &arbiter_bus::NatsOptions::new(nats.url()),
            "lag-test",
            &arbiter_runtime::streams::games(shogi_proto::STREAM, 1),
        )
        .await
        .unwrap(),
    );
    let game = "stalled-game";
    let partition = shogi_proto::subject::partition(game);
    let mut config = WorkerConfig::new(Role::Judge);
    config.lag_interval = Duration::from_millis(100);
    config.ack_wait = Duration::from_secs(60);
    let durable = config.durable(partition);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let poller = tokio::spawn(arbiter_worker::poll_lag(bus.clone(), config, stop_rx));

    // The partition's consumer exists (as a worker or `streams apply` makes it) with three
    // messages waiting.
    let mut deliveries = bus.consume(&durable).await.unwrap();
    for ply in 1..=3 {
        publish(&bus, game, ply).await;
    }
    lag_becomes(&durable.name, 3).await;
    // Two are delivered and never acknowledged: the consumer is stalled on them. They still
    // count, as not finished with.
    let first = deliveries.next().await.unwrap().unwrap();
    let second = deliveries.next().await.unwrap().unwrap();
    // While nobody handles anything, more arrive: the gauge follows the server.
    for ply in 4..=7 {
        publish(&bus, game, ply).await;
    }
    lag_becomes(&durable.name, 7).await;
    // The stall ends: the two are acknowledged, the gauge comes down without a new delivery.
    first.ack().await.unwrap();
    second.ack().await.unwrap();
    lag_becomes(&durable.name, 5).await;

    // A consumer that does not exist is not reported.
    let other = WorkerConfig::new(Role::Judge)
        .durable((partition + 1) % shogi_proto::PARTITIONS)
        .name;
    assert_eq!(lag(&other), None);

    stop_tx.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(5), poller)
        .await
        .expect("the poller stops when told")
        .unwrap();
}
