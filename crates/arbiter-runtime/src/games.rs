//! Games on the bus, read and written through a service's one [`GameLog`]: the creation event,
//! then the log entry by entry through [`Replay::apply`], the one policy for every service
//! that reads a log. An entry set aside goes to the service's [`AsideLedger`]: copied to
//! `shogi.aside.<game_id>` (stream `SHOGI_ASIDE`) with its sequence, reason and type in headers,
//! counted per service and reason, and logged at WARN (ERROR for an entry on `.verdict` that is
//! not the verdict): counted every time, logged at most once a second per reason, with the
//! count of the lines left out since; the game goes on from its valid entries.

use arbiter_bus::{Bus, BusError, Message, Outgoing, Published};
use shogi_proto::event::{Envelope, decode_verdict};
use shogi_proto::log::{Applied, AsideReason, Entry, Replay, SetAside, Unreadable, msg_id};
use shogi_proto::subject;
use shogi_proto::v1 as pb;
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Why a game could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    /// The bus failed; reading again may succeed.
    #[error("{0}")]
    Bus(#[from] BusError),
    /// The creation event cannot be read: no reader can build the game.
    #[error("{0}")]
    Unreadable(#[from] Unreadable),
}

/// A service's handle on the games' logs on the bus: it reads a game (its creation event, then
/// its log through [`Replay::apply`]), writes its verdict ([`GameLog::announce`] on `.verdict`,
/// [`GameLog::record`] on `.result`), checks an announcement against the log, and hands every
/// entry it sets aside to its [`AsideLedger`].
#[derive(Debug)]
pub struct GameLog {
    aside: AsideLedger,
}

/// What one service set aside from the logs it read, under its name: each entry counted per
/// reason, logged (at most once a second per reason), and copied to `SHOGI_ASIDE` once.
#[derive(Debug)]
pub struct AsideLedger {
    name: &'static str,
    counts: [AtomicU64; AsideReason::ALL.len()],
    /// Whether an entry set aside is copied to `SHOGI_ASIDE` (the services), or only logged
    /// and counted (the operators' tools, whose users may not publish there).
    copies: bool,
    /// The entries (game, sequence) this ledger copied aside already: a game read again (a
    /// cache eviction, a restart of the game's replay) copies none of them again, where the
    /// message id alone dedupes only within the stream's 2-minute window. Forgotten past
    /// [`MAX_COPIED`] entries.
    copied: Mutex<Option<HashSet<(String, u64)>>>,
    /// Per reason, when an entry set aside was last logged and how many were not since: a
    /// flood of forged entries is one line a second, not one an entry.
    logged: Mutex<[(Option<Instant>, u64); AsideReason::ALL.len()]>,
}

/// The longest detail a line logged for an entry set aside carries, in bytes: the detail
/// quotes what the entry holds, which whoever wrote it chose.
const LOGGED_DETAIL_MAX: usize = 512;

/// How many copied entries a ledger remembers.
const MAX_COPIED: usize = 100_000;

impl GameLog {
    /// The game logs as read and written by the service whose set-asides `aside` keeps.
    pub const fn new(aside: AsideLedger) -> GameLog {
        GameLog { aside }
    }

    /// The name of the service it serves (`move-validator`, `repetition-watcher`, ...), as its
    /// ledger's copies and counts name it.
    pub fn name(&self) -> &'static str {
        self.aside.name
    }

    /// What it set aside.
    pub fn aside(&self) -> &AsideLedger {
        &self.aside
    }

    /// Reads game `game_id`'s creation event: the game with no log entry read yet, or `None`
    /// when it was never created.
    pub async fn load(&self, bus: &Bus, game_id: &str) -> Result<Option<Replay>, ReadError> {
        let Some(created) = bus.last(&subject::created(game_id)).await? else {
            return Ok(None);
        };
        Ok(Some(Replay::new(
            game_id,
            created.sequence,
            &created.payload,
        )?))
    }

    /// Applies one entry read from the game's log; one set aside goes to the ledger (logged,
    /// counted and copied aside; a failed copy is logged: the entry itself stays in the game
    /// stream).
    pub async fn apply(&self, bus: &Bus, replay: &mut Replay, msg: &Message) -> Applied {
        let applied = replay.apply(msg.entry());
        if let Applied::SetAside(aside) = &applied {
            self.aside.put(bus, replay.id(), msg, aside).await;
        }
        applied
    }

    /// Reads the game's log after the last entry read, applying each entry.
    pub async fn catch_up(&self, bus: &Bus, replay: &mut Replay) -> Result<(), BusError> {
        let log = subject::moves(replay.id());
        while let Some(msg) = bus.next(&log, replay.read_from()).await? {
            self.apply(bus, replay, &msg).await;
        }
        Ok(())
    }
}

