//! CSA standard file format, V2.x and V3.0: reading and writing.
//!
//! Source: the CSA standard file format (V2.2 and V3.0 texts of the Computer Shogi
//! Association) and the records of the CSA shogi-server (floodgate).

use crate::decode::lines;
use crate::error::column_of;
use crate::replay::Replay;
use crate::setup::Setup;
use crate::{EndingKind, Format, Record, RecordError};
use shogi_rules::{Color, IllegalKind, Move, Piece, PieceKind, Position, Square};
use std::fmt::Write as _;

/// Comment lines of the form `'key:value` that the CSA shogi-server writes and that are kept
/// as headers (the key without its quote).
const COMMENT_HEADERS: &[&str] = &[
    "summary",
    "Max_Moves",
    "Least_Time_Per_Move",
    "Increment",
    "rating",
    "black_rate",
    "white_rate",
    "$END_TIME",
];

/// Reads a CSA record (V2, V2.1, V2.2 or V3.0).
///
/// Accepted: the version line; `N+`/`N-` names; `$KEY:value` information lines; the starting
/// position as `PI` with removals (`PI82HI22KA`), the nine `P1`..`P9` rows (fixed-width or
/// single-space cells), `P+`/`P-` piece lines with `00AL` (every remaining piece to that hand);
/// the `+`/`-` side-to-move line; moves (`+7776FU`, promotion inferred from the piece named
/// and the piece on the origin square); `T` time lines; `'` comments; every special move
/// (`%TORYO` ...); several statements on one line separated by `,`.
///
/// A record without any position lines starts from the even-game position. Moves and special
/// moves may only follow the side-to-move line.
pub fn read_csa(text: &str) -> Result<Record, RecordError> {
    crate::decode::check_text(text)?;
    let mut lines = lines(text);
    let record = read_game(&mut lines)?;
    if let Some((no, line)) = lines.next() {
        return Err(RecordError::new(
            no - 1,
            1,
            "/",
            format!(
                "a second game begins after the '/' line (the next line, {line:?}); read_csa_games reads each game"
            ),
        ));
    }
    Ok(record)
}

/// Reads every game of a CSA file whose games are separated by `/` lines (the CSA standard's
/// multi-game files). Errors are per game, with the file's line numbers; a game that cannot be
/// read does not stop the games after it. Blank text after the last `/` is not a game.
pub fn read_csa_games(text: &str) -> Vec<Result<Record, RecordError>> {
    if let Err(e) = crate::decode::check_text(text) {
        return vec![Err(e)];
    }
    let mut lines = lines(text);
    let mut games = Vec::new();
    loop {
        let game = read_game(&mut lines);
        if game.is_err() {
            // After an error the rest of that game is skipped up to its separator.
            for (_, line) in lines.by_ref() {
                if line.trim() == "/" {
                    break;
                }
            }
        }
        games.push(game);
        let mut rest = lines.clone();
        if rest.all(|(_, l)| l.trim().is_empty()) {
            return games;
        }
    }
}

