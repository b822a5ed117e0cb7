//! `shogi-arbiter streams`: the arbiter's JetStream resources as code, for an operator or a
//! setup job holding the `admin` NATS user.
//!
//! - `apply` creates the streams (`SHOGI_GAMES` with its verdict republish, `SHOGI_ASIDE`,
//!   `SHOGI_LEASES`) and every durable consumer of the two worker roles (one per role and
//!   partition), or brings existing consumers to the settings given. In production the
//!   services run with `ARBITER_STREAMS=bind` and hold no stream-admin rights
//!   (`deploy/nats/nats.conf`): this command, run once per deployment or upgrade (a Helm hook,
//!   a compose one-shot service), is the only writer of stream and consumer configuration.
//! - `replicas` says whether every copy of the streams and consumers is current on a cluster,
//!   the check between two servers of a rolling upgrade.
//! - `prune` is the retention of finished games: every game whose verdict was stored before a
//!   cutoff is first written as a record (optional, `--archive-dir`) and then purged from
//!   `SHOGI_GAMES` (`shogi.game.<id>.>`). A game whose record could not be written is kept.
//!
//! Each fails fast and clean: no answer from NATS within `--connect-timeout` (or, for
//! `replicas`, within `--wait`) ends it with exit 2; the first permissions violation the server
//! reports ends it with exit 2 naming the permission; `replicas` and `prune` (and `export`)
//! only bind to the streams and never create one; SIGINT or SIGTERM during a prune stop it
//! after the game in hand, with exit 130 or 143.

use crate::convert::FormatArg;
use crate::output;
use anyhow::{Context as _, anyhow};
use arbiter_bus::{Applied, Bus, BusError, JetStreamBus, NatsOptions, Provision};
use arbiter_worker::{Role, WorkerConfig};
use shogi_records::{Encoding, write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The flags of `streams`.
#[derive(clap::Args, Debug)]
pub struct StreamsArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// Creates the streams and the workers' durable consumers, or brings them to these
    /// settings; prints one line a resource and what was done to it.
    Apply(ApplyArgs),
    /// Retention: writes every game finished before a cutoff as a record (with
    /// `--archive-dir`), then purges it from the games' stream.
    Prune(PruneArgs),
    /// The copies of the arbiter's streams and of every consumer, one line each, as their
    /// leaders report them; exits 0 only when every one has a leader and every copy is current:
    /// what a rolling upgrade of the servers waits for before it restarts the next one
    /// (deploy/STREAMS.md, "Upgrading the servers").
    Replicas(ReplicasArgs),
}

#[derive(clap::Args, Debug)]
struct ReplicasArgs {
    #[command(flatten)]
    bus: BusArgs,
    /// Asks again every second until every copy is current, for at most this many seconds;
    /// 0 asks once.
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    wait: u64,
}

/// Where the arbiter's bus is: the flags `export` and both `streams` actions share.
#[derive(clap::Args, Debug)]
pub(crate) struct BusArgs {
    /// NATS server URL (or several, comma-separated) of the arbiter's bus.
    #[arg(long, env = "NATS_URL")]
    nats_url: String,
    /// NATS credentials and TLS (NATS_USER with NATS_PASSWORD_FILE, NATS_TOKEN, NATS_CREDS,
    /// NATS_TLS_CA ...): in a locked-down deployment `reader` for `export`, `admin` for
    /// `streams`.
    #[command(flatten)]
    nats: arbiter_bus::NatsArgs,
    /// JetStream stream of game events.
    #[arg(long, env = "SHOGI_ARBITER_STREAM", default_value = shogi_proto::STREAM)]
    stream: String,
    /// Seconds to wait for NATS to answer (a server that cannot be reached is tried again
    /// meanwhile); then the command ends with exit 2.
    #[arg(long, env = "NATS_CONNECT_TIMEOUT", default_value_t = 10, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..))]
    connect_timeout: u64,
}

impl BusArgs {
    /// The connection options, checked before anything connects.
    pub(crate) fn options(&self) -> anyhow::Result<NatsOptions> {
        let options = self.nats.options(&self.nats_url);
        options.validate().context("invalid configuration")?;
        Ok(options)
    }

    /// The arbiter's three streams: the games', the set-aside messages', the leases'.
    fn streams(&self) -> [&str; 3] {
        [
            self.stream.as_str(),
            shogi_proto::ASIDE_STREAM,
            shogi_proto::LEASE_STREAM,
        ]
    }

