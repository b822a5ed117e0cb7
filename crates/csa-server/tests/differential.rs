//! Differential transcripts: the same scripted CSA sessions against shogi-server itself (the
//! copy in `../shared/third_party/shogi-server`, run by Ruby on a port the system picks) and
//! against the front end over TCP in front of the whole arbiter (the stack on its embedded bus).
//! Every line each client receives, from `LOGIN` to the connection's close, must be the same,
//! byte for byte, once the game id's date is set aside, and, outside the timed sessions, the
//! `T<n>` of moves sent with no think time (there it is each server's latency, not the
//! session's); where the front end differs on purpose (docs/csa.md, "Where the front end
//! differs"), the session states the difference and the test checks it.
//!
//! Sessions: time-ups on each side of each boundary (main time, byoyomi, Fischer, a clock run
//! down by an earlier move; shogi-server truncates a turn to whole seconds and a side is out when
//! charged `>= remaining + byoyomi + increment`), a late `%TORYO` and a late `%KACHI`, `%CHUDAN`,
//! disconnects on and off turn, a move sent out of turn, keep-alives, and each ending:
//! resignation, an impossible move, a move of the other side's sign, uchifuzume, sennichite,
//! oute-sennichite, a good and a wrong `%KACHI`, the move cap, and a checkmate (both ways of
//! `--csa-checkmate`).
//!
//! The think times below are the sessions' input, not waits for readiness: a side thinks a set
//! time after the line that started its turn reached it. They keep at least 400 ms from every
//! boundary, so that a busy machine's latency neither truncates a turn into the next second nor
//! moves a move across a deadline.
//!
//! shogi-server needs Debian's `ruby` (tools/setup.sh installs it); without it the test fails
//! saying so.

use arbiter_bus::{Bus, MemoryBus};
use csa_server::CheckmateLines;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use test_support::{Deadline, ShogiServer, wait_for};

/// How long an answer may take.
const ANSWER_WAIT: Deadline = Deadline::secs(15);
/// A think time well inside a one-second boundary's second before it.
const BEFORE: Duration = Duration::from_millis(1600);
/// A think time well past a two-second boundary.
const AFTER: Duration = Duration::from_millis(2400);
/// A think time far past a two-second boundary: the front end's flag, which a loaded machine
/// may delay by some hundreds of milliseconds, has surely fallen before it.
const LONG_AFTER: Duration = Duration::from_millis(3400);

// ---------------------------------------------------------------------------------------------
// The servers.

/// The arbiter on its embedded bus with front ends on it, in a runtime of their own; stopped
/// on drop.
struct Fronts {
    ports: Vec<u16>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Fronts {
    /// One front end per `(max_moves, checkmate)`, event `test` as shogi-server's.
    fn start(configs: &[(u32, CheckmateLines)]) -> Fronts {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let configs = configs.to_vec();
        let (ports, stop) = runtime.block_on(async move {
            let bus: Bus = Arc::new(MemoryBus::default());
            let grpc = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind gRPC");
            let stack =
                arbiter_stack::Stack::start(grpc, bus, arbiter_stack::StackConfig::default())
                    .await
                    .expect("start the arbiter");
            let url = format!("http://{}", stack.addr());
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let stopped = stop_signal(stopped);
            let mut ports = Vec::new();
            for (max_moves, checkmate) in configs {
                let csa = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind CSA");
                ports.push(csa.local_addr().expect("an address").port());
                let mut config = csa_server::Config::new(&url);
                config.max_moves = max_moves;
                config.checkmate = checkmate;
                config.event = "test".to_owned();
                let mut stopped = stopped.clone();
                tokio::spawn(async move {
                    csa_server::run(csa, config, async move {
                        let _ = stopped.changed().await;
                    })
                    .await
                    .expect("the front end");
                });
            }
            tokio::spawn(async move {
                let mut s = stopped;
                let _ = s.changed().await;
                stack.shutdown().await;
            });
            (ports, stop)
        });
        Fronts {
            ports,
            stop: Some(stop),
            runtime: Some(runtime),
        }
    }
}

/// A stop signal every front end can wait for.
fn stop_signal(stopped: tokio::sync::oneshot::Receiver<()>) -> tokio::sync::watch::Receiver<()> {
    let (tx, rx) = tokio::sync::watch::channel(());
    tokio::spawn(async move {
        let _ = stopped.await;
        let _ = tx.send(());
    });
    rx
}

impl Drop for Fronts {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The clients.

/// A line received, and when.
#[derive(Debug, Clone)]
struct Received {
    text: String,
    at: Instant,
}

/// One TCP client: a thread reads every line with its time of arrival; what was read is the
/// transcript. A line that does not come within [`ANSWER_WAIT`] ends the transcript with a note
/// and every later read returns at once, so that a session that diverges still finishes.
struct Client {
    who: String,
    writer: TcpStream,
    lines: mpsc::Receiver<Option<Received>>,
    transcript: Vec<Received>,
    /// When the last line came (the start of a turn, for [`Client::think`]).
    last_at: Instant,
    /// When each line was sent.
    sent: Vec<(String, Instant)>,
    done: bool,
}

impl Client {
    fn connect(port: u16, who: &str) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let reader = stream.try_clone().expect("clone the stream");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        let r = Received {
                            text: line,
                            at: Instant::now(),
                        };
                        if tx.send(Some(r)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Client {
            who: who.to_owned(),
            writer: stream,
            lines: rx,
            transcript: Vec::new(),
            last_at: Instant::now(),
            sent: Vec::new(),
            done: false,
        }
    }

