//! The pipeline worker: one game log at a time, in order, once each, whatever the bus delivers.
//!
//! Invariants:
//! - A game's state is its [`Game`] and the stream sequence of the last log event judged. An
//!   event is judged only when it is the next ply; a delivery at or before the last judged
//!   sequence (or for a ply already played) is a duplicate and only acknowledged; a delivery
//!   past the next ply is a gap, filled by reading the game's log from the stream in order up
//!   to it. Nothing is guessed.
//! - A delivery is acknowledged only after what it caused is on the bus, so a crash before the
//!   ack judges it again, and judging again publishes nothing new: the verdict's log copy is
//!   written with the log's expected last sequence (the ply that ended the game) and the notice
//!   on `.verdict` expects the subject empty. Exactly one verdict per game reaches the bus.
//!   The two writes go out together, in a task of their own when consuming, so that other
//!   games' events do not wait for them; a failed announcement forgets the game, and the
//!   redelivery rebuilds it from the bus.
//! - A verdict ends the game: later events are void (counted, acknowledged).
//! - Garbage (a message that does not decode, a ply that does not follow, an illegal move, an
//!   event for a game never created) is logged with its game id, counted and acknowledged; it
//!   never stops another game.
//! - Games are partitioned over the instances of a role by a hash of the game id, each
//!   instance with its own durable consumer, so one instance at a time judges a game, with no
//!   coordination but the bus.

use crate::telemetry;
use arbiter_bus::{Bus, BusError, Delivery, DurableConfig, Message, Outgoing, Published};
use futures::StreamExt;
use move_validator::{result_code_from_pb, ruleset_from_pb, verdict_pb, warning_pb};
use prost::Message as _;
use shogi_adjudication::{Game, ResultCode};
use shogi_proto::{subject, v1 as pb};
use shogi_rules::{Move, Position};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};
use tracing::Instrument as _;

/// What a pipeline service does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The repetition-watcher: repetition and perpetual check verdicts, and the warnings.
    Watcher,
    /// The impasse-judge: move caps and automatic declarations, and the announcement of every
    /// other ending the validator decided.
    Judge,
}

impl Role {
    /// The service's name, as its binary and its consumers are named.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Watcher => "repetition-watcher",
            Role::Judge => "impasse-judge",
        }
    }

    /// Whether this role announces endings with `code`.
    pub fn owns(self, code: ResultCode) -> bool {
        match self {
            Role::Watcher => matches!(code, ResultCode::Repetition | ResultCode::PerpetualCheck),
            // Move caps and automatic declarations are the judge's to decide; every other
            // ending (checkmate, try rule, a forfeit, a platform's report, an explicit
            // declaration) the validator decides, and the judge announces it again from the
            // log, so that an ending is announced even when the validator dies between
            // storing it and announcing it. The announcement is guarded: it is stored once.
            Role::Judge => !matches!(code, ResultCode::Repetition | ResultCode::PerpetualCheck),
        }
    }
}

/// Everything a worker can fail with; garbage on the bus is not an error but a count.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bus failed; the delivery is not acknowledged and comes again.
    #[error("bus: {0}")]
    Bus(#[from] BusError),
    /// The configuration is invalid.
    #[error("config: {0}")]
    Config(String),
    /// The health server failed.
    #[error("health server: {0}")]
    Serve(#[from] tonic::transport::Error),
}

/// How a worker consumes.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Its role.
    pub role: Role,
    /// This instance's index, `0..instances`.
    pub instance: u32,
    /// How many instances of the role share the games.
    pub instances: u32,
    /// Deliveries not acknowledged within this time come again.
    pub ack_wait: Duration,
    /// Deliveries in flight at most.
    pub max_ack_pending: usize,
}

impl WorkerConfig {
    /// One instance of `role` with the defaults.
    pub fn new(role: Role) -> WorkerConfig {
        WorkerConfig {
            role,
            instance: 0,
            instances: 1,
            ack_wait: Duration::from_secs(5),
            max_ack_pending: 1024,
        }
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), Error> {
        if self.instances == 0 || self.instance >= self.instances {
            return Err(Error::Config(format!(
                "instance {} is not in 0..{}",
                self.instance, self.instances
            )));
        }
        if self.ack_wait.is_zero() || self.max_ack_pending == 0 {
            return Err(Error::Config(
                "ack wait and max ack pending must be positive".into(),
            ));
        }
        Ok(())
    }

