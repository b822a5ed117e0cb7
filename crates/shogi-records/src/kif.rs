//! KIF and KI2 (Kakinoki's formats): headers, handicaps, board diagrams, moves, endings.
//!
//! Source: the KIF/KI2 format description published with Kifu for Windows (柿木将棋), and the
//! records written by Kifu for Windows, Shogidokoro, ShogiGUI, ShogiHome, Piyo Shogi and
//! shogi-extend, as found in the test corpus.

use crate::decode::{lines, trim_end, trim_start, with_decoded};
use crate::error::column_of;
use crate::replay::Replay;
use crate::setup::Setup;
use crate::{EndingKind, Format, MoveTime, Record, RecordError, Variation};
use shogi_rules::{Color, IllegalKind, Move, Piece, PieceKind, Position, Square};

/// Reads a KIF record (`.kif` in Shift_JIS, `.kifu` in UTF-8; the encoding is detected: a BOM
/// or valid UTF-8 is UTF-8, otherwise Shift_JIS).
///
/// Accepted: `key：value` headers (`手合割` sets a standard handicap, where White, 上手, moves
/// first); a board diagram (`後手の持駒：`, the framed nine rows, `先手の持駒：`, `後手番` /
/// `先手番`, and the 上手/下手 forms), which takes precedence over `手合割`; numbered move lines
/// such as `７六歩(77)`, `同　歩(76)` or `同歩(76)`, `成`, `不成`, `打`, `王` and `玉`, `杏`, `圭`,
/// `全`; time columns and the `+` mark of a move that has variations; ending lines (`投了`,
/// `詰み`, `千日手`, `持将棋`, `入玉勝ち`, `反則負け`, `反則勝ち`, `切れ負け`, `中断`, `不詰`,
/// `封じ手`, `Time-up` ...); comments (`*`, `&`, `#`, and `#` after the text of a line); the
/// closing `まで…` line, kept as the header `summary`.
///
/// Comments (`*` lines) belong to the move before them, or to the record before the first move;
/// a time column `( 0:12/00:01:30)` is the move's time (this move, and the side's total).
///
/// Variations: each `変化：N手` block is an alternative to ply N of the latest line read so far
/// that has a ply N (the main line or an earlier variation, as Kifu for Windows writes them
/// depth first), and is read into [`Record::variations`]; its moves are checked from the
/// position before that ply.
///
/// Move numbers must count up from 1 with no gap, so that a missing or extra line cannot go
/// unnoticed; after a board diagram with `手数＝N` (BOD) they count up from N + 1.
pub fn read_kif(bytes: &[u8]) -> Result<Record, RecordError> {
    with_decoded(bytes, |text| {
        crate::decode::check_text(text)?;
        read_japanese(text, Format::Kif)
    })?
}

/// Reads a KI2 record (moves as in print, `▲７六歩△３四歩`, no origin squares). The encoding
/// is detected as for [`read_kif`]; headers, handicaps and diagrams are as in KIF.
///
/// A KI2 move names its origin only through the relative words `右 左 直 上 引 寄` (and `行`,
/// `入` for `上`), so each move is found among the legal moves of the position; a move that
/// matches no legal move, or more than one, is an error (an illegal KI2 move cannot be told
/// apart from a misreading). A drop is recognised without `打` when no board move fits.
///
/// KI2 has no ending line: the closing `まで…` line is the ending (`まで102手で下手の勝ち` is a
/// resignation or a mate, read as [`EndingKind::Resign`]; `千日手`, `持将棋`, `中断`,
/// `時間切れ`, `反則` ... by their words).
pub fn read_ki2(bytes: &[u8]) -> Result<Record, RecordError> {
    with_decoded(bytes, |text| {
        crate::decode::check_text(text)?;
        read_japanese(text, Format::Ki2)
    })?
}

/// State while reading the lines before the first move.
struct Preamble {
    handicap: Option<(String, u32)>,
    rows: Vec<(u32, [Option<Piece>; 9])>,
    hands: [Option<(u32, [u8; 7])>; 2],
    side: Option<Color>,
    /// A board diagram appears only inside `#` comment lines.
    commented_diagram: bool,
}

fn read_japanese(text: &str, format: Format) -> Result<Record, RecordError> {
    read_lines(text, format).map_err(|mut e| {
        // A board diagram left inside comments makes every later error puzzling; say so.
        let rows = |comment: bool| {
            lines(text).any(|(_, l)| {
                let l = l.trim_start();
                let l = if comment { l.strip_prefix('#').map(str::trim_start) } else { Some(l) };
                l.is_some_and(|l| l.starts_with('|') && l.trim_end().ends_with(['一', '九']))
            })
        };
        if rows(true) && !rows(false) && !e.reason.contains("comment") {
            e.reason.push_str(
                " (the board diagram is commented out with '#', so the record starts from the even-game position)",
            );
        }
        e
    })
}

