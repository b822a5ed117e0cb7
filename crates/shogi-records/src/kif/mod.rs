//! KIF and KI2 (Kakinoki's formats): headers, handicaps, board diagrams, moves, endings.
//!
//! Source: the KIF/KI2 format description published with Kifu for Windows (柿木将棋), and the
//! records written by Kifu for Windows, Shogidokoro, ShogiGUI, ShogiHome, Piyo Shogi and
//! shogi-extend, as found in the test corpus.
//!
//! The reader ([`reader`]) takes the text line by line; [`diagram`] reads the preamble and gives
//! the start position, [`notation`] a written move and the KIF ending words, [`times`] a move's
//! time column, [`ki2`] a KI2 move and its closing line.

mod diagram;
mod ki2;
mod notation;
mod reader;
mod times;

pub(crate) use ki2::resolve_ki2;
pub(crate) use notation::{KIF_OTHER_ENDINGS, Written};

use crate::decode::with_decoded;
use crate::{Format, Record, RecordError};
use reader::read_japanese;

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
