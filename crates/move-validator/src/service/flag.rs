//! The clocks' flags (docs/rules.md section 9). A side's deadline is a message schedule on the
//! games' stream (`.clock.<b|w>`), written before the entry that starts that side's turn (the
//! creation, or the opponent's move), so that no turn starts without one; a later schedule of
//! the same side replaces it. When it fires, the stream publishes it on the game's `.flag`,
//! which the validator's durable consumer `clock-flag`, shared by its instances, delivers here.
//!
//! A flag is only a wake-up: the game is read fresh and judged by its own clock, from the log's
//! recorded times, at the time now. If the side to move is out of time, the time-up goes into
//! the log guarded by the log's expected last sequence (a move stored first wins, and is judged
//! at its own receipt) and is settled as every ending is. If not (a schedule a move made stale,
//! or a flag early by this instance's clock), the running side's deadline is scheduled again.

use super::gamelog::SettledBy;
use super::{MAX_ATTEMPTS, Validator};
use crate::error::Error;
use crate::store::Published;
use arbiter_bus::{DurableConfig, Message, Outgoing};
use shogi_proto::convert::{self, from_unix_ms, verdict_pb};
use shogi_proto::event::{Envelope, LogEntry};
use shogi_proto::log::Replay;
use shogi_proto::subject::{self, Kind};
use shogi_proto::v1 as pb;
use std::future::Future;

impl Validator {
    /// Judges the flags delivered by `durable` until `shutdown` (`durable.rs`).
    pub(crate) async fn watch_flags(
        &self,
        durable: DurableConfig,
        shutdown: impl Future<Output = ()> + Send,
    ) {
        self.consume(
            durable,
            "silent sides are not flagged until this consumer opens; retrying",
            shutdown,
            |m| self.flag_delivery(m),
        )
        .await;
    }

    /// Whether the bus can flag a game with a time control, before one is created: `Err` names
    /// what is missing (the server's version, the stream's setting).
    pub(super) fn check_flags(&self) -> Result<(), Error> {
        self.inner.bus.inner.schedules().map_err(|why| {
            Error::FailedPrecondition(format!(
                "a game with a time control needs the arbiter to flag a silent side at its \
                 deadline, by the bus's message schedules: {why}"
            ))
        })
    }

    /// Schedules the deadline of the side whose clock runs in `replay`'s game (nothing when it
    /// has no clock, no limit, or has ended). `again`: a schedule made anew after a flag found
    /// the side in time, whose message id must differ from the one that fired.
    pub(super) async fn schedule_deadline(
        &self,
        replay: &Replay,
        again: Option<i64>,
    ) -> Result<(), Error> {
        let Some(clock) = convert::clock_pb(replay.game()) else {
            return Ok(());
        };
        if clock.deadline_unix_ms == 0 {
            return Ok(());
        }
        let mut schedule = Envelope::clock(replay.id(), &clock);
        if let Some(now) = again {
            schedule.msg_id = format!("{}:again:{now}", schedule.msg_id);
        }
        let out = Outgoing::from(schedule)
            .schedule_at(clock.deadline_unix_ms, subject::flag(replay.id()));
        self.inner.bus.write_outgoing(out).await.map(|_| ())
    }

    /// Judges one flag: the game's side to move out of time now, or not yet.
    async fn flag_delivery(&self, msg: Message) -> Result<(), Error> {
        let Some((id, Kind::Flag)) = subject::parse(&msg.subject) else {
            tracing::error!(subject = %msg.subject, seq = msg.sequence, "not a game's .flag: passed over");
            return Ok(());
        };
        let mut guard = match self.fresh(id).await {
            Ok(guard) => guard,
            // A schedule written for a creation that was then refused.
            Err(Error::NotFound(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        for _ in 0..MAX_ATTEMPTS {
            let Some(replay) = guard.as_mut() else {
                return Ok(());
            };
            if replay.game().is_over() {
                return Ok(());
            }
            let now = self.now();
            let mut game = replay.game().clone();
            let Some(verdict) = game.flag(from_unix_ms(now)) else {
                return self.schedule_deadline(replay, Some(now)).await;
            };
            // No call ended it: the verdict has no receipt time, and its evidence's
            // `at_unix_ms` says when the flag fell.
            let message = verdict_pb(id, &verdict);
            let late_ms = match &message.evidence {
                Some(pb::verdict::Evidence::TimeUp(up)) => now - up.deadline_unix_ms,
                _ => 0,
            };
            match self.append(replay, LogEntry::Ending(message)).await? {
                Published::Stored(seq) => {
                    replay.commit_ending(seq, game, 0);
                    tracing::info!(
                        game_id = id,
                        ply = replay.ply(),
                        late_ms,
                        "silent side flagged: time-up"
                    );
                    arbiter_telemetry::metrics().record_flag(late_ms.max(0) as f64 / 1000.0);
                    self.settle(replay, SettledBy::Call).await;
                    return Ok(());
                }
                // A move (or another instance's flag) was stored first: judge the log again.
                Published::Duplicate(_) | Published::Conflict => {
                    self.after_conflict(&mut guard).await?;
                }
            }
        }
        Err(Error::Contended(id.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_bus::{FaultyBus, MemoryBus};
    use std::sync::Arc;
    use std::time::Duration;

    /// On a bus without message schedules (nats-server before 2.12, a stream that does not
    /// allow them), a game with a time control is refused with what is missing, never created
    /// with a clock that cannot flag; one without a time control is created as before.
    #[tokio::test]
    async fn a_clocked_game_is_refused_where_the_bus_keeps_no_schedules() {
        let bus: arbiter_bus::Bus = Arc::new(FaultyBus::new(MemoryBus::new(Duration::ZERO)));
        let (_stop, stop) = tokio::sync::watch::channel(false);
        let v = Validator::new(
            crate::store::Bus::new(bus.clone()),
            stop,
            super::super::CacheLimits::default(),
            crate::Announcements::ByValidator,
            1 << 20,
        );
        let create = |id: &str, timed: bool| pb::CreateGameRequest {
            ruleset: Some(pb::Ruleset {
                preset: "online".into(),
                overrides: timed.then(|| pb::RulesetOverrides {
                    time_main: Some(prost_types::Duration {
                        seconds: 60,
                        nanos: 0,
                    }),
                    ..Default::default()
                }),
            }),
            start: None,
            game_id: id.into(),
            strict: false,
        };
        let refused = v
            .create_game(create("timed", true), false, None)
            .await
            .unwrap_err();
        let status = crate::to_status(refused);
        assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
        assert!(status.message().contains("message schedules"), "{status:?}");
        assert!(
            bus.last(&subject::created("timed"))
                .await
                .unwrap()
                .is_none(),
            "nothing created"
        );
        v.create_game(create("untimed", false), false, None)
            .await
            .unwrap();
    }
}
