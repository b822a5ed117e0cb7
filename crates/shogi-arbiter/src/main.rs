//! `shogi-arbiter`: one command line for the arbiter.

mod convert;
mod ending;
mod export;
mod impasse;
mod judge;
mod output;
mod play;
mod report;
mod serve;
mod stdin;
mod streams;

use anyhow::Context;
use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand, ValueEnum};
use shogi_adjudication::DeclarationRule;
/// The contract's messages in the protobuf JSON mapping, for the JSON lines.
use shogi_proto::json as proto_json;
use shogi_rules::{PerftMode, Position, STARTPOS};
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "shogi-arbiter",
    version,
    about = "Judges shogi games exactly as the rules say",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The exit codes, as `--help` shows them and the README lists them.
const EXIT_CODES: &str = "Exit codes:
  0  success: every record, line or position was read (a verdict is not an error)
  1  some records, lines or entries could not be read or written; each is reported and the
     rest processed (judge and moves print an `error` line for it, convert writes to stderr)
  2  usage or fatal error: bad arguments, an unknown preset, an output that cannot be written,
     a NATS server that does not answer in time, a permissions violation (named)
  130, 143  `streams prune` stopped by SIGINT, SIGTERM: the game in hand was finished
A standard output closed by its reader (`| head -1`) ends any command at once, quietly, with 0.

