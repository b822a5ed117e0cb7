//! `repetition-watcher`: flags and environment into a checked configuration, telemetry, connect,
//! consume until SIGTERM or SIGINT.

use anyhow::Context as _;
use clap::Parser;
use repetition_watcher::{LeaseConfig, Role, ServiceConfig, WorkerConfig, run_service};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Announces fourfold repetition and perpetual check from the games' move events on NATS.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// NATS server URL, or several separated by commas.
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    nats_url: String,
    /// NATS credentials and TLS (NATS_TOKEN, NATS_USER, NATS_CREDS, NATS_TLS_CA ...).
    #[command(flatten)]
    nats: arbiter_bus::NatsArgs,
    /// JetStream stream of game events (created when missing).
    #[arg(long, env = "REPETITION_WATCHER_STREAM", default_value = shogi_proto::STREAM)]
    stream: String,
    /// Share the partitions by lease among the live instances, taking over those of an
    /// instance that dies, instead of the fixed share of `--instance` among `--instances`.
    #[arg(long, env = "REPETITION_WATCHER_LEASES")]
    leases: bool,
    /// This instance's name among the live ones, with `--leases` (default: host name and pid).
    #[arg(long, env = "REPETITION_WATCHER_HOLDER")]
    holder: Option<String>,
    /// Milliseconds a lease lasts unrenewed, with `--leases`: how long a dead instance's
    /// partitions wait before they are taken over.
    #[arg(long, env = "REPETITION_WATCHER_LEASE_TTL_MS", default_value_t = 3000)]
    lease_ttl_ms: u64,
    /// Servers that keep a copy of the stream, when this service creates it: 1 on a single
    /// server, 3 on a NATS cluster (at most 5).
    #[arg(
        long,
        env = "NATS_STREAM_REPLICAS",
        default_value_t = 1,
        value_parser = clap::value_parser!(u8).range(1..=5)
    )]
    stream_replicas: u8,
    /// Servers that keep each durable consumer's state on a NATS cluster (default: as many as
    /// the stream). 1 shortens the verdict tail on a cluster, but a partition's verdicts stop
    /// while its consumer's server is down (deploy/STREAMS.md).
    #[arg(long, env = "REPETITION_WATCHER_CONSUMER_REPLICAS", value_parser = clap::value_parser!(u8).range(1..=5))]
    consumer_replicas: Option<u8>,
    /// This instance's index among `--instances`.
    #[arg(long, env = "REPETITION_WATCHER_INSTANCE", default_value_t = 0)]
    instance: u32,
    /// How many instances share the games.
    #[arg(long, env = "REPETITION_WATCHER_INSTANCES", default_value_t = 1)]
    instances: u32,
    /// Address of the grpc.health.v1 endpoint.
    #[arg(
        long,
        env = "REPETITION_WATCHER_HEALTH_LISTEN",
        default_value = "127.0.0.1:50061"
    )]
    health_listen: SocketAddr,
    /// Milliseconds before an unacknowledged event is delivered again.
    #[arg(long, env = "REPETITION_WATCHER_ACK_WAIT_MS", default_value_t = 5000)]
    ack_wait_ms: u64,
    /// Seconds the in-flight event gets after SIGTERM or SIGINT.
    #[arg(long, env = "REPETITION_WATCHER_GRACE_SECS", default_value_t = 10)]
    grace_secs: u64,
    #[command(flatten)]
    telemetry: arbiter_telemetry::TelemetryArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _telemetry = arbiter_telemetry::init(args.telemetry.config("repetition-watcher"))
        .context("set up telemetry")?;
    let mut worker = WorkerConfig::new(Role::Watcher);
    worker.instance = args.instance;
    worker.instances = args.instances;
    worker.ack_wait = Duration::from_millis(args.ack_wait_ms);
    worker.consumer_replicas = args.consumer_replicas.map(usize::from);
    // Checked before anything is bound or connected.
    worker.validate().context("invalid configuration")?;
    let holder = args
        .holder
        .clone()
        .unwrap_or_else(repetition_watcher::default_holder);
    let lease_ttl = Duration::from_millis(args.lease_ttl_ms);
    repetition_watcher::lease::check(&holder, lease_ttl).context("invalid configuration")?;
    let nats = args.nats.options(&args.nats_url);
    nats.validate().context("invalid configuration")?;
    let mut config = ServiceConfig {
        worker,
        leases: None,
        health: Some(args.health_listen),
        grace_period: Duration::from_secs(args.grace_secs),
    };
    let shutdown = shutdown_signal()?;
    let bus = arbiter_bus::JetStreamBus::connect(
        &nats,
        Role::Watcher.name(),
        &arbiter_bus::StreamSettings {
            replicas: args.stream_replicas.into(),
            ..arbiter_bus::StreamSettings::new(&args.stream, shogi_proto::STREAM_SUBJECTS)
        },
    )
    .await
    .context("connect to NATS")?;
    let lease_bus = repetition_watcher::lease::side_streams(&bus, args.stream_replicas.into())
        .await
        .context("create the side streams")?;
    if args.leases {
        config.leases = Some(LeaseConfig {
            bus: lease_bus,
            holder,
            ttl: lease_ttl,
        });
    }
    run_service(Arc::new(bus), config, shutdown)
        .await
        .context("repetition-watcher failed")
}

/// A future that completes on the first SIGTERM or SIGINT; the handlers are installed at once.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listen for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("listen for SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM"),
            _ = int.recv() => tracing::info!("SIGINT"),
        }
    })
}
