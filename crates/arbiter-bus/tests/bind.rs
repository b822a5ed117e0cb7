//! A service that only binds to its durable consumers (`ARBITER_STREAMS=bind`) uses them as
//! `shogi-arbiter streams apply` made them, and says which of its own settings they lack
//! instead of ignoring them silently; against a real nats-server.

use arbiter_bus::{DurableConfig, EventBus, JetStreamBus, NatsOptions, Provision, StreamSettings};
use std::time::Duration;
use support::Logs;
use test_support::NatsServer;

mod support;

fn durable(ack_wait: Duration) -> DurableConfig {
    DurableConfig {
        name: "watcher-p3".into(),
        filter: "shogi.game.*.move.3".into(),
        ack_wait,
        max_ack_pending: 1024,
        max_deliver: None,
        replicas: None,
        delivery: arbiter_bus::DeliveryMode::Pull,
        storage: arbiter_bus::ConsumerStorage::Auto,
        acks: arbiter_bus::AckMode::Each,
    }
}

#[tokio::test]
async fn a_bound_consumer_is_used_as_it_is_and_its_differences_are_said() {
    let nats = NatsServer::start();
    let stream = StreamSettings::new("BIND", "shogi.game.>");
    let admin = JetStreamBus::connect(&NatsOptions::new(nats.url()), "admin", &stream)
        .await
        .unwrap();
    admin
        .apply_durable(&durable(Duration::from_secs(30)))
        .await
        .unwrap();

    let mut options = NatsOptions::new(nats.url());
    options.provision = Provision::Bind;
    let worker = JetStreamBus::connect(&options, "worker", &stream)
        .await
        .unwrap();
    let (logs, guard) = Logs::capture();
    // The same settings: bound without a word.
    drop(
        worker
            .consume(&durable(Duration::from_secs(30)))
            .await
            .unwrap(),
    );
    assert_eq!(logs.text(), "");
    // Another ack wait: bound all the same, and said.
    drop(
        worker
            .consume(&durable(Duration::from_secs(5)))
            .await
            .unwrap(),
    );
    drop(guard);
    let text = logs.text();
    assert!(text.contains("watcher-p3"), "{text}");
    assert!(text.contains("ack wait"), "{text}");
    assert!(text.contains("streams apply"), "{text}");
    assert!(!text.contains("max ack pending"), "{text}");
    // And left as it was.
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    let info = js
        .get_stream("BIND")
        .await
        .unwrap()
        .consumer_info("watcher-p3")
        .await
        .unwrap();
    assert_eq!(info.config.ack_wait, Duration::from_secs(30));
}