JSON lines carry a `schema` field (shogi-arbiter.judge.v2, shogi-arbiter.moves.v2,
shogi-arbiter.impasse.v2); docs/cli-json.md describes every field.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Counts the leaves of the legal move tree (the last line printed is `nodes N`).
    Perft {
        /// The position, as SFEN (default: the start position).
        #[arg(long, default_value = STARTPOS)]
        sfen: String,
        /// Depth in plies.
        #[arg(long)]
        depth: u32,
        /// `bulk` counts the last level without playing it; `full` plays every leaf.
        #[arg(long, value_enum, default_value_t = Mode::Bulk)]
        mode: Mode,
        /// Prints the count under each legal first move.
        #[arg(long)]
        divide: bool,
    },
    /// Lists every legal move, one JSON object a position.
    Moves {
        /// The position, as SFEN.
        #[arg(long, conflicts_with = "stdin", required_unless_present = "stdin")]
        sfen: Option<String>,
        /// Reads one SFEN a line from standard input.
        #[arg(long)]
        stdin: bool,
    },
    /// Judges game records (CSA, KIF, KI2, JKF, USI position lines): one verdict a game.
    Judge {
        /// Ruleset preset: jsa, amateur, csa, online, floodgate.
        #[arg(long, default_value = shogi_adjudication::Ruleset::DEFAULT_PRESET)]
        rules: String,
        /// Overrides one ruleset option, e.g. `--set repetition=draw` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
        /// Move cap in plies; 0 turns it off. Default: the record's own cap if it states one,
        /// else the preset's.
        #[arg(long)]
        max_moves: Option<u32>,
        /// Output: one JSON object a game, or one sentence.
        #[arg(long, value_enum, default_value_t = judge::Format::Json)]
        format: judge::Format,
        /// Reads standard input: USI `position ...` lines (one game a line) or one record.
        #[arg(long, conflicts_with = "paths")]
        stdin: bool,
        /// Writes every judged record to this directory as CSA V3.0, the verdict as its
        /// special move.
        #[arg(long, value_name = "DIR")]
        csa_out: Option<PathBuf>,
        /// Files judged at once (default: one a core).
        #[arg(long, short = 'j', value_name = "N")]
        jobs: Option<usize>,
        /// Record files and directories (walked; symlinks followed, each directory once;
        /// FIFOs, sockets and devices are reported, never opened).
        #[arg(required_unless_present = "stdin")]
        paths: Vec<PathBuf>,
    },
    /// Converts records between CSA, KIF, KI2, JKF and USI, with times, comments, the ending
    /// and (KIF, JKF) variations.
    Convert(convert::ConvertArgs),
    /// Prints a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// The impasse declaration calculator for the side to move.
    Impasse {
        /// The position, as SFEN.
        #[arg(long)]
        sfen: String,
        /// The game's start position, for the handicap credit.
        #[arg(long)]
        initial_sfen: Option<String>,
        /// The declaration rule.
        #[arg(
            long,
            default_value = DeclarationRule::Points27.as_str(),
            value_parser = clap::builder::PossibleValuesParser::new(DeclarationRule::ALL.map(DeclarationRule::as_str))
                .map(|name| name.parse::<DeclarationRule>().expect("a possible value"))
        )]
        rule: DeclarationRule,
    },
    /// Runs the validator, the repetition-watcher and the impasse-judge in one process, on an
    /// embedded bus or, with `--nats-url`, on NATS. Prints the gRPC address first.
    Serve(serve::ServeArgs),
    /// Plays moves on a running arbiter over gRPC (strict mode) and prints each answer and the
    /// game's state, as JSON lines of schema shogi-arbiter.play.v2 (docs/cli-json.md).
    Play(play::PlayArgs),
    /// Writes games from the arbiter's bus (NATS) as records with their verdict's ending: by
    /// id, or every game finished in a time range (`--archive`) before retention removes it.
    Export(export::ExportArgs),
    /// The arbiter's streams and durable consumers as code (`apply`, run by a setup job as the
    /// NATS admin user), and the retention of finished games (`prune`).
    Streams(streams::StreamsArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum Mode {
    Bulk,
    Full,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft {
            sfen,
            depth,
            mode,
            divide,
        } => perft(&sfen, depth, mode, divide),
        Command::Moves { sfen, stdin } => moves(sfen, stdin),
        Command::Judge {
            rules,
            overrides,
            max_moves,
            format,
            stdin,
            csa_out,
            jobs,
            paths,
        } => run_judge(
            &rules, &overrides, max_moves, format, stdin, csa_out, jobs, &paths,
        ),
        Command::Convert(args) => convert::run(args).map(|ok| {
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            // Generated whole, then written: clap_complete panics on a failed write.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "shogi-arbiter", &mut script);
            let mut out = output::stdout();
            out.write_all(&script)
                .and_then(|()| out.flush())
                .map(|()| ExitCode::SUCCESS)
                .map_err(anyhow::Error::from)
        }
        Command::Impasse {
            sfen,
            initial_sfen,
            rule,
        } => match impasse::calculate(&sfen, initial_sfen.as_deref(), rule) {
            Ok(v) => output::line(v)
                .map(|()| ExitCode::SUCCESS)
                .map_err(anyhow::Error::from),
            Err(e) => Err(anyhow::anyhow!(e)),
        },
        Command::Serve(args) => serve::run(args),
        Command::Play(args) => play::run(args),
        Command::Streams(args) => streams::run(args).map(|ok| {
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }),
        Command::Export(args) => export::run(args).map(|ok| {
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }),
    };
    match result {
        // The reader of standard output is gone: nothing more to do, and nothing to say.
        _ if output::closed() => ExitCode::SUCCESS,
        Ok(code) => code,
        Err(e) => {
            eprintln!("shogi-arbiter: {e:#}");
            match e.downcast_ref::<streams::Interrupted>() {
                Some(stopped) => ExitCode::from(stopped.exit_code()),
                None => ExitCode::from(2),
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_judge(
    rules: &str,
    overrides: &[String],
    max_moves: Option<u32>,
    format: judge::Format,
    stdin: bool,
    csa_out: Option<PathBuf>,
    jobs: Option<usize>,
    paths: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &csa_out {
        std::fs::create_dir_all(dir).with_context(|| format!("--csa-out {}", dir.display()))?;
    }
    let mut ruleset = report::preset(rules)
        .map_err(anyhow::Error::msg)
        .context("--rules")?;
    for o in overrides {
        report::apply_override(&mut ruleset, o)
            .map_err(anyhow::Error::msg)
            .context("--set")?;
    }
    // Options that contradict each other are refused once all are set.
    ruleset.validate().context("--set")?;
    let opts = judge::Options {
        rules: ruleset,
        max_moves: max_moves.map(|n| if n == 0 { None } else { Some(n) }),
        format,
        csa_out,
        jobs: jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let ok = if stdin {
        judge::run_stdin(&opts)?
    } else {
        judge::run_paths(paths, &opts)?
    };
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn perft(sfen: &str, depth: u32, mode: Mode, divide: bool) -> anyhow::Result<ExitCode> {
    let pos = Position::from_sfen(sfen).context("--sfen")?;
    let mode = match mode {
        Mode::Bulk => PerftMode::Bulk,
        Mode::Full => PerftMode::Full,
    };
    let mut out = output::stdout();
    let start = Instant::now();
    let nodes = if divide {
        let mut total = 0;
        for (mv, n) in shogi_rules::divide(&pos, depth, mode) {
            writeln!(out, "{mv}: {n}")?;
            total += n;
        }
        total
    } else {
        shogi_rules::perft(&pos, depth, mode)
    };
    let secs = start.elapsed().as_secs_f64();
    writeln!(
        out,
        "time {secs:.3}s, {:.1}M nodes/s",
        nodes as f64 / secs.max(1e-9) / 1e6
    )?;
    writeln!(out, "nodes {nodes}")?;
    Ok(ExitCode::SUCCESS)
}

/// The `schema` field of every line `moves` prints.
const MOVES_SCHEMA: &str = "shogi-arbiter.moves.v2";

fn moves_line(sfen: &str) -> serde_json::Value {
    match Position::from_sfen(sfen) {
        Ok(pos) => {
            let moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
            serde_json::json!({ "schema": MOVES_SCHEMA, "sfen": sfen, "inCheck": pos.in_check(), "moves": moves })
        }
        Err(e) => {
            serde_json::json!({ "schema": MOVES_SCHEMA, "sfen": sfen, "error": e.to_string() })
        }
    }
}

fn moves(sfen: Option<String>, stdin: bool) -> anyhow::Result<ExitCode> {
    let mut out = io::BufWriter::new(output::stdout());
    let mut failed = false;
    let mut bad_line = false;
    let mut emit = |line: &str, out: &mut dyn Write| -> io::Result<()> {
        let v = moves_line(line);
        failed |= v.get("error").is_some();
        writeln!(out, "{v}")
    };
    if stdin {
        // A line that is not UTF-8, or absurdly long, is that line's error; the rest go on.
        let mut lines = stdin::Lines::new(io::stdin().lock(), 1 << 16);
        while let Some((no, line)) = lines.next_line().context("reading standard input")? {
            match line.and_then(|l| {
                String::from_utf8(l).map_err(|e| {
                    format!(
                        "line is not utf-8 (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    )
                })
            }) {
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) => emit(text.trim(), &mut out)?,
                Err(e) => {
                    bad_line = true;
                    let v = serde_json::json!({ "schema": MOVES_SCHEMA, "line": no, "error": e });
                    writeln!(out, "{v}")?;
                }
            }
        }
    } else if let Some(s) = sfen {
        emit(s.trim(), &mut out)?;
    }
    out.flush()?;
    Ok(if failed || bad_line {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
