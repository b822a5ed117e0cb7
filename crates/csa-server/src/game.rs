//! One CSA game, a task of its own: the two players' actions in, the arbiter's answers and
//! verdict out as the players' events. The arbiter judges everything (legality, repetition,
//! declarations, the clock); the game only translates, and ends in one place
//! ([`Game::finish`]) whoever ended it: a move, a resignation, a declaration, a disconnect, or
//! a verdict the arbiter reached by itself and announced on `WatchGame` (a silent side flagged
//! by its clock).

use crate::CheckmateLines;
use crate::conn::ToConn;
use crate::ending::game_end;
use crate::lobby::Lobby;
use crate::record::{Record, RecordPlayer};
use crate::shared::{self, Relay, RelayMsg};
use crate::time::Stamp;
use csa_protocol::server::GameSummary;
use csa_protocol::{Action, CsaMove, Event, GameEnd, TimedMove};
use shogi_proto::convert::{color_pb, duration_pb};
use shogi_proto::v1 as pb;
use shogi_rules::{Color, Move, Position};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use tokio_stream::StreamExt as _;

/// What a game is told.
#[derive(Debug)]
pub enum GameMsg {
    /// The player of this side sent `AGREE`.
    Agree(Color),
    /// The player of this side refused the game (or left before it started).
    Reject(Color),
    /// The player of this side acts, in turn.
    Play(Color, Action),
    /// The arbiter's verdict, as `WatchGame` announced it.
    Verdict(pb::Verdict),
    /// A move the arbiter accepted, as `WatchGame` announced it (a half game's opponent's).
    Moved(pb::MoveAccepted),
    /// What the other half of the game said (a shared lobby's game).
    Relay(Relay),
}

/// A connection's way to its game.
#[derive(Debug, Clone)]
pub struct GameLink {
    /// The game's queue.
    pub tx: mpsc::UnboundedSender<GameMsg>,
    /// The side this connection plays.
    pub me: Color,
}

/// A player as the game knows it.
#[derive(Debug, Clone)]
pub struct GamePlayer {
    /// Its connection.
    pub tx: mpsc::UnboundedSender<ToConn>,
    /// Its name and player id, for the record.
    pub record: RecordPlayer,
}

/// The arbiter's game ids: `csa-<YYYYMMDDHHMMSS>-<n>`, one NATS subject token whatever the
/// players' names (a CSA game id may hold `@` and `.`).
static NEXT_GAME: AtomicU64 = AtomicU64::new(1);

/// A new arbiter game id: `csa-<YYYYMMDDHHMMSS>[-<instance>]-<n>`, the instance's id in a
/// shared lobby, where two instances count games apart.
pub fn arbiter_id(proposed: Stamp, instance: Option<&str>) -> String {
    let n = NEXT_GAME.fetch_add(1, Ordering::Relaxed);
    match instance {
        Some(i) => format!("csa-{}-{i}-{n}", proposed.compact()),
        None => format!("csa-{}-{n}", proposed.compact()),
    }
}

/// One instance's half of a game of a shared lobby: it drives its own player's side only,
/// and talks to the other half on `csa.game.<arbiter id>`.
#[derive(Debug)]
pub struct Half {
    /// The side this instance's player plays.
    pub me: Color,
    /// The arbiter's game id, chosen by the pairing instance.
    pub arbiter_id: String,
    /// The NATS client.
    pub client: async_nats::Client,
    /// The game's subject, followed already.
    pub relay: async_nats::Subscriber,
}

/// Starts the game proposed in `summary`; the lobby keeps the returned queue.
pub fn spawn(
    lobby: Arc<Lobby>,
    summary: GameSummary,
    players: [GamePlayer; 2],
    proposed: Stamp,
) -> mpsc::UnboundedSender<GameMsg> {
    let arbiter_id = arbiter_id(proposed, None);
    let (tx, rx) = mpsc::unbounded_channel();
    let game = Game::new(lobby, summary, players, proposed, arbiter_id, tx.clone());
    tokio::spawn(game.run(rx));
    tx
}