    /// Sends `line` and `\n`; a server that closed the connection is no error (the session
    /// goes on to read what it sent before).
    fn send(&mut self, line: &str) {
        // Stamped before the write: an answer may be read before the write call returns.
        self.sent.push((line.to_owned(), Instant::now()));
        let _ = self.writer.write_all(format!("{line}\n").as_bytes());
    }

    /// The next line, kept in the transcript; `None` once the connection is closed or a line
    /// failed to come.
    fn line(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        match self.lines.recv_timeout(ANSWER_WAIT.get()) {
            Ok(Some(r)) => {
                self.last_at = r.at;
                let text = r.text.clone();
                self.transcript.push(r);
                Some(text)
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                self.done = true;
                self.transcript.push(Received {
                    text: "<closed>\n".to_owned(),
                    at: Instant::now(),
                });
                None
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.done = true;
                self.transcript.push(Received {
                    text: format!("<no line within {ANSWER_WAIT:?}>\n"),
                    at: Instant::now(),
                });
                None
            }
        }
    }

    /// The lines up to the first one `last` accepts, that one included.
    fn until(&mut self, last: impl Fn(&str) -> bool) {
        while let Some(l) = self.line() {
            if last(l.trim_end_matches('\n')) {
                return;
            }
        }
    }

    /// The lines up to the player's outcome.
    fn until_outcome(&mut self) {
        self.until(|l| matches!(l, "#WIN" | "#LOSE" | "#DRAW" | "#CENSORED"));
    }

    /// Thinks `time` from the arrival of the last line, the start of its turn.
    fn think(&self, time: Duration) {
        let until = self.last_at + time;
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    }

    /// Asks `%%WHO` until `name` is no longer listed: the server has seen a disconnect. The
    /// answers are a probe of the test, not part of the session: they are left out of the
    /// transcript (other sessions' players are listed in them).
    fn wait_gone(&mut self, name: &str) {
        let kept = self.transcript.len();
        wait_for(ANSWER_WAIT, &format!("{name} gone from %%WHO"), || {
            self.send("%%WHO");
            let mut listed = false;
            loop {
                let line = self.line()?;
                if line == "##[WHO] +OK\n" {
                    break;
                }
                listed |= line.starts_with(&format!("##[WHO] {name}+"));
            }
            (!listed).then_some(())
        });
        self.transcript.truncate(kept);
    }

    /// Takes the lines that have arrived, without waiting.
    fn arrived(&mut self) {
        while !self.done {
            match self.lines.try_recv() {
                Ok(Some(r)) => {
                    self.last_at = r.at;
                    self.transcript.push(r);
                }
                Ok(None) | Err(mpsc::TryRecvError::Disconnected) => {
                    self.done = true;
                    self.transcript.push(Received {
                        text: "<closed>\n".to_owned(),
                        at: Instant::now(),
                    });
                }
                Err(mpsc::TryRecvError::Empty) => return,
            }
        }
    }

