//! What the parts of a worker share: its [`Role`], its [`WorkerConfig`], its counters
//! ([`Stats`]) and its [`Error`].

use arbiter_bus::{BusError, DurableConfig};
use arbiter_runtime::games::{AsideLedger, GameLog};
use shogi_adjudication::{Announcer, ResultCode};
use shogi_proto::{PARTITIONS, subject};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a pipeline service does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The repetition-watcher: repetition and perpetual check verdicts, and the warnings.
    Watcher,
    /// The impasse-judge: move caps and automatic declarations, and the announcement of every
    /// other ending the validator decided.
    Judge,
    /// Both roles in one worker, on one consumer a partition: what a process that runs both
    /// runs (`shogi-arbiter serve`, a small platform), so that each move is delivered once, not
    /// once a role (issue 38). The separate services stay the default of a deployment.
    Both,
}

impl Role {
    /// The service's name, as its binary and its consumers are named.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Watcher => "repetition-watcher",
            Role::Judge => "impasse-judge",
            Role::Both => "arbiter-pipeline",
        }
    }

    /// The role of the two that announces endings with `code`, as the metrics name it: itself,
    /// or for [`Role::Both`] the one of the two that owns `code`.
    pub fn announcer_of(self, code: ResultCode) -> Role {
        match self {
            Role::Both if Role::Watcher.owns(code) => Role::Watcher,
            Role::Both => Role::Judge,
            role => role,
        }
    }

    /// Whether this role publishes the warnings (the repetition-watcher's).
    pub fn warns(self) -> bool {
        matches!(self, Role::Watcher | Role::Both)
    }

    /// Whether this role announces endings with `code`: the adjudication layer says who
    /// announces what ([`ResultCode::announcer`]).
    pub fn owns(self, code: ResultCode) -> bool {
        match self {
            Role::Watcher => code.announcer() == Announcer::RepetitionWatcher,
            Role::Judge => code.announcer() == Announcer::ImpasseJudge,
            Role::Both => Role::Watcher.owns(code) || Role::Judge.owns(code),
        }
    }

    /// The game logs as this role reads and writes them, its set-asides under its name.
    pub fn game_log(self) -> &'static GameLog {
        static WATCHER: GameLog = GameLog::new(AsideLedger::copying("repetition-watcher"));
        static JUDGE: GameLog = GameLog::new(AsideLedger::copying("impasse-judge"));
        static BOTH: GameLog = GameLog::new(AsideLedger::copying("arbiter-pipeline"));
        match self {
            Role::Watcher => &WATCHER,
            Role::Judge => &JUDGE,
            Role::Both => &BOTH,
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
    /// How the consumers' messages reach this instance: push with flow control (the default),
    /// which does not wait for a replicated consumer's Raft group, or pull
    /// ([`arbiter_bus::DeliveryMode`]). A consumer found in the other mode is consumed as it is.
    pub consumer_delivery: arbiter_bus::DeliveryMode,
    /// Where the servers keep each consumer's state: memory from three replicas on nats-server
    /// 2.11 or later, a file otherwise (the default, [`arbiter_bus::ConsumerStorage::Auto`]),
    /// or as chosen. A consumer found with its state elsewhere is consumed as it is.
    pub consumer_storage: arbiter_bus::ConsumerStorage,
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
            consumer_delivery: arbiter_bus::DeliveryMode::Push,
            consumer_storage: arbiter_bus::ConsumerStorage::Auto,
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
            storage: self.consumer_storage,
            acks: arbiter_bus::AckMode::Cumulative,
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
    /// Workers whose consumers are missing (bind mode) or refused by the configuration: while
    /// any is, health is NOT_SERVING.
    pub unavailable: AtomicU64,
    /// Whether the instance has joined the partition leases (with leases).
    pub joined: std::sync::atomic::AtomicBool,
}

impl Stats {
    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// A counter's value.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