/// Reads one game: lines up to a `/` line (consumed) or the end.
fn read_game<'a>(
    lines: &mut (impl Iterator<Item = (u32, &'a str)> + Clone),
) -> Result<Record, RecordError> {
    let mut headers = Vec::new();
    let mut max_moves = None;
    let mut setup: Option<Setup> = None;
    let mut setup_line = 0u32;
    let mut replay: Option<Replay> = None;
    let mut comment = None;

    for (line_no, line) in lines.by_ref() {
        // `starts_with` first: a trim a line cost as much as reading a move statement.
        if line.starts_with('/') && crate::decode::trim_end(line) == "/" {
            break;
        }
        // Statements: moves, times and special moves may share a line, separated by commas.
        // Comments, names, information and position lines run to the end of the line (a
        // player's name or an event may hold a comma). The column is kept as a running count,
        // so that a line of 80,000 moves is read in linear time.
        let mut rest = line;
        let mut col = 1u32;
        loop {
            let (stmt, next) = if rest.starts_with(['\'', 'N', '$', 'V', 'P']) {
                (rest, None)
            } else {
                match crate::decode::find_separator(rest.as_bytes(), b',') {
                    Some(i) => (&rest[..i], Some(i + 1)),
                    None => (rest, None),
                }
            };
            let stmt_trim = crate::decode::trim_end(stmt);
            if !stmt_trim.is_empty() {
                let mut state = State {
                    headers: &mut headers,
                    max_moves: &mut max_moves,
                    setup: &mut setup,
                    setup_line: &mut setup_line,
                    replay: &mut replay,
                    comment: &mut comment,
                };
                statement(stmt_trim, line_no, col, &mut state)?;
            } else if next.is_some() {
                return Err(RecordError::new(
                    line_no,
                    col,
                    line,
                    "empty statement before ','",
                ));
            }
            match next {
                Some(n) => {
                    col += rest[..n].chars().count() as u32;
                    rest = &rest[n..];
                }
                None => break,
            }
        }
    }

    let replay = match replay {
        Some(r) => r,
        None => {
            // No side-to-move line: a record of headers (and maybe a position) only.
            if setup.is_some() {
                return Err(RecordError::new(
                    setup_line,
                    1,
                    "",
                    "position lines without a side-to-move line ('+' or '-')",
                ));
            }
            Replay::new(Position::startpos())
        }
    };
    Ok(replay.into_record(Format::Csa, headers, max_moves, comment))
}

/// What the statements of a game change.
struct State<'s> {
    headers: &'s mut Vec<(String, String)>,
    max_moves: &'s mut Option<u32>,
    setup: &'s mut Option<Setup>,
    setup_line: &'s mut u32,
    replay: &'s mut Option<Replay>,
    /// Comments before the side-to-move line.
    comment: &'s mut Option<String>,
}

/// A CSA time, `T` followed by seconds with an optional fraction (`T12`, `T0.5`), in
/// milliseconds.
fn parse_seconds(t: &str) -> Option<u64> {
    // A byte search: `split_once('.')` searched by char, on every time line.
    let (whole, frac) = match t.bytes().position(|b| b == b'.') {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, ""),
    };
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    if !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut ms = 0u64;
    for (i, b) in frac.bytes().take(3).enumerate() {
        ms += u64::from(b - b'0') * [100, 10, 1][i];
    }
    secs.checked_mul(1000)?.checked_add(ms)
}