    /// `LOGOUT`, then everything up to the close.
    fn logout(&mut self) {
        self.send("LOGOUT");
        while self.line().is_some() {}
    }

    /// Closes the connection at once.
    fn disconnect(&mut self) {
        let _ = self.writer.shutdown(Shutdown::Both);
        self.sent.push(("<disconnect>".to_owned(), Instant::now()));
    }

    /// When the first line `pred` accepts arrived.
    fn arrival(&self, pred: impl Fn(&str) -> bool) -> Option<Instant> {
        self.transcript
            .iter()
            .find(|r| pred(r.text.trim_end_matches('\n')))
            .map(|r| r.at)
    }

    /// When `line` was last sent.
    fn sent_at(&self, line: &str) -> Option<Instant> {
        self.sent
            .iter()
            .rev()
            .find(|(l, _)| l == line)
            .map(|(_, at)| *at)
    }
}

// ---------------------------------------------------------------------------------------------
// The sessions.

/// Two x1 players on one server, paired on a game of their own.
struct Table {
    b: Client,
    w: Client,
    game: String,
}

impl Table {
    /// Logs both in, pairs them on `game` (Black `+`) and starts it.
    fn start(port: u16, name: &str, time: &str) -> Table {
        let game = format!("{name}-{time}");
        let mut b = Client::connect(port, &format!("{name}_b"));
        let mut w = Client::connect(port, &format!("{name}_w"));
        for c in [&mut b, &mut w] {
            let who = c.who.clone();
            c.send(&format!("LOGIN {who} pw x1"));
            c.until(|l| l == "##[LOGIN] +OK x1");
        }
        b.send(&format!("%%GAME {game} +"));
        w.send(&format!("%%GAME {game} -"));
        b.until(|l| l == "END Game_Summary");
        w.until(|l| l == "END Game_Summary");
        b.send("AGREE");
        w.send("AGREE");
        b.until(|l| l.starts_with("START:"));
        w.until(|l| l.starts_with("START:"));
        Table { b, w, game }
    }

    fn side(&mut self, black: bool) -> &mut Client {
        if black { &mut self.b } else { &mut self.w }
    }

    /// The mover (`+` or `-` from the line) plays `line`; both read its echo.
    fn play(&mut self, line: &str) {
        self.side(line.starts_with('+')).send(line);
        self.b.line();
        self.w.line();
    }

    /// Plays `moves`, all but the last echoed; the last ends the game.
    fn play_to_end(&mut self, moves: &[String]) {
        let (last, rest) = moves.split_last().expect("moves");
        for m in rest {
            self.play(m);
        }
        self.side(last.starts_with('+')).send(last);
        self.outcomes();
    }

    /// Both read up to their outcome.
    fn outcomes(&mut self) {
        self.b.until_outcome();
        self.w.until_outcome();
    }

