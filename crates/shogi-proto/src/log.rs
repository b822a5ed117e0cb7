//! A game's log, and the one replay of it that every reader shares.
//!
//! A game is its creation event (`shogi.game.<id>.created`, a [`pb::GameCreated`]) and its log
//! (`shogi.game.<id>.move.<partition>`): a [`pb::MoveAccepted`] for each move played and, when
//! the game ended by something other than the moves (a platform's report, a declaration, a
//! forfeited illegal move), the [`pb::Verdict`] that ended it; a log written before issue 20
//! may also hold, after an ending that followed from the moves, a worker's copy of its verdict,
//! which changes nothing. The [`MESSAGE_TYPE_HEADER`](crate::MESSAGE_TYPE_HEADER) tells the
//! entries apart.
//!
//! [`Replay`] is the one reader of that log: the move validator, the pipeline workers and
//! WatchGame build a game with it, so they agree on every game whatever the log holds. Its
//! policy for an entry it cannot apply is one: the entry is [set aside](Applied::SetAside)
//! with its reason (the caller copies it to `SHOGI_ASIDE`, counts it and logs it), the game
//! stays as its valid entries made it, and the next write to the log still names the set-aside
//! entry's sequence as the last one read, so the game stays playable. An entry never makes a
//! game unreadable; only an unreadable creation event does ([`Unreadable`]).

use crate::convert::{self, color_from_pb, ordinary_from_pb, result_code_from_pb};
use crate::event::LogEntry;
use crate::v1 as pb;
#[cfg(test)]
use crate::{MOVE_ACCEPTED_TYPE, VERDICT_TYPE};
#[cfg(test)]
use prost::Message as _;
use shogi_adjudication::{Game, GameError, PlyOutcome, ResultCode, Verdict, Warning};
use shogi_rules::{Move, Position};

/// One entry of a game's log, as the bus gives it back.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// Its stream sequence.
    pub sequence: u64,
    /// Its [`MESSAGE_TYPE_HEADER`](crate::MESSAGE_TYPE_HEADER), if it has one.
    pub message_type: Option<&'a str>,
    /// Its payload.
    pub payload: &'a [u8],
}

/// Why an entry of a log was set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AsideReason {
    /// Not a log entry: no or an unknown message type, a payload that does not decode as its
    /// type, or an entry of another game.
    Garbage,
    /// A move whose ply is not the game's next one: a gap, or a ply already played (a
    /// duplicate under another message id).
    OutOfOrder,
    /// A move the game refuses, or one whose recorded position is not the one it leads to.
    Illegal,
    /// A recorded ending that the game's state does not reproduce: an unknown result code,
    /// missing evidence, or an ending that follows from moves that did not decide it.
    BadEnding,
    /// An entry after the game's end that is not the log's copy of its verdict.
    AfterEnd,
    /// An entry of a game that was never created (its creation event is missing).
    UnknownGame,
    /// An entry on a game's `.verdict` that is not the verdict its log decides (not a
    /// `Verdict`, another game's, another ending): not an announcement, whoever wrote it.
    BadVerdict,
}

impl AsideReason {
    /// The reason's name, as logs, metrics and the `Shogi-Aside-Reason` header carry it.
    pub const fn as_str(self) -> &'static str {
        match self {
            AsideReason::Garbage => "garbage",
            AsideReason::OutOfOrder => "out_of_order",
            AsideReason::Illegal => "illegal",
            AsideReason::BadEnding => "bad_ending",
            AsideReason::AfterEnd => "after_end",
            AsideReason::UnknownGame => "unknown_game",
            AsideReason::BadVerdict => "bad_verdict",
        }
    }

    /// Every reason.
    pub const ALL: [AsideReason; 7] = [
        AsideReason::Garbage,
        AsideReason::OutOfOrder,
        AsideReason::Illegal,
        AsideReason::BadEnding,
        AsideReason::AfterEnd,
        AsideReason::UnknownGame,
        AsideReason::BadVerdict,
    ];
}

/// An entry set aside: its sequence, why, and what exactly was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// The entry's stream sequence.
    pub sequence: u64,
    /// Why.
    pub reason: AsideReason,
    /// What exactly, for the log line and the copy's header.
    pub detail: String,
}

/// What applying one entry did.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// The entry was read already (its sequence is at or before the last one read).
    Duplicate,
    /// A move was played; its outcome says whether it ended the game.
    Played {
        /// The move.
        mv: Move,
        /// What it did: its warnings and the verdict it decided, if any.
        outcome: PlyOutcome,
        /// The log entry as it was stored (for WatchGame, which sends it on).
        entry: Box<pb::MoveAccepted>,
    },
    /// A recorded ending (a report, a declaration, a forfeit) ended the game.
    Ended(Verdict),
    /// The log's copy of the ending the moves had decided: nothing changes.
    EndingCopy,
    /// The entry cannot be applied and was set aside; the game is as it was.
    SetAside(SetAside),
}