fn read_lines(text: &str, format: Format) -> Result<Record, RecordError> {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut max_moves = None;
    let mut pre = Preamble {
        handicap: None,
        rows: Vec::new(),
        hands: [None, None],
        side: None,
        commented_diagram: false,
    };
    let mut replay: Option<Replay> = None;
    let mut ki2_end: Option<(u32, String)> = None;
    // Moves already played before the diagram (BOD `手数＝12`): numbering continues from there.
    // Within a variation, the plies before it.
    let mut played_before: u64 = 0;
    // Comments before the moves begin.
    let mut comment: Option<String> = None;
    // Once variations begin: the main line, and each variation read so far.
    let mut lines_done: Option<(Replay, u64)> = None;
    let mut variations: Vec<(usize, u64, Replay)> = Vec::new();
    // After an error in a variation: its remaining lines are not read.
    let mut skipping = false;
    // Most files have no `#` at all: one search of the text instead of one a line.
    let any_hash = crate::decode::find_byte(text, b'#').is_some();

    for (line_no, raw) in lines(text) {
        let full = trim_end(raw);
        let body = trim_start(full);
        if body.is_empty() {
            continue;
        }
        if body.starts_with('#') {
            if body.contains('|') || body.contains("の持駒") {
                pre.commented_diagram = true;
            }
            continue;
        }
        if let Some(c) = body.strip_prefix('*') {
            // The comment keeps its own leading blanks (after the `*`); only the line's trailing
            // ones go, which `full` has lost already.
            match replay.as_mut() {
                Some(r) => r.comment(c),
                None => crate::add_comment(&mut comment, c),
            }
            continue;
        }
        if body.starts_with('&') {
            // A bookmark (しおり), a name for the position, not a comment.
            continue;
        }
        // A `#` after the text starts a comment (hand-written files do this). Searched for
        // only in a file that has one: `filter` after the search still searched every line.
        let hash_at = if any_hash {
            crate::decode::find_byte(full, b'#')
        } else {
            None
        };
        // Not in a header line (`先手：Sente-san#3`), whose value keeps it, as every other
        // reader does (issue #22, class 9).
        let hash_at = hash_at.filter(|&i| !is_header_line(trim_start(&full[..i])));
        // Without a `#`, the line is `full` and its text `body`, trimmed already.
        let (line, t) = match hash_at {
            Some(i) => {
                let line = trim_end(&full[..i]);
                (line, trim_start(line))
            }
            None => (full, body),
        };
        let lead = line.len() - t.len();
        if t.is_empty() {
            continue;
        }
        let err = |at: usize, token: &str, reason: &str| {
            RecordError::new(line_no, column_of(line, lead + at), token, reason)
        };

        // A numbered line (a KIF move or ending) first: most lines are, and none of the
        // tests below can match a line that starts with an ASCII digit.
        if t.as_bytes()[0].is_ascii_digit() {
            let digits = t.bytes().take_while(|b| b.is_ascii_digit()).count();
            // `parse`, without its generic machinery; too large a number is u64::MAX.
            let number = t.as_bytes()[..digits]
                .iter()
                .try_fold(0u64, |n, &b| {
                    n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
                })
                .unwrap_or(u64::MAX);
            let rest = &t[digits..];
            let rest_trim = trim_start(rest);
            if rest_trim.len() == rest.len() && !rest.is_empty() {
                return Err(err(digits, t, "expected a blank after the move number"));
            }
            let at = lead + digits + (rest.len() - rest_trim.len());
            let r = match replay.as_mut() {
                Some(r) => r,
                None => replay.insert(start_replay(&pre, line_no)?),
            };
            if skipping {
                continue;
            }
            // Ending lines take a number too.
            let expected = played_before + (r.moves.len() + r.ending_lines()) as u64 + 1;
            let result = if number != expected {
                Err(RecordError::new(
                    line_no,
                    column_of(line, lead),
                    t,
                    format!("move number {} where {expected} was expected", &t[..digits]),
                ))
            } else {
                kif_move(rest_trim, line_no, line, at, r)
            };
            match result {
                Ok(()) => {}
                // A variation that cannot be read does not lose the main line: it is reported
                // as a header and read up to that move.
                Err(e) if lines_done.is_some() => {
                    headers.push(("variation_error".to_string(), e.to_string()));
                    skipping = true;
                }
                Err(e) => return Err(e),
            }
            continue;
        }

        if let Some(rest) = t.strip_prefix("変化：").or_else(|| t.strip_prefix("変化:")) {
            let digits: String = rest
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let ply: u64 = digits.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                err(
                    "変化：".len(),
                    t,
                    "expected the ply of the variation (変化：12手)",
                )
            })?;
            let Some(mut current) = replay.take() else {
                return Err(err(0, t, "a variation before any move"));
            };
            // A KI2 main line's `まで` line is its ending, which a variation may replace (tsshogi
            // writes `変化：122手` after `まで121手で先手の勝ち`): it ends the main line now.
            if lines_done.is_none()
                && let Some((end_line, text)) = ki2_end.take()
            {
                let side = current.side_to_move();
                current.end(ki2_ending(&text, side), end_line, &text);
            }
            match lines_done {
                None => lines_done = Some((current, played_before)),
                Some(_) => {
                    let last = variations.last_mut().expect("a variation is being read");
                    last.2 = current;
                }
            }
            let (main, main_before) = lines_done.as_ref().expect("set above");
            let (parent, start, before_to) = branch_point(main, *main_before, &variations, ply)
                .map_err(|reason| err(0, t, &reason))?;
            let mut r = Replay::new(start);
            r.before_to = before_to;
            // A placeholder until the variation's lines are read.
            variations.push((parent, ply, Replay::new(r.start.clone())));
            replay = Some(r);
            played_before = ply - 1;
            skipping = false;
            continue;
        }
        if t.starts_with("手数-") || t.starts_with("手数―") {
            continue;
        }
        if let Some(rest) = t.strip_prefix("手数＝") {
            // BOD: `手数＝12  ▲７六歩  まで`, the number of moves that led to the diagram.
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            played_before = digits
                .parse()
                .map_err(|_| err("手数＝".len(), t, "expected a move count after 手数＝"))?;
            headers.push(("手数".to_string(), rest.trim().to_string()));
            continue;
        }
        if t.starts_with("まで") {
            match (format, lines_done.is_some(), replay.as_mut()) {
                // In a KI2 variation, the variation's own ending (tsshogi writes one each).
                (Format::Ki2, true, Some(r)) => {
                    if !skipping {
                        let side = r.side_to_move();
                        r.end(ki2_ending(t, side), line_no, t);
                    }
                }
                (Format::Ki2, _, _) => {
                    headers.push(("summary".to_string(), t.to_string()));
                    ki2_end = Some((line_no, t.to_string()));
                }
                _ => headers.push(("summary".to_string(), t.to_string())),
            }
            continue;
        }
        let first = t.chars().next().unwrap_or(' ');
        if first == '|' {
            if replay.is_some() {
                return Err(err(0, t, "board diagram after the moves began"));
            }
            let row = board_row(t).map_err(|(at, reason)| err(at, t, reason))?;
            if pre.rows.len() >= 9 {
                return Err(err(0, t, "more than nine rows in the board diagram"));
            }
            if let Some(rank) = row.1
                && rank as usize != pre.rows.len() + 1
            {
                return Err(err(0, t, "board rows out of order"));
            }
            pre.rows.push((line_no, row.0));
            continue;
        }
        if t.starts_with("+-") || t.starts_with("+―") || (first == '９' && t.contains('１')) {
            continue;
        }
        match t {
            "先手番" | "下手番" => {
                pre.side = Some(Color::Black);
                continue;
            }
            "後手番" | "上手番" => {
                pre.side = Some(Color::White);
                continue;
            }
            _ => {}
        }
        if matches!(first, '▲' | '△' | '▽' | '▼' | '☗' | '☖') {
            let r = match replay.as_mut() {
                Some(r) => r,
                None => replay.insert(start_replay(&pre, line_no)?),
            };
            ki2_moves(t, line_no, line, lead, r)?;
            continue;
        }
        let colon = t
            .find('：')
            .map(|i| (i, '：'.len_utf8()))
            .or_else(|| t.find(':').map(|i| (i, 1)));
        if let Some((i, w)) = colon {
            let key = crate::decode::trim(&t[..i]);
            let value = crate::decode::trim(&t[i + w..]);
            match key {
                "先手の持駒" | "下手の持駒" | "後手の持駒" | "上手の持駒" => {
                    if replay.is_some() {
                        return Err(err(0, t, "pieces in hand after the moves began"));
                    }
                    let color = if key.starts_with("先手") || key.starts_with("下手") {
                        Color::Black
                    } else {
                        Color::White
                    };
                    let hand =
                        hand_text(value).map_err(|(at, reason)| err(i + w + at, value, reason))?;
                    pre.hands[color.index()] = Some((line_no, hand));
                }
                _ => {
                    if key == "手合割" {
                        // A handicap's name holds no `#`: what follows is a comment.
                        let name = crate::decode::trim(value.split('#').next().unwrap_or(""));
                        pre.handicap = Some((name.to_string(), line_no));
                    }
                    if key == "最大手数" {
                        max_moves =
                            Some(value.parse::<u32>().map_err(|_| {
                                err(i + w, value, "move cap must be a whole number")
                            })?);
                    }
                    headers.push((key.to_string(), value.to_string()));
                }
            }
            continue;
        }
        let reason = if replay.as_ref().is_some_and(|r| r.ending.is_some()) {
            "unrecognised line after the ending"
        } else {
            "unrecognised line (not a header, board row, move, ending or comment)"
        };
        return Err(err(0, t, reason));
    }

    let mut replay = match (lines_done, replay) {
        (Some((main, _)), current) => {
            let last = variations.last_mut().expect("a variation was begun");
            if let Some(r) = current {
                last.2 = r;
            }
            main
        }
        (None, Some(r)) => r,
        (None, None) => start_replay(&pre, lines(text).count() as u32)?,
    };
    if let Some((line_no, text)) = ki2_end {
        let side = replay.side_to_move();
        replay.end(ki2_ending(&text, side), line_no, &text);
    }
    let variations: Vec<Variation> = variations
        .into_iter()
        .map(|(parent, ply, r)| {
            headers.extend(r.later_ending_headers());
            Variation {
                parent,
                ply: ply as u32,
                moves: r.moves,
                ending: r.ending,
            }
        })
        .collect();
    let mut record = replay.into_record(format, headers, max_moves, comment);
    record.variations = variations;
    Ok(record)
}

