//! `shogi-arbiter serve`: the validator, the repetition-watcher and the impasse-judge in one
//! process. Without `--nats-url` they share an embedded in-process bus, so a first run needs
//! nothing else installed; with it they use NATS JetStream like the separate services.
//!
//! The first line on standard output is the address gRPC is served on, so that a script or a
//! test that asked for port 0 can read it.

use anyhow::Context as _;
use arbiter_bus::{Bus, JetStreamBus, MemoryBus};
use repetition_watcher::{Role, WorkerConfig};
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// The flags of `serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to serve gRPC (shogi.v1.MoveValidator, health, reflection) on.
    #[arg(long, env = "SHOGI_ARBITER_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// NATS server URL (or several, comma-separated); without it an embedded in-process bus is
    /// used.
    #[arg(long, env = "NATS_URL")]
    nats_url: Option<String>,
    /// NATS credentials and TLS (NATS_TOKEN, NATS_USER, NATS_CREDS, NATS_TLS_CA ...).
    #[command(flatten)]
    nats: arbiter_bus::NatsArgs,
    /// JetStream stream of game events (created when missing).
    #[arg(long, env = "SHOGI_ARBITER_STREAM", default_value = shogi_proto::STREAM)]
    stream: String,
    /// Servers that keep a copy of the stream, when this service creates it: 1 on a single
    /// server, 3 on a NATS cluster (at most 5).
    #[arg(
        long,
        env = "NATS_STREAM_REPLICAS",
        default_value_t = 1,
        value_parser = clap::value_parser!(u8).range(1..=5)
    )]
    stream_replicas: u8,
    /// Seconds in-flight calls get to finish after SIGTERM or SIGINT.
    #[arg(long, env = "SHOGI_ARBITER_GRACE_SECS", default_value_t = 10)]
    grace_secs: u64,
    #[command(flatten)]
    telemetry: arbiter_telemetry::TelemetryArgs,
}

/// Runs until SIGTERM or SIGINT.
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    if args.grace_secs == 0 {
        anyhow::bail!("--grace-secs must be positive");
    }
    if let Some(url) = &args.nats_url {
        args.nats
            .options(url)
            .validate()
            .context("invalid configuration")?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(async {
        // Inside the runtime: the OTLP exporter is a tonic client.
        // Logs on standard error: standard output starts with the address.
        let _telemetry = arbiter_telemetry::Builder::new(args.telemetry.config("shogi-arbiter"))
            .log_writer(std::io::stderr)
            .install()
            .context("set up telemetry")?;
        serve(args).await
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listen for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("listen for SIGINT")?;
    let bus: Bus = match &args.nats_url {
        None => Arc::new(MemoryBus::default()),
        Some(url) => Arc::new(
            JetStreamBus::connect(
                &args.nats.options(url),
                "shogi-arbiter",
                &arbiter_bus::StreamSettings {
                    replicas: args.stream_replicas.into(),
                    ..arbiter_bus::StreamSettings::new(&args.stream, shogi_proto::STREAM_SUBJECTS)
                },
            )
            .await
            .context("connect to NATS")?,
        ),
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("bind {}", args.listen))?;
    let addr = listener.local_addr().context("local address")?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{addr}")?;
        out.flush()?;
    }
    tracing::info!(%addr, bus = if args.nats_url.is_some() { "nats" } else { "embedded" }, "shogi-arbiter serving");
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let validator_stop = stop_rx.clone();
    let stopped = move || {
        let mut rx = validator_stop.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let workers: Vec<_> = [Role::Watcher, Role::Judge]
        .into_iter()
        .map(|role| {
            repetition_watcher::spawn_workers(
                bus.clone(),
                &WorkerConfig::new(role),
                None,
                Arc::default(),
                stop_rx.clone(),
            )
        })
        .collect();
    let options = move_validator::ServeOptions {
        grace_period: Duration::from_secs(args.grace_secs),
        ..Default::default()
    };
    let validator = tokio::spawn(move_validator::serve(listener, bus, options, stopped()));
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM"),
        _ = int.recv() => tracing::info!("SIGINT"),
    }
    let _ = stop_tx.send(true);
    let grace = Duration::from_secs(args.grace_secs);
    let _ = tokio::time::timeout(grace, validator).await;
    for w in workers {
        let _ = tokio::time::timeout(grace, w).await;
    }
    Ok(())
}
