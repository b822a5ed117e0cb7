//! The operator's NATS commands (`streams prune`, `streams replicas`, `streams apply`,
//! `export`) fail fast and clean, the binary against a real nats-server:
//!
//! - a server that is not there, or a listener that accepts and says nothing, ends each of them
//!   within its connect timeout (`replicas` within `--wait`), with exit 2;
//! - `prune` as a user that may not purge stops at the first permissions violation, exit 2,
//!   naming the permission, instead of waiting out a timeout a game;
//! - retention and replica commands only bind: on an empty bus they create no stream, whatever
//!   `ARBITER_STREAMS` says, and say which stream is missing;
//! - `streams apply --consumer-storage memory` below three replicas is refused before anything
//!   is made;
//! - a closed standard output ends `prune --dry-run`, `apply` and `replicas` quietly, exit 0;
//! - SIGTERM and SIGINT during a prune finish the game in hand (its record written, then its
//!   purge), leave no temporary file, and exit 143 and 130.

use arbiter_bus::{BusError, EventBus as _, JetStreamBus, NatsOptions, Provision};
use shogi_proto::v1 as pb;
use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use test_support::{Deadline, NatsServer};

const BIN: &str = env!("CARGO_BIN_EXE_shogi-arbiter");
const DEADLINE: Deadline = Deadline::secs(30);

/// A mate in one: Black drops a gold on 5b.
const MATE_IN_ONE: (&str, &str) = ("4k4/9/4G4/9/9/9/9/9/4K4 b G 1", "G*5b");

/// What a run of the binary gave.
struct Run {
    /// `None`: still running after [`DEADLINE`], and killed.
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// `child`'s exit status, waited for until `deadline`; `None`, the child killed, when it has
/// not exited by then.
fn exit_within(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let until = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads all of `from` on a thread of its own.
fn read_all(mut from: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}

fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("ARBITER_STREAMS")
        .env_remove("NATS_USER")
        .env_remove("NATS_PASSWORD")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    cmd
}

/// Runs the binary with `args` and `env`, its output read, for at most [`DEADLINE`].
fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    let start = Instant::now();
    let mut child = command(args, env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start shogi-arbiter");
    let out = read_all(child.stdout.take().expect("piped"));
    let err = read_all(child.stderr.take().expect("piped"));
    let status = exit_within(&mut child, DEADLINE.get());
    Run {
        status,
        took: start.elapsed(),
        stdout: out.join().expect("stdout"),
        stderr: err.join().expect("stderr"),
    }
}

/// Runs the binary with `args` writing into a pipe whose reader is already gone.
fn into_closed_pipe(args: &[&str]) -> Run {
    let start = Instant::now();
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = command(args, &[])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start shogi-arbiter");
    let err = read_all(child.stderr.take().expect("piped"));
    let status = exit_within(&mut child, DEADLINE.get());
    Run {
        status,
        took: start.elapsed(),
        stdout: String::new(),
        stderr: err.join().expect("stderr"),
    }
}

/// `shogi-arbiter serve` on the NATS server at `url` as `env`'s user, killed on drop.
struct Served {
    child: Child,
    addr: String,
}

impl Run {
    /// The exit code; `None` when a signal, or the test's deadline, ended it.
    fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    fn success(&self) -> bool {
        self.code() == Some(0)
    }
}

impl Served {
    fn start(url: &str, env: &[(&str, &str)]) -> Served {
        let mut child = command(
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--nats-url",
                url,
                "--grace-secs",
                "1",
            ],
            env,
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start shogi-arbiter serve");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(DEADLINE.get())
            .expect("serve prints its address");
        Served {
            child,
            addr: format!("http://{}", line.trim()),
        }
    }

