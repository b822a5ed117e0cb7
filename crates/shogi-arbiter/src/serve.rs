//! `shogi-arbiter serve`: the validator, the repetition-watcher and the impasse-judge in one
//! process. Without `--nats-url` they share an embedded in-process bus, so a first run needs
//! nothing else installed; with it they use NATS JetStream like the separate services.
//!
//! The first line on standard output is the address gRPC is served on, so that a script or a
//! test that asked for port 0 can read it; with `--csa-listen`, the second is `csa <address>`,
//! where the CSA protocol front end listens.

use anyhow::Context as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
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
    #[command(flatten)]
    replicas: arbiter_bus::ReplicasArgs,
    /// Seconds in-flight calls get to finish after SIGTERM or SIGINT.
    #[arg(long, env = "SHOGI_ARBITER_GRACE_SECS", default_value_t = 10)]
    grace_secs: u64,
    /// Do not serve the browser console. By default it is served on the gRPC port
    /// (`http://ADDR/`), with gRPC-Web and HTTP/1.1 accepted there for its calls.
    #[arg(long, env = "SHOGI_ARBITER_NO_CONSOLE")]
    no_console: bool,
    /// A host name the console answers browsers under (repeat it, or comma-separate the
    /// variable), beside IP addresses and localhost; any other name is refused, against DNS
    /// rebinding. `*` allows every name.
    #[arg(
        long = "console-host",
        env = "SHOGI_ARBITER_CONSOLE_HOSTS",
        value_delimiter = ','
    )]
    console_hosts: Vec<String>,
    /// File holding the bearer token every MoveValidator call must carry, the console's
    /// included (or the environment variable MOVE_VALIDATOR_AUTH_TOKEN, never a flag's
    /// value); neither means no authentication.
    #[arg(long, env = "MOVE_VALIDATOR_AUTH_TOKEN_FILE")]
    auth_token_file: Option<std::path::PathBuf>,
    /// MiB the NATS servers' JetStream file store may hold (their max_file_store), reported
    /// as shogi.store.limit beside the games' stream's bytes; unset: not reported.
    #[arg(long, env = "MOVE_VALIDATOR_STORE_LIMIT_MIB")]
    store_limit_mib: Option<u64>,
    /// Also serve the CSA protocol (shogi-server's dialect) on this address, for engines and
    /// tournament software written for shogi-server; its games are arbiter games.
    #[arg(long, env = "SHOGI_ARBITER_CSA_LISTEN")]
    csa_listen: Option<SocketAddr>,
    #[command(flatten)]
    csa: csa_server::CsaArgs,
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
    let mut config = arbiter_stack::StackConfig::default();
    if args.nats_url.is_some() {
        // Both roles in this one process, on one consumer a partition: a move is delivered to
        // it once, not once a role (issue 38). On the embedded bus deliveries cost no message.
        config.workers = vec![arbiter_worker::WorkerConfig::new(
            arbiter_worker::Role::Both,
        )];
    }
    config.validator.grace_period = Duration::from_secs(args.grace_secs);
    config.validator.console = !args.no_console;
    config.validator.store_limit_bytes =
        args.store_limit_mib.map(|m| m.saturating_mul(1024 * 1024));
    config.validator.console_hosts = args.console_hosts.clone();
    config.validator.auth_token =
        move_validator::auth_token_from_env_or(args.auth_token_file.as_deref())
            .context("--auth-token-file")?;
    // Checked before anything is bound.
    config
        .validator
        .validate()
        .context("invalid configuration")?;
    if args.csa_listen.is_some() {
        // The address is the stack's, known once bound; the rest is checked now.
        args.csa
            .config("http://127.0.0.1:0", None)
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
        serve(args, config).await
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: ServeArgs, config: arbiter_stack::StackConfig) -> anyhow::Result<()> {
    let shutdown = arbiter_runtime::shutdown_signal()?;
    let bus = match &args.nats_url {
        None => arbiter_stack::BusConfig::Embedded,
        Some(url) => arbiter_stack::BusConfig::Nats {
            options: Box::new(args.nats.options(url)),
            stream: args.stream.clone(),
            replicas: args.replicas.stream_replicas,
        },
    };
    let bus = arbiter_stack::connect(&bus)
        .await
        .context("connect to NATS")?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("bind {}", args.listen))?;
    let addr = listener.local_addr().context("local address")?;
    {
        let mut out = crate::output::stdout();
        writeln!(out, "{addr}")?;
        out.flush()?;
    }
    tracing::info!(%addr, bus = if args.nats_url.is_some() { "nats" } else { "embedded" }, "shogi-arbiter serving");
    if config.validator.console {
        tracing::info!(url = %format!("http://{addr}/"), "browser console");
    }
    let mut extra = Vec::new();
    if let Some(csa_addr) = args.csa_listen {
        let csa = tokio::net::TcpListener::bind(csa_addr)
            .await
            .with_context(|| format!("bind {csa_addr}"))?;
        let csa_addr = csa.local_addr().context("local address")?;
        {
            let mut out = crate::output::stdout();
            writeln!(out, "csa {csa_addr}")?;
            out.flush()?;
        }
        // The front end calls the stack's own gRPC address, as a platform does.
        let mut own = addr;
        if own.ip().is_unspecified() {
            own.set_ip(if own.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        let csa_config = args.csa.config(
            &format!("http://{own}"),
            config.validator.auth_token.clone(),
        );
        tracing::info!(addr = %csa_addr, "CSA protocol front end");
        extra.push(csa_server::part(csa, csa_config));
    }
    let stack = arbiter_stack::Stack::start_with(listener, bus, config, extra)
        .await
        .context("start the arbiter")?;
    shutdown.await;
    stack.shutdown().await;
    Ok(())
}
