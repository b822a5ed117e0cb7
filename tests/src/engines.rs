//! Real USI engines playing through the CSA front end, as an engine author runs them: `shogi-arbiter
//! serve --csa-listen` on loopback, and for each side shogi-server's USI-to-CSA bridge
//! (`bin/usiToCsa.rb` of the copy in `../shared/third_party`) driving Debian's `fairy-stockfish` or
//! `gpsusi`. Each game's ending is read from the end lines the bridges received, and every record
//! the front end wrote is judged again by `shogi-arbiter judge`, which must find the same ending.
//!
//! Shared by the test `engines` (a few short games) and the example `engine_match` (a longer
//! run by hand).
//!
//! The bridge plays one game and exits when it reads `#WIN`, `#LOSE` or `#DRAW`; after
//! `#CENSORED` (the move cap) it waits on, so each bridge runs in a process group of its own
//! (with its engine), killed when its game has ended.

use crate::bin;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The shortest byoyomi a game through the bridge can have: the bridge asks its engine for the
/// byoyomi less a fixed 2.5 s (its `--margin-msec` fails at the game's start), 0.5 s a move here.
pub const MIN_BYOYOMI_SECS: u32 = 3;

/// What running engines needs from the machine: Ruby and the bridge.
#[derive(Debug, Clone)]
pub struct Bridge {
    ruby: PathBuf,
    script: PathBuf,
}

impl Bridge {
    /// Ruby (on `PATH`) and the bridge of `../shared/third_party/shogi-server`; what is missing,
    /// named, otherwise.
    pub fn find() -> Result<Bridge, String> {
        let ruby = program("ruby").ok_or("ruby is missing (apt-get install ruby)")?;
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/third_party/shogi-server/bin/usiToCsa.rb");
        if !script.is_file() {
            return Err(format!(
                "the USI-to-CSA bridge {} is missing (../shared/third_party beside the checkout)",
                script.display()
            ));
        }
        Ok(Bridge { ruby, script })
    }
}

/// A USI engine with the options the bridge sets on it.
#[derive(Debug, Clone)]
pub struct Engine {
    /// Its short name, the start of its login names.
    pub name: String,
    program: PathBuf,
    options: Vec<(String, String)>,
}

impl Engine {
    /// Debian's `fairy-stockfish` (package fairy-stockfish), one thread.
    pub fn fairy_stockfish() -> Result<Engine, String> {
        Engine::find("fairy", "fairy-stockfish", "fairy-stockfish").map(|e| e.with("Threads", "1"))
    }

    /// Debian's `gpsusi` (package gpsshogi), one thread.
    pub fn gpsusi() -> Result<Engine, String> {
        Engine::find("gps", "gpsusi", "gpsshogi").map(|e| e.with("Thread", "1"))
    }

    fn find(name: &str, program_name: &str, package: &str) -> Result<Engine, String> {
        let program = program(program_name).ok_or_else(|| {
            format!(
                "the USI engine {program_name} is missing \
                 (apt-get install --no-install-recommends {package}, or make setup)"
            )
        })?;
        Ok(Engine {
            name: name.to_owned(),
            program,
            options: Vec::new(),
        })
    }

    /// The same engine with the USI option `key` set to `value` (`setoption name key value
    /// value`), which the bridge sends before the game.
    #[must_use]
    pub fn with(mut self, key: &str, value: &str) -> Engine {
        self.options.retain(|(k, _)| k != key);
        self.options.push((key.to_owned(), value.to_owned()));
        self
    }
}

/// `name` on `PATH`, or in Debian's `/usr/games` (not on root's `PATH`).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/games")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `shogi-arbiter serve` with the CSA front end on loopback, writing its records to a folder.
#[derive(Debug)]
pub struct Front {
    child: Child,
    /// The CSA port.
    pub port: u16,
    /// `--csa-record-dir`.
    pub records: PathBuf,
}

