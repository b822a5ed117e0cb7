//! The sweep over the live games (docs/rules.md section 10): every instance, on a timer, looks
//! at the games without a verdict on their `.result`, a bounded number each time, and settles
//! what their logs say, so that neither an ending nor a game left unplayed waits for a call or
//! for an owner's announcement.
//!
//! - A log that decides an ending whose verdict is not on `.result` (the instance that stored
//!   the deciding entry killed before it recorded it, and the owner's announcement missing, so
//!   `verdict-check` had nothing to check) is settled: recorded on `.result`.
//! - A game whose log has had no entry for the abandon limit (its last move, or its creation)
//!   is ended as abandoned (`abort`, no winner, with the last entry's time, the limit and the
//!   time found), written into the log guarded by its expected last sequence and settled as
//!   every ending is. Two instances sweeping at once, or a move arriving meanwhile, cannot both
//!   write: the one stored first wins and the other judges the log again.
//!
//! The games are the index's (`index.rs`): one catch-up (one to three requests and what was
//! stored since) and then one read of the last entry of each game looked at, but those this
//! instance wrote into within the sweep's interval (their last entry is no older); a game is
//! read whole only when its last entry is older than the sweep's interval and was not looked
//! at before, or when it is abandoned. Nothing is published for an ordinary move.

use super::gamelog::{Settled, SettledBy};
use super::{MAX_ATTEMPTS, Validator};
use crate::error::Error;
use shogi_adjudication::Abandoned;
use shogi_proto::convert::{abandoned_pb, verdict_pb};
use shogi_proto::event::LogEntry;
use shogi_proto::subject;
use shogi_proto::v1 as pb;
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

/// What the sweep does and how often ([`crate::Config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepSettings {
    /// How often a sweep starts; also how old a game's last entry is before the sweep reads
    /// the game for an ending not recorded (the call that stored it records it at once).
    pub interval: Duration,
    /// How long a game may go without an entry in its log before it is ended as abandoned;
    /// `None`: never.
    pub abandon_after: Option<Duration>,
    /// How many games one sweep looks at, at most; the next sweep goes on from there.
    pub max_games: usize,
}

impl Default for SweepSettings {
    fn default() -> SweepSettings {
        SweepSettings {
            interval: Duration::from_secs(60),
            abandon_after: Some(Duration::from_secs(7 * 24 * 3600)),
            max_games: 1000,
        }
    }
}

/// What one instance's sweeps remember between them.
#[derive(Debug, Default)]
struct Sweeps {
    /// The last game looked at: the next sweep starts after it.
    after: Option<String>,
    /// For each live game read whole and found open, the sequence of its last log entry then
    /// (0: none): it is read again only when its log has grown.
    open_at: HashMap<String, u64>,
}

/// What the sweep did with one game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Swept {
    /// Nothing to do.
    Open,
    /// Its ending was on `.result`, or is now.
    Recorded,
    /// Ended as abandoned now, by this instance.
    Abandoned,
    /// Its ending could not be recorded now; the next sweep tries again.
    Pending,
}

