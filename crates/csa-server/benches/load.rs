//! The CSA front end under load, one run by hand: the whole arbiter over JetStream on a real
//! nats-server (spawned, temporary store) in this process, the front end in a child process of
//! its own (this program again, `CSA_LOAD_ROLE=front`), so that its resident set is its own, and
//! the clients here, over loopback TCP:
//!
//! 1. `CSA_LOAD_IDLE` (default 1,000) x1 clients log in and then send an empty line (the
//!    keep-alive, answered with one) every `CSA_LOAD_KEEPALIVE_MS` (default 1,000); the front
//!    end's resident set before and after they connected, over their number, is the memory a
//!    connection holds;
//! 2. meanwhile `CSA_LOAD_GAMES` (default 200) games at once, each of `CSA_LOAD_ROUNDS`
//!    (default 2) rounds of 12 plies (the rooks' shuffle, a ply short of its repetition) and a
//!    resignation, every mover waiting `CSA_LOAD_GAP_MS` (default 500) after the previous echo,
//!    as an engine thinks: the echo latency of a move, from its line sent to its echo read by
//!    the mover and by the opponent, p50, p99 and max, and of the keep-alives.
//!
//! `CSA_LOAD_MODES` (default `stream,calls`) runs it once a mode, each with a front end of its
//! own on the same arbiter: the moves on one SubmitMoves stream (the default) or a SubmitMove
//! call each; each run prints the CPU a move of the front end, of this process (the arbiter and
//! the clients) and of nats-server, over the games' window.
//!
//! `cargo bench -p csa-server --bench load` (`NATS_SERVER_BIN` as for the tests; clocked games
//! need nats-server 2.12 or later).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The resident set of process `pid`, bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    if std::env::var("CSA_LOAD_ROLE").as_deref() == Ok("front") {
        runtime.block_on(front());
    } else {
        runtime.block_on(drive());
    }
}

/// The child: the front end in front of the arbiter at `CSA_LOAD_ARBITER`, its address on the
/// first line of standard output, until standard input closes (the parent ended).
async fn front() {
    let arbiter = std::env::var("CSA_LOAD_ARBITER").expect("CSA_LOAD_ARBITER");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    println!("{}", listener.local_addr().expect("an address"));
    let mut config = csa_server::Config::new(&arbiter);
    config.max_connections = 100_000;
    config.arbiter_stream = std::env::var("CSA_LOAD_STREAM").as_deref() != Ok("0");
    let parent_gone = async {
        let mut line = String::new();
        let mut stdin = BufReader::new(tokio::io::stdin());
        let _ = stdin.read_line(&mut line).await;
    };
    csa_server::run(listener, config, parent_gone)
        .await
        .expect("the front end");
}

struct Client {
    r: BufReader<OwnedReadHalf>,
    w: OwnedWriteHalf,
}

impl Client {
    async fn connect(addr: &str) -> Client {
        let (r, w) = TcpStream::connect(addr)
            .await
            .expect("connect")
            .into_split();
        Client {
            r: BufReader::new(r),
            w,
        }
    }

    async fn send(&mut self, line: &str) {
        self.w.write_all(line.as_bytes()).await.expect("write");
    }

    async fn line(&mut self) -> String {
        let mut l = String::new();
        let n = self.r.read_line(&mut l).await.expect("read");
        assert!(n > 0, "the front end closed a connection");
        l.trim_end_matches('\n').to_owned()
    }

    async fn until(&mut self, last: impl Fn(&str) -> bool) {
        while !last(&self.line().await) {}
    }

    async fn login(addr: &str, name: &str) -> Client {
        let mut c = Client::connect(addr).await;
        c.send(&format!("LOGIN {name} pw x1\n")).await;
        c.until(|l| l == "##[LOGIN] +OK x1").await;
        c
    }
}

#[derive(Default)]
struct Samples {
    mover: Vec<Duration>,
    opponent: Vec<Duration>,
    keepalive: Vec<Duration>,
}

fn percentiles(label: &str, v: &mut [Duration]) {
    if v.is_empty() {
        return println!("{label}: no samples");
    }
    v.sort();
    let at = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    println!(
        "{label}: {} samples, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        v.len(),
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        v[v.len() - 1].as_secs_f64() * 1e3
    );
}

