//! `shogi-arbiter export`: games read from the bus (NATS JetStream), through the same replay of
//! their logs every service uses, written as records with their verdict's ending, one game by
//! id or, with `--archive`, every game finished in a time range, so that an operator keeps the
//! records before the stream's retention removes the games.

use crate::convert::{CsaVersionArg, EncodingArg, FormatArg};
use crate::ending::{Foul, record_ending};
use anyhow::{Context, bail};
use arbiter_bus::Bus;
use arbiter_runtime::games::{AsideLedger, GameLog};
use shogi_adjudication::{Allowance, Charge, ClockRules, Evidence, ResultCode, TimeControl};
use shogi_proto::log::{Applied, Replay};
use shogi_records::{Encoding, Ending, Format, MoveTime, Record, write_with};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The reader of game logs the CLI is, as its counts name it. It copies nothing aside: the
/// users it runs as (`reader`, `admin`) may not publish there, and an operator's tool has no
/// business writing the bus (issue 20: each copy refused cost a 5 s publish timeout).
static GAME_LOG: GameLog = GameLog::new(AsideLedger::counting_only("shogi-arbiter"));

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
        // Message gets alone: what a platform's user (`reader`) may do.
        let bus: Bus = Arc::new(
            args.bus
                .connect_reading(&options, "shogi-arbiter-export")
                .await?,
        );
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

/// The ids of the games whose ending the validator recorded (`.result`, as ListGames reads
/// them: the checked verdict, not an owner's announcement on `.verdict`) in `[since, until)`
/// (Unix seconds), in the order the stream stored them.
pub(crate) async fn finished(
    bus: &Bus,
    since: Option<SystemTime>,
    until: Option<SystemTime>,
) -> anyhow::Result<Vec<String>> {
    let until = until.unwrap_or_else(SystemTime::now);
    let mut ids = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut from = 1;
    while let Some(m) = bus.next(shogi_proto::subject::ALL_RESULTS, from).await? {
        from = m.sequence + 1;
        let Some(t) = m.time else { continue };
        if since.is_some_and(|s| t < s) || t >= until {
            continue;
        }
        if let Some((id, shogi_proto::subject::Kind::Result)) =
            shogi_proto::subject::parse(&m.subject)
            && seen.insert(id.to_owned())
        {
            ids.push(id.to_owned());
        }
    }
    Ok(ids)
}

/// The record of game `id`: its start, its moves with their times and its verdict's ending.
pub(crate) async fn record(bus: &Bus, id: &str, format: Format) -> anyhow::Result<Record> {
    Ok(to_record(&replay(bus, id).await?, format))
}

/// A game as its log makes it, through the one replay, with what the game's clock charged each
/// move it played (the replay keeps the clock, not the charges of the moves before it) and the
/// comment its mover sent with it (SubmitMove's `comment`, which the log keeps on the move).
pub(crate) struct Logged {
    /// The game.
    pub replay: Replay,
    /// Each move played, in order.
    played: Vec<Played>,
}

/// What the log says of one move played beyond the move.
struct Played {
    /// What the clock charged it (`None` without a clock).
    charge: Option<Charge>,
    /// The comment it came with, if any.
    comment: Option<String>,
}

/// Game `id` as its log makes it, through the one replay.
pub(crate) async fn replay(bus: &Bus, id: &str) -> anyhow::Result<Logged> {
    let Some(replay) = GAME_LOG.load(bus, id).await? else {
        bail!("no game {id} on the bus");
    };
    // The reader's catch-up, keeping what each move played was charged and its comment.
    let log = shogi_proto::subject::moves(replay.id());
    let mut logged = Logged::new(replay);
    while let Some(msg) = bus.next(&log, logged.replay.read_from()).await? {
        let applied = GAME_LOG.apply(bus, &mut logged.replay, &msg).await;
        logged.note(&applied);
    }
    Ok(logged)
}

impl Logged {
    fn new(replay: Replay) -> Logged {
        Logged {
            replay,
            played: Vec::new(),
        }
    }

    /// Keeps what an entry applied to the replay charged and its comment, if it played a move.
    fn note(&mut self, applied: &Applied) {
        if let Applied::Played { outcome, entry, .. } = applied {
            self.played.push(Played {
                charge: outcome.charge,
                comment: (!entry.comment.is_empty()).then(|| entry.comment.clone()),
            });
        }
    }
}

