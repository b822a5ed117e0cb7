//! The event pipeline benchmark, one run on a real nats-server (spawned, temporary store):
//!
//! 1. raw JetStream consumption of move-sized messages with async-nats (a durable pull
//!    consumer, one ack each): the limit;
//! 2. the watcher consuming real move events (random legal games, 100 plies, no ending), one
//!    instance and two;
//! 3. memory per active game at 100 plies (resident set growth over 20,000 games);
//! 4. end to end: SubmitMove to the verdict a platform hears (`shogi.verdict.*`, the checked
//!    verdict the stream republishes), with the validator, watcher and judge in this process
//!    over JetStream, as `shogi-arbiter serve --nats-url` runs them: the machine's saturation
//!    rate found, then the tail at half of it (or at the targets `E2E_TARGET` gives).
//!
//! `cargo bench -p arbiter-stack --bench pipeline [-- GAMES]` (default 500 games, 50,000
//! events). `E2E_ONLY=1` runs part 4 alone; `E2E_TARGET` and `E2E_RUNS`: see [`e2e`].
//! `E2E_STREAM=1`: part 4's clients send their moves on SubmitMoves streams, one kept open a
//! client, instead of a SubmitMove call a move.

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
use std::time::{Duration, Instant, SystemTime};

mod common;
use common::{PLIES, Rng, events, last_stored, pct, publish_games, random_game};

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

/// The type and device of the file system that holds `path`, from `/proc/mounts` (the longest
/// mount point that is a prefix of it).
fn file_system(path: &std::path::Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 3 && path.starts_with(f[1]))
                .then(|| (f[1].len(), format!("{} ({})", f[2], f[0])))
        })
        .max_by_key(|(len, _)| *len)
        .map_or_else(|| "an unknown file system".into(), |(_, fs)| fs)
}

