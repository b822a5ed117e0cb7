//! Every record of the shared corpus, written in every format and read back, then written in
//! every format again and read back (every ordered pair of formats): the same start, moves,
//! times, comments, ending and variations, as far as both formats can say them. What a format
//! cannot say is spelled out here, in `Caps`, once.

use shogi_records::{Encoding, EndingKind, Format, Record, WriteError, read_any, read_as, write};
use shogi_rules::{Color, Move};

mod common;

/// Every corpus record that reads, by path.
fn corpus() -> Vec<(String, Record)> {
    // The one record that cannot be read is tested in corpus.rs.
    let out: Vec<(String, Record)> = common::corpus_files()
        .into_iter()
        .filter_map(|(path, bytes)| {
            let name = path.display().to_string();
            read_any(&name, &bytes).ok().map(|rec| (name, rec))
        })
        .collect();
    assert!(out.len() >= 140, "only {} corpus records read", out.len());
    out
}

/// What a format keeps.
#[derive(Clone, Copy)]
struct Caps {
    spent: bool,
    total: bool,
    comments: bool,
    ending_comments: bool,
    variations: bool,
}

fn caps(f: Format) -> Caps {
    let all = Caps {
        spent: true,
        total: true,
        comments: true,
        ending_comments: true,
        variations: true,
    };
    match f {
        Format::Csa => Caps {
            total: false,
            variations: false,
            ..all
        },
        Format::Kif | Format::Jkf => all,
        Format::Ki2 => Caps {
            spent: false,
            total: false,
            ending_comments: false,
            variations: false,
            ..all
        },
        Format::Usi => Caps {
            spent: false,
            total: false,
            comments: false,
            ending_comments: false,
            variations: false,
        },
    }
}

fn both(a: Caps, b: Caps) -> Caps {
    Caps {
        spent: a.spent && b.spent,
        total: a.total && b.total,
        comments: a.comments && b.comments,
        ending_comments: a.ending_comments && b.ending_comments,
        variations: a.variations && b.variations,
    }
}

/// The ending a record of `kind` has after being written in `f` and read back; `side` is the
/// side to move after the last move, `plies` the number of moves.
fn ending_in(f: Format, kind: Option<EndingKind>, side: Color, plies: usize) -> Option<EndingKind> {
    use EndingKind as K;
    let kind = kind?;
    let kif_other = ["封じ手", "不戦勝", "不戦敗"];
    match f {
        Format::Csa => match kind {
            K::Other(n) if K::Other(n.clone()).csa_special().is_none() => None,
            k => Some(k),
        },
        // json-kifu-format's schema names only (issue #22, class 8).
        Format::Jkf => Some(match kind {
            K::MaxMoves => K::Jishogi,
            K::OuteSennichite => K::Sennichite,
            K::Other(n) if K::Other(n.clone()).csa_special().is_none() => K::Chudan,
            k => k,
        }),
        Format::Kif | Format::Ki2 => Some(match kind {
            K::OuteSennichite => K::Sennichite,
            K::MaxMoves | K::Hikiwake => K::Jishogi,
            K::IllegalAction(c) if c == side => K::IllegalMove,
            K::Error => K::Chudan,
            K::Other(w) if f == Format::Ki2 && kif_other.contains(&w.as_str()) => K::Other(w),
            K::Other(w) if f == Format::Ki2 && w.starts_with("まで") => K::Other(w),
            K::Other(w) if f == Format::Ki2 => K::Other(format!("まで{plies}手で{w}")),
            K::Other(w) if kif_other.contains(&w.as_str()) => K::Other(w),
            K::Other(_) => K::Chudan,
            k => k,
        }),
        // A `position` command has no ending (class 1 of issue #22).
        Format::Usi => None,
    }
}

fn side_after(rec: &Record) -> Color {
    rec.moves
        .last()
        .map_or(rec.start.side_to_move(), |m| !m.color)
}