    /// Both log out.
    fn logout(&mut self) {
        self.b.logout();
        self.w.logout();
    }
}

/// The moves of a CSA file of shogi-server's tests (`test/csa/<name>`), as its
/// `ReadFileClient` reads them.
fn csa_moves(name: &str) -> Vec<String> {
    let path = test_support::shared(&format!("third_party/shogi-server/test/csa/{name}"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| {
            let b = l.as_bytes();
            b.len() >= 7
                && matches!(b[0], b'+' | b'-')
                && b[1..5].iter().all(u8::is_ascii_digit)
                && b[5..7].iter().all(u8::is_ascii_alphanumeric)
        })
        .map(|l| l[..7].to_owned())
        .collect()
}

/// A checkmate from the start (checked with shogi-server's board): White's king walks to 4b
/// and its pieces box it in; Black's horse takes on 3c, guarded by the bishop from 6f.
const MATE: [&str; 9] = [
    "+7776FU", "-3334FU", "+8822UM", "-5142OU", "+0066KA", "-6152KI", "+9796FU", "-2133KE",
    "+2233UM",
];

/// Where the front end differs from shogi-server in a session, on purpose.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Differs {
    /// Nowhere: the same lines, and nothing about their timing is asserted.
    Not,
    /// The same lines; shogi-server's time-up comes after the late side's late line (`line`),
    /// which it judges late. The front end flags the side at its deadline, by itself, and
    /// whether that is before the line depends on the machine's load; not asserted.
    LateLineEnds { black: bool, line: &'static str },
    /// The front end flags the side at its deadline (docs/csa.md: "A silent player is flagged
    /// at its deadline"): its `#TIME_UP` reaches the late side before the side's late line
    /// (`line`) is sent; shogi-server finds the time-up only when that line comes. Same lines.
    FlaggedAtDeadline { black: bool, line: &'static str },
    /// The front end ends the game at the mating move ("Checkmate ends the game"): the mated
    /// side's `%TORYO` lines reach it before it sends `%TORYO`, which is dropped; shogi-server
    /// waits for it. Same lines.
    EndsAtMate,
    /// shogi-server's lines and timing (`--csa-checkmate shogi-server`): the game ends only
    /// when the mated side resigns, as with shogi-server.
    WaitsForToryo,
}

/// Which server of each kind a session runs on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum On {
    /// `--max-moves 256`, the default.
    Capped,
    /// `--max-moves 0` (the jishogi record is longer than 256 moves).
    Uncapped,
    /// The front end with `--csa-checkmate shogi-server` (against shogi-server with 256).
    ShogiServerMate,
}

struct Case {
    name: &'static str,
    /// Moves answered at once, with no think time: the `T<n>` of their echoes is each server's
    /// own latency, not the session's (on a loaded machine the front end's round trip through
    /// the arbiter passes a second now and then), so the times are compared as `T*`. The timed
    /// sessions compare every `T<n>`.
    instant: bool,
    on: On,
    differs: Differs,
    run: fn(u16, &'static str) -> Table,
}

/// Black thinks `think`, then plays `+7776FU`; White answers; Black resigns.
fn first_move_then_resign(port: u16, name: &str, time: &str, think: Duration) -> Table {
    let mut t = Table::start(port, name, time);
    t.b.think(think);
    t.play("+7776FU");
    t.play("-3334FU");
    t.b.send("%TORYO");
    t.outcomes();
    t
}

/// Black thinks `think` (past its deadline), then sends `line`: `#TIME_UP`.
fn late(port: u16, name: &str, time: &str, line: &str, think: Duration) -> Table {
    let mut t = Table::start(port, name, time);
    t.b.think(think);
    t.b.send(line);
    t.outcomes();
    t
}

fn timed_cases() -> Vec<Case> {
    let late_black = |line| Differs::LateLineEnds { black: true, line };
    let flagged_black = |line| Differs::FlaggedAtDeadline { black: true, line };
    vec![
        // 2 s main time: out at 2 s.
        Case {
            instant: false,
            name: "main_in",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| first_move_then_resign(p, n, "2-0", BEFORE),
        },
        Case {
            instant: false,
            name: "main_out",
            on: On::Capped,
            differs: late_black("+7776FU"),
            run: |p, n| late(p, n, "2-0", "+7776FU", AFTER),
        },
        // 1 s and a byoyomi of 1 s: out at 2 s.
        Case {
            instant: false,
            name: "byoyomi_in",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| first_move_then_resign(p, n, "1-1", BEFORE),
        },
        Case {
            instant: false,
            name: "byoyomi_out",
            on: On::Capped,
            differs: late_black("+7776FU"),
            run: |p, n| late(p, n, "1-1", "+7776FU", AFTER),
        },
        // 1 s and 1 s a move (Fischer): out at 2 s, and after a move of 1 s, 1 s left again.
        Case {
            instant: false,
            name: "fischer_in",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "1-1F");
                t.b.think(BEFORE);
                t.play("+7776FU");
                t.play("-3334FU");
                t.b.think(BEFORE);
                t.play("+2726FU");
                t.w.send("%TORYO");
                t.outcomes();
                t
            },
        },
        Case {
            instant: false,
            name: "fischer_out",
            on: On::Capped,
            differs: late_black("+7776FU"),
            run: |p, n| late(p, n, "1-1F", "+7776FU", AFTER),
        },
        // 3 s main time; a first move of 1 s (truncated from 1.4) leaves 2 s: out at 2 s.
        Case {
            instant: false,
            name: "run_down_out",
            on: On::Capped,
            differs: late_black("+2726FU"),
            run: |p, n| {
                let mut t = Table::start(p, n, "3-0");
                t.b.think(Duration::from_millis(1400));
                t.play("+7776FU");
                t.play("-3334FU");
                t.b.think(AFTER);
                t.b.send("+2726FU");
                t.outcomes();
                t
            },
        },
        Case {
            instant: false,
            name: "run_down_in",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "3-0");
                t.b.think(Duration::from_millis(1400));
                t.play("+7776FU");
                t.play("-3334FU");
                t.b.think(BEFORE);
                t.play("+2726FU");
                t.w.send("%TORYO");
                t.outcomes();
                t
            },
        },
        // A resignation or a declaration after the deadline is a time-up.
        Case {
            instant: false,
            name: "late_toryo",
            on: On::Capped,
            differs: flagged_black("%TORYO"),
            run: |p, n| late(p, n, "1-1", "%TORYO", LONG_AFTER),
        },
        Case {
            instant: false,
            name: "late_kachi",
            on: On::Capped,
            differs: flagged_black("%KACHI"),
            run: |p, n| late(p, n, "1-1", "%KACHI", LONG_AFTER),
        },
    ]
}

