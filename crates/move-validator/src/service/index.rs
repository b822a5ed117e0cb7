//! ListGames' index: every game's creation event and the entry on its `.result` (its verdict
//! as the validator checked it; never an announcement on `.verdict`, which may be false), read
//! from the bus once and kept in memory, so that a page is answered from memory, not from a
//! scan that cost two NATS requests a game (issue 20, item 5).
//!
//! The index follows the stream as a reader of two subject filters, `shogi.game.*.created`
//! and `shogi.game.*.result`, each with a cursor (the next stream sequence to read from).
//! Before a page is answered it catches up: one request for the stream's state
//! ([`arbiter_bus::EventBus::state`]), then, when something was stored since the cursors, one
//! message get per creation or verdict stored since and one that finds nothing more. So a page
//! costs one to three requests, whatever its size, and each game's two events are read once
//! per process: the first ListGames call of a process reads every creation and every verdict
//! on the stream.
//!
//! Everything is read from the stream, the stored messages only, as the scan read them:
//! nothing is taken from a raw publish (which the stream may have refused), so the index holds
//! what any other instance would read, and a game created or finished through another
//! validator or a worker is listed as it is at the time of the call. The stream only grows,
//! except when `streams prune` purges games: the state's count of removed messages then
//! changes, and the index is read again from the start, so that a purged game is no longer
//! listed.
//!
//! The answers are the scan's: the same games in the same order, the same verdicts (the last
//! entry on the game's `.result`, when it decodes as a verdict), the same token, and the same
//! bound of [`LIST_SCAN_MAX`] creation events looked at per call.

use arbiter_bus::{BusError, EventBus, Message};
use shogi_proto::convert;
use shogi_proto::event::{decode_created, decode_verdict};
use shogi_proto::subject::{self, Kind};
use shogi_proto::v1 as pb;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// How many creation events one ListGames call looks at most, so that a `live_only` call over
/// a stream of finished games answers in bounded time (with a token to go on from).
pub(super) const LIST_SCAN_MAX: usize = 1000;

/// The games on the bus as far as the index has read.
#[derive(Debug, Default)]
pub(super) struct GameIndex {
    /// Every creation event read, by stream sequence: the game's summary without its verdict,
    /// or `None` for an event nobody can open (garbage, or one naming another game), which a
    /// page counts as looked at and leaves out, as the scan did.
    created: BTreeMap<u64, Option<pb::GameSummary>>,
    /// The last entry read on each game's `.result`, decoded; `None` when it is not a
    /// verdict.
    verdicts: HashMap<String, Option<pb::Verdict>>,
    /// Every creation event stored before this sequence is in `created`.
    created_from: u64,
    /// Every entry on a `.result` stored before this sequence is in `verdicts`.
    verdicts_from: u64,
    /// The stream's count of removed messages when the index started reading.
    removed: u64,
    /// The credential that created each game still without a verdict, where the creation
    /// event names one (its `Shogi-Credential` header).
    creator_of: HashMap<String, Arc<str>>,
    /// How many games each credential created that have no verdict yet.
    live_by: HashMap<Arc<str>, u32>,
    /// When the last catch-up that completed started.
    caught_up: Option<Instant>,
    /// Every game read without a verdict on its `.result` yet, by id, with when the bus stored
    /// its creation: what the sweep looks at (`sweep.rs`).
    live: BTreeMap<String, Option<SystemTime>>,
}

/// One page of the index.
#[derive(Debug)]
pub(super) struct IndexPage {
    /// The games, in creation order.
    pub games: Vec<pb::GameSummary>,
    /// The stream sequence to go on from.
    pub next: u64,
}