/// A move CSA cannot write (an illegal move from an empty square: no piece to name).
fn csa_cannot_write(rec: &Record) -> bool {
    let Some(last) = rec.moves.last() else {
        return false;
    };
    let Move::Normal { from, .. } = last.mv else {
        return false;
    };
    if last.legal.is_ok() {
        return false;
    }
    let mut pos = rec.start.clone();
    for m in &rec.moves[..rec.moves.len() - 1] {
        pos.play_unchecked(m.mv);
    }
    pos.piece_at(from).is_none()
}

/// Comments CSA writes for an ending it cannot name (`'ending: 封じ手`).
fn own_comments(c: &Option<String>) -> Vec<&str> {
    c.iter()
        .flat_map(|c| c.split('\n'))
        .filter(|c| !c.starts_with("ending: "))
        .collect()
}

/// Compares `back` (after the chain `path`) with `orig`, as far as `caps` says; returns what
/// differs.
fn compare(orig: &Record, back: &Record, path: &[Format], caps: Caps) -> Result<(), String> {
    if !back.start.same_position(&orig.start) {
        return Err("start position differs".into());
    }
    if back.moves.len() != orig.moves.len() {
        return Err(format!(
            "{} moves read back, {} written",
            back.moves.len(),
            orig.moves.len()
        ));
    }
    for (i, (a, b)) in orig.moves.iter().zip(&back.moves).enumerate() {
        let ply = i + 1;
        if (a.mv, a.color, a.legal.is_ok()) != (b.mv, b.color, b.legal.is_ok()) {
            return Err(format!("ply {ply}: {:?} became {:?}", a.mv, b.mv));
        }
        if caps.spent {
            let s = |m: &shogi_records::RecordMove| m.time.map(|t| t.spent_ms / 1000);
            if s(a) != s(b) {
                return Err(format!("ply {ply}: time {:?} became {:?}", a.time, b.time));
            }
        }
        if caps.total && a.time.is_some_and(|t| t.total_ms.is_some()) {
            let t = |m: &shogi_records::RecordMove| m.time.and_then(|t| t.total_ms);
            if t(a).map(|x| x / 1000) != t(b).map(|x| x / 1000) {
                return Err(format!("ply {ply}: total {:?} became {:?}", a.time, b.time));
            }
        }
        if caps.comments && own_comments(&a.comment) != own_comments(&b.comment) {
            return Err(format!(
                "ply {ply}: comment {:?} became {:?}",
                a.comment, b.comment
            ));
        }
    }
    if caps.comments && orig.comment != back.comment {
        return Err(format!(
            "record comment {:?} became {:?}",
            orig.comment, back.comment
        ));
    }
    let mut expected = orig.ending.as_ref().map(|e| e.kind.clone());
    for &f in path {
        expected = ending_in(f, expected, side_after(orig), orig.moves.len());
    }
    let got = back.ending.as_ref().map(|e| e.kind.clone());
    if got != expected {
        return Err(format!("ending {expected:?} expected, {got:?} read back"));
    }
    if let (Some(a), Some(b), true) = (&orig.ending, &back.ending, caps.ending_comments) {
        if caps.spent && a.time.map(|t| t.spent_ms / 1000) != b.time.map(|t| t.spent_ms / 1000) {
            return Err(format!("ending time {:?} became {:?}", a.time, b.time));
        }
        if a.comment != b.comment {
            return Err(format!(
                "ending comment {:?} became {:?}",
                a.comment, b.comment
            ));
        }
    }
    if caps.variations {
        // Written depth first, latest ply first: compare as sets of (ply, moves).
        let v = |r: &Record| -> Vec<(u32, Vec<String>)> {
            r.variations
                .iter()
                .map(|v| (v.ply, v.moves.iter().map(|m| m.mv.to_string()).collect()))
                .collect()
        };
        let mut a = v(orig);
        let mut b = v(back);
        a.sort();
        b.sort();
        if a != b {
            return Err(format!(
                "{} variations written, {} read back",
                a.len(),
                b.len()
            ));
        }
    }
    Ok(())
}