/// One pair's games: `rounds` games of 12 plies and Black's resignation.
async fn pair(addr: String, i: usize, rounds: u64, gap: Duration, samples: Arc<Mutex<Samples>>) {
    let mut b = Client::login(&addr, &format!("b{i}")).await;
    let mut w = Client::login(&addr, &format!("w{i}")).await;
    let moves = ["+2878HI", "-8272HI", "+7828HI", "-7282HI"];
    for _ in 0..rounds {
        b.send(&format!("%%GAME load{i}-600-10 +\n")).await;
        w.send(&format!("%%GAME load{i}-600-10 -\n")).await;
        b.until(|l| l == "END Game_Summary").await;
        w.until(|l| l == "END Game_Summary").await;
        b.send("AGREE\n").await;
        w.send("AGREE\n").await;
        b.until(|l| l.starts_with("START:")).await;
        w.until(|l| l.starts_with("START:")).await;
        for (ply, mv) in moves.iter().cycle().take(12).enumerate() {
            tokio::time::sleep(gap).await;
            let (mover, other) = if ply % 2 == 0 {
                (&mut b, &mut w)
            } else {
                (&mut w, &mut b)
            };
            let sent = Instant::now();
            mover.send(&format!("{mv}\n")).await;
            let echo = format!("{mv},T");
            mover.until(|l| l.starts_with(&echo)).await;
            let mine = sent.elapsed();
            other.until(|l| l.starts_with(&echo)).await;
            let theirs = sent.elapsed();
            let mut s = samples.lock().expect("samples");
            s.mover.push(mine);
            s.opponent.push(theirs);
        }
        tokio::time::sleep(gap).await;
        b.send("%TORYO\n").await;
        b.until(|l| l == "#LOSE").await;
        w.until(|l| l == "#WIN").await;
    }
}

/// An idle client: an empty line every `every`, its answer awaited, until `stop`.
async fn idle(
    mut c: Client,
    every: Duration,
    stop: Arc<tokio::sync::Notify>,
    samples: Arc<Mutex<Samples>>,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = stop.notified() => return,
        }
        let sent = Instant::now();
        c.send("\n").await;
        let answer = c.line().await;
        assert_eq!(answer, "", "a keep-alive's answer");
        samples
            .lock()
            .expect("samples")
            .keepalive
            .push(sent.elapsed());
    }
}

/// What one front end's run measured.
struct Run {
    moves: usize,
    seconds: f64,
    /// CPU time: the front end's, this process's (the arbiter and the clients), nats-server's.
    cpu: [Duration; 3],
}

async fn drive() {
    let modes = std::env::var("CSA_LOAD_MODES").unwrap_or_else(|_| "stream,calls".to_owned());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default();
    let nats = test_support::NatsServer::start();
    println!(
        "host: {model}, {} cores; nats-server {}",
        std::thread::available_parallelism().map_or(0, usize::from),
        test_support::server_version(&test_support::nats_server_binary())
    );
    let bus = arbiter_stack::connect(&arbiter_stack::BusConfig::Nats {
        options: Box::new(arbiter_bus::NatsOptions::new(nats.url())),
        stream: shogi_proto::STREAM.to_owned(),
        replicas: 1,
    })
    .await
    .expect("the bus");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind gRPC");
    let grpc = listener.local_addr().expect("an address");
    let _stack = arbiter_stack::Stack::start(listener, bus.clone(), Default::default())
        .await
        .expect("the arbiter");
    // Each mode's front end in turn, on the same arbiter: the moves on one SubmitMoves stream
    // (`stream`, the default) or a SubmitMove call each (`calls`).
    for (n, mode) in modes.split(',').enumerate() {
        let stream = match mode {
            "stream" => "1",
            "calls" => "0",
            other => panic!("CSA_LOAD_MODES: {other}: stream or calls"),
        };
        println!("-- front end {}: moves on {mode}", n + 1);
        let run = front_end_run(grpc, stream, nats.pid()).await;
        let per_move = |d: Duration| d.as_secs_f64() * 1e6 / run.moves as f64;
        println!(
            "{mode}: {} moves in {:.1} s; CPU a move: front end {:.0} us, arbiter and clients {:.0} us, nats-server {:.0} us",
            run.moves,
            run.seconds,
            per_move(run.cpu[0]),
            per_move(run.cpu[1]),
            per_move(run.cpu[2]),
        );
    }
}