    /// How long to wait for NATS to answer.
    pub(crate) fn connect_timeout(&self) -> Duration {
        Duration::from_secs(self.connect_timeout)
    }

    /// Connects with `options` as `client_name` to the games' stream, which must exist: the
    /// operator's tools only bind to it, whatever `ARBITER_STREAMS` says, and never create one.
    /// No answer within `--connect-timeout` is an error.
    pub(crate) async fn connect(
        &self,
        options: &NatsOptions,
        client_name: &str,
    ) -> anyhow::Result<JetStreamBus> {
        self.connect_within(
            options,
            client_name,
            self.connect_timeout(),
            "--connect-timeout",
        )
        .await
    }

    /// As [`Self::connect`], waiting at most `within`, which the flag `flag` sets.
    async fn connect_within(
        &self,
        options: &NatsOptions,
        client_name: &str,
        within: Duration,
        flag: &str,
    ) -> anyhow::Result<JetStreamBus> {
        let mut options = options.clone();
        options.provision = Provision::Bind;
        let connecting =
            arbiter_runtime::streams::connect_games(&options, client_name, &self.stream);
        self.answered_within(connecting, within, flag).await
    }

    /// As [`Self::connect`], for reading the games with message gets alone (`export`): the
    /// stream is found with a message get, not its info, which a platform's user (`reader`)
    /// is refused.
    pub(crate) async fn connect_reading(
        &self,
        options: &NatsOptions,
        client_name: &str,
    ) -> anyhow::Result<JetStreamBus> {
        let connecting = JetStreamBus::connect_reading(options, client_name, &self.stream);
        self.answered_within(connecting, self.connect_timeout(), "--connect-timeout")
            .await
    }

    /// What `connecting` gave within `within` (which the flag `flag` sets), or why not.
    async fn answered_within(
        &self,
        connecting: impl std::future::Future<Output = Result<JetStreamBus, BusError>>,
        within: Duration,
        flag: &str,
    ) -> anyhow::Result<JetStreamBus> {
        match tokio::time::timeout(within, connecting).await {
            Ok(Ok(bus)) => Ok(bus),
            // What is missing says it all.
            Ok(Err(e @ BusError::Missing { .. })) => Err(e.into()),
            Ok(Err(e)) => Err(anyhow!(e).context("connect to NATS")),
            Err(_) => Err(self.no_answer(within, flag)),
        }
    }

    /// The error of a NATS that did not answer within `within`, which the flag `flag` sets.
    fn no_answer(&self, within: Duration, flag: &str) -> anyhow::Error {
        anyhow!(
            "no answer from NATS at {} within {} s: no server listening, a server that says \
             nothing, or a JetStream that cannot answer ({flag})",
            self.nats_url,
            within.as_secs_f64()
        )
    }
}

/// Runs `work` until it ends or a server reports a permissions violation to this process,
/// which ends the command at once with an error naming the permission (exit 2): a request
/// the server refused that way gets no answer, and waiting out a timeout for each one would
/// keep an operator for hours.
pub(crate) async fn stopped_by_violations<T>(
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let mut violations = arbiter_bus::permissions_violations();
    tokio::select! {
        done = work => done,
        seen = violations.wait_for(Option::is_some) => {
            let text = seen.ok().and_then(|v| v.clone()).unwrap_or_default();
            Err(anyhow!(
                "nats: {text}: the NATS user may not do that (deploy/nats/auth.conf: \
                 `streams` needs the admin user; `export` the reader)"
            ))
        }
    }
}

/// `streams prune` stopped by SIGINT or SIGTERM, after the game in hand.
#[derive(Debug)]
pub struct Interrupted {
    /// The signal's number: 2 (SIGINT) or 15 (SIGTERM).
    signal: u8,
}

impl Interrupted {
    /// 128 plus the signal's number, as a shell reports a command a signal ended.
    pub fn exit_code(&self) -> u8 {
        128 + self.signal
    }
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.signal == 2 {
            "SIGINT"
        } else {
            "SIGTERM"
        };
        write!(
            f,
            "stopped by {name} after the game in hand; the games not reached stay on the bus \
             for the next run"
        )
    }
}

impl std::error::Error for Interrupted {}

