//! Shogi game records: reading and writing CSA, KIF, KI2, JKF (json-kifu-format) and USI
//! `position` lines.
//!
//! Every reader turns text into a [`Record`]: headers, the starting [`Position`], the moves in
//! order with their times and comments, the recorded ending, and the variations of a KIF or JKF
//! record. [`write()`] turns a record into the bytes of any format.
//!
//! The readers are built on `shogi-rules` and replay the moves as they read them, because
//! several notations only make sense against a position (CSA infers promotion from the piece on
//! the origin square, KIF's `同` names the previous destination, KI2 names no origin square at
//! all).
//!
//! Invariants:
//! - No IO: callers pass bytes or text in. No panics on any input; every problem is a
//!   [`RecordError`] with its line, column and token.
//! - Nothing is dropped silently. A line the reader does not understand is an error, not a line
//!   skipped. Move times and comments are kept; KIF variations (`変化：`) and JKF forks are read
//!   into [`Record::variations`].
//! - Reading takes time linear in the input, and no input larger than [`MAX_RECORD_BYTES`] is
//!   read (an error says so), so that no file makes a reader hang or exhaust memory.
//! - An illegal move is not a read error: it is kept as a [`RecordMove`] whose `legal` is an
//!   `Err`, for the adjudicator to judge. The position cannot be followed past it, so a further
//!   move line is an error ("move after an illegal move cannot be replayed"); special moves and
//!   result lines after it are still read.

mod csa;
mod decode;
mod error;
mod jkf;
mod kif;
mod kif_write;
mod replay;
mod setup;
mod sjis;
mod usi;
mod write;

pub use csa::{CsaVersion, csa_v22_fits, read_csa, read_csa_games, write_csa, write_csa_as};
pub use error::{RecordError, WriteError};
pub use jkf::{read_jkf, write_jkf};
pub use kif::{read_ki2, read_kif};
pub use kif_write::{write_ki2, write_kif};
pub use usi::{read_usi, write_usi};
pub use write::{Encoding, WriteOptions, write, write_with};

/// The largest record the readers accept, in bytes (16 MiB: some 80 times the longest real
/// record, a 2,000-ply game with comments). A larger input is an error before any parsing.
pub const MAX_RECORD_BYTES: usize = 16 << 20;

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
    /// JKF, the json-kifu-format of Kifu for JS and shogi web apps (`.jkf`, `.json`).
    Jkf,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [Format; 5] = [
        Format::Csa,
        Format::Kif,
        Format::Ki2,
        Format::Jkf,
        Format::Usi,
    ];

    /// The format's name in lower case (`csa`, `kif`, `ki2`, `jkf`, `usi`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Csa => "csa",
            Format::Kif => "kif",
            Format::Ki2 => "ki2",
            Format::Usi => "usi",
            Format::Jkf => "jkf",
        }
    }

    /// The usual file extension for records written in this format and `encoding` (`.kifu` for
    /// UTF-8 KIF, `.kif` for Shift_JIS KIF, ...), without the dot.
    pub fn extension(self, encoding: Encoding) -> &'static str {
        match (self, encoding) {
            (Format::Kif, Encoding::Utf8) => "kifu",
            (Format::Ki2, Encoding::Utf8) => "ki2u",
            (f, _) => f.name(),
        }
    }
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
    /// The comment before the first move (CSA `'*` lines, KIF `*` lines, JKF
    /// `moves[0].comments`), its lines joined by `\n`.
    pub comment: Option<String>,
    /// Alternatives to moves of the record (KIF `変化：N手` blocks, JKF `forks`), in file order.
    pub variations: Vec<Variation>,
    /// What the reader found as it replayed the moves ([`Record::replayed`]).
    replayed: Option<Replayed>,
}

/// What a reader found as it replayed a record's moves, for a judge that would otherwise play
/// them again ([`Record::replayed`]).
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The hash of the start position the moves were played from.
    start_hash: u64,
    /// For each of the record's legal moves before any illegal one: the hash of the position
    /// after it, and whether it gave check.
    plies: Vec<(u64, bool)>,
    /// The position after them.
    end: Position,
}