fn statement(stmt: &str, line_no: u32, col: u32, st: &mut State<'_>) -> Result<(), RecordError> {
    let State {
        headers,
        max_moves,
        setup,
        setup_line,
        replay,
        comment,
    } = st;
    let err = |c: u32, token: &str, reason: &str| RecordError::new(line_no, c, token, reason);
    let first = stmt.as_bytes()[0];
    match first {
        b'\'' => {
            let body = &stmt[1..];
            // A byte search: `split_once(':')` searched by char, twice the cost on the engine
            // comments floodgate writes after every move.
            if let Some((key, value)) =
                crate::decode::find_byte(body, b':').map(|i| (&body[..i], &body[i + 1..]))
                && (COMMENT_HEADERS.contains(&key) || (replay.is_none() && is_header_key(key)))
            {
                let key = key.trim_start_matches('$');
                if key == "Max_Moves" {
                    **max_moves = Some(parse_cap(value, line_no, col, stmt)?);
                }
                headers.push((key.to_string(), value.to_string()));
                return Ok(());
            }
            // `'*` is the CSA V3.0 move comment; other `'` lines are comments too.
            let text = body.strip_prefix('*').unwrap_or(body);
            match replay.as_mut() {
                Some(r) => r.comment(text),
                None => crate::add_comment(comment, text),
            }
            Ok(())
        }
        b'V' => {
            if replay.is_some() {
                return Err(err(col, stmt, "version line after the moves began"));
            }
            let v = &stmt[1..];
            if !matches!(v, "2" | "2.1" | "2.2" | "3.0") {
                return Err(err(
                    col,
                    stmt,
                    "unknown csa version (expected V2, V2.1, V2.2 or V3.0)",
                ));
            }
            headers.push(("V".to_string(), v.to_string()));
            Ok(())
        }
        b'N' => {
            match stmt.as_bytes().get(1) {
                Some(b'+') | Some(b'-') => {}
                _ => return Err(err(col, stmt, "player name line must start with N+ or N-")),
            }
            headers.push((stmt[..2].to_string(), stmt[2..].to_string()));
            Ok(())
        }
        b'$' => {
            let Some((key, value)) = stmt[1..].split_once(':') else {
                return Err(err(col, stmt, "information line must be $KEY:value"));
            };
            if key == "MAX_MOVES" {
                **max_moves = Some(parse_cap(value, line_no, col, stmt)?);
            }
            headers.push((key.to_string(), value.to_string()));
            Ok(())
        }
        b'P' => {
            if replay.is_some() {
                return Err(err(col, stmt, "position line after the side-to-move line"));
            }
            let s = setup.get_or_insert_with(Setup::empty);
            **setup_line = line_no;
            position_line(stmt, line_no, col, s)
        }
        b'T' => {
            let ms = parse_seconds(&stmt[1..])
                .ok_or_else(|| err(col, stmt, "time must be T followed by seconds"))?;
            let time = crate::MoveTime {
                spent_ms: ms,
                total_ms: None,
            };
            if !replay.as_mut().is_some_and(|r| r.set_time(time)) {
                return Err(err(col, stmt, "time line before any move"));
            }
            Ok(())
        }
        b'+' | b'-' if stmt.len() == 1 => {
            if replay.is_some() {
                return Err(err(col, stmt, "second side-to-move line"));
            }
            let side = if first == b'+' {
                Color::Black
            } else {
                Color::White
            };
            let s = setup.get_or_insert_with(Setup::startpos);
            s.side = side;
            // Rows not given are not assumed empty: a row left out is more likely lost.
            if s.rows_given != 0 && s.rows_given != crate::setup::ALL_ROWS {
                let missing: Vec<String> = (1..=9)
                    .filter(|r| s.rows_given & (1 << r) == 0)
                    .map(|r| format!("P{r}"))
                    .collect();
                return Err(err(
                    col,
                    stmt,
                    &format!(
                        "board rows missing before the side-to-move line: {}",
                        missing.join(" ")
                    ),
                ));
            }
            let pos = s.to_position().map_err(|e| {
                RecordError::new(
                    line_no,
                    col,
                    &e.token,
                    format!(
                        "the position lines do not make a valid position: {} (as sfen: {})",
                        e.reason,
                        s.to_sfen()
                    ),
                )
            })?;
            **replay = Some(Replay::new(pos));
            Ok(())
        }
        b'+' | b'-' => {
            let Some(r) = replay.as_mut() else {
                return Err(err(
                    col,
                    stmt,
                    "move before the side-to-move line ('+' or '-')",
                ));
            };
            csa_move(stmt, line_no, col, r)
        }
        b'%' => {
            let Some(r) = replay.as_mut() else {
                return Err(err(
                    col,
                    stmt,
                    "special move before the side-to-move line ('+' or '-')",
                ));
            };
            let kind = special_kind(&stmt[1..])
                .ok_or_else(|| err(col, stmt, "special move must be % followed by a name"))?;
            r.end(kind, line_no, stmt);
            Ok(())
        }
        _ => Err(err(col, stmt, "unknown statement")),
    }
}

fn parse_cap(value: &str, line: u32, col: u32, stmt: &str) -> Result<u32, RecordError> {
    value
        .trim()
        .parse::<u32>()
        .map_err(|_| RecordError::new(line, col, stmt, "move cap must be a whole number"))
}

/// The ending a CSA special move names (`name` without the `%`), or `None` for an empty or
/// malformed name.
pub(crate) fn special_kind(name: &str) -> Option<EndingKind> {
    if name.is_empty()
        || !name.bytes().enumerate().all(|(i, b)| {
            b.is_ascii_uppercase() || b == b'_' || (i == 0 && (b == b'+' || b == b'-'))
        })
    {
        return None;
    }
    Some(match name {
        "TORYO" => EndingKind::Resign,
        "CHUDAN" => EndingKind::Chudan,
        "SENNICHITE" => EndingKind::Sennichite,
        "OUTE_SENNICHITE" => EndingKind::OuteSennichite,
        "TIME_UP" => EndingKind::TimeUp,
        "ILLEGAL_MOVE" => EndingKind::IllegalMove,
        "+ILLEGAL_ACTION" => EndingKind::IllegalAction(Color::Black),
        "-ILLEGAL_ACTION" => EndingKind::IllegalAction(Color::White),
        "JISHOGI" => EndingKind::Jishogi,
        "KACHI" => EndingKind::Kachi,
        "HIKIWAKE" => EndingKind::Hikiwake,
        "TSUMI" => EndingKind::Tsumi,
        "FUZUMI" => EndingKind::Fuzumi,
        "ERROR" => EndingKind::Error,
        "MAX_MOVES" => EndingKind::MaxMoves,
        other if other.starts_with(['+', '-']) => return None,
        other => EndingKind::Other(other.to_string()),
    })
}

