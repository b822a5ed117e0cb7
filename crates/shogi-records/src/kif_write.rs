//! Writing KIF and KI2: headers, the start position (手合割 or a board diagram), moves with
//! times and comments, the ending in each format's words, and KIF variations.

use crate::kif::{KIF_OTHER_ENDINGS, Written, resolve_ki2};
use crate::setup::{HANDICAPS, Setup};
use crate::{Ending, EndingKind, MoveTime, Record, RecordMove, WriteError};
use shogi_rules::{Color, Move, PieceKind, Position, Square};
use std::fmt::Write as _;

/// Header keys written from other formats' names (CSA `$EVENT` is KIF `棋戦` ...).
const KEY_NAMES: &[(&str, &str)] = &[
    ("EVENT", "棋戦"),
    ("SITE", "場所"),
    ("START_TIME", "開始日時"),
    ("END_TIME", "終了日時"),
    ("TIME_LIMIT", "持ち時間"),
    // CSA V3.0's time control, for both sides or for one.
    ("TIME", "持ち時間"),
    ("TIME+", "先手持ち時間"),
    ("TIME-", "後手持ち時間"),
    ("OPENING", "戦型"),
];

/// Headers a writer states itself, from the record's fields, or that describe the file read
/// rather than the game.
const OWN_KEYS: &[&str] = &[
    "N+",
    "N-",
    "先手",
    "後手",
    "下手",
    "上手",
    "V",
    "手合割",
    "手数",
    "summary",
    "later_ending",
    "MAX_MOVES",
    "Max_Moves",
    "最大手数",
];

/// The KIF name of a piece (`歩`, `成銀`, `龍`).
pub(crate) fn kif_piece(kind: PieceKind) -> &'static str {
    match kind {
        PieceKind::Pawn => "歩",
        PieceKind::Lance => "香",
        PieceKind::Knight => "桂",
        PieceKind::Silver => "銀",
        PieceKind::Gold => "金",
        PieceKind::Bishop => "角",
        PieceKind::Rook => "飛",
        PieceKind::King => "玉",
        PieceKind::ProPawn => "と",
        PieceKind::ProLance => "成香",
        PieceKind::ProKnight => "成桂",
        PieceKind::ProSilver => "成銀",
        PieceKind::Horse => "馬",
        PieceKind::Dragon => "龍",
    }
}

/// One character for a piece on a board diagram (`杏` for 成香 ...).
fn diagram_piece(kind: PieceKind) -> char {
    match kind {
        PieceKind::ProLance => '杏',
        PieceKind::ProKnight => '圭',
        PieceKind::ProSilver => '全',
        k => kif_piece(k).chars().next().unwrap_or('・'),
    }
}

const FILES: [char; 9] = ['１', '２', '３', '４', '５', '６', '７', '８', '９'];
const RANKS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

fn square_text(sq: Square, out: &mut String) {
    out.push(FILES[sq.file() as usize - 1]);
    out.push(RANKS[sq.rank() as usize - 1]);
}

/// A clock as KIF writes it: `m:ss` for a move, `hh:mm:ss` for a total.
fn clock(ms: u64, hours: bool) -> String {
    let s = ms / 1000;
    if hours {
        format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{:2}:{:02}", s / 60, s % 60)
    }
}

/// The standard handicap (手合割, `平手` for the even game) a position is the start of, if any.
pub(crate) fn handicap_of(start: &Position) -> Option<&'static str> {
    if start.same_position(&Position::startpos()) {
        return Some("平手");
    }
    HANDICAPS.iter().map(|(name, _)| *name).find(|name| {
        Setup::handicap(name)
            .and_then(|s| s.to_position().ok())
            .is_some_and(|pos| pos.same_position(start))
    })
}