/// Starts this instance's half of a shared lobby's game: `player` plays `half.me`; `records`
/// name both players (Black's instance writes the record).
pub fn spawn_half(
    lobby: Arc<Lobby>,
    summary: GameSummary,
    records: [RecordPlayer; 2],
    player: GamePlayer,
    half: Half,
    proposed: Stamp,
) -> mpsc::UnboundedSender<GameMsg> {
    let (tx, rx) = mpsc::unbounded_channel();
    let Half {
        me,
        arbiter_id,
        client,
        relay,
    } = half;
    // The other player's connection is another instance's: a queue nobody reads.
    let players = records.map(|record| GamePlayer {
        tx: mpsc::unbounded_channel().0,
        record,
    });
    let mut game = Game::new(lobby, summary, players, proposed, arbiter_id, tx.clone());
    game.players[idx(me)].tx = player.tx;
    game.relay_task = Some(tokio::spawn(follow_relay(relay, me, tx.clone())));
    game.half = Some((me, client));
    tokio::spawn(game.run(rx));
    tx
}

/// Hands what the other half says on the game's subject to the game.
async fn follow_relay(
    mut relay: async_nats::Subscriber,
    me: Color,
    tx: mpsc::UnboundedSender<GameMsg>,
) {
    while let Some(msg) = relay.next().await {
        match serde_json::from_slice::<RelayMsg>(&msg.payload) {
            Ok(r) if shared::color_from(r.from) != me => {
                if tx.send(GameMsg::Relay(r.relay)).is_err() {
                    return;
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "a relay that is none"),
        }
    }
}

impl Game {
    fn new(
        lobby: Arc<Lobby>,
        summary: GameSummary,
        players: [GamePlayer; 2],
        proposed: Stamp,
        arbiter_id: String,
        tx: mpsc::UnboundedSender<GameMsg>,
    ) -> Game {
        let config = &lobby.config;
        let time = summary.time;
        let record = Record {
            game_id: summary.game_id.clone(),
            players: [players[0].record.clone(), players[1].record.clone()],
            max_moves: config.max_moves,
            least_time_per_move: config.least_time_per_move,
            increment: time.increment,
            proposed,
            start: summary.position.clone(),
            body: String::new(),
            moves: Vec::new(),
        };
        Game {
            position: summary.position.clone(),
            summary,
            arbiter_id,
            players,
            agreed: [false; 2],
            started: false,
            gone: [false; 2],
            ended: false,
            ply: 0,
            clock: None,
            mate: None,
            record,
            lobby,
            tx,
            half: None,
            comments: std::collections::HashMap::new(),
            relay_task: None,
        }
    }
}

struct Game {
    lobby: Arc<Lobby>,
    summary: GameSummary,
    arbiter_id: String,
    players: [GamePlayer; 2],
    agreed: [bool; 2],
    started: bool,
    /// The player left; the game ends as its resignation on its turn.
    gone: [bool; 2],
    ended: bool,
    position: Position,
    /// Plies played.
    ply: u32,
    clock: Option<pb::ClockState>,
    /// A checkmate the arbiter judged, held while the mated side's turn goes on
    /// ([`CheckmateLines::ShogiServer`]).
    mate: Option<Mate>,
    record: Record,
    /// The game's own queue, for the watcher.
    tx: mpsc::UnboundedSender<GameMsg>,
    /// A shared lobby's game: the side this instance plays, and the client its relays go out
    /// on.
    half: Option<(Color, async_nats::Client)>,
    /// The other half's move comments by ply, for the record, as an instance of an earlier
    /// release relays them (`Relay::Comment`) when one comes before its move (one that comes
    /// after goes into the record at once); one of this release sends them with the move.
    comments: std::collections::HashMap<u32, String>,
    /// The task that follows the game's subject.
    relay_task: Option<tokio::task::JoinHandle<()>>,
}

/// A checkmate held for shogi-server's lines: the game is over on the arbiter, and the mated
/// side's next line (or its time) decides the CSA lines that end it.
struct Mate {
    verdict: pb::Verdict,
    mated: Color,
    /// When the mated side's turn started (the mating move's echo).
    since: tokio::time::Instant,
    /// The time the mated side had for the turn, `None` without a clock: as shogi-server's
    /// `ChessClock#timeout?` counts it, its whole units of main time left, its byoyomi and its
    /// increment; a line that comes after it is a time-up.
    limit: Option<std::time::Duration>,
}

impl Mate {
    fn deadline(&self) -> Option<tokio::time::Instant> {
        self.limit.map(|l| self.since + l)
    }
}

const fn idx(c: Color) -> usize {
    match c {
        Color::Black => 0,
        Color::White => 1,
    }
}

impl Game {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<GameMsg>) {
        let agree_by = tokio::time::Instant::now() + self.lobby.config.agree_timeout;
        let mut watcher = None;
        while !self.ended {
            let msg = if let Some(deadline) = self.mate.as_ref().and_then(Mate::deadline) {
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(msg) => msg,
                    Err(_) => {
                        self.mate_ends(|loser| GameEnd::TimeUp { loser });
                        continue;
                    }
                }
            } else if self.started {
                rx.recv().await
            } else {
                match tokio::time::timeout_at(agree_by, rx.recv()).await {
                    Ok(msg) => msg,
                    Err(_) => {
                        self.reject("the Server (timed out)");
                        break;
                    }
                }
            };
            let Some(msg) = msg else { break };
            let other = self.half.as_ref().map(|(me, _)| !*me);
            match msg {
                GameMsg::Agree(c) => {
                    self.relay(Relay::Agree).await;
                    if !self.agree(c, &mut watcher).await {
                        break;
                    }
                }
                GameMsg::Reject(c) => {
                    self.relay(Relay::Reject).await;
                    self.rejected(c);
                }
                GameMsg::Play(c, action) => {
                    if self.started {
                        self.play(c, action).await;
                    }
                }
                GameMsg::Verdict(v) => {
                    self.other_halfs_illegal_line(&v);
                    self.other_halfs_kachi(&v);
                    self.finish(&v, None);
                }
                GameMsg::Moved(m) => self.moved(m).await,
                GameMsg::Relay(r) => match (r, other) {
                    (Relay::Agree, Some(c)) if !self.agree(c, &mut watcher).await => break,
                    (Relay::Reject, Some(c)) => self.rejected(c),
                    // Kept for its move, or put with it when the move came first.
                    (Relay::Comment { ply, text }, _) => {
                        if ply > self.ply {
                            self.comments.insert(ply, text);
                        } else if !self.record.late_comment(ply, &text) {
                            tracing::debug!(game = %self.summary.game_id, ply, "a relayed comment for a move that has one");
                        }
                    }
                    _ => {}
                },
            }
        }
        if let Some(w) = watcher {
            w.abort();
        }
        if let Some(r) = self.relay_task.take() {
            r.abort();
        }
        self.lobby.game_over(&self.summary.game_id);
    }

    /// `c` agreed: the game starts on the arbiter once both did. `false` when it could not.
    async fn agree(&mut self, c: Color, watcher: &mut Option<tokio::task::JoinHandle<()>>) -> bool {
        if self.started {
            return true;
        }
        self.agreed[idx(c)] = true;
        if self.agreed == [true; 2] {
            if !self.create().await {
                return false;
            }
            self.started = true;
            *watcher = Some(tokio::spawn(watch(
                self.lobby.arbiter.clone(),
                self.arbiter_id.clone(),
                self.tx.clone(),
                self.half.is_some(),
            )));
        }
        self.send(!c, Event::OpponentAgreed);
        true
    }

    fn rejected(&mut self, c: Color) {
        if !self.started {
            let by = self.players[idx(c)].record.name.clone();
            self.reject(&by);
        }
    }

    /// Tells the other half of a shared lobby's game (nothing in a game of one instance).
    async fn relay(&self, relay: Relay) {
        let Some((me, client)) = &self.half else {
            return;
        };
        let msg = RelayMsg {
            from: shared::color_char(*me),
            relay,
        };
        let Ok(body) = serde_json::to_vec(&msg) else {
            return;
        };
        let subject = shared::game_subject(&self.arbiter_id);
        let sent = match client.publish(subject, body.into()).await {
            Ok(()) => client.flush().await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = sent {
            tracing::warn!(game = %self.summary.game_id, error = %e, "the other half was not told");
        }
    }

    /// The line the other half's player lost by as an illegal move, for this half's record: a
    /// line that is no move of the board (`%CHUDAN`, ...) as the verdict's note names it (the
    /// other half reported it with `EndGame`), or a board move the preset forfeited, in CSA
    /// from the verdict's USI.
    fn other_halfs_illegal_line(&mut self, v: &pb::Verdict) {
        let Some((me, _)) = &self.half else { return };
        let won = shogi_proto::convert::color_from_pb(v.winner) == Some(*me);
        if self.ended || !won || v.code != pb::ResultCode::IllegalMove as i32 {
            return;
        }
        match &v.evidence {
            Some(pb::verdict::Evidence::Reported(r)) if !r.note.is_empty() => {
                self.record.illegal(&r.note);
            }
            Some(pb::verdict::Evidence::IllegalMove(e)) => {
                if let Some((_, mv)) = csa_move(&self.position, &e.usi) {
                    self.record.illegal(&mv.to_string());
                }
            }
            _ => {}
        }
    }

    /// The other half's player declared (`%KACHI`): its echo, `%KACHI,T<n>`, to this half's
    /// player before the result, as the declarer's half sends it to its own.
    fn other_halfs_kachi(&mut self, v: &pb::Verdict) {
        let Some((me, _)) = &self.half else { return };
        let me = *me;
        let declaration = v.code == pb::ResultCode::Declaration as i32;
        if self.ended || !declaration || self.position.side_to_move() == me {
            return;
        }
        let started = self.clock.as_ref().map_or(0, |k| k.turn_started_unix_ms);
        let elapsed = u64::try_from(v.received_unix_ms - started).unwrap_or(0);
        let time = u32::try_from(elapsed / self.unit_ms()).unwrap_or(u32::MAX);
        self.send(me, Event::KachiTimed { time });
    }

    /// Whether `c` is played here (always, but in a half of a shared lobby's game).
    fn is_local(&self, c: Color) -> bool {
        self.half.as_ref().is_none_or(|(me, _)| *me == c)
    }

    /// The other half's move, as `WatchGame` announced it: played here and echoed to this
    /// instance's player with the seconds since its turn started, as the arbiter received
    /// it. A player who left meanwhile loses by it, as in a game of one instance.
    async fn moved(&mut self, m: pb::MoveAccepted) {
        let Some((me, _)) = &self.half else { return };
        let me = *me;
        let mover = self.position.side_to_move();
        if self.ended || m.ply != self.ply + 1 || mover == me {
            return;
        }
        let Some((usi, mv)) = csa_move(&self.position, &m.usi) else {
            tracing::error!(game = %self.summary.game_id, usi = %m.usi, "the opponent's move is none of the board");
            return;
        };
        let started = self
            .clock
            .as_ref()
            .map_or(m.received_unix_ms, |k| k.turn_started_unix_ms);
        let elapsed = u64::try_from(m.received_unix_ms - started).unwrap_or(0);
        let mut time = u32::try_from(elapsed / self.unit_ms()).unwrap_or(u32::MAX);
        if !self.summary.time.stop_watch {
            time = time.max(self.lobby.config.least_time_per_move);
        }
        if let Some(k) = self.clock.as_mut() {
            k.turn_started_unix_ms = m.received_unix_ms;
        }
        self.position.play_unchecked(usi);
        self.ply += 1;
        // An instance of an earlier release relays its player's comment apart from the move.
        let relayed = self.comments.remove(&m.ply);
        let comment = (!m.comment.is_empty()).then_some(m.comment.as_str());
        self.record.played(mv, time, comment.or(relayed.as_deref()));
        self.send(me, Event::Played(TimedMove { mv, time }));
        if self.gone[idx(me)] {
            self.resign(me, true).await;
        }
    }

    fn send(&self, c: Color, e: Event) {
        if self.is_local(c) {
            let _ = self.players[idx(c)].tx.send(ToConn::Event(e));
        }
    }

    fn send_both(&self, e: &Event) {
        for c in Color::ALL {
            self.send(c, e.clone());
        }
    }

    fn reject(&mut self, by: &str) {
        tracing::info!(game = %self.summary.game_id, %by, "game rejected");
        self.send_both(&Event::Rejected { by: by.to_owned() });
        self.ended = true;
    }

    /// The game on the arbiter, at `START`: the `floodgate` preset (shogi-server's own
    /// bookkeeping), the clock from the game name, the cap and least time from the flags.
    async fn create(&mut self) -> bool {
        let t = self.summary.time;
        let unit_ms: u64 = if t.stop_watch { 60_000 } else { 1000 };
        let overrides = pb::RulesetOverrides {
            move_cap: Some(self.lobby.config.max_moves),
            clock_rounding: if t.stop_watch {
                pb::ClockRounding::Minutes as i32
            } else {
                pb::ClockRounding::Seconds as i32
            },
            least_time_per_move: Some(duration_pb(
                u64::from(self.lobby.config.least_time_per_move) * 1000,
            )),
            time_main: Some(duration_pb(u64::from(t.total) * unit_ms)),
            time_byoyomi: Some(duration_pb(u64::from(t.byoyomi) * unit_ms)),
            time_increment: Some(duration_pb(u64::from(t.increment) * unit_ms)),
            ..Default::default()
        };
        let req = pb::CreateGameRequest {
            ruleset: Some(pb::Ruleset {
                preset: "floodgate".to_owned(),
                overrides: Some(overrides),
            }),
            start: Some(pb::StartPosition {
                start: Some(pb::start_position::Start::Sfen(self.position.to_sfen())),
            }),
            game_id: self.arbiter_id.clone(),
            strict: false,
        };
        let created = match self.lobby.arbiter.create(req).await {
            // The other half of a shared lobby's game created it first: the same game.
            Err(status) if self.half.is_some() && status.code() == tonic::Code::AlreadyExists => {
                self.lobby.arbiter.get(&self.arbiter_id).await
            }
            other => other,
        };
        match created {
            Ok(state) => {
                self.clock = state.clock;
                tracing::info!(game = %self.summary.game_id, arbiter_game = %self.arbiter_id, "game started");
                true
            }
            Err(status) => {
                tracing::error!(game = %self.summary.game_id, error = %status, "the arbiter did not create the game");
                self.send_both(&Event::Rejected {
                    by: "the Server (the arbiter is unavailable)".to_owned(),
                });
                self.ended = true;
                false
            }
        }
    }

    /// The time unit of `T<n>`: seconds, or minutes in a stop-watch game.
    fn unit_ms(&self) -> u64 {
        if self.summary.time.stop_watch {
            60_000
        } else {
            1000
        }
    }

    async fn play(&mut self, c: Color, action: Action) {
        if self.ended {
            return;
        }
        if self.mate.is_some() {
            return self.after_mate(c, action);
        }
        match action {
            Action::Move { mv, comment } => match usi_move(&self.position, c, mv) {
                Some(usi) => self.submit(c, mv, usi, comment).await,
                None => self.illegal(c, mv.to_string()).await,
            },
            Action::Illegal(line) => self.illegal(c, line).await,
            Action::Resign => self.resign(c, false).await,
            Action::Kachi => self.declare(c).await,
            Action::Abandon => {
                self.gone[idx(c)] = true;
                if self.position.side_to_move() == c {
                    self.resign(c, true).await;
                }
            }
        }
    }

    /// A move of the mover's, submitted: echoed when accepted; a forfeited one (illegal by the
    /// CSA rules, which the `floodgate` preset forfeits) ends the game with `#ILLEGAL_MOVE`.
    async fn submit(&mut self, c: Color, mv: CsaMove, usi: Move, comment: Option<String>) {
        // The comment goes into the log with the move: the other half of a shared lobby's game
        // reads it on the move it follows, as it writes the record.
        let req = pb::SubmitMoveRequest {
            game_id: self.arbiter_id.clone(),
            ply: self.ply + 1,
            usi: usi.to_string(),
            strict: false,
            comment: comment.clone().unwrap_or_default(),
        };
        let answer = match self.lobby.arbiter.submit(req).await {
            Ok(a) => a,
            Err(status) => return self.failed("SubmitMove", &status).await,
        };
        if answer.clock.is_some() {
            self.clock = answer.clock;
        }
        let outcome =
            pb::MoveOutcome::try_from(answer.outcome).unwrap_or(pb::MoveOutcome::Unspecified);
        if outcome == pb::MoveOutcome::Accepted {
            self.position.play_unchecked(usi);
            self.ply += 1;
            let time =
                u32::try_from(answer.charged_ms.unwrap_or(0) / self.unit_ms()).unwrap_or(u32::MAX);
            self.record.played(mv, time, comment.as_deref());
            self.send_both(&Event::Played(TimedMove { mv, time }));
            if let Some(v) = &answer.verdict {
                self.finish(v, None);
            } else if self.gone[idx(!c)] {
                // The opponent left while it was not its turn: shogi-server ends the game
                // once the move is echoed (`Game#handle_one_move`).
                self.resign(!c, true).await;
            }
            return;
        }
        if outcome == pb::MoveOutcome::Forfeited {
            self.record.illegal(&mv.to_string());
        }
        match &answer.verdict {
            Some(v) => self.finish(v, None),
            None => {
                tracing::error!(game = %self.summary.game_id, ?outcome, "a move neither played nor ending the game");
                self.finish_locally(GameEnd::IllegalMove { loser: c });
            }
        }
    }

    /// A line shogi-server plays as an illegal move that is no move of the board (`%CHUDAN`,
    /// another `%` line, a move of the other side's sign or naming a piece not on its square):
    /// the arbiter's contract takes moves in USI alone, so the front end reports it with
    /// `EndGame` (`END_REASON_ILLEGAL_MOVE`, the line as the note), judged at its receipt (a
    /// late one is a time-up). The record names the line (`'ILLEGAL_MOVE(<line>)`).
    async fn illegal(&mut self, c: Color, line: String) {
        let req = pb::EndGameRequest {
            game_id: self.arbiter_id.clone(),
            reason: pb::EndReason::IllegalMove as i32,
            loser: color_pb(c),
            note: line.clone(),
        };
        match self.lobby.arbiter.end(req).await {
            Ok(r) => match r.verdict {
                Some(v) => {
                    if v.code == pb::ResultCode::IllegalMove as i32 {
                        self.record.illegal(&line);
                    }
                    self.finish(&v, None);
                }
                None => self.failed_without_verdict("EndGame").await,
            },
            Err(status) => self.failed("EndGame", &status).await,
        }
    }

    /// `%TORYO`, or a disconnect (`abandon`), on the player's turn: a resignation, or a
    /// time-up when it came after the player's deadline.
    async fn resign(&mut self, c: Color, abandon: bool) {
        let req = pb::EndGameRequest {
            game_id: self.arbiter_id.clone(),
            reason: pb::EndReason::Resignation as i32,
            loser: color_pb(c),
            note: String::new(),
        };
        match self.lobby.arbiter.end(req).await {
            Ok(r) => match r.verdict {
                Some(v) => self.finish(&v, abandon.then_some(c)),
                None => self.failed_without_verdict("EndGame").await,
            },
            Err(status) => self.failed("EndGame", &status).await,
        }
    }

    /// `%KACHI`: the arbiter judges the declaration with its clock; `%KACHI,T<n>` is echoed
    /// before a judged declaration's result (a late one is a time-up, with no echo).
    async fn declare(&mut self, c: Color) {
        let req = pb::DeclareRequest {
            game_id: self.arbiter_id.clone(),
            declarer: color_pb(c),
            has_time: true,
        };
        match self.lobby.arbiter.declare(req).await {
            Ok(r) => match r.verdict {
                Some(v) => {
                    if v.code == pb::ResultCode::Declaration as i32 {
                        let started = self.clock.as_ref().map_or(0, |k| k.turn_started_unix_ms);
                        let elapsed = u64::try_from(v.received_unix_ms - started).unwrap_or(0);
                        let time = u32::try_from(elapsed / self.unit_ms()).unwrap_or(u32::MAX);
                        self.send_both(&Event::KachiTimed { time });
                    }
                    self.finish(&v, None);
                }
                None => self.failed_without_verdict("Declare").await,
            },
            Err(status) => self.failed("Declare", &status).await,
        }
    }

    /// A call failed: the game may be over (its verdict then ends the CSA game) or the arbiter
    /// unreachable.
    async fn failed(&mut self, call: &str, status: &tonic::Status) {
        tracing::warn!(game = %self.summary.game_id, call, error = %status, "arbiter call failed");
        self.failed_without_verdict(call).await;
    }

    async fn failed_without_verdict(&mut self, call: &str) {
        match self.lobby.arbiter.get(&self.arbiter_id).await {
            Ok(state) => match state.verdict {
                Some(v) => self.finish(&v, None),
                None => {
                    tracing::error!(game = %self.summary.game_id, call, "the game goes on on the arbiter; the CSA game is interrupted");
                    self.finish_locally(GameEnd::Chudan);
                }
            },
            Err(status) => {
                tracing::error!(game = %self.summary.game_id, call, error = %status, "the arbiter is unreachable; the CSA game is interrupted");
                self.finish_locally(GameEnd::Chudan);
            }
        }
    }

    /// The mated side's line after a checkmate held for shogi-server's lines, ended as
    /// shogi-server ends it (`Game#handle_one_move`: the time first, then the board's answer).
    fn after_mate(&mut self, c: Color, action: Action) {
        let Some(mate) = &self.mate else { return };
        if c != mate.mated {
            // The winner's lines wait for its turn, which does not come.
            return;
        }
        let elapsed = mate.since.elapsed();
        if mate.limit.is_some_and(|l| elapsed >= l) {
            return self.mate_ends(|loser| GameEnd::TimeUp { loser });
        }
        match action {
            Action::Resign => self.mate_ends(|loser| GameEnd::Resign { loser }),
            Action::Abandon => self.mate_ends(|loser| GameEnd::Abandon { loser }),
            Action::Kachi => {
                let time = u32::try_from(elapsed.as_millis() / u128::from(self.unit_ms()))
                    .unwrap_or(u32::MAX);
                self.send_both(&Event::KachiTimed { time });
                self.mate_ends(|loser| GameEnd::IllegalKachi { loser });
            }
            // Every move of a mated side leaves its king in check.
            Action::Move { .. } | Action::Illegal(_) => {
                self.mate_ends(|loser| GameEnd::IllegalMove { loser });
            }
        }
    }

    /// Ends a game held at its checkmate with the lines `end` gives the mated side; the record
    /// keeps the arbiter's verdict (the checkmate).
    fn mate_ends(&mut self, end: impl FnOnce(Color) -> GameEnd) {
        let Some(mate) = self.mate.take() else { return };
        let end = end(mate.mated);
        tracing::info!(game = %self.summary.game_id, arbiter_game = %self.arbiter_id, ?end, "checkmate ended as shogi-server ends it");
        self.end(end, Some(&mate.verdict));
    }

    /// Holds a checkmate for shogi-server's lines ([`CheckmateLines::ShogiServer`]): `true`
    /// when `verdict` is one (or one is held already), and the game goes on for the players.
    fn hold_mate(&mut self, verdict: &pb::Verdict) -> bool {
        if self.mate.is_some() {
            return true;
        }
        let mate = [
            pb::ResultCode::Checkmate as i32,
            pb::ResultCode::NoLegalMoves as i32,
        ];
        if self.lobby.config.checkmate != CheckmateLines::ShogiServer
            || self.half.is_some()
            || !mate.contains(&verdict.code)
        {
            return false;
        }
        let mated = self.position.side_to_move();
        let t = self.summary.time;
        let unit = self.unit_ms();
        let limit = (t.total > 0 || t.byoyomi > 0 || t.increment > 0).then(|| {
            let left = self.clock.as_ref().and_then(|k| match mated {
                Color::Black => k.black.as_ref(),
                Color::White => k.white.as_ref(),
            });
            let left = left.map_or(0, |s| s.remaining_ms / unit * unit);
            std::time::Duration::from_millis(left + u64::from(t.byoyomi + t.increment) * unit)
        });
        tracing::info!(game = %self.summary.game_id, arbiter_game = %self.arbiter_id, ?mated, "checkmate held for the mated side's line, as shogi-server");
        self.mate = Some(Mate {
            verdict: verdict.clone(),
            mated,
            since: tokio::time::Instant::now(),
            limit,
        });
        if self.gone[idx(mated)] {
            self.mate_ends(|loser| GameEnd::Abandon { loser });
        }
        true
    }

    /// The one place a game ends: the verdict's lines to both players, and the record.
    /// `abandoned` names a player who left, whose resignation is written as one.
    fn finish(&mut self, verdict: &pb::Verdict, abandoned: Option<Color>) {
        if self.ended || self.hold_mate(verdict) {
            return;
        }
        let mut end = game_end(verdict, self.position.side_to_move());
        if let (GameEnd::Resign { loser }, Some(gone)) = (end, abandoned)
            && loser == gone
        {
            end = GameEnd::Abandon { loser };
        }
        tracing::info!(game = %self.summary.game_id, arbiter_game = %self.arbiter_id, code = %verdict.code_name, ply = verdict.ply, "game over");
        self.end(end, Some(verdict));
    }

    fn finish_locally(&mut self, end: GameEnd) {
        if !self.ended {
            self.end(end, None);
        }
    }

    fn end(&mut self, end: GameEnd, verdict: Option<&pb::Verdict>) {
        self.ended = true;
        self.send_both(&Event::Ended(end));
        // Black's instance writes a shared lobby's record.
        if !self.is_local(Color::Black) {
            return;
        }
        if let Some(dir) = &self.lobby.config.record_dir {
            let path = self.record.path(dir);
            let text = self
                .record
                .render(end, verdict, &self.position, Stamp::now());
            let written = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, encoding_rs::EUC_JP.encode(&text).0));
            if let Err(e) = written {
                tracing::error!(game = %self.summary.game_id, path = %path.display(), error = %e, "the record was not written");
            }
        }
    }
}

