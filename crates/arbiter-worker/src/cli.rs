//! What the two worker binaries are once their flags are read: one set of flags
//! ([`Settings`]), each binary's environment variables under its role's prefix
//! (`IMPASSE_JUDGE_STREAM`, [`ROLE_VARIABLES`]); then check the configuration, set up
//! telemetry, and run the worker through the one composition (`arbiter_runtime::compose`)
//! until SIGTERM or SIGINT. A binary's `main` is
//! [`main`].

use crate::lease;
use crate::pipeline::{LeaseSettings, Role, Stats, WorkerConfig};
use anyhow::Context as _;
use arbiter_runtime::compose::Composition;
use arbiter_runtime::streams::BusConfig;
use clap::{Args as _, FromArgMatches as _};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A worker binary's flags. Those of [`ROLE_VARIABLES`] are read from the environment under the
/// role's prefix ([`command`]); the NATS ones are every service's.
#[derive(Debug, clap::Args)]
pub struct Settings {
    /// NATS server URL, or several separated by commas.
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    pub nats_url: String,
    /// NATS credentials and TLS (NATS_TOKEN, NATS_USER, NATS_CREDS, NATS_TLS_CA ...).
    #[command(flatten)]
    pub nats: arbiter_bus::NatsArgs,
    /// JetStream stream of game events (created when missing).
    #[arg(long, default_value = shogi_proto::STREAM)]
    pub stream: String,
    /// Share the partitions by lease among the live instances, taking over those of an
    /// instance that dies, instead of the fixed share of `--instance` among `--instances`.
    #[arg(long)]
    pub leases: bool,
    /// This instance's name among the live ones, with `--leases` (default: host name and pid).
    #[arg(long)]
    pub holder: Option<String>,
    /// Milliseconds a lease lasts unrenewed, with `--leases`: how long a dead instance's
    /// partitions wait before they are taken over.
    #[arg(long, default_value_t = 3000)]
    pub lease_ttl_ms: u64,
    #[command(flatten)]
    pub replicas: arbiter_bus::ReplicasArgs,
    /// Servers that keep each durable consumer's state on a NATS cluster (default: as many as
    /// the stream). 1 shortens the verdict tail on a cluster, but a partition's verdicts stop
    /// while its consumer's server is down (deploy/STREAMS.md).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=5))]
    pub consumer_replicas: Option<u8>,
    /// How the durable consumers deliver: `push` (the default), with flow control, which no Raft
    /// snapshot of a replicated consumer holds up (docs/benchmarks-history.md, "The verdict tail on
    /// a cluster: its cause"), or `pull`. A consumer found in the other mode is consumed as it is,
    /// with a warning: `shogi-arbiter streams apply` replaces it (deploy/STREAMS.md).
    #[arg(long, default_value = "push", value_parser = ["pull", "push"])]
    pub consumer_delivery: String,
    /// Where the servers keep each durable consumer's state: `auto` (the default) is memory
    /// from three replicas on nats-server 2.11 or later, which writes nothing to the disk and
    /// survives the loss of any one server, and a file otherwise; or `file`, or `memory`
    /// (refused below three replicas: a restart of their servers loses the consumers). A
    /// consumer found with its state elsewhere is consumed as it is, with a warning:
    /// `shogi-arbiter streams apply` replaces it (deploy/STREAMS.md, "Consumer storage").
    #[arg(long, default_value = "auto")]
    pub consumer_storage: arbiter_bus::ConsumerStorage,
    /// This instance's index among `--instances`.
    #[arg(long, default_value_t = 0)]
    pub instance: u32,
    /// How many instances share the games.
    #[arg(long, default_value_t = 1)]
    pub instances: u32,
    /// Address of the grpc.health.v1 endpoint; port 0 (the default) takes a free port, which
    /// the log names, so that instances on one host never collide. Deployments name one.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub health_listen: SocketAddr,
    /// Milliseconds before an unacknowledged event is delivered again.
    #[arg(long, default_value_t = 5000)]
    pub ack_wait_ms: u64,
    /// Seconds the in-flight event gets after SIGTERM or SIGINT.
    #[arg(long, default_value_t = 10)]
    pub grace_secs: u64,
    /// Logs, traces and metrics.
    #[command(flatten)]
    pub telemetry: arbiter_telemetry::TelemetryArgs,
}

/// The flags whose environment variable is the role's: `<ROLE>_<NAME>`, the role's name in
/// upper case with `_` for `-` (`REPETITION_WATCHER_HEALTH_LISTEN`, `IMPASSE_JUDGE_LEASES`).
/// Each is the flag's name in upper case; deploy-check holds deploy/ to these names.
pub const ROLE_VARIABLES: [&str; 12] = [
    "STREAM",
    "LEASES",
    "HOLDER",
    "LEASE_TTL_MS",
    "CONSUMER_REPLICAS",
    "CONSUMER_DELIVERY",
    "CONSUMER_STORAGE",
    "INSTANCE",
    "INSTANCES",
    "HEALTH_LISTEN",
    "ACK_WAIT_MS",
    "GRACE_SECS",
];

