//! What the reading calls cost (issue 20, item 5), with the validator binary as its own process
//! and a real nats-server, each process's CPU read from `/proc/<pid>/stat`:
//!
//! - ListGames: nats-server's CPU per page of 50 over 1,000 games (every fourth ended), eight
//!   clients at once, for the scan the validator made before its index (the same message gets,
//!   made here by the bench's own connection: one per creation event, one per game's
//!   `.verdict`) and for the validator's ListGames from its index, side by side in one run;
//! - a refused call: the validator's CPU per GetGame and per AnalyzeGame of a whole game of
//!   12,500 plies (ANSWER_TOO_LARGE at the default 64 KiB), against a page of 100 plies of the
//!   same game.
//!
//! - batched reads: a long game's replay (WatchGame), one message get a message against
//!   batches of direct gets, side by side.
//!
//! Run: `cargo bench -p move-validator --bench reads` (add `-- --quick` for a short run).

use arbiter_bus::{EventBus, JetStreamBus, NatsOptions, StreamSettings};
use futures::future::join_all;
use shogi_adjudication::{DeclarationTrigger, Game, Ruleset};
use shogi_proto::event::{decode_created, decode_verdict};
use shogi_proto::subject;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use test_support::{NatsServer, process_cpu};
use tonic::transport::Channel;

const GAMES: usize = 1000;
const CLIENTS: usize = 8;
const PAGE: u32 = 50;
const LONG_PLIES: usize = 12_500;

/// The validator binary on a port of its own; killed on drop.
struct Validator {
    child: Child,
    client: MoveValidatorClient<Channel>,
}

impl Drop for Validator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn validator(nats: &NatsServer) -> Validator {
    let port = test_support::free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_move-validator"))
        .env("MOVE_VALIDATOR_LISTEN", format!("127.0.0.1:{port}"))
        .env("NATS_URL", nats.url())
        .env("MOVE_VALIDATOR_STANDALONE", "true")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start move-validator");
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect_lazy();
    let mut client = MoveValidatorClient::new(channel);
    let deadline = Instant::now() + Duration::from_secs(30);
    while client
        .list_games(pb::ListGamesRequest::default())
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "move-validator did not answer");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Validator { child, client }
}

fn create(id: &str) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        ruleset: Some(pb::Ruleset {
            preset: "online".into(),
            overrides: None,
        }),
        game_id: id.into(),
        ..Default::default()
    }
}

/// The scan ListGames made before its index: the same message gets, in the same order.
async fn scan(bus: &dyn EventBus, mut from: u64, size: usize) -> (usize, u64) {
    let mut games = 0;
    while games < size {
        let Some(msg) = bus.next(subject::ALL_CREATED, from).await.unwrap() else {
            break;
        };
        from = msg.sequence + 1;
        let created = decode_created(&msg.payload).unwrap();
        if let Some(v) = bus.last(&subject::verdict(&created.game_id)).await.unwrap() {
            let _ = decode_verdict(v.message_type.as_deref(), &v.payload);
        }
        games += 1;
    }
    (games, from)
}

/// nats-server's and the validator's CPU per page, and pages per second, for `pages` pages per
/// client, `CLIENTS` clients at once, each page from one of `tokens`.
async fn measure<F, Fut>(
    label: &str,
    nats_pid: u32,
    validator_pid: u32,
    pages: usize,
    tokens: &[u64],
    page: F,
) where
    F: Fn(u64) -> Fut + Clone,
    Fut: std::future::Future<Output = ()>,
{
    let nats_before = process_cpu(nats_pid);
    let validator_before = process_cpu(validator_pid);
    let started = Instant::now();
    join_all((0..CLIENTS).map(|c| {
        let page = page.clone();
        async move {
            for i in 0..pages {
                page(tokens[(c * 7 + i) % tokens.len()]).await;
            }
        }
    }))
    .await;
    let elapsed = started.elapsed();
    let total = (CLIENTS * pages) as f64;
    let per = |d: Duration| d.as_secs_f64() * 1e3 / total;
    println!(
        "{label:<40} {total:>6} pages  {:>8.0} pages/s  nats-server {:>7.3} ms/page  validator {:>7.3} ms/page",
        total / elapsed.as_secs_f64(),
        per(process_cpu(nats_pid) - nats_before),
        per(process_cpu(validator_pid) - validator_before),
    );
}