/// A game whose creation event cannot be read: no reader can build it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("creation event {sequence} of game {game_id} is unreadable: {reason}")]
pub struct Unreadable {
    /// The game.
    pub game_id: String,
    /// The creation event's stream sequence.
    pub sequence: u64,
    /// Why.
    pub reason: String,
}

/// A forfeited illegal move, kept so that a retry gets the same answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forfeit {
    /// The ply it was submitted for.
    pub ply: u32,
    /// The move.
    pub mv: Move,
}

/// Whether a ply's outcome is a forfeit: an illegal move under the forfeit policy, which ended
/// the game without being played.
pub fn forfeited(outcome: &PlyOutcome, game: &Game) -> bool {
    game.plies() < outcome.ply
}

/// A ply played on a [`Replay`] ahead of its log ([`Replay::play`]): either its entry is
/// stored and the replay takes it ([`Replay::stored`]), or the replay is dropped and the game
/// read again from the bus. Nothing else can be done with it but read what the ply did.
#[must_use = "a ply played is stored (`Replay::stored`), or the replay ahead of its log is dropped"]
#[derive(Debug)]
pub struct Pending {
    mv: Move,
    outcome: PlyOutcome,
    /// When the arbiter received the move (Unix milliseconds).
    received_unix_ms: i64,
}

impl Pending {
    /// The move.
    pub fn mv(&self) -> Move {
        self.mv
    }

    /// What it did: its warnings and the verdict it decided, if any.
    pub fn outcome(&self) -> &PlyOutcome {
        &self.outcome
    }
}

/// A game rebuilt from its log, entry by entry, in stream order.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The creation event; the start position and the ruleset are the game's.
    created: Box<Created>,
    created_seq: u64,
    last_seq: u64,
    game: Game,
    forfeit: Option<Forfeit>,
    last_warnings: Vec<Warning>,
    set_aside: u32,
    /// Whether the game's ending was recorded in the log (a report, a declaration, a forfeit)
    /// rather than decided by its last move.
    recorded_ending: bool,
    /// Whether a ply was played ([`Replay::play`]) and not yet stored ([`Replay::stored`]):
    /// the replay is then ahead of its log. A writer whose call was cancelled while its write
    /// was in flight leaves it so; [`Replay::ahead_of_log`] tells the next reader to read the
    /// game again rather than answer from a ply no server may have stored.
    unsettled: bool,
    /// Whether this reader knows the game's verdict is on its `.result` (it recorded it there,
    /// or found it there), so that it need not write it again.
    result_recorded: bool,
    /// When the arbiter received the call whose entry ended the game (a report, a
    /// declaration, a forfeited or late move), Unix milliseconds; 0 otherwise.
    ending_received_unix_ms: i64,
    /// What the clock charged the last ply played, milliseconds (`None` without a clock).
    last_charge_ms: Option<u64>,
}

/// What a game keeps of its creation event besides what its [`Game`] keeps (the start position
/// and the effective ruleset).
#[derive(Debug, Clone, PartialEq)]
struct Created {
    game_id: String,
    /// The ruleset's preset as the creator named it (`None`: no ruleset given).
    preset: Option<String>,
    /// Its overrides, boxed: the message holds every option, the clock's too, and most games
    /// name a preset alone.
    overrides: Option<Box<pb::RulesetOverrides>>,
    handicap: String,
    strict: bool,
    /// When the arbiter created the game (Unix milliseconds): its clock starts then.
    created_unix_ms: i64,
}

/// What the move of one ply did, as a retry of it is answered.
#[derive(Debug, Clone, PartialEq)]
pub struct PlyAnswer {
    /// The move.
    pub mv: Move,
    /// The position after it.
    pub position: Position,
    /// Whether it gave check.
    pub gave_check: bool,
    /// The verdict it decided, if it ended the game.
    pub verdict: Option<Verdict>,
    /// The warnings it raised.
    pub warnings: Vec<Warning>,
    /// What the clock charged it, milliseconds: known for the game's last ply only, and
    /// `None` without a clock.
    pub charged_ms: Option<u64>,
}