/// The record's headers under KIF's (and JKF's) names, one line each: the players (`先手`,
/// `後手`, or `下手`, `上手` in a handicap game), CSA keys KIF has a name for, every other
/// header under its own key, and the move cap as `最大手数`.
pub(crate) fn kif_headers(record: &Record) -> Vec<(String, String)> {
    let find = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| record.header(k))
            .map(|v| v.replace(['\r', '\n'], " "))
    };
    let handicapped = handicap_of(&record.start).is_some_and(|h| h != "平手");
    let (black, white) = if handicapped {
        ("下手", "上手")
    } else {
        ("先手", "後手")
    };
    let mut out = Vec::new();
    if let Some(n) = find(&["N+", "先手", "下手"]) {
        out.push((black.to_string(), n));
    }
    if let Some(n) = find(&["N-", "後手", "上手"]) {
        out.push((white.to_string(), n));
    }
    for (k, v) in &record.headers {
        if OWN_KEYS.contains(&k.as_str()) {
            continue;
        }
        let key = KEY_NAMES
            .iter()
            .find(|(csa, _)| csa == k)
            .map_or(k.as_str(), |(_, kif)| kif);
        out.push((key.to_string(), v.replace(['\r', '\n'], " ")));
    }
    if let Some(cap) = record.max_moves {
        out.push(("最大手数".to_string(), cap.to_string()));
    }
    out
}

/// Whether a KIF reader reads `key：value` back as this header: a key that does not look like
/// a move, a board row, a comment or another kind of line, and holds no colon or `#`.
fn kif_key_ok(key: &str) -> bool {
    // The reader trims the line and the key.
    let key = key.trim();
    let Some(first) = key.chars().next() else {
        return false;
    };
    !(first.is_ascii_digit()
        || ('０'..='９').contains(&first)
        || "|+*#&▲△▽▼☗☖変".contains(first)
        || key.starts_with("手数")
        || key.starts_with("まで")
        || key.contains([':', '：', '#'])
        || key.ends_with("手番")
        || key.ends_with("の持駒"))
}

/// Writes the lines before the moves: headers, the start position, the record's comments.
/// A header KIF cannot say as `key：value` is written as a `#` comment line, so that it is in
/// the file even though a reader skips it. A `#` in a value is written as it is: readers
/// (tsshogi, json-kifu-format, cshogi, python-shogi) keep it as part of the value.
fn preamble(record: &Record, out: &mut String) {
    for (k, v) in kif_headers(record) {
        if kif_key_ok(&k) {
            let _ = writeln!(out, "{k}：{v}");
        } else {
            let _ = writeln!(out, "#{k}：{v}");
        }
    }
    match handicap_of(&record.start) {
        Some(h) => {
            let _ = writeln!(out, "手合割：{h}");
        }
        None => diagram(&record.start, out),
    }
    comment(&record.comment, out);
}

/// A board diagram (BOD) with both hands and the side to move.
fn diagram(pos: &Position, out: &mut String) {
    let hand = |color: Color, out: &mut String| {
        let h = pos.hand(color);
        let name = if color == Color::Black {
            "先手の持駒："
        } else {
            "後手の持駒："
        };
        out.push_str(name);
        if h.is_empty() {
            out.push_str("なし");
        }
        for kind in PieceKind::HAND.into_iter().rev() {
            let n = h.count(kind);
            if n == 0 {
                continue;
            }
            out.push_str(kif_piece(kind));
            if n > 1 {
                out.push_str(&kanji_count(n));
            }
            out.push('　');
        }
        out.push('\n');
    };
    hand(Color::White, out);
    out.push_str("  ９ ８ ７ ６ ５ ４ ３ ２ １\n+---------------------------+\n");
    for rank in 1..=9u8 {
        out.push('|');
        for file in (1..=9u8).rev() {
            match Square::new(file, rank).and_then(|sq| pos.piece_at(sq)) {
                None => out.push_str(" ・"),
                Some(p) => {
                    out.push(if p.color == Color::Black { ' ' } else { 'v' });
                    out.push(diagram_piece(p.kind));
                }
            }
        }
        out.push('|');
        out.push(RANKS[rank as usize - 1]);
        out.push('\n');
    }
    out.push_str("+---------------------------+\n");
    hand(Color::Black, out);
    out.push_str(if pos.side_to_move() == Color::Black {
        "先手番\n"
    } else {
        "後手番\n"
    });
}

fn kanji_count(n: u8) -> String {
    let unit = |d: u8| RANKS[d as usize - 1];
    match n {
        0 => String::new(),
        1..=9 => unit(n).to_string(),
        10 => "十".to_string(),
        _ => format!("十{}", unit(n - 10)),
    }
}