/// The `online` rules (no move cap), with a declaration only on request, so that a long game
/// does not end when a king happens into the camp with its points.
fn long_rules() -> Ruleset {
    Ruleset {
        declaration_trigger: DeclarationTrigger::Explicit,
        ..Ruleset::online()
    }
}

/// A game of `plies` plies under [`long_rules`]: at each ply, among the legal
/// moves that do not end it, one that leads to the position seen least so far (a fixed LCG
/// picks among equals), so that a random walk does not run into a repetition.
fn long_game(plies: usize) -> Vec<String> {
    let mut game = Game::startpos(long_rules());
    let mut seen: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut moves = Vec::with_capacity(plies);
    while moves.len() < plies {
        let legal: Vec<_> = game.position().legal_moves().iter().copied().collect();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let start = (seed >> 33) as usize % legal.len();
        let mut candidates: Vec<_> = (0..legal.len())
            .map(|i| {
                let mv = legal[(start + i) % legal.len()];
                let mut after = game.position().clone();
                after.play_unchecked(mv);
                (seen.get(&after.hash()).copied().unwrap_or(0), i, mv)
            })
            .collect();
        candidates.sort_unstable_by_key(|&(count, i, _)| (count, i));
        let mv = candidates
            .into_iter()
            .map(|(_, _, mv)| mv)
            .find(|mv| {
                let mut copy = game.clone();
                copy.play(*mv).is_ok_and(|o| o.verdict.is_none())
            })
            .unwrap_or_else(|| {
                let why: Vec<String> = legal
                    .iter()
                    .map(|mv| {
                        let mut copy = game.clone();
                        format!("{mv}: {:?}", copy.play(*mv).map(|o| o.verdict))
                    })
                    .collect();
                panic!(
                    "no move that does not end the game at ply {}: {why:?}",
                    moves.len()
                )
            });
        game.play(mv).unwrap();
        *seen.entry(game.position().hash()).or_default() += 1;
        moves.push(mv.to_string());
    }
    moves
}

