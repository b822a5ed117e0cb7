//! A platform's credentials used against the other clients: with the shipped
//! `deploy/nats/auth.conf` (and the shipped `sync_interval`), the services each as its own NATS
//! user and the validator with named credentials, one player (its own credential) submits
//! moves while a hostile platform floods the services with what its credentials allow, in
//! quiet and flooded windows taken in turn; the flooding threads run at the lowest CPU
//! priority, as if on the platform's own hosts (`arbiter_tests::hostile`). Each mode prints
//! the player's quiet and flooded move rates and their ratio; the goal is 0.8x or more
//! (deploy/STREAMS.md, "Limits"):
//!
//! - `reader gets`: the trusted platform's NATS user `reader` looping message gets on every
//!   connection its account allows (and the filtered `STREAM.INFO`, refused): NATS limits no
//!   request rate, and this mode does not hold the goal.
//! - `untrusted`: what an untrusted platform is given, used at once: its gRPC credential
//!   calling past its quotas (`grpc calls` alone) and the NATS user `listener` (`listener`
//!   alone: every connection and subscription its account allows and more, each connection
//!   remaking a subscription, publishing (refused) and pinging in a loop).
//!
//! By hand: `cargo build --release --bins && cargo bench -p arbiter-tests --bench
//! hostile_platform` (the service binaries beside the benchmark's).

use arbiter_tests::hostile::{self, Flooded, Line, Switch, Wire};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(60);
/// Each window the player's moves are counted over.
const WINDOW: Duration = Duration::from_secs(2);
/// Quiet and flooded windows, taken in turn, so that the machine's other load falls on both.
const ROUNDS: usize = 3;
/// Requests each `reader` connection keeps in flight: one, a loop (each get sent when the last
/// is answered).
const PIPELINE: usize = 1;
/// Every so many gets, a `reader` connection also asks for the filtered `STREAM.INFO`.
const INFO_EVERY: usize = 64;
/// Connections each NATS flood tries (its account lets in a few).
const ATTEMPTS: usize = 400;
/// Concurrent gRPC loops of the untrusted platform.
const CALL_LOOPS: usize = 16;

/// A flood the benchmark runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    ReaderGets,
    GrpcCalls,
    Listener,
    Untrusted,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::ReaderGets => "reader gets",
            Mode::GrpcCalls => "grpc calls (untrusted, alone)",
            Mode::Listener => "listener (untrusted, alone)",
            Mode::Untrusted => "untrusted (grpc calls and listener)",
        }
    }
}

/// The threads of a flood and the connections to close when it is over.
#[derive(Default)]
struct Flood {
    closers: Vec<TcpStream>,
    threads: Vec<JoinHandle<()>>,
}

