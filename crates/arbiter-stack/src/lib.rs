//! The whole arbiter in one process, assembled in one place: the move validator (gRPC), the
//! repetition-watcher and the impasse-judge over one bus, the embedded in-process bus or NATS
//! JetStream. `shogi-arbiter serve`, the tests and the benchmarks all start it here, so what
//! they run is what ships.
//!
//! This crate composes services; it is not one. No service crate depends on another: the
//! validator and the worker library meet only here and on the bus.

use arbiter_bus::{Bus, MemoryBus, NatsOptions};
use arbiter_worker::{Role, Stats, WorkerConfig};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

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
}

/// Which bus the stack runs on.
#[derive(Debug, Clone)]
pub enum BusConfig {
    /// The embedded in-process bus: nothing else to install, nothing kept after exit.
    Embedded,
    /// NATS JetStream: the servers, the games' stream and its replicas.
    Nats {
        /// How to reach the servers (URLs, credentials, TLS).
        options: Box<NatsOptions>,
        /// The games' stream.
        stream: String,
        /// Copies of each stream, when this process creates them.
        replicas: usize,
    },
}

/// How the stack runs.
#[derive(Debug, Clone)]
pub struct StackConfig {
    /// The validator's settings; its `nats` is not used (the bus is [`BusConfig`]) and its
    /// `pipeline` is on, since the workers run beside it.
    pub validator: move_validator::Config,
    /// The workers: one each of the repetition-watcher and the impasse-judge by default, each
    /// consuming every partition.
    pub workers: Vec<WorkerConfig>,
}

impl Default for StackConfig {
    fn default() -> StackConfig {
        let mut validator = move_validator::Config::new("nats://127.0.0.1:4222");
        validator.pipeline = true;
        StackConfig {
            validator,
            workers: vec![
                WorkerConfig::new(Role::Watcher),
                WorkerConfig::new(Role::Judge),
            ],
        }
    }
}

/// Opens the bus `config` names: the embedded one, or a JetStream connection with the
/// arbiter's streams.
pub async fn connect(config: &BusConfig) -> Result<Bus, Error> {
    Ok(match config {
        BusConfig::Embedded => Arc::new(MemoryBus::default()),
        BusConfig::Nats {
            options,
            stream,
            replicas,
        } => Arc::new(
            arbiter_runtime::streams::connect(options, "shogi-arbiter", stream, *replicas).await?,
        ),
    })
}

/// The running stack.
#[derive(Debug)]
pub struct Stack {
    addr: SocketAddr,
    bus: Bus,
    stats: Vec<Arc<Stats>>,
    stop: tokio::sync::watch::Sender<bool>,
    validator: JoinHandle<Result<(), move_validator::Error>>,
    workers: Vec<JoinHandle<Result<(), arbiter_worker::Error>>>,
    grace: Duration,
}

impl Stack {
    /// Starts the validator on `listener` and the workers, all over `bus`.
    pub async fn start(
        listener: TcpListener,
        bus: Bus,
        config: StackConfig,
    ) -> Result<Stack, Error> {
        let addr = listener.local_addr()?;
        let mut validator_config = config.validator;
        validator_config.pipeline = true;
        validator_config
            .validate()
            .map_err(move_validator::Error::from)?;
        let grace = validator_config.grace_period;
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let stopped = |rx: &tokio::sync::watch::Receiver<bool>| {
            let mut rx = rx.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        };
        let mut stats = Vec::new();
        let workers = config
            .workers
            .iter()
            .map(|w| {
                let s = Arc::new(Stats::default());
                stats.push(s.clone());
                arbiter_worker::spawn_workers(bus.clone(), w, None, s, stop_rx.clone())
            })
            .collect();
        let validator = tokio::spawn(move_validator::serve(
            listener,
            bus.clone(),
            validator_config,
            stopped(&stop_rx),
        ));
        tracing::info!(%addr, "arbiter stack serving");
        Ok(Stack {
            addr,
            bus,
            stats,
            stop,
            validator,
            workers,
            grace,
        })
    }

    /// Where gRPC is served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bus the services share.
    pub fn bus(&self) -> &Bus {
        &self.bus
    }

    /// The workers' counters, in the order of [`StackConfig::workers`].
    pub fn worker_stats(&self) -> &[Arc<Stats>] {
        &self.stats
    }

    /// Stops everything: the validator drains within its grace period, then the workers stop
    /// after the delivery in hand.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(self.grace, self.validator).await;
        for w in self.workers {
            let _ = tokio::time::timeout(self.grace, w).await;
        }
    }
}