/// A game as a record: the moves played with the time the arbiter's clock charged each and the
/// comment each came with, the ending its verdict says, the time control in the headers, and a
/// comment naming the game and the verdict with its evidence's ply. A game without the arbiter's clock has no times (the
/// platform kept its clock).
pub fn to_record(logged: &Logged, format: Format) -> Record {
    let replay = &logged.replay;
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
    // The arbiter's clock: a time control, and the clock the game keeps by it.
    let control = game
        .ruleset()
        .time_control
        .filter(|_| game.clock().is_some());
    if let Some(control) = control {
        record.headers = time_control_headers(game.ruleset().clock, control);
    }
    if logged.played.len() == record.moves.len() {
        for (m, played) in record.moves.iter_mut().zip(&logged.played) {
            if control.is_some() {
                m.time = played.charge.map(|c| MoveTime {
                    spent_ms: c.charged_ms,
                    total_ms: None,
                });
            }
            m.comment.clone_from(&played.comment);
        }
    }
    // The forfeited move of an illegal-move verdict was not played: it is not in the record.
    record.ending = game.verdict().map(|v| Ending {
        time: ending_time(replay, v).map(|spent_ms| MoveTime {
            spent_ms,
            total_ms: None,
        }),
        ..Ending::new(record_ending(v, Foul::NotRecorded))
    });
    record
}

/// The time of the call that ended a game with the arbiter's clock, as the clock charges it:
/// a time-up's charge from its evidence (a late call, or the flag of a silent side), and for
/// another call its log recorded (a resignation, a declaration, a forfeit) what the clock's
/// rules charge the time from the turn's start to its receipt. `None` for an ending the moves
/// decided, and without a clock.
fn ending_time(replay: &Replay, v: &shogi_adjudication::Verdict) -> Option<u64> {
    let clock = replay.game().clock()?;
    if let (ResultCode::Timeout, Evidence::TimeUp(up)) = (v.code, &v.evidence) {
        return Some(up.charged_ms);
    }
    let received = replay.verdict()?.received_unix_ms;
    if received <= 0 {
        return None;
    }
    let elapsed = u64::try_from(received)
        .ok()?
        .saturating_sub(clock.turn_started_ms());
    Some(clock.rules().charged_ms(elapsed))
}

/// The time control as record headers, under CSA's keys (KIF and JKF write them as
/// `持ち時間`, `先手持ち時間`, `後手持ち時間`): CSA V2.2's `TIME_LIMIT` (`hh:mm+ss`: the main time
/// in hours and minutes, the byoyomi in seconds) where it can say the control (the same for
/// both sides, whole minutes and seconds, one byoyomi period, no increment), else V3.0's
/// `TIME` (`main+byoyomi+increment` in seconds), or `TIME+` and `TIME-` with time odds; the
/// byoyomi periods where there are several, and the CSA shogi-server's `Least_Time_Per_Move`
/// where it is not 0. A `TIME` key makes the CSA writer write V3.0.
pub fn time_control_headers(rules: ClockRules, control: TimeControl) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (black, white) = (control.black, control.white);
    let periods = |a: Allowance| if a.byoyomi_ms == 0 { 1 } else { a.periods };
    let fits_v22 = black == white
        && black.increment_ms == 0
        && periods(black) == 1
        && black.main_ms % 60_000 == 0
        && black.byoyomi_ms % 1000 == 0;
    if fits_v22 {
        let minutes = black.main_ms / 60_000;
        out.push((
            "TIME_LIMIT".to_owned(),
            format!(
                "{:02}:{:02}+{:02}",
                minutes / 60,
                minutes % 60,
                black.byoyomi_ms / 1000
            ),
        ));
    } else if black == white {
        out.push(("TIME".to_owned(), time_spec(black)));
    } else {
        out.push(("TIME+".to_owned(), time_spec(black)));
        out.push(("TIME-".to_owned(), time_spec(white)));
    }
    match (periods(black), periods(white)) {
        (1, 1) => {}
        (b, w) if b == w => out.push(("byoyomi_periods".to_owned(), b.to_string())),
        (b, w) => out.push(("byoyomi_periods".to_owned(), format!("+{b} -{w}"))),
    }
    if rules.least_time_per_move_ms != 0 {
        out.push((
            "Least_Time_Per_Move".to_owned(),
            seconds(rules.least_time_per_move_ms),
        ));
    }
    out
}

/// One side's allowance as CSA V3.0's `$TIME` says it: `main+byoyomi+increment`, in seconds.
fn time_spec(a: Allowance) -> String {
    format!(
        "{}+{}+{}",
        seconds(a.main_ms),
        seconds(a.byoyomi_ms),
        seconds(a.increment_ms)
    )
}