    /// The durable consumer of this instance: one per role, instance and instance count, so
    /// that a restarted instance carries on where it stopped.
    pub fn durable(&self) -> DurableConfig {
        DurableConfig {
            name: format!(
                "{}-{}-of-{}",
                self.role.name(),
                self.instance,
                self.instances
            ),
            filter: "shogi.game.*.move".to_owned(),
            ack_wait: self.ack_wait,
            max_ack_pending: self.max_ack_pending,
        }
    }

    /// Whether this instance judges `game_id`: FNV-1a of the id, modulo the instances.
    pub fn owns_game(&self, game_id: &str) -> bool {
        partition(game_id, self.instances) == self.instance
    }
}

/// The partition of `game_id` among `instances` (FNV-1a 64: stable across processes and
/// versions, which the partitioning depends on).
pub fn partition(game_id: &str, instances: u32) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in game_id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % u64::from(instances.max(1))) as u32
}

/// What a worker has seen, for logs, health and tests.
#[derive(Debug, Default)]
pub struct Stats {
    /// Deliveries received.
    pub deliveries: AtomicU64,
    /// Log events judged (moves played, endings read).
    pub judged: AtomicU64,
    /// Deliveries already judged (redeliveries, retries).
    pub duplicates: AtomicU64,
    /// Log events read from the stream to fill a gap.
    pub gap_filled: AtomicU64,
    /// Events for a game never created, set aside.
    pub unknown_game: AtomicU64,
    /// Events that do not decode or do not follow.
    pub garbage: AtomicU64,
    /// Events after the game's verdict.
    pub void: AtomicU64,
    /// Events of games another instance judges.
    pub foreign: AtomicU64,
    /// Verdicts this instance announced (stored on `.verdict`).
    pub verdicts: AtomicU64,
    /// Warnings published.
    pub warnings: AtomicU64,
}

impl Stats {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// A counter's value.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// One game being judged.
#[derive(Debug)]
struct Judged {
    game: Game,
    /// The sequence of the creation event: the log starts after it.
    created_seq: u64,
    /// The sequence of the last log event judged.
    last_seq: u64,
}

/// A pipeline worker: its games, in memory; the truth is on the bus.
#[derive(Debug)]
pub struct Worker {
    bus: Bus,
    config: WorkerConfig,
    games: HashMap<String, Judged>,
    /// Games whose verdict this worker has seen; their later events are void. Forgetting one
    /// only costs a rebuild from the bus, which finds the verdict again.
    finished: HashSet<String>,
    /// The sequences of the events set aside (for a game never created), most recent last.
    set_aside: Vec<u64>,
    stats: Arc<Stats>,
    /// Verdicts judged by the delivery being handled, to announce before its ack.
    pending: Vec<Announcement>,
    /// Games whose announcement failed in the background: forgotten, so that the redelivery
    /// rebuilds them from the bus and announces again.
    failed_tx: tokio::sync::mpsc::UnboundedSender<String>,
    failed_rx: tokio::sync::mpsc::UnboundedReceiver<String>,
}

/// A verdict to announce: its copy in the log right after the move that decided it (when it
/// followed from a move), then the notice on `.verdict`.
#[derive(Debug, Clone)]
struct Announcement {
    game_id: String,
    verdict: pb::Verdict,
    after_move: Option<u64>,
    /// When the bus stored the move that decided it, if one did.
    decided_at: Option<SystemTime>,
}

const MAX_FINISHED: usize = 200_000;
const MAX_SET_ASIDE: usize = 1024;

enum Step {
    /// Judged; go on.
    Next,
    /// The game ended here.
    Ended,
}

impl Worker {
    /// A worker over `bus`.
    pub fn new(bus: Bus, config: WorkerConfig) -> Worker {
        let (failed_tx, failed_rx) = tokio::sync::mpsc::unbounded_channel();
        let stats = Arc::new(Stats::default());
        telemetry::observe(config.role, stats.clone());
        Worker {
            bus,
            config,
            games: HashMap::new(),
            finished: HashSet::new(),
            set_aside: Vec::new(),
            stats,
            pending: Vec::new(),
            failed_tx,
            failed_rx,
        }
    }

