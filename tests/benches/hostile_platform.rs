//! A platform's credential used against the other clients of the bus: with the shipped
//! `deploy/nats/auth.conf` (and the shipped `sync_interval`), the services each as its own
//! user, one player submits moves while the `reader` floods the server with what it may still
//! do: message gets pipelined on every connection its account allows, and the filtered
//! `STREAM.INFO` it is no longer exported (each refused). The player's move rate under the
//! flood must stay at least 0.8 of its rate without it (the means of quiet and flooded windows
//! taken in turn); both are printed. It does not hold yet, and is left out of the suite until
//! it does (deploy/STREAMS.md, "Limits"): a benchmark, by hand.

use arbiter_tests::games::{self, Scripted};
use arbiter_tests::play::Clients;
use arbiter_tests::{Proc, bin, free_port};
use std::io::{BufRead as _, Read as _, Write as _};
use std::net::TcpStream;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use test_support::NatsServer;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(60);
/// Each window the player's moves are counted over.
const WINDOW: Duration = Duration::from_secs(2);
/// Requests each flooding connection keeps in flight: one, a loop (each get sent when the last
/// is answered).
const PIPELINE: usize = 1;
/// Every so many gets, a flooding connection also asks for the filtered `STREAM.INFO`.
const INFO_EVERY: usize = 64;
const USERS: [&str; 5] = ["admin", "validator", "watcher", "judge", "reader"];

fn password(user: &str) -> String {
    format!("{user}-secret-for-the-flood")
}

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// nats-server with the shipped authorization and the shipped JetStream `sync_interval`.
fn server() -> NatsServer {
    let nats_conf = repo_file("deploy/nats/nats.conf");
    let sync = nats_conf
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("sync_interval:"))
        .expect("deploy/nats/nats.conf sets sync_interval");
    let config = format!(
        "{}\njetstream {{ {sync} }}\n",
        repo_file("deploy/nats/auth.conf")
    );
    let env: Vec<(String, String)> = USERS
        .iter()
        .map(|u| (format!("{}_PASSWORD", u.to_ascii_uppercase()), password(u)))
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    NatsServer::start_with_config_env(&config, &env)
}

fn user_env(user: &str) -> Vec<(String, String)> {
    let mut env = vec![
        ("NATS_USER".to_owned(), user.to_owned()),
        ("NATS_PASSWORD".to_owned(), password(user)),
        ("ARBITER_STREAMS".to_owned(), "bind".to_owned()),
        ("RUST_LOG".to_owned(), "warn".to_owned()),
        ("NO_COLOR".to_owned(), "1".to_owned()),
    ];
    if matches!(user, "watcher" | "judge") {
        env.push(("NATS_JS_API_PREFIX".to_owned(), "JS.ARBITER.API".to_owned()));
    }
    env
}

/// The streams as admin, then the validator, the watcher and the judge, each as its user;
/// the validator's port.
fn services(url: &str, dir: &std::path::Path) -> (Vec<Proc>, u16) {
    let out = Command::new(bin("shogi-arbiter"))
        .args(["streams", "apply", "--nats-url", url])
        .envs(user_env("admin"))
        .output()
        .expect("run streams apply");
    assert!(
        out.status.success(),
        "streams apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let start = |name: &str, user: &str, args: Vec<String>| {
        let env = user_env(user);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Proc::start_with_env(
            name,
            &bin(name),
            &args,
            &dir.join(format!("{name}.log")),
            &env,
        )
    };
    let nats = || vec!["--nats-url".to_owned(), url.to_owned()];
    let health = || {
        vec![
            "--health-listen".to_owned(),
            format!("127.0.0.1:{}", free_port()),
        ]
    };
    let procs = vec![
        start(
            "move-validator",
            "validator",
            [nats(), vec!["--listen".into(), format!("127.0.0.1:{port}")]].concat(),
        ),
        start("repetition-watcher", "watcher", [nats(), health()].concat()),
        start("impasse-judge", "judge", [nats(), health()].concat()),
    ];
    (procs, port)
}