/// Writes `rec` in `f` and reads it back; `None` when `f` cannot say the record at all (an
/// illegal move in KI2, or a move CSA cannot name).
fn hop(rec: &Record, f: Format, enc: Encoding) -> Result<Option<Record>, String> {
    if f == Format::Csa && csa_cannot_write(rec) {
        return Ok(None);
    }
    let bytes = match write(rec, f, enc) {
        Ok(b) => b,
        Err(WriteError::Unwritable { .. }) if f == Format::Ki2 => {
            if rec.moves.iter().all(|m| m.legal.is_ok()) {
                return Err("ki2 refused a record of legal moves".into());
            }
            return Ok(None);
        }
        Err(e) => return Err(format!("{} cannot be written: {e}", f.name())),
    };
    read_as(f, &bytes).map(Some).map_err(|e| {
        format!(
            "written {} does not read back: {e}\n{}",
            f.name(),
            String::from_utf8_lossy(&bytes)
        )
    })
}

#[test]
fn every_corpus_record_round_trips_through_every_pair_of_formats() {
    let records = corpus();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut with_times = 0;
    let mut with_comments = 0;
    let mut with_variations = 0;
    for (name, rec) in &records {
        with_times += usize::from(rec.moves.iter().any(|m| m.time.is_some()));
        with_comments += usize::from(rec.moves.iter().any(|m| m.comment.is_some()));
        with_variations += usize::from(!rec.variations.is_empty());
        for f1 in Format::ALL {
            let one = match hop(rec, f1, Encoding::Utf8) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    failures.push(format!("{name} -> {}: {e}", f1.name()));
                    continue;
                }
            };
            if let Err(e) = compare(rec, &one, &[f1], caps(f1)) {
                failures.push(format!("{name} -> {}: {e}", f1.name()));
                continue;
            }
            for f2 in Format::ALL {
                match hop(&one, f2, Encoding::Utf8) {
                    Ok(Some(two)) => {
                        if let Err(e) = compare(rec, &two, &[f1, f2], both(caps(f1), caps(f2))) {
                            failures.push(format!("{name} -> {} -> {}: {e}", f1.name(), f2.name()));
                        }
                        checked += 1;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        failures.push(format!("{name} -> {} -> {}: {e}", f1.name(), f2.name()))
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the round trips fail:\n{}",
        failures.len(),
        failures[..failures.len().min(15)].join("\n")
    );
    // The corpus has what the test is about: the counts keep it from passing vacuously.
    assert!(checked >= 140 * 20, "only {checked} pairs checked");
    assert!(with_times >= 20, "only {with_times} records with times");
    assert!(
        with_comments >= 5,
        "only {with_comments} records with comments"
    );
    assert!(
        with_variations >= 2,
        "only {with_variations} records with variations"
    );
}

#[test]
fn kif_and_ki2_in_shift_jis_read_back() {
    for (name, rec) in corpus() {
        for f in [Format::Kif, Format::Ki2] {
            let bytes = match write(&rec, f, Encoding::ShiftJis) {
                Ok(b) => b,
                Err(WriteError::Unwritable { .. }) if f == Format::Ki2 => continue,
                // Comments in the corpus are Japanese; a character outside JIS X 0208 would be
                // reported, not written as something else.
                Err(WriteError::Unencodable { token, .. }) => {
                    assert!(
                        encoding_rs::SHIFT_JIS.encode(&token).2,
                        "{name}: {token:?} reported unencodable"
                    );
                    continue;
                }
                Err(e) => panic!("{name}: {e}"),
            };
            assert!(std::str::from_utf8(&bytes).is_err() || bytes.is_ascii());
            let back = read_as(f, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(back.moves.len(), rec.moves.len(), "{name}");
        }
    }
}