/// SIGINT and SIGTERM, once listened to: the first that came, if any. From then on neither
/// ends the process by itself.
struct Signals {
    got: tokio::sync::watch::Receiver<Option<u8>>,
}

impl Signals {
    fn listen() -> anyhow::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt()).context("listen to SIGINT")?;
        let mut terminate = signal(SignalKind::terminate()).context("listen to SIGTERM")?;
        let (tx, got) = tokio::sync::watch::channel(None);
        tokio::spawn(async move {
            let signal = tokio::select! {
                _ = interrupt.recv() => 2,
                _ = terminate.recv() => 15,
            };
            let _ = tx.send(Some(signal));
        });
        Ok(Signals { got })
    }

    /// The signal received so far, if any.
    fn received(&self) -> Option<Interrupted> {
        (*self.got.borrow()).map(|signal| Interrupted { signal })
    }

    /// Completes when a signal comes.
    async fn wait(&self) -> Interrupted {
        let mut got = self.got.clone();
        match got.wait_for(Option::is_some).await {
            Ok(signal) => Interrupted {
                signal: signal.unwrap_or(15),
            },
            // The listener is gone: no signal will come.
            Err(_) => std::future::pending().await,
        }
    }
}

#[derive(clap::Args, Debug)]
struct ApplyArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    replicas: arbiter_bus::ReplicasArgs,
    /// The workers' ack wait in milliseconds (deploy/STREAMS.md).
    #[arg(long, env = "ARBITER_ACK_WAIT_MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(1..))]
    ack_wait_ms: u64,
    /// The workers' max ack pending per partition.
    #[arg(long, env = "ARBITER_MAX_ACK_PENDING", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_ack_pending: u64,
    /// Copies of each durable consumer's state; default: as the stream.
    #[arg(long, env = "ARBITER_CONSUMER_REPLICAS",
          value_parser = clap::value_parser!(u8).range(1..=5))]
    consumer_replicas: Option<u8>,
    /// How the workers' durable consumers deliver: `push` with flow control (the default) or
    /// `pull`. A consumer found in the other mode is replaced by one that starts right after
    /// its acknowledged position (deploy/STREAMS.md, "Changing the delivery mode"). On a
    /// nats-server older than 2.11, push is made pull ("Delivery modes and server versions").
    #[arg(long, env = "ARBITER_CONSUMER_DELIVERY", default_value = "push",
          value_parser = ["push", "pull"])]
    consumer_delivery: String,
    /// Where the servers keep the state of the workers' and `verdict-check`'s consumers:
    /// `auto` (the default) is memory from three replicas on nats-server 2.11 or later (nothing
    /// written to the disk; it survives the loss of any one server, not of all at once), a file
    /// otherwise; or `file`, or `memory`, refused below three replicas (a restart of their
    /// servers loses the consumers). A consumer found with its state elsewhere is replaced
    /// by one that starts right after its acknowledged position (deploy/STREAMS.md, "Consumer
    /// storage"). `platform-verdicts` is a file whatever this says.
    #[arg(long, env = "ARBITER_CONSUMER_STORAGE", default_value = "auto")]
    consumer_storage: arbiter_bus::ConsumerStorage,
}

#[derive(clap::Args, Debug)]
struct PruneArgs {
    #[command(flatten)]
    bus: BusArgs,
    /// Prunes the games whose verdict is older than this: `90d`, `36h`, `45m` or seconds.
    #[arg(long, value_parser = parse_age)]
    finished_before: Duration,
    /// Writes each game as a record to this directory (`<game_id>.<ext>`) before it is purged;
    /// without it the games are purged unwritten.
    #[arg(long, value_name = "DIR")]
    archive_dir: Option<PathBuf>,
    /// The format of the records written.
    #[arg(long, value_enum, default_value_t = FormatArg::Csa, requires = "archive_dir")]
    format: FormatArg,
    /// Lists what would be pruned, and writes nothing and purges nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `90d`, `36h`, `45m`, `30s` or plain seconds.
fn parse_age(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?}: expected a number and a unit, as 90d, 36h, 45m or 30s"))?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        other => return Err(format!("{s:?}: unknown unit {other:?} (d, h, m or s)")),
    };
    Ok(Duration::from_secs(n.saturating_mul(unit)))
}

