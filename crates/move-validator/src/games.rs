//! One game as this instance knows it: the adjudication [`Game`] plus what the service needs to
//! answer retries identically and to write to the bus in order. Built from the game's events on
//! the bus and kept up to date from them, so that any instance can serve any game.
//!
//! Event order is stream order. A `.move` event for a game already decided (possible only when
//! a move from one instance races a verdict from another) is void, and so is a declaration made
//! at another ply than the one it names.

use crate::convert::{self, verdict_pb, warning_pb};
use crate::error::Error;
use async_nats::jetstream::message::StreamMessage;
use prost::Message as _;
use shogi_adjudication::{Game, GameError, PlyOutcome, ResultCode};
use shogi_proto::v1 as pb;
use shogi_rules::{Move, Position};
use std::collections::BTreeSet;

/// One accepted ply and the answer it got.
#[derive(Debug, Clone)]
pub struct PlyRecord {
    /// The move, USI as submitted (canonical: parsed and printed back).
    pub usi: String,
    /// The position after it.
    pub sfen_after: String,
    /// Whether it gave check.
    pub gives_check: bool,
    /// The position hash after it.
    pub hash: u64,
    /// The verdict it decided, if any.
    pub verdict: Option<pb::Verdict>,
    /// The warnings it raised.
    pub warnings: Vec<pb::Warning>,
}

/// A forfeited illegal move (the `forfeit` policy): not a ply, but its answer is kept for
/// retries.
#[derive(Debug, Clone)]
pub struct Forfeit {
    /// The ply it was submitted for.
    pub ply: u32,
    /// The move, USI.
    pub usi: String,
    /// The verdict.
    pub verdict: pb::Verdict,
}

/// A game and its place on the bus.
#[derive(Debug)]
pub struct GameEntry {
    /// The game id.
    pub id: String,
    /// The creation event.
    pub created: pb::GameCreated,
    /// The game, judged ply by ply.
    pub game: Game,
    /// `plies[p - 1]` is ply `p`.
    pub plies: Vec<PlyRecord>,
    /// The forfeited move that ended the game, if one did.
    pub forfeit: Option<Forfeit>,
    /// The last stream sequence read for this game (any of its subjects).
    pub last_seq: u64,
    /// The last sequence on `.move` (0: none), the expected sequence for the next move.
    pub last_move_seq: u64,
    /// The last sequence on `.declare` (0: none).
    pub last_declare_seq: u64,
    /// The sequence of the game's `.verdict` message, once one is stored.
    pub verdict_seq: Option<u64>,
    /// Sequences this instance published and already applied, past `last_seq`; skipped when
    /// read back.
    own: BTreeSet<u64>,
}

impl GameEntry {
    /// A game from its creation event stored at `seq`.
    pub fn from_created(created: pb::GameCreated, seq: u64) -> Result<GameEntry, Error> {
        let corrupt = |reason: String| Error::CorruptEvent {
            game_id: created.game_id.clone(),
            sequence: seq,
            reason,
        };
        let ruleset = convert::ruleset_from_pb(created.ruleset.as_ref())
            .map_err(|e| corrupt(e.to_string()))?;
        let start = Position::from_sfen(&created.start_sfen).map_err(|e| corrupt(e.to_string()))?;
        Ok(GameEntry {
            id: created.game_id.clone(),
            game: Game::new(start, ruleset),
            created,
            plies: Vec::new(),
            forfeit: None,
            last_seq: seq,
            last_move_seq: 0,
            last_declare_seq: 0,
            verdict_seq: None,
            own: BTreeSet::new(),
        })
    }

    /// Plies played.
    pub fn ply(&self) -> u32 {
        self.game.plies()
    }

    /// The game's verdict as a message.
    pub fn verdict_pb(&self) -> Option<pb::Verdict> {
        self.game.verdict().map(|v| verdict_pb(&self.id, v))
    }

    /// Marks a sequence this instance published and applied itself.
    pub fn applied_own(&mut self, seq: u64) {
        if seq > self.last_seq {
            self.own.insert(seq);
        }
    }

    /// Whether `seq` is an event this instance published and applied itself.
    pub fn is_own(&self, seq: u64) -> bool {
        self.own.contains(&seq)
    }

    /// Moves the read position to `seq`: the caller knows that every event of this game up to
    /// `seq` has been applied.
    pub fn advance_to(&mut self, seq: u64) {
        self.last_seq = self.last_seq.max(seq);
        self.own = self.own.split_off(&(self.last_seq + 1));
    }

    /// Plays `mv` on a copy of the game: the copy and what the ply did, or why not.
    pub fn trial(&self, mv: Move) -> Result<(Game, PlyOutcome), GameError> {
        let mut game = self.game.clone();
        let outcome = game.play(mv)?;
        Ok((game, outcome))
    }

    /// Takes `game` (from [`GameEntry::trial`]) as the game's new state.
    pub fn commit(&mut self, game: Game, outcome: &PlyOutcome, mv: Move) {
        self.game = game;
        let verdict = outcome.verdict.as_ref().map(|v| verdict_pb(&self.id, v));
        if outcome.ply > self.plies.len() as u32 && self.game.plies() == outcome.ply {
            let pos = self.game.position();
            self.plies.push(PlyRecord {
                usi: mv.to_string(),
                sfen_after: pos.to_sfen(),
                gives_check: outcome.gave_check,
                hash: pos.hash(),
                verdict,
                warnings: outcome
                    .warnings
                    .iter()
                    .map(|w| warning_pb(&self.id, w))
                    .collect(),
            });
        } else if let Some(verdict) = verdict {
            // Not played: a forfeited illegal move.
            self.forfeit = Some(Forfeit {
                ply: outcome.ply,
                usi: mv.to_string(),
                verdict,
            });
        }
    }

