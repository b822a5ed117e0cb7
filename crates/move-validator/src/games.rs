//! One game as this instance knows it: the adjudication [`Game`] plus what the service needs to
//! answer retries identically and to write to the bus in order. Built from the game's log on the
//! bus and kept up to date from it, so that any instance can serve any game.
//!
//! The log is the `.move` subject: every accepted move (`MoveAccepted`) and, for an ending that
//! does not follow from the moves (a platform report, a declaration, a forfeited illegal move),
//! the `Verdict` that ended the game, marked by the `Shogi-Message-Type` header. Writers guard
//! it with the subject's expected last sequence, so the log has one order that every instance
//! agrees on, and nothing can be appended after a verdict by a writer that has read it.

use crate::convert::{self, verdict_pb, warning_pb};
use crate::error::Error;
use crate::store::Message;
use prost::Message as _;
use shogi_adjudication::{Game, GameError, PlyOutcome, ResultCode};
use shogi_proto::v1 as pb;
use shogi_rules::{Move, Position};

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
    /// The stream sequence of the last log (`.move`) event read, 0 before the first: the
    /// expected last sequence of the next write.
    pub last_seq: u64,
    /// The stream sequence of the creation event; the log starts after it.
    pub created_seq: u64,
}

impl GameEntry {
    /// A game from its creation event stored at `seq` (its log starts after it).
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
            last_seq: 0,
            created_seq: seq,
        })
    }

    /// Where the next read of the log starts.
    pub fn read_from(&self) -> u64 {
        self.last_seq.max(self.created_seq) + 1
    }

    /// Plies played.
    pub fn ply(&self) -> u32 {
        self.game.plies()
    }

    /// The game's verdict as a message.
    pub fn verdict_pb(&self) -> Option<pb::Verdict> {
        self.game.verdict().map(|v| verdict_pb(&self.id, v))
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

    /// Applies the next event of the game's log, in stream order.
    pub fn apply(&mut self, msg: &Message) -> Result<(), Error> {
        let seq = msg.sequence;
        if seq <= self.last_seq {
            return Ok(());
        }
        self.last_seq = seq;
        let corrupt = |reason: String| Error::CorruptEvent {
            game_id: self.id.clone(),
            sequence: seq,
            reason,
        };
        let kind = msg.message_type.clone();
        if self.game.is_over() && kind.as_deref() == Some(shogi_proto::VERDICT_TYPE) {
            // The log's copy of an ending that followed from the moves (the watcher or the
            // judge writes it there to close the log): this game already knows it.
            tracing::debug!(game_id = %self.id, seq, "the log's copy of the verdict");
            return Ok(());
        }
        if self.game.is_over() {
            // Writers read the log before appending, so this does not happen; if it does, the
            // first ending stands.
            tracing::warn!(game_id = %self.id, seq, "event after the game's end ignored");
            return Ok(());
        }
        if kind.as_deref() == Some(shogi_proto::VERDICT_TYPE) {
            let v = pb::Verdict::decode(msg.payload.clone()).map_err(|e| corrupt(e.to_string()))?;
            return self
                .apply_verdict(&v)
                .map_err(|reason| Error::CorruptEvent {
                    game_id: self.id.clone(),
                    sequence: seq,
                    reason,
                });
        }
        let m =
            pb::MoveAccepted::decode(msg.payload.clone()).map_err(|e| corrupt(e.to_string()))?;
        if m.ply != self.ply() + 1 {
            return Err(corrupt(format!("ply {} after ply {}", m.ply, self.ply())));
        }
        let mv = Move::from_usi(&m.usi).map_err(|e| corrupt(e.to_string()))?;
        let (game, outcome) = self.trial(mv).map_err(|e| corrupt(e.to_string()))?;
        self.commit(game, &outcome, mv);
        Ok(())
    }

    /// An ending written to the log: judged again the same way from the same position.
    fn apply_verdict(&mut self, v: &pb::Verdict) -> Result<(), String> {
        let code = convert::result_code_from_pb(v.code)
            .ok_or_else(|| format!("unknown result code {}", v.code))?;
        match (code, &v.evidence) {
            (
                ResultCode::Resignation
                | ResultCode::Timeout
                | ResultCode::Abort
                | ResultCode::Agreement,
                _,
            ) => {
                let winner = convert::color_from_pb(v.winner);
                let ordinary = convert::ordinary_from_pb(v.ordinary_result);
                self.game
                    .record_result(code, winner, ordinary)
                    .map_err(|e| e.to_string())?;
            }
            (ResultCode::IllegalMove, Some(pb::verdict::Evidence::IllegalMove(e))) => {
                let mv = Move::from_usi(&e.usi).map_err(|e| e.to_string())?;
                let (game, outcome) = self.trial(mv).map_err(|e| e.to_string())?;
                self.commit(game, &outcome, mv);
            }
            (ResultCode::Declaration, Some(pb::verdict::Evidence::Declaration(r))) => {
                let declarer =
                    convert::color_from_pb(r.declarer).ok_or("declaration without a declarer")?;
                self.game
                    .declare(declarer, r.has_time)
                    .map_err(|e| e.to_string())?;
            }
            _ => return Err(format!("verdict {} cannot be replayed", code.as_str())),
        }
        if self.game.is_over() {
            Ok(())
        } else {
            Err("the replayed ending did not end the game".into())
        }
    }
}
