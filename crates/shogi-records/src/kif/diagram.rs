//! The preamble of a KIF or KI2 record: the board diagram (framed rows, the hands, the side to
//! move) or the handicap (`手合割`), and the start position they give.

use super::notation::{kanji_number, piece_char};
use crate::RecordError;
use crate::replay::Replay;
use crate::setup::Setup;
use shogi_rules::{Color, Piece};

/// State while reading the lines before the first move.
pub(super) struct Preamble {
    pub(super) handicap: Option<(String, u32)>,
    pub(super) rows: Vec<(u32, [Option<Piece>; 9])>,
    pub(super) hands: [Option<(u32, [u8; 7])>; 2],
    pub(super) side: Option<Color>,
    /// A board diagram appears only inside `#` comment lines.
    pub(super) commented_diagram: bool,
}

/// The start position from the preamble: the diagram if there is one, else the handicap, else
/// the even game.
pub(super) fn start_replay(pre: &Preamble, line_no: u32) -> Result<Replay, RecordError> {
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

/// One framed row of a board diagram: `| ・v香 ...|一`, returning the nine cells (file 9
/// first) and the rank if written; on error, the byte offset and the reason.
#[allow(clippy::type_complexity)]
pub(super) fn board_row(
    t: &str,
) -> Result<([Option<Piece>; 9], Option<u8>), (usize, &'static str)> {
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
pub(super) fn hand_text(value: &str) -> Result<[u8; 7], (usize, &'static str)> {
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