/// The validator's CPU per call of `call`, over `n` calls one after another.
async fn cpu_per_call<F, Fut>(label: &str, pid: u32, n: usize, call: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), tonic::Status>>,
{
    let outcome = call().await;
    let before = process_cpu(pid);
    let started = Instant::now();
    for _ in 0..n {
        let _ = call().await;
    }
    let cpu = process_cpu(pid) - before;
    println!(
        "{label:<40} {:<38} validator {:>7.3} ms CPU/call  {:>7.3} ms wall/call",
        match outcome {
            Ok(()) => "OK".to_owned(),
            Err(s) => {
                use tonic_types::StatusExt as _;
                let reason = s.get_error_details().error_info().map(|i| i.reason.clone());
                format!("{:?} {}", s.code(), reason.unwrap_or_default())
            }
        },
        cpu.as_secs_f64() * 1e3 / n as f64,
        started.elapsed().as_secs_f64() * 1e3 / n as f64,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let pages = if quick { 10 } else { 50 };
    let nats = NatsServer::start();
    let nats_pid = nats.pid();
    println!(
        "nats-server {}",
        test_support::server_version(&test_support::nats_server_binary())
    );
    let v = validator(&nats).await;
    let vpid = v.child.id();
    let mut c = v.client.clone();
    for i in 0..GAMES {
        c.create_game(create(&format!("list-{i:04}")))
            .await
            .unwrap();
    }
    for i in (0..GAMES).step_by(4) {
        c.end_game(black_resigns(&format!("list-{i:04}")))
            .await
            .unwrap();
    }
    let bus: Arc<dyn EventBus> = Arc::new(
        JetStreamBus::connect(
            &NatsOptions::new(nats.url()),
            "bench",
            &StreamSettings::new(shogi_proto::STREAM, shogi_proto::STREAM_SUBJECTS),
        )
        .await
        .unwrap(),
    );
    // The tokens of the list's pages of 50, as the scan gives them.
    let mut tokens = vec![1];
    loop {
        let (n, next) = scan(bus.as_ref(), *tokens.last().unwrap(), PAGE as usize).await;
        if n < PAGE as usize {
            break;
        }
        tokens.push(next);
    }
    // The index is read once, by the first call.
    c.list_games(pb::ListGamesRequest::default()).await.unwrap();
    println!(
        "ListGames, {GAMES} games (every fourth ended), pages of {PAGE}, {CLIENTS} clients at once:"
    );
    for _ in 0..2 {
        measure(
            "the scan (before the index)",
            nats_pid,
            vpid,
            pages,
            &tokens,
            |from| {
                let bus = bus.clone();
                async move {
                    scan(bus.as_ref(), from, PAGE as usize).await;
                }
            },
        )
        .await;
        measure(
            "ListGames (index)",
            nats_pid,
            vpid,
            pages,
            &tokens,
            |from| {
                let mut c = c.clone();
                async move {
                    c.list_games(pb::ListGamesRequest {
                        page_size: PAGE,
                        page_token: from.to_string(),
                        live_only: false,
                    })
                    .await
                    .unwrap();
                }
            },
        )
        .await;
    }

    // A refused call on a long game.
    let moves = long_game(LONG_PLIES);
    let mut long = create("long");
    long.ruleset = Some(pb::Ruleset {
        preset: "online".into(),
        overrides: Some(pb::RulesetOverrides {
            declaration_trigger: pb::DeclarationTrigger::Explicit as i32,
            ..Default::default()
        }),
    });
    c.create_game(long).await.unwrap();
    for (i, usi) in moves.iter().enumerate() {
        c.submit_move(pb::SubmitMoveRequest {
            game_id: "long".into(),
            ply: i as u32 + 1,
            usi: usi.clone(),
            strict: false,
            comment: String::new(),
        })
        .await
        .unwrap();
    }
    let n = if quick { 20 } else { 200 };
    println!("A game of {LONG_PLIES} plies, {n} calls one after another:");
    let get = |from_ply, max_plies| {
        let c = c.clone();
        move || {
            let mut c = c.clone();
            async move {
                c.get_game(pb::GetGameRequest {
                    game_id: "long".into(),
                    from_ply,
                    max_plies,
                })
                .await
                .map(drop)
            }
        }
    };
    let analyze = |from_ply, max_plies| {
        let c = c.clone();
        move || {
            let mut c = c.clone();
            async move {
                c.analyze_game(pb::AnalyzeGameRequest {
                    game_id: "long".into(),
                    from_ply,
                    max_plies,
                })
                .await
                .map(drop)
            }
        }
    };
    cpu_per_call("GetGame, the whole game", vpid, n, get(0, 0)).await;
    cpu_per_call("GetGame, 100 plies from 12,000", vpid, n, get(12_000, 100)).await;
    cpu_per_call("AnalyzeGame, the whole game", vpid, n, analyze(0, 0)).await;
    cpu_per_call(
        "AnalyzeGame, 100 plies from 12,000",
        vpid,
        n,
        analyze(12_000, 100),
    )
    .await;
    batched_reads(bus.as_ref(), nats_pid).await;
}

/// The long game's log read whole, as WatchGame replays it: one message get a message (the
/// reads before batches, and where batches cannot be had) against batches
/// ([`EventBus::next_batch`]: one direct get a batch on nats-server 2.11+), alternated twice.
/// nats-server's CPU and the wall time.
async fn batched_reads(bus: &dyn EventBus, nats_pid: u32) {
    println!("The {LONG_PLIES}-ply game's log read whole (WatchGame's replay):");
    let filter = "shogi.game.long.>";
    for _ in 0..2 {
        for (label, batch) in [("one message get each", 0), ("batches of 512", 512)] {
            let cpu = process_cpu(nats_pid);
            let started = Instant::now();
            let (mut from, mut read, mut calls) = (1, 0usize, 0usize);
            loop {
                calls += 1;
                let got = if batch == 0 {
                    bus.next(filter, from).await.unwrap().into_iter().collect()
                } else {
                    bus.next_batch(filter, from, batch).await.unwrap()
                };
                let Some(last) = got.last() else { break };
                from = last.sequence + 1;
                read += got.len();
            }
            println!(
                "  {label:<22} {read:>7} read  {calls:>7} calls  {:>8.1} ms  nats-server {:>8.1} ms CPU",
                started.elapsed().as_secs_f64() * 1e3,
                (process_cpu(nats_pid) - cpu).as_secs_f64() * 1e3,
            );
        }
    }
}

/// Black's resignation of `game_id`, as a platform reports it.
fn black_resigns(game_id: &str) -> pb::EndGameRequest {
    pb::EndGameRequest {
        game_id: game_id.to_owned(),
        reason: pb::EndReason::Resignation as i32,
        loser: pb::Color::Black as i32,
        ..Default::default()
    }
}
