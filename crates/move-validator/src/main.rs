//! `move-validator`: flags and environment into a checked [`Config`], telemetry, bind, run until
//! SIGTERM or SIGINT.

use anyhow::Context as _;
use clap::Parser;
use move_validator::{Config, TlsConfig};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The shogi move validator: the shogi.v1.MoveValidator gRPC service over NATS JetStream.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to serve gRPC on.
    #[arg(long, env = "MOVE_VALIDATOR_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// NATS server URL, or several separated by commas.
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    nats_url: String,
    /// NATS credentials and TLS (NATS_TOKEN, NATS_USER, NATS_CREDS, NATS_TLS_CA ...).
    #[command(flatten)]
    nats: arbiter_bus::NatsArgs,
    /// JetStream stream of game events (created when missing).
    #[arg(long, env = "MOVE_VALIDATOR_STREAM", default_value = shogi_proto::STREAM)]
    stream: String,
    #[command(flatten)]
    replicas: arbiter_bus::ReplicasArgs,
    /// File holding the bearer token every MoveValidator call must carry (or the environment
    /// variable MOVE_VALIDATOR_AUTH_TOKEN, never a flag's value); neither means no
    /// authentication.
    #[arg(long, env = "MOVE_VALIDATOR_AUTH_TOKEN_FILE")]
    auth_token_file: Option<PathBuf>,
    /// TOML file of named credentials, each with its token or TLS client certificate, its
    /// scopes (play, read, operate) and its quotas (docs/credentials in the README); checked
    /// before anything is bound, a bad line named. The shared token, when also given, is one
    /// more credential with every scope and no quota.
    #[arg(long, env = "MOVE_VALIDATOR_CREDENTIALS_FILE")]
    credentials_file: Option<PathBuf>,
    /// Seconds in-flight calls get to finish after SIGTERM or SIGINT.
    #[arg(long, env = "MOVE_VALIDATOR_GRACE_SECS", default_value_t = 10)]
    grace_secs: u64,
    /// Largest request or response message in bytes.
    #[arg(long, env = "MOVE_VALIDATOR_MAX_MESSAGE_BYTES", default_value_t = 64 * 1024)]
    max_message_bytes: usize,
    /// Longest a call may run, in seconds.
    #[arg(
        long,
        env = "MOVE_VALIDATOR_REQUEST_TIMEOUT_SECS",
        default_value_t = 30
    )]
    request_timeout_secs: u64,
    /// Games kept in memory; others are rebuilt from the bus when asked for.
    #[arg(
        long,
        env = "MOVE_VALIDATOR_MAX_CACHED_GAMES",
        default_value_t = 100_000
    )]
    max_cached_games: usize,
    /// MiB the cached games may take, about (1 KB a game and 24 bytes a ply).
    #[arg(long, env = "MOVE_VALIDATOR_MAX_CACHE_MIB", default_value_t = 256)]
    max_cache_mib: usize,
    /// Run without the repetition-watcher and the impasse-judge: this service announces every
    /// ending itself. By default it leaves to them the endings they own, so that each is
    /// announced once.
    #[arg(long, env = "MOVE_VALIDATOR_STANDALONE")]
    standalone: bool,
    /// PEM certificate chain to serve TLS with; needs --tls-key.
    #[arg(long, env = "MOVE_VALIDATOR_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, env = "MOVE_VALIDATOR_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// PEM CA certificates that must have signed every client's certificate (mutual TLS);
    /// needs --tls-cert.
    #[arg(long, env = "MOVE_VALIDATOR_TLS_CLIENT_CA", requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// Serve the browser console on the gRPC port (`http://ADDR/`), with gRPC-Web and
    /// HTTP/1.1 accepted there for its calls.
    #[arg(long, env = "MOVE_VALIDATOR_CONSOLE")]
    console: bool,
    /// A host name the console answers browsers under (repeat it, or comma-separate the
    /// variable), beside IP addresses and localhost: the name players type, when the console
    /// is reached by name. Any other name is refused (DNS rebinding); `*` allows every name.
    #[arg(
        long = "console-host",
        env = "MOVE_VALIDATOR_CONSOLE_HOSTS",
        value_delimiter = ','
    )]
    console_hosts: Vec<String>,
    /// Seconds a game may go without an entry in its log (a move, or its creation) before
    /// the arbiter ends it as abandoned (`abort`, docs/rules.md section 10); 0: never.
    #[arg(
        long,
        env = "MOVE_VALIDATOR_ABANDON_AFTER_SECS",
        default_value_t = 7 * 24 * 3600
    )]
    abandon_after_secs: u64,
    /// Seconds between two sweeps over the live games (abandoned games, endings not yet
    /// recorded).
    #[arg(long, env = "MOVE_VALIDATOR_SWEEP_SECS", default_value_t = 60)]
    sweep_secs: u64,
    /// MiB the NATS servers' JetStream file store may hold (their `max_file_store`): the limit
    /// `shogi.store.limit` reports beside the stream's use, for the alert that fires before
    /// writes are refused. Unset: the limit is not reported.
    #[arg(long, env = "MOVE_VALIDATOR_STORE_LIMIT_MIB")]
    store_limit_mib: Option<u64>,
    #[command(flatten)]
    telemetry: arbiter_telemetry::TelemetryArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _telemetry = arbiter_telemetry::init(args.telemetry.config("move-validator"))
        .context("set up telemetry")?;
    let config = Config {
        nats: args.nats.options(args.nats_url),
        stream: args.stream,
        stream_replicas: args.replicas.stream_replicas,
        auth_token: move_validator::auth_token_from_env_or(args.auth_token_file.as_deref())
            .context("--auth-token-file")?,
        credentials: match &args.credentials_file {
            Some(path) => move_validator::credentials_from_file(path)?,
            None => Vec::new(),
        },
        grace_period: Duration::from_secs(args.grace_secs),
        max_message_bytes: args.max_message_bytes,
        request_timeout: Duration::from_secs(args.request_timeout_secs),
        max_cached_games: args.max_cached_games,
        max_cache_bytes: args.max_cache_mib.saturating_mul(1024 * 1024),
        announcements: if args.standalone {
            move_validator::Announcements::ByValidator
        } else {
            move_validator::Announcements::ByOwners
        },
        tls: args
            .tls_cert
            .zip(args.tls_key)
            .map(|(cert, key)| TlsConfig {
                cert,
                key,
                client_ca: args.tls_client_ca,
            }),
        refusals: Default::default(),
        console: args.console,
        console_hosts: args.console_hosts,
        lag_interval: arbiter_runtime::lag::INTERVAL,
        time: move_validator::TimeSource::system(),
        sweep: move_validator::SweepSettings {
            interval: Duration::from_secs(args.sweep_secs),
            abandon_after: (args.abandon_after_secs > 0)
                .then(|| Duration::from_secs(args.abandon_after_secs)),
            ..Default::default()
        },
        store_limit_bytes: args.store_limit_mib.map(|m| m.saturating_mul(1024 * 1024)),
        store_interval: Duration::from_secs(30),
    };
    // Checked before anything is bound.
    config.validate().context("invalid configuration")?;
    let shutdown = arbiter_runtime::shutdown_signal()?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("bind {}", args.listen))?;
    move_validator::run(listener, config, shutdown)
        .await
        .context("move-validator failed")
}
