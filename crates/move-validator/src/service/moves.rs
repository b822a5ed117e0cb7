//! SubmitMove, played against the game's log with a guarded append and retried after a lost
//! race; and ValidateMove and LegalMoves, pure, with no game involved.

use super::gamelog::SettledBy;
use super::{MAX_ATTEMPTS, Validator, game_over};
use crate::error::{Error, PlyConflict};
use crate::games;
use crate::store::Published;
use arbiter_telemetry::metrics;
use shogi_adjudication::GameError;
use shogi_proto::convert::{self, check_game_id, parse_sfen, parse_usi};
use shogi_proto::event::LogEntry;
use shogi_proto::log::Replay;
use shogi_proto::v1 as pb;

/// The longest comment a move carries (SubmitMoveRequest `comment`): a CSA line's longest.
const MAX_COMMENT_LEN: usize = 8192;

impl Validator {
    /// SubmitMove: the move judged and stored; in strict mode (the call's or the game's), the
    /// answer that ends the game waits for the verdict's announcement.
    pub(super) async fn submit_move(
        &self,
        req: pb::SubmitMoveRequest,
        strict: bool,
    ) -> Result<pb::SubmitMoveResponse, Error> {
        let answer = self.submit_move_now(req).await?;
        if let Some(v) = &answer.verdict
            && self.waits_for_result(&v.game_id, strict).await
        {
            self.wait_for_result(&v.game_id).await?;
        }
        Ok(answer)
    }

    /// Whether an answer that ends the game waits for its verdict on `.result`: in strict mode
    /// (the call's or the game's), unless this instance knows the verdict is recorded there.
    async fn waits_for_result(&self, id: &str, strict: bool) -> bool {
        match self.cached(id).await {
            Ok(guard) => match guard.as_ref() {
                Some(r) => (strict || r.strict()) && !r.result_recorded(),
                None => strict,
            },
            Err(_) => strict,
        }
    }