    /// The worker's counters.
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// Games in progress held in memory.
    pub fn active_games(&self) -> usize {
        self.games.len()
    }

    /// The stream sequences of the last events set aside.
    pub fn set_aside(&self) -> &[u64] {
        &self.set_aside
    }

    /// Consumes until `shutdown` completes. Bus failures are logged and retried; they never
    /// end the loop.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        self.config.validate()?;
        tokio::pin!(shutdown);
        let durable = self.config.durable();
        let role = self.config.role.name();
        loop {
            let mut deliveries = tokio::select! {
                got = self.bus.consume(&durable) => match got {
                    Ok(d) => d,
                    Err(e) => {
                        tracing::warn!(role, error = %e, "consumer unavailable, retrying");
                        tokio::select! {
                            () = tokio::time::sleep(Duration::from_millis(250)) => continue,
                            () = &mut shutdown => return Ok(()),
                        }
                    }
                },
                () = &mut shutdown => return Ok(()),
            };
            tracing::info!(role, consumer = %durable.name, "consuming");
            loop {
                let next = tokio::select! {
                    next = deliveries.next() => next,
                    () = &mut shutdown => return Ok(()),
                };
                match next {
                    Some(Ok(d)) => {
                        let handling =
                            telemetry::Handling::start(&durable.name, self.config.role, &d);
                        if let Err(e) = handling.run(self.handle_in_background(d)).await {
                            // Not acknowledged: it comes again after the ack wait.
                            tracing::warn!(role, error = %e, "delivery not judged, will come again");
                        }
                    }
                    Some(Err(e)) => {
                        tracing::warn!(role, error = %e, "consumer error");
                    }
                    None => break,
                }
            }
        }
    }

    /// Judges one delivery and everything before it in its game's log, announces the verdict
    /// it decided if any, then acknowledges it.
    pub async fn handle(&mut self, d: Delivery) -> Result<(), Error> {
        let pending = self.judge(&d).await?;
        for a in &pending {
            if let Err(e) = announce(&self.bus, &self.stats, self.config.role, a).await {
                self.forget(&a.game_id);
                return Err(e);
            }
        }
        d.ack().await?;
        Ok(())
    }

    /// As [`Worker::handle`], but a delivery that decided a verdict is announced and
    /// acknowledged in a task of its own, so that the other games' events do not wait for the
    /// announcement's round trips. The game is finished at once (its later events are void);
    /// if the announcement fails, the game is forgotten and the unacknowledged delivery comes
    /// again to a worker that rebuilds it from the bus.
    async fn handle_in_background(&mut self, d: Delivery) -> Result<(), Error> {
        let pending = self.judge(&d).await?;
        if pending.is_empty() {
            d.ack().await?;
            return Ok(());
        }
        let (bus, stats, role) = (self.bus.clone(), self.stats.clone(), self.config.role);
        let failed = self.failed_tx.clone();
        let announcing = async move {
            for a in &pending {
                if let Err(e) = announce(&bus, &stats, role, a).await {
                    tracing::warn!(game_id = %a.game_id, error = %e, "verdict not announced, will come again");
                    let _ = failed.send(a.game_id.clone());
                    return;
                }
            }
            if let Err(e) = d.ack().await {
                tracing::warn!(error = %e, "ack failed; the delivery will come again");
            }
        };
        // In the delivery's span and trace context: the verdict continues the move's trace.
        tokio::spawn(opentelemetry::context::FutureExt::with_current_context(
            announcing.instrument(tracing::Span::current()),
        ));
        Ok(())
    }

