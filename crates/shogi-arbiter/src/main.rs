//! `shogi-arbiter`: one command line for the arbiter.

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use shogi_rules::{PerftMode, Position, STARTPOS};
use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(name = "shogi-arbiter", version, about = "Judges shogi games exactly as the rules say")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

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
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum Mode {
    Bulk,
    Full,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft { sfen, depth, mode, divide } => perft(&sfen, depth, mode, divide),
        Command::Moves { sfen, stdin } => moves(sfen, stdin),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("shogi-arbiter: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn perft(sfen: &str, depth: u32, mode: Mode, divide: bool) -> anyhow::Result<ExitCode> {
    let pos = Position::from_sfen(sfen).context("--sfen")?;
    let mode = match mode {
        Mode::Bulk => PerftMode::Bulk,
        Mode::Full => PerftMode::Full,
    };
    let mut out = io::stdout().lock();
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
    writeln!(out, "time {secs:.3}s, {:.1}M nodes/s", nodes as f64 / secs.max(1e-9) / 1e6)?;
    writeln!(out, "nodes {nodes}")?;
    Ok(ExitCode::SUCCESS)
}

fn moves_line(sfen: &str) -> serde_json::Value {
    match Position::from_sfen(sfen) {
        Ok(pos) => {
            let moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
            serde_json::json!({ "sfen": sfen, "in_check": pos.in_check(), "moves": moves })
        }
        Err(e) => serde_json::json!({ "sfen": sfen, "error": e.to_string() }),
    }
}

fn moves(sfen: Option<String>, stdin: bool) -> anyhow::Result<ExitCode> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut failed = false;
    let mut emit = |line: &str, out: &mut dyn Write| -> io::Result<()> {
        let v = moves_line(line);
        failed |= v.get("error").is_some();
        writeln!(out, "{v}")
    };
    if stdin {
        for line in io::stdin().lock().lines() {
            let line = line.context("reading standard input")?;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            emit(line, &mut out)?;
        }
    } else if let Some(s) = sfen {
        emit(s.trim(), &mut out)?;
    }
    out.flush()?;
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