fn endings() -> Vec<Case> {
    vec![
        Case {
            instant: true,
            name: "resign",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.play("+7776FU");
                t.w.send("%TORYO");
                t.outcomes();
                t
            },
        },
        Case {
            instant: true,
            name: "chudan",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.play("+7776FU");
                t.w.send("%CHUDAN");
                t.outcomes();
                t
            },
        },
        Case {
            instant: true,
            name: "impossible",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.b.send("+7775FU");
                t.outcomes();
                t
            },
        },
        Case {
            instant: true,
            name: "wrong_sign",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.b.send("-3334FU");
                t.outcomes();
                t
            },
        },
    ]
}

/// Games played through to an ending of the rules: records of shogi-server's tests, and the
/// rooks shuffled to a sennichite.
fn replays() -> Vec<Case> {
    vec![
        Case {
            instant: true,
            name: "uchifuzume",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                let mut moves = csa_moves("uchifuzume.csa");
                moves.push("-0064FU".to_owned());
                t.play_to_end(&moves);
                t
            },
        },
        Case {
            instant: true,
            name: "sennichite",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                let shuffle = ["+2838HI", "-8272HI", "+3828HI", "-7282HI"];
                let mut moves: Vec<String> = (0..12).map(|i| shuffle[i % 4].to_owned()).collect();
                moves.push(shuffle[0].to_owned());
                t.play_to_end(&moves);
                t
            },
        },
        Case {
            instant: true,
            name: "oute_sennichite",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.play_to_end(&csa_moves("oute_sennichite.csa"));
                t
            },
        },
        Case {
            instant: true,
            name: "kachi",
            on: On::Uncapped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "3600-10");
                for m in csa_moves("jishogi_kachi.csa") {
                    t.play(&m);
                }
                t.w.send("%KACHI");
                t.outcomes();
                t
            },
        },
        Case {
            instant: true,
            name: "wrong_kachi",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.b.send("%KACHI");
                t.outcomes();
                t
            },
        },
        Case {
            instant: true,
            name: "max_moves",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "3600-10");
                t.play_to_end(&csa_moves("max_moves_draw.csa"));
                t
            },
        },
    ]
}

/// A checkmate, with both `--csa-checkmate` values.
fn mates() -> Vec<Case> {
    vec![
        Case {
            instant: true,
            name: "mate",
            on: On::Capped,
            differs: Differs::EndsAtMate,
            run: mate_then_toryo,
        },
        Case {
            instant: true,
            name: "mate_ss",
            on: On::ShogiServerMate,
            differs: Differs::WaitsForToryo,
            run: mate_then_toryo,
        },
        Case {
            instant: true,
            name: "mate_ss_moved",
            on: On::ShogiServerMate,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                for m in MATE {
                    t.play(m);
                }
                // Any move of the mated side leaves its king in check.
                t.w.send("-4233OU");
                t.outcomes();
                t
            },
        },
    ]
}

