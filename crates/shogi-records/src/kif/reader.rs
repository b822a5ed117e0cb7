//! The reader of a KIF or KI2 text, a line at a time. A line is, in the order tested: blank; a
//! `#` comment, a `*` comment or a `&` bookmark; a numbered KIF move or ending; `変化：N手`, the
//! start of a variation; `手数＝N` (BOD); the closing `まで…` line; a row of the board diagram,
//! its frame, or the side to move; KI2 moves; a `key：value` header (the hands of the diagram
//! among them). Anything else is an error.

use super::diagram::{Preamble, board_row, hand_text, start_replay};
use super::ki2::{ki2_ending, ki2_moves};
use super::notation::kif_move;
use crate::decode::{lines, trim_end, trim_start};
use crate::error::column_of;
use crate::replay::Replay;
use crate::{Format, Record, RecordError, Variation};
use shogi_rules::{Color, Position, Square};

pub(super) fn read_japanese(text: &str, format: Format) -> Result<Record, RecordError> {
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
    let mut reader = Reader::new(format);
    // Most files have no `#` at all: one search of the text instead of one a line.
    let any_hash = crate::decode::find_byte(text, b'#').is_some();
    for (line_no, raw) in lines(text) {
        reader.line(line_no, raw, any_hash)?;
    }
    reader.finish(text)
}

/// One line's text, with what an error on it needs.
struct Line<'a> {
    no: u32,
    /// The line without its trailing blanks and its trailing `#` comment.
    line: &'a str,
    /// `line` without its leading blanks; never empty.
    t: &'a str,
    /// The byte length of those leading blanks.
    lead: usize,
}

impl Line<'_> {
    /// An error at byte `at` of the text `t`.
    fn err(&self, at: usize, token: &str, reason: &str) -> RecordError {
        RecordError::new(self.no, column_of(self.line, self.lead + at), token, reason)
    }
}

/// What the reader knows between two lines.
struct Reader {
    format: Format,
    headers: Vec<(String, String)>,
    max_moves: Option<u32>,
    pre: Preamble,
    /// The line of play being read: the main line, then each variation in turn.
    replay: Option<Replay>,
    /// A KI2 main line's closing `まで…` line, which is its ending.
    ki2_end: Option<(u32, String)>,
    /// Moves already played before the diagram (BOD `手数＝12`): numbering continues from there.
    /// Within a variation, the plies before it.
    played_before: u64,
    /// Comments before the moves begin.
    comment: Option<String>,
    /// Once variations begin: the main line, and each variation read so far.
    lines_done: Option<(Replay, u64)>,
    variations: Vec<(usize, u64, Replay)>,
    /// After an error in a variation: its remaining lines are not read.
    skipping: bool,
}

impl Reader {
    fn new(format: Format) -> Reader {
        Reader {
            format,
            headers: Vec::new(),
            max_moves: None,
            pre: Preamble {
                handicap: None,
                rows: Vec::new(),
                hands: [None, None],
                side: None,
                commented_diagram: false,
            },
            replay: None,
            ki2_end: None,
            played_before: 0,
            comment: None,
            lines_done: None,
            variations: Vec::new(),
            skipping: false,
        }
    }

    /// Reads one line: tells what it is, and hands it to its step.
    fn line(&mut self, line_no: u32, raw: &str, any_hash: bool) -> Result<(), RecordError> {
        let full = trim_end(raw);
        let body = trim_start(full);
        if body.is_empty() || self.comment_line(body) {
            return Ok(());
        }
        let Some(l) = text_of(line_no, full, body, any_hash) else {
            return Ok(());
        };
        let t = l.t;
        // A numbered line (a KIF move or ending) first: most lines are, and none of the
        // tests below can match a line that starts with an ASCII digit.
        if t.as_bytes()[0].is_ascii_digit() {
            return self.numbered_line(&l);
        }
        if let Some(rest) = t.strip_prefix("変化：").or_else(|| t.strip_prefix("変化:")) {
            return self.variation(&l, rest);
        }
        if t.starts_with("手数-") || t.starts_with("手数―") {
            return Ok(());
        }
        if let Some(rest) = t.strip_prefix("手数＝") {
            return self.move_count(&l, rest);
        }
        if t.starts_with("まで") {
            self.closing_line(&l);
            return Ok(());
        }
        let first = t.chars().next().unwrap_or(' ');
        if first == '|' {
            return self.board_row(&l);
        }
        if t.starts_with("+-") || t.starts_with("+―") || (first == '９' && t.contains('１')) {
            // The diagram's frame and its file numbers.
            return Ok(());
        }
        match t {
            "先手番" | "下手番" => {
                self.pre.side = Some(Color::Black);
                return Ok(());
            }
            "後手番" | "上手番" => {
                self.pre.side = Some(Color::White);
                return Ok(());
            }
            _ => {}
        }
        if matches!(first, '▲' | '△' | '▽' | '▼' | '☗' | '☖') {
            let r = started(&mut self.replay, &self.pre, l.no)?;
            return ki2_moves(t, l.no, l.line, l.lead, r);
        }
        let colon = t
            .find('：')
            .map(|i| (i, '：'.len_utf8()))
            .or_else(|| t.find(':').map(|i| (i, 1)));
        if let Some((i, w)) = colon {
            return self.header(&l, i, w);
        }
        let reason = if self.replay.as_ref().is_some_and(|r| r.ending.is_some()) {
            "unrecognised line after the ending"
        } else {
            "unrecognised line (not a header, board row, move, ending or comment)"
        };
        Err(l.err(0, t, reason))
    }

