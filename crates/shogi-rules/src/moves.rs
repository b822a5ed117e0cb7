//! Moves and their USI notation.

use crate::{PieceKind, Square};
use std::fmt;

/// A move: a board move with optional promotion, or a drop from hand.
///
/// A `Move` is only text made typed: whether it can be played is a question for a
/// [`crate::Position`] ([`crate::Position::check_move`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// A piece moves from `from` to `to`, promoting if `promote`.
    Normal {
        /// Origin square.
        from: Square,
        /// Destination square.
        to: Square,
        /// Whether the piece promotes (成り).
        promote: bool,
    },
    /// A piece of `kind` is dropped from hand on `to` (打).
    Drop {
        /// The unpromoted kind dropped.
        kind: PieceKind,
        /// Destination square.
        to: Square,
    },
}

impl Move {
    /// The destination square.
    #[inline]
    pub const fn to(self) -> Square {
        match self {
            Move::Normal { to, .. } | Move::Drop { to, .. } => to,
        }
    }

    /// The origin square of a board move, `None` for a drop.
    #[inline]
    pub const fn from(self) -> Option<Square> {
        match self {
            Move::Normal { from, .. } => Some(from),
            Move::Drop { .. } => None,
        }
    }

    /// Whether the move is a drop.
    #[inline]
    pub const fn is_drop(self) -> bool {
        matches!(self, Move::Drop { .. })
    }

    /// Whether the move promotes.
    #[inline]
    pub const fn is_promotion(self) -> bool {
        matches!(self, Move::Normal { promote: true, .. })
    }

    /// Parses USI text: `7g7f`, `8h2b+`, `P*5e`.
    ///
    /// This checks the text only; see [`crate::Position::check_move`] for the position.
    pub fn from_usi(text: &str) -> Result<Move, ParseUsiError> {
        Self::from_usi_bytes(text.as_bytes()).map_err(|(column, reason)| ParseUsiError {
            text: text.chars().take(16).collect(),
            column,
            reason,
        })
    }

    fn from_usi_bytes(b: &[u8]) -> Result<Move, (usize, UsiErrorReason)> {
        use UsiErrorReason as R;
        if b.len() < 4 {
            return Err((b.len(), R::TooShort));
        }
        if b[1] == b'*' {
            let kind = match PieceKind::from_sfen_letter(b[0]) {
                Some(k) if b[0].is_ascii_uppercase() && k != PieceKind::King => k,
                _ => return Err((0, R::BadDropPiece)),
            };
            let to = Square::from_usi_bytes(b[2], b[3]).ok_or((2, R::BadSquare))?;
            if b.len() > 4 {
                return Err((4, R::TrailingCharacters));
            }
            return Ok(Move::Drop { kind, to });
        }
        let from = Square::from_usi_bytes(b[0], b[1]).ok_or((0, R::BadSquare))?;
        let to = Square::from_usi_bytes(b[2], b[3]).ok_or((2, R::BadSquare))?;
        let promote = match &b[4..] {
            [] => false,
            [b'+'] => true,
            _ => return Err((4, R::TrailingCharacters)),
        };
        if from == to {
            return Err((2, R::SameSquare));
        }
        Ok(Move::Normal { from, to, promote })
    }

    /// A compact 16-bit encoding, stable across versions: bits 0..7 destination index, bits
    /// 7..14 origin index (board move) or 81 + hand kind index (drop), bit 14 promotion.
    #[inline]
    pub const fn to_u16(self) -> u16 {
        match self {
            Move::Normal { from, to, promote } => {
                to.index() as u16 | (from.index() as u16) << 7 | (promote as u16) << 14
            }
            Move::Drop { kind, to } => to.index() as u16 | (81 + kind as u16) << 7,
        }
    }

    /// Decodes [`Move::to_u16`]; `None` for a value no move encodes to.
    pub const fn from_u16(v: u16) -> Option<Move> {
        let to = match Square::from_index((v & 0x7f) as u8) {
            Some(s) => s,
            None => return None,
        };
        let src = (v >> 7) & 0x7f;
        let promote = v & (1 << 14) != 0;
        if v >> 15 != 0 {
            return None;
        }
        if src < 81 {
            let from = Square::from_index_unchecked(src as u8);
            if from.index() == to.index() {
                return None;
            }
            Some(Move::Normal { from, to, promote })
        } else if src < 88 && !promote {
            match PieceKind::from_index(src as usize - 81) {
                Some(kind) => Some(Move::Drop { kind, to }),
                None => None,
            }
        } else {
            None
        }
    }
}

impl fmt::Display for Move {
    /// USI notation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Move::Normal { from, to, promote } => {
                write!(f, "{from}{to}")?;
                if promote {
                    f.write_str("+")?;
                }
                Ok(())
            }
            Move::Drop { kind, to } => write!(f, "{}*{to}", kind.sfen_letter()),
        }
    }
}

/// Why USI text is not a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsiErrorReason {
    /// Fewer than four characters.
    TooShort,
    /// Not a square in `1a`..`9i`.
    BadSquare,
    /// A drop of something that is not `P`, `L`, `N`, `S`, `G`, `B` or `R`.
    BadDropPiece,
    /// Characters after the move (only `+` may follow a board move).
    TrailingCharacters,
    /// Origin and destination are the same square.
    SameSquare,
}

impl fmt::Display for UsiErrorReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UsiErrorReason::TooShort => "too short for a move",
            UsiErrorReason::BadSquare => "not a square (files 1-9, ranks a-i)",
            UsiErrorReason::BadDropPiece => "not a piece that can be dropped (P L N S G B R)",
            UsiErrorReason::TrailingCharacters => "unexpected characters after the move",
            UsiErrorReason::SameSquare => "origin and destination are the same square",
        })
    }
}

/// USI text that is not a move, with the column (0-based, in bytes) where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid usi move {text:?} at column {column}: {reason}")]
pub struct ParseUsiError {
    /// The text (its first 16 characters).
    pub text: String,
    /// 0-based byte column.
    pub column: usize,
    /// What is wrong.
    pub reason: UsiErrorReason,
}
