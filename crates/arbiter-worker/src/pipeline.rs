//! The pipeline worker: one game log at a time, in order, once each, whatever the bus delivers.
//!
//! Invariants:
//! - A game's state is its [`Game`] and the stream sequence of the last log event judged. An
//!   event is judged only when it is the next ply; a delivery at or before the last judged
//!   sequence (or for a ply already played) is a duplicate and only acknowledged; a delivery
//!   past the next ply is a gap, filled by reading the game's log from the stream in order up
//!   to it. Nothing is guessed.
//! - A delivery is acknowledged only after what it caused is on the bus, so a crash before the
//!   ack judges it again, and judging again publishes nothing new: the notice on `.verdict`
//!   expects the subject empty. Exactly one verdict per game reaches the bus. A worker writes
//!   nothing into a game's log (its NATS account cannot). The announcement goes out in a task
//!   of its own when consuming, so that other games' events do not wait for it; a failed
//!   announcement forgets the game, and the redelivery rebuilds it from the bus.
//! - A verdict ends the game: later events are void (counted, acknowledged).
//! - Garbage (a message that does not decode, a ply that does not follow, an illegal move, an
//!   event for a game never created) is logged with its game id, counted and acknowledged; it
//!   never stops another game.
//! - Games are partitioned over the instances of a role by a hash of the game id, each
//!   instance with its own durable consumer, so one instance at a time judges a game, with no
//!   coordination but the bus.

use crate::lease::LeaseConfig;
use crate::telemetry;
use arbiter_bus::{Bus, BusError, Delivery, DurableConfig, Message, Published};
use arbiter_runtime::games::{Announced, Reader};
use futures::StreamExt;
use shogi_adjudication::{Announcer, ResultCode};
use shogi_proto::convert::{result_code_from_pb, verdict_pb, warning_pb};
use shogi_proto::event::Envelope;
use shogi_proto::log::{Applied, AsideReason, Replay, SetAside};
use shogi_proto::{PARTITIONS, subject, v1 as pb};
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

    /// Whether this role announces endings with `code`: the adjudication layer says who
    /// announces what ([`ResultCode::announcer`]).
    pub fn owns(self, code: ResultCode) -> bool {
        let announcer = match self {
            Role::Watcher => Announcer::RepetitionWatcher,
            Role::Judge => Announcer::ImpasseJudge,
        };
        code.announcer() == announcer
    }

    /// The reader of game logs this role is, as its copies set aside and its counts name it.
    pub fn reader(self) -> &'static Reader {
        static WATCHER: Reader = Reader::new("repetition-watcher");
        static JUDGE: Reader = Reader::new("impasse-judge");
        match self {
            Role::Watcher => &WATCHER,
            Role::Judge => &JUDGE,
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
    /// This instance's index, `0..instances`, when the partitions are shared out fixed.
    pub instance: u32,
    /// How many instances of the role share the partitions, when they are shared out fixed.
    pub instances: u32,
    /// Deliveries not acknowledged within this time come again.
    pub ack_wait: Duration,
    /// Deliveries in flight at most, per partition.
    pub max_ack_pending: usize,
    /// Servers that keep each consumer's state on a NATS cluster; `None`: as the stream.
    /// Fewer than the stream's trade the partition's availability when a server is lost for a
    /// shorter verdict tail (deploy/STREAMS.md, consumer replicas).
    pub consumer_replicas: Option<usize>,
    /// How the consumers' messages reach this instance: pull (the default, as the deployed
    /// permissions allow) or push with flow control, which does not wait for a replicated
    /// consumer's Raft group ([`arbiter_bus::DeliveryMode`]).
    pub consumer_delivery: arbiter_bus::DeliveryMode,
    /// How often the consumers' lag is read from the bus for the `shogi.consumer.lag` gauge.
    pub lag_interval: Duration,
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
            consumer_replicas: None,
            consumer_delivery: arbiter_bus::DeliveryMode::Pull,
            lag_interval: Duration::from_secs(5),
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
        if self.instances > PARTITIONS {
            return Err(Error::Config(format!(
                "{} instances for {PARTITIONS} partitions: some would have none",
                self.instances
            )));
        }
        if self.ack_wait.is_zero() || self.max_ack_pending == 0 || self.lag_interval.is_zero() {
            return Err(Error::Config(
                "ack wait, max ack pending and lag interval must be positive".into(),
            ));
        }
        Ok(())
    }

    /// The partitions this instance holds when they are shared out fixed: `p` with
    /// `p mod instances = instance`.
    pub fn partitions(&self) -> Vec<u32> {
        (0..PARTITIONS)
            .filter(|p| p % self.instances.max(1) == self.instance)
            .collect()
    }

    /// The durable consumer of `partition` for this role: one per role and partition, shared
    /// by whichever instance holds the partition, so that it carries on where the last holder
    /// stopped (a restarted instance, or one that took the partition over).
    pub fn durable(&self, partition: u32) -> DurableConfig {
        DurableConfig {
            name: shogi_proto::consumer::partition(self.role.name(), partition),
            filter: subject::partition_moves(partition),
            ack_wait: self.ack_wait,
            max_ack_pending: self.max_ack_pending,
            // No limit: garbage is acknowledged here, so only a failed bus call brings an
            // event back, and giving it up could lose a verdict (deploy/STREAMS.md).
            max_deliver: None,
            replicas: self.consumer_replicas,
            delivery: self.consumer_delivery,
        }
    }
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
    /// Events of partitions this worker does not hold.
    pub foreign: AtomicU64,
    /// Events set aside whose copy on `shogi.aside.<game_id>` failed (the event itself stays
    /// in the game stream at its sequence).
    pub aside_failed: AtomicU64,
    /// Partition leases taken.
    pub leases_taken: AtomicU64,
    /// Partition leases given up (released, lost or expired).
    pub leases_dropped: AtomicU64,
    /// Verdicts this instance announced (stored on `.verdict`).
    pub verdicts: AtomicU64,
    /// Warnings published.
    pub warnings: AtomicU64,
    /// Partitions whose consumer is up and consumed now.
    pub consuming: AtomicU64,
    /// Whether the instance has joined the partition leases (with leases).
    pub joined: std::sync::atomic::AtomicBool,
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

