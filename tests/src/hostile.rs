//! A hostile platform beside a player, on a real nats-server with the shipped
//! `deploy/nats/auth.conf` and `sync_interval`, the services each as its own NATS user and the
//! validator with named credentials: what the test (`tests/hostile_platform.rs`) and the
//! benchmark (`benches/hostile_platform.rs`) share. The flooding threads run at the lowest CPU
//! priority (nice 19), as if on the platform's own hosts: what is measured is what the
//! services' and the server's work for the flood costs the player, not the flooder's own CPU.

use crate::games::Scripted;
use crate::{Proc, bin, free_port};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use test_support::NatsServer;
use tonic::transport::{Channel, Endpoint};

/// The player's credential, and the hostile platform's, as the validator's credentials file
/// names them.
pub const PLAYER: &str = "platform-a";
/// The hostile platform's credential: its quotas are [`HOSTILE_QUOTAS`].
pub const HOSTILE: &str = "platform-b";
/// The hostile platform's quotas, as the credentials file says them.
pub const HOSTILE_QUOTAS: &str = "games_per_second = 5\nlive_games = 50\ncalls_per_second = 50\n\
     watch_streams = 4\nmove_streams = 4\n";
/// The hostile platform's `move_streams`: SubmitMoves streams it may hold open at once.
pub const HOSTILE_MOVE_STREAMS: usize = 4;

/// The password of NATS user `user` in these runs.
pub fn password(user: &str) -> String {
    format!("{user}-secret-for-the-flood")
}

/// The bearer token of credential `name`.
pub fn token(name: &str) -> String {
    format!("{name}-token-for-the-flood")
}

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The stage of a hostile platform's flood: nats-server with the shipped configuration, the
/// services each as its own user (logging into `dir`), the player's caller and the corpus's
/// games, the player's first game played (the services bound, a game's log for the flood to
/// read).
#[allow(missing_debug_implementations)]
pub struct Stage {
    /// The server.
    pub nats: NatsServer,
    /// The services' logs.
    pub dir: tempfile::TempDir,
    /// The services.
    pub procs: Vec<Proc>,
    /// The validator's port.
    pub port: u16,
    /// The player, as [`PLAYER`].
    pub player: Caller,
    /// The games the player plays.
    pub games: Vec<Scripted>,
}

impl Stage {
    /// Sets the stage up, the services' logs in a temporary directory named `prefix`; waits
    /// up to `deadline` for the validator, and plays the player's first game in `window`.
    pub async fn start(prefix: &str, deadline: Duration, window: Duration) -> Stage {
        let nats = server();
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("a temporary directory");
        let (procs, port) = services(nats.url(), dir.path());
        crate::wait_serving(&format!("127.0.0.1:{port}"), deadline).await;
        let player = Caller::new(port, PLAYER);
        let games = crate::games::corpus(200, 20);
        assert!(!games.is_empty(), "no corpus games");
        player_rate(&player, &games, "warm", window).await;
        Stage {
            nats,
            dir,
            procs,
            port,
            player,
            games,
        }
    }
}

/// nats-server with the shipped authorization and the shipped JetStream `sync_interval`.
pub fn server() -> NatsServer {
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
    NatsServer::start_with_auth(&config, password)
}