/// The line a variation of `ply` branches from (0: the main line, `i`: `variations[i - 1]`) and
/// the position before that ply: the latest line read that has a move at `ply`.
fn branch_point(
    main: &Replay,
    main_before: u64,
    variations: &[(usize, u64, Replay)],
    ply: u64,
) -> Result<(usize, Position, Option<Square>), String> {
    // A line's ending takes a ply too: a variation may replace it (`2 投了` then `変化：2手`,
    // as tsshogi writes an alternative to a resignation).
    let covers = |first: u64, r: &Replay| {
        first <= ply && ply < first + r.moves.len() as u64 + u64::from(r.ending.is_some())
    };
    // The variation being begun is not among them yet; the last one is complete.
    let found = variations
        .iter()
        .enumerate()
        .rev()
        .find(|(_, (_, first, r))| covers(*first, r))
        .map(|(i, (_, first, r))| (i + 1, *first, r))
        .or_else(|| covers(main_before + 1, main).then_some((0, main_before + 1, main)));
    let Some((mut parent, first, line)) = found else {
        return Err(format!(
            "no line read so far has a move {ply} for this variation to replace"
        ));
    };
    // An alternative to a variation's first move is an alternative to its parent's move there:
    // a sibling, not a child.
    while parent > 0 && variations[parent - 1].1 == ply {
        parent = variations[parent - 1].0;
    }
    let mut pos = line.start.clone();
    let before = &line.moves[..(ply - first) as usize];
    let before_to = before.last().map(|m| m.mv.to()).or(line.before_to);
    for m in before {
        if m.legal.is_err() || pos.play(m.mv).is_err() {
            return Err(format!(
                "the variation of ply {ply} follows an illegal move (line {})",
                m.line
            ));
        }
    }
    Ok((parent, pos, before_to))
}

/// The start position from the preamble: the diagram if there is one, else the handicap, else
/// the even game.
fn start_replay(pre: &Preamble, line_no: u32) -> Result<Replay, RecordError> {
    let setup = if !pre.rows.is_empty() {
        let first = pre.rows[0].0;
        if pre.rows.len() != 9 {
            return Err(RecordError::new(
                first,
                1,
                "|",
                format!("the board diagram has {} rows, not nine", pre.rows.len()),
            ));
        }
        let mut s = Setup::empty();
        for (i, (_, row)) in pre.rows.iter().enumerate() {
            for (j, cell) in row.iter().enumerate() {
                s.set(9 - j as u8, i as u8 + 1, *cell);
            }
        }
        for color in Color::ALL {
            if let Some((_, h)) = pre.hands[color.index()] {
                s.hands[color.index()] = h;
            }
        }
        s.side = match (pre.side, &pre.handicap) {
            (Some(side), _) => side,
            // A diagram of a handicap game without a side-to-move line: the giver, White,
            // moves first.
            (None, Some((name, _))) if name != "平手" && Setup::handicap(name).is_some() => {
                Color::White
            }
            (None, _) => Color::Black,
        };
        s
    } else {
        if let Some((line, h)) = pre
            .hands
            .iter()
            .flatten()
            .find(|(_, h)| h.iter().any(|&n| n > 0))
        {
            let _ = h;
            return Err(RecordError::new(
                *line,
                1,
                "持駒",
                "pieces in hand given without a board diagram",
            ));
        }
        let mut s = match &pre.handicap {
            Some((name, line)) => Setup::handicap(name).ok_or_else(|| {
                RecordError::new(
                    *line,
                    1,
                    name,
                    "unknown handicap (手合割) and no board diagram to show the position",
                )
            })?,
            None => Setup::startpos(),
        };
        if let Some(side) = pre.side {
            s.side = side;
        }
        s
    };
    let line = pre.rows.first().map_or(line_no, |r| r.0);
    let pos = setup.to_position().map_err(|e| {
        let hint = if pre.rows.is_empty() && pre.commented_diagram {
            " (a board diagram appears only in '#' comment lines)"
        } else {
            ""
        };
        RecordError::new(
            line,
            1,
            &e.token,
            format!(
                "the starting position is not valid: {}{hint} (as sfen: {})",
                e.reason,
                setup.to_sfen()
            ),
        )
    })?;
    Ok(Replay::new(pos))
}

fn kanji_number(c: char) -> Option<u8> {
    // A match, not a search of "一二三...": this runs once a KIF move.
    Some(match c {
        '一' => 1,
        '二' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    })
}

fn digit(c: char) -> Option<u8> {
    match c {
        '1'..='9' => Some(c as u8 - b'0'),
        '１'..='９' => Some((c as u32 - '１' as u32) as u8 + 1),
        _ => None,
    }
}

/// A piece as written on a board diagram or in a move, one character.
fn piece_char(c: char) -> Option<PieceKind> {
    Some(match c {
        '歩' => PieceKind::Pawn,
        '香' => PieceKind::Lance,
        '桂' => PieceKind::Knight,
        '銀' => PieceKind::Silver,
        '金' => PieceKind::Gold,
        '角' => PieceKind::Bishop,
        '飛' => PieceKind::Rook,
        '玉' | '王' => PieceKind::King,
        'と' => PieceKind::ProPawn,
        '杏' => PieceKind::ProLance,
        '圭' => PieceKind::ProKnight,
        '全' => PieceKind::ProSilver,
        '馬' => PieceKind::Horse,
        '龍' | '竜' => PieceKind::Dragon,
        _ => return None,
    })
}