    /// A line that says nothing of the game: a `#` comment (noting a board diagram left in
    /// one), a `*` comment (kept), a `&` bookmark. Whether `body` was one.
    fn comment_line(&mut self, body: &str) -> bool {
        if body.starts_with('#') {
            if body.contains('|') || body.contains("の持駒") {
                self.pre.commented_diagram = true;
            }
            return true;
        }
        if let Some(c) = body.strip_prefix('*') {
            // The comment keeps its own leading blanks (after the `*`); only the line's trailing
            // ones go, which `full` has lost already.
            match self.replay.as_mut() {
                Some(r) => r.comment(c),
                None => crate::add_comment(&mut self.comment, c),
            }
            return true;
        }
        // A bookmark (しおり), a name for the position, not a comment.
        body.starts_with('&')
    }

    /// A numbered line: a KIF move or an ending. The numbers count up from 1 (after a BOD
    /// diagram's `手数＝N`, from N + 1) with no gap, ending lines included.
    fn numbered_line(&mut self, l: &Line<'_>) -> Result<(), RecordError> {
        let t = l.t;
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
            return Err(l.err(digits, t, "expected a blank after the move number"));
        }
        let at = l.lead + digits + (rest.len() - rest_trim.len());
        let r = started(&mut self.replay, &self.pre, l.no)?;
        if self.skipping {
            return Ok(());
        }
        // Ending lines take a number too.
        let expected = self.played_before + (r.moves.len() + r.ending_lines()) as u64 + 1;
        let result = if number != expected {
            Err(RecordError::new(
                l.no,
                column_of(l.line, l.lead),
                t,
                format!("move number {} where {expected} was expected", &t[..digits]),
            ))
        } else {
            kif_move(rest_trim, l.no, l.line, at, r)
        };
        match result {
            Ok(()) => Ok(()),
            // A variation that cannot be read does not lose the main line: it is reported
            // as a header and read up to that move.
            Err(e) if self.lines_done.is_some() => {
                self.headers
                    .push(("variation_error".to_string(), e.to_string()));
                self.skipping = true;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// `変化：N手`: the lines that follow are an alternative to ply N of the latest line read
    /// so far that has one ([`branch_point`]). The line read until now is put aside.
    fn variation(&mut self, l: &Line<'_>, rest: &str) -> Result<(), RecordError> {
        let t = l.t;
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let ply: u64 = digits.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
            l.err(
                "変化：".len(),
                t,
                "expected the ply of the variation (変化：12手)",
            )
        })?;
        let Some(mut current) = self.replay.take() else {
            return Err(l.err(0, t, "a variation before any move"));
        };
        // A KI2 main line's `まで` line is its ending, which a variation may replace (tsshogi
        // writes `変化：122手` after `まで121手で先手の勝ち`): it ends the main line now.
        if self.lines_done.is_none()
            && let Some((end_line, text)) = self.ki2_end.take()
        {
            let side = current.side_to_move();
            current.end(ki2_ending(&text, side), end_line, &text);
        }
        match self.lines_done {
            None => self.lines_done = Some((current, self.played_before)),
            Some(_) => {
                let last = self
                    .variations
                    .last_mut()
                    .expect("a variation is being read");
                last.2 = current;
            }
        }
        let (main, main_before) = self.lines_done.as_ref().expect("set above");
        let (parent, start, before_to) = branch_point(main, *main_before, &self.variations, ply)
            .map_err(|reason| l.err(0, t, &reason))?;
        let mut r = Replay::new(start);
        r.before_to = before_to;
        // A placeholder until the variation's lines are read.
        self.variations
            .push((parent, ply, Replay::new(r.start.clone())));
        self.replay = Some(r);
        self.played_before = ply - 1;
        self.skipping = false;
        Ok(())
    }

    /// BOD: `手数＝12  ▲７六歩  まで`, the number of moves that led to the diagram.
    fn move_count(&mut self, l: &Line<'_>, rest: &str) -> Result<(), RecordError> {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        self.played_before = digits
            .parse()
            .map_err(|_| l.err("手数＝".len(), l.t, "expected a move count after 手数＝"))?;
        self.headers
            .push(("手数".to_string(), rest.trim().to_string()));
        Ok(())
    }