impl AsideLedger {
    /// A ledger named `name` (`move-validator`, `repetition-watcher`, ...) that copies each
    /// entry set aside to `SHOGI_ASIDE`.
    pub const fn copying(name: &'static str) -> AsideLedger {
        AsideLedger::with_copies(name, true)
    }

    /// A ledger named `name` that logs and counts what is set aside but copies nothing to
    /// `SHOGI_ASIDE`: `shogi-arbiter export` and `streams prune`, which run as users that may
    /// not publish there (a refused copy would wait out the publish timeout, for each entry).
    pub const fn counting_only(name: &'static str) -> AsideLedger {
        AsideLedger::with_copies(name, false)
    }

    const fn with_copies(name: &'static str, copies: bool) -> AsideLedger {
        AsideLedger {
            name,
            counts: [const { AtomicU64::new(0) }; AsideReason::ALL.len()],
            copies,
            copied: Mutex::new(None),
            logged: Mutex::new([(None, 0); AsideReason::ALL.len()]),
        }
    }

    /// How many entries were set aside for `reason`.
    pub fn count(&self, reason: AsideReason) -> u64 {
        self.counts[reason as usize].load(Ordering::Relaxed)
    }

    /// Every reason with its count, for the `shogi.events.set_aside` metric.
    pub fn counts(&self) -> Vec<(&'static str, u64)> {
        AsideReason::ALL
            .iter()
            .map(|r| (r.as_str(), self.count(*r)))
            .collect()
    }

    /// Sets aside the entry `copy`: counts it, logs it, and copies it to
    /// `shogi.aside.<game_id>`, once per ledger (the message id), with why, for an operator
    /// to inspect.
    pub async fn put(&self, bus: &Bus, game_id: &str, copy: &Message, aside: &SetAside) {
        self.counts[aside.reason as usize].fetch_add(1, Ordering::Relaxed);
        let seq = copy.sequence;
        if let Some(not_logged_since_last) = self.to_log(aside.reason) {
            self.log_aside(game_id, seq, aside, not_logged_since_last);
        }
        if !self.copies || !self.first_copy(game_id, seq) {
            return;
        }
        let out = Envelope::aside(
            game_id,
            copy.entry(),
            self.name,
            aside.reason,
            &aside.detail,
        );
        if let Err(e) = bus.publish(out.into()).await {
            tracing::warn!(game_id, seq, error = %e, "log entry not copied aside");
        }
    }

    /// Whether an entry set aside for `reason` is logged now: `Some` with how many were not
    /// since the last line, unless one was logged less than a second ago.
    fn to_log(&self, reason: AsideReason) -> Option<u64> {
        let mut logged = self.logged.lock().unwrap_or_else(|e| e.into_inner());
        let last = &mut logged[reason as usize];
        let now = Instant::now();
        if last
            .0
            .is_some_and(|at| now.duration_since(at) < Duration::from_secs(1))
        {
            last.1 += 1;
            return None;
        }
        let skipped = last.1;
        *last = (Some(now), 0);
        Some(skipped)
    }

    fn log_aside(&self, game_id: &str, seq: u64, aside: &SetAside, not_logged_since_last: u64) {
        let mut end = aside.detail.len().min(LOGGED_DETAIL_MAX);
        while !aside.detail.is_char_boundary(end) {
            end -= 1;
        }
        let detail = &aside.detail[..end];
        if aside.reason == AsideReason::BadVerdict {
            // Written by a user allowed to write `.verdict`, and not what the arbiter writes
            // there: a credential misused, or a bug; an operator must hear of it.
            tracing::error!(
                game_id,
                seq,
                reason = aside.reason.as_str(),
                detail,
                reader = self.name,
                not_logged_since_last,
                "an entry on the game's .verdict is not its verdict: set aside, not taken as an announcement"
            );
        } else {
            tracing::warn!(
                game_id,
                seq,
                reason = aside.reason.as_str(),
                detail,
                reader = self.name,
                not_logged_since_last,
                "log entry set aside"
            );
        }
    }
}