/// The environment variable of flag `name` (one of [`ROLE_VARIABLES`]) for `role`.
pub fn role_variable(role: Role, name: &str) -> String {
    format!(
        "{}_{name}",
        role.name().to_ascii_uppercase().replace('-', "_")
    )
}

/// The command line of `role`'s binary, described by `about`: [`Settings`], with the role's
/// environment variables.
pub fn command(role: Role, about: &'static str) -> clap::Command {
    let mut cmd = Settings::augment_args(
        clap::Command::new(role.name())
            .version(env!("CARGO_PKG_VERSION"))
            .about(about),
    );
    for name in ROLE_VARIABLES {
        // Once per process, at start: the names live as long as the command does.
        let env: &'static str = Box::leak(role_variable(role, name).into_boxed_str());
        cmd = cmd.mut_arg(name.to_ascii_lowercase(), |arg| arg.env(env));
    }
    cmd
}

/// A worker binary's `main`: its flags and environment, then [`run`] in a tokio runtime.
pub fn main(role: Role, about: &'static str) -> anyhow::Result<()> {
    let settings = Settings::from_arg_matches(&command(role, about).get_matches())?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?
        .block_on(run(role, settings))
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
    worker.consumer_delivery = if s.consumer_delivery == "pull" {
        arbiter_bus::DeliveryMode::Pull
    } else {
        arbiter_bus::DeliveryMode::Push
    };
    worker.consumer_storage = s.consumer_storage;
    worker.validate().context("invalid configuration")?;
    // The consumers' replicas, or the stream's when none are given (`NATS_STREAM_REPLICAS`,
    // which every binary of a deployment shares and deploy-check holds to its cluster).
    s.consumer_storage
        .check_for_replicas(
            s.consumer_replicas
                .map_or(s.replicas.stream_replicas, usize::from),
        )
        .map_err(|e| anyhow::anyhow!("invalid configuration: --consumer-storage: {e}"))?;
    let holder = s.holder.unwrap_or_else(lease::default_holder);
    let lease_ttl = Duration::from_millis(s.lease_ttl_ms);
    lease::check(&holder, lease_ttl).context("invalid configuration")?;
    let nats = s.nats.options(&s.nats_url);
    nats.validate().context("invalid configuration")?;
    let shutdown = arbiter_runtime::shutdown_signal()?;
    // Health is served NOT_SERVING while the bus and its streams are opened, however long
    // JetStream takes to answer.
    let composition = Composition {
        bus: BusConfig::Nats {
            options: Box::new(nats),
            stream: s.stream,
            replicas: s.replicas.stream_replicas,
        },
        client_name: role.name().to_owned(),
        parts: vec![crate::pipeline::part(
            worker,
            s.leases.then_some(LeaseSettings {
                holder,
                ttl: lease_ttl,
            }),
            Arc::new(Stats::default()),
        )],
        health: Some(s.health_listen),
        grace_period: Duration::from_secs(s.grace_secs),
    };
    arbiter_runtime::compose::run(composition, shutdown)
        .await
        .with_context(|| format!("{} failed", role.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each role reads its variables under its own prefix, the shared ones under theirs, and
    /// every flag of the role's keeps its name.
    #[test]
    fn each_role_reads_its_own_variables() {
        for (role, prefix) in [
            (Role::Watcher, "REPETITION_WATCHER_"),
            (Role::Judge, "IMPASSE_JUDGE_"),
        ] {
            let cmd = command(role, "a worker");
            cmd.clone().debug_assert();
            let env = |id: &str| {
                cmd.get_arguments()
                    .find(|a| a.get_id() == id)
                    .and_then(|a| a.get_env())
                    .map(|e| e.to_string_lossy().into_owned())
            };
            for name in ROLE_VARIABLES {
                assert_eq!(
                    env(&name.to_ascii_lowercase()),
                    Some(format!("{prefix}{name}")),
                    "{name}"
                );
            }
            assert_eq!(env("nats_url").as_deref(), Some("NATS_URL"));
            assert_eq!(
                env("stream_replicas").as_deref(),
                Some("NATS_STREAM_REPLICAS")
            );
        }
        let parsed = command(Role::Judge, "a worker")
            .try_get_matches_from(["impasse-judge", "--leases", "--instances", "2"])
            .unwrap();
        let s = Settings::from_arg_matches(&parsed).unwrap();
        assert!(s.leases);
        assert_eq!((s.instances, s.stream.as_str()), (2, shogi_proto::STREAM));
    }
}