/// The mating move, then the mated side's `%TORYO` a moment later.
fn mate_then_toryo(port: u16, name: &str) -> Table {
    let mut t = Table::start(port, name, "600-10");
    for m in MATE {
        t.play(m);
    }
    // The front end in its own way has ended the game by now; shogi-server waits.
    t.w.think(Duration::from_millis(300));
    t.w.arrived();
    if t.w
        .transcript
        .last()
        .is_some_and(|r| r.text.starts_with("+2233UM"))
    {
        t.w.send("%TORYO");
    }
    if t.w.arrival(|l| l == "#LOSE").is_none() {
        t.w.until_outcome();
    }
    t.b.until_outcome();
    t
}

fn protocol_cases() -> Vec<Case> {
    vec![
        Case {
            instant: true,
            name: "disconnect_on_turn",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.b.disconnect();
                t.w.until_outcome();
                t
            },
        },
        Case {
            instant: true,
            name: "disconnect_off_turn",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                t.play("+7776FU");
                t.b.disconnect();
                t.w.wait_gone(&format!("{n}_b"));
                t.w.send("-3334FU");
                t.w.until_outcome();
                t
            },
        },
        Case {
            instant: true,
            name: "out_of_turn",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                // White's move before Black's: held, and played once Black's is echoed. The
                // single space after that echo is a line shogi-server reads at once, so that
                // it plays the held move then rather than at its next second's poll.
                t.w.send("-3334FU");
                t.play("+7776FU");
                t.w.send(" ");
                t.b.line();
                t.w.line();
                t.b.send("%TORYO");
                t.outcomes();
                t
            },
        },
        Case {
            instant: true,
            name: "keep_alive",
            on: On::Capped,
            differs: Differs::Not,
            run: |p, n| {
                let mut t = Table::start(p, n, "600-10");
                // An empty line is answered with one, a single space is not; from either side.
                t.b.send("");
                t.b.line();
                t.b.send(" ");
                t.w.send("");
                t.w.line();
                t.w.send(" ");
                t.play("+7776FU");
                t.w.send("%TORYO");
                t.outcomes();
                t
            },
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// The comparison.

/// What one session produced on one server: each side's lines, and the table for timings.
struct Transcript {
    table: Table,
}

impl Transcript {
    /// The lines of `c`, the game id's date set aside, and the echoes' times with `instant`.
    fn lines(c: &Client, game: &str, instant: bool) -> String {
        let b = format!("test+{game}+{}_b+{}_w+", &game_base(game), &game_base(game));
        c.transcript
            .iter()
            .map(|r| {
                let line = normalise_id(&r.text, &b);
                match line.split_once(",T") {
                    Some((mv, t))
                        if instant && t.trim_end().bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        format!("{mv},T*\n")
                    }
                    _ => line,
                }
            })
            .collect()
    }
}

/// The session name of a game name (`main_in-2-0` -> `main_in`).
fn game_base(game: &str) -> &str {
    game.split('-').next().unwrap_or(game)
}