/// One front end (moves on a stream with `stream` = "1") in front of the arbiter at `grpc`:
/// the idle clients, then the games beside their keep-alives.
async fn front_end_run(grpc: std::net::SocketAddr, stream: &str, nats_pid: u32) -> Run {
    let idle_clients = env("CSA_LOAD_IDLE", 1000) as usize;
    let games = env("CSA_LOAD_GAMES", 200) as usize;
    let rounds = env("CSA_LOAD_ROUNDS", 2);
    let every = Duration::from_millis(env("CSA_LOAD_KEEPALIVE_MS", 1000));
    let gap = Duration::from_millis(env("CSA_LOAD_GAP_MS", 500));
    let mut child = tokio::process::Command::new(std::env::current_exe().expect("this program"))
        .env("CSA_LOAD_ROLE", "front")
        .env("CSA_LOAD_ARBITER", format!("http://{grpc}"))
        .env("CSA_LOAD_STREAM", stream)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the front end");
    let pid = child.id().expect("its pid");
    let mut out = BufReader::new(child.stdout.take().expect("its output"));
    let mut addr = String::new();
    out.read_line(&mut addr).await.expect("its address");
    let addr = addr.trim().to_owned();

    // A few connections first, so that the baseline holds the runtime's first allocations.
    for i in 0..4 {
        let mut c = Client::login(&addr, &format!("warm{i}")).await;
        c.send("LOGOUT\n").await;
        c.until(|l| l == "LOGOUT:completed").await;
    }
    let before = rss(pid);
    let started = Instant::now();
    let mut clients = Vec::with_capacity(idle_clients);
    for i in 0..idle_clients {
        clients.push(Client::login(&addr, &format!("idle{i}")).await);
    }
    let after = rss(pid);
    println!(
        "{idle_clients} idle clients logged in in {:.1} s; front end RSS {:.1} MB before, {:.1} MB after: {} B a connection",
        started.elapsed().as_secs_f64(),
        before as f64 / 1e6,
        after as f64 / 1e6,
        after.saturating_sub(before) / idle_clients.max(1) as u64
    );

    let samples = Arc::new(Mutex::new(Samples::default()));
    let stop = Arc::new(tokio::sync::Notify::new());
    let idlers: Vec<_> = clients
        .into_iter()
        .map(|c| tokio::spawn(idle(c, every, stop.clone(), samples.clone())))
        .collect();
    let cpu = [pid, std::process::id(), nats_pid].map(test_support::process_cpu);
    let started = Instant::now();
    let pairs: Vec<_> = (0..games)
        .map(|i| tokio::spawn(pair(addr.clone(), i, rounds, gap, samples.clone())))
        .collect();
    for p in pairs {
        p.await.expect("a pair's games");
    }
    let seconds = started.elapsed().as_secs_f64();
    let after = [pid, std::process::id(), nats_pid].map(test_support::process_cpu);
    let used: [Duration; 3] = std::array::from_fn(|i| after[i] - cpu[i]);
    let busy = used[0].as_secs_f64() / seconds;
    let peak = rss(pid);
    stop.notify_waiters();
    for i in idlers {
        i.abort();
    }
    let mut s = std::mem::take(&mut *samples.lock().expect("samples"));
    println!(
        "{games} games at once, {rounds} rounds of 12 plies, {} ms between moves, {idle_clients} clients' keep-alives every {} ms: {:.1} s; front end CPU {:.0} ms/s, RSS {:.1} MB",
        gap.as_millis(),
        every.as_millis(),
        seconds,
        busy * 1e3,
        peak as f64 / 1e6
    );
    percentiles("move echo to the mover", &mut s.mover);
    percentiles("move echo to the opponent", &mut s.opponent);
    percentiles("keep-alive answer", &mut s.keepalive);
    drop(child.stdin.take());
    let _ = child.wait().await;
    Run {
        moves: games * rounds as usize * 12,
        seconds,
        cpu: used,
    }
}