impl Front {
    /// Starts it with `--csa-max-moves max_moves` and `extra` flags, its records under
    /// `records`.
    ///
    /// # Panics
    ///
    /// When it does not print its addresses within `deadline`.
    pub fn start(records: &Path, max_moves: u32, extra: &[&str], deadline: Duration) -> Front {
        let mut child = Command::new(bin("shogi-arbiter"))
            .args(["serve", "--listen", "127.0.0.1:0", "--grace-secs", "2"])
            .args(["--csa-listen", "127.0.0.1:0", "--no-console"])
            .arg("--csa-record-dir")
            .arg(records)
            .args(["--csa-max-moves", &max_moves.to_string()])
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start shogi-arbiter serve");
        let (tx, rx) = mpsc::channel();
        forward(child.stdout.take().expect("piped"), "", tx);
        // The gRPC address, then `csa <address>`.
        let _grpc = rx.recv_timeout(deadline).expect("the gRPC address");
        let csa = rx.recv_timeout(deadline).expect("the CSA address");
        // Its output read on, so that a line it writes later never blocks it.
        std::thread::spawn(move || rx.into_iter().for_each(drop));
        let port = csa
            .strip_prefix("csa ")
            .and_then(|a| a.rsplit(':').next())
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("not `csa <address>`: {csa:?}"));
        Front {
            child,
            port,
            records: records.to_owned(),
        }
    }

    /// SIGTERM, and whether it drained and exited cleanly within `deadline`.
    pub fn stop(mut self, deadline: Duration) -> bool {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let until = Instant::now() + deadline;
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every line of `out`, after `prefix`, sent to `tx` from a thread of its own, so that the
/// reader waits with a deadline.
fn forward(
    out: impl std::io::Read + Send + 'static,
    prefix: &'static str,
    tx: mpsc::Sender<String>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(format!("{prefix}{line}")).is_err() {
                break;
            }
        }
    });
}

/// A side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    Black,
    White,
}

/// How a game ended, as the front end announced it or as the judge reads its record: the
/// ending's `#` line (`#RESIGN`, `#TIME_UP`, `#MAX_MOVES`, `#SENNICHITE` ...) and the winner.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ending {
    pub line: String,
    pub winner: Option<Side>,
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.winner {
            Some(w) => write!(f, "{} ({w:?} wins)", self.line),
            None => write!(f, "{}", self.line),
        }
    }
}

/// One game to play: `game` is the CSA game name (`<base>-<total>-<byoyomi>`), its base unique
/// within a run.
#[derive(Debug, Clone)]
pub struct Match {
    pub game: String,
    pub black: Engine,
    pub white: Engine,
}

/// A game played: its CSA game id and the ending both bridges were told.
#[derive(Debug, Clone)]
pub struct Played {
    /// The game name it was played under.
    pub game: String,
    pub game_id: String,
    pub ending: Ending,
}

/// One bridge at work: its process group, and its lines.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// `game crated <id>` (sic), then the `#` lines as they come.
    game_id: Option<String>,
    ends: Vec<String>,
    log: Vec<String>,
    killed: bool,
}

impl Running {
    fn start(
        bridge: &Bridge,
        engine: &Engine,
        login: &str,
        game: &str,
        port: u16,
        dir: &Path,
    ) -> Running {
        let options: Vec<String> = engine
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut cmd = Command::new(&bridge.ruby);
        cmd.arg(&bridge.script)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--id", login, "--gamename", game, "--password", "engines"])
            .args(["--hash", "16", "--log-dir"])
            .arg(dir);
        if !options.is_empty() {
            cmd.args(["--options", &options.join(",")]);
        }
        let mut child = cmd
            .arg(&engine.program)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start the bridge for {login}: {e}"));
        let (tx, lines) = mpsc::channel();
        forward(child.stdout.take().expect("piped"), "", tx.clone());
        // What the bridge and its engine write to standard error, beside the lines.
        forward(child.stderr.take().expect("piped"), "stderr: ", tx);
        Running {
            child,
            lines,
            game_id: None,
            ends: Vec::new(),
            log: Vec::new(),
            killed: false,
        }
    }

