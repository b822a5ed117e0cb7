//! KI2 moves (`▲７六歩△３四歩`, no origin squares): each found among the legal moves of the
//! position by its piece and relative words, and the ending a closing `まで…` line states.

use super::notation::{KIF_OTHER_ENDINGS, Written, written_move};
use crate::EndingKind;
use crate::RecordError;
use crate::error::column_of;
use crate::replay::Replay;
use shogi_rules::{Color, Move, Position, Square};

/// All the moves on one KI2 line (`▲２六歩    △８四歩`).
pub(super) fn ki2_moves(
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
pub(super) fn ki2_ending(text: &str, side: Color) -> EndingKind {
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
