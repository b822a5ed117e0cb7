//! A durable consumer's delivery mode, pull or push, against a real nats-server: `streams
//! apply` replaces a consumer made in the other mode by one that starts right after its ack
//! floor (the server cannot change the mode), and a worker that finds its consumer in the other
//! mode consumes it as it is and says how to replace it. The same for where a consumer keeps
//! its state, a file or memory, which the server cannot change either.

use arbiter_bus::{
    Applied, Bus, ConsumerStorage, DeliveryMode, DurableConfig, EventBus, JetStreamBus,
    NatsOptions, Outgoing, Provision, StreamSettings,
};
use futures::StreamExt as _;
use std::sync::Arc;
use std::time::Duration;
use support::Logs;
use test_support::NatsServer;

mod support;

const WAIT: test_support::Deadline = test_support::Deadline::secs(10);
const FILTER: &str = "shogi.game.*.move.3";

fn durable(delivery: DeliveryMode) -> DurableConfig {
    DurableConfig {
        name: "watcher-p3".into(),
        filter: FILTER.into(),
        ack_wait: Duration::from_secs(30),
        max_ack_pending: 1024,
        max_deliver: None,
        replicas: None,
        delivery,
        storage: arbiter_bus::ConsumerStorage::Auto,
        acks: arbiter_bus::AckMode::Each,
    }
}

async fn connect(nats: &NatsServer, provision: Provision) -> JetStreamBus {
    let mut options = NatsOptions::new(nats.url());
    options.provision = provision;
    JetStreamBus::connect(
        &options,
        "delivery",
        &StreamSettings::new("DELIVERY", "shogi.game.>"),
    )
    .await
    .unwrap()
}

/// Stores `n` moves of game `game` on partition 3 (and, between them, one event the consumer
/// does not match); their stream sequences.
async fn moves(bus: &JetStreamBus, game: &str, n: usize) -> Vec<u64> {
    let mut seqs = Vec::new();
    for i in 0..n {
        let published = bus
            .publish(Outgoing::new(
                format!("shogi.game.{game}.move.3"),
                "test.Move",
                format!("{game}-{i}"),
                &b"m"[..],
            ))
            .await
            .unwrap();
        let arbiter_bus::Published::Stored(seq) = published else {
            panic!("{published:?}")
        };
        seqs.push(seq);
        bus.publish(Outgoing::new(
            format!("shogi.game.{game}.warning"),
            "test.Warning",
            format!("{game}-w{i}"),
            &b"w"[..],
        ))
        .await
        .unwrap();
    }
    seqs
}

/// The consumer's ack floor (stream sequence) and its unacknowledged count, read by an admin
/// client.
async fn ack_state(nats: &NatsServer) -> (u64, usize, Option<String>) {
    let info = consumer_info(nats, "watcher-p3").await;
    (
        info.ack_floor.stream_sequence,
        info.num_ack_pending,
        info.config.deliver_subject,
    )
}

/// The consumer `name` as the server has it, read by an admin client.
async fn consumer_info(nats: &NatsServer, name: &str) -> async_nats::jetstream::consumer::Info {
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    js.get_stream("DELIVERY")
        .await
        .unwrap()
        .consumer_info(name)
        .await
        .unwrap()
}

/// A durable consumer's deliveries, as `EventBus::consume` gives them.
type Deliveries =
    futures::stream::BoxStream<'static, Result<arbiter_bus::Delivery, arbiter_bus::BusError>>;

/// A worker on `config`: each of `stored` delivered in order, the first `acked` of them
/// acknowledged; its deliveries, once the ack floor is at the last one acknowledged (or past
/// it, over events between it and the next that the consumer does not match).
async fn consume_acking_first(
    nats: &NatsServer,
    worker: &Bus,
    config: &DurableConfig,
    stored: &[u64],
    acked: usize,
) -> Deliveries {
    let mut deliveries = worker.consume(config).await.unwrap();
    for (i, &seq) in stored.iter().enumerate() {
        let d = tokio::time::timeout(WAIT.get(), deliveries.next())
            .await
            .expect("a delivery")
            .unwrap()
            .unwrap();
        assert_eq!(d.message.sequence, seq);
        if i < acked {
            d.ack().await.unwrap();
        }
    }
    until_ack_state(nats, |(floor, _, _)| {
        (stored[acked - 1]..stored[acked]).contains(floor)
    })
    .await;
    deliveries
}

