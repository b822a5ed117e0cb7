//! The game log as this service writes it, and the one place an ending is settled.
//!
//! Who decides and who audits: the validator judges every ply with the whole adjudication layer,
//! so the call that stores the entry deciding an ending (a move, a forfeit, a declaration, a
//! report, a creation at a decided start) knows its verdict, and settles it
//! ([`Validator::settle`]): recorded on the game's `.result`, which the stream republishes to
//! `shogi.verdict.<id>` for the platforms. The owners of the endings (the repetition-watcher
//! and the impasse-judge, `ResultCode::announcer`) judge the same log and announce the verdict
//! on `.verdict`; the check of every announcement (`check.rs`) settles it again, which writes
//! nothing when this instance knows `.result` holds it, finds it there when another instance
//! recorded it, and records it when the first record was lost (the instance that stored the
//! entry killed before it). Running alone ([`Announcements::ByValidator`]), this service owns
//! every ending, and settling one also announces it.

use super::{ANNOUNCE_DEADLINE, GAME_LOG, Validator};
use crate::config::Announcements;
use crate::error::Error;
use crate::games;
use crate::store::Published;
use arbiter_runtime::games::{Announced, publish_warnings};
use arbiter_telemetry::metrics;
use futures::StreamExt;
use shogi_proto::convert::{result_code_from_pb, warning_pb};
use shogi_proto::event::{Envelope, LogEntry, decode_verdict};
use shogi_proto::log::Replay;
use shogi_proto::subject;
use shogi_proto::v1 as pb;

/// Who settles an ending ([`Validator::settle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SettledBy {
    /// The call that stored the entry deciding it.
    Call,
    /// The creation of a game whose start position is decided (no legal move, an automatic
    /// declaration): no entry reaches the owners, so it is announced here whoever owns it.
    Creation,
    /// The check of an owner's announcement of it (`check.rs`).
    Check,
    /// The sweep over the live games (`sweep.rs`): an ending no call recorded (the instance
    /// killed first, the announcement missing), or a game abandoned. Running alone, it also
    /// announces, as the call would have.
    Sweep,
}

/// What [`Validator::settle`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settled {
    /// The log decides no ending: nothing to settle.
    Open,
    /// The verdict is on the game's `.result`.
    Recorded,
    /// The verdict could not be recorded now (the bus failed): the check of its announcement
    /// records it.
    Pending,
}

impl Validator {
    /// Appends `entry` to the game's log, guarded by the log's expected last sequence.
    pub(super) async fn append(
        &self,
        replay: &Replay,
        entry: LogEntry,
    ) -> Result<Published, Error> {
        let published = self
            .inner
            .bus
            .write(entry.envelope(replay.last_seq()))
            .await?;
        if let Published::Stored(_) = published {
            self.note_stored(replay.id());
        }
        Ok(published)
    }

    /// Publishes a notice on a game's `.declare` or `.warning` subject. The log already holds
    /// what it says (or it follows from the log), so a failure here is logged, not returned.
    pub(super) async fn notify(&self, id: &str, notice: Envelope) {
        let msg_id = notice.msg_id.clone();
        if let Err(e) = self.inner.bus.write(notice).await {
            tracing::warn!(game_id = id, msg_id, error = %e, "notice not published");
        }
    }

    /// After a ply is stored, running alone: its warnings go on the game's `.warning`, which
    /// the repetition-watcher fills otherwise.
    pub(super) async fn publish_warnings(&self, replay: &Replay) {
        if self.inner.announcements == Announcements::ByOwners || replay.last_warnings().is_empty()
        {
            return;
        }
        let id = replay.id();
        let bus = &self.inner.bus.inner;
        let warnings: Vec<_> = replay
            .last_warnings()
            .iter()
            .map(|w| warning_pb(id, w))
            .collect();
        if !bus.connected() {
            tracing::warn!(game_id = id, "warnings not published: not connected");
        } else if let Err(e) = publish_warnings(bus, warnings).await {
            tracing::warn!(game_id = id, error = %e, "warnings not published");
        }
    }