/// One framed row of a board diagram: `| ・v香 ...|一`, returning the nine cells (file 9
/// first) and the rank if written; on error, the byte offset and the reason.
#[allow(clippy::type_complexity)]
fn board_row(t: &str) -> Result<([Option<Piece>; 9], Option<u8>), (usize, &'static str)> {
    let mut cells = [None; 9];
    let mut it = t.char_indices().skip(1).peekable();
    for cell in cells.iter_mut() {
        let (at, mark) = it
            .next()
            .ok_or((t.len(), "a board row must have nine squares"))?;
        let color = match mark {
            ' ' | '　' | '^' => Color::Black,
            'v' | 'V' => Color::White,
            '|' => return Err((at, "a board row must have nine squares")),
            _ => return Err((at, "expected ' ' or 'v' before a piece")),
        };
        let (at, p) = it
            .next()
            .ok_or((t.len(), "a board row must have nine squares"))?;
        *cell = match p {
            '・' => None,
            _ => Some(Piece::new(
                color,
                piece_char(p).ok_or((at, "unknown piece on the board"))?,
            )),
        };
    }
    match it.next() {
        Some((_, '|')) => {}
        Some((at, _)) => return Err((at, "a board row must have nine squares and end with '|'")),
        None => return Err((t.len(), "a board row must end with '|'")),
    }
    let rest: String = it.map(|(_, c)| c).collect();
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok((cells, None));
    }
    let mut rc = rest.chars();
    match (rc.next().and_then(kanji_number), rc.next()) {
        (Some(r), None) => Ok((cells, Some(r))),
        _ => Err((
            t.len() - rest.len(),
            "expected the rank (一..九) after the row",
        )),
    }
}