    /// Judges a delivery; the verdicts it decided, to announce before acknowledging it.
    async fn judge(&mut self, d: &Delivery) -> Result<Vec<Announcement>, Error> {
        while let Ok(game_id) = self.failed_rx.try_recv() {
            self.forget(&game_id);
        }
        Stats::bump(&self.stats.deliveries);
        let judged = self.judge_delivery(&d.message).await;
        let pending = std::mem::take(&mut self.pending);
        match judged {
            Ok(()) => Ok(pending),
            Err(e) => {
                for a in &pending {
                    self.forget(&a.game_id);
                }
                Err(e)
            }
        }
    }

    /// Drops what this worker knows of a game; the bus has it all.
    fn forget(&mut self, game_id: &str) {
        self.finished.remove(game_id);
        self.games.remove(game_id);
    }

    async fn judge_delivery(&mut self, msg: &Message) -> Result<(), Error> {
        let Some(game_id) = msg
            .subject
            .strip_prefix("shogi.game.")
            .and_then(|s| s.strip_suffix(".move"))
            .filter(|id| !id.is_empty() && !id.contains('.'))
            .map(str::to_owned)
        else {
            Stats::bump(&self.stats.garbage);
            tracing::warn!(subject = %msg.subject, seq = msg.sequence, "not a game log subject");
            return Ok(());
        };
        telemetry::record_game(&game_id, None);
        if !self.config.owns_game(&game_id) {
            Stats::bump(&self.stats.foreign);
            return Ok(());
        }
        if self.finished.contains(&game_id) {
            Stats::bump(&self.stats.void);
            return Ok(());
        }
        if !self.games.contains_key(&game_id) && !self.load(&game_id, msg.sequence).await? {
            return Ok(());
        }
        let last = self.games.get(&game_id).map(|g| g.last_seq).unwrap_or(0);
        if msg.sequence <= last {
            Stats::bump(&self.stats.duplicates);
            return Ok(());
        }
        // The fast path: the delivered event is the game's next ply (or an ending): nothing
        // can sit between it and the last judged event, because writers append only after
        // the log's last event and nothing follows an ending.
        if self.is_next(&game_id, msg) {
            return self.judge_event(&game_id, msg).await.map(|_| ());
        }
        // A gap, or a duplicate of a ply already played: read the log in order up to this
        // delivery.
        let log = subject::moves(&game_id);
        let mut from = last + 1;
        while let Some(m) = self.bus.next(&log, from).await? {
            if m.sequence > msg.sequence {
                break;
            }
            if m.sequence < msg.sequence {
                Stats::bump(&self.stats.gap_filled);
            }
            from = m.sequence + 1;
            if let Step::Ended = self.judge_event(&game_id, &m).await? {
                break;
            }
        }
        Ok(())
    }

    fn is_next(&self, game_id: &str, msg: &Message) -> bool {
        let Some(g) = self.games.get(game_id) else {
            return false;
        };
        match msg.message_type.as_deref() {
            Some(shogi_proto::VERDICT_TYPE) => true,
            _ => pb::MoveAccepted::decode(msg.payload.clone())
                .is_ok_and(|m| m.ply == g.game.plies() + 1),
        }
    }

    /// Reads the game's creation event; `false` when there is none (the event is set aside)
    /// or it is unreadable.
    async fn load(&mut self, game_id: &str, seq: u64) -> Result<bool, Error> {
        let Some(created) = self.bus.last(&subject::created(game_id)).await? else {
            Stats::bump(&self.stats.unknown_game);
            tracing::warn!(game_id, seq, "event for a game never created, set aside");
            if self.set_aside.len() >= MAX_SET_ASIDE {
                self.set_aside.remove(0);
            }
            self.set_aside.push(seq);
            return Ok(false);
        };
        let game = pb::GameCreated::decode(created.payload.clone())
            .map_err(|e| e.to_string())
            .and_then(|c| {
                let ruleset = ruleset_from_pb(c.ruleset.as_ref()).map_err(|e| e.to_string())?;
                let start = Position::from_sfen(&c.start_sfen).map_err(|e| e.to_string())?;
                Ok(Game::new(start, ruleset))
            });
        match game {
            Ok(game) => {
                let over = game.is_over();
                self.games.insert(
                    game_id.to_owned(),
                    Judged {
                        game,
                        created_seq: created.sequence,
                        last_seq: created.sequence,
                    },
                );
                if over {
                    // Decided at the start (the validator announces it).
                    self.finish(game_id);
                    Stats::bump(&self.stats.void);
                    return Ok(false);
                }
                Ok(true)
            }
            Err(reason) => {
                Stats::bump(&self.stats.garbage);
                tracing::warn!(
                    game_id,
                    seq = created.sequence,
                    reason,
                    "unreadable game creation"
                );
                Ok(false)
            }
        }
    }