impl Replay {
    /// A game from its creation event, stored at `sequence`.
    pub fn new(game_id: &str, sequence: u64, payload: &[u8]) -> Result<Replay, Unreadable> {
        let unreadable = |reason: String| Unreadable {
            game_id: game_id.to_owned(),
            sequence,
            reason,
        };
        let created = crate::event::decode_created(payload).map_err(unreadable)?;
        if created.game_id != game_id {
            return Err(unreadable(format!("it creates game {:?}", created.game_id)));
        }
        Replay::from_created(created, sequence).map_err(|e| unreadable(e.to_string()))
    }

    /// A game from its creation event `created`, stored at `sequence`: its log starts after it.
    pub fn from_created(
        created: pb::GameCreated,
        sequence: u64,
    ) -> Result<Replay, convert::FieldError> {
        let ruleset = convert::ruleset_from_pb(created.ruleset.as_ref())?;
        let start = Position::from_sfen(&created.start_sfen)
            .map_err(|e| convert::FieldError::new("start_sfen", e.to_string()))?;
        let mut game = Game::new(start, ruleset);
        // A game with a time control has the arbiter's clock, its first turn from the creation.
        let _ = game.start_clock(convert::from_unix_ms(created.created_unix_ms));
        Ok(Replay {
            game,
            created: Box::new(Created {
                game_id: created.game_id,
                preset: created.ruleset.as_ref().map(|r| r.preset.clone()),
                overrides: created.ruleset.and_then(|r| r.overrides).map(Box::new),
                handicap: created.handicap,
                strict: created.strict,
                created_unix_ms: created.created_unix_ms,
            }),
            created_seq: sequence,
            last_seq: 0,
            forfeit: None,
            last_warnings: Vec::new(),
            unsettled: false,
            result_recorded: false,
            ending_received_unix_ms: 0,
            last_charge_ms: None,
            set_aside: 0,
            recorded_ending: false,
        })
    }

    /// The game's id.
    pub fn id(&self) -> &str {
        &self.created.game_id
    }

    /// The stream sequence of the game's creation event: another one under the game's
    /// `.created` subject means the game was purged (and perhaps created again) since.
    pub fn created_seq(&self) -> u64 {
        self.created_seq
    }

    /// The creation event, as it was stored (the start position as SFEN, rebuilt).
    pub fn created(&self) -> pb::GameCreated {
        pb::GameCreated {
            game_id: self.created.game_id.clone(),
            ruleset: self.requested_ruleset(),
            start_sfen: self.game.start_position().to_sfen(),
            handicap: self.created.handicap.clone(),
            strict: self.created.strict,
            created_unix_ms: self.created.created_unix_ms,
        }
    }

    /// The ruleset as the creator named it.
    pub fn requested_ruleset(&self) -> Option<pb::Ruleset> {
        let preset = self.created.preset.clone()?;
        Some(pb::Ruleset {
            preset,
            overrides: self.created.overrides.as_deref().cloned(),
        })
    }

    /// Whether the game was created in strict mode.
    pub fn strict(&self) -> bool {
        self.created.strict
    }

    /// The game, as its valid entries made it.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Plies played.
    pub fn ply(&self) -> u32 {
        self.game.plies()
    }

    /// The stream sequence of the last log entry read (0 before the first): the expected last
    /// sequence of the log's next write.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Where the next read of the log starts.
    pub fn read_from(&self) -> u64 {
        self.last_seq.max(self.created_seq) + 1
    }

    /// The forfeited move that ended the game, if one did.
    pub fn forfeit(&self) -> Option<&Forfeit> {
        self.forfeit.as_ref()
    }

    /// The warnings of the last ply played.
    pub fn last_warnings(&self) -> &[Warning] {
        &self.last_warnings
    }

    /// How many entries were set aside.
    pub fn set_aside(&self) -> u32 {
        self.set_aside
    }

    /// What ply `ply`'s move did, as it was answered: the last ply's from the game, an earlier
    /// one's replayed from the start (a retry of an old ply is rare).
    pub fn answer(&self, ply: u32) -> Option<PlyAnswer> {
        if ply == 0 || ply > self.game.plies() {
            return None;
        }
        let gave_check = self.game.gave_check(ply)?;
        if ply == self.game.plies() {
            let verdict = self
                .game
                .verdict()
                .filter(|_| !self.recorded_ending)
                .cloned();
            return Some(PlyAnswer {
                mv: self.game.moves().last()?,
                position: self.game.position().clone(),
                gave_check,
                verdict,
                warnings: self.last_warnings.clone(),
                charged_ms: self.last_charge_ms,
            });
        }
        let mut game = Game::new(self.game.start_position().clone(), *self.game.ruleset());
        let mut last = None;
        for mv in self.game.moves().take(ply as usize) {
            last = Some((mv, game.play(mv).ok()?));
        }
        let (mv, outcome) = last?;
        Some(PlyAnswer {
            mv,
            position: game.position().clone(),
            gave_check,
            verdict: None,
            warnings: outcome.warnings,
            charged_ms: None,
        })
    }