/// A hand as written after `先手の持駒：`: `なし`, or pieces with kanji counts (`歩二　香`).
fn hand_text(value: &str) -> Result<[u8; 7], (usize, &'static str)> {
    let mut hand = [0u8; 7];
    if value.is_empty() || value == "なし" {
        return Ok(hand);
    }
    let mut items = Vec::new();
    let mut start = None;
    for (i, c) in value.char_indices() {
        if c == ' ' || c == '　' || c == '、' {
            if let Some(s) = start.take() {
                items.push((s, &value[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        items.push((s, &value[s..]));
    }
    for (at, item) in items {
        let mut chars = item.chars();
        let kind = chars
            .next()
            .and_then(piece_char)
            .filter(|k| k.is_hand_kind())
            .ok_or((
                at,
                "expected a piece that can be held (歩 香 桂 銀 金 角 飛)",
            ))?;
        let count: String = chars.collect();
        let n = if count.is_empty() {
            1
        } else if let Ok(n) = count.parse::<u8>() {
            n
        } else {
            kanji_count(&count).ok_or((at, "expected a count in kanji (一..十八)"))?
        };
        let slot = &mut hand[kind.index()];
        *slot = slot.saturating_add(n);
    }
    Ok(hand)
}

/// 一..九, 十, 十一..十八.
fn kanji_count(s: &str) -> Option<u8> {
    let cs: Vec<char> = s.chars().collect();
    match cs.as_slice() {
        [c] if *c == '十' => Some(10),
        [c] => kanji_number(*c),
        ['十', c] => kanji_number(*c).map(|n| 10 + n),
        _ => None,
    }
}

/// A move as written, before it is matched against the position.
#[derive(Debug)]
pub(crate) struct Written {
    pub to: Square,
    pub kind: PieceKind,
    pub promote: Option<bool>,
    pub drop: bool,
    pub from: Option<Square>,
    pub relative: Vec<char>,
}

impl Written {
    /// A move to `to` by a `kind`, with nothing else written.
    pub(crate) fn new(to: Square, kind: PieceKind) -> Written {
        Written {
            to,
            kind,
            promote: None,
            drop: false,
            from: None,
            relative: Vec::new(),
        }
    }
}

/// The character whose UTF-8 form is the three bytes `b[i..i + 3]`, if they are one (kanji and
/// kana are; `b` is a `str`'s): decoded here, where the standard library's `chars` cost some
/// 28 instructions a character.
#[inline]
fn char3(b: &[u8], i: usize) -> Option<char> {
    match *b.get(i..i + 3)? {
        [lead @ 0xE0..=0xEF, c1 @ 0x80..=0xBF, c2 @ 0x80..=0xBF] => char::from_u32(
            u32::from(lead & 0x0F) << 12 | u32::from(c1 & 0x3F) << 6 | u32::from(c2 & 0x3F),
        ),
        _ => None,
    }
}

/// [`written_move`] for a KIF move as exporters write it (`７六歩(77)`, `同　銀成(68)`,
/// `５五角打`), read from its UTF-8 bytes at fixed places; `None` for anything else, which
/// [`written_move`] then reads (to the same result where both answer: tested). The general
/// reading walks the characters one at a time and cost some 250 instructions a move.
fn kif_written_move(s: &str, same: Option<Square>) -> Option<(Written, usize)> {
    let b = s.as_bytes();
    let char_at = |i: usize| b.get(i..i + 3);
    let mut i;
    let to = if char_at(0) == Some("同".as_bytes()) {
        i = 3;
        if b.get(3) == Some(&b' ') {
            i = 4;
        } else if char_at(3) == Some("　".as_bytes()) {
            i = 6;
        }
        same?
    } else {
        // A full-width digit (U+FF11..U+FF19) and a kanji rank.
        let file = match char_at(0)? {
            &[0xEF, 0xBC, d @ 0x91..=0x99] => d - 0x90,
            _ => return None,
        };
        let rank = kanji_number(char3(b, 3)?)?;
        i = 6;
        Square::new(file, rank)?
    };
    let kind = piece_char(char3(b, i)?)?;
    i += 3;
    let mut w = Written::new(to, kind);
    match char_at(i) {
        Some(c) if c == "成".as_bytes() => {
            w.promote = Some(true);
            i += 3;
        }
        Some(c) if c == "打".as_bytes() => {
            w.drop = true;
            i += 3;
        }
        Some(c) if c == "生".as_bytes() => {
            w.promote = Some(false);
            i += 3;
        }
        Some(c) if c == "不".as_bytes() => {
            if char_at(i + 3)? != "成".as_bytes() {
                return None;
            }
            w.promote = Some(false);
            i += 6;
        }
        _ => {}
    }
    if b.get(i) == Some(&b'(') {
        match b.get(i + 1..i + 4)? {
            &[f @ b'1'..=b'9', r @ b'1'..=b'9', b')'] => {
                w.from = Some(Square::new(f - b'0', r - b'0')?);
                i += 4;
            }
            _ => return None,
        }
    }
    Some((w, i))
}

/// Parses the destination, piece and modifiers at the start of `s`; returns the move and the
/// byte length read. `same` is the previous move's destination for `同`.
fn written_move(
    s: &str,
    same: Option<Square>,
    with_relative: bool,
) -> Result<(Written, usize), (usize, &'static str)> {
    let mut it = s.char_indices().peekable();
    let to = match it.next() {
        Some((_, '同')) => {
            if let Some(&(_, ' ' | '　')) = it.peek() {
                it.next();
            }
            same.ok_or((0, "同 (same square) with no previous move"))?
        }
        Some((at, c)) => {
            let file = digit(c).ok_or((at, "expected a destination such as ７六 or 同"))?;
            let (at, r) = it
                .next()
                .ok_or((s.len(), "expected the destination rank"))?;
            let rank = kanji_number(r)
                .or_else(|| digit(r))
                .ok_or((at, "expected the destination rank (一..九)"))?;
            Square::new(file, rank).ok_or((at, "not a square"))?
        }
        None => return Err((0, "empty move")),
    };
    let (at, c) = it.next().ok_or((s.len(), "expected a piece"))?;
    let kind = if c == '成' {
        match it.next() {
            Some((_, '香')) => PieceKind::ProLance,
            Some((_, '桂')) => PieceKind::ProKnight,
            Some((_, '銀')) => PieceKind::ProSilver,
            _ => return Err((at, "expected 成香, 成桂 or 成銀")),
        }
    } else {
        piece_char(c).ok_or((
            at,
            "expected a piece (歩 香 桂 銀 金 角 飛 玉 王 と 杏 圭 全 馬 龍 竜)",
        ))?
    };
    let mut w = Written::new(to, kind);
    while let Some(&(_, c)) = it.peek() {
        if with_relative && "右左直上引寄行入".contains(c) {
            w.relative.push(c);
            it.next();
        } else {
            break;
        }
    }
    match it.peek().copied() {
        Some((_, '成')) => {
            w.promote = Some(true);
            it.next();
        }
        Some((_, '生')) => {
            w.promote = Some(false);
            it.next();
        }
        Some((at, '不')) => {
            it.next();
            match it.next() {
                Some((_, '成')) => w.promote = Some(false),
                _ => return Err((at, "expected 不成")),
            }
        }
        Some((_, '打')) => {
            w.drop = true;
            it.next();
        }
        _ => {}
    }
    if !with_relative && let Some(&(at, '(')) = it.peek() {
        // KIF origin: (77).
        it.next();
        let a = it.next().and_then(|(_, c)| digit(c));
        let b = it.next().and_then(|(_, c)| digit(c));
        let close = it.next();
        match (a, b, close) {
            (Some(f), Some(r), Some((_, ')'))) => {
                w.from = Some(Square::new(f, r).ok_or((at, "origin is not a square"))?);
            }
            _ => return Err((at, "expected the origin square such as (77)")),
        }
    }
    let used = it.peek().map_or(s.len(), |&(i, _)| i);
    Ok((w, used))
}

/// KIF ending words, longest first, and what they mean; `None` marks 反則勝ち, whose loser
/// depends on the side to move.
const KIF_ENDINGS: &[(&str, Option<EndingKind>)] = &[
    ("反則勝ち", None),
    ("反則負け", Some(EndingKind::IllegalMove)),
    ("入玉勝ち", Some(EndingKind::Kachi)),
    ("宣言勝ち", Some(EndingKind::Kachi)),
    // cshogi's KIF writer's word for a declaration.
    ("入玉宣言", Some(EndingKind::Kachi)),
    ("切れ負け", Some(EndingKind::TimeUp)),
    ("Time-up", Some(EndingKind::TimeUp)),
    ("千日手", Some(EndingKind::Sennichite)),
    ("持将棋", Some(EndingKind::Jishogi)),
    ("投了", Some(EndingKind::Resign)),
    ("中断", Some(EndingKind::Chudan)),
    ("詰み", Some(EndingKind::Tsumi)),
    ("不詰", Some(EndingKind::Fuzumi)),
    ("詰", Some(EndingKind::Tsumi)),
];

/// KIF words that end the record without a result of play.
pub(crate) const KIF_OTHER_ENDINGS: &[&str] = &["封じ手", "不戦勝", "不戦敗"];

/// A KIF clock, `m:ss` or `h:mm:ss` (any number of `:`-separated fields, blanks around
/// them), in milliseconds.
fn clock_ms(s: &[u8]) -> Option<u64> {
    // Plain integers and a flag rather than an `Option` a byte: this runs twice a move.
    let mut total = 0u64;
    let mut field = 0u64;
    let mut digits = false;
    for &b in s {
        if b.is_ascii_digit() {
            field = field.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            digits = true;
        } else if b == b':' && digits {
            total = total.checked_mul(60)?.checked_add(field)?;
            field = 0;
            digits = false;
        } else if b != b' ' {
            return None;
        }
    }
    if !digits {
        return None;
    }
    total.checked_mul(60)?.checked_add(field)?.checked_mul(1000)
}

/// The time column as nearly every exporter writes it, ` m:ss/hh:mm:ss` or `mm:ss/hh:mm:ss`
/// (the text between the parentheses), read at fixed places; `None` for any other shape, which
/// the general reading ([`clock_ms`]) then reads to the same value. A time column follows
/// nearly every move of an archive, and reading it a byte at a time cost more than the move.
fn usual_time_column(inner: &[u8]) -> Option<MoveTime> {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The separators' bytes (2 and 5 of each word below), and '0' in their place.
    const SEPS: u64 = 0xFF << 16 | 0xFF << 40;
    const ZEROS: u64 = 0x30 << 16 | 0x30 << 40;
    let inner: &[u8; 14] = inner.try_into().ok()?;
    // Two words, eight bytes at a time rather than fourteen tests: `m1 m2 : s1 s2 / h1 h2`
    // and `h1 h2 : n1 n2 : t1 t2`.
    let mut a = u64::from_le_bytes(inner[..8].try_into().expect("eight bytes"));
    let b = u64::from_le_bytes(inner[6..].try_into().expect("eight bytes"));
    if a & SEPS != (u64::from(b':') << 16 | u64::from(b'/') << 40)
        || b & SEPS != (u64::from(b':') << 16 | u64::from(b':') << 40)
    {
        return None;
    }
    // A clock under ten minutes may be written ` 9:59`: the blank reads as '0'.
    if inner[0] == b' ' {
        a ^= 0x10;
    }
    // Every other byte a digit: for a byte below 0x80, adding 0x50 sets its high bit exactly
    // when it is at least '0', adding 0x46 exactly when it is above '9', and neither carries
    // into the next byte.
    let (a, b) = ((a & !SEPS) | ZEROS, (b & !SEPS) | ZEROS);
    let digits = |x: u64| {
        x & HIGHS == 0
            && (x.wrapping_add(0x5050_5050_5050_5050) & !x.wrapping_add(0x4646_4646_4646_4646))
                & HIGHS
                == HIGHS
    };
    if !digits(a) || !digits(b) {
        return None;
    }
    // Each byte's digit, then each pair's number at its first byte (at most 99: no byte
    // overflows).
    let (a, b) = (a - 0x3030_3030_3030_3030, b - 0x3030_3030_3030_3030);
    let (a, b) = (a * 10 + (a >> 8), b * 10 + (b >> 8));
    let at = |x: u64, byte: u32| (x >> (8 * byte)) & 0xFF;
    let spent = at(a, 0) * 60 + at(a, 3);
    let total = (at(a, 6) * 60 + at(b, 3)) * 60 + at(b, 6);
    Some(MoveTime {
        spent_ms: spent * 1000,
        total_ms: Some(total * 1000),
    })
}

/// What may follow a KIF move: blanks, a time column `( 0:01/00:00:01)`, the `+` mark of a
/// move with variations. Returns the time column's time, if it has one.
///
/// The column is read in one pass over its bytes (checked, and split at its first `/`): it
/// follows nearly every move of an archive, and searching it for `)` and `/` as chars cost
/// more than the move itself.
#[inline]
fn kif_trailer(s: &str) -> Result<Option<MoveTime>, (usize, &'static str)> {
    let b = s.as_bytes();
    // Nearly every move: ASCII blanks, the usual column, nothing after it. Answered here,
    // inlined into the move's reading, as the general reading answers it.
    let mut at = 0;
    while b.get(at) == Some(&b' ') {
        at += 1;
    }
    if b.len() == at + 16
        && b[at] == b'('
        && b[at + 15] == b')'
        && let Some(t) = usual_time_column(&b[at + 1..at + 15])
    {
        return Ok(Some(t));
    }
    kif_trailer_general(s)
}

/// [`kif_trailer`] for any shape of trailer.
#[inline(never)]
fn kif_trailer_general(s: &str) -> Result<Option<MoveTime>, (usize, &'static str)> {
    let b = s.as_bytes();
    let mut at = s.len() - trim_start(s).len();
    let mut time = None;
    // The usual column, ` m:ss/hh:mm:ss` between parentheses, holds no `)`: the one after it is
    // the first, as the search below would find.
    let usual = b
        .get(at + 15)
        .filter(|&&c| b[at] == b'(' && c == b')')
        .and_then(|_| usual_time_column(&b[at + 1..at + 15]));
    if let Some(t) = usual {
        time = Some(t);
        at += 16;
        at += s[at..].len() - trim_start(&s[at..]).len();
    } else if b.get(at) == Some(&b'(') {
        let open = at;
        let inner_at = open + 1;
        let close = memchr::memchr(b')', &b[inner_at..]).ok_or((open, "unclosed time column"))?;
        let inner = &b[inner_at..inner_at + close];
        if let Some(t) = usual_time_column(inner) {
            time = Some(t);
        } else if !inner
            .iter()
            .all(|&b| b.is_ascii_digit() || matches!(b, b'/' | b':' | b' ' | b'.'))
        {
            return Err((open, "a time column holds only digits, ':' and '/'"));
        } else {
            let (now, total) = match memchr::memchr(b'/', inner) {
                Some(i) => (&inner[..i], &inner[i + 1..]),
                None => (inner, &b""[..]),
            };
            time = clock_ms(now).map(|spent_ms| MoveTime {
                spent_ms,
                total_ms: clock_ms(total),
            });
        }
        at = inner_at + close + 1;
        at += s[at..].len() - trim_start(&s[at..]).len();
    }
    let ok = match b.get(at) {
        None => true,
        Some(b'+') => trim_start(&s[at + 1..]).is_empty(),
        Some(_) => false,
    };
    if ok {
        Ok(time)
    } else {
        Err((at, "unexpected text after the move"))
    }
}

/// Whether `s` starts with a move's destination digit ([`digit`]: ASCII or full-width, U+FF11
/// to U+FF19) or `同`, read from the bytes: decoding the first character cost some 28
/// instructions a move.
fn starts_like_a_move(s: &str) -> bool {
    matches!(
        s.as_bytes(),
        [b'1'..=b'9', ..] | [0xEF, 0xBC, 0x91..=0x99, ..]
    ) || s.starts_with('同')
}

fn kif_move(
    s: &str,
    line_no: u32,
    line: &str,
    at: usize,
    r: &mut Replay,
) -> Result<(), RecordError> {
    let err =
        |off: usize, reason: &str| RecordError::new(line_no, column_of(line, at + off), s, reason);
    let side = r.side_to_move();
    // A move starts with its destination (a digit) or 同; only other lines can be endings, so
    // most lines skip the comparisons with every ending word.
    let is_move = starts_like_a_move(s);
    for (word, kind) in KIF_ENDINGS.iter().filter(|_| !is_move) {
        if let Some(rest) = s.strip_prefix(word) {
            let time = kif_trailer(rest).map_err(|(o, reason)| err(word.len() + o, reason))?;
            let kind = kind.clone().unwrap_or(EndingKind::IllegalAction(!side));
            let first = r.ending.is_none();
            r.end(kind, line_no, word);
            if let (true, Some(t)) = (first, time) {
                r.set_time(t);
            }
            return Ok(());
        }
    }
    for word in KIF_OTHER_ENDINGS.iter().filter(|_| !is_move) {
        if let Some(rest) = s.strip_prefix(word) {
            let time = kif_trailer(rest).map_err(|(o, reason)| err(word.len() + o, reason))?;
            let first = r.ending.is_none();
            r.end(EndingKind::Other(word.to_string()), line_no, word);
            if let (true, Some(t)) = (first, time) {
                r.set_time(t);
            }
            return Ok(());
        }
    }
    // The column (a count of characters) only for an error.
    let col = || column_of(line, at);
    if r.position().is_none() {
        r.position_for_move(line_no, col(), s)?;
    }
    let same = r.last_to();
    let (w, used) = match kif_written_move(s, same) {
        Some(read) => read,
        None => written_move(s, same, false).map_err(|(o, reason)| err(o, reason))?,
    };
    let time = kif_trailer(&s[used..]).map_err(|(o, reason)| err(used + o, reason))?;
    let pos = match r.position() {
        Some(pos) => pos,
        None => r.position_for_move(line_no, col(), s)?,
    };
    if w.drop {
        if w.from.is_some() || w.promote.is_some() {
            return Err(err(0, "a drop (打) has no origin square and no promotion"));
        }
        if !w.kind.is_hand_kind() {
            return Err(err(
                0,
                "only an unpromoted piece other than the king can be dropped",
            ));
        }
        r.push(
            Move::Drop {
                kind: w.kind,
                to: w.to,
            },
            side,
            line_no,
            None,
        );
        if let Some(t) = time {
            r.set_time(t);
        }
        return Ok(());
    }
    let Some(from) = w.from else {
        return Err(err(
            used,
            "missing origin square such as (77), or 打 for a drop",
        ));
    };
    let promote = w.promote == Some(true);
    // The origin square and 成 fix the move; the piece named only describes it. Some exporters
    // name a promoted piece by its unpromoted name (角 for 馬), which still names the same
    // piece. Any other mismatch is kept as an impossible move for the adjudicator to judge.
    let forced = match pos.piece_at(from) {
        Some(p) if p.kind != w.kind && p.kind.unpromote() != w.kind => {
            Some(IllegalKind::Impossible)
        }
        _ if from == w.to => Some(IllegalKind::Impossible),
        _ => None,
    };
    r.push(
        Move::Normal {
            from,
            to: w.to,
            promote,
        },
        side,
        line_no,
        forced,
    );
    if let Some(t) = time {
        r.set_time(t);
    }
    Ok(())
}

/// All the moves on one KI2 line (`▲２六歩    △８四歩`).
fn ki2_moves(
    t: &str,
    line_no: u32,
    line: &str,
    lead: usize,
    r: &mut Replay,
) -> Result<(), RecordError> {
    // Marks with their byte offsets and character columns, counted once, so that a long
    // line of moves is read in linear time.
    let lead_col = column_of(line, lead);
    let marks: Vec<(usize, u32, char)> = t
        .char_indices()
        .enumerate()
        .filter(|(_, (_, c))| matches!(c, '▲' | '△' | '▽' | '▼' | '☗' | '☖'))
        .map(|(n, (i, c))| (i, lead_col + n as u32, c))
        .collect();
    for (k, &(start, mark_col, mark)) in marks.iter().enumerate() {
        let end = marks.get(k + 1).map_or(t.len(), |m| m.0);
        let body_at = start + mark.len_utf8();
        let text = t[body_at..end].trim_end();
        let col = mark_col + 1;
        let err = |off: usize, reason: &str| {
            RecordError::new(line_no, col + column_of(text, off) - 1, text, reason)
        };
        let color = if matches!(mark, '▲' | '▼' | '☗') {
            Color::Black
        } else {
            Color::White
        };
        let pos = r.position_for_move(line_no, col, text)?;
        let (w, used) =
            written_move(text, r.last_to(), true).map_err(|(o, reason)| err(o, reason))?;
        if used != text.len() {
            return Err(err(used, "unexpected text after the move"));
        }
        if color != pos.side_to_move() {
            return Err(err(0, "move by the side not to move"));
        }
        let mv = resolve_ki2(pos, color, &w).map_err(|reason| err(0, reason))?;
        r.push(mv, color, line_no, None);
    }
    Ok(())
}

/// Whether a line (before any `#`) is a `key：value` header: it does not start with a digit or
/// a move mark and has a full-width colon.
fn is_header_line(t: &str) -> bool {
    t.contains('：')
        && !t.starts_with(|c: char| {
            c.is_ascii_digit() || matches!(c, '▲' | '△' | '▽' | '▼' | '☗' | '☖' | '*' | '|')
        })
}

/// Finds the one legal move a KI2 move describes.
pub(crate) fn resolve_ki2(pos: &Position, color: Color, w: &Written) -> Result<Move, &'static str> {
    if w.drop {
        if w.promote.is_some() || !w.relative.is_empty() || !w.kind.is_hand_kind() {
            return Err("a drop (打) names an unpromoted piece and nothing else");
        }
        return Ok(Move::Drop {
            kind: w.kind,
            to: w.to,
        });
    }
    let promote = w.promote == Some(true);
    // The pieces of that kind that attack the destination, each move checked: the legal
    // moves there, without generating every legal move of the position (which cost some
    // 5,000 instructions a KI2 move).
    let mut cands: Vec<(Square, Move)> = pos
        .attackers_to(w.to, color)
        .filter(|&from| pos.piece_at(from).is_some_and(|pc| pc.kind == w.kind))
        .map(|from| {
            let mv = Move::Normal {
                from,
                to: w.to,
                promote,
            };
            (from, mv)
        })
        .filter(|&(_, mv)| pos.check_move(mv).is_ok())
        .collect();
    debug_assert_eq!(
        {
            let mut c = cands.clone();
            c.sort_by_key(|(f, _)| f.index());
            c
        },
        {
            let mut c: Vec<(Square, Move)> = pos
                .legal_moves()
                .iter()
                .filter_map(|&mv| match mv {
                    Move::Normal {
                        from,
                        to,
                        promote: p,
                    } if to == w.to
                        && p == promote
                        && pos.piece_at(from).is_some_and(|pc| pc.kind == w.kind) =>
                    {
                        Some((from, mv))
                    }
                    _ => None,
                })
                .collect();
            c.sort_by_key(|(f, _)| f.index());
            c
        },
        "the attackers' legal moves are the legal moves to the square"
    );
    if cands.is_empty() {
        // KI2 writes 打 only when a board move could also reach the square.
        if w.promote.is_none()
            && w.relative.is_empty()
            && w.kind.is_hand_kind()
            && pos.hand(color).has(w.kind)
            && pos.piece_at(w.to).is_none()
        {
            return Ok(Move::Drop {
                kind: w.kind,
                to: w.to,
            });
        }
        return Err("no legal move matches this move");
    }
    // Directions from the mover's side: forward is towards rank 1 for Black.
    let fwd = |from: Square| match color {
        Color::Black => (from.rank() as i8 - w.to.rank() as i8).signum(),
        Color::White => (w.to.rank() as i8 - from.rank() as i8).signum(),
    };
    for &c in &w.relative {
        match c {
            '上' | '行' | '入' => cands.retain(|(f, _)| fwd(*f) > 0),
            '引' => cands.retain(|(f, _)| fwd(*f) < 0),
            '寄' => cands.retain(|(f, _)| fwd(*f) == 0),
            '直' => cands.retain(|(f, _)| fwd(*f) > 0 && f.file() == w.to.file()),
            _ => {}
        }
    }
    for &c in &w.relative {
        if c != '右' && c != '左' {
            continue;
        }
        // Right from Black's seat is the lower file; from White's seat the higher.
        let rightmost = (c == '右') == (color == Color::Black);
        let best = if rightmost {
            cands.iter().map(|(f, _)| f.file()).min()
        } else {
            cands.iter().map(|(f, _)| f.file()).max()
        };
        cands.retain(|(f, _)| Some(f.file()) == best);
    }
    match cands.as_slice() {
        [(_, mv)] => Ok(*mv),
        [] => Err("no legal move matches this move and its relative words (右 左 直 上 引 寄)"),
        _ => Err("more than one legal move matches this move"),
    }
}

/// The ending a KI2 `まで…` line states; `side` is the side to move after the last move.
fn ki2_ending(text: &str, side: Color) -> EndingKind {
    let winner = if text.contains("先手の勝ち") || text.contains("下手の勝ち") {
        Some(Color::Black)
    } else if text.contains("後手の勝ち") || text.contains("上手の勝ち") {
        Some(Color::White)
    } else {
        None
    };
    if text.contains("千日手") {
        EndingKind::Sennichite
    } else if text.contains("持将棋") {
        EndingKind::Jishogi
    } else if text.contains("中断") {
        EndingKind::Chudan
    } else if text.contains("時間切れ") || text.contains("切れ負け") {
        EndingKind::TimeUp
    } else if text.contains("反則勝ち") {
        EndingKind::IllegalAction(!side)
    } else if text.contains("反則負け") {
        EndingKind::IllegalMove
    } else if text.contains("入玉勝ち") || text.contains("宣言勝ち") || text.contains("入玉宣言")
    {
        EndingKind::Kachi
    } else if let Some(w) = KIF_OTHER_ENDINGS.iter().find(|w| text.contains(**w)) {
        // 封じ手 and the like: the word, as KIF reads it, not the whole line.
        EndingKind::Other(w.to_string())
    } else if text.contains("不詰") {
        EndingKind::Fuzumi
    } else if text.contains("詰") {
        EndingKind::Tsumi
    } else if winner == Some(!side) {
        // The side that just moved wins: the side to move resigned (or was mated).
        EndingKind::Resign
    } else {
        EndingKind::Other(text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three-byte decoding is the standard library's, for every character of three bytes,
    /// and answers nothing for any other at that place.
    #[test]
    fn three_bytes_decode_as_the_standard_library_does() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let s = format!("a{c}b");
            let want = (c.len_utf8() == 3).then_some(c);
            assert_eq!(char3(s.as_bytes(), 1), want, "{c:?}");
        }
        assert_eq!(char3("歩".as_bytes(), 1), None);
        assert_eq!(char3("歩".as_bytes(), 3), None);
    }

    /// The byte test of a move's first character is the character test, for every character,
    /// alone and before more text, and for the empty line.
    #[test]
    fn a_move_starts_as_the_characters_say() {
        assert!(!starts_like_a_move(""));
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let want = c == '同' || digit(c).is_some();
            for s in [c.to_string(), format!("{c}六歩(77)")] {
                assert_eq!(starts_like_a_move(&s), want, "{s:?}");
            }
        }
    }

    /// The general reading of a time column: split at the first `/`, each side a clock.
    fn general(inner: &[u8]) -> Option<MoveTime> {
        let (now, total) = match inner.iter().position(|&b| b == b'/') {
            Some(i) => (&inner[..i], &inner[i + 1..]),
            None => (inner, &b""[..]),
        };
        clock_ms(now).map(|spent_ms| MoveTime {
            spent_ms,
            total_ms: clock_ms(total),
        })
    }

    /// Whenever the fixed-place reading of a KIF move answers, the general one answers the
    /// same; it answers for the usual shapes.
    #[test]
    fn the_usual_kif_move_reads_as_the_general_reading() {
        let same = Square::new(7, 6);
        let heads = [
            "７六", "１一", "９九", "同", "同　", "同 ", "7六", "７6", "０六", "７〇", "",
        ];
        let pieces = ["歩", "玉", "王", "龍", "竜", "と", "成香", "全", "x", ""];
        let marks = ["", "成", "不成", "不", "打", "生", "右"];
        let origins = [
            "", "(77)", "(11)", "(99)", "(00)", "(7)", "(７７)", "(77", "(77)x", " (77)",
        ];
        let mut usual = 0;
        for h in heads {
            for p in pieces {
                for m in marks {
                    for o in origins {
                        let s = format!("{h}{p}{m}{o}   ( 0:01/00:00:01)");
                        for same in [same, None] {
                            let general = written_move(&s, same, false);
                            if let Some(fast) = kif_written_move(&s, same) {
                                usual += 1;
                                let general = general.expect("the general reading answers");
                                assert_eq!(format!("{fast:?}"), format!("{general:?}"), "{s}");
                            }
                        }
                    }
                }
            }
        }
        assert!(usual > 1000, "{usual}");
    }

    /// The reading of the usual time column before it was read eight bytes at a time.
    /// 200,000 copies of the usual time column ` 0:01/00:00:01`, each byte replaced one time in
    /// `one_in` by a byte of `alphabet`, from a xorshift generator seeded with `seed`.
    fn time_columns_mutated(
        alphabet: &'static [u8],
        seed: u64,
        one_in: u64,
    ) -> impl Iterator<Item = [u8; 14]> {
        let mut state = seed;
        (0..200_000).map(move |_| {
            let mut inner = *b" 0:01/00:00:01";
            for b in inner.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if state.is_multiple_of(one_in) {
                    *b = alphabet[(state >> 8) as usize % alphabet.len()];
                }
            }
            inner
        })
    }

    fn usual_time_column_bytewise(inner: &[u8]) -> Option<MoveTime> {
        let &[
            m1,
            m2,
            b':',
            s1,
            s2,
            b'/',
            h1,
            h2,
            b':',
            n1,
            n2,
            b':',
            t1,
            t2,
        ] = inner
        else {
            return None;
        };
        let d = |b: u8| b.is_ascii_digit().then(|| u64::from(b - b'0'));
        let m1 = if m1 == b' ' { 0 } else { d(m1)? };
        let spent = (m1 * 10 + d(m2)?) * 60 + d(s1)? * 10 + d(s2)?;
        let total =
            ((d(h1)? * 10 + d(h2)?) * 60 + d(n1)? * 10 + d(n2)?) * 60 + d(t1)? * 10 + d(t2)?;
        Some(MoveTime {
            spent_ms: spent * 1000,
            total_ms: Some(total * 1000),
        })
    }

    /// The usual time column read eight bytes at a time answers as it did a byte at a time:
    /// for every byte at every place of usual columns, and for random columns.
    #[test]
    fn the_usual_time_column_reads_as_it_did_a_byte_at_a_time() {
        for base in [*b" 0:01/00:00:01", *b"59:59/99:59:59", *b"10:00/12:34:56"] {
            for at in 0..14 {
                for v in 0..=255u8 {
                    let mut inner = base;
                    inner[at] = v;
                    assert_eq!(
                        usual_time_column(&inner),
                        usual_time_column_bytewise(&inner),
                        "{inner:?}"
                    );
                }
            }
        }
        for inner in time_columns_mutated(b" 0123456789:/.x(\xff", 0x9e37_79b9_7f4a_7c15, 3) {
            assert_eq!(
                usual_time_column(&inner),
                usual_time_column_bytewise(&inner),
                "{inner:?}"
            );
        }
        for len in 0..20 {
            let inner = vec![b'1'; len];
            assert_eq!(
                usual_time_column(&inner),
                usual_time_column_bytewise(&inner)
            );
        }
    }

    /// Whenever the fixed-place reading of a time column answers, the general one answers the
    /// same; it answers for the usual shapes.
    #[test]
    fn the_usual_time_column_reads_as_the_general_reading() {
        for usual in [
            " 0:01/00:00:01",
            "10:59/12:34:56",
            "00:00/00:00:00",
            " 9:99/99:99:99",
        ] {
            let got = usual_time_column(usual.as_bytes());
            assert!(got.is_some(), "{usual}");
            assert_eq!(got, general(usual.as_bytes()), "{usual}");
        }
        for inner in time_columns_mutated(b" 0159:/.x", 0x2545_f491_4f6c_dd1d, 4) {
            if let Some(t) = usual_time_column(&inner) {
                assert_eq!(
                    Some(t),
                    general(&inner),
                    "{:?}",
                    std::str::from_utf8(&inner)
                );
            }
        }
    }
}
