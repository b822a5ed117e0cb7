//! USI `position` command lines as records.

use crate::error::column_of;
use crate::replay::Replay;
use crate::{EndingKind, Format, Record, RecordError};
use shogi_rules::{Move, Position};

/// Reads a USI position line: `position startpos moves 7g7f 3c3d` or
/// `position sfen <board> <side> <hand> <move number> moves ...`. The word `position` may be
/// left out. A final `win` is the side to move declaring impasse (入玉宣言, USI `bestmove win`)
/// and becomes the ending [`EndingKind::Kachi`]; a final `resign` becomes
/// [`EndingKind::Resign`].
///
/// The SFEN may be a problem position (詰将棋: a side without a king, see
/// `Position::from_sfen_problem`), as USI mate solvers are given.
///
/// The text must be one line (blank lines around it are allowed); the record's moves all get
/// that line's number.
pub fn read_usi(text: &str) -> Result<Record, RecordError> {
    crate::decode::check_text(text)?;
    let mut found: Option<(u32, &str)> = None;
    let columns: Vec<u32>;
    for (no, line) in crate::decode::lines(text) {
        if line.trim().is_empty() {
            continue;
        }
        if let Some((first, _)) = found {
            return Err(RecordError::new(
                no,
                1,
                line,
                format!("a usi position is one line; line {first} already holds it"),
            ));
        }
        found = Some((no, line));
    }
    let Some((line_no, line)) = found else {
        return Err(RecordError::new(1, 1, "", "empty usi position line"));
    };

    // Words with their byte offsets and 1-based character columns, counted as they are
    // split, so that a line of a million moves is read in linear time.
    let mut words = Vec::new();
    let mut start = None;
    for (col, (i, c)) in line.char_indices().enumerate() {
        if c.is_whitespace() {
            if let Some((s, sc)) = start.take() {
                words.push((s, sc, &line[s..i]));
            }
        } else if start.is_none() {
            start = Some((i, col as u32 + 1));
        }
    }
    if let Some((s, sc)) = start {
        words.push((s, sc, &line[s..]));
    }
    let err = |at: usize, token: &str, reason: &str| {
        RecordError::new(line_no, column_of(line, at), token, reason)
    };
    let words: Vec<(usize, &str)> = {
        columns = words.iter().map(|w| w.1).collect();
        words.iter().map(|w| (w.0, w.2)).collect()
    };

    let mut i = 0;
    if words.first().is_some_and(|w| w.1 == "position") {
        i += 1;
    }
    let start_pos = match words.get(i) {
        Some((_, "startpos")) => {
            i += 1;
            Position::startpos()
        }
        Some((at, "sfen")) => {
            let fields: Vec<_> = words[i + 1..].iter().take(4).collect();
            if fields.len() < 4 || fields.iter().any(|w| w.1 == "moves") {
                return Err(err(
                    *at,
                    "sfen",
                    "sfen needs four fields: board, side, hand, move number",
                ));
            }
            let begin = fields[0].0;
            let end = fields[3].0 + fields[3].1.len();
            let sfen = &line[begin..end];
            // Normalise runs of blanks so that the core's strict parser sees single spaces.
            let sfen_text = fields.iter().map(|w| w.1).collect::<Vec<_>>().join(" ");
            let pos = Position::from_sfen_problem(&sfen_text)
                .map_err(|e| err(begin, sfen, &format!("invalid sfen: {}", e.reason)))?;
            i += 5;
            pos
        }
        Some((at, w)) => return Err(err(*at, w, "expected startpos or sfen")),
        None => return Err(err(line.len(), "", "expected startpos or sfen")),
    };

    let mut replay = Replay::new(start_pos);
    if let Some((at, w)) = words.get(i) {
        if *w != "moves" {
            return Err(err(*at, w, "expected moves"));
        }
        i += 1;
    }
    while let Some(&(_, w)) = words.get(i) {
        let col = columns[i];
        let last = i + 1 == words.len();
        match w {
            "win" | "resign" if last => {
                let kind = if w == "win" {
                    EndingKind::Kachi
                } else {
                    EndingKind::Resign
                };
                replay.end(kind, line_no, w);
            }
            _ => {
                let mv = Move::from_usi(w).map_err(|e| {
                    RecordError::new(
                        line_no,
                        col + e.column as u32,
                        w,
                        format!("invalid usi move: {}", e.reason),
                    )
                })?;
                replay.position_for_move(line_no, col, w)?;
                let color = replay.side_to_move();
                replay.push(mv, color, line_no, None);
            }
        }
        i += 1;
    }
    Ok(replay.into_record(Format::Usi, Vec::new(), None, None))
}

/// Writes a record as a USI `position` line, exactly what an engine's `position` command
/// accepts: `position startpos moves ...` from the even-game position, `position sfen ...
/// moves ...` otherwise. The ending is not written: `resign` and `win` are an engine's answers
/// (`bestmove resign`), not moves, and an engine or a USI parser refuses them in a `position`
/// command (cshogi: "incorrect move string : resign"), so a record's ending, like its times,
/// comments and headers, is left out. [`read_usi`] still reads a final `resign` or `win`, as
/// older exports wrote them.
pub fn write_usi(record: &Record) -> String {
    let mut out = String::with_capacity(24 + 6 * record.moves.len());
    if record.start.same_position(&Position::startpos()) {
        out.push_str("position startpos");
    } else {
        out.push_str("position sfen ");
        out.push_str(&record.start.to_sfen());
    }
    if !record.moves.is_empty() {
        out.push_str(" moves");
    }
    for m in &record.moves {
        out.push(' ');
        out.push_str(&m.mv.to_string());
    }
    out.push('\n');
    out
}