#[tokio::main]
async fn main() {
    let n_games: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(500);
    // Monitored: each window reads the server's own message counts and memory (`/varz`).
    let nats = test_support::NatsServer::start_monitored();
    // The store's file system and the Go runtime's collector settings decide the tail (see
    // docs/benchmarks-history.md, "What stalls the tail"): TMPDIR moves the store, GOGC and
    // GOMEMLIMIT are passed on to nats-server.
    println!(
        "nats-server: store {} on {}; GOGC={}, GOMEMLIMIT={}",
        nats.store_dir().display(),
        file_system(nats.store_dir()),
        std::env::var("GOGC").unwrap_or_else(|_| "(default, 100)".into()),
        std::env::var("GOMEMLIMIT").unwrap_or_else(|_| "(none)".into()),
    );
    let client = async_nats::connect(nats.url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let bus = arbiter_stack::connect(&nats_bus(nats.url())).await.unwrap();
    let mut rng = Rng(0x5EED);
    let games: Vec<Vec<Move>> = (0..n_games).map(|_| random_game(&mut rng)).collect();
    if std::env::var_os("E2E_ONLY").is_some() {
        e2e(&bus, &nats, &games).await;
        return;
    }
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

    // 4. End to end.
    e2e(&bus, &nats, &games).await;
}

/// One probe's verdict, timed.
struct Probe {
    id: String,
    latency: Duration,
    sent: SystemTime,
    answered: SystemTime,
    heard: SystemTime,
}

/// Where the slowest probes' time went, hop by hop: from sending the last move to the stream
/// storing it, answering it, storing the watcher's announcement (`.verdict`), storing the
/// validator's checked verdict (`.result`, republished) and the subscriber hearing it. The
/// stream's timestamps are nats-server's wall clock on this machine, as the probes' are.
async fn timeline(js: &async_nats::jetstream::Context, probes: &[Probe], n: usize) {
    let Ok(stream) = js.get_stream(shogi_proto::STREAM).await else {
        return;
    };
    let ms = |from: SystemTime, to: SystemTime| match to.duration_since(from) {
        Ok(d) => d.as_secs_f64() * 1e3,
        Err(e) => -e.duration().as_secs_f64() * 1e3,
    };
    println!(
        "  the slowest verdicts, ms after the last move was sent: move stored / answered / announced (.verdict stored) / checked (.result stored) / heard"
    );
    // The slowest, and the median one for comparison.
    let picks = probes
        .iter()
        .take(n)
        .chain(probes.get(probes.len() / 2))
        .collect::<Vec<_>>();
    for p in picks {
        let stored = async |subject: String| last_stored(&stream, &subject).await.map(|(_, t)| t);
        let moved = stored(shogi_proto::subject::moves(&p.id)).await;
        let announced = stored(shogi_proto::subject::verdict(&p.id)).await;
        let checked = stored(shogi_proto::subject::result(&p.id)).await;
        let f =
            |t: Option<SystemTime>| t.map_or("?".to_owned(), |t| format!("{:.2}", ms(p.sent, t)));
        // The time of day (UTC) the move was sent, to set beside other records of the moment
        // (nats-server's log, a profiler's).
        let at = p
            .sent
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let (s, ms_of) = (at.as_secs() % 86_400, at.subsec_millis());
        println!(
            "    {} (sent {:02}:{:02}:{:02}.{ms_of:03}): {} / {:.2} / {} / {} / {:.2}",
            p.id,
            s / 3600,
            s / 60 % 60,
            s % 60,
            f(moved),
            ms(p.sent, p.answered),
            f(announced),
            f(checked),
            ms(p.sent, p.heard),
        );
    }
}

/// What one window of load measured.
struct Window {
    target: f64,
    /// Moves sent within the window, per second.
    rate: f64,
    /// SubmitMove of a probe's last move to its verdict on `shogi.verdict.*`, sorted.
    verdicts: Vec<Duration>,
    /// Probes whose verdict did not come within 5 s.
    lost: usize,
    /// Each timed probe: its game, when its last move was sent and answered and when its
    /// verdict was heard (wall clock, to set beside the stream's timestamps), slowest first.
    probes: Vec<Probe>,
    /// Every SubmitMove's answer, sorted.
    answers: Vec<Duration>,
    moves: u64,
    seconds: f64,
    /// CPU time of this process (validator, workers, clients) and of nats-server, and the
    /// machine's idle time, over the window.
    own: Duration,
    broker: Duration,
    idle: Duration,
    /// The machine's steal time over the window: CPU the hypervisor gave to other guests while
    /// this one had work.
    steal: Duration,
    /// nats-server's own message counts and memory over the window.
    nats: Option<NatsCounts>,
}

impl Window {
    fn over_10ms(&self) -> usize {
        self.verdicts
            .iter()
            .filter(|d| **d > Duration::from_millis(10))
            .count()
    }

    fn idle_cores(&self) -> f64 {
        self.idle.as_secs_f64() / self.seconds
    }

    fn report(&self, what: &str) {
        let v = &self.verdicts;
        println!(
            "{what}: target {:.0} moves/s, {:.0} achieved; SubmitMove -> verdict on the bus: n={} p50={:?} p90={:?} p99={:?} max={:?}, {} over 10 ms{}",
            self.target,
            self.rate,
            v.len(),
            pct(v, 0.5),
            pct(v, 0.9),
            pct(v, 0.99),
            v.last().copied().unwrap_or_default(),
            self.over_10ms(),
            if self.lost > 0 {
                format!(", {} without a verdict within 5 s", self.lost)
            } else {
                String::new()
            },
        );
        let moves = self.moves.max(1) as f64;
        println!(
            "  CPU per move: {:.0} us in this process (validator, watcher, judge, clients), {:.0} us in nats-server; {:.2} of {} cores idle, {:.3} stolen",
            self.own.as_secs_f64() * 1e6 / moves,
            self.broker.as_secs_f64() * 1e6 / moves,
            self.idle_cores(),
            cores(),
            self.steal.as_secs_f64() / self.seconds,
        );
        if let Some(n) = &self.nats {
            println!(
                "  NATS messages per move (nats-server's /varz, creations, endings and verdicts amortised): {:.2} ({} in, {} out, {} moves); nats-server resident memory {:.1} MB",
                (n.in_msgs + n.out_msgs) as f64 / n.moves.max(1) as f64,
                n.in_msgs,
                n.out_msgs,
                n.moves,
                n.mem as f64 / 1e6,
            );
        }
        println!(
            "  for comparison, the SubmitMove answer alone in the same window: p50={:?} p99={:?}",
            pct(&self.answers, 0.5),
            pct(&self.answers, 0.99)
        );
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Clients paced to this share of the target, each with one call in flight.
const DRIVERS: usize = 50;

/// End to end: SubmitMove to the verdict a platform hears.
///
/// By default the machine's saturation rate is found first (windows of 5 s at rising targets,
/// until the pipeline falls short of its target), then the tail is measured for 10 s at half
/// of it (issue 24, goal 2: p99 <= 10 ms there). `E2E_TARGET=5000[,10000...]` measures 10 s
/// windows at those targets instead, as the earlier tables did. `E2E_RUNS=N` repeats the
/// measured window(s) N times on the same stack; `E2E_SECS` sets their length (10 s). Each
/// measured window prints the hops of its `E2E_TIMELINE` (5) slowest verdicts and of its
/// median one.
async fn e2e(bus: &Opened, nats: &test_support::NatsServer, games: &[Vec<Move>]) {
    let fixed: Vec<f64> = std::env::var("E2E_TARGET")
        .ok()
        .map(|v| v.split(',').filter_map(|t| t.trim().parse().ok()).collect())
        .unwrap_or_default();
    let runs: usize = std::env::var("E2E_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    // How long each measured window lasts, in seconds (10; 120 and more fill nats-server's
    // two-minute duplicate window, which its heap holds).
    let secs: u64 = std::env::var("E2E_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    // How many of the slowest verdicts' timelines each measured window prints.
    let slowest: usize = std::env::var("E2E_TIMELINE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // As `shogi-arbiter serve --nats-url` runs it: both roles on one consumer a partition.
    let config = arbiter_stack::StackConfig {
        workers: vec![WorkerConfig::new(Role::Both)],
        ..Default::default()
    };
    let stack = arbiter_stack::Stack::start(listener, bus.clone(), config)
        .await
        .unwrap();
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    // Who waits for which game's verdict; the subscriber tells them when it arrives.
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
                let at = (Instant::now(), SystemTime::now());
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
    let load = Load {
        channel,
        waiters,
        nats,
        games,
    };
    let mut n = 0;
    let mut next_tag = || {
        n += 1;
        n
    };
    if !fixed.is_empty() {
        for run in 1..=runs {
            for &target in &fixed {
                settle(&js).await;
                let w = load.window(target, secs, next_tag()).await;
                w.report(&format!("end to end{} (run {run})", how()));
                timeline(&js, &w.probes, slowest).await;
            }
        }
        stack.shutdown().await;
        return;
    }

    // The saturation rate: the most the pipeline achieved, from a target it met to the first
    // it fell 5% short of.
    let mut target = 2_500.0;
    let mut saturation: f64 = 0.0;
    loop {
        settle(&js).await;
        let w = load.window(target, 5, next_tag()).await;
        println!(
            "  saturation search: target {:.0} moves/s, {:.0} achieved, {:.2} of {} cores idle, answer p99 {:?}",
            w.target,
            w.rate,
            w.idle_cores(),
            cores(),
            pct(&w.answers, 0.99)
        );
        saturation = saturation.max(w.rate);
        if w.rate < 0.95 * target || target >= 500_000.0 {
            break;
        }
        target *= 1.5;
    }
    println!("saturation: {saturation:.0} moves/s on this machine");
    let half = (saturation / 2.0).round();
    let mut met = 0;
    for run in 1..=runs {
        settle(&js).await;
        let w = load.window(half, secs, next_tag()).await;
        w.report(&format!(
            "end to end at half the saturation rate{} (run {run})",
            how()
        ));
        timeline(&js, &w.probes, slowest).await;
        if pct(&w.verdicts, 0.99) <= Duration::from_millis(10) && w.lost == 0 {
            met += 1;
        }
    }
    println!(
        "issue 24, goal 2 (p99 <= 10 ms at half the saturation rate): {met} of {runs} runs met"
    );
    stack.shutdown().await;
}

type Waiters = Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<(Instant, SystemTime)>>>>;

/// Steady state: a window starts once every consumer has caught up with the stream (a
/// window's backlog, or the judge's new consumers reading the earlier parts' events, would
/// otherwise be measured in the next).
async fn settle(js: &async_nats::jetstream::Context) {
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    // The stack's worker: both roles on one consumer a partition (issue 38).
    for p in 0..shogi_proto::PARTITIONS {
        let name = WorkerConfig::new(Role::Both).durable(p).name;
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

/// The clients and what they play.
struct Load<'a> {
    channel: tonic::transport::Channel,
    waiters: Waiters,
    nats: &'a test_support::NatsServer,
    games: &'a [Vec<Move>],
}

impl Load<'_> {
    /// `DRIVERS` clients paced to `target` moves/s in total for `seconds`: one in five plays a
    /// perpetual check (21 plies) again and again, the probe whose verdict is timed, among the
    /// others' random games. `tag` keeps each window's game ids apart.
    async fn window(&self, target: f64, seconds: u64, tag: usize) -> Window {
        let probe: Vec<String> = "5g5f 5c5d 2h5h 5a5b 5f5e 5b5c 5h5f 5c6d 5f6f 6d7d 6f7f 7d6d 7f6f 6d7d 6f7f 7d6d 7f6f 6d7d 6f7f 7d6d 7f6f"
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let interval = Duration::from_secs_f64(DRIVERS as f64 / target);
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let moves_done = Arc::new(std::sync::atomic::AtomicU64::new(0));
        // Every move, the window's and those of the games it finishes after its deadline: what
        // the server's message counts are divided by.
        let all_moves = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let varz_start = self.nats.varz();
        let probes: Arc<Mutex<Vec<Probe>>> = Arc::default();
        let submits: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let lost = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut tasks = Vec::new();
        let started = Instant::now();
        let cpu = {
            let broker = self.nats.pid();
            let read = move || {
                (
                    test_support::process_cpu(std::process::id()),
                    test_support::process_cpu(broker),
                    test_support::machine_idle(),
                    test_support::machine_steal(),
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
                    at_end.3 - at_start.3,
                )
            })
        };
        let stream = on_streams();
        for d in 0..DRIVERS {
            let mut client = MoveValidatorClient::new(self.channel.clone());
            let mut mover = Mover::open(&self.channel, stream).await;
            let games: Vec<Vec<String>> = if d % 5 == 0 {
                vec![probe.clone()]
            } else {
                self.games
                    .iter()
                    .skip(d)
                    .step_by(DRIVERS)
                    .map(|g| g.iter().map(Move::to_string).collect())
                    .collect()
            };
            let (waiters, moves_done) = (self.waiters.clone(), moves_done.clone());
            let all_moves = all_moves.clone();
            let (submits, lost, probes) = (submits.clone(), lost.clone(), probes.clone());
            tasks.push(tokio::spawn(async move {
                // The drivers' ticks spread evenly over the interval, so that the load is one
                // move every interval / DRIVERS rather than DRIVERS moves at once every interval.
                let first =
                    tokio::time::Instant::now() + interval.mul_f64(d as f64 / DRIVERS as f64);
                let mut tick = tokio::time::interval_at(first, interval);
                // Burst: a driver that fell behind (a game created, a verdict awaited) catches
                // up, so that the load reaches its target.
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
                let mut round = 0;
                while Instant::now() < deadline {
                    let moves = &games[round % games.len()];
                    let id = format!("e{tag}-{d}-{round}");
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
                        // The probe's last move ends it: wait for its verdict from the
                        // subscriber.
                        let waiter = (d % 5 == 0 && i + 1 == moves.len()).then(|| {
                            let (tx, rx) = tokio::sync::oneshot::channel();
                            waiters.lock().unwrap().insert(id.clone(), tx);
                            rx
                        });
                        let sent = Instant::now();
                        let sent_at = SystemTime::now();
                        let answer = mover
                            .submit(pb::SubmitMoveRequest {
                                game_id: id.clone(),
                                ply: i as u32 + 1,
                                usi: usi.clone(),
                                strict: false,
                                comment: String::new(),
                            })
                            .await;
                        let answered = SystemTime::now();
                        submits.lock().unwrap().push(sent.elapsed());
                        all_moves.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        // The rate is the window's: a game under way at the deadline is
                        // finished after it, by fewer drivers.
                        if sent < deadline {
                            moves_done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        if let Some(rx) = waiter {
                            assert!(answer.verdict.is_some(), "the probe ends on its last move");
                            if let Ok(Ok((at, heard))) =
                                tokio::time::timeout(Duration::from_secs(5), rx).await
                            {
                                probes.lock().unwrap().push(Probe {
                                    id: id.clone(),
                                    latency: at.saturating_duration_since(sent),
                                    sent: sent_at,
                                    answered,
                                    heard,
                                });
                            } else {
                                waiters.lock().unwrap().remove(&id);
                                lost.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
        // The acknowledgements of the last moves, and the verdicts, on the server too.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let varz_end = self.nats.varz();
        let nats = varz_start.zip(varz_end).map(|(a, b)| {
            let delta = |k: &str| b[k].as_u64().unwrap_or(0) - a[k].as_u64().unwrap_or(0);
            NatsCounts {
                in_msgs: delta("in_msgs"),
                out_msgs: delta("out_msgs"),
                moves: all_moves.load(std::sync::atomic::Ordering::Relaxed),
                mem: b["mem"].as_u64().unwrap_or(0),
            }
        });
        let seconds = deadline.duration_since(started).as_secs_f64();
        let moves = moves_done.load(std::sync::atomic::Ordering::Relaxed);
        let mut answers = std::mem::take(&mut *submits.lock().unwrap());
        answers.sort();
        let (own, broker, idle, steal) = cpu.await.unwrap();
        let mut probes = std::mem::take(&mut *probes.lock().unwrap());
        probes.sort_by_key(|p| std::cmp::Reverse(p.latency));
        let verdicts = probes.iter().rev().map(|p| p.latency).collect();
        Window {
            target,
            rate: moves as f64 / seconds,
            verdicts,
            lost: lost.load(std::sync::atomic::Ordering::Relaxed),
            probes,
            answers,
            moves,
            seconds,
            own,
            broker,
            idle,
            steal,
            nats,
        }
    }
}

/// Whether the clients send their moves on SubmitMoves streams (`E2E_STREAM=1`).
fn on_streams() -> bool {
    std::env::var_os("E2E_STREAM").is_some_and(|v| v == "1")
}

/// How the clients send their moves, as the reports say it.
fn how() -> &'static str {
    if on_streams() {
        " on SubmitMoves streams"
    } else {
        ""
    }
}

/// How a client sends its moves: a SubmitMove call each, or one SubmitMoves stream kept open,
/// a move at a time (`E2E_STREAM=1`).
enum Mover {
    Calls(MoveValidatorClient<tonic::transport::Channel>),
    Stream {
        moves: futures::channel::mpsc::Sender<pb::SubmitMovesRequest>,
        answers: tonic::Streaming<pb::SubmitMovesResponse>,
        tag: u64,
    },
}

impl Mover {
    async fn open(channel: &tonic::transport::Channel, stream: bool) -> Mover {
        let mut client = MoveValidatorClient::new(channel.clone());
        if !stream {
            return Mover::Calls(client);
        }
        let (moves, rx) = futures::channel::mpsc::channel(16);
        let answers = client.submit_moves(rx).await.unwrap().into_inner();
        Mover::Stream {
            moves,
            answers,
            tag: 0,
        }
    }

    async fn submit(&mut self, request: pb::SubmitMoveRequest) -> pb::SubmitMoveResponse {
        use futures::SinkExt as _;
        match self {
            Mover::Calls(client) => client.submit_move(request).await.unwrap().into_inner(),
            Mover::Stream {
                moves,
                answers,
                tag,
            } => {
                *tag += 1;
                moves
                    .send(pb::SubmitMovesRequest {
                        tag: *tag,
                        r#move: Some(request),
                    })
                    .await
                    .unwrap();
                let answer = answers.message().await.unwrap().expect("an answer");
                assert_eq!(answer.tag, *tag);
                match answer.answer {
                    Some(pb::submit_moves_response::Answer::Submitted(a)) => a,
                    other => panic!("a move refused: {other:?}"),
                }
            }
        }
    }
}

/// The server's own counts over a window (`/varz`): messages in and out, the moves they
/// served, and the server's resident memory at the end.
struct NatsCounts {
    in_msgs: u64,
    out_msgs: u64,
    moves: u64,
    mem: u64,
}