/// The move `usi` of the side to move on `position`, legal or not, and its CSA form (the
/// piece's kind after the move): `None` when no piece stands on its origin.
fn csa_move(position: &Position, usi: &str) -> Option<(Move, CsaMove)> {
    let mv = position.parse_usi(usi).ok()?;
    let color = position.side_to_move();
    let csa = match mv {
        Move::Drop { kind, to } => CsaMove {
            color,
            from: None,
            to,
            kind,
        },
        Move::Normal { from, to, promote } => {
            let piece = position.piece_at(from)?;
            let kind = if promote {
                piece.kind.promote()?
            } else {
                piece.kind
            };
            CsaMove {
                color,
                from: Some(from),
                to,
                kind,
            }
        }
    };
    Some((mv, csa))
}

/// The USI move a CSA move of `c` is on `position`, or `None` when it is no move of `c`'s:
/// the wrong sign, or a piece named that is not on the origin square (CSA names the piece after
/// the move, so a promotion shows as the promoted name).
fn usi_move(position: &Position, c: Color, mv: CsaMove) -> Option<Move> {
    if mv.color != c {
        return None;
    }
    match mv.from {
        None => mv.kind.is_hand_kind().then_some(Move::Drop {
            kind: mv.kind,
            to: mv.to,
        }),
        Some(from) => {
            let piece = position.piece_at(from)?;
            if piece.color != c {
                return None;
            }
            let promote = if piece.kind == mv.kind {
                false
            } else if piece.kind.promote() == Some(mv.kind) {
                true
            } else {
                return None;
            };
            Some(Move::Normal {
                from,
                to: mv.to,
                promote,
            })
        }
    }
}