    /// Reads what has come; whether the game is over for this side.
    fn poll(&mut self, wait: Duration) -> Result<bool, String> {
        match self.lines.recv_timeout(wait) {
            Ok(l) => {
                if let Some(id) = l.strip_prefix("game crated ") {
                    self.game_id = Some(id.trim().to_owned());
                } else if l.starts_with('#') {
                    self.ends.push(l.trim().to_owned());
                }
                // Everything else (the bridge's progress, its complaints, what the engine
                // writes to standard error: gpsusi's `input stream closed` when the bridge
                // exits) is kept for the error of a game that does not end.
                self.log.push(l);
                Ok(self.over())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(self.over()),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                if self.over() {
                    Ok(true)
                } else {
                    Err("the bridge exited before its game ended".into())
                }
            }
        }
    }

    fn over(&self) -> bool {
        self.ends.last().is_some_and(|l| {
            matches!(
                l.as_str(),
                "#WIN" | "#LOSE" | "#DRAW" | "#CENSORED" | "#CHUDAN"
            )
        })
    }

    /// The bridge's group (the bridge and its engine), killed.
    fn kill(&mut self) {
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
        self.killed = true;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.killed {
            self.kill();
        }
    }
}

/// The ending the lines `ends` a side received announce, for that side.
pub fn announced(ends: &[String], me: Side) -> Result<Ending, String> {
    let (line, outcome) = match ends {
        [line, outcome] => (line.as_str(), outcome.as_str()),
        _ => return Err(format!("not an ending and an outcome: {ends:?}")),
    };
    let other = match me {
        Side::Black => Side::White,
        Side::White => Side::Black,
    };
    let winner = match outcome {
        "#WIN" => Some(me),
        "#LOSE" => Some(other),
        "#DRAW" | "#CENSORED" => None,
        _ => return Err(format!("no outcome in {ends:?}")),
    };
    Ok(Ending {
        line: line.to_owned(),
        winner,
    })
}

/// Plays `m` on `front`: both bridges started, waited for until both have the game's end lines
/// (within `deadline`), then killed. Their logs go to `dir`.
pub fn play(
    bridge: &Bridge,
    front: &Front,
    m: &Match,
    n: usize,
    dir: &Path,
    deadline: Duration,
) -> Result<Played, String> {
    let mut sides =
        [(Side::Black, &m.black, "B"), (Side::White, &m.white, "W")].map(|(side, engine, turn)| {
            let login = format!("{}-{n}-{turn}", engine.name);
            let game = format!("{}-{turn}", m.game);
            let log_dir = dir.join(&login);
            let _ = std::fs::create_dir_all(&log_dir);
            (
                side,
                Running::start(bridge, engine, &login, &game, front.port, &log_dir),
            )
        });
    let until = Instant::now() + deadline;
    let result = (|| {
        loop {
            let mut all = true;
            for (_, r) in &mut sides {
                all &= r.poll(Duration::from_millis(50))?;
            }
            if all {
                break;
            }
            if Instant::now() > until {
                return Err(format!("not over within {deadline:?}"));
            }
        }
        let [(_, b), (_, w)] = &sides;
        let black = announced(&b.ends, Side::Black)?;
        let white = announced(&w.ends, Side::White)?;
        if black != white {
            return Err(format!("Black was told {black}, White {white}"));
        }
        let game_id = b.game_id.clone().ok_or("no START line")?;
        if w.game_id.as_deref() != Some(&game_id) {
            return Err(format!("two game ids: {game_id} and {:?}", w.game_id));
        }
        Ok(Played {
            game: m.game.clone(),
            game_id,
            ending: black,
        })
    })();
    for (_, r) in &mut sides {
        r.kill();
    }
    result.map_err(|e| {
        let logs: Vec<String> = sides
            .iter()
            .map(|(s, r)| format!("{s:?}'s bridge: {:?}", r.log))
            .collect();
        format!("game {} ({}): {e}\n{}", n, m.game, logs.join("\n"))
    })
}