impl Validator {
    /// Sweeps every `settings.interval` until `shutdown` turns `true`.
    pub(crate) async fn sweep_live_games(
        &self,
        settings: SweepSettings,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) {
        let mut sweeps = Sweeps::default();
        loop {
            tokio::select! {
                () = tokio::time::sleep(settings.interval) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
            if !self.inner.bus.inner.connected() {
                continue;
            }
            if let Err(e) = self.sweep(&settings, &mut sweeps).await {
                tracing::warn!(error = %e, "sweep of the live games cut short; the next one goes on");
            }
        }
    }

    /// One sweep: at most `settings.max_games` live games looked at.
    async fn sweep(&self, settings: &SweepSettings, sweeps: &mut Sweeps) -> Result<(), Error> {
        let games = {
            let mut index = self.inner.index.lock().await;
            index
                .catch_up(self.inner.bus.inner.as_ref(), std::time::Instant::now())
                .await
                .map_err(Error::unavailable)?;
            index.live_games(sweeps.after.as_deref(), settings.max_games)
        };
        let (mut recorded, mut abandoned) = (0u32, 0u32);
        for (id, created_at) in &games {
            sweeps.after = Some(id.clone());
            match self.sweep_game(id, *created_at, settings, sweeps).await {
                Ok(Swept::Recorded) => recorded += 1,
                Ok(Swept::Abandoned) => abandoned += 1,
                Ok(Swept::Open | Swept::Pending) => {}
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        // What is remembered stays within the live games.
        if games.len() < settings.max_games {
            let live: std::collections::HashSet<&str> =
                games.iter().map(|(id, _)| id.as_str()).collect();
            sweeps.open_at.retain(|id, _| live.contains(id.as_str()));
        }
        tracing::debug!(
            looked_at = games.len(),
            recorded,
            abandoned,
            "live games swept"
        );
        Ok(())
    }

    /// Looks at one live game: its last log entry, then, when needed, the whole game.
    async fn sweep_game(
        &self,
        id: &str,
        created_at: Option<SystemTime>,
        settings: &SweepSettings,
        sweeps: &mut Sweeps,
    ) -> Result<Swept, Error> {
        // A game this instance wrote into within the sweep's interval (and the abandon limit)
        // has a log whose last entry is as recent: nothing to read. Reading each live game's
        // last entry costs nats-server a block load (8 MB) for each whose block it no longer
        // caches (docs/benchmarks-history.md, "The game index read every 2 s").
        let recent = settings
            .abandon_after
            .map_or(settings.interval, |limit| limit.min(settings.interval));
        if let Some(at) = self.stored_at(id)
            && Duration::from_millis(u64::try_from(self.now().saturating_sub(at)).unwrap_or(0))
                < recent
        {
            return Ok(Swept::Open);
        }
        let last = self
            .inner
            .bus
            .inner
            .last(&subject::moves(id))
            .await
            .map_err(Error::unavailable)?;
        let last_seq = last.as_ref().map_or(0, |m| m.sequence);
        let activity = match &last {
            Some(m) => m.time,
            None => created_at,
        };
        let now = self.now();
        let idle_ms = activity.map(|t| now.saturating_sub(unix_ms(t)).max(0) as u64);
        let abandoned = settings
            .abandon_after
            .zip(idle_ms)
            .is_some_and(|(limit, idle)| u128::from(idle) >= limit.as_millis());
        let settled_long_ago = idle_ms.is_some_and(|idle| {
            u128::from(idle) >= settings.interval.as_millis()
                && sweeps.open_at.get(id) != Some(&last_seq)
        });
        if !abandoned && !settled_long_ago {
            return Ok(Swept::Open);
        }
        let mut guard = self.fresh(id).await?;
        for _ in 0..MAX_ATTEMPTS {
            let Some(replay) = guard.as_mut() else {
                return Ok(Swept::Open);
            };
            match self.settle(replay, SettledBy::Sweep).await {
                Settled::Recorded => {
                    sweeps.open_at.remove(id);
                    return Ok(Swept::Recorded);
                }
                Settled::Pending => return Ok(Swept::Pending),
                Settled::Open => {}
            }
            sweeps.open_at.insert(id.to_owned(), replay.last_seq());
            // Abandoned only as the log stood when its last entry was read: an entry since
            // is activity (the next sweep looks again).
            let (Some(limit), Some(at)) = (settings.abandon_after, activity) else {
                return Ok(Swept::Open);
            };
            if !abandoned || replay.last_seq() != last_seq {
                return Ok(Swept::Open);
            }
            let evidence = Abandoned {
                last_activity_ms: unix_ms(at).max(0) as u64,
                limit_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                at_ms: now.max(0) as u64,
            };
            let mut game = replay.game().clone();
            let verdict = match game.abandon(evidence) {
                Ok(v) => v.clone(),
                Err(e) => {
                    tracing::debug!(game_id = id, error = %e, "not abandoned");
                    return Ok(Swept::Open);
                }
            };
            // No call ended it: the verdict has no receipt time; its evidence says when.
            let message = verdict_pb(id, &verdict);
            debug_assert_eq!(
                message.evidence,
                Some(pb::verdict::Evidence::Abandoned(abandoned_pb(&evidence)))
            );
            match self.append(replay, LogEntry::Ending(message)).await? {
                crate::store::Published::Stored(seq) => {
                    replay.commit_ending(seq, game, 0);
                    tracing::info!(
                        game_id = id,
                        ply = replay.ply(),
                        idle_ms = evidence.at_ms.saturating_sub(evidence.last_activity_ms),
                        limit_ms = evidence.limit_ms,
                        "game abandoned: aborted"
                    );
                    sweeps.open_at.remove(id);
                    self.settle(replay, SettledBy::Sweep).await;
                    return Ok(Swept::Abandoned);
                }
                // Another instance's sweep, or a call, was stored first: judge the log again.
                crate::store::Published::Duplicate(_) | crate::store::Published::Conflict => {
                    self.after_conflict(&mut guard).await?;
                }
            }
        }
        Err(Error::Contended(id.to_owned()))
    }
}

/// `t` in Unix milliseconds (0 before 1970).
fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Bus;
    use arbiter_bus::{FaultyBus, MemoryBus};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    fn real_now_ms() -> i64 {
        unix_ms(SystemTime::now())
    }

    /// A live game this instance wrote into within the sweep's interval is looked at without a
    /// read: its log's last entry is no older. Once the interval has passed since, or when the
    /// instance no longer holds the game, its last entry is read as before.
    #[tokio::test]
    async fn a_game_this_instance_wrote_into_lately_is_swept_without_a_read() {
        let faulty = Arc::new(FaultyBus::new(MemoryBus::new(Duration::from_secs(120))));
        let bus: arbiter_bus::Bus = faulty.clone();
        let (_stop, stop) = tokio::sync::watch::channel(false);
        let ahead = Arc::new(AtomicI64::new(0));
        let clock = ahead.clone();
        let v = Validator::new(
            Bus::new(bus),
            stop,
            super::super::CacheLimits::default(),
            crate::Announcements::ByOwners,
            1 << 20,
        )
        .with_time(crate::TimeSource::from_fn(move || {
            real_now_ms() + clock.load(Ordering::SeqCst)
        }));
        for id in ["moved", "created"] {
            v.create_game(
                pb::CreateGameRequest {
                    ruleset: None,
                    start: None,
                    game_id: id.into(),
                    strict: false,
                },
                false,
                None,
            )
            .await
            .unwrap();
        }
        v.submit_move(
            pb::SubmitMoveRequest {
                game_id: "moved".into(),
                ply: 1,
                usi: "7g7f".into(),
                strict: false,
                comment: String::new(),
            },
            false,
        )
        .await
        .unwrap();
        let settings = SweepSettings::default();
        let mut sweeps = Sweeps::default();
        let reads = || faulty.log_last_reads.load(Ordering::SeqCst);
        for id in ["moved", "created"] {
            let swept = v.sweep_game(id, None, &settings, &mut sweeps).await;
            assert_eq!(swept.unwrap(), Swept::Open, "{id}");
        }
        assert_eq!(reads(), 0, "games written into now were read");
        // The interval passed: read again, and found open.
        ahead.store(settings.interval.as_millis() as i64 + 1, Ordering::SeqCst);
        let swept = v.sweep_game("moved", None, &settings, &mut sweeps).await;
        assert_eq!(swept.unwrap(), Swept::Open);
        assert_eq!(reads(), 1);
        // A game this instance does not hold is read whatever the time.
        ahead.store(0, Ordering::SeqCst);
        v.forget("created");
        let swept = v.sweep_game("created", None, &settings, &mut sweeps).await;
        assert_eq!(swept.unwrap(), Swept::Open);
        assert_eq!(reads(), 2);
    }
}