/// The `limits` of `account` in the shipped `auth.conf`: connections and subscriptions.
pub fn account_limits(account: &str) -> (usize, usize) {
    let auth = repo_file("deploy/nats/auth.conf");
    let start = auth
        .find(&format!("\n  {account}: {{"))
        .unwrap_or_else(|| panic!("account {account} in auth.conf"));
    let block = &auth[start..];
    let limits = &block[block.find("limits: {").expect("its limits")..];
    let limits = &limits[..limits.find('}').expect("the limits end")];
    let value = |key: &str| -> usize {
        limits
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
            .unwrap_or_else(|| panic!("{account}: no {key}"))
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{account} {key}: {e}"))
    };
    (value("max_connections"), value("max_subscriptions"))
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

/// The streams as admin, then the validator (with the credentials of [`PLAYER`] and
/// [`HOSTILE`]), the watcher and the judge, each as its NATS user, logging into `dir`; the
/// validator's port.
pub fn services(url: &str, dir: &Path) -> (Vec<Proc>, u16) {
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
    let credentials = dir.join("credentials.toml");
    std::fs::write(
        &credentials,
        format!(
            "[[credential]]\nname = \"{PLAYER}\"\ntoken = \"{}\"\nscopes = [\"play\", \
             \"read\"]\n\n[[credential]]\nname = \"{HOSTILE}\"\ntoken = \"{}\"\nscopes = \
             [\"play\", \"read\"]\n{HOSTILE_QUOTAS}",
            token(PLAYER),
            token(HOSTILE)
        ),
    )
    .expect("write the credentials file");
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
    let validator = vec![
        "--listen".to_owned(),
        format!("127.0.0.1:{port}"),
        "--credentials-file".to_owned(),
        credentials.display().to_string(),
    ];
    let procs = vec![
        start("move-validator", "validator", [nats(), validator].concat()),
        start("repetition-watcher", "watcher", [nats(), health()].concat()),
        start("impasse-judge", "judge", [nats(), health()].concat()),
    ];
    (procs, port)
}

/// A gRPC client of the validator on `port`, calling with credential `name`'s token.
#[derive(Debug, Clone)]
pub struct Caller {
    client: MoveValidatorClient<Channel>,
    token: String,
}

impl Caller {
    /// A lazy connection to the validator on the loopback `port`, as credential `name`.
    pub fn new(port: u16, name: &str) -> Caller {
        let channel = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
            .expect("a loopback endpoint")
            .connect_timeout(Duration::from_secs(1))
            .timeout(Duration::from_secs(10))
            .connect_lazy();
        Caller {
            client: MoveValidatorClient::new(channel),
            token: token(name),
        }
    }

    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {}", self.token)
                .parse()
                .expect("a token in ASCII"),
        );
        request
    }

    /// Creates game `id` from `game`'s start.
    pub async fn create(&self, id: &str, game: &Scripted) -> Result<(), tonic::Status> {
        let create = pb::CreateGameRequest {
            ruleset: Some(game.ruleset.clone()),
            start: Some(pb::StartPosition {
                start: Some(pb::start_position::Start::Sfen(game.start_sfen.clone())),
            }),
            game_id: id.to_owned(),
            strict: false,
        };
        self.client
            .clone()
            .create_game(self.request(create))
            .await
            .map(drop)
    }

    /// Submits `usi` as ply `ply` of game `id`.
    pub async fn submit(&self, id: &str, ply: u32, usi: &str) -> Result<(), tonic::Status> {
        let submit = pb::SubmitMoveRequest {
            game_id: id.to_owned(),
            ply,
            usi: usi.to_owned(),
            strict: false,
            comment: String::new(),
        };
        self.client
            .clone()
            .submit_move(self.request(submit))
            .await
            .map(drop)
    }

    /// Reads game `id` (GetGame).
    pub async fn get(&self, id: &str) -> Result<(), tonic::Status> {
        let get = pb::GetGameRequest {
            game_id: id.to_owned(),
            ..Default::default()
        };
        self.client
            .clone()
            .get_game(self.request(get))
            .await
            .map(drop)
    }

    /// Opens a SubmitMoves stream.
    pub async fn stream(&self) -> Result<MoveStream, tonic::Status> {
        let (send, requests) = futures::channel::mpsc::channel(1);
        let answers = self
            .client
            .clone()
            .submit_moves(self.request(requests))
            .await?
            .into_inner();
        Ok(MoveStream {
            send,
            answers,
            tag: 0,
        })
    }

    /// Lists the games (ListGames, its first page).
    pub async fn list(&self) -> Result<(), tonic::Status> {
        let list = pb::ListGamesRequest::default();
        self.client
            .clone()
            .list_games(self.request(list))
            .await
            .map(drop)
    }
}

/// An open SubmitMoves stream of a [`Caller`]'s: one move at a time, each awaiting its answer.
#[derive(Debug)]
pub struct MoveStream {
    send: futures::channel::mpsc::Sender<pb::SubmitMovesRequest>,
    answers: tonic::Streaming<pb::SubmitMovesResponse>,
    tag: u64,
}

