//! The one composition: the parts of the arbiter a process runs (the validator, the workers of
//! a role) over one bus, with one health, one follower of it and one drain. Every process starts
//! through [`run`] or [`start`]: the validator's binary (`move_validator::run`), the worker
//! binaries (`arbiter_worker::cli`), `shogi-arbiter serve` and the tests and benchmarks
//! (`arbiter_stack::Stack`).
//!
//! The parts are the service crates' ([`Part`]: `move_validator::part`,
//! `arbiter_worker::part`); this module knows none of them, so that no service crate depends on
//! another to be composed.
//!
//! Invariants:
//! - Health is one: every part's name and the server's (`""`), SERVING only while the bus is
//!   connected and every part does its job ([`Started::ready`]), checked every 250 ms and set
//!   only on a change; NOT_SERVING until the bus is open, and first on shutdown.
//! - With a health address, health is served there before the bus is opened, so that a slow
//!   JetStream at start leaves the process waiting (and saying so) rather than unreachable; a
//!   shutdown while the bus is being opened ends it at once.
//! - The drain is one: on shutdown (or when a part ends by itself) health turns NOT_SERVING,
//!   every part is told to stop, and all of them get the one grace period to finish.

use crate::grpc::{self, Health};
use crate::streams::{self, BusConfig, Opened};
use arbiter_bus::Bus;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A part's error, whatever its crate's error type (downcast it to read it back).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a part is given to start.
#[derive(Debug, Clone)]
pub struct Context {
    /// The games' bus.
    pub bus: Bus,
    /// The lease stream's bus.
    pub leases: Bus,
    /// The process's health, for a part that serves gRPC to add [`Health::service`] to its
    /// routes.
    pub health: Health,
    /// Turns true when the part must stop.
    pub stop: watch::Receiver<bool>,
}

impl Context {
    /// A future that completes when the part must stop.
    pub fn stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stop = self.stop.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
        }
    }
}

/// A started part: how to tell that it does its job, and what runs it until it is told to stop.
pub struct Started {
    /// Whether the part does its job now (the bus's connection is checked besides).
    pub ready: Box<dyn Fn() -> bool + Send + Sync>,
    /// The part's work, spawned by the composition once health is set.
    pub run: Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>>,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("ready", &(self.ready)())
            .finish()
    }
}

/// One part of a process: the validator, or the workers of one role.
pub trait Part: Send {
    /// The name its health is reported under.
    fn name(&self) -> &'static str;
    /// Checks its settings and starts it over `cx`.
    fn start(self: Box<Self>, cx: Context) -> Result<Started, BoxError>;
}

impl std::fmt::Debug for dyn Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a process runs.
#[derive(Debug)]
pub struct Composition {
    /// The bus, opened by [`streams::open`].
    pub bus: BusConfig,
    /// The name the process connects to NATS as.
    pub client_name: String,
    /// Its parts, all over the one bus.
    pub parts: Vec<Box<dyn Part>>,
    /// Where grpc.health.v1 is served on a port of its own, if anywhere (a part that serves
    /// gRPC serves it on its own port too).
    pub health: Option<SocketAddr>,
    /// How long the parts get to finish on shutdown.
    pub grace_period: Duration,
}

