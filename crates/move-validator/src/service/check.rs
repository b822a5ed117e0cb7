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
use super::{READER, Validator};
use crate::error::Error;
use crate::games;
use arbiter_bus::{Delivery, DurableConfig};
use futures::StreamExt;
use shogi_proto::subject::{self, Kind};
use std::future::Future;
use std::time::Duration;

/// Announcements checked at once by one instance.
const CONCURRENT_CHECKS: usize = 32;

/// How long the check waits before opening its consumer again after a failure, doubled at each
/// failure in a row up to [`MAX_RETRY`].
const RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(10);

impl Validator {
    /// Checks the announcements delivered by `durable` until `shutdown`, opening the consumer
    /// again whenever it fails (a lost server, a consumer not yet made by `streams apply`,
    /// which is said at WARN each time).
    pub(crate) async fn check_announcements(
        &self,
        durable: DurableConfig,
        shutdown: impl Future<Output = ()> + Send,
    ) {
        let mut shutdown = std::pin::pin!(shutdown);
        let bus = self.inner.bus.inner.clone();
        let mut retry = RETRY;
        loop {
            let deliveries = tokio::select! {
                opened = bus.consume(&durable) => opened,
                () = &mut shutdown => return,
            };
            let deliveries = match deliveries {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(
                        consumer = %durable.name,
                        error = %e,
                        "verdicts are not checked (no platform hears of one) until this consumer opens; retrying"
                    );
                    tokio::select! {
                        () = tokio::time::sleep(retry) => {
                            retry = (retry * 2).min(MAX_RETRY);
                            continue;
                        }
                        () = &mut shutdown => return,
                    }
                }
            };
            retry = RETRY;
            tracing::info!(consumer = %durable.name, "checking the announced verdicts");
            let consumer = durable.name.as_str();
            let checking = deliveries
                .take_while(|d| {
                    if let Err(e) = d {
                        tracing::warn!(consumer = %durable.name, error = %e, "consumer error; consuming again");
                    }
                    std::future::ready(d.is_ok())
                })
                .filter_map(|d| std::future::ready(d.ok()))
                .for_each_concurrent(CONCURRENT_CHECKS, |d| async move {
                    let seq = d.message.sequence;
                    let started = std::time::Instant::now();
                    match self.check_delivery(&d).await {
                        Ok(()) => {
                            if let Err(e) = d.ack().await {
                                tracing::warn!(seq, error = %e, "verdict check not acknowledged, will come again");
                            }
                            // Timed as a worker's handling is, up to the ack.
                            arbiter_telemetry::metrics().record_process(
                                consumer,
                                READER.name(),
                                started.elapsed().as_secs_f64(),
                            );
                        }
                        Err(e) => {
                            tracing::warn!(seq, error = %e, "verdict not checked, will come again");
                        }
                    }
                });
            tokio::select! {
                () = checking => {}
                () = &mut shutdown => return,
            }
        }
    }

    /// Checks one announcement against the game's log; an error leaves it unacknowledged.
    async fn check_delivery(&self, d: &Delivery) -> Result<(), Error> {
        let msg = &d.message;
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
        let _ = READER
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