/// Runs `streams`; `false` when something could not be done (the rest still was).
pub fn run(args: StreamsArgs) -> anyhow::Result<bool> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(stopped_by_violations(async {
        match args.action {
            Action::Apply(a) => apply(a).await,
            Action::Prune(p) => prune(p).await,
            Action::Replicas(r) => replicas(r).await,
        }
    }))
}

async fn replicas(args: ReplicasArgs) -> anyhow::Result<bool> {
    let options = args.bus.options()?;
    let wait = Duration::from_secs(args.wait);
    // `--wait` bounds the whole command, connecting included (a server of the cluster
    // restarting is waited for); without it, one try within the connect timeout.
    let within = if wait.is_zero() {
        args.bus.connect_timeout()
    } else {
        wait
    };
    let deadline = tokio::time::Instant::now() + within;
    // It reads; it never creates anything.
    let bus = args
        .bus
        .connect_within(
            &options,
            "shogi-arbiter-replicas",
            within,
            if wait.is_zero() {
                "--connect-timeout"
            } else {
                "--wait"
            },
        )
        .await?;
    loop {
        let mut groups = Vec::new();
        let mut unreadable = Vec::new();
        let reading = async {
            for name in args.bus.streams() {
                // A stream the leader cannot answer for (no leader just now) is not current.
                match bus.replica_groups(name).await {
                    Ok(found) => groups.extend(found),
                    // A missing stream is said as such, and is no copy to wait for.
                    Err(e @ BusError::Missing { .. }) => return Err(e),
                    Err(e) => unreadable.push(format!("{name}: {e}")),
                }
            }
            Ok(())
        };
        let read = tokio::time::timeout_at(deadline, reading).await;
        match read {
            Ok(Ok(())) => {}
            Ok(Err(missing)) => return Err(missing.into()),
            Err(_) => unreadable.push(format!(
                "no answer from NATS within {} s",
                within.as_secs_f64()
            )),
        }
        let behind = groups.iter().filter(|g| !g.is_current()).count() + unreadable.len();
        let current = behind == 0;
        if current || wait.is_zero() || tokio::time::Instant::now() >= deadline {
            for g in &groups {
                output::line(g)?;
            }
            for u in &unreadable {
                output::line(u)?;
            }
            if current {
                eprintln!(
                    "every copy of {} streams and consumers is current",
                    groups.len()
                );
            } else {
                eprintln!(
                    "{behind} of {} streams and consumers have a copy that is not current",
                    groups.len() + unreadable.len()
                );
            }
            return Ok(current);
        }
        tokio::time::sleep(
            Duration::from_secs(1)
                .min(deadline.saturating_duration_since(tokio::time::Instant::now())),
        )
        .await;
    }
}

/// The CSA front ends' shared lobby, the bucket `CSA_LOBBY` (docs/csa.md, "Running more than
/// one"), with the game stream's replicas: "present" or "created".
async fn csa_lobby(
    options: &arbiter_bus::NatsOptions,
    replicas: usize,
) -> anyhow::Result<&'static str> {
    let client = options
        .connect("shogi-arbiter-streams")
        .await
        .context("connect for the CSA lobby's bucket")?;
    let js = match &options.api_prefix {
        Some(prefix) => async_nats::jetstream::with_prefix(client, prefix),
        None => async_nats::jetstream::new(client),
    };
    if js.get_key_value(csa_server::shared::BUCKET).await.is_ok() {
        return Ok("present");
    }
    js.create_key_value(csa_server::shared::bucket_config(replicas))
        .await
        .context("create the CSA lobby's bucket")?;
    Ok("created")
}

