//! Load generator for the move validator (issue 4, "Speed"): real games from the corpus played
//! concurrently through SubmitMove, ValidateMove on their positions, and a bare tonic echo call
//! as the baseline, all in one process on loopback with a real nats-server. A second echo row
//! sends the same messages on bidirectional streams kept open (one a call in flight): what a
//! message costs without a call of its own.
//!
//! The baseline is a bare tonic echo service ([`echo`], hand-written, kept out of the shipped
//! contracts) on a server of its own with nothing else on it: no timeout layer, no interceptor.
//! Its payload is the size of a ValidateMove request. grpc.health.v1 `Check` on the validator's
//! own server is measured too, as a second reference.
//!
//! Run: `cargo bench -p move-validator --bench loadgen` (add `-- --quick` for a short run). The
//! last lines give the two ratios at 64 calls in flight.

// In a folder of its own: a file beside this one would be taken for a bench target.
#[path = "loadgen/echo.rs"]
mod echo;

use futures::future::join_all;
use move_validator::Config;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use test_support::NatsServer;
use tonic::transport::Channel;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// How many client connections the in-flight calls share.
const CHANNELS: usize = 4;

/// How many turns the rows take, each measuring a slice of its calls.
const ROUNDS: usize = 5;

struct Report {
    name: String,
    inflight: usize,
    calls: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    /// CPU time of this process (clients and servers) over the calls.
    cpu_own: Duration,
    /// CPU time of nats-server over the calls.
    cpu_broker: Duration,
}

/// nats-server's process id, for the rows' CPU accounting.
static BROKER_PID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Report {
    fn empty(name: &str, inflight: usize) -> Report {
        Report {
            name: name.to_owned(),
            inflight,
            calls: 0,
            elapsed: Duration::ZERO,
            latencies: Vec::new(),
            cpu_own: Duration::ZERO,
            cpu_broker: Duration::ZERO,
        }
    }

    /// Adds the calls, time and latencies of another slice of the same row.
    fn add(&mut self, slice: Report) {
        self.calls += slice.calls;
        self.elapsed += slice.elapsed;
        self.latencies.extend(slice.latencies);
        self.cpu_own += slice.cpu_own;
        self.cpu_broker += slice.cpu_broker;
    }

    fn per_sec(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    fn pct(&self, p: f64) -> Duration {
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[i]
    }
}

/// A game from the corpus: its start and its moves.
struct CorpusGame {
    start: String,
    moves: Vec<String>,
    /// The position before each move, for ValidateMove.
    before: Vec<String>,
    /// What SubmitMove's log entry says of each move: the position after it, its hash, and
    /// whether it gives check (for the row that publishes those entries alone).
    after: Vec<(String, u64, bool)>,
}

/// One worker's walk through the corpus games, a move a call: the number of games it has
/// started, the ply it plays next and the id of its game, and the stream sequence of the game's
/// last entry (for the rows that write the log themselves).
#[derive(Default)]
struct Walk {
    started: usize,
    ply: usize,
    id: String,
    last: u64,
}

impl Walk {
    /// A walk for each of `n` workers.
    fn for_workers(n: usize) -> Arc<Vec<std::sync::Mutex<Walk>>> {
        Arc::new((0..n).map(|_| std::sync::Mutex::default()).collect())
    }

    /// Worker `w`'s next move: the game's index in `games` and the move's ply (from 1), moving
    /// on to a new game, `<prefix>-<w>-<n>`, with no entry yet, when the current one is played
    /// out.
    fn next(&mut self, w: usize, games: &[CorpusGame], prefix: &str) -> (usize, usize) {
        let game = &games[(w + self.started) % games.len()];
        if self.id.is_empty() || self.ply >= game.moves.len() {
            if !self.id.is_empty() {
                self.started += 1;
            }
            self.ply = 0;
            self.id = format!("{prefix}-{w}-{}", self.started);
            self.last = 0;
        }
        self.ply += 1;
        ((w + self.started) % games.len(), self.ply)
    }
}

fn corpus_games() -> Vec<CorpusGame> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let manifest = std::fs::read_to_string(root.join("manifest.tsv")).expect("corpus manifest");
    let mut games = Vec::new();
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let plies: usize = cols[4].parse().unwrap_or(0);
        if !cols[0].ends_with(".csa") || cols[5] != "True" || plies < 60 {
            continue;
        }
        let bytes = std::fs::read(root.join(cols[0])).expect("corpus record");
        let Ok(record) = shogi_records::read_csa(&String::from_utf8_lossy(&bytes)) else {
            continue;
        };
        // Problem records (tsume setups without a Black king) are not games a platform sends.
        if shogi_rules::Position::from_sfen(&record.start.to_sfen()).is_err() {
            continue;
        }
        let mut pos = record.start.clone();
        let mut before = Vec::new();
        let mut after = Vec::new();
        let mut moves = Vec::new();
        // Stop short of any ending the rules would call (a cap, a repetition): a game of
        // realistic length that the validator accepts move by move.
        for m in record.moves.iter().take(200) {
            before.push(pos.to_sfen());
            moves.push(m.mv.to_string());
            pos.play_unchecked(m.mv);
            after.push((pos.to_sfen(), pos.hash(), pos.in_check()));
        }
        games.push(CorpusGame {
            start: record.start.to_sfen(),
            moves,
            before,
            after,
        });
    }
    assert!(!games.is_empty(), "no corpus games found");
    games
}

