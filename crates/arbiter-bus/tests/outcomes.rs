//! What a publish's failure says, on a real nats-server (issue 20):
//!
//! - a publish the server refuses (here a stream at its limit, as a full store answers) is
//!   `PublishRefused`, nothing stored, not `Publish` (outcome unknown), which a client following
//!   the contract would retry for ever;
//! - a nats-server that hangs (its process stopped, as a paused VM or a half-open connection
//!   looks to a client) is noticed within seconds: the connection is dropped after two
//!   unanswered pings (`arbiter_bus::PING_INTERVAL`), so `EventBus::connected` turns false,
//!   which is what the services' health follows (NOT_SERVING, and writes answer
//!   BUS_UNAVAILABLE instead of timing out as OUTCOME_UNKNOWN); when the server wakes up, the
//!   bus reconnects.

use arbiter_bus::{BusError, EventBus, JetStreamBus, Outgoing, PING_INTERVAL, Published};
use std::process::Command;
use std::time::{Duration, Instant};

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill {sig} {pid}");
}

/// Waits until `bus.connected()` is `want`; how long it took.
async fn until_connected(bus: &JetStreamBus, want: bool, within: Duration) -> Duration {
    let start = Instant::now();
    while bus.connected() != want {
        assert!(
            start.elapsed() < within,
            "connected() still {} after {within:?}",
            !want
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_server_is_noticed_within_seconds() {
    let nats = test_support::NatsServer::start();
    let bus = JetStreamBus::connect(
        &arbiter_bus::NatsOptions::new(nats.url()),
        "hung-server",
        &arbiter_bus::StreamSettings::new("HUNG", "shogi.game.>"),
    )
    .await
    .unwrap();
    assert!(bus.connected());
    signal(nats.pid(), "-STOP");
    // Three ping intervals and the reconnect's bookkeeping; the library's default (60 s
    // pings) took minutes.
    let within = 5 * PING_INTERVAL + Duration::from_secs(5);
    let took = until_connected(&bus, false, within).await;
    signal(nats.pid(), "-CONT");
    eprintln!("a stopped server noticed after {took:?}");
    until_connected(&bus, true, Duration::from_secs(30)).await;
}

#[tokio::test]
async fn a_refused_publish_is_not_an_unknown_outcome() {
    let nats = test_support::NatsServer::start();
    // A stream that takes one message and refuses the next (discard new), as a full store
    // refuses every publish.
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    js.create_stream(async_nats::jetstream::stream::Config {
        name: "FULL".into(),
        subjects: vec!["shogi.game.>".into()],
        max_messages: 1,
        discard: async_nats::jetstream::stream::DiscardPolicy::New,
        ..Default::default()
    })
    .await
    .unwrap();
    let bus = JetStreamBus::connect(
        &arbiter_bus::NatsOptions::new(nats.url()),
        "refused",
        &arbiter_bus::StreamSettings::new("FULL", "shogi.game.>"),
    )
    .await
    .unwrap();
    let first = bus
        .publish(Outgoing::new("shogi.game.a.created", "t", "a", &b"one"[..]))
        .await
        .unwrap();
    assert!(matches!(first, Published::Stored(_)), "{first:?}");
    match bus
        .publish(Outgoing::new("shogi.game.b.created", "t", "b", &b"two"[..]))
        .await
    {
        Err(BusError::PublishRefused { reason, .. }) => eprintln!("refused: {reason}"),
        other => panic!("a refusal, not {other:?}"),
    }
}