async fn apply(args: ApplyArgs) -> anyhow::Result<bool> {
    let mut options = args.bus.options()?;
    // This command is what creates them: `ARBITER_STREAMS=bind` in its environment (shared
    // with the services in a ConfigMap) does not apply to it.
    options.provision = Provision::Create;
    let replicas = args.replicas.stream_replicas;
    let consumer_replicas = args.consumer_replicas.map(usize::from);
    // Refused before anything is made, and again below with the replicas of the stream found.
    args.consumer_storage
        .check_for_replicas(consumer_replicas.unwrap_or(replicas))
        .map_err(|e| anyhow!("--consumer-storage: {e}"))?;
    let within = args.bus.connect_timeout();
    let connecting = arbiter_runtime::streams::connect(
        &options,
        "shogi-arbiter-streams",
        &args.bus.stream,
        replicas,
    );
    let games = match tokio::time::timeout(within, connecting).await {
        Ok(games) => games.context("create the streams")?,
        Err(_) => return Err(args.bus.no_answer(within, "--connect-timeout")),
    };
    for name in args.bus.streams() {
        output::line(format_args!("stream {name}: present"))?;
    }
    let lobby = csa_lobby(&options, replicas).await?;
    output::line(format_args!(
        "stream KV_{}: {lobby}",
        csa_server::shared::BUCKET
    ))?;
    let config = games.stream_config().await?;
    args.consumer_storage
        .check_for_replicas(consumer_replicas.unwrap_or(config.num_replicas))
        .map_err(|e| {
            anyhow!(
                "--consumer-storage: stream {} has {} replicas: {e}",
                config.name,
                config.num_replicas
            )
        })?;
    if config.num_replicas != replicas {
        eprintln!(
            "stream {}: {} replicas, not {replicas}; change it with \
             `nats stream edit {} --replicas {replicas}` (deploy/STREAMS.md)",
            config.name, config.num_replicas, config.name
        );
    }
    let mut ok = true;
    let mut durables = Vec::new();
    let wanted = if args.consumer_delivery == "pull" {
        arbiter_bus::DeliveryMode::Pull
    } else {
        arbiter_bus::DeliveryMode::Push
    };
    let delivery = games.delivery_on_server(wanted);
    if delivery != wanted {
        output::line(format_args!(
            "consumers: {} on this nats-server (before 2.11), not {} (deploy/STREAMS.md, \
             \"Delivery modes and server versions\")",
            delivery.as_str(),
            wanted.as_str()
        ))?;
    }
    for role in [Role::Watcher, Role::Judge] {
        let mut worker = WorkerConfig::new(role);
        worker.ack_wait = Duration::from_millis(args.ack_wait_ms);
        worker.max_ack_pending = usize::try_from(args.max_ack_pending).unwrap_or(usize::MAX);
        worker.consumer_replicas = args.consumer_replicas.map(usize::from);
        worker.consumer_delivery = delivery;
        worker.consumer_storage = args.consumer_storage;
        durables.extend((0..shogi_proto::PARTITIONS).map(|p| worker.durable(p)));
    }
    // The validator's check of every announcement, shared by its instances: pulled.
    durables.push(arbiter_runtime::streams::verdict_check(
        args.consumer_replicas.map(usize::from),
        args.consumer_storage,
    ));
    // The validator's judgement of the clocks' flags, shared by its instances: pulled.
    durables.push(arbiter_runtime::streams::clock_flag(
        args.consumer_replicas.map(usize::from),
        args.consumer_storage,
    ));
    // The platform's: every checked verdict, each acknowledged by the platform once processed;
    // pulled, as a platform's client reads it (deploy/STREAMS.md).
    durables.push(arbiter_runtime::streams::platform_verdicts(
        args.consumer_replicas.map(usize::from),
    ));
    {
        for durable in durables {
            match games.apply_durable(&durable).await {
                Ok(done) => output::line(format_args!(
                    "consumer {} {}: {}",
                    config.name,
                    durable.name,
                    match done {
                        Applied::Created => "created".to_owned(),
                        Applied::Updated => "updated".to_owned(),
                        Applied::Unchanged => "unchanged".to_owned(),
                        Applied::Replaced { from_sequence } => {
                            let made = games.resolved(&durable);
                            format!(
                                "replaced ({}, {}, from stream sequence {from_sequence})",
                                made.delivery.as_str(),
                                made.storage.as_str()
                            )
                        }
                    }
                ))?,
                Err(e) => {
                    eprintln!("consumer {} {}: {e}", config.name, durable.name);
                    ok = false;
                }
            }
        }
    }
    Ok(ok)
}

