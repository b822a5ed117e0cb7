//! Attack tables, computed at compile time, and slider attacks.
//!
//! Step pieces use per-square tables. Sliders use "classical" ray tables: along a ray whose
//! squares grow in index the nearest blocker is the lowest set bit of `ray & occupied`, along the
//! others the highest; everything beyond the blocker is cut off without a loop or a branch.

use crate::{Bitboard, Color, PieceKind, Square};

const fn step_table(offsets: &[(i32, i32)], color: Color) -> [u128; 81] {
    let mut table = [0u128; 81];
    let mut sq = 0;
    while sq < 81 {
        let file = (sq / 9) as i32 + 1;
        let rank = (sq % 9) as i32 + 1;
        let mut i = 0;
        while i < offsets.len() {
            let (df, mut dr) = offsets[i];
            if let Color::White = color {
                dr = -dr;
            }
            let (f, r) = (file + df, rank + dr);
            if f >= 1 && f <= 9 && r >= 1 && r <= 9 {
                table[sq] |= 1u128 << ((f - 1) * 9 + (r - 1));
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

// Offsets (file delta, rank delta) for Black, whose forward direction is rank - 1.
const PAWN_OFFSETS: [(i32, i32); 1] = [(0, -1)];
const KNIGHT_OFFSETS: [(i32, i32); 2] = [(-1, -2), (1, -2)];
const SILVER_OFFSETS: [(i32, i32); 5] = [(-1, -1), (0, -1), (1, -1), (-1, 1), (1, 1)];
const GOLD_OFFSETS: [(i32, i32); 6] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (0, 1)];
const KING_OFFSETS: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

static PAWN: [[u128; 81]; 2] = [
    step_table(&PAWN_OFFSETS, Color::Black),
    step_table(&PAWN_OFFSETS, Color::White),
];
static KNIGHT: [[u128; 81]; 2] = [
    step_table(&KNIGHT_OFFSETS, Color::Black),
    step_table(&KNIGHT_OFFSETS, Color::White),
];
static SILVER: [[u128; 81]; 2] = [
    step_table(&SILVER_OFFSETS, Color::Black),
    step_table(&SILVER_OFFSETS, Color::White),
];
static GOLD: [[u128; 81]; 2] = [
    step_table(&GOLD_OFFSETS, Color::Black),
    step_table(&GOLD_OFFSETS, Color::White),
];
static KING: [u128; 81] = step_table(&KING_OFFSETS, Color::Black);

/// Ray directions as (file delta, rank delta). The first four grow in index.
const DIRS: [(i32, i32); 8] = [
    (0, 1),
    (1, 0),
    (1, 1),
    (1, -1),
    (0, -1),
    (-1, 0),
    (-1, -1),
    (-1, 1),
];
const DOWN: usize = 0; // rank + 1, toward i
const LEFT: usize = 1; // file + 1
const DOWN_LEFT: usize = 2;
const UP_LEFT: usize = 3;
const UP: usize = 4; // rank - 1, toward a
const RIGHT: usize = 5;
const UP_RIGHT: usize = 6;
const DOWN_RIGHT: usize = 7;

const fn ray_table() -> [[u128; 81]; 8] {
    let mut table = [[0u128; 81]; 8];
    let mut d = 0;
    while d < 8 {
        let mut sq = 0;
        while sq < 81 {
            let (df, dr) = DIRS[d];
            let mut f = (sq / 9) as i32 + 1 + df;
            let mut r = (sq % 9) as i32 + 1 + dr;
            while f >= 1 && f <= 9 && r >= 1 && r <= 9 {
                table[d][sq] |= 1u128 << ((f - 1) * 9 + (r - 1));
                f += df;
                r += dr;
            }
            sq += 1;
        }
        d += 1;
    }
    table
}

static RAYS: [[u128; 81]; 8] = ray_table();

const fn pseudo_table(dirs: [usize; 4]) -> [u128; 81] {
    let rays = ray_table();
    let mut out = [0u128; 81];
    let mut sq = 0;
    while sq < 81 {
        out[sq] = rays[dirs[0]][sq] | rays[dirs[1]][sq] | rays[dirs[2]][sq] | rays[dirs[3]][sq];
        sq += 1;
    }
    out
}

static ROOK_PSEUDO: [u128; 81] = pseudo_table([DOWN, LEFT, UP, RIGHT]);
static BISHOP_PSEUDO: [u128; 81] = pseudo_table([DOWN_LEFT, UP_LEFT, UP_RIGHT, DOWN_RIGHT]);

const fn queen_table() -> [u128; 81] {
    let r = pseudo_table([DOWN, LEFT, UP, RIGHT]);
    let b = pseudo_table([DOWN_LEFT, UP_LEFT, UP_RIGHT, DOWN_RIGHT]);
    let mut out = [0u128; 81];
    let mut sq = 0;
    while sq < 81 {
        out[sq] = r[sq] | b[sq];
        sq += 1;
    }
    out
}

static QUEEN_PSEUDO: [u128; 81] = queen_table();

/// The squares from which a piece of either colour could attack `sq` on some board: its lines
/// and the knight's jumps to it.
#[inline]
pub fn attack_sources(sq: Square) -> Bitboard {
    Bitboard(ATTACK_SOURCES[sq.index()])
}

static ATTACK_SOURCES: [u128; 81] = {
    let queen = queen_table();
    let black = step_table(&KNIGHT_OFFSETS, Color::Black);
    let white = step_table(&KNIGHT_OFFSETS, Color::White);
    let mut t = [0u128; 81];
    let mut i = 0;
    while i < 81 {
        t[i] = queen[i] | black[i] | white[i];
        i += 1;
    }
    t
};

/// Whether `a` and `b` share a rank, file or diagonal (one table lookup).
#[inline]
pub fn aligned(a: Square, b: Square) -> bool {
    QUEEN_PSEUDO[a.index()] >> b.index() & 1 != 0
}

const fn between_and_line() -> ([[u128; 81]; 81], [[u128; 81]; 81]) {
    let rays = ray_table();
    let mut between = [[0u128; 81]; 81];
    let mut line = [[0u128; 81]; 81];
    let mut a = 0;
    while a < 81 {
        let mut d = 0;
        while d < 8 {
            let (df, dr) = DIRS[d];
            let opposite = (d + 4) % 8;
            let full = rays[d][a] | rays[opposite][a] | 1u128 << a;
            let mut acc = 0u128;
            let mut f = (a / 9) as i32 + 1 + df;
            let mut r = (a % 9) as i32 + 1 + dr;
            while f >= 1 && f <= 9 && r >= 1 && r <= 9 {
                let b = ((f - 1) * 9 + (r - 1)) as usize;
                between[a][b] = acc;
                line[a][b] = full;
                acc |= 1u128 << b;
                f += df;
                r += dr;
            }
            d += 1;
        }
        a += 1;
    }
    (between, line)
}

static BETWEEN_LINE: ([[u128; 81]; 81], [[u128; 81]; 81]) = between_and_line();

#[inline]
fn ray_up(dir: usize, sq: Square, occ: u128) -> u128 {
    // Squares grow in index along the ray: the nearest blocker is the lowest bit.
    let ray = RAYS[dir][sq.index()];
    let b = ray & occ;
    ray & (b ^ b.wrapping_sub(1))
}

#[inline]
fn ray_down(dir: usize, sq: Square, occ: u128) -> u128 {
    // Squares shrink in index along the ray: the nearest blocker is the highest bit. With no
    // blocker, `| 1` makes the cut-off index 0, which keeps the whole ray.
    let ray = RAYS[dir][sq.index()];
    let b = ray & occ | 1;
    ray & (u128::MAX << (127 - b.leading_zeros()))
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline]
pub fn pawn(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

/// Squares a knight of `color` on `sq` attacks.
#[inline]
pub fn knight(color: Color, sq: Square) -> Bitboard {
    Bitboard(KNIGHT[color.index()][sq.index()])
}

/// Squares a silver of `color` on `sq` attacks.
#[inline]
pub fn silver(color: Color, sq: Square) -> Bitboard {
    Bitboard(SILVER[color.index()][sq.index()])
}

/// Squares a gold (or a piece moving like one) of `color` on `sq` attacks.
#[inline]
pub fn gold(color: Color, sq: Square) -> Bitboard {
    Bitboard(GOLD[color.index()][sq.index()])
}

/// Squares a king on `sq` attacks.
#[inline]
pub fn king(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

/// Squares a lance of `color` on `sq` attacks, given the occupied squares.
#[inline]
pub fn lance(color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(match color {
        Color::Black => ray_down(UP, sq, occupied.0),
        Color::White => ray_up(DOWN, sq, occupied.0),
    })
}

/// Squares a rook on `sq` attacks, given the occupied squares.
#[inline]
pub fn rook(sq: Square, occupied: Bitboard) -> Bitboard {
    let o = occupied.0;
    Bitboard(
        ray_up(DOWN, sq, o) | ray_up(LEFT, sq, o) | ray_down(UP, sq, o) | ray_down(RIGHT, sq, o),
    )
}

/// Squares a bishop on `sq` attacks, given the occupied squares.
#[inline]
pub fn bishop(sq: Square, occupied: Bitboard) -> Bitboard {
    let o = occupied.0;
    Bitboard(
        ray_up(DOWN_LEFT, sq, o)
            | ray_up(UP_LEFT, sq, o)
            | ray_down(UP_RIGHT, sq, o)
            | ray_down(DOWN_RIGHT, sq, o),
    )
}

/// Squares a rook on `sq` attacks on an empty board.
#[inline]
pub fn rook_pseudo(sq: Square) -> Bitboard {
    Bitboard(ROOK_PSEUDO[sq.index()])
}

/// Squares a bishop on `sq` attacks on an empty board.
#[inline]
pub fn bishop_pseudo(sq: Square) -> Bitboard {
    Bitboard(BISHOP_PSEUDO[sq.index()])
}

/// Squares a lance of `color` on `sq` attacks on an empty board.
#[inline]
pub fn lance_pseudo(color: Color, sq: Square) -> Bitboard {
    Bitboard(match color {
        Color::Black => RAYS[UP][sq.index()],
        Color::White => RAYS[DOWN][sq.index()],
    })
}

/// The squares from which a piece that is not a slider could attack a square next to `sq` (or
/// `sq` itself): up to two files aside and three ranks away, the knight's reach included.
#[inline]
pub fn step_reach(sq: Square) -> Bitboard {
    Bitboard(STEP_REACH[sq.index()])
}

static STEP_REACH: [u128; 81] = {
    let mut t = [0u128; 81];
    let mut sq = 0;
    while sq < 81 {
        let (f, r) = ((sq / 9) as i32, (sq % 9) as i32);
        let mut o: i32 = 0;
        while o < 81 {
            let (of, or) = (o / 9, o % 9);
            if (of - f).abs() <= 2 && (or - r).abs() <= 3 {
                t[sq] |= 1 << o;
            }
            o += 1;
        }
        sq += 1;
    }
    t
};

/// Whether a piece of `color` and `kind` on `from` reaches `to` on an empty board: one bit of a
/// table of square pairs (bit `kind + 16 * color`), for single-move checks.
#[inline(always)]
pub fn reaches_on_empty_board(color: Color, kind: PieceKind, from: Square, to: Square) -> bool {
    REACH[from.index()][to.index()] >> (kind as u32 + 16 * color as u32) & 1 != 0
}

static REACH: [[u32; 81]; 81] = {
    let mut t = [[0u32; 81]; 81];
    let mut c = 0;
    while c < 2 {
        let color = if c == 0 { Color::Black } else { Color::White };
        let mut k = 0;
        while k < 14 {
            let kind = PieceKind::ALL[k];
            let mut from = 0;
            while from < 81 {
                let reach = match kind {
                    PieceKind::Pawn => PAWN[c][from],
                    PieceKind::Knight => KNIGHT[c][from],
                    PieceKind::Silver => SILVER[c][from],
                    PieceKind::King => KING[from],
                    PieceKind::Lance => match color {
                        Color::Black => RAYS[UP][from],
                        Color::White => RAYS[DOWN][from],
                    },
                    PieceKind::Bishop => BISHOP_PSEUDO[from],
                    PieceKind::Rook => ROOK_PSEUDO[from],
                    PieceKind::Horse => BISHOP_PSEUDO[from] | KING[from],
                    PieceKind::Dragon => ROOK_PSEUDO[from] | KING[from],
                    _ => GOLD[c][from],
                };
                let mut to = 0;
                while to < 81 {
                    if reach >> to & 1 != 0 {
                        t[from][to] |= 1 << (k + 16 * c);
                    }
                    to += 1;
                }
                from += 1;
            }
            k += 1;
        }
        c += 1;
    }
    t
};

/// Squares strictly between `a` and `b` when they share a line, else empty.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN_LINE.0[a.index()][b.index()])
}

/// The whole line through `a` and `b` (edge to edge) when they share one, else empty.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN_LINE.1[a.index()][b.index()])
}

/// Squares a piece of `color` and `kind` on `sq` attacks, given the occupied squares.
#[inline(always)]
pub fn piece(color: Color, kind: PieceKind, sq: Square, occupied: Bitboard) -> Bitboard {
    match kind {
        PieceKind::Pawn => pawn(color, sq),
        PieceKind::Lance => lance(color, sq, occupied),
        PieceKind::Knight => knight(color, sq),
        PieceKind::Silver => silver(color, sq),
        PieceKind::Gold
        | PieceKind::ProPawn
        | PieceKind::ProLance
        | PieceKind::ProKnight
        | PieceKind::ProSilver => gold(color, sq),
        PieceKind::Bishop => bishop(sq, occupied),
        PieceKind::Rook => rook(sq, occupied),
        PieceKind::King => king(sq),
        PieceKind::Horse => bishop(sq, occupied) | king(sq),
        PieceKind::Dragon => rook(sq, occupied) | king(sq),
    }
}

/// Masks by colour: the last rank, the last two ranks, the far three ranks.
const LAST_RANK: [u128; 2] = [spread_ranks(0b000_000_001), spread_ranks(0b100_000_000)];
const LAST_TWO_RANKS: [u128; 2] = [spread_ranks(0b000_000_011), spread_ranks(0b110_000_000)];
const ZONE: [u128; 2] = [spread_ranks(0b000_000_111), spread_ranks(0b111_000_000)];

/// The ranks where a piece of `color` and `kind` could never move again (行き所のない駒): the
/// last rank for pawn and lance, the last two for knight (docs/rules.md section 1, `dead_piece`).
#[inline]
pub fn dead_zone(color: Color, kind: PieceKind) -> Bitboard {
    Bitboard(match kind {
        PieceKind::Pawn | PieceKind::Lance => LAST_RANK[color.index()],
        PieceKind::Knight => LAST_TWO_RANKS[color.index()],
        _ => 0,
    })
}

/// The promotion zone of `color`: its far three ranks (docs/rules.md section 1).
#[inline]
pub fn zone(color: Color) -> Bitboard {
    Bitboard(ZONE[color.index()])
}

/// Repeats a 9-bit rank pattern across all nine files.
#[inline]
const fn spread_ranks(pattern: u128) -> u128 {
    let mut out = 0u128;
    let mut f = 0;
    while f < 9 {
        out |= pattern << (9 * f);
        f += 1;
    }
    out
}

static FILE_OF: [u128; 81] = {
    let mut t = [0u128; 81];
    let mut i = 0;
    while i < 81 {
        t[i] = 0x1ff << (9 * (i / 9));
        i += 1;
    }
    t
};

/// The nine squares of the file of `sq`.
#[inline]
pub fn file_of(sq: Square) -> Bitboard {
    Bitboard(FILE_OF[sq.index()])
}

/// The nine squares of file `file` (1..=9).
#[inline]
pub fn file_mask(file: u8) -> Bitboard {
    Bitboard(0x1ffu128 << (9 * (file as u32 - 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        Square::from_usi(s).unwrap()
    }

    #[test]
    fn rook_stops_at_blockers_in_all_directions() {
        let occ = Bitboard::EMPTY
            .with(sq("5c"))
            .with(sq("5h"))
            .with(sq("2e"))
            .with(sq("8e"));
        let a = rook(sq("5e"), occ);
        let expect: Vec<_> = [
            "5c", "5d", "5f", "5g", "5h", "2e", "3e", "4e", "6e", "7e", "8e",
        ]
        .iter()
        .map(|s| sq(s))
        .collect();
        let mut got: Vec<_> = a.collect();
        got.sort();
        let mut want = expect.clone();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn bishop_on_edge_and_corner() {
        assert_eq!(bishop(sq("1a"), Bitboard::EMPTY).count(), 8);
        assert_eq!(bishop(sq("5e"), Bitboard::EMPTY).count(), 16);
        let occ = Bitboard::EMPTY.with(sq("3c"));
        assert!(bishop(sq("5e"), occ).contains(sq("3c")));
        assert!(!bishop(sq("5e"), occ).contains(sq("2b")));
    }

    #[test]
    fn lance_directions() {
        assert!(lance(Color::Black, sq("5i"), Bitboard::EMPTY).contains(sq("5a")));
        assert!(!lance(Color::Black, sq("5e"), Bitboard::EMPTY).contains(sq("5f")));
        assert!(lance(Color::White, sq("5a"), Bitboard::EMPTY).contains(sq("5i")));
    }

    #[test]
    fn between_and_line_tables() {
        assert_eq!(between(sq("5e"), sq("5a")).count(), 3);
        assert_eq!(between(sq("1a"), sq("9i")).count(), 7);
        assert!(between(sq("1a"), sq("2c")).is_empty());
        assert_eq!(line(sq("5e"), sq("5a")).count(), 9);
        assert!(line(sq("1a"), sq("2c")).is_empty());
    }

    #[test]
    fn zones() {
        assert_eq!(zone(Color::Black).count(), 27);
        assert!(zone(Color::Black).contains(sq("1c")));
        assert!(zone(Color::White).contains(sq("9g")));
        assert!(dead_zone(Color::White, PieceKind::Knight).contains(sq("5h")));
        assert!(dead_zone(Color::White, PieceKind::Pawn).contains(sq("5i")));
        assert!(!dead_zone(Color::White, PieceKind::Pawn).contains(sq("5h")));
        assert!(dead_zone(Color::Black, PieceKind::Lance).contains(sq("5a")));
    }
}
