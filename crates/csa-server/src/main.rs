//! `csa-server`: the CSA protocol front end as a service of its own, in front of an arbiter
//! reached over gRPC.

use anyhow::Context as _;
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The CSA protocol front end: engines written for shogi-server play through the arbiter.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Address to serve the CSA protocol on (shogi-server's port is 4081 on floodgate).
    #[arg(long, env = "CSA_LISTEN", default_value = "127.0.0.1:4081")]
    listen: SocketAddr,
    /// The arbiter's gRPC URL.
    #[arg(long, env = "CSA_ARBITER", default_value = "http://127.0.0.1:50051")]
    arbiter: String,
    /// PEM CA certificates the arbiter's certificate must chain to: TLS towards an arbiter
    /// that serves it (an `https://` --arbiter needs it; the system's roots are not read).
    #[arg(long, env = "CSA_ARBITER_TLS_CA")]
    arbiter_tls_ca: Option<PathBuf>,
    /// PEM client certificate chain, for an arbiter that requires client certificates
    /// (mutual TLS); needs --arbiter-tls-key and --arbiter-tls-ca.
    #[arg(
        long,
        env = "CSA_ARBITER_TLS_CERT",
        requires_all = ["arbiter_tls_key", "arbiter_tls_ca"]
    )]
    arbiter_tls_cert: Option<PathBuf>,
    /// PEM private key of --arbiter-tls-cert.
    #[arg(long, env = "CSA_ARBITER_TLS_KEY", requires = "arbiter_tls_cert")]
    arbiter_tls_key: Option<PathBuf>,
    /// File holding the bearer token for the arbiter (or the environment variable
    /// CSA_ARBITER_TOKEN, never a flag's value).
    #[arg(long, env = "CSA_ARBITER_TOKEN_FILE")]
    arbiter_token_file: Option<PathBuf>,
    /// Where grpc.health.v1 is served (SERVING while the front end accepts connections), for
    /// a probe; none when unset.
    #[arg(long, env = "CSA_HEALTH_LISTEN")]
    health_listen: Option<SocketAddr>,
    /// How long the front end gets to stop after SIGTERM.
    #[arg(long, env = "CSA_GRACE_SECS", default_value_t = 10)]
    grace_secs: u64,
    /// NATS server URL(s), comma-separated: the lobby is then shared with every instance on
    /// the same servers (the bucket CSA_LOBBY), so that several run behind one address. Without
    /// it the lobby is this process's, and one instance serves all. Its own variable, not
    /// NATS_URL, which a deployment's shared settings give every service.
    #[arg(long, env = "CSA_NATS_URL")]
    nats_url: Option<String>,
    #[command(flatten)]
    nats: arbiter_bus::NatsArgs,
    #[command(flatten)]
    csa: csa_server::CsaArgs,
    #[command(flatten)]
    telemetry: arbiter_telemetry::TelemetryArgs,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let token = match (&args.arbiter_token_file, std::env::var("CSA_ARBITER_TOKEN")) {
        (Some(path), _) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("read {}", path.display()))?
                .trim()
                .to_owned(),
        ),
        (None, Ok(t)) if !t.is_empty() => Some(t),
        _ => None,
    };
    let mut config = args.csa.config(&args.arbiter, token);
    config.tls = arbiter_runtime::tls::ClientTls::from_flags(
        args.arbiter_tls_ca.clone(),
        args.arbiter_tls_cert.clone(),
        args.arbiter_tls_key.clone(),
    );
    config.validate().context("invalid configuration")?;
    anyhow::ensure!(args.grace_secs > 0, "--grace-secs must be positive");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(async {
        let _telemetry = arbiter_telemetry::Builder::new(args.telemetry.config("csa-server"))
            .install()
            .context("set up telemetry")?;
        let shutdown = arbiter_runtime::shutdown_signal()?;
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("bind {}", args.listen))?;
        let part = match &args.nats_url {
            Some(url) => {
                let options = args.nats.options(url.clone());
                let client = options
                    .connect("csa-server")
                    .await
                    .context("connect to NATS for the shared lobby")?;
                let js = match &options.api_prefix {
                    Some(prefix) => async_nats::jetstream::with_prefix(client, prefix),
                    None => async_nats::jetstream::new(client),
                };
                csa_server::part_on_nats(listener, config, js)
            }
            None => csa_server::part(listener, config),
        };
        // A composition of one part over the embedded bus, which it does not use: the health
        // endpoint and the drain are every service's.
        let composition = arbiter_runtime::compose::Composition {
            bus: arbiter_runtime::streams::BusConfig::Embedded,
            client_name: "csa-server".to_owned(),
            parts: vec![part],
            health: args.health_listen,
            grace_period: Duration::from_secs(args.grace_secs),
        };
        arbiter_runtime::compose::run(composition, shutdown)
            .await
            .context("csa-server")
    })
}