    /// Plays `mv` on the game in place, before it is written: the ply played, pending its
    /// write, or why not (and then nothing changed). The replay is then ahead of the log: once
    /// the entry is stored the caller hands the [`Pending`] ply to [`Replay::stored`]; if it is
    /// not, the caller drops the replay and reads the game again from the bus.
    ///
    /// `received_unix_ms` is when the arbiter received the move: a game with a clock charges
    /// it from there, and a move at or after its side's deadline is not played but ends the
    /// game on time (its entry is that ending, as a forfeit's is).
    pub fn play(&mut self, mv: Move, received_unix_ms: i64) -> Result<Pending, GameError> {
        let outcome = self
            .game
            .play_at(mv, convert::from_unix_ms(received_unix_ms))?;
        self.unsettled = true;
        Ok(Pending {
            mv,
            outcome,
            received_unix_ms,
        })
    }

    /// The log entry that stores `ply`, played with [`Replay::play`]: the move, or, for an
    /// illegal move the ruleset forfeits or a move after its side's deadline, the verdict that
    /// ends the game (such a move is not a position of the game, so the log keeps its ending,
    /// not the move). Either carries the move's receipt time; the move carries `comment`, what
    /// its mover sent with it (SubmitMove's; "" for none), which an ending does not keep.
    pub fn entry(&self, ply: &Pending, comment: &str) -> LogEntry {
        let id = self.id();
        if forfeited(&ply.outcome, &self.game) {
            let verdict = ply.outcome.verdict.as_ref().map(|v| pb::Verdict {
                received_unix_ms: ply.received_unix_ms,
                ..convert::verdict_pb(id, v)
            });
            return LogEntry::Ending(verdict.unwrap_or_default());
        }
        let pos = self.game.position();
        LogEntry::Move(pb::MoveAccepted {
            game_id: id.to_owned(),
            ply: ply.outcome.ply,
            usi: ply.mv.to_string(),
            sfen_after: pos.to_sfen(),
            gives_check: ply.outcome.gave_check,
            position_hash: pos.hash(),
            received_unix_ms: ply.received_unix_ms,
            comment: comment.to_owned(),
        })
    }

    /// The entry of `ply`, played with [`Replay::play`], is stored at `sequence`.
    pub fn stored(&mut self, sequence: u64, ply: Pending) {
        self.unsettled = false;
        self.record(sequence, ply.mv, &ply.outcome);
        if self.recorded_ending {
            self.ending_received_unix_ms = ply.received_unix_ms;
        }
    }

    /// The game's verdict as a message, with the receipt time of the call that ended it when
    /// its log recorded one.
    pub fn verdict(&self) -> Option<pb::Verdict> {
        let v = self.game.verdict()?;
        Some(pb::Verdict {
            received_unix_ms: self.ending_received_unix_ms,
            ..convert::verdict_pb(self.id(), v)
        })
    }

    /// Whether this reader knows the game's verdict is on its `.result`
    /// ([`Replay::note_result_recorded`]); `false` for a game read again from the bus.
    pub fn result_recorded(&self) -> bool {
        self.result_recorded
    }

    /// The game's verdict is on its `.result`: recorded by this reader, or found there.
    pub fn note_result_recorded(&mut self) {
        self.result_recorded = true;
    }

    /// Whether a ply was played on this replay and never stored: its writer was cancelled (a
    /// call past its deadline) between [`Replay::play`] and [`Replay::stored`], so the replay
    /// may hold a move the log does not. Such a replay is dropped and the game read again.
    pub fn ahead_of_log(&self) -> bool {
        self.unsettled
    }

    /// The replay's books after a ply stored at `sequence` (or read from the log there).
    fn record(&mut self, sequence: u64, mv: Move, outcome: &PlyOutcome) {
        self.last_seq = self.last_seq.max(sequence);
        if forfeited(outcome, &self.game) {
            self.forfeit = Some(Forfeit {
                ply: outcome.ply,
                mv,
            });
            self.recorded_ending = true;
        } else {
            self.last_warnings.clone_from(&outcome.warnings);
            self.last_charge_ms = outcome.charge.map(|c| c.charged_ms);
        }
    }

