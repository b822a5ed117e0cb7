//! How a KIF or KI2 move is written (`７六歩(77)`, `同　銀成`, `５五角打`, KI2's relative words),
//! the ending words of KIF, and a numbered KIF line (a move or an ending, with its time) played
//! into the replay.

use super::times::kif_trailer;
use crate::EndingKind;
use crate::RecordError;
use crate::error::column_of;
use crate::replay::Replay;
use shogi_rules::{IllegalKind, Move, PieceKind, Square};

pub(super) fn kanji_number(c: char) -> Option<u8> {
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
pub(super) fn piece_char(c: char) -> Option<PieceKind> {
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
pub(super) fn written_move(
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

/// Whether `s` starts with a move's destination digit ([`digit`]: ASCII or full-width, U+FF11
/// to U+FF19) or `同`, read from the bytes: decoding the first character cost some 28
/// instructions a move.
fn starts_like_a_move(s: &str) -> bool {
    matches!(
        s.as_bytes(),
        [b'1'..=b'9', ..] | [0xEF, 0xBC, 0x91..=0x99, ..]
    ) || s.starts_with('同')
}

pub(super) fn kif_move(
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
}
