//! `shogi-arbiter judge`: re-judges game records and whole archives.

use crate::report;
use serde_json::{Map, Value, json};
use shogi_adjudication::Verdict;
use shogi_adjudication::{Judgement, Ruleset, judge};
use shogi_records::{EndingKind, Record, read_any, read_usi, write_csa};
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

/// How verdicts are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON object a game.
    Json,
    /// One sentence a game.
    Text,
}

/// What `judge` was asked.
#[derive(Debug)]
pub struct Options {
    pub rules: Ruleset,
    /// `Some(cap)` from `--max-moves` (None inside = off); otherwise the record's own cap, if it
    /// states one, replaces the preset's.
    pub max_moves: Option<Option<u32>>,
    pub format: Format,
    /// Where to write each judged record as CSA V3.0 with its verdict, if anywhere.
    pub csa_out: Option<PathBuf>,
}

/// Every record file below `paths`, in a stable order: files as given, directories walked and
/// sorted.
pub fn collect(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out)?;
            } else if is_record_name(&p) {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn is_record_name(p: &Path) -> bool {
    matches!(
        p.extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref(),
        Some("csa" | "kif" | "kifu" | "ki2" | "ki2u" | "usi" | "sfen")
    )
}

/// Judges one record under `opts`.
pub fn judge_record(record: &Record, opts: &Options) -> Judgement {
    let mut rules = opts.rules;
    match opts.max_moves {
        Some(cap) => rules.move_cap = cap,
        None => {
            if let Some(cap) = record.max_moves {
                rules.move_cap = Some(cap);
            }
        }
    }
    // The record stops being replayable at its first illegal move, which is still judged.
    let mut moves = Vec::with_capacity(record.moves.len());
    for m in &record.moves {
        moves.push(m.mv);
        if m.legal.is_err() {
            break;
        }
    }
    let declares = matches!(
        record.ending.as_ref().map(|e| &e.kind),
        Some(EndingKind::Kachi)
    );
    judge(record.start.clone(), moves, declares, &rules)
}

/// The JSON line of one judged record.
pub fn judgement_json(source: &str, record: &Record, j: &Judgement) -> Value {
    let mut out = Map::new();
    out.insert("source".into(), source.into());
    out.insert(
        "format".into(),
        format!("{:?}", record.format).to_lowercase().into(),
    );
    match &j.verdict {
        Some(v) => report::verdict_fields(v, &mut out),
        None => {
            out.insert("result".into(), "none".into());
            out.insert("winner".into(), Value::Null);
            out.insert("ply".into(), j.plies.into());
        }
    }
    out.insert("plies".into(), j.plies.into());
    if let Some(r) = &j.rejected {
        out.insert(
            "rejected".into(),
            json!({"ply": j.plies + 1, "kind": r.kind.as_str(), "move": r.mv.to_string()}),
        );
        out.entry("kind").or_insert_with(|| r.kind.as_str().into());
    }
    if let (Some(d), true) = (&j.declaration, j.verdict.is_none()) {
        // A declaration refused under `failed_declaration = refuse` leaves no verdict.
        out.insert("outcome".into(), d.outcome.as_str().into());
        out.insert("points".into(), d.points.into());
        out.insert("declaration".into(), report::declaration_json(d));
    }
    if j.moves_after_end > 0 {
        out.insert("moves_after_end".into(), j.moves_after_end.into());
    }
    if !j.warnings.is_empty() {
        let warnings: Vec<Value> = j.warnings.iter().map(report::warning_json).collect();
        out.insert("warnings".into(), warnings.into());
    }
    if let Some(e) = &record.ending {
        out.insert("recorded".into(), e.raw.clone().into());
    }
    Value::Object(out)
}

fn text_line(source: &str, j: &Judgement) -> String {
    match (&j.verdict, &j.rejected) {
        (Some(v), _) => format!("{source}: {}", report::verdict_sentence(v)),
        (None, Some(r)) => format!(
            "{source}: ply {} ({}) is illegal ({}) and was refused; the record cannot be followed past it.",
            j.plies + 1,
            r.mv,
            r.kind.as_str().replace('_', " ")
        ),
        (None, None) => format!("{source}: no rule ended the game in its {} plies.", j.plies),
    }
}

/// The CSA V3.0 special move (or server result) that states a verdict in a record.
fn csa_special(v: &Verdict) -> String {
    use shogi_adjudication::{DeclarationOutcome, Evidence, ResultCode as C};
    match (&v.code, &v.evidence) {
        (C::Checkmate | C::NoLegalMoves, _) => "%TSUMI".into(),
        (C::Repetition, _) => "%SENNICHITE".into(),
        // CSA has no special move for a perpetual check: the server writes an illegal action by
        // the checker (`#OUTE_SENNICHITE` in its result line).
        (C::PerpetualCheck, Evidence::PerpetualCheck { checker, .. }) => {
            format!(
                "%{}ILLEGAL_ACTION",
                if *checker == shogi_rules::Color::Black {
                    '+'
                } else {
                    '-'
                }
            )
        }
        (C::Declaration, Evidence::Declaration(r)) => match r.outcome {
            DeclarationOutcome::Jishogi => "%JISHOGI".into(),
            _ => "%KACHI".into(),
        },
        (C::MaxMoves, _) => "%MAX_MOVES".into(),
        (C::IllegalMove, _) => "%ILLEGAL_MOVE".into(),
        (C::Resignation, _) => "%TORYO".into(),
        (C::Timeout, _) => "%TIME_UP".into(),
        (C::Abort, _) => "%CHUDAN".into(),
        _ => format!("'verdict: {v}"),
    }
}

/// Writes `record` as CSA V3.0 under `dir`, with the verdict as its special move.
fn write_record(dir: &Path, source: &str, record: &Record, j: &Judgement) -> io::Result<()> {
    let stem = Path::new(source)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("stdin");
    let special = j.verdict.as_ref().map(csa_special);
    std::fs::write(
        dir.join(format!("{stem}.csa")),
        write_csa(record, special.as_deref()),
    )
}

fn emit(
    out: &mut dyn Write,
    opts: &Options,
    source: &str,
    result: Result<Record, String>,
) -> io::Result<bool> {
    match result {
        Ok(record) => {
            let j = judge_record(&record, opts);
            if let Some(dir) = &opts.csa_out {
                write_record(dir, source, &record, &j)?;
            }
            match opts.format {
                Format::Json => writeln!(out, "{}", judgement_json(source, &record, &j))?,
                Format::Text => writeln!(out, "{}", text_line(source, &j))?,
            }
            Ok(true)
        }
        Err(e) => {
            match opts.format {
                Format::Json => writeln!(out, "{}", json!({"source": source, "error": e}))?,
                Format::Text => writeln!(out, "{source}: cannot be read: {e}")?,
            }
            Ok(false)
        }
    }
}

/// Judges files and directories; returns whether every record could be read.
pub fn run_paths(paths: &[PathBuf], opts: &Options) -> anyhow::Result<bool> {
    let files = collect(paths)?;
    let bar = if io::stderr().is_terminal() && files.len() > 50 {
        let b = indicatif::ProgressBar::new(files.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} records, {per_sec}, eta {eta}",
            )
            .expect("a valid template"),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut all_ok = true;
    for path in &files {
        let source = path.display().to_string();
        let result = std::fs::read(path)
            .map_err(|e| format!("cannot read file: {e}"))
            .and_then(|bytes| read_any(&source, &bytes).map_err(|e| e.to_string()));
        all_ok &= emit(&mut out, opts, &source, result)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    out.flush()?;
    Ok(all_ok)
}

/// Judges standard input: USI position lines (one game a line), or else one record of any
/// format.
pub fn run_stdin(opts: &Options) -> anyhow::Result<bool> {
    let mut bytes = Vec::new();
    io::stdin().lock().read_to_end(&mut bytes)?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut all_ok = true;
    let text = String::from_utf8_lossy(&bytes);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first.starts_with("position ") {
        for (i, line) in bytes.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let source = format!("stdin:{}", i + 1);
            all_ok &= emit(
                &mut out,
                opts,
                &source,
                read_usi(&line).map_err(|e| e.to_string()),
            )?;
        }
    } else {
        all_ok &= emit(
            &mut out,
            opts,
            "stdin",
            read_any("stdin", &bytes).map_err(|e| e.to_string()),
        )?;
    }
    out.flush()?;
    Ok(all_ok)
}