fn comment(c: &Option<String>, out: &mut String) {
    for line in crate::comment_lines(c) {
        out.push('*');
        out.push_str(line.trim_end_matches('\r'));
        out.push('\n');
    }
}

/// The side to move after `moves` from `start`.
fn side_after(start: &Position, moves: &[RecordMove]) -> Color {
    moves.last().map_or(start.side_to_move(), |m| !m.color)
}

/// The KIF word for an ending: KIF's own words where it has one; a move cap and an agreed draw
/// are `持将棋` (the word KIF exporters use), a perpetual check `千日手`, an error `中断`.
fn kif_ending_word(kind: &EndingKind, side: Color) -> &str {
    match kind {
        EndingKind::Resign => "投了",
        EndingKind::Sennichite | EndingKind::OuteSennichite => "千日手",
        EndingKind::Tsumi => "詰み",
        EndingKind::Kachi => "入玉勝ち",
        EndingKind::Jishogi | EndingKind::MaxMoves | EndingKind::Hikiwake => "持将棋",
        EndingKind::IllegalMove | EndingKind::FailedKachi => "反則負け",
        EndingKind::IllegalAction(c) if *c == side => "反則負け",
        EndingKind::IllegalAction(_) => "反則勝ち",
        EndingKind::TimeUp => "切れ負け",
        EndingKind::Chudan | EndingKind::Error => "中断",
        EndingKind::Fuzumi => "不詰",
        EndingKind::Other(w) if KIF_OTHER_ENDINGS.contains(&w.as_str()) => w,
        EndingKind::Other(_) => "中断",
    }
}

/// Running totals per side, for times that do not state theirs.
struct Totals([u64; 2]);

impl Totals {
    fn column(&mut self, color: Color, t: &MoveTime) -> String {
        let slot = &mut self.0[color.index()];
        *slot += t.spent_ms;
        let total = t.total_ms.unwrap_or(*slot);
        *slot = total;
        format!("({}/{})", clock(t.spent_ms, false), clock(total, true))
    }
}

/// One KIF line of play: `number move (time)`, comments, and the ending.
#[allow(clippy::too_many_arguments)]
fn kif_line(
    start: &Position,
    first_ply: u32,
    prefix: &[RecordMove],
    moves: &[RecordMove],
    ending: Option<&Ending>,
    totals: &mut Totals,
    out: &mut String,
) {
    let mut pos = Some(start.clone());
    let mut last_to = prefix.last().map(|m| m.mv.to());
    for (i, m) in moves.iter().enumerate() {
        let mut text = String::new();
        match m.mv {
            Move::Drop { kind, to } => {
                square_text(to, &mut text);
                text.push_str(kif_piece(kind));
                text.push('打');
            }
            Move::Normal { from, to, promote } => {
                if last_to == Some(to) {
                    text.push_str("同　");
                } else {
                    square_text(to, &mut text);
                }
                let kind = pos
                    .as_ref()
                    .and_then(|p| p.piece_at(from))
                    .map_or(PieceKind::Pawn, |p| p.kind);
                text.push_str(kif_piece(kind));
                if promote {
                    text.push('成');
                }
                let _ = write!(text, "({}{})", from.file(), from.rank());
            }
        }
        last_to = Some(m.mv.to());
        let width = text.chars().count();
        let _ = write!(out, "{:>4} {text}", first_ply as usize + i);
        if let Some(t) = &m.time {
            let pad = 12usize.saturating_sub(width);
            let _ = write!(out, "{:pad$}{}", "", totals.column(m.color, t));
        }
        out.push('\n');
        comment(&m.comment, out);
        if m.legal.is_err() || pos.as_mut().is_some_and(|p| p.play(m.mv).is_err()) {
            pos = None;
        }
    }
    if let Some(e) = ending {
        let side = side_after(start, moves);
        let word = kif_ending_word(&e.kind, side);
        let _ = write!(out, "{:>4} {word}", first_ply as usize + moves.len());
        if let Some(t) = &e.time {
            let pad = 12usize.saturating_sub(word.chars().count());
            let _ = write!(out, "{:pad$}{}", "", totals.column(side, t));
        }
        out.push('\n');
        comment(&e.comment, out);
    }
}

