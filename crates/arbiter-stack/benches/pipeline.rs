//! The event pipeline benchmark, one run on a real nats-server (spawned, temporary store):
//!
//! 1. raw JetStream consumption of move-sized messages with async-nats (a durable pull
//!    consumer, one ack each): the limit;
//! 2. the watcher consuming real move events (random legal games, 100 plies, no ending), one
//!    instance and two;
//! 3. memory per active game at 100 plies (resident set growth over 20,000 games);
//! 4. end to end: SubmitMove to the verdict a platform hears (`shogi.verdict.*`, the checked
//!    verdict the stream republishes), at a target load of 5,000 moves/s
//!    (validator, watcher and judge in this process over JetStream, as `shogi-arbiter serve
//!    --nats-url` runs them).
//!
//! `cargo bench -p arbiter-stack --bench pipeline [-- GAMES]` (default 500 games, 50,000
//! events).

use arbiter_runtime::compose::{self, Composition};
use arbiter_stack::{BusConfig, Opened};
use arbiter_worker::{Role, Stats, WorkerConfig};
use futures::StreamExt;
use prost::Message as _;
use shogi_adjudication::{Game, Ruleset};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use shogi_rules::Move;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::{PLIES, Rng, events, pct, publish_games, random_game};

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// The watcher's rate over the whole stream with `instances` instances, from fresh consumers
/// (the per-partition consumers of an earlier run are removed first).
async fn watcher_rate(
    js: &async_nats::jetstream::Context,
    url: &str,
    instances: u32,
    total: u64,
) -> f64 {
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    for p in 0..shogi_proto::PARTITIONS {
        let name = WorkerConfig::new(Role::Watcher).durable(p).name;
        let _ = stream.delete_consumer(&name).await;
    }
    let mut stats = Vec::new();
    // Each instance with a connection of its own, as separate processes would have, started
    // as the binaries start: the one composition, opening the bus as they open it.
    let start = Instant::now();
    let mut running = Vec::new();
    for i in 0..instances {
        let mut config = WorkerConfig::new(Role::Watcher);
        config.instance = i;
        config.instances = instances;
        let s = Arc::new(Stats::default());
        stats.push(s.clone());
        running.push(
            compose::start(Composition {
                bus: nats_bus(url),
                client_name: format!("watcher-{i}"),
                parts: vec![arbiter_worker::part(config, None, s)],
                health: None,
                grace_period: Duration::from_secs(10),
            })
            .await
            .unwrap(),
        );
    }
    loop {
        let judged: u64 = stats.iter().map(|s| Stats::get(&s.judged)).sum();
        if judged >= total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let rate = total as f64 / start.elapsed().as_secs_f64();
    for r in running {
        r.shutdown().await.unwrap();
    }
    rate
}

/// The bus on the server at `url` as every process opens it: the games' stream with its verdict
/// republish, and the side streams.
fn nats_bus(url: &str) -> BusConfig {
    BusConfig::Nats {
        options: Box::new(arbiter_bus::NatsOptions::new(url)),
        stream: shogi_proto::STREAM.to_owned(),
        replicas: 1,
    }
}

#[tokio::main]
async fn main() {
    let n_games: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(500);
    let nats = test_support::NatsServer::start();
    let client = async_nats::connect(nats.url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let bus = arbiter_stack::connect(&nats_bus(nats.url())).await.unwrap();
    let mut rng = Rng(0x5EED);
    let games: Vec<Vec<Move>> = (0..n_games).map(|_| random_game(&mut rng)).collect();
    let total = publish_games(&js, "w", &games).await as u64;
    let size: usize = events("w0", &games[0])
        .iter()
        .map(|e| e.encoded_len())
        .sum::<usize>()
        / PLIES;
    println!(
        "events: {total} MoveAccepted in {n_games} games of {PLIES} plies, {size} bytes each on average"
    );

    // 1. Raw consumption: the limit.
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let consumer = stream
        .create_consumer(async_nats::jetstream::consumer::pull::Config {
            durable_name: Some("raw".into()),
            filter_subject: shogi_proto::subject::ALL_MOVES.into(),
            ack_policy: async_nats::jetstream::consumer::AckPolicy::Explicit,
            max_ack_pending: 1024,
            ..Default::default()
        })
        .await
        .unwrap();
    let start = Instant::now();
    let mut messages = consumer.messages().await.unwrap();
    let mut n = 0u64;
    while n < total {
        let m = messages.next().await.unwrap().unwrap();
        m.ack().await.unwrap();
        n += 1;
    }
    let raw = total as f64 / start.elapsed().as_secs_f64();
    drop(messages);
    println!("raw JetStream consumption (async-nats, durable pull, ack each): {raw:.0} msg/s");

    // 2. The watcher, one instance then two.
    let one = watcher_rate(&js, nats.url(), 1, total).await;
    println!(
        "watcher, 1 instance: {one:.0} events/s ({:.2}x raw)",
        one / raw
    );
    let two = watcher_rate(&js, nats.url(), 2, total).await;
    println!(
        "watcher, 2 instances: {two:.0} events/s ({:.2}x raw)",
        two / raw
    );

    // 3. Memory per active game at 100 plies: the state a worker keeps (the game id and a
    // Game with its history).
    let n_mem = 20_000;
    let before = rss_bytes();
    let mut held: HashMap<String, (Game, u64, u64)> = HashMap::with_capacity(n_mem);
    for i in 0..n_mem {
        let mut game = Game::startpos(Ruleset::online());
        for &mv in &games[i % games.len()] {
            game.play(mv).unwrap();
        }
        held.insert(format!("w{i}"), (game, 0, 0));
    }
    let per_game = (rss_bytes().saturating_sub(before)) / n_mem;
    println!(
        "memory per active game at {PLIES} plies: {per_game} bytes (resident growth over {n_mem} games; size_of::<Game>() = {})",
        std::mem::size_of::<Game>()
    );
    drop(held);

    // 4. End to end at a target of 5,000 moves/s.
    e2e(&bus, &nats, &games).await;
}

async fn e2e(bus: &Opened, nats: &test_support::NatsServer, games: &[Vec<Move>]) {
    // The goal's rate; `E2E_TARGET` sets another, to see how the tail follows the load.
    let target: f64 = std::env::var("E2E_TARGET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000.0);
    const DRIVERS: usize = 50;
    const SECONDS: u64 = 10;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stack = arbiter_stack::Stack::start(listener, bus.clone(), Default::default())
        .await
        .unwrap();
    // Steady state: the measurement starts once every consumer has caught up with the stream
    // (the judge's consumers are new here and read the earlier runs' events first).
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    for role in [Role::Watcher, Role::Judge] {
        for p in 0..shogi_proto::PARTITIONS {
            let name = WorkerConfig::new(role).durable(p).name;
            loop {
                if let Ok(info) = stream.consumer_info(&name).await
                    && info.num_pending == 0
                    && info.num_ack_pending == 0
                {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    // Who waits for which game's verdict; the subscriber tells them when it arrives.
    type Waiters = Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<Instant>>>>;
    let waiters: Waiters = Arc::default();
    let sub_client = async_nats::connect(nats.url()).await.unwrap();
    let mut sub = sub_client
        .subscribe(shogi_proto::VERDICT_NOTICES)
        .await
        .unwrap();
    {
        let waiters = waiters.clone();
        tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                let at = Instant::now();
                let id = m.subject.split('.').nth(2).unwrap_or_default();
                if let Some(tx) = waiters.lock().unwrap().remove(id) {
                    let _ = tx.send(at);
                }
            }
        });
    }
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    // The probe: a perpetual check (21 plies), played again and again by one driver in five,
    // among the load of the others' random games.
    let probe: Vec<String> = "5g5f 5c5d 2h5h 5a5b 5f5e 5b5c 5h5f 5c6d 5f6f 6d7d 6f7f 7d6d 7f6f 6d7d 6f7f 7d6d 7f6f 6d7d 6f7f 7d6d 7f6f"
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let interval = Duration::from_secs_f64(DRIVERS as f64 / target);
    let deadline = Instant::now() + Duration::from_secs(SECONDS);
    let moves_done = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let latencies: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let submits: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let mut tasks = Vec::new();
    let started = Instant::now();
    // What the window costs: CPU time of this process (validator, workers, clients) and of
    // nats-server, and what the machine left idle, from the start to the deadline.
    let cpu = {
        let broker = nats.pid();
        let read = move || {
            (
                test_support::process_cpu(std::process::id()),
                test_support::process_cpu(broker),
                test_support::machine_idle(),
            )
        };
        let at_start = read();
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline.into()).await;
            let at_end = read();
            (
                at_end.0 - at_start.0,
                at_end.1 - at_start.1,
                at_end.2 - at_start.2,
            )
        })
    };
    for d in 0..DRIVERS {
        let mut client = MoveValidatorClient::new(channel.clone());
        let games: Vec<Vec<String>> = if d % 5 == 0 {
            vec![probe.clone()]
        } else {
            games
                .iter()
                .skip(d)
                .step_by(DRIVERS)
                .map(|g| g.iter().map(Move::to_string).collect())
                .collect()
        };
        let (waiters, moves_done, latencies) =
            (waiters.clone(), moves_done.clone(), latencies.clone());
        let submits = submits.clone();
        tasks.push(tokio::spawn(async move {
            // The drivers' ticks spread evenly over the interval, so that the load is one move
            // every interval / DRIVERS rather than DRIVERS moves at once every interval.
            let first = tokio::time::Instant::now() + interval.mul_f64(d as f64 / DRIVERS as f64);
            let mut tick = tokio::time::interval_at(first, interval);
            // Burst: a driver that fell behind (a game created, a verdict awaited) catches up,
            // so that the load reaches its target.
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let mut round = 0;
            while Instant::now() < deadline {
                let moves = &games[round % games.len()];
                let id = format!("e{d}-{round}");
                round += 1;
                client
                    .create_game(pb::CreateGameRequest {
                        ruleset: Some(pb::Ruleset {
                            preset: "online".into(),
                            overrides: None,
                        }),
                        start: None,
                        game_id: id.clone(),
                        strict: false,
                    })
                    .await
                    .unwrap();
                for (i, usi) in moves.iter().enumerate() {
                    tick.tick().await;
                    // The probe's last move ends it: wait for its verdict from the subscriber.
                    let waiter = (d % 5 == 0 && i + 1 == moves.len()).then(|| {
                        let (tx, rx) = tokio::sync::oneshot::channel();
                        waiters.lock().unwrap().insert(id.clone(), tx);
                        rx
                    });
                    let sent = Instant::now();
                    let answer = client
                        .submit_move(pb::SubmitMoveRequest {
                            game_id: id.clone(),
                            ply: i as u32 + 1,
                            usi: usi.clone(),
                            strict: false,
                        })
                        .await
                        .unwrap()
                        .into_inner();
                    submits.lock().unwrap().push(sent.elapsed());
                    // The rate is the window's: a game under way at the deadline is finished
                    // after it, by fewer drivers.
                    if sent < deadline {
                        moves_done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    if let Some(rx) = waiter {
                        assert!(answer.verdict.is_some(), "the probe ends on its last move");
                        if let Ok(Ok(at)) = tokio::time::timeout(Duration::from_secs(5), rx).await {
                            latencies
                                .lock()
                                .unwrap()
                                .push(at.saturating_duration_since(sent));
                        } else {
                            waiters.lock().unwrap().remove(&id);
                            println!("{id}: no verdict within 5 s");
                        }
                        break;
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let rate = moves_done.load(std::sync::atomic::Ordering::Relaxed) as f64
        / deadline.duration_since(started).as_secs_f64();
    let mut lat = latencies.lock().unwrap().clone();
    lat.sort();
    println!(
        "end to end at a target of {target:.0} moves/s: {rate:.0} moves/s achieved; SubmitMove -> verdict on the bus: n={} p50={:?} p90={:?} p99={:?} max={:?}, {} over 10 ms",
        lat.len(),
        pct(&lat, 0.5),
        pct(&lat, 0.9),
        pct(&lat, 0.99),
        lat.last().copied().unwrap_or_default(),
        lat.iter()
            .filter(|d| **d > Duration::from_millis(10))
            .count()
    );
    let (own, broker, idle) = cpu.await.unwrap();
    let moves = moves_done.load(std::sync::atomic::Ordering::Relaxed) as f64;
    let window = deadline.duration_since(started).as_secs_f64();
    println!(
        "  CPU per move: {:.0} us in this process (validator, watcher, judge, clients), {:.0} us in nats-server; {:.2} of {} cores idle",
        own.as_secs_f64() * 1e6 / moves,
        broker.as_secs_f64() * 1e6 / moves,
        idle.as_secs_f64() / window,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    let mut sub = submits.lock().unwrap().clone();
    sub.sort();
    println!(
        "  for comparison, the SubmitMove answer alone in the same run: p50={:?} p99={:?}",
        pct(&sub, 0.5),
        pct(&sub, 0.99)
    );
    stack.shutdown().await;
}