    fn finish(&mut self, game_id: &str) {
        self.games.remove(game_id);
        if self.finished.len() >= MAX_FINISHED {
            self.finished.clear();
        }
        self.finished.insert(game_id.to_owned());
    }

    /// Judges the game's next log event `m`.
    async fn judge_event(&mut self, game_id: &str, m: &Message) -> Result<Step, Error> {
        let Some(state) = self.games.get_mut(game_id) else {
            return Ok(Step::Ended);
        };
        debug_assert!(m.sequence > state.last_seq && state.created_seq < m.sequence);
        Stats::bump(&self.stats.judged);
        if m.message_type.as_deref() == Some(shogi_proto::VERDICT_TYPE) {
            // An ending written in the log (by the validator, or by an instance of a pipeline
            // role): the game is over. The owner announces it (again: the notice is guarded).
            tracing::debug!(game_id, seq = m.sequence, "ending in the log");
            match pb::Verdict::decode(m.payload.clone()) {
                Ok(v) => {
                    let owned =
                        result_code_from_pb(v.code).is_some_and(|c| self.config.role.owns(c));
                    if owned {
                        self.pending.push(Announcement {
                            game_id: game_id.to_owned(),
                            verdict: v,
                            after_move: None,
                            decided_at: None,
                        });
                    }
                }
                Err(e) => {
                    Stats::bump(&self.stats.garbage);
                    tracing::warn!(game_id, seq = m.sequence, error = %e, "unreadable ending in the log");
                }
            }
            self.finish(game_id);
            return Ok(Step::Ended);
        }
        let garbage = |stats: &Stats, reason: String| {
            Stats::bump(&stats.garbage);
            tracing::warn!(
                game_id,
                seq = m.sequence,
                reason,
                "garbage in the game log, skipped"
            );
        };
        let event = match pb::MoveAccepted::decode(m.payload.clone()) {
            Ok(e) => e,
            Err(e) => {
                garbage(&self.stats, format!("not a MoveAccepted: {e}"));
                state.last_seq = m.sequence;
                return Ok(Step::Next);
            }
        };
        telemetry::record_game(game_id, Some(event.ply));
        let expected = state.game.plies() + 1;
        if event.ply != expected {
            garbage(
                &self.stats,
                format!("ply {} where ply {expected} is due", event.ply),
            );
            state.last_seq = m.sequence;
            return Ok(Step::Next);
        }
        let outcome = match Move::from_usi(&event.usi)
            .map_err(|e| e.to_string())
            .and_then(|mv| state.game.play(mv).map_err(|e| e.to_string()))
        {
            Ok(outcome) => outcome,
            Err(reason) => {
                garbage(&self.stats, format!("move {}: {reason}", event.usi));
                state.last_seq = m.sequence;
                return Ok(Step::Next);
            }
        };
        let ply = outcome.ply;
        let role = self.config.role;
        if role == Role::Watcher {
            for (i, w) in outcome.warnings.iter().enumerate() {
                let warning = warning_pb(game_id, w);
                let out = Outgoing::new(
                    subject::warning(game_id),
                    shogi_proto::WARNING_TYPE,
                    format!("{game_id}:{ply}:warning:{i}"),
                    warning.encode_to_vec(),
                );
                if let Published::Stored(_) = self.bus.publish(out).await? {
                    Stats::bump(&self.stats.warnings);
                    tracing::info!(game_id, ply, "warning");
                }
            }
        }
        let Some(verdict) = outcome.verdict else {
            state.last_seq = m.sequence;
            return Ok(Step::Next);
        };
        if role.owns(verdict.code) {
            let message = verdict_pb(game_id, &verdict);
            self.pending.push(Announcement {
                game_id: game_id.to_owned(),
                verdict: message,
                after_move: Some(m.sequence),
                decided_at: m.time,
            });
        }
        self.finish(game_id);
        Ok(Step::Ended)
    }
}