/// Everything that can stop a composition.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bus could not be reached or its streams opened.
    #[error("bus: {0}")]
    Bus(#[from] arbiter_bus::BusError),
    /// The health endpoint could not be bound.
    #[error("bind health {addr}: {source}")]
    Health {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A part failed to start or while running.
    #[error("{name}: {source}")]
    Part {
        /// The part's name.
        name: &'static str,
        /// Its error.
        source: BoxError,
    },
}

/// Runs `composition` until `shutdown` completes (or a part ends by itself), then drains:
/// health served first (at its own address, if any), the bus opened, the parts started, health
/// followed.
pub async fn run(
    composition: Composition,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let names: Vec<_> = composition.parts.iter().map(|p| p.name()).collect();
    let health = Health::new(&names).await;
    let endpoint = match composition.health {
        Some(addr) => Some(Endpoint::serve(addr, &health).await?),
        None => None,
    };
    tokio::pin!(shutdown);
    let opened = tokio::select! {
        () = &mut shutdown => None,
        opened = streams::open(&composition.bus, &composition.client_name) => Some(opened),
    };
    let Some(opened) = opened else {
        tracing::info!(parts = ?names, "shut down while connecting");
        Endpoint::stop(endpoint).await;
        return Ok(());
    };
    let opened = match opened {
        Ok(opened) => opened,
        Err(e) => {
            Endpoint::stop(endpoint).await;
            return Err(e.into());
        }
    };
    let mut running = Running::start(
        opened,
        composition.parts,
        health,
        endpoint,
        composition.grace_period,
    )
    .await?;
    let ended = tokio::select! {
        () = &mut shutdown => None,
        ended = running.ended.recv() => ended,
    };
    running.drain(ended).await
}

/// Starts `composition` and returns it running, for a caller that stops it with
/// [`Running::shutdown`]: the bus opened, health served at its own address (if any), the parts
/// started, health followed.
pub async fn start(composition: Composition) -> Result<Running, Error> {
    let names: Vec<_> = composition.parts.iter().map(|p| p.name()).collect();
    let health = Health::new(&names).await;
    let opened = streams::open(&composition.bus, &composition.client_name).await?;
    let endpoint = match composition.health {
        Some(addr) => Some(Endpoint::serve(addr, &health).await?),
        None => None,
    };
    Running::start(
        opened,
        composition.parts,
        health,
        endpoint,
        composition.grace_period,
    )
    .await
}

/// A running composition.
#[derive(Debug)]
pub struct Running {
    opened: Opened,
    health: Health,
    stop: watch::Sender<bool>,
    follower: JoinHandle<()>,
    parts: Vec<(&'static str, JoinHandle<()>)>,
    /// Each part's end, in the order they end: its name and its result.
    ended: tokio::sync::mpsc::UnboundedReceiver<(&'static str, Result<(), BoxError>)>,
    endpoint: Option<Endpoint>,
    grace: Duration,
}

impl Running {
    async fn start(
        opened: Opened,
        parts: Vec<Box<dyn Part>>,
        health: Health,
        endpoint: Option<Endpoint>,
        grace: Duration,
    ) -> Result<Running, Error> {
        let (stop, stop_rx) = watch::channel(false);
        let mut started = Vec::new();
        for part in parts {
            let name = part.name();
            let cx = Context {
                bus: opened.bus.clone(),
                leases: opened.leases.clone(),
                health: health.clone(),
                stop: stop_rx.clone(),
            };
            match part.start(cx) {
                Ok(s) => started.push((name, s)),
                Err(source) => {
                    Endpoint::stop(endpoint).await;
                    return Err(Error::Part { name, source });
                }
            }
        }
        let mut ready = Vec::new();
        let mut runs = Vec::new();
        for (name, s) in started {
            ready.push(s.ready);
            runs.push((name, s.run));
        }
        let readiness = Readiness {
            bus: opened.bus.clone(),
            parts: ready,
        };
        // As the bus and the parts are now, before the first call can ask; then followed.
        let serving = readiness.now();
        health.set(serving).await;
        let (ended_tx, ended) = tokio::sync::mpsc::unbounded_channel();
        let parts = runs
            .into_iter()
            .map(|(name, run)| {
                let ended_tx = ended_tx.clone();
                let task = tokio::spawn(async move {
                    let _ = ended_tx.send((name, run.await));
                });
                (name, task)
            })
            .collect();
        let follower = tokio::spawn(follow(health.clone(), readiness, serving));
        Ok(Running {
            opened,
            health,
            stop,
            follower,
            parts,
            ended,
            endpoint,
            grace,
        })
    }

    /// The games' bus the parts share.
    pub fn bus(&self) -> &Bus {
        &self.opened.bus
    }

    /// The process's health.
    pub fn health(&self) -> &Health {
        &self.health
    }

    /// Stops everything: health NOT_SERVING, every part told to stop and given the grace
    /// period to finish; the first error a part ended with, if any.
    pub async fn shutdown(self) -> Result<(), Error> {
        self.drain(None).await
    }

    /// The drain; `ended` is a part that ended by itself, which stops the others.
    async fn drain(
        mut self,
        ended: Option<(&'static str, Result<(), BoxError>)>,
    ) -> Result<(), Error> {
        let mut first = None;
        if let Some((name, result)) = ended {
            tracing::info!(
                part = name,
                ok = result.is_ok(),
                "a part ended; stopping the others"
            );
            if let Err(source) = result {
                first = Some(Error::Part { name, source });
            }
        }
        tracing::info!(grace = ?self.grace, "shutting down: NOT_SERVING, draining");
        self.follower.abort();
        self.health.set(false).await;
        let _ = self.stop.send(true);
        let deadline = tokio::time::Instant::now() + self.grace;
        for (name, task) in self.parts {
            if tokio::time::timeout_at(deadline, task).await.is_err() {
                tracing::warn!(
                    part = name,
                    "grace period over with work in flight; stopping"
                );
            }
        }
        while let Ok((name, result)) = self.ended.try_recv() {
            if let Err(source) = result {
                tracing::warn!(part = name, error = %source, "part failed");
                first.get_or_insert(Error::Part { name, source });
            }
        }
        Endpoint::stop(self.endpoint).await;
        first.map_or(Ok(()), Err)
    }
}

/// What health follows: the bus's connection and every part's readiness.
struct Readiness {
    bus: Bus,
    parts: Vec<Box<dyn Fn() -> bool + Send + Sync>>,
}

impl Readiness {
    fn now(&self) -> bool {
        self.bus.connected() && self.parts.iter().all(|ready| ready())
    }
}

/// Keeps `health` true to `readiness`, checked every 250 ms, until aborted; `serving` is what
/// health was set to last. It sets health only on a change: a health watcher is sent every set,
/// even of the same status, and a repeated SERVING could reach it after the NOT_SERVING of a
/// shutdown had been decided.
async fn follow(health: Health, readiness: Readiness, mut serving: bool) {
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = readiness.now();
        if now != serving {
            let connected = readiness.bus.connected();
            if now {
                tracing::info!(parts = ?health.names(), "health: SERVING");
            } else {
                tracing::warn!(parts = ?health.names(), connected, "health: NOT_SERVING");
            }
            health.set(now).await;
            serving = now;
        }
    }
}

/// The health endpoint on a port of its own.
#[derive(Debug)]
struct Endpoint {
    stop: tokio::sync::oneshot::Sender<()>,
    task: JoinHandle<Result<(), tonic::transport::Error>>,
}

impl Endpoint {
    /// Serves `health` on `addr` (port 0 takes a free port, which the log names).
    async fn serve(addr: SocketAddr, health: &Health) -> Result<Endpoint, Error> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Health { addr, source })?;
        tracing::info!(parts = ?health.names(), addr = ?listener.local_addr().ok(), "health serving");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let health = health.clone();
        let options = grpc::ServeOptions {
            request_timeout: Some(Duration::from_secs(5)),
            grace_period: Duration::from_secs(1),
            accept_http1: false,
        };
        let task = tokio::spawn(async move {
            grpc::serve(
                tokio_stream::wrappers::TcpListenerStream::new(listener),
                tonic::service::Routes::new(health.service()),
                &health,
                &options,
                async {
                    let _ = stopped.await;
                },
                || {},
            )
            .await
        });
        Ok(Endpoint { stop, task })
    }

    /// Stops the endpoint, waiting up to 2 s for it.
    async fn stop(endpoint: Option<Endpoint>) {
        if let Some(endpoint) = endpoint {
            let _ = endpoint.stop.send(());
            let _ = tokio::time::timeout(Duration::from_secs(2), endpoint.task).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::ServingStatus;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A part that does its job when `ready` says so, and notes that it was stopped.
    struct Toggle {
        ready: Arc<AtomicBool>,
        stopped: Arc<AtomicBool>,
    }

    impl Part for Toggle {
        fn name(&self) -> &'static str {
            "toggle"
        }

        fn start(self: Box<Self>, cx: Context) -> Result<Started, BoxError> {
            let ready = self.ready.clone();
            let stopped = self.stopped.clone();
            let run = async move {
                cx.stopped().await;
                stopped.store(true, Ordering::SeqCst);
                Ok(())
            };
            Ok(Started {
                ready: Box::new(move || ready.load(Ordering::SeqCst)),
                run: Box::pin(run),
            })
        }
    }

    async fn wait_for(health: &Health, name: &str, status: ServingStatus) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while health.status(name).await != Some(status) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name:?} not {status:?} within 5 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Health is SERVING only while every part is ready (the bus connected besides), for the
    /// part's name and the server's; the drain turns it NOT_SERVING and stops every part.
    #[tokio::test]
    async fn health_follows_every_part_and_the_drain_stops_them() {
        let (ready, stopped) = (Arc::new(AtomicBool::new(false)), Arc::default());
        let part = Toggle {
            ready: ready.clone(),
            stopped: Arc::clone(&stopped),
        };
        let running = start(Composition {
            bus: BusConfig::Embedded,
            client_name: "test".to_owned(),
            parts: vec![Box::new(part)],
            health: None,
            grace_period: Duration::from_secs(5),
        })
        .await
        .unwrap();
        let health = running.health().clone();
        assert_eq!(health.status("").await, Some(ServingStatus::NotServing));
        ready.store(true, Ordering::SeqCst);
        wait_for(&health, "toggle", ServingStatus::Serving).await;
        wait_for(&health, "", ServingStatus::Serving).await;
        ready.store(false, Ordering::SeqCst);
        wait_for(&health, "", ServingStatus::NotServing).await;
        ready.store(true, Ordering::SeqCst);
        wait_for(&health, "", ServingStatus::Serving).await;
        running.shutdown().await.unwrap();
        assert!(stopped.load(Ordering::SeqCst), "the part was not stopped");
        assert_eq!(health.status("").await, Some(ServingStatus::NotServing));
        assert_eq!(
            health.status("toggle").await,
            Some(ServingStatus::NotServing)
        );
    }
}
