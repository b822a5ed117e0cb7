//! The `shogi.v1.MoveValidator` service: parses and checks requests, judges with the cores,
//! writes to the bus, answers. Every error goes through [`crate::error::to_status`].

use crate::error::{Error, PlyConflict};
use crate::games;
use crate::store::{Bus, Published};
use arbiter_runtime::games::{Announced, Reader};
use arbiter_telemetry::{metrics, propagation};
use futures::StreamExt;
use shogi_adjudication::{
    DeclarationRule, Evidence, GameError, ResultCode, Ruleset, Verdict, evaluate_declaration,
};
use shogi_proto::convert::{
    self, check_game_id, parse_sfen, parse_usi, result_code_from_pb, verdict_pb, warning_pb,
};
use shogi_proto::event::{Envelope, LogEntry, decode_created, decode_verdict};
use shogi_proto::log::{Applied, Replay};
use shogi_proto::subject;
use shogi_proto::v1::{self as pb, move_validator_server::MoveValidator};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard, watch};
use tonic::{Request, Response, Status};
use tracing::Instrument;

/// How many times a write retries after losing a race for a game before answering ABORTED.
const MAX_ATTEMPTS: usize = 5;

/// How long a strict call, or a declaration in a pipeline, waits for a verdict's
/// announcement before answering UNAVAILABLE (the ending is stored: a retry waits again).
const ANNOUNCE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// The metadata key that asks for strict mode (`shogi-strict: true`), on CreateGame for the
/// whole game or on one SubmitMove call.
pub const STRICT_METADATA: &str = "shogi-strict";