/// Writes the verdict's copy into the game's log right after the move that decided it (when
/// it followed from a move) and announces it on `.verdict`, both at once; both writes are
/// guarded (the log's expected last sequence, an empty `.verdict`), so doing this again stores
/// nothing.
async fn announce(bus: &Bus, stats: &Stats, role: Role, a: &Announcement) -> Result<(), Error> {
    let (game_id, verdict) = (a.game_id.as_str(), &a.verdict);
    let ply = verdict.ply;
    let payload = verdict.encode_to_vec();
    let notice = Outgoing::new(
        subject::verdict(game_id),
        shogi_proto::VERDICT_TYPE,
        format!("{game_id}:{ply}:verdict"),
        payload.clone(),
    )
    .expect(0);
    let (logged, noticed) = match a.after_move {
        Some(move_seq) => {
            let log = Outgoing::new(
                subject::moves(game_id),
                shogi_proto::VERDICT_TYPE,
                format!("{game_id}:{ply}:end"),
                payload,
            )
            .expect(move_seq);
            let (logged, noticed) = futures::join!(bus.publish(log), bus.publish(notice));
            (Some(logged?), noticed?)
        }
        None => (None, bus.publish(notice).await?),
    };
    let code = result_code_from_pb(verdict.code)
        .map(|c| c.as_str())
        .unwrap_or("?");
    match noticed {
        Published::Stored(_) => {
            Stats::bump(&stats.verdicts);
            telemetry::verdict_announced(role, code, a.decided_at);
            tracing::info!(game_id, ply, code, ?logged, role = role.name(), "verdict");
        }
        Published::Duplicate(_) | Published::Conflict => {
            tracing::debug!(game_id, ply, code, "verdict already announced");
        }
    }
    Ok(())
}

/// A pipeline service process: the worker plus its health endpoint.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// The worker.
    pub worker: WorkerConfig,
    /// Where grpc.health.v1 is served, if anywhere.
    pub health: Option<SocketAddr>,
    /// How long the in-flight delivery may take after shutdown.
    pub grace_period: Duration,
}

/// Runs a pipeline service over `bus` until `shutdown`: grpc.health.v1 SERVING while the
/// worker consumes (the service name is the role's name, and ""), NOT_SERVING first on
/// shutdown, then the worker stops after its in-flight delivery, within the grace period.
pub async fn run_service(
    bus: Bus,
    config: ServiceConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    config.worker.validate()?;
    let role = config.worker.role;
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_service_status(role.name(), tonic_health::ServingStatus::Serving)
        .await;
    let (stop_health, health_stopped) = tokio::sync::oneshot::channel::<()>();
    let health_task = match config.health {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Error::Config(format!("bind health {addr}: {e}")))?;
            tracing::info!(role = role.name(), addr = ?listener.local_addr().ok(), "health serving");
            Some(tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(health_service)
                    .serve_with_incoming_shutdown(
                        tokio_stream::wrappers::TcpListenerStream::new(listener),
                        async {
                            let _ = health_stopped.await;
                        },
                    ),
            ))
        }
        None => None,
    };
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let worker = Worker::new(bus, config.worker);
    let worker = tokio::spawn(worker.run(async move {
        let _ = stop_rx.wait_for(|s| *s).await;
    }));
    tokio::pin!(worker);
    tokio::select! {
        () = shutdown => {}
        done = &mut worker => {
            return done.map_err(|e| Error::Config(format!("worker: {e}")))?;
        }
    }
    tracing::info!(role = role.name(), "shutting down: NOT_SERVING, draining");
    health
        .set_service_status(role.name(), tonic_health::ServingStatus::NotServing)
        .await;
    health
        .set_service_status("", tonic_health::ServingStatus::NotServing)
        .await;
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(config.grace_period, &mut worker).await;
    let _ = stop_health.send(());
    if let Some(task) = health_task {
        let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
    }
    Ok(())
}