impl Flood {
    fn end(self) {
        for c in self.closers {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
        for t in self.threads {
            t.join().expect("a flooding thread");
        }
    }
}

/// One `reader` connection: [`PIPELINE`] message gets in flight, each answer sending the
/// next, and every [`INFO_EVERY`] answers a filtered `STREAM.INFO` (refused), while `switch`
/// is on; the answers it read are counted in `answered`.
fn reader_gets(mut wire: Wire, conn: usize, game: &str, switch: &Switch, answered: &AtomicU64) {
    hostile::lowest_priority();
    let get = format!(r#"{{"last_by_subj":"shogi.game.{game}.created"}}"#);
    let request = format!(
        "PUB JS.ARBITER.API.STREAM.MSG.GET.SHOGI_GAMES _INBOX.reader.flood.{conn} {}\r\n{get}\r\n",
        get.len()
    );
    let info = r#"{"subjects_filter":"shogi.game.>"}"#;
    let refused = format!(
        "PUB JS.ARBITER.API.STREAM.INFO.SHOGI_GAMES _INBOX.reader.flood.{conn} {}\r\n{info}\r\n",
        info.len()
    );
    if wire
        .send(format!("SUB _INBOX.reader.flood.{conn} 1\r\n").as_bytes())
        .is_err()
    {
        return;
    }
    let mut round = 0;
    loop {
        if switch.wait_on() {
            return;
        }
        let mut burst = request.repeat(PIPELINE);
        round += 1;
        if round % INFO_EVERY == 0 {
            burst.push_str(&refused);
        }
        if wire.send(burst.as_bytes()).is_err() {
            return;
        }
        let mut got = 0;
        while got < PIPELINE {
            match wire.next_line() {
                Ok(Line::Message) => got += 1,
                Ok(_) => {}
                Err(_) => return,
            }
        }
        answered.fetch_add(got as u64, Ordering::Relaxed);
    }
}

/// Every `reader` connection its account lets in, each looping gets ([`reader_gets`]).
fn reader_flood(port: u16, game: &str, switch: &Arc<Switch>, answered: &Arc<AtomicU64>) -> Flood {
    let mut flood = Flood::default();
    for conn in 0..ATTEMPTS {
        let Ok(wire) = Wire::connect(port, "reader", DEADLINE.get()) else {
            continue;
        };
        flood.closers.push(wire.writer.try_clone().unwrap());
        let (switch, answered, game) = (switch.clone(), answered.clone(), game.to_owned());
        flood.threads.push(std::thread::spawn(move || {
            reader_gets(wire, conn, &game, &switch, &answered)
        }));
    }
    flood
}

/// The flood of `mode`, started (and off).
fn start(
    mode: Mode,
    nats_port: u16,
    port: u16,
    switch: &Arc<Switch>,
    flooded: &Arc<Mutex<Flooded>>,
    gets: &Arc<AtomicU64>,
) -> Flood {
    let mut flood = Flood::default();
    if mode == Mode::ReaderGets {
        return reader_flood(nats_port, "warm-0", switch, gets);
    }
    if matches!(mode, Mode::Listener | Mode::Untrusted) {
        let (_, subscriptions) = hostile::account_limits("LISTENER");
        for (closer, thread) in hostile::listener_flood(
            nats_port,
            ATTEMPTS,
            subscriptions,
            switch.clone(),
            flooded.clone(),
        ) {
            flood.closers.push(closer);
            flood.threads.push(thread);
        }
    }
    if matches!(mode, Mode::GrpcCalls | Mode::Untrusted) {
        flood.threads.push(hostile::grpc_flood(
            port,
            CALL_LOOPS,
            "warm-0".to_owned(),
            switch.clone(),
            flooded.clone(),
        ));
    }
    flood
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let hostile::Stage {
        nats,
        dir: _dir,
        mut procs,
        port,
        player,
        games,
    } = hostile::Stage::start("arbiter-flood-", DEADLINE.get(), WINDOW).await;
    let mut ratios = Vec::new();
    for mode in [
        Mode::ReaderGets,
        Mode::GrpcCalls,
        Mode::Listener,
        Mode::Untrusted,
    ] {
        let switch = Arc::new(Switch::default());
        let flooded = Arc::new(Mutex::new(Flooded::default()));
        let gets = Arc::new(AtomicU64::new(0));
        let flood = start(mode, nats.port(), port, &switch, &flooded, &gets);
        let (mut quiet, mut under_flood) = (Vec::new(), Vec::new());
        let mut server_cpu = 0.0;
        for round in 0..ROUNDS {
            let tag = format!("{mode:?}-{round}");
            quiet.push(hostile::player_rate(&player, &games, &format!("q-{tag}"), WINDOW).await);
            let before = test_support::process_cpu(nats.pid());
            switch.set(true, false);
            under_flood
                .push(hostile::player_rate(&player, &games, &format!("f-{tag}"), WINDOW).await);
            switch.set(false, false);
            server_cpu += (test_support::process_cpu(nats.pid()) - before).as_secs_f64();
        }
        let last = format!("q-{mode:?}-last");
        quiet.push(hostile::player_rate(&player, &games, &last, WINDOW).await);
        switch.set(false, true);
        flood.end();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let ratio = mean(&under_flood) / mean(&quiet);
        let secs = ROUNDS as f64 * WINDOW.as_secs_f64();
        let f = flooded.lock().unwrap();
        eprintln!(
            "{}: player, moves/s: quiet {quiet:.0?} (mean {:.0}), under the flood \
             {under_flood:.0?} (mean {:.0}): {ratio:.2}x; nats-server at {:.2} of a core; \
             message gets answered {:.0}/s; gRPC calls answered {:.0}/s, refused {:?}; NATS \
             connections {:?} (let in, refused), {:.0} rounds/s",
            mode.name(),
            mean(&quiet),
            mean(&under_flood),
            server_cpu / secs,
            gets.load(Ordering::Relaxed) as f64 / secs,
            f.calls_answered as f64 / secs,
            f.calls_refused,
            f.connections,
            f.nats_rounds as f64 / secs,
        );
        assert!(f.calls_failed.is_empty(), "{:?}", f.calls_failed);
        assert!(f.nats_other.is_empty(), "{:?}", f.nats_other);
        ratios.push((mode, ratio));
    }
    for p in &mut procs {
        assert!(p.is_running(), "{} exited", p.name());
    }
    let (_, untrusted) = ratios
        .iter()
        .find(|(m, _)| *m == Mode::Untrusted)
        .copied()
        .expect("the untrusted mode ran");
    eprintln!(
        "the goal, 0.8x under an untrusted platform's flood: {} ({untrusted:.2}x)",
        if untrusted >= 0.8 { "held" } else { "not held" }
    );
}
