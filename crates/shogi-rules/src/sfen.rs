//! SFEN: parsing (strict, with typed errors) and formatting.

use crate::{Color, Hand, Piece, PieceKind, Position, Square};
use std::fmt;

/// The start position of an even game.
pub const STARTPOS: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";

/// What is wrong with an SFEN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SfenErrorReason {
    /// Not four space-separated fields (board, side, hand, move number).
    FieldCount,
    /// A character that is not a piece letter, digit, `+` or `/`.
    UnknownLetter,
    /// A rank that does not hold exactly nine squares.
    RankWidth,
    /// Not exactly nine ranks.
    RankCount,
    /// `+` before a piece that cannot promote (gold, king) or before nothing.
    CannotPromote,
    /// More pieces of a kind than a set has (19 pawns, 3 rooks ...), board and hands together.
    TooManyPieces,
    /// A side has no king.
    KingMissing,
    /// A side has more than one king.
    KingDoubled,
    /// A pawn or lance on its last rank, or a knight on its last two (行き所のない駒).
    DeadPiece,
    /// Two unpromoted pawns of one side on one file (二歩).
    TwoPawns,
    /// Side to move not `b` or `w`.
    BadSide,
    /// A malformed hand: unknown letter, a count of 0 or 1 written out, a count too large, a
    /// kind written twice, or a king.
    BadHand,
    /// Move number not a positive integer.
    BadMoveNumber,
}

impl fmt::Display for SfenErrorReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SfenErrorReason as R;
        f.write_str(match self {
            R::FieldCount => "expected four fields: board, side to move, hand, move number",
            R::UnknownLetter => "unknown piece letter",
            R::RankWidth => "a rank must hold exactly nine squares",
            R::RankCount => "the board must have exactly nine ranks",
            R::CannotPromote => "this piece cannot be promoted",
            R::TooManyPieces => "more pieces of this kind than a set has",
            R::KingMissing => "a side has no king",
            R::KingDoubled => "a side has more than one king",
            R::DeadPiece => "a piece that can never move again (pawn or lance on the last rank, knight on the last two)",
            R::TwoPawns => "two unpromoted pawns of one side on one file",
            R::BadSide => "side to move must be b or w",
            R::BadHand => "malformed hand",
            R::BadMoveNumber => "move number must be a positive integer",
        })
    }
}

/// An SFEN that is not a position: what is wrong and where (0-based byte column, the token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid sfen at column {column} ({token:?}): {reason}")]
pub struct SfenError {
    /// 0-based byte column in the SFEN text.
    pub column: usize,
    /// The offending token or character.
    pub token: String,
    /// What is wrong.
    pub reason: SfenErrorReason,
}

fn err(column: usize, token: &str, reason: SfenErrorReason) -> SfenError {
    SfenError {
        column,
        token: token.chars().take(24).collect(),
        reason,
    }
}

/// Splits on spaces, remembering where each field starts (at most five fields are kept: a
/// fifth only tells that there are too many).
fn fields(text: &str) -> ([(usize, &str); 5], usize) {
    let mut out = [(0, ""); 5];
    let mut n = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && n < 5 {
        if bytes[i] == b' ' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i] != b' ' {
            i += 1;
        }
        // Spaces are ASCII, so `start..i` falls on character boundaries.
        out[n] = (start, &text[start..i]);
        n += 1;
    }
    (out, n)
}

pub(crate) fn parse(text: &str, problem: bool) -> Result<Position, SfenError> {
    match parse_fast(text.as_bytes(), problem) {
        Some(pos) => Ok(pos),
        None => parse_checked(text, problem),
    }
}

/// What a byte of the board field is, for [`parse_fast`]: a piece letter is `PIECE` with the
/// unpromoted kind's index in the low three bits and `WHITE` for a lower-case letter; a digit is
/// `DIGIT` plus its value.
const PIECE: u8 = 0x20;
const WHITE: u8 = 0x08;
const DIGIT: u8 = 0x40;
const SLASH: u8 = 0x80;
const PLUS: u8 = 0x81;