/// A two-digit CSA square (`77`), `None` for `00` or anything else.
fn square(b: &[u8]) -> Option<Square> {
    if b.len() != 2 || !b[0].is_ascii_digit() || !b[1].is_ascii_digit() {
        return None;
    }
    Square::new(b[0] - b'0', b[1] - b'0')
}

fn csa_move(stmt: &str, line_no: u32, col: u32, r: &mut Replay) -> Result<(), RecordError> {
    let err = |c: u32, reason: &str| RecordError::new(line_no, c, stmt, reason);
    let b = stmt.as_bytes();
    if b.len() != 7 {
        return Err(err(
            col,
            "a move is a sign, four digits and a piece (+7776FU)",
        ));
    }
    let color = if b[0] == b'+' {
        Color::Black
    } else {
        Color::White
    };
    let kind = PieceKind::from_csa_bytes(&b[5..7]).ok_or_else(|| {
        err(
            col + 5,
            "unknown piece (FU KY KE GI KI KA HI OU TO NY NK NG UM RY)",
        )
    })?;
    let to = square(&b[3..5]).ok_or_else(|| err(col + 3, "destination is not a square 11..99"))?;
    // The error (and its message) only when there is one.
    let pos = match r.position() {
        Some(pos) => pos,
        None => r.position_for_move(line_no, col, stmt)?,
    };
    if &b[1..3] == b"00" {
        if !kind.is_hand_kind() {
            return Err(err(
                col + 5,
                "only an unpromoted piece other than the king can be dropped",
            ));
        }
        r.push(Move::Drop { kind, to }, color, line_no, None);
        return Ok(());
    }
    let from =
        square(&b[1..3]).ok_or_else(|| err(col + 1, "origin is not a square 11..99 or 00"))?;
    // Promotion is not written: it shows as a piece named differently from the one on the origin
    // square. A named piece that matches neither way is kept as an impossible move.
    let (promote, forced) = match pos.piece_at(from) {
        None => (false, None),
        Some(p) if p.kind == kind => (false, None),
        Some(p) if p.kind.promote() == Some(kind) => (true, None),
        Some(_) => (false, Some(IllegalKind::Impossible)),
    };
    let forced = if from == to {
        Some(IllegalKind::Impossible)
    } else {
        forced
    };
    r.push(Move::Normal { from, to, promote }, color, line_no, forced);
    Ok(())
}

/// Whether a `'key:value` comment before the moves is a header (a key of at most 32
/// characters without blanks), as [`write_csa`] writes headers CSA has no name for.
fn is_header_key(key: &str) -> bool {
    !key.is_empty()
        && key.chars().count() <= 32
        && !key.starts_with('*')
        && !key.contains(char::is_whitespace)
}

