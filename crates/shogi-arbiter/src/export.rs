//! `shogi-arbiter export`: games read from the bus (NATS JetStream), through the same replay of
//! their logs every service uses, written as records with their verdict's ending, one game by
//! id or, with `--archive`, every game finished in a time range, so that an operator keeps the
//! records before the stream's retention removes the games.

use crate::convert::{CsaVersionArg, EncodingArg, FormatArg};
use crate::ending::{Foul, record_ending};
use anyhow::{Context, bail};
use arbiter_bus::Bus;
use arbiter_runtime::games::Reader;
use shogi_proto::log::Replay;
use shogi_records::{Encoding, Ending, Format, Record, write_with};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The reader of game logs the CLI is, as its counts name it. It copies nothing aside: the
/// users it runs as (`reader`, `admin`) may not publish there, and an operator's tool has no
/// business writing the bus (issue 20: each copy refused cost a 5 s publish timeout).
static READER: Reader = Reader::counting_only("shogi-arbiter");

/// The flags of `export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    bus: crate::streams::BusArgs,
    /// The format to write.
    #[arg(long, value_enum, default_value_t = FormatArg::Csa)]
    format: FormatArg,
    /// The encoding to write.
    #[arg(long, value_enum, default_value_t = EncodingArg::Utf8)]
    encoding: EncodingArg,
    /// The CSA version to write, as `convert --csa-version`.
    #[arg(long, value_enum, default_value_t = CsaVersionArg::V2_2)]
    csa_version: CsaVersionArg,
    /// Every game whose verdict was stored in the time range (`--since`, `--until`), each
    /// written to `--out-dir` as `<game_id>.<ext>`, instead of the games named.
    #[arg(long, requires = "out_dir", conflicts_with = "games")]
    archive: bool,
    /// With `--archive`: verdicts stored at or after this time, Unix seconds (default: all).
    #[arg(long, requires = "archive")]
    since: Option<u64>,
    /// With `--archive`: verdicts stored before this time, Unix seconds (default: now).
    #[arg(long, requires = "archive")]
    until: Option<u64>,
    /// Writes each game to this directory as `<game_id>.<ext>` instead of standard output.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// The games to export, by id.
    #[arg(required_unless_present = "archive")]
    games: Vec<String>,
}

/// Runs `export`; `false` when a game could not be exported (the others still are).
pub fn run(args: ExportArgs) -> anyhow::Result<bool> {
    let options = args.bus.options()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(crate::streams::stopped_by_violations(async {
        let bus: Bus = Arc::new(args.bus.connect(&options, "shogi-arbiter-export").await?);
        export(&bus, &args).await
    }))
}

async fn export(bus: &Bus, args: &ExportArgs) -> anyhow::Result<bool> {
    let format = Format::from(args.format);
    let encoding = match args.encoding {
        EncodingArg::Utf8 => Encoding::Utf8,
        EncodingArg::ShiftJis => Encoding::ShiftJis,
    };
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("--out-dir {}", dir.display()))?;
    }
    let games = if args.archive {
        let at = |secs: Option<u64>| secs.map(|s| UNIX_EPOCH + Duration::from_secs(s));
        finished(bus, at(args.since), at(args.until)).await?
    } else {
        args.games.clone()
    };
    let mut ok = true;
    for id in &games {
        let written = async {
            shogi_proto::convert::check_game_id("game_id", id)?;
            let record = record(bus, id, format).await?;
            Ok::<_, anyhow::Error>(write_with(
                &record,
                format,
                encoding,
                args.csa_version.options(),
            )?)
        }
        .await;
        match (written, &args.out_dir) {
            (Ok(bytes), Some(dir)) => {
                let path = dir.join(format!("{id}.{}", format.extension(encoding)));
                std::fs::write(&path, bytes)
                    .with_context(|| format!("write {}", path.display()))?;
                eprintln!("{id}: {}", path.display());
            }
            (Ok(bytes), None) => {
                let mut out = crate::output::stdout();
                out.write_all(&bytes)?;
                out.flush()?;
            }
            (Err(e), _) => {
                eprintln!("shogi-arbiter export: {id}: {e:#}");
                ok = false;
            }
        }
    }
    if args.archive {
        eprintln!("{} finished games exported", games.len());
    }
    Ok(ok)
}

/// The ids of the games whose verdict the stream stored in `[since, until)` (Unix seconds), in
/// the order it stored them.
pub(crate) async fn finished(
    bus: &Bus,
    since: Option<SystemTime>,
    until: Option<SystemTime>,
) -> anyhow::Result<Vec<String>> {
    let until = until.unwrap_or_else(SystemTime::now);
    let mut ids = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut from = 1;
    while let Some(m) = bus.next(shogi_proto::subject::ALL_VERDICTS, from).await? {
        from = m.sequence + 1;
        let Some(t) = m.time else { continue };
        if since.is_some_and(|s| t < s) || t >= until {
            continue;
        }
        if let Some((id, shogi_proto::subject::Kind::Verdict)) =
            shogi_proto::subject::parse(&m.subject)
            && seen.insert(id.to_owned())
        {
            ids.push(id.to_owned());
        }
    }
    Ok(ids)
}

/// The record of game `id`: its start, its moves and its verdict's ending.
pub(crate) async fn record(bus: &Bus, id: &str, format: Format) -> anyhow::Result<Record> {
    Ok(to_record(&replay(bus, id).await?, format))
}

/// Game `id` as its log makes it, through the one replay.
pub(crate) async fn replay(bus: &Bus, id: &str) -> anyhow::Result<Replay> {
    let Some(mut replay) = READER.load(bus, id).await? else {
        bail!("no game {id} on the bus");
    };
    READER.catch_up(bus, &mut replay).await?;
    Ok(replay)
}

/// A game as a record: the moves played, the ending its verdict says, and a comment naming the
/// game and the verdict with its evidence's ply.
pub fn to_record(replay: &Replay, format: Format) -> Record {
    let game = replay.game();
    let moves: Vec<_> = game.moves().collect();
    let mut record = Record::from_moves(format, game.start_position().clone(), &moves);
    record.comment = Some(match game.verdict() {
        Some(v) => format!(
            "shogi-arbiter game {}: {} at ply {}",
            replay.id(),
            v.code.as_str(),
            v.ply
        ),
        None => format!("shogi-arbiter game {}: in progress", replay.id()),
    });
    // The forfeited move of an illegal-move verdict was not played: it is not in the record.
    record.ending = game
        .verdict()
        .map(|v| Ending::new(record_ending(v, Foul::NotRecorded)));
    record
}