fn strict_requested(metadata: &tonic::metadata::MetadataMap) -> bool {
    metadata
        .get(STRICT_METADATA)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Declares the span of a call to `MoveValidator/<method>`: a server span in OpenTelemetry's
/// terms, with the game's id and ply (recorded later when the request does not name them), so
/// that every line logged while serving the call names the game.
macro_rules! rpc_span {
    ($name:literal, $method:literal) => {
        tracing::info_span!(
            $name,
            otel.name = concat!("shogi.v1.MoveValidator/", $method),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            rpc.system = "grpc",
            rpc.method = $method,
            game_id = tracing::field::Empty,
            ply = tracing::field::Empty,
        )
    };
}

/// Serves one call: `work` runs in `span`, continuing the caller's trace (the W3C trace context
/// in `metadata`), and its handling time is recorded by method and status code.
async fn traced<T>(
    method: &'static str,
    metadata: &tonic::metadata::MetadataMap,
    span: tracing::Span,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Status> {
    let started = std::time::Instant::now();
    let parent = propagation::from_metadata(metadata);
    let result = propagation::within(span.clone(), parent, work)
        .await
        .map_err(Status::from);
    let code = result
        .as_ref()
        .map_or_else(Status::code, |_| tonic::Code::Ok);
    if result.is_err() {
        span.record("otel.status_code", "ERROR");
    }
    metrics().record_rpc(method, code, started.elapsed().as_secs_f64());
    result
}

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
    /// Whether the repetition-watcher and the impasse-judge announce the endings
    /// ([`shogi_adjudication::ResultCode::announcer`]).
    pipeline: bool,
}

/// The reader of game logs this service is, as its copies set aside and its counts name it.
pub static READER: Reader = Reader::new("move-validator");

impl Validator {
    /// A service over `bus`; `shutdown` turning `true` ends open WatchGame streams. The bus is
    /// the record; the cache keeps at most `cache.games` games and about `cache.bytes` bytes.
    /// With `pipeline`, the repetition-watcher and the impasse-judge run beside this service
    /// and announce every ending the log decides; this service still judges every ply with the
    /// whole adjudication layer, so that it never accepts a move after an ending. Without it,
    /// this service announces every ending itself.
    pub fn new(
        bus: Bus,
        shutdown: watch::Receiver<bool>,
        cache: CacheLimits,
        pipeline: bool,
    ) -> Validator {
        metrics().observe_set_aside(READER.name(), || READER.counts());
        Validator {
            inner: Arc::new(Inner {
                bus,
                games: Mutex::new(HashMap::new()),
                max_cached_games: cache.games.max(1),
                max_cache_bytes: cache.bytes,
                cached_bytes: AtomicUsize::new(0),
                shutdown,
                pipeline,
            }),
        }
    }

    fn slot(&self, id: &str) -> Slot {
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

    fn forget(&self, id: &str) {
        let mut games = self.inner.games.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = games.remove(id) {
            let bytes = slot.bytes.swap(0, Ordering::Relaxed);
            self.inner.cached_bytes.fetch_sub(bytes, Ordering::Relaxed);
        }
    }

    /// Game `id` read from the bus: its creation event and its whole log; `None` when it was
    /// never created.
    async fn read(&self, id: &str) -> Result<Option<Replay>, Error> {
        let loaded = READER
            .load(&self.inner.bus.inner, id)
            .await
            .map_err(Error::from_read)?;
        let Some(mut replay) = loaded else {
            return Ok(None);
        };
        self.catch_up(&mut replay).await?;
        Ok(Some(replay))
    }

    /// The game, loaded from the bus if this instance has not seen it, and brought up to date
    /// with the bus when `fresh`.
    async fn game(&self, id: &str, fresh: bool) -> Result<Guard, Error> {
        let slot = self.slot(id);
        let mut guard = slot.replay.clone().lock_owned().await;
        match guard.as_mut() {
            Some(replay) if fresh => {
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
    async fn catch_up(&self, replay: &mut Replay) -> Result<(), Error> {
        READER
            .catch_up(&self.inner.bus.inner, replay)
            .await
            .map_err(Error::unavailable)
    }

    /// After a lost race: reads the log; if it holds nothing new, this instance's copy is
    /// stale (the game was purged or recreated), so the game is read again from the bus.
    async fn after_conflict(&self, guard: &mut Guard) -> Result<(), Error> {
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
    async fn reload(&self, guard: &mut Guard, id: &str) -> Result<(), Error> {
        **guard = None;
        let Some(replay) = self.read(id).await? else {
            self.forget(id);
            return Err(Error::NotFound(id.to_owned()));
        };
        **guard = Some(replay);
        Ok(())
    }

    /// Appends `entry` to the game's log, guarded by the log's expected last sequence.
    async fn append(&self, replay: &Replay, entry: LogEntry) -> Result<Published, Error> {
        self.inner
            .bus
            .write(entry.envelope(replay.last_seq()))
            .await
    }

    /// Appends the verdict of an ending that does not follow from the moves to the log.
    async fn append_end(&self, replay: &Replay, verdict: &pb::Verdict) -> Result<Published, Error> {
        self.append(replay, LogEntry::Ending(verdict.clone())).await
    }

    /// Publishes a notice on a game's `.declare` or `.warning` subject. The log already holds
    /// what it says (or it follows from the log), so a failure here is logged, not returned.
    async fn notify(&self, id: &str, notice: Envelope) {
        let msg_id = notice.msg_id.clone();
        if let Err(e) = self.inner.bus.write(notice).await {
            tracing::warn!(game_id = id, msg_id, error = %e, "notice not published");
        }
    }

    /// Announces a verdict on `.verdict`, which holds one message per game: the publish
    /// expects the subject empty, so a second announcement stores nothing (and the stream
    /// republishes only what it stores to the core subject platforms subscribe to); an entry
    /// there that is not this verdict is set aside, never taken for an announcement
    /// (`Reader::announce`).
    async fn notify_verdict(&self, verdict: &pb::Verdict) {
        let id = &verdict.game_id;
        if !self.inner.bus.inner.connected() {
            tracing::warn!(game_id = %id, "verdict not announced: not connected");
            return;
        }
        match READER.announce(&self.inner.bus.inner, verdict).await {
            Ok(Announced::Stored(_)) => {
                let code = result_code_from_pb(verdict.code).map_or("?", |c| c.as_str());
                metrics().count_verdict(code, "move-validator");
            }
            Ok(Announced::Already) => {
                tracing::debug!(game_id = %id, ply = verdict.ply, "verdict already announced");
            }
            Err(e) => tracing::warn!(game_id = %id, error = %e, "verdict not announced"),
        }
    }

    /// After a ply is stored: its warnings and verdict go on their subjects, unless the
    /// pipeline announces them.
    async fn publish_consequences(&self, replay: &Replay) {
        if self.inner.pipeline {
            return;
        }
        let id = replay.id();
        for (i, w) in replay.last_warnings().iter().enumerate() {
            self.notify(id, Envelope::warning(&warning_pb(id, w), i))
                .await;
        }
        if let Some(v) = games::verdict(replay) {
            self.notify_verdict(&v).await;
        }
    }

    /// After an ending recorded in the log (a report, a declaration, a forfeit): announced
    /// here unless the pipeline (the impasse-judge) announces it from the log.
    async fn announce_recorded(&self, verdict: &pb::Verdict) {
        if !self.inner.pipeline {
            self.notify_verdict(verdict).await;
        }
    }

    async fn create_game(
        &self,
        req: pb::CreateGameRequest,
        strict: bool,
    ) -> Result<pb::GameState, Error> {
        // Checked now, so that a bad ruleset is refused before anything is written.
        convert::checked_ruleset_from_pb(req.ruleset.as_ref())?;
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
        let created = pb::GameCreated {
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
            let published = self.inner.bus.write(Envelope::created(&created)).await?;
            match published {
                Published::Stored(seq) => {
                    let replay = Replay::from_created(created, seq)?;
                    let state = games::state(&replay);
                    // A start position can already be decided (no legal move, or an
                    // automatic declaration): no move will reach the pipeline, so this
                    // service announces it.
                    if let Some(v) = &state.verdict {
                        self.notify_verdict(v).await;
                    }
                    *self.slot(&id).replay.clone().lock_owned().await = Some(replay);
                    tracing::info!("game created");
                    Ok(state)
                }
                // The id is taken: the same creation again is a retry and gets the same
                // answer; anything else is a conflict.
                Published::Duplicate(_) | Published::Conflict => {
                    let guard = self.game(&id, true).await?;
                    let replay = guard.as_ref().ok_or_else(|| Error::NotFound(id.clone()))?;
                    if replay.created() == created {
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

    async fn submit_move(
        &self,
        req: pb::SubmitMoveRequest,
        strict: bool,
    ) -> Result<pb::SubmitMoveResponse, Error> {
        let answer = self.submit_move_now(req).await?;
        if let Some(v) = &answer.verdict
            && (strict || self.is_strict(&v.game_id).await)
        {
            self.announced(&v.game_id).await?;
        }
        Ok(answer)
    }

    /// Whether the game was created in strict mode.
    async fn is_strict(&self, id: &str) -> bool {
        match self.game(id, false).await {
            Ok(guard) => guard.as_ref().is_some_and(Replay::strict),
            Err(_) => false,
        }
    }

    /// Waits until the game's verdict is announced on `.verdict` (by this service, or by the
    /// watcher or the judge that owns it), within [`ANNOUNCE_DEADLINE`].
    async fn announced(&self, id: &str) -> Result<pb::Verdict, Error> {
        let mut notices = self
            .inner
            .bus
            .inner
            .follow(&subject::verdict(id))
            .await
            .map_err(Error::unavailable)?;
        let deadline = tokio::time::Instant::now() + ANNOUNCE_DEADLINE;
        loop {
            match tokio::time::timeout_at(deadline, notices.next()).await {
                Ok(Some(Ok(m))) => {
                    // Only a Verdict of this game is an announcement; anything else on
                    // `.verdict` is passed over (its announcer sets it aside, issue 20).
                    let verdict = decode_verdict(m.message_type.as_deref(), &m.payload)
                        .ok()
                        .filter(|v| v.game_id == id);
                    match verdict {
                        Some(v) => return Ok(v),
                        None => tracing::error!(
                            game_id = id,
                            seq = m.sequence,
                            "an entry on the game's .verdict is not a verdict of the game: passed over"
                        ),
                    }
                }
                Ok(Some(Err(e))) => return Err(Error::unavailable(e)),
                Ok(None) | Err(_) => {
                    return Err(Error::VerdictPending(format!(
                        "the verdict of game {id} was not announced within {ANNOUNCE_DEADLINE:?}; \
                         is the pipeline (repetition-watcher, impasse-judge) running?"
                    )));
                }
            }
        }
    }

    async fn submit_move_now(
        &self,
        req: pb::SubmitMoveRequest,
    ) -> Result<pb::SubmitMoveResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        if req.ply == 0 {
            return Err(Error::invalid("ply", "plies start at 1"));
        }
        let mv = parse_usi("usi", &req.usi)?;
        let usi = mv.to_string();
        let mut guard = self.game(&req.game_id, false).await?;
        let mut caught_up = false;
        for _ in 0..MAX_ATTEMPTS {
            let replay = guard
                .as_mut()
                .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
            let next = replay.ply() + 1;
            // A retry of a ply already played, or of the forfeit that ended the game.
            if req.ply < next {
                if let Some(answer) = games::answer(replay, req.ply)
                    .filter(|_| replay.game().moves().nth(req.ply as usize - 1) == Some(mv))
                {
                    return Ok(answer);
                }
                // Refused; read the bus first so that the refusal names the current ply.
                if !caught_up {
                    self.catch_up(replay).await?;
                }
                return Err(ply_error(PlyConflict::Taken, replay, req.ply));
            }
            if replay
                .forfeit()
                .is_some_and(|f| f.ply == req.ply && f.mv == mv)
                && let Some(answer) = games::forfeit_answer(replay)
            {
                return Ok(answer);
            }
            if req.ply > next || replay.game().is_over() {
                // This instance may be behind the bus: look once before refusing.
                if !caught_up {
                    self.catch_up(replay).await?;
                    caught_up = true;
                    continue;
                }
                if let Some(v) = replay.game().verdict() {
                    return Err(game_over(replay, v));
                }
                return Err(ply_error(PlyConflict::Ahead, replay, req.ply));
            }
            // Played on the cached game in place, pending its write; if the write does not
            // store it, the game is read again from the bus.
            let played = match replay.play(mv) {
                Ok(played) => played,
                Err(GameError::Illegal(_)) if !caught_up => {
                    // Nothing is written for a refusal, so nothing would tell a stale instance
                    // that the ply is taken: read the log before refusing.
                    self.catch_up(replay).await?;
                    caught_up = true;
                    continue;
                }
                Err(GameError::Illegal(illegal)) => {
                    metrics().count_move("SubmitMove", "rejected", Some(illegal.kind.as_str()));
                    let pos = replay.game().position();
                    return Ok(pb::SubmitMoveResponse {
                        outcome: pb::MoveOutcome::Rejected as i32,
                        illegal_kind: convert::illegal_kind_pb(illegal.kind),
                        ply: req.ply,
                        sfen_after: pos.to_sfen(),
                        gives_check: false,
                        verdict: None,
                        warnings: Vec::new(),
                        position_hash: pos.hash(),
                    });
                }
                Err(GameError::GameOver) => {
                    return Err(match replay.game().verdict() {
                        Some(v) => game_over(replay, v),
                        None => Error::FailedPrecondition("the game is over".into()),
                    });
                }
                Err(GameError::NoDeclarationRule) => {
                    return Err(Error::DeclarationNotAllowed(replay.id().to_owned()));
                }
            };
            let outcome = played.outcome();
            let forfeited = shogi_proto::log::forfeited(outcome, replay.game());
            let written = if forfeited {
                let verdict = outcome
                    .verdict
                    .as_ref()
                    .map(|v| verdict_pb(replay.id(), v))
                    .unwrap_or_default();
                self.append_end(replay, &verdict).await
            } else {
                let pos = replay.game().position();
                let event = pb::MoveAccepted {
                    game_id: replay.id().to_owned(),
                    ply: req.ply,
                    usi: usi.clone(),
                    sfen_after: pos.to_sfen(),
                    gives_check: outcome.gave_check,
                    position_hash: pos.hash(),
                };
                self.append(replay, LogEntry::Move(event)).await
            };
            let published = match written {
                Ok(published) => published,
                Err(e) => {
                    // The cached game is ahead of the log: read it again next time.
                    *guard = None;
                    self.forget(&req.game_id);
                    return Err(e);
                }
            };
            match published {
                Published::Stored(seq) => {
                    replay.stored(seq, played);
                    if forfeited {
                        tracing::info!(game_id = %replay.id(), ply = req.ply, %usi, "move forfeited");
                        let answer = games::forfeit_answer(replay)
                            .ok_or_else(|| Error::Contended(replay.id().to_owned()))?;
                        let kind = convert::illegal_kind_name(answer.illegal_kind);
                        metrics().count_move("SubmitMove", "forfeited", Some(kind));
                        if let Some(v) = &answer.verdict {
                            self.announce_recorded(v).await;
                        }
                        return Ok(answer);
                    }
                    tracing::info!(game_id = %replay.id(), ply = req.ply, %usi, "move accepted");
                    metrics().count_move("SubmitMove", "accepted", None);
                    self.publish_consequences(replay).await;
                    return games::answer(replay, req.ply)
                        .ok_or_else(|| Error::Contended(replay.id().to_owned()));
                }
                // Someone (a retry through another instance, or another writer) got there
                // first: read what they wrote and decide again.
                Published::Duplicate(_) | Published::Conflict => {
                    tracing::debug!(game_id = %replay.id(), ply = req.ply, %usi, "lost a race, reading the game again");
                    self.reload(&mut guard, &req.game_id).await?;
                    caught_up = true;
                }
            }
        }
        Err(Error::Contended(req.game_id))
    }

    async fn declare(&self, req: pb::DeclareRequest) -> Result<pb::DeclareResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        let declarer = convert::color_from_pb(req.declarer)
            .ok_or_else(|| Error::invalid("declarer", "must be COLOR_BLACK or COLOR_WHITE"))?;
        let mut guard = self.game(&req.game_id, true).await?;
        for _ in 0..MAX_ATTEMPTS {
            let replay = guard
                .as_mut()
                .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
            if let Some(v) = replay.game().verdict() {
                // A retry of the declaration that ended the game gets the same answer.
                if let Evidence::Declaration(report) = &v.evidence
                    && report.declarer == declarer
                    && report.has_time == req.has_time
                {
                    return Ok(pb::DeclareResponse {
                        report: Some(convert::report_pb(report)),
                        verdict: games::verdict(replay),
                    });
                }
                return Err(game_over(replay, v));
            }
            let declared_at = replay.ply();
            let mut game = replay.game().clone();
            let declared = game.declare(declarer, req.has_time).map_err(|e| match e {
                GameError::NoDeclarationRule => Error::DeclarationNotAllowed(req.game_id.clone()),
                other => Error::FailedPrecondition(other.to_string()),
            })?;
            let report = convert::report_pb(&declared.report);
            let verdict = declared
                .verdict
                .as_ref()
                .map(|v| verdict_pb(replay.id(), v));
            // A declaration that ends the game goes into the log as its verdict; a refused one
            // changes nothing and is only announced.
            if let Some(v) = &verdict {
                match self.append_end(replay, v).await? {
                    Published::Stored(seq) => replay.commit_ending(seq, game),
                    // A retry (the loop's first check answers it) or another writer: read the
                    // log and judge again.
                    Published::Duplicate(_) | Published::Conflict => {
                        self.after_conflict(&mut guard).await?;
                        continue;
                    }
                }
            }
            let id = replay.id().to_owned();
            let event = pb::Declaration {
                game_id: id.clone(),
                ply: declared_at,
                declarer: req.declarer,
                has_time: req.has_time,
                report: Some(report.clone()),
            };
            self.notify(&id, Envelope::declaration(&event)).await;
            if let Some(v) = &verdict {
                if self.inner.pipeline {
                    // The impasse-judge announces it from the log; the answer waits for it.
                    drop(guard);
                    self.announced(&id).await?;
                } else {
                    self.notify_verdict(v).await;
                }
            }
            tracing::info!(game_id = %id, ply = declared_at, outcome = %report.outcome, "declaration");
            return Ok(pb::DeclareResponse {
                report: Some(report),
                verdict,
            });
        }
        Err(Error::Contended(req.game_id))
    }

    async fn evaluate_impasse(
        &self,
        req: pb::EvaluateImpasseRequest,
    ) -> Result<pb::EvaluateImpasseResponse, Error> {
        use pb::evaluate_impasse_request::Target;
        let report = match req.target {
            None => return Err(Error::invalid("target", "give a game_id or an sfen")),
            Some(Target::GameId(id)) => {
                check_game_id("game_id", &id)?;
                let guard = self.game(&id, true).await?;
                let replay = guard.as_ref().ok_or_else(|| Error::NotFound(id.clone()))?;
                let game = replay.game();
                game.declaration_report(game.side_to_move(), req.has_time)
                    .ok_or_else(|| Error::DeclarationNotAllowed(id.clone()))?
            }
            Some(Target::Sfen(sfen)) => {
                let pos = parse_sfen("sfen", &sfen)?;
                let rule = if req.rule.is_empty() {
                    DeclarationRule::Points27
                } else {
                    req.rule
                        .parse()
                        .map_err(|e: shogi_adjudication::UnknownName| {
                            Error::invalid("rule", e.to_string())
                        })?
                };
                let initial = if req.initial_sfen.is_empty() {
                    None
                } else {
                    Some(parse_sfen("initial_sfen", &req.initial_sfen)?)
                };
                evaluate_declaration(&pos, initial.as_ref(), rule)
            }
        };
        Ok(pb::EvaluateImpasseResponse {
            report: Some(convert::report_pb(&report)),
        })
    }

    async fn end_game(&self, req: pb::EndGameRequest) -> Result<pb::EndGameResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        let reason = pb::EndReason::try_from(req.reason).unwrap_or(pb::EndReason::Unspecified);
        let loser = convert::color_from_pb(req.loser);
        let mut guard = self.game(&req.game_id, true).await?;
        for _ in 0..MAX_ATTEMPTS {
            let replay = guard
                .as_mut()
                .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
            let ruleset: Ruleset = *replay.game().ruleset();
            let (code, winner, ordinary) = match reason {
                pb::EndReason::Unspecified => {
                    return Err(Error::invalid("reason", "must be set"));
                }
                pb::EndReason::Resignation | pb::EndReason::Timeout => {
                    let loser = loser.ok_or_else(|| {
                        Error::invalid("loser", "a resignation or timeout names the losing side")
                    })?;
                    let code = if reason == pb::EndReason::Resignation {
                        ResultCode::Resignation
                    } else {
                        ResultCode::Timeout
                    };
                    (code, Some(!loser), None)
                }
                pb::EndReason::Abort => (ResultCode::Abort, None, None),
                pb::EndReason::JishogiAgreement => {
                    (ResultCode::Agreement, None, Some(ruleset.jishogi))
                }
            };
            if let Some(v) = replay.game().verdict() {
                // The same ending reported again is a retry.
                if v.code == code && v.winner == winner {
                    return Ok(pb::EndGameResponse {
                        verdict: games::verdict(replay),
                    });
                }
                return Err(game_over(replay, v));
            }
            let mut game = replay.game().clone();
            let verdict = game
                .record_result(code, winner, ordinary)
                .map_err(|e| Error::FailedPrecondition(e.to_string()))?
                .clone();
            let message = verdict_pb(replay.id(), &verdict);
            match self.append_end(replay, &message).await? {
                Published::Stored(seq) => {
                    replay.commit_ending(seq, game);
                    tracing::info!(game_id = %replay.id(), ply = replay.ply(), code = code.as_str(), "game ended");
                    self.announce_recorded(&message).await;
                    return Ok(pb::EndGameResponse {
                        verdict: Some(message),
                    });
                }
                Published::Duplicate(_) | Published::Conflict => {
                    self.after_conflict(&mut guard).await?;
                }
            }
        }
        Err(Error::Contended(req.game_id))
    }
}

impl Validator {
    /// ListGames: the creation events on the bus from the page token on, each with the
    /// verdict stored on its `.verdict` subject, if any.
    async fn list_games(&self, req: pb::ListGamesRequest) -> Result<pb::ListGamesResponse, Error> {
        let size = match req.page_size {
            0 => LIST_PAGE,
            n if n <= LIST_PAGE_MAX => n,
            n => {
                return Err(Error::invalid(
                    "page_size",
                    format!("{n} is more than {LIST_PAGE_MAX}"),
                ));
            }
        } as usize;
        let mut from: u64 = if req.page_token.is_empty() {
            1
        } else {
            req.page_token
                .parse()
                .ok()
                .filter(|&seq| seq > 0)
                .ok_or_else(|| Error::invalid("page_token", "not a token of a ListGames answer"))?
        };
        let bus = &self.inner.bus.inner;
        let mut games = Vec::new();
        let mut scanned = 0;
        let filter = subject::created("*");
        while games.len() < size && scanned < LIST_SCAN_MAX {
            let Some(msg) = bus.next(&filter, from).await.map_err(Error::unavailable)? else {
                // Nothing later yet: the next page starts where this one stopped.
                break;
            };
            from = msg.sequence + 1;
            scanned += 1;
            let created = match decode_created(&msg.payload) {
                Ok(created) if subject::created(&created.game_id) == msg.subject => created,
                // Garbage, or an event naming another game: not a game anyone can open.
                _ => {
                    tracing::debug!(seq = msg.sequence, subject = %msg.subject, "unreadable creation event left out of the list");
                    continue;
                }
            };
            let verdict = match bus
                .last(&subject::verdict(&created.game_id))
                .await
                .map_err(Error::unavailable)?
            {
                Some(v) => decode_verdict(v.message_type.as_deref(), &v.payload).ok(),
                None => None,
            };
            if req.live_only && verdict.is_some() {
                continue;
            }
            let preset = convert::preset_of(created.ruleset.as_ref()).to_owned();
            games.push(pb::GameSummary {
                game_id: created.game_id,
                created_sequence: msg.sequence,
                preset,
                start_sfen: created.start_sfen,
                verdict,
            });
        }
        Ok(pb::ListGamesResponse {
            games,
            next_page_token: from.to_string(),
        })
    }

    /// AnalyzeGame: the game brought up to date with the bus, analysed.
    async fn analyze_game(
        &self,
        req: pb::AnalyzeGameRequest,
    ) -> Result<pb::AnalyzeGameResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        let guard = self.game(&req.game_id, true).await?;
        let replay = guard
            .as_ref()
            .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
        Ok(games::analysis(replay))
    }
}

/// How much the validator's game cache may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// Games at most.
    pub games: usize,
    /// Bytes, about, at most ([`games::footprint`]).
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

fn ply_error(conflict: PlyConflict, replay: &Replay, requested: u32) -> Error {
    Error::Ply {
        conflict,
        game_id: replay.id().to_owned(),
        requested,
        current_ply: replay.ply(),
    }
}

fn game_over(replay: &Replay, verdict: &Verdict) -> Error {
    Error::GameOver {
        game_id: replay.id().to_owned(),
        verdict: Box::new(verdict_pb(replay.id(), verdict)),
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

/// ValidateMove: pure, no game involved.
pub fn validate_move(req: &pb::ValidateMoveRequest) -> Result<pb::ValidateMoveResponse, Error> {
    let pos = parse_sfen("sfen", &req.sfen)?;
    let mv = parse_usi("usi", &req.usi)?;
    Ok(match pos.check_move(mv) {
        Ok(()) => {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            let gives_check = after.in_check();
            let no_legal_reply = !after.has_legal_move();
            pb::ValidateMoveResponse {
                legal: true,
                illegal_kind: pb::IllegalKind::Unspecified as i32,
                sfen_after: after.to_sfen(),
                gives_check,
                is_checkmate: gives_check && no_legal_reply,
                no_legal_reply,
                position_hash: after.hash(),
                illegal_kind_name: String::new(),
            }
        }
        Err(illegal) => pb::ValidateMoveResponse {
            legal: false,
            illegal_kind: convert::illegal_kind_pb(illegal.kind),
            sfen_after: String::new(),
            gives_check: false,
            is_checkmate: false,
            no_legal_reply: false,
            position_hash: 0,
            illegal_kind_name: illegal.kind.as_str().to_owned(),
        },
    })
}

/// LegalMoves: pure, no game involved; the rules core's list, in its order.
pub fn legal_moves(req: &pb::LegalMovesRequest) -> Result<pb::LegalMovesResponse, Error> {
    let pos = parse_sfen("sfen", &req.sfen)?;
    Ok(pb::LegalMovesResponse {
        moves: pos.legal_moves().iter().map(|m| m.to_string()).collect(),
        in_check: pos.in_check(),
    })
}

/// ListGames' default and largest page.
const LIST_PAGE: u32 = 50;
const LIST_PAGE_MAX: u32 = 100;

/// How many creation events one ListGames call reads at most, so that a `live_only` call over
/// a stream of finished games answers in bounded time (with a token to go on from).
const LIST_SCAN_MAX: usize = 1000;

type EventStream =
    Pin<Box<dyn futures::Stream<Item = Result<pb::WatchGameResponse, Status>> + Send>>;

#[tonic::async_trait]
impl MoveValidator for Validator {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let strict = strict_requested(request.metadata()) || request.get_ref().strict;
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("create_game", "CreateGame");
        if !req.game_id.is_empty() {
            span.record("game_id", req.game_id.as_str());
        }
        let game = traced(
            "CreateGame",
            &metadata,
            span,
            Validator::create_game(self, req, strict),
        )
        .await?;
        Ok(Response::new(pb::CreateGameResponse { game: Some(game) }))
    }

    async fn submit_move(
        &self,
        request: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        let strict = strict_requested(request.metadata()) || request.get_ref().strict;
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("submit_move", "SubmitMove");
        span.record("game_id", req.game_id.as_str());
        span.record("ply", req.ply);
        let answer = traced(
            "SubmitMove",
            &metadata,
            span,
            Validator::submit_move(self, req, strict),
        )
        .await?;
        Ok(Response::new(answer))
    }

    async fn validate_move(
        &self,
        request: Request<pb::ValidateMoveRequest>,
    ) -> Result<Response<pb::ValidateMoveResponse>, Status> {
        let span = rpc_span!("validate_move", "ValidateMove");
        let answer = traced("ValidateMove", request.metadata(), span, async {
            validate_move(request.get_ref())
        })
        .await?;
        let (outcome, kind) = if answer.legal {
            ("accepted", None)
        } else {
            (
                "rejected",
                Some(convert::illegal_kind_name(answer.illegal_kind)),
            )
        };
        metrics().count_move("ValidateMove", outcome, kind);
        Ok(Response::new(answer))
    }

    async fn declare(
        &self,
        request: Request<pb::DeclareRequest>,
    ) -> Result<Response<pb::DeclareResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("declare", "Declare");
        span.record("game_id", req.game_id.as_str());
        Ok(Response::new(
            traced("Declare", &metadata, span, Validator::declare(self, req)).await?,
        ))
    }

    async fn evaluate_impasse(
        &self,
        request: Request<pb::EvaluateImpasseRequest>,
    ) -> Result<Response<pb::EvaluateImpasseResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("evaluate_impasse", "EvaluateImpasse");
        if let Some(pb::evaluate_impasse_request::Target::GameId(id)) = &req.target {
            span.record("game_id", id.as_str());
        }
        Ok(Response::new(
            traced(
                "EvaluateImpasse",
                &metadata,
                span,
                Validator::evaluate_impasse(self, req),
            )
            .await?,
        ))
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let id = req.game_id;
        let span = rpc_span!("get_game", "GetGame");
        span.record("game_id", id.as_str());
        let game = traced("GetGame", &metadata, span, async {
            check_game_id("game_id", &id)?;
            let guard = self.game(&id, true).await?;
            let replay = guard.as_ref().ok_or_else(|| Error::NotFound(id.clone()))?;
            Ok(games::state(replay))
        })
        .await?;
        Ok(Response::new(pb::GetGameResponse { game: Some(game) }))
    }

    type WatchGameStream = EventStream;

    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let req = request.into_inner();
        check_game_id("game_id", &req.game_id).map_err(Error::from)?;
        // Unknown games are NOT_FOUND before the stream starts.
        drop(self.game(&req.game_id, false).await?);
        let mut messages = self
            .inner
            .bus
            .inner
            .follow(&subject::all(&req.game_id))
            .await
            .map_err(Error::unavailable)?;
        let mut shutdown = self.inner.shutdown.clone();
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let game_id = req.game_id.clone();
        tokio::spawn(
            async move {
                // The log is read through the one replay, as every reader reads it: a move is
                // sent once the replay has played it, an entry it sets aside is not sent.
                let mut replay: Option<Replay> = None;
                loop {
                    let next = tokio::select! {
                        next = messages.next() => next,
                        // The client went away: the stream (and its consumer on the bus) is
                        // dropped now, not at the game's next event.
                        () = tx.closed() => return,
                        () = stopped(&mut shutdown) => {
                            let _ = tx.send(Err(crate::error::shutting_down())).await;
                            return;
                        }
                    };
                    let msg = match next {
                        Some(Ok(msg)) => msg,
                        Some(Err(e)) => {
                            let _ = tx.send(Err(Error::unavailable(e).into())).await;
                            return;
                        }
                        None => return,
                    };
                    let event = match watch_event(&mut replay, &msg, req.from_ply) {
                        Ok(Some(event)) => event,
                        Ok(None) => continue,
                        Err(e) => {
                            tracing::warn!(seq = msg.sequence, subject = %msg.subject, error = %e, "event not sent to a watcher");
                            continue;
                        }
                    };
                    let last = matches!(event, pb::watch_game_response::Event::Verdict(_));
                    let event = pb::WatchGameResponse {
                        sequence: msg.sequence,
                        event: Some(event),
                    };
                    if tx.send(Ok(event)).await.is_err() || last {
                        return;
                    }
                }
            }
            .instrument(tracing::info_span!("watch_game", game_id = %game_id)),
        );
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn end_game(
        &self,
        request: Request<pb::EndGameRequest>,
    ) -> Result<Response<pb::EndGameResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("end_game", "EndGame");
        span.record("game_id", req.game_id.as_str());
        Ok(Response::new(
            traced("EndGame", &metadata, span, Validator::end_game(self, req)).await?,
        ))
    }

    async fn legal_moves(
        &self,
        request: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<pb::LegalMovesResponse>, Status> {
        let span = rpc_span!("legal_moves", "LegalMoves");
        Ok(Response::new(
            traced("LegalMoves", request.metadata(), span, async {
                legal_moves(request.get_ref())
            })
            .await?,
        ))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("list_games", "ListGames");
        Ok(Response::new(
            traced(
                "ListGames",
                &metadata,
                span,
                Validator::list_games(self, req),
            )
            .await?,
        ))
    }

    async fn analyze_game(
        &self,
        request: Request<pb::AnalyzeGameRequest>,
    ) -> Result<Response<pb::AnalyzeGameResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("analyze_game", "AnalyzeGame");
        span.record("game_id", req.game_id.as_str());
        Ok(Response::new(
            traced(
                "AnalyzeGame",
                &metadata,
                span,
                Validator::analyze_game(self, req),
            )
            .await?,
        ))
    }
}

/// Completes once the shutdown flag is set (or its sender is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// One bus message as a [`pb::WatchGameResponse`] payload; `None` for a move or warning before
/// `from_ply`, for a log entry the replay sets aside, and for the log's record of an ending
/// (its `.verdict` notice is sent instead).
fn watch_event(
    replay: &mut Option<Replay>,
    msg: &arbiter_bus::Message,
    from_ply: u32,
) -> Result<Option<pb::watch_game_response::Event>, String> {
    use pb::watch_game_response::Event;
    use shogi_proto::event::{decode_declaration, decode_warning};
    use shogi_proto::subject::Kind;
    let Some((id, kind)) = subject::parse(&msg.subject) else {
        return Ok(None);
    };
    let payload = &msg.payload[..];
    Ok(match kind {
        Kind::Created => {
            let created = decode_created(payload)?;
            *replay = Some(Replay::new(id, msg.sequence, payload).map_err(|e| e.to_string())?);
            Some(Event::Created(created))
        }
        Kind::Log => {
            let Some(replay) = replay.as_mut() else {
                return Err("a log entry before the game's creation".into());
            };
            // Applied, not copied aside: the entries a watcher meets are the validator's to
            // set aside when it reads the game, once, not once per watcher.
            match replay.apply(msg.entry()) {
                Applied::Played { entry, .. } => {
                    (entry.ply >= from_ply).then_some(Event::Move(*entry))
                }
                _ => None,
            }
        }
        Kind::Declare => Some(Event::Declaration(decode_declaration(payload)?)),
        Kind::Warning => {
            let w = decode_warning(payload)?;
            (w.ply >= from_ply).then_some(Event::Warning(w))
        }
        Kind::Verdict => Some(Event::Verdict(decode_verdict(
            msg.message_type.as_deref(),
            payload,
        )?)),
        Kind::Aside => None,
    })
}