static BOARD_BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let letters = *b"PLNSGBRK";
    let mut k = 0;
    while k < 8 {
        t[letters[k] as usize] = PIECE | k as u8;
        t[letters[k].to_ascii_lowercase() as usize] = PIECE | WHITE | k as u8;
        k += 1;
    }
    let mut d = 1;
    while d <= 9 {
        t[b'0' as usize + d] = DIGIT | d as u8;
        d += 1;
    }
    t[b'/' as usize] = SLASH;
    t[b'+' as usize] = PLUS;
    t
};

/// The promoted kind's index of an unpromoted kind's index (pawn..king), 0 where there is none.
const PROMOTED: [u8; 8] = [8, 9, 10, 11, 0, 12, 13, 0];
/// Pieces of each unpromoted kind in a set (kings are checked apart).
const MAX_COUNT: [u8; 8] = [18, 4, 4, 4, 4, 2, 2, 2];

/// One pass over an SFEN in its usual form (single spaces, a count of at most two digits in
/// hand, a move number of at most nine digits), building the position as it reads, with a table
/// per byte. It returns `None` for anything else, valid or not, and [`parse_checked`] then
/// decides and names the error: so it must never accept what `parse_checked` rejects, and must
/// build the same position (both are tested against each other).
fn parse_fast(b: &[u8], problem: bool) -> Option<Position> {
    let mut pos = Position::empty([Hand::EMPTY; 2], Color::Black, 1);
    let mut counts = [0u8; 8];
    let mut pawn_files = [0u16; 2];
    let mut rank = 0u8; // 0-based, 0 = a
    let mut file_used = 0u8; // squares filled so far in this rank
    let mut i = 0;
    loop {
        let c = *b.get(i)?;
        i += 1;
        let mut class = BOARD_BYTES[c as usize];
        if class & (PIECE | DIGIT | SLASH) == PIECE || class == PLUS {
            let promoted = class == PLUS;
            if promoted {
                class = BOARD_BYTES[*b.get(i)? as usize];
                i += 1;
                if class & (PIECE | DIGIT | SLASH) != PIECE {
                    return None;
                }
            }
            if file_used >= 9 {
                return None;
            }
            let base = (class & 7) as usize;
            let white = class & WHITE != 0;
            let file = 8 - file_used; // 0-based, 0 = file 1
            file_used += 1;
            let color = if white { Color::White } else { Color::Black };
            if base == 7 {
                if pos.king_square(color).is_some() {
                    return None;
                }
            } else {
                counts[base] += 1;
                if counts[base] > MAX_COUNT[base] {
                    return None;
                }
            }
            let kind = if promoted {
                match PROMOTED[base] {
                    0 => return None,
                    k => k as usize,
                }
            } else {
                base
            };
            if !problem && !promoted {
                // 行き所のない駒 and 二歩, where the piece stands.
                let last = if white { 8 - rank } else { rank };
                let dead = match base {
                    0 | 1 => last == 0,
                    2 => last <= 1,
                    _ => false,
                };
                if dead {
                    return None;
                }
                if base == 0 {
                    let files = &mut pawn_files[white as usize];
                    if *files >> file & 1 != 0 {
                        return None;
                    }
                    *files |= 1 << file;
                }
            }
            let kind = PieceKind::ALL[kind];
            pos.put(
                Piece::new(color, kind),
                Square::from_index_unchecked(file * 9 + rank),
            );
        } else if class & DIGIT != 0 {
            file_used += class & 15;
            if file_used > 9 {
                return None;
            }
        } else if class == SLASH {
            if file_used != 9 || rank == 8 {
                return None;
            }
            rank += 1;
            file_used = 0;
        } else if c == b' ' && file_used == 9 && rank == 8 {
            break;
        } else {
            return None;
        }
    }
    if !problem
        && (pos.king_square(Color::Black).is_none() || pos.king_square(Color::White).is_none())
    {
        return None;
    }

    let side = match (b.get(i)?, b.get(i + 1)?) {
        (b'b', b' ') => Color::Black,
        (b'w', b' ') => Color::White,
        _ => return None,
    };
    i += 2;

    let mut hands = [Hand::EMPTY; 2];
    if b.get(i)? == &b'-' {
        i += 1;
    } else {
        let mut seen = [0u8; 2];
        loop {
            let mut c = *b.get(i)?;
            let mut n = 1u8;
            if c.is_ascii_digit() {
                n = c - b'0';
                i += 1;
                c = *b.get(i)?;
                if c.is_ascii_digit() {
                    n = n * 10 + (c - b'0');
                    i += 1;
                    c = *b.get(i)?;
                }
                if n < 2 {
                    return None;
                }
            }
            i += 1;
            let class = BOARD_BYTES[c as usize];
            if class & (PIECE | DIGIT | SLASH) != PIECE || class & 7 == 7 {
                return None;
            }
            let base = (class & 7) as usize;
            let white = (class & WHITE != 0) as usize;
            if seen[white] >> base & 1 != 0 {
                return None;
            }
            seen[white] |= 1 << base;
            counts[base] = counts[base].checked_add(n)?;
            if counts[base] > MAX_COUNT[base] {
                return None;
            }
            hands[white] = hands[white].with_count(PieceKind::ALL[base], n);
            if b.get(i)? == &b' ' {
                break;
            }
        }
    }
    if b.get(i)? != &b' ' {
        return None;
    }
    i += 1;

    let digits = &b[i..];
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let mut move_number = 0u32;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        move_number = move_number * 10 + (d - b'0') as u32;
    }
    if move_number == 0 {
        return None;
    }
    pos.set_state(hands, side, move_number);
    pos.finish();
    Some(pos)
}