impl AsideLedger {
    /// Whether the entry at `seq` of `game_id` is copied aside for the first time by this
    /// ledger (and remembers it).
    fn first_copy(&self, game_id: &str, seq: u64) -> bool {
        let mut copied = self.copied.lock().unwrap_or_else(|e| e.into_inner());
        let copied = copied.get_or_insert_with(HashSet::new);
        if copied.len() >= MAX_COPIED {
            copied.clear();
        }
        copied.insert((game_id.to_owned(), seq))
    }
}

/// What [`GameLog::announce`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announced {
    /// The verdict is stored on `.verdict` at this sequence.
    Stored(u64),
    /// The same verdict was there already (announced before, by this or another instance).
    Already,
}

/// How many entries that are not the verdict an announcement steps over on `.verdict` before
/// it gives up (each one is set aside and logged at ERROR).
const MAX_BAD_VERDICTS: usize = 8;

impl GameLog {
    /// Announces `verdict` on its game's `.verdict`, which holds the game's one verdict: the
    /// publish expects the subject empty. When it is not, what is there is read: the same
    /// verdict is an earlier announcement ([`Announced::Already`]); anything else (not a
    /// `Verdict`, another game's, another ending or ply) is never taken for one: it is set
    /// aside ([`AsideReason::BadVerdict`], logged at ERROR, counted), and the verdict is
    /// stored after it, expecting it as the subject's last message.
    pub async fn announce(&self, bus: &Bus, verdict: &pb::Verdict) -> Result<Announced, BusError> {
        let id = verdict.game_id.as_str();
        let verdict_subject = subject::verdict(id);
        let announcement = Outgoing::from(Envelope::announcement(verdict, 0));
        let mut expect = 0;
        for _ in 0..=MAX_BAD_VERDICTS {
            let out = announcement.clone().expect(expect);
            match bus.publish(out).await? {
                Published::Stored(seq) => return Ok(Announced::Stored(seq)),
                Published::Duplicate(_) => return Ok(Announced::Already),
                Published::Conflict => {}
            }
            let Some(found) = bus.last(&verdict_subject).await? else {
                expect = 0;
                continue;
            };
            if let Err(detail) = same_verdict(&found, verdict) {
                let aside = SetAside {
                    sequence: found.sequence,
                    reason: AsideReason::BadVerdict,
                    detail,
                };
                self.aside.put(bus, id, &found, &aside).await;
                expect = found.sequence;
            } else {
                return Ok(Announced::Already);
            }
        }
        Err(BusError::Publish {
            msg_id: msg_id::verdict(id, verdict.ply),
            reason: format!(
                "{verdict_subject} holds more than {MAX_BAD_VERDICTS} entries that are not its verdict"
            ),
        })
    }
}

impl GameLog {
    /// Checks `found`, an announcement on game `game_id`'s `.verdict`, against `decided`, the
    /// verdict this service's replay of the game's log decides (`None`: no ending yet): `Ok` when
    /// it is that verdict; otherwise (a false verdict written with a worker's credential, an
    /// announcement the log does not bear out) it is set aside ([`AsideReason::BadVerdict`]),
    /// logged at ERROR and counted, and what it is comes back in words. Whatever it says, what
    /// reaches the platforms is the log's verdict, recorded by [`GameLog::record`]: an
    /// announcement only wakes the check up, so a game whose log has ended gets its `.result`
    /// from whatever lands on its `.verdict` first.
    pub async fn check_announcement(
        &self,
        bus: &Bus,
        game_id: &str,
        found: &Message,
        decided: Option<&pb::Verdict>,
    ) -> Result<(), String> {
        let announcement = match decided {
            Some(v) => same_verdict(found, v),
            None => match decode_verdict(found.message_type.as_deref(), &found.payload) {
                Ok(v) => Err(format!(
                    "verdict {} (code {}, winner {}, ply {}) where the log decides no ending",
                    v.game_id, v.code, v.winner, v.ply
                )),
                Err(e) => Err(e),
            },
        };
        if let Err(detail) = &announcement {
            let aside = SetAside {
                sequence: found.sequence,
                reason: AsideReason::BadVerdict,
                detail: detail.clone(),
            };
            self.aside.put(bus, game_id, found, &aside).await;
        }
        announcement
    }

