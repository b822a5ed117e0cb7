//! The game cache: games read from the bus, kept while there is room, brought up to date with
//! the bus when a call needs it fresh; the bus is the record, so a game dropped from here is
//! only read again.

use super::{GAME_LOG, Guard, Slot, Validator};
use crate::error::Error;
use crate::games;
use shogi_proto::log::Replay;
use shogi_proto::subject;
use std::collections::HashMap;
use std::sync::atomic::Ordering;

impl Validator {
    /// The cache's slot for game `id`, made (evicting games first when the cache is full)
    /// when there is none.
    pub(super) fn slot(&self, id: &str) -> Slot {
        let mut games = self.inner.games.lock().unwrap_or_else(|e| e.into_inner());
        if !games.contains_key(id) {
            let bytes = self.inner.cached_bytes.load(Ordering::Relaxed);
            if games.len() >= self.inner.max_cached_games || bytes >= self.inner.max_cache_bytes {
                let left = evict(
                    &mut games,
                    self.inner.max_cached_games,
                    self.inner.max_cache_bytes,
                );
                self.inner.cached_bytes.store(left, Ordering::Relaxed);
            }
        }
        games.entry(id.to_owned()).or_default().clone()
    }

    /// This instance stored an entry of game `id`'s log now.
    pub(super) fn note_stored(&self, id: &str) {
        let games = self.inner.games.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = games.get(id) {
            slot.stored_at.store(self.now(), Ordering::Relaxed);
        }
    }

    /// When this instance last stored an entry of game `id`'s log, if it holds the game
    /// (Unix milliseconds).
    pub(super) fn stored_at(&self, id: &str) -> Option<i64> {
        let games = self.inner.games.lock().unwrap_or_else(|e| e.into_inner());
        let at = games.get(id)?.stored_at.load(Ordering::Relaxed);
        (at > 0).then_some(at)
    }

    /// Drops game `id` from the cache; the bus has it all.
    pub(super) fn forget(&self, id: &str) {
        let mut games = self.inner.games.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = games.remove(id) {
            let bytes = slot.bytes.swap(0, Ordering::Relaxed);
            self.inner.cached_bytes.fetch_sub(bytes, Ordering::Relaxed);
        }
    }

    /// Game `id` read from the bus: its creation event and its whole log; `None` when it was
    /// never created.
    async fn read(&self, id: &str) -> Result<Option<Replay>, Error> {
        let loaded = GAME_LOG
            .load(&self.inner.bus.inner, id)
            .await
            .map_err(Error::from_read)?;
        let Some(mut replay) = loaded else {
            return Ok(None);
        };
        self.catch_up(&mut replay).await?;
        Ok(Some(replay))
    }

    /// The game as this instance has it, loaded from the bus if it has not seen it: for a write,
    /// whose guarded append finds out whether the cache is behind the log.
    pub(super) async fn cached(&self, id: &str) -> Result<Guard, Error> {
        self.game(id, Read::Cached).await
    }

    /// The game brought up to date with the bus: for an answer or a judgement that must see
    /// every entry stored before the call.
    pub(super) async fn fresh(&self, id: &str) -> Result<Guard, Error> {
        self.game(id, Read::Fresh).await
    }

