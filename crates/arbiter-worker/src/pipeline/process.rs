//! A pipeline service process: the workers of one instance, by lease or by a fixed share, its
//! health endpoint, and the drain on shutdown.

use super::config::{Error, Stats, WorkerConfig};
use super::judge::Worker;
use crate::lease::LeaseConfig;
use crate::telemetry;
use arbiter_bus::Bus;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

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