    /// Records `verdict`, which this service's replay of the log decided, on its game's
    /// `.result` (what the platforms hear), expecting the subject empty: stored, or there
    /// already. Only the validator records, and only the verdict its own replay of the log
    /// decides (`settle` in the validator's game log).
    pub async fn record(&self, bus: &Bus, verdict: &pb::Verdict) -> Result<Announced, BusError> {
        let game_id = verdict.game_id.as_str();
        match bus.publish(Envelope::result(verdict).into()).await? {
            Published::Stored(seq) => Ok(Announced::Stored(seq)),
            Published::Duplicate(_) => Ok(Announced::Already),
            Published::Conflict => {
                // Only the validator writes `.result`, one message per game; what is there is
                // either this verdict (recorded by another instance) or a bug to hear of.
                let result = subject::result(game_id);
                match bus.last(&result).await? {
                    Some(m) => {
                        if let Err(detail) = same_verdict(&m, verdict) {
                            tracing::error!(
                                game_id,
                                seq = m.sequence,
                                %detail,
                                reader = self.name(),
                                "the game's .result holds another verdict than its log decides: left as it is"
                            );
                        }
                        Ok(Announced::Already)
                    }
                    None => Err(BusError::Publish {
                        msg_id: msg_id::result(game_id, verdict.ply),
                        reason: format!("{result} conflicted but holds nothing"),
                    }),
                }
            }
        }
    }
}

/// Publishes the warnings of one ply, in order, on their game's `.warning`, each with its
/// message id (its ply and index), so that publishing them again stores nothing new; how many
/// were stored now. The first failure stops it: the log holds what they say, and the reader
/// that publishes them again (a redelivery, a retried call) sends them all again.
pub async fn publish_warnings(
    bus: &Bus,
    warnings: impl IntoIterator<Item = pb::Warning>,
) -> Result<u64, BusError> {
    let mut stored = 0;
    for (i, w) in warnings.into_iter().enumerate() {
        if let Published::Stored(_) = bus.publish(Envelope::warning(&w, i).into()).await? {
            stored += 1;
        }
    }
    Ok(stored)
}

/// Whether `found`, an entry of `.verdict`, is `verdict` (its game, ending, winner and ply);
/// if not, what it is.
pub fn same_verdict(found: &Message, verdict: &pb::Verdict) -> Result<(), String> {
    let v = decode_verdict(found.message_type.as_deref(), &found.payload)?;
    if (v.game_id.as_str(), v.code, v.winner, v.ply)
        != (
            verdict.game_id.as_str(),
            verdict.code,
            verdict.winner,
            verdict.ply,
        )
    {
        return Err(format!(
            "verdict {} (code {}, winner {}, ply {}) where the log decides code {}, winner {}, ply {}",
            v.game_id, v.code, v.winner, v.ply, verdict.code, verdict.winner, verdict.ply
        ));
    }
    Ok(())
}