    async fn game(&self, id: &str, read: Read) -> Result<Guard, Error> {
        let slot = self.slot(id);
        let mut guard = slot.replay.clone().lock_owned().await;
        if guard.as_ref().is_some_and(Replay::ahead_of_log) {
            // A call was cancelled (its deadline) while its write was in flight: the cached
            // game holds a ply the log may not. Read it again rather than answer a retry from
            // a move no server may have stored.
            tracing::debug!(
                game_id = id,
                "cached game ahead of its log: reading it again"
            );
            *guard = None;
        }
        match guard.as_mut() {
            Some(replay) if read == Read::Fresh => {
                let before = replay.last_seq();
                self.catch_up(replay).await?;
                // A purged game leaves nothing after the cached entries to read: a fresh read
                // that found nothing new also checks that the creation event cached is still
                // the game's (a purged id cannot be created again, so new entries are enough).
                if replay.last_seq() == before && !self.still_created(replay).await? {
                    self.reload(&mut guard, id).await?;
                }
            }
            Some(_) => {}
            None => {
                let Some(replay) = self.read(id).await? else {
                    drop(guard);
                    self.forget(id);
                    return Err(Error::NotFound(id.to_owned()));
                };
                tracing::debug!(
                    game_id = id,
                    ply = replay.ply(),
                    "game rebuilt from the bus"
                );
                *guard = Some(replay);
            }
        }
        if let Some(replay) = guard.as_ref() {
            let now = games::footprint(replay);
            let before = slot.bytes.swap(now, Ordering::Relaxed);
            self.inner.cached_bytes.fetch_add(now, Ordering::Relaxed);
            self.inner.cached_bytes.fetch_sub(before, Ordering::Relaxed);
        }
        Ok(guard)
    }

    /// Whether the game's creation event on the bus is the one `replay` was built from (not
    /// purged, nor purged and created again since).
    async fn still_created(&self, replay: &Replay) -> Result<bool, Error> {
        let created = self
            .inner
            .bus
            .inner
            .last(&subject::created(replay.id()))
            .await
            .map_err(Error::unavailable)?;
        Ok(created.is_some_and(|m| m.sequence == replay.created_seq()))
    }

    /// Reads the game's log after the last entry read, in order.
    pub(super) async fn catch_up(&self, replay: &mut Replay) -> Result<(), Error> {
        GAME_LOG
            .catch_up(&self.inner.bus.inner, replay)
            .await
            .map_err(Error::unavailable)
    }

    /// After a lost race: reads the log; if it holds nothing new, this instance's copy is
    /// stale (the game was purged or recreated), so the game is read again from the bus.
    pub(super) async fn after_conflict(&self, guard: &mut Guard) -> Result<(), Error> {
        let Some(replay) = guard.as_mut() else {
            return Ok(());
        };
        let before = replay.last_seq();
        self.catch_up(replay).await?;
        if replay.last_seq() != before {
            return Ok(());
        }
        let id = replay.id().to_owned();
        tracing::warn!(game_id = %id, "cached game is stale: reading it again from the bus");
        self.reload(guard, &id).await
    }

    /// Reads the game again from the bus into `guard`: after a write that did not store what the
    /// cached game had already played.
    pub(super) async fn reload(&self, guard: &mut Guard, id: &str) -> Result<(), Error> {
        **guard = None;
        let Some(replay) = self.read(id).await? else {
            self.forget(id);
            return Err(Error::NotFound(id.to_owned()));
        };
        **guard = Some(replay);
        Ok(())
    }
}

/// How a call reads its game ([`Validator::cached`], [`Validator::fresh`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Cached,
    Fresh,
}

/// Makes room in the game cache: drops finished games not in use, then, if that freed less
/// than a quarter, any game not in use; returns the bytes the games left take. The bus holds
/// every game, so a dropped one is only rebuilt later; a game in use (its lock held) stays.
fn evict(games: &mut HashMap<String, Slot>, max_games: usize, max_bytes: usize) -> usize {
    let before = games.len();
    games.retain(|_, slot| match slot.replay.try_lock() {
        Ok(replay) => replay.as_ref().is_some_and(|r| !r.game().is_over()),
        Err(_) => true,
    });
    let bytes = |games: &HashMap<String, Slot>| -> usize {
        games
            .values()
            .map(|s| s.bytes.load(Ordering::Relaxed))
            .sum()
    };
    if games.len() > max_games - max_games / 4 || bytes(games) > max_bytes - max_bytes / 4 {
        games.retain(|_, slot| slot.replay.try_lock().is_err());
    }
    tracing::debug!(before, after = games.len(), "game cache evicted");
    bytes(games)
}