/// The moves of line `index` (0: main) from its start, with those of its ancestors before it.
pub(crate) fn line_moves(record: &Record, index: usize) -> Vec<RecordMove> {
    if index == 0 {
        return record.moves.clone();
    }
    let v = &record.variations[index - 1];
    let mut moves = line_moves(record, v.parent);
    moves.truncate(v.ply as usize - 1);
    moves.extend(v.moves.iter().cloned());
    moves
}

/// The variations of line `parent`, the latest ply first, each followed by its own: the order
/// in which a KIF reader attaches each `変化：` block to the line it branches from.
fn variation_order(record: &Record, parent: usize, out: &mut Vec<usize>) {
    let mut children: Vec<usize> = (1..=record.variations.len())
        .filter(|&i| record.variations[i - 1].parent == parent)
        .collect();
    children.sort_by_key(|&i| std::cmp::Reverse(record.variations[i - 1].ply));
    for c in children {
        out.push(c);
        variation_order(record, c, out);
    }
}

/// Writes a record as KIF (text; [`crate::write`] encodes it): headers in KIF's names, `手合割`
/// or a board diagram, numbered moves with `( m:ss/hh:mm:ss)` time columns (a side's total is
/// summed from the moves' times when the record does not state it), `*` comments, the ending in
/// KIF's words (a move cap is `持将棋`, as KIF exporters write it; a perpetual check `千日手`)
/// followed by the closing `まで…` line ([`summary_line`]), and the variations as `変化：N手`
/// blocks.
pub fn write_kif(record: &Record) -> String {
    let mut out = String::from("# KIF written by shogi-arbiter\n");
    preamble(record, &mut out);
    out.push_str("手数----指手---------消費時間--\n");
    kif_line(
        &record.start,
        1,
        &[],
        &record.moves,
        record.ending.as_ref(),
        &mut Totals([0; 2]),
        &mut out,
    );
    // The closing line Kifu for Windows writes, from which cshogi's KIF reader takes the result.
    if let Some(e) = &record.ending {
        let side = side_after(&record.start, &record.moves);
        out.push_str(&summary_line(&e.kind, record.moves.len(), side));
        out.push('\n');
    }
    let mut order = Vec::new();
    variation_order(record, 0, &mut order);
    for i in order {
        let v = &record.variations[i - 1];
        let mut prefix = line_moves(record, v.parent);
        prefix.truncate(v.ply as usize - 1);
        let Some(start) = replay_to(&record.start, &prefix) else {
            continue;
        };
        let mut totals = Totals([0; 2]);
        for m in &prefix {
            if let Some(t) = &m.time {
                totals.column(m.color, t);
            }
        }
        let _ = writeln!(out, "\n変化：{}手", v.ply);
        kif_line(
            &start,
            v.ply,
            &prefix,
            &v.moves,
            v.ending.as_ref(),
            &mut totals,
            &mut out,
        );
    }
    out
}

/// The position after `moves`, or `None` if one of them is illegal.
pub(crate) fn replay_to(start: &Position, moves: &[RecordMove]) -> Option<Position> {
    let mut pos = start.clone();
    for m in moves {
        m.legal.as_ref().ok()?;
        pos.play(m.mv).ok()?;
    }
    Some(pos)
}