    /// Takes `game` (a copy this game was ended on: a report or a declaration) whose verdict
    /// the caller stored at `sequence` in the log, from a call received at `received_unix_ms`.
    pub fn commit_ending(&mut self, sequence: u64, game: Game, received_unix_ms: i64) {
        self.last_seq = self.last_seq.max(sequence);
        self.game = game;
        self.recorded_ending = true;
        self.ending_received_unix_ms = received_unix_ms;
    }

    /// Whether `entry` is the game's next log entry by its ply: a move for the next ply, or an
    /// ending recorded at the ply the game has reached (a forfeit: at the next one, the rule of
    /// [`Replay::apply`]). Writers append only after the log's last entry, so nothing valid can
    /// sit between it and the last entry read.
    pub fn is_next(&self, entry: Entry<'_>) -> bool {
        match crate::event::LogEntry::decode(entry.message_type, entry.payload) {
            Ok(crate::event::LogEntry::Move(m)) => m.ply == self.game.plies() + 1,
            Ok(crate::event::LogEntry::Ending(v)) => {
                result_code_from_pb(v.code).is_some_and(|code| v.ply == self.due_ply(code))
            }
            Err(_) => false,
        }
    }

    /// The ply an ending with `code` is recorded at: a forfeit at the ply of the illegal move,
    /// every other ending at the ply the game has reached.
    fn due_ply(&self, code: ResultCode) -> u32 {
        self.game.plies() + u32::from(code == ResultCode::IllegalMove)
    }

    /// Applies the next entry of the game's log, in stream order: the one policy for every
    /// reader (see the module documentation).
    pub fn apply(&mut self, entry: Entry<'_>) -> Applied {
        if entry.sequence <= self.last_seq || entry.sequence <= self.created_seq {
            return Applied::Duplicate;
        }
        self.last_seq = entry.sequence;
        let applied = match LogEntry::decode(entry.message_type, entry.payload) {
            Ok(LogEntry::Move(m)) => self.apply_move(m),
            Ok(LogEntry::Ending(v)) => self.apply_ending(v),
            Err(why) => Err((AsideReason::Garbage, why)),
        };
        applied.unwrap_or_else(|(reason, detail)| {
            self.set_aside += 1;
            Applied::SetAside(SetAside {
                sequence: entry.sequence,
                reason,
                detail,
            })
        })
    }

    fn apply_move(&mut self, m: pb::MoveAccepted) -> Result<Applied, (AsideReason, String)> {
        if m.game_id != self.created.game_id {
            return Err((
                AsideReason::Garbage,
                format!("a move of game {:?}", m.game_id),
            ));
        }
        if self.game.is_over() {
            return Err((
                AsideReason::AfterEnd,
                format!("ply {} after the game's end", m.ply),
            ));
        }
        let next = self.game.plies() + 1;
        if m.ply != next {
            return Err((
                AsideReason::OutOfOrder,
                format!("ply {} where ply {next} is due", m.ply),
            ));
        }
        let mv = Move::from_usi(&m.usi)
            .map_err(|e| (AsideReason::Garbage, format!("move {:?}: {e}", m.usi)))?;
        // Checked before the game is touched: the game is played in place, as every reader
        // plays it, and what is set aside must leave it as it was.
        let position = self.game.position();
        if let Err(illegal) = position.check_move(mv) {
            return Err((
                AsideReason::Illegal,
                format!("move {mv} is illegal ({illegal}): it is recorded as played"),
            ));
        }
        let mut after = position.clone();
        after.play_unchecked(mv);
        let hash = after.hash();
        if m.position_hash != 0 && m.position_hash != hash {
            return Err((
                AsideReason::Illegal,
                format!(
                    "move {mv} leads to position {hash:016x}, recorded as {:016x}",
                    m.position_hash
                ),
            ));
        }
        // The clock charges the move from its receipt time; one recorded after its side's
        // deadline was not the writer's to accept, and is set aside with the game untouched
        // (its next reader finds the side out of time).
        let received = convert::from_unix_ms(m.received_unix_ms);
        if let Some(up) = self.game.clock().and_then(|c| c.flag(received)) {
            return Err((
                AsideReason::Illegal,
                format!(
                    "move {mv} received at {received} ms, at or after its side's deadline {} ms",
                    up.deadline_ms
                ),
            ));
        }
        let outcome = self
            .game
            .play_at(mv, received)
            .map_err(|e| (AsideReason::Illegal, format!("move {mv}: {e}")))?;
        let last = self.last_seq;
        self.record(last, mv, &outcome);
        Ok(Applied::Played {
            mv,
            outcome,
            entry: Box::new(m),
        })
    }

