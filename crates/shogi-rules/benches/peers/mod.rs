//! What the peer benchmarks share: the positions, each engine's perft, the move and SFEN sets,
//! and the conversions between the engines' move types.
//!
//! Peers: haitaka 0.3.2 (perft, single-move legality, SFEN) and rsshogi (single-move legality,
//! SFEN). Each engine is driven the way its own examples drive it: haitaka's perft is the one of
//! its `examples/perft.rs` (clone the board, `play_unchecked`, bulk counting through the move
//! iterator's exact length, since `PieceMoves::len` counts destination squares, not moves).

// Each bench binary uses part of this module.
#![allow(dead_code)]

use shogi_rules::{Color, Move, PerftMode, PieceKind, Position, Square};
use std::hint::black_box;

/// A perft case: the position, the depth and the published node count.
#[derive(Debug, Clone, Copy)]
pub struct PerftCase {
    pub name: &'static str,
    pub sfen: &'static str,
    pub depth: u32,
    pub nodes: u64,
}

pub const STARTPOS: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
/// The position with the most legal moves known (593), from yasai.
pub const MAX_MOVES: &str = "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1";
/// YaneuraOu's "matsuri" (festival) position, full of captures, promotions and drops.
pub const MATSURI: &str = "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1";

/// The perft cases; the counts are those of shared/corpus/perft/perft_positions.tsv (YaneuraOu,
/// yasai), except `max_moves` depth 3, which is the core's own count (no published one) and is
/// reported with haitaka's beside it.
pub const PERFT_CASES: [PerftCase; 4] = [
    PerftCase {
        name: "startpos_d5",
        sfen: STARTPOS,
        depth: 5,
        nodes: 19_861_490,
    },
    PerftCase {
        name: "max_moves_d2",
        sfen: MAX_MOVES,
        depth: 2,
        nodes: 105_677,
    },
    PerftCase {
        name: "max_moves_d3",
        sfen: MAX_MOVES,
        depth: 3,
        nodes: 0,
    },
    PerftCase {
        name: "matsuri_d3",
        sfen: MATSURI,
        depth: 3,
        nodes: 4_809_015,
    },
];

pub fn mode_name(mode: PerftMode) -> &'static str {
    match mode {
        PerftMode::Bulk => "bulk",
        PerftMode::Full => "full",
    }
}

/// Our perft.
pub fn ours_perft(pos: &Position, depth: u32, mode: PerftMode) -> u64 {
    shogi_rules::perft(pos, depth, mode)
}

/// haitaka's perft, as in its examples/perft.rs: bulk counts the moves one ply above the leaves;
/// full plays every leaf (and reads its hash, as ours does, so that the play is not optimised
/// away).
pub fn haitaka_perft(board: &haitaka::Board, depth: u32, mode: PerftMode) -> u64 {
    match (depth, mode) {
        (0, _) => 1,
        (1, PerftMode::Bulk) => {
            let mut nodes = 0;
            board.generate_moves(|moves| {
                nodes += moves.into_iter().len() as u64;
                false
            });
            nodes
        }
        (1, PerftMode::Full) => {
            let mut nodes = 0;
            board.generate_moves(|moves| {
                for mv in moves {
                    let mut child = board.clone();
                    child.play_unchecked(mv);
                    black_box(child.hash());
                    nodes += 1;
                }
                false
            });
            nodes
        }
        _ => {
            let mut nodes = 0;
            board.generate_moves(|moves| {
                for mv in moves {
                    let mut child = board.clone();
                    child.play_unchecked(mv);
                    nodes += haitaka_perft(&child, depth - 1, mode);
                }
                false
            });
            nodes
        }
    }
}

pub fn ours_pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap_or_else(|e| panic!("our from_sfen({sfen}): {e}"))
}

pub fn haitaka_board(sfen: &str) -> haitaka::Board {
    haitaka::Board::from_sfen(sfen).unwrap_or_else(|e| panic!("haitaka from_sfen({sfen}): {e:?}"))
}