    /// The answer SubmitMove gave for ply `ply`, if that ply was played.
    pub fn answer(&self, ply: u32) -> Option<pb::SubmitMoveResponse> {
        let rec = self.plies.get(ply.checked_sub(1)? as usize)?;
        Some(pb::SubmitMoveResponse {
            outcome: pb::MoveOutcome::Accepted as i32,
            illegal_kind: pb::IllegalKind::Unspecified as i32,
            ply,
            sfen_after: rec.sfen_after.clone(),
            gives_check: rec.gives_check,
            verdict: rec.verdict.clone(),
            warnings: rec.warnings.clone(),
            position_hash: rec.hash,
        })
    }

    /// The answer for a forfeited move.
    pub fn forfeit_answer(&self, forfeit: &Forfeit) -> pb::SubmitMoveResponse {
        let kind = match &forfeit.verdict.evidence {
            Some(pb::verdict::Evidence::IllegalMove(e)) => e.kind,
            _ => pb::IllegalKind::Unspecified as i32,
        };
        pb::SubmitMoveResponse {
            outcome: pb::MoveOutcome::Forfeited as i32,
            illegal_kind: kind,
            ply: forfeit.ply,
            sfen_after: self.game.position().to_sfen(),
            gives_check: false,
            verdict: Some(forfeit.verdict.clone()),
            warnings: Vec::new(),
            position_hash: self.game.position().hash(),
        }
    }

    /// The game's state as a message.
    pub fn state(&self) -> pb::GameState {
        let pos = self.game.position();
        pb::GameState {
            game_id: self.id.clone(),
            ruleset: self.created.ruleset.clone(),
            start_sfen: self.created.start_sfen.clone(),
            sfen: pos.to_sfen(),
            ply: self.ply(),
            side_to_move: convert::color_pb(pos.side_to_move()),
            in_check: pos.in_check(),
            moves: self.plies.iter().map(|p| p.usi.clone()).collect(),
            verdict: self.verdict_pb(),
            position_hash: pos.hash(),
        }
    }

    /// Applies one event read from the bus, in stream order. Events this instance published
    /// and applied itself are skipped.
    pub fn apply(&mut self, msg: &StreamMessage) -> Result<(), Error> {
        let seq = msg.sequence;
        if seq <= self.last_seq {
            return Ok(());
        }
        self.last_seq = seq;
        // Drop the own sequences we have now passed; skip this one if it is ours.
        let ours = self.own.remove(&seq);
        self.own = self.own.split_off(&seq);
        let kind = msg.subject.rsplit('.').next().unwrap_or_default();
        match kind {
            "move" => self.last_move_seq = seq,
            "declare" => self.last_declare_seq = seq,
            "verdict" => self.verdict_seq = Some(seq),
            _ => {}
        }
        if ours {
            return Ok(());
        }
        let corrupt = |reason: String| Error::CorruptEvent {
            game_id: self.id.clone(),
            sequence: seq,
            reason,
        };
        match kind {
            "move" => {
                let m = pb::MoveAccepted::decode(msg.payload.clone())
                    .map_err(|e| corrupt(e.to_string()))?;
                if self.game.is_over() || m.ply != self.ply() + 1 {
                    tracing::warn!(game_id = %self.id, ply = m.ply, seq, "void move event");
                    return Ok(());
                }
                let mv = Move::from_usi(&m.usi).map_err(|e| corrupt(e.to_string()))?;
                let (game, outcome) = self.trial(mv).map_err(|e| corrupt(e.to_string()))?;
                self.commit(game, &outcome, mv);
            }
            "declare" => {
                let d = pb::Declaration::decode(msg.payload.clone())
                    .map_err(|e| corrupt(e.to_string()))?;
                let declarer = convert::color_from_pb(d.declarer)
                    .ok_or_else(|| corrupt("declaration without a declarer".into()))?;
                if self.game.is_over() || d.ply != self.ply() {
                    tracing::warn!(game_id = %self.id, ply = d.ply, seq, "void declaration event");
                    return Ok(());
                }
                // Refused declarations and lost ones alike: the game judges again, the same way.
                let _ = self.game.declare(declarer, d.has_time);
            }
            "verdict" => {
                let v =
                    pb::Verdict::decode(msg.payload.clone()).map_err(|e| corrupt(e.to_string()))?;
                if self.game.is_over() {
                    return Ok(());
                }
                let code = convert::result_code_from_pb(v.code)
                    .ok_or_else(|| corrupt(format!("unknown result code {}", v.code)))?;
                match code {
                    ResultCode::Resignation
                    | ResultCode::Timeout
                    | ResultCode::Abort
                    | ResultCode::Agreement => {
                        let winner = convert::color_from_pb(v.winner);
                        let ordinary = convert::ordinary_from_pb(v.ordinary_result);
                        let _ = self.game.record_result(code, winner, ordinary);
                    }
                    ResultCode::IllegalMove => {
                        let Some(pb::verdict::Evidence::IllegalMove(e)) = &v.evidence else {
                            return Err(corrupt("illegal-move verdict without its move".into()));
                        };
                        if v.ply == self.ply() + 1 {
                            let mv = Move::from_usi(&e.usi).map_err(|e| corrupt(e.to_string()))?;
                            if let Ok((game, outcome)) = self.trial(mv) {
                                self.commit(game, &outcome, mv);
                            }
                        }
                    }
                    // Every other ending follows from the moves already applied.
                    _ => {}
                }
            }
            // Warnings follow from the moves; a second creation event cannot be stored.
            _ => {}
        }
        Ok(())
    }
}