    async fn submit_move_now(
        &self,
        req: pb::SubmitMoveRequest,
    ) -> Result<pb::SubmitMoveResponse, Error> {
        let mv = checked_move(&req)?;
        let usi = mv.to_string();
        // The move's receipt: what the clock charges it from (docs/rules.md section 9), taken
        // before anything waits, so that a slow bus never makes a move late.
        let received = self.now();
        let mut guard = self.cached(&req.game_id).await?;
        let mut caught_up = false;
        for _ in 0..MAX_ATTEMPTS {
            let replay = guard
                .as_mut()
                .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
            let next = replay.ply() + 1;
            // A retry of a ply already played, or of the forfeit that ended the game.
            if req.ply < next {
                if let Some(answer) = games::answer(replay, req.ply)
                    .filter(|_| replay.game().moves().nth(req.ply as usize - 1) == Some(mv))
                {
                    return Ok(answer);
                }
                // Refused; read the bus first so that the refusal names the current ply.
                if !caught_up {
                    self.catch_up(replay).await?;
                }
                return Err(ply_error(PlyConflict::Taken, replay, req.ply));
            }
            if replay
                .forfeit()
                .is_some_and(|f| f.ply == req.ply && f.mv == mv)
                && let Some(answer) = games::forfeit_answer(replay)
            {
                return Ok(answer);
            }
            if req.ply > next || replay.game().is_over() {
                // This instance may be behind the bus: look once before refusing.
                if !caught_up {
                    self.catch_up(replay).await?;
                    caught_up = true;
                    continue;
                }
                if let Some(v) = replay.game().verdict() {
                    return Err(game_over(replay, v));
                }
                return Err(ply_error(PlyConflict::Ahead, replay, req.ply));
            }
            // Played on the cached game in place, pending its write; if the write does not
            // store it, the game is read again from the bus.
            let played = match replay.play(mv, received) {
                Ok(played) => played,
                Err(GameError::Illegal(_)) if !caught_up => {
                    // Nothing is written for a refusal, so nothing would tell a stale instance
                    // that the ply is taken: read the log before refusing.
                    self.catch_up(replay).await?;
                    caught_up = true;
                    continue;
                }
                Err(GameError::Illegal(illegal)) => {
                    metrics().count_move("SubmitMove", "rejected", Some(illegal.kind.as_str()));
                    let pos = replay.game().position();
                    return Ok(pb::SubmitMoveResponse {
                        clock: convert::clock_pb(replay.game()),
                        outcome: pb::MoveOutcome::Rejected as i32,
                        illegal_kind: convert::illegal_kind_pb(illegal.kind),
                        ply: req.ply,
                        sfen_after: pos.to_sfen(),
                        gives_check: false,
                        verdict: None,
                        warnings: Vec::new(),
                        position_hash: pos.hash(),
                        charged_ms: None,
                    });
                }
                Err(GameError::GameOver) => {
                    return Err(match replay.game().verdict() {
                        Some(v) => game_over(replay, v),
                        None => Error::FailedPrecondition("the game is over".into()),
                    });
                }
                Err(GameError::NoDeclarationRule) => {
                    return Err(Error::DeclarationNotAllowed(replay.id().to_owned()));
                }
            };
            // The deadline of the turn this move starts is scheduled before the move is
            // stored, so that no turn starts without its flag (`flag.rs`).
            if let Err(e) = self.schedule_deadline(replay, None).await {
                *guard = None;
                self.forget(&req.game_id);
                return Err(e);
            }
            let entry = replay.entry(&played, &req.comment);
            // A forfeited illegal move, or a move after its side's deadline: not played, its
            // entry the ending.
            let unplayed = matches!(entry, LogEntry::Ending(_));
            let published = match self.append(replay, entry).await {
                Ok(published) => published,
                Err(e) => {
                    // The cached game is ahead of the log: read it again next time.
                    *guard = None;
                    self.forget(&req.game_id);
                    return Err(e);
                }
            };
            match published {
                Published::Stored(seq) => {
                    replay.stored(seq, played);
                    if unplayed {
                        let answer = games::forfeit_answer(replay)
                            .ok_or_else(|| Error::Contended(replay.id().to_owned()))?;
                        if answer.outcome == pb::MoveOutcome::TimeUp as i32 {
                            tracing::info!(game_id = %replay.id(), ply = req.ply, %usi, received, "move after its side's deadline: time-up");
                            metrics().count_move("SubmitMove", "time_up", None);
                        } else {
                            tracing::info!(game_id = %replay.id(), ply = req.ply, %usi, "move forfeited");
                            let kind = convert::illegal_kind_name(answer.illegal_kind);
                            metrics().count_move("SubmitMove", "forfeited", Some(kind));
                        }
                        self.settle(replay, SettledBy::Call).await;
                        return Ok(answer);
                    }
                    tracing::info!(game_id = %replay.id(), ply = req.ply, %usi, "move accepted");
                    metrics().count_move("SubmitMove", "accepted", None);
                    self.publish_warnings(replay).await;
                    self.settle(replay, SettledBy::Call).await;
                    return games::answer(replay, req.ply)
                        .ok_or_else(|| Error::Contended(replay.id().to_owned()));
                }
                // Someone (a retry through another instance, or another writer) got there
                // first: read what they wrote and decide again.
                Published::Duplicate(_) | Published::Conflict => {
                    tracing::debug!(game_id = %replay.id(), ply = req.ply, %usi, "lost a race, reading the game again");
                    self.reload(&mut guard, &req.game_id).await?;
                    caught_up = true;
                }
            }
        }
        Err(Error::Contended(req.game_id))
    }
}

/// The move of a SubmitMove request whose fields are well formed; else which is not.
fn checked_move(req: &pb::SubmitMoveRequest) -> Result<shogi_rules::Move, Error> {
    check_game_id("game_id", &req.game_id)?;
    if req.ply == 0 {
        return Err(Error::invalid("ply", "plies start at 1"));
    }
    let mv = parse_usi("usi", &req.usi)?;
    if req.comment.len() > MAX_COMMENT_LEN {
        return Err(Error::invalid(
            "comment",
            format!("at most {MAX_COMMENT_LEN} bytes, not {}", req.comment.len()),
        ));
    }
    Ok(mv)
}

