//! What the service writes to the bus: appends to a game's log (guarded by its expected last
//! sequence), notices on `.declare` and `.warning`, and verdict announcements on `.verdict`,
//! made here or, with the pipeline, waited for.

use super::{ANNOUNCE_DEADLINE, READER, Validator};
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

impl Validator {
    /// Appends `entry` to the game's log, guarded by the log's expected last sequence.
    pub(super) async fn append(
        &self,
        replay: &Replay,
        entry: LogEntry,
    ) -> Result<Published, Error> {
        self.inner
            .bus
            .write(entry.envelope(replay.last_seq()))
            .await
    }

    /// Appends the verdict of an ending that does not follow from the moves to the log.
    pub(super) async fn append_end(
        &self,
        replay: &Replay,
        verdict: &pb::Verdict,
    ) -> Result<Published, Error> {
        self.append(replay, LogEntry::Ending(verdict.clone())).await
    }

    /// Publishes a notice on a game's `.declare` or `.warning` subject. The log already holds
    /// what it says (or it follows from the log), so a failure here is logged, not returned.
    pub(super) async fn notify(&self, id: &str, notice: Envelope) {
        let msg_id = notice.msg_id.clone();
        if let Err(e) = self.inner.bus.write(notice).await {
            tracing::warn!(game_id = id, msg_id, error = %e, "notice not published");
        }
    }

    /// Announces a verdict its own replay decided on `.verdict`, which holds one message per
    /// game: the publish expects the subject empty, so a second announcement stores nothing; an
    /// entry there that is not this verdict is set aside, never taken for an announcement
    /// (`Reader::announce`). Then records it on `.result`, which the stream republishes to the
    /// core subject platforms subscribe to.
    pub(super) async fn notify_verdict(&self, verdict: &pb::Verdict) {
        let id = &verdict.game_id;
        if !self.inner.bus.inner.connected() {
            tracing::warn!(game_id = %id, "verdict not announced: not connected");
            return;
        }
        let bus = &self.inner.bus.inner;
        match READER.announce(bus, verdict).await {
            Ok(Announced::Stored(_)) => {
                let code = result_code_from_pb(verdict.code).map_or("?", |c| c.as_str());
                metrics().count_verdict(code, "move-validator");
            }
            Ok(Announced::Already) => {
                tracing::debug!(game_id = %id, ply = verdict.ply, "verdict already announced");
            }
            Err(e) => {
                tracing::warn!(game_id = %id, error = %e, "verdict not announced");
                return;
            }
        }
        self.record_verdict(verdict).await;
    }

    /// Records a verdict this service's replay of the log decided on the game's `.result`,
    /// which the stream republishes to the core subject platforms subscribe to, so that a read
    /// after this call sees it; whether it is there now. It is the log's verdict (the write
    /// that decided it was stored against the log's expected last sequence), so it needs no
    /// announcement to be checked against: the check of the announcement (`check.rs`) finds it
    /// there, and records it when this failed (a lost server, this instance killed before it
    /// ran). With a pipeline, this is what puts one R3 write, not three, between the deciding
    /// move and what a platform hears (issue 21): the move, then `.result`, where before the
    /// watcher's or the judge's announcement on `.verdict` and its delivery to the check came
    /// between.
    pub(super) async fn record_verdict(&self, verdict: &pb::Verdict) -> bool {
        let id = &verdict.game_id;
        let bus = &self.inner.bus.inner;
        if !bus.connected() {
            tracing::warn!(game_id = %id, "verdict not recorded on .result: not connected; its check will");
            return false;
        }
        match READER.record(bus, verdict).await {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(game_id = %id, error = %e, "verdict not recorded on .result; its check will");
                false
            }
        }
    }

    /// After a ply is stored: its warnings and verdict go on their subjects, unless the
    /// pipeline announces them; the verdict is recorded on `.result` either way.
    pub(super) async fn publish_consequences(&self, replay: &Replay) {
        if self.inner.pipeline {
            if let Some(v) = games::verdict(replay) {
                self.record_verdict(&v).await;
            }
            return;
        }
        let id = replay.id();
        if !replay.last_warnings().is_empty() {
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
        if let Some(v) = games::verdict(replay) {
            self.notify_verdict(&v).await;
        }
    }

    /// After an ending recorded in the log (a report, a declaration, a forfeit): announced
    /// here unless the pipeline (the impasse-judge) announces it from the log, and recorded on
    /// `.result` either way.
    pub(super) async fn announce_recorded(&self, verdict: &pb::Verdict) {
        if self.inner.pipeline {
            self.record_verdict(verdict).await;
        } else {
            self.notify_verdict(verdict).await;
        }
    }

    /// Waits until the game's verdict is on its `.result` (recorded by the instance that
    /// stored the ending, or by the check of its announcement, `check.rs`), within
    /// [`ANNOUNCE_DEADLINE`]: what a strict call answers is what the platforms hear, never an
    /// announcement the log does not bear out (issue 20).
    pub(super) async fn announced(&self, id: &str) -> Result<pb::Verdict, Error> {
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
                        "the verdict of game {id} was not announced and checked within \
                         {ANNOUNCE_DEADLINE:?}; is the pipeline (repetition-watcher, impasse-judge) \
                         running, and the validator's consumer `verdict-check` there?"
                    )));
                }
            }
        }
    }
}
