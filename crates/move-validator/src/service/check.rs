//! The check of the announcements: every verdict announced on a game's `.verdict`
//! (by the repetition-watcher, the impasse-judge, or this service without a pipeline) comes
//! through the validator's durable consumer `verdict-check`, shared by its instances, and is
//! compared with the verdict this service's replay of the game's log decides. Only that verdict
//! (the log's, never the announcement's) is recorded on the game's `.result`, which the stream
//! republishes to `shogi.verdict.<id>` and `platform-verdicts` delivers: the workers' credentials may write `.verdict`, so a false
//! verdict written with one is set aside here (logged at ERROR, counted) and reaches no
//! platform, while only the validator may write `.result` (`deploy/nats/auth.conf`).
//!
//! Each announcement is acknowledged once checked (recorded, found recorded, or rejected); one
//! whose check failed on the bus is not, and comes again after the ack wait.

use super::gamelog::{Settled, SettledBy};
use super::{GAME_LOG, Validator};
use crate::error::Error;
use crate::games;
use arbiter_bus::DurableConfig;
use shogi_proto::subject::{self, Kind};
use std::future::Future;

impl Validator {
    /// Checks the announcements delivered by `durable` until `shutdown` (`durable.rs`).
    pub(crate) async fn check_announcements(
        &self,
        durable: DurableConfig,
        shutdown: impl Future<Output = ()> + Send,
    ) {
        self.consume(
            durable,
            "verdicts are not checked (no platform hears of one) until this consumer opens; retrying",
            shutdown,
            |m| self.check_delivery(m),
        )
        .await;
    }

    /// Checks one announcement against the game's log; an error leaves it unacknowledged.
    async fn check_delivery(&self, msg: arbiter_bus::Message) -> Result<(), Error> {
        let msg = &msg;
        let Some((id, Kind::Verdict)) = subject::parse(&msg.subject) else {
            tracing::error!(subject = %msg.subject, seq = msg.sequence, "not a game's .verdict: passed over");
            return Ok(());
        };
        // An ending never changes once the log has one (an id is never used again), so a
        // cached game that has ended is read no further: the instance that judged the deciding
        // move answers at once. Otherwise the game is brought up to date with the bus, which
        // holds the deciding entry, stored before its announcement.
        let mut guard = match self.cached(id).await {
            Ok(guard) => Some(guard),
            Err(Error::NotFound(_)) => None,
            Err(e) => return Err(e),
        };
        let mut replay = guard.as_mut().and_then(|g| g.as_mut());
        if let Some(replay) = replay.as_deref_mut()
            && !replay.game().is_over()
        {
            self.catch_up(replay).await?;
        }
        let decided = replay.as_deref().and_then(games::verdict);
        // An announcement that is not the log's verdict is set aside, logged at ERROR and
        // counted by the check; either way it is the log's verdict that is settled.
        let _ = GAME_LOG
            .check_announcement(&self.inner.bus.inner, id, msg, decided.as_ref())
            .await;
        if let Some(replay) = replay
            && self.settle(replay, SettledBy::Check).await == Settled::Pending
        {
            return Err(Error::BusUnavailable(format!(
                "the verdict of game {id} was not recorded on .result"
            )));
        }
        Ok(())
    }
}