/// `line` with every game id `<prefix><YYYYMMDDHHMMSS>` written `<prefix><date>`.
fn normalise_id(line: &str, prefix: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..i + prefix.len()]);
        if digits == 14 {
            out.push_str("<date>");
            rest = &after[14..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Runs `cases` at once, each on both servers; the differences found.
fn run_all(cases: Vec<Case>, port: impl Fn(On, bool) -> u16) -> Vec<String> {
    let mut runs = Vec::new();
    for case in cases {
        let theirs = port(case.on, false);
        let ours = port(case.on, true);
        let run = case.run;
        let name = case.name;
        let session = move |port| {
            let mut table = run(port, name);
            table.logout();
            table
        };
        let a = std::thread::spawn(move || session(theirs));
        let b = std::thread::spawn(move || session(ours));
        runs.push((case, a, b));
    }
    let mut failures = Vec::new();
    for (case, a, b) in runs {
        let theirs = Transcript {
            table: a.join().expect("the session against shogi-server"),
        };
        let ours = Transcript {
            table: b.join().expect("the session against the front end"),
        };
        if let Err(e) = compare(&case, &theirs, &ours) {
            failures.push(format!("{}: {e}", case.name));
        }
    }
    failures
}

fn compare(case: &Case, theirs: &Transcript, ours: &Transcript) -> Result<(), String> {
    let game = &theirs.table.game;
    for (side, t, o) in [
        ("black", &theirs.table.b, &ours.table.b),
        ("white", &theirs.table.w, &ours.table.w),
    ] {
        let (t, o) = (
            Transcript::lines(t, game, case.instant),
            Transcript::lines(o, game, case.instant),
        );
        if t != o {
            return Err(format!(
                "{side}'s lines differ\n--- shogi-server\n{t}--- front end\n{o}"
            ));
        }
        if t.contains("<no line within") || !t.contains("<date>") {
            return Err(format!("{side}'s session did not run through:\n{t}"));
        }
    }
    let ended = |c: &Client| c.arrival(|l| matches!(l, "#WIN" | "#LOSE" | "#DRAW" | "#CENSORED"));
    match case.differs {
        Differs::Not => Ok(()),
        Differs::FlaggedAtDeadline { black, line } | Differs::LateLineEnds { black, line } => {
            let flagged = matches!(case.differs, Differs::FlaggedAtDeadline { .. });
            // How long after the late line was sent the outcome came (negative: before).
            let after = |tr: &Transcript| {
                let c = if black { &tr.table.b } else { &tr.table.w };
                let end = ended(c).ok_or("no outcome")?;
                let sent = c.sent_at(line).ok_or(format!("{line} not sent"))?;
                Ok::<i128, String>(if end >= sent {
                    (end - sent).as_millis() as i128
                } else {
                    -((sent - end).as_millis() as i128)
                })
            };
            match (after(theirs)?, after(ours)?) {
                (t, _) if t >= 0 && !flagged => Ok(()),
                (t, o) if t >= 0 && o < 0 => Ok(()),
                (t, o) => Err(format!(
                    "the outcome came {t} ms after the late {line} from shogi-server (expected \
                     after it), {o} ms after it from the front end (expected before it: flagged \
                     at the deadline)"
                )),
            }
        }
        Differs::EndsAtMate | Differs::WaitsForToryo => {
            let toryo_sent = |tr: &Transcript| tr.table.w.sent_at("%TORYO");
            if toryo_sent(theirs).is_none() {
                return Err("shogi-server ended the game before the mated side's %TORYO".into());
            }
            let at_once = toryo_sent(ours).is_none();
            let expected = case.differs == Differs::EndsAtMate;
            if at_once == expected {
                Ok(())
            } else {
                Err(format!(
                    "the front end ended the game at the mating move: {at_once} (expected \
                     {expected})"
                ))
            }
        }
    }
}

#[test]
fn sessions_give_shogi_servers_lines() {
    let capped = ShogiServer::start(256);
    let uncapped = ShogiServer::start(0);
    let fronts = Fronts::start(&[
        (256, CheckmateLines::Arbiter),
        (0, CheckmateLines::Arbiter),
        (256, CheckmateLines::ShogiServer),
    ]);
    let port = |on: On, ours: bool| match (on, ours) {
        (On::Capped | On::ShogiServerMate, false) => capped.port(),
        (On::Uncapped, false) => uncapped.port(),
        (On::Capped, true) => fronts.ports[0],
        (On::Uncapped, true) => fronts.ports[1],
        (On::ShogiServerMate, true) => fronts.ports[2],
    };
    let started = Instant::now();
    // DIFFERENTIAL_ONLY=<name>,<name>: those sessions alone, when looking into one.
    let only = std::env::var("DIFFERENTIAL_ONLY").ok();
    let chosen = |cases: Vec<Case>| -> Vec<Case> {
        match &only {
            Some(names) => cases
                .into_iter()
                .filter(|c| names.split(',').any(|n| n == c.name))
                .collect(),
            None => cases,
        }
    };
    // The timed sessions first, on their own, then the rest.
    let mut failures = run_all(chosen(timed_cases()), port);
    let timed = started.elapsed();
    let mut rest = endings();
    rest.extend(replays());
    rest.extend(mates());
    rest.extend(protocol_cases());
    failures.extend(run_all(chosen(rest), port));
    eprintln!(
        "differential sessions: timed {timed:?}, all {:?}",
        started.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