/// The relative words (右 左 直, 上 引 寄) that tell a move from the others of its kind to the
/// same square, by the JSA's rules as Kifu for Windows and ShogiHome (tsshogi) write them:
/// the candidates are every piece of that kind that attacks the square, a pinned piece
/// included (readers count it, and a reader that sees two golds reads a bare `金` as the other
/// one); 直 for a piece moving straight forward when another moves forward too (never for a
/// dragon or horse, which take 右 or 左), 右 or 左 by the side it comes from where another
/// moves in the same vertical direction, and 上 引 寄 by its vertical direction where another
/// comes from the same side or nothing else tells them apart.
fn relative_words(pos: &Position, from: Square, to: Square) -> Vec<char> {
    let Some(piece) = pos.piece_at(from) else {
        return Vec::new();
    };
    let color = piece.color;
    // Directions from the mover's seat: +1 forward or to its right.
    let dirs = |f: Square| {
        let v = (f.rank() as i8 - to.rank() as i8).signum();
        let h = (f.file() as i8 - to.file() as i8).signum();
        match color {
            Color::Black => (v, h),
            Color::White => (-v, -h),
        }
    };
    let others: Vec<(i8, i8)> = pos
        .attackers_to(to, color)
        .filter(|&sq| sq != from && pos.piece_at(sq) == Some(piece))
        .map(dirs)
        .collect();
    let (my_v, my_h) = dirs(from);
    let h_dirs: Vec<i8> = others.iter().filter(|o| o.0 == my_v).map(|o| o.1).collect();
    let v_dirs = others.iter().filter(|o| o.1 == my_h).count();
    let mut words = Vec::new();
    let mut no_vertical = false;
    if let Some(&first) = h_dirs.first() {
        if matches!(piece.kind, PieceKind::Horse | PieceKind::Dragon) {
            if my_h == -1 || (my_h == 0 && first == 1) {
                words.push('右');
            } else if my_h == 1 || (my_h == 0 && first == -1) {
                words.push('左');
            }
        } else {
            match my_h {
                -1 => words.push('右'),
                0 => {
                    words.push('直');
                    no_vertical = true;
                }
                _ => words.push('左'),
            }
        }
    }
    if !no_vertical && (v_dirs > 0 || (h_dirs.is_empty() && !others.is_empty())) {
        words.push(match my_v {
            -1 => '引',
            0 => '寄',
            _ => '上',
        });
    }
    words
}

/// The KI2 text of one legal move in `pos`: destination, piece, the relative words that tell
/// it from the other pieces of its kind that reach the square ([`relative_words`]), and 成, 不成
/// or 打 (打 only where a piece on the board could also go there).
fn ki2_move(pos: &Position, mv: Move, last_to: Option<Square>) -> Option<String> {
    let color = pos.side_to_move();
    let mut text = String::new();
    let to = mv.to();
    if last_to == Some(to) {
        text.push('同');
    } else {
        square_text(to, &mut text);
    }
    match mv {
        Move::Drop { kind, to } => {
            text.push_str(kif_piece(kind));
            let on_board = Iterator::any(&mut pos.attackers_to(to, color), |sq| {
                pos.piece_at(sq).is_some_and(|p| p.kind == kind)
            });
            if on_board || resolve_ki2(pos, color, &Written::new(to, kind)) != Ok(mv) {
                text.push('打');
            }
            Some(text)
        }
        Move::Normal { from, to, promote } => {
            let kind = pos.piece_at(from)?.kind;
            text.push_str(kif_piece(kind));
            let could_promote = pos.legal_moves().iter().any(|&m| {
                m == Move::Normal {
                    from,
                    to,
                    promote: true,
                }
            });
            let promote_word = match (promote, could_promote) {
                (true, _) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            };
            let reads = |words: &[char]| {
                let w = Written {
                    promote: promote_word,
                    relative: words.to_vec(),
                    ..Written::new(to, kind)
                };
                resolve_ki2(pos, color, &w) == Ok(mv)
            };
            // The rules' words; should they not single the move out for this reader, the
            // fewest that do.
            const WORDS: &[&[char]] = &[
                &[],
                &['上'],
                &['引'],
                &['寄'],
                &['直'],
                &['右'],
                &['左'],
                &['右', '上'],
                &['右', '引'],
                &['右', '寄'],
                &['左', '上'],
                &['左', '引'],
                &['左', '寄'],
            ];
            let rules = relative_words(pos, from, to);
            let words = if reads(&rules) {
                rules
            } else {
                WORDS.iter().find(|w| reads(w))?.to_vec()
            };
            text.extend(words.iter());
            match promote_word {
                Some(true) => text.push('成'),
                Some(false) => text.push_str("不成"),
                None => {}
            }
            Some(text)
        }
    }
}