fn ply_error(conflict: PlyConflict, replay: &Replay, requested: u32) -> Error {
    Error::Ply {
        conflict,
        game_id: replay.id().to_owned(),
        requested,
        current_ply: replay.ply(),
    }
}

/// ValidateMove: pure, no game involved.
pub fn validate_move(req: &pb::ValidateMoveRequest) -> Result<pb::ValidateMoveResponse, Error> {
    let pos = parse_sfen("sfen", &req.sfen)?;
    let mv = parse_usi("usi", &req.usi)?;
    Ok(match pos.check_move(mv) {
        Ok(()) => {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            let gives_check = after.in_check();
            let no_legal_reply = !after.has_legal_move();
            pb::ValidateMoveResponse {
                legal: true,
                illegal_kind: pb::IllegalKind::Unspecified as i32,
                sfen_after: after.to_sfen(),
                gives_check,
                is_checkmate: gives_check && no_legal_reply,
                no_legal_reply,
                position_hash: after.hash(),
                illegal_kind_name: String::new(),
            }
        }
        Err(illegal) => pb::ValidateMoveResponse {
            legal: false,
            illegal_kind: convert::illegal_kind_pb(illegal.kind),
            sfen_after: String::new(),
            gives_check: false,
            is_checkmate: false,
            no_legal_reply: false,
            position_hash: 0,
            illegal_kind_name: illegal.kind.as_str().to_owned(),
        },
    })
}

/// LegalMoves: pure, no game involved; the rules core's list, in its order.
pub fn legal_moves(req: &pb::LegalMovesRequest) -> Result<pb::LegalMovesResponse, Error> {
    let pos = parse_sfen("sfen", &req.sfen)?;
    Ok(pb::LegalMovesResponse {
        moves: pos.legal_moves().iter().map(|m| m.to_string()).collect(),
        in_check: pos.in_check(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Bus;
    use arbiter_bus::{FaultyBus, MemoryBus};
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    fn submit(ply: u32, usi: &str) -> pb::SubmitMoveRequest {
        pb::SubmitMoveRequest {
            game_id: "g".into(),
            ply,
            usi: usi.into(),
            strict: false,
            comment: String::new(),
        }
    }

    /// A SubmitMove cancelled while its write was in flight (its deadline: the future is
    /// dropped) leaves the cached game ahead of its log. The retry used to be answered ACCEPTED
    /// from that cache, for a move no server had stored (seen in the deadlines test about once
    /// in 60 runs); it is now read again from the bus and written.
    #[tokio::test]
    async fn a_retry_after_a_cancelled_write_is_not_answered_from_the_cache() {
        let holding = Arc::new(FaultyBus::new(MemoryBus::new(Duration::from_secs(120))));
        let bus: arbiter_bus::Bus = holding.clone();
        let (_stop, stop) = tokio::sync::watch::channel(false);
        let v = Validator::new(
            Bus::new(bus.clone()),
            stop,
            super::super::CacheLimits::default(),
            crate::Announcements::ByOwners,
            1 << 20,
        );
        v.create_game(
            pb::CreateGameRequest {
                ruleset: None,
                start: None,
                game_id: "g".into(),
                strict: false,
            },
            false,
            None,
        )
        .await
        .unwrap();
        v.submit_move_now(submit(1, "7g7f")).await.unwrap();

        holding.hold_log_writes.store(true, Ordering::SeqCst);
        let cancelled = tokio::time::timeout(
            Duration::from_millis(50),
            v.submit_move_now(submit(2, "3c3d")),
        )
        .await;
        assert!(cancelled.is_err(), "the held write cannot finish");
        holding.hold_log_writes.store(false, Ordering::SeqCst);

        let retry = v.submit_move_now(submit(2, "3c3d")).await.unwrap();
        assert_eq!(retry.outcome, pb::MoveOutcome::Accepted as i32);
        let log = shogi_proto::subject::moves("g");
        let first = bus.next(&log, 1).await.unwrap().expect("ply 1 stored");
        let second = bus.next(&log, first.sequence + 1).await.unwrap();
        assert!(
            second.is_some(),
            "ply 2 was answered ACCEPTED and never stored"
        );
    }
}
