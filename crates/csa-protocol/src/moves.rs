//! A CSA move as the protocol carries it: `+7776FU`.

use shogi_rules::{Color, PieceKind, Square};
use std::fmt;

/// A move in CSA notation: side, origin (none for a drop, written `00`), destination and the
/// kind of the piece after the move (`+2822UM` is a bishop promoting).
///
/// Only text made typed, as shogi-server's `Board#handle_one_move` reads it before it looks at
/// the board: whether it can be played is a question for the position
/// (`shogi_rules::Position`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CsaMove {
    /// The mover: `+` Black, `-` White.
    pub color: Color,
    /// The origin square, `None` for a drop (打).
    pub from: Option<Square>,
    /// The destination square.
    pub to: Square,
    /// The piece's kind after the move.
    pub kind: PieceKind,
}

/// Why a move's text is not a CSA move; `column` is 1-based within the move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// Not seven characters.
    #[error("a move has 7 characters (+7776FU), not {len}")]
    Length {
        /// The length found, in bytes.
        len: usize,
    },
    /// The first character is neither `+` nor `-`.
    #[error("column 1: a move starts with + or -")]
    Side,
    /// A coordinate is not a digit.
    #[error("column {column}: a square's file and rank are digits")]
    Digit {
        /// Where.
        column: usize,
    },
    /// A file or rank is 0 where a square is needed (`00` is only an origin, for a drop).
    #[error("column {column}: a square off the board")]
    OffBoard {
        /// Where the square starts.
        column: usize,
    },
    /// Not one of the fourteen CSA piece names.
    #[error(
        "column 6: {name:?} is not a CSA piece name (FU KY KE GI KI KA HI OU TO NY NK NG UM RY)"
    )]
    Piece {
        /// The two characters found.
        name: String,
    },
}

impl CsaMove {
    /// Parses `+7776FU`, `-0055KA` (a drop).
    pub fn parse(text: &str) -> Result<CsaMove, MoveError> {
        let b = text.as_bytes();
        if b.len() != 7 {
            return Err(MoveError::Length { len: b.len() });
        }
        let color = match b[0] {
            b'+' => Color::Black,
            b'-' => Color::White,
            _ => return Err(MoveError::Side),
        };
        let mut d = [0u8; 4];
        for (i, v) in d.iter_mut().enumerate() {
            let c = b[1 + i];
            if !c.is_ascii_digit() {
                return Err(MoveError::Digit { column: 2 + i });
            }
            *v = c - b'0';
        }
        let from = match (d[0], d[1]) {
            (0, 0) => None,
            (f, r) => Some(Square::new(f, r).ok_or(MoveError::OffBoard { column: 2 })?),
        };
        let to = Square::new(d[2], d[3]).ok_or(MoveError::OffBoard { column: 4 })?;
        let kind = PieceKind::from_csa_bytes(&b[5..7]).ok_or_else(|| MoveError::Piece {
            name: String::from_utf8_lossy(&b[5..7]).into_owned(),
        })?;
        Ok(CsaMove {
            color,
            from,
            to,
            kind,
        })
    }
}

impl fmt::Display for CsaMove {
    /// `+7776FU`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = match self.color {
            Color::Black => '+',
            Color::White => '-',
        };
        let (ff, fr) = self.from.map_or((0, 0), |s| (s.file(), s.rank()));
        write!(
            f,
            "{sign}{ff}{fr}{}{}{}",
            self.to.file(),
            self.to.rank(),
            self.kind.csa_name()
        )
    }
}