/// One player: games created and played move after move, each move waiting for its answer,
/// for [`WINDOW`]; the moves accepted a second.
async fn player_rate(clients: &Clients, games: &[Scripted], tag: &str) -> f64 {
    let started = Instant::now();
    let mut moves = 0u64;
    'games: for (n, game) in games.iter().cycle().enumerate() {
        let id = format!("{tag}-{n}");
        let create = shogi_proto::v1::CreateGameRequest {
            ruleset: Some(game.ruleset.clone()),
            start: Some(shogi_proto::v1::StartPosition {
                start: Some(shogi_proto::v1::start_position::Start::Sfen(
                    game.start_sfen.clone(),
                )),
            }),
            game_id: id.clone(),
            strict: false,
        };
        clients
            .call(&id, |mut c| {
                let r = create.clone();
                async move { c.create_game(r).await }
            })
            .await
            .unwrap_or_else(|s| panic!("{id}: create: {s}"));
        for (i, usi) in game.moves.iter().enumerate() {
            if started.elapsed() >= WINDOW {
                break 'games;
            }
            let req = shogi_proto::v1::SubmitMoveRequest {
                game_id: id.clone(),
                ply: i as u32 + 1,
                usi: usi.clone(),
                strict: false,
            };
            clients
                .call(&id, |mut c| {
                    let r = req.clone();
                    async move { c.submit_move(r).await }
                })
                .await
                .unwrap_or_else(|s| panic!("{id} ply {}: {s}", i + 1));
            moves += 1;
        }
    }
    moves as f64 / started.elapsed().as_secs_f64()
}

/// A NATS protocol connection as `reader`, or the server's refusal.
fn connect_reader(port: u16) -> Result<(std::io::BufReader<TcpStream>, TcpStream), String> {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(DEADLINE.get())).unwrap();
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut line = String::new();
    reader.read_line(&mut line).expect("INFO");
    let connect = serde_json::json!({
        "verbose": false, "pedantic": false, "protocol": 1, "headers": true,
        "user": "reader", "pass": password("reader"),
    });
    writer
        .write_all(format!("CONNECT {connect}\r\nPING\r\n").as_bytes())
        .unwrap();
    loop {
        line.clear();
        reader.read_line(&mut line).expect("the server's answer");
        if line.starts_with("PONG") {
            return Ok((reader, writer));
        }
        if line.starts_with("-ERR") {
            return Err(line.trim_end().to_owned());
        }
    }
}