/// One `P` statement: `PI...`, `P1`..`P9` or `P+`/`P-`.
fn position_line(stmt: &str, line_no: u32, col: u32, s: &mut Setup) -> Result<(), RecordError> {
    let b = stmt.as_bytes();
    let err = |c: u32, token: &str, reason: &str| RecordError::new(line_no, c, token, reason);
    let Some(&tag) = b.get(1) else {
        return Err(err(col, stmt, "position line must be PI, P1..P9, P+ or P-"));
    };
    match tag {
        b'I' => {
            *s = Setup::startpos();
            let rest = &b[2..];
            if !rest.len().is_multiple_of(4) {
                return Err(err(
                    col + 2,
                    &stmt[2..],
                    "removals after PI are four characters each (82HI)",
                ));
            }
            for (i, chunk) in rest.chunks(4).enumerate() {
                let c = col + 2 + 4 * i as u32;
                let tok = std::str::from_utf8(chunk).unwrap_or("");
                let sq = square(&chunk[..2]).ok_or_else(|| err(c, tok, "not a square 11..99"))?;
                let kind = PieceKind::from_csa_name(std::str::from_utf8(&chunk[2..]).unwrap_or(""))
                    .ok_or_else(|| err(c + 2, tok, "unknown piece"))?;
                match s.get(sq.file(), sq.rank()) {
                    Some(p) if p.kind == kind => s.set(sq.file(), sq.rank(), None),
                    _ => {
                        return Err(err(
                            c,
                            tok,
                            "a removal after PI names a piece that is not on that square",
                        ));
                    }
                }
            }
            Ok(())
        }
        b'1'..=b'9' => {
            let rank = tag - b'0';
            s.rows_given |= 1 << rank;
            let cells = &stmt[2..];
            let mut file = 9u8;
            let mut i = 0usize;
            let cb = cells.as_bytes();
            while i < cb.len() {
                let c = col + 2 + column_of(cells, i) - 1;
                match cb[i] {
                    b' ' => i += 1,
                    b'*' => {
                        if file == 0 {
                            return Err(err(c, &cells[i..], "more than nine squares in a row"));
                        }
                        s.set(file, rank, None);
                        file -= 1;
                        i += 1;
                    }
                    b'+' | b'-' => {
                        if file == 0 {
                            return Err(err(c, &cells[i..], "more than nine squares in a row"));
                        }
                        let name = cells.get(i + 1..i + 3).unwrap_or("");
                        let kind = PieceKind::from_csa_name(name)
                            .ok_or_else(|| err(c + 1, &cells[i..], "unknown piece"))?;
                        let color = if cb[i] == b'+' {
                            Color::Black
                        } else {
                            Color::White
                        };
                        s.set(file, rank, Some(Piece::new(color, kind)));
                        file -= 1;
                        i += 3;
                    }
                    // Some exporters mark the trailing blank of a row with a dot.
                    b'.' if file == 0 && cb[i + 1..].iter().all(|&x| x == b' ' || x == b'.') => {
                        i = cb.len();
                    }
                    _ => {
                        return Err(err(
                            c,
                            &cells[i..],
                            "expected a piece (+FU), ' * ' or a blank",
                        ));
                    }
                }
            }
            if file != 0 {
                return Err(err(
                    col + stmt.chars().count() as u32,
                    stmt,
                    "a board row must have nine squares",
                ));
            }
            Ok(())
        }
        b'+' | b'-' => {
            let color = if tag == b'+' {
                Color::Black
            } else {
                Color::White
            };
            let rest = &b[2..];
            if !rest.len().is_multiple_of(4) {
                return Err(err(
                    col + 2,
                    &stmt[2..],
                    "pieces are four characters each (0076FU, 00AL)",
                ));
            }
            for (i, chunk) in rest.chunks(4).enumerate() {
                let c = col + 2 + 4 * i as u32;
                let tok = std::str::from_utf8(chunk).unwrap_or("");
                let name = std::str::from_utf8(&chunk[2..]).unwrap_or("");
                if &chunk[..2] == b"00" {
                    if name == "AL" {
                        s.all_remaining_to_hand(color);
                        continue;
                    }
                    let kind = PieceKind::from_csa_name(name)
                        .filter(|k| k.is_hand_kind())
                        .ok_or_else(|| {
                            err(
                                c + 2,
                                tok,
                                "a hand holds only unpromoted pieces other than the king",
                            )
                        })?;
                    let n = &mut s.hands[color.index()][kind.index()];
                    *n = n.saturating_add(1);
                } else {
                    let sq = square(&chunk[..2])
                        .ok_or_else(|| err(c, tok, "not a square 11..99 or 00"))?;
                    let kind = PieceKind::from_csa_name(name)
                        .ok_or_else(|| err(c + 2, tok, "unknown piece"))?;
                    s.set(sq.file(), sq.rank(), Some(Piece::new(color, kind)));
                }
            }
            Ok(())
        }
        _ => Err(err(col, stmt, "position line must be PI, P1..P9, P+ or P-")),
    }
}

/// Writes a record as CSA V3.0.
///
/// Headers: `N+`/`N-` (or KIF's `先手`/`下手` and `後手`/`上手`), information keys written in
/// upper case by CSA readers (`EVENT`, `START_TIME` ...) as `$KEY:value`, the move cap as
/// `$MAX_MOVES`, and every other header as a `'key:value` comment. The start position is `PI`
/// for the even game, otherwise the nine rows and the hands. Each move gets its own line.
///
/// The record's own ending is written as its special move. When `verdict_special` is given
/// (for example `%SENNICHITE`), it is written last on its own line and the record's own ending,
/// if any, becomes a comment before it (`'recorded: %TORYO`), so that the file states one
/// result. Times are `T` lines after their move, comments `'*` lines; headers with a key CSA
/// has no name for are `'key:value` lines before the position, read back as headers. An
/// illegal move whose piece cannot be named (no piece on its origin square) is
/// written as a comment, since CSA has no way to write it.
pub fn write_csa(record: &Record, verdict_special: Option<&str>) -> String {
    write_csa_as(record, verdict_special, CsaVersion::V3_0)
}

