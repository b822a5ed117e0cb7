//! Squares in USI coordinates.

use std::fmt;

/// One of the 81 squares.
///
/// USI coordinates: file 1..9 counted from Black's right, rank 1..9 written `a`..`i`, rank `a`
/// being White's back rank. The index is file-major, `(file - 1) * 9 + (rank - 1)`, so that the
/// nine squares of a file are contiguous bits of a [`crate::Bitboard`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// Number of squares.
    pub const COUNT: usize = 81;

    /// The square at `file` (1..=9) and `rank` (1..=9, 1 = `a`), or `None` off the board.
    #[inline]
    pub const fn new(file: u8, rank: u8) -> Option<Square> {
        if file >= 1 && file <= 9 && rank >= 1 && rank <= 9 {
            Some(Square((file - 1) * 9 + (rank - 1)))
        } else {
            None
        }
    }

    /// The square with this index (0..81), or `None`.
    #[inline]
    pub const fn from_index(index: u8) -> Option<Square> {
        if index < 81 {
            Some(Square(index))
        } else {
            None
        }
    }

    /// The square with this index; the caller guarantees `index < 81`.
    #[inline]
    pub(crate) const fn from_index_unchecked(index: u8) -> Square {
        debug_assert!(index < 81);
        Square(index)
    }

    /// Index 0..81, file-major.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// File 1..=9.
    #[inline]
    pub const fn file(self) -> u8 {
        self.0 / 9 + 1
    }

    /// Rank 1..=9 (1 is `a`, White's back rank).
    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 % 9 + 1
    }

    /// All squares in index order.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..81u8).map(Square)
    }

    /// Parses a USI square such as `7g`.
    pub fn from_usi(text: &str) -> Option<Square> {
        let b = text.as_bytes();
        if b.len() != 2 {
            return None;
        }
        Self::from_usi_bytes(b[0], b[1])
    }

    #[inline]
    pub(crate) const fn from_usi_bytes(file: u8, rank: u8) -> Option<Square> {
        if file < b'1' || file > b'9' || rank < b'a' || rank > b'i' {
            return None;
        }
        Square::new(file - b'0', rank - b'a' + 1)
    }

    /// The rank as seen by `color`: 1 is that side's farthest rank (its last rank).
    #[inline]
    pub const fn relative_rank(self, color: crate::Color) -> u8 {
        match color {
            crate::Color::Black => self.rank(),
            crate::Color::White => 10 - self.rank(),
        }
    }

    /// Whether the square is in `color`'s promotion zone (the far three ranks), which is also the
    /// camp that side's king must reach to declare impasse (入玉).
    #[inline]
    pub const fn in_zone(self, color: crate::Color) -> bool {
        self.relative_rank(color) <= 3
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file(), (b'a' + self.rank() - 1) as char)
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
