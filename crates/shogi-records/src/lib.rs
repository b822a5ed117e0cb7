//! Shogi game records: reading CSA, KIF, KI2 and USI `position` lines, writing CSA V3.0.
//!
//! Every reader turns text into a [`Record`]: headers, the starting [`Position`], the moves in
//! order and the recorded ending. The readers are built on `shogi-rules` and replay the moves as
//! they read them, because several notations only make sense against a position (CSA infers
//! promotion from the piece on the origin square, KIF's `同` names the previous destination, KI2
//! names no origin square at all).
//!
//! Invariants:
//! - No IO: callers pass bytes or text in. No panics on any input; every problem is a
//!   [`RecordError`] with its line, column and token.
//! - Nothing is dropped silently. A line the reader does not understand is an error, not a line
//!   skipped. The only text deliberately not read is a KIF record's variations (`変化：`), see
//!   [`read_kif`].
//! - An illegal move is not a read error: it is kept as a [`RecordMove`] whose `legal` is an
//!   `Err`, for the adjudicator to judge. The position cannot be followed past it, so a further
//!   move line is an error ("move after an illegal move cannot be replayed"); special moves and
//!   result lines after it are still read.

mod csa;
mod decode;
mod error;
mod kif;
mod replay;
mod setup;
mod usi;

pub use csa::{read_csa, write_csa};
pub use error::RecordError;
pub use kif::{read_ki2, read_kif};
pub use usi::read_usi;

use shogi_rules::{Color, IllegalMove, Move, Position};

/// The notation a record was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// CSA standard file format, V2.x or V3.0 (`.csa`).
    Csa,
    /// KIF, Kakinoki's format with one numbered move a line (`.kif` Shift_JIS, `.kifu` UTF-8).
    Kif,
    /// KI2, the KIF variant that writes moves as in print (`▲７六歩`) without origin squares.
    Ki2,
    /// A USI `position` command line.
    Usi,
}

/// A game record as read: where it started, the moves, and how it says it ended.
#[derive(Debug, Clone)]
pub struct Record {
    /// The notation it was read from.
    pub format: Format,
    /// Header fields in file order, keys as the format writes them: CSA `N+`/`N-` for the
    /// players, `$KEY` lines as `KEY` (without the `$`), `V` for the version line, and the
    /// server's comment lines `'summary:...`, `'Max_Moves:...` and the like under their own key;
    /// KIF and KI2 `key：value` lines (`先手`, `手合割`, ...) and the closing `まで…` line under
    /// the key `summary`. Ending lines after the first (a server's echo of `%KACHI`, a `中断`
    /// written after `投了`) are kept under `later_ending` as `line N: text`.
    pub headers: Vec<(String, String)>,
    /// The position before the first move: the even-game position, a handicap (手合割, CSA
    /// `PI` with removals), a board diagram or an SFEN.
    pub start: Position,
    /// The moves in order, one a ply.
    pub moves: Vec<RecordMove>,
    /// The recorded special move or result (`%TORYO`, `投了`, `win` ...), if any.
    pub ending: Option<Ending>,
    /// The record's own move cap, if it states one (CSA `$MAX_MOVES`, floodgate's
    /// `'Max_Moves:`, KIF `最大手数`).
    pub max_moves: Option<u32>,
}

impl Record {
    /// The value of the first header with this key.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The position after the last move, or `None` when a move of the record is illegal (the
    /// position cannot be followed past it).
    pub fn final_position(&self) -> Option<Position> {
        let mut pos = self.start.clone();
        for m in &self.moves {
            m.legal.as_ref().ok()?;
            pos.play(m.mv).ok()?;
        }
        Some(pos)
    }
}

/// One ply of a record.
#[derive(Debug, Clone)]
pub struct RecordMove {
    /// The move.
    pub mv: Move,
    /// The side that made it (per the record; a move by the side not to move is kept and
    /// judged `WrongTurn`).
    pub color: Color,
    /// The 1-based line of the record it was read from.
    pub line: u32,
    /// Whether it was legal in the position reached by the moves before it.
    pub legal: Result<(), IllegalMove>,
}

/// What a record's special move or result line says happened.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EndingKind {
    /// The side to move resigned (CSA `%TORYO`, KIF `投了`).
    Resign,
    /// Repetition (千日手; CSA `%SENNICHITE`, KIF `千日手`).
    Sennichite,
    /// Perpetual check (連続王手の千日手; CSA `%OUTE_SENNICHITE`).
    OuteSennichite,
    /// The side to move is checkmated (CSA `%TSUMI`, KIF `詰み`).
    Tsumi,
    /// Impasse declaration by the side to move (入玉宣言; CSA `%KACHI`, KIF `入玉勝ち`, USI
    /// `win`).
    Kachi,
    /// Impasse draw (持将棋; CSA `%JISHOGI`, KIF `持将棋`). KIF exporters also write this for a
    /// move cap, which KIF cannot say.
    Jishogi,
    /// The move cap was reached (CSA `%MAX_MOVES`).
    MaxMoves,
    /// The side to move loses by a foul (CSA `%ILLEGAL_MOVE`, KIF `反則負け`).
    IllegalMove,
    /// The given side committed a foul and loses (CSA `%+ILLEGAL_ACTION` /
    /// `%-ILLEGAL_ACTION`; KIF `反則勝ち`, read as a foul by the side that just moved).
    IllegalAction(Color),
    /// The side to move ran out of time (CSA `%TIME_UP`, KIF `切れ負け`, `Time-up`).
    TimeUp,
    /// The game was interrupted (CSA `%CHUDAN`, KIF `中断`).
    Chudan,
    /// A mate problem has no mate (CSA `%FUZUMI`, KIF `不詰`).
    Fuzumi,
    /// An error ended the game (CSA `%ERROR`).
    Error,
    /// Draw by agreement (CSA `%HIKIWAKE`).
    Hikiwake,
    /// Anything else the record states: CSA `%MATTA` or an unknown `%NAME` (the name without
    /// `%`), KIF `封じ手` (sealed move), `不戦勝` and the like.
    Other(String),
}