/// The ending a judge's JSON line (`shogi-arbiter.judge.v2`) reads in a front end's record: a
/// verdict's own (`csa`; a checkmate, which the front end announces as the mated side's
/// resignation, as `#RESIGN`), or the record's ending where no rule ended the game (`%TORYO`,
/// `%TIME_UP`), lost by the side to move after the plies judged.
pub fn judged(line: &Value) -> Result<Ending, String> {
    let side = |c: &Value| match c.as_str() {
        Some("COLOR_BLACK") => Some(Side::Black),
        Some("COLOR_WHITE") => Some(Side::White),
        _ => None,
    };
    if let Some(v) = line.get("verdict").filter(|v| !v.is_null()) {
        let code = v["code"].as_str().unwrap_or_default();
        let text = match code {
            "RESULT_CODE_CHECKMATE" | "RESULT_CODE_NO_LEGAL_MOVES" | "RESULT_CODE_TRY_RULE" => {
                "#RESIGN"
            }
            _ => line["csa"]
                .as_str()
                .ok_or_else(|| format!("a verdict without a CSA line: {line}"))?,
        };
        return Ok(Ending {
            line: text.to_owned(),
            winner: side(&v["winner"]),
        });
    }
    let plies = line["plies"]
        .as_u64()
        .ok_or_else(|| format!("no plies: {line}"))?;
    let to_move_loses = if plies % 2 == 0 {
        Side::White
    } else {
        Side::Black
    };
    let text = match line["recorded"].as_str() {
        Some("%TORYO") => "#RESIGN",
        Some("%TIME_UP") => "#TIME_UP",
        _ => return Err(format!("no verdict and no ending the judge reads: {line}")),
    };
    Ok(Ending {
        line: text.to_owned(),
        winner: Some(to_move_loses),
    })
}

/// Every record under `dir` judged by `shogi-arbiter judge --rules floodgate` (the front end's
/// preset; the cap is the record's `'Max_Moves`): each record's game id (its file name) and
/// ending, or why it could not be read.
pub fn judge_records(dir: &Path) -> BTreeMap<String, Result<Ending, String>> {
    let out = Command::new(bin("shogi-arbiter"))
        .args(["judge", "--rules", "floodgate", "--format", "json"])
        .arg(dir)
        .output()
        .expect("run shogi-arbiter judge");
    let mut judged_games = BTreeMap::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = match serde_json::from_str(l) {
            Ok(v) => v,
            Err(e) => {
                judged_games.insert(l.to_owned(), Err(format!("not JSON: {e}")));
                continue;
            }
        };
        let source = v["source"].as_str().unwrap_or_default();
        let id = Path::new(source)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ending = match v.get("error") {
            Some(e) => Err(format!("{source}: {e}")),
            None => judged(&v),
        };
        judged_games.insert(id, ending);
    }
    judged_games
}

/// What a run came to: each game's announced ending and the judge's reading of its record.
#[derive(Debug, Default)]
pub struct Tally {
    pub games: Vec<Played>,
    /// Games that did not finish (the error of each).
    pub failed: Vec<String>,
    /// Each record's judged ending, by game id.
    pub judged: BTreeMap<String, Result<Ending, String>>,
}

impl Tally {
    /// Endings by `#` line.
    pub fn endings(&self) -> BTreeMap<String, usize> {
        let mut by = BTreeMap::new();
        for g in &self.games {
            *by.entry(g.ending.line.clone()).or_default() += 1;
        }
        by
    }

    /// Games whose record the judge read to the announced ending.
    pub fn judged_equal(&self) -> usize {
        self.games
            .iter()
            .filter(|g| self.judged.get(&g.game_id) == Some(&Ok(g.ending.clone())))
            .count()
    }