impl Replayed {
    /// For each of the record's legal moves before any illegal one, in order: the hash of the
    /// position after it (as [`Position::hash`]) and whether it gave check.
    pub fn plies(&self) -> &[(u64, bool)] {
        &self.plies
    }

    /// The position after those moves.
    pub fn end(&self) -> &Position {
        &self.end
    }
}

/// An alternative line of play: from its ply on, it replaces the moves of its parent line.
#[derive(Debug, Clone)]
pub struct Variation {
    /// The line it branches from: `0` for the main line, `i` for `variations[i - 1]`.
    pub parent: usize,
    /// The 1-based ply its first move replaces.
    pub ply: u32,
    /// Its moves, the first one at `ply`.
    pub moves: Vec<RecordMove>,
    /// Its own ending, if it states one.
    pub ending: Option<Ending>,
}

/// Adds a comment line to `slot`: a new comment, or a line after those already there.
pub(crate) fn add_comment(slot: &mut Option<String>, line: &str) {
    match slot {
        Some(c) => {
            c.push('\n');
            c.push_str(line);
        }
        // Room for a short second line: many comments have several, and growing the string
        // line by line was half the cost of keeping comments.
        None => {
            let mut c = String::with_capacity(line.len() + 64);
            c.push_str(line);
            *slot = Some(c);
        }
    }
}

/// The lines of a comment (none for `None`).
pub(crate) fn comment_lines(c: &Option<String>) -> impl Iterator<Item = &str> {
    c.iter().flat_map(|c| c.split('\n'))
}

/// Time used for a move: on the move itself and, when the record says, in total for that side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MoveTime {
    /// Milliseconds spent on this move (CSA `T12`, KIF `( 0:12/...)`, JKF `time.now`).
    pub spent_ms: u64,
    /// Milliseconds that side has used so far, this move included (KIF `/00:01:30`, JKF
    /// `time.total`); CSA does not say it.
    pub total_ms: Option<u64>,
}

impl Record {
    /// The value of the first header with this key.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A record of `moves` from `start`, each checked in turn (a move after an illegal one
    /// cannot be checked: it is kept and marked [`shogi_rules::IllegalKind::Impossible`]),
    /// without times, comments or ending: what an export from a game log starts from. Set
    /// `moves[i].time`, `moves[i].comment` and `ending` ([`Ending::new`]), then [`write()`].
    /// `format` is what the record will be said to be read from.
    pub fn from_moves(format: Format, start: Position, moves: &[Move]) -> Record {
        let mut replay = replay::Replay::new(start);
        for &mv in moves {
            let color = replay.side_to_move();
            replay.push_any(mv, color, 0);
        }
        Record {
            format,
            headers: Vec::new(),
            start: replay.start,
            moves: replay.moves,
            ending: None,
            max_moves: None,
            comment: None,
            variations: Vec::new(),
            replayed: None,
        }
    }