/// The parser that names what is wrong (and accepts the unusual spellings [`parse_fast`] leaves
/// to it: several spaces between fields, long counts or move numbers).
fn parse_checked(text: &str, problem: bool) -> Result<Position, SfenError> {
    use SfenErrorReason as R;
    let (f, n) = fields(text);
    if n != 4 {
        let (col, token) = if n == 5 { f[4] } else { (text.len(), "") };
        return Err(err(col, token, R::FieldCount));
    }
    let (board_col, board) = f[0];
    let mut squares: [Option<Piece>; 81] = [None; 81];
    let mut counts = [0u8; 8];
    let mut kings = [0u8; 2];
    // Files holding an unpromoted pawn, one bit a file, per colour: two pawns are caught where
    // the second one stands.
    let mut pawn_files = [0u16; 2];
    let bytes = board.as_bytes();
    // The token at byte `i` of length `len`, for error messages only.
    let token = |i: usize, len: usize| board.get(i..i + len).unwrap_or("?");
    let mut rank = 1u8;
    let mut file_used = 0u8; // squares filled so far in this rank
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'/' => {
                if file_used != 9 {
                    return Err(err(board_col + i, "/", R::RankWidth));
                }
                rank += 1;
                if rank > 9 {
                    return Err(err(board_col + i, "/", R::RankCount));
                }
                file_used = 0;
                i += 1;
            }
            b'1'..=b'9' => {
                file_used += c - b'0';
                if file_used > 9 {
                    return Err(err(board_col + i, token(i, 1), R::RankWidth));
                }
                i += 1;
            }
            _ => {
                let promoted = c == b'+';
                let (letter, len) = if promoted {
                    match bytes.get(i + 1) {
                        Some(&n) => (n, 2),
                        None => return Err(err(board_col + i, "+", R::CannotPromote)),
                    }
                } else {
                    (c, 1)
                };
                let Some(mut kind) = PieceKind::from_sfen_letter(letter) else {
                    let col = board_col + i + promoted as usize;
                    return Err(err(col, token(i, len), R::UnknownLetter));
                };
                if promoted {
                    match kind.promote() {
                        Some(k) => kind = k,
                        None => return Err(err(board_col + i, token(i, len), R::CannotPromote)),
                    }
                }
                let color = if letter.is_ascii_uppercase() {
                    Color::Black
                } else {
                    Color::White
                };
                if file_used >= 9 {
                    return Err(err(board_col + i, token(i, len), R::RankWidth));
                }
                let file = 9 - file_used;
                file_used += 1;
                let sq = Square::new(file, rank).expect("file and rank in range");
                let bad = |reason| Err(err(board_col + i, token(i, len), reason));
                match kind {
                    PieceKind::King => {
                        kings[color.index()] += 1;
                        if kings[color.index()] > 1 {
                            return bad(R::KingDoubled);
                        }
                    }
                    _ => {
                        let u = kind.unpromote();
                        counts[u.index()] += 1;
                        if counts[u.index()] > u.max_count() {
                            return bad(R::TooManyPieces);
                        }
                    }
                }
                if !problem {
                    // 行き所のない駒 and 二歩, checked where the piece stands.
                    let last = sq.relative_rank(color);
                    let dead = match kind {
                        PieceKind::Pawn | PieceKind::Lance => last == 1,
                        PieceKind::Knight => last <= 2,
                        _ => false,
                    };
                    if dead {
                        return bad(R::DeadPiece);
                    }
                    if kind == PieceKind::Pawn {
                        let bit = 1u16 << file;
                        if pawn_files[color.index()] & bit != 0 {
                            return bad(R::TwoPawns);
                        }
                        pawn_files[color.index()] |= bit;
                    }
                }
                squares[sq.index()] = Some(Piece::new(color, kind));
                i += len;
            }
        }
    }
    if file_used != 9 {
        return Err(err(
            board_col + board.len(),
            board.get(board.len().saturating_sub(1)..).unwrap_or(""),
            R::RankWidth,
        ));
    }
    if rank != 9 {
        return Err(err(board_col + board.len(), "", R::RankCount));
    }
    for color in Color::ALL {
        if kings[color.index()] == 0 && !problem {
            return Err(err(board_col, board, R::KingMissing));
        }
    }

    let (side_col, side) = f[1];
    let side = match side {
        "b" => Color::Black,
        "w" => Color::White,
        _ => return Err(err(side_col, side, R::BadSide)),
    };

    let (hand_col, hand_text) = f[2];
    let mut hands = [Hand::EMPTY; 2];
    if hand_text != "-" {
        let hb = hand_text.as_bytes();
        let mut seen = [[false; 7]; 2];
        let mut j = 0;
        while j < hb.len() {
            let start = j;
            let mut n: u32 = 0;
            while j < hb.len() && hb[j].is_ascii_digit() {
                n = n.saturating_mul(10).saturating_add((hb[j] - b'0') as u32);
                j += 1;
            }
            let digits = j - start;
            let col = hand_col + start;
            let Some(&lc) = hb.get(j) else {
                return Err(err(col, &hand_text[start..], R::BadHand));
            };
            let token = &hand_text[start..=j];
            let kind = match PieceKind::from_sfen_letter(lc) {
                Some(k) if k != PieceKind::King => k,
                _ => return Err(err(col, token, R::BadHand)),
            };
            if digits > 0 && n < 2 || digits > 2 {
                return Err(err(col, token, R::BadHand));
            }
            let n = if digits == 0 { 1 } else { n };
            let color = if lc.is_ascii_uppercase() {
                Color::Black
            } else {
                Color::White
            };
            if std::mem::replace(&mut seen[color.index()][kind.index()], true) {
                return Err(err(col, token, R::BadHand));
            }
            let total = counts[kind.index()] as u32 + n;
            if total > kind.max_count() as u32 {
                return Err(err(col, token, R::TooManyPieces));
            }
            counts[kind.index()] = total as u8;
            hands[color.index()] = hands[color.index()].with_count(kind, n as u8);
            j += 1;
        }
    }

    let (mn_col, mn) = f[3];
    let move_number: u32 = match mn.parse() {
        Ok(n) if n >= 1 && mn.bytes().all(|b| b.is_ascii_digit()) => n,
        _ => return Err(err(mn_col, mn, R::BadMoveNumber)),
    };

    let pos = Position::from_parts(&squares, hands, side, move_number);
    Ok(pos)
}