async fn prune(args: PruneArgs) -> anyhow::Result<bool> {
    let options = args.bus.options()?;
    // Listened to before anything else: from here on a signal stops the prune between two
    // games, never inside one.
    let signals = Signals::listen()?;
    let setup = async {
        let js = args.bus.connect(&options, "shogi-arbiter-prune").await?;
        let bus: Bus = Arc::new(js.clone());
        let cutoff = SystemTime::now()
            .checked_sub(args.finished_before)
            .unwrap_or(UNIX_EPOCH);
        let games = crate::export::finished(&bus, None, Some(cutoff)).await?;
        Ok::<_, anyhow::Error>((js, bus, games))
    };
    // Nothing is written or purged yet: a signal ends it at once.
    let (js, bus, games) = tokio::select! {
        ready = setup => ready?,
        stopped = signals.wait() => return Err(stopped.into()),
    };
    let format = args.format.into();
    if let Some(dir) = &args.archive_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("--archive-dir {}", dir.display()))?;
    }
    let (mut pruned, mut messages, mut ok) = (0usize, 0u64, true);
    let mut stopped = None;
    for id in &games {
        if let Some(signal) = signals.received() {
            stopped = Some(signal);
            break;
        }
        // An id taken from a subject is checked before it names a file or a purge: a subject
        // like `shogi.game./etc/x.verdict` is not a game (issue 20).
        if let Err(e) = shogi_proto::convert::check_game_id("game_id", id) {
            eprintln!("{id:?}: left on the bus: not a game id: {e}");
            ok = false;
            continue;
        }
        // Finished is what the replay of its log says, not that `.verdict` holds something.
        let logged = match crate::export::replay(&bus, id).await {
            Ok(logged) if logged.replay.game().is_over() => logged,
            Ok(_) => {
                eprintln!("{id}: left on the bus: its log decides no ending (a live game)");
                continue;
            }
            Err(e) => {
                eprintln!("{id}: left on the bus: {e:#}");
                ok = false;
                continue;
            }
        };
        if args.dry_run {
            output::line(format_args!("{id}: would be pruned"))?;
            continue;
        }
        if let Some(dir) = &args.archive_dir {
            let written = async {
                let record = crate::export::to_record(&logged, format);
                let bytes = write(&record, format, Encoding::Utf8)?;
                let path = dir.join(format!("{id}.{}", format.extension(Encoding::Utf8)));
                // On disk, whole, before the purge: a crash in between leaves the game on the
                // bus and its record on disk, and the next run writes it again.
                write_durably(&path, &bytes)?;
                Ok::<_, anyhow::Error>(path)
            }
            .await;
            if let Err(e) = written {
                eprintln!("{id}: kept on the bus: its record could not be written: {e:#}");
                ok = false;
                continue;
            }
        }
        match js.purge_subject(&shogi_proto::subject::all(id)).await {
            Ok(n) => {
                pruned += 1;
                messages += n;
                // Said after the purge: a closed standard output stops the prune here, with
                // this game done.
                output::line(format_args!("{id}: pruned ({n} messages)"))?;
            }
            Err(e) => {
                eprintln!("{id}: not purged: {e}");
                ok = false;
            }
        }
    }
    eprintln!(
        "{} finished before the cutoff; {pruned} pruned, {messages} messages purged{}",
        games.len(),
        if args.dry_run { " (dry run)" } else { "" }
    );
    match stopped {
        Some(signal) => Err(signal.into()),
        None => Ok(ok),
    }
}

/// Writes `bytes` to `path` so that a crash leaves either the whole file or none: into a
/// temporary file beside it, flushed to disk, renamed over `path`, and the directory flushed.
pub(crate) fn write_durably(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{}.tmp", name.unwrap_or_default()));
    let written = std::fs::File::create(&tmp)
        .with_context(|| format!("create {}", tmp.display()))
        .and_then(|mut file| {
            file.write_all(bytes)
                .and_then(|()| file.sync_all())
                .with_context(|| format!("write {}", tmp.display()))
        })
        .and_then(|()| {
            std::fs::rename(&tmp, path).with_context(|| format!("rename to {}", path.display()))
        });
    if let Err(e) = written {
        // No half-written temporary is left beside the records.
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("sync {}", dir.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.csa");
        write_durably(&path, b"one").unwrap();
        write_durably(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            [std::ffi::OsString::from("g.csa")],
            "no temporary left"
        );
    }

    #[test]
    fn ages_take_a_unit() {
        assert_eq!(parse_age("90d"), Ok(Duration::from_secs(90 * 86_400)));
        assert_eq!(parse_age("36h"), Ok(Duration::from_secs(36 * 3600)));
        assert_eq!(parse_age("45m"), Ok(Duration::from_secs(45 * 60)));
        assert_eq!(parse_age("30"), Ok(Duration::from_secs(30)));
        assert!(parse_age("3w").unwrap_err().contains("unknown unit"));
        assert!(parse_age("d").is_err());
        assert!(parse_age("").is_err());
    }
}
