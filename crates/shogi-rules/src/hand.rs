//! Pieces in hand (持ち駒).

use crate::PieceKind;
use std::fmt;

/// The pieces one side holds in hand, as a count per hand kind.
///
/// Packed into one `u32`, five bits a kind (pawns need 0..=18), so that copying a position stays
/// cheap.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Hand(u32);

// Eight entries, indexed by `kind & 7`, so that no bounds check is needed (the eighth, the king,
// is never held).
const SHIFT: [u32; 8] = [0, 5, 10, 15, 20, 25, 30, 0];
const MASK: [u32; 8] = [31, 7, 7, 7, 7, 3, 3, 0];

impl Hand {
    /// An empty hand.
    pub const EMPTY: Hand = Hand(0);

    #[inline]
    const fn slot(kind: PieceKind) -> usize {
        debug_assert!(kind.is_hand_kind());
        kind as usize & 7
    }

    /// How many pieces of `kind` (an unpromoted hand kind) the hand holds; 0 for other kinds.
    #[inline]
    pub const fn count(self, kind: PieceKind) -> u8 {
        if !kind.is_hand_kind() {
            return 0;
        }
        self.count_of(kind)
    }

    /// [`Hand::count`] of a kind the caller knows to be a hand kind.
    #[inline(always)]
    pub(crate) const fn count_of(self, kind: PieceKind) -> u8 {
        let i = Self::slot(kind);
        ((self.0 >> SHIFT[i]) & MASK[i]) as u8
    }

    /// Whether the hand holds at least one piece of `kind`.
    #[inline]
    pub const fn has(self, kind: PieceKind) -> bool {
        self.count(kind) > 0
    }

    /// The hand with `count` pieces of `kind`. The caller keeps `count` within
    /// [`PieceKind::max_count`].
    #[inline]
    pub const fn with_count(self, kind: PieceKind, count: u8) -> Hand {
        let i = Self::slot(kind);
        Hand((self.0 & !(MASK[i] << SHIFT[i])) | ((count as u32 & MASK[i]) << SHIFT[i]))
    }

    /// Adds one piece of `kind` (an unpromoted hand kind).
    #[inline]
    pub fn add(&mut self, kind: PieceKind) {
        debug_assert!(self.count(kind) < kind.max_count());
        self.0 += 1 << SHIFT[Self::slot(kind)];
    }

    /// Removes one piece of `kind`; the hand must hold one.
    #[inline]
    pub fn remove(&mut self, kind: PieceKind) {
        debug_assert!(self.count(kind) > 0);
        self.0 -= 1 << SHIFT[Self::slot(kind)];
    }

    /// Whether the hand is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Total number of pieces held.
    pub fn total(self) -> u32 {
        PieceKind::HAND.iter().map(|&k| self.count(k) as u32).sum()
    }

    /// The kinds held (count > 0), pawn first.
    pub fn kinds(self) -> impl Iterator<Item = PieceKind> {
        PieceKind::HAND.into_iter().filter(move |&k| self.has(k))
    }
}

impl fmt::Debug for Hand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for k in self.kinds() {
            m.entry(&k, &self.count(k));
        }
        m.finish()
    }
}
