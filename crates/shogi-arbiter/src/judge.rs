//! `shogi-arbiter judge`: re-judges game records and whole archives.

use crate::ending::{self, Foul};
use crate::{proto_json, report, stdin};
use serde_json::{Map, Value, json};
use shogi_adjudication::{Judgement, Ruleset, judge_prechecked, judge_replayed};
use shogi_records::{EndingKind, Record, read_all, read_usi, write_csa};
use std::collections::HashSet;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

/// The `schema` field of every line `judge` prints (docs/cli-json.md); its version changes
/// only when a field changes meaning or goes away.
pub const SCHEMA: &str = "shogi-arbiter.judge.v2";

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
    /// Threads judging files at once.
    pub jobs: usize,
}

/// The largest record file `judge` and `convert` read, as the readers accept
/// ([`shogi_records::MAX_RECORD_BYTES`]); a larger file, or a device that never ends, is a
/// per-file error.
pub const MAX_FILE_BYTES: u64 = shogi_records::MAX_RECORD_BYTES as u64;

/// One entry found below the paths given: a record file to read, or why an entry cannot be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file with a record's extension (or named on the command line).
    File(PathBuf),
    /// An entry that is not read: a FIFO, socket or device, a symlink loop, a dangling link,
    /// an unreadable directory. Reported as that entry's error; the batch goes on.
    Bad(PathBuf, String),
}

/// What kind of special file `meta` describes, for the error.
fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a fifo";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = meta;
    "not a regular file"
}

/// A directory's identity, to walk each directory once whatever links lead to it.
fn dir_key(path: &Path, meta: &std::fs::Metadata) -> (u64, u64, PathBuf) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        (meta.dev(), meta.ino(), PathBuf::new())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (
            0,
            0,
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        )
    }
}

/// Every record file below `paths`, in a stable order: files as given, directories walked and
/// sorted. Symlinks are followed, but each directory is walked once: a link back to a
/// directory being walked (a loop) is an error entry, a second link to one already walked is
/// skipped (its records are judged once, under the first path). FIFOs, sockets and devices are
/// error entries, never opened (opening a FIFO blocks).
pub fn collect(paths: &[PathBuf]) -> Vec<Entry> {
    type Key = (u64, u64, PathBuf);
    fn walk(dir: &Path, stack: &mut Vec<Key>, seen: &mut HashSet<Key>, out: &mut Vec<Entry>) {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                out.push(Entry::Bad(
                    dir.to_path_buf(),
                    format!("cannot read directory: {e}"),
                ));
                return;
            }
        };
        let mut paths = Vec::new();
        for e in entries {
            match e {
                Ok(e) => paths.push(e.path()),
                Err(e) => out.push(Entry::Bad(
                    dir.to_path_buf(),
                    format!("cannot read directory: {e}"),
                )),
            }
        }
        paths.sort();
        for p in paths {
            visit(&p, false, stack, seen, out);
        }
    }
    fn visit(
        p: &Path,
        named: bool,
        stack: &mut Vec<Key>,
        seen: &mut HashSet<Key>,
        out: &mut Vec<Entry>,
    ) {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => {
                // A dangling symlink in a directory, or a missing path on the command line.
                if named || is_record_name(p) || std::fs::symlink_metadata(p).is_ok() {
                    out.push(Entry::Bad(p.to_path_buf(), format!("cannot read: {e}")));
                }
                return;
            }
        };
        if meta.is_dir() {
            let key = dir_key(p, &meta);
            if stack.contains(&key) {
                out.push(Entry::Bad(
                    p.to_path_buf(),
                    "symlink loop: leads back to a directory being walked".into(),
                ));
                return;
            }
            if !seen.insert(key.clone()) {
                return;
            }
            stack.push(key);
            walk(p, stack, seen, out);
            stack.pop();
        } else if meta.is_file() {
            if named || is_record_name(p) {
                out.push(Entry::File(p.to_path_buf()));
            }
        } else if named || is_record_name(p) {
            out.push(Entry::Bad(
                p.to_path_buf(),
                format!(
                    "{} is not read (only regular files are)",
                    special_kind(&meta)
                ),
            ));
        }
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for p in paths {
        visit(p, true, &mut Vec::new(), &mut seen, &mut out);
    }
    out
}