    /// Every disagreement: a game not finished, a game without a record, a record judged to
    /// another ending or not read, a record of no game played.
    pub fn problems(&self) -> Vec<String> {
        let mut out = self.failed.clone();
        for g in &self.games {
            match self.judged.get(&g.game_id) {
                None => out.push(format!("{}: no record", g.game_id)),
                Some(Ok(e)) if *e == g.ending => {}
                Some(j) => out.push(format!(
                    "{}: announced {}, judged {j:?}",
                    g.game_id, g.ending
                )),
            }
        }
        for id in self.judged.keys() {
            if !self.games.iter().any(|g| &g.game_id == id) {
                out.push(format!("{id}: a record of no game played"));
            }
        }
        out
    }

    /// One paragraph: games, endings by kind, records judged equal.
    pub fn summary(&self) -> String {
        let endings: Vec<String> = self
            .endings()
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        format!(
            "{} games finished ({} failed): {}; {} records, {} judged to the announced ending",
            self.games.len(),
            self.failed.len(),
            endings.join(", "),
            self.judged.len(),
            self.judged_equal()
        )
    }
}

/// Plays `matches` on `front`, `jobs` at a time (each within `per_game`), then judges every
/// record it wrote, once the records of all the games played are there.
pub fn run(
    bridge: &Bridge,
    front: &Front,
    matches: &[Match],
    jobs: usize,
    work: &Path,
    per_game: Duration,
) -> Tally {
    let mut tally = Tally::default();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(m) = matches.get(i) else { break };
                    let r = play(bridge, front, m, i, work, per_game);
                    match &r {
                        Ok(p) => eprintln!("game {i} ({}): {} {}", m.game, p.game_id, p.ending),
                        Err(e) => eprintln!("game {i}: {e}"),
                    }
                    results.lock().expect("not poisoned").push(r);
                }
            });
        }
    });
    for r in results.into_inner().expect("not poisoned") {
        match r {
            Ok(p) => tally.games.push(p),
            Err(e) => tally.failed.push(e),
        }
    }
    // The front end writes a record just after the end lines: wait until each game's is there.
    let until = Instant::now() + per_game;
    loop {
        tally.judged = judge_records(&front.records);
        let all = tally
            .games
            .iter()
            .all(|g| tally.judged.contains_key(&g.game_id));
        if all || Instant::now() > until {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    tally
}

/// fairy-stockfish's skill levels (`Skill Level`, -20 to 20) in turn over a run's games, so
/// that some games end before the cap (a weak side mated, or resigning) and some reach it.
const SKILLS: [&str; 4] = ["20", "-20", "5", "-10"];

/// `n` games between fairy-stockfish and gpsusi, colours alternating, fairy-stockfish at the
/// skill levels in turn, with the shortest byoyomi the bridge takes and no main time. Each
/// game's base name starts with `prefix` and is unique.
pub fn byoyomi_games(prefix: &str, n: usize, fairy: &Engine, gps: &Engine) -> Vec<Match> {
    (0..n)
        .map(|i| {
            let fairy = fairy.clone().with("Skill Level", SKILLS[i % SKILLS.len()]);
            let (black, white) = if i % 2 == 0 {
                (fairy, gps.clone())
            } else {
                (gps.clone(), fairy)
            };
            Match {
                game: format!("{prefix}{i}-0-{MIN_BYOYOMI_SECS}"),
                black,
                white,
            }
        })
        .collect()
}

/// A sudden-death game of `total_secs` each that fairy-stockfish, Black, loses on time: its
/// `Minimum Thinking Time` (the longest it takes, 5 s) has it think each move for longer than
/// a third of the total (Stockfish's time manager thinks at least that long, whatever the
/// clock), so its clock runs out within the first few moves.
pub fn clock_game(base: &str, total_secs: u32, fairy: &Engine, gps: &Engine) -> Match {
    let think_ms = (total_secs * 1000 / 3 + 500).min(5000);
    Match {
        game: format!("{base}-{total_secs}-0"),
        black: fairy
            .clone()
            .with("Minimum Thinking Time", &think_ms.to_string()),
        white: gps.clone(),
    }
}