/// A pipeline worker: its games, in memory; the truth is on the bus.
#[derive(Debug)]
pub struct Worker {
    bus: Bus,
    config: WorkerConfig,
    /// The partitions this worker consumes, ascending.
    partitions: Vec<u32>,
    games: HashMap<String, Replay>,
    /// Games whose verdict this worker has seen; their later events are void. Forgetting one
    /// only costs a rebuild from the bus, which finds the verdict again.
    finished: HashSet<String>,
    /// The sequences of the events set aside (for a game never created), most recent last.
    set_aside: Vec<u64>,
    stats: Arc<Stats>,
    /// Verdicts judged by the delivery being handled, to announce before its ack.
    pending: Vec<Announcement>,
    /// Games whose verdict is being announced in the background. Their deliveries are held
    /// (not acknowledged) until the announcement settles: acknowledging a redelivery as void
    /// while the announcement could still fail would leave nothing to bring the game back.
    announcing: HashSet<String>,
    /// Whether the delivery being handled is held: not acknowledged, so that it comes again.
    hold: bool,
    /// How each background announcement ended (`true`: on the bus); a failed one's game is
    /// forgotten, so that the redelivery rebuilds it from the bus and announces again.
    settled_tx: tokio::sync::mpsc::UnboundedSender<(String, bool)>,
    settled_rx: tokio::sync::mpsc::UnboundedReceiver<(String, bool)>,
}

/// A verdict to announce on `.verdict`.
#[derive(Debug, Clone)]
struct Announcement {
    game_id: String,
    verdict: pb::Verdict,
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
    /// A worker over `bus` for the partitions `config` holds fixed.
    pub fn new(bus: Bus, config: WorkerConfig) -> Worker {
        let partitions = config.partitions();
        let stats = Arc::new(Stats::default());
        telemetry::observe(config.role, stats.clone());
        Worker::for_partitions(bus, config, partitions, stats)
    }