    /// Plays `n` games named `<prefix>-<i>`, each a mate in one.
    async fn finished_games(&self, prefix: &str, n: usize) {
        let mut client = pb::move_validator_client::MoveValidatorClient::connect(self.addr.clone())
            .await
            .expect("connect to serve");
        for i in 0..n {
            let id = format!("{prefix}-{i}");
            client
                .create_game(pb::CreateGameRequest {
                    ruleset: Some(pb::Ruleset {
                        preset: "online".into(),
                        overrides: None,
                    }),
                    start: Some(pb::StartPosition {
                        start: Some(pb::start_position::Start::Sfen(MATE_IN_ONE.0.into())),
                    }),
                    game_id: id.clone(),
                    strict: true,
                })
                .await
                .unwrap_or_else(|s| panic!("{id}: create: {s}"));
            let answer = client
                .submit_move(pb::SubmitMoveRequest {
                    game_id: id.clone(),
                    ply: 1,
                    usi: MATE_IN_ONE.1.into(),
                    strict: true,
                    comment: String::new(),
                })
                .await
                .unwrap_or_else(|s| panic!("{id}: move: {s}"))
                .into_inner();
            assert!(answer.verdict.is_some(), "{id}: no checkmate");
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn options(url: &str, user: Option<(&str, &str)>) -> NatsOptions {
    let mut options = NatsOptions::new(url);
    options.provision = Provision::Bind;
    if let Some((user, password)) = user {
        options.user = Some(user.into());
        options.password = Some(password.into());
    }
    options
}

/// The games' stream `name` on the server at `url`, bound to, never created.
async fn bind(url: &str, user: Option<(&str, &str)>, name: &str) -> Result<JetStreamBus, BusError> {
    JetStreamBus::connect(
        &options(url, user),
        "operator-tools-test",
        &arbiter_runtime::streams::games(name, 1),
    )
    .await
}

/// Waits until `n` verdicts are stored on the games' stream (the owners announce them a
/// moment after the move).
async fn wait_verdicts(url: &str, user: Option<(&str, &str)>, n: usize) {
    let bus = bind(url, user, shogi_proto::STREAM)
        .await
        .expect("the stream");
    let until = Instant::now() + DEADLINE.get();
    loop {
        let mut count = 0;
        let mut from = 1;
        while let Some(m) = bus
            .next(shogi_proto::subject::ALL_VERDICTS, from)
            .await
            .expect("read verdicts")
        {
            from = m.sequence + 1;
            count += 1;
        }
        if count >= n {
            return;
        }
        assert!(Instant::now() < until, "{count} of {n} verdicts stored");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether game `id` still has its creation on the bus.
async fn on_the_bus(bus: &JetStreamBus, id: &str) -> bool {
    bus.last(&shogi_proto::subject::created(id))
        .await
        .expect("read a game")
        .is_some()
}

#[test]
fn streams_commands_return_against_a_dead_or_a_silent_server() {
    let dead = format!("nats://127.0.0.1:{}", test_support::free_port());
    // Accepts every connection and says nothing, as a hung server or a wrong port does.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent = format!("nats://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in listener.incoming() {
            held.push(connection);
        }
    });
    // Every case is run, and every one that fails is said.
    let mut failed = Vec::new();
    for url in [&dead, &silent] {
        // `--wait` bounds the whole command, connecting included.
        let args = ["streams", "replicas", "--nats-url", url, "--wait", "5"];
        let r = run(&args, &[]);
        let bound = Duration::from_secs(5) + test_support::patience(Duration::from_secs(3));
        if r.code() != Some(2)
            || !(r.stderr.contains("within 5 s") && r.stderr.contains("--wait"))
            || r.took >= bound
        // product bound
        {
            failed.push(format!(
                "{args:?}: {:?} after {:?}: {}",
                r.status, r.took, r.stderr
            ));
        }
        for args in [
            vec!["streams", "prune", "--finished-before", "0s"],
            vec!["streams", "prune", "--finished-before", "0s", "--dry-run"],
            vec!["streams", "apply"],
            vec!["export", "--archive", "--out-dir", "/nonexistent"],
            vec!["streams", "replicas"],
        ] {
            let mut args = args.clone();
            args.extend(["--nats-url", url, "--connect-timeout", "2"]);
            let r = run(&args, &[]);
            if r.code() != Some(2)
                || !r.stderr.contains("no answer from NATS")
                || !r.stderr.contains("--connect-timeout")
            {
                failed.push(format!("{args:?}: {:?}: {}", r.status, r.stderr));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_stops_at_the_first_permissions_violation_and_names_it() {
    // One account, two users: an operator, and an auditor who may do everything but purge.
    let nats = NatsServer::start_with_config(
        r#"
        accounts: {
          OPS: {
            jetstream: enabled
            users: [
              { user: operator, password: operator-secret }
              { user: auditor, password: auditor-secret,
                permissions: { publish: { deny: ["$JS.API.STREAM.PURGE.>"] } } }
            ]
          }
        }
        "#,
    );
    let url = nats.url();
    let operator = [
        ("NATS_USER", "operator"),
        ("NATS_PASSWORD", "operator-secret"),
    ];
    let auditor = [
        ("NATS_USER", "auditor"),
        ("NATS_PASSWORD", "auditor-secret"),
    ];
    let served = Served::start(url, &operator);
    served.finished_games("kept", 3).await;
    wait_verdicts(url, Some(("operator", "operator-secret")), 3).await;

    let r = run(
        &[
            "streams",
            "prune",
            "--nats-url",
            url,
            "--finished-before",
            "0s",
        ],
        &auditor,
    );
    assert_eq!(r.code(), Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("Permissions Violation")
            && r.stderr.contains("$JS.API.STREAM.PURGE.SHOGI_GAMES"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "", "nothing was pruned");
    // At the first refusal, not after a request timeout (5 s) a game.
    assert!(r.took < Duration::from_secs(5), "took {:?}", r.took); // product bound
    let bus = bind(
        url,
        Some(("operator", "operator-secret")),
        shogi_proto::STREAM,
    )
    .await
    .expect("the stream");
    for i in 0..3 {
        assert!(
            on_the_bus(&bus, &format!("kept-{i}")).await,
            "kept-{i} went"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_and_replica_commands_bind_and_never_create() {
    let nats = NatsServer::start();
    let url = nats.url();
    for env in [vec![], vec![("ARBITER_STREAMS", "create")]] {
        for (args, missing) in [
            (
                vec!["streams", "prune", "--finished-before", "0s", "--dry-run"],
                "SHOGI_GAMES",
            ),
            (
                vec![
                    "streams",
                    "prune",
                    "--finished-before",
                    "0s",
                    "--stream",
                    "NOPE",
                ],
                "NOPE",
            ),
            (vec!["streams", "replicas"], "SHOGI_GAMES"),
            (vec!["streams", "replicas", "--stream", "NOPE"], "NOPE"),
            (vec!["export", "some-game"], "SHOGI_GAMES"),
        ] {
            let mut args = args.clone();
            args.extend(["--nats-url", url]);
            let r = run(&args, &env);
            assert_eq!(r.code(), Some(2), "{args:?} {env:?}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains(&format!("stream {missing} does not exist"))
                    && r.stderr.contains("streams apply"),
                "{args:?}: {}",
                r.stderr
            );
            assert!(!r.stderr.contains("ARBITER_STREAMS"), "{}", r.stderr);
        }
    }
    for name in [shogi_proto::STREAM, "NOPE", shogi_proto::ASIDE_STREAM] {
        match bind(url, None, name).await {
            Err(BusError::Missing { what }) => assert_eq!(what, format!("stream {name}")),
            other => panic!("{name}: {other:?}"),
        }
    }
    // `apply` is what creates them; then `replicas` finds them.
    let r = run(&["streams", "apply", "--nats-url", url], &[]);
    assert!(r.success(), "{}", r.stderr);
    let r = run(&["streams", "replicas", "--nats-url", url], &[]);
    assert!(r.success(), "{}", r.stderr);
    assert!(
        r.stdout.contains("SHOGI_GAMES: on a single server"),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_consumers_below_three_replicas_are_refused_by_apply() {
    let nats = NatsServer::start();
    let url = nats.url();
    for extra in [vec![], vec!["--consumer-replicas", "2"]] {
        let mut args = vec![
            "streams",
            "apply",
            "--nats-url",
            url,
            "--consumer-storage",
            "memory",
        ];
        args.extend(extra);
        let r = run(&args, &[]);
        assert_eq!(r.code(), Some(2), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("memory needs three replicas or more")
                && r.stderr.contains("restart"),
            "{}",
            r.stderr
        );
        assert_eq!(r.stdout, "", "{args:?} made something");
    }
    // Refused before anything was made.
    assert!(matches!(
        bind(url, None, shogi_proto::STREAM).await,
        Err(BusError::Missing { .. })
    ));
    // `auto` is as it was: files below three replicas.
    let r = run(
        &[
            "streams",
            "apply",
            "--nats-url",
            url,
            "--consumer-storage",
            "auto",
        ],
        &[],
    );
    assert!(r.success(), "{}", r.stderr);
    assert!(
        r.stdout.contains("impasse-judge-p0: created"),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_apply_replicas_and_export_into_a_closed_pipe_end_quietly() {
    let nats = NatsServer::start();
    let url = nats.url();
    let served = Served::start(url, &[]);
    served.finished_games("old", 3).await;
    wait_verdicts(url, None, 3).await;
    let bus = bind(url, None, shogi_proto::STREAM)
        .await
        .expect("the stream");
    let mut failed = Vec::new();
    // A closed standard output ends the printing ones quietly, and a dry run changes nothing.
    for args in [
        vec!["streams", "prune", "--finished-before", "0s", "--dry-run"],
        vec!["streams", "apply"],
        vec!["streams", "replicas"],
        vec!["export", "old-0"],
    ] {
        let mut args = args.clone();
        args.extend(["--nats-url", url]);
        let r = into_closed_pipe(&args);
        if r.code() != Some(0) || !r.stderr.is_empty() {
            failed.push(format!("{args:?}: {:?}: {}", r.status, r.stderr));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(on_the_bus(&bus, "old-0").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_during_a_prune_finishes_the_game_in_hand() {
    const GAMES: usize = 150;
    let nats = NatsServer::start();
    let url = nats.url();
    let served = Served::start(url, &[]);
    served.finished_games("old", GAMES).await;
    wait_verdicts(url, None, GAMES).await;
    let bus = bind(url, None, shogi_proto::STREAM)
        .await
        .expect("the stream");

    let dir = tempfile::tempdir().expect("a directory");
    let mut left = GAMES;
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        let mut child = command(
            &[
                "streams",
                "prune",
                "--nats-url",
                url,
                "--finished-before",
                "0s",
                "--archive-dir",
                dir.path().to_str().expect("a path"),
            ],
            &[],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start prune");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("a line");
        assert!(first.contains("pruned"), "{first}");
        Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        let err = read_all(child.stderr.take().expect("piped"));
        let status = exit_within(&mut child, DEADLINE.get())
            .unwrap_or_else(|| panic!("prune still running after {signal}"));
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).expect("the rest");
        let stderr = err.join().expect("stderr");
        assert_eq!(status.code(), Some(code), "{signal}: {stderr}");
        assert!(stderr.contains("the game in hand"), "{stderr}");
        let pruned = 1 + rest.lines().count();
        assert!(
            pruned < left,
            "the prune ended before {signal} came: it needs more games to stop in the middle"
        );
        left -= pruned;
        // Every game pruned has its record, and nothing half-written is left.
        let mut records = Vec::new();
        for entry in std::fs::read_dir(dir.path()).expect("the archive") {
            let name = entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            assert!(!name.ends_with(".tmp"), "{name} left behind");
            records.push(name.trim_end_matches(".csa").to_owned());
        }
        assert_eq!(records.len(), GAMES - left, "{records:?}");
        for id in &records {
            assert!(!on_the_bus(&bus, id).await, "{id} archived but not purged");
        }
    }
    let r = run(
        &[
            "streams",
            "prune",
            "--nats-url",
            url,
            "--finished-before",
            "0s",
            "--dry-run",
        ],
        &[],
    );
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), left, "{}", r.stdout);
}
