//! `repetition-watcher`: its flags and environment, then `arbiter_worker::cli::run`:
//! a checked configuration, telemetry, connect, consume until SIGTERM or SIGINT.

use arbiter_worker::Role;
use arbiter_worker::cli::Settings;
use clap::Parser;
use std::net::SocketAddr;

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
    /// How the durable consumers deliver: `pull` (the default, as deploy/nats/auth.conf
    /// allows) or `push`, with flow control, which no Raft snapshot of a replicated consumer
    /// holds up (BENCHMARKS.md, "The verdict tail on a cluster: its cause"; a consumer made in
    /// the other mode must be removed first).
    #[arg(long, env = "REPETITION_WATCHER_CONSUMER_DELIVERY", default_value = "pull", value_parser = ["pull", "push"])]
    consumer_delivery: String,
    /// This instance's index among `--instances`.
    #[arg(long, env = "REPETITION_WATCHER_INSTANCE", default_value_t = 0)]
    instance: u32,
    /// How many instances share the games.
    #[arg(long, env = "REPETITION_WATCHER_INSTANCES", default_value_t = 1)]
    instances: u32,
    /// Address of the grpc.health.v1 endpoint; port 0 (the default) takes a free port, which
    /// the log names, so that instances on one host never collide. Deployments name one.
    #[arg(
        long,
        env = "REPETITION_WATCHER_HEALTH_LISTEN",
        default_value = "127.0.0.1:0"
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
    let a = Args::parse();
    arbiter_worker::cli::run(
        Role::Watcher,
        Settings {
            nats_url: a.nats_url,
            nats: a.nats,
            stream: a.stream,
            stream_replicas: a.stream_replicas,
            leases: a.leases,
            holder: a.holder,
            lease_ttl_ms: a.lease_ttl_ms,
            consumer_replicas: a.consumer_replicas,
            consumer_push: a.consumer_delivery == "push",
            instance: a.instance,
            instances: a.instances,
            health_listen: a.health_listen,
            ack_wait_ms: a.ack_wait_ms,
            grace_secs: a.grace_secs,
            telemetry: a.telemetry,
        },
    )
    .await
}