    /// The closing `まで…` line: the header `summary`; in KI2 also the ending.
    fn closing_line(&mut self, l: &Line<'_>) {
        let t = l.t;
        match (self.format, self.lines_done.is_some(), self.replay.as_mut()) {
            // In a KI2 variation, the variation's own ending (tsshogi writes one each).
            (Format::Ki2, true, Some(r)) => {
                if !self.skipping {
                    let side = r.side_to_move();
                    r.end(ki2_ending(t, side), l.no, t);
                }
            }
            (Format::Ki2, _, _) => {
                self.headers.push(("summary".to_string(), t.to_string()));
                self.ki2_end = Some((l.no, t.to_string()));
            }
            _ => self.headers.push(("summary".to_string(), t.to_string())),
        }
    }

    /// One of the nine framed rows of the board diagram, in order, before any move.
    fn board_row(&mut self, l: &Line<'_>) -> Result<(), RecordError> {
        let t = l.t;
        if self.replay.is_some() {
            return Err(l.err(0, t, "board diagram after the moves began"));
        }
        let row = board_row(t).map_err(|(at, reason)| l.err(at, t, reason))?;
        if self.pre.rows.len() >= 9 {
            return Err(l.err(0, t, "more than nine rows in the board diagram"));
        }
        if let Some(rank) = row.1
            && rank as usize != self.pre.rows.len() + 1
        {
            return Err(l.err(0, t, "board rows out of order"));
        }
        self.pre.rows.push((l.no, row.0));
        Ok(())
    }

    /// A `key：value` header, its colon `w` bytes at `i`: a side's hand (part of the diagram,
    /// before any move), or a header kept as written (`手合割` and `最大手数` also read).
    fn header(&mut self, l: &Line<'_>, i: usize, w: usize) -> Result<(), RecordError> {
        let t = l.t;
        let key = crate::decode::trim(&t[..i]);
        let value = crate::decode::trim(&t[i + w..]);
        match key {
            "先手の持駒" | "下手の持駒" | "後手の持駒" | "上手の持駒" => {
                if self.replay.is_some() {
                    return Err(l.err(0, t, "pieces in hand after the moves began"));
                }
                let color = if key.starts_with("先手") || key.starts_with("下手") {
                    Color::Black
                } else {
                    Color::White
                };
                let hand =
                    hand_text(value).map_err(|(at, reason)| l.err(i + w + at, value, reason))?;
                self.pre.hands[color.index()] = Some((l.no, hand));
            }
            _ => {
                if key == "手合割" {
                    // A handicap's name holds no `#`: what follows is a comment.
                    let name = crate::decode::trim(value.split('#').next().unwrap_or(""));
                    self.pre.handicap = Some((name.to_string(), l.no));
                }
                if key == "最大手数" {
                    self.max_moves = Some(
                        value
                            .parse::<u32>()
                            .map_err(|_| l.err(i + w, value, "move cap must be a whole number"))?,
                    );
                }
                self.headers.push((key.to_string(), value.to_string()));
            }
        }
        Ok(())
    }

    /// The record, once every line is read: the main line (with a KI2 closing line as its
    /// ending) and the variations.
    fn finish(self, text: &str) -> Result<Record, RecordError> {
        let Reader {
            format,
            mut headers,
            max_moves,
            pre,
            replay,
            ki2_end,
            comment,
            lines_done,
            mut variations,
            ..
        } = self;
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
}

/// The text of a line that is not a comment: without a `#` comment after the text (hand-written
/// files have them), except in a header line (`先手：Sente-san#3`), whose value keeps it as every
/// other reader does. `None` when nothing is left. `any_hash`: whether the file has a `#` at all.
fn text_of<'a>(no: u32, full: &'a str, body: &'a str, any_hash: bool) -> Option<Line<'a>> {
    // Searched for only in a file that has one: `filter` after the search still searched every
    // line.
    let hash_at = if any_hash {
        crate::decode::find_byte(full, b'#')
    } else {
        None
    };
    let hash_at = hash_at.filter(|&i| !is_header_line(trim_start(&full[..i])));
    // Without a `#`, the line is `full` and its text `body`, trimmed already.
    let (line, t) = match hash_at {
        Some(i) => {
            let line = trim_end(&full[..i]);
            (line, trim_start(line))
        }
        None => (full, body),
    };
    (!t.is_empty()).then(|| Line {
        no,
        line,
        t,
        lead: line.len() - t.len(),
    })
}

/// The line of play being read, begun from the preamble's start position at its first move.
fn started<'r>(
    replay: &'r mut Option<Replay>,
    pre: &Preamble,
    line_no: u32,
) -> Result<&'r mut Replay, RecordError> {
    if replay.is_none() {
        *replay = Some(start_replay(pre, line_no)?);
    }
    Ok(replay.as_mut().expect("begun above"))
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

/// Whether a line (before any `#`) is a `key：value` header: it does not start with a digit or
/// a move mark and has a full-width colon.
fn is_header_line(t: &str) -> bool {
    t.contains('：')
        && !t.starts_with(|c: char| {
            c.is_ascii_digit() || matches!(c, '▲' | '△' | '▽' | '▼' | '☗' | '☖' | '*' | '|')
        })
}