/// The SFENs of the oracle fixture (positions from biased random games: many in check, many
/// with full hands), the set for the legality and SFEN benchmarks.
pub fn fixture_sfens() -> Vec<&'static str> {
    include_str!("../../tests/data/cshogi_legal.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').next().expect("sfen column"))
        .collect()
}

/// (file, rank) offsets, for Black: the rank decreases going forward.
type Offsets = &'static [(i8, i8)];

/// The offsets a piece of `kind` steps to, and the directions it slides along.
fn geometry(kind: PieceKind) -> (Offsets, Offsets) {
    const GOLD: Offsets = &[(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (0, 1)];
    const KING: Offsets = &[
        (-1, -1),
        (0, -1),
        (1, -1),
        (-1, 0),
        (1, 0),
        (-1, 1),
        (0, 1),
        (1, 1),
    ];
    const DIAG: Offsets = &[(-1, -1), (1, -1), (-1, 1), (1, 1)];
    const ORTH: Offsets = &[(0, -1), (-1, 0), (1, 0), (0, 1)];
    match kind {
        PieceKind::Pawn => (&[(0, -1)], &[]),
        PieceKind::Lance => (&[], &[(0, -1)]),
        PieceKind::Knight => (&[(-1, -2), (1, -2)], &[]),
        PieceKind::Silver => (&[(-1, -1), (0, -1), (1, -1), (-1, 1), (1, 1)], &[]),
        PieceKind::Gold
        | PieceKind::ProPawn
        | PieceKind::ProLance
        | PieceKind::ProKnight
        | PieceKind::ProSilver => (GOLD, &[]),
        PieceKind::King => (KING, &[]),
        PieceKind::Bishop => (&[], DIAG),
        PieceKind::Rook => (&[], ORTH),
        PieceKind::Horse => (ORTH, DIAG),
        PieceKind::Dragon => (DIAG, ORTH),
    }
}

/// The pseudo moves of the side to move: every move its pieces' patterns reach on an empty board
/// (blockers ignored) to a square without a piece of its own, with and without promotion where
/// the piece can promote and the move touches the zone; and every drop of a piece in hand on an
/// empty square. Legal and illegal moves mixed as a caller of a legality check sees them:
/// blocked paths, pins, checks ignored, dead pieces, two pawns, pawn-drop mate.
pub fn pseudo_moves(pos: &Position) -> Vec<Move> {
    let us = pos.side_to_move();
    let forward: i8 = if us == Color::Black { 1 } else { -1 };
    let mut out = Vec::new();
    let target = |sq: Option<Square>| sq.filter(|&t| pos.piece_at(t).is_none_or(|p| p.color != us));
    let at = |from: Square, df: i8, dr: i8| {
        let f = from.file() as i8 + df;
        let r = from.rank() as i8 + dr * forward;
        if (1..=9).contains(&f) && (1..=9).contains(&r) {
            Square::new(f as u8, r as u8)
        } else {
            None
        }
    };
    for (from, piece) in pos.pieces() {
        if piece.color != us {
            continue;
        }
        let (steps, rays) = geometry(piece.kind);
        let mut tos = Vec::new();
        for &(df, dr) in steps {
            tos.extend(target(at(from, df, dr)));
        }
        for &(df, dr) in rays {
            for n in 1..9 {
                match at(from, df * n, dr * n) {
                    Some(sq) => tos.extend(target(Some(sq))),
                    None => break,
                }
            }
        }
        for to in tos {
            out.push(Move::Normal {
                from,
                to,
                promote: false,
            });
            if piece.kind.can_promote() && (from.in_zone(us) || to.in_zone(us)) {
                out.push(Move::Normal {
                    from,
                    to,
                    promote: true,
                });
            }
        }
    }
    let hand = pos.hand(us);
    for kind in PieceKind::HAND {
        if hand.count(kind) == 0 {
            continue;
        }
        for to in Square::all() {
            if pos.piece_at(to).is_none() {
                out.push(Move::Drop { kind, to });
            }
        }
    }
    out
}

/// One position of the legality benchmark in each engine's types, with the same moves.
pub struct LegalitySet {
    pub ours: Vec<(Position, Vec<Move>)>,
    pub haitaka: Vec<(haitaka::Board, Vec<haitaka::Move>)>,
    pub rsshogi: Vec<(
        rsshogi::board::position::Position,
        Vec<rsshogi::types::Move>,
    )>,
    pub moves: u64,
}

pub fn legality_set(sfens: &[&str]) -> LegalitySet {
    let mut set = LegalitySet {
        ours: Vec::new(),
        haitaka: Vec::new(),
        rsshogi: Vec::new(),
        moves: 0,
    };
    for &sfen in sfens {
        let pos = ours_pos(sfen);
        let moves = pseudo_moves(&pos);
        let usi: Vec<String> = moves.iter().map(Move::to_string).collect();
        let h: Vec<haitaka::Move> = usi
            .iter()
            .map(|u| {
                u.parse()
                    .unwrap_or_else(|e| panic!("haitaka parses {u}: {e:?}"))
            })
            .collect();
        let r: Vec<rsshogi::types::Move> = usi
            .iter()
            .map(|u| {
                rsshogi::types::Move::from_usi(u).unwrap_or_else(|| panic!("rsshogi parses {u}"))
            })
            .collect();
        set.moves += moves.len() as u64;
        set.haitaka.push((haitaka_board(sfen), h));
        set.rsshogi.push((rsshogi_pos(sfen), r));
        set.ours.push((pos, moves));
    }
    set
}

pub fn rsshogi_pos(sfen: &str) -> rsshogi::board::position::Position {
    rsshogi::board::position_from_sfen(sfen)
        .unwrap_or_else(|e| panic!("rsshogi position_from_sfen({sfen}): {e:?}"))
}

/// How many moves of the set each engine accepts.
pub fn ours_legal(set: &LegalitySet) -> u64 {
    let mut n = 0;
    for (pos, moves) in &set.ours {
        for &mv in moves {
            n += pos.check_move(black_box(mv)).is_ok() as u64;
        }
    }
    n
}

pub fn haitaka_legal(set: &LegalitySet) -> u64 {
    let mut n = 0;
    for (board, moves) in &set.haitaka {
        for &mv in moves {
            n += board.is_legal(black_box(mv)) as u64;
        }
    }
    n
}

pub fn rsshogi_legal(set: &LegalitySet) -> u64 {
    let mut n = 0;
    for (pos, moves) in &set.rsshogi {
        for &mv in moves {
            n += pos.is_legal_move(black_box(mv)) as u64;
        }
    }
    n
}

/// Moves where the engines disagree with ours, as `sfen move ours theirs` lines.
pub fn legality_disagreements(set: &LegalitySet) -> Vec<String> {
    let mut out = Vec::new();
    for (((pos, moves), (board, hm)), (rpos, rm)) in
        set.ours.iter().zip(&set.haitaka).zip(&set.rsshogi)
    {
        for i in 0..moves.len() {
            let ours = pos.check_move(moves[i]);
            let h = board.is_legal(hm[i]);
            let r = rpos.is_legal_move(rm[i]);
            if ours.is_ok() != h || ours.is_ok() != r {
                out.push(format!(
                    "{} {}: ours {} haitaka {} rsshogi {}",
                    pos.to_sfen(),
                    moves[i],
                    match ours {
                        Ok(()) => "legal".to_owned(),
                        Err(e) => e.kind.as_str().to_owned(),
                    },
                    if h { "legal" } else { "illegal" },
                    if r { "legal" } else { "illegal" },
                ));
            }
        }
    }
    out
}

pub fn ours_parse(sfens: &[&str]) -> u64 {
    sfens
        .iter()
        .map(|s| black_box(Position::from_sfen(black_box(s))).is_ok() as u64)
        .sum()
}

pub fn haitaka_parse(sfens: &[&str]) -> u64 {
    sfens
        .iter()
        .map(|s| black_box(haitaka::Board::from_sfen(black_box(s))).is_ok() as u64)
        .sum()
}

pub fn rsshogi_parse(sfens: &[&str]) -> u64 {
    sfens
        .iter()
        .map(|s| black_box(rsshogi::board::position_from_sfen(black_box(s))).is_ok() as u64)
        .sum()
}
