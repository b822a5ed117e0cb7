//! The `shogi.v1.MoveValidator` service: parses and checks requests, judges with the cores,
//! writes to the bus, answers. Every error goes through [`crate::error::to_status`].
//!
//! The state every call shares is here ([`Validator`]); what the calls do is one file per job,
//! each adding methods to [`Validator`]:
//! - `cache`: the game cache, and the reads that fill it from the bus and keep it current;
//! - `gamelog`: what the service writes to the bus (log appends, notices) and `settle`, the one
//!   place an ending is recorded on `.result` for the platforms (and, running alone, announced);
//! - `check`: the check of every announced verdict against the replay, which settles it again
//!   (recording it when the call that decided it could not);
//! - `create`: CreateGame;
//! - `moves`: SubmitMove, and ValidateMove and LegalMoves (pure, no game involved);
//! - `endings`: Declare, EvaluateImpasse and EndGame;
//! - `queries`: GetGame, ListGames, AnalyzeGame and WatchGame;
//! - `index`: ListGames' index of the games' creations and verdicts, read from the bus;
//! - `sweep`: the timer over the live games that records an ending no call recorded and ends
//!   a game nobody plays (abandoned);
//! - `rpc`: the tonic trait: per call the game and the ply on the call's span, then the method
//!   above that does the work (the span, the caller's trace and the RPC metrics are the layer's
//!   around the service, `crate::calls`).
//!
//! Imports go one way: each file uses this one (the state) and `rpc` uses `moves` and
//! `queries`; this file uses none of them.

mod cache;
mod check;
mod create;
mod durable;
mod endings;
mod flag;
mod gamelog;
mod index;
pub(crate) mod moves;
mod queries;
mod rpc;
mod stream;
mod sweep;

use crate::config::Announcements;
use crate::error::Error;
use crate::store::Bus;
use arbiter_runtime::games::{AsideLedger, GameLog};
use arbiter_telemetry::metrics;
use shogi_adjudication::Verdict;
use shogi_proto::convert::verdict_pb;
use shogi_proto::log::Replay;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize};
use std::sync::{Arc, Mutex};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard, watch};

pub use sweep::SweepSettings;

/// How many times a write retries after losing a race for a game before answering ABORTED.
const MAX_ATTEMPTS: usize = 5;

/// How long a strict call, or a declaration in a pipeline, waits for a verdict's
/// announcement before answering UNAVAILABLE (the ending is stored: a retry waits again).
const ANNOUNCE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// The service state, shared by every call.
#[derive(Debug, Clone)]
pub struct Validator {
    inner: Arc<Inner>,
}

/// One cached game: its replay behind a lock (calls for one game are serialised here, and
/// across instances by the bus's expected sequences), and its last known size.
#[derive(Debug, Default)]
struct Cached {
    replay: Arc<AsyncMutex<Option<Replay>>>,
    bytes: AtomicUsize,
    /// When this instance last stored an entry of the game's log (Unix milliseconds, 0:
    /// never): the log's last entry is no older, which spares the sweep reading it.
    stored_at: AtomicI64,
}

type Slot = Arc<Cached>;
type Guard = OwnedMutexGuard<Option<Replay>>;

#[derive(Debug)]
struct Inner {
    bus: Bus,
    /// Games this instance has read.
    games: Mutex<HashMap<String, Slot>>,
    max_cached_games: usize,
    max_cache_bytes: usize,
    /// The sum of the slots' sizes, kept as they change (and counted again at each eviction),
    /// so that taking a new game into the cache does not add up every game.
    cached_bytes: AtomicUsize,
    shutdown: watch::Receiver<bool>,
    /// Who announces the endings on `.verdict`.
    announcements: Announcements,
    /// The largest answer gRPC sends (`max_message_bytes`): what GetGame and AnalyzeGame size
    /// their answers against (`pages.rs`).
    max_answer_bytes: usize,
    /// ListGames' index, brought up to date with the bus by each call.
    index: AsyncMutex<index::GameIndex>,
    /// Where the time a call was received is read.
    time: crate::TimeSource,
}

/// The game logs as this service reads and writes them, its set-asides under its name.
pub static GAME_LOG: GameLog = GameLog::new(AsideLedger::copying("move-validator"));

impl Validator {
    /// A service over `bus`; `shutdown` turning `true` ends open WatchGame streams. The bus is
    /// the record; the cache keeps at most `cache.games` games and about `cache.bytes` bytes.
    /// With [`Announcements::ByOwners`], the repetition-watcher and the impasse-judge run beside
    /// this service and announce every ending the log decides; this service still judges every
    /// ply with the whole adjudication layer, so that it never accepts a move after an ending,
    /// and records every verdict on `.result`. With [`Announcements::ByValidator`], this
    /// service announces every ending itself. GetGame and AnalyzeGame answers stay within
    /// `max_answer_bytes`, the largest message the server sends.
    pub fn new(
        bus: Bus,
        shutdown: watch::Receiver<bool>,
        cache: CacheLimits,
        announcements: Announcements,
        max_answer_bytes: usize,
    ) -> Validator {
        metrics().observe_set_aside(GAME_LOG.name(), || GAME_LOG.aside().counts());
        Validator {
            inner: Arc::new(Inner {
                bus,
                games: Mutex::new(HashMap::new()),
                max_cached_games: cache.games.max(1),
                max_cache_bytes: cache.bytes,
                cached_bytes: AtomicUsize::new(0),
                shutdown,
                announcements,
                max_answer_bytes,
                index: AsyncMutex::new(index::GameIndex::default()),
                time: crate::TimeSource::system(),
            }),
        }
    }

    /// This service reading the time a call was received from `time` (a test's clock). Only
    /// before the service is shared.
    pub fn with_time(mut self, time: crate::TimeSource) -> Validator {
        Arc::get_mut(&mut self.inner)
            .expect("with_time before the validator is shared")
            .time = time;
        self
    }

    /// The time now, as a call received now records it (Unix milliseconds).
    fn now(&self) -> i64 {
        self.inner.time.now_unix_ms()
    }
}

/// How much the validator's game cache may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// Games at most.
    pub games: usize,
    /// Bytes, about, at most ([`games::footprint`](crate::games::footprint)).
    pub bytes: usize,
}

impl Default for CacheLimits {
    fn default() -> CacheLimits {
        CacheLimits {
            games: 100_000,
            bytes: 256 * 1024 * 1024,
        }
    }
}

fn game_over(replay: &Replay, verdict: &Verdict) -> Error {
    Error::GameOver {
        game_id: replay.id().to_owned(),
        verdict: Box::new(
            replay
                .verdict()
                .unwrap_or_else(|| verdict_pb(replay.id(), verdict)),
        ),
    }
}