/// Milliseconds as seconds, with the fraction only where there is one (`600`, `0.5`).
fn seconds(ms: u64) -> String {
    let (s, frac) = (ms / 1000, ms % 1000);
    if frac == 0 {
        return s.to_string();
    }
    format!("{s}.{frac:03}").trim_end_matches('0').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shogi_proto::log::Entry;
    use shogi_proto::v1 as pb;
    use shogi_records::{EndingKind, WriteOptions, read_as};
    use shogi_rules::{Move, Position};

    /// When the games below are created (Unix milliseconds).
    const T0: i64 = 1_700_000_000_000;

    fn ms(ms: i64) -> Option<prost_types::Duration> {
        Some(prost_types::Duration {
            seconds: ms / 1000,
            nanos: (ms % 1000) as i32 * 1_000_000,
        })
    }

    /// A game created at `T0` under `overrides` of the `online` preset, whose log holds each of
    /// `moves` (USI, received at) as its writer stored it (a move after its side's deadline: the
    /// time-up ending), read back entry by entry as `export` reads it.
    fn logged(overrides: Option<pb::RulesetOverrides>, moves: &[(&str, i64)]) -> Logged {
        logged_with_comments(overrides, moves, &[])
    }

    /// [`logged`], each move stored with the comment at its index in `comments` (none for "").
    fn logged_with_comments(
        overrides: Option<pb::RulesetOverrides>,
        moves: &[(&str, i64)],
        comments: &[&str],
    ) -> Logged {
        let created = pb::GameCreated {
            game_id: "clocked".into(),
            ruleset: Some(pb::Ruleset {
                preset: "online".into(),
                overrides,
            }),
            start_sfen: Position::startpos().to_sfen(),
            handicap: String::new(),
            strict: false,
            created_unix_ms: T0,
        };
        let mut writer = Replay::from_created(created.clone(), 1).unwrap();
        let mut logged = Logged::new(Replay::from_created(created, 1).unwrap());
        for (i, (usi, at)) in moves.iter().enumerate() {
            let sequence = i as u64 + 2;
            let pending = writer.play(Move::from_usi(usi).unwrap(), *at).unwrap();
            let comment = comments.get(i).copied().unwrap_or_default();
            let envelope = writer.entry(&pending, comment).envelope(writer.last_seq());
            writer.stored(sequence, pending);
            let applied = logged.replay.apply(Entry {
                sequence,
                message_type: Some(envelope.message_type),
                payload: &envelope.payload,
            });
            assert!(
                matches!(applied, Applied::Played { .. } | Applied::Ended(_)),
                "{usi}: {applied:?}"
            );
            logged.note(&applied);
        }
        logged
    }

    /// Each move's time (ms) and total, and the ending's, as a record read back says them.
    fn times(r: &Record) -> Vec<Option<(u64, Option<u64>)>> {
        let each = |t: &Option<MoveTime>| t.map(|t| (t.spent_ms, t.total_ms));
        let mut out: Vec<_> = r.moves.iter().map(|m| each(&m.time)).collect();
        out.push(r.ending.as_ref().and_then(|e| each(&e.time)));
        out
    }

    /// A clocked game with byoyomi periods, charged to the millisecond, that ends on a move
    /// 50 ms after White's deadline: the record of every format holds each move's charge (not
    /// the wall time between receipts), the time-up's charge on the ending, `%TIME_UP` (切れ負け)
    /// and the time control; every reader reads them back, to the precision its format has.
    #[test]
    fn a_clocked_game_ends_on_time_in_every_format_and_reads_back() {
        let overrides = pb::RulesetOverrides {
            clock_rounding: pb::ClockRounding::Milliseconds as i32,
            time_main: ms(10_000),
            time_byoyomi: ms(5_000),
            time_periods: Some(2),
            ..Default::default()
        };
        // Black 1.5 s, White 2.25 s, Black 12 s (its main time gone, 3.5 s into its first
        // period, which it keeps), then White's move 50 ms after its 7.75 s + 2 x 5 s.
        let logged = logged(
            Some(overrides),
            &[
                ("7g7f", T0 + 1_500),
                ("3c3d", T0 + 3_750),
                ("2g2f", T0 + 15_750),
                ("8c8d", T0 + 15_750 + 17_750 + 50),
            ],
        );
        let game = logged.replay.game();
        assert_eq!(game.plies(), 3);
        assert_eq!(game.verdict().map(|v| v.code), Some(ResultCode::Timeout));

        let exported = to_record(&logged, Format::Csa);
        let headers: Vec<_> = exported
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(headers, [("TIME", "10+5+0"), ("byoyomi_periods", "2")]);
        assert_eq!(
            times(&exported),
            [
                Some((1_500, None)),
                Some((2_250, None)),
                Some((12_000, None)),
                Some((17_800, None)),
            ]
        );

        let csa = write_with(
            &exported,
            Format::Csa,
            Encoding::Utf8,
            WriteOptions::default(),
        );
        let csa = String::from_utf8(csa.unwrap()).unwrap();
        // The text tests/records_cli.rs reads back with `convert` and `judge`.
        assert_eq!(
            csa,
            "V3.0\n$TIME:10+5+0\n'byoyomi_periods:2\nPI\n+\n\
             '*shogi-arbiter game clocked: timeout at ply 3\n\
             +7776FU\nT1.500\n-3334FU\nT2.250\n+2726FU\nT12\n%TIME_UP\nT17.800\n"
        );
        let kif = write_with(
            &exported,
            Format::Kif,
            Encoding::Utf8,
            WriteOptions::default(),
        );
        let kif = String::from_utf8(kif.unwrap()).unwrap();
        for line in [
            "持ち時間：10+5+0",
            "   1 ７六歩(77)     ( 0:01/00:00:01)",
            "   3 ２六歩(27)     ( 0:12/00:00:13)",
            "   4 切れ負け        ( 0:17/00:00:20)",
            "まで3手で時間切れにより先手の勝ち",
        ] {
            assert!(kif.lines().any(|l| l == line), "{line} in\n{kif}");
        }

        // KIF and JKF say whole seconds (truncated, the totals summed from the charges).
        let whole = [
            Some((1_000, Some(1_000))),
            Some((2_000, Some(2_000))),
            Some((12_000, Some(13_000))),
            Some((17_000, Some(20_000))),
        ];
        for format in Format::ALL {
            let bytes = write_with(&exported, format, Encoding::Utf8, WriteOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", format.name()));
            let back = read_as(format, &bytes).unwrap_or_else(|e| panic!("{}: {e}", format.name()));
            let name = format.name();
            let moves: Vec<_> = back.moves.iter().map(|m| m.mv.to_string()).collect();
            assert_eq!(moves, ["7g7f", "3c3d", "2g2f"], "{name}");
            let ending = back.ending.as_ref().map(|e| e.kind.clone());
            let want_time = match format {
                Format::Csa => times(&exported),
                Format::Kif | Format::Jkf => whole.to_vec(),
                // KI2 and USI have no times; a USI line has no ending.
                Format::Ki2 | Format::Usi => vec![None; 4],
            };
            assert_eq!(times(&back), want_time, "{name}");
            let want_ending = (format != Format::Usi).then_some(EndingKind::TimeUp);
            assert_eq!(ending, want_ending, "{name}");
            let control = match format {
                Format::Csa => back.header("TIME"),
                Format::Kif | Format::Jkf => back.header("持ち時間"),
                _ => Some("10+5+0"),
            };
            assert_eq!(control, Some("10+5+0"), "{name}");
        }
    }

    /// A control CSA V2.2 can say (the same for both sides, whole minutes, one byoyomi period,
    /// no increment), charged in whole seconds, is written as V2.2's `$TIME_LIMIT` with `T`
    /// in whole seconds; a game without a time control is written as before, without times.
    #[test]
    fn whole_seconds_are_csa_v2_2_and_a_game_without_a_clock_has_no_times() {
        let overrides = pb::RulesetOverrides {
            clock_rounding: pb::ClockRounding::Seconds as i32,
            time_main: ms(600_000),
            time_byoyomi: ms(10_000),
            ..Default::default()
        };
        let moves = [("7g7f", T0 + 1_999), ("3c3d", T0 + 1_999 + 30_500)];
        let exported = to_record(&logged(Some(overrides), &moves), Format::Csa);
        let csa = write_with(
            &exported,
            Format::Csa,
            Encoding::Utf8,
            WriteOptions::default(),
        );
        let csa = String::from_utf8(csa.unwrap()).unwrap();
        assert!(csa.starts_with("V2.2\n$TIME_LIMIT:00:10+10\n"), "{csa}");
        assert!(csa.ends_with("+7776FU\nT1\n-3334FU\nT30\n"), "{csa}");

        let untimed = to_record(&logged(None, &moves), Format::Csa);
        assert!(untimed.headers.is_empty());
        assert_eq!(times(&untimed), [None, None, None]);
    }

    /// The comment a move was submitted with (a CSA engine's evaluation) is exported with the
    /// move, in every format, and read back; a move without one has none.
    #[test]
    fn a_moves_comment_is_exported_with_it_in_every_format() {
        let moves = [
            ("7g7f", T0 + 1_000),
            ("3c3d", T0 + 2_000),
            ("2g2f", T0 + 3_000),
        ];
        let logged = logged_with_comments(None, &moves, &["* 30 -3334FU", "", "読み筋\n2行目"]);
        for format in [Format::Csa, Format::Kif, Format::Ki2, Format::Jkf] {
            let exported = to_record(&logged, format);
            let bytes = write_with(&exported, format, Encoding::Utf8, WriteOptions::default());
            let back = read_as(format, &bytes.unwrap()).unwrap();
            let comments: Vec<_> = back.moves.iter().map(|m| m.comment.as_deref()).collect();
            assert_eq!(
                comments,
                [Some("* 30 -3334FU"), None, Some("読み筋\n2行目")],
                "{format:?}"
            );
        }
    }
}