/// The version of the CSA standard file format a record is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CsaVersion {
    /// V2.2, the version most readers speak (json-kifu-format's grammar reads V2.x only;
    /// floodgate's archives are V2.2). It has no milliseconds, no `%MAX_MOVES` and no
    /// `%OUTE_SENNICHITE`: a record that needs them is written as V3.0 instead (see
    /// [`csa_v22_fits`]). The move cap is floodgate's `'Max_Moves:N` comment.
    #[default]
    V2_2,
    /// V3.0: `$MAX_MOVES`, `T` with milliseconds, `%MAX_MOVES`.
    V3_0,
}

/// The information keys (`$KEY:value`) V3.0 added for the time control: `$TIME` for both sides,
/// `$TIME+` and `$TIME-` for one (`main+byoyomi+increment`, in seconds); V2.2 has only
/// `$TIME_LIMIT` (`hh:mm+ss`).
const V3_TIME_KEYS: [&str; 3] = ["TIME", "TIME+", "TIME-"];

/// Whether a header is written as an information line `$KEY:value`: upper-case letters and `_`,
/// or one of V3.0's time keys.
fn is_information_key(k: &str) -> bool {
    (!k.is_empty() && k.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
        || V3_TIME_KEYS.contains(&k)
}

/// Whether CSA V2.2 can say everything [`write_csa`] writes of `record` (and of the verdict's
/// special move, if any): times in whole seconds, no time control of V3.0's (`$TIME`, `$TIME+`,
/// `$TIME-`), and no ending V2.2 lacks (`%MAX_MOVES`, `%OUTE_SENNICHITE`, both added by V3.0).
pub fn csa_v22_fits(record: &Record, verdict_special: Option<&str>) -> bool {
    if record
        .headers
        .iter()
        .any(|(k, _)| V3_TIME_KEYS.contains(&k.as_str()))
    {
        return false;
    }
    let v3_only = |s: &str| matches!(s, "%MAX_MOVES" | "%OUTE_SENNICHITE");
    let times = record
        .moves
        .iter()
        .filter_map(|m| m.time)
        .chain(record.ending.iter().filter_map(|e| e.time));
    !times.into_iter().any(|t| t.spent_ms % 1000 != 0)
        && !record
            .ending
            .as_ref()
            .and_then(|e| e.kind.csa_special())
            .is_some_and(|s| v3_only(&s))
        && !verdict_special.is_some_and(v3_only)
}

/// [`write_csa`] in the given version: V2.2 where the record fits it ([`csa_v22_fits`]),
/// V3.0 otherwise.
pub fn write_csa_as(record: &Record, verdict_special: Option<&str>, version: CsaVersion) -> String {
    let v22 = version == CsaVersion::V2_2 && csa_v22_fits(record, verdict_special);
    let mut out = String::from(if v22 { "V2.2\n" } else { "V3.0\n" });
    let find = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| record.header(k))
            .map(|v| v.replace(['\r', '\n'], " "))
    };
    if let Some(n) = find(&["N+", "先手", "下手"]) {
        let _ = writeln!(out, "N+{n}");
    }
    if let Some(n) = find(&["N-", "後手", "上手"]) {
        let _ = writeln!(out, "N-{n}");
    }
    for (k, v) in &record.headers {
        let v = v.replace(['\r', '\n'], " ");
        if matches!(k.as_str(), "N+" | "N-" | "V" | "MAX_MOVES" | "Max_Moves") {
            continue;
        }
        if is_information_key(k) {
            let _ = writeln!(out, "${k}:{v}");
        } else {
            let _ = writeln!(out, "'{k}:{v}");
        }
    }
    match record.max_moves {
        // V2.2 has no $MAX_MOVES: floodgate's comment, which the reader reads back.
        Some(cap) if v22 => {
            let _ = writeln!(out, "'Max_Moves:{cap}");
        }
        Some(cap) => {
            let _ = writeln!(out, "$MAX_MOVES:{cap}");
        }
        None => {}
    }
    write_position(&mut out, &record.start);
    write_comments(&mut out, &record.comment);

    let mut pos = Some(record.start.clone());
    for m in &record.moves {
        let sign = if m.color == Color::Black { '+' } else { '-' };
        let (from, to, kind) = match m.mv {
            Move::Drop { kind, to } => ((0, 0), to, Some(kind)),
            Move::Normal { from, to, promote } => {
                let kind = pos.as_ref().and_then(|p| p.piece_at(from)).map(|p| {
                    if promote {
                        p.kind.promote().unwrap_or(p.kind)
                    } else {
                        p.kind
                    }
                });
                ((from.file(), from.rank()), to, kind)
            }
        };
        match kind {
            Some(kind) => {
                let _ = writeln!(
                    out,
                    "{sign}{}{}{}{}{}",
                    from.0,
                    from.1,
                    to.file(),
                    to.rank(),
                    kind.csa_name()
                );
                write_time(&mut out, m.time.as_ref());
            }
            None => {
                // A move CSA cannot name is a comment, and so is its time: a time line must
                // follow a move line (fuzz: `fuzz_regressions.rs`).
                let why = m
                    .legal
                    .as_ref()
                    .err()
                    .map_or("illegal", |e| e.kind.as_str());
                let time = m
                    .time
                    .map(|t| format!(", {} ms", t.spent_ms))
                    .unwrap_or_default();
                let _ = writeln!(out, "'illegal move {} ({why}) by {}{time}", m.mv, m.color);
            }
        }
        write_comments(&mut out, &m.comment);
        // Checked play: a record built by hand may claim a move legal that is not.
        if m.legal.is_err() || pos.as_mut().is_some_and(|p| p.play(m.mv).is_err()) {
            pos = None;
        }
    }
    let own = record.ending.as_ref().map(|e| {
        e.kind
            .csa_special()
            .unwrap_or_else(|| format!("'ending: {}", e.raw.replace(['\r', '\n'], " ")))
    });
    match (own, verdict_special) {
        (Some(own), Some(v)) => {
            let _ = writeln!(out, "'recorded: {}", own.trim_start_matches('\''));
            let _ = writeln!(out, "{v}");
        }
        (Some(own), None) => {
            let _ = writeln!(out, "{own}");
            // The time and comments of an ending CSA can name; one it cannot is a comment,
            // which would take them over.
            if let Some(e) = record
                .ending
                .as_ref()
                .filter(|e| e.kind.csa_special().is_some())
            {
                write_time(&mut out, e.time.as_ref());
                write_comments(&mut out, &e.comment);
            }
        }
        (None, Some(v)) => {
            let _ = writeln!(out, "{v}");
        }
        (None, None) => {}
    }
    out
}