pub(crate) fn format(pos: &Position) -> String {
    let mut out = String::with_capacity(96);
    for rank in 1..=9 {
        if rank > 1 {
            out.push('/');
        }
        let mut empty = 0;
        for file in (1..=9).rev() {
            let sq = Square::new(file, rank).expect("on the board");
            match pos.piece_at(sq) {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        out.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    out.push_str(&p.to_string());
                }
            }
        }
        if empty > 0 {
            out.push((b'0' + empty) as char);
        }
    }
    out.push(' ');
    out.push(pos.side_to_move().sfen_char());
    out.push(' ');
    let mut any = false;
    // SFEN convention: Black's pieces first, each side from rook down to pawn.
    const ORDER: [PieceKind; 7] = [
        PieceKind::Rook,
        PieceKind::Bishop,
        PieceKind::Gold,
        PieceKind::Silver,
        PieceKind::Knight,
        PieceKind::Lance,
        PieceKind::Pawn,
    ];
    for color in Color::ALL {
        for kind in ORDER {
            let n = pos.hand(color).count(kind);
            if n == 0 {
                continue;
            }
            any = true;
            if n > 1 {
                out.push_str(&n.to_string());
            }
            let c = kind.sfen_letter();
            out.push(if color == Color::Black {
                c
            } else {
                c.to_ascii_lowercase()
            });
        }
    }
    if !any {
        out.push('-');
    }
    out.push(' ');
    out.push_str(&pos.move_number().to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast parser accepts only what the checked one accepts, and builds the same position.
    fn agree(text: &str) {
        for problem in [false, true] {
            let fast = parse_fast(text.as_bytes(), problem);
            let checked = parse_checked(text, problem);
            if let Some(fast) = fast {
                let checked = checked.unwrap_or_else(|e| {
                    panic!("fast accepts {text:?} (problem {problem}), checked says {e}")
                });
                assert_eq!(fast, checked, "{text:?}");
                assert_eq!(fast.hash(), checked.hash(), "{text:?}");
                assert_eq!(fast.checkers(), checked.checkers(), "{text:?}");
                assert_eq!(fast.to_sfen(), checked.to_sfen(), "{text:?}");
            }
        }
    }

    fn fixture() -> Vec<&'static str> {
        include_str!("../tests/data/cshogi_legal.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| l.split('\t').next())
            .collect()
    }

    #[test]
    fn fast_parser_takes_every_fixture_sfen() {
        let sfens = fixture();
        assert!(sfens.len() > 1000);
        for &s in &sfens {
            assert!(parse_fast(s.as_bytes(), false).is_some(), "{s}");
            agree(s);
        }
        agree(STARTPOS);
    }

    #[test]
    fn fast_parser_never_accepts_more_than_the_checked_one() {
        const BYTES: &[u8] = b"0123456789+/ -bwPLNSGBRKplnsgbrkx";
        let mut sfens: Vec<String> = fixture()
            .iter()
            .step_by(150)
            .map(|s| s.to_string())
            .collect();
        sfens.push(STARTPOS.to_owned());
        sfens.push("8k/9/9/9/9/9/9/9/K8 b 18P2L 1".to_owned());
        sfens.push("4k4/9/9/9/9/9/9/9/4K4 w 2r2b4g4s4n4l18p 100".to_owned());
        for s in &sfens {
            let b = s.as_bytes();
            for i in 0..=b.len() {
                for &c in BYTES {
                    let mut replaced = b.to_vec();
                    if i < b.len() {
                        replaced[i] = c;
                        agree(std::str::from_utf8(&replaced).expect("ascii"));
                    }
                    let mut inserted = b.to_vec();
                    inserted.insert(i, c);
                    agree(std::str::from_utf8(&inserted).expect("ascii"));
                }
                if i < b.len() {
                    let mut removed = b.to_vec();
                    removed.remove(i);
                    agree(std::str::from_utf8(&removed).expect("ascii"));
                }
            }
        }
    }
}
