//! `repetition-watcher`: flags and environment into a checked configuration, telemetry, connect,
//! consume until SIGTERM or SIGINT.

use anyhow::Context as _;
use clap::Parser;
use repetition_watcher::{Role, ServiceConfig, WorkerConfig, run_service};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Announces fourfold repetition and perpetual check from the games' move events on NATS.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// NATS server URL.
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    nats_url: String,
    /// Token to authenticate to NATS.
    #[arg(long, env = "NATS_TOKEN", hide_env_values = true)]
    nats_token: Option<String>,
    /// JetStream stream of game events (created when missing).
    #[arg(long, env = "REPETITION_WATCHER_STREAM", default_value = shogi_proto::STREAM)]
    stream: String,
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
    // Checked before anything is bound or connected.
    worker.validate().context("invalid configuration")?;
    let config = ServiceConfig {
        worker,
        health: Some(args.health_listen),
        grace_period: Duration::from_secs(args.grace_secs),
    };
    let shutdown = shutdown_signal()?;
    let bus = arbiter_bus::JetStreamBus::connect(
        &args.nats_url,
        args.nats_token.as_deref(),
        Role::Watcher.name(),
        &args.stream,
        shogi_proto::STREAM_SUBJECTS,
    )
    .await
    .context("connect to NATS")?;
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