impl GameIndex {
    /// Reads what the stream stored since the last catch-up, unless one that started after
    /// `asked` (the call's arrival) has completed: its view is as recent as this call needs.
    /// A catch-up cut short (an error, a call given up) keeps what it read.
    pub(super) async fn catch_up(
        &mut self,
        bus: &dyn EventBus,
        asked: Instant,
    ) -> Result<(), BusError> {
        if self.caught_up.is_some_and(|at| at >= asked) {
            return Ok(());
        }
        let started = Instant::now();
        let state = bus.state().await?;
        let behind = self.created_from.max(self.verdicts_from).saturating_sub(1);
        if state.removed != self.removed || state.last_sequence < behind {
            // Messages were purged (or the stream made again): what was read may be gone.
            if self.created_from > 0 {
                tracing::info!(
                    removed = state.removed,
                    "messages were removed from the stream; the game index is read again"
                );
            }
            *self = GameIndex {
                removed: state.removed,
                ..GameIndex::default()
            };
        }
        self.created_from = self.created_from.max(1);
        self.verdicts_from = self.verdicts_from.max(1);
        // Messages stored after `state` are read too, when a read finds them.
        if state.last_sequence >= self.created_from {
            while let Some(msg) = bus.next(subject::ALL_CREATED, self.created_from).await? {
                self.created_from = msg.sequence + 1;
                let game = summary(&msg);
                if let Some(game) = &game {
                    self.count_live(&msg, &game.game_id);
                    if !self.verdicts.contains_key(&game.game_id) {
                        self.live.insert(game.game_id.clone(), msg.time);
                    }
                }
                self.created.insert(msg.sequence, game);
            }
        }
        if state.last_sequence >= self.verdicts_from {
            // The checked verdicts: an announcement on `.verdict` may be false (issue 20).
            while let Some(msg) = bus.next(subject::ALL_RESULTS, self.verdicts_from).await? {
                self.verdicts_from = msg.sequence + 1;
                if let Some((id, Kind::Result)) = subject::parse(&msg.subject) {
                    let verdict = decode_verdict(msg.message_type.as_deref(), &msg.payload).ok();
                    self.verdicts.insert(id.to_owned(), verdict);
                    self.live.remove(id);
                    if let Some(creator) = self.creator_of.remove(id)
                        && let Some(n) = self.live_by.get_mut(&creator)
                    {
                        *n = n.saturating_sub(1);
                    }
                }
            }
        }
        self.caught_up = Some(started);
        Ok(())
    }

    /// A game created by a named credential and without a verdict yet is one more of its live
    /// games.
    fn count_live(&mut self, msg: &Message, game_id: &str) {
        let Some((_, name)) = msg
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(shogi_proto::CREDENTIAL_HEADER))
        else {
            return;
        };
        if self.verdicts.contains_key(game_id) || self.creator_of.contains_key(game_id) {
            return;
        }
        let name: Arc<str> = match self.live_by.get_key_value(name.as_str()) {
            Some((known, _)) => known.clone(),
            None => Arc::from(name.as_str()),
        };
        *self.live_by.entry(name.clone()).or_default() += 1;
        self.creator_of.insert(game_id.to_owned(), name);
    }

    /// At most `max` games without a verdict, as far as the index has read, each with when its
    /// creation was stored: those after `after` in id order first, then from the first id, so
    /// that successive calls given the last id returned go round every live game.
    pub(super) fn live_games(
        &self,
        after: Option<&str>,
        max: usize,
    ) -> Vec<(String, Option<SystemTime>)> {
        use std::ops::Bound::{Excluded, Included, Unbounded};
        let after = after.unwrap_or("");
        // Ids are never empty: from "" on is every id, and up to "" none.
        self.live
            .range::<str, _>((Excluded(after), Unbounded))
            .chain(self.live.range::<str, _>((Unbounded, Included(after))))
            .take(max.min(self.live.len()))
            .map(|(id, at)| (id.clone(), *at))
            .collect()
    }

    /// How many games the credential `name` created that have no verdict, as far as the
    /// index has read.
    pub(super) fn live_games_of(&self, name: &str) -> u32 {
        self.live_by.get(name).copied().unwrap_or(0)
    }

    /// At most `size` games created at or after stream sequence `from` (the live ones only,
    /// with `live_only`), looking at [`LIST_SCAN_MAX`] creation events at most.
    pub(super) fn page(&self, from: u64, size: usize, live_only: bool) -> IndexPage {
        let mut games = Vec::new();
        let mut next = from;
        for (scanned, (&seq, game)) in self.created.range(from..).enumerate() {
            if games.len() >= size || scanned >= LIST_SCAN_MAX {
                break;
            }
            next = seq + 1;
            let Some(game) = game else { continue };
            let verdict = self.verdicts.get(&game.game_id).cloned().flatten();
            if live_only && verdict.is_some() {
                continue;
            }
            games.push(pb::GameSummary {
                verdict,
                ..game.clone()
            });
        }
        IndexPage { games, next }
    }
}

/// A creation event's summary, without a verdict; `None` for garbage, or an event naming
/// another game: not a game anyone can open.
fn summary(msg: &Message) -> Option<pb::GameSummary> {
    match decode_created(&msg.payload) {
        Ok(created) if subject::created(&created.game_id) == msg.subject => Some(pb::GameSummary {
            preset: convert::preset_of(created.ruleset.as_ref()).to_owned(),
            game_id: created.game_id,
            created_sequence: msg.sequence,
            start_sfen: created.start_sfen,
            verdict: None,
        }),
        _ => {
            tracing::debug!(seq = msg.sequence, subject = %msg.subject, "unreadable creation event left out of the list");
            None
        }
    }
}
