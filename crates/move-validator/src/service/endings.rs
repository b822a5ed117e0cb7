//! The endings a call decides: Declare (a jishogi declaration, 入玉宣言), EvaluateImpasse
//! (the declaration's points, without declaring) and EndGame (a result reported by the
//! platform: resignation, timeout, abort, agreement).

use super::gamelog::{Settled, SettledBy};
use super::{MAX_ATTEMPTS, Validator, game_over};
use crate::config::Announcements;
use crate::error::Error;
use crate::games;
use crate::store::Published;
use shogi_adjudication::{
    DeclarationRule, Evidence, GameError, ResultCode, Ruleset, evaluate_declaration,
};
use shogi_proto::convert::{self, check_game_id, parse_sfen, verdict_pb};
use shogi_proto::event::{Envelope, LogEntry};
use shogi_proto::v1 as pb;

/// The longest `note` an EndGame request may carry, in bytes (a protocol line, not a document).
const MAX_NOTE_LEN: usize = 256;

impl Validator {
    /// Declare: the declaration judged; one that ends the game goes into its log as its
    /// verdict.
    pub(super) async fn declare(
        &self,
        req: pb::DeclareRequest,
    ) -> Result<pb::DeclareResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        let declarer = convert::color_from_pb(req.declarer)
            .ok_or_else(|| Error::invalid("declarer", "must be COLOR_BLACK or COLOR_WHITE"))?;
        // With the arbiter's clock, condition 5 (time left) is decided by when the declaration
        // came, and `has_time` is not asked (docs/rules.md section 9).
        let received = self.now();
        let mut guard = self.fresh(&req.game_id).await?;
        for _ in 0..MAX_ATTEMPTS {
            let replay = guard
                .as_mut()
                .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
            if let Some(v) = replay.game().verdict() {
                // A retry of the declaration that ended the game gets the same answer.
                if let Evidence::Declaration(report) = &v.evidence
                    && report.declarer == declarer
                    && (report.has_time == req.has_time || replay.game().clock().is_some())
                {
                    return Ok(pb::DeclareResponse {
                        report: Some(convert::report_pb(report)),
                        verdict: games::verdict(replay),
                    });
                }
                return Err(game_over(replay, v));
            }
            let declared_at = replay.ply();
            let mut game = replay.game().clone();
            let declared = if game.clock().is_some() {
                game.declare_at(declarer, convert::from_unix_ms(received))
            } else {
                game.declare(declarer, req.has_time)
            }
            .map_err(|e| match e {
                GameError::NoDeclarationRule => Error::DeclarationNotAllowed(req.game_id.clone()),
                other => Error::FailedPrecondition(other.to_string()),
            })?;
            let report = convert::report_pb(&declared.report);
            let verdict = declared.verdict.as_ref().map(|v| pb::Verdict {
                received_unix_ms: received,
                ..verdict_pb(replay.id(), v)
            });
            // A declaration that ends the game goes into the log as its verdict; a refused one
            // changes nothing and is only announced.
            if let Some(v) = &verdict {
                match self.append(replay, LogEntry::Ending(v.clone())).await? {
                    Published::Stored(seq) => replay.commit_ending(seq, game, received),
                    // A retry (the loop's first check answers it) or another writer: read the
                    // log and judge again.
                    Published::Duplicate(_) | Published::Conflict => {
                        self.after_conflict(&mut guard).await?;
                        continue;
                    }
                }
            }
            let id = replay.id().to_owned();
            let event = pb::Declaration {
                game_id: id.clone(),
                ply: declared_at,
                declarer: req.declarer,
                has_time: report.has_time,
                report: Some(report.clone()),
            };
            self.notify(&id, Envelope::declaration(&event)).await;
            // The answer waits for the verdict on `.result` when it could not be recorded now
            // and the impasse-judge's announcement is to be checked first.
            let settled = self.settle(replay, SettledBy::Call).await;
            if settled == Settled::Pending && self.inner.announcements == Announcements::ByOwners {
                drop(guard);
                self.wait_for_result(&id).await?;
            }
            tracing::info!(game_id = %id, ply = declared_at, outcome = %report.outcome, "declaration");
            return Ok(pb::DeclareResponse {
                report: Some(report),
                verdict,
            });
        }
        Err(Error::Contended(req.game_id))
    }

    /// EvaluateImpasse: the declaration report of a game's side to move, or of a position.
    pub(super) async fn evaluate_impasse(
        &self,
        req: pb::EvaluateImpasseRequest,
    ) -> Result<pb::EvaluateImpasseResponse, Error> {
        use pb::evaluate_impasse_request::Target;
        let report = match req.target {
            None => return Err(Error::invalid("target", "give a game_id or an sfen")),
            Some(Target::GameId(id)) => {
                check_game_id("game_id", &id)?;
                let guard = self.fresh(&id).await?;
                let replay = guard.as_ref().ok_or_else(|| Error::NotFound(id.clone()))?;
                let game = replay.game();
                game.declaration_report(game.side_to_move(), req.has_time)
                    .ok_or_else(|| Error::DeclarationNotAllowed(id.clone()))?
            }
            Some(Target::Sfen(sfen)) => {
                let pos = parse_sfen("sfen", &sfen)?;
                let rule = if req.rule.is_empty() {
                    DeclarationRule::Points27
                } else {
                    req.rule
                        .parse()
                        .map_err(|e: shogi_adjudication::UnknownName| {
                            Error::invalid("rule", e.to_string())
                        })?
                };
                let initial = if req.initial_sfen.is_empty() {
                    None
                } else {
                    Some(parse_sfen("initial_sfen", &req.initial_sfen)?)
                };
                evaluate_declaration(&pos, initial.as_ref(), rule)
            }
        };
        Ok(pb::EvaluateImpasseResponse {
            report: Some(convert::report_pb(&report)),
        })
    }

    /// EndGame: the reported ending recorded in the game's log as its verdict.
    pub(super) async fn end_game(
        &self,
        req: pb::EndGameRequest,
    ) -> Result<pb::EndGameResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        let reason = pb::EndReason::try_from(req.reason).unwrap_or(pb::EndReason::Unspecified);
        let loser = convert::color_from_pb(req.loser);
        if req.note.len() > MAX_NOTE_LEN {
            return Err(Error::invalid(
                "note",
                format!("at most {MAX_NOTE_LEN} bytes, not {}", req.note.len()),
            ));
        }
        let received = self.now();
        let mut guard = self.fresh(&req.game_id).await?;
        for _ in 0..MAX_ATTEMPTS {
            let replay = guard
                .as_mut()
                .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
            let ruleset: Ruleset = *replay.game().ruleset();
            let (code, winner, ordinary) = match reason {
                pb::EndReason::Unspecified => {
                    return Err(Error::invalid("reason", "must be set"));
                }
                pb::EndReason::Resignation
                | pb::EndReason::Timeout
                | pb::EndReason::IllegalMove => {
                    let loser = loser.ok_or_else(|| {
                        Error::invalid(
                            "loser",
                            "a resignation, timeout or illegal move names the losing side",
                        )
                    })?;
                    let code = match reason {
                        pb::EndReason::Resignation => ResultCode::Resignation,
                        pb::EndReason::Timeout => ResultCode::Timeout,
                        _ => ResultCode::IllegalMove,
                    };
                    (code, Some(!loser), None)
                }
                pb::EndReason::Abort => (ResultCode::Abort, None, None),
                pb::EndReason::JishogiAgreement => {
                    (ResultCode::Agreement, None, Some(ruleset.jishogi))
                }
            };
            if let Some(v) = replay.game().verdict() {
                // The same ending reported again is a retry.
                if v.code == code && v.winner == winner {
                    return Ok(pb::EndGameResponse {
                        verdict: games::verdict(replay),
                    });
                }
                return Err(game_over(replay, v));
            }
            let mut game = replay.game().clone();
            let at = convert::from_unix_ms(received);
            let verdict = match (code, game.clock().is_some()) {
                // With the arbiter's clock, a resignation is judged at its receipt (a late one
                // is a time-up), and a reported timeout only stands if the clock says so.
                (ResultCode::Resignation, true) => game
                    .resign_at(!winner.unwrap_or(shogi_rules::Color::White), at)
                    .map_err(|e| Error::FailedPrecondition(e.to_string()))?
                    .clone(),
                // An illegal move the platform judged: at its receipt as a resignation (with or
                // without a clock), at the ply it was meant for, with the platform's note.
                (ResultCode::IllegalMove, _) => game
                    .report_loss_at(
                        code,
                        !winner.unwrap_or(shogi_rules::Color::White),
                        &req.note,
                        at,
                    )
                    .map_err(|e| Error::FailedPrecondition(e.to_string()))?
                    .clone(),
                (ResultCode::Timeout, true) => game.flag(at).ok_or_else(|| {
                    let deadline = game.clock().and_then(|c| c.deadline_ms());
                    Error::FailedPrecondition(format!(
                        "the arbiter keeps this game's clock, and the side to move is not out \
                         of time at {at} ms (its deadline: {})",
                        deadline.map_or("none".to_owned(), |d| format!("{d} ms"))
                    ))
                })?,
                _ => game
                    .record_result(code, winner, ordinary)
                    .map_err(|e| Error::FailedPrecondition(e.to_string()))?
                    .clone(),
            };
            let message = pb::Verdict {
                received_unix_ms: received,
                ..verdict_pb(replay.id(), &verdict)
            };
            match self
                .append(replay, LogEntry::Ending(message.clone()))
                .await?
            {
                Published::Stored(seq) => {
                    replay.commit_ending(seq, game, received);
                    tracing::info!(game_id = %replay.id(), ply = replay.ply(), code = code.as_str(), "game ended");
                    self.settle(replay, SettledBy::Call).await;
                    return Ok(pb::EndGameResponse {
                        verdict: Some(message),
                    });
                }
                Published::Duplicate(_) | Published::Conflict => {
                    self.after_conflict(&mut guard).await?;
                }
            }
        }
        Err(Error::Contended(req.game_id))
    }
}
