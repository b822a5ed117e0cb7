//! The whole arbiter in one process, assembled in one place: the move validator (gRPC), the
//! repetition-watcher and the impasse-judge over one bus, the embedded in-process bus or NATS
//! JetStream. `shogi-arbiter serve`, the tests and the benchmarks all start it here, so what
//! they run is what ships: the validator and the workers as parts ([`move_validator::part`],
//! [`arbiter_worker::part`]) of the one composition ([`arbiter_runtime::compose`]), which the
//! validator's and the workers' binaries run too, each with its own part alone.
//!
//! This crate composes services; it is not one. No service crate depends on another: the
//! validator and the worker library meet only here and on the bus.

use arbiter_bus::Bus;
use arbiter_runtime::compose::{self, Composition, Running};
use arbiter_worker::{LeaseSettings, Role, Stats, WorkerConfig};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

pub use arbiter_runtime::streams::{BusConfig, Opened};

/// Everything that can stop the stack from starting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bus could not be reached or its streams opened.
    #[error("bus: {0}")]
    Bus(#[from] arbiter_bus::BusError),
    /// The validator's configuration or server failed.
    #[error("move-validator: {0}")]
    Validator(#[from] move_validator::Error),
    /// The listener has no address.
    #[error("listener: {0}")]
    Listener(#[from] std::io::Error),
    /// A part failed to start.
    #[error("{0}")]
    Compose(#[from] compose::Error),
}

/// How the stack runs.
#[derive(Debug, Clone)]
pub struct StackConfig {
    /// The validator's settings; its `nats` is not used (the bus is [`BusConfig`]) and its
    /// announcements are the owners', since the workers run beside it.
    pub validator: move_validator::Config,
    /// The workers: one each of the repetition-watcher and the impasse-judge by default, each
    /// consuming every partition; or one worker of both roles ([`Role::Both`], what
    /// `shogi-arbiter serve --nats-url` runs), on one consumer a partition, so that a move is
    /// delivered to the process once, not once a role (issue 38).
    pub workers: Vec<WorkerConfig>,
    /// Partitions by lease, as the worker binaries' `--leases` runs them: `holder` is the
    /// stack's, each worker's the holder with its index in [`StackConfig::workers`]
    /// (`<holder>-0`, `<holder>-1` ...). `None` (the default, as the binaries' default): each
    /// worker's fixed share.
    pub leases: Option<LeaseSettings>,
}

impl Default for StackConfig {
    fn default() -> StackConfig {
        let mut validator = move_validator::Config::new("nats://127.0.0.1:4222");
        validator.announcements = move_validator::Announcements::ByOwners;
        StackConfig {
            validator,
            workers: vec![
                WorkerConfig::new(Role::Watcher),
                WorkerConfig::new(Role::Judge),
            ],
            leases: None,
        }
    }
}

/// Opens the bus `config` names, as `shogi-arbiter`: the embedded one, or a JetStream
/// connection with the arbiter's streams ([`arbiter_runtime::streams::open`]).
pub async fn connect(config: &BusConfig) -> Result<Opened, Error> {
    Ok(arbiter_runtime::streams::open(config, "shogi-arbiter").await?)
}

/// The running stack.
#[derive(Debug)]
pub struct Stack {
    addr: SocketAddr,
    stats: Vec<Arc<Stats>>,
    running: Running,
}

impl Stack {
    /// Starts the validator on `listener` and the workers, all over `bus` (a [`Bus`] for the
    /// games and the leases alike, or an [`Opened`] one with its lease stream), through the one
    /// composition ([`arbiter_runtime::compose`]): one health, one follower, one drain.
    pub async fn start(
        listener: TcpListener,
        bus: impl Into<Opened>,
        config: StackConfig,
    ) -> Result<Stack, Error> {
        Stack::start_with(listener, bus, config, Vec::new()).await
    }

    /// [`Stack::start`] with `extra` parts in the same composition, started after the
    /// validator and the workers and drained with them: the CSA front end of
    /// `shogi-arbiter serve --csa-listen`, which calls the validator at [`Stack::addr`] as any
    /// platform does.
    pub async fn start_with(
        listener: TcpListener,
        bus: impl Into<Opened>,
        config: StackConfig,
        extra: Vec<Box<dyn compose::Part>>,
    ) -> Result<Stack, Error> {
        let addr = listener.local_addr()?;
        let mut validator_config = config.validator;
        validator_config.announcements = move_validator::Announcements::ByOwners;
        validator_config
            .validate()
            .map_err(move_validator::Error::from)?;
        let grace = validator_config.grace_period;
        let mut stats = Vec::new();
        let mut parts = vec![move_validator::part(listener, validator_config)];
        for (i, w) in config.workers.into_iter().enumerate() {
            let s = Arc::new(Stats::default());
            stats.push(s.clone());
            let leases = config.leases.as_ref().map(|l| LeaseSettings {
                holder: format!("{}-{i}", l.holder),
                ttl: l.ttl,
            });
            parts.push(arbiter_worker::part(w, leases, s));
        }
        parts.extend(extra);
        let running = compose::start(Composition {
            bus: BusConfig::Open(bus.into()),
            client_name: "shogi-arbiter".to_owned(),
            parts,
            health: None,
            grace_period: grace,
        })
        .await?;
        tracing::info!(%addr, "arbiter stack serving");
        Ok(Stack {
            addr,
            stats,
            running,
        })
    }

    /// Where gRPC is served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bus the services share.
    pub fn bus(&self) -> &Bus {
        self.running.bus()
    }

    /// The workers' counters, in the order of [`StackConfig::workers`].
    pub fn worker_stats(&self) -> &[Arc<Stats>] {
        &self.stats
    }

    /// Stops everything: health NOT_SERVING, then the validator drains and the workers stop
    /// after the delivery in hand, all within the validator's grace period.
    pub async fn shutdown(self) {
        if let Err(e) = self.running.shutdown().await {
            tracing::warn!(error = %e, "arbiter stack stopped with an error");
        }
    }
}