/// Reads one message's (`MSG`, `HMSG`) or status line and skips its payload; whether it was
/// a message.
fn next_message(reader: &mut std::io::BufReader<TcpStream>) -> std::io::Result<bool> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
    let size = match fields.first() {
        Some(&"MSG") | Some(&"HMSG") => fields.last().and_then(|s| s.parse::<usize>().ok()),
        _ => None,
    };
    match size {
        Some(size) => {
            let mut skip = vec![0u8; size + 2];
            reader.read_exact(&mut skip)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Puts the calling thread at the lowest CPU priority (nice 19): a platform floods from its own
/// hosts, so the flooding threads of this test, on the machine of the services and the server,
/// are to take none of their CPU; what is measured is what the server's work for the flood
/// costs the player.
fn lowest_priority() {
    let me = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    let tid = me
        .file_name()
        .and_then(|t| t.to_str())
        .expect("a thread id")
        .to_owned();
    let status = Command::new("renice")
        .args(["-n", "19", "-p", &tid])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run renice (util-linux)");
    assert!(status.success(), "renice of thread {tid}");
}

/// Whether the flood is on, and whether it is over, for the flooding threads to wait on.
#[derive(Default)]
struct Switch {
    state: std::sync::Mutex<(bool, bool)>,
    changed: std::sync::Condvar,
}

impl Switch {
    fn set(&self, on: bool, over: bool) {
        *self.state.lock().unwrap() = (on, over);
        self.changed.notify_all();
    }

    /// Blocks while the flood is off; whether it is over.
    fn wait_on(&self) -> bool {
        let state = self.state.lock().unwrap();
        let state = self
            .changed
            .wait_while(state, |(on, over)| !*on && !*over)
            .unwrap();
        state.1
    }
}

/// One flooding connection: [`PIPELINE`] message gets in flight, each answer sending the next,
/// and every [`INFO_EVERY`] answers a filtered `STREAM.INFO` (refused), while `switch` is on;
/// the answers it read are counted in `answered`.
fn flood(
    mut reader: std::io::BufReader<TcpStream>,
    mut writer: TcpStream,
    conn: usize,
    game: String,
    switch: Arc<Switch>,
    answered: Arc<AtomicU64>,
) {
    lowest_priority();
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
    if writer
        .write_all(format!("SUB _INBOX.reader.flood.{conn} 1\r\n").as_bytes())
        .is_err()
    {
        return;
    }
    let mut round = 0;
    loop {
        if switch.wait_on() {
            return;
        }
        let mut burst = String::new();
        for _ in 0..PIPELINE {
            burst.push_str(&request);
        }
        round += 1;
        if round % INFO_EVERY == 0 {
            burst.push_str(&refused);
        }
        if writer.write_all(burst.as_bytes()).is_err() {
            return;
        }
        let mut got = 0;
        while got < PIPELINE {
            match next_message(&mut reader) {
                Ok(true) => got += 1,
                Ok(false) => {}
                Err(_) => return,
            }
        }
        answered.fetch_add(got as u64, Ordering::Relaxed);
    }
}

/// Quiet and flooded windows taken in turn, so that the machine's other load falls on both.
const ROUNDS: usize = 3;

/// By hand, not in the suite: the goal (>= 0.8x) does not hold yet, and a benchmark prints
/// figures where a test would only fail: `cargo build --release --bins && cargo bench -p
/// arbiter-tests --bench hostile_platform` (the service binaries beside the benchmark's).
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    a_flood_by_the_platforms_credential_leaves_a_player_its_move_rate().await;
}

async fn a_flood_by_the_platforms_credential_leaves_a_player_its_move_rate() {
    let nats = server();
    let dir = tempfile::Builder::new()
        .prefix("arbiter-flood-")
        .tempdir()
        .unwrap();
    let (mut procs, port) = services(nats.url(), dir.path());
    let clients = Clients::new(&[port], DEADLINE.get());
    let games = games::corpus(200, 20);
    assert!(!games.is_empty(), "no corpus games");
    // Warm up: the services bound, and the first game's log there for the flood to read.
    player_rate(&clients, &games, "warm").await;

    // The flood: every connection the platform's account lets in.
    let switch = Arc::new(Switch::default());
    let answered = Arc::new(AtomicU64::new(0));
    let mut floods = Vec::new();
    let mut refused = 0;
    for conn in 0..400 {
        match connect_reader(nats.port()) {
            Ok((r, w)) => {
                let (switch, answered) = (switch.clone(), answered.clone());
                floods.push((
                    w.try_clone().unwrap(),
                    std::thread::spawn(move || {
                        flood(r, w, conn, "warm-0".into(), switch, answered)
                    }),
                ));
            }
            Err(e) => {
                assert!(e.contains("maximum account active connections"), "{e}");
                refused += 1;
            }
        }
    }
    let (mut quiet, mut flooded) = (Vec::new(), Vec::new());
    let (mut gets, mut server_cpu) = (0, 0.0);
    for round in 0..ROUNDS {
        quiet.push(player_rate(&clients, &games, &format!("quiet-{round}")).await);
        let (answered_before, cpu_before) = (
            answered.load(Ordering::Relaxed),
            test_support::process_cpu(nats.pid()),
        );
        switch.set(true, false);
        flooded.push(player_rate(&clients, &games, &format!("flood-{round}")).await);
        switch.set(false, false);
        gets += answered.load(Ordering::Relaxed) - answered_before;
        server_cpu += (test_support::process_cpu(nats.pid()) - cpu_before).as_secs_f64();
    }
    quiet.push(player_rate(&clients, &games, "quiet-last").await);
    switch.set(false, true);
    for (w, t) in floods.drain(..) {
        let _ = w.shutdown(std::net::Shutdown::Both);
        t.join().expect("a flooding thread");
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ratio = mean(&flooded) / mean(&quiet);
    let flood_secs = ROUNDS as f64 * WINDOW.as_secs_f64();
    eprintln!(
        "player, moves/s: quiet {quiet:.0?} (mean {:.0}), under the flood {flooded:.0?} (mean \
         {:.0}): {ratio:.2}x; the flood: {} connections ({refused} refused), {:.0} message gets \
         answered a second, nats-server at {:.2} of a core",
        mean(&quiet),
        mean(&flooded),
        400 - refused,
        gets as f64 / flood_secs,
        server_cpu / flood_secs
    );
    for p in &mut procs {
        assert!(p.is_running(), "{} exited", p.name());
    }
    assert!(gets > 0, "the flood got no answer: it measured nothing");
    assert!(
        ratio >= 0.8,
        "the player's move rate fell to {ratio:.2}x under the platform's flood"
    );
}