impl EndingKind {
    /// The CSA special move for this ending (`%TORYO` ...), or `None` for [`EndingKind::Other`]
    /// values that CSA cannot say.
    pub fn csa_special(&self) -> Option<String> {
        Some(
            match self {
                EndingKind::Resign => "%TORYO",
                EndingKind::Sennichite => "%SENNICHITE",
                EndingKind::OuteSennichite => "%OUTE_SENNICHITE",
                EndingKind::Tsumi => "%TSUMI",
                EndingKind::Kachi => "%KACHI",
                EndingKind::Jishogi => "%JISHOGI",
                EndingKind::MaxMoves => "%MAX_MOVES",
                EndingKind::IllegalMove => "%ILLEGAL_MOVE",
                EndingKind::IllegalAction(Color::Black) => "%+ILLEGAL_ACTION",
                EndingKind::IllegalAction(Color::White) => "%-ILLEGAL_ACTION",
                EndingKind::TimeUp => "%TIME_UP",
                EndingKind::Chudan => "%CHUDAN",
                EndingKind::Fuzumi => "%FUZUMI",
                EndingKind::Error => "%ERROR",
                EndingKind::Hikiwake => "%HIKIWAKE",
                EndingKind::Other(name) if name == "MATTA" => "%MATTA",
                EndingKind::Other(_) => return None,
            }
            .to_string(),
        )
    }
}

/// A record's ending as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// What it says.
    pub kind: EndingKind,
    /// The 1-based line it was read from.
    pub line: u32,
    /// Its text as written (`%TORYO`, `投了`, `win`, or a KI2 `まで…` line), without time
    /// fields or comments.
    pub raw: String,
}

/// Reads a record of any supported format, chosen by the file name's extension (`.csa`,
/// `.kif`, `.kifu`, `.ki2`, `.ki2u`, `.usi`, `.sfen`) or, failing that, by looking at the text.
///
/// Text encoding is detected for every format: a UTF-8 BOM or valid UTF-8 is UTF-8, otherwise
/// Shift_JIS, otherwise EUC-JP (old CSA files).
pub fn read_any(name_hint: &str, bytes: &[u8]) -> Result<Record, RecordError> {
    let ext = name_hint
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "csa" => read_csa(&decode::decode(bytes)?),
        "kif" | "kifu" => read_kif(bytes),
        "ki2" | "ki2u" => read_ki2(bytes),
        "usi" | "sfen" => read_usi(&decode::decode(bytes)?),
        _ => {
            let text = decode::decode(bytes)?;
            match sniff(&text) {
                Some(Format::Csa) => read_csa(&text),
                Some(Format::Kif) => read_kif(bytes),
                Some(Format::Ki2) => read_ki2(bytes),
                Some(Format::Usi) => read_usi(&text),
                None => Err(RecordError::new(
                    1,
                    1,
                    text.lines().next().unwrap_or(""),
                    "cannot tell the record format (expected csa, kif, ki2 or a usi position line)",
                )),
            }
        }
    }
}

/// Guesses the format from the first lines that are not blank or comments.
fn sniff(text: &str) -> Option<Format> {
    let mut kif_like = false;
    for line in text
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
    {
        if line.is_empty() || line.starts_with('#') || line.starts_with('*') {
            continue;
        }
        if line.starts_with("position ") || line.starts_with("sfen ") || line == "startpos" {
            return Some(Format::Usi);
        }
        if line.starts_with(['▲', '△', '▽', '▼', '☗', '☖']) {
            return Some(Format::Ki2);
        }
        if line.starts_with("手数--") || line.split_whitespace().next().is_some_and(is_number) {
            return Some(Format::Kif);
        }
        if line.contains('：') {
            kif_like = true;
            continue;
        }
        if !kif_like
            && (line.starts_with('\'')
                || line.starts_with("V2")
                || line.starts_with("V3")
                || line.starts_with("N+")
                || line.starts_with("N-")
                || line.starts_with("PI")
                || line.starts_with("P1")
                || line.starts_with('$')
                || line == "+"
                || line == "-")
        {
            return Some(Format::Csa);
        }
    }
    kif_like.then_some(Format::Kif)
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}
