//! One behaviour suite, run against both implementations: the embedded bus and JetStream on a
//! real nats-server.

mod support;

use arbiter_bus::{
    Bus, ConsumerLag, DeliveryMode, DurableConfig, EventBus, JetStreamBus, MemoryBus, Message,
    Outgoing, Published, StreamState,
};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;

const T: &str = "test.Type";
const WAIT: test_support::Deadline = test_support::Deadline::secs(10);

fn out(subject: &str, id: &str, body: &'static str) -> Outgoing {
    Outgoing::new(subject, T, id, body.as_bytes())
}

async fn publish_dedupes_and_guards_sequences(bus: Bus) {
    let a = bus
        .publish(out("shogi.game.a.move", "a1", "one").expect(0))
        .await
        .unwrap();
    let Published::Stored(s1) = a else {
        panic!("{a:?}")
    };
    // The same id again: nothing new.
    assert_eq!(
        bus.publish(out("shogi.game.a.move", "a1", "one").expect(0))
            .await
            .unwrap(),
        Published::Duplicate(s1)
    );
    // A second writer that expected the subject empty loses.
    assert_eq!(
        bus.publish(out("shogi.game.a.move", "a1-other", "x").expect(0))
            .await
            .unwrap(),
        Published::Conflict
    );
    // Another subject's messages do not move this subject's last sequence.
    let b = bus
        .publish(out("shogi.game.b.move", "b1", "b"))
        .await
        .unwrap();
    assert!(matches!(b, Published::Stored(s) if s > s1));
    let a2 = bus
        .publish(out("shogi.game.a.move", "a2", "two").expect(s1))
        .await
        .unwrap();
    let Published::Stored(s2) = a2 else {
        panic!("{a2:?}")
    };
    assert!(s2 > s1);
    assert_eq!(
        bus.publish(out("shogi.game.a.move", "a3", "x").expect(s1))
            .await
            .unwrap(),
        Published::Conflict
    );
    // The first write again, after another entry of its subject: its guard refuses it at any
    // time, no duplicate window needed, and its id read back says it was stored (issue 38).
    assert_eq!(
        bus.publish(out("shogi.game.a.move", "a1", "one").expect(0))
            .await
            .unwrap(),
        Published::Duplicate(s1)
    );
    // Reads: from a sequence, by subject; the last one; wildcards.
    let first = bus.next("shogi.game.a.move", 0).await.unwrap().unwrap();
    assert_eq!((first.sequence, &first.payload[..]), (s1, &b"one"[..]));
    assert_eq!(first.message_type.as_deref(), Some(T));
    let second = bus
        .next("shogi.game.a.move", s1 + 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.sequence, s2);
    assert!(
        bus.next("shogi.game.a.move", s2 + 1)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        bus.last("shogi.game.a.move")
            .await
            .unwrap()
            .unwrap()
            .sequence,
        s2
    );
    assert!(bus.last("shogi.game.zzz.move").await.unwrap().is_none());
    let any = bus
        .next("shogi.game.*.move", s1 + 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(any.subject, "shogi.game.b.move");
    // Follow: everything in order, then live.
    let mut follow = bus.follow("shogi.game.a.>").await.unwrap();
    let got: Vec<u64> = vec![
        follow.next().await.unwrap().unwrap().sequence,
        follow.next().await.unwrap().unwrap().sequence,
    ];
    assert_eq!(got, vec![s1, s2]);
    let a3 = bus
        .publish(out("shogi.game.a.verdict", "a-v", "v"))
        .await
        .unwrap();
    let live = tokio::time::timeout(WAIT.get(), follow.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(Published::Stored(live.sequence), a3);
}

/// Headers as published, in name order.
/// The stream's state follows its publishes: the last sequence stored, nothing removed; a
/// duplicate or a conflict stores nothing.
async fn state_follows_the_stream(bus: Bus) {
    assert_eq!(bus.state().await.unwrap(), StreamState::default());
    let mut last = 0;
    for (i, subject) in ["shogi.game.s.created", "shogi.game.s.move.1"]
        .into_iter()
        .enumerate()
    {
        let Published::Stored(seq) = bus
            .publish(out(subject, &format!("s{i}"), "x"))
            .await
            .unwrap()
        else {
            panic!("not stored")
        };
        last = seq;
    }
    bus.publish(out("shogi.game.s.move.1", "s1", "x"))
        .await
        .unwrap();
    bus.publish(out("shogi.game.s.created", "s-again", "x").expect(0))
        .await
        .unwrap();
    let state = bus.state().await.unwrap();
    assert_eq!((state.last_sequence, state.removed), (last, 0));
}

/// Reads every message matching `filter` from the stream's start with `next_batch`, `max` at a
/// time: the messages, and the size of each batch.
async fn read_in_batches(bus: &Bus, filter: &str, max: usize) -> (Vec<Message>, Vec<usize>) {
    let (mut read, mut sizes, mut from) = (Vec::new(), Vec::new(), 1);
    loop {
        let batch = bus.next_batch(filter, from, max).await.unwrap();
        if batch.is_empty() {
            return (read, sizes);
        }
        assert!(batch.len() <= max, "{} > {max}", batch.len());
        sizes.push(batch.len());
        from = batch.last().unwrap().sequence + 1;
        read.extend(batch);
    }
}

/// Reads every message matching `filter` from the stream's start with `next`, one at a time.
async fn read_one_by_one(bus: &Bus, filter: &str) -> Vec<Message> {
    let (mut read, mut from) = (Vec::new(), 1);
    while let Some(m) = bus.next(filter, from).await.unwrap() {
        from = m.sequence + 1;
        read.push(m);
    }
    read
}

/// Batched reads read what reads one message at a time read, in the same order, across
/// batches, for a wildcard and for one subject; the batches' sizes.
async fn batches_read_what_next_reads(bus: &Bus) -> Vec<usize> {
    for i in 0..40 {
        let game = format!("g{}", i % 5);
        let subject = if i % 3 == 0 {
            format!("shogi.game.{game}.created")
        } else {
            format!("shogi.game.{game}.move.1")
        };
        let mut msg = out(&subject, &format!("b{i}"), "payload");
        if i % 2 == 0 {
            msg.headers = vec![("Shogi-Credential".into(), format!("platform-{i}"))];
        }
        bus.publish(msg).await.unwrap();
    }
    let mut sizes = Vec::new();
    for (filter, max) in [
        ("shogi.game.*.created", 4),
        ("shogi.game.*.move.*", 7),
        ("shogi.game.g2.move.1", 3),
        ("shogi.game.*.created", 1000),
        ("shogi.game.none.created", 5),
    ] {
        let (batched, batch_sizes) = read_in_batches(bus, filter, max).await;
        let one_by_one = read_one_by_one(bus, filter).await;
        // Every field: sequence, subject, type, headers (the bus's and the server's left
        // out), time, payload.
        assert_eq!(batched, one_by_one, "{filter}");
        if filter == "shogi.game.*.move.*" {
            assert_eq!(batched.len(), 26);
            sizes = batch_sizes;
        }
    }
    sizes
}

fn traced_headers() -> Vec<(String, String)> {
    vec![
        (
            "traceparent".to_owned(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned(),
        ),
        ("tracestate".to_owned(), "vendor=opaque".to_owned()),
    ]
}

async fn headers_round_trip(bus: Bus) {
    let mut traced = out("shogi.game.h.move", "h1", "traced");
    traced.headers = traced_headers().into_iter().rev().collect();
    let Published::Stored(seq) = bus.publish(traced).await.unwrap() else {
        panic!("not stored")
    };
    let plain = bus.publish(out("shogi.game.h.move", "h2", "plain")).await;
    assert!(matches!(plain, Ok(Published::Stored(_))), "{plain:?}");
    let next = bus.next("shogi.game.h.move", 0).await.unwrap().unwrap();
    assert_eq!((next.sequence, &next.headers), (seq, &traced_headers()));
    assert!(next.time.is_some());
    let last = bus.last("shogi.game.h.move").await.unwrap().unwrap();
    assert!(last.headers.is_empty(), "{:?}", last.headers);
    let mut follow = bus.follow("shogi.game.h.>").await.unwrap();
    let followed = tokio::time::timeout(WAIT.get(), follow.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(followed.headers, traced_headers());
    assert!(followed.time.is_some());
    let config = DurableConfig {
        name: "headers".into(),
        filter: "shogi.game.h.move".into(),
        ack_wait: Duration::from_secs(5),
        max_ack_pending: 100,
        max_deliver: None,
        replicas: None,
        delivery: arbiter_bus::DeliveryMode::Pull,
        storage: arbiter_bus::ConsumerStorage::Auto,
        acks: arbiter_bus::AckMode::Each,
    };
    let mut deliveries = bus.consume(&config).await.unwrap();
    let d = tokio::time::timeout(WAIT.get(), deliveries.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(d.message.headers, traced_headers());
    assert!(d.message.time.is_some());
    d.ack().await.unwrap();
}

/// Waits for the consumer `name`'s lag to be `want` (an ack reaches a JetStream server a
/// little after it is sent).
async fn lag_becomes(bus: &Bus, name: &str, want: ConsumerLag) {
    let deadline = tokio::time::Instant::now() + WAIT.get();
    loop {
        let lag = bus.consumer_lag(name).await.unwrap();
        if lag == Some(want) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name}: lag {lag:?}, not {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn durable_consumers_ack_and_redeliver(bus: Bus, delivery: DeliveryMode) {
    for i in 0..5 {
        bus.publish(out(&format!("shogi.game.c{i}.move"), &format!("c{i}"), "m"))
            .await
            .unwrap();
    }
    bus.publish(out("shogi.game.c0.verdict", "c0v", "v"))
        .await
        .unwrap();
    let config = DurableConfig {
        name: "behaviour".into(),
        filter: "shogi.game.*.move".into(),
        ack_wait: Duration::from_secs(1),
        max_ack_pending: 100,
        max_deliver: None,
        replicas: None,
        delivery,
        storage: arbiter_bus::ConsumerStorage::Auto,
        acks: arbiter_bus::AckMode::Each,
    };
    assert_eq!(bus.consumer_lag("behaviour").await.unwrap(), None);
    let mut deliveries = bus.consume(&config).await.unwrap();
    let mut seen = Vec::new();
    for i in 0..5 {
        let d = tokio::time::timeout(WAIT.get(), deliveries.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(d.delivered, 1);
        // The lag: the matching messages stored and not yet delivered.
        assert_eq!(d.pending, 4 - i, "{d:?}");
        assert!(d.message.subject.ends_with(".move"));
        seen.push(d);
    }
    // The consumer's lag, read apart from any delivery: all five delivered, none acknowledged.
    let lag = |pending, ack_pending| ConsumerLag {
        pending,
        ack_pending,
    };
    lag_becomes(&bus, "behaviour", lag(0, 5)).await;
    // Ack all but the third; it comes back after the ack wait, counted as a redelivery.
    let kept = seen.remove(2);
    for d in seen {
        d.ack().await.unwrap();
    }
    lag_becomes(&bus, "behaviour", lag(0, 1)).await;
    let again = tokio::time::timeout(WAIT.get(), deliveries.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(again.message.sequence, kept.message.sequence);
    assert!(again.delivered >= 2, "{again:?}");
    again.ack().await.unwrap();
    lag_becomes(&bus, "behaviour", lag(0, 0)).await;
    drop(deliveries);
    // A new consumer with the same name carries on after what was acknowledged.
    bus.publish(out("shogi.game.c9.move", "c9", "late"))
        .await
        .unwrap();
    let mut deliveries = bus.consume(&config).await.unwrap();
    let d = tokio::time::timeout(WAIT.get(), deliveries.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(d.message.subject, "shogi.game.c9.move");
    d.ack().await.unwrap();
}

/// A limited consumer delivers a message it never gets an ack for `max_deliver` times, then
/// gives it up and goes on with the next.
async fn durable_consumers_give_up_after_max_deliver(bus: Bus, delivery: DeliveryMode) {
    let config = DurableConfig {
        name: "limited".into(),
        filter: "shogi.game.*.move".into(),
        ack_wait: Duration::from_secs(1),
        max_ack_pending: 100,
        max_deliver: Some(2),
        replicas: None,
        delivery,
        storage: arbiter_bus::ConsumerStorage::Auto,
        acks: arbiter_bus::AckMode::Each,
    };
    bus.publish(out("shogi.game.l1.move", "l1", "m"))
        .await
        .unwrap();
    let mut deliveries = bus.consume(&config).await.unwrap();
    for n in 1..=2 {
        let d = tokio::time::timeout(WAIT.get(), deliveries.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            (d.message.subject.as_str(), d.delivered),
            ("shogi.game.l1.move", n)
        );
    }
    bus.publish(out("shogi.game.l2.move", "l2", "m"))
        .await
        .unwrap();
    let d = tokio::time::timeout(WAIT.get(), deliveries.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(d.message.subject, "shogi.game.l2.move");
    d.ack().await.unwrap();
    // Two ack waits on, the first has not come a third time.
    let third = tokio::time::timeout(Duration::from_millis(2500), deliveries.next()).await;
    assert!(third.is_err(), "delivered after max deliver: {third:?}");
}

#[tokio::test]
async fn memory_bus_publish_and_read() {
    publish_dedupes_and_guards_sequences(Arc::new(MemoryBus::default())).await;
}

#[tokio::test]
async fn memory_bus_reads_in_batches() {
    let bus: Bus = Arc::new(MemoryBus::default());
    assert_eq!(batches_read_what_next_reads(&bus).await, [7, 7, 7, 5]);
}

#[tokio::test]
async fn memory_bus_state() {
    state_follows_the_stream(Arc::new(MemoryBus::default())).await;
}

#[tokio::test]
async fn memory_bus_headers_round_trip() {
    headers_round_trip(Arc::new(MemoryBus::default())).await;
}

#[tokio::test]
async fn memory_bus_durable_consumers() {
    durable_consumers_ack_and_redeliver(Arc::new(MemoryBus::default()), DeliveryMode::Pull).await;
}

async fn jetstream(nats: &test_support::NatsServer) -> Bus {
    Arc::new(
        JetStreamBus::connect(
            &arbiter_bus::NatsOptions::new(nats.url()),
            "behaviour",
            &arbiter_bus::StreamSettings::new("BEHAVIOUR", "shogi.game.>"),
        )
        .await
        .unwrap(),
    )
}

#[tokio::test]
async fn jetstream_bus_publish_and_read() {
    let nats = test_support::NatsServer::start();
    publish_dedupes_and_guards_sequences(jetstream(&nats).await).await;
}

/// A guarded write carries no `Nats-Msg-Id`, so the server keeps no duplicate window for it
/// (issue 38: those windows were most of nats-server's heap); an unguarded one does. A copy of
/// the guarded write sent after the window, any time later, stores nothing twice.
#[tokio::test]
async fn jetstream_bus_keeps_message_ids_only_for_unguarded_writes() {
    let nats = test_support::NatsServer::start();
    let bus = jetstream(&nats).await;
    let Published::Stored(guarded) = bus
        .publish(out("shogi.game.g.move", "g1", "one").expect(0))
        .await
        .unwrap()
    else {
        panic!("not stored")
    };
    let Published::Stored(unguarded) = bus
        .publish(out("shogi.game.g.notice", "g-n", "n"))
        .await
        .unwrap()
    else {
        panic!("not stored")
    };
    let client = async_nats::connect(nats.url()).await.unwrap();
    let stream = async_nats::jetstream::new(client)
        .get_stream("BEHAVIOUR")
        .await
        .unwrap();
    let id = |seq| {
        let stream = stream.clone();
        async move {
            let m = stream.get_raw_message(seq).await.unwrap();
            m.headers
                .get(async_nats::header::NATS_MESSAGE_ID)
                .map(|v| v.as_str().to_owned())
        }
    };
    assert_eq!(id(guarded).await, None);
    assert_eq!(id(unguarded).await.as_deref(), Some("g-n"));
    let before = bus.state().await.unwrap();
    for _ in 0..3 {
        assert_eq!(
            bus.publish(out("shogi.game.g.move", "g1", "one").expect(0))
                .await
                .unwrap(),
            Published::Duplicate(guarded)
        );
    }
    assert_eq!(bus.state().await.unwrap(), before, "nothing stored twice");
}

/// On nats-server 2.11+ a batch is one direct get that brings up to the batch's size; on an
/// older server each is one message get. A stream that stops allowing direct gets (an operator
/// turned them off) is read one message get each, said at WARN, and nothing is missed.
#[tokio::test]
async fn jetstream_bus_reads_in_batches() {
    let nats = test_support::NatsServer::start();
    let bus = jetstream(&nats).await;
    let client = async_nats::connect(nats.url()).await.unwrap();
    let version = client.server_info().version;
    let sizes = batches_read_what_next_reads(&bus).await;
    if arbiter_bus::has_batched_gets(&version) {
        assert_eq!(sizes, [7, 7, 7, 5], "nats-server {version}");
    } else {
        assert_eq!(sizes, [1; 26], "nats-server {version}");
    }
    // Direct gets turned off under the bus: nobody answers them.
    let js = async_nats::jetstream::new(client);
    let mut config = js
        .get_stream("BEHAVIOUR")
        .await
        .unwrap()
        .cached_info()
        .config
        .clone();
    assert!(
        config.allow_direct,
        "the bus makes its stream with direct gets"
    );
    config.allow_direct = false;
    js.update_stream(config).await.unwrap();
    let (logs, _guard) = support::Logs::capture();
    let (read, sizes) = read_in_batches(&bus, "shogi.game.*.move.*", 7).await;
    assert_eq!(read.len(), 26);
    assert_eq!(read, read_one_by_one(&bus, "shogi.game.*.move.*").await);
    if arbiter_bus::has_batched_gets(&version) {
        assert_eq!(sizes, [1; 26]);
        assert!(logs.text().contains("batched reads off"), "{}", logs.text());
    }
}

/// A user refused direct gets (a validator upgraded before its user's rights, with an
/// auth.conf of an earlier release): the server drops the request without an answer, so the
/// first batch waits for it once (2 s), keeps its first message (a message get,
/// which the user may make) and turns batches off, said at WARN; every later read is one
/// message get at once, and a follow reads everything.
#[tokio::test]
async fn jetstream_bus_refused_direct_gets_reads_one_get_each_without_waiting_again() {
    let config = r#"
        authorization {
          users: [
            { user: app, password: app-secret,
              permissions: { publish: { allow: [">"], deny: ["$JS.API.DIRECT.GET.>"] } } }
          ]
        }
    "#;
    let nats = test_support::NatsServer::start_with_config(config);
    let mut options = arbiter_bus::NatsOptions::new(nats.url());
    options.user = Some("app".into());
    options.password = Some("app-secret".into());
    let (logs, _guard) = support::Logs::capture();
    let bus: Bus = Arc::new(
        JetStreamBus::connect(
            &options,
            "behaviour",
            &arbiter_bus::StreamSettings::new("BEHAVIOUR", "shogi.game.>"),
        )
        .await
        .unwrap(),
    );
    let version =
        async_nats::ConnectOptions::with_user_and_password("app".into(), "app-secret".into())
            .connect(nats.url())
            .await
            .unwrap()
            .server_info()
            .version;
    for i in 0..30 {
        bus.publish(out("shogi.game.r.move.1", &format!("r{i}"), "ply"))
            .await
            .unwrap();
    }
    let first = bus.next_batch("shogi.game.r.>", 1, 10).await.unwrap();
    assert_eq!(first.len(), 1, "the message get's one, the batch refused");
    if arbiter_bus::has_batched_gets(&version) {
        assert!(logs.text().contains("batched reads off"), "{}", logs.text());
    }
    // No later read asks again (each refused ask is said at WARN, counted below).
    let (read, sizes) = read_in_batches(&bus, "shogi.game.r.>", 10).await;
    assert_eq!(sizes, [1; 30]);
    assert_eq!(read, read_one_by_one(&bus, "shogi.game.r.>").await);
    let mut follow = bus.follow("shogi.game.r.>").await.unwrap();
    for stored in &read {
        let m = tokio::time::timeout(WAIT.get(), follow.next())
            .await
            .expect("followed in time")
            .unwrap()
            .unwrap();
        assert_eq!(m.sequence, stored.sequence);
    }
    assert_eq!(
        logs.text().matches("batched reads off").count(),
        usize::from(arbiter_bus::has_batched_gets(&version)),
        "asked once, said once: {}",
        logs.text()
    );
}

/// Following a subject reads what was stored before in batches (WatchGame's replay of a
/// game): 300 entries in a few requests on nats-server 2.11+ (the server's own count of the
/// messages it received), one each on an older server; then what is stored after, one a read.
#[tokio::test]
async fn jetstream_bus_follow_replays_in_batches() {
    let nats = test_support::NatsServer::start_monitored();
    let bus = jetstream(&nats).await;
    let version = async_nats::connect(nats.url())
        .await
        .unwrap()
        .server_info()
        .version;
    for i in 0..300 {
        bus.publish(out("shogi.game.f.move.1", &format!("f{i}"), "ply"))
            .await
            .unwrap();
    }
    let received = || {
        nats.varz().expect("the server's /varz")["in_msgs"]
            .as_u64()
            .expect("in_msgs")
    };
    let before = received();
    let mut follow = bus.follow("shogi.game.f.>").await.unwrap();
    for i in 0..300 {
        let m = tokio::time::timeout(WAIT.get(), follow.next())
            .await
            .expect("followed in time")
            .unwrap()
            .unwrap();
        assert_eq!(m.payload, b"ply"[..], "{i}");
    }
    let requests = received() - before;
    if arbiter_bus::has_batched_gets(&version) {
        assert!(
            requests <= 4,
            "{requests} requests for 300 entries (nats-server {version})"
        );
    } else {
        assert!(
            requests >= 300,
            "{requests} requests (nats-server {version})"
        );
    }
    // Live: what is stored after is read as it comes.
    let Published::Stored(seq) = bus
        .publish(out("shogi.game.f.move.1", "f-live", "live"))
        .await
        .unwrap()
    else {
        panic!("not stored")
    };
    let m = tokio::time::timeout(WAIT.get(), follow.next())
        .await
        .expect("followed in time")
        .unwrap()
        .unwrap();
    assert_eq!((m.sequence, &m.payload[..]), (seq, &b"live"[..]));
}

#[tokio::test]
async fn jetstream_bus_state() {
    let nats = test_support::NatsServer::start();
    state_follows_the_stream(jetstream(&nats).await).await;
}

/// A purge (what `streams prune` does, JetStream only) counts as removed, the last sequence
/// staying where it was.
#[tokio::test]
async fn jetstream_bus_state_counts_a_purge() {
    let nats = test_support::NatsServer::start();
    let js = JetStreamBus::connect(
        &arbiter_bus::NatsOptions::new(nats.url()),
        "behaviour",
        &arbiter_bus::StreamSettings::new("BEHAVIOUR", "shogi.game.>"),
    )
    .await
    .unwrap();
    for (i, subject) in [
        "shogi.game.a.created",
        "shogi.game.b.created",
        "shogi.game.a.move.1",
    ]
    .into_iter()
    .enumerate()
    {
        js.publish(out(subject, &format!("p{i}"), "x"))
            .await
            .unwrap();
    }
    assert_eq!(js.purge_subject("shogi.game.a.>").await.unwrap(), 2);
    let state = js.state().await.unwrap();
    assert_eq!((state.last_sequence, state.removed), (3, 2));
    // What the stream's messages take, for the store's gauge; the stream has no byte limit.
    assert!(state.bytes > 0, "{state:?}");
    assert_eq!(state.max_bytes, None);
}

#[tokio::test]
async fn jetstream_bus_headers_round_trip() {
    let nats = test_support::NatsServer::start();
    headers_round_trip(jetstream(&nats).await).await;
}

#[tokio::test]
async fn jetstream_bus_durable_consumers() {
    let nats = test_support::NatsServer::start();
    durable_consumers_ack_and_redeliver(jetstream(&nats).await, DeliveryMode::Pull).await;
}

// The same semantics when the consumer pushes with flow control (DeliveryMode::Push).
#[tokio::test]
async fn jetstream_bus_durable_push_consumers() {
    let nats = test_support::NatsServer::start();
    durable_consumers_ack_and_redeliver(jetstream(&nats).await, DeliveryMode::Push).await;
}

#[tokio::test]
async fn memory_bus_max_deliver() {
    durable_consumers_give_up_after_max_deliver(Arc::new(MemoryBus::default()), DeliveryMode::Pull)
        .await;
}

#[tokio::test]
async fn jetstream_bus_max_deliver() {
    let nats = test_support::NatsServer::start();
    durable_consumers_give_up_after_max_deliver(jetstream(&nats).await, DeliveryMode::Pull).await;
}

#[tokio::test]
async fn jetstream_bus_push_max_deliver() {
    let nats = test_support::NatsServer::start();
    durable_consumers_give_up_after_max_deliver(jetstream(&nats).await, DeliveryMode::Push).await;
}

#[tokio::test]
async fn jetstream_bus_refuses_a_replica_count_jetstream_does_not_allow() {
    let nats = test_support::NatsServer::start();
    for replicas in [0, 6] {
        let settings = arbiter_bus::StreamSettings {
            replicas,
            ..arbiter_bus::StreamSettings::new("REPLICAS", "shogi.game.>")
        };
        let err = JetStreamBus::connect(&arbiter_bus::NatsOptions::new(nats.url()), "t", &settings)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not in 1..=5"), "{err}");
    }
}