    fn apply_ending(&mut self, v: pb::Verdict) -> Result<Applied, (AsideReason, String)> {
        if v.game_id != self.created.game_id {
            return Err((
                AsideReason::Garbage,
                format!("a verdict of game {:?}", v.game_id),
            ));
        }
        let code = result_code_from_pb(v.code).ok_or_else(|| {
            (
                AsideReason::BadEnding,
                format!("unknown result code {}", v.code),
            )
        })?;
        if let Some(ended) = self.game.verdict() {
            // The log's copy of the verdict the moves decided closes the log.
            return if ended.code == code && ended.ply == v.ply {
                Ok(Applied::EndingCopy)
            } else {
                Err((
                    AsideReason::AfterEnd,
                    format!(
                        "a {} verdict after the game's {} at ply {}",
                        code.as_str(),
                        ended.code.as_str(),
                        ended.ply
                    ),
                ))
            };
        }
        let bad = |why: &str| (AsideReason::BadEnding, format!("{}: {why}", code.as_str()));
        let due = self.due_ply(code);
        if v.ply != due {
            return Err(bad(&format!(
                "recorded at ply {} where ply {due} is due",
                v.ply
            )));
        }
        let mut game = self.game.clone();
        let received = convert::from_unix_ms(v.received_unix_ms);
        match (code, &v.evidence) {
            // With the arbiter's clock, a time-up is the clock's at the time it records (a late
            // call, or the flag of a silent side), and a resignation is judged at its receipt.
            (ResultCode::Timeout, Some(pb::verdict::Evidence::TimeUp(up)))
                if game.clock().is_some() =>
            {
                let at = convert::from_unix_ms(up.at_unix_ms);
                let judged = game.flag(at).ok_or_else(|| {
                    bad(&format!("the side to move is not out of time at {at} ms"))
                })?;
                if judged.winner != color_from_pb(v.winner) {
                    return Err(bad("the clock finds the other side out of time"));
                }
            }
            (ResultCode::Timeout, _) if game.clock().is_some() => {
                return Err(bad(
                    "a timeout in a game with the arbiter's clock carries the clock's evidence",
                ));
            }
            (ResultCode::Resignation, _) if game.clock().is_some() => {
                let loser = color_from_pb(v.winner)
                    .map(|w| !w)
                    .ok_or_else(|| bad("no winner"))?;
                game.resign_at(loser, received)
                    .map_err(|e| bad(&e.to_string()))?;
                if game.verdict().is_some_and(|j| j.code != code) {
                    return Err(bad(&format!(
                        "received at {received} ms, after the side to move's deadline"
                    )));
                }
            }
            // An illegal move the platform reports (a line of its protocol that is no move),
            // judged at its receipt as a resignation is.
            (ResultCode::IllegalMove, Some(pb::verdict::Evidence::Reported(r))) => {
                let loser = color_from_pb(v.winner)
                    .map(|w| !w)
                    .ok_or_else(|| bad("no winner"))?;
                game.report_loss_at(code, loser, &r.note, received)
                    .map_err(|e| bad(&e.to_string()))?;
                if game.verdict().is_some_and(|j| j.code != code) {
                    return Err(bad(&format!(
                        "received at {received} ms, after the side to move's deadline"
                    )));
                }
            }
            // The arbiter's abort of a game nobody played: its evidence must show the limit
            // reached (docs/rules.md section 10).
            (ResultCode::Abort, Some(pb::verdict::Evidence::Abandoned(a))) => {
                game.abandon(convert::abandoned_from_pb(a))
                    .map_err(|e| bad(&e.to_string()))?;
            }
            (
                ResultCode::Resignation
                | ResultCode::Timeout
                | ResultCode::Abort
                | ResultCode::Agreement,
                _,
            ) => {
                game.record_result(
                    code,
                    color_from_pb(v.winner),
                    ordinary_from_pb(v.ordinary_result),
                )
                .map_err(|e| bad(&e.to_string()))?;
            }
            (ResultCode::IllegalMove, Some(pb::verdict::Evidence::IllegalMove(e))) => {
                let mv = Move::from_usi(&e.usi).map_err(|e| bad(&e.to_string()))?;
                if self.game.position().check_move(mv).is_ok() {
                    return Err(bad(&format!("move {mv} is legal: no forfeit")));
                }
                // Illegal: under the forfeit policy it ends the game (and changes nothing else);
                // under the reject policy it is refused and nothing changes.
                let outcome = self.game.play(mv).map_err(|e| bad(&e.to_string()))?;
                let last = self.last_seq;
                self.record(last, mv, &outcome);
                self.ending_received_unix_ms = v.received_unix_ms;
                return outcome
                    .verdict
                    .map(Applied::Ended)
                    .ok_or_else(|| bad("the forfeit decided nothing"));
            }
            (ResultCode::Declaration, Some(pb::verdict::Evidence::Declaration(r))) => {
                let declarer = color_from_pb(r.declarer).ok_or_else(|| bad("no declarer"))?;
                let declared = if game.clock().is_some() {
                    game.declare_at(declarer, received)
                } else {
                    game.declare(declarer, r.has_time)
                }
                .map_err(|e| bad(&e.to_string()))?;
                if declared.verdict.is_none() {
                    return Err(bad("the declaration is refused in this game"));
                }
            }
            _ => {
                return Err(bad(
                    "the moves decide this ending, and they did not decide it",
                ));
            }
        }
        let verdict = game
            .verdict()
            .cloned()
            .ok_or_else(|| bad("nothing ended"))?;
        let last = self.last_seq;
        self.commit_ending(last, game, v.received_unix_ms);
        Ok(Applied::Ended(verdict))
    }
}