/// The bytes of a record file, at most [`MAX_FILE_BYTES`] of them.
pub fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "the file is {len} bytes, more than the {MAX_FILE_BYTES} bytes a record may have"
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // The length may be wrong (a file growing, a /proc file): never read past the limit.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read file: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "the file is more than the {MAX_FILE_BYTES} bytes a record may have"
        ));
    }
    Ok(bytes)
}

/// Whether a file name has a record's extension (`.csa`, `.kif`, `.kifu`, `.ki2`, `.ki2u`,
/// `.jkf`, `.usi`, `.sfen`; `.json` is left out, as directories hold other JSON files).
pub fn is_record_name(p: &Path) -> bool {
    matches!(
        p.extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref(),
        Some("csa" | "kif" | "kifu" | "ki2" | "ki2u" | "jkf" | "usi" | "sfen")
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
    // The reader checked every move before it as it read it: they are not checked again.
    let checked = record.moves.iter().take_while(|m| m.legal.is_ok()).count();
    let moves = record.moves[..(checked + 1).min(record.moves.len())]
        .iter()
        .map(|m| m.mv);
    let declares = matches!(
        record.ending.as_ref().map(|e| &e.kind),
        Some(EndingKind::Kachi)
    );
    let start = record.start.clone();
    // A reader also played those moves: the game takes the positions' hashes and check flags
    // it found instead of playing them again (issue #24). A record that was not read, or was
    // changed after reading, has no replay and is judged from its moves.
    match record.replayed() {
        Some(r) => judge_replayed(start, moves, r.plies(), r.end(), declares, &rules),
        None => judge_prechecked(start, moves, checked, declares, &rules),
    }
}

/// The JSON line of one judged record (docs/cli-json.md): the CLI's own fields, and the
/// verdict, warnings and declaration report as the gRPC contract's messages in the protobuf
/// JSON mapping ([`proto_json`]).
pub fn judgement_json(source: &str, record: &Record, j: &Judgement) -> Value {
    let mut out = Map::new();
    out.insert("schema".into(), SCHEMA.into());
    out.insert("source".into(), source.into());
    out.insert("format".into(), record.format.name().into());
    out.insert(
        "verdict".into(),
        j.verdict.as_ref().map_or(Value::Null, proto_json::verdict),
    );
    if let Some(v) = &j.verdict
        && let Some(s) = v
            .code
            .csa_server_result()
            .map(str::to_owned)
            .or_else(|| ending::csa_special(v, Foul::Recorded))
    {
        out.insert("csa".into(), s.into());
    }
    out.insert("plies".into(), j.plies.into());
    if let Some(r) = &j.rejected {
        out.insert("rejected".into(), proto_json::rejected(j.plies + 1, r));
    }
    if let (Some(d), true) = (&j.declaration, j.verdict.is_none()) {
        // A declaration refused under `failed_declaration = refuse` leaves no verdict.
        out.insert("declaration".into(), proto_json::declaration_report(d));
    }
    if j.moves_after_end > 0 {
        out.insert("movesAfterEnd".into(), j.moves_after_end.into());
    }
    if !j.warnings.is_empty() {
        let warnings: Vec<Value> = j.warnings.iter().map(proto_json::warning).collect();
        out.insert("warnings".into(), warnings.into());
    }
    if let Some(e) = &record.ending {
        out.insert("recorded".into(), e.raw.clone().into());
    }
    if !record.variations.is_empty() {
        // Judged is the main line; the variations are reported, not judged.
        out.insert("variations".into(), record.variations.len().into());
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

/// Writes `record` as CSA V3.0 under `dir`, with the verdict as its special move: `NAME.csa`,
/// or `NAME-K.csa` for the K-th game of a file of several.
fn write_record(
    dir: &Path,
    source: &Path,
    game: Option<usize>,
    record: &Record,
    j: &Judgement,
) -> io::Result<()> {
    let stem = source
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("stdin");
    let name = match game {
        Some(k) => format!("{stem}-{k}.csa"),
        None => format!("{stem}.csa"),
    };
    // The record written is the one read: a forfeited illegal move is in it.
    let special = j.verdict.as_ref().map(|v| {
        ending::csa_special(v, Foul::Recorded).unwrap_or_else(|| format!("'verdict: {v}"))
    });
    std::fs::write(dir.join(name), write_csa(record, special.as_deref()))
}

/// The output line of one game (without its newline) and whether it could be read.
/// `file` and `game` name where a `--csa-out` copy goes.
fn game_line(
    opts: &Options,
    source: &str,
    file: &Path,
    game: Option<usize>,
    result: Result<Record, String>,
) -> io::Result<(String, bool)> {
    match result {
        Ok(record) => {
            let j = judge_record(&record, opts);
            if let Some(dir) = &opts.csa_out {
                write_record(dir, file, game, &record, &j)?;
            }
            let line = match opts.format {
                Format::Json => judgement_json(source, &record, &j).to_string(),
                Format::Text => text_line(source, &j),
            };
            Ok((line, true))
        }
        Err(e) => Ok((error_line(opts.format, source, &e), false)),
    }
}

/// The line of a source that could not be read.
fn error_line(format: Format, source: &str, error: &str) -> String {
    match format {
        Format::Json => json!({"schema": SCHEMA, "source": source, "error": error}).to_string(),
        Format::Text => format!("{source}: cannot be read: {error}"),
    }
}

/// The lines of one entry: one a game (a CSA file may hold several, separated by `/`; they
/// are named `PATH#1`, `PATH#2` ...), or the entry's error.
fn entry_lines(entry: &Entry, opts: &Options) -> io::Result<(Vec<String>, bool)> {
    let (path, bytes) = match entry {
        Entry::Bad(path, why) => {
            let line = error_line(opts.format, &path.display().to_string(), why);
            return Ok((vec![line], false));
        }
        Entry::File(path) => (path, read_file(path)),
    };
    let source = path.display().to_string();
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => return Ok((vec![error_line(opts.format, &source, &e)], false)),
    };
    let games = read_all(&source, &bytes);
    let several = games.len() > 1;
    let mut lines = Vec::with_capacity(games.len());
    let mut ok = true;
    for (k, game) in games.into_iter().enumerate() {
        let (name, index) = if several {
            (format!("{source}#{}", k + 1), Some(k + 1))
        } else {
            (source.clone(), None)
        };
        let (line, good) = game_line(opts, &name, path, index, game.map_err(|e| e.to_string()))?;
        lines.push(line);
        ok &= good;
    }
    Ok((lines, ok))
}

/// A progress bar on standard error for batches long enough to want one, when it is a
/// terminal; hidden otherwise.
pub fn progress(len: usize) -> indicatif::ProgressBar {
    if io::stderr().is_terminal() && len > 50 {
        let b = indicatif::ProgressBar::new(len as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} records, {per_sec}, eta {eta}",
            )
            .expect("a valid template"),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// Runs `work` on every item with `jobs` threads and hands each result to `sink` in the items'
/// order, as soon as it and those before it are done: output stays in a stable order whatever
/// the number of jobs.
pub fn in_order<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(R) -> io::Result<()>,
) -> io::Result<()> {
    let jobs = jobs.clamp(1, items.len().max(1));
    if jobs == 1 {
        for item in items {
            sink(work(item))?;
        }
        return Ok(());
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, R)>(jobs * 4);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    if tx.send((i, work(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Owned here, so that a `sink` that fails (a closed standard output) drops it on the
        // way out: the threads' next send fails and they stop, instead of waiting for ever on
        // a full channel while the scope waits for them.
        let rx = rx;
        let mut pending = std::collections::BTreeMap::new();
        let mut due = 0;
        for (i, r) in rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&due) {
                sink(r)?;
                due += 1;
            }
        }
        Ok(())
    })
}

/// Judges files and directories with `opts.jobs` threads; returns whether every entry and
/// every record could be read.
pub fn run_paths(paths: &[PathBuf], opts: &Options) -> anyhow::Result<bool> {
    let entries = collect(paths);
    let bar = progress(entries.len());
    let mut out = io::BufWriter::new(crate::output::stdout());
    let mut all_ok = true;
    in_order(
        &entries,
        opts.jobs,
        |e| entry_lines(e, opts),
        |r| {
            let (lines, ok) = r?;
            for l in lines {
                writeln!(out, "{l}")?;
            }
            all_ok &= ok;
            bar.inc(1);
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    out.flush()?;
    Ok(all_ok)
}

/// Judges standard input: USI position lines (one game a line, when the first line that is not
/// blank starts with `position `), or else one record of any format (a CSA file of several
/// games, each). A line that is not UTF-8 or is longer than a record may be is that line's
/// error; the lines after it are judged.
pub fn run_stdin(opts: &Options) -> anyhow::Result<bool> {
    let mut out = io::BufWriter::new(crate::output::stdout());
    let mut all_ok = true;
    let mut lines = stdin::Lines::new(io::stdin().lock(), MAX_FILE_BYTES as usize);
    let mut head = Vec::new();
    let mut usi = false;
    // Lines up to the first that is not blank decide the mode.
    while let Some((no, line)) = lines.next_line()? {
        let blank = line
            .as_ref()
            .is_ok_and(|l| l.iter().all(u8::is_ascii_whitespace));
        let first = if blank {
            None
        } else {
            Some(
                line.as_ref()
                    .is_ok_and(|l| l.trim_ascii_start().starts_with(b"position ")),
            )
        };
        head.push((no, line));
        if let Some(is_usi) = first {
            usi = is_usi;
            break;
        }
    }
    if usi {
        let mut judge_line = |no: usize, line: Result<Vec<u8>, String>| -> io::Result<()> {
            let source = format!("stdin:{no}");
            let text = line.and_then(|l| {
                String::from_utf8(l).map_err(|e| {
                    format!(
                        "line is not utf-8 (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    )
                })
            });
            let text = match text {
                Ok(t) if t.trim().is_empty() => return Ok(()),
                Ok(t) => t,
                Err(e) => {
                    writeln!(out, "{}", error_line(opts.format, &source, &e))?;
                    all_ok = false;
                    return Ok(());
                }
            };
            let (l, ok) = game_line(
                opts,
                &source,
                Path::new(&source),
                Some(no),
                read_usi(&text).map_err(|e| e.to_string()),
            )?;
            writeln!(out, "{l}")?;
            all_ok &= ok;
            Ok(())
        };
        for (no, line) in head {
            judge_line(no, line)?;
        }
        while let Some((no, line)) = lines.next_line()? {
            judge_line(no, line)?;
        }
    } else {
        // One record: every line back together, up to the size limit.
        let mut bytes = Vec::new();
        let mut too_long = None;
        let mut push = |no: usize, line: Result<Vec<u8>, String>, bytes: &mut Vec<u8>| match line {
            Ok(l) => {
                bytes.extend_from_slice(&l);
                bytes.push(b'\n');
            }
            Err(e) => {
                too_long.get_or_insert(format!("line {no}: {e}"));
            }
        };
        for (no, line) in head {
            push(no, line, &mut bytes);
        }
        while let Some((no, line)) = lines.next_line()? {
            push(no, line, &mut bytes);
            if bytes.len() as u64 > MAX_FILE_BYTES {
                too_long.get_or_insert(format!(
                    "standard input is more than the {MAX_FILE_BYTES} bytes a record may have"
                ));
                break;
            }
        }
        let games = match too_long {
            Some(e) => vec![Err(e)],
            None => read_all("stdin", &bytes)
                .into_iter()
                .map(|g| g.map_err(|e| e.to_string()))
                .collect(),
        };
        let several = games.len() > 1;
        for (k, game) in games.into_iter().enumerate() {
            let (name, index) = if several {
                (format!("stdin#{}", k + 1), Some(k + 1))
            } else {
                ("stdin".to_string(), None)
            };
            let (l, ok) = game_line(opts, &name, Path::new("stdin"), index, game)?;
            writeln!(out, "{l}")?;
            all_ok &= ok;
        }
    }
    out.flush()?;
    Ok(all_ok)
}