impl MoveStream {
    /// Submits `usi` as ply `ply` of game `id` on the stream: its answer's error as the status
    /// a SubmitMove call would have ended with.
    pub async fn submit(&mut self, id: &str, ply: u32, usi: &str) -> Result<(), tonic::Status> {
        use futures::SinkExt as _;
        self.tag += 1;
        let request = pb::SubmitMovesRequest {
            tag: self.tag,
            r#move: Some(pb::SubmitMoveRequest {
                game_id: id.to_owned(),
                ply,
                usi: usi.to_owned(),
                strict: false,
                comment: String::new(),
            }),
        };
        if self.send.send(request).await.is_err() {
            return Err(tonic::Status::unavailable("the stream took no more moves"));
        }
        let answer = self
            .answers
            .message()
            .await?
            .ok_or_else(|| tonic::Status::unavailable("the stream ended"))?;
        assert_eq!(answer.tag, self.tag, "an answer to another move");
        match answer.answer {
            Some(pb::submit_moves_response::Answer::Submitted(_)) => Ok(()),
            Some(pb::submit_moves_response::Answer::Error(e)) => {
                Err(shogi_proto::status::from_submit_move_error(&e))
            }
            None => Err(tonic::Status::internal("an answer without one")),
        }
    }
}

/// One player: games created and played move after move, each move waiting for its answer,
/// for `window`; the moves accepted a second. Every call must succeed.
pub async fn player_rate(player: &Caller, games: &[Scripted], tag: &str, window: Duration) -> f64 {
    let started = Instant::now();
    let mut moves = 0u64;
    'games: for (n, game) in games.iter().cycle().enumerate() {
        let id = format!("{tag}-{n}");
        player
            .create(&id, game)
            .await
            .unwrap_or_else(|s| panic!("the player's {id}: create: {s:?}"));
        for (i, usi) in game.moves.iter().enumerate() {
            if started.elapsed() >= window {
                break 'games;
            }
            let ply = i as u32 + 1;
            player
                .submit(&id, ply, usi)
                .await
                .unwrap_or_else(|s| panic!("the player's {id} ply {ply}: {s:?}"));
            moves += 1;
        }
    }
    moves as f64 / started.elapsed().as_secs_f64()
}

/// Puts the calling thread at the lowest CPU priority (nice 19), as a platform flooding from
/// its own hosts: the flooding threads take none of the CPU the services and the server need.
pub fn lowest_priority() {
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
#[derive(Debug, Default)]
pub struct Switch {
    state: Mutex<(bool, bool)>,
    changed: Condvar,
}

impl Switch {
    /// Turns the flood on or off, or ends it.
    pub fn set(&self, on: bool, over: bool) {
        *self.state.lock().unwrap() = (on, over);
        self.changed.notify_all();
    }

    /// Blocks while the flood is off; whether it is over.
    pub fn wait_on(&self) -> bool {
        let state = self.state.lock().unwrap();
        let state = self
            .changed
            .wait_while(state, |(on, over)| !*on && !*over)
            .unwrap();
        state.1
    }

    /// Whether the flood is over.
    pub fn over(&self) -> bool {
        self.state.lock().unwrap().1
    }
}

/// A NATS protocol connection, its reading and writing halves.
#[derive(Debug)]
pub struct Wire {
    /// The server's lines.
    pub reader: BufReader<TcpStream>,
    /// Where the client's protocol goes.
    pub writer: TcpStream,
}

/// What the server sent: a message (its payload skipped), a `PONG`, an `-ERR`, or another line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// `MSG` or `HMSG`.
    Message,
    /// `PONG`.
    Pong,
    /// `-ERR` with the server's text.
    Error(String),
    /// `PING`, `INFO`, `+OK`.
    Other,
}

impl Wire {
    /// A NATS protocol connection as `user` to the loopback `port`, or the server's refusal.
    pub fn connect(port: u16, user: &str, timeout: Duration) -> Result<Wire, String> {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(timeout)).unwrap();
        let mut wire = Wire {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        };
        let mut line = String::new();
        wire.reader.read_line(&mut line).expect("INFO");
        let connect = serde_json::json!({
            "verbose": false, "pedantic": false, "protocol": 1, "headers": true,
            "user": user, "pass": password(user),
        });
        wire.send(format!("CONNECT {connect}\r\nPING\r\n").as_bytes())
            .expect("CONNECT");
        loop {
            match wire.next_line().map_err(|e| e.to_string())? {
                Line::Pong => return Ok(wire),
                Line::Error(e) => return Err(e),
                _ => {}
            }
        }
    }

    /// Writes `bytes`.
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)
    }

    /// Reads the server's next line (and a message's payload, skipped).
    pub fn next_line(&mut self) -> std::io::Result<Line> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.first().copied() {
            Some("MSG" | "HMSG") => {
                let size: usize = fields
                    .last()
                    .and_then(|s| s.parse().ok())
                    .expect("a message's size");
                let mut skip = vec![0u8; size + 2];
                self.reader.read_exact(&mut skip)?;
                Ok(Line::Message)
            }
            Some("PONG") => Ok(Line::Pong),
            Some("PING") => {
                self.send(b"PONG\r\n")?;
                Ok(Line::Other)
            }
            Some("-ERR") => Ok(Line::Error(line.trim_end().to_owned())),
            _ => Ok(Line::Other),
        }
    }

    /// Sends `PING` after what was sent, and reads up to its `PONG`: the errors on the way.
    pub fn errors_until_pong(&mut self) -> std::io::Result<Vec<String>> {
        self.send(b"PING\r\n")?;
        let mut errors = Vec::new();
        loop {
            match self.next_line()? {
                Line::Pong => return Ok(errors),
                Line::Error(e) => errors.push(e),
                _ => {}
            }
        }
    }
}