/// The `Nats-Msg-Id`s of the log's writes and the notices: the same write gets the same id, so
/// a retried publish is stored once.
pub mod msg_id {
    /// The creation of a game.
    pub fn created(game_id: &str) -> String {
        format!("{game_id}:created")
    }

    /// Ply `ply`'s move, `usi`.
    pub fn moved(game_id: &str, ply: u32, usi: &str) -> String {
        format!("{game_id}:{ply}:{usi}")
    }

    /// The ending recorded in the log at `ply` (or the log's copy of it).
    pub fn ending(game_id: &str, ply: u32) -> String {
        format!("{game_id}:{ply}:end")
    }

    /// The announcement on `.verdict`.
    pub fn verdict(game_id: &str, ply: u32) -> String {
        format!("{game_id}:{ply}:verdict")
    }

    /// A side's deadline scheduled: the same deadline scheduled again is stored once.
    pub fn clock(game_id: &str, black: bool, deadline_unix_ms: i64) -> String {
        format!(
            "{game_id}:clock:{}:{deadline_unix_ms}",
            if black { 'b' } else { 'w' }
        )
    }

    /// The checked verdict on `.result`.
    pub fn result(game_id: &str, ply: u32) -> String {
        format!("{game_id}:{ply}:result")
    }

    /// Warning `index` of ply `ply`.
    pub fn warning(game_id: &str, ply: u32, index: usize) -> String {
        format!("{game_id}:{ply}:warning:{index}")
    }

    /// The copy set aside of the log entry at `sequence`, by `reader`.
    pub fn aside(game_id: &str, sequence: u64, reader: &str) -> String {
        format!("{game_id}:aside:{sequence}:{reader}")
    }

    /// The notice of a declaration at `ply` by `declarer` (the `shogi.v1.Color` value), with or
    /// without time left: a retry of the same declaration is the same notice.
    pub fn declaration(game_id: &str, ply: u32, declarer: i32, has_time: bool) -> String {
        format!("{game_id}:{ply}:declare:{declarer}:{has_time}")
    }

    /// `holder`'s write of `role`'s lease of `partition` over the lease at `expected`: a retry
    /// of this write is a duplicate of it, another instance's write from the same state a
    /// conflict.
    pub fn lease(role: &str, partition: u32, expected: u64, holder: &str) -> String {
        format!("lease:{role}:{partition}:{expected}:{holder}")
    }

