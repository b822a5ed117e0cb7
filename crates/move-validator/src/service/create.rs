//! CreateGame: a game's creation event, written once; the same creation again is a retry.

use super::Validator;
use super::gamelog::SettledBy;
use crate::auth::Tenant;
use crate::credentials::Limit;
use crate::error::Error;
use crate::games;
use crate::store::Published;
use shogi_proto::CREDENTIAL_HEADER;
use shogi_proto::convert::{self, check_game_id};
use shogi_proto::event::Envelope;
use shogi_proto::log::Replay;
use shogi_proto::v1 as pb;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::Ordering;
use tracing::Instrument;

impl Validator {
    /// CreateGame: checks the request, writes the creation event (the game id is taken once),
    /// and caches the game. The event names the `creator`'s credential, and a creator with a
    /// live-games quota is refused at it: its live games are counted from the bus (ListGames'
    /// index, which every instance reads the same), so the count holds across instances and
    /// restarts; calls in flight at once may each see the last place free.
    pub(crate) async fn create_game(
        &self,
        req: pb::CreateGameRequest,
        strict: bool,
        creator: Option<&Tenant>,
    ) -> Result<pb::GameState, Error> {
        // Checked now, so that a bad ruleset is refused before anything is written.
        let timed = convert::checked_ruleset_from_pb(req.ruleset.as_ref())?
            .time_control
            .is_some();
        let (start_sfen, handicap) = match req.start.and_then(|s| s.start) {
            None | Some(pb::start_position::Start::Startpos(_)) => {
                (shogi_rules::Position::startpos().to_sfen(), String::new())
            }
            Some(pb::start_position::Start::Sfen(sfen)) => (
                convert::parse_start_sfen("start.sfen", &sfen)?.to_sfen(),
                String::new(),
            ),
            Some(pb::start_position::Start::Handicap(name)) => {
                let h = name
                    .parse::<shogi_adjudication::Handicap>()
                    .map_err(|e| Error::invalid("start.handicap", e.to_string()))?;
                (h.sfen().to_owned(), name)
            }
        };
        let id = if req.game_id.is_empty() {
            new_game_id()
        } else {
            check_game_id("game_id", &req.game_id)?;
            req.game_id
        };
        if let Some(tenant) = creator
            && let Some(max) = tenant.live_games()
        {
            let mut index = self.inner.index.lock().await;
            index
                .catch_up(self.inner.bus.inner.as_ref(), std::time::Instant::now())
                .await
                .map_err(Error::unavailable)?;
            if index.live_games_of(tenant.name()) >= max {
                return Err(tenant.over(Limit::LiveGames));
            }
        }
        let created = pb::GameCreated {
            // A game with a time control has the arbiter's clock, its first turn from now.
            created_unix_ms: self.now(),
            game_id: id.clone(),
            ruleset: Some(req.ruleset.unwrap_or_default()),
            start_sfen,
            handicap,
            strict,
        };
        // The call's span names the game once its id is known.
        let span = tracing::Span::current();
        span.record("game_id", id.as_str());
        async {
            // A game with a time control: its first side's deadline is scheduled before the
            // game exists, so that no turn starts without its flag (`flag.rs`).
            if timed {
                self.check_flags()?;
                self.schedule_deadline(&Replay::from_created(created.clone(), 0)?, None)
                    .await?;
            }
            let mut event = Envelope::created(&created);
            if let Some(tenant) = creator {
                event
                    .headers
                    .push((CREDENTIAL_HEADER.to_owned(), tenant.name().to_owned()));
            }
            let published = self.inner.bus.write(event).await?;
            match published {
                Published::Stored(seq) => {
                    let mut replay = Replay::from_created(created, seq)?;
                    let state = games::state(&replay);
                    // A start position can already be decided (no legal move, or an
                    // automatic declaration): no move will reach the pipeline, so no owner
                    // announces it and its settling here is all there is.
                    self.settle(&mut replay, SettledBy::Creation).await;
                    *self.slot(&id).replay.clone().lock_owned().await = Some(replay);
                    self.note_stored(&id);
                    tracing::info!("game created");
                    Ok(state)
                }
                // The id is taken: the same creation again is a retry and gets the same
                // answer; anything else is a conflict.
                Published::Duplicate(_) | Published::Conflict => {
                    let guard = self.fresh(&id).await?;
                    let replay = guard.as_ref().ok_or_else(|| Error::NotFound(id.clone()))?;
                    // The schedule written above was for this call's creation: the stored
                    // game's running side gets its own deadline back.
                    if timed {
                        self.schedule_deadline(replay, Some(self.now())).await?;
                    }
                    // The same creation again (its time aside: a retry comes later).
                    let stored = pb::GameCreated {
                        created_unix_ms: created.created_unix_ms,
                        ..replay.created()
                    };
                    if stored == created {
                        Ok(games::state(replay))
                    } else {
                        Err(Error::AlreadyExists(id.clone()))
                    }
                }
            }
        }
        .instrument(span)
        .await
    }
}

/// A new random game id: 32 hex digits from the standard library's per-process random hash
/// keys and a counter, so that no two calls in one process collide and processes differ.
fn new_game_id() -> String {
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let word = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_u64(salt);
        h.finish()
    };
    format!("{:016x}{:016x}", word(1), word(2))
}