/// Waits until the consumer's ack state ([`ack_state`]) is as `reached` says (an ack reaches
/// the server a little after it is sent).
async fn until_ack_state(
    nats: &NatsServer,
    reached: impl Fn(&(u64, usize, Option<String>)) -> bool,
) {
    let deadline = tokio::time::Instant::now() + WAIT.get();
    loop {
        let state = ack_state(nats).await;
        if reached(&state) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{state:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// What `streams apply` does with the consumer `config` (`JetStreamBus::apply_durable`).
async fn apply(admin: &JetStreamBus, config: &DurableConfig) -> Applied {
    admin.apply_durable(config).await.unwrap()
}

/// The stream sequences of the next `n` deliveries, each acknowledged.
async fn take_acked(deliveries: &mut Deliveries, n: usize) -> Vec<u64> {
    let mut got = Vec::new();
    for _ in 0..n {
        let d = tokio::time::timeout(WAIT.get(), deliveries.next())
            .await
            .expect("a delivery")
            .unwrap()
            .unwrap();
        got.push(d.message.sequence);
        d.ack().await.unwrap();
    }
    got
}

#[tokio::test]
async fn a_pull_consumer_is_replaced_by_a_push_one_that_starts_after_its_ack_floor() {
    let nats = NatsServer::start();
    let admin = connect(&nats, Provision::Create).await;
    assert_eq!(
        apply(&admin, &durable(DeliveryMode::Pull)).await,
        Applied::Created
    );
    let stored = moves(&admin, "g", 10).await;

    // A pull worker: all ten delivered, the first six acknowledged, the other four not.
    let worker: Bus = Arc::new(connect(&nats, Provision::Bind).await);
    let deliveries =
        consume_acking_first(&nats, &worker, &durable(DeliveryMode::Pull), &stored, 6).await;
    assert_eq!(
        ack_state(&nats).await.1,
        4,
        "four delivered, not acknowledged"
    );
    // The worker stops (as an upgrade stops it), and two more moves come meanwhile.
    drop(deliveries);
    drop(worker);
    let later = moves(&admin, "h", 2).await;

    // `streams apply` with push: replaced, starting after the ack floor.
    let acked = ack_state(&nats).await.0;
    let applied = apply(&admin, &durable(DeliveryMode::Push)).await;
    assert_eq!(
        applied,
        Applied::Replaced {
            from_sequence: acked + 1
        }
    );
    let (_, _, deliver_subject) = ack_state(&nats).await;
    assert_eq!(
        deliver_subject.as_deref(),
        Some(arbiter_bus::deliver_subject("watcher-p3").as_str())
    );
    // Nothing left to change: a second run says so.
    assert_eq!(
        apply(&admin, &durable(DeliveryMode::Push)).await,
        Applied::Unchanged
    );

    // A push worker gets the four unacknowledged and the two new ones, in order, and nothing
    // acknowledged before.
    let worker: Bus = Arc::new(connect(&nats, Provision::Bind).await);
    let mut deliveries = worker.consume(&durable(DeliveryMode::Push)).await.unwrap();
    let want: Vec<u64> = stored[6..].iter().chain(&later).copied().collect();
    assert_eq!(take_acked(&mut deliveries, want.len()).await, want);
    // Everything acknowledged, and the consumer delivered those six and nothing else.
    until_ack_state(&nats, |&(floor, ack_pending, _)| {
        floor >= *later.last().unwrap() && ack_pending == 0
    })
    .await;
    let info = consumer_info(&nats, "watcher-p3").await;
    assert_eq!(info.delivered.consumer_sequence, want.len() as u64);
    assert_eq!(info.num_redelivered, 0);

    // And back to pull the same way, after everything acknowledged: nothing delivered again.
    let acked = ack_state(&nats).await.0;
    assert_eq!(
        apply(&admin, &durable(DeliveryMode::Pull)).await,
        Applied::Replaced {
            from_sequence: acked + 1
        }
    );
    assert_eq!(
        admin
            .consumer_lag("watcher-p3")
            .await
            .unwrap()
            .unwrap()
            .pending,
        0
    );
}

/// A worker configured to push whose consumer was made to pull (before `streams apply` made
/// push consumers), in bind and in create mode: its deliveries still come, by pulling, the
/// consumer is left as it is, and the warning names the command that replaces it.
#[tokio::test]
async fn a_push_worker_consumes_a_pull_consumer_as_it_is_and_says_how_to_replace_it() {
    let nats = NatsServer::start();
    let admin = connect(&nats, Provision::Create).await;
    let seq = moves(&admin, "g", 1).await[0];
    // A consumer each (a dropped pull stream leaves its last pull request on the server, which
    // would take the next round's move).
    for (provision, name) in [
        (Provision::Bind, "watcher-p3"),
        (Provision::Create, "judge-p3"),
    ] {
        let config = |delivery| DurableConfig {
            name: name.into(),
            ..durable(delivery)
        };
        apply(&admin, &config(DeliveryMode::Pull)).await;
        let worker: Bus = Arc::new(connect(&nats, provision).await);
        let (logs, guard) = Logs::capture();
        let mut deliveries = worker.consume(&config(DeliveryMode::Push)).await.unwrap();
        drop(guard);
        let d = tokio::time::timeout(WAIT.get(), deliveries.next())
            .await
            .unwrap_or_else(|_| panic!("{provision:?}: no delivery; logged {}", logs.text()))
            .unwrap()
            .unwrap();
        assert_eq!(d.message.sequence, seq, "{provision:?}");
        d.ack().await.unwrap();
        let text = logs.text();
        assert!(text.contains(name), "{text}");
        assert!(text.contains("other delivery mode"), "{text}");
        assert!(
            text.contains("streams apply --consumer-delivery push"),
            "{text}"
        );
        // Nothing else is reported as different: the mode is said once.
        assert!(
            !text.contains("not as this service is configured"),
            "{text}"
        );
        let info = consumer_info(&nats, name).await;
        assert_eq!(info.config.deliver_subject, None, "left a pull consumer");
        drop(deliveries);
    }
}

/// A push consumer stalled on a lost flow control request delivers again to the next instance.
///
/// nats-server asks a push consumer's subscriber to answer flow control once it has sent half
/// its window (1 MiB of its 2 MiB), and sends nothing more past the window until the answer
/// comes. Here the instance that got the request never answers: it stops, as one does in a
/// rolling upgrade (the cluster test lost a game's verdict so, the judge of its partition idle
/// for minutes). The next instance hears only idle heartbeats, which name the request the
/// server still waits for (`Nats-Consumer-Stalled`): the bus answers it and the deliveries
/// come again. async-nats's push consumer answers flow control requests but not that header,
/// and this test fails with it.
#[tokio::test]
async fn a_push_consumer_stalled_on_a_lost_flow_control_request_delivers_again() {
    let nats = NatsServer::start();
    let admin = connect(&nats, Provision::Create).await;
    let config = durable(DeliveryMode::Push);
    apply(&admin, &config).await;
    let (_, _, deliver) = ack_state(&nats).await;
    let deliver = deliver.expect("a push consumer's deliver subject");

    // The instance that stops: it reads, acknowledges nothing and answers no flow control.
    let raw = async_nats::connect(nats.url()).await.unwrap();
    let mut lost = raw
        .queue_subscribe(deliver.clone(), config.name.clone())
        .await
        .unwrap();
    raw.flush().await.unwrap();
    // 48 moves of 64 KiB: 3 MiB, more than the window.
    let payload = vec![b'x'; 64 * 1024];
    for i in 0..48 {
        admin
            .publish(Outgoing::new(
                "shogi.game.big.move.3",
                "test.Move",
                format!("big-{i}"),
                payload.clone(),
            ))
            .await
            .unwrap();
    }
    // It gets the flow control request, and the moves up to the window; none after.
    let deadline = tokio::time::Instant::now() + WAIT.get();
    let mut asked = false;
    let mut received = 0;
    while !asked || received < 32 {
        let m = tokio::time::timeout_at(deadline, lost.next())
            .await
            .unwrap_or_else(|_| panic!("{received} moves, flow control asked: {asked}"))
            .unwrap();
        match m.status {
            Some(async_nats::StatusCode::IDLE_HEARTBEAT) if m.reply.is_some() => asked = true,
            Some(_) => {}
            None => received += 1,
        }
    }
    assert!(
        received < 48,
        "the window held back the rest: {received} of 48"
    );
    drop(lost);
    raw.flush().await.unwrap();

    // The next instance, through the bus: a small move after the stall comes to it.
    let worker: Bus = Arc::new(connect(&nats, Provision::Bind).await);
    let mut deliveries = worker.consume(&config).await.unwrap();
    let after = moves(&admin, "after", 1).await[0];
    let deadline = tokio::time::Instant::now() + WAIT.get();
    loop {
        let d = tokio::time::timeout_at(deadline, deliveries.next())
            .await
            .expect("deliveries again after the stall (within the deadline)")
            .unwrap()
            .unwrap();
        let sequence = d.message.sequence;
        d.ack().await.unwrap();
        if sequence == after {
            break;
        }
    }
}

/// Where a consumer keeps its state, a file or memory, which the server cannot change
/// ("storage type can not be updated"): `streams apply` replaces a consumer kept in the other
/// one by one that starts right after its ack floor; a worker that finds it kept elsewhere
/// consumes it as it is and says how to replace it; and `auto` is a file on a one-server
/// stream (R1: memory would lose the position at the server's every restart).
#[tokio::test]
async fn a_file_consumer_is_replaced_by_a_memory_one_that_starts_after_its_ack_floor() {
    let nats = NatsServer::start();
    let admin = connect(&nats, Provision::Create).await;
    let kept = |storage| DurableConfig {
        storage,
        ..durable(DeliveryMode::Pull)
    };
    assert_eq!(
        apply(&admin, &kept(ConsumerStorage::Auto)).await,
        Applied::Created
    );
    let info = consumer_info(&nats, "watcher-p3").await;
    assert!(!info.config.memory_storage, "auto on R1 is a file");
    assert_eq!(
        apply(&admin, &kept(ConsumerStorage::File)).await,
        Applied::Unchanged
    );
    let stored = moves(&admin, "g", 6).await;

    // A worker: all six delivered, the first four acknowledged.
    let worker: Bus = Arc::new(connect(&nats, Provision::Bind).await);
    let deliveries =
        consume_acking_first(&nats, &worker, &kept(ConsumerStorage::File), &stored, 4).await;
    drop(deliveries);
    drop(worker);

    // `streams apply` with memory: replaced, after the ack floor, in memory.
    let acked = ack_state(&nats).await.0;
    assert_eq!(
        apply(&admin, &kept(ConsumerStorage::Memory)).await,
        Applied::Replaced {
            from_sequence: acked + 1
        }
    );
    let info = consumer_info(&nats, "watcher-p3").await;
    assert!(info.config.memory_storage, "{:?}", info.config);
    assert_eq!(info.config.deliver_subject, None, "still pulled");
    assert_eq!(
        apply(&admin, &kept(ConsumerStorage::Memory)).await,
        Applied::Unchanged
    );

    // A worker configured for a file (create mode) consumes the memory consumer as it is: the
    // two unacknowledged moves, nothing acknowledged before; and it says how to replace it.
    let worker: Bus = Arc::new(connect(&nats, Provision::Create).await);
    let (logs, guard) = Logs::capture();
    let mut deliveries = worker.consume(&kept(ConsumerStorage::File)).await.unwrap();
    drop(guard);
    assert_eq!(take_acked(&mut deliveries, 2).await, stored[4..]);
    let text = logs.text();
    assert!(text.contains("keeps its state elsewhere"), "{text}");
    assert!(
        text.contains("streams apply --consumer-storage file"),
        "{text}"
    );
    assert!(
        consumer_info(&nats, "watcher-p3")
            .await
            .config
            .memory_storage,
        "left in memory"
    );
    drop(deliveries);
    drop(worker);

    // `auto` on this one-server stream is a file again: replaced after the floor, with
    // nothing left to deliver.
    until_ack_state(&nats, |(floor, _, _)| *floor >= stored[5]).await;
    let acked = ack_state(&nats).await.0;
    assert_eq!(
        apply(&admin, &kept(ConsumerStorage::Auto)).await,
        Applied::Replaced {
            from_sequence: acked + 1
        }
    );
    assert!(
        !consumer_info(&nats, "watcher-p3")
            .await
            .config
            .memory_storage
    );
    assert_eq!(
        admin
            .consumer_lag("watcher-p3")
            .await
            .unwrap()
            .unwrap()
            .pending,
        0
    );
}

/// A consumer with cumulative acks (issue 38): one ack of the last of a run acknowledges the
/// whole run, nothing comes again; `streams apply` replaces a consumer that acks each delivery
/// by one that acks cumulatively, after its ack floor, and a worker that finds the old one
/// acknowledges each delivery on it, as it is, and says how to replace it.
#[tokio::test]
async fn cumulative_acks_acknowledge_a_run_with_one_message() {
    let nats = NatsServer::start();
    let admin = connect(&nats, Provision::Create).await;
    let with = |acks| DurableConfig {
        acks,
        ..durable(DeliveryMode::Push)
    };
    assert_eq!(
        apply(&admin, &with(arbiter_bus::AckMode::Each)).await,
        Applied::Created
    );
    let stored = moves(&admin, "g", 6).await;
    let worker: Bus = Arc::new(connect(&nats, Provision::Bind).await);
    let (logs, guard) = Logs::capture();
    let deliveries = consume_acking_first(
        &nats,
        &worker,
        &with(arbiter_bus::AckMode::Cumulative),
        &stored,
        2,
    )
    .await;
    drop(guard);
    assert!(
        logs.text().contains("the other ack policy"),
        "{}",
        logs.text()
    );
    drop(deliveries);
    drop(worker);

    let acked = ack_state(&nats).await.0;
    assert_eq!(
        apply(&admin, &with(arbiter_bus::AckMode::Cumulative)).await,
        Applied::Replaced {
            from_sequence: acked + 1
        }
    );
    let info = consumer_info(&nats, "watcher-p3").await;
    assert_eq!(
        info.config.ack_policy,
        async_nats::jetstream::consumer::AckPolicy::All
    );
    // The four left, delivered in order; only the last acknowledged.
    let worker: Bus = Arc::new(connect(&nats, Provision::Bind).await);
    let mut deliveries = worker
        .consume(&with(arbiter_bus::AckMode::Cumulative))
        .await
        .unwrap();
    let mut last = None;
    for &seq in &stored[2..] {
        let d = tokio::time::timeout(WAIT.get(), deliveries.next())
            .await
            .expect("a delivery")
            .unwrap()
            .unwrap();
        assert_eq!(d.message.sequence, seq);
        assert_eq!(d.acks, arbiter_bus::AckMode::Cumulative);
        last = Some(d);
    }
    last.unwrap().ack().await.unwrap();
    until_ack_state(&nats, |(floor, pending, _)| {
        *floor >= stored[5] && *pending == 0
    })
    .await;
}
