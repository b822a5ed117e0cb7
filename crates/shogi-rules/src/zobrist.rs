//! 64-bit Zobrist keys.
//!
//! A position's hash is the XOR of one key per (piece, square) on the board, one key per
//! (colour, hand kind, count) for every non-zero hand count, and [`SIDE`] when White is to move.
//! Keying each hand *count* (rather than adding a per-piece key) makes a pawn more in one hand a
//! different hash, as docs/rules.md section 2 requires of the same-position test; the move number is
//! not hashed.
//!
//! Stability: the keys come from SplitMix64 with a fixed seed in a fixed order, so the hash of a
//! position is the same in every build and on every platform. Hashes are stored on the bus and
//! compared across services, so changing a key is a breaking change; the reference values in
//! this module's tests guard it.

use crate::{Color, Piece, PieceKind, Square};

const SEED: u64 = 0x5348_4f47_4941_5242; // "SHOGIARB"

const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (state, z ^ (z >> 31))
}

struct Keys {
    board: [[u64; 81]; 28],
    hand: [[[u64; 19]; 7]; 2],
    side: u64,
}

const fn make_keys() -> Keys {
    let mut keys = Keys {
        board: [[0; 81]; 28],
        hand: [[[0; 19]; 7]; 2],
        side: 0,
    };
    let mut state = SEED;
    let mut p = 0;
    while p < 28 {
        let mut s = 0;
        while s < 81 {
            let (st, k) = splitmix(state);
            state = st;
            keys.board[p][s] = k;
            s += 1;
        }
        p += 1;
    }
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < 7 {
            // Count 0 keeps key 0, so an empty hand adds nothing.
            let mut n = 1;
            while n < 19 {
                let (st, key) = splitmix(state);
                state = st;
                keys.hand[c][k][n] = key;
                n += 1;
            }
            k += 1;
        }
        c += 1;
    }
    let (_, side) = splitmix(state);
    keys.side = side;
    keys
}

static KEYS: Keys = make_keys();

/// The key of `piece` on `sq`.
#[inline]
pub fn piece_square(piece: Piece, sq: Square) -> u64 {
    KEYS.board[piece.index()][sq.index()]
}

/// The key of `color` holding exactly `count` pieces of hand kind `kind` (0 for count 0).
#[inline]
pub fn hand(color: Color, kind: PieceKind, count: u8) -> u64 {
    KEYS.hand[color.index()][kind.index()][count as usize]
}

/// The change of hash when the count of `kind` in `color`'s hand goes from `count` to
/// `count + 1` (or back): the two keys XORed, from one table so that a move reads one key. The
/// table's strides are powers of two and its index is masked, so that reading it needs no
/// multiplication and no bounds check.
#[inline(always)]
pub(crate) fn hand_step(color: Color, kind: PieceKind, count: u8) -> u64 {
    HAND_STEP[color.index() & 1][kind.index() & 7][count as usize & 31]
}

/// [`piece_square`] from a copy of the keys laid out with power-of-two strides, indexed by
/// colour, kind and square with masks (the same values: see the test below).
#[inline(always)]
pub(crate) fn piece_square_fast(color: Color, kind: PieceKind, sq: Square) -> u64 {
    BOARD_FAST[(color.index() & 1) << 4 | kind.index() & 15][sq.index() & 127]
}

static BOARD_FAST: [[u64; 128]; 32] = {
    let keys = make_keys();
    let mut out = [[0; 128]; 32];
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < 14 {
            let mut s = 0;
            while s < 81 {
                out[c << 4 | k][s] = keys.board[k + 14 * c][s];
                s += 1;
            }
            k += 1;
        }
        c += 1;
    }
    out
};

const fn make_hand_steps(keys: &Keys) -> [[[u64; 32]; 8]; 2] {
    let mut out = [[[0; 32]; 8]; 2];
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < 7 {
            let mut n = 0;
            while n < 18 {
                out[c][k][n] = keys.hand[c][k][n] ^ keys.hand[c][k][n + 1];
                n += 1;
            }
            k += 1;
        }
        c += 1;
    }
    out
}

static HAND_STEP: [[[u64; 32]; 8]; 2] = make_hand_steps(&make_keys());

/// XORed in when White is to move.
#[inline]
pub fn side() -> u64 {
    KEYS.side
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct() {
        let mut all: Vec<u64> = KEYS.board.iter().flatten().copied().collect();
        for c in &KEYS.hand {
            for k in c {
                all.extend(k[1..].iter().copied());
            }
        }
        all.push(KEYS.side);
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    /// The tables laid out for speed hold the same keys.
    #[test]
    fn fast_tables_hold_the_same_keys() {
        for color in Color::ALL {
            for kind in PieceKind::ALL {
                for sq in Square::all() {
                    assert_eq!(
                        piece_square_fast(color, kind, sq),
                        piece_square(Piece::new(color, kind), sq)
                    );
                }
            }
            for kind in PieceKind::HAND {
                for n in 0..kind.max_count() {
                    assert_eq!(
                        hand_step(color, kind, n),
                        hand(color, kind, n) ^ hand(color, kind, n + 1)
                    );
                }
            }
        }
    }

    /// Reference values: if this fails, hashes changed, which breaks stored data.
    #[test]
    fn reference_keys_are_stable() {
        let pawn = Piece::new(Color::Black, PieceKind::Pawn);
        assert_eq!(
            piece_square(pawn, Square::new(1, 1).unwrap()),
            0x54a3_7d14_6bdf_6fcf
        );
        assert_eq!(side(), 0x6c0c_e0e6_3999_4880);
        let start = crate::Position::startpos();
        assert_eq!(start.hash(), 0xb6b8_736c_0b24_8ffb);
        let mut after = start.clone();
        after.play(crate::Move::from_usi("7g7f").unwrap()).unwrap();
        assert_eq!(after.hash(), 0x3198_1faa_37d6_2a46);
    }
}