/// What the hostile platform's flood through its own credentials met, counted.
#[derive(Debug, Default)]
pub struct Flooded {
    /// gRPC calls answered.
    pub calls_answered: u64,
    /// gRPC calls refused RESOURCE_EXHAUSTED, by the limit their `QuotaFailure` names.
    pub calls_refused: BTreeMap<String, u64>,
    /// gRPC calls refused otherwise (each a failure of the test): the first few.
    pub calls_failed: Vec<String>,
    /// SubmitMoves streams opened (and kept).
    pub streams_opened: usize,
    /// NATS connections let in, and refused ("maximum account active connections").
    pub connections: (usize, usize),
    /// NATS subscriptions refused ("maximum subscriptions exceeded").
    pub subscriptions_refused: usize,
    /// Rounds of the NATS flood (a subscription dropped and made again, a publish refused,
    /// a `PING` answered), and the publishes refused ("Permissions Violation").
    pub nats_rounds: u64,
    /// Publishes refused on the NATS flood.
    pub publishes_refused: u64,
    /// NATS errors other than those above (each a failure of the test): the first few.
    pub nats_other: Vec<String>,
}

/// The limit a RESOURCE_EXHAUSTED status's `QuotaFailure` names (its violation's description
/// starts with it), or why the status is not such a refusal.
pub fn quota_limit(status: &tonic::Status) -> Result<String, String> {
    if status.code() != tonic::Code::ResourceExhausted {
        return Err(format!("{status:?}"));
    }
    let violations = shogi_proto::status::quota_violations(status);
    let (subject, description) = violations
        .first()
        .ok_or_else(|| format!("no QuotaFailure with a violation: {status:?}"))?;
    if *subject != format!("credential:{HOSTILE}") {
        return Err(format!(
            "another credential named: {subject} ({description})"
        ));
    }
    description
        .split(':')
        .next()
        .map(str::to_owned)
        .ok_or_else(|| format!("{subject}: {description}"))
}

/// The gRPC flood: `tasks` loops of calls as [`HOSTILE`] on one thread at the lowest priority
/// (creations, reads of the player's games, listings, moves, and moves on a SubmitMoves stream
/// each loop opens and keeps, as many as its `move_streams` lets open), each sent when the last
/// is answered, while `switch` is on; what they met is added to `flooded`.
pub fn grpc_flood(
    port: u16,
    tasks: usize,
    player_game: String,
    switch: Arc<Switch>,
    flooded: Arc<Mutex<Flooded>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        lowest_priority();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let caller = Caller::new(port, HOSTILE);
            let game = crate::games::corpus(200, 1).remove(0);
            let mut loops = Vec::new();
            for t in 0..tasks {
                let (caller, game, switch, flooded) = (
                    caller.clone(),
                    game.clone(),
                    switch.clone(),
                    flooded.clone(),
                );
                let player_game = player_game.clone();
                loops.push(tokio::spawn(async move {
                    let mut n = 0u64;
                    // The loop's SubmitMoves stream, once the quota let it open one.
                    let mut stream: Option<MoveStream> = None;
                    loop {
                        if switch.over() {
                            return;
                        }
                        let on = switch.state.lock().unwrap().0;
                        if !on {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                            continue;
                        }
                        n += 1;
                        let id = format!("hostile-{t}-{n}");
                        // Its own game of three calls before (if it was let create it).
                        let own = format!("hostile-{t}-{}", n.saturating_sub(3));
                        let answer = match n % 5 {
                            0 => caller.create(&id, &game).await,
                            1 => caller.get(&player_game).await,
                            2 => caller.list().await,
                            3 => caller.submit(&own, 1, &game.moves[0]).await,
                            // A move on its stream (of a game it never created),
                            // or a stream opened and kept, as far as `move_streams` allows.
                            _ => match stream.as_mut() {
                                Some(open) => open.submit(&own, 1, &game.moves[0]).await,
                                None => caller.stream().await.map(|open| {
                                    stream = Some(open);
                                    flooded.lock().unwrap().streams_opened += 1;
                                }),
                            },
                        };
                        let mut f = flooded.lock().unwrap();
                        match answer {
                            Ok(()) => f.calls_answered += 1,
                            Err(s) => match quota_limit(&s) {
                                Ok(limit) => *f.calls_refused.entry(limit).or_default() += 1,
                                // A move into a game never created, or taken already:
                                // an answer, not a refusal of the credential.
                                Err(_)
                                    if matches!(
                                        s.code(),
                                        tonic::Code::NotFound
                                            | tonic::Code::FailedPrecondition
                                            | tonic::Code::AlreadyExists
                                    ) =>
                                {
                                    f.calls_answered += 1
                                }
                                Err(e) if f.calls_failed.len() < 5 => f.calls_failed.push(e),
                                Err(_) => {}
                            },
                        }
                    }
                }));
            }
            for l in loops {
                l.await.expect("a flooding task");
            }
        });
    })
}