    /// What the reader found as it replayed the moves: for each legal move before any illegal
    /// one, the hash of the position it leads to and whether it gave check, and the position
    /// after them, as `shogi_adjudication::judge_replayed` takes them instead of playing the
    /// moves again. `None` for a record not read by a reader ([`Record::from_moves`]) and for
    /// one whose start or number of legal moves has changed since; a caller that changes a
    /// move in place must not use it.
    pub fn replayed(&self) -> Option<&Replayed> {
        let r = self.replayed.as_ref()?;
        let legal = self.moves.iter().take_while(|m| m.legal.is_ok()).count();
        (r.start_hash == self.start.hash() && r.plies.len() == legal).then_some(r)
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
    /// The time it took, if the record says.
    pub time: Option<MoveTime>,
    /// The comment written after it (CSA `'*` lines, KIF `*` lines, JKF `comments`), its lines
    /// joined by `\n`. One string rather than a list of lines: reading an archive allocates
    /// once a commented move, not once a line (the archive benchmark's budget).
    pub comment: Option<String>,
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
    /// An impasse declaration by the side to move that failed, and lost: CSA has no special
    /// move of its own for it and writes `%KACHI` (the verdict in a comment), KIF `反則負け`
    /// (RULES.md section 7). Read back, it is [`EndingKind::Kachi`] from CSA and
    /// [`EndingKind::IllegalMove`] from KIF: no format tells the two apart.
    FailedKachi,
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
                EndingKind::Kachi | EndingKind::FailedKachi => "%KACHI",
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
    /// The time the ending took (KIF `投了 ( 0:05/00:10:00)`, CSA `T5` after `%TORYO`).
    pub time: Option<MoveTime>,
    /// The comment written after it, its lines joined by `\n`.
    pub comment: Option<String>,
}

impl Ending {
    /// An ending of this kind, with no line, time or comment: for records built by hand.
    pub fn new(kind: EndingKind) -> Ending {
        let raw = kind.csa_special().unwrap_or_else(|| match &kind {
            EndingKind::Other(name) => name.clone(),
            _ => String::new(),
        });
        Ending {
            kind,
            line: 0,
            raw,
            time: None,
            comment: None,
        }
    }
}

/// The format a file name's extension names (`.csa`; `.kif`, `.kifu`; `.ki2`, `.ki2u`; `.jkf`,
/// `.json`; `.usi`, `.sfen`), if any.
pub fn format_of_name(name: &str) -> Option<Format> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "csa" => Format::Csa,
        "kif" | "kifu" => Format::Kif,
        "ki2" | "ki2u" => Format::Ki2,
        "jkf" | "json" => Format::Jkf,
        "usi" | "sfen" => Format::Usi,
        _ => return None,
    })
}

/// Reads a record of any supported format, chosen by the file name's extension (see
/// [`format_of_name`]) or, failing that, by looking at the text.
///
/// Text encoding is detected for every format: a UTF-8 BOM or valid UTF-8 is UTF-8, otherwise
/// Shift_JIS, otherwise EUC-JP (old CSA files). An empty input is an error, as is one larger
/// than [`MAX_RECORD_BYTES`]. A CSA file of several games (separated by `/` lines) is an
/// error here: [`read_all`] reads each of its games.
pub fn read_any(name_hint: &str, bytes: &[u8]) -> Result<Record, RecordError> {
    read_as(detect(name_hint, bytes)?, bytes)
}

/// Reads every game of a file: one for most formats, each game of a CSA file whose games are
/// separated by `/` lines. Errors are per game (a CSA game's line numbers are the file's).
pub fn read_all(name_hint: &str, bytes: &[u8]) -> Vec<Result<Record, RecordError>> {
    match detect(name_hint, bytes) {
        Ok(Format::Csa) => {
            decode::with_decoded(bytes, read_csa_games).unwrap_or_else(|e| vec![Err(e)])
        }
        Ok(format) => vec![read_as(format, bytes)],
        Err(e) => vec![Err(e)],
    }
}

/// Reads `bytes` as a record of `format` (encoding detected as for [`read_any`]).
pub fn read_as(format: Format, bytes: &[u8]) -> Result<Record, RecordError> {
    match format {
        Format::Kif => read_kif(bytes),
        Format::Ki2 => read_ki2(bytes),
        Format::Jkf => read_jkf(bytes),
        Format::Csa => decode::with_decoded(bytes, read_csa)?,
        Format::Usi => decode::with_decoded(bytes, read_usi)?,
    }
}

/// The format of a record: by its name's extension, else by its text.
pub fn detect(name_hint: &str, bytes: &[u8]) -> Result<Format, RecordError> {
    decode::check_size(bytes)?;
    if let Some(f) = format_of_name(name_hint) {
        return Ok(f);
    }
    let mut buf = Vec::new();
    let text = decode::decode(bytes, &mut buf)?;
    sniff(&text).ok_or_else(|| {
        RecordError::new(
            1,
            1,
            text.lines().next().unwrap_or(""),
            "cannot tell the record format (expected csa, kif, ki2, jkf or a usi position line)",
        )
    })
}

/// Guesses the format from the first lines that are not blank or comments.
fn sniff(text: &str) -> Option<Format> {
    let mut kif_like = false;
    for line in decode::lines(text).map(|(_, l)| l.trim_start_matches('\u{feff}').trim()) {
        if line.is_empty() || line.starts_with('#') || line.starts_with('*') {
            continue;
        }
        if line.starts_with('{') {
            return Some(Format::Jkf);
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