/// The closing `まで…` line of a KIF or KI2 record, as Kifu for Windows and ShogiHome write
/// it: the winner of a resignation or a loss on time, and the side that declares or fouls
/// (`まで12手で先手の反則負け`), which readers (cshogi, json-kifu-format) need to tell who won.
/// `side` is the side to move after the last move.
pub(crate) fn summary_line(kind: &EndingKind, plies: usize, side: Color) -> String {
    let name = |c: Color| {
        if c == Color::Black {
            "先手"
        } else {
            "後手"
        }
    };
    let what = match kind {
        EndingKind::Resign => format!("{}の勝ち", name(!side)),
        EndingKind::Tsumi => "詰み".to_string(),
        EndingKind::Sennichite | EndingKind::OuteSennichite => "千日手".to_string(),
        EndingKind::Jishogi | EndingKind::MaxMoves | EndingKind::Hikiwake => "持将棋".to_string(),
        EndingKind::TimeUp => format!("時間切れにより{}の勝ち", name(!side)),
        EndingKind::Kachi => format!("{}の入玉勝ち", name(side)),
        EndingKind::IllegalMove | EndingKind::FailedKachi => format!("{}の反則負け", name(side)),
        EndingKind::IllegalAction(c) if *c == side => format!("{}の反則負け", name(side)),
        EndingKind::IllegalAction(_) => format!("{}の反則勝ち", name(side)),
        EndingKind::Chudan | EndingKind::Error => "中断".to_string(),
        EndingKind::Fuzumi => "不詰".to_string(),
        // A KI2 `まで…` line read as it was (an ending the reader has no word for). A JKF
        // `special` may hold a line break, which would end the line early.
        EndingKind::Other(w) if w.starts_with("まで") => return w.replace(['\r', '\n'], " "),
        EndingKind::Other(w) => w.replace(['\r', '\n'], " "),
    };
    format!("まで{plies}手で{what}")
}

/// Writes a record as KI2 (text; [`crate::write`] encodes it): headers and start position as
/// in KIF, moves as in print (`▲７六歩    △３四歩`, six a line, ASCII blanks between them) with the relative words (右 左 直 上
/// 引 寄), 成, 不成 and 打 a KI2 reader needs to find each move, `*` comments, and the ending as
/// the closing `まで…` line. KI2 has no times and no variations: they are not written. A move
/// that is not legal cannot be written in KI2 (it has no origin square): that is an error.
pub fn write_ki2(record: &Record) -> Result<String, WriteError> {
    // No `# ...` first line as in KIF: json-kifu-format's KI2 grammar refuses it.
    let mut out = String::new();
    preamble(record, &mut out);
    let mut pos = record.start.clone();
    let mut on_line = 0;
    let mut last_len = 0;
    let mut last_to = None;
    for (i, m) in record.moves.iter().enumerate() {
        let unwritable = |reason: &str| WriteError::Unwritable {
            ply: i as u32 + 1,
            reason: reason.to_string(),
        };
        if m.legal.is_err() || pos.check_move(m.mv).is_err() {
            return Err(unwritable(
                "an illegal move cannot be written in ki2, which names no origin square",
            ));
        }
        let text = ki2_move(&pos, m.mv, last_to)
            .ok_or_else(|| unwritable("no ki2 text names this move alone"))?;
        if on_line > 0 {
            // ASCII blanks between the moves of a line, each move padded to 12 columns as
            // Kifu for Windows and ShogiHome write them: json-kifu-format's KI2 grammar does
            // not take U+3000 there.
            let pad = 12usize.saturating_sub(2 * last_len).max(1);
            out.extend(std::iter::repeat_n(' ', pad));
        }
        out.push(if m.color == Color::Black {
            '▲'
        } else {
            '△'
        });
        out.push_str(&text);
        last_len = text.chars().count() + 1;
        on_line += 1;
        if on_line == 6 || m.comment.is_some() {
            out.push('\n');
            on_line = 0;
        }
        comment(&m.comment, &mut out);
        pos.play_unchecked(m.mv);
        last_to = Some(m.mv.to());
    }
    if on_line > 0 {
        out.push('\n');
    }
    if let Some(e) = &record.ending {
        let side = side_after(&record.start, &record.moves);
        out.push_str(&summary_line(&e.kind, record.moves.len(), side));
        out.push('\n');
    }
    Ok(out)
}