/// Runs `inflight` workers, each calling `call(worker, i)` until `total` calls are made.
async fn drive<F, Fut>(name: &str, inflight: usize, total: usize, call: F) -> Report
where
    F: Fn(usize, usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let broker = BROKER_PID.load(Ordering::Relaxed);
    let cpu = || {
        (
            test_support::process_cpu(std::process::id()),
            test_support::process_cpu(broker),
        )
    };
    let cpu0 = cpu();
    let start = Instant::now();
    let workers = (0..inflight).map(|w| {
        let call = call.clone();
        let next = next.clone();
        tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut i = 0;
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let t = Instant::now();
                call(w, i).await;
                lat.push(t.elapsed());
                i += 1;
            }
            lat
        })
    });
    let mut latencies: Vec<Duration> = join_all(workers)
        .await
        .into_iter()
        .flat_map(|r| r.expect("worker"))
        .collect();
    let elapsed = start.elapsed();
    let cpu1 = cpu();
    latencies.sort();
    Report {
        name: name.to_owned(),
        inflight,
        calls: latencies.len(),
        elapsed,
        latencies,
        cpu_own: cpu1.0 - cpu0.0,
        cpu_broker: cpu1.1 - cpu0.1,
    }
}

#[tokio::main]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let scale = if quick { 1 } else { 5 };
    let nats = NatsServer::start();
    BROKER_PID.store(nats.pid(), Ordering::Relaxed);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(move_validator::run(
        listener,
        Config::new(nats.url()),
        async {
            let _ = stopped.await;
        },
    ));
    let channels: Vec<Channel> = (0..CHANNELS)
        .map(|_| {
            Channel::from_shared(format!("http://{addr}"))
                .unwrap()
                .connect_lazy()
        })
        .collect();
    // The bare echo server, on a listener of its own.
    let echo_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo_addr = echo_listener.local_addr().unwrap();
    let echo_server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(echo::EchoServer)
            .serve_with_incoming(tokio_stream::StreamExt::map(
                tokio_stream::wrappers::TcpListenerStream::new(echo_listener),
                |tcp| {
                    // `LOADGEN_ECHO_NODELAY=1`: TCP_NODELAY on the echo's connections, as the
                    // validator sets it on its own (to see what Nagle's coalescing saves the
                    // baseline).
                    if let Ok(tcp) = &tcp
                        && std::env::var_os("LOADGEN_ECHO_NODELAY").is_some()
                    {
                        let _ = tcp.set_nodelay(true);
                    }
                    tcp
                },
            )),
    );
    let echo_channels: Vec<Channel> = (0..CHANNELS)
        .map(|_| {
            Channel::from_shared(format!("http://{echo_addr}"))
                .unwrap()
                .connect_lazy()
        })
        .collect();
    // One echo stream for each call in flight, kept open for the run.
    let mut streams = Vec::new();
    for w in 0..64 {
        let s = echo::EchoStreamClient::open(echo_channels[w % CHANNELS].clone())
            .await
            .expect("open an echo stream");
        streams.push(tokio::sync::Mutex::new(s));
    }
    let echo_streams = Arc::new(streams);
    let games = Arc::new(corpus_games());
    let pairs: Arc<Vec<(String, String)>> = Arc::new(
        games
            .iter()
            .flat_map(|g| g.before.iter().cloned().zip(g.moves.iter().cloned()))
            .collect(),
    );
    // An echo payload the size of a ValidateMove request (an SFEN and a move).
    let echo_payload = bytes::Bytes::from(format!("{}{}", pairs[0].0, pairs[0].1));
    let plies: usize = games.iter().map(|g| g.moves.len()).sum();
    println!(
        "corpus: {} games, {plies} plies (mean {:.0} plies a game)",
        games.len(),
        plies as f64 / games.len() as f64
    );

    // Warm up connections, flow-control windows and code paths, so that the first row measured
    // (the baseline) is not the one that pays for them.
    let chans = channels.clone();
    drive("warm-up", 64, 20_000, move |w, _| {
        let mut c = HealthClient::new(chans[w % CHANNELS].clone());
        async move {
            c.check(HealthCheckRequest::default()).await.expect("check");
        }
    })
    .await;
    let chans = echo_channels.clone();
    let payload = echo_payload.clone();
    drive("warm-up", 64, 20_000, move |w, _| {
        let c = chans[w % CHANNELS].clone();
        let payload = payload.clone();
        async move {
            echo::echo(c, payload).await.expect("echo");
        }
    })
    .await;
    let streams = echo_streams.clone();
    let payload = echo_payload.clone();
    drive("warm-up", 64, 20_000, move |w, _| {
        let streams = streams.clone();
        let payload = payload.clone();
        async move {
            streams[w].lock().await.echo(payload).await.expect("echo");
        }
    })
    .await;

    // The bus alone: the same publish SubmitMove makes (Nats-Msg-Id, expected last subject
    // sequence, file storage, ack awaited), straight from a client, to show the bound the bus
    // puts on SubmitMove.
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.expect("nats"));
    // The bus as the validator opens and publishes through it (its own connection, the
    // games' stream as every process sets it up), for the row that publishes SubmitMove's log
    // entries alone.
    let bus = arbiter_runtime::streams::open(
        &arbiter_runtime::streams::BusConfig::Nats {
            options: Box::new(arbiter_bus::NatsOptions::new(nats.url())),
            stream: shogi_proto::STREAM.to_owned(),
            replicas: 1,
        },
        "loadgen",
    )
    .await
    .expect("bus")
    .bus;

    let mut reports = Vec::new();
    // `LOADGEN_INFLIGHT=64` runs the rows at 64 in flight only (for a profile of one row).
    let inflights: Vec<usize> = match std::env::var("LOADGEN_INFLIGHT") {
        Ok(list) => list
            .split(',')
            .map(|n| n.trim().parse().expect("LOADGEN_INFLIGHT: numbers"))
            .collect(),
        Err(_) => vec![1, 64],
    };
    for inflight in inflights {
        let total = if inflight == 1 { 2_000 } else { 10_000 } * scale / ROUNDS;
        let total_bus = if inflight == 1 { 1_000 } else { 5_000 } * scale / ROUNDS;

        let chans = echo_channels.clone();
        let payload = echo_payload.clone();
        let echo_call = move |w: usize, _| {
            let c = chans[w % CHANNELS].clone();
            let payload = payload.clone();
            async move {
                let back = echo::echo(c, payload.clone()).await.expect("echo");
                assert_eq!(back.payload, payload);
            }
        };
        let streams = echo_streams.clone();
        let payload = echo_payload.clone();
        let stream_call = move |w: usize, _| {
            let streams = streams.clone();
            let payload = payload.clone();
            async move {
                let back = streams[w]
                    .lock()
                    .await
                    .echo(payload.clone())
                    .await
                    .expect("echo on a stream");
                assert_eq!(back.payload, payload);
            }
        };
        let chans = channels.clone();
        let health_call = move |w: usize, _| {
            let mut c = HealthClient::new(chans[w % CHANNELS].clone());
            async move {
                c.check(HealthCheckRequest::default()).await.expect("check");
            }
        };
        let chans = channels.clone();
        let pairs = pairs.clone();
        let validate_call = move |w: usize, i: usize| {
            let mut c = MoveValidatorClient::new(chans[w % CHANNELS].clone());
            let (sfen, usi) = pairs[(w * 7919 + i) % pairs.len()].clone();
            async move {
                let r = c
                    .validate_move(pb::ValidateMoveRequest { sfen, usi })
                    .await
                    .expect("validate");
                assert!(r.into_inner().legal);
            }
        };
        // Per worker: the last sequence of its subject, and how many it has published.
        let last: Arc<Vec<(std::sync::atomic::AtomicU64, AtomicUsize)>> =
            Arc::new((0..inflight).map(|_| Default::default()).collect());
        let js2 = js.clone();
        let publish_call = move |w: usize, _| {
            let js = js2.clone();
            let last = last.clone();
            async move {
                let expected = last[w].0.load(Ordering::Relaxed);
                let n = last[w].1.fetch_add(1, Ordering::Relaxed);
                let msg = async_nats::jetstream::message::PublishMessage::build()
                    .payload(bytes::Bytes::from_static(&[0u8; 120]))
                    .message_id(format!("raw-{inflight}-{w}:{n}:7g7f"))
                    .expected_last_subject_sequence(expected);
                let ack = js
                    .send_publish(
                        shogi_proto::subject::moves(&format!("raw-{inflight}-{w}")),
                        msg,
                    )
                    .await
                    .expect("publish")
                    .await
                    .expect("ack");
                last[w].0.store(ack.sequence, Ordering::Relaxed);
            }
        };
        // SubmitMove's writes alone: each worker appends the log entries SubmitMove would
        // write for whole games (the same subjects, one per game, the same headers, the same
        // payloads, the same guard), through the bus as the validator calls it, with no gRPC
        // call and no rules: what SubmitMove costs beyond a gRPC call and its own work.
        let games2 = games.clone();
        let bus2 = bus.clone();
        let logs = Walk::for_workers(inflight);
        let entries_call = move |w: usize, _| {
            let games = games2.clone();
            let bus = bus2.clone();
            let logs = logs.clone();
            async move {
                let (gi, ply, id, last) = {
                    let mut walk = logs[w].lock().unwrap();
                    let (gi, ply) = walk.next(w, &games, &format!("entries-{inflight}"));
                    (gi, ply, walk.id.clone(), walk.last)
                };
                let game = &games[gi];
                let (sfen_after, position_hash, gives_check) = game.after[ply - 1].clone();
                let entry = shogi_proto::event::LogEntry::Move(pb::MoveAccepted {
                    received_unix_ms: 0,
                    comment: String::new(),
                    game_id: id,
                    ply: ply as u32,
                    usi: game.moves[ply - 1].clone(),
                    sfen_after,
                    gives_check,
                    position_hash,
                });
                let published = bus
                    .publish(entry.envelope(last).into())
                    .await
                    .expect("publish");
                let arbiter_bus::Published::Stored(seq) = published else {
                    panic!("{published:?}");
                };
                logs[w].lock().unwrap().last = seq;
            }
        };
        // SubmitMove: each worker plays whole games one move at a time; `inflight` games at
        // once. Game creation is not timed apart: a call of the closure is one SubmitMove.
        let chans = channels.clone();
        let games = games.clone();
        let progress = Walk::for_workers(inflight);
        let run_id = inflight;
        let submit_call = move |w: usize, _| {
            let mut c = MoveValidatorClient::new(chans[w % CHANNELS].clone());
            let games = games.clone();
            let progress = progress.clone();
            async move {
                let (gi, ply, id) = {
                    let mut walk = progress[w].lock().unwrap();
                    let (gi, ply) = walk.next(w, &games, &format!("bench-{run_id}"));
                    (gi, ply, walk.id.clone())
                };
                let game = &games[gi];
                if ply == 1 {
                    c.create_game(pb::CreateGameRequest {
                        ruleset: Some(pb::Ruleset {
                            preset: "online".into(),
                            overrides: None,
                        }),
                        start: Some(pb::StartPosition {
                            start: Some(pb::start_position::Start::Sfen(game.start.clone())),
                        }),
                        game_id: id.clone(),
                        strict: false,
                    })
                    .await
                    .expect("create");
                }
                let r = c
                    .submit_move(pb::SubmitMoveRequest {
                        game_id: id,
                        ply: ply as u32,
                        usi: game.moves[ply - 1].clone(),
                        strict: false,
                        comment: String::new(),
                    })
                    .await
                    .expect("submit")
                    .into_inner();
                assert_eq!(r.outcome, pb::MoveOutcome::Accepted as i32);
            }
        };

        // The rows take turns, a slice each per round, so that a burst of load from other
        // processes on the machine falls on all of them alike instead of on one row.
        let mut rows: Vec<Report> = [
            ECHO,
            ECHO_STREAM,
            "health Check",
            "ValidateMove",
            "JetStream publish",
            "log append (bus)",
            "SubmitMove",
        ]
        .iter()
        .map(|name| Report::empty(name, inflight))
        .collect();
        // `LOADGEN_ONLY=SubmitMove,echo` runs only the rows whose names start so (for a
        // profile of one call).
        let only = std::env::var("LOADGEN_ONLY").unwrap_or_default();
        let on = |row: usize| {
            only.is_empty()
                || only
                    .split(',')
                    .any(|o| rows[row].name.starts_with(o.trim()))
        };
        let on: Vec<bool> = (0..rows.len()).map(on).collect();
        for _ in 0..ROUNDS {
            if on[0] {
                rows[0].add(drive(ECHO, inflight, total, echo_call.clone()).await);
            }
            if on[1] {
                rows[1].add(drive("", inflight, total, stream_call.clone()).await);
            }
            if on[2] {
                rows[2].add(drive("", inflight, total, health_call.clone()).await);
            }
            if on[3] {
                rows[3].add(drive("", inflight, total, validate_call.clone()).await);
            }
            if on[4] {
                rows[4].add(drive("", inflight, total_bus, publish_call.clone()).await);
            }
            if on[5] {
                rows[5].add(drive("", inflight, total_bus, entries_call.clone()).await);
            }
            if on[6] {
                rows[6].add(drive("", inflight, total_bus, submit_call.clone()).await);
            }
        }
        rows.retain(|r| r.calls > 0);
        for mut row in rows {
            row.latencies.sort();
            reports.push(row);
        }
    }

    println!(
        "\n{:<22} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10}",
        "call", "inflight", "calls", "calls/s", "p50 us", "p99 us", "x echo", "cpu us", "broker us"
    );
    for r in &reports {
        let echo = reports
            .iter()
            .find(|e| e.name == ECHO && e.inflight == r.inflight)
            .map_or(f64::NAN, Report::per_sec);
        println!(
            "{:<22} {:>8} {:>8} {:>10.0} {:>10} {:>10} {:>8.2} {:>10.1} {:>10.1}",
            r.name,
            r.inflight,
            r.calls,
            r.per_sec(),
            r.pct(0.50).as_micros(),
            r.pct(0.99).as_micros(),
            r.per_sec() / echo,
            r.cpu_own.as_secs_f64() * 1e6 / r.calls as f64,
            r.cpu_broker.as_secs_f64() * 1e6 / r.calls as f64,
        );
    }
    if std::env::var_os("LOADGEN_ONLY").is_some() {
        // Rows left out: no ratios.
        return;
    }
    let echo64 = row(&reports, ECHO, 64).per_sec();
    let validate = row(&reports, "ValidateMove", 64).per_sec() / echo64;
    let submit = row(&reports, "SubmitMove", 64).per_sec() / echo64;
    println!(
        "\nat 64 in flight: ValidateMove/echo {validate:.2} (goal >= 0.8, {}), \
         SubmitMove/echo {submit:.2} (goal >= 0.8, {})",
        if validate >= 0.8 { "met" } else { "not met" },
        if submit >= 0.8 { "met" } else { "not met" },
    );
    // Issue 24, goal 3: SubmitMove's CPU per call (this process and nats-server) against the
    // sum of an echo and a bare publish.
    let cpu = |name: &str| {
        let r = row(&reports, name, 64);
        (r.cpu_own + r.cpu_broker).as_secs_f64() * 1e6 / r.calls as f64
    };
    let (echo, publish, append, submit) = (
        cpu(ECHO),
        cpu("JetStream publish"),
        cpu("log append (bus)"),
        cpu("SubmitMove"),
    );
    let goal3 = (echo + publish) / submit;
    println!(
        "at 64 in flight, CPU per call: (echo + publish) / SubmitMove {goal3:.2} \
         ({echo:.1} + {publish:.1} us against {submit:.1} us; goal >= 0.9, {}); \
         (echo + log append) / SubmitMove {:.2}",
        if goal3 >= 0.9 { "met" } else { "not met" },
        (echo + append) / submit,
    );
    let _ = stop.send(());
    drop(channels);
    drop(echo_channels);
    let _ = server.await;
    echo_server.abort();
}

/// The name of the baseline's rows.
const ECHO: &str = "echo (bare tonic)";

/// The name of the rows of the same echo on streams kept open.
const ECHO_STREAM: &str = "echo on a stream";

/// The row of `name` at `inflight`.
fn row<'a>(reports: &'a [Report], name: &str, inflight: usize) -> &'a Report {
    reports
        .iter()
        .find(|r| r.name == name && r.inflight == inflight)
        .unwrap_or_else(|| panic!("no {name} row at {inflight} in flight"))
}