    /// A worker over `bus` for `partitions`, counting into `stats`.
    pub fn for_partitions(
        bus: Bus,
        config: WorkerConfig,
        mut partitions: Vec<u32>,
        stats: Arc<Stats>,
    ) -> Worker {
        partitions.sort_unstable();
        partitions.dedup();
        let (settled_tx, settled_rx) = tokio::sync::mpsc::unbounded_channel();
        Worker {
            bus,
            config,
            partitions,
            games: HashMap::new(),
            finished: HashSet::new(),
            set_aside: Vec::new(),
            stats,
            pending: Vec::new(),
            announcing: HashSet::new(),
            hold: false,
            settled_tx,
            settled_rx,
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

    /// Consumes its partitions until `shutdown` completes. Bus failures are logged and
    /// retried; they never end the loop.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        self.config.validate()?;
        tokio::pin!(shutdown);
        let role = self.config.role.name();
        let consumers: Vec<String> = (0..PARTITIONS)
            .map(|p| self.config.durable(p).name)
            .collect();
        loop {
            let streams = futures::future::try_join_all(
                self.partitions
                    .iter()
                    .map(|&p| self.config.durable(p))
                    .map(|durable| {
                        let bus = self.bus.clone();
                        async move { bus.consume(&durable).await }
                    }),
            );
            let mut deliveries = tokio::select! {
                got = streams => match got {
                    Ok(d) => futures::stream::select_all(d),
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
            tracing::info!(role, partitions = ?self.partitions, "consuming");
            let _consuming = Consuming::new(&self.stats, self.partitions.len());
            loop {
                let next = tokio::select! {
                    next = deliveries.next() => next,
                    () = &mut shutdown => return Ok(()),
                };
                match next {
                    Some(Ok(d)) => {
                        // The consumer is the partition's, the subject's last token.
                        let consumer = d
                            .message
                            .subject
                            .rsplit('.')
                            .next()
                            .and_then(|p| p.parse::<usize>().ok())
                            .and_then(|p| consumers.get(p))
                            .map_or(role, String::as_str);
                        let handling = telemetry::Handling::start(consumer, self.config.role, &d);
                        if let Err(e) = handling.run(self.handle_in_background(d)).await {
                            // Not acknowledged: it comes again after the ack wait.
                            tracing::warn!(role, error = %e, "delivery not judged, will come again");
                        }
                    }
                    // A missed heartbeat, mostly: a pull request lost with a consumer leader
                    // that changed (or whose interest had not reached this server yet) is sent
                    // again by async-nats only after its expiry plus 5 s, so the consumers are
                    // opened again now, with a fresh pull (BENCHMARKS.md, "The verdict tail on
                    // a cluster: its cause").
                    Some(Err(e)) => {
                        tracing::warn!(role, error = %e, "consumer error; consuming again");
                        break;
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
        if self.hold {
            return Ok(());
        }
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
        if self.hold {
            tracing::debug!(
                seq = d.message.sequence,
                "held until the game's announcement settles"
            );
            return Ok(());
        }
        if pending.is_empty() {
            d.ack().await?;
            return Ok(());
        }
        let (bus, stats, role) = (self.bus.clone(), self.stats.clone(), self.config.role);
        for a in &pending {
            self.announcing.insert(a.game_id.clone());
        }
        let settled = self.settled_tx.clone();
        let announcing = async move {
            let mut failed = false;
            for a in &pending {
                let ok = match announce(&bus, &stats, role, a).await {
                    Ok(()) => !failed,
                    Err(e) => {
                        tracing::warn!(game_id = %a.game_id, error = %e, "verdict not announced, will come again");
                        false
                    }
                };
                failed |= !ok;
                let _ = settled.send((a.game_id.clone(), ok));
            }
            if failed {
                return;
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
        while let Ok((game_id, announced)) = self.settled_rx.try_recv() {
            self.announcing.remove(&game_id);
            if !announced {
                self.forget(&game_id);
            }
        }
        self.hold = false;
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
        let Some(game_id) = subject::game_of_log(&msg.subject).map(str::to_owned) else {
            Stats::bump(&self.stats.garbage);
            tracing::warn!(subject = %msg.subject, seq = msg.sequence, "not a game log subject");
            return Ok(());
        };
        telemetry::record_game(&game_id, None);
        if self
            .partitions
            .binary_search(&subject::partition(&game_id))
            .is_err()
        {
            Stats::bump(&self.stats.foreign);
            return Ok(());
        }
        if self.announcing.contains(&game_id) {
            self.hold = true;
            return Ok(());
        }
        if self.finished.contains(&game_id) {
            Stats::bump(&self.stats.void);
            return Ok(());
        }
        if !self.games.contains_key(&game_id) && !self.load(&game_id, msg).await? {
            return Ok(());
        }
        let last = self.games.get(&game_id).map_or(0, Replay::last_seq);
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

    /// Whether `msg` is the game's next log entry by its ply: a move for the next ply, or an
    /// ending recorded at the ply the game has reached (a forfeit: at the next one). Writers
    /// append only after the log's last entry, so nothing valid can sit between it and the
    /// last entry judged.
    fn is_next(&self, game_id: &str, msg: &Message) -> bool {
        self.games
            .get(game_id)
            .is_some_and(|g| g.is_next(msg.entry()))
    }

    /// Reads the game's creation event; `false` when there is none (the event is set aside)
    /// or it is unreadable.
    async fn load(&mut self, game_id: &str, msg: &Message) -> Result<bool, Error> {
        let seq = msg.sequence;
        let reader = self.config.role.reader();
        match reader.load(&self.bus, game_id).await {
            Ok(Some(replay)) => {
                let over = replay.game().is_over();
                self.games.insert(game_id.to_owned(), replay);
                if over {
                    // Decided at the start: no move reaches the pipeline, so the validator
                    // announces it when it creates the game.
                    self.finish(game_id);
                    Stats::bump(&self.stats.void);
                    return Ok(false);
                }
                Ok(true)
            }
            Ok(None) => {
                Stats::bump(&self.stats.unknown_game);
                if self.set_aside.len() >= MAX_SET_ASIDE {
                    self.set_aside.remove(0);
                }
                self.set_aside.push(seq);
                let aside = SetAside {
                    sequence: seq,
                    reason: AsideReason::UnknownGame,
                    detail: "the game was never created".into(),
                };
                reader.put_aside(&self.bus, game_id, msg, &aside).await;
                Ok(false)
            }
            Err(arbiter_runtime::games::ReadError::Bus(e)) => Err(Error::Bus(e)),
            Err(arbiter_runtime::games::ReadError::Unreadable(u)) => {
                Stats::bump(&self.stats.garbage);
                tracing::warn!(game_id, seq = u.sequence, reason = %u.reason, "unreadable game creation");
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

    /// Judges the game's next log entry `m` through the one replay of a game log.
    async fn judge_event(&mut self, game_id: &str, m: &Message) -> Result<Step, Error> {
        let Some(replay) = self.games.get_mut(game_id) else {
            return Ok(Step::Ended);
        };
        Stats::bump(&self.stats.judged);
        let role = self.config.role;
        let applied = role.reader().apply(&self.bus, replay, m).await;
        let (verdict, decided_at) = match applied {
            Applied::Duplicate => {
                Stats::bump(&self.stats.duplicates);
                return Ok(Step::Next);
            }
            Applied::SetAside(_) => {
                Stats::bump(&self.stats.garbage);
                return Ok(Step::Next);
            }
            Applied::EndingCopy => {
                self.finish(game_id);
                return Ok(Step::Ended);
            }
            // An ending recorded in the log (a report, a declaration, a forfeit): its owner
            // announces it (again, if it did already: the notice is guarded).
            Applied::Ended(verdict) => (verdict, None),
            Applied::Played { outcome, .. } => {
                let ply = outcome.ply;
                telemetry::record_game(game_id, Some(ply));
                if role == Role::Watcher {
                    for (i, w) in outcome.warnings.iter().enumerate() {
                        let out = Envelope::warning(&warning_pb(game_id, w), i);
                        if let Published::Stored(_) = self.bus.publish(out.into()).await? {
                            Stats::bump(&self.stats.warnings);
                            tracing::info!(game_id, ply, "warning");
                        }
                    }
                }
                let Some(verdict) = outcome.verdict else {
                    return Ok(Step::Next);
                };
                (verdict, m.time)
            }
        };
        if role.owns(verdict.code) {
            self.pending.push(Announcement {
                game_id: game_id.to_owned(),
                verdict: verdict_pb(game_id, &verdict),
                decided_at,
            });
        }
        self.finish(game_id);
        Ok(Step::Ended)
    }
}

/// Counts partitions as consumed while it lives.
struct Consuming(Arc<Stats>, u64);

impl Consuming {
    fn new(stats: &Arc<Stats>, partitions: usize) -> Consuming {
        let n = partitions as u64;
        stats.consuming.fetch_add(n, Ordering::Relaxed);
        Consuming(stats.clone(), n)
    }
}

impl Drop for Consuming {
    fn drop(&mut self) {
        self.0.consuming.fetch_sub(self.1, Ordering::Relaxed);
    }
}

/// Announces the verdict on `.verdict`, guarded (an empty subject expected, so doing this
/// again stores nothing; an entry there that is not this verdict is set aside, never taken
/// for an earlier announcement: `Reader::announce`). No copy goes into the game's log: a
/// worker writes nothing a reader could take for a move (issue 20; logs written before keep
/// their copies, which the replay reads as before).
async fn announce(bus: &Bus, stats: &Stats, role: Role, a: &Announcement) -> Result<(), Error> {
    let (game_id, verdict) = (a.game_id.as_str(), &a.verdict);
    let ply = verdict.ply;
    let code = result_code_from_pb(verdict.code)
        .map(|c| c.as_str())
        .unwrap_or("?");
    match role.reader().announce(bus, verdict).await? {
        Announced::Stored(seq) => {
            Stats::bump(&stats.verdicts);
            telemetry::verdict_announced(role, code, a.decided_at);
            tracing::info!(game_id, ply, code, seq, role = role.name(), "verdict");
        }
        Announced::Already => {
            tracing::debug!(game_id, ply, code, "verdict already announced");
        }
    }
    Ok(())
}

/// Starts the workers of one instance: with `leases`, the partitions it holds by lease, each in
/// a task of its own as they come and go; without, its fixed share of the partitions
/// (`config.instance` of `config.instances`), one task per partition, so that a round trip
/// for one game (loading it, a warning) does not hold up the others and the partitions use
/// every core. They stop when `stop` turns true; the task ends when they all have.
pub fn spawn_workers(
    bus: Bus,
    config: &WorkerConfig,
    leases: Option<LeaseConfig>,
    stats: Arc<Stats>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<Result<(), Error>> {
    telemetry::observe(config.role, stats.clone());
    tokio::spawn(telemetry::poll_lag(
        bus.clone(),
        config.clone(),
        stop.clone(),
    ));
    let stopped = move || {
        let mut stop = stop.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
        }
    };
    match leases {
        Some(leases) => tokio::spawn(crate::lease::run_leased(
            bus,
            config.clone(),
            leases,
            stats,
            stopped(),
        )),
        None => {
            let tasks: Vec<_> = config
                .partitions()
                .into_iter()
                .map(|p| {
                    let worker =
                        Worker::for_partitions(bus.clone(), config.clone(), vec![p], stats.clone());
                    tokio::spawn(worker.run(stopped()))
                })
                .collect();
            tokio::spawn(async move {
                for t in futures::future::join_all(tasks).await {
                    t.map_err(|e| Error::Config(format!("worker: {e}")))??;
                }
                Ok(())
            })
        }
    }
}

/// A pipeline service process: the worker plus its health endpoint.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// The worker.
    pub worker: WorkerConfig,
    /// Partitions by lease (shared among the live instances, taken over when one dies), or
    /// `None`: the fixed share of `worker.instance` among `worker.instances`.
    pub leases: Option<LeaseConfig>,
    /// Where grpc.health.v1 is served, if anywhere.
    pub health: Option<SocketAddr>,
    /// How long the in-flight delivery may take after shutdown.
    pub grace_period: Duration,
}

/// Runs a pipeline service over `bus` until `shutdown`: grpc.health.v1 (the service name is
/// the role's name, and "") SERVING only while the bus is connected and the worker consumes
/// (its consumers are up, or, with leases, it has joined them), NOT_SERVING first on shutdown;
/// then the worker stops after its in-flight delivery, within the grace period.
pub async fn run_service(
    bus: Bus,
    config: ServiceConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let leases = config.leases.clone();
    run_service_connecting(async { Ok((bus, leases)) }, config, shutdown).await
}

/// [`run_service`] over the bus that `connect` sets up (and the leases over it, replacing
/// `config.leases`): health is served first, NOT_SERVING until `connect` is done and the
/// worker consumes, so that a slow JetStream at start leaves the service waiting (and saying
/// so) rather than unreachable or dead. A shutdown while connecting ends it at once.
pub async fn run_service_connecting(
    connect: impl Future<Output = Result<(Bus, Option<LeaseConfig>), Error>> + Send,
    mut config: ServiceConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    use arbiter_runtime::grpc::{self, Health};
    config.worker.validate()?;
    if let Some(leases) = &config.leases {
        leases.validate()?;
    }
    let role = config.worker.role;
    let (health, health_service) = Health::new(&[role.name()]).await;
    let stats = Arc::new(Stats::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (stop_health, health_stopped) = tokio::sync::oneshot::channel::<()>();
    let health_task = match config.health {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Error::Config(format!("bind health {addr}: {e}")))?;
            tracing::info!(role = role.name(), addr = ?listener.local_addr().ok(), "health serving");
            let health = health.clone();
            let options = grpc::ServeOptions {
                request_timeout: Some(Duration::from_secs(5)),
                grace_period: Duration::from_secs(1),
                accept_http1: false,
            };
            Some(tokio::spawn(async move {
                grpc::serve(
                    tokio_stream::wrappers::TcpListenerStream::new(listener),
                    tonic::service::Routes::new(health_service),
                    &health,
                    &options,
                    async {
                        let _ = health_stopped.await;
                    },
                    || {},
                )
                .await
            }))
        }
        None => None,
    };
    tokio::pin!(shutdown);
    let connected = tokio::select! {
        () = &mut shutdown => None,
        connected = connect => Some(connected),
    };
    let Some(connected) = connected else {
        tracing::info!(role = role.name(), "shut down while connecting");
        stop_health_server(stop_health, health_task).await;
        return Ok(());
    };
    let (bus, leases) = connected?;
    if let Some(leases) = &leases {
        leases.validate()?;
    }
    config.leases = leases;
    let follower = tokio::spawn(follow_readiness(health.clone(), bus.clone(), stats.clone()));
    let worker = spawn_workers(bus, &config.worker, config.leases.clone(), stats, stop_rx);
    tokio::pin!(worker);
    tokio::select! {
        () = &mut shutdown => {}
        done = &mut worker => {
            follower.abort();
            return done.map_err(|e| Error::Config(format!("worker: {e}")))?;
        }
    }
    tracing::info!(role = role.name(), "shutting down: NOT_SERVING, draining");
    follower.abort();
    health.set(false).await;
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(config.grace_period, &mut worker).await;
    stop_health_server(stop_health, health_task).await;
    Ok(())
}

/// Stops the health server, waiting up to 2 s for it.
async fn stop_health_server<T>(
    stop: tokio::sync::oneshot::Sender<()>,
    task: Option<tokio::task::JoinHandle<T>>,
) {
    let _ = stop.send(());
    if let Some(task) = task {
        let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
    }
}

/// Keeps a worker's health true, checked every 250 ms: SERVING while the bus is connected and
/// the worker consumes (or has joined the leases, holding nothing for now), NOT_SERVING
/// otherwise.
async fn follow_readiness(health: arbiter_runtime::grpc::Health, bus: Bus, stats: Arc<Stats>) {
    let mut serving = None;
    loop {
        let ready =
            stats.consuming.load(Ordering::Relaxed) > 0 || stats.joined.load(Ordering::Relaxed);
        let now = bus.connected() && ready;
        if serving != Some(now) {
            if serving.is_some() || now {
                tracing::info!(serving = now, connected = bus.connected(), ready, "health");
            }
            health.set(now).await;
            serving = Some(now);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