/// Follows the game on `WatchGame` and hands its verdict to the game, whoever reached it (and,
/// with `moves`, the moves: a shared lobby's half plays the other half's; else the verdict alone
/// is asked for); reconnects when the stream breaks, until the game is gone.
async fn watch(
    arbiter: crate::Arbiter,
    game_id: String,
    tx: mpsc::UnboundedSender<GameMsg>,
    moves: bool,
) {
    let mut pause = std::time::Duration::from_millis(100);
    while !tx.is_closed() {
        match arbiter.watch(&game_id, !moves).await {
            Ok(mut stream) => {
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(pb::WatchGameResponse {
                            event: Some(pb::watch_game_response::Event::Verdict(v)),
                            ..
                        }) => {
                            let _ = tx.send(GameMsg::Verdict(v));
                            return;
                        }
                        Ok(pb::WatchGameResponse {
                            event: Some(pb::watch_game_response::Event::Move(m)),
                            ..
                        }) if moves => {
                            pause = std::time::Duration::from_millis(100);
                            let _ = tx.send(GameMsg::Moved(m));
                        }
                        Ok(_) => pause = std::time::Duration::from_millis(100),
                        Err(status) => {
                            tracing::warn!(%game_id, error = %status, "WatchGame broke; following again");
                            break;
                        }
                    }
                }
            }
            Err(status) => {
                tracing::warn!(%game_id, error = %status, "WatchGame failed; trying again");
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_secs(5));
    }
}