/// A log entry as the replay reads it.
pub fn entry(msg: &Message) -> Entry<'_> {
    msg.entry()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_bus::MemoryBus;
    use std::sync::Arc;
    use std::time::Duration;

    /// A game read again past the bus's duplicate window (here: none) copies its bad entry
    /// aside once, not at every rebuild.
    #[tokio::test]
    async fn an_entry_is_copied_aside_once_per_ledger() {
        let bus: Bus = Arc::new(MemoryBus::new(Duration::ZERO));
        let created = pb::GameCreated {
            created_unix_ms: 0,
            game_id: "g".into(),
            ruleset: None,
            start_sfen: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1".into(),
            handicap: String::new(),
            strict: false,
        };
        bus.publish(Envelope::created(&created).into())
            .await
            .unwrap();
        bus.publish(Outgoing::new(
            subject::moves("g"),
            shogi_proto::MOVE_ACCEPTED_TYPE,
            "bad",
            vec![0xff, 0x01],
        ))
        .await
        .unwrap();
        let log = GameLog::new(AsideLedger::copying("test"));
        for _ in 0..3 {
            let mut replay = log.load(&bus, "g").await.unwrap().unwrap();
            log.catch_up(&bus, &mut replay).await.unwrap();
        }
        let mut copies = 0;
        let mut from = 1;
        while let Some(m) = bus.next(&subject::aside("g"), from).await.unwrap() {
            copies += 1;
            from = m.sequence + 1;
        }
        assert_eq!(copies, 1);
        assert_eq!(
            log.aside().count(AsideReason::Garbage),
            3,
            "counted at each read"
        );
    }

    /// The check of an announcement sets aside what the log does not bear out, and recording
    /// writes the log's verdict, never the announcement's: a false verdict before the end and
    /// one after it are set aside; the true one is not; recording again writes nothing new.
    #[tokio::test]
    async fn the_check_sets_aside_what_the_log_does_not_bear_out() {
        let bus: Bus = Arc::new(MemoryBus::new(Duration::ZERO));
        let log = GameLog::new(AsideLedger::copying("test"));
        let truth = pb::Verdict {
            game_id: "g".into(),
            code: pb::ResultCode::Repetition as i32,
            winner: pb::Color::Unspecified as i32,
            ply: 12,
            ..Default::default()
        };
        let forged = pb::Verdict {
            code: pb::ResultCode::Resignation as i32,
            winner: pb::Color::White as i32,
            ply: 1,
            ..truth.clone()
        };
        // Written as anyone allowed on `.verdict` may write: no expected sequence.
        let announce = |v: &pb::Verdict, n: usize| {
            let mut out = Envelope::announcement(v, 0);
            out.expected_subject_seq = None;
            out.msg_id = format!("announcement-{n}");
            Outgoing::from(out)
        };
        let stored = |p: Published| match p {
            Published::Stored(seq) => seq,
            other => panic!("not stored: {other:?}"),
        };
        let message = |seq: u64| {
            let bus = bus.clone();
            async move {
                bus.next(&subject::verdict("g"), seq)
                    .await
                    .unwrap()
                    .unwrap()
            }
        };
        let result = || {
            let bus = bus.clone();
            async move {
                let mut all = Vec::new();
                let mut from = 1;
                while let Some(m) = bus.next(&subject::result("g"), from).await.unwrap() {
                    from = m.sequence + 1;
                    all.push(decode_verdict(m.message_type.as_deref(), &m.payload).unwrap());
                }
                all
            }
        };

        // Before the log decides an ending: set aside.
        let seq = stored(bus.publish(announce(&forged, 0)).await.unwrap());
        let checked = log
            .check_announcement(&bus, "g", &message(seq).await, None)
            .await;
        assert!(checked.is_err());
        assert!(result().await.is_empty());

        // After: a false announcement is set aside; the log's verdict is what is recorded.
        let seq = stored(bus.publish(announce(&forged, 1)).await.unwrap());
        let checked = log
            .check_announcement(&bus, "g", &message(seq).await, Some(&truth))
            .await;
        assert!(checked.is_err(), "{checked:?}");
        assert!(matches!(
            log.record(&bus, &truth).await.unwrap(),
            Announced::Stored(_)
        ));
        assert_eq!(result().await, std::slice::from_ref(&truth));

        // The true announcement: not set aside; recorded again, nothing new.
        let seq = stored(bus.publish(announce(&truth, 2)).await.unwrap());
        let checked = log
            .check_announcement(&bus, "g", &message(seq).await, Some(&truth))
            .await;
        assert_eq!(checked, Ok(()));
        assert_eq!(log.record(&bus, &truth).await.unwrap(), Announced::Already);
        assert_eq!(result().await, [truth]);
        assert_eq!(log.aside().count(AsideReason::BadVerdict), 2);
    }
}
