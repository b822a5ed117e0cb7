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

use crate::convert::FormatArg;
use anyhow::Context as _;
use arbiter_bus::{Applied, Bus, JetStreamBus, NatsOptions, Provision};
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

    /// Connects with `options` as `client_name` to the games' stream.
    pub(crate) async fn connect(
        &self,
        options: &NatsOptions,
        client_name: &str,
    ) -> anyhow::Result<JetStreamBus> {
        arbiter_runtime::streams::connect_games(options, client_name, &self.stream)
            .await
            .context("connect to NATS")
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
    /// otherwise; or `file`, or `memory`. A consumer found with its state elsewhere is replaced
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
    runtime.block_on(async {
        match args.action {
            Action::Apply(a) => apply(a).await,
            Action::Prune(p) => prune(p).await,
            Action::Replicas(r) => replicas(r).await,
        }
    })
}

async fn replicas(args: ReplicasArgs) -> anyhow::Result<bool> {
    let mut options = args.bus.options()?;
    // It reads; it never creates anything.
    options.provision = Provision::Bind;
    let bus = args.bus.connect(&options, "shogi-arbiter-replicas").await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(args.wait);
    loop {
        let mut groups = Vec::new();
        let mut unreadable = Vec::new();
        for name in args.bus.streams() {
            // A stream the leader cannot answer for (no leader just now) is not current.
            match bus.replica_groups(name).await {
                Ok(found) => groups.extend(found),
                Err(e) => unreadable.push(format!("{name}: {e}")),
            }
        }
        let behind = groups.iter().filter(|g| !g.is_current()).count() + unreadable.len();
        let current = behind == 0;
        if current || tokio::time::Instant::now() >= deadline {
            for g in &groups {
                println!("{g}");
            }
            for u in &unreadable {
                println!("{u}");
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
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn apply(args: ApplyArgs) -> anyhow::Result<bool> {
    let mut options = args.bus.options()?;
    // This command is what creates them: `ARBITER_STREAMS=bind` in its environment (shared
    // with the services in a ConfigMap) does not apply to it.
    options.provision = Provision::Create;
    let replicas = args.replicas.stream_replicas;
    let games = arbiter_runtime::streams::connect(
        &options,
        "shogi-arbiter-streams",
        &args.bus.stream,
        replicas,
    )
    .await
    .context("create the streams")?;
    for name in args.bus.streams() {
        println!("stream {name}: present");
    }
    let config = games.stream_config().await?;
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
        println!(
            "consumers: {} on this nats-server (before 2.11), not {} (deploy/STREAMS.md, \
             \"Delivery modes and server versions\")",
            delivery.as_str(),
            wanted.as_str()
        );
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
    // The platform's: every checked verdict, each acknowledged by the platform once processed;
    // pulled, as a platform's client reads it (deploy/STREAMS.md).
    durables.push(arbiter_runtime::streams::platform_verdicts(
        args.consumer_replicas.map(usize::from),
    ));
    {
        for durable in durables {
            match games.apply_durable(&durable).await {
                Ok(done) => println!(
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
                ),
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
    let js = args.bus.connect(&options, "shogi-arbiter-prune").await?;
    let bus: Bus = Arc::new(js.clone());
    let cutoff = SystemTime::now()
        .checked_sub(args.finished_before)
        .unwrap_or(UNIX_EPOCH);
    let games = crate::export::finished(&bus, None, Some(cutoff)).await?;
    let format = args.format.into();
    if let Some(dir) = &args.archive_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("--archive-dir {}", dir.display()))?;
    }
    let (mut pruned, mut messages, mut ok) = (0usize, 0u64, true);
    for id in &games {
        // An id taken from a subject is checked before it names a file or a purge: a subject
        // like `shogi.game./etc/x.verdict` is not a game (issue 20).
        if let Err(e) = shogi_proto::convert::check_game_id("game_id", id) {
            eprintln!("{id:?}: left on the bus: not a game id: {e}");
            ok = false;
            continue;
        }
        // Finished is what the replay of its log says, not that `.verdict` holds something.
        let replay = match crate::export::replay(&bus, id).await {
            Ok(replay) if replay.game().is_over() => replay,
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
            println!("{id}: would be pruned");
            continue;
        }
        if let Some(dir) = &args.archive_dir {
            let written = async {
                let record = crate::export::to_record(&replay, format);
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
                println!("{id}: pruned ({n} messages)");
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
    Ok(ok)
}

/// Writes `bytes` to `path` so that a crash leaves either the whole file or none: into a
/// temporary file beside it, flushed to disk, renamed over `path`, and the directory flushed.
pub(crate) fn write_durably(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{}.tmp", name.unwrap_or_default()));
    let mut file =
        std::fs::File::create(&tmp).with_context(|| format!("create {}", tmp.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("write {}", tmp.display()))?;
    drop(file);
    std::fs::rename(&tmp, path).with_context(|| format!("rename to {}", path.display()))?;
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