    /// `holder`'s membership of `role` until `expires_unix_ms`.
    pub fn member(role: &str, holder: &str, expires_unix_ms: i64) -> String {
        format!("member:{role}:{holder}:{expires_unix_ms}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::verdict_pb;

    fn created(id: &str) -> Vec<u8> {
        pb::GameCreated {
            created_unix_ms: 0,
            game_id: id.into(),
            ruleset: Some(pb::Ruleset {
                preset: "online".into(),
                overrides: None,
            }),
            start_sfen: Position::startpos().to_sfen(),
            handicap: String::new(),
            strict: false,
        }
        .encode_to_vec()
    }

    fn mv(id: &str, ply: u32, usi: &str) -> Vec<u8> {
        pb::MoveAccepted {
            received_unix_ms: 0,
            comment: String::new(),
            game_id: id.into(),
            ply,
            usi: usi.into(),
            sfen_after: String::new(),
            gives_check: false,
            position_hash: 0,
        }
        .encode_to_vec()
    }

    fn entry<'a>(sequence: u64, t: &'a str, payload: &'a [u8]) -> Entry<'a> {
        Entry {
            sequence,
            message_type: Some(t),
            payload,
        }
    }

    /// One check per bad entry: it is set aside with its reason, and the game goes on from its
    /// valid entries, its next write expecting the bad entry's sequence.
    #[test]
    fn bad_entries_are_set_aside_and_the_game_goes_on() {
        let id = "g";
        let resign = verdict_pb(
            id,
            &Verdict::reported(
                ResultCode::Resignation,
                Some(shogi_rules::Color::White),
                2,
                None,
            ),
        )
        .encode_to_vec();
        let mut unknown_code = pb::Verdict::decode(resign.as_slice()).unwrap();
        unknown_code.code = 999;
        let mut checkmate = pb::Verdict::decode(resign.as_slice()).unwrap();
        checkmate.code = pb::ResultCode::Checkmate as i32;
        let cases: Vec<(&str, Option<&str>, Vec<u8>, AsideReason)> = vec![
            (
                "random bytes",
                Some(MOVE_ACCEPTED_TYPE),
                vec![0xff, 0x01, 0x02],
                AsideReason::Garbage,
            ),
            (
                "random verdict",
                Some(VERDICT_TYPE),
                vec![0xff, 0xff, 0xff],
                AsideReason::Garbage,
            ),
            ("no type", None, mv(id, 2, "3c3d"), AsideReason::Garbage),
            (
                "wrong type",
                Some(crate::WARNING_TYPE),
                mv(id, 2, "3c3d"),
                AsideReason::Garbage,
            ),
            (
                "other game",
                Some(MOVE_ACCEPTED_TYPE),
                mv("h", 2, "3c3d"),
                AsideReason::Garbage,
            ),
            (
                "duplicate ply",
                Some(MOVE_ACCEPTED_TYPE),
                mv(id, 1, "7g7f"),
                AsideReason::OutOfOrder,
            ),
            (
                "gap",
                Some(MOVE_ACCEPTED_TYPE),
                mv(id, 4, "3c3d"),
                AsideReason::OutOfOrder,
            ),
            (
                "illegal",
                Some(MOVE_ACCEPTED_TYPE),
                mv(id, 2, "5a5c"),
                AsideReason::Illegal,
            ),
            (
                "unknown code",
                Some(VERDICT_TYPE),
                unknown_code.encode_to_vec(),
                AsideReason::BadEnding,
            ),
            (
                "undecided ending",
                Some(VERDICT_TYPE),
                checkmate.encode_to_vec(),
                AsideReason::BadEnding,
            ),
        ];
        for (name, t, payload, reason) in cases {
            let mut r = Replay::new(id, 1, &created(id)).unwrap();
            assert!(matches!(
                r.apply(entry(2, MOVE_ACCEPTED_TYPE, &mv(id, 1, "7g7f"))),
                Applied::Played { .. }
            ));
            let bad = Entry {
                sequence: 3,
                message_type: t,
                payload: &payload,
            };
            match r.apply(bad) {
                Applied::SetAside(s) => {
                    assert_eq!((s.sequence, s.reason), (3, reason), "{name}: {}", s.detail)
                }
                other => panic!("{name}: {other:?}"),
            }
            assert_eq!(
                (r.ply(), r.last_seq(), r.game().is_over()),
                (1, 3, false),
                "{name}"
            );
            assert!(
                matches!(
                    r.apply(entry(4, MOVE_ACCEPTED_TYPE, &mv(id, 2, "3c3d"))),
                    Applied::Played { .. }
                ),
                "{name}"
            );
            assert_eq!(
                r.apply(entry(4, MOVE_ACCEPTED_TYPE, &mv(id, 2, "3c3d"))),
                Applied::Duplicate
            );
            // The resignation at ply 2, now that the game is there.
            let resign_now = resign.clone();
            assert!(
                matches!(
                    r.apply(entry(5, VERDICT_TYPE, &resign_now)),
                    Applied::Ended(_)
                ),
                "{name}"
            );
            assert!(matches!(
                r.apply(entry(6, MOVE_ACCEPTED_TYPE, &mv(id, 3, "2g2f"))),
                Applied::SetAside(SetAside {
                    reason: AsideReason::AfterEnd,
                    ..
                })
            ));
            assert_eq!(r.set_aside(), 2, "{name}");
        }
    }

    #[test]
    fn an_unreadable_creation_is_the_only_unreadable_game() {
        assert!(Replay::new("g", 1, &[0xff, 0xff]).is_err());
        assert!(Replay::new("h", 1, &created("g")).is_err());
        assert!(Replay::new("g", 1, &created("g")).is_ok());
    }
}
