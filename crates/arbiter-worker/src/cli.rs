//! What the two worker binaries do once their flags are read: check the configuration, set up
//! telemetry, connect, and run the service until SIGTERM or SIGINT. Each binary keeps its own
//! flags (its environment variables carry the role's prefix) and hands them over as
//! [`Settings`].

use crate::lease::{self, LeaseConfig};
use crate::pipeline::{Role, ServiceConfig, WorkerConfig, run_service_connecting};
use anyhow::Context as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A worker binary's flags, as read.
#[derive(Debug)]
pub struct Settings {
    /// NATS server URL(s).
    pub nats_url: String,
    /// NATS credentials and TLS.
    pub nats: arbiter_bus::NatsArgs,
    /// The stream of game events.
    pub stream: String,
    /// The stream's replicas, when this service creates it (and the side streams').
    pub stream_replicas: u8,
    /// Share the partitions by lease.
    pub leases: bool,
    /// This instance's lease holder name, if not the default.
    pub holder: Option<String>,
    /// How long a lease lasts unrenewed, milliseconds.
    pub lease_ttl_ms: u64,
    /// The durable consumers' replicas, if not the stream's.
    pub consumer_replicas: Option<u8>,
    /// The durable consumers push with flow control instead of answering pulls.
    pub consumer_push: bool,
    /// The fixed share: this instance's index.
    pub instance: u32,
    /// The fixed share: how many instances.
    pub instances: u32,
    /// Where grpc.health.v1 is served.
    pub health_listen: SocketAddr,
    /// Milliseconds before an unacknowledged event comes again.
    pub ack_wait_ms: u64,
    /// Seconds the in-flight event gets after SIGTERM or SIGINT.
    pub grace_secs: u64,
    /// Logs, traces and metrics.
    pub telemetry: arbiter_telemetry::TelemetryArgs,
}

/// Runs `role` with `settings` until SIGTERM or SIGINT. Call it inside the tokio runtime (the
/// OTLP exporter is built there). Everything is checked before anything is bound or connected.
pub async fn run(role: Role, settings: Settings) -> anyhow::Result<()> {
    let s = settings;
    let _telemetry =
        arbiter_telemetry::init(s.telemetry.config(role.name())).context("set up telemetry")?;
    let mut worker = WorkerConfig::new(role);
    worker.instance = s.instance;
    worker.instances = s.instances;
    worker.ack_wait = Duration::from_millis(s.ack_wait_ms);
    worker.consumer_replicas = s.consumer_replicas.map(usize::from);
    if s.consumer_push {
        worker.consumer_delivery = arbiter_bus::DeliveryMode::Push;
    }
    worker.validate().context("invalid configuration")?;
    let holder = s.holder.unwrap_or_else(lease::default_holder);
    let lease_ttl = Duration::from_millis(s.lease_ttl_ms);
    lease::check(&holder, lease_ttl).context("invalid configuration")?;
    let nats = s.nats.options(&s.nats_url);
    nats.validate().context("invalid configuration")?;
    let config = ServiceConfig {
        worker,
        leases: None,
        health: Some(s.health_listen),
        grace_period: Duration::from_secs(s.grace_secs),
    };
    let shutdown = arbiter_runtime::shutdown_signal()?;
    // The games' stream, then the side streams once, keeping the lease stream's bus; health is
    // served NOT_SERVING meanwhile, however long JetStream takes to answer.
    let games = arbiter_runtime::streams::games(&s.stream, s.stream_replicas.into());
    let (leases, replicas) = (s.leases, s.stream_replicas.into());
    let connect = async move {
        let bus = arbiter_bus::JetStreamBus::connect(&nats, role.name(), &games).await?;
        let lease_bus = lease::side_streams(&bus, replicas).await?;
        let leases = leases.then(|| LeaseConfig {
            bus: lease_bus,
            holder,
            ttl: lease_ttl,
        });
        Ok((Arc::new(bus) as arbiter_bus::Bus, leases))
    };
    run_service_connecting(connect, config, shutdown)
        .await
        .with_context(|| format!("{} failed", role.name()))
}