/// A `T` line: whole seconds, or seconds with milliseconds (`T1.250`).
fn write_time(out: &mut String, time: Option<&crate::MoveTime>) {
    if let Some(t) = time {
        let (s, ms) = (t.spent_ms / 1000, t.spent_ms % 1000);
        if ms == 0 {
            let _ = writeln!(out, "T{s}");
        } else {
            let _ = writeln!(out, "T{s}.{ms:03}");
        }
    }
}

/// Comments as CSA V3.0 move comments, `'*` lines (a comment of several lines, several).
fn write_comments(out: &mut String, comment: &Option<String>) {
    for line in crate::comment_lines(comment) {
        let _ = writeln!(out, "'*{}", line.trim_end_matches('\r'));
    }
}

fn write_position(out: &mut String, pos: &Position) {
    if pos.same_position(&Position::startpos()) {
        out.push_str("PI\n+\n");
        return;
    }
    for rank in 1..=9u8 {
        let _ = write!(out, "P{rank}");
        for file in (1..=9u8).rev() {
            match Square::new(file, rank).and_then(|sq| pos.piece_at(sq)) {
                Some(p) => {
                    let sign = if p.color == Color::Black { '+' } else { '-' };
                    let _ = write!(out, "{sign}{}", p.kind.csa_name());
                }
                None => out.push_str(" * "),
            }
        }
        out.push('\n');
    }
    for color in Color::ALL {
        let hand = pos.hand(color);
        if hand.is_empty() {
            continue;
        }
        out.push_str(if color == Color::Black { "P+" } else { "P-" });
        for kind in hand.kinds() {
            for _ in 0..hand.count(kind) {
                let _ = write!(out, "00{}", kind.csa_name());
            }
        }
        out.push('\n');
    }
    out.push_str(if pos.side_to_move() == Color::Black {
        "+\n"
    } else {
        "-\n"
    });
}