/// The NATS flood as `listener`: every connection its account lets in (of `attempts`), each
/// with subscriptions to `shogi.verdict.*` past its limit (`subscriptions`), then, while
/// `switch` is on, rounds of a subscription dropped and made again, a request on the
/// JetStream API (refused: it may publish nothing) and a `PING`; one thread a connection, at
/// the lowest priority. The threads, and the connections' writers to close at the end.
pub fn listener_flood(
    port: u16,
    attempts: usize,
    subscriptions: usize,
    switch: Arc<Switch>,
    flooded: Arc<Mutex<Flooded>>,
) -> Vec<(TcpStream, std::thread::JoinHandle<()>)> {
    let mut threads = Vec::new();
    for _ in 0..attempts {
        let mut wire = match Wire::connect(port, "listener", Duration::from_secs(30)) {
            Ok(w) => w,
            Err(e) => {
                let mut f = flooded.lock().unwrap();
                f.connections.1 += 1;
                if !e.contains("maximum account active connections") && f.nats_other.len() < 5 {
                    f.nats_other.push(e);
                }
                continue;
            }
        };
        flooded.lock().unwrap().connections.0 += 1;
        let mut subs = String::new();
        for sid in 1..=subscriptions + 16 {
            subs.push_str(&format!("SUB shogi.verdict.* {sid}\r\n"));
        }
        wire.send(subs.as_bytes()).expect("SUB");
        let errors = wire.errors_until_pong().expect("the subscriptions' PONG");
        {
            let mut f = flooded.lock().unwrap();
            for e in errors {
                if e.contains("maximum subscriptions exceeded") {
                    f.subscriptions_refused += 1;
                } else if f.nats_other.len() < 5 {
                    f.nats_other.push(e);
                }
            }
        }
        let closer = wire.writer.try_clone().unwrap();
        let (switch, flooded) = (switch.clone(), flooded.clone());
        threads.push((
            closer,
            std::thread::spawn(move || listener_rounds(wire, &switch, &flooded)),
        ));
    }
    threads
}

/// One flooding `listener` connection's rounds (see [`listener_flood`]).
fn listener_rounds(mut wire: Wire, switch: &Switch, flooded: &Mutex<Flooded>) {
    lowest_priority();
    let get = r#"{"last_by_subj":"shogi.game.x.created"}"#;
    let round = format!(
        "UNSUB 1\r\nSUB shogi.verdict.* 1\r\nPUB JS.ARBITER.API.STREAM.MSG.GET.SHOGI_GAMES \
         _INBOX.listener.x {}\r\n{get}\r\n",
        get.len()
    );
    loop {
        if switch.wait_on() {
            return;
        }
        if wire.send(round.as_bytes()).is_err() {
            return;
        }
        let Ok(errors) = wire.errors_until_pong() else {
            return;
        };
        let mut f = flooded.lock().unwrap();
        f.nats_rounds += 1;
        for e in errors {
            if e.contains("Permissions Violation for Publish") {
                f.publishes_refused += 1;
            } else if f.nats_other.len() < 5 {
                f.nats_other.push(e);
            }
        }
    }
}