    /// Settles the ending the game's log decides, if any: the one place an ending reaches the
    /// platforms. The verdict is the log's, as this service's replay of it decides (the write
    /// that decided it was stored against the log's expected last sequence), so it needs no
    /// announcement to be checked against. It is recorded on the game's `.result` (the subject
    /// holds one message per game: the write expects it empty, and a conflict is read back),
    /// unless this replay knows it is there. Settled by a call while running alone, or by a
    /// creation, it is also announced on `.verdict`, as an owner would.
    pub(super) async fn settle(&self, replay: &mut Replay, by: SettledBy) -> Settled {
        let Some(verdict) = games::verdict(replay) else {
            return Settled::Open;
        };
        let settled = if replay.result_recorded() {
            Settled::Recorded
        } else {
            self.record(&verdict).await
        };
        if settled == Settled::Recorded {
            replay.note_result_recorded();
        }
        let announces = match by {
            SettledBy::Call | SettledBy::Sweep => {
                self.inner.announcements == Announcements::ByValidator
            }
            SettledBy::Creation => true,
            SettledBy::Check => false,
        };
        if announces {
            self.announce(&verdict).await;
        }
        settled
    }

    /// Records `verdict` on its game's `.result`.
    async fn record(&self, verdict: &pb::Verdict) -> Settled {
        let id = &verdict.game_id;
        let bus = &self.inner.bus.inner;
        if !bus.connected() {
            tracing::warn!(game_id = %id, "verdict not recorded on .result: not connected; its check will");
            return Settled::Pending;
        }
        match GAME_LOG.record(bus, verdict).await {
            Ok(Announced::Stored(seq)) => {
                tracing::debug!(game_id = %id, seq, "verdict recorded on .result");
                Settled::Recorded
            }
            Ok(Announced::Already) => Settled::Recorded,
            Err(e) => {
                tracing::warn!(game_id = %id, error = %e, "verdict not recorded on .result; its check will");
                Settled::Pending
            }
        }
    }

    /// Announces `verdict` on `.verdict` as the owner of every ending, running alone: the
    /// subject holds one message per game (the publish expects it empty), and an entry there
    /// that is not this verdict is set aside, never taken for an announcement
    /// (`GameLog::announce`).
    async fn announce(&self, verdict: &pb::Verdict) {
        let id = &verdict.game_id;
        let bus = &self.inner.bus.inner;
        if !bus.connected() {
            tracing::warn!(game_id = %id, "verdict not announced: not connected");
            return;
        }
        match GAME_LOG.announce(bus, verdict).await {
            Ok(Announced::Stored(_)) => {
                let code = result_code_from_pb(verdict.code).map_or("?", |c| c.as_str());
                metrics().count_verdict(code, "move-validator");
            }
            Ok(Announced::Already) => {
                tracing::debug!(game_id = %id, ply = verdict.ply, "verdict already announced");
            }
            Err(e) => tracing::warn!(game_id = %id, error = %e, "verdict not announced"),
        }
    }

    /// Waits until the game's verdict is on its `.result` (recorded by the instance that
    /// stored the ending, or by the check of its announcement, `check.rs`), within
    /// [`ANNOUNCE_DEADLINE`]: what a strict call answers is what the platforms hear, never an
    /// announcement the log does not bear out.
    pub(super) async fn wait_for_result(&self, id: &str) -> Result<pb::Verdict, Error> {
        let mut notices = self
            .inner
            .bus
            .inner
            .follow(&subject::result(id))
            .await
            .map_err(Error::unavailable)?;
        let deadline = tokio::time::Instant::now() + ANNOUNCE_DEADLINE;
        loop {
            match tokio::time::timeout_at(deadline, notices.next()).await {
                Ok(Some(Ok(m))) => {
                    // Only the validator writes `.result`; anything there that is not a verdict
                    // of this game would be a bug, passed over and said.
                    let verdict = decode_verdict(m.message_type.as_deref(), &m.payload)
                        .ok()
                        .filter(|v| v.game_id == id);
                    match verdict {
                        Some(v) => return Ok(v),
                        None => tracing::error!(
                            game_id = id,
                            seq = m.sequence,
                            "an entry on the game's .result is not a verdict of the game: passed over"
                        ),
                    }
                }
                Ok(Some(Err(e))) => return Err(Error::unavailable(e)),
                Ok(None) | Err(_) => {
                    return Err(Error::VerdictPending(format!(
                        "the verdict of game {id} was not recorded within {ANNOUNCE_DEADLINE:?}; \
                         is the pipeline (repetition-watcher, impasse-judge) running, and the \
                         validator's consumer `verdict-check` there?"
                    )));
                }
            }
        }
    }
}
